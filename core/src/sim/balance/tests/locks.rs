//! The runqueue locks the balancer takes (`locks.rs`, session 34): in the FIFO of
//! each `cost::RqLock` with the remote wakers.

use super::*;
use crate::cost::CostTerms;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// flat-16 (6.8) at 5 ms: tasks 0 and 1 queued on CPU 1, task 2 on CPU 2, CPU 0 idle
/// with room for a newidle pass (CPU 1's lock last held by CPU 1, nothing run yet).
fn two_on_cpu1() -> Simulator {
    let mut sim = hogs("flat-16", "6.8", 0..16, 3, 100);
    place(&mut sim, |t| if t < 2 { 1 } else { 2 });
    sim.now = SimTime::from_ms(5);
    sim.balance.dom[0][0].max_newidle_lb_cost = 50_000;
    sim.cpus[0].avg_idle_ns = 1_000_000;
    sim
}

/// `load_balance()` of CPU 0's lowest domain, as a pass of its own starting now.
fn lb_pass(sim: &mut Simulator, idle: CpuIdle) -> Vec<u32> {
    let outer = sim.lb_pass_begin();
    let (moved, _) = sim.load_balance(0, 0, idle, 0);
    sim.lb_pass_end(outer);
    moved
}

/// The rq lock hold of a taker of CPU `cpu`'s lock last held by `prev`: the work
/// plus the rq lines pulled over.
fn hold(sim: &Simulator, work: u64, prev: u32, cpu: u32) -> u64 {
    work + sim.cost.params.rq_lines * sim.cost.c2c_ns(CpuId(prev), CpuId(cpu))
}

/// A newidle pull takes busiest's lock (`rq_lock_irqsave(busiest)`, fair.c v6.8
/// 11328) behind a remote waker holding it (here, for 1 ms from now): the pulled
/// task waits for the pass, the lock wait included. With the `rq-lock` term off
/// the waker's hold delays nothing.
#[test]
fn a_newidle_pull_waits_behind_a_remote_wakers_hold_on_busiest() {
    for terms in [CostTerms::ALL, CostTerms::all_but("rq-lock").unwrap()] {
        let debt = |waker: bool| {
            let mut sim = two_on_cpu1();
            sim.cost.params.terms = terms;
            if waker {
                let (now, cost) = (sim.now.ns(), &sim.cost);
                assert_eq!(
                    sim.cpus[1].lock.acquire(cost, CpuId(5), now, 1_000_000).0,
                    0
                );
            }
            let t = sim.newidle_balance(0).expect("CPU 0 pulls");
            assert!(t < 2 && sim.tasks[t as usize].loc == Loc::Queued(0));
            sim.tasks[t as usize].debt_ns
        };
        let (alone, behind) = (debt(false), debt(true));
        if terms.rq_lock {
            assert!(alone < 100_000, "the pass alone: {alone} ns");
            assert!(
                behind > 1_000_000 + alone / 2,
                "behind the waker: {behind} ns (alone {alone})"
            );
        } else {
            assert_eq!(behind, alone, "rq-lock off");
        }
    }
}

/// A remote waker (`ttwu_queue()` → `rq_lock()`) takes busiest's lock after a
/// periodic balance of CPU 0 that pulled from CPU 1 at the same instant: it waits
/// for the balancer's hold (the detach work and the rq lines CPU 0 pulled from CPU
/// 1), then pulls the lines from CPU 0. The wakers' lock is the balancer's.
#[test]
fn a_remote_waker_waits_behind_the_balancers_hold() {
    for terms in [CostTerms::ALL, CostTerms::all_but("rq-lock").unwrap()] {
        let mut sim = two_on_cpu1();
        sim.cost.params.terms = terms;
        let moved = lb_pass(&mut sim, CpuIdle::Idle);
        assert_eq!(moved.len(), 1, "one task pulled");
        let work = sim.cost.params.rq_lock_hold_ns;
        let (wait, held) = sim.take_remote_lock(5, 1);
        if terms.rq_lock {
            assert_eq!(wait, hold(&sim, work, 1, 0), "behind the balancer");
            assert_eq!(held, hold(&sim, work, 0, 5), "the lines from CPU 0");
        } else {
            assert_eq!((wait, held), (0, work), "rq-lock off");
        }
    }
}

/// `load_balance()` takes busiest's lock once `busiest->nr_running > 1`, before
/// `detach_tasks()` decides anything (fair.c v6.8 11319-11345): with both tasks on
/// CPU 1 cache hot (`task_hot()`, run there 100 µs ago) nothing moves, yet a waker
/// coming after the attempt waits behind its hold. With one task on CPU 1 the
/// balance never takes the lock.
#[test]
fn a_failed_attempt_still_takes_busiests_lock() {
    for hot in [true, false] {
        let mut sim = two_on_cpu1();
        if !hot {
            sim.migrate_queued(1, 1, 3, 3, crate::sim::record::MigrateReason::Periodic);
        }
        for t in 0..2 {
            let task = &mut sim.tasks[t];
            (task.last_cpu, task.last_ran, task.exec_start_zero) =
                (1, SimTime::from_us(4_900), false);
        }
        let moved = lb_pass(&mut sim, CpuIdle::Idle);
        assert!(moved.is_empty(), "nothing moves: {moved:?}");
        let work = sim.cost.params.rq_lock_hold_ns;
        let (wait, _) = sim.take_remote_lock(5, 1);
        if hot {
            assert_eq!(wait, hold(&sim, work, 1, 0), "the attempt held the lock");
        } else {
            assert_eq!(wait, 0, "busiest->nr_running is 1: no lock");
        }
    }
}

/// The stopper (`active_load_balance_cpu_stop()`, fair.c v6.8 11575-11651) takes
/// src's lock (`rq_lock_irq(busiest_rq)`), then, for the task it moved, the
/// target's (`attach_one_task()`, 9193-9201): wakers coming at that instant wait
/// behind each. CPU 1 (waking, two tasks queued) runs the stopper an active
/// balance of CPU 0 queued.
#[test]
fn the_stopper_takes_src_then_the_targets_lock() {
    let mut sim = two_on_cpu1();
    sim.balance.push_cpu[1] = Some(0);
    sim.active_load_balance_cpu_stop(1);
    assert_eq!(sim.balance.push_cpu[1], None, "the stopper ran");
    assert!(
        (0..2).any(|t| sim.tasks[t].loc == Loc::Queued(0)),
        "a task moved"
    );
    let work = sim.cost.params.rq_lock_hold_ns;
    assert_eq!(
        sim.take_remote_lock(5, 1).0,
        work,
        "src's own lock: no lines"
    );
    assert_eq!(
        sim.take_remote_lock(6, 0).0,
        work + hold(&sim, work, 0, 1),
        "after src's hold, the target's from CPU 1"
    );
}

/// A newidle pass drops its own lock for the domains but takes it again in
/// `update_blocked_averages(this_cpu)` (fair.c v6.8 12349, 9416) and at its end
/// (12385): a remote waker holding CPU 0's lock for 1 ms delays a pass that pulls
/// nothing (both tasks on CPU 1 cache hot) by that much, its run time included.
#[test]
fn a_newidle_pass_retakes_its_own_lock() {
    let pass_ns = |waker: bool| {
        let mut sim = two_on_cpu1();
        for t in 0..2 {
            let task = &mut sim.tasks[t];
            (task.last_cpu, task.last_ran, task.exec_start_zero) =
                (1, SimTime::from_us(4_900), false);
        }
        if waker {
            let (now, cost) = (sim.now.ns(), &sim.cost);
            sim.cpus[0].lock.acquire(cost, CpuId(5), now, 1_000_000);
        }
        assert_eq!(sim.newidle_balance(0), None, "nothing pulled");
        sim.cpus[0].newidle_cost_ns
    };
    let (alone, behind) = (pass_ns(false), pass_ns(true));
    assert!(alone > 0 && alone < 100_000, "the pass alone: {alone} ns");
    assert!(
        behind >= 1_000_000 + alone,
        "behind: {behind} ns, alone {alone}"
    );
}
