//! A watched run's event record, streamed to the page in chunks (`Progress::record`).

use schedlab_core::experiment::LiveRun;
use schedlab_core::sim::{RecordConfig, Recording};

use super::messages::RecordChunk;
use super::wire::RecordBytes;
use super::{LIVE_BATCH_RECORDS, LIVE_RUN_RECORDS};

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

/// What a watched run records: everything, up to [`LIVE_RUN_RECORDS`].
pub fn live_record_config() -> RecordConfig {
    RecordConfig {
        cap: LIVE_RUN_RECORDS,
        window: None,
        capture_wake: Vec::new(),
    }
}
