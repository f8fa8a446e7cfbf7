//! Conservation invariants, checked after every event in tests (and every 4096th
//! event in debug builds).

use crate::cpumask::CpuId;

use super::pipe::PipeOp;
use super::{Block, Loc, Mode, SimTime, Simulator};

impl Simulator {
    /// Conservation: every task is in exactly one place (running on one CPU, queued on
    /// one CPU, blocked or exited), every CPU is either running one task or idle, the
    /// wake-up state (and the balance sums) match, and SMT siblings never run different cookies.
    /// The first broken one is the error: CPU by CPU (`check_cpu_tasks`,
    /// `check_cpu_sums`, `check_wake_list`, `check_cpu_idle`), then task by task
    /// (`check_tasks`), the balance sums, the live count and the pipes. Cold and out
    /// of line: it runs only when checking (tests, every 4096th event in debug builds);
    /// once split (session 37) it was small enough to inline into the event loop, where
    /// it cost the reference run 11 M instructions (0.3%) without ever being called.
    #[cold]
    #[inline(never)]
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![0u8; self.tasks.len()];
        for ci in 0..self.cpus.len() {
            self.check_cpu_tasks(ci, &mut seen)?;
            self.check_cpu_sums(ci)?;
            self.check_wake_list(ci)?;
            self.check_cpu_idle(ci)?;
        }
        let live = self.check_tasks(&seen)?;
        if !self.rq_sums_in_step() {
            return Err("the balance sums are not the runqueues' (a write missed them)".into());
        }
        if live != self.live {
            return Err(format!(
                "{live} live tasks but the count says {}",
                self.live
            ));
        }
        self.check_pipes()
    }

    /// CPU `ci`'s tasks: its current task valid and located there, no task held
    /// outside a newidle pass, `curr_is_idle` as its mode says, its queued tasks located
    /// there. Counts each task found in `seen`.
    fn check_cpu_tasks(&self, ci: usize, seen: &mut [u8]) -> Result<(), String> {
        let c = &self.cpus[ci];
        let rq = &self.state.rqs[ci];
        let running = c.mode == Mode::Running;
        if running {
            let t = c.curr as usize;
            if t >= self.tasks.len() {
                return Err(format!("CPU {ci} runs no valid task"));
            }
            if self.tasks[t].loc != Loc::Running(ci as u32) {
                return Err(format!(
                    "CPU {ci} runs task {t} whose location is {:?}",
                    self.tasks[t].loc
                ));
            }
            seen[t] += 1;
        } else if c.curr != u32::MAX {
            return Err(format!("CPU {ci} is {:?} but has a current task", c.mode));
        }
        // A newidle pass lasts until the `Resched` on its way (its end, or where a
        // task queued meanwhile cuts it), and what came in it, with interrupts
        // off, is taken at that end: nothing is held outside a pass.
        let in_pass = c.mode == Mode::NewidlePass;
        if in_pass && c.newidle_resched_at < self.now {
            return Err(format!(
                "CPU {ci} is in a newidle pass whose end ({:?}) has passed",
                c.newidle_resched_at
            ));
        }
        if !in_pass && (!c.newidle_held.is_empty() || c.newidle_curr_stopper) {
            return Err(format!(
                "CPU {ci} is {:?} but holds what came in a newidle pass",
                c.mode
            ));
        }
        // In a newidle pass's run time `rq->curr` is the task that blocked (or the
        // idle task, or the stopper).
        if rq.curr_is_idle == running && !in_pass {
            return Err(format!(
                "CPU {ci}: curr_is_idle={} but mode {:?}",
                rq.curr_is_idle, c.mode
            ));
        }
        for &t in &c.queue {
            let task = &self.tasks[t as usize];
            // A delayed task (v6.12, delayed.rs) is queued and blocked for its
            // program: it never has nothing to wait for.
            let delayed_ok = task.loc == Loc::Delayed(ci as u32) && task.block != Block::None;
            if task.loc != Loc::Queued(ci as u32) && !delayed_ok {
                return Err(format!(
                    "task {t} queued on CPU {ci} but located {:?}",
                    self.tasks[t as usize].loc
                ));
            }
            seen[t as usize] += 1;
        }
        Ok(())
    }

    /// CPU `ci`'s sums against its tasks: `util_est`, the vruntime sum, the idle hint
    /// and `nr_running`.
    fn check_cpu_sums(&self, ci: usize) -> Result<(), String> {
        let c = &self.cpus[ci];
        let rq = &self.state.rqs[ci];
        let running = c.mode == Mode::Running;
        let nr = c.queue.len() as u32 + running as u32;
        let is_delayed = |t: u32| matches!(self.tasks[t as usize].loc, Loc::Delayed(_));
        let delayed = c.queue.iter().filter(|&&t| is_delayed(t)).count() as u32;
        if c.nr_delayed != delayed {
            return Err(format!(
                "CPU {ci}: nr_delayed {} but {delayed} delayed tasks queued",
                c.nr_delayed
            ));
        }
        let est: u64 = c
            .queue
            .iter()
            .copied()
            // A delayed task's estimate left at its block (util_est_dequeue()).
            .filter(|&t| !is_delayed(t))
            .chain(running.then_some(c.curr))
            .map(|t| self.task_util_est_ewma(t))
            .sum();
        if c.util_est != est {
            return Err(format!(
                "CPU {ci}: util_est {} but its tasks' estimates sum to {est}",
                c.util_est
            ));
        }
        let members = c.queue.iter().copied().chain(running.then_some(c.curr));
        let v_sum: i64 = members.map(|t| self.tasks[t as usize].vruntime).sum();
        if c.v_sum != v_sum {
            return Err(format!(
                "CPU {ci}: vruntime sum {}, but its {nr} tasks sum to {v_sum}",
                c.v_sum
            ));
        }
        if let Some(hint) = &self.state.idle_hint {
            if hint.test_cpu(CpuId(ci as u32)) != self.state.idle_ish(CpuId(ci as u32)) {
                return Err(format!("CPU {ci}: the idle hint is stale"));
            }
        }
        if rq.nr_running != nr {
            return Err(format!(
                "CPU {ci}: nr_running {} but {} tasks",
                rq.nr_running, nr
            ));
        }
        Ok(())
    }

    /// CPU `ci`'s wake list: its wakees located there, `ttwu_pending` set, and an IPI
    /// or a schedule() on the way to empty it.
    fn check_wake_list(&self, ci: usize) -> Result<(), String> {
        let c = &self.cpus[ci];
        let rq = &self.state.rqs[ci];
        // The wake list: its wakees are off the rq, `rq->ttwu_pending` is set until
        // sched_ttwu_pending() empties it, and something empties it: a running
        // CPU's IPI is in flight (Event::WakelistIpi), as is an idle one's that
        // went idle with the list pending (an idle one woken for the list is
        // Waking, its idle loop's flush on the way; a pass takes the IPI at its
        // end).
        if let Some(&t) = c
            .wake_list
            .iter()
            .find(|&&t| self.tasks[t as usize].loc != Loc::WakeList(ci as u32))
        {
            return Err(format!(
                "CPU {ci}: task {t} on its wake list is {:?}",
                self.tasks[t as usize].loc
            ));
        }
        if !c.wake_list.is_empty() {
            if !rq.ttwu_pending {
                return Err(format!(
                    "CPU {ci}: {} wakees on its wake list, ttwu_pending clear",
                    c.wake_list.len()
                ));
            }
            let stranded = match c.mode {
                Mode::Idle | Mode::Running => c.wakelist_ipi_at < self.now,
                Mode::Waking | Mode::NewidlePass | Mode::ForceIdle => false,
            };
            if stranded {
                return Err(format!(
                    "CPU {ci} ({:?}): {} wakees on its wake list and no IPI or schedule() on the way",
                    c.mode,
                    c.wake_list.len()
                ));
            }
        }
        Ok(())
    }

    /// CPU `ci` not idle with tasks queued, and under core scheduling not running a
    /// cookie its SMT siblings' running tasks do not share.
    fn check_cpu_idle(&self, ci: usize) -> Result<(), String> {
        let c = &self.cpus[ci];
        let running = c.mode == Mode::Running;
        if c.mode == Mode::Idle && !c.queue.is_empty() {
            return Err(format!(
                "CPU {ci} idle with {} queued tasks and no wake-up pending",
                c.queue.len()
            ));
        }
        if running && self.core_sched {
            let k = self.cookie(c.curr);
            for &s in &self.siblings[ci] {
                let sc = &self.cpus[s as usize];
                if sc.mode == Mode::Running && self.cookie(sc.curr) != k {
                    return Err(format!("SMT siblings {ci} and {s} run different cookies"));
                }
            }
        }
        Ok(())
    }

    /// Every task: its averages attached where it is, found on CPUs as often as its
    /// location says (`seen`, from the CPUs' checks). Returns the live workload tasks.
    fn check_tasks(&self, seen: &[u8]) -> Result<u32, String> {
        let mut live = 0;
        for (i, t) in self.tasks.iter().enumerate() {
            // Its averages are on the CPU that holds it, or (asleep) where it last ran.
            let at = self.attached[i];
            let where_ok = match t.loc {
                Loc::Running(c) | Loc::Queued(c) | Loc::Delayed(c) => at == c,
                Loc::Blocked | Loc::WakeList(_) => at == u32::MAX || at == t.last_cpu,
                Loc::Exited => at == u32::MAX,
            };
            if !where_ok {
                return Err(format!(
                    "task {i} located {:?} has its load attached to CPU {at}",
                    t.loc
                ));
            }
            match t.loc {
                Loc::Running(_) | Loc::Queued(_) | Loc::Delayed(_) => {
                    if seen[i] != 1 {
                        return Err(format!("task {i} found {} times on CPUs", seen[i]));
                    }
                    live += !t.background as u32;
                }
                Loc::WakeList(c) => {
                    let listed = self.cpus[c as usize]
                        .wake_list
                        .iter()
                        .filter(|&&x| x == i as u32)
                        .count();
                    if seen[i] != 0 || listed != 1 {
                        return Err(format!(
                        "task {i} of CPU {c}'s wake list is listed there {listed} times, on CPUs {} times",
                        seen[i]
                    ));
                    }
                    live += !t.background as u32;
                }
                Loc::Blocked => {
                    if seen[i] != 0 {
                        return Err(format!("blocked task {i} is on a CPU"));
                    }
                    live += !t.background as u32;
                }
                Loc::Exited => {
                    if seen[i] != 0 {
                        return Err(format!("exited task {i} is on a CPU"));
                    }
                }
            }
        }
        Ok(live)
    }

    /// A pipe's reader holds a token per readable message, plus at most one for its
    /// start signal; its ring holds at most `slots` pages, one more while a read that
    /// frees one copies; its writes in flight are the writers in their copy to it.
    /// Its mutex (kernel/locking/mutex.c v6.5): a pipe op in its section is its
    /// pipe's owner's (fs/pipe.c v6.5 lines 244-388, 432-581); a task asleep on a
    /// mutex (`TASK_UNINTERRUPTIBLE`, mutex.c 637-679) is on exactly one wait list,
    /// and a waiter is inside `mutex_lock()`; the owner is neither asleep on the
    /// mutex nor exited.
    pub(super) fn check_pipes(&self) -> Result<(), String> {
        let mut copying = vec![0u32; self.pipes.len()];
        for (t, op) in self.pipe_ops.iter().enumerate() {
            let m = match *op {
                PipeOp::None => continue,
                PipeOp::Read { .. } => t as u32,
                PipeOp::Write { to, .. } => {
                    copying[to as usize] += 1;
                    to
                }
            };
            let owner = self.mutexes[m as usize].owner();
            if owner != Some(t as u32) {
                return Err(format!(
                    "task {t} is in a pipe op on task {m}'s pipe, whose mutex's owner is {owner:?}"
                ));
            }
        }
        let mut listed = vec![0u32; self.tasks.len()];
        for (m, mx) in self.mutexes.iter().enumerate() {
            for &w in &mx.wait_list {
                listed[w as usize] += 1;
                // Only `mutex_lock()` adds a waiter, and only its acquisition removes
                // it (`__mutex_add_waiter()`/`__mutex_remove_waiter()`, 204-223).
                if self.mutex_wait[w as usize].since == SimTime::MAX {
                    return Err(format!(
                        "task {w} is on task {m}'s pipe mutex wait list outside mutex_lock()"
                    ));
                }
            }
            if let Some(o) = mx.owner() {
                let task = &self.tasks[o as usize];
                if task.loc == Loc::Exited || task.asleep() && task.block == Block::Mutex {
                    return Err(format!(
                        "task {o} owns task {m}'s pipe mutex but is {:?} ({:?})",
                        task.loc, task.block
                    ));
                }
            }
        }
        for (t, task) in self.tasks.iter().enumerate() {
            if task.asleep() && task.block == Block::Mutex && listed[t] != 1 {
                return Err(format!(
                    "task {t} sleeps on a pipe mutex but is on {} wait lists",
                    listed[t]
                ));
            }
        }
        for (t, p) in self.pipes.iter().enumerate() {
            let Some(p) = p else { continue };
            let (tokens, len) = (self.tasks[t].tokens, p.len());
            if tokens < len || tokens > len + 1 {
                return Err(format!(
                    "task {t}'s pipe holds {len} readable messages but it has {tokens} tokens"
                ));
            }
            if p.pages_in_use() > p.slots() + 1 {
                return Err(format!(
                    "task {t}'s pipe uses {} pages of {}",
                    p.pages_in_use(),
                    p.slots()
                ));
            }
            if p.writes_in_flight() != copying[t] {
                return Err(format!(
                    "task {t}'s pipe has {} writes in flight but {} writers copy to it",
                    p.writes_in_flight(),
                    copying[t]
                ));
            }
        }
        Ok(())
    }
}
