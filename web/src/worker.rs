//! The simulator off the main thread. Each point of a Simulate run goes to a dedicated
//! worker of the pool: the worker's own wasm module (`src/bin/schedlab-worker.rs`),
//! loaded by `static/worker.js`, whose `main` registers [`SimWorker`] with gloo-worker.
//! The page stays responsive while a run goes, and the points run in parallel. The
//! page's module names these message types but never runs the simulator, so its wasm
//! holds none of it (`LiveRun` and what it calls are only reached from [`SimWorker`]).
//!
//! ```text
//!  page ── Msg::Run { id, machine, patches, sim } ──▶ SimWorker: core's LiveRun, in batches
//!  page ◀── Progress { id, series, …, report } ────── after each ~40 ms of wall time
//!  page ── Msg::Cancel { id } (or a newer Run) ────▶ the old run stops at its next batch
//! ```
//!
//! The messages are these serde types, carried by gloo-worker through [`Codec`]
//! (serde-wasm-bindgen: structured clones, no JSON text). The worker only runs core;
//! what the page shows of a run is decided here, in [`progress`], a plain function
//! the host tests exercise. `hooks::use_run` is the page's end.

use std::time::Duration;

use gloo_worker::{HandlerId, Registrable, WorkerScope};
use schedlab_core::experiment::{LiveRun, RunReport};
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::MachineChoice;
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

/// Simulated time per slice.
pub const SLICE_NS: u64 = 1_000_000;
/// Wall time per batch of slices before the worker reports and yields.
pub const BATCH_MS: f64 = 40.0;

/// What the page asks of a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "kebab-case")]
pub enum Msg {
    /// Run `sim` on `machine` under `patches`; a newer id replaces an older run. The
    /// fields are the link's wire forms (a machine choice, the `6.6+cluster` text,
    /// `scenario::v1`'s setup): the worker parses them into core's typed values, as a
    /// link is parsed.
    Run {
        id: u64,
        machine: MachineChoice,
        patches: String,
        sim: SimSetupV1,
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

/// A finished run's report: core's `RunReport` whole, so the page writes the CLI's
/// CSV and JSON from it (`experiment::export`) and shows its numbers.
pub type Report = RunReport;

/// What the page sees of `run` now.
pub fn progress(id: u64, run: &LiveRun, busy_ms: f64, error: Option<String>) -> Progress {
    let (series, interval_ns) = run.series();
    let metric = run.metric();
    let report = run.done().then(|| run.report());
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
pub fn start(machine: &MachineChoice, patches: &str, sim: &SimSetupV1) -> Result<LiveRun, String> {
    let m = machine.build().map_err(|e| e.to_string())?;
    let p: PatchSet = patches.parse().map_err(|e| format!("{patches}: {e}"))?;
    let spec = sim.parse(&m).map_err(|e| e.to_string())?.run_spec(&m, p)?;
    LiveRun::new(&spec).map_err(|e| e.to_string())
}

/// `performance.now()` of the page or of the worker, in ms (0 outside a browser, and
/// in native tests, where js-sys cannot be called).
pub fn now_ms() -> f64 {
    if !cfg!(target_arch = "wasm32") {
        return 0.0;
    }
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map_or(0.0, |p| p.now())
}

/// Makes this worker a [`SimWorker`]: gloo-worker answers the page's handshake and
/// hands it the messages it held while the module loaded.
pub fn register() {
    SimWorker::registrar().encoding::<Codec>().register();
}

/// gloo-worker's message encoding: serde-wasm-bindgen, so messages cross as
/// structured clones. (gloo-worker's default, bincode, cannot read the scenario's
/// internally tagged enums.) u64s cross as BigInts: a seed may exceed 2^53.
pub struct Codec;

impl gloo_worker::Codec for Codec {
    fn encode<I: Serialize>(input: I) -> JsValue {
        let s = serde_wasm_bindgen::Serializer::new().serialize_large_number_types_as_bigints(true);
        // Every message is one of this module's types, which serialise whole.
        input.serialize(&s).unwrap_or(JsValue::UNDEFINED)
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        // Both ends are this module, so a message always decodes; gloo-worker's codec
        // has no way to report otherwise (its own bincode codec panics too).
        serde_wasm_bindgen::from_value(input)
            .unwrap_or_else(|e| wasm_bindgen::throw_str(&format!("a worker message: {e}")))
    }
}

/// The run this worker is doing and for whom.
struct Current {
    /// Tells its batches from a cancelled or replaced run's.
    generation: u64,
    id: u64,
    run: LiveRun,
    who: HandlerId,
    busy_ms: f64,
}

/// A simulation worker: one run at a time, in batches of [`BATCH_MS`], reporting after
/// each; a newer run (or a cancel) takes the place of the current one.
pub struct SimWorker {
    current: Option<Current>,
    generations: u64,
}

impl gloo_worker::Worker for SimWorker {
    /// Run the next batch of the run of this generation.
    type Message = u64;
    type Input = Msg;
    type Output = Progress;

    fn create(_: &WorkerScope<Self>) -> Self {
        SimWorker {
            current: None,
            generations: 0,
        }
    }

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Msg, who: HandlerId) {
        match msg {
            Msg::Run {
                id,
                machine,
                patches,
                sim,
            } => {
                self.current = None;
                match start(&machine, &patches, &sim) {
                    Ok(run) => {
                        self.generations += 1;
                        self.current = Some(Current {
                            generation: self.generations,
                            id,
                            run,
                            who,
                            busy_ms: 0.0,
                        });
                        scope.send_message(self.generations);
                    }
                    Err(e) => scope.respond(who, failed(id, e)),
                }
            }
            Msg::Cancel { id } => {
                if self.current.as_ref().is_some_and(|c| c.id == id) {
                    self.current = None;
                }
            }
        }
    }

    fn update(&mut self, scope: &WorkerScope<Self>, generation: u64) {
        let Some(c) = self.current.as_mut().filter(|c| c.generation == generation) else {
            return;
        };
        let t0 = now_ms();
        let mut error = None;
        while now_ms() - t0 < BATCH_MS {
            match c.run.advance(SLICE_NS) {
                Ok(false) => {}
                Ok(true) => break,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        c.busy_ms += now_ms() - t0;
        let p = progress(c.id, &c.run, c.busy_ms, error);
        let done = p.done;
        scope.respond(c.who, p);
        if done {
            self.current = None;
        } else {
            // A macrotask, so a Cancel or a newer Run waiting in the queue is read first.
            scope.send_future(async move {
                gloo_timers::future::sleep(Duration::ZERO).await;
                generation
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use schedlab_core::experiment::{self, RunSpec};
    use schedlab_core::workload::Workload;

    use super::*;

    /// What a worker reports after running to the end is the native run: the same
    /// digest and value, and it survives serde (the codec itself needs a browser).
    #[test]
    fn a_worker_run_reports_the_native_digest() {
        let sim = SimSetupV1 {
            workload: Workload::NetperfTcpRr { instances: 2 },
            cpus: "node0".to_string(),
            duration_ms: 20,
            seed: 4,
            seeds: 1,
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
        assert_eq!((&r.digest, r.value), (&native.digest, native.value));
        // The whole report crosses, so the page's exports are the CLI's.
        assert_eq!(r, native);
        assert_eq!(back.series.len(), 2, "two 10 ms samples");
    }

    #[test]
    fn a_run_that_cannot_start_says_why() {
        let sim = SimSetupV1 {
            cpus: "node5".to_string(),
            ..SimSetupV1::from(&schedlab_core::SimSetup::default())
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
