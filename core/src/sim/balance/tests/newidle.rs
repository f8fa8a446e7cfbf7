//! Newidle balancing (`newidle.rs`) and the `rq->avg_idle` that gates it.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Runs in 100 ns steps from `*t` until task 2 is at `loc`, which must come before
/// 2 ms (the tests' short task runs 1 ms).
fn run_task2_to(sim: &mut Simulator, t: &mut SimTime, loc: Loc, what: &str) {
    while sim.tasks[2].loc != loc {
        *t += 100;
        assert!(sim.run_until(*t), "{:?}", sim.error);
        assert!(*t < SimTime::from_ms(2), "task 2 did not {what}");
    }
}

/// The preset of the newidle-pass tests (8 CPUs of its first cluster used).
const PASS_PRESET: &str = "kunpeng920-4826";

/// A simulator whose CPU 0 will balance and find nothing: tasks 0 and 1 hog CPU 1
/// for 100 ms (one of them queued), task 2 runs 1 ms on CPU 0 and exits, and tasks
/// 3.. (`sleepers` of them) sleep 50 ms on CPU 0, then run 1 ms.
pub(super) fn pass_sim(sleepers: usize) -> Simulator {
    let n = presets::machine(PASS_PRESET).unwrap().nr_cpus();
    let mut sleeper = hog(n, 0..1, 1);
    sleeper.program = vec![
        Op::Sleep(Dist::Fixed { ns: 50_000_000 }),
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Exit,
    ];
    let mut specs = vec![hog(n, 1..2, 100), hog(n, 1..2, 100), hog(n, 0..1, 1)];
    specs.extend(std::iter::repeat_n(sleeper, sleepers));
    sim_of(PASS_PRESET, "6.8", 0..8, specs, 100)
}

/// Runs [`pass_sim`]'s simulator from `from` to task 2's exit, where CPU 0 is in its
/// newidle pass; returns the exit's instant.
pub(super) fn run_to_pass(sim: &mut Simulator, from: SimTime) -> SimTime {
    let mut t = from;
    run_task2_to(sim, &mut t, Loc::Exited, "exit");
    assert_eq!(
        sim.cpus[0].mode,
        Mode::NewidlePass,
        "CPU 0 is in its newidle pass"
    );
    sim.tasks[2].last_ran
}

/// CPU 1's stopper pushes its queued hog (task 0 or 1, its affinity widened first) to
/// A stats kick (`kick_ilb()` from a busy CPU's tick, idle CPUs' blocked load due)
/// whose IPI reaches CPU 0 1 ns after task 2's `exit`, inside its pass; runs to it.
fn stats_kick_into_pass(sim: &mut Simulator, exit: SimTime) {
    sim.balance.nohz_has_blocked = true;
    sim.balance.nohz_next_blocked = 0;
    sim.balance.nohz_flags[0] = NohzFlags::STATS;
    sim.queue
        .push(exit + 1, crate::sim::event::Event::NohzKick { cpu: 0 });
    assert!(sim.run_until(exit + 1));
}

/// Task 2 runs 1 ms on CPU 0, sleeps `sleep_ns` and runs 1 ms more, beside two hogs
/// on CPU 1 (tasks 0 and 1, which leave CPU 0 nothing to pull); returns the
/// simulator at task 2's block, CPU 0 in the newidle pass that follows, and the
/// instant [`run_task2_to`] reached.
fn blocked_in_pass(sleep_ns: u64) -> (Simulator, SimTime) {
    blocked_in_pass_on("6.8", sleep_ns)
}

/// [`blocked_in_pass`] under `patches`.
fn blocked_in_pass_on(patches: &str, sleep_ns: u64) -> (Simulator, SimTime) {
    let n = presets::machine(PASS_PRESET).unwrap().nr_cpus();
    let mut sleeper = hog(n, 0..8, 1);
    sleeper.program = vec![
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Sleep(Dist::Fixed { ns: sleep_ns }),
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Exit,
    ];
    let specs = vec![hog(n, 1..2, 100), hog(n, 1..2, 100), sleeper];
    let mut sim = sim_of(PASS_PRESET, patches, 0..8, specs, 100);
    place(&mut sim, |t| if t < 2 { 1 } else { 0 });
    let mut t = SimTime::from_ms(1);
    run_task2_to(&mut sim, &mut t, Loc::Blocked, "block");
    assert_eq!(
        sim.cpus[0].mode,
        Mode::NewidlePass,
        "CPU 0 is in its newidle pass"
    );
    (sim, t)
}

/// CPU 0's pass's domain ends (ns from its start): at least two domains, the first
/// ending after 1 ns, so that a cut after the first one shortens the pass.
fn pass_domain_ends(sim: &Simulator) -> Vec<u64> {
    let ends = sim.cpus[0].newidle_ends.clone();
    assert!(ends.len() >= 2 && ends[0] > 1, "{ends:?}");
    ends
}

/// The stopper an active balance from CPU 3 queued for CPU 0's task, woken 1 ns into
/// CPU 0's pass (which began at `exit`).
fn stopper_into_pass(sim: &mut Simulator, exit: SimTime) {
    sim.balance.push_cpu[0] = Some(3);
    sim.queue
        .push(exit + 1, crate::sim::event::Event::Stopper { cpu: 0 });
}

/// Runs `sim` to `until`, by when the stopper [`stopper_into_pass`] queued has run and
/// CPU 0 is in a second pass.
#[track_caller]
fn run_to_second_pass(sim: &mut Simulator, until: SimTime) {
    assert!(sim.run_until(until));
    assert_eq!(sim.balance.push_cpu[0], None, "the stopper ran");
    assert_eq!(
        sim.cpus[0].mode,
        Mode::NewidlePass,
        "a second pass, after the stopper"
    );
}

/// [`pass_sim`]'s CPU 0, as an active balance's `attach_one_task()` does; returns it.
fn push_queued_hog_to_cpu0(sim: &mut Simulator) -> usize {
    let n = presets::machine(PASS_PRESET).unwrap().nr_cpus();
    let hog = (0..2)
        .find(|&h| sim.tasks[h].loc == Loc::Queued(1))
        .unwrap();
    sim.views[hog].task.as_mut().unwrap().allowed = CpuMask::from_cpus(n, (0..8).map(CpuId));
    let active = crate::sim::record::MigrateReason::Active;
    sim.migrate_queued(hog as u32, 1, 0, 1, active);
    hog
}

/// newidle_balance() runs only when rq->avg_idle covers the lowest domain's
/// max_newidle_lb_cost (and rd->overload is set): with two cold tasks queued on
/// CPU 1, idle CPU 0 pulls one only when its average idle time is long enough.
#[test]
fn newidle_is_gated_by_max_newidle_lb_cost() {
    for (avg_idle, pulls) in [(1_000, false), (1_000_000, true)] {
        let mut sim = hogs("flat-16", "6.8", 0..16, 3, 100);
        place(&mut sim, |t| if t < 2 { 1 } else { 2 });
        sim.now = SimTime::from_ms(5);
        assert!(sim.balance.overload, "CPU 1 reached two tasks");
        sim.balance.dom[0][0].max_newidle_lb_cost = 50_000;
        sim.cpus[0].avg_idle_ns = avg_idle;
        let pulled = sim.newidle_balance(0);
        assert_eq!(pulled.is_some(), pulls, "avg_idle {avg_idle}");
        if let Some(t) = pulled {
            assert_eq!(sim.tasks[t as usize].loc, Loc::Queued(0));
            assert!(t < 2);
        }
    }
}

/// A wakee on the CPU's wake list (`rq->ttwu_pending`) makes `newidle_balance()`
/// return at once from v5.13 ("There is a task waiting to run", fair.c v6.8
/// 12305-12310, Rik van Riel's e5e678e4fea2): no `idle_stamp`, nothing pulled. v5.12's
/// has no such test (fair.c 10623-10700), nor has its `should_we_balance()` (fair.c
/// 9620-9621; v6.0's 792b9f65a568 added it): it balances as for any empty rq.
#[test]
fn a_pending_wake_list_skips_the_newidle_pass_from_5_13() {
    for (release, balances) in [("6.8", false), ("5.12", true)] {
        let mut sim = hogs("flat-16", release, 0..16, 3, 100);
        place(&mut sim, |t| if t < 2 { 1 } else { 2 });
        sim.now = SimTime::from_ms(5);
        assert!(sim.balance.overload, "CPU 1 reached two tasks");
        sim.balance.dom[0][0].max_newidle_lb_cost = 50_000;
        sim.cpus[0].avg_idle_ns = 1_000_000;
        sim.update_rq(0, |rq| rq.ttwu_pending = true);
        sim.cpus[0].idle_stamp = None;
        let pulled = sim.newidle_balance(0);
        assert_eq!(pulled.is_some(), balances, "{release}: pulled {pulled:?}");
        if !balances {
            assert_eq!(sim.cpus[0].idle_stamp, None, "{release}: not stamped");
        }
    }
}

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

/// `rq->avg_idle` is fed by wake-ups only (core.c v6.8 3819-3829): `newidle_balance()`
/// stamps the CPU (fair.c 12316), a CPU that then leaves idle for another reason (a
/// balancer's pull) keeps its average and its stamp, and the next wake-up onto it
/// averages in the whole time since the stamp (`update_avg()`: an eighth of the
/// difference), capped at twice `max_idle_balance_cost`, and clears the stamp.
#[test]
fn avg_idle_is_updated_by_wake_ups_only() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 1, 100);
    place(&mut sim, |_| 1);
    idle_rqs(&mut sim, 0..1);
    sim.now = SimTime::from_ms(5);
    sim.cpus[0].avg_idle_ns = 100_000;
    assert_eq!(sim.newidle_balance(0), None, "nothing to pull");
    assert_eq!(sim.cpus[0].idle_stamp, Some(SimTime::from_ms(5)));
    sim.enter_idle(0);
    // Leaving idle without a wake-up (the idle governor keeps its history).
    sim.now = SimTime::from_us(5_200);
    sim.cpus[0].mode = Mode::Waking;
    sim.leave_idle_accounting(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, 100_000, "no wake-up, no update");
    assert_eq!(sim.cpus[0].idle_stamp, Some(SimTime::from_ms(5)));
    // A wake-up 400 us after the stamp: 100 + (400 - 100) / 8 us.
    sim.now = SimTime::from_us(5_400);
    sim.update_avg_idle(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, 137_500);
    assert_eq!(sim.cpus[0].idle_stamp, None);
    sim.now = SimTime::from_us(6_000);
    sim.update_avg_idle(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, 137_500, "the stamp was used up");
    // The cap: twice max_idle_balance_cost.
    sim.cpus[0].idle_stamp = Some(SimTime::ZERO);
    sim.now = SimTime::from_ms(90);
    sim.update_avg_idle(0);
    let cap = 2 * sim.balance.max_idle_balance_cost(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, cap);
}

/// A sleep timer that expires on a CPU inside its newidle pass waits for the pass's
/// end: `__schedule()` runs with interrupts off (core.c v6.8 6656 to
/// `finish_task_switch()`), the pass included. Task 2 sleeps 1 us on CPU 0, whose
/// pass (rd->overload from two hogs pinned to CPU 1) is longer: its timer's
/// interrupt comes after the switch to idle, which `try_to_wake_up()` then finds
/// idle (and `p->on_cpu` clear): task 2 runs on CPU 0 again.
#[test]
fn a_sleep_timer_expiring_in_a_newidle_pass_fires_after_it() {
    let (mut sim, _) = blocked_in_pass(1_000);
    let blocked = sim.tasks[2].last_ran;
    let pass = *sim.cpus[0].newidle_ends.last().unwrap();
    assert!(pass > 1_000, "the pass outlasts the sleep");
    assert!(sim.run_until(blocked + (pass - 1)));
    assert_eq!(sim.tasks[2].loc, Loc::Blocked, "no interrupt in the pass");
    assert!(sim.run_until(blocked + pass));
    assert_eq!(sim.tasks[2].loc, Loc::Running(0));
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

/// A tick that expires on a CPU inside its newidle pass is taken after the pass,
/// from the idle task the CPU switched to (interrupts are off in `__schedule()`,
/// core.c v6.8 6656): `rq->idle_balance = idle_cpu()` holds, so it is not a busy
/// tick and `nohz_balancer_kick()` returns at once (fair.c v6.8 11860-11861): a CPU
/// still in `nohz.idle_cpus_mask` from its last idle period stays there.
#[test]
fn a_tick_in_a_newidle_pass_is_taken_from_idle_after_it() {
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let pass = *sim.cpus[0].newidle_ends.last().unwrap();
    assert!(pass > 1);
    // No busy tick since CPU 0 last stopped its tick in idle.
    sim.cpus[0].nohz_tick_stopped = true;
    sim.queue
        .push(exit + 1, crate::sim::event::Event::Tick { cpu: 0 });
    assert!(sim.run_until(exit + 1));
    assert!(sim.cpus[0].nohz_tick_stopped, "no tick in the pass");
    assert!(sim.run_until(exit + pass));
    assert_eq!(sim.cpus[0].mode, Mode::Idle);
    assert!(sim.cpus[0].nohz_tick_stopped, "the tick came from idle");
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

/// An ilb kick whose IPI reaches a CPU inside its newidle pass is taken at the
/// pass's end, when `finish_task_switch()` turns interrupts back on (core.c v6.8
/// 6656 `local_irq_disable()`, 5185, 5301-5302): `nohz_csd_func()` (core.c
/// 1198-1215) then finds the CPU in the idle task with nothing queued, and its
/// softirq runs the kick's stats pass (`_nohz_idle_balance()`, fair.c 12099-12196),
/// before `do_idle()`.
#[test]
fn an_ilb_kick_in_a_newidle_pass_is_taken_at_its_end() {
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let pass = *sim.cpus[0].newidle_ends.last().unwrap();
    assert!(pass > 1);
    stats_kick_into_pass(&mut sim, exit);
    assert!(
        sim.balance.nohz_flags[0].contains(NohzFlags::STATS),
        "the kick waits for interrupts to come back on"
    );
    assert_eq!(sim.balance.nohz_next_blocked, 0);
    assert!(sim.run_until(exit + pass));
    assert_eq!(sim.cpus[0].mode, Mode::Idle);
    assert!(sim.balance.nohz_flags[0].is_empty());
    assert!(
        sim.balance.nohz_next_blocked > 0,
        "the kick's stats pass ran at the pass's end"
    );
}

/// The kick held in a pass that a wake-up cuts short meets a CPU that switches to
/// the wakee: `nohz_csd_func()` finds it busy (`idle_cpu()` false, core.c v6.8
/// 1209-1210), drops the kick's flags and runs no pass; the IPI's receive is the
/// wakee's time.
#[test]
fn an_ilb_kick_in_a_cut_newidle_pass_is_dropped_on_the_wakee() {
    let mut sim = pass_sim(1);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let ends = sim.cpus[0].newidle_ends.clone();
    assert!(ends.len() >= 2, "{ends:?}");
    stats_kick_into_pass(&mut sim, exit);
    assert!(sim.balance.nohz_flags[0].contains(NohzFlags::STATS));
    sim.wake(3, None, 3, crate::wakeup::WakeFlags::NONE);
    let mut t = exit + 1;
    while sim.tasks[3].loc != Loc::Running(0) {
        t += 100;
        assert!(sim.run_until(t), "{:?}", sim.error);
        assert!(t < exit + *ends.last().unwrap(), "the wakee runs in time");
    }
    assert!(sim.run_until(t + 1));
    assert!(sim.balance.nohz_flags[0].is_empty(), "the kick was taken");
    assert_eq!(sim.balance.nohz_next_blocked, 0, "and ran no pass");
}

/// An active balance's stopper woken on a CPU inside its newidle pass (its task
/// blocked between the active balance and the stopper's wake-up here) is a task
/// queued meanwhile: on the rq (`nr_running`) or its wake list (`ttwu_pending`),
/// either way the pass stops after the domain it is in (fair.c v6.8 12378-12380),
/// and the stopper, of the stop class that `__pick_next_task()` takes first, runs
/// at the pass's end. It finds nothing to push (`busiest_rq->nr_running <= 1`,
/// itself; fair.c 11600-11601), and the CPU schedules again: another
/// `newidle_balance()` before it is idle.
#[test]
fn a_stopper_woken_in_a_newidle_pass_cuts_it_short() {
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let ends = pass_domain_ends(&sim);
    stopper_into_pass(&mut sim, exit);
    assert!(sim.run_until(exit + 1));
    assert_eq!(
        sim.cpus[0].mode,
        Mode::NewidlePass,
        "the pass goes on to its domain's end"
    );
    assert_eq!(sim.balance.push_cpu[0], Some(3), "the stopper has not run");
    run_to_second_pass(&mut sim, exit + ends[0]);
    assert_eq!(sim.metrics.newidle_cut, 1);
    assert_eq!(sim.metrics.newidle_empty, 2);
    assert!(
        sim.metrics.newidle_empty_ns < *ends.last().unwrap(),
        "the pass was cut"
    );
}

/// The tick a pass held, when a stopper ran at the pass's end, comes with `rq->curr`
/// the stopper, not the idle task: `idle_cpu()` stays false through the second pass
/// the stopper's switch starts (core.c v6.8 7429), and the tick is taken after it.
#[test]
fn a_tick_held_in_a_pass_a_stopper_cut_is_not_taken_from_idle() {
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let ends = pass_domain_ends(&sim);
    stopper_into_pass(&mut sim, exit);
    assert!(sim.run_until(exit + 1));
    sim.cpus[0].newidle_held.tick = true;
    run_to_second_pass(&mut sim, exit + ends[0]);
    assert!(
        !sim.state.rqs[0].curr_is_idle,
        "rq->curr is not the idle task in the second pass"
    );
    assert!(
        sim.cpus[0].newidle_held.tick,
        "the tick waits for the second pass's end"
    );
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

/// A remote `resched_curr()` of a CPU in its newidle pass finds `rq->curr` the task
/// that blocked, which does not poll: `set_nr_and_not_polling()` sets its
/// `TIF_NEED_RESCHED` and an IPI is sent (core.c v6.8 1045-1067); a second one
/// returns early (1052). The stopper of CPU 1 pushing a task to CPU 0
/// (`attach_one_task()` → `wakeup_preempt()`) sends it, and the pushed task, run at
/// the pass's end, receives it: its burst ends later by the receive than in the
/// same run without the IPI.
#[test]
fn a_remote_resched_of_a_cpu_in_its_pass_sends_one_ipi() {
    let pushed = |ipi: bool| {
        let mut sim = pass_sim(0);
        run_to_pass(&mut sim, SimTime::from_ms(1));
        assert!(
            sim.idle_resched_needs_ipi(0, Mode::NewidlePass),
            "the first sends one"
        );
        let hog = push_queued_hog_to_cpu0(&mut sim);
        assert!(
            !sim.idle_resched_needs_ipi(0, Mode::NewidlePass),
            "TIF_NEED_RESCHED is set on the task that blocked"
        );
        if !ipi {
            sim.cpus[0].newidle_held.ipi = false;
        }
        let cut = sim.cpus[0].newidle_resched_at;
        assert!(sim.run_until(cut));
        assert_eq!(sim.tasks[hog].loc, Loc::Running(0));
        (sim.cpus[0].burst_end, sim.cost.params.ipi_recv_ns)
    };
    let ((with, recv), (without, _)) = (pushed(true), pushed(false));
    assert_eq!(with, without + recv);
}

/// A pass of the idle task sends no resched IPI: a kick that found the idle CPU 0
/// polling set its `TIF_NEED_RESCHED` (`set_nr_if_polling()`), `do_idle()` left its
/// loop on it (idle.c v6.8 258-340) and `schedule_idle()`'s pick balances with
/// `rq->curr` the idle task, whose flag stays set until `__schedule()` clears it
/// after the pick (core.c 6723): a remote `resched_curr()` meanwhile returns early
/// (1052), unlike one of a pass whose `rq->curr` is the task that blocked.
#[test]
fn a_pass_of_the_idle_task_sends_no_resched_ipi() {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = vec![hog(n, 1..2, 100), hog(n, 1..2, 100), hog(n, 0..1, 1)];
    let mut sim = sim_of(preset, "6.8", 0..8, specs, 100);
    let mut t = SimTime::from_ms(1);
    run_task2_to(&mut sim, &mut t, Loc::Exited, "exit");
    assert_eq!(sim.cpus[0].mode, Mode::NewidlePass);
    assert!(
        sim.idle_resched_needs_ipi(0, Mode::NewidlePass),
        "the task that blocked is rq->curr"
    );
    let end = sim.cpus[0].newidle_resched_at;
    assert!(sim.run_until(end));
    assert_eq!(sim.cpus[0].mode, Mode::Idle);
    // A polled stats kick: the idle task schedules, and balances again.
    sim.balance.nohz_flags[0] = NohzFlags::STATS;
    sim.balance.nohz_kick_polled[0] = true;
    sim.cpus[0].avg_idle_ns = 1_000_000;
    sim.queue
        .push(end + 1, crate::sim::event::Event::NohzKick { cpu: 0 });
    assert!(sim.run_until(end + 1));
    assert_eq!(
        sim.cpus[0].mode,
        Mode::NewidlePass,
        "a pass of the idle task"
    );
    assert!(sim.state.rqs[0].curr_is_idle);
    assert!(
        !sim.idle_resched_needs_ipi(0, Mode::NewidlePass),
        "the idle task's TIF_NEED_RESCHED is set"
    );
}

/// A pass after a stopper's run, woken in the first pass and run at its end, has
/// `rq->curr` the stopper: a fair wakee's `wakeup_preempt()` does not
/// `resched_curr()` a stop-class `curr` (core.c v6.8 2247-2252), so no IPI, unlike
/// in a pass whose `rq->curr` is the task that blocked.
#[test]
fn a_pass_after_the_stopper_sends_no_resched_ipi() {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = vec![hog(n, 1..2, 100), hog(n, 1..2, 100), hog(n, 0..1, 1)];
    let mut sim = sim_of(preset, "6.8", 0..8, specs, 100);
    let mut t = SimTime::from_ms(1);
    run_task2_to(&mut sim, &mut t, Loc::Exited, "exit");
    let exit = sim.tasks[2].last_ran;
    let ends = pass_domain_ends(&sim);
    assert!(
        sim.idle_resched_needs_ipi(0, Mode::NewidlePass),
        "the task that blocked is rq->curr"
    );
    stopper_into_pass(&mut sim, exit);
    run_to_second_pass(&mut sim, exit + ends[0]);
    assert!(
        !sim.idle_resched_needs_ipi(0, Mode::NewidlePass),
        "rq->curr is the stopper"
    );
    // That pass's end clears the mark.
    let end = sim.cpus[0].newidle_resched_at;
    assert!(sim.run_until(end));
    assert!(!sim.cpus[0].newidle_curr_stopper);
}

/// The second pass, after a stopper that cut the first one, lasts its own run
/// time: in the kernel nothing ends it early (fair.c v6.8 12349-12384). The first
/// pass's `Resched` for its uncut end was still queued with the `switch_gen` the
/// second pass kept, and ended it at the first one's end; the switch to the
/// stopper (core.c v6.8 6758) now invalidates it.
#[test]
fn a_pass_after_the_stopper_lasts_its_own_run_time() {
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
    let ends = pass_domain_ends(&sim);
    let first_end = exit + *ends.last().unwrap();
    stopper_into_pass(&mut sim, exit);
    assert!(sim.run_until(exit + ends[0]));
    assert_eq!(sim.cpus[0].mode, Mode::NewidlePass, "the second pass");
    let second_end = sim.cpus[0].newidle_resched_at;
    assert!(second_end > first_end, "it should outlast the first's end");
    assert!(sim.run_until(first_end));
    assert_eq!(
        sim.cpus[0].mode,
        Mode::NewidlePass,
        "still in the second pass"
    );
    assert!(sim.run_until(second_end));
    assert_ne!(sim.cpus[0].mode, Mode::NewidlePass, "over at its own end");
}
