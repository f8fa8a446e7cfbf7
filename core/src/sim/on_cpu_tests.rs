//! A task woken while the CPU it blocked on is still switching away from it
//! (`p->on_cpu`, `Cpu::descheduling`): `try_to_wake_up()`'s wake-list shortcut or
//! its spin (core.c v6.8 4347-4360).

use super::record::MigrateReason;
use super::tests::{quiet_sim, task_on};
use super::*;
use crate::topology::presets;
use crate::wakeup::WakeFlags;
use crate::workload::{Dist, Op};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const PRESET: &str = "kunpeng920-4826";

/// Task 0 runs 1 ms on CPU 0 and sleeps (it may run on CPUs 0-7), beside task 1, a
/// hog pinned to CPU 0; CPUs 1-7 are idle. Returns the simulator at task 0's block,
/// inside CPU 0's switch to task 1, and when that switch ends.
fn blocked_in_switch(patches: &str) -> (Simulator, SimTime) {
    let n = presets::machine(PRESET).unwrap().nr_cpus();
    let sleeper = vec![
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Sleep(Dist::Fixed { ns: 50_000_000 }),
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Exit,
    ];
    let hog = vec![Op::Run(Dist::Fixed { ns: 100_000_000 }), Op::Exit];
    let cpus: Vec<u32> = (0..8).collect();
    let tasks = vec![task_on(n, &cpus, 0, sleeper), task_on(n, &[0], 0, hog)];
    let allowed = CpuMask::from_cpus(n, (0..8).map(CpuId));
    let mut sim = quiet_sim(PRESET, patches, allowed, 200, tasks);
    for t in 0..2 {
        if let Loc::Queued(src) = sim.tasks[t as usize].loc {
            if src != 0 {
                sim.migrate_queued(t, src, 0, 0, MigrateReason::Periodic);
            }
        }
    }
    let mut t = SimTime::ZERO;
    while sim.tasks[0].loc != Loc::Blocked {
        t += 10;
        assert!(sim.run_until(t), "{:?}", sim.error);
        assert!(t < SimTime::from_ms(10), "task 0 did not block");
    }
    assert_eq!(
        sim.tasks[1].loc,
        Loc::Running(0),
        "CPU 0 switched to the hog"
    );
    let (d, until) = sim.cpus[0].descheduling;
    assert_eq!(d, 0, "task 0 is still on_cpu");
    assert!(
        sim.now < until && until != SimTime::MAX,
        "inside the switch"
    );
    (sim, until)
}

/// v6.8: CPU 0 has a task to run (`rq->nr_running` 1), so `ttwu_queue_cond()`
/// refuses the wake list to a waker in its LLC (core.c v6.8 4020); the waker
/// spins on `p->on_cpu` until the switch ends (4360), then selects: an idle CPU,
/// not the busy CPU 0.
#[test]
fn a_waker_in_the_llc_spins_until_the_switch_ends_then_selects() {
    let (mut sim, until) = blocked_in_switch("6.8");
    let now = sim.now;
    sim.wake(0, None, 3, WakeFlags::NONE);
    assert_eq!(sim.metrics.wake_on_cpu_spin, 1);
    assert_eq!(sim.metrics.wake_on_cpu_spin_ns, until.since(now));
    assert_eq!(sim.metrics.wake_on_cpu, 0);
    assert!(
        matches!(sim.tasks[0].loc, Loc::Queued(c) if c != 0),
        "{:?}",
        sim.tasks[0].loc
    );
}

/// v5.12: the shortcut passes `WF_ON_CPU`, and `ttwu_queue_cond()` takes the wake
/// list while the descheduling task's CPU has at most one task (core.c v5.12
/// `(wake_flags & WF_ON_CPU) && cpu_rq(cpu)->nr_running <= 1`): task 0 goes back
/// to CPU 0, behind the hog, without a selection and without a spin.
#[test]
fn before_6_0_a_task_still_on_cpu_goes_back_behind_the_one_task_there() {
    let (mut sim, _) = blocked_in_switch("5.12");
    sim.wake(0, None, 3, WakeFlags::NONE);
    assert_eq!(sim.metrics.wake_on_cpu, 1);
    assert_eq!(sim.metrics.wake_on_cpu_spin, 0);
    assert_eq!(sim.tasks[0].loc, Loc::WakeList(0));
}

/// Once the switch has ended, `p->on_cpu` is clear: no spin, no shortcut.
#[test]
fn after_the_switch_the_task_is_not_on_cpu() {
    let (mut sim, until) = blocked_in_switch("6.8");
    assert!(sim.run_until(until));
    // The wake-up comes at the switch's end (no event of its own there).
    sim.now = until;
    sim.wake(0, None, 3, WakeFlags::NONE);
    assert_eq!(sim.metrics.wake_on_cpu + sim.metrics.wake_on_cpu_spin, 0);
    assert!(matches!(sim.tasks[0].loc, Loc::Queued(c) if c != 0));
}
