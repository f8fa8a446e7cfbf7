//! v6.12's delayed dequeue (`delayed.rs`): a task that blocks while not eligible
//! stays queued until its pick dequeues it (DELAY_ZERO clipping its lag) or a
//! wake-up requeues it on its CPU without a CPU selection; 6.8 has none of it.

use super::record::{MigrateReason, RecordConfig, RecordKind, Recorder};
use super::tests::{quiet_sim, task_on};
use super::*;
use crate::topology::presets;
use crate::workload::{Dist, Op};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const PRESET: &str = "xeon-smt-8";
const A: u32 = 0;
const B: u32 = 1;

/// Task A runs 1 ms, sleeps `sleep_us`, runs 1 ms and exits; task B is a 100 ms
/// hog pinned to CPU 0. A may run on CPUs 0-7 if `a_free`, else only on CPU 0 (an
/// idle CPU's balancing may pull a delayed task, as `can_migrate_task()` allows);
/// both start queued on CPU 0. B's first deadline is pushed 10 ms out, so A runs
/// first and B keeps the CPU for about 10 ms. A blocks at vruntime 1 ms beside B at
/// 0: not eligible. CPUs 1-7 stay idle.
fn a_blocks_beside_hog(patches: &str, sleep_us: u64, a_free: bool) -> Simulator {
    a_blocks_beside_hog_with(patches, sleep_us, a_free, 0)
}

/// [`a_blocks_beside_hog`] with both tasks of core-scheduling `cookie` (0: none).
fn a_blocks_beside_hog_with(patches: &str, sleep_us: u64, a_free: bool, cookie: u64) -> Simulator {
    let n = presets::machine(PRESET).unwrap().nr_cpus();
    let ms = |x: u64| Dist::Fixed { ns: x * 1_000_000 };
    let sleep = Dist::Fixed {
        ns: sleep_us * 1000,
    };
    let a = vec![Op::Run(ms(1)), Op::Sleep(sleep), Op::Run(ms(1)), Op::Exit];
    let b = vec![Op::Run(ms(100)), Op::Exit];
    let cpus: Vec<u32> = if a_free { (0..8).collect() } else { vec![0] };
    let tasks = vec![task_on(n, &cpus, cookie, a), task_on(n, &[0], cookie, b)];
    let mut sim = quiet_sim(PRESET, patches, CpuMask::full(n), 200, tasks);
    for t in [A, B] {
        if let Loc::Queued(src) = sim.tasks[t as usize].loc {
            if src != 0 {
                sim.migrate_queued(t, src, 0, 0, MigrateReason::Periodic);
            }
        }
    }
    assert_eq!(sim.tasks[A as usize].loc, Loc::Queued(0));
    assert_eq!(sim.tasks[B as usize].loc, Loc::Queued(0));
    sim.tasks[B as usize].deadline += 10_000_000;
    sim
}

/// Steps `sim` until `done` holds, failing past `limit`.
fn step_until(sim: &mut Simulator, limit: SimTime, done: impl Fn(&Simulator) -> bool) {
    while !done(sim) {
        assert!(sim.step(), "the run ended: {:?}", sim.error);
        assert!(sim.error.is_none(), "{:?}", sim.error);
        assert!(sim.now <= limit, "not by {limit:?}");
    }
}

fn blocked_or_delayed(sim: &Simulator) -> bool {
    sim.tasks[A as usize].asleep()
}

/// v6.12: A blocks not eligible and stays queued on CPU 0 (in its queue and
/// `nr_running`, blocked for its program), B runs; at B's deadline the pick takes A,
/// finishes its dequeue with DELAY_ZERO (its positive lag clipped to 0) and runs B
/// again, long before A's timer.
#[test]
fn an_ineligible_blocker_stays_queued_until_its_pick() {
    let mut sim = a_blocks_beside_hog("6.12", 50_000, false);
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(0));
    assert_eq!(sim.tasks[A as usize].block, Block::Sleep);
    assert!(sim.cpus[0].queue.contains(&A));
    step_until(&mut sim, SimTime::from_ms(3), |s| {
        s.tasks[B as usize].loc == Loc::Running(0)
    });
    assert_eq!(sim.state.rqs[0].nr_running, 2, "B running, A delayed");
    assert_eq!(sim.metrics.delayed_dequeues, 1);
    // Until the pick that dequeues it: its lag then, before DELAY_ZERO.
    let mut lag_at_pick = None;
    while sim.tasks[A as usize].loc == Loc::Delayed(0) {
        let avg = sim.avg_vruntime(0);
        lag_at_pick = Some(avg - sim.tasks[A as usize].vruntime);
        assert!(sim.step() && sim.error.is_none(), "{:?}", sim.error);
        assert!(sim.now < SimTime::from_ms(40), "A never picked");
    }
    assert_eq!(
        sim.tasks[A as usize].loc,
        Loc::Blocked,
        "dequeued at a pick"
    );
    assert!(
        sim.now > SimTime::from_ms(5),
        "B kept the CPU until its deadline"
    );
    assert!(!sim.cpus[0].queue.contains(&A));
    assert_eq!(sim.tasks[B as usize].loc, Loc::Running(0));
    assert_eq!(sim.state.rqs[0].nr_running, 1);
    assert!(
        lag_at_pick.unwrap() > 0,
        "eligible when picked: {lag_at_pick:?}"
    );
    assert_eq!(sim.tasks[A as usize].vlag, 0, "DELAY_ZERO clips the lag");
    // It sleeps on and its timer wakes it: an ordinary wake-up.
    step_until(&mut sim, SimTime::from_ms(60), |s| {
        s.tasks[A as usize].loc != Loc::Blocked
    });
    assert_eq!(sim.metrics.wake_delayed, 0);
}

/// `h_nr_delayed` (fair.c v6.12.19 5498, 5520; pelt.c 320-324): while A is delayed
/// on CPU 0 beside B running, the CPU's load_avg counts both (level `load.weight`,
/// 2048) and its runnable_avg only B (`h_nr_running - h_nr_delayed`, 1024), so
/// `cpu_runnable()`, the balancer's `group_runnable`, falls behind `cpu_load()`; the
/// pick that dequeues A lowers both levels alike. 6.11 has no delayed task: the two
/// stay one signal.
#[test]
fn a_delayed_task_is_not_runnable_for_the_cpus_runnable_avg() {
    for patches in ["6.11", "6.12"] {
        let mut sim = a_blocks_beside_hog(patches, 50_000, false);
        step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
        let delayed = patches == "6.12";
        assert_eq!(sim.tasks[A as usize].loc == Loc::Delayed(0), delayed);
        assert_eq!(sim.cpus[0].nr_delayed, delayed as u32, "{patches}");
        // Some ms on (B keeps the CPU until about 11 ms), CPU 0's averages brought
        // to now.
        step_until(&mut sim, SimTime::from_ms(10), |s| {
            s.now >= SimTime::from_ms(5)
        });
        sim.update_cpu_pelt(0);
        let (load, runnable) = (sim.cpu_load(0), sim.cpu_runnable(0));
        if delayed {
            assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(0), "not picked yet");
            assert!(runnable + 50 < load, "runnable {runnable}, load {load}");
            assert_eq!(runnable, load - sim.cpus[0].delayed.avg());
        } else {
            assert_eq!(runnable, load, "{patches}");
        }
        step_until(&mut sim, SimTime::from_ms(40), |s| {
            s.tasks[A as usize].loc == Loc::Blocked
        });
        assert_eq!(sim.cpus[0].nr_delayed, 0, "{patches}");
    }
}

/// A task that blocks eligible leaves at once: A alone on CPU 0 is always eligible
/// (its vruntime is the average).
#[test]
fn an_eligible_blocker_leaves_at_once() {
    let n = presets::machine(PRESET).unwrap().nr_cpus();
    let a = vec![
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Sleep(Dist::Fixed { ns: 1_000_000 }),
        Op::Exit,
    ];
    let mut sim = quiet_sim(
        PRESET,
        "6.12",
        CpuMask::full(n),
        20,
        vec![task_on(n, &[0], 0, a)],
    );
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Blocked);
    assert!(sim.cpus[0].queue.is_empty());
    assert_eq!(sim.state.rqs[0].nr_running, 0);
    assert_eq!(sim.metrics.delayed_dequeues, 0);
}

/// A delayed task's wake-up (`ttwu_runnable()`): no CPU selection, it stays on CPU
/// 0 although CPUs 1-7 are idle; counted as a wake-up, not as a migration. Its lag
/// then is negative (B has run 0.2 ms of A's 1 ms lead): no new placement.
#[test]
fn a_delayed_wakee_stays_on_its_cpu() {
    let mut sim = a_blocks_beside_hog("6.12", 200, true);
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(0));
    let v = sim.tasks[A as usize].vruntime;
    step_until(&mut sim, SimTime::from_ms(3), |s| {
        !s.tasks[A as usize].asleep()
    });
    assert_eq!(
        sim.tasks[A as usize].loc,
        Loc::Queued(0),
        "requeued where it was"
    );
    assert_eq!(
        sim.tasks[A as usize].vruntime, v,
        "negative lag: not placed again"
    );
    assert!(sim.tasks[A as usize].vlag < 0);
    assert_eq!(sim.metrics.wake_delayed, 1);
    assert_eq!(sim.metrics.wakeups, 1);
    assert_eq!(sim.metrics.migrations_wakeup, 0);
    assert_eq!(
        sim.tasks[B as usize].loc,
        Loc::Running(0),
        "B within its slice"
    );
}

/// DELAY_ZERO on a wake-up (`requeue_delayed_entity()`): A, delayed, sleeps until
/// B's run has made it eligible (positive lag); the wake-up places it again with no
/// lag, at the average of the others (B's vruntime), a slice to its deadline.
#[test]
fn a_delayed_wakee_with_positive_lag_is_placed_at_the_average() {
    let mut sim = a_blocks_beside_hog("6.12", 5_000, false);
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(0));
    let v = sim.tasks[A as usize].vruntime;
    // B's vruntime as last charged: requeue_delayed_entity() runs no update_curr().
    let mut b_charged = 0;
    while sim.tasks[A as usize].asleep() {
        b_charged = sim.tasks[B as usize].vruntime;
        assert!(sim.step() && sim.error.is_none(), "{:?}", sim.error);
        assert!(sim.now < SimTime::from_ms(8), "A not woken");
    }
    let a = &sim.tasks[A as usize];
    assert_eq!(a.loc, Loc::Queued(0));
    assert!(b_charged > v, "B ran past A: A's lag was positive");
    assert_eq!(a.vlag, 0);
    assert_eq!(a.vruntime, b_charged, "placed at the others' average");
    assert_eq!(a.deadline, a.vruntime + sim.slice_ns);
    assert_eq!(sim.metrics.wake_delayed, 1);
}

/// 6.8 has no delayed dequeue: A leaves CPU 0 as it blocks, and its wake-up selects
/// an idle CPU.
#[test]
fn v6_8_dequeues_at_once_and_selects_at_wake_up() {
    let mut sim = a_blocks_beside_hog("6.8", 200, true);
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Blocked);
    assert!(!sim.cpus[0].queue.contains(&A));
    step_until(&mut sim, SimTime::from_ms(3), |s| {
        !s.tasks[A as usize].asleep()
    });
    assert_eq!(
        sim.metrics.migrations_wakeup, 1,
        "{:?}",
        sim.tasks[A as usize].loc
    );
    assert_eq!(sim.metrics.delayed_dequeues + sim.metrics.wake_delayed, 0);
}

/// The balancer may move a delayed task (`can_migrate_task()` has no
/// `sched_delayed` test in v6.12.19): it arrives delayed, its CPU is the new one,
/// its util_est joins neither CPU, and the new CPU's pick finishes its dequeue.
#[test]
fn a_delayed_task_moves_delayed_and_its_new_cpu_dequeues_it() {
    let mut sim = a_blocks_beside_hog("6.12", 50_000, true);
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(0));
    let est0 = sim.cpus[0].util_est;
    sim.migrate_queued(A, 0, 2, 2, MigrateReason::NewIdle);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(2));
    assert_eq!(sim.tasks[A as usize].last_cpu, 2, "set_task_cpu()");
    assert_eq!(sim.cpus[0].util_est, est0);
    assert_eq!(sim.cpus[2].util_est, 0);
    assert_eq!(sim.state.rqs[2].nr_running, 1);
    sim.check_invariants().unwrap();
    step_until(&mut sim, SimTime::from_ms(4), |s| {
        s.tasks[A as usize].loc == Loc::Blocked
    });
    assert!(sim.cpus[2].queue.is_empty());
    assert_eq!(sim.state.rqs[2].nr_running, 0);
    assert_eq!(sim.tasks[A as usize].vlag, 0, "eligible alone: no lag");
}

/// Core scheduling's core-wide pick dequeues a delayed task as `schedule()`'s does:
/// the same run with both tasks of one cookie.
#[test]
fn the_core_wide_pick_finishes_a_delayed_dequeue() {
    let mut sim = a_blocks_beside_hog_with("6.12", 50_000, false, 1);
    assert!(sim.core_sched);
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(0));
    step_until(&mut sim, SimTime::from_ms(40), |s| {
        s.tasks[A as usize].loc == Loc::Blocked
    });
    assert!(sim.now > SimTime::from_ms(5), "at B's deadline's pick");
    assert!(!sim.cpus[0].queue.contains(&A));
    assert_eq!(sim.tasks[B as usize].loc, Loc::Running(0));
    assert_eq!(sim.tasks[A as usize].vlag, 0);
}

/// A delayed task's wake-up is recorded (`record_requeue()`): a `Wake` record of path
/// `WakePath::Requeue` on its own CPU, nothing probed, numbered as every wake-up; a
/// capture asked for it has nothing to capture and says so. A's wake-up is its
/// timer's, from interrupt context on CPU 0. 6.8 wakes A through the selection: an
/// ordinary record, captured.
#[test]
fn a_delayed_wakees_requeue_is_recorded() {
    use super::record::NO_TASK;
    use crate::wakeup::WakePath;
    for patches in ["6.8", "6.12"] {
        let mut sim = a_blocks_beside_hog(patches, 200, true);
        let rc = RecordConfig {
            capture_wake: vec![1],
            ..RecordConfig::default()
        };
        sim.rec = Some(Box::new(Recorder::new(&rc, 2)));
        step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
        step_until(&mut sim, SimTime::from_ms(3), |s| {
            !s.tasks[A as usize].asleep()
        });
        let wakes: Vec<_> = sim.recording().unwrap().wakes().copied().collect();
        assert_eq!(wakes.len(), 1, "{patches}: {wakes:?}");
        let w = wakes[0];
        assert_eq!((w.seq, w.wakee, w.waker), (1, A, NO_TASK), "{patches}");
        if patches == "6.12" {
            assert_eq!(w.path, WakePath::Requeue);
            assert_eq!((w.waker_cpu, w.prev_cpu, w.cpu, w.probed), (0, 0, 0, 0));
            assert_eq!(w.queue, super::record::QueueKind::Local);
            assert!(sim.captured_wakes().is_empty());
            assert_eq!(sim.requeued_captures(), &[1]);
        } else {
            assert_ne!(w.path, WakePath::Requeue);
            assert_eq!(sim.captured_wakes().len(), 1);
            assert!(sim.requeued_captures().is_empty());
        }
    }
}

/// A newidle pass that pulls a delayed task picks again (`pick_next_task_fair()`'s
/// `goto again` after `sched_balance_newidle()` returns > 0, fair.c v6.12.19
/// 9011-9026): the pick dequeues the delayed task on its new CPU (A ends blocked,
/// its CPU the puller's) and, with nothing left, the CPU goes idle. The run is
/// [`a_blocks_beside_hog`]'s with a third task C pinned to CPU 2 that runs 1.8 ms
/// and exits: CPU 2's `schedule()` after C's exit runs the newidle pass, 0.2 ms
/// after A delayed on CPU 0 (not `task_hot()`: A last ran 0.2 ms ago < 0.5 ms... so
/// the pass skips it unless it has failed before; the test asserts only on a pull
/// by the newidle pass, whichever pass it is).
#[test]
fn a_newidle_pass_that_pulls_a_delayed_task_picks_again() {
    let n = presets::machine(PRESET).unwrap().nr_cpus();
    let ms = |x: u64| Dist::Fixed { ns: x * 1_000_000 };
    let a = vec![Op::Run(ms(1)), Op::Sleep(ms(50)), Op::Run(ms(1)), Op::Exit];
    let b = vec![Op::Run(ms(100)), Op::Exit];
    let c = vec![Op::Run(Dist::Fixed { ns: 1_800_000 }), Op::Exit];
    let all: Vec<u32> = (0..8).collect();
    let tasks = vec![
        task_on(n, &all, 0, a),
        task_on(n, &[0], 0, b),
        task_on(n, &[2], 0, c),
    ];
    let mut sim = quiet_sim(PRESET, "6.12", CpuMask::full(n), 200, tasks);
    for t in [A, B] {
        if let Loc::Queued(src) = sim.tasks[t as usize].loc {
            if src != 0 {
                sim.migrate_queued(t, src, 0, 0, MigrateReason::Periodic);
            }
        }
    }
    sim.tasks[B as usize].deadline += 10_000_000;
    sim.rec = Some(Box::new(Recorder::new(&RecordConfig::default(), 3)));
    step_until(&mut sim, SimTime::from_ms(3), blocked_or_delayed);
    assert_eq!(sim.tasks[A as usize].loc, Loc::Delayed(0));
    step_until(&mut sim, SimTime::from_ms(30), |s| {
        s.tasks[A as usize].loc != Loc::Delayed(0)
    });
    let pulls: Vec<_> = sim
        .recording()
        .unwrap()
        .records
        .iter()
        .filter(|r| matches!(r.kind, RecordKind::Migrate { task: A, .. }))
        .map(|r| r.kind)
        .collect();
    assert!(
        matches!(
            pulls[..],
            [RecordKind::Migrate {
                from: 0,
                to: 2,
                reason: MigrateReason::NewIdle,
                ..
            }]
        ),
        "{pulls:?}"
    );
    assert_eq!(
        sim.tasks[A as usize].loc,
        Loc::Blocked,
        "dequeued by the pick"
    );
    assert_eq!(sim.tasks[A as usize].last_cpu, 2);
    assert!(sim.cpus[2].queue.is_empty());
    assert_eq!(sim.state.rqs[2].nr_running, 0);
    assert!(
        !matches!(sim.cpus[2].mode, Mode::Running),
        "not running A: {:?}",
        sim.cpus[2].mode
    );
    sim.check_invariants().unwrap();
}
