//! The wake list is emptied by its IPI or by the idle loop, never by `__schedule()`
//! (`wakelist.rs`): `sched_ttwu_pending()` (core.c v6.8 3885-3918) runs from
//! `generic_smp_call_function_single_interrupt()` (smp.c v6.8 426-429) or from
//! `do_idle()`'s `flush_smp_call_function_queue()` (idle.c v6.8 339-340).

use super::record::{QueueKind, RecordConfig, RecordKind};
use super::test_support::step_while_at;
use super::ttwu_queue_tests::{
    curr_keeps_its_slice, remote_running_target, remote_running_target_with,
};
use super::*;
use crate::wakeup::WakeFlags;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// The hog `curr` keeps CPU `target` and `wakee` (both of
/// [`remote_running_target`]) goes on its wake list, woken from `cpu`, with an IPI
/// on its way. Returns the wake-up's instant.
fn wake_onto_the_list(sim: &mut Simulator, cpu: u32, target: u32) -> SimTime {
    let (curr, waker, wakee) = (0, 1, 2);
    curr_keeps_its_slice(sim, curr, target);
    sim.tasks[wakee as usize].vlag = 0;
    sim.tasks[wakee as usize].tokens += 1;
    sim.wake(wakee, Some(waker), cpu, WakeFlags::SYNC);
    assert_eq!(sim.tasks[wakee as usize].loc, Loc::WakeList(target));
    assert!(sim.state.rqs[target as usize].ttwu_pending);
    sim.now
}

/// Steps until task `t` is off `cpu`'s wake list; returns the instant.
fn run_until_activated(sim: &mut Simulator, t: u32, cpu: u32) -> SimTime {
    step_while_at(sim, t, Loc::WakeList(cpu))
}

/// A `schedule()` of a running CPU (here a preemption of its task) picks from the rq
/// alone (`__schedule()`, core.c v6.8 6638-6764, interrupts off from 6656): the
/// wakee on its wake list stays there until the list's IPI lands. Until session 30
/// every `schedule()` ran `sched_ttwu_pending()` first and activated it early.
#[test]
fn a_running_cpus_schedule_leaves_its_wake_list_to_the_ipi() {
    let (curr, wakee) = (0, 2);
    let (cpu, target) = (2, 30);
    let mut sim = remote_running_target(cpu, target);
    let t0 = wake_onto_the_list(&mut sim, cpu, target);
    sim.put_prev(target);
    sim.schedule(target);
    assert_eq!(sim.tasks[curr as usize].loc, Loc::Running(target));
    assert_eq!(
        sim.tasks[wakee as usize].loc,
        Loc::WakeList(target),
        "schedule() does not empty the list"
    );
    assert!(sim.state.rqs[target as usize].ttwu_pending);
    let at = run_until_activated(&mut sim, wakee, target);
    assert_eq!(at.since(t0), sim.cost.params.ipi_ns(), "as the IPI lands");
}

/// A CPU whose task leaves it with nothing on the rq but a wakee on its wake list:
/// `newidle_balance()` returns at once on `rq->ttwu_pending` (fair.c v6.8
/// 12305-12310; no `idle_stamp`, no pass), `__schedule()` switches to the idle task,
/// the CPU enters a C-state, and the list's IPI brings it out: the handler activates
/// the wakee, `do_idle()` leaves its loop and `schedule_idle()` runs it (idle.c v6.8
/// 258, 339-340), a context switch from idle.
#[test]
fn a_cpu_left_with_only_its_wake_list_goes_idle_until_the_ipi() {
    let (curr, wakee) = (0, 2u32);
    let (cpu, target) = (2, 30);
    let mut sim = remote_running_target(cpu, target);
    let t0 = wake_onto_the_list(&mut sim, cpu, target);
    let stamp = sim.cpus[target as usize].idle_stamp;
    let switches = sim.metrics.context_switches;
    // The hog leaves the CPU as a task that blocks does.
    sim.dequeue_curr(target, Loc::Blocked);
    sim.schedule(target);
    let c = &sim.cpus[target as usize];
    assert_eq!(c.mode, Mode::Idle, "idle, the list pending");
    assert_eq!(c.idle_stamp, stamp, "newidle_balance() returned at once");
    assert_eq!(sim.tasks[wakee as usize].loc, Loc::WakeList(target));
    let exit = sim.cost.params.idle_states[c.cstate as usize].exit_latency_ns;
    assert_eq!(
        run_until_activated(&mut sim, wakee, target).since(t0),
        sim.cost.params.ipi_ns() + exit,
        "once out of the C-state the IPI's handler runs"
    );
    assert_eq!(sim.tasks[wakee as usize].loc, Loc::Running(target));
    assert_eq!(sim.metrics.context_switches, switches + 1, "idle -> wakee");
    assert_eq!(sim.tasks[curr as usize].loc, Loc::Blocked);
}

/// The recorder keeps a wake-list wake-up's call (`RecordKind::Wake`, the kernel's
/// `sched_waking`, core.c v6.8 4266) at the call and its wakee's arrival on the rq
/// (`RecordKind::Arrive`) when `sched_ttwu_pending()` activates it, where the
/// kernel's `sched_wakeup` tracepoint fires (`ttwu_do_activate()` →
/// `ttwu_do_wakeup()`, 3776-3812).
#[test]
fn a_wake_list_wakees_arrival_is_recorded_when_it_is_activated() {
    let wakee = 2;
    let (cpu, target) = (2, 30);
    let mut sim = remote_running_target_with(cpu, target, Some(RecordConfig::default()));
    let t0 = wake_onto_the_list(&mut sim, cpu, target);
    let of_wakee = |sim: &Simulator| -> Vec<(u64, RecordKind)> {
        let r = &sim.rec.as_ref().expect("recording").rec;
        r.records
            .iter()
            .filter(|r| r.at_ns >= t0.ns())
            .filter(|r| match r.kind {
                RecordKind::Wake(w) => w.wakee == wakee,
                RecordKind::Arrive { task, .. } => task == wakee,
                _ => false,
            })
            .map(|r| (r.at_ns, r.kind))
            .collect()
    };
    let called = of_wakee(&sim);
    let [(at, RecordKind::Wake(w))] = called[..] else {
        panic!("the call alone so far: {called:?}");
    };
    assert_eq!((at, w.queue), (t0.ns(), QueueKind::WakelistIpi));
    let arrived = run_until_activated(&mut sim, wakee, target);
    assert_eq!(arrived.since(t0), sim.cost.params.ipi_ns());
    let arrive = RecordKind::Arrive {
        cpu: target as u16,
        task: wakee,
        seq: w.seq,
    };
    assert_eq!(of_wakee(&sim)[1..], [(arrived.ns(), arrive)]);
}
