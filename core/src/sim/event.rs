//! The event queue, ordered by `(time, seq)`: events at the same instant come out in
//! the order they were scheduled.
//!
//! It is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan 1990), which suits a
//! discrete-event simulator because no event is ever scheduled before the last one
//! taken out. Bucket `b` holds the events whose time first differs from `last` (the
//! time of the newest minimum) at bit `b - 1`; bucket 0 holds those at `last` itself.
//! No sequence numbers are stored: push is an append; when bucket 0 runs dry, the lowest non-empty bucket is
//! redistributed around its minimum. Every bucket stays in scheduling order (pushes
//! append with rising sequence numbers, and a redistribution only fills buckets that
//! are empty), and equal times always share a bucket, so bucket 0 read front to back
//! is exactly `(time, seq)` order.
//!
//! The scheduler ticks are ordinary events: each one schedules the CPU's next tick as
//! it is taken out, with the sequence number of that moment.
//!
//! Bound: at most a few events per CPU (burst end, dispatch, tick) plus one timer per
//! sleeping task and one sampling event are live at once; stale events (superseded
//! by a preemption) are dropped when popped, checked against a per-CPU generation.

use super::time::SimTime;

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
}

#[derive(Clone, Copy, Debug)]
struct Item {
    time: u64,
    event: Event,
}

const BUCKETS: usize = 65;

#[derive(Debug)]
pub struct EventQueue {
    buckets: Vec<Vec<Item>>,
    /// Bucket 0 is read front to back from here.
    head0: usize,
    /// Bit `b - 1` set: bucket `b` (1..=64) is not empty.
    nonempty: u64,
    /// The time every queued event is at or after (the last minimum found).
    last: u64,
    len: usize,
    /// Set by [`EventQueue::set_ticks`]: a tick taken out schedules the next one.
    tick_period: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            buckets: (0..BUCKETS).map(|_| Vec::with_capacity(16)).collect(),
            head0: 0,
            nonempty: 0,
            last: 0,
            len: 0,
            tick_period: 0,
        }
    }

    #[inline]
    fn bucket_of(&self, time: u64) -> usize {
        (64 - (time ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn insert(&mut self, time: u64, event: Event) {
        let b = self.bucket_of(time);
        self.buckets[b].push(Item { time, event });
        if b > 0 {
            self.nonempty |= 1 << (b - 1);
        }
        self.len += 1;
    }

    /// Starts periodic `Event::Tick`s: CPU `cpu` ticks at `offset + k × period`.
    pub fn set_ticks(&mut self, period: u64, mut cpus: Vec<(u64, u32)>) {
        cpus.sort();
        self.tick_period = period.max(1);
        for (off, cpu) in cpus {
            let first = off % self.tick_period;
            self.insert(first.max(self.last), Event::Tick { cpu });
        }
    }

    /// Schedules `event` at `time`; a time already past means "now".
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        self.insert(time.0.max(self.last), event);
    }

    /// Makes bucket 0 hold the earliest events; false when the queue is empty.
    #[inline]
    fn refill(&mut self) -> bool {
        if self.head0 < self.buckets[0].len() {
            return true;
        }
        self.buckets[0].clear();
        self.head0 = 0;
        if self.nonempty == 0 {
            return false;
        }
        let b = self.nonempty.trailing_zeros() as usize + 1;
        self.nonempty &= !(1 << (b - 1));
        let mut items = std::mem::take(&mut self.buckets[b]);
        self.last = items.iter().map(|i| i.time).min().expect("non-empty bucket");
        for it in &items {
            // Every item lands below b: it agrees with the new minimum above bit b - 1.
            let nb = self.bucket_of(it.time);
            self.buckets[nb].push(*it);
            if nb > 0 {
                self.nonempty |= 1 << (nb - 1);
            }
        }
        items.clear();
        self.buckets[b] = items;
        true
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        if !self.refill() {
            return None;
        }
        let it = self.buckets[0][self.head0];
        self.head0 += 1;
        self.len -= 1;
        if matches!(it.event, Event::Tick { .. }) && self.tick_period > 0 {
            self.insert(it.time + self.tick_period, it.event);
        }
        Some((SimTime(it.time), it.event))
    }

    /// The time of the next event (takes no event out).
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.refill().then_some(SimTime(self.last))
    }

    /// Pending events, the CPUs' next ticks included.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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
        let mut r = crate::sim::rng::Rng::new(11);
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
                q.push(SimTime(t), Event::Sample.with_id(i));
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

    impl Event {
        fn with_id(self, id: u32) -> Event {
            Event::Timer { task: id, gen: 0 }
        }
    }

    #[test]
    fn heap_sorts_many_keys() {
        let mut q = EventQueue::new();
        let mut r = crate::sim::rng::Rng::new(3);
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
