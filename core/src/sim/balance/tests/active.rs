//! Active balancing: `need_active_balance()` and the busiest CPU's stopper
//! (`active_load_balance_cpu_stop()`).

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Active balancing: two hogs on the two threads of one core of xeon-smt-8 (6.8),
/// three cores idle. Neither task can be pulled (each runs alone on its CPU), so MC
/// balancing fails until nr_balance_failed > cache_nice_tries + 2, and the stopper
/// pushes one running task to an idle core.
#[test]
fn active_balance_pushes_a_running_task_to_an_idle_core() {
    let mut sim = hogs("xeon-smt-8", "6.8", 0..8, 2, 300);
    let sib = sim.siblings[0][0];
    place(&mut sim, |t| if t == 0 { 0 } else { sib });
    run_to(&mut sim, 1);
    assert_eq!(sim.cpus[0].mode, Mode::Running);
    run_to(&mut sim, 200);
    let (a, b) = (cpu_of(&sim, 0), cpu_of(&sim, 1));
    assert!(!sim.siblings[a as usize].contains(&b) && a != b, "{a} {b}");
    assert!(sim.metrics.active_balances >= 1);
}

/// The stopper runs one IPI after the active balance that queues it
/// (`stop_one_cpu_nowait()`, then `active_load_balance_cpu_stop()`, fair.c v6.8
/// 11440-11481 and 11575-11650). Until then the task runs on where it was, and no
/// balance queues a second stopper (`busiest->active_balance`). A task that is gone
/// from the runqueue by then (here: it exits) is not moved: `nr_running <= 1` with
/// the stopper counted.
#[test]
fn the_stopper_runs_an_ipi_after_the_active_balance() {
    for exits_first in [false, true] {
        let mut sim = hogs("xeon-smt-8", "6.8", 0..8, 2, 300);
        let sib = sim.siblings[0][0];
        place(&mut sim, |t| if t == 0 { 0 } else { sib });
        run_to(&mut sim, 1);
        // Step to the first active balance: its stopper is queued, not yet run.
        while sim.balance.push_cpu.iter().all(Option::is_none) {
            assert!(sim.step(), "no active balance before the end");
            assert!(sim.error.is_none(), "{:?}", sim.error);
        }
        let src = sim
            .balance
            .push_cpu
            .iter()
            .position(Option::is_some)
            .unwrap() as u32;
        let dst = sim.balance.push_cpu[src as usize].unwrap();
        let t = sim.cpus[src as usize].curr;
        let kicked = sim.now;
        assert_eq!(sim.cpus[src as usize].mode, Mode::Running);
        assert_eq!(
            cpu_of(&sim, t as usize),
            src,
            "the task runs on until the stopper"
        );
        assert_eq!(sim.metrics.active_balances, 0);
        // Another balance of dst's domains now finds the stopper already queued.
        let failed: Vec<u32> = sim.balance.dom[dst as usize]
            .iter()
            .map(|d| d.nr_balance_failed)
            .collect();
        for li in 0..sim.balance.n_levels(dst) {
            sim.balance.dom[dst as usize][li].nr_balance_failed = 100;
            let outer = sim.lb_pass_begin();
            let (moved, _) = sim.load_balance(dst, li, CpuIdle::Idle, dst);
            sim.lb_pass_end(outer);
            assert!(moved.is_empty(), "ld_moved is 0 for an active balance");
        }
        assert_eq!(sim.balance.push_cpu[src as usize], Some(dst));
        for (d, f) in sim.balance.dom[dst as usize].iter_mut().zip(failed) {
            d.nr_balance_failed = f;
        }
        // src got its task without a wake-up (a stale idle_stamp, 800 us old): the
        // stopper's own wake-up (ttwu_do_activate()) averages it into avg_idle.
        sim.cpus[src as usize].idle_stamp = Some(SimTime(kicked.ns() - 800_000));
        sim.cpus[src as usize].avg_idle_ns = 0;
        if exits_first {
            // The task's burst ends now (no interrupt time left to add, such as the
            // send of an ilb kick from its tick); its program's next step is Exit.
            let c = &mut sim.cpus[src as usize];
            c.burst_end = sim.now;
            c.stolen_ns = 0;
            let gen = c.burst_gen;
            sim.queue
                .push(sim.now, crate::sim::Event::BurstEnd { cpu: src, gen });
        }
        let ipi = sim.cost.params.ipi_ns();
        assert!(ipi > 0);
        while sim.balance.push_cpu[src as usize].is_some() {
            assert!(sim.step());
            assert!(sim.error.is_none(), "{:?}", sim.error);
        }
        // An IPI after the pass's wake-up of the stopper, which comes after the
        // pass's locks (the exact instant: tests/locks.rs).
        let delay = sim.now.since(kicked);
        assert!(
            delay >= ipi && delay < ipi + 5_000,
            "the stopper runs an IPI later: {delay} ns, IPI {ipi} ns"
        );
        if exits_first {
            assert_eq!(sim.tasks[t as usize].loc, Loc::Exited);
            assert_eq!(sim.metrics.active_balances, 0, "nothing left to move");
        } else {
            assert_eq!(cpu_of(&sim, t as usize), dst, "the stopper pushed the task");
            assert_eq!(sim.metrics.active_balances, 1);
            assert_eq!(sim.cpus[src as usize].avg_idle_ns, (800_000 + delay) / 8);
        }
    }
}

/// `active_load_balance_cpu_stop()`'s IPI on a `src` that went idle after the
/// active balance (its task blocked or exited and nothing was left): `src` is in a
/// C-state, which the IPI ends after the exit latency. Across LLCs the stopper was
/// on `src`'s wake list (`ttwu_queue_cond()`, kernel/sched/core.c v6.8 3986-4021):
/// `sched_ttwu_pending()` activates it, `do_idle()` leaves its loop, the stopper
/// finds nothing (`busiest_rq->nr_running <= 1`, fair.c v6.8 11600-11601) and `src`
/// schedules into a new idle stay. In the LLC it was on `src`'s runqueue and ran as
/// the task left; what lands is `resched_curr()`'s IPI (core.c 1063-1065), with
/// `need_resched()` clear: the stay ends and the governor chooses again
/// (kernel/sched/idle.c v6.8 258-315, drivers/cpuidle/cpuidle.c 279-302).
/// Jacobsville, `src` in C1E (exit 15 us) with its tick kept. Before, the IPI left
/// `src` in its C-state as if nothing had arrived.
#[test]
fn the_stoppers_ipi_takes_an_idle_src_out_of_its_c_state() {
    for wakelist in [false, true] {
        let preset = "jacobsville";
        let n = presets::machine(preset).unwrap().nr_cpus();
        // A hog on CPU 0; a task that only exits puts CPU 1 in the run.
        let specs = vec![hog(n, 0..1, 100), hog(n, 1..2, 0)];
        let mut sim = sim_of(preset, "6.8", 0..2, specs, 100);
        run_to(&mut sim, 1);
        let (src, dst) = (1, 0);
        sim.now = SimTime::from_us(1_500);
        sim.leave_idle_accounting(src);
        let c = &mut sim.cpus[src as usize];
        (c.menu.intervals, c.menu.interval_ptr) = ([30; 8], 0);
        sim.enter_idle(src);
        let states = sim.cost.params.idle_states.clone();
        let c = &sim.cpus[src as usize];
        let c1e = &states[c.cstate as usize];
        assert_eq!((c1e.name, c.tick_stopped), ("C1E", false));
        // The active balance queued the stopper while src ran; its IPI lands now.
        sim.balance.push_cpu[src as usize] = Some(dst);
        sim.balance.stopper_wakelist[src as usize] = wakelist;
        let t = SimTime::from_us(1_600);
        sim.now = t;
        sim.active_load_balance_cpu_stop(src);
        let out = SimTime(t.ns() + c1e.exit_latency_ns);
        if wakelist {
            let c = &sim.cpus[src as usize];
            assert_eq!(c.mode, Mode::Waking);
            assert_eq!(sim.balance.push_cpu[src as usize], Some(dst), "yet to run");
            while sim.balance.push_cpu[src as usize].is_some() {
                assert!(sim.step());
                assert!(sim.error.is_none(), "{:?}", sim.error);
            }
            assert_eq!(sim.now, out, "the stopper runs once src is out of C1E");
            while sim.cpus[src as usize].mode != Mode::Idle {
                assert!(sim.step());
                assert!(sim.error.is_none(), "{:?}", sim.error);
            }
            assert_eq!(sim.cpus[src as usize].idle_since, out, "a new idle entry");
        } else {
            let c = &sim.cpus[src as usize];
            assert_eq!(c.mode, Mode::Idle);
            assert_eq!(sim.balance.push_cpu[src as usize], None);
            assert_eq!((c.cstate_since, c.idle_entry), (out, out), "a new stay");
        }
        assert_eq!(sim.cpus[src as usize].menu.interval_ptr, 1, "menu_update()");
        assert_eq!(sim.metrics.active_balances, 0);
    }
}
