//! The machine, live: a recorded run's events played back on a canvas.
//!
//! ```text
//!  worker/       Progress.record: RecordChunk (core's record bytes, ≤ 16 Ki records)
//!      │
//!  use_run.rs    RunView::take ─▶ Feed::push (one Feed per side: seed 0, first scale)
//!      │            core's Recording::records_from_bytes; the records are appended
//!      ▼
//!  live/play.rs  Player: plays a Feed's records up to a simulated time, or to the
//!                next wake-up, into each CPU's state, each task's CPU and the recent
//!                wake-ups (the reducer; host tests)
//!      ▼
//!  components/live_view.rs   requestAnimationFrame: clock ─▶ Player ─▶ live/draw.rs
//!                            (canvas), controls, legend, a status line, SimWakeRef clicks
//! ```
//!
//! The playback buffer is the feed itself: the simulation streams into it whether
//! the view plays, pauses or steps, and the player only moves a cursor along it.
//! A feed holds at most `worker::LIVE_RUN_RECORDS` records (8 MiB).

pub mod draw;
pub mod play;

use schedlab_core::sim::record::{Record, RecordKind};
use schedlab_core::sim::Recording;

use std::cell::RefCell;
use std::rc::Rc;

use crate::worker::RecordChunk;

/// The sides' feeds, shared by the run (which fills them) and the live view (which
/// plays them). Props compare by pointer: a new run is new feeds.
#[derive(Clone, Debug, Default)]
pub struct Feeds(pub Vec<Rc<RefCell<Feed>>>);

impl PartialEq for Feeds {
    fn eq(&self, o: &Feeds) -> bool {
        self.0.len() == o.0.len() && self.0.iter().zip(&o.0).all(|(a, b)| Rc::ptr_eq(a, b))
    }
}

/// One side's stream of records: what the watched run has sent so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Feed {
    /// The side's label (its patch set) and the run's seed.
    pub label: String,
    pub seed: u64,
    /// Every record received, in order (a prefix of the run's recording).
    pub records: Vec<Record>,
    /// Of `records`, the wake-ups.
    pub wake_records: u32,
    /// Wake-ups the run has made so far (recorded or not).
    pub wakeups: u32,
    pub workload_tasks: u32,
    /// The first record after the warm-up (`u64::MAX`: still warming up).
    pub measured_from: u64,
    /// Records still queued in the worker, and records left out for good.
    pub pending: u64,
    pub left_out: u64,
    /// The run has ended (its last chunk is in).
    pub done: bool,
    /// A chunk that did not decode, or did not follow the last one.
    pub error: Option<String>,
}

impl Feed {
    pub fn new(label: String, seed: u64) -> Feed {
        Feed {
            label,
            seed,
            measured_from: u64::MAX,
            ..Feed::default()
        }
    }

    /// Appends a chunk. A chunk that does not start where the last ended, or whose
    /// bytes are not core's records, stops the feed with an error (never a panic).
    pub fn push(&mut self, c: &RecordChunk, done: bool) {
        if self.error.is_some() {
            return;
        }
        if c.from != self.records.len() as u64 {
            self.error = Some(format!(
                "record chunk from {} after {} records",
                c.from,
                self.records.len()
            ));
            return;
        }
        match Recording::records_from_bytes(&c.bytes.0) {
            Ok(rs) => {
                self.wake_records += rs
                    .iter()
                    .filter(|r| matches!(r.kind, RecordKind::Wake(_)))
                    .count() as u32;
                self.records.extend(rs);
            }
            Err(e) => {
                self.error = Some(e.to_string());
                return;
            }
        }
        self.wakeups = c.wakeups;
        self.workload_tasks = c.workload_tasks;
        self.measured_from = c.measured_from;
        self.pending = c.pending;
        self.left_out = c.left_out;
        self.done = done;
    }
}

/// A wake-up of the simulation, as the live view (or the timeline) names it: enough
/// to find it again and replay it (`RecordConfig::capture_wake` takes `wake`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimWakeRef {
    /// 0 for A, 1 for B.
    pub side: usize,
    /// The run's seed (the live view watches each side's first seed).
    pub seed: u64,
    /// The wake-up's number in the run, from 1 (`WakeRecord::seq`).
    pub wake: u32,
    /// The CPU the simulation chose (`WakeRecord::cpu`).
    pub cpu: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::{live_record_config, next_progress, start_with};
    use schedlab_core::scenario::v1::SimSetupV1;
    use schedlab_core::scenario::MachineChoice;
    use schedlab_core::workload::Workload;

    /// A recorded run's chunks, as the worker posts them, and its last report.
    pub(crate) fn chunks(
        preset: &str,
        workload: Workload,
        ms: u64,
    ) -> (Vec<RecordChunk>, schedlab_core::experiment::RunReport) {
        chunks_with(preset, "6.6", workload, ms)
    }

    /// [`chunks`] under another patch set.
    pub(crate) fn chunks_with(
        preset: &str,
        patches: &str,
        workload: Workload,
        ms: u64,
    ) -> (Vec<RecordChunk>, schedlab_core::experiment::RunReport) {
        let sim = SimSetupV1 {
            workload,
            cpus: "all".to_string(),
            duration_ms: ms,
            seed: 1,
            seeds: 1,
            sweep: Vec::new(),
        };
        let m = MachineChoice::Preset(preset.to_string());
        let mut run = start_with(&m, patches, &sim, Some(live_record_config())).unwrap();
        let (mut sent, mut out) = (0, Vec::new());
        loop {
            run.advance(200_000).unwrap();
            let p = next_progress(1, &run, &mut sent, 0.0, None);
            out.push(p.record.unwrap());
            if p.done {
                return (out, run.report());
            }
        }
    }

    #[test]
    fn a_feed_takes_the_chunks_in_order_and_refuses_a_gap_or_bad_bytes() {
        let (cs, _) = chunks("flat-16", Workload::Tbench { clients: 2 }, 2);
        let mut f = Feed::new("6.6".into(), 1);
        let n = cs.len();
        for (i, c) in cs.iter().enumerate() {
            f.push(c, i + 1 == n);
        }
        assert!(f.done && f.error.is_none());
        assert_eq!(f.wake_records, f.wakeups);
        assert!(f.wakeups > 10);
        assert!(f.records.last().unwrap().at_ns > 1_000_000);
        // Twice the same chunk: a gap.
        let mut g = Feed::new("6.6".into(), 1);
        let c = cs.iter().find(|c| !c.bytes.0.is_empty()).unwrap();
        g.push(c, false);
        g.push(c, false);
        assert!(g.error.as_deref().unwrap().contains("record chunk from"));
        // Bytes that are not records.
        let mut h = Feed::new("6.6".into(), 1);
        let mut bad = c.clone();
        bad.bytes.0.truncate(33);
        h.push(&bad, false);
        assert!(h.error.as_deref().unwrap().contains("multiple of 32"));
        assert!(h.records.is_empty());
    }
}
