//! Newidle balancing (`rebalance.rs`) and the `rq->avg_idle` that gates it.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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
