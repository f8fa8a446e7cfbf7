//! How a benchmark's tasks start together: dbench 4.0's start barrier (a SysV
//! semaphore its clients wait on, `create_procs()` in dbench.c) and the start clock a
//! benchmark reads ([`Op::StartClock`]).
//!
//! ```text
//!  parent  semop(+1) ─ fork clients ─┬─ semctl(GETZCNT) < n: usleep(100 ms), again
//!                                    └─ == n: gettimeofday(tv_start), semop(−1)
//!                                         └▶ wake_const_ops(): every waiter, queue order
//!                                            wake_up_q() → try_to_wake_up(p, …, 0)
//!  client  setup (connect, one exchange) ─ semop(0): wait for zero ─ … its loop
//! ```
//!
//! The semaphore's waiters queue on `sem->pending_const` in the order they block
//! (`__do_semtimedop()`, ipc/sem.c v6.8: `list_add_tail(&queue.list,
//! &curr->pending_const)`); the release walks that list (`wake_const_ops()`,
//! `list_for_each_entry_safe()`), adds each to the `wake_q` (`wake_q_add_safe()`,
//! appended at the tail), and `wake_up_q()` (core.c) wakes them in that order with
//! `wake_up_process()`, i.e. `try_to_wake_up(p, TASK_NORMAL, 0)`: no `WF_SYNC`, from
//! the releasing task on its CPU. Simplified: the semaphore's lock and the syscalls'
//! own CPU time are not priced (the wake-ups' selection and queueing are, as every
//! wake-up's); each task has one barrier, the one its children wait on.

use crate::wakeup::WakeFlags;
use crate::workload::{Op, TaskSpec};

use super::program::{Ins, Next};
use super::{Block, SimError, SimTime, Simulator};

/// How long a throughput run waits for its benchmark to read its start clock: dbench
/// 4.0's parent polls its barrier for 30 s before it gives up ("FAILED TO START",
/// `create_procs()`). A run whose clock is still unread then ends with an error.
pub(super) const START_CLOCK_WAIT: SimTime = SimTime(30_000_000_000);

/// The barriers' and the start clock's state.
#[derive(Debug, Default)]
pub(super) struct Start {
    /// Per task: the parent whose barrier it waits at (`u32::MAX`: none). Empty when
    /// no task's program waits at a barrier.
    parent: Vec<u32>,
    /// Tasks waiting at their parent's barrier, as (parent, child), in the order they
    /// began waiting (`pending_const`). Only start-up uses it: a few hundred at most.
    pub(super) waiters: Vec<(u32, u32)>,
    /// Parents that have released their barrier: its semaphore is 0, a later
    /// wait-for-zero returns at once.
    pub(super) released: Vec<u32>,
    /// A throughput workload whose warm-up waits for its [`Op::StartClock`] rather
    /// than starting with the run.
    pub(super) deferred: bool,
    /// When the start clock was read (only the first read counts).
    pub(super) clock: Option<SimTime>,
    /// The run's length (warm-up included), counted from the start clock when
    /// `deferred`.
    span: SimTime,
}

impl Start {
    /// The state for a run of `specs`.
    pub(super) fn new(specs: &[&TaskSpec], until_exit: bool, duration: SimTime) -> Start {
        let has = |t: &&TaskSpec, op: Op| t.program.contains(&op);
        let waits = specs.iter().any(|t| has(t, Op::WaitBarrier));
        Start {
            parent: if waits {
                specs.iter().map(|t| t.parent.unwrap_or(u32::MAX)).collect()
            } else {
                Vec::new()
            },
            deferred: !until_exit && specs.iter().any(|t| has(t, Op::StartClock)),
            span: duration,
            ..Start::default()
        }
    }

    /// The run's end until the start clock is read: its duration, or, for a deferred
    /// start, that plus [`START_CLOCK_WAIT`].
    pub(super) fn first_end(&self) -> SimTime {
        if self.deferred {
            self.span + START_CLOCK_WAIT.ns()
        } else {
            self.span
        }
    }

    /// The error of a run whose deferred start clock was never read.
    pub(super) fn check_started(&self) -> Result<(), SimError> {
        if self.deferred && self.clock.is_none() {
            return Err(SimError::Workload(format!(
                "the benchmark did not start within {} s (its start clock was never read)",
                START_CLOCK_WAIT.ns() / 1_000_000_000
            )));
        }
        Ok(())
    }
}

impl Simulator {
    /// Runs start-up op `op` (a barrier op or the start clock) of task `t` on `cpu`;
    /// `Some` when `t` stops here (runs its debt first, or blocks), `None` to go on
    /// with its next op. Out of line: the interpreter's loop runs these a few times
    /// per run.
    #[cold]
    #[inline(never)]
    pub(super) fn start_op(&mut self, t: u32, cpu: u32, op: Ins) -> Option<Next> {
        // The wake-up costs `t` owes are paid as CPU time before it blocks.
        let debt = |sim: &mut Simulator| {
            let d = std::mem::take(&mut sim.tasks[t as usize].debt_ns);
            (d > 0).then_some(Next::Run(d))
        };
        match op {
            Ins::StartClock => {
                self.tasks[t as usize].pc += 1;
                self.start_clock();
            }
            Ins::WaitBarrier => {
                if !self.barrier_open(t) {
                    if let Some(run) = debt(self) {
                        return Some(run);
                    }
                    self.tasks[t as usize].pc += 1;
                    self.join_barrier(t);
                    return Some(Next::Block);
                }
                self.tasks[t as usize].pc += 1;
            }
            Ins::PollBarrier(d) => {
                if !self.barrier_full(t) {
                    if let Some(run) = debt(self) {
                        return Some(run);
                    }
                    // usleep(): sleep, then this op again.
                    let dur = self.code.dists[d as usize].sample(&mut self.rng);
                    self.sleep_for(t, dur);
                    return Some(Next::Block);
                }
                self.tasks[t as usize].pc += 1;
            }
            Ins::ReleaseBarrier => {
                self.tasks[t as usize].pc += 1;
                self.release_barrier(t, cpu);
            }
            // The interpreter passes only the four above.
            _ => debug_assert!(false, "not a start-up op: {op:?}"),
        }
        None
    }

    fn parent_of(&self, t: u32) -> Option<u32> {
        self.start
            .parent
            .get(t as usize)
            .copied()
            .filter(|&p| p != u32::MAX)
    }

    /// `semop()` wait-for-zero of `t` on its parent's barrier would return at once:
    /// the parent has released it (or `t` has no parent, so no barrier holds it).
    fn barrier_open(&self, t: u32) -> bool {
        match self.parent_of(t) {
            Some(p) => self.start.released.contains(&p),
            None => true,
        }
    }

    /// `t` blocks at its parent's barrier, queued behind the tasks already there.
    fn join_barrier(&mut self, t: u32) {
        if let Some(p) = self.parent_of(t) {
            self.start.waiters.push((p, t));
            self.tasks[t as usize].block = Block::Barrier;
        }
    }

    /// `semctl(GETZCNT) == nprocs`: every child of `t` waits at its barrier.
    fn barrier_full(&self, t: u32) -> bool {
        let n = self.start.waiters.iter().filter(|&&(p, _)| p == t).count();
        n == self.children[t as usize].len()
    }

    /// `semop()` of −1 by `t`, running on `cpu`: its barrier opens and its waiters
    /// wake in queue order, each `try_to_wake_up()` without `WF_SYNC` (the module doc).
    fn release_barrier(&mut self, t: u32, cpu: u32) {
        if !self.start.released.contains(&t) {
            self.start.released.push(t);
        }
        let mut woken = Vec::new();
        self.start.waiters.retain(|&(p, c)| {
            if p == t {
                woken.push(c);
            }
            p != t
        });
        for c in woken {
            let task = &self.tasks[c as usize];
            if task.asleep() && task.block == Block::Barrier {
                self.wake(c, Some(t), cpu, WakeFlags::NONE);
            }
        }
    }

    /// [`Op::StartClock`]: the benchmark's start time.
    /// A completion workload's metrics and time count from here; a throughput
    /// workload's warm-up starts here, and the run's end moves with it (the warm-up and
    /// the measured window keep their lengths). Only the first read counts.
    fn start_clock(&mut self) {
        if self.start.clock.is_some() {
            return;
        }
        self.start.clock = Some(self.now);
        if self.until_exit {
            // Metrics and completion time from here.
            self.flush_accounting();
            self.metrics.reset(self.now.ns());
            if self.rec.is_some() {
                self.record_measuring();
            }
        } else if self.start.deferred {
            // The warm-up's length was kept as its end until now.
            self.warmup = self.now + self.warmup.ns();
            self.end = self.now + self.start.span.ns();
            self.queue.push(self.warmup, super::event::Event::Sample);
        }
    }
}
