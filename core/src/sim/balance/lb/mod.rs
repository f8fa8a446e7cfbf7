//! `load_balance()` (`sched_balance_rq()` from 6.10) and what it calls, fair.c v6.8:
//! `should_we_balance()` and the balance itself here, its redo without a pinned
//! busiest CPU, the active balance it queues and the interval's tuning; the
//! statistics (`update_sd_lb_stats()` / `update_sg_lb_stats()`, `group_classify()`,
//! `update_sd_pick_busiest()`) in stats.rs; `find_busiest_group()`,
//! `calculate_imbalance()` and `find_busiest_queue()` in busiest.rs; `detach_tasks()`
//! with `can_migrate_task()` / `task_hot()`, and the active balance's stopper, in
//! ../migrate.rs.
//!
//! Release differences mirrored: the SMT-aware parts of 6.6 (`group_smt_balance`,
//! `sibling_imbalance()`, `should_we_balance()` preferring an idle core) and, before
//! them, `prefer_sibling`'s plain `nr_running` difference; the NUMA allowance's three
//! forms (before 5.18 a quarter of the group, `<`; from 5.18 `imb_numa_nr` with `<=`,
//! of the busiest group before 5.18 and of the local one from then), and before 6.0
//! `calculate_imbalance()` halving the difference before the allowance sees it.

mod busiest;
pub(in crate::sim) mod exit;
mod stats;

use crate::release::Release;
use crate::sched_domain::SdFlags;

use super::super::{Mode, SimTime};
use super::{Level, Simulator};
use exit::Found;

/// `SCHED_CAPACITY_SCALE`.
const SCALE: u64 = 1024;

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum CpuIdle {
    NotIdle,
    Idle,
    NewlyIdle,
}

/// `enum migration_type` (without `migrate_misfit`, see [`GroupType`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum MigrationType {
    Load,
    Util,
    Task,
}

pub(in crate::sim) use crate::wakeup::lb_stats::{
    adjust_numa_imbalance, allow_numa_imbalance, group_classify, update_pick_idlest, GroupType,
    SgStats,
};

/// `struct lb_env`, what this model needs of it.
pub(in crate::sim) struct LbEnv {
    pub dst: u32,
    /// `smp_processor_id()`: the CPU running the balance, `dst` itself or the idle
    /// load balancer on `dst`'s behalf (`_nohz_idle_balance()`).
    pub runs_on: u32,
    /// Level index into the dst CPU's domains.
    pub li: usize,
    pub idle: CpuIdle,
    pub imbalance: i64,
    pub migration_type: MigrationType,
    /// CPUs left out after `LBF_ALL_PINNED` (`env->cpus` cleared bits).
    pub excluded: Vec<u32>,
    pub some_pinned: bool,
    pub all_pinned: bool,
    pub src: u32,
}

impl LbEnv {
    /// `struct lb_env` as `load_balance()` sets it up for `dst`'s domain `li`, run on
    /// `runs_on`: nothing measured yet (`migrate_task`, imbalance 0), no busiest queue
    /// (`src` = `dst`), no CPU excluded, no pinned task met.
    pub(in crate::sim) fn new(dst: u32, runs_on: u32, li: usize, idle: CpuIdle) -> LbEnv {
        LbEnv {
            dst,
            runs_on,
            li,
            idle,
            imbalance: 0,
            migration_type: MigrationType::Task,
            excluded: Vec::new(),
            some_pinned: false,
            all_pinned: false,
            src: dst,
        }
    }
}

/// `struct sd_lb_stats`.
#[derive(Clone, Debug, Default)]
pub(in crate::sim) struct SdStats {
    pub busiest: Option<usize>,
    pub local: SgStats,
    pub busiest_stat: SgStats,
    pub total_load: u64,
    pub total_capacity: u64,
    pub avg_load: u64,
    pub prefer_sibling: bool,
}

impl Simulator {
    pub(super) fn lv(&self, env: &LbEnv) -> &Level {
        &self.balance.levels[env.dst as usize][env.li]
    }

    /// `is_core_idle()`: every SMT sibling of `c` is idle.
    fn is_core_idle(&self, c: u32) -> bool {
        self.siblings[c as usize].iter().all(|&s| self.cpu_idle(s))
    }

    /// `should_we_balance()`, fair.c v6.8: newidle always (unless work arrived, from
    /// v6.0: "if (env->dst_rq->nr_running > 0 || env->dst_rq->ttwu_pending) return
    /// 0;", fair.c v6.8 11214-11217, Josh Don's 792b9f65a568; v5.12 returns 1, fair.c
    /// 9620-9621); else the first idle CPU of the local group's balance mask (from 6.6
    /// preferring one on an idle core above the SMT level), else its first CPU.
    pub(in crate::sim) fn should_we_balance(&self, env: &LbEnv) -> bool {
        if env.idle == CpuIdle::NewlyIdle {
            let rq = &self.state.rqs[env.dst as usize];
            return self.balance.release < Release::new(6, 0)
                || (rq.nr_running == 0 && !rq.ttwu_pending);
        }
        let lv = self.lv(env);
        let local = &lv.groups[0];
        let smt_aware = self.balance.release >= Release::new(6, 6)
            && !lv.flags.contains(SdFlags::SHARE_CPUCAPACITY);
        let mut idle_smt: Option<u32> = None;
        for &c in local.balance.iter() {
            if env.excluded.contains(&c) || !self.cpu_idle(c) {
                continue;
            }
            if smt_aware && !self.is_core_idle(c) {
                // Remember the first idle SMT thread of a busy core (its siblings are
                // skipped in the kernel; they cannot come before it).
                if idle_smt.is_none() {
                    idle_smt = Some(c);
                }
                continue;
            }
            return c == env.dst;
        }
        if let Some(c) = idle_smt {
            return c == env.dst;
        }
        local.balance.first().or(local.cpus.first()) == Some(&env.dst)
    }

    /// `load_balance()`'s redo after `LBF_ALL_PINNED`, fair.c v6.8 11419: "if
    /// (!cpumask_subset(cpus, env.dst_grpmask))", `env.dst_grpmask` being
    /// `group_balance_mask(sd->groups)` (11278), the local group's balance mask,
    /// which on overlapping NUMA groups is smaller than the group.
    pub(in crate::sim) fn all_pinned_redo(&self, env: &LbEnv) -> bool {
        let lv = self.lv(env);
        exit::all_pinned_redo(&lv.span, &env.excluded, &lv.groups[0].balance)
    }

    /// `cpumask_test_cpu(this_cpu, busiest->curr->cpus_ptr)` (fair.c v6.8 11449), the
    /// active balance's test under busiest's lock: whether `src`'s `rq->curr` may run
    /// on `dst`. A running CPU's is its task. Inside a newidle pass `src` is still in
    /// `__schedule()`'s pick (`pick_next_task()`, core.c v6.8 6722; `rq->curr = next`
    /// only at 6735), with its rq lock released (`newidle_balance()`, fair.c
    /// 12346-12385): its `rq->curr` is the task that blocked or exited there (the last
    /// task it ran), or the idle task in a pass of the idle task, or the stopper in a
    /// pass after a stopper's run, both pinned to `src`. An idle, forced-idle or
    /// waking CPU's is its idle task.
    pub(in crate::sim) fn busiest_curr_allowed(&self, src: u32, dst: u32) -> bool {
        let c = &self.cpus[src as usize];
        let curr = match c.mode {
            Mode::Running => c.curr,
            Mode::NewidlePass
                if !self.state.rqs[src as usize].curr_is_idle && !c.newidle_curr_stopper =>
            {
                c.last_task
            }
            Mode::NewidlePass | Mode::Idle | Mode::ForceIdle | Mode::Waking => return false,
        };
        curr != u32::MAX && self.allowed_on(curr, dst)
    }

    /// `load_balance()` (`sched_balance_rq()` from 6.10), fair.c v6.8, of `dst`'s
    /// domain `li`, run on `runs_on` (`dst`, or the idle load balancer on its behalf).
    /// Returns the tasks pulled and whether to keep balancing higher domains
    /// (`continue_balancing`). Takes busiest's rq lock for `detach_tasks()` and the
    /// active-balance check, and `dst`'s for `attach_tasks()`, as the kernel does
    /// (locks.rs).
    pub(in crate::sim) fn load_balance(
        &mut self,
        dst: u32,
        li: usize,
        idle: CpuIdle,
        runs_on: u32,
    ) -> (Vec<u32>, bool) {
        let mut env = LbEnv::new(dst, runs_on, li, idle);
        let parent_sgc = self.lv(&env).parent_sgc;
        let mut moved = Vec::new();
        let mut continue_balancing = true;
        let found = 'redo: loop {
            if !self.should_we_balance(&env) {
                // "*continue_balancing = 0; goto out_balanced;"
                continue_balancing = false;
                break 'redo Found::Balanced;
            }
            let Some(gi) = self.find_busiest_group(&mut env) else {
                break 'redo Found::Balanced;
            };
            let Some(src) = self.find_busiest_queue(&env, gi) else {
                break 'redo Found::Balanced;
            };
            env.src = src;
            env.all_pinned = true;
            if self.state.rqs[src as usize].nr_running > 1 {
                // more_balance: detach_tasks() under busiest's lock, whatever it
                // then moves; attach_tasks() under dst's (locks.rs).
                self.lb_rq_lock(env.runs_on, src, self.lb_hold_ns(1));
                moved = self.detach_tasks(&mut env);
                if !moved.is_empty() {
                    self.lb_rq_lock(env.runs_on, env.dst, self.lb_hold_ns(moved.len()));
                }
                if let Some(p) = parent_sgc {
                    if exit::marks_parent_imbalance(env.some_pinned, env.imbalance) {
                        self.balance.sgc_imbalance[p] = true;
                    }
                }
                if env.all_pinned {
                    env.excluded.push(src);
                    if self.all_pinned_redo(&env) {
                        // LBF_ALL_PINNED stays set across the redo.
                        continue 'redo;
                    }
                    break 'redo Found::AllPinned;
                }
            }
            break 'redo Found::Busiest {
                moved: !moved.is_empty(),
            };
        };
        let lv = &self.balance.levels[dst as usize][li];
        let sd = exit::ExitSd {
            cache_nice_tries: lv.cache_nice_tries,
            min_interval: lv.min_interval,
            max_interval: lv.max_interval,
            has_parent: parent_sgc.is_some(),
        };
        let mut d = self.balance.dom[dst as usize][li].clone();
        let src = env.src;
        let out = exit::lb_exit(
            &mut d,
            sd,
            found,
            idle,
            env.migration_type,
            env.all_pinned,
            || {
                // raw_spin_rq_lock_irqsave(busiest) for the checks.
                self.lb_rq_lock(env.runs_on, src, 0);
                let curr_movable = self.busiest_curr_allowed(src, dst);
                (curr_movable, self.balance.push_cpu[src as usize].is_some())
            },
        );
        self.balance.dom[dst as usize][li] = d;
        if out.clear_parent_imbalance {
            if let Some(p) = parent_sgc {
                self.balance.sgc_imbalance[p] = false;
            }
        }
        if out.active == exit::Active::Start {
            // busiest->active_balance = 1, push_cpu = this_cpu, and after
            // raw_spin_rq_unlock_irqrestore(busiest), stop_one_cpu_nowait() wakes
            // busiest's stopper (wake_up_q() → try_to_wake_up(), stop_machine.c v6.8
            // 109): by its rq lock and resched_curr()'s IPI, or across LLCs by the
            // wakelist's IPI; one IPI either way, so the stopper runs one IPI after
            // the wake-up, where the pass has got to (Event::Stopper). ld_moved
            // stays 0.
            self.balance.push_cpu[src as usize] = Some(dst);
            // ttwu_queue_cond() (core.c v6.8 3986-4024, v6.5 3956-3994) for the
            // stopper, woken from runs_on: the wake list across LLCs; in the LLC src
            // runs a task (nr_running; before 6.0 the stopper is not on a CPU, no
            // WF_ON_CPU: v5.15 3713-3739, v5.12 3125-3151), so ttwu_queue() takes
            // busiest's lock for ttwu_do_activate() (core.c v6.8 4054-4057), the
            // wake-up's enqueue hold (locks.rs), then resched_curr().
            let (a, b) = (
                self.llc_id_of[env.runs_on as usize],
                self.llc_id_of[src as usize],
            );
            let wakelist = a != b;
            self.balance.stopper_wakelist[src as usize] = wakelist;
            if !wakelist {
                self.lb_rq_lock(env.runs_on, src, self.lb_hold_ns(1));
            }
            let woken = self.lb_clock.at_ns.max(self.now.ns());
            let at = SimTime(woken) + self.cost.params.ipi_ns();
            self.queue
                .push(at, super::super::Event::Stopper { cpu: src });
        }
        (moved, continue_balancing)
    }
}
