//! The player: a feed's records applied in order to what the drawing shows, one
//! cursor per side. A pure reducer (no browser), so the host tests check it.
//!
//! ```text
//!  Feed.records  ─ play_to(t) / step_wake() ─▶  cpus[cpu]:  Running(task) | Idle(C-state)
//!   (cursor ─▶)                                             | ForceIdle | Unknown
//!                                               task_cpu[task]: its CPU (moves on a
//!                                                 wake-up to another CPU, a migration)
//!                                               arrows: the last ARROWS wake-ups
//!                                               counts: wake-ups by distance, migrations
//! ```
//!
//! A CPU is `Unknown` until its first record (the run starts with every CPU idle in
//! the simulator, but the view only says what a record told it). A task sits on the
//! CPU of its last switch, wake-up or migration; whether it is running there is the
//! CPU's state. Nothing here allocates per frame: the vectors grow only when a new
//! CPU or task first shows up, and the arrows are a fixed ring.

use schedlab_core::cost::Distance;
use schedlab_core::sim::record::{Record, RecordKind, WakeRecord, NO_TASK};

use super::Feed;

/// Wake-ups kept for drawing: the newest, a ring (older ones fade out first).
pub const ARROWS: usize = 256;
/// Frames an arrow stays on screen, fading.
pub const ARROW_FRAMES: u64 = 45;
/// "No CPU" in `task_cpu`.
pub const NO_CPU: u16 = u16::MAX;

/// What a CPU is doing, as the records say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuState {
    /// No record about it yet.
    Unknown,
    Running(u32),
    /// Idle in C-state index `cstate` (into the machine's states).
    Idle(u8),
    /// Core scheduling keeps it idle with tasks queued.
    ForceIdle,
}

/// A wake-up being drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrow {
    pub wake: WakeRecord,
    pub at_ns: u64,
    /// The frame it was played in (its age is counted in frames).
    pub born: u64,
    /// It has been drawn at least once.
    pub drawn: bool,
}

/// One side's playback state.
#[derive(Clone, Debug)]
pub struct Player {
    /// Records applied so far.
    pub cursor: usize,
    /// The simulated time played to.
    pub t_ns: u64,
    pub cpus: Vec<CpuState>,
    pub task_cpu: Vec<u16>,
    /// The ring of the last [`ARROWS`] wake-ups; `head` is the next slot.
    arrows: Vec<Arrow>,
    head: usize,
    /// Wake-ups played, in all and by `Distance` (index = its discriminant).
    pub wakes: u32,
    pub by_dist: [u32; 6],
    /// Of `wakes`: the workload's wake-ups after the warm-up (the report's count).
    pub wakes_measured: u32,
    /// Wake-ups whose arrow was drawn, and those pushed out of the ring before a
    /// frame drew them (only when more than [`ARROWS`] play in one frame).
    pub arrows_drawn: u32,
    pub arrows_skipped: u32,
    /// Tasks moved to another CPU by a wake-up or a migration.
    pub moves: u32,
}

impl Player {
    pub fn new(n_cpus: usize) -> Player {
        Player {
            cursor: 0,
            t_ns: 0,
            cpus: vec![CpuState::Unknown; n_cpus],
            task_cpu: Vec::new(),
            arrows: Vec::with_capacity(ARROWS),
            head: 0,
            wakes: 0,
            by_dist: [0; 6],
            wakes_measured: 0,
            arrows_drawn: 0,
            arrows_skipped: 0,
            moves: 0,
        }
    }

    /// Back to the start of the feed.
    pub fn reset(&mut self) {
        *self = Player::new(self.cpus.len());
    }

    fn set_cpu(&mut self, cpu: u16, s: CpuState) {
        if let Some(c) = self.cpus.get_mut(cpu as usize) {
            *c = s;
        }
    }

    fn place(&mut self, task: u32, cpu: u16) {
        if task == NO_TASK {
            return;
        }
        let t = task as usize;
        if t >= self.task_cpu.len() {
            self.task_cpu.resize(t + 1, NO_CPU);
        }
        let old = std::mem::replace(&mut self.task_cpu[t], cpu);
        if old != NO_CPU && old != cpu {
            self.moves += 1;
        }
    }

    /// Applies record number `index` of `feed` (played in `frame`).
    fn apply(&mut self, feed: &Feed, index: usize, r: &Record, frame: u64) {
        self.t_ns = self.t_ns.max(r.at_ns);
        match r.kind {
            RecordKind::Switch { cpu, next, .. } => {
                if next == NO_TASK {
                    // The idle task: an idle entry follows with its C-state.
                    self.set_cpu(cpu, CpuState::Idle(0));
                } else {
                    self.set_cpu(cpu, CpuState::Running(next));
                    self.place(next, cpu);
                }
            }
            RecordKind::Wake(w) => {
                self.place(w.wakee, w.cpu);
                self.wakes += 1;
                self.by_dist[w.dist as usize] += 1;
                if index as u64 >= feed.measured_from && w.wakee < feed.workload_tasks {
                    self.wakes_measured += 1;
                }
                let a = Arrow {
                    wake: w,
                    at_ns: r.at_ns,
                    born: frame,
                    drawn: false,
                };
                if self.arrows.len() < ARROWS {
                    self.arrows.push(a);
                } else {
                    if !self.arrows[self.head].drawn {
                        self.arrows_skipped += 1;
                    }
                    self.arrows[self.head] = a;
                }
                self.head = (self.head + 1) % ARROWS;
            }
            RecordKind::Migrate { task, to, .. } => self.place(task, to),
            RecordKind::IdleEnter { cpu, cstate } => self.set_cpu(cpu, CpuState::Idle(cstate)),
            RecordKind::IdleExit { .. } => {}
            RecordKind::ForceIdle { cpu } => self.set_cpu(cpu, CpuState::ForceIdle),
            // The live view draws a wake-up at its call; a wake-list wakee's later
            // arrival on its rq shows in the timeline's arrow (`timeline.rs`).
            RecordKind::Arrive { .. } => {}
        }
    }

    /// Plays every record at or before `t_ns`; returns how many.
    pub fn play_to(&mut self, feed: &Feed, t_ns: u64, frame: u64) -> usize {
        let start = self.cursor;
        while let Some(r) = feed.records.get(self.cursor) {
            if r.at_ns > t_ns {
                break;
            }
            self.apply(feed, self.cursor, r, frame);
            self.cursor += 1;
        }
        self.t_ns = self
            .t_ns
            .max(t_ns.min(feed.records.last().map_or(0, |r| r.at_ns)));
        self.cursor - start
    }

    /// Plays up to and including the next wake-up; returns it (`None`: no wake-up
    /// left in the feed yet, and nothing was played).
    pub fn step_wake(&mut self, feed: &Feed, frame: u64) -> Option<WakeRecord> {
        let next = feed.records[self.cursor.min(feed.records.len())..]
            .iter()
            .position(|r| matches!(r.kind, RecordKind::Wake(_)))?;
        let at = feed.records[self.cursor + next].at_ns;
        for _ in 0..=next {
            let r = feed.records[self.cursor];
            self.apply(feed, self.cursor, &r, frame);
            self.cursor += 1;
        }
        self.t_ns = at;
        match feed.records[self.cursor - 1].kind {
            RecordKind::Wake(w) => Some(w),
            _ => None,
        }
    }

    /// The time of the next record not yet played.
    pub fn next_record_at(&self, feed: &Feed) -> Option<u64> {
        feed.records.get(self.cursor).map(|r| r.at_ns)
    }

    /// The time of the next wake-up not yet played.
    pub fn next_wake_at(&self, feed: &Feed) -> Option<u64> {
        feed.records[self.cursor.min(feed.records.len())..]
            .iter()
            .find(|r| matches!(r.kind, RecordKind::Wake(_)))
            .map(|r| r.at_ns)
    }

    /// Every record of the feed has been played.
    pub fn at_end(&self, feed: &Feed) -> bool {
        self.cursor >= feed.records.len()
    }

    /// The arrows still on screen in `frame`, oldest first, with their age in frames
    /// (marked drawn: the caller draws them).
    pub fn live_arrows(&mut self, frame: u64) -> impl Iterator<Item = (&Arrow, u64)> {
        let n = self.arrows.len();
        let start = if n < ARROWS { 0 } else { self.head };
        let mut newly = 0;
        for i in 0..n {
            let a = &mut self.arrows[(start + i) % n.max(1)];
            if frame.saturating_sub(a.born) < ARROW_FRAMES && !a.drawn {
                a.drawn = true;
                newly += 1;
            }
        }
        self.arrows_drawn += newly;
        let arrows = &self.arrows;
        (0..n)
            .map(move |i| &arrows[(start + i) % n])
            .map(move |a| (a, frame.saturating_sub(a.born)))
            .filter(|(_, age)| *age < ARROW_FRAMES)
    }

    /// The newest wake-ups played, newest first (at most `n`).
    pub fn recent(&self, n: usize) -> impl Iterator<Item = &Arrow> {
        let len = self.arrows.len();
        (1..=len.min(n)).map(move |k| &self.arrows[(self.head + ARROWS * 2 - k) % ARROWS % len])
    }

    /// Wake-ups that crossed a cluster boundary or further (same LLC in another
    /// cluster, another LLC, another node).
    pub fn crossed_cluster(&self) -> u32 {
        self.by_dist[Distance::SameLlc as usize]
            + self.by_dist[Distance::OtherLlc as usize]
            + self.by_dist[Distance::OtherNode as usize]
    }

    /// Wake-ups placed in another LLC or node than the waker's.
    pub fn left_llc(&self) -> u32 {
        self.by_dist[Distance::OtherLlc as usize] + self.by_dist[Distance::OtherNode as usize]
    }

    /// Tasks with a known CPU: the markers drawn.
    pub fn markers(&self) -> usize {
        self.task_cpu.iter().filter(|&&c| c != NO_CPU).count()
    }
}

/// The playback clock's next time: `t` plus `step` (0: `end`, "as fast as it goes"),
/// never past `end` (the newest record). Before the benchmark starts its clients
/// (`start_up`: until when, `Feed::start_up_until`) an idle stretch is skipped: when
/// no side's next record (`next`) comes within the step, the clock jumps to it, and it
/// stops at the start, where the chosen speed goes on. So dbench's forks and connects
/// play at the chosen speed and its 100 ms of clients waiting at the barrier pass in a
/// frame per noise event.
pub fn clock_after(t: u64, step: u64, end: u64, start_up: Option<u64>, next: Option<u64>) -> u64 {
    if step == 0 {
        return end;
    }
    let cap = end.max(t);
    let to = t.saturating_add(step);
    match start_up.filter(|&s| t < s) {
        Some(s) => {
            let to = match next {
                Some(n) if n > to => n,
                _ => to,
            };
            to.min(s).min(cap)
        }
        None => to.min(cap),
    }
}

/// One step of A and B together: the side whose next wake-up comes first plays to
/// it, and every other side to the same time (so a wake-up both sides make at the
/// same instant, as identical runs do until the patch matters, plays on both).
/// Returns that side, its wake-up and the time; `None` when no side has a wake-up
/// left (yet), and then nothing was played.
pub fn step_sides(
    feeds: &[&Feed],
    players: &mut [Player],
    frame: u64,
) -> Option<(usize, WakeRecord, u64)> {
    let (_, side) = feeds
        .iter()
        .zip(players.iter())
        .enumerate()
        .filter_map(|(i, (f, p))| Some((p.next_wake_at(f)?, i)))
        .min()?;
    let w = players[side].step_wake(feeds[side], frame)?;
    let t = players[side].t_ns;
    for (i, (f, p)) in feeds.iter().zip(players.iter_mut()).enumerate() {
        if i != side {
            p.play_to(f, t, frame);
        }
    }
    Some((side, w, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::workload::Workload;

    fn feed(preset: &str, w: Workload, ms: u64) -> (Feed, schedlab_core::experiment::RunReport) {
        let (cs, report) = super::super::tests::chunks(preset, w, ms);
        let mut f = Feed::new("6.6".into(), 1);
        let n = cs.len();
        for (i, c) in cs.iter().enumerate() {
            f.push(c, i + 1 == n);
        }
        assert!(f.done && f.error.is_none() && f.left_out == 0);
        (f, report)
    }

    /// Played to the end in small steps, drawing each frame, every wake-up is drawn
    /// once, the measured ones are the report's count, and the placements by
    /// distance are the report's too.
    #[test]
    fn playing_a_run_draws_each_wake_up_and_counts_what_the_report_counts() {
        let (f, report) = feed("kunpeng920-6426", Workload::Tbench { clients: 8 }, 3);
        let mut p = Player::new(128);
        let (mut t, mut frame) = (0, 0);
        while !p.at_end(&f) {
            t += 2_000;
            frame += 1;
            p.play_to(&f, t, frame);
            let drawn = p.live_arrows(frame).count();
            assert!(drawn <= ARROWS);
        }
        assert_eq!(p.wakes, f.wakeups);
        assert_eq!(p.arrows_drawn, p.wakes);
        assert_eq!(p.arrows_skipped, 0);
        assert_eq!(u64::from(p.wakes_measured), report.metrics.wakeups);
        assert!(p.wakes > 100);
        // Every workload task has shown up on some CPU.
        assert!(p.markers() >= 16, "{}", p.markers());
        assert!(p.cpus.iter().any(|c| matches!(c, CpuState::Running(_))));
        assert!(p.cpus.iter().any(|c| matches!(c, CpuState::Idle(_))));
        assert_eq!(p.by_dist.iter().sum::<u32>(), p.wakes);
        assert!(p.left_llc() <= p.crossed_cluster() && p.crossed_cluster() <= p.wakes);
    }

    /// One wake-up at a time: each step plays exactly one, in the run's order.
    #[test]
    fn stepping_plays_one_wake_up_at_a_time() {
        let (f, _) = feed("flat-16", Workload::Tbench { clients: 2 }, 1);
        let mut p = Player::new(16);
        let mut seqs = Vec::new();
        while let Some(w) = p.step_wake(&f, 0) {
            assert_eq!(p.wakes as usize, seqs.len() + 1);
            assert_eq!(p.task_cpu[w.wakee as usize], w.cpu);
            seqs.push(w.seq);
            assert_eq!(p.recent(1).next().map(|a| a.wake.seq), Some(w.seq));
        }
        assert_eq!(seqs, (1..=f.wakeups).collect::<Vec<_>>());
        // Past the last wake-up: nothing more, the rest plays with play_to.
        let rest = p.play_to(&f, u64::MAX, 1);
        assert!(p.at_end(&f));
        assert_eq!(p.step_wake(&f, 1), None);
        assert!(rest < 10, "{rest}");
        p.reset();
        assert_eq!((p.cursor, p.wakes), (0, 0));
    }

    /// Stepping A and B: each step plays the earliest next wake-up (on both sides
    /// when they make it at the same instant), so time only moves forward and the
    /// sides never drift apart.
    #[test]
    fn stepping_two_sides_keeps_them_on_one_clock() {
        let (a, _) = feed("flat-16", Workload::Tbench { clients: 2 }, 1);
        let (cs, _) = super::super::tests::chunks_with(
            "flat-16",
            "6.6+cluster",
            Workload::Tbench { clients: 2 },
            1,
        );
        let mut b = Feed::new("6.6+cluster".into(), 1);
        let n = cs.len();
        for (i, c) in cs.iter().enumerate() {
            b.push(c, i + 1 == n);
        }
        assert!(a.wake_records >= 10 && b.wake_records >= 10);
        let mut ps = vec![Player::new(16), Player::new(16)];
        let mut last_t = 0;
        for k in 1..=10u32 {
            let (side, w, t) = step_sides(&[&a, &b], &mut ps, 0).expect("a wake-up left");
            assert!(t >= last_t);
            last_t = t;
            assert_eq!(ps[side].wakes, w.seq);
            // One more wake-up on the stepped side; the other is at the same time.
            let total = ps[0].wakes + ps[1].wakes;
            assert!(
                total >= k && ps[0].wakes.max(ps[1].wakes) <= k,
                "{k}: {total}"
            );
            for (f, p) in [&a, &b].iter().zip(&ps) {
                assert!(p.next_wake_at(f).is_none_or(|n| n > t || p.cursor == 0));
            }
        }
    }

    /// More wake-ups in one frame than the ring holds: the newest are drawn and the
    /// rest counted as skipped, so drawn + skipped is every wake-up.
    #[test]
    fn a_fast_frame_keeps_the_newest_arrows_and_counts_the_rest() {
        let (f, _) = feed("kunpeng920-6426", Workload::Tbench { clients: 16 }, 2);
        let mut p = Player::new(128);
        p.play_to(&f, u64::MAX, 1);
        let shown = p.live_arrows(1).count();
        assert_eq!(shown, ARROWS);
        assert!(p.wakes as usize > ARROWS);
        assert_eq!(p.arrows_drawn + p.arrows_skipped, p.wakes);
        let newest = p.recent(3).map(|a| a.wake.seq).collect::<Vec<_>>();
        assert_eq!(newest, [p.wakes, p.wakes - 1, p.wakes - 2]);
        // They fade: ARROW_FRAMES later none is left.
        assert_eq!(p.live_arrows(1 + ARROW_FRAMES).count(), 0);
    }

    /// Before the clients' start the clock skips an idle stretch to the next record
    /// (and no further than the start); past the start, or with a record within the
    /// step, it moves by the step; never past the newest record; 0 is "to the end".
    #[test]
    fn the_clock_skips_idle_stretches_only_before_the_start() {
        let (end, start) = (200_000_000, 100_000_000);
        // A gap before the start: jump to the next record.
        assert_eq!(
            clock_after(1_000, 5_000, end, Some(start), Some(3_000_000)),
            3_000_000
        );
        // A record within the step: the step.
        assert_eq!(
            clock_after(1_000, 5_000, end, Some(start), Some(4_000)),
            6_000
        );
        // The next record after the start: stop at the start.
        assert_eq!(
            clock_after(99_000_000, 5_000, end, Some(start), Some(150_000_000)),
            start
        );
        // Past the start, a gap is played at the chosen speed.
        assert_eq!(
            clock_after(start, 5_000, end, Some(start), Some(150_000_000)),
            start + 5_000
        );
        // No start: the step, never past the newest record.
        assert_eq!(clock_after(1_000, 5_000, end, None, Some(3_000_000)), 6_000);
        assert_eq!(clock_after(end - 1, 5_000, end, None, None), end);
        assert_eq!(
            clock_after(1_000, 5_000, 3_000, Some(start), Some(9_000_000)),
            3_000
        );
        assert_eq!(
            clock_after(1_000, 0, end, Some(start), Some(3_000_000)),
            end
        );
    }
}
