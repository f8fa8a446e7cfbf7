//! The event queue: an 8-ary heap ordered by `(time, seq)`, so events at the same
//! instant come out in the order they were scheduled.
//!
//! Sleepers' timers have a heap of their own: a run keeps one armed per sleeping
//! task (the noise's kthreads and daemons sleep for milliseconds), and they fire
//! seldom, so the CPUs' own events (burst ends, reschedules) sift through a heap a
//! third the size. The next event is the earliest of the two heaps' tops and the
//! tick ring's next slot; keys are unique, so the order is exactly `(time, seq)`.
//!
//! Events scheduled for the current instant (preemption requests, kicks) skip the
//! heaps: they go to a FIFO that is drained after the heap's own events of that
//! instant, which were necessarily scheduled earlier. The order is exactly
//! `(time, seq)`; the FIFO only saves the heap operations.
//!
//! Bound: at most a few events per CPU (burst end, dispatch, tick) plus one timer per
//! sleeping task and one sampling event are live at once; stale events (superseded
//! by a preemption) are dropped when popped, checked against a per-CPU generation.

use super::time::SimTime;

/// Bits of a key that order events of the same instant (their scheduling order).
const SEQ_BITS: u32 = 20;
const SEQ_END: u64 = 1 << SEQ_BITS;

/// The latest instant a key can hold: 2^44 ns, about 4.9 hours. Runs are capped
/// below it ([`MAX_RUN`]); an event past it (a long sleep) is kept at it, where it
/// never fires. One below the largest time the bits hold, so that no key is
/// [`PAD`], which stands for "none" among the sources' next keys.
const TIME_LIMIT: u64 = (1 << (64 - SEQ_BITS)) - 2;

/// The longest run the queue accepts (duration plus warm-up): 4 hours.
pub const MAX_RUN: SimTime = SimTime(4 * 3600 * 1_000_000_000);

// A workload's longest duration is the longest run (its doc says so); a burst or
// sleep ending past the horizon is kept at it and never fires.
const _: () = assert!(crate::workload::Dist::MAX_NS == MAX_RUN.0);

/// The most events that may be pending at once, far above what a run with the
/// simulator's task limit can have (one timer per task, a few per CPU).
pub const MAX_PENDING: usize = (SEQ_END / 2) as usize;

// The largest key is below the padding's.
const _: () = assert!((TIME_LIMIT << SEQ_BITS) | (SEQ_END - 1) < PAD);

#[inline]
fn key(time: SimTime, seq: u64) -> u64 {
    (time.0.min(TIME_LIMIT) << SEQ_BITS) | seq
}

#[inline]
fn key_time(k: u64) -> SimTime {
    SimTime(k >> SEQ_BITS)
}

/// What happens. Payloads are small `Copy` ids so the heap stays cache friendly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The task running on `cpu` reaches the end of its CPU burst.
    BurstEnd { cpu: u32, gen: u32 },
    /// `cpu` gets to `schedule()`: after an idle exit, an IPI, or a preemption request.
    Resched { cpu: u32, gen: u32 },
    /// A sleeping task's timer fires.
    Timer { task: u32, gen: u32 },
    /// The scheduler tick of `cpu` (slice expiry, periodic load balance).
    Tick { cpu: u32 },
    /// Metrics sampling (throughput series).
    Sample,
    /// `cpu`'s stopper runs the work an active balance queued for it
    /// (`active_load_balance_cpu_stop()`).
    Stopper { cpu: u32 },
    /// The idle load balancer `cpu` takes the kick a busy CPU's tick sent it
    /// (`nohz_csd_func()`, then `_nohz_idle_balance()` from its softirq).
    NohzKick { cpu: u32 },
    /// A wake-list IPI reaches busy `cpu`: `sched_ttwu_pending()` empties the list
    /// and clears `rq->ttwu_pending`.
    WakelistIpi { cpu: u32 },
    /// `poll_idle()` on idle `cpu` reaches its time limit (`cpuidle_poll_time()`) in
    /// the POLL stay numbered `gen` (`Cpu::cstate_gen`).
    PollLimit { cpu: u32, gen: u32 },
}

/// An 8-ary min-heap of `time << 20 | seq` keys with their events in a parallel
/// array: a third of the depth of a binary heap, and the eight children of a node are
/// compared as a tournament whose pairs are independent (about 5% faster here than 4-ary).
/// One-word keys make the tournament about 4% of the whole run cheaper than
/// `(u64, u64)` pairs did; [`EventQueue::renumber`] keeps the 20 sequence bits from
/// running out.
///
/// Removal is lazy: `take_top()` leaves a hole at the root, and the next `push()`
/// fills it with one sift-down (handling an event usually schedules one more),
/// instead of a sift-down to remove plus a sift-up to insert. The next `top()` closes
/// a hole nobody filled.
///
/// `keys` runs at least eight slots past the last entry, padded with `u64::MAX`, so
/// every group of children the sift-down meets is a whole group: one branch-free
/// tournament, never a loop over a partial group. A pad never rises: a key moves
/// down only past a smaller one. So the root's key is the pad when the heap is empty.
#[derive(Debug)]
struct OctHeap {
    /// The entries' keys, then the padding.
    keys: Vec<u64>,
    /// The entries' events: its length is the heap's.
    events: Vec<Event>,
    /// The root slot is empty (its event was popped).
    hole: bool,
}

/// The key of the padding past the heap's last entry.
const PAD: u64 = u64::MAX;

impl Default for OctHeap {
    fn default() -> Self {
        OctHeap::with_capacity(0)
    }
}

impl OctHeap {
    fn with_capacity(n: usize) -> Self {
        let mut keys = Vec::with_capacity(n + 8);
        keys.resize(8, PAD);
        OctHeap {
            keys,
            events: Vec::with_capacity(n),
            hole: false,
        }
    }

    /// Always inlined: with two callers ([`EventQueue::push`], [`EventQueue::push_timer`])
    /// the inliner kept it out of line, 5 instructions more per event (cachegrind).
    #[inline(always)]
    fn push(&mut self, key: u64, ev: Event) {
        if self.hole {
            self.hole = false;
            self.sift_down(key, ev);
            return;
        }
        let mut i = self.events.len();
        self.events.push(ev);
        if self.keys.len() < i + 9 {
            self.keys.push(PAD);
        }
        while i > 0 {
            let parent = (i - 1) / 8;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[i] = self.keys[parent];
            self.events[i] = self.events[parent];
            i = parent;
        }
        self.keys[i] = key;
        self.events[i] = ev;
    }

    /// Fills an unfilled hole with the last entry.
    #[inline]
    fn close_hole(&mut self) {
        if !self.hole {
            return;
        }
        self.hole = false;
        let ev = self.events.pop().expect("a hole is a slot");
        let last = self.events.len();
        let key = std::mem::replace(&mut self.keys[last], PAD);
        if last > 0 {
            self.sift_down(key, ev);
        }
    }

    /// The least key, [`PAD`] when the heap is empty.
    #[inline]
    fn top(&mut self) -> u64 {
        self.close_hole();
        self.keys[0]
    }

    /// Takes the event of the least key (the heap is not empty: [`OctHeap::top`]
    /// was not [`PAD`]).
    #[inline]
    fn take_top(&mut self) -> Event {
        debug_assert!(!self.hole && !self.events.is_empty());
        self.hole = true;
        self.events[0]
    }

    /// Places `key` at the root slot and moves it down to its place.
    #[inline]
    fn sift_down(&mut self, key: u64, ev: Event) {
        let n = self.events.len();
        let mut i = 0;
        loop {
            let first = 8 * i + 1;
            if first >= n {
                break;
            }
            // A whole group (padded past the end): a branch-free tournament. Keys are
            // unique, and a pad ties only with pads, so any minimum is the minimum.
            let k = &self.keys[first..first + 8];
            let min2 = |x: usize, y: usize| std::hint::select_unpredictable(k[y] < k[x], y, x);
            let (a, b) = (min2(0, 1), min2(2, 3));
            let (c, d) = (min2(4, 5), min2(6, 7));
            let (ab, cd) = (min2(a, b), min2(c, d));
            let w = min2(ab, cd);
            let (m, mk) = (first + w, k[w]);
            if key <= mk {
                break;
            }
            self.keys[i] = mk;
            self.events[i] = self.events[m];
            i = m;
        }
        self.keys[i] = key;
        self.events[i] = ev;
    }

    /// The entries' keys.
    fn live_keys(&self) -> &[u64] {
        &self.keys[..self.events.len()]
    }

    fn len(&self) -> usize {
        self.events.len() - self.hole as usize
    }
}

/// The periodic scheduler ticks of the run's CPUs, kept out of the heap: tick `i`
/// fires at `round × period + offsets[i]`, offsets ascending, so the next tick is the
/// next slot of the ring. Each slot keeps the sequence number it was (re)scheduled
/// with, so ties with heap events resolve exactly as `(time, seq)`.
#[derive(Debug, Default)]
struct TickRing {
    period: u64,
    slots: Vec<(u64, u32, u64)>, // (offset, cpu, seq)
    idx: usize,
    round: u64,
}

impl TickRing {
    #[inline]
    fn next(&self) -> Option<(u64, u32)> {
        let &(off, cpu, seq) = self.slots.get(self.idx)?;
        let t = self.round * self.period + off;
        Some((key(SimTime(t), seq), cpu))
    }

    #[inline]
    fn advance(&mut self, seq: u64) {
        self.slots[self.idx].2 = seq;
        self.idx += 1;
        if self.idx == self.slots.len() {
            self.idx = 0;
            self.round += 1;
        }
    }
}

#[derive(Debug)]
pub struct EventQueue {
    /// The one-shot events but sleepers' timers ([`EventQueue::push`]).
    heap: OctHeap,
    /// Sleepers' timers ([`EventQueue::push_timer`]).
    timers: OctHeap,
    ticks: TickRing,
    /// The lesser of the timers' least key and the next tick's ([`PAD`] for none),
    /// kept as they change: most events come from `heap`, and the test for them is
    /// then one comparison.
    rare: u64,
    /// Events for `now`, in scheduling order.
    immediate: std::collections::VecDeque<Event>,
    now: SimTime,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: OctHeap::with_capacity(256),
            timers: OctHeap::with_capacity(256),
            ticks: TickRing::default(),
            rare: PAD,
            immediate: std::collections::VecDeque::with_capacity(64),
            now: SimTime::ZERO,
            seq: 0,
        }
    }

    /// Starts periodic `Event::Tick`s: CPU `cpu` ticks at `offset + k × period`.
    pub fn set_ticks(&mut self, period: u64, mut cpus: Vec<(u64, u32)>) {
        cpus.sort();
        let mut slots = Vec::with_capacity(cpus.len());
        for (off, cpu) in cpus {
            let seq = self.next_seq();
            slots.push((off % period.max(1), cpu, seq));
        }
        self.ticks = TickRing {
            period: period.max(1),
            slots,
            idx: 0,
            round: 0,
        };
        self.refresh_rare();
    }

    /// Recomputes [`EventQueue::rare`] after the timers' heap lost its top or the
    /// tick ring moved (closing the timers' hole).
    fn refresh_rare(&mut self) {
        let k = self.ticks.next().map_or(PAD, |(k, _)| k);
        self.rare = self.timers.top().min(k);
    }

    /// The ticks' `(offset, cpu)`, in firing order within a period.
    #[cfg(test)]
    pub fn tick_offsets(&self) -> Vec<(u64, u32)> {
        self.ticks.slots.iter().map(|&(o, c, _)| (o, c)).collect()
    }

    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        if let Some(k) = self.key_or_now(time, event) {
            self.heap.push(k, event);
        }
    }

    /// [`EventQueue::push`] for a sleeper's timer (`Event::Timer`), into the heap of
    /// timers. (Either heap keeps any event in order; this one keeps the long-lived
    /// ones out of the way of the CPUs' events.)
    #[inline]
    pub fn push_timer(&mut self, time: SimTime, event: Event) {
        if let Some(k) = self.key_or_now(time, event) {
            // No hole here (refresh_rare() closes it): the least key is the lesser.
            self.timers.push(k, event);
            self.rare = self.rare.min(k);
        }
    }

    /// An event due at `time`: its heap key, or `None` once queued to run now
    /// (`time` not after the present).
    #[inline]
    fn key_or_now(&mut self, time: SimTime, event: Event) -> Option<u64> {
        if time <= self.now {
            self.immediate.push_back(event);
            return None;
        }
        let seq = self.next_seq();
        Some(key(time, seq))
    }

    /// The next sequence number.
    #[inline]
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        if self.seq == SEQ_END {
            self.renumber();
        }
        self.seq
    }

    /// Gives the pending events the sequence numbers `1..=n` in their order, so the
    /// next event scheduled gets `n + 1`: the order of every pending and future event
    /// is the order `(time, scheduling order)` gives. Runs once per about a million
    /// events scheduled.
    #[cold]
    fn renumber(&mut self) {
        /// Where a pending key is kept.
        #[derive(Clone, Copy)]
        enum At {
            Heap(usize),
            Timers(usize),
            Tick(usize),
        }
        self.heap.close_hole();
        self.timers.close_hole();
        let mut all: Vec<(u64, At)> = Vec::new();
        all.extend(
            self.heap
                .live_keys()
                .iter()
                .enumerate()
                .map(|(i, &k)| (k, At::Heap(i))),
        );
        all.extend(
            self.timers
                .live_keys()
                .iter()
                .enumerate()
                .map(|(i, &k)| (k, At::Timers(i))),
        );
        let ticks = &self.ticks;
        all.extend(ticks.slots.iter().enumerate().map(|(j, &(off, _, seq))| {
            let round = ticks.round + (j < ticks.idx) as u64;
            (key(SimTime(round * ticks.period + off), seq), At::Tick(j))
        }));
        assert!(all.len() < MAX_PENDING, "too many pending events");
        // Keys are unique: the order is the keys'.
        all.sort_unstable_by_key(|&(k, _)| k);
        for (rank, &(k, at)) in all.iter().enumerate() {
            let k = (k & !(SEQ_END - 1)) | (rank as u64 + 1);
            match at {
                At::Heap(i) => self.heap.keys[i] = k,
                At::Timers(i) => self.timers.keys[i] = k,
                At::Tick(j) => self.ticks.slots[j].2 = k & (SEQ_END - 1),
            }
        }
        self.seq = all.len() as u64 + 1;
        self.refresh_rare();
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        // The earliest of the heaps' tops and the next tick, by (time, seq); keys
        // are unique.
        let h = self.heap.top();
        let next = h.min(self.rare);
        if next != PAD {
            let t = key_time(next);
            if t <= self.now || self.immediate.is_empty() {
                self.now = t;
                if next == h {
                    return Some((t, self.heap.take_top()));
                }
                let ev = if self.timers.top() == next {
                    self.timers.take_top()
                } else {
                    let (_, cpu) = self.ticks.next().expect("the next tick");
                    let seq = self.next_seq();
                    self.ticks.advance(seq);
                    Event::Tick { cpu }
                };
                self.refresh_rare();
                return Some((t, ev));
            }
        }
        self.immediate.pop_front().map(|e| (self.now, e))
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if !self.immediate.is_empty() {
            return Some(self.now);
        }
        let next = self.heap.top().min(self.rare);
        (next != PAD).then(|| key_time(next))
    }

    /// Pending one-shot events (the tick ring is not counted: it is one per CPU).
    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.len() + self.immediate.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0 && self.ticks.slots.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Event::Tick { cpu: 1 });
        q.push(SimTime(3), Event::Tick { cpu: 2 });
        q.push(SimTime(5), Event::Tick { cpu: 3 });
        q.push(SimTime(3), Event::Tick { cpu: 4 });
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::Tick { cpu } => cpu,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }

    #[test]
    fn events_for_now_come_after_earlier_scheduled_ones() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), Event::Tick { cpu: 1 });
        q.push(SimTime(10), Event::Tick { cpu: 2 });
        assert_eq!(q.pop(), Some((SimTime(10), Event::Tick { cpu: 1 })));
        // Scheduled at "now" while handling cpu 1: after cpu 2, before time 11.
        q.push(SimTime(10), Event::Tick { cpu: 3 });
        q.push(SimTime(11), Event::Tick { cpu: 4 });
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            rest,
            vec![
                (SimTime(10), Event::Tick { cpu: 2 }),
                (SimTime(10), Event::Tick { cpu: 3 }),
                (SimTime(11), Event::Tick { cpu: 4 }),
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn ticks_interleave_with_heap_events() {
        let mut q = EventQueue::new();
        q.set_ticks(10, vec![(5, 1), (2, 0)]);
        q.push(SimTime(5), Event::Sample);
        q.push(SimTime(12), Event::Sample);
        let got: Vec<(u64, Event)> = (0..6)
            .map(|_| q.pop().map(|(t, e)| (t.0, e)).unwrap())
            .collect();
        assert_eq!(
            got,
            vec![
                (2, Event::Tick { cpu: 0 }),
                // The tick at 5 was scheduled before the sample at 5.
                (5, Event::Tick { cpu: 1 }),
                (5, Event::Sample),
                // The sample at 12 was scheduled at 0, before the tick at 2 rescheduled
                // itself for 12.
                (12, Event::Sample),
                (12, Event::Tick { cpu: 0 }),
                (15, Event::Tick { cpu: 1 }),
            ]
        );
    }

    #[test]
    fn matches_a_sorted_time_seq_reference_under_interleaving() {
        // Pushes at or after the last time taken out (often exactly at it), mixed
        // with pops: the order must be (time, scheduling order).
        let mut r = crate::rng::Rng::new(11);
        let mut q = EventQueue::new();
        let mut reference: std::collections::BTreeMap<(u64, u64), u32> = Default::default();
        let (mut now, mut seq) = (0u64, 0u64);
        for i in 0..20_000u32 {
            if r.below(3) > 0 || reference.is_empty() {
                let t = match r.below(4) {
                    0 => now,
                    1 => now + r.below(8),
                    _ => {
                        let bits = r.below(40);
                        now + r.below(1 << bits)
                    }
                };
                seq += 1;
                q.push_any(SimTime(t), Event::Sample.with_id(i));
                reference.insert((t, seq), i);
            } else {
                let (&(t, s), &want) = reference.iter().next().unwrap();
                reference.remove(&(t, s));
                let (got_t, got) = q.pop().unwrap();
                assert_eq!((got_t.0, got), (t, Event::Sample.with_id(want)));
                now = t;
            }
        }
        assert_eq!(q.len(), reference.len());
    }

    #[test]
    fn sequence_numbers_are_renumbered_without_changing_the_order() {
        // Three times 2^20 events scheduled, with ticks and many same-instant ties
        // pending across each renumbering.
        let mut r = crate::rng::Rng::new(5);
        let mut q = EventQueue::new();
        q.set_ticks(1000, vec![(0, 0), (500, 1), (999, 2)]);
        let mut reference: std::collections::BTreeMap<(u64, u64), u32> = Default::default();
        let (mut now, mut seq, mut pushed) = (0u64, 3u64, 0u64);
        let mut next_tick = [(0u64, 1u64, 0u32), (500, 2, 1), (999, 3, 2)];
        while pushed < 3 * SEQ_END {
            if reference.len() < 200 || r.below(2) == 0 {
                let t = now + 1 + r.below(4) * 250;
                seq += 1;
                pushed += 1;
                q.push_any(SimTime(t), Event::Sample.with_id(pushed as u32));
                reference.insert((t, seq), pushed as u32);
            } else {
                let (&(t, s), &want) = reference.iter().next().unwrap();
                next_tick.sort();
                let (tt, ts, tc) = next_tick[0];
                let (got_t, got) = q.pop().unwrap();
                if (tt, ts) < (t, s) {
                    assert_eq!((got_t.0, got), (tt, Event::Tick { cpu: tc }));
                    seq += 1;
                    next_tick[0] = (tt + 1000, seq, tc);
                    now = tt;
                } else {
                    reference.remove(&(t, s));
                    assert_eq!((got_t.0, got), (t, Event::Sample.with_id(want)));
                    now = t;
                }
            }
        }
        assert!(q.seq < SEQ_END);
    }

    #[test]
    fn times_past_the_key_range_are_held_at_its_end() {
        let mut q = EventQueue::new();
        q.push_any(SimTime(u64::MAX), Event::Sample.with_id(1));
        q.push_any(SimTime(5), Event::Sample.with_id(2));
        q.push_any(SimTime(TIME_LIMIT + 7), Event::Sample.with_id(3));
        assert_eq!(q.pop(), Some((SimTime(5), Event::Sample.with_id(2))));
        assert_eq!(
            q.pop(),
            Some((SimTime(TIME_LIMIT), Event::Sample.with_id(1)))
        );
        assert_eq!(
            q.pop(),
            Some((SimTime(TIME_LIMIT), Event::Sample.with_id(3)))
        );
        assert!(MAX_RUN.ns() < TIME_LIMIT);
    }

    impl EventQueue {
        /// Timers as the simulator pushes them, the other events to the main heap.
        fn push_any(&mut self, time: SimTime, event: Event) {
            if matches!(event, Event::Timer { .. }) {
                self.push_timer(time, event);
            } else {
                self.push(time, event);
            }
        }
    }

    impl Event {
        /// An event told apart by `id`: a sleeper's timer for odd ids, a burst end
        /// for even ones, so both heaps take part.
        fn with_id(self, id: u32) -> Event {
            if id % 2 == 1 {
                Event::Timer { task: id, gen: 0 }
            } else {
                Event::BurstEnd { cpu: id, gen: 0 }
            }
        }
    }

    #[test]
    fn heap_sorts_many_keys() {
        let mut q = EventQueue::new();
        let mut r = crate::rng::Rng::new(3);
        let mut want = Vec::new();
        for i in 0..2000u32 {
            let t = 1 + r.below(500);
            q.push(SimTime(t), Event::Tick { cpu: i });
            want.push((t, i));
        }
        want.sort();
        let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::Tick { cpu } => (t.0, cpu),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, want);
    }
}
