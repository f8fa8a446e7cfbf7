//! What reaches a CPU inside its newidle pass, where `__schedule()` runs with
//! interrupts off (core.c v6.8 6656 to `finish_task_switch()`): a sleeper's timer,
//! the tick, an ilb kick, a stopper woken there, a remote `resched_curr()`'s IPI;
//! each is taken at the pass's end, and a stopper's run starts a second pass.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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
    let mut sim = pass_sim(0);
    run_to_pass(&mut sim, SimTime::from_ms(1));
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
    let mut sim = pass_sim(0);
    let exit = run_to_pass(&mut sim, SimTime::from_ms(1));
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

/// `load_balance()`'s active-balance test reads `busiest->curr->cpus_ptr` (fair.c
/// v6.8 11449) under busiest's lock. A busiest CPU inside its newidle pass is still
/// in `__schedule()`'s pick, its `rq->curr` the task that blocked (`rq->curr = next`
/// only after the pick, core.c v6.8 6722-6735): task 2, blocked on CPU 0, may run on
/// CPUs 0-7, so a balance of CPU 3 may start an active balance from CPU 0 (the model
/// had taken a CPU in its pass as one whose current task may not move). The stopper
/// of a pass after its run, the idle task of a pass of the idle task, and a blocked
/// task pinned to CPU 0 may not move.
#[test]
fn a_busiest_cpu_in_its_pass_has_the_blocked_task_current() {
    let (mut sim, _) = blocked_in_pass(5_000_000);
    assert_eq!(sim.cpus[0].last_task, 2);
    assert!(!sim.state.rqs[0].curr_is_idle);
    assert!(sim.busiest_curr_allowed(0, 3), "task 2 may run on CPU 3");
    sim.cpus[0].newidle_curr_stopper = true;
    assert!(!sim.busiest_curr_allowed(0, 3), "the stopper is pinned");
    sim.cpus[0].newidle_curr_stopper = false;
    sim.state.rqs[0].curr_is_idle = true;
    assert!(!sim.busiest_curr_allowed(0, 3), "the idle task is pinned");
    sim.state.rqs[0].curr_is_idle = false;
    let n = sim.machine.nr_cpus();
    sim.views[2].task.as_mut().unwrap().allowed = CpuMask::from_cpus(n, [CpuId(0)]);
    assert!(!sim.busiest_curr_allowed(0, 3), "task 2 pinned to CPU 0");
}
