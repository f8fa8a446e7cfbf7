//! The simulator off the main thread. Each side of the Simulate tab runs in its own
//! dedicated worker: the same wasm module, started by `static/worker.js` with
//! [`worker_main`] instead of the page's `main`. The page stays responsive while a
//! run goes, and A and B run in parallel on two cores.
//!
//! ```text
//!  page ── Msg::Run { id, machine, patches, sim } ──▶ worker: core's LiveRun, in batches
//!  page ◀── Progress { id, series, …, report } ────── after each ~40 ms of wall time
//!  page ── Msg::Cancel { id } (or a newer Run) ────▶ the old run stops at its next batch
//! ```
//!
//! Messages are JSON strings. The worker only runs core; what the page shows of a run
//! is decided here, in [`progress`], a plain function the host tests exercise.

use std::cell::Cell;
use std::time::Duration;

use schedlab_core::experiment::LiveRun;
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::{MachineChoice, Scenario, SimSetup};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Simulated time per slice.
const SLICE_NS: u64 = 1_000_000;
/// Wall time per batch of slices before the worker reports and yields.
const BATCH_MS: f64 = 40.0;

/// What the page asks of a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "kebab-case")]
pub enum Msg {
    /// Run `sim` on `machine` under `patches`; a newer id replaces an older run.
    Run {
        id: u64,
        machine: MachineChoice,
        patches: String,
        sim: SimSetup,
    },
    /// Stop run `id` if it is still going.
    Cancel { id: u64 },
}

/// A run's state after a batch; the last one has `done` and the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub id: u64,
    /// The throughput so far, in `unit`, one value per sampling interval.
    pub series: Vec<f64>,
    pub interval_ns: u64,
    pub now_ns: u64,
    pub warmup_ns: u64,
    pub warming: bool,
    pub live_tasks: u32,
    pub events: u64,
    /// The worker's wall time spent simulating, ms.
    pub busy_ms: f64,
    pub unit: String,
    pub higher_is_better: bool,
    pub completion: bool,
    pub done: bool,
    pub error: Option<String>,
    pub report: Option<Report>,
}

/// The numbers the page's table shows of a finished run (core's `RunReport`, cut down).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub value: f64,
    pub wakeups: u64,
    /// Wake-ups by distance class, in `Distance` order.
    pub placement: Vec<(String, u64)>,
    pub cpus_probed_mean_x100: u64,
    pub wake_ipi: u64,
    pub wake_remote_lock: u64,
    pub migrations_wakeup: u64,
    pub migrations_balance: u64,
    pub context_switches: u64,
    pub force_idle_ns: u64,
    pub events: u64,
    pub digest: String,
    /// Per CPU of the run: its busy share of the window, per mille.
    pub utilisation_permille: Vec<(u32, u64)>,
}

/// What the page sees of `run` now.
pub fn progress(id: u64, run: &LiveRun, busy_ms: f64, error: Option<String>) -> Progress {
    let (series, interval_ns) = run.series();
    let metric = run.metric();
    let report = run.done().then(|| {
        let r = run.report();
        let m = r.metrics;
        Report {
            value: r.value,
            wakeups: m.wakeups,
            placement: m.placement,
            cpus_probed_mean_x100: m.cpus_probed_mean_x100,
            wake_ipi: m.wake_ipi,
            wake_remote_lock: m.wake_remote_lock,
            migrations_wakeup: m.migrations_wakeup,
            migrations_balance: m.migrations_balance,
            context_switches: m.context_switches,
            force_idle_ns: m.force_idle_ns,
            events: r.events,
            digest: r.digest,
            utilisation_permille: m.utilisation_permille,
        }
    });
    Progress {
        id,
        series,
        interval_ns,
        now_ns: run.now_ns(),
        warmup_ns: run.warmup_ns(),
        warming: run.warming_up(),
        live_tasks: run.live_tasks(),
        events: run.events(),
        busy_ms,
        unit: metric.unit().to_string(),
        higher_is_better: metric.higher_is_better(),
        completion: run.runs_to_completion(),
        done: run.done() || error.is_some(),
        error,
        report,
    }
}

/// A run that could not start, as the page sees it.
pub fn failed(id: u64, error: String) -> Progress {
    Progress {
        id,
        series: Vec::new(),
        interval_ns: 1,
        now_ns: 0,
        warmup_ns: 0,
        warming: false,
        live_tasks: 0,
        events: 0,
        busy_ms: 0.0,
        unit: String::new(),
        higher_is_better: true,
        completion: false,
        done: true,
        error: Some(error),
        report: None,
    }
}

/// Builds the run a [`Msg::Run`] asks for: the machine and patches through the
/// scenario's own validation, then the setup's `run_spec()`.
pub fn start(machine: &MachineChoice, patches: &str, sim: &SimSetup) -> Result<LiveRun, String> {
    let scenario = Scenario {
        machine: machine.clone(),
        ..Scenario::preset("", patches)
    };
    let m = scenario.validate().map_err(|e| e.to_string())?;
    let p: PatchSet = patches.parse().map_err(|e| format!("{patches}: {e}"))?;
    let spec = sim.run_spec(&m, p)?;
    LiveRun::new(&spec).map_err(|e| e.to_string())
}

thread_local! {
    /// The id of the run this worker should be doing (0: none).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

fn scope() -> Option<web_sys::DedicatedWorkerGlobalScope> {
    js_sys::global().dyn_into().ok()
}

/// `performance.now()` of the page or of the worker, in ms (0 outside a browser).
pub fn now_ms() -> f64 {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map_or(0.0, |p| p.now())
}

fn post(p: &Progress) {
    if let (Some(s), Ok(text)) = (scope(), serde_json::to_string(p)) {
        let _ = s.post_message(&JsValue::from_str(&text));
    }
}

fn handle(text: &str) {
    match serde_json::from_str::<Msg>(text) {
        Ok(Msg::Run {
            id,
            machine,
            patches,
            sim,
        }) => {
            CURRENT.with(|c| c.set(id));
            match start(&machine, &patches, &sim) {
                Ok(run) => yew::platform::spawn_local(drive(id, run)),
                Err(e) => post(&failed(id, e)),
            }
        }
        Ok(Msg::Cancel { id }) => CURRENT.with(|c| {
            if c.get() == id {
                c.set(0)
            }
        }),
        Err(e) => post(&failed(
            0,
            format!("the worker got a message it cannot read: {e}"),
        )),
    }
}

/// Runs `run` to its end in batches, reporting after each, unless another run (or a
/// cancel) takes its place.
async fn drive(id: u64, mut run: LiveRun) {
    let mut busy_ms = 0.0;
    loop {
        if CURRENT.with(Cell::get) != id {
            return;
        }
        let t0 = now_ms();
        let mut error = None;
        while now_ms() - t0 < BATCH_MS {
            match run.advance(SLICE_NS) {
                Ok(false) => {}
                Ok(true) => break,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        busy_ms += now_ms() - t0;
        let p = progress(id, &run, busy_ms, error);
        post(&p);
        if p.done {
            return;
        }
        // A macrotask, so a Cancel or a newer Run waiting in the queue is read first.
        yew::platform::time::sleep(Duration::ZERO).await;
    }
}

/// The worker's entry, called by `static/worker.js` once the module is loaded, with
/// the messages that arrived while it loaded.
#[wasm_bindgen]
pub fn worker_main(early: js_sys::Array) {
    let Some(s) = scope() else {
        return;
    };
    for m in early.iter() {
        if let Some(text) = m.as_string() {
            handle(&text);
        }
    }
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(|e: web_sys::MessageEvent| {
            if let Some(text) = e.data().as_string() {
                handle(&text);
            }
        });
    s.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
}

#[cfg(test)]
mod tests {
    use schedlab_core::experiment::{self, RunSpec};
    use schedlab_core::workload::Workload;

    use super::*;

    /// What a worker reports after running to the end is the native run: the same
    /// digest and value, through the JSON the page reads.
    #[test]
    fn a_worker_run_reports_the_native_digest() {
        let sim = SimSetup {
            workload: Workload::NetperfTcpRr { instances: 2 },
            cpus: "node0".to_string(),
            duration_ms: 20,
            seed: 4,
            sweep: Vec::new(),
        };
        let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
        let mut run = start(&machine, "6.6+cluster", &sim).expect("starts");
        let mut batches = 0;
        while !run.advance(SLICE_NS).expect("runs") {
            batches += 1;
        }
        let p = progress(9, &run, 1.0, None);
        let back: Progress = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        let native = experiment::run(
            &RunSpec::on_preset(
                "kunpeng920-6426",
                "node0",
                "6.6+cluster".parse().unwrap(),
                sim.workload.clone(),
                20,
                4,
            )
            .unwrap(),
        )
        .unwrap();
        let r = back.report.expect("done");
        assert!(back.done && batches > 10);
        assert_eq!((r.digest, r.value), (native.digest, native.value));
        assert_eq!(back.series.len(), 2, "two 10 ms samples");
    }

    #[test]
    fn a_run_that_cannot_start_says_why() {
        let sim = SimSetup {
            cpus: "node5".to_string(),
            ..SimSetup::default()
        };
        let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
        let e = start(&machine, "6.6", &sim).err().expect("refused");
        assert!(e.contains("nodes 0-3"), "{e}");
        let e = start(&MachineChoice::Preset("vax".into()), "6.6", &sim)
            .err()
            .expect("refused");
        assert!(e.contains("vax"), "{e}");
        let msg = Msg::Run {
            id: 3,
            machine,
            patches: "6.6".into(),
            sim,
        };
        let text = serde_json::to_string(&msg).unwrap();
        assert_eq!(serde_json::from_str::<Msg>(&text).unwrap(), msg);
    }
}
