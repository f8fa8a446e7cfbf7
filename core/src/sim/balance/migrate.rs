//! Moving tasks, fair.c v6.8: `detach_tasks()` with `can_migrate_task()` and
//! `task_hot()`, and active balancing (`need_active_balance()`,
//! `active_load_balance_cpu_stop()` with `detach_one_task()`).

use crate::release::Release;
use crate::sched_domain::SdFlags;

use super::super::event::Event;
use super::super::record::MigrateReason;
use super::super::{IdleExit, Mode, MIGRATION_COST_NS};
use super::lb::{CpuIdle, LbEnv, MigrationType};
use super::Simulator;

/// `sysctl_sched_nr_migrate` (32; also `SCHED_NR_MIGRATE_BREAK`, never reached with
/// the simulator's task counts per CPU).
const NR_MIGRATE: u32 = 32;
/// `SCHED_CAPACITY_SCALE` (a nice-0 task's full load).
const SCALE: u64 = 1024;

impl Simulator {
    /// `task_hot()`, fair.c v6.8 (no CACHE_HOT_BUDDY: no next buddy is kept); a task
    /// whose `exec_start` is 0 (new, or migrated and not run since) is cold: `delta =
    /// rq_clock_task(env->src_rq) - p->se.exec_start` is then the whole uptime.
    pub(super) fn task_hot(&self, env: &LbEnv, t: u32) -> bool {
        if self.lv(env).flags.contains(SdFlags::SHARE_CPUCAPACITY) {
            return false;
        }
        if !self.cookie_match(env.dst, t) {
            return true;
        }
        let task = &self.tasks[t as usize];
        !task.exec_start_zero && self.now.since(task.last_ran) < MIGRATION_COST_NS
    }

    /// `can_migrate_task()`, fair.c v6.8 (no `LBF_DST_PINNED` retry).
    fn can_migrate_task(&self, env: &mut LbEnv, t: u32, running: bool, active: bool) -> bool {
        if !self.allowed_on(t, env.dst) {
            env.some_pinned = true;
            return false;
        }
        env.all_pinned = false;
        if running {
            return false;
        }
        if active {
            return true;
        }
        let failed = self.balance.dom[env.dst as usize][env.li].nr_balance_failed;
        !self.task_hot(env, t) || failed > self.lv(env).cache_nice_tries
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

    /// `detach_tasks()` + `attach_tasks()`, fair.c v6.8: walk `src`'s tasks from the
    /// tail, at most `loop_max`, moving those `can_migrate_task()` allows while the
    /// imbalance lasts (decremented per migration type); newidle stops after one
    /// (CONFIG_PREEMPTION, an assumption: distribution kernels build PREEMPT_DYNAMIC).
    /// Returns the tasks moved.
    pub(super) fn detach_tasks(&mut self, env: &mut LbEnv) -> Vec<u32> {
        let src = env.src;
        let mut moved = Vec::new();
        if self.state.rqs[src as usize].nr_running <= 1 {
            env.all_pinned = false;
            return moved;
        }
        if env.imbalance <= 0 {
            return moved;
        }
        let loop_max = NR_MIGRATE.min(self.state.rqs[src as usize].nr_running);
        let failed = self.balance.dom[env.dst as usize][env.li].nr_balance_failed;
        let mut lp = 0u32;
        for (t, running) in self.cfs_tasks_from_tail(src) {
            if env.idle != CpuIdle::NotIdle && self.state.rqs[src as usize].nr_running <= 1 {
                break;
            }
            lp += 1;
            if lp > loop_max && !env.all_pinned {
                break;
            }
            if !self.can_migrate_task(env, t, running, false) {
                self.cfs_tasks_skip(t);
                continue;
            }
            match env.migration_type {
                MigrationType::Load => {
                    let load = self.tasks[t as usize]
                        .load
                        .peek(self.now.ns(), SCALE)
                        .max(1);
                    // LB_MIN: skip tiny loads unless balancing failed before.
                    if load < 16 && failed == 0 {
                        self.cfs_tasks_skip(t);
                        continue;
                    }
                    if (load >> failed.min(63)) as i64 > env.imbalance {
                        self.cfs_tasks_skip(t);
                        continue;
                    }
                    env.imbalance -= load as i64;
                }
                MigrationType::Util => {
                    let util = self.task_util_est(t);
                    // 6.8 on (3af7524b1419, "Use all little CPUs for CPU-bound
                    // workloads", fair.c v6.8 9121): `shr_bound(util,
                    // nr_balance_failed)`, as migrate_load has; before, the whole
                    // util (fair.c v6.5 8801, v6.6.9 8998: `if (util >
                    // env->imbalance)`).
                    let shift = if self.balance.release >= Release::new(6, 8) {
                        failed.min(63)
                    } else {
                        0
                    };
                    if (util >> shift) as i64 > env.imbalance {
                        self.cfs_tasks_skip(t);
                        continue;
                    }
                    env.imbalance -= util as i64;
                }
                MigrationType::Task => env.imbalance -= 1,
            }
            let reason = match env.idle {
                CpuIdle::NotIdle => MigrateReason::Periodic,
                CpuIdle::Idle => MigrateReason::Idle,
                CpuIdle::NewlyIdle => MigrateReason::NewIdle,
            };
            self.tg_migrate_queued(t, src, env.dst, env.runs_on, reason);
            moved.push(t);
            if env.idle == CpuIdle::NewlyIdle || env.imbalance <= 0 {
                break;
            }
        }
        moved
    }

    /// `need_active_balance()`, fair.c v6.8: only `imbalanced_active_balance()` can
    /// hold here (no asym packing, no misfit, capacity never reduced).
    pub(super) fn need_active_balance(&self, env: &LbEnv) -> bool {
        let failed = self.balance.dom[env.dst as usize][env.li].nr_balance_failed;
        env.migration_type == MigrationType::Task && failed > self.lv(env).cache_nice_tries + 2
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
        for (t, _) in self.cfs_tasks_from_tail(src) {
            if self.can_migrate_task(&mut env, t, false, true) {
                // attach_one_task() → wakeup_preempt() on dst, from src.
                self.tg_migrate_queued(t, src, dst, src, MigrateReason::Active);
                self.lb_rq_lock(src, dst, self.lb_hold_ns(1));
                // Active balancing done, reset the failure counter.
                self.balance.dom[dst as usize][env.li].nr_balance_failed = 0;
                if self.measuring {
                    self.metrics.active_balances += 1;
                }
                break;
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
