//! `detach_tasks()`'s walk and `can_migrate_task()`'s test, fair.c v6.8, over what
//! they read of the busiest runqueue's tasks and what they do to them
//! ([`DetachSrc`]): the simulator's tasks (migrate.rs), or a test's
//! (tests/transcript/detach.rs, which holds them against a transcription of the
//! kernel text).

use std::collections::VecDeque;

use crate::release::Release;

use super::super::MIGRATION_COST_NS;

use super::lb::{CpuIdle, LbEnv, MigrationType};

/// `sysctl_sched_nr_migrate` and `SCHED_NR_MIGRATE_BREAK` (32, sched.h v6.8 2565).
pub(super) const NR_MIGRATE: u32 = 32;

/// What `detach_tasks()` and `can_migrate_task()` read of the source runqueue and its
/// tasks, and what they do to them.
pub(super) trait DetachSrc {
    /// `env->src_rq->nr_running` now.
    fn nr_running(&self) -> u32;
    /// `kthread_is_per_cpu(p)`.
    fn per_cpu_kthread(&self, t: u32) -> bool;
    /// `cpumask_test_cpu(env->dst_cpu, p->cpus_ptr)`.
    fn allowed(&self, t: u32) -> bool;
    /// `task_hot(p, env)`.
    fn hot(&self, t: u32) -> bool;
    /// `task_h_load(p)`.
    fn load(&self, t: u32) -> u64;
    /// `task_util_est(p)`.
    fn util(&self, t: u32) -> u64;
    /// `goto next`: `list_move(&p->se.group_node, tasks)`.
    fn skip(&mut self, t: u32);
    /// `detach_task()`, and (the simulator's) `attach_task()` on the destination.
    fn detach(&mut self, t: u32);
}

/// The domain's fields the walk reads: `sd->nr_balance_failed`,
/// `sd->cache_nice_tries`, and which release's `migrate_util` case.
#[derive(Clone, Copy, Debug)]
pub(super) struct DetachSd {
    pub failed: u32,
    pub cache_nice_tries: u32,
    pub release: Release,
}

/// `can_migrate_task()`, fair.c v6.8 8905-8991 (no `LBF_DST_PINNED` retry, no NUMA
/// balancing, no throttled pairs): task `t`, `running` on the source, in an active
/// balance (`LBF_ACTIVE_LB`) or not. A per-CPU kthread is passed over first, before
/// the affinity test, so it neither sets `LBF_SOME_PINNED` nor clears
/// `LBF_ALL_PINNED` (8921-8923, "Disregard pcpu kthreads; they are where they need
/// to be."; 9bcb959d05ee, "sched/fair: Ignore percpu threads for imbalance pulls",
/// posted April 2021 after v5.12: from v5.13).
pub(super) fn can_migrate_task<S: DetachSrc>(
    s: &S,
    env: &mut LbEnv,
    sd: DetachSd,
    t: u32,
    running: bool,
    active: bool,
) -> bool {
    if sd.release >= Release::new(5, 13) && s.per_cpu_kthread(t) {
        return false;
    }
    if !s.allowed(t) {
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
    !s.hot(t) || sd.failed > sd.cache_nice_tries
}

/// `detach_one_task()`, fair.c v6.8 9010-9033, for `active_load_balance_cpu_stop()`
/// (`LBF_ACTIVE_LB`): the first task from `cfs_tasks`' tail that
/// `can_migrate_task()` allows, moved.
pub(super) fn detach_one_task<S: DetachSrc>(
    s: &mut S,
    env: &mut LbEnv,
    sd: DetachSd,
    tasks: Vec<(u32, bool)>,
) -> Option<u32> {
    for (t, running) in tasks {
        if can_migrate_task(s, env, sd, t, running, true) {
            s.detach(t);
            return Some(t);
        }
    }
    None
}

/// `task_hot()`, fair.c v6.8 8800-8839, given what it reads (a fair task of normal
/// policy, no CACHE_HOT_BUDDY, `sysctl_sched_migration_cost` 0.5 ms): `smt`, the
/// domain shares CPU capacity; `cookie_match`, `sched_core_cookie_match()` on the
/// destination; `since_ran`, `rq_clock_task(src) - p->se.exec_start` in ns, `None`
/// when `exec_start` is 0 (new, or migrated and not run since: the whole uptime).
pub(super) fn task_hot(smt: bool, cookie_match: bool, since_ran: Option<u64>) -> bool {
    if smt {
        return false;
    }
    if !cookie_match {
        return true;
    }
    since_ran.is_some_and(|d| d < MIGRATION_COST_NS)
}

/// `detach_tasks()`, fair.c v6.8 9041-9175, with `load_balance()`'s `more_balance`
/// loop around it (11327-11359): walk the source's `tasks` (from `cfs_tasks`' tail,
/// with whether each runs), at most `loop_max`, moving those `can_migrate_task()`
/// allows while the imbalance lasts (decremented per migration type); newidle stops
/// after one (CONFIG_PREEMPTION, an assumption: distribution kernels build
/// PREEMPT_DYNAMIC). A task passed over goes to the list's head (`list_move()`), so
/// a walk longer than the list meets it again. Returns the tasks moved.
///
/// 6.1 to 6.9 (b0defa7ae03e, "sched/fair: Make sure to try to detach at least one
/// movable task"; reverted by 2feab2492deb, in 6.10 and 6.9.10): `loop_max` stops
/// the walk only once a task could run on the destination (`!LBF_ALL_PINNED`), so
/// a list whose tasks are all pinned away (or per-CPU kthreads) is walked round to
/// `loop_break` (`LBF_NEED_BREAK`, 9079-9084), and again from `more_balance` while
/// `env.loop < busiest->nr_running` (11354-11359; busiest's lock dropped and taken
/// again in between, which takes no time here): each pass over a task moves it to
/// the head, so the list ends rotated. Before 6.1 and from 6.10 `loop_max` stops it
/// whatever the flags (v6.12.19 9615-9617), and `loop_break` (= `loop_max` at most)
/// is never passed.
pub(super) fn detach_tasks<S: DetachSrc>(
    s: &mut S,
    env: &mut LbEnv,
    sd: DetachSd,
    tasks: Vec<(u32, bool)>,
) -> Vec<u32> {
    let mut moved = Vec::new();
    if s.nr_running() <= 1 {
        env.all_pinned = false;
        return moved;
    }
    if env.imbalance <= 0 {
        return moved;
    }
    let loop_max = NR_MIGRATE.min(s.nr_running());
    let wraps = sd.release >= Release::new(6, 1) && sd.release < Release::new(6, 10);
    let mut loop_break = NR_MIGRATE;
    let failed = sd.failed;
    let mut lp = 0u32;
    // `cfs_tasks` from its tail: the front is `list_last_entry()`, a task passed
    // over goes to the back (the list's head).
    let mut ring: VecDeque<(u32, bool)> = tasks.into();
    while let Some(&(t, running)) = ring.front() {
        if env.idle != CpuIdle::NotIdle && s.nr_running() <= 1 {
            break;
        }
        lp += 1;
        if lp > loop_max && !(wraps && env.all_pinned) {
            break;
        }
        if lp > loop_break {
            // LBF_NEED_BREAK: back from more_balance, the same task first.
            loop_break += NR_MIGRATE;
            if lp < s.nr_running() {
                continue;
            }
            break;
        }
        if !can_migrate_task(s, env, sd, t, running, false) {
            s.skip(t);
            ring.rotate_left(1);
            continue;
        }
        match env.migration_type {
            MigrationType::Load => {
                let load = s.load(t).max(1);
                // LB_MIN: skip tiny loads unless balancing failed before.
                if load < 16 && failed == 0 {
                    s.skip(t);
                    ring.rotate_left(1);
                    continue;
                }
                if (load >> failed.min(63)) as i64 > env.imbalance {
                    s.skip(t);
                    ring.rotate_left(1);
                    continue;
                }
                env.imbalance -= load as i64;
            }
            MigrationType::Util => {
                let util = s.util(t);
                // 6.8 on (3af7524b1419, "Use all little CPUs for CPU-bound
                // workloads", fair.c v6.8 9121): `shr_bound(util,
                // nr_balance_failed)`, as migrate_load has; before, the whole
                // util (fair.c v6.5 8801, v6.6.9 8998: `if (util >
                // env->imbalance)`).
                let shift = if sd.release >= Release::new(6, 8) {
                    failed.min(63)
                } else {
                    0
                };
                if (util >> shift) as i64 > env.imbalance {
                    s.skip(t);
                    ring.rotate_left(1);
                    continue;
                }
                env.imbalance -= util as i64;
            }
            MigrationType::Task => env.imbalance -= 1,
        }
        ring.pop_front();
        s.detach(t);
        moved.push(t);
        if env.idle == CpuIdle::NewlyIdle || env.imbalance <= 0 {
            break;
        }
    }
    moved
}
