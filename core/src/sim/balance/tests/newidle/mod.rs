//! Newidle balancing (`newidle.rs`) and the `rq->avg_idle` that gates it. This file
//! holds the setups the newidle tests share and the gate's tests; the others are by
//! topic:
//!
//! ```text
//!  pass.rs   a pass's run time, and what cuts it short (a wake-up, a balancer's move)
//!  held.rs   what reaches a CPU inside its pass, interrupts off: timers, the tick,
//!            an ilb kick, a stopper, a remote resched_curr()'s IPI
//! ```

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod held;
mod pass;

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

/// CPU 1's stopper pushes its queued hog (task 0 or 1, its affinity widened first) to
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
