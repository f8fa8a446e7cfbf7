//! A loopback pair (tbench, netperf) as the kernel runs it: the send that wakes the
//! other end does not put the sender to sleep. The receive softirq runs inside the
//! sender's `send()` (`netif_rx()` → `process_backlog()` on the sending CPU), wakes
//! the reader there (`sock_def_readable()`), and the sender then finishes the send,
//! returns from it and enters its next `recv()`, sleeping only in `sk_wait_data()`.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use schedlab_core::cost::CostParams;
use schedlab_core::experiment::{LiveRun, RunSpec};
use schedlab_core::sim::record::{Record, RecordKind};
use schedlab_core::sim::RecordConfig;
use schedlab_core::topology::presets;
use schedlab_core::workload::{Noise, Workload};

/// Time from each wake-up one end of pair 0 (tasks 0 and 1) gives the other to the
/// moment the waker leaves its CPU (a switch away from it, or idle).
fn waker_run_after_wake(records: &[Record]) -> Vec<u64> {
    let mut gaps = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let RecordKind::Wake(w) = r.kind else {
            continue;
        };
        if !matches!((w.waker, w.wakee), (0, 1) | (1, 0)) {
            continue;
        }
        let left = records[i + 1..].iter().find(|n| match n.kind {
            RecordKind::Switch { cpu, prev, .. } => cpu == w.waker_cpu && prev == w.waker,
            RecordKind::IdleEnter { cpu, .. } => cpu == w.waker_cpu,
            _ => false,
        });
        if let Some(n) = left {
            gaps.push(n.at_ns - r.at_ns);
        }
    }
    gaps
}

#[test]
fn a_loopback_sender_runs_on_after_waking_the_reader() {
    let m = "kunpeng920-6426";
    let tail = CostParams::for_machine(&presets::machine(m).unwrap()).tcp_tail_ns;
    for w in [
        Workload::NetperfTcpRr { instances: 1 },
        Workload::NetperfUdpRr { instances: 1 },
        Workload::Tbench { clients: 1 },
    ] {
        let spec = RunSpec {
            noise: Noise::Quiet,
            ..RunSpec::on_preset(m, "node0", "6.6".parse().unwrap(), w.clone(), 5, 1).unwrap()
        };
        let rc = RecordConfig {
            cap: 1 << 20,
            ..RecordConfig::default()
        };
        let mut live = LiveRun::with_recorder(&spec, rc).unwrap();
        live.finish().unwrap();
        let mut gaps = waker_run_after_wake(&live.recording().unwrap().records);
        assert!(
            gaps.len() > 100,
            "{w:?}: {} wake-ups in the pair",
            gaps.len()
        );
        gaps.sort_unstable();
        // The tail is drawn within ±10% (programs.rs WORK_JITTER_PCT). The waker's own
        // wake-up work (the IPI it sends, the wake path's remote reads: ~240 ns here)
        // comes on top, and a tick or a preemption may delay it further; it is never
        // asleep sooner. (Without the tail it left its CPU 238 ns after the wake-up.)
        let (lo, median) = (gaps[0], gaps[gaps.len() / 2]);
        assert!(
            lo >= tail * 9 / 10,
            "{w:?}: a sender slept {lo} ns after its wake-up"
        );
        assert!(
            median <= tail + 1000,
            "{w:?}: median {median} ns, tail {tail} ns"
        );
    }
}
