//! The transcription, continued (session 39): what `load_balance()` does with the
//! busiest runqueue once it has it, fair.c v6.8, statement by statement in C's types:
//! `task_hot()` (8800-8839), `can_migrate_task()` (8905-8991), `detach_one_task()`
//! (9010-9033), `detach_tasks()` (9041-9175), and `load_balance()`'s `more_balance`
//! loop around it (11315-11359: `LBF_ALL_PINNED` set, `loop_max`, `loop_break`,
//! `LBF_NEED_BREAK`). Written from the kernel text, not from the model
//! (`balance/detach.rs`). Release switches and what is left out: detach.rs's header.

use std::collections::VecDeque;

use super::kernel::{Fair, IdleType, MIGRATE_LOAD, MIGRATE_TASK, MIGRATE_UTIL};

/// `LBF_*`, v6.8 8764-8768.
pub(super) const LBF_ALL_PINNED: u32 = 0x01;
pub(super) const LBF_NEED_BREAK: u32 = 0x02;
pub(super) const LBF_DST_PINNED: u32 = 0x04;
pub(super) const LBF_SOME_PINNED: u32 = 0x08;
pub(super) const LBF_ACTIVE_LB: u32 = 0x10;

/// `SCHED_NR_MIGRATE_BREAK` (sched.h v6.8 2565, !CONFIG_PREEMPT_RT), which is also
/// `sysctl_sched_nr_migrate` (core.c v6.8 155).
const SCHED_NR_MIGRATE_BREAK: u32 = 32;
const SYSCTL_SCHED_NR_MIGRATE: u32 = SCHED_NR_MIGRATE_BREAK;
/// `sysctl_sched_migration_cost` (ns).
const SYSCTL_SCHED_MIGRATION_COST: i64 = 500_000;

/// One fair task of the source runqueue, what these functions read of it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Task {
    /// `kthread_is_per_cpu(p)`.
    pub per_cpu_kthread: bool,
    /// `cpumask_test_cpu(env->dst_cpu, p->cpus_ptr)`.
    pub allowed: bool,
    /// Some CPU of `env->dst_grpmask` ∩ `env->cpus` in `p->cpus_ptr` (never drawn:
    /// the model has no `LBF_DST_PINNED` retry).
    pub allowed_in_dst_group: bool,
    /// `p->se.exec_start` (ns; 0: new, or migrated and not run since).
    pub exec_start: u64,
    /// `sched_core_cookie_match(cpu_rq(env->dst_cpu), p)`.
    pub cookie_match: bool,
    /// `task_h_load(p)`, `task_util_est(p)`.
    pub h_load: u64,
    pub util_est: u64,
}

/// `struct lb_env`, the fields these functions read and write, with the source
/// runqueue (`cfs_tasks` from its head, `nr_running`, `curr`, `rq_clock_task()`).
pub(super) struct DetachEnv<'a> {
    pub fair: Fair,
    /// `env->sd->flags & SD_SHARE_CPUCAPACITY`.
    pub sd_share_cpucapacity: bool,
    /// `env->sd->nr_balance_failed`, `env->sd->cache_nice_tries`.
    pub nr_balance_failed: u32,
    pub cache_nice_tries: u32,
    pub idle: IdleType,
    pub migration_type: u8,
    pub imbalance: i64,
    pub flags: u32,
    pub loop_: u32,
    pub loop_max: u32,
    pub loop_break: u32,
    pub tasks: &'a [Task],
    /// `env->src_rq->cfs_tasks`, head first.
    pub cfs_tasks: VecDeque<usize>,
    pub src_nr_running: u32,
    /// `env->src_rq->curr` (an index into `tasks`).
    pub src_curr: Option<usize>,
    pub clock_task: u64,
    /// `env->tasks`: what detach_tasks() detached, in order.
    pub detached: Vec<usize>,
    /// How often each branch was taken (the test's tally; see [`Reach`]).
    pub reach: [u64; REACH],
}

/// The branches counted in [`DetachEnv::reach`].
#[derive(Clone, Copy)]
pub(super) enum Reach {
    Kthread,
    NotAllowed,
    Running,
    Active,
    Cold,
    HotForced,
    Hot,
    LbMin,
    LoadTooBig,
    UtilTooBig,
    Detached,
    NewidleOne,
    ImbalanceDone,
    SrcLast,
    LoopMax,
    NeedBreak,
}
pub(super) const REACH: usize = 16;

impl DetachEnv<'_> {
    fn hit(&mut self, r: Reach) {
        self.reach[r as usize] += 1;
    }

    /// task_hot(), 8800-8839 (a fair task of normal policy; no CACHE_HOT_BUDDY, as
    /// the model keeps no buddy; v6.5 also tests `->last`, 8499-8500: the same).
    fn task_hot(&self, p: usize) -> i32 {
        let t = &self.tasks[p];
        // p->sched_class != &fair_sched_class, task_has_idle_policy(p): no.
        if self.sd_share_cpucapacity {
            return 0;
        }
        // CACHE_HOT_BUDDY: left out.
        // sysctl_sched_migration_cost == -1: no.
        if !t.cookie_match {
            return 1;
        }
        // sysctl_sched_migration_cost == 0: no.
        let delta = self.clock_task.wrapping_sub(t.exec_start) as i64;
        i32::from(delta < SYSCTL_SCHED_MIGRATION_COST)
    }

    /// can_migrate_task(), 8905-8991 (v6.12 9437-9527: `p->sched_task_hot` for the
    /// schedstats only). throttled_lb_pair(): no bandwidth control;
    /// migrate_degrades_locality(): -1, no NUMA balancing.
    pub(super) fn can_migrate_task(&mut self, p: usize) -> bool {
        let t = self.tasks[p];
        if t.per_cpu_kthread {
            self.hit(Reach::Kthread);
            return false;
        }
        if !t.allowed {
            self.hit(Reach::NotAllowed);
            self.flags |= LBF_SOME_PINNED;
            if self.idle == IdleType::CpuNewlyIdle
                || self.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB) != 0
            {
                return false;
            }
            if t.allowed_in_dst_group {
                self.flags |= LBF_DST_PINNED;
            }
            return false;
        }
        self.flags &= !LBF_ALL_PINNED;
        if self.src_curr == Some(p) {
            self.hit(Reach::Running);
            return false;
        }
        if self.flags & LBF_ACTIVE_LB != 0 {
            self.hit(Reach::Active);
            return true;
        }
        let mut tsk_cache_hot = -1; // migrate_degrades_locality()
        if tsk_cache_hot == -1 {
            tsk_cache_hot = self.task_hot(p);
        }
        if tsk_cache_hot <= 0 || self.nr_balance_failed > self.cache_nice_tries {
            self.hit(if tsk_cache_hot == 1 {
                Reach::HotForced
            } else {
                Reach::Cold
            });
            return true;
        }
        self.hit(Reach::Hot);
        false
    }

    /// detach_task(), 8996-9002: deactivate_task() takes it off the runqueue.
    fn detach_task(&mut self, p: usize) {
        self.cfs_tasks.retain(|&q| q != p);
        self.src_nr_running -= 1;
    }

    /// detach_one_task(), 9010-9033: `list_for_each_entry_reverse`.
    pub(super) fn detach_one_task(&mut self) -> Option<usize> {
        let list: Vec<usize> = self.cfs_tasks.iter().rev().copied().collect();
        for p in list {
            if !self.can_migrate_task(p) {
                continue;
            }
            self.detach_task(p);
            return Some(p);
        }
        None
    }

    /// detach_tasks(), 9041-9175 (v6.5 8721-8855: `util > env->imbalance` without
    /// shr_bound(); v6.12 9579-9715: `env->loop > env->loop_max` breaks whatever
    /// LBF_ALL_PINNED says).
    pub(super) fn detach_tasks(&mut self) -> i32 {
        let mut detached = 0;
        if self.src_nr_running <= 1 {
            self.flags &= !LBF_ALL_PINNED;
            return 0;
        }
        if self.imbalance <= 0 {
            return 0;
        }
        while let Some(&p) = self.cfs_tasks.back() {
            if self.idle != IdleType::CpuNotIdle && self.src_nr_running <= 1 {
                self.hit(Reach::SrcLast);
                break;
            }
            self.loop_ += 1;
            let all_pinned_test = self.fair == Fair::V6_12 || self.flags & LBF_ALL_PINNED == 0;
            if self.loop_ > self.loop_max && all_pinned_test {
                self.hit(Reach::LoopMax);
                break;
            }
            if self.loop_ > self.loop_break {
                self.hit(Reach::NeedBreak);
                self.loop_break += SCHED_NR_MIGRATE_BREAK;
                self.flags |= LBF_NEED_BREAK;
                break;
            }
            // p = list_last_entry(tasks, ...)
            let mut next = !self.can_migrate_task(p);
            if !next {
                let t = self.tasks[p];
                match self.migration_type {
                    MIGRATE_LOAD => {
                        let load = t.h_load.max(1);
                        // sched_feat(LB_MIN) is true (features.h v6.8 89).
                        if load < 16 && self.nr_balance_failed == 0 {
                            self.hit(Reach::LbMin);
                            next = true;
                        } else if shr_bound(load, self.nr_balance_failed) > self.imbalance as u64 {
                            self.hit(Reach::LoadTooBig);
                            next = true;
                        } else {
                            self.imbalance = (self.imbalance as u64).wrapping_sub(load) as i64;
                        }
                    }
                    MIGRATE_UTIL => {
                        let util = t.util_est;
                        let util_cmp = match self.fair {
                            Fair::V6_5 => util,
                            Fair::V6_8 | Fair::V6_12 => shr_bound(util, self.nr_balance_failed),
                        };
                        if util_cmp > self.imbalance as u64 {
                            self.hit(Reach::UtilTooBig);
                            next = true;
                        } else {
                            self.imbalance = (self.imbalance as u64).wrapping_sub(util) as i64;
                        }
                    }
                    MIGRATE_TASK => self.imbalance -= 1,
                    // migrate_misfit: no misfit here (transcript/mod.rs).
                    _ => unreachable!("no misfit"),
                }
            }
            if next {
                // next: list_move(&p->se.group_node, tasks)
                self.cfs_tasks.retain(|&q| q != p);
                self.cfs_tasks.push_front(p);
                continue;
            }
            self.detach_task(p);
            self.detached.push(p);
            detached += 1;
            self.hit(Reach::Detached);
            // CONFIG_PREEMPTION (the model's assumption).
            if self.idle == IdleType::CpuNewlyIdle {
                self.hit(Reach::NewidleOne);
                break;
            }
            if self.imbalance <= 0 {
                self.hit(Reach::ImbalanceDone);
                break;
            }
        }
        detached
    }

    /// load_balance() from 11315 to 11359: the busiest runqueue found, `ld_moved`
    /// after the `more_balance` loop (v6.12 11750 on: `goto more_balance` on
    /// LBF_NEED_BREAK whatever `env.loop` is).
    pub(super) fn more_balance(&mut self) -> i32 {
        let mut ld_moved = 0;
        self.flags |= LBF_ALL_PINNED;
        if self.src_nr_running > 1 {
            self.loop_max = SYSCTL_SCHED_NR_MIGRATE.min(self.src_nr_running);
            loop {
                // more_balance:
                let cur_ld_moved = self.detach_tasks();
                ld_moved += cur_ld_moved; // attach_tasks(): the tasks leave env.tasks
                if self.flags & LBF_NEED_BREAK != 0 {
                    self.flags &= !LBF_NEED_BREAK;
                    if self.fair == Fair::V6_12 || self.loop_ < self.src_nr_running {
                        continue;
                    }
                }
                break;
            }
        }
        ld_moved
    }
}

/// `shr_bound(val, shift)`, sched.h: `val >> min(shift, BITS_PER_TYPE(val) - 1)`.
fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(63)
}
