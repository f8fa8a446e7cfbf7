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

/// A wakee on a CPU's wake list (`ttwu_queue_wakelist()`) is not on that runqueue
/// until `sched_ttwu_pending()` activates it (core.c v6.8 3885-3918, 4026-4035): it
/// is neither in `rq->nr_running` nor on `rq->cfs_tasks`. flat-16 (6.8): CPU 1 holds
/// task 0, queued, and task 1, just woken onto its wake list. `detach_tasks()` finds
/// one task there ("if (env->src_rq->nr_running <= 1) return 0", fair.c v6.8 9083-9091)
/// and `find_busiest_queue()` reads `rq->cfs.h_nr_running` = 1 (10806). Before, the
/// model counted and walked both, and moved task 0.
#[test]
fn the_balancer_does_not_see_a_wakee_still_on_the_wake_list() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 2, 100);
    place(&mut sim, |_| 1);
    sim.on_wakelist[1] = true;
    sim.update_rq(1, |rq| {
        rq.wakelist_queued = 1;
        rq.ttwu_pending = true;
    });
    sim.now = SimTime::from_ms(5);
    let mut env = super::lb::LbEnv {
        imbalance: 1,
        all_pinned: true,
        src: 1,
        ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
    };
    assert_eq!(sim.detach_tasks(&mut env), Vec::<u32>::new());
    assert_eq!(sim.cpus[1].queue.len(), 2);
    // Once the list is flushed, the same balance moves one of them.
    sim.sched_ttwu_pending(1);
    assert!(!sim.on_wakelist[1]);
    let mut env = super::lb::LbEnv {
        imbalance: 1,
        all_pinned: true,
        src: 1,
        ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
    };
    assert_eq!(sim.detach_tasks(&mut env).len(), 1);
}
