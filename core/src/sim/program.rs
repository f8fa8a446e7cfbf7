//! Running the workload's programs: each task's [`Op`]s compiled into a dense
//! instruction array, and the interpreter that runs a task until it has CPU work,
//! blocks or exits. (No kernel twin: this is the tasks' own code.)

use std::ops::ControlFlow;

use crate::wakeup::{TaskId, WakeFlags};
use crate::workload::{Dist, Op, MAX_REPEAT};

use super::event::Event;
use super::pipe::{PipeOp, View};
use super::{Block, SimError, Simulator};

/// Upper bound on ops interpreted for one task without consuming time.
const MAX_OPS_PER_STEP: u32 = 10_000;

/// A program op as the simulator runs it ([`Op`] compiled): 12 bytes instead of 32,
/// with distributions and repeat counts in side tables and jump targets absolute in
/// the one code array all tasks share, so a task's next op is one load from a short,
/// dense array (the interpreter's op fetch was the run's most frequent L1 miss).
#[derive(Clone, Copy, Debug)]
pub(super) enum Ins {
    /// Index into [`Code::dists`].
    Run(u32),
    Send(u32),
    Wait,
    /// Index into [`Code::dists`].
    Sleep(u32),
    Count(u32),
    /// `times`: index into [`Code::times`].
    Repeat {
        to: u32,
        times: u32,
    },
    Jump(u32),
    Fork,
    SendChildren,
    StartClock,
    WaitBarrier,
    /// Index into [`Code::dists`].
    PollBarrier(u32),
    ReleaseBarrier,
    Exit,
}

/// Every task's program, compiled into [`Ins`].
#[derive(Debug, Default)]
pub(super) struct Code {
    pub(super) ins: Vec<Ins>,
    /// The distinct distributions (workloads give every task the same few).
    pub(super) dists: Vec<Dist>,
    times: Vec<u64>,
}

impl Code {
    /// Appends `prog`; returns the index of its first op.
    pub(super) fn add(&mut self, prog: &[Op]) -> u32 {
        let base = self.ins.len() as u32;
        for &op in prog {
            let ins = match op {
                Op::Run(d) => Ins::Run(self.dist(d)),
                Op::Send { to } => Ins::Send(to),
                Op::Wait => Ins::Wait,
                Op::Sleep(d) => Ins::Sleep(self.dist(d)),
                Op::Count(n) => Ins::Count(n),
                Op::Repeat { to, times } => {
                    self.times.push(times);
                    Ins::Repeat {
                        to: base + to as u32,
                        times: (self.times.len() - 1) as u32,
                    }
                }
                Op::Jump { to } => Ins::Jump(base + to as u32),
                Op::Fork => Ins::Fork,
                Op::SendChildren => Ins::SendChildren,
                Op::StartClock => Ins::StartClock,
                Op::WaitBarrier => Ins::WaitBarrier,
                Op::PollBarrier(d) => Ins::PollBarrier(self.dist(d)),
                Op::ReleaseBarrier => Ins::ReleaseBarrier,
                Op::Exit => Ins::Exit,
            };
            self.ins.push(ins);
        }
        base
    }

    /// The index of `d` in [`Code::dists`], added if new.
    fn dist(&mut self, d: Dist) -> u32 {
        match self.dists.iter().position(|&x| x == d) {
            Some(i) => i as u32,
            None => {
                self.dists.push(d);
                (self.dists.len() - 1) as u32
            }
        }
    }
}

/// What a task does after interpreting its program.
pub(super) enum Next {
    Run(u64),
    Block,
    Exit,
}

impl Simulator {
    /// Interprets task `t`'s program on `cpu` until it has CPU work, blocks or exits.
    pub(super) fn advance(&mut self, t: u32, cpu: u32) -> Next {
        // The burst that just ended was a pipe syscall's work: its end comes first,
        // then the cost of the wake-ups it made. pipe_read() and pipe_write() wake
        // before they return (fs/pipe.c v6.5 lines 390-391, 596-599), so the waker
        // pays for them before its next syscall's check, not inside that syscall.
        if self.any_pipe && self.pipe_ops[t as usize] != PipeOp::None {
            self.end_pipe_op(t, cpu);
            if let Some(ns) = self.take_debt(t) {
                return Next::Run(ns);
            }
        }
        for _ in 0..MAX_OPS_PER_STEP {
            let task = &mut self.tasks[t as usize];
            let op = self.code.ins[task.pc as usize];
            match op {
                Ins::Run(d) => {
                    // Saturating: a sample is at most 36.7 × Dist::MAX_NS (validated
                    // programs), so this never saturates; if it did, the burst would
                    // end at the event queue's horizon and never fire, which is what
                    // so long a burst means in a run of at most 4 hours.
                    let ns = self.code.dists[d as usize]
                        .sample(&mut self.rng)
                        .saturating_add(std::mem::take(&mut task.debt_ns));
                    task.pc += 1;
                    if ns > 0 {
                        return Next::Run(ns);
                    }
                    // A pipe syscall whose work took no time ends here, and its
                    // wake-ups are paid for before the next op (as above).
                    self.end_pipe_op(t, cpu);
                    if let Some(ns) = self.take_debt(t) {
                        return Next::Run(ns);
                    }
                }
                Ins::Send(to) => {
                    if let ControlFlow::Break(next) = self.op_send(t, to, cpu) {
                        return next;
                    }
                }
                Ins::Wait => {
                    if let ControlFlow::Break(next) = self.op_wait(t, cpu) {
                        return next;
                    }
                }
                Ins::Sleep(d) => {
                    if let Some(ns) = self.take_debt(t) {
                        return Next::Run(ns);
                    }
                    let dur = self.code.dists[d as usize].sample(&mut self.rng);
                    self.tasks[t as usize].pc += 1;
                    self.sleep_for(t, dur);
                    return Next::Block;
                }
                Ins::Count(n) => {
                    task.pc += 1;
                    if self.measuring {
                        self.metrics.units += n as u64;
                    }
                }
                Ins::Repeat { to, times } => {
                    task.iters += 1;
                    if (task.iters as u64) < self.code.times[times as usize] {
                        task.pc = to;
                    } else {
                        task.iters = 0;
                        task.pc += 1;
                    }
                }
                Ins::Jump(to) => task.pc = to,
                Ins::Fork => {
                    task.pc += 1;
                    if !self.fork_next(t, cpu) {
                        self.tasks[t as usize].block = Block::Wait;
                        return Next::Block;
                    }
                }
                Ins::SendChildren => {
                    task.pc += 1;
                    // Every child polls the one pipe: each gets the byte, none blocks
                    // the writer (a child with a full mailbox already has its wake-up).
                    let n = self.children[t as usize].len();
                    for k in 0..n {
                        let to = self.children[t as usize][k];
                        let r = &mut self.tasks[to as usize];
                        if r.block == Block::Unborn || r.tokens >= r.cap {
                            continue;
                        }
                        r.tokens += 1;
                        if r.asleep() && r.block == Block::Wait {
                            self.wake(to, Some(t), cpu, WakeFlags::SYNC);
                        }
                    }
                }
                Ins::StartClock | Ins::WaitBarrier | Ins::PollBarrier(_) | Ins::ReleaseBarrier => {
                    // Start-up only (`start.rs`): kept out of this loop's body.
                    if let Some(next) = self.start_op(t, cpu, op) {
                        return next;
                    }
                }
                Ins::Exit => {
                    if let Some(ns) = self.take_debt(t) {
                        return Next::Run(ns);
                    }
                    return Next::Exit;
                }
            }
        }
        // Unreachable for validated programs (every loop holds a Run, Wait or Sleep);
        // let time advance rather than spin.
        Next::Run(1_000)
    }

    /// [`Ins::Send`] of `t` to task `to` on `cpu`: a pipe's write (`pipe_write()`,
    /// fs/pipe.c v6.5 lines 416-607: the mutex, a merge into the head page or a new
    /// page, or a wait on a full pipe), or a token into a socket's or futex's mailbox
    /// and the wake-up of its reader. `Break` is what [`Simulator::advance`] returns;
    /// `Continue`, the next op.
    #[inline]
    fn op_send(&mut self, t: u32, to: u32, cpu: u32) -> ControlFlow<Next> {
        let waited = self.write_waited[t as usize];
        // A pipe's write takes its mutex first (`__pipe_lock()`, fs/pipe.c
        // v6.5 line 432; a woken writer at 574 once `wait_event()`'s
        // lockless `pipe_writable()` holds, 406-414, 573). A woken writer
        // that finds it false waits again without the lock.
        let lock = self
            .pipe(to)
            .is_some_and(|p| !(waited && !self.in_mutex_lock(t, to) && p.full(View::Lockless)));
        if lock {
            if let Some(next) = self.pipe_mutex_lock(t, to, cpu) {
                return ControlFlow::Break(next);
            }
        }
        // A pipe's write (pipe_write(), fs/pipe.c v6.5 lines 455-560): merge
        // into the head page if the message fits (lines 455-477, tried only
        // on entry: a writer back from waiting goes straight to the loop),
        // else a new page if the ring is not full (line 490), else wait.
        // After a wait the writer rechecks `pipe_writable()` (page count)
        // in `wait_event_interruptible_exclusive()`'s loop (line 573).
        // A writer's check is under the mutex, after any read in progress
        // (line 490); a writer back from waiting passed the lockless
        // `pipe_writable()` first (lines 406-414, 573), where a read that
        // ends the tail page frees it only after its copy (`pipe::View`).
        let (full, merge) = match self.pipe(to) {
            Some(p) => {
                let merge = !waited && p.can_merge();
                let full = p.full(View::Locked) || waited && p.full(View::Lockless);
                (!merge && full, merge)
            }
            None => {
                let r = &self.tasks[to as usize];
                (r.tokens >= r.cap, false)
            }
        };
        if full {
            if self.any_pipe && self.mutexes[to as usize].owner() == Some(t) {
                // The full pipe's unlock before the wait (line 569).
                self.pipe_mutex_unlock(t, to, cpu);
            }
            if self.tasks[to as usize].drop_when_full {
                self.tasks[t as usize].pc += 1;
                return ControlFlow::Continue(());
            }
            if let Some(ns) = self.take_debt(t) {
                return ControlFlow::Break(Next::Run(ns));
            }
            // A pipe's writer that must wait first wakes the reader if the
            // pipe was empty (fs/pipe.c v6.5 lines 569-571): a write of one
            // page or less waits only on a full pipe, so never here.
            // It queues at the tail of `wr_wait`
            // (`prepare_to_wait_event()` adds an exclusive waiter there,
            // kernel/sched/wait.c v6.5 lines 305-333), again after a futile
            // wake-up: `autoremove_wake_function()` took it off the queue.
            if waited && self.pipe(to).is_some() {
                self.futile_writer_wakeups += 1;
            }
            self.writers[to as usize].push(t);
            self.tasks[t as usize].block = Block::SendFull;
            self.write_waited[t as usize] = true;
            return ControlFlow::Break(Next::Block);
        }
        self.tasks[t as usize].pc += 1;
        if let Some(p) = self.pipe_mut(to) {
            // The room is taken (a merge's `buf->len` or a new page's
            // `pipe->head`); the copy is the `Run` that follows, and the
            // message is readable and the reader woken after it
            // (`Simulator::pipe_write_end()`).
            let reads = p.reads;
            let page = p.write(merge);
            let op = PipeOp::Write {
                to,
                waited,
                page,
                reads,
            };
            self.begin_pipe_op(t, op, cpu);
            return ControlFlow::Continue(());
        }
        self.tasks[to as usize].tokens += 1;
        self.write_waited[t as usize] = false;
        let r = &self.tasks[to as usize];
        if r.asleep() && r.block == Block::Wait {
            // A socket's reader: `wake_up_interruptible_sync_poll()`
            // (sock_def_readable()), WF_SYNC. A futex waiter
            // (schbench's fpost(): FUTEX_WAKE_PRIVATE): futex_wake() queues
            // it and calls wake_up_q() (kernel/futex/waitwake.c v6.8 lines
            // 155-199), whose wake_up_process() is try_to_wake_up(p,
            // TASK_NORMAL, 0) (core.c lines 1017-1033, 4507-4510): no WF_SYNC.
            let flags = if r.drop_when_full {
                WakeFlags::NONE
            } else {
                WakeFlags::SYNC
            };
            self.wake(to, Some(t), cpu, flags);
        }
        ControlFlow::Continue(())
    }

    /// [`Ins::Wait`] of `t` on `cpu`: a pipe's read (`pipe_read()`, fs/pipe.c v6.5
    /// lines 230-398: the mutex, a message taken, or a wait on an empty pipe), or a
    /// token taken from a socket's or futex's mailbox, waking the senders waiting for
    /// room. `Break` and `Continue` as [`Simulator::op_send`]'s.
    #[inline]
    fn op_wait(&mut self, t: u32, cpu: u32) -> ControlFlow<Next> {
        // A pipe's read takes its mutex first (`__pipe_lock()`, fs/pipe.c
        // v6.5 line 244; after a wait, 382): for a message, or to find the
        // pipe empty. (A token beyond the pipe's messages is the start
        // signal, another fd; an empty check on an idle mutex takes and
        // drops it at one instant, with nothing to model.) A task inside
        // `mutex_lock()` (asleep `TASK_UNINTERRUPTIBLE`, or handed the
        // lock) finishes it whatever its mailbox holds: it is in
        // pipe_read(), and a start signal can be taken only after it.
        let tokens = self.tasks[t as usize].tokens;
        let lock = self.pipe(t).is_some_and(|p| {
            let message = tokens > 0 && p.len() >= tokens;
            message || self.in_mutex_lock(t, t) || tokens == 0 && !self.mutex_idle(t)
        });
        if lock {
            if let Some(next) = self.pipe_mutex_lock(t, t, cpu) {
                return ControlFlow::Break(next);
            }
        }
        let task = &mut self.tasks[t as usize];
        if task.tokens > 0 {
            let was_full = task.tokens >= task.cap;
            task.tokens -= 1;
            task.pc += 1;
            // A pipe's reader's mailbox also takes its start signal
            // (hackbench's `wakefd`, `Op::SendChildren`), which comes before
            // any message: a token beyond the pipe's messages is that.
            let pipe = (if self.any_pipe {
                self.pipes[t as usize].as_mut()
            } else {
                None
            })
            .filter(|p| p.len() > task.tokens);
            if let Some(p) = pipe {
                // pipe_read() (fs/pipe.c v6.5 line 254): `was_full` counts
                // pages, taken at the read's start; the copy is the `Run`
                // that follows, and after it the page is freed if this read
                // ended it and a writer woken if `was_full`
                // (`Simulator::pipe_read_end()`).
                let was_full = p.full(View::Locked);
                p.begin_read();
                self.begin_pipe_op(t, PipeOp::Read { was_full }, cpu);
            } else if self.any_pipe && self.mutexes[t as usize].owner() == Some(t) {
                // The lock taken for no message (the token is the start
                // signal): the empty pipe's unlock (line 350), before it.
                self.pipe_mutex_unlock(t, t, cpu);
            } else if was_full && self.pipe(t).is_none() && !self.writers[t as usize].is_empty() {
                // A socket's reader: every sender waiting for room
                // (`sock_wait_for_wmem()` waits non-exclusively,
                // net/core/sock.c v6.5 line 2745).
                let ws = std::mem::take(&mut self.writers[t as usize]);
                for w in ws {
                    if self.tasks[w as usize].asleep()
                        && self.tasks[w as usize].block == Block::SendFull
                    {
                        self.wake(w, Some(t), cpu, WakeFlags::SYNC);
                    }
                }
            }
        } else {
            if self.any_pipe && self.mutexes[t as usize].owner() == Some(t) {
                // The empty pipe's unlock before the wait (line 350).
                self.pipe_mutex_unlock(t, t, cpu);
            }
            if let Some(ns) = self.take_debt(t) {
                return ControlFlow::Break(Next::Run(ns));
            }
            self.tasks[t as usize].block = Block::Wait;
            return ControlFlow::Break(Next::Block);
        }
        ControlFlow::Continue(())
    }

    /// Task `t`'s mailbox's pipe, if it is one. A run without pipes (sockets, futexes)
    /// reads no per-task pipe table: `any_pipe` says so once.
    #[inline]
    pub(super) fn pipe(&self, t: u32) -> Option<&super::pipe::Pipe> {
        if self.any_pipe {
            self.pipes[t as usize].as_ref()
        } else {
            None
        }
    }

    /// [`Simulator::pipe`], to change it.
    #[inline]
    fn pipe_mut(&mut self, t: u32) -> Option<&mut super::pipe::Pipe> {
        if self.any_pipe {
            self.pipes[t as usize].as_mut()
        } else {
            None
        }
    }

    /// Blocks `t` in a timed sleep of `dur` (an hrtimer wakes it, `on_timer()`).
    pub(super) fn sleep_for(&mut self, t: u32, dur: u64) {
        let task = &mut self.tasks[t as usize];
        task.timer_gen = task.timer_gen.wrapping_add(1);
        task.block = Block::Sleep;
        let g = task.timer_gen;
        self.queue
            .push_timer(self.now + dur, Event::Timer { task: t, gen: g });
        self.note_timer(t, self.now + dur);
    }

    /// The wake-up costs `t` still owes, to be paid as CPU time before it blocks or
    /// exits. Inlined: out of line it cost the reference run 6 instructions per event.
    #[inline(always)]
    pub(super) fn take_debt(&mut self, t: u32) -> Option<u64> {
        let d = std::mem::take(&mut self.tasks[t as usize].debt_ns);
        (d > 0).then_some(d)
    }
}

/// Every task program must make progress: targets exist, loops hold an op that takes
/// time or blocks, and the program ends in a jump or exit.
pub(super) fn validate_program(task: u32, prog: &[Op], n_tasks: u32) -> Result<(), SimError> {
    if prog.is_empty() {
        return Err(SimError::Workload(format!(
            "task {task} has an empty program"
        )));
    }
    if prog.len() > u16::MAX as usize {
        return Err(SimError::Workload(format!(
            "task {task}'s program is too long"
        )));
    }
    for (i, op) in prog.iter().enumerate() {
        match *op {
            Op::Run(d) | Op::Sleep(d) | Op::PollBarrier(d) if d.check().is_err() => {
                let why = d.check().unwrap_err();
                return Err(SimError::Workload(format!("task {task}, op {i}: {why}")));
            }
            Op::Send { to } if to >= n_tasks => {
                return Err(SimError::BadTarget {
                    task: TaskId(task),
                    to: TaskId(to),
                })
            }
            Op::Repeat { times, .. } if times > MAX_REPEAT as u64 => {
                return Err(SimError::Workload(format!(
                    "task {task}: the loop at op {i} repeats {times} times; a loop may repeat at \
                     most {MAX_REPEAT} times"
                )));
            }
            Op::Repeat { to, .. } | Op::Jump { to }
                if to as usize > i
                    || !prog[to as usize..i]
                        .iter()
                        .any(|o| matches!(o, Op::Run(_) | Op::Wait | Op::Sleep(_))) =>
            {
                return Err(SimError::Workload(format!(
                    "task {task}: the loop at op {i} has no run, wait or sleep"
                )));
            }
            _ => {}
        }
    }
    if !matches!(prog.last(), Some(Op::Exit | Op::Jump { .. })) {
        return Err(SimError::Workload(format!(
            "task {task}'s program must end with exit or a jump"
        )));
    }
    Ok(())
}
