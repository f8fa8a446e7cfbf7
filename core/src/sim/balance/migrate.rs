//! Moving tasks, fair.c v6.8: the simulator's side of `detach_tasks()` with
//! `can_migrate_task()` and `task_hot()` (detach.rs), and active balancing's stopper
//! (`active_load_balance_cpu_stop()` with `detach_one_task()`;
//! `need_active_balance()` is in lb/exit.rs).

use crate::sched_domain::SdFlags;

use super::super::event::Event;
use super::super::record::MigrateReason;
use super::super::{IdleExit, Mode};
use super::detach::{self, DetachSd, DetachSrc};
use super::lb::{CpuIdle, LbEnv};
use super::Simulator;

/// `SCHED_CAPACITY_SCALE` (a nice-0 task's full load).
const SCALE: u64 = 1024;

/// The simulator's side of `detach_tasks()` (detach.rs): `src`'s tasks, moved to
/// `dst` (domain `li`) by `runs_on`.
struct SimSrc<'a> {
    sim: &'a mut Simulator,
    src: u32,
    dst: u32,
    li: usize,
    runs_on: u32,
    reason: MigrateReason,
}

impl DetachSrc for SimSrc<'_> {
    fn nr_running(&self) -> u32 {
        self.sim.state.rqs[self.src as usize].nr_running
    }

    fn per_cpu_kthread(&self, t: u32) -> bool {
        self.sim.views[t as usize]
            .task
            .as_ref()
            .is_some_and(|v| v.per_cpu_kthread)
    }

    fn allowed(&self, t: u32) -> bool {
        self.sim.allowed_on(t, self.dst)
    }

    fn hot(&self, t: u32) -> bool {
        self.sim.task_hot_at(self.dst, self.li, t)
    }

    fn load(&self, t: u32) -> u64 {
        self.sim.tasks[t as usize]
            .load
            .peek(self.sim.now.ns(), SCALE)
    }

    fn util(&self, t: u32) -> u64 {
        self.sim.task_util_est(t)
    }

    fn skip(&mut self, t: u32) {
        self.sim.cfs_tasks_skip(t);
    }

    fn detach(&mut self, t: u32) {
        let (src, dst, on) = (self.src, self.dst, self.runs_on);
        self.sim.tg_migrate_queued(t, src, dst, on, self.reason);
    }
}

impl Simulator {
    /// `task_hot()`, fair.c v6.8 8800-8839 (no CACHE_HOT_BUDDY: no next buddy is
    /// kept); a task whose `exec_start` is 0 (new, or migrated and not run since) is
    /// cold: `delta = rq_clock_task(env->src_rq) - p->se.exec_start` is then the whole
    /// uptime.
    #[cfg(test)]
    pub(super) fn task_hot(&self, env: &LbEnv, t: u32) -> bool {
        self.task_hot_at(env.dst, env.li, t)
    }

    /// [`Simulator::task_hot`] for a move to `dst` in its domain `li`.
    fn task_hot_at(&self, dst: u32, li: usize, t: u32) -> bool {
        let lv = &self.balance.levels[dst as usize][li];
        let smt = lv.flags.contains(SdFlags::SHARE_CPUCAPACITY);
        let task = &self.tasks[t as usize];
        let since_ran = (!task.exec_start_zero).then(|| self.now.since(task.last_ran));
        detach::task_hot(smt, smt || self.cookie_match(dst, t), since_ran)
    }

    /// `sd->nr_balance_failed` and `sd->cache_nice_tries` of `env`'s domain.
    fn detach_sd(&self, env: &LbEnv) -> DetachSd {
        DetachSd {
            failed: self.balance.dom[env.dst as usize][env.li].nr_balance_failed,
            cache_nice_tries: self.lv(env).cache_nice_tries,
            release: self.balance.release,
        }
    }

    /// `src`'s tasks in `cfs_tasks` order from the tail: the queued ones least
    /// recently enqueued, picked or passed over first (`Simulator::cfs_mru`), then
    /// the running one (the list's head).
    fn cfs_tasks_from_tail(&self, src: u32) -> Vec<(u32, bool)> {
        let c = &self.cpus[src as usize];
        let mut v: Vec<(u32, bool)> = c.queue.iter().map(|&t| (t, false)).collect();
        v.sort_by_key(|&(t, _)| self.cfs_mru[t as usize]);
        if c.mode == Mode::Running {
            v.push((c.curr, true));
        }
        v
    }

    /// `detach_tasks()`'s `goto next`: "list_move(&p->se.group_node, tasks)", a task
    /// it passes over goes to the head of `cfs_tasks` (fair.c v6.8 line 9164).
    fn cfs_tasks_skip(&mut self, t: u32) {
        self.mru_seq += 1;
        self.cfs_mru[t as usize] = self.mru_seq;
    }

    /// `detach_tasks()` + `attach_tasks()`, fair.c v6.8 (detach.rs): `env.src`'s
    /// tasks from `cfs_tasks`' tail, moved to `env.dst`. Returns the tasks moved.
    pub(super) fn detach_tasks(&mut self, env: &mut LbEnv) -> Vec<u32> {
        let sd = self.detach_sd(env);
        let tasks = self.cfs_tasks_from_tail(env.src);
        let reason = match env.idle {
            CpuIdle::NotIdle => MigrateReason::Periodic,
            CpuIdle::Idle => MigrateReason::Idle,
            CpuIdle::NewlyIdle => MigrateReason::NewIdle,
        };
        let mut s = SimSrc {
            sim: self,
            src: env.src,
            dst: env.dst,
            li: env.li,
            runs_on: env.runs_on,
            reason,
        };
        detach::detach_tasks(&mut s, env, sd, tasks)
    }

    /// `active_load_balance_cpu_stop()`, fair.c v6.8: `src`'s stopper, woken by an
    /// active balance one IPI ago, runs. On a busy `src` it preempts the running task
    /// (the IPI's receive time is taken from the CPU, as a wake-up's is); then, if
    /// `busiest_rq->nr_running > 1` with the stopper counted, `detach_one_task()`
    /// (with `LBF_ACTIVE_LB`: cache-hot tasks too) moves one CFS task to `push_cpu`,
    /// `attach_one_task()` preempts it if it runs something the task should preempt,
    /// and `src` reschedules. A task that went to sleep before the stopper ran is not
    /// moved (`alb_failed`). A `src` that went idle meanwhile takes the IPI in its
    /// C-state ([`Simulator::stopper_ipi_on_idle_src`]). A `src` inside its newidle
    /// pass has a task queued meanwhile: the pass stops after the domain it is in
    /// and the stopper runs at its end ([`Simulator::newidle_pass_over`]). Not
    /// modelled: the stopper's own run time, and, in the LLC, its run at a
    /// `schedule()` of `src` before the IPI lands (it is on the runqueue from the
    /// wake-up, and the stop class is picked first): here it runs when the IPI lands.
    /// It takes src's rq lock (`rq_lock_irq(busiest_rq)`) and, for a task it moves,
    /// the target's (`attach_one_task()`): their time is taken from what src runs
    /// next (locks.rs).
    pub(in crate::sim) fn active_load_balance_cpu_stop(&mut self, src: u32) {
        if self.balance.push_cpu[src as usize].is_none() {
            return;
        }
        if self.cpus[src as usize].mode == Mode::Idle {
            self.stopper_ipi_on_idle_src(src);
            return;
        }
        if self.cpus[src as usize].mode == Mode::NewidlePass {
            // The stopper is woken onto src's rq (in the LLC: ttwu_do_activate()
            // under its lock, nr_running > 0, feeding idle_stamp into avg_idle) or
            // its wake list (ttwu_pending): either breaks the pass's loop after the
            // domain in progress (fair.c v6.8 12378-12380). src has interrupts off,
            // so the stop class runs it at the pass's end, before any pick (from the
            // wake list, once the IPI has activated it).
            self.update_avg_idle(src);
            self.cpus[src as usize].newidle_held.stopper = true;
            self.newidle_interrupted(src, self.now);
            return;
        }
        // busiest_rq->active_balance = 0 (out_unlock), whatever the stopper finds.
        let Some(dst) = self.balance.push_cpu[src as usize].take() else {
            return;
        };
        // stop_one_cpu_nowait() wakes the stopper thread: its ttwu_do_activate() on
        // src feeds a set idle_stamp into avg_idle, as any wake-up there does.
        self.update_avg_idle(src);
        let running = self.cpus[src as usize].mode == Mode::Running;
        if running {
            // The stop class preempts: the current task goes back on the runqueue.
            self.cpus[src as usize].stolen_ns += self.cost.params.ipi_recv_ns;
            self.put_prev(src);
            if self.measuring {
                self.metrics.preemptions += 1;
            }
            self.kick_force_idle_siblings(src);
        }
        // rq_lock_irq(busiest_rq), whatever the stopper then finds (locks.rs); its
        // time, and attach_one_task()'s under target_rq's lock, are src's.
        let outer = self.lb_pass_begin();
        self.lb_rq_lock(src, src, self.lb_hold_ns(1));
        // busiest_rq->nr_running <= 1 (the stopper counts): nothing to move.
        let mut env = LbEnv {
            imbalance: 1,
            src,
            ..LbEnv::new(dst, src, 0, CpuIdle::Idle)
        };
        // The dst domain spanning src.
        env.li = (0..self.balance.levels[dst as usize].len())
            .find(|&l| self.balance.levels[dst as usize][l].span.contains(&src))
            .unwrap_or(0);
        // LBF_ACTIVE_LB: can_migrate_task() returns before it reads the domain's
        // failures (and dst may be a CPU with no domain here, in tests).
        let sd = DetachSd {
            failed: 0,
            cache_nice_tries: 0,
            release: self.balance.release,
        };
        let tasks = self.cfs_tasks_from_tail(src);
        let mut s = SimSrc {
            sim: self,
            src,
            dst,
            li: env.li,
            runs_on: src,
            reason: MigrateReason::Active,
        };
        // detach_one_task(), then attach_one_task() → wakeup_preempt() on dst, from
        // src (SimSrc::detach).
        if detach::detach_one_task(&mut s, &mut env, sd, tasks).is_some() {
            self.lb_rq_lock(src, dst, self.lb_hold_ns(1));
            // Active balancing done, reset the failure counter.
            self.balance.dom[dst as usize][env.li].nr_balance_failed = 0;
            if self.measuring {
                self.metrics.active_balances += 1;
            }
        }
        // The stopper finishes and src schedules: a busy or force-idled src (core
        // scheduling: the stopper has no cookie) picks what is left. An idle src
        // found nothing; a waking one runs its queued task, if the stopper left it,
        // at the Resched already on its way.
        // The stopper's lock time is src's, before whatever it switches to: charged
        // first (once: busy_until_ns), whatever src's mode.
        let ns = self.lb_pass_end(outer);
        self.lb_charge_cpu(src, ns);
        if running || self.cpus[src as usize].mode == Mode::ForceIdle {
            self.schedule(src);
        }
    }

    /// The IPI that the active balance's wake-up of the stopper sent lands on a
    /// `src` that went idle since (its task blocked or exited, nothing left), in a
    /// C-state, which it leaves after the exit latency:
    /// - the stopper on `src`'s wake list (another LLC's balance,
    ///   `__ttwu_queue_wakelist()`): `do_idle()` takes the IPI,
    ///   `sched_ttwu_pending()` activates the stopper, whose `resched_curr()` ends
    ///   the loop (kernel/sched/idle.c v6.8 258, 339-340); the stopper runs first
    ///   (`Event::Stopper` again, at the exit) and finds `busiest_rq->nr_running
    ///   <= 1`, itself (fair.c v6.8 11600-11601); then `src` schedules:
    ///   `newidle_balance()`, a new idle entry.
    /// - the stopper on `src`'s runqueue (the LLC's remote lock,
    ///   `ttwu_do_activate()`): it was picked when the task left, before `src`
    ///   went idle, and found nothing; what lands is `resched_curr()`'s IPI for the
    ///   task gone since (core.c v6.8 1063-1065), which ends the stay with
    ///   `need_resched()` clear: `do_idle()`'s loop goes round and the governor
    ///   chooses again, as after a sleeper's hrtimer whose wakee went elsewhere.
    ///   POLL takes the interrupt and polls on (poll_state.c v6.8 22-38).
    pub(in crate::sim) fn stopper_ipi_on_idle_src(&mut self, src: u32) {
        let c = &mut self.cpus[src as usize];
        let state = &self.cost.params.idle_states[c.cstate as usize];
        let (exit, polling) = (state.exit_latency_ns, state.polling);
        let out = self.now + exit;
        if self.balance.stopper_wakelist[src as usize] {
            c.mode = Mode::Waking;
            let g = c.switch_gen;
            self.queue.push(out, Event::Stopper { cpu: src });
            self.queue.push(out, Event::Resched { cpu: src, gen: g });
            return;
        }
        // busiest_rq->active_balance = 0: the stopper ran before src went idle.
        self.balance.push_cpu[src as usize] = None;
        c.idle_entry = out;
        if !polling {
            self.idle_reselect(src, IdleExit::ReschedIpi);
        }
    }
}
