//! A newidle pass's run time (fair.c v6.8 12349-12384: the domains' `load_balance()`
//! with `rq->curr` still the task that blocked) and what cuts it short: a wake-up
//! onto the CPU (`this_rq->ttwu_pending`, from v5.13), a task put on its rq by a
//! balancer's move.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// `newidle_balance()` takes time even when it pulls nothing (fair.c v6.8
/// 12349-12384: the domains' `load_balance()` between `t0` and `t1`, with `rq->curr`
/// still the task that blocked): the CPU goes idle only after the pass, and until
/// then a waker does not see it idle (`idle_cpu()`, core.c 7429: `rq->curr !=
/// rq->idle`). Two hogs pinned to CPU 1 set `rd->overload` and leave CPU 0 nothing it
/// may pull when its own task exits.
#[test]
fn a_newidle_pass_that_pulls_nothing_delays_the_idle_entry() {
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    assert!(sim.balance.overload);
    let cost: u64 = sim.balance.dom[0]
        .iter()
        .map(|d| d.max_newidle_lb_cost)
        .sum();
    assert!(cost > 0, "the pass balanced every domain");
    assert!(
        !sim.state.rqs[0].idle_cpu(),
        "in the pass, CPU 0 is not idle"
    );
    assert_eq!(sim.cpus[0].mode, Mode::NewidlePass);
    assert!(sim.run_until(exit + cost));
    assert_eq!(sim.cpus[0].mode, Mode::Idle);
    assert_eq!(sim.cpus[0].idle_since, exit + cost);
    assert!(sim.state.rqs[0].idle_cpu());
    assert_eq!(sim.metrics.newidle_empty, 1);
    assert_eq!(sim.metrics.newidle_empty_ns, cost);
}

/// A wake-up onto a CPU in its newidle pass stops the pass after the domain it is
/// in (fair.c v6.8 12378-12380: `this_rq->ttwu_pending`), and the CPU runs the
/// wakee once its wake list's IPI is in, before the pass would have ended.
#[test]
fn a_wake_up_cuts_a_newidle_pass_short() {
    let mut sim = pass_sim(1);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    assert_eq!(sim.tasks[3].loc, Loc::Blocked);
    let ends = sim.cpus[0].newidle_ends.clone();
    assert!(ends.len() >= 2, "{ends:?}");
    // The last instant before the pass would have ended.
    let before_end = exit + (*ends.last().unwrap() - 1);
    sim.wake(3, None, 0, crate::wakeup::WakeFlags::NONE);
    assert_eq!(sim.tasks[3].loc, Loc::Queued(0));
    assert!(sim.run_until(before_end));
    assert_eq!(
        sim.tasks[3].loc,
        Loc::Running(0),
        "the wakee runs before the pass's end"
    );
    assert_eq!(sim.metrics.newidle_cut, 1);
}

/// A task woken while the CPU it blocked on is still in that schedule()'s newidle
/// pass is `p->on_cpu` there: `try_to_wake_up()` queues it on that CPU's wake list
/// without selecting a CPU (core.c v6.8 4347-4349, `ttwu_queue_cond()`: that CPU's
/// `nr_running` is 0), although other CPUs are idle.
#[test]
fn a_task_woken_during_its_cpus_newidle_pass_goes_back_to_that_cpu() {
    let (mut sim, _) = blocked_in_pass(50_000_000);
    assert!((2..8).all(|c| sim.state.rqs[c].idle_cpu()));
    // Woken from CPU 3 (CPU 0 has interrupts off in schedule()).
    sim.wake(2, None, 3, crate::wakeup::WakeFlags::NONE);
    assert_eq!(sim.tasks[2].loc, Loc::WakeList(0));
    assert_eq!(sim.metrics.wake_on_cpu, 1);
}

/// The task woken back onto the CPU still in its newidle pass does not run on in the
/// same `__schedule()`: it is on the wake list, not the rq, so
/// `pick_next_task_fair()` returns NULL, the CPU switches to the idle task
/// (`finish_task()` clears `p->on_cpu`, interrupts come on) and, once the list's IPI
/// has activated it, switches back (core.c v6.8 6722, 6758, 5301; 3885-3918): a context
/// switch, as for any task woken onto an idle CPU.
#[test]
fn a_task_woken_back_during_the_pass_is_switched_in_from_idle() {
    let (mut sim, mut t) = blocked_in_pass(50_000_000);
    let switches = sim.metrics.context_switches;
    sim.wake(2, None, 3, crate::wakeup::WakeFlags::NONE);
    run_task2_to(&mut sim, &mut t, Loc::Running(0), "run again");
    assert_eq!(
        sim.metrics.context_switches,
        switches + 1,
        "idle -> task 2 is a context switch"
    );
}

/// A wakee on the wake list of a CPU in its newidle pass stops the pass after the
/// domain in progress from v5.13 ("|| this_rq->ttwu_pending", fair.c v6.8
/// 12378-12380), whether or not the list's IPI is in; v5.12's pass has no such test
/// (fair.c 10699-10700) and runs to its end. Either way the wakee waits for its IPI
/// (taken as the pass ends, or in idle after it), never activated before it lands.
#[test]
fn a_wake_list_wakee_cuts_the_pass_from_5_13_only() {
    for (release, cuts) in [("6.8", true), ("5.12", false)] {
        let (mut sim, _) = blocked_in_pass_on(release, 50_000_000);
        let start = sim.cpus[0].newidle_start;
        let ends = pass_domain_ends(&sim);
        let cut = sim.metrics.newidle_cut;
        sim.wake(2, None, 3, crate::wakeup::WakeFlags::NONE);
        assert_eq!(sim.tasks[2].loc, Loc::WakeList(0), "{release}");
        let (woken, ipi_at) = (sim.now, sim.cpus[0].wakelist_ipi_at);
        while sim.cpus[0].mode == Mode::NewidlePass {
            assert!(sim.step(), "{release}");
            assert!(sim.error.is_none(), "{release}: {:?}", sim.error);
        }
        let first_end = ends.iter().find(|&&e| e >= woken.since(start)).unwrap();
        let pass_end = if cuts {
            *first_end
        } else {
            *ends.last().unwrap()
        };
        assert_eq!(sim.now, start + pass_end, "{release}: the pass's end");
        assert_eq!(sim.metrics.newidle_cut, cut + u64::from(cuts), "{release}");
        while sim.tasks[2].loc == Loc::WakeList(0) {
            assert!(sim.step(), "{release}");
            assert!(sim.error.is_none(), "{release}: {:?}", sim.error);
        }
        assert!(
            sim.now >= ipi_at,
            "{release}: activated before the IPI landed"
        );
    }
}

/// The run time of a newidle pass that pulled nothing is busy time of its CPU (as
/// that of a pass that pulls a task is, in the task's debt): the CPU is in
/// `__schedule()`, not in the idle task, until the pass is over.
#[test]
fn a_newidle_pass_is_busy_time() {
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let pass = *sim.cpus[0].newidle_ends.last().unwrap();
    let busy = sim.metrics.busy_ns[0];
    assert!(sim.run_until(exit + pass));
    assert_eq!(sim.cpus[0].mode, Mode::Idle);
    assert_eq!(sim.metrics.busy_ns[0], busy + pass);
}

/// Two wake-ups onto a CPU in its newidle pass (from CPU 3: the second joins the
/// wake list the first started) cut the one pass once, and the pass's run time is
/// counted to the cut.
#[test]
fn a_pass_cut_by_two_wake_ups_is_one_cut() {
    let mut sim = pass_sim(2);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let ends = sim.cpus[0].newidle_ends.clone();
    assert!(ends.len() >= 2, "{ends:?}");
    sim.wake(3, None, 3, crate::wakeup::WakeFlags::NONE);
    sim.wake(4, None, 3, crate::wakeup::WakeFlags::NONE);
    assert_eq!(sim.tasks[3].loc, Loc::WakeList(0));
    assert_eq!(sim.tasks[4].loc, Loc::WakeList(0));
    assert!(sim.run_until(exit + (*ends.last().unwrap() - 1)));
    assert_ne!(sim.cpus[0].mode, Mode::NewidlePass, "the pass was cut");
    assert_eq!(sim.metrics.newidle_empty, 1);
    assert_eq!(sim.metrics.newidle_cut, 1);
    assert!(sim.metrics.newidle_empty_ns < *ends.last().unwrap());
}

/// A CPU in its newidle pass is inside `__schedule()` until the `Resched` on its way
/// (`Mode::NewidlePass`), and what came in the pass, with interrupts off, is taken at
/// its end: a pass whose end has passed, or something held outside a pass, is an
/// inconsistent state that the invariants report.
#[test]
fn a_pass_ends_at_its_resched_and_holds_nothing_after_it_invariants() {
    let mut sim = pass_sim(0);
    run_to_pass(&mut sim, SimTime::from_ms(1));
    assert_eq!(sim.check_invariants(), Ok(()));
    let end = sim.cpus[0].newidle_resched_at;
    sim.cpus[0].newidle_resched_at = SimTime(sim.now.ns() - 1);
    let err = sim.check_invariants().unwrap_err();
    assert!(err.contains("newidle pass whose end"), "{err}");
    sim.cpus[0].newidle_resched_at = end;
    sim.cpus[0].newidle_held.tick = true;
    assert_eq!(sim.check_invariants(), Ok(()), "held in the pass");
    sim.cpus[0].mode = Mode::Waking;
    let err = sim.check_invariants().unwrap_err();
    assert!(err.contains("holds what came in a newidle pass"), "{err}");
}

/// A pass that a balancer's move cuts short ends as one that pulled: the task is on
/// the rq when `newidle_balance()` reaches its end (fair.c v6.8 12389-12410: "a task
/// could have been enqueued in the meantime ... pretend we pulled a task"), which
/// then clears `rq->idle_stamp` and does not `nohz_newidle_balance()`: no
/// `NOHZ_NEWILB_KICK` is left from it for a later idle entry (`do_idle()` →
/// `nohz_run_idle_balance()`, fair.c 12234-12246).
#[test]
fn a_pass_cut_by_a_move_leaves_no_newilb_kick_and_no_idle_stamp() {
    let mut sim = pass_sim(0);
    assert!(sim.run_until(SimTime::from_us(900)));
    // The pass's nohz_newidle_balance() sets NOHZ_NEWILB_KICK: a long avg_idle,
    // idle CPUs' blocked load due for an update.
    sim.cpus[0].avg_idle_ns = 1_000_000;
    sim.balance.nohz_has_blocked = true;
    sim.balance.nohz_next_blocked = 0;
    let exit = run_to_pass(&mut sim, SimTime::from_us(900));
    assert!(sim.balance.nohz_flags[0].contains(NohzFlags::NEWILB));
    let ends = sim.cpus[0].newidle_ends.clone();
    assert!(ends.len() >= 2, "{ends:?}");
    let hog = push_queued_hog_to_cpu0(&mut sim);
    let mut t = exit + 1;
    while sim.tasks[hog].loc != Loc::Running(0) {
        t += 100;
        assert!(sim.run_until(t), "{:?}", sim.error);
        assert!(t < exit + *ends.last().unwrap(), "the pass was cut");
    }
    assert!(
        !sim.balance.nohz_flags[0].contains(NohzFlags::NEWILB),
        "no NOHZ_NEWILB_KICK from a pass that ends with a task"
    );
    assert_eq!(sim.cpus[0].idle_stamp, None);
}
