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

/// A newidle pass drops its own lock for the domains (fair.c v6.8 12346) and takes
/// it again at its end (12385): a remote waker that takes CPU 0's lock for 1 ms once
/// `update_blocked_averages(this_cpu)` (12349, 9416) has let go of it, while the
/// pass is in its domains, delays the pass's end (which pulls nothing: both tasks on
/// CPU 1 cache hot) until it lets go; without the waker the pass is short. (The
/// waker's take, at a later instant than the pass's start, is booked first: the
/// pass's own takes before it fit in the gap, `cost::RqLock`.)
#[test]
fn a_newidle_pass_retakes_its_own_lock() {
    let pass_ns = |waker: bool| {
        let mut sim = two_on_cpu1();
        for t in 0..2 {
            let task = &mut sim.tasks[t];
            (task.last_cpu, task.last_ran, task.exec_start_zero) =
                (1, SimTime::from_us(4_900), false);
        }
        let after_uba = sim.cost.params.rq_lock_hold_ns + 10;
        if waker {
            let (now, cost) = (sim.now.ns(), &sim.cost);
            let took = sim.cpus[0]
                .lock
                .acquire(cost, CpuId(5), now + after_uba, 1_000_000);
            assert_eq!(took.0, 0);
        }
        assert_eq!(sim.newidle_balance(0), None, "nothing pulled");
        (sim.cpus[0].newidle_cost_ns, after_uba)
    };
    let ((alone, _), (behind, after_uba)) = (pass_ns(false), pass_ns(true));
    assert!(
        alone > after_uba && alone < 100_000,
        "the pass alone: {alone} ns"
    );
    assert!(
        behind >= after_uba + 1_000_000,
        "behind: {behind} ns, alone {alone}"
    );
}

/// A wake-up cuts CPU 0's newidle pass short (`rq->ttwu_pending`, fair.c v6.8
/// 12378-12380): the pass's retake of its own lock (12385) is at the cut, not at the
/// end it planned, so the switch to the wakee is not held until then. With the
/// `rq-lock` term on, the wakee's 1 ms burst ends before the planned end + 1 ms.
#[test]
fn a_cut_pass_switches_to_the_wakee_before_its_planned_end() {
    use super::newidle::{pass_sim, run_to_pass};
    // Tasks 3 and 4 block at once on CPU 0 after task 2's exit: the wakee is the one
    // that did not run last there, so schedule() switches (and takes the lock).
    let mut sim = pass_sim(2);
    assert!(sim.cost.params.terms.rq_lock);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let ends = sim.cpus[0].newidle_ends.clone();
    assert!(ends.len() >= 2, "{ends:?}");
    let planned_end = exit + *ends.last().unwrap();
    let wakee = if sim.cpus[0].last_task == 3 { 4 } else { 3 };
    sim.wake(wakee, None, 0, crate::wakeup::WakeFlags::NONE);
    let mut t = sim.now;
    while sim.tasks[wakee as usize].loc != Loc::Running(0) {
        t += 100;
        assert!(sim.run_until(t), "{:?}", sim.error);
        assert!(t < planned_end + 1_000_000, "the wakee did not run");
    }
    let burst_end = sim.cpus[0].burst_end;
    assert!(
        burst_end < planned_end + 1_000_000,
        "the wakee's burst ends at {burst_end:?}, the pass planned {planned_end:?}"
    );
}

/// A newidle pass that pulls charges its time once: to the pulled task's debt
/// (`newidle.rs`), not again as schedule()'s wait for the own lock that the pass's
/// `attach_tasks()` and retake held (`busy_until_ns`). The task's first burst is
/// its 100 ms, the pass and the context switch.
#[test]
fn a_newidle_pull_charges_its_pass_once() {
    let mut sim = two_on_cpu1();
    let mut probe = two_on_cpu1();
    let t = probe.newidle_balance(0).expect("CPU 0 pulls");
    let pass = probe.tasks[t as usize].debt_ns;
    assert!(pass > 0);
    let now = sim.now;
    sim.schedule(0);
    assert_eq!(sim.tasks[t as usize].loc, Loc::Running(0));
    let p = &sim.cost.params;
    let total = sim.cpus[0].burst_end.since(now);
    let switch = total - 100_000_000 - pass;
    assert!(
        switch <= p.ctx_switch_ns + p.ctx_switch_mm_ns,
        "switch {switch} ns after a pass of {pass} ns"
    );
}

/// The stopper's lock time (src's and the target's locks) is src's, once, before
/// the task src switches to: charged to that task's burst, not waited for again in
/// schedule() nor left in `stolen_ns` for a later burst. CPU 1 runs task 0 or 1 with
/// the other queued; the stopper an active balance of CPU 0 queued moves one.
#[test]
fn the_stoppers_time_is_charged_once_before_src_schedules() {
    let mut sim = two_on_cpu1();
    sim.schedule(1);
    sim.now += 1_000;
    sim.cpus[1].stolen_ns = 0;
    sim.balance.push_cpu[1] = Some(0);
    let now = sim.now;
    let probe = {
        let mut p = two_on_cpu1();
        p.schedule(1);
        p.now += 1_000;
        let outer = p.lb_pass_begin();
        let work = p.lb_hold_ns(1);
        p.lb_rq_lock(1, 1, work);
        p.lb_rq_lock(1, 0, work);
        p.lb_pass_end(outer)
    };
    sim.active_load_balance_cpu_stop(1);
    assert!(
        (0..2).any(|t| sim.tasks[t].loc == Loc::Queued(0)),
        "a task moved"
    );
    assert_eq!(sim.cpus[1].mode, Mode::Running);
    assert_eq!(sim.cpus[1].stolen_ns, 0, "charged to the burst");
    let p = &sim.cost.params;
    let total = sim.cpus[1].burst_end.since(now);
    // At most the 100 ms run, the interrupt, the stopper's locks and the switch.
    let most = 100_000_000 + p.ipi_recv_ns + probe + p.ctx_switch_ns + p.ctx_switch_mm_ns;
    assert!(
        total <= most,
        "{total} ns, at most {most} (the stopper's {probe} ns once)"
    );
}

/// `stop_one_cpu_nowait()` wakes busiest's stopper after the balance lets go of
/// busiest's lock (fair.c v6.8 11465-11470): in the LLC, `ttwu_queue_cond()` says no
/// (busiest runs a task) and `ttwu_queue()` takes busiest's lock for
/// `ttwu_do_activate()` (core.c v6.8 4054-4057). Two hogs on the two threads of
/// xeon-smt-8's core 0 (one LLC), idle dst balancing the level spanning them with
/// `nr_balance_failed` high: the pass's locks are `need_active_balance()`'s (the
/// rq lines from src) and the wake-up's enqueue hold (the lines already dst's),
/// after any holder of src's lock; the stopper runs an IPI after them. With the `rq-lock` term off, neither costs.
#[test]
fn the_stoppers_wake_up_takes_busiests_lock_in_the_llc() {
    for terms in [CostTerms::ALL, CostTerms::all_but("rq-lock").unwrap()] {
        let mut sim = hogs("xeon-smt-8", "6.8", 0..8, 2, 300);
        sim.cost.params.terms = terms;
        let sib = sim.siblings[0][0];
        place(&mut sim, |t| if t == 0 { 0 } else { sib });
        run_to(&mut sim, 1);
        let dst = (0..8)
            .find(|&c| c != 0 && c != sib && sim.cpus[c as usize].mode != Mode::Running)
            .unwrap();
        let li = (0..sim.balance.n_levels(dst))
            .find(|&l| sim.balance.levels[dst as usize][l].span.contains(&0))
            .unwrap();
        sim.balance.dom[dst as usize][li].nr_balance_failed = 100;
        let kicked = sim.now;
        let (takes, waits) = (sim.metrics.lb_lock_takes, sim.metrics.lb_lock_wait_ns);
        let outer = sim.lb_pass_begin();
        let (moved, _) = sim.load_balance(dst, li, CpuIdle::Idle, dst);
        let lock_ns = sim.lb_pass_end(outer);
        assert!(moved.is_empty());
        let src = sim
            .balance
            .push_cpu
            .iter()
            .position(|&p| p == Some(dst))
            .expect("an active balance") as u32;
        assert!(!sim.balance.stopper_wakelist[src as usize], "one LLC");
        let p = &sim.cost.params;
        if terms.rq_lock {
            let m = &sim.metrics;
            assert_eq!(
                m.lb_lock_takes - takes,
                2,
                "need_active_balance()'s, the wake-up's"
            );
            let (lines, wait) = (hold(&sim, 0, src, dst), m.lb_lock_wait_ns - waits);
            assert_eq!(
                lock_ns,
                wait + lines + p.rq_lock_hold_ns,
                "the wake-up's lock"
            );
        } else {
            assert_eq!(lock_ns, 0);
        }
        let ipi = p.ipi_ns();
        while sim.balance.push_cpu[src as usize].is_some() {
            assert!(sim.step());
        }
        assert_eq!(
            sim.now.since(kicked),
            lock_ns + ipi,
            "an IPI after the wake-up"
        );
    }
}

/// `update_blocked_averages(this_cpu)`'s own-lock hold is in the first domain's
/// newidle cost from 5.16 (t0 before it, fair.c v6.8 12348-12349), in none before
/// (t0 per domain just before `load_balance()`, v5.15 10825, v5.12 10680). The
/// task group's line, whose writes differ with the release's rate limit, is off.
#[test]
fn update_blocked_averages_is_in_the_newidle_cost_from_5_16() {
    let cost = |rel: &str| {
        let mut sim = hogs("flat-16", rel, 0..16, 3, 100);
        sim.cost.params.terms.tg_line = false;
        place(&mut sim, |t| if t < 2 { 1 } else { 2 });
        sim.now = SimTime::from_ms(5);
        for t in 0..2 {
            let task = &mut sim.tasks[t];
            (task.last_cpu, task.last_ran, task.exec_start_zero) =
                (1, SimTime::from_us(4_900), false);
        }
        sim.balance.dom[0][0].max_newidle_lb_cost = 0;
        sim.cpus[0].avg_idle_ns = 1_000_000;
        assert_eq!(sim.newidle_balance(0), None, "nothing pulled");
        let c = sim.balance.dom[0][0].max_newidle_lb_cost;
        assert!(c > 0, "{rel}: the pass ran");
        (c, sim.cost.params.rq_lock_hold_ns)
    };
    for old in ["5.12", "5.15"] {
        let ((new, uba), (before, _)) = (cost("6.8"), cost(old));
        assert_eq!(new - before, uba, "{old}: the own lock's hold");
    }
}
