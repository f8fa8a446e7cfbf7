//! Simulated events per second as wasm under Node: the reference run
//! (netperf-tcp-rr, 32 pairs, kunpeng920-6426 `--cpus node0-1`, 6.8, seed 1, 1 s).
//! A benchmark, not a test: it is built only with the `wasm-bench` feature, which
//! `scripts/bench-wasm` turns on for a release build under Node; the script checks
//! that its digest equals the native CLI's for the same run and prints both speeds.
#![cfg(target_arch = "wasm32")]

use schedlab_core::experiment::{self, RunSpec};
use schedlab_core::workload::Workload;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[wasm_bindgen_test]
fn netperf_32_pairs_events_per_second() {
    let spec = RunSpec::on_preset(
        "kunpeng920-6426",
        "node0-1",
        "6.8".parse().unwrap(),
        Workload::NetperfTcpRr { instances: 32 },
        1000,
        1,
    )
    .unwrap();
    let t0 = js_sys::Date::now();
    let r = experiment::run(&spec).unwrap();
    let ms = js_sys::Date::now() - t0;
    console_log!(
        "wasm-speed events={} wall_ms={:.0} events_per_s={:.0} digest={}",
        r.events,
        ms,
        r.events as f64 / ms * 1e3,
        r.digest
    );
}
