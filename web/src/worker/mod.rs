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
//!                  wakeups, pending, left_out, truncated }        (base64 in the JSON)
//!    run ended, records still queued ─▶ more Progress (not done), ≤ LIVE_BATCH_RECORDS
//!                                       each; the last says done, with the report
//!  page: Recording::records_from_bytes ─▶ live::Feed (one per side) ─▶ the canvas
//! ```
//!
//! So the page receives a contiguous prefix of the run's records: at most
//! [`LIVE_BATCH_RECORDS`] (512 KiB) per message, at most [`LIVE_RUN_RECORDS`] (8 MiB) per
//! run, and every record the run's recorder kept (what was queued when the run ended
//! follows in its own messages, [`next_progress`]); what the run cap leaves out is
//! counted (`left_out`, and `wakeups` counts every wake-up, recorded or not), never
//! silently lost. Recording only observes: the report and digest are the unrecorded
//! run's (a test in `tests.rs`).
//!
//! The messages are these serde types, carried by gloo-worker through [`Codec`] as
//! JSON text (`wire.rs` says why). The worker only runs core; what the page shows of
//! a run is decided here, in [`next_progress`], a plain function the host tests
//! exercise. `hooks::use_run` is the page's end.
//!
//! The module, by responsibility:
//!
//! ```text
//!  messages    Msg, Reply, Progress, Recorded, RecordChunk: the contract
//!  wire        Codec (how they cross: JSON text), RecordBytes (base64)
//!  run         a Msg::Run: start_with, progress after each batch
//!  stream      a watched run's record, chunk by chunk, tail included (next_progress)
//!  record_job  a Msg::Record: RecordJob, recorded
//!  actor       SimWorker: one run at a time, in batches
//! ```

use wasm_bindgen::{JsCast, JsValue};

mod actor;
mod messages;
mod record_job;
mod run;
mod stream;
#[cfg(test)]
pub(crate) mod tests;
mod wire;

pub use actor::{register, SimWorker};
pub use messages::{Captured, Msg, Progress, RecordChunk, RecordJob, Recorded, Reply, Report};
#[cfg(test)]
pub use record_job::record_now;
pub use record_job::{record_failed, recorded, start_recording};
#[cfg(test)]
pub use run::start;
pub use run::{failed, progress, start_with};
pub use stream::{live_record_config, next_progress, record_chunk};
pub use wire::{Codec, RecordBytes};

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
