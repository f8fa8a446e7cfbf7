//! A watched run's event record, streamed to the page in chunks (`Progress::record`).

use schedlab_core::experiment::LiveRun;
use schedlab_core::sim::{RecordConfig, Recording};

use super::messages::{Progress, RecordChunk};
use super::run::progress;
use super::wire::RecordBytes;
use super::{LIVE_BATCH_RECORDS, LIVE_RUN_RECORDS};

/// What the worker posts of `run` after a batch: [`progress`] with the next chunk of
/// its record ([`record_chunk`]). A run that has ended with records still queued is
/// not done yet: the posts that follow carry the queued tail, at most
/// [`LIVE_BATCH_RECORDS`] each, and the last of them says done and has the report. So
/// the page gets every record the run's recorder kept (at most [`LIVE_RUN_RECORDS`]).
/// A run that failed ends at once, and what it had queued is left out.
pub fn next_progress(
    id: u64,
    run: &LiveRun,
    sent: &mut usize,
    busy_ms: f64,
    error: Option<String>,
) -> Progress {
    let failed = error.is_some();
    let mut p = progress(id, run, busy_ms, error);
    p.record = record_chunk(run, sent);
    if let Some(c) = p.record.as_mut().filter(|c| c.pending > 0) {
        if failed {
            c.left_out += c.pending;
            c.pending = 0;
            c.truncated = true;
        } else if p.done {
            p.done = false;
            p.report = None;
        }
    }
    p
}

/// The next chunk of `run`'s record after the `sent` records already posted (and
/// moves `sent` on); `None` for a run without a recorder. At most
/// [`LIVE_BATCH_RECORDS`]; the rest stays queued (`pending`), for the next chunks.
pub fn record_chunk(run: &LiveRun, sent: &mut usize) -> Option<RecordChunk> {
    let rec = run.recording()?;
    let from = (*sent).min(rec.records.len());
    let to = rec.records.len().min(from + LIVE_BATCH_RECORDS);
    *sent = to;
    let (pending, left_out) = ((rec.records.len() - to) as u64, rec.dropped);
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

/// What a watched run records: everything, up to [`LIVE_RUN_RECORDS`].
pub fn live_record_config() -> RecordConfig {
    RecordConfig {
        cap: LIVE_RUN_RECORDS,
        window: None,
        capture_wake: Vec::new(),
    }
}
