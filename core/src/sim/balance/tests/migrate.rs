//! Which tasks a balance may move (`migrate.rs`): `task_hot()` and `detach_tasks()`.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// `task_hot()` after a migration: the kernel zeroes `se->exec_start` when a task is
/// enqueued on a CPU other than its last (`ENQUEUE_MIGRATED`, enqueue_entity(), fair.c
/// v6.8 lines 5304-5306), so `rq_clock_task() - exec_start` (line 8836) exceeds
/// `sysctl_sched_migration_cost` until it runs again. flat-16 (6.8): task 0 last ran
/// on CPU 1 100 µs ago and is queued there (hot); moved to CPU 2, it is cold.
#[test]
fn a_migrated_task_is_not_cache_hot() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 2, 100);
    place(&mut sim, |_| 1);
    sim.now = SimTime::from_ms(5);
    let t = &mut sim.tasks[0];
    (t.last_cpu, t.last_ran, t.exec_start_zero) = (1, SimTime::from_us(4_900), false);
    let env = super::lb::LbEnv {
        src: 1,
        ..super::lb::LbEnv::new(3, 3, 0, CpuIdle::Idle)
    };
    assert!(sim.task_hot(&env, 0), "ran on its CPU 100 us ago");
    sim.migrate_queued(0, 1, 2, 2, crate::sim::record::MigrateReason::Periodic);
    let env = super::lb::LbEnv { src: 2, ..env };
    assert!(!sim.task_hot(&env, 0), "migrated, not run since");
}

/// `detach_tasks()` walks `rq->cfs_tasks` from the tail, and a task goes to the head
/// when it is enqueued (`account_entity_enqueue()`, fair.c v6.8 line 3578) or picked
/// (line 8487), not when it last ran: flat-16 (6.8), task 0 queued on CPU 1 first
/// (it last ran 100 µs ago), task 1 enqueued after it (woken, it last ran 4 ms ago).
/// The tail is task 0, the one a one-task imbalance moves.
#[test]
fn detach_tasks_walks_cfs_tasks_from_the_least_recently_queued() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 2, 100);
    place(&mut sim, |_| 2);
    place(&mut sim, |_| 1);
    assert!(sim.cfs_mru[0] < sim.cfs_mru[1], "task 0 queued first");
    sim.now = SimTime::from_ms(5);
    sim.tasks[0].last_ran = SimTime::from_us(4_900);
    sim.tasks[1].last_ran = SimTime::from_ms(1);
    let mut env = super::lb::LbEnv {
        imbalance: 1,
        all_pinned: true,
        src: 1,
        ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
    };
    assert_eq!(sim.detach_tasks(&mut env), vec![0]);
}

/// `detach_task()` → `deactivate_task()` → `dequeue_entity()` charges the source's
/// running task first (`update_curr()`, fair.c v6.8 5361) and only then takes the
/// moved task's lag (`update_entity_lag()`, 5379: `avg_vruntime() - vruntime`), as
/// `enqueue_entity()` does before `place_entity()` on the destination (5275, the
/// session 29 change). kunpeng920-4826 (6.8): two hogs on CPU 1, one running, one
/// queued; 1 ms passes with no update of the running one; the balancer moves the
/// queued one to CPU 2. (REVIEW s29: fails on 5518587, `migrate_queued()` reads a
/// stale `avg_vruntime()`.)
#[test]
fn a_moved_tasks_lag_is_taken_after_the_source_is_charged() {
    let mut sim = pinned_hogs(&[1, 1], 100);
    while sim.cpus[1].mode != Mode::Running {
        assert!(sim.step());
    }
    let r = sim.cpus[1].curr as usize;
    let q = 1 - r;
    assert_eq!(sim.tasks[q].loc, Loc::Queued(1));
    sim.now = sim.cpus[1].last_update + 1_000_000;
    // The kernel's avg_vruntime() after update_curr(): the running task charged to now.
    let v_r = sim.tasks[r].vruntime + 1_000_000;
    let v_q = sim.tasks[q].vruntime;
    let lim = sim.lag_limit();
    let want = ((v_r + v_q).div_euclid(2) - v_q).clamp(-lim, lim);
    sim.migrate_queued(
        q as u32,
        1,
        2,
        2,
        crate::sim::record::MigrateReason::Periodic,
    );
    assert_eq!(
        sim.tasks[q].vlag, want,
        "vlag against avg_vruntime() of now"
    );
}

/// `detach_tasks()`'s `migrate_util` case: from 6.8 a task's util counts shifted
/// right by `sd->nr_balance_failed` (`shr_bound()`, fair.c v6.8 9121, 3af7524b1419),
/// so that a task bigger than the imbalance moves after failures; before 6.8 the
/// whole util must fit (fair.c v6.5 8801, v6.6.9 8998: `if (util > env->imbalance)
/// goto next;`). flat-16: two new tasks queued on CPU 1 (cold), one failure
/// recorded, an imbalance one less than the smaller util.
#[test]
fn migrate_util_relaxes_with_failures_only_from_6_8() {
    for (release, moves) in [("6.5", 0), ("6.6", 0), ("6.8", 1)] {
        let mut sim = hogs("flat-16", release, 0..16, 2, 100);
        place(&mut sim, |_| 1);
        sim.now = SimTime::from_ms(5);
        let utils: Vec<u64> = (0..2).map(|t| sim.task_util_est(t)).collect();
        let (lo, hi) = (utils[0].min(utils[1]), utils[0].max(utils[1]));
        assert!(hi / 2 < lo, "{release}: utils {utils:?}");
        sim.balance.dom[0][0].nr_balance_failed = 1;
        let mut env = super::lb::LbEnv {
            imbalance: lo as i64 - 1,
            migration_type: super::lb::MigrationType::Util,
            all_pinned: true,
            src: 1,
            ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
        };
        let moved = sim.detach_tasks(&mut env);
        assert_eq!(
            moved.len(),
            moves,
            "{release}: moved {moved:?}, utils {utils:?}"
        );
    }
}

/// PLACE_REL_DEADLINE (features.h v6.12.19 15, 82e9d0456e06, v6.12-rc1): the
/// balancer's `detach_task()` dequeues without `DEQUEUE_SLEEP`, so `dequeue_entity()`
/// keeps the deadline relative to the vruntime (fair.c v6.12.19 5581-5584) and the
/// destination's `place_entity()` restores it (5368-5372); 6.8 has no such feature
/// and `place_entity()` gives a whole fresh slice. flat-16: two hogs queued on CPU 1,
/// task 0 with 0.3 ms of its slice left, moved to CPU 2; its vruntime there is
/// placed by its lag either way.
#[test]
fn a_migrated_task_keeps_its_relative_deadline_only_from_6_12() {
    for release in ["6.8", "6.11", "6.12"] {
        let mut sim = hogs("flat-16", release, 0..16, 2, 100);
        place(&mut sim, |_| 1);
        let t = &mut sim.tasks[0];
        t.deadline = t.vruntime + 300_000;
        sim.migrate_queued(0, 1, 2, 2, crate::sim::record::MigrateReason::Periodic);
        assert_eq!(sim.tasks[0].loc, Loc::Queued(2), "{release}");
        let want = if release == "6.12" {
            300_000
        } else {
            sim.slice_ns
        };
        let t = &sim.tasks[0];
        assert_eq!(t.deadline - t.vruntime, want, "{release}");
    }
}

/// The kthread bound to each CPU of the run (`Noise::Default`'s "kworker") is a
/// per-CPU kthread to the balancer (`kthread_is_per_cpu()`, fair.c v6.8 8922) and to
/// the wake-up path (`is_per_cpu_kthread()`); the unbound daemons are not.
#[test]
fn the_noise_kworkers_are_per_cpu_kthreads() {
    let machine = presets::machine("flat-16").unwrap();
    let mut cfg = test_config(
        machine,
        CpuMask::from_cpus(16, (0..8).map(CpuId)),
        "6.8",
        Plan::to_completion(vec![hog(16, 0..8, 1)]),
        SimTime::from_ms(10),
    );
    cfg.noise = crate::workload::Noise::Default;
    let sim = Simulator::new(cfg).unwrap();
    let kthread: Vec<bool> = sim
        .views
        .iter()
        .map(|v| v.task.as_ref().unwrap().per_cpu_kthread)
        .collect();
    // The hog, a kworker per run CPU, then one daemon.
    let mut want = vec![false];
    want.extend([true; 8]);
    want.push(false);
    assert_eq!(kthread, want);
}
