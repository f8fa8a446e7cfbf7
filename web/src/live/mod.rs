//! The machine, live: a recorded run's events played back on a canvas.
//!
//! ```text
//!  worker/       Progress.record: RecordChunk (core's record bytes, ≤ 16 Ki records)
//!      │
//!  use_run/      RunView::take ─▶ Feed::push (one Feed per side: seed 0, first scale)
//!      │            core's Recording::records_from_bytes; the records are appended
//!      ▼
//!  live/play.rs  Player: plays a Feed's records up to a simulated time, or to the
//!                next wake-up, into each CPU's state, each task's CPU and the recent
//!                wake-ups (the reducer; host tests)
//!      ▼
//!  components/live_view/     requestAnimationFrame: clock ─▶ Player ─▶ live/draw.rs
//!                            (canvas), controls, legend, a status line, SimWakeRef clicks
//! ```
//!
//! The playback buffer is the feed itself: the simulation streams into it whether
//! the view plays, pauses or steps, and the player only moves a cursor along it.
//! A feed holds at most `worker::LIVE_RUN_RECORDS` records (8 MiB).

pub mod draw;
pub mod play;

use schedlab_core::sim::record::{Record, RecordKind, NO_TASK};
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
    /// The scale (threads, clients …) of the watched run: the run's first scale,
    /// `use_run::watched_scale` (0: not said).
    pub threads: u32,
    /// In a sweep, the watched scale as the caption says it (`128 clients`); empty
    /// for a single run, whose inputs say it.
    pub scale: String,
    /// Where the run ended (simulated ns, warm-up included), once it has; 0 before.
    pub run_end_ns: u64,
    /// When the benchmark started its clients (dbench's release after its start
    /// barrier), once the run has reached it; `None` before, or for a benchmark whose
    /// tasks start with the run.
    pub start_ns: Option<u64>,
    /// The run has such a start and has not reached it yet.
    pub start_pending: bool,
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

impl Feed {
    /// Until when the live view plays this side's start-up quickly: the benchmark's
    /// start once known, the newest record while the run still waits for it, `None`
    /// for a run without such a start.
    pub fn start_up_until(&self) -> Option<u64> {
        match (self.start_ns, self.start_pending) {
            (Some(t), _) => Some(t),
            (None, true) => Some(self.records.last().map_or(0, |r| r.at_ns)),
            (None, false) => None,
        }
    }

    /// The records of the window `[a, b)` (simulated ns), if the feed holds all of
    /// them, and where the window's open slices end: `b`, or the run's end if it
    /// ended first. The records are the run's in time order from its start, so the
    /// feed holds the window whole once a record at or past `b` is in, or once the
    /// run has ended with nothing left out. These are the records a recorder with the
    /// window `[a, b)` keeps (`Recording::push`), so the timeline drawn from them is
    /// the one a re-recorded window gives (a host test compares them).
    pub fn window(&self, a: u64, b: u64) -> Option<(&[Record], u64)> {
        if self.error.is_some() || b <= a {
            return None;
        }
        let last = self.records.last().map_or(0, |r| r.at_ns);
        let end = if last >= b {
            b
        } else if self.done && self.left_out == 0 {
            b.min(self.run_end_ns.max(last))
        } else {
            return None;
        };
        let from = self.records.partition_point(|r| r.at_ns < a);
        let to = self.records.partition_point(|r| r.at_ns < b);
        Some((&self.records[from..to.max(from)], end))
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
    /// The scale of the run it came from (`Feed::threads`).
    pub threads: u32,
}

/// Who woke a task, in words: "an interrupt" (no waking task) or "task N"; the live
/// view's and the timeline's wake-up descriptions share it.
pub fn waker_text(waker: u32) -> String {
    if waker == NO_TASK {
        "an interrupt".to_string()
    } else {
        format!("task {waker}")
    }
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
            warmup: Default::default(),
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

    /// The feed's window is what a recorder with that window keeps, record for record,
    /// and a window past what the feed holds is refused.
    #[test]
    fn a_feeds_window_is_the_re_recorded_window() {
        use schedlab_core::sim::record::RecordConfig;
        use schedlab_core::sim::SimTime;
        let w = Workload::Tbench { clients: 4 };
        let (cs, _) = chunks("flat-16", w.clone(), 3);
        let mut f = Feed::new("6.6".into(), 1);
        for c in &cs {
            f.push(c, false);
        }
        let last = f.records.last().unwrap().at_ns;
        // 1 to 2.5 ms after the clients' start (dbench's release).
        let at = crate::worker::tests::clients_start_ns(
            &schedlab_core::experiment::RunSpec::on_preset(
                "flat-16",
                "all",
                "6.6".parse().unwrap(),
                w.clone(),
                3,
                1,
            )
            .unwrap(),
        );
        let (a, b) = (at + 1_000_000, at + 2_500_000);
        assert!(last >= b, "the run makes records past the window");
        let (got, end) = f.window(a, b).expect("the feed holds the window");
        assert_eq!(end, b);
        let sim = SimSetupV1 {
            warmup: Default::default(),
            workload: w,
            cpus: "all".to_string(),
            duration_ms: 3,
            seed: 1,
            seeds: 1,
            sweep: Vec::new(),
        };
        let m = MachineChoice::Preset("flat-16".to_string());
        let rc = RecordConfig {
            cap: 1 << 20,
            window: Some((SimTime(a), SimTime(b))),
            capture_wake: Vec::new(),
        };
        let mut run = start_with(&m, "6.6", &sim, Some(rc)).unwrap();
        while !run.advance(500_000).unwrap() {}
        let want = &run.recording().unwrap().records;
        assert!(want.len() > 100);
        assert_eq!(got, &want[..]);
        // Past the newest record of an unfinished feed: not held.
        assert!(f.window(a, last + 1).is_none());
        // Finished with nothing left out: held up to the run's end.
        f.done = true;
        f.run_end_ns = last + 10;
        let (tail, end) = f.window(last - 1000, last + 5000).unwrap();
        assert_eq!(end, last + 10);
        assert_eq!(tail.last(), f.records.last());
        f.left_out = 1;
        assert!(f.window(last - 1000, last + 5000).is_none());
        assert!(f.window(a, b).is_some(), "a window inside stays held");
        assert!(f.window(b, a).is_none(), "an empty window is not");
    }

    /// The live view plays quickly up to the benchmark's start: the newest record
    /// while the run still waits for it, then the start itself; nothing for a run
    /// without such a start.
    #[test]
    fn the_start_up_lasts_until_the_clients_start() {
        let (cs, r) = chunks("flat-16", Workload::Tbench { clients: 2 }, 2);
        let mut f = Feed::new("6.6".into(), 1);
        assert_eq!(f.start_up_until(), None);
        f.start_pending = true;
        assert_eq!(f.start_up_until(), Some(0));
        f.push(&cs[0], false);
        let newest = f.records.last().unwrap().at_ns;
        assert_eq!(f.start_up_until(), Some(newest));
        let at = r
            .start_ns
            .expect("tbench starts its clients after its barrier");
        (f.start_ns, f.start_pending) = (Some(at), false);
        assert_eq!(f.start_up_until(), Some(at));
        let (_, r) = chunks("flat-16", Workload::NetperfTcpRr { instances: 2 }, 2);
        assert_eq!(r.start_ns, None, "netperf starts with the run");
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
