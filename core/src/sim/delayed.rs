//! v6.12's delayed dequeue: DELAY_DEQUEUE and DELAY_ZERO, both on by default
//! (kernel/sched/features.h v6.12.19 58-59; 152e11f6df29 "sched/fair: Implement
//! delayed dequeue", v6.12-rc1). A task that blocks while it is not eligible keeps
//! its place on the runqueue, to burn off its negative lag competing, until its pick
//! or its wake-up.
//!
//! ```text
//!   delays_dequeue()          dequeue_entity(DEQUEUE_SLEEP): !entity_eligible() →
//!                             update_load_avg(cfs_rq, se, 0), set_delayed(), return
//!                             false (fair.c v6.12.19 5534-5560); block_task() skips
//!                             __block_task(): p->on_rq stays (core.c 2090-2094)
//!   delay_dequeue_curr()      dequeue_task_fair()'s util_est and that early return
//!   finish_delayed_dequeue()  pick_next_entity(): a delayed pick is dequeued
//!                             (dequeue_entities(DEQUEUE_SLEEP | DEQUEUE_DELAYED),
//!                             finish_delayed_dequeue_entity(): DELAY_ZERO clips a
//!                             positive vlag to 0) and the pick runs again
//!                             (fair.c 5676-5690, 5526-5531, 7150-7248)
//!   wake_delayed()            try_to_wake_up() → ttwu_runnable() (core.c 3737-3761):
//!                             no select_task_rq(), no wake list, no migration;
//!                             enqueue_task(ENQUEUE_DELAYED) → util_est_enqueue(),
//!                             requeue_delayed_entity() (fair.c 6983-7008; DELAY_ZERO:
//!                             update_entity_lag(), a positive vlag → 0 and
//!                             place_entity() again), then wakeup_preempt()
//! ```
//!
//! The rest follows from a delayed task staying in `Cpu::queue` and `nr_running`: the
//! wake-up path's `idle_cpu()` and `nr_running` see it, as `rq->nr_running` does; the
//! tick's `update_deadline()` reschedules for it (`cfs_rq->nr_running > 1`); the
//! balancer counts it and may move it: `can_migrate_task()` (fair.c v6.12.19
//! 9199-9290) has no `sched_delayed` test, `detach_task()`'s full dequeue keeps
//! `sched_delayed`, util_est is neither taken off nor added (`dequeue_task_fair()` /
//! `enqueue_task_fair()`, 7259, 7032: a delayed task migrating), and it arrives
//! delayed (`balance/attach.rs`). `task_dead_fair()`'s finish of a delayed dequeue
//! (8761-8777) has no twin: a task exits only while running, with `TASK_DEAD`, a
//! special state (`DEQUEUE_SPECIAL`, core.c 6533-6534), so never delayed.
//!
//! `h_nr_delayed` (fair.c v6.12.19 5498, 5520, 7049-7097, 7160-7226): the CPU's
//! `load_avg` counts a delayed task (level `load.weight`), its `runnable_avg` does not
//! (level `h_nr_running - h_nr_delayed`, pelt.c 320-324), so the balancer's and fork
//! placement's `group_runnable` (`cpu_runnable()`, 7341-7344) leaves it out:
//! `Cpu::nr_delayed` counts the delayed tasks queued, and `Cpu::delayed`, the PELT
//! average of `1024 × nr_delayed`, is what `cpu_runnable()` lacks of `cpu_load()`.
//!
//! Simplified: all tasks are nice 0, and a task's own runnable average is its load
//! average (the kernel's `se_runnable()`, sched.h 914-924, is 0 while delayed), so a
//! task that attaches, detaches or is removed moves its load average in both CPU
//! signals, and `util_est_update()`'s `task_runnable()` is its load; the throttling
//! paths' `h_nr_delayed` (6008-6153) have no twin (no CFS bandwidth). The recorder
//! shows a delayed task as queued and its requeueing wake-up as a `Wake` record of
//! path `WakePath::Requeue` (numbered as every wake-up; nothing to capture);
//! `Metrics::wakeups` counts it, as `ttwu_stat()` does.

use crate::cpumask::CpuId;

use super::{Loc, Mode, Simulator};

impl Simulator {
    /// `dequeue_entity()`'s test for `cpu`'s running task as it blocks (fair.c
    /// v6.12.19 5544-5555: `sched_feat(DELAY_DEQUEUE) && delay &&
    /// !entity_eligible(cfs_rq, se)`; `delay` is `DEQUEUE_SLEEP` without
    /// `DEQUEUE_SPECIAL`, which only a task's exit has here). `entity_eligible()` of
    /// the current entity counts it in `avg_vruntime()`, as `Cpu::v_sum` does.
    pub(super) fn delays_dequeue(&mut self, cpu: u32, loc: Loc) -> bool {
        if !self.delay_dequeue || loc != Loc::Blocked {
            return false;
        }
        // dequeue_entity(): update_curr() first (5537).
        self.update_curr(cpu);
        let v = self.tasks[self.cpus[cpu as usize].curr as usize].vruntime;
        !self.vruntime_eligible(cpu, v)
    }

    /// `dequeue_task_fair(DEQUEUE_SLEEP)` of `cpu`'s running task that
    /// [`Simulator::delays_dequeue`] delays (fair.c v6.12.19 7255-7269): util_est
    /// leaves the CPU and learns the activation (`util_est_dequeue()`,
    /// `util_est_update()`), then `dequeue_entity()` only updates the averages
    /// (`update_load_avg(cfs_rq, se, 0)`: no `UPDATE_TG`) and `set_delayed()`. The task
    /// stays in `nr_running`, `v_sum` and the load; no `update_entity_lag()`.
    /// `put_prev_entity()` puts it back in the tree (5699-5712), as here on the queue.
    pub(super) fn delay_dequeue_curr(&mut self, cpu: u32) {
        let t = self.cpus[cpu as usize].curr;
        let changed = self.util_est_dequeue(t, cpu);
        self.update_curr(cpu);
        self.update_cpu_pelt_publishing(cpu, changed);
        self.tg_cfs_rq_update(t, cpu);
        let now = self.now;
        let task = &mut self.tasks[t as usize];
        task.load.update(now.ns(), 1024);
        task.util.update(now.ns(), 1024);
        let (util, load) = (task.util.avg(), task.load.avg());
        self.util_est_update_to(t, cpu, util, load);
        let task = &mut self.tasks[t as usize];
        task.loc = Loc::Delayed(cpu);
        task.last_ran = now;
        task.remaining_ns = 0;
        let c = &mut self.cpus[cpu as usize];
        c.curr = u32::MAX;
        c.mode = Mode::Waking; // transient: schedule() follows
        c.descheduling = (t, super::SimTime::MAX);
        c.burst_gen = c.burst_gen.wrapping_add(1);
        c.queue.push(t);
        // set_delayed(): h_nr_delayed++ (fair.c v6.12.19 5498), after the update.
        c.nr_delayed += 1;
        if self.measuring && !self.tasks[t as usize].background {
            self.metrics.delayed_dequeues += 1;
        }
    }

    /// `pick_next_entity()` picked delayed task `t`, at `queue[i]` of `cpu`: its
    /// `dequeue_entities(rq, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED)` (fair.c v6.12.19
    /// 5681-5687, 7150-7248): `dequeue_entity()` with `update_load_avg(UPDATE_TG)`,
    /// `update_entity_lag()`, the dequeue, `update_cfs_group()`, then
    /// `finish_delayed_dequeue_entity()` (5526-5531): DELAY_ZERO clips a positive
    /// `vlag` to 0; no util_est (the delaying dequeue did it); `__block_task()`. The
    /// caller picks again.
    pub(super) fn finish_delayed_dequeue(&mut self, cpu: u32, i: usize) {
        let t = self.cpus[cpu as usize].queue[i];
        debug_assert_eq!(self.tasks[t as usize].loc, Loc::Delayed(cpu));
        self.update_curr(cpu);
        self.update_cpu_pelt(cpu);
        self.tg_dequeue(t, cpu);
        let avg = self.avg_vruntime(cpu);
        let lim = self.lag_limit();
        let now = self.now;
        let task = &mut self.tasks[t as usize];
        // update_entity_lag(), then DELAY_ZERO.
        task.vlag = (avg - task.vruntime).clamp(-lim, lim).min(0);
        // Queued, not running, since it blocked: on_rq for the load.
        task.load.update(now.ns(), 1024);
        task.util.update(now.ns(), 0);
        task.loc = Loc::Blocked;
        let v = task.vruntime;
        let c = &mut self.cpus[cpu as usize];
        c.queue.swap_remove(i);
        c.v_sum -= v;
        // dequeue_entities(): h_nr_delayed-- with h_nr_running-- (7187): the
        // runnable level stays.
        c.nr_delayed -= 1;
        self.update_rq(cpu, |rq| rq.nr_running -= 1);
        if self.state.rqs[cpu as usize].nr_running == 0 {
            self.cpus[cpu as usize].base_v = avg;
        }
    }

    /// `try_to_wake_up()` of delayed task `p` by `waker` on `cpu` (`None`: interrupt
    /// context): `ttwu_runnable()` (core.c v6.12.19 3737-3761) under `p`'s rq lock
    /// (`__task_rq_lock()`, the waker's wait and hold when that rq is another CPU's),
    /// `enqueue_task(ENQUEUE_DELAYED)`: `util_est_enqueue()` and
    /// `requeue_delayed_entity()` (fair.c 7032-7038, 6983-7008): DELAY_ZERO's
    /// `update_entity_lag()` (no `update_curr()` first: `avg_vruntime()` reads the
    /// current task as last charged) and, for a positive `vlag`, `vlag = 0` and
    /// `place_entity()` out of the sum; then `update_load_avg(cfs_rq, se, 0)`,
    /// `clear_delayed()`; `wakeup_preempt()` (it is never the running task here; the
    /// wake flags matter there only for `WF_FORK`'s buddy, not modelled), and
    /// `ttwu_do_wakeup()` / `ttwu_stat()`: a wake-up counted on its own CPU, with no
    /// CPUs probed (`Metrics::cpus_probed` counts selections).
    pub(super) fn wake_delayed(&mut self, p: u32, waker: Option<u32>, cpu: u32) {
        let Loc::Delayed(rq) = self.tasks[p as usize].loc else {
            unreachable!("wake_delayed() of a task not delayed");
        };
        self.tasks[p as usize].block = super::Block::None;
        let mut lock_ns = 0;
        if rq != cpu {
            let (wait, hold) = self.take_remote_lock(cpu, rq);
            lock_ns = wait + hold;
        }
        let changed = self.util_est_enqueue(p, rq);
        self.update_cpu_pelt_publishing(rq, changed);
        let avg = self.avg_vruntime(rq);
        let lim = self.lag_limit();
        let slice = self.slice_ns;
        let now = self.now;
        let v = self.tasks[p as usize].vruntime;
        let vlag = (avg - v).clamp(-lim, lim);
        self.tasks[p as usize].vlag = vlag;
        if vlag > 0 {
            // nr_running--, __dequeue_entity(), place_entity() with no lag: at the
            // average of the others (avg_vruntime() of an empty cfs_rq: base_v).
            let c = &mut self.cpus[rq as usize];
            let n = self.state.rqs[rq as usize].nr_running as i64 - 1;
            let rest = c.v_sum - v;
            let placed = if n > 0 { rest.div_euclid(n) } else { c.base_v };
            c.v_sum = rest + placed;
            let task = &mut self.tasks[p as usize];
            task.vlag = 0;
            task.vruntime = placed;
            task.deadline = placed + slice;
        }
        self.tg_cfs_rq_update(p, rq);
        // clear_delayed(): h_nr_delayed-- (fair.c 5520), after the update.
        self.cpus[rq as usize].nr_delayed -= 1;
        let task = &mut self.tasks[p as usize];
        task.load.update(now.ns(), 1024);
        task.util.update(now.ns(), 0);
        task.loc = Loc::Queued(rq);
        if !task.background {
            task.wake_at = now;
        }
        // ttwu_do_wakeup(): the waker's data, as ttwu_do_activate() charges it.
        let src = if waker.is_some() { cpu } else { rq };
        let dist = self.cost.distance(CpuId(src), CpuId(rq));
        if self.rec.is_some() {
            self.record_requeue(p, waker, cpu, rq, dist);
        }
        let data_ns = self.cost.wake_data_ns_at(CpuId(src), CpuId(rq), dist);
        self.tasks[p as usize].debt_ns += data_ns;
        self.mutex_wait[p as usize].woken_from = if waker.is_some() {
            cpu
        } else {
            super::pipe_mutex::NONE
        };
        if self.measuring && !self.tasks[p as usize].background {
            let m = &mut self.metrics;
            m.wakeups += 1;
            m.wake_delayed += 1;
            m.placement[dist as usize] += 1;
        }
        self.charge_waker(waker, cpu, lock_ns);
        // wakeup_preempt(rq, p, wake_flags): as attach_task()'s, from `cpu`.
        let mode = self.cpus[rq as usize].mode;
        let q = super::ttwu::Queued {
            need_ipi: rq != cpu && self.idle_resched_needs_ipi(rq, mode),
            delay_ns: lock_ns,
            ..Default::default()
        };
        self.kick_target(p, waker, cpu, rq, mode, q);
    }

    /// `pick_task_fair()` (fair.c v6.12.19 8920-8945) as core scheduling's
    /// core-wide pick calls it on this CPU and on an idle sibling (`pick_task()`,
    /// core.c): `pick_next_entity()` dequeues a delayed pick and the loop picks
    /// again (`goto again`), until a task that is not delayed or none. The
    /// cookie-matched pick that may follow is `schedule()`'s, which does the same.
    pub(super) fn pick_undelayed(&mut self, cpu: u32) -> Option<usize> {
        loop {
            let i = self.pick_next_with(cpu, None)?;
            let t = self.cpus[cpu as usize].queue[i];
            if !matches!(self.tasks[t as usize].loc, Loc::Delayed(_)) {
                return Some(i);
            }
            self.finish_delayed_dequeue(cpu, i);
        }
    }
}
