//! The messages between the page and a worker: what the page asks ([`Msg`]) and what
//! a worker answers ([`Reply`]). Both modules name these types, so the two ends agree
//! by construction; [`super::wire`] says how they cross.

use schedlab_core::experiment::RunReport;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::MachineChoice;
use serde::{Deserialize, Serialize};

use super::wire::RecordBytes;
#[cfg(doc)]
use super::{LIVE_BATCH_RECORDS, LIVE_RUN_RECORDS};
#[cfg(doc)]
use schedlab_core::sim::Recording;

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
    /// Where its warm-up ends (`None`: the benchmark had not started its clients
    /// where the run stopped, `LiveRun::warmup_ns`).
    pub warmup_ns: Option<u64>,
    pub events: u64,
    pub busy_ms: f64,
    pub trace: Option<String>,
    pub captured: Option<Captured>,
    pub error: Option<String>,
}

/// What a worker answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// Externally tagged: an internally tagged enum is read through serde's buffered
// `Content`, a copy of each message (and of its record's bytes) and a second
// deserialiser of each type in it.
#[serde(rename_all = "kebab-case")]
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
    /// Where the warm-up ends, simulated ns; `None` while the benchmark has not
    /// started its clients yet (dbench's barrier: the warm-up starts at the release).
    pub warmup_ns: Option<u64>,
    /// When the benchmark started its clients (dbench's release), once it has;
    /// `None` before that and for a benchmark without such a start.
    pub start_ns: Option<u64>,
    /// The benchmark has such a start and has not reached it yet.
    pub start_pending: bool,
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
    /// Records made but still queued in the worker ([`LIVE_BATCH_RECORDS`] a message;
    /// once the run has ended they follow in messages of their own).
    pub pending: u64,
    /// Records the stream leaves out for good: past [`LIVE_RUN_RECORDS`] (the run's
    /// recorder dropped them), or still queued when the run failed. They come after
    /// every record streamed.
    pub left_out: u64,
    /// Some records were left out (`left_out > 0`).
    pub truncated: bool,
}

/// A finished run's report: core's `RunReport` whole, so the page writes the CLI's
/// CSV and JSON from it (`experiment::export`) and shows its numbers.
pub type Report = RunReport;
