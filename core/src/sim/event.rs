//! The event queue: a binary heap ordered by `(time, seq)`, so events at the same
//! instant come out in the order they were scheduled.
//!
//! Events scheduled for the current instant (preemption requests, kicks) skip the
//! heap: they go to a FIFO that is drained after the heap's own events of that
//! instant, which were necessarily scheduled earlier. The order is exactly
//! `(time, seq)`; the FIFO only saves the heap operations.
//!
//! Bound: at most a few events per CPU (burst end, dispatch, tick) plus one timer per
//! sleeping task and one sampling event are live at once; stale events (superseded
//! by a preemption) are dropped when popped, checked against a per-CPU generation.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

#[derive(Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    /// Events for `now`, in scheduling order.
    immediate: std::collections::VecDeque<Event>,
    now: SimTime,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(256),
            immediate: std::collections::VecDeque::with_capacity(64),
            now: SimTime::ZERO,
            seq: 0,
        }
    }

    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        if time <= self.now {
            self.immediate.push_back(event);
            return;
        }
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        if let Some(top) = self.heap.peek() {
            if top.time <= self.now || self.immediate.is_empty() {
                let e = self.heap.pop().expect("peeked");
                self.now = e.time;
                return Some((e.time, e.event));
            }
        }
        self.immediate.pop_front().map(|e| (self.now, e))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        if !self.immediate.is_empty() {
            return Some(self.now);
        }
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.immediate.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.immediate.is_empty()
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
}
