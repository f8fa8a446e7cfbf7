//! The fair class (kernel/sched/fair.c): runtime accounting, EEVDF (6.6 on) or CFS
//! placement on enqueue, lag on dequeue, the pick, wake-up preemption and the
//! tick's slice check.
//!
//! ```text
//!   enqueue()       enqueue_task_fair() + place_entity(): v = avg_vruntime - vlag
//!   dequeue_curr()  dequeue_task_fair(): vlag = avg_vruntime - v (clamped)
//!   put_prev()      put_prev_task_fair(): back on the queue, burst left kept
//!   pick_next()     pick_next_task_fair(): earliest eligible deadline (EEVDF),
//!                   least vruntime (CFS)
//!   should_preempt  check_preempt_wakeup_fair()
//!   task_tick_fair  update_deadline() / check_preempt_tick()
//! ```
//!
//! All tasks are nice 0, so a runqueue's `avg_vruntime` is its vruntime sum over
//! `nr_running` (see [`super::Cpu::v_sum`]).

use super::pelt::Pelt;
use super::{Loc, Mode, SimTime, Simulator};
use crate::release::Release;

impl Simulator {
    /// `update_curr()`: charges the running task for the time since the last update.
    #[inline]
    pub(super) fn update_curr(&mut self, cpu: u32) {
        let now = self.now;
        let c = &mut self.cpus[cpu as usize];
        if c.mode != Mode::Running {
            return;
        }
        let d = now.since(c.last_update);
        c.last_update = now;
        if d == 0 {
            return;
        }
        let t = c.curr as usize;
        c.v_sum += d as i64;
        self.tasks[t].vruntime += d as i64;
        if self.measuring {
            self.metrics.busy_ns[cpu as usize] += d;
        }
    }

    /// `update_cfs_rq_load_avg()`: takes off what departed tasks left in
    /// `cfs_rq->removed`, updates the CPU's PELT signals to now with the level it had
    /// so far (`__update_load_avg_cfs_rq()`: the runnable weight, and whether a task
    /// runs), and publishes them into the wake-up state.
    #[inline]
    pub(super) fn update_cpu_pelt(&mut self, cpu: u32) {
        self.update_cpu_pelt_publishing(cpu, false);
    }

    /// [`Simulator::update_cpu_pelt`] that publishes even when nothing decayed if
    /// `changed` (the CPU's `util_est` moved just before).
    #[inline]
    pub(super) fn update_cpu_pelt_publishing(&mut self, cpu: u32, changed: bool) {
        let now = self.now.ns();
        let removed = self.apply_removed(cpu);
        let c = &mut self.cpus[cpu as usize];
        if c.util.last_ns == now && c.load.last_ns == now {
            // Already updated at this instant (and published): nothing decays.
            if removed || changed {
                self.publish_cpu_pelt(cpu);
            }
            return;
        }
        let running = if c.mode == Mode::Running { 1024 } else { 0 };
        let nr = self.state.rqs[cpu as usize].nr_running as u64;
        Pelt::update_pair(&mut c.util, &mut c.load, now, running, 1024 * nr);
        if self.delay_dequeue {
            // __update_load_avg_cfs_rq()'s runnable level, h_nr_running -
            // h_nr_delayed (pelt.c v6.12.19 320-324), kept as its difference.
            c.delayed.update(now, 1024 * c.nr_delayed as u64);
        }
        self.publish_cpu_pelt(cpu);
    }

    /// `avg_vruntime()`: the mean vruntime of the queued tasks and the current one.
    #[inline]
    pub(super) fn avg_vruntime(&self, cpu: u32) -> i64 {
        self.avg_vruntime_of(cpu, self.state.rqs[cpu as usize].nr_running)
    }

    /// [`Simulator::avg_vruntime`] given the runqueue's `nr_running`.
    #[inline]
    fn avg_vruntime_of(&self, cpu: u32, nr_running: u32) -> i64 {
        let c = &self.cpus[cpu as usize];
        match nr_running {
            0 => c.base_v,
            n => c.v_sum.div_euclid(n as i64),
        }
    }

    /// `vruntime_eligible()`: `v <= avg_vruntime()` tested as the kernel does, by
    /// multiplying instead of dividing (for integers, floor(sum / n) >= v exactly when
    /// sum >= v × n).
    #[inline]
    pub(super) fn vruntime_eligible(&self, cpu: u32, v: i64) -> bool {
        let c = &self.cpus[cpu as usize];
        match self.state.rqs[cpu as usize].nr_running {
            0 => v <= c.base_v,
            n => (v as i128) * (n as i128) <= c.v_sum as i128,
        }
    }

    /// Lag limit (`update_entity_lag()`): max(2 × slice, a tick).
    pub(super) fn lag_limit(&self) -> i64 {
        (2 * self.slice_ns).max(self.cost.params.tick_ns as i64)
    }

    /// `enqueue_task_fair()` + `place_entity()` (a new task as `wake_up_new_task()` places it).
    /// `enqueue_entity()` charges the running task first (`update_curr()`, fair.c v6.8
    /// 5275; v6.5 the same), so the wakee is placed against `avg_vruntime()` of now
    /// (5300), not of the running task's last update.
    pub(super) fn enqueue(&mut self, t: u32, cpu: u32) {
        self.enqueue_with(t, cpu, true, None);
    }

    /// [`Simulator::enqueue`], with `util_est_enqueue()` only if `util_est`: not for
    /// a delayed task the balancer moves (`enqueue_task_fair()`, fair.c v6.12.19
    /// 7032: `sched_delayed && task_on_rq_migrating()`). `rel_deadline`: the deadline
    /// relative to the vruntime that a dequeue other than a sleep kept
    /// (PLACE_REL_DEADLINE, `se->rel_deadline`), which `place_entity()` restores
    /// instead of a fresh slice (fair.c v6.12.19 5368-5372).
    pub(super) fn enqueue_with(
        &mut self,
        t: u32,
        cpu: u32,
        util_est: bool,
        rel_deadline: Option<i64>,
    ) {
        let changed = util_est && self.util_est_enqueue(t, cpu);
        self.update_curr(cpu);
        self.update_cpu_pelt_publishing(cpu, changed);
        let nr = self.state.rqs[cpu as usize].nr_running;
        let avg = self.avg_vruntime_of(cpu, nr);
        let now = self.now.ns();
        let slice = self.slice_ns;
        let eevdf = self.eevdf;
        // PLACE_DEADLINE_INITIAL (fair.c v6.8 5249-5250): half a slice with
        // ENQUEUE_INITIAL. From 6.12 wake_up_new_task() activates a new task with it
        // (core.c v6.12 4832); 6.6-6.11 place it with it in task_fork_fair() (fair.c v6.8
        // 12654) but activate it without (core.c v6.8 4923: ENQUEUE_NOCLOCK), and that
        // enqueue_entity() → place_entity() places it again, with a whole slice.
        let initial_half = self.env.patches.release >= Release::new(6, 12);
        let task = &mut self.tasks[t as usize];
        if eevdf {
            task.vruntime = avg - task.vlag;
            let s = match rel_deadline {
                Some(rel) => rel,
                None if task.new_task && initial_half => slice / 2,
                None => slice,
            };
            task.deadline = task.vruntime + s;
        } else {
            // CFS place_entity(): sleeper credit of half sched_latency (GENTLE_FAIR_SLEEPERS).
            let thresh = 4 * 6_000_000 / 2;
            task.vruntime = if task.new_task {
                // place_entity(initial) with START_DEBIT: a new task starts one
                // sched_vslice() behind (sched_slice(): the period, sched_latency or
                // nr × min_granularity past sched_nr_latency, shared by nr + 1 tasks).
                let n = nr + 1;
                let period = if n > 8 {
                    n as i64 * 3_000_000
                } else {
                    24_000_000
                };
                avg + period / n as i64
            } else {
                (avg - task.vlag).max(avg - thresh)
            };
            task.deadline = task.vruntime + slice;
        }
        task.new_task = false;
        task.load.update(now, 0);
        if task.last_cpu != cpu {
            // ENQUEUE_MIGRATED (a wake-up's WF_MIGRATED, a balance's attach_task()).
            task.exec_start_zero = true;
        }
        task.loc = Loc::Queued(cpu);
        let v = task.vruntime;
        let averages = (task.load.avg(), task.util.avg());
        let in_tg = !task.background;
        // update_load_avg(DO_ATTACH): a task new here brings its averages along.
        let attached = self.attach_entity_load_avg(t, cpu, averages);
        // The group cfs_rq's update_load_avg(UPDATE_TG | DO_ATTACH), then
        // update_cfs_group() of the group entity (tg_load.rs).
        self.tg_enqueue(in_tg, cpu, attached);
        // account_entity_enqueue(): list_add() at the head of rq->cfs_tasks.
        self.mru_seq += 1;
        self.cfs_mru[t as usize] = self.mru_seq;
        let c = &mut self.cpus[cpu as usize];
        c.queue.push(t);
        c.v_sum += v;
        self.update_rq(cpu, |rq| rq.nr_running += 1);
        let nr = nr + 1;
        self.balance.note_nr_running(nr);
        if nr == 1 {
            self.cpus[cpu as usize].base_v = avg;
        }
    }

    /// Removes the running task from its CPU as it blocks or exits (`dequeue_task_fair()`);
    /// from v6.12 a block while not eligible leaves it queued instead
    /// ([`Simulator::delay_dequeue_curr`], `delayed.rs`).
    pub(super) fn dequeue_curr(&mut self, cpu: u32, loc: Loc) {
        if self.delays_dequeue(cpu, loc) {
            self.delay_dequeue_curr(cpu);
            return;
        }
        let t = self.cpus[cpu as usize].curr;
        let changed = self.util_est_dequeue(t, cpu);
        self.update_curr(cpu);
        self.update_cpu_pelt_publishing(cpu, changed);
        // dequeue_entity(): update_load_avg(UPDATE_TG), update_cfs_group() (tg_load.rs).
        self.tg_dequeue(t, cpu);
        let avg = self.avg_vruntime(cpu);
        let lim = self.lag_limit();
        let now = self.now;
        let task = &mut self.tasks[t as usize];
        task.vlag = (avg - task.vruntime).clamp(-lim, lim);
        task.load.update(now.ns(), 1024);
        task.util.update(now.ns(), 1024);
        task.loc = loc;
        task.last_ran = now;
        task.remaining_ns = 0;
        let (v, background) = (task.vruntime, task.background);
        let (util, load) = (task.util.avg(), task.load.avg());
        // util_est_update(task_sleep): blocking and exiting both dequeue with
        // DEQUEUE_SLEEP.
        self.util_est_update_to(t, cpu, util, load);
        let c = &mut self.cpus[cpu as usize];
        c.v_sum -= v;
        c.curr = u32::MAX;
        c.mode = Mode::Waking; // transient: schedule() follows
        c.descheduling = if loc == Loc::Blocked {
            (t, SimTime::MAX)
        } else {
            (u32::MAX, SimTime::ZERO)
        };
        c.base_v = avg;
        c.burst_gen = c.burst_gen.wrapping_add(1);
        self.update_rq(cpu, |rq| rq.nr_running -= 1);
        if loc == Loc::Exited {
            // task_dead_fair(): its averages leave the CPU at its next update.
            self.remove_entity_load_avg(t);
            if !background {
                self.live -= 1;
            }
        }
    }

    /// Puts the running task back on its queue (preemption) at once, with its
    /// `put_prev_entity()`: `put_prev_task_balance()` before a higher class's pick
    /// (the stopper) or the core-wide pick of core scheduling (core.c v6.5 6027,
    /// 6127).
    pub(super) fn put_prev(&mut self, cpu: u32) {
        self.put_prev_task(cpu, true);
    }

    /// Puts the running task back on its queue for the fair pick that follows at
    /// once (a preemption's `__schedule()` → `__pick_next_task()` →
    /// `pick_next_task_fair(rq, prev)`, core.c v6.5 6013): the kernel runs
    /// `put_prev_entity()` only once it has picked another task, and neither it nor
    /// `set_next_entity()` when it picks `prev` again (`if (prev != p)`, fair.c v6.5
    /// 8126-8145, v6.12 8980; v6.12's `put_prev_set_next_task()` likewise, sched.h
    /// 2463). So the group `cfs_rq`'s update waits for [`Simulator::schedule`]'s pick
    /// (`TgCpu::put_back`), and a re-picked task leaves a decay to the next update
    /// that writes (the tick, the dequeue). Under core scheduling the pick puts
    /// `prev` first ([`Simulator::put_prev`]).
    pub(super) fn put_prev_for_pick(&mut self, cpu: u32) {
        if self.core_sched {
            self.put_prev(cpu);
            return;
        }
        let c = &mut self.cpus[cpu as usize];
        debug_assert_eq!(c.tg.put_back, u32::MAX, "a put-back task not picked over");
        c.tg.put_back = c.curr;
        self.put_prev_task(cpu, false);
    }

    /// `put_prev_task_fair()`: back on the queue, burst left kept; `put_prev_entity()`'s
    /// update of the group `cfs_rq` now if `entity`, else at the pick.
    fn put_prev_task(&mut self, cpu: u32, entity: bool) {
        self.update_curr(cpu);
        self.update_cpu_pelt(cpu);
        if entity {
            // put_prev_entity(): update_load_avg(cfs_rq, prev, 0), no update_tg_load_avg().
            self.tg_cfs_rq_update(self.cpus[cpu as usize].curr, cpu);
        }
        let now = self.now;
        let c = &mut self.cpus[cpu as usize];
        let t = c.curr;
        let stolen = std::mem::take(&mut c.stolen_ns);
        let rem = c.burst_end.since(now) + stolen;
        c.curr = u32::MAX;
        c.mode = Mode::Waking;
        c.burst_gen = c.burst_gen.wrapping_add(1);
        c.queue.push(t);
        // A spin is dropped, not resumed: the task tries its op again when it runs
        // (pipe_mutex.rs), after the interrupt time its CPU still owes; a mutex
        // owner's spinners stop.
        let spun = self.mutex_owner_or_spinner_leaves(t);
        let task = &mut self.tasks[t as usize];
        task.remaining_ns = if spun { stolen } else { rem };
        task.util.update(now.ns(), 1024);
        task.loc = Loc::Queued(cpu);
        task.last_ran = now;
    }

    /// `pick_next_task_fair()`: EEVDF's earliest eligible deadline, or CFS's smallest
    /// vruntime; under core scheduling only tasks of the cookie the core runs.
    #[inline]
    pub(super) fn pick_next(&self, cpu: u32) -> Option<usize> {
        self.pick_next_with(cpu, self.sibling_cookie(cpu))
    }

    /// [`Simulator::pick_next`] among the tasks of cookie `want` (all with `None`).
    /// Always inlined: out of line it costs the reference run 2% more instructions.
    #[inline(always)]
    pub(super) fn pick_next_with(&self, cpu: u32, want: Option<u64>) -> Option<usize> {
        let c = &self.cpus[cpu as usize];
        if c.queue.is_empty() {
            return None;
        }
        let ok = |t: u32| want.is_none_or(|k| self.cookie(t) == k);
        if self.eevdf {
            // The earliest deadline among eligible tasks, else the least vruntime; the
            // first in queue order on ties. (A deadline or vruntime never reaches
            // i64::MAX: both are nanoseconds of a run capped at hours.)
            let (mut best_d, mut best) = (i64::MAX, usize::MAX);
            let (mut least_v, mut fallback) = (i64::MAX, usize::MAX);
            for (i, &t) in c.queue.iter().enumerate() {
                if !ok(t) {
                    continue;
                }
                let task = &self.tasks[t as usize];
                if task.deadline < best_d && self.vruntime_eligible(cpu, task.vruntime) {
                    (best_d, best) = (task.deadline, i);
                }
                if task.vruntime < least_v {
                    (least_v, fallback) = (task.vruntime, i);
                }
            }
            [best, fallback].into_iter().find(|&i| i != usize::MAX)
        } else {
            c.queue
                .iter()
                .enumerate()
                .filter(|(_, &t)| ok(t))
                .min_by_key(|(_, &t)| self.tasks[t as usize].vruntime)
                .map(|(i, _)| i)
        }
    }

    /// `check_preempt_wakeup_fair()` for task `w` newly queued on a CPU running `curr`.
    pub(super) fn should_preempt(&mut self, cpu: u32, w: u32) -> bool {
        self.update_curr(cpu);
        let c = &self.cpus[cpu as usize];
        if c.mode != Mode::Running {
            return false;
        }
        // No cookie test here (there is none in the kernel): under core scheduling the
        // schedule() that follows picks for the whole core.
        let curr = &self.tasks[c.curr as usize];
        let wt = &self.tasks[w as usize];
        if self.eevdf {
            let curr_eligible = self.vruntime_eligible(cpu, curr.vruntime);
            // RUN_TO_PARITY: an eligible current keeps its slice.
            if curr_eligible && curr.vruntime < curr.deadline {
                return false;
            }
            wt.deadline < curr.deadline && self.vruntime_eligible(cpu, wt.vruntime)
        } else {
            // wakeup_gran(): 1 ms × (1 + ilog2(ncpus)), 4 ms on 8+ CPUs.
            curr.vruntime - wt.vruntime > 4_000_000
        }
    }

    /// `task_tick_fair()` → `entity_tick()` on a running CPU: charges the current
    /// task, then under EEVDF `update_deadline()`, before 6.6 `check_preempt_tick()`.
    /// Returns whether the current task should be rescheduled (`resched_curr()`).
    pub(super) fn task_tick_fair(&mut self, cpu: u32) -> bool {
        self.update_curr(cpu);
        self.update_cpu_pelt(cpu);
        // entity_tick(): update_load_avg(UPDATE_TG), update_cfs_group() (tg_load.rs).
        let curr = self.cpus[cpu as usize].curr;
        self.tg_tick(curr, cpu);
        let c = &self.cpus[cpu as usize];
        let t = c.curr as usize;
        let mut resched = false;
        if self.eevdf {
            // update_deadline(): a new slice once the deadline is reached.
            let task = &mut self.tasks[t];
            if task.vruntime >= task.deadline {
                task.deadline = task.vruntime + self.slice_ns;
                resched = !self.cpus[cpu as usize].queue.is_empty();
            }
        } else {
            // check_preempt_tick(): ideal slice sched_latency / nr_running.
            let nr = self.state.rqs[cpu as usize].nr_running.max(1) as u64;
            let ideal = (24_000_000 / nr).max(3_000_000);
            resched = self.now.since(c.slice_start) >= ideal && !c.queue.is_empty();
        }
        resched
    }
}
