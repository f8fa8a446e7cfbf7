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
//! The run the live view watches (`Msg::Run { record: true }`: the first seed of each
//! side) also streams core's event record (`sim::record`), in core's wire format:
//!
//! ```text
//!  LiveRun::with_recorder(cap LIVE_RUN_RECORDS) ── each batch ──▶ Progress.record:
//!    RecordChunk { from, bytes: Recording::records_to_bytes(next ≤ LIVE_BATCH_RECORDS),
//!                  wakeups, pending, left_out, truncated }        (a Uint8Array)
//!  page: Recording::records_from_bytes ─▶ live::Feed (one per side) ─▶ the canvas
//! ```
//!
//! So the page receives a contiguous prefix of the run's records: at most
//! [`LIVE_BATCH_RECORDS`] (512 KiB) per batch, at most [`LIVE_RUN_RECORDS`] (8 MiB) per
//! run; what the caps leave out is counted (`left_out`, and `wakeups` counts every
//! wake-up, recorded or not), never silently lost. Recording only observes: the
//! report and digest are the unrecorded run's (a test below).
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
use schedlab_core::sim::record::MAX_RECORD_CAP;
use schedlab_core::sim::{RecordConfig, Recording, SimTime};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

/// Simulated time per slice.
pub const SLICE_NS: u64 = 1_000_000;
/// Wall time per batch of slices before the worker reports and yields.
pub const BATCH_MS: f64 = 40.0;

/// The most records one [`Progress`] carries: 16 Ki records, 512 KiB. A run that makes
/// more per batch (a big machine) queues them in the worker for the next batches.
pub const LIVE_BATCH_RECORDS: usize = 1 << 14;
/// The most records a watched run streams (its recorder's cap): 256 Ki records, 8 MiB.
/// On a 384-CPU machine with 128 busy tasks that is a few ms of simulated time; on a
/// small one, seconds.
pub const LIVE_RUN_RECORDS: usize = 1 << 18;

/// What the page asks of a worker.
// One message per run, sent and dropped: boxing the setup would buy nothing.
#[allow(clippy::large_enum_variant)]
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
        /// Stream this run's event record ([`Progress::record`]): the run the live
        /// view watches. Off, the run has no recorder at all.
        #[serde(default)]
        record: bool,
    },
    /// Stop run `id` if it is still going.
    Cancel { id: u64 },
    /// Run the same as [`Msg::Run`] with core's event recorder on, and answer once
    /// with [`Reply::Recorded`]: the records of a window (the timeline), the Chrome
    /// trace (the download), or one wake-up's captured state (the Wake-up tab), as
    /// `job` says. Deterministic: the same run as [`Msg::Run`]'s, event for event.
    Record {
        id: u64,
        machine: MachineChoice,
        patches: String,
        sim: SimSetupV1,
        job: RecordJob,
    },
}

/// What a [`Msg::Record`] keeps and returns (`sim::record::RecordConfig` plus what to
/// send back). The run stops as soon as it has what was asked: right after the
/// captured wake-up, at the window's end; a trace runs to the end, as `schedlab run
/// --trace` does, so its bytes are the CLI's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordJob {
    /// The most records kept (0: none, for a capture alone).
    pub cap: u32,
    /// Keep only the records at `start <= t < end`, simulated ns (warm-up included).
    pub window_ns: Option<(u64, u64)>,
    /// Capture this wake-up's state (numbered from 1, as `--capture-wake N`).
    pub capture_wake: Option<u32>,
    /// Return the run's Chrome/Perfetto JSON (`LiveRun::chrome_trace`).
    pub trace: bool,
}

impl RecordJob {
    fn config(&self) -> RecordConfig {
        RecordConfig {
            cap: (self.cap as usize).min(MAX_RECORD_CAP),
            window: self.window_ns.map(|(a, b)| (SimTime(a), SimTime(b.max(a)))),
            capture_wake: self.capture_wake.into_iter().collect(),
        }
    }

    /// Whether `run` has what this job asks for (or can give no more).
    pub fn satisfied(&self, run: &LiveRun) -> bool {
        if run.done() || self.trace {
            return run.done();
        }
        let captured = self.capture_wake.is_none() || !run.captured_wakes().is_empty();
        let recorded = self.cap == 0
            || run.recording().is_some_and(|r| {
                r.truncated || self.window_ns.is_some_and(|(_, end)| run.now_ns() >= end)
            });
        captured && recorded
    }
}

/// A captured wake-up as it crosses to the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Captured {
    pub seq: u32,
    pub at_ns: u64,
    /// The CPU the simulation chose.
    pub cpu: u32,
    /// The traced replay of the same inputs chose the same (core's check).
    pub traced_agrees: bool,
    /// The `schedlab wake --state` file, as `run --capture-wake` writes it.
    pub state: String,
}

/// A [`Msg::Record`]'s answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub id: u64,
    /// `Recording::to_bytes` of the records kept.
    pub records: RecordBytes,
    pub truncated: bool,
    /// Index of the first record after the warm-up (`u64::MAX`: none).
    pub measured_from: u64,
    /// Wake-ups the run made up to where it stopped.
    pub wakeups: u32,
    /// Tasks below this are the workload's; the rest background tasks.
    pub workload_tasks: u32,
    pub window_ns: Option<(u64, u64)>,
    /// Where the run stopped (simulated ns): open slices end here.
    pub end_ns: u64,
    pub warmup_ns: u64,
    pub events: u64,
    pub busy_ms: f64,
    pub trace: Option<String>,
    pub captured: Option<Captured>,
    pub error: Option<String>,
}

/// What a worker answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "kebab-case")]
pub enum Reply {
    Progress(Box<Progress>),
    Recorded(Box<Recorded>),
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
    /// The records made since the last progress (a recorded run only).
    #[serde(default)]
    pub record: Option<RecordChunk>,
}

/// A piece of a recorded run's event record, as core writes it on the wire.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordChunk {
    /// The index in the run's recording of the first record here (the chunks of a run
    /// follow each other with no gap: each starts where the last ended).
    pub from: u64,
    /// [`Recording::records_to_bytes`]: `RECORD_BYTES` (32) per record.
    pub bytes: RecordBytes,
    /// Wake-ups the run has made so far, recorded or not.
    pub wakeups: u32,
    /// Tasks `0..workload_tasks` are the workload's; the rest are background tasks.
    pub workload_tasks: u32,
    /// The index of the first record after the warm-up (the metrics count from it);
    /// `u64::MAX` while warming up.
    pub measured_from: u64,
    /// Records made but still queued in the worker ([`LIVE_BATCH_RECORDS`] a batch).
    pub pending: u64,
    /// Records the stream leaves out for good: past [`LIVE_RUN_RECORDS`], or still
    /// queued when the run ended. They come after every record streamed.
    pub left_out: u64,
    /// Some records were left out (`left_out > 0`).
    pub truncated: bool,
}

/// Bytes that cross to the page as one `Uint8Array` (serde's bytes, which
/// serde-wasm-bindgen writes as a typed array), not as an array of numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordBytes(pub Vec<u8>);

impl Serialize for RecordBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for RecordBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RecordBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("record bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<RecordBytes, E> {
                Ok(RecordBytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<RecordBytes, E> {
                Ok(RecordBytes(v))
            }
            // Text formats (the host tests' JSON) write bytes as a list of numbers.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RecordBytes, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(b) = seq.next_element()? {
                    v.push(b);
                }
                Ok(RecordBytes(v))
            }
        }
        d.deserialize_byte_buf(V)
    }
}

/// The next chunk of `run`'s record after the `sent` records already posted (and
/// moves `sent` on); `None` for a run without a recorder. At most
/// [`LIVE_BATCH_RECORDS`]; once the run is done, what is still queued is left out.
pub fn record_chunk(run: &LiveRun, sent: &mut usize) -> Option<RecordChunk> {
    let rec = run.recording()?;
    let from = (*sent).min(rec.records.len());
    let to = rec.records.len().min(from + LIVE_BATCH_RECORDS);
    *sent = to;
    let queued = (rec.records.len() - to) as u64;
    let (pending, left_out) = if run.done() {
        (0, rec.dropped + queued)
    } else {
        (queued, rec.dropped)
    };
    Some(RecordChunk {
        from: from as u64,
        bytes: RecordBytes(Recording::records_to_bytes(&rec.records[from..to])),
        wakeups: rec.wakeups,
        workload_tasks: rec.workload_tasks,
        // usize::MAX (still warming) is u32::MAX in wasm32: the wire says u64::MAX.
        measured_from: if rec.measured_from == usize::MAX {
            u64::MAX
        } else {
            rec.measured_from as u64
        },
        pending,
        left_out,
        truncated: left_out > 0,
    })
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
        record: None,
    }
}

/// What a [`Msg::Record`] returns of `run` once [`RecordJob::satisfied`] (or failed).
pub fn recorded(
    id: u64,
    run: &LiveRun,
    job: &RecordJob,
    busy_ms: f64,
    error: Option<String>,
) -> Recorded {
    let rec = run.recording();
    let mut error = error;
    let captured = job.capture_wake.and_then(|n| {
        let Some(c) = run.captured_wakes().first() else {
            error.get_or_insert_with(|| {
                format!(
                    "wake-up {n}: the run had only {} wake-ups",
                    rec.map_or(0, |r| r.wakeups)
                )
            });
            return None;
        };
        match serde_json::to_string_pretty(&c.scenario) {
            Ok(text) => Some(Captured {
                seq: c.seq,
                at_ns: c.at_ns,
                cpu: c.decision.cpu.0,
                traced_agrees: c.traced_agrees,
                state: text + "\n",
            }),
            Err(e) => {
                error.get_or_insert(e.to_string());
                None
            }
        }
    });
    Recorded {
        id,
        records: RecordBytes(if job.cap > 0 {
            rec.map(|r| r.to_bytes()).unwrap_or_default()
        } else {
            Vec::new()
        }),
        truncated: rec.is_some_and(|r| r.truncated),
        measured_from: rec.map_or(u64::MAX, |r| {
            u64::try_from(r.measured_from).unwrap_or(u64::MAX)
        }),
        wakeups: rec.map_or(0, |r| r.wakeups),
        workload_tasks: rec.map_or(0, |r| r.workload_tasks),
        window_ns: rec.and_then(|r| r.window_ns),
        end_ns: run.now_ns(),
        warmup_ns: run.warmup_ns(),
        events: run.events(),
        busy_ms,
        trace: if job.trace && error.is_none() {
            run.chrome_trace()
        } else {
            None
        },
        captured,
        error,
    }
}

/// Runs a [`Msg::Record`] to the end in one go (the host tests; the worker runs it
/// in batches).
#[cfg(test)]
pub fn record_now(
    machine: &MachineChoice,
    patches: &str,
    sim: &SimSetupV1,
    job: &RecordJob,
) -> Recorded {
    let mut run = match start_recording(machine, patches, sim, job) {
        Ok(r) => r,
        Err(e) => return record_failed(0, e),
    };
    let mut error = None;
    while !job.satisfied(&run) {
        if let Err(e) = run.advance(SLICE_NS) {
            error = Some(e.to_string());
            break;
        }
    }
    recorded(0, &run, job, 0.0, error)
}

/// A [`Msg::Record`] that could not start.
pub fn record_failed(id: u64, error: String) -> Recorded {
    Recorded {
        id,
        records: RecordBytes::default(),
        truncated: false,
        measured_from: u64::MAX,
        wakeups: 0,
        workload_tasks: 0,
        window_ns: None,
        end_ns: 0,
        warmup_ns: 0,
        events: 0,
        busy_ms: 0.0,
        trace: None,
        captured: None,
        error: Some(error),
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
        record: None,
    }
}

/// [`start_with`] without a recorder (the host tests' plain run).
#[cfg(test)]
pub fn start(machine: &MachineChoice, patches: &str, sim: &SimSetupV1) -> Result<LiveRun, String> {
    start_with(machine, patches, sim, None)
}

/// Builds the run a [`Msg::Run`] asks for: the machine and patches through the
/// scenario's own validation, then the setup's `run_spec()`; with core's event
/// recorder on when `rc` is given.
pub fn start_with(
    machine: &MachineChoice,
    patches: &str,
    sim: &SimSetupV1,
    rc: Option<RecordConfig>,
) -> Result<LiveRun, String> {
    let m = machine.build().map_err(|e| e.to_string())?;
    let p: PatchSet = patches.parse().map_err(|e| format!("{patches}: {e}"))?;
    let spec = sim.parse(&m).map_err(|e| e.to_string())?.run_spec(&m, p)?;
    match rc {
        Some(rc) => LiveRun::with_recorder(&spec, rc),
        None => LiveRun::new(&spec),
    }
    .map_err(|e| e.to_string())
}

/// The run a [`Msg::Record`] asks for: [`start_with`] its job's recorder.
pub fn start_recording(
    machine: &MachineChoice,
    patches: &str,
    sim: &SimSetupV1,
    job: &RecordJob,
) -> Result<LiveRun, String> {
    start_with(machine, patches, sim, Some(job.config()))
}

/// What a watched run records: everything, up to [`LIVE_RUN_RECORDS`].
pub fn live_record_config() -> RecordConfig {
    RecordConfig {
        cap: LIVE_RUN_RECORDS,
        window: None,
        capture_wake: Vec::new(),
    }
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
    /// Records of its recording already posted (a watched run's stream).
    sent: usize,
    /// A [`Msg::Record`]'s job: answered once, when satisfied.
    job: Option<RecordJob>,
}

/// A simulation worker: one run at a time, in batches of `BATCH_MS`, reporting after
/// each; a newer run (or a cancel) takes the place of the current one.
pub struct SimWorker {
    current: Option<Current>,
    generations: u64,
}

impl SimWorker {
    /// Makes `run` the current run (a newer generation, so batches of the one it
    /// replaces stop) and schedules its first batch.
    fn begin(
        &mut self,
        scope: &WorkerScope<Self>,
        id: u64,
        run: LiveRun,
        who: HandlerId,
        job: Option<RecordJob>,
    ) {
        self.generations += 1;
        self.current = Some(Current {
            generation: self.generations,
            id,
            run,
            who,
            busy_ms: 0.0,
            sent: 0,
            job,
        });
        scope.send_message(self.generations);
    }
}

impl gloo_worker::Worker for SimWorker {
    /// Run the next batch of the run of this generation.
    type Message = u64;
    type Input = Msg;
    type Output = Reply;

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
                record,
            } => {
                self.current = None;
                let rc = record.then(live_record_config);
                match start_with(&machine, &patches, &sim, rc) {
                    Ok(run) => self.begin(scope, id, run, who, None),
                    Err(e) => scope.respond(who, Reply::Progress(Box::new(failed(id, e)))),
                }
            }
            Msg::Record {
                id,
                machine,
                patches,
                sim,
                job,
            } => {
                self.current = None;
                match start_recording(&machine, &patches, &sim, &job) {
                    Ok(run) => self.begin(scope, id, run, who, Some(job)),
                    Err(e) => scope.respond(who, Reply::Recorded(Box::new(record_failed(id, e)))),
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
            if c.job.as_ref().is_some_and(|j| j.satisfied(&c.run)) {
                break;
            }
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
        let done = match &c.job {
            Some(job) => {
                let done = error.is_some() || job.satisfied(&c.run);
                if done {
                    let r = recorded(c.id, &c.run, job, c.busy_ms, error);
                    scope.respond(c.who, Reply::Recorded(Box::new(r)));
                }
                done
            }
            None => {
                let mut p = progress(c.id, &c.run, c.busy_ms, error);
                p.record = record_chunk(&c.run, &mut c.sent);
                let done = p.done;
                scope.respond(c.who, Reply::Progress(Box::new(p)));
                done
            }
        };
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
    use schedlab_core::sim::record::{RecordKind, RECORD_BYTES};
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

    fn tbench_setup(ms: u64, seed: u64) -> SimSetupV1 {
        SimSetupV1 {
            workload: Workload::Tbench { clients: 8 },
            cpus: "node0".to_string(),
            duration_ms: ms,
            seed,
            seeds: 1,
            sweep: Vec::new(),
        }
    }

    /// A captured wake-up is the one the record shows: the worker's capture of
    /// wake-up N says the CPU the record chose, and the page, deciding the captured
    /// state in its own env for that side, chooses it too. The capture stops right
    /// after the wake-up, long before the run's end.
    #[test]
    fn a_captured_wake_up_decides_as_the_record_says() {
        use schedlab_core::sim::record::{RecordKind, Recording};
        let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
        let sim = tbench_setup(20, 3);
        let all = record_now(
            &machine,
            "6.6",
            &sim,
            &RecordJob {
                cap: 1 << 20,
                window_ns: None,
                capture_wake: None,
                trace: false,
            },
        );
        assert_eq!(all.error, None);
        let records = Recording::records_from_bytes(&all.records.0).unwrap();
        let wakes: Vec<_> = records
            .iter()
            .filter_map(|r| match r.kind {
                RecordKind::Wake(w) => Some((r.at_ns, w)),
                _ => None,
            })
            .collect();
        assert!(wakes.len() > 1000, "{}", wakes.len());
        let m = machine.build().unwrap();
        let env = schedlab_core::wakeup::WakeEnv::new(&m, "6.6".parse().unwrap()).unwrap();
        let mut moved = 0;
        // Some plain ones and the first that left their prev CPU.
        let mut picks = vec![0usize, wakes.len() / 2, wakes.len() - 1];
        picks.extend(
            (0..wakes.len())
                .filter(|&k| wakes[k].1.cpu != wakes[k].1.prev_cpu)
                .take(3),
        );
        for &k in &picks {
            let (at_ns, w) = wakes[k];
            let job = RecordJob {
                cap: 0,
                window_ns: None,
                capture_wake: Some(w.seq),
                trace: false,
            };
            let got = record_now(&machine, "6.6", &sim, &job);
            assert_eq!(got.error, None);
            let c = got.captured.clone().expect("captured");
            assert_eq!((c.seq, c.at_ns, c.cpu), (w.seq, at_ns, u32::from(w.cpu)));
            assert!(c.traced_agrees);
            assert!(got.records.0.is_empty(), "a capture alone keeps no records");
            // Stopped within a slice (1 ms) of the capture.
            assert!(
                got.end_ns <= (at_ns / SLICE_NS + 1) * SLICE_NS,
                "stopped after the capture"
            );
            let back: Recorded =
                serde_json::from_str(&serde_json::to_string(&got).unwrap()).unwrap();
            assert_eq!(back, got);
            let at = crate::state::SimWakeRef {
                side: crate::state::Side::A,
                seed: 3,
                wake: w.seq,
            };
            let sw =
                crate::state::SimWake::parse(at, c.at_ns, c.cpu, "6.6".into(), &c.state).unwrap();
            let o = sw.decide(&env).unwrap();
            assert_eq!(o.decision.cpu, sw.simulated_cpu, "wake-up {}", w.seq);
            moved += usize::from(w.cpu != w.prev_cpu);
        }
        assert!(moved >= 3, "three checked wake-ups left prev");
        // Past the run's wake-ups: an error, not a panic.
        let job = RecordJob {
            cap: 0,
            window_ns: None,
            capture_wake: Some(all.wakeups + 1_000_000),
            trace: false,
        };
        let e = record_now(&machine, "6.6", &sim, &job).error.unwrap();
        assert!(e.contains("only"), "{e}");
    }

    /// The page's trace download is `schedlab run --trace`'s bytes: the CLI builds
    /// the run with `RunSpec::on_preset` and records it with `LiveRun::with_recorder`
    /// to the end (`core/src/bin/schedlab/sim.rs`, `run_recorded`).
    #[test]
    fn the_trace_download_is_the_clis_bytes() {
        let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
        let sim = tbench_setup(6, 2);
        let job = RecordJob {
            cap: 500_000,
            window_ns: Some((1_000_000, 4_000_000)),
            capture_wake: None,
            trace: true,
        };
        let page = record_now(&machine, "6.6+cluster", &sim, &job);
        let spec = RunSpec::on_preset(
            "kunpeng920-6426",
            "node0",
            "6.6+cluster".parse().unwrap(),
            Workload::Tbench { clients: 8 },
            6,
            2,
        )
        .unwrap();
        let mut live = LiveRun::with_recorder(
            &spec,
            RecordConfig {
                cap: 500_000,
                window: Some((SimTime::from_ms(1), SimTime::from_ms(4))),
                capture_wake: Vec::new(),
            },
        )
        .unwrap();
        live.finish().unwrap();
        let cli = live.chrome_trace().unwrap();
        assert_eq!(page.trace.as_deref(), Some(cli.as_str()));
        assert!(cli.len() > 10_000);
        // A window without the trace stops at the window's end.
        let early = record_now(
            &machine,
            "6.6+cluster",
            &sim,
            &RecordJob {
                trace: false,
                ..job
            },
        );
        assert!(early.end_ns < page.end_ns && early.end_ns >= 4_000_000);
        assert!(early.trace.is_none() && !early.records.0.is_empty());
    }

    /// Recording only observes: a watched run reports what the unwatched one does,
    /// and its chunks, each within the batch cap and crossing serde, add up to the
    /// whole recording with every wake-up in it.
    #[test]
    fn a_recorded_run_streams_its_record_and_reports_the_same() {
        let sim = SimSetupV1 {
            workload: Workload::Tbench { clients: 8 },
            cpus: "node0".to_string(),
            duration_ms: 10,
            seed: 2,
            seeds: 1,
            sweep: Vec::new(),
        };
        let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
        let mut plain = start(&machine, "6.6", &sim).unwrap();
        plain.finish().unwrap();
        let rc = live_record_config();
        let mut rec = start_with(&machine, "6.6", &sim, Some(rc)).unwrap();
        let (mut sent, mut bytes, mut chunks) = (0, Vec::new(), 0);
        let last = loop {
            let done = rec.advance(100_000).unwrap();
            let p = progress(1, &rec, 0.0, None);
            let mut p = p;
            p.record = record_chunk(&rec, &mut sent);
            let back: Progress = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
            assert_eq!(back, p);
            let c = back.record.expect("a recorded run streams");
            assert_eq!(c.from as usize * RECORD_BYTES, bytes.len(), "no gap");
            assert!(c.bytes.0.len() <= LIVE_BATCH_RECORDS * RECORD_BYTES);
            bytes.extend_from_slice(&c.bytes.0);
            chunks += 1;
            if done {
                break c;
            }
        };
        assert_eq!(rec.report(), plain.report(), "the same run");
        let whole = rec.recording().unwrap();
        assert!(chunks > 10 && !whole.truncated);
        assert_eq!((last.pending, last.left_out, last.truncated), (0, 0, false));
        assert_eq!(
            Recording::records_from_bytes(&bytes).unwrap(),
            whole.records
        );
        let wakes = whole
            .records
            .iter()
            .filter(|r| matches!(r.kind, RecordKind::Wake(_)))
            .count();
        assert_eq!(wakes as u32, last.wakeups);
        assert!(wakes > 100, "{wakes}");
        // An unrecorded run streams nothing.
        assert_eq!(record_chunk(&plain, &mut 0), None);
    }

    /// Past the batch cap records queue in the worker; at the end what is still
    /// queued (and what the run cap dropped) is counted as left out.
    #[test]
    fn the_caps_bound_the_stream_and_count_what_they_leave_out() {
        let sim = SimSetupV1 {
            workload: Workload::Tbench { clients: 32 },
            cpus: "all".to_string(),
            duration_ms: 20,
            seed: 1,
            seeds: 1,
            sweep: Vec::new(),
        };
        let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
        let rc = RecordConfig {
            cap: 3 * LIVE_BATCH_RECORDS,
            ..live_record_config()
        };
        let mut run = start_with(&machine, "6.6", &sim, Some(rc)).unwrap();
        run.advance(5_000_000).unwrap();
        let mut sent = 0;
        let c = record_chunk(&run, &mut sent).unwrap();
        let made = run.recording().unwrap().records.len();
        assert!(made > LIVE_BATCH_RECORDS, "{made}");
        assert_eq!(c.bytes.0.len(), LIVE_BATCH_RECORDS * RECORD_BYTES);
        assert_eq!(c.pending as usize, made - LIVE_BATCH_RECORDS);
        run.finish().unwrap();
        let c = record_chunk(&run, &mut sent).unwrap();
        let r = run.recording().unwrap();
        assert!(r.truncated && r.dropped > 0);
        assert_eq!(c.from as usize, LIVE_BATCH_RECORDS);
        assert_eq!(c.pending, 0);
        assert_eq!(
            c.left_out,
            r.dropped + (r.records.len() - 2 * LIVE_BATCH_RECORDS) as u64
        );
        assert!(c.truncated);
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
            record: true,
        };
        let text = serde_json::to_string(&msg).unwrap();
        assert_eq!(serde_json::from_str::<Msg>(&text).unwrap(), msg);
    }
}
