//! The busiest runqueue's tasks, the model's `detach_tasks()` / `detach_one_task()`
//! (`balance/detach.rs`, over [`DetachSrc`]) against the transcription
//! (detach_kernel.rs) on random source runqueues: per task whether it is a per-CPU
//! kthread, may run on the destination, runs, when it last ran, whether its core
//! cookie matches, its load and util; the domain's failures and `cache_nice_tries`,
//! whether it shares CPU capacity, the idle type, migration type and imbalance.
//! Both sides give the tasks detached in order, `LBF_ALL_PINNED` /
//! `LBF_SOME_PINNED`, the imbalance left and the `cfs_tasks` order after the walk
//! (the model's `skip()` is the kernel's `list_move()` to the head).
//!
//! Releases: v6.5 (`can_migrate_task()` 8585-8671, `detach_tasks()` 8721-8855:
//! `migrate_util` compares the whole util), v6.12.19 (`task_hot()` 9332-9377,
//! `can_migrate_task()` 9437-9527, `detach_tasks()` 9579-9715, `sched_balance_rq()`
//! 11750-12023: the `loop_max` break without the LBF_ALL_PINNED exception, and
//! `goto more_balance` on LBF_NEED_BREAK whatever `env.loop` is; `sched_task_hot`
//! feeds only schedstats). `detach_one_task()` and `task_hot()` are the same in the
//! three (v6.5 also counts the `last` buddy, which neither side keeps).
//!
//! Left out, as the model leaves them out (docs/fidelity.md, "Simplified or left
//! out"): the `LBF_DST_PINNED` retry (a task pinned away from the destination is
//! never drawn allowed elsewhere in its group, so the branch that records
//! `new_dst_cpu` is not reached), NUMA balancing (`migrate_degrades_locality()` is
//! -1), CACHE_HOT_BUDDY, bandwidth throttling (`throttled_lb_pair()`), misfit, and
//! other classes (`nr_running` is the CFS tasks). The running task is drawn at the
//! head of `cfs_tasks`, where the model puts it (`cfs_tasks_from_tail()`); in the
//! kernel a task enqueued after it was picked comes before it, which moves only the
//! list's order, not what is detached, as long as `nr_running` ≤ `loop_max`.

use std::collections::VecDeque;

use super::super::super::detach::{self, DetachSd, DetachSrc};
use super::detach_kernel::{self as dk, DetachEnv, Task, REACH};
use super::kernel::{Fair, IdleType, MIGRATE_LOAD, MIGRATE_TASK, MIGRATE_UTIL};
use super::RELEASES;
use crate::release::Release;
use crate::rng::Rng;
use crate::sim::balance::lb::{CpuIdle, LbEnv, MigrationType};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// A drawn source runqueue and balance.
struct Draw {
    tasks: Vec<Task>,
    /// `cfs_tasks`, head first; the running task (if any) at the head.
    list: Vec<usize>,
    curr: Option<usize>,
    clock: u64,
    smt: bool,
    failed: u32,
    cache_nice_tries: u32,
    idle: IdleType,
    migration_type: u8,
    imbalance: i64,
    active: bool,
}

fn draw(r: &mut Rng) -> Draw {
    let mut d = |m: u64| r.below(m);
    let n = match d(16) {
        0 => 33 + d(8) as usize,
        1 => d(2) as usize,
        _ => 2 + d(8) as usize,
    };
    let clock = 600_000_000_000 + d(1_000_000_000);
    let pinned_odds = [0, 2, 8, 100][d(4) as usize];
    let all_pinned = d(8) == 0;
    let kthread_one = d(3) == 0;
    let hot_ns = [100_000, 480_000, 499_999, 500_000, 2_000_000][d(5) as usize];
    let tasks: Vec<Task> = (0..n)
        .map(|i| {
            let exec_start = match d(4) {
                0 => 0,
                1 => clock - d(hot_ns),
                _ => clock - d(3_000_000),
            };
            let load = match d(4) {
                0 => d(20),
                1 => 1024,
                _ => d(2048),
            };
            Task {
                per_cpu_kthread: kthread_one && i == 0,
                allowed: !(all_pinned || (pinned_odds > 0 && d(pinned_odds) == 0)),
                allowed_in_dst_group: false,
                exec_start,
                cookie_match: d(10) != 0,
                h_load: load,
                util_est: if d(3) == 0 { load } else { d(1025) },
            }
        })
        .collect();
    let mut list: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        list.swap(i, d(i as u64 + 1) as usize);
    }
    let curr = (n > 0 && d(4) != 0).then(|| list[0]);
    let migration_type = [MIGRATE_LOAD, MIGRATE_UTIL, MIGRATE_TASK][d(3) as usize];
    let imbalance = match migration_type {
        MIGRATE_TASK => [0, 1, 1, 2, 3, 5][d(6) as usize],
        _ if d(8) == 0 => 0,
        _ => 1 + d(3000) as i64,
    };
    Draw {
        tasks,
        list,
        curr,
        clock,
        smt: d(5) == 0,
        failed: [0, 0, 1, 2, 3, 5, 70][d(7) as usize],
        cache_nice_tries: [0, 1, 2][d(3) as usize],
        idle: [
            IdleType::CpuNotIdle,
            IdleType::CpuIdle,
            IdleType::CpuNewlyIdle,
        ][d(3) as usize],
        migration_type,
        imbalance,
        active: d(6) == 0,
    }
}

/// What a walk did, on either side.
#[derive(Debug, PartialEq)]
struct Walk {
    detached: Vec<usize>,
    all_pinned: bool,
    some_pinned: bool,
    imbalance: i64,
    /// `cfs_tasks` after, head first.
    list: Vec<usize>,
}

fn kernel_walk(fair: Fair, s: &Draw, reach: &mut [u64; REACH]) -> Walk {
    let mut env = DetachEnv {
        fair,
        sd_share_cpucapacity: s.smt,
        nr_balance_failed: s.failed,
        cache_nice_tries: s.cache_nice_tries,
        idle: if s.active { IdleType::CpuIdle } else { s.idle },
        migration_type: s.migration_type,
        imbalance: s.imbalance,
        flags: if s.active { dk::LBF_ACTIVE_LB } else { 0 },
        loop_: 0,
        loop_max: 0,
        loop_break: 32,
        tasks: &s.tasks,
        cfs_tasks: s.list.iter().copied().collect(),
        src_nr_running: s.tasks.len() as u32,
        src_curr: s.curr,
        clock_task: s.clock,
        detached: Vec::new(),
        reach: [0; REACH],
    };
    if s.active {
        let p = env.detach_one_task();
        env.detached.extend(p);
    } else {
        env.more_balance();
    }
    for (a, b) in reach.iter_mut().zip(env.reach) {
        *a += b;
    }
    Walk {
        detached: env.detached,
        all_pinned: env.flags & dk::LBF_ALL_PINNED != 0,
        some_pinned: env.flags & dk::LBF_SOME_PINNED != 0,
        imbalance: env.imbalance,
        list: env.cfs_tasks.into_iter().collect(),
    }
}

/// The model's side of the source runqueue.
struct Mock<'a> {
    s: &'a Draw,
    nr_running: u32,
    list: VecDeque<usize>,
}

impl DetachSrc for Mock<'_> {
    fn nr_running(&self) -> u32 {
        self.nr_running
    }
    fn per_cpu_kthread(&self, t: u32) -> bool {
        self.s.tasks[t as usize].per_cpu_kthread
    }
    fn allowed(&self, t: u32) -> bool {
        self.s.tasks[t as usize].allowed
    }
    fn hot(&self, t: u32) -> bool {
        let k = &self.s.tasks[t as usize];
        let since = (k.exec_start != 0).then(|| self.s.clock - k.exec_start);
        detach::task_hot(self.s.smt, k.cookie_match, since)
    }
    fn load(&self, t: u32) -> u64 {
        self.s.tasks[t as usize].h_load
    }
    fn util(&self, t: u32) -> u64 {
        self.s.tasks[t as usize].util_est
    }
    fn skip(&mut self, t: u32) {
        self.list.retain(|&q| q != t as usize);
        self.list.push_front(t as usize);
    }
    fn detach(&mut self, t: u32) {
        self.list.retain(|&q| q != t as usize);
        self.nr_running -= 1;
    }
}

fn model_walk(release: Release, s: &Draw) -> Walk {
    let idle = match (s.active, s.idle) {
        (true, _) | (false, IdleType::CpuIdle) => CpuIdle::Idle,
        (false, IdleType::CpuNotIdle) => CpuIdle::NotIdle,
        (false, IdleType::CpuNewlyIdle) => CpuIdle::NewlyIdle,
    };
    let mut env = LbEnv::new(0, 0, 0, idle);
    env.imbalance = s.imbalance;
    env.migration_type = match s.migration_type {
        MIGRATE_LOAD => MigrationType::Load,
        MIGRATE_UTIL => MigrationType::Util,
        _ => MigrationType::Task,
    };
    let sd = DetachSd {
        failed: s.failed,
        cache_nice_tries: s.cache_nice_tries,
        release,
    };
    let mut m = Mock {
        s,
        nr_running: s.tasks.len() as u32,
        list: s.list.iter().copied().collect(),
    };
    let tasks: Vec<(u32, bool)> = s
        .list
        .iter()
        .rev()
        .map(|&t| (t as u32, Some(t) == s.curr))
        .collect();
    let detached = if s.active {
        detach::detach_one_task(&mut m, &mut env, sd, tasks)
            .into_iter()
            .collect()
    } else {
        // load_balance(): "env.flags |= LBF_ALL_PINNED", then detach_tasks() when
        // busiest->nr_running > 1 (lb/mod.rs).
        env.all_pinned = true;
        if m.nr_running > 1 {
            detach::detach_tasks(&mut m, &mut env, sd, tasks)
        } else {
            Vec::new()
        }
    };
    Walk {
        detached: detached.into_iter().map(|t| t as usize).collect(),
        all_pinned: env.all_pinned,
        some_pinned: env.some_pinned,
        imbalance: env.imbalance,
        list: m.list.into_iter().collect(),
    }
}

/// The model's walk over the busiest runqueue's tasks agrees with the transcription
/// of `detach_tasks()` / `detach_one_task()` on every drawn runqueue, per release.
#[test]
fn detach_tasks_agrees_with_a_transcription_of_fair_c() {
    let mut bad = Vec::new();
    let mut reach = [0u64; REACH];
    let mut states = 0u64;
    for (ri, &(rel, fair)) in RELEASES.iter().enumerate() {
        let release: Release = rel.parse().unwrap();
        for case in 0..20_000u64 {
            let mut r = Rng::new(0x5eed_0039 ^ (case << 8) ^ ri as u64);
            let s = draw(&mut r);
            let want = kernel_walk(fair, &s, &mut reach);
            let got = model_walk(release, &s);
            states += 1;
            if want != got && bad.len() < 5 {
                bad.push(format!(
                    "{rel} case {case}: {} tasks, curr {:?}, active {}, {:?}, type {}, \
                     imbalance {}, failed {}/{}, smt {}\n kernel {want:?}\n model  {got:?}",
                    s.tasks.len(),
                    s.curr,
                    s.active,
                    s.idle,
                    s.migration_type,
                    s.imbalance,
                    s.failed,
                    s.cache_nice_tries,
                    s.smt
                ));
            }
        }
    }
    assert!(bad.is_empty(), "disagreements:\n{}", bad.join("\n"));
    // Every branch of the walk is taken (per-CPU kthread, pinned, running, active,
    // cold, hot forced by failures, hot, LB_MIN, load and util too big, detached,
    // newidle's one task, imbalance reached, source down to one, loop_max, and
    // LBF_NEED_BREAK).
    assert!(reach.iter().all(|&n| n > 20), "{reach:?} of {states}");
    eprintln!("{reach:?} of {states}");
}

/// A per-CPU kthread queued on the busiest CPU is passed over before the affinity
/// test (fair.c v6.8 8921-8923, from v5.13): it sets no `LBF_SOME_PINNED` (which
/// would mark the parent's `sgc->imbalance` while imbalance is left) and leaves
/// `LBF_ALL_PINNED` alone; in v5.12 it is one more pinned task. A kworker queued
/// behind the running task, a one-task imbalance.
#[test]
fn a_per_cpu_kthread_is_not_a_pinned_task() {
    let task = |per_cpu_kthread, allowed| Task {
        per_cpu_kthread,
        allowed,
        allowed_in_dst_group: false,
        exec_start: 0,
        cookie_match: true,
        h_load: 1024,
        util_est: 1024,
    };
    let s = Draw {
        tasks: vec![task(true, false), task(false, true)],
        list: vec![1, 0],
        curr: Some(1),
        clock: 600_000_000_000,
        smt: false,
        failed: 0,
        cache_nice_tries: 1,
        idle: IdleType::CpuIdle,
        migration_type: MIGRATE_TASK,
        imbalance: 1,
        active: false,
    };
    let mut reach = [0; REACH];
    let want = kernel_walk(Fair::V6_8, &s, &mut reach);
    assert!(!want.some_pinned && !want.all_pinned, "{want:?}");
    for rel in ["5.13", "6.8", "6.12"] {
        let got = model_walk(rel.parse().unwrap(), &s);
        assert_eq!(got, want, "{rel}");
    }
    let old = model_walk(Release::new(5, 12), &s);
    assert!(old.some_pinned && !old.all_pinned, "5.12: {old:?}");
}
