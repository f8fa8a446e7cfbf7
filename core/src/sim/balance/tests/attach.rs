//! Every move ends in `attach_task()` → `wakeup_preempt()` → `resched_curr()`: who
//! is sent an IPI, who pays it, and when the moved task runs.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// `attach_task()` → `wakeup_preempt()` → `resched_curr()` of an idle CPU (fair.c
/// v6.8 9180-9187, core.c 1045-1067): a task the idle load balancer pulls for a
/// tick-stopped CPU reaches it by an IPI (Kunpeng's WFI does not poll,
/// `set_nr_and_not_polling()`) and that CPU's exit from its C-state; one pulled onto
/// the balancing CPU itself, awake to balance, runs at once.
#[test]
fn a_task_pulled_for_another_cpu_waits_for_the_ipi_and_the_idle_exit() {
    for remote in [false, true] {
        // Pinned to CPU 1, so that no other CPU pulls them.
        let mut sim = pinned_hogs(&[1, 1], 100);
        until_busy(&mut sim, &[1]);
        let dst = 2;
        assert_eq!(sim.cpus[dst as usize].mode, Mode::Idle);
        assert!(!sim.state.rqs[dst as usize].polling);
        let t = queued_task(&sim, 1);
        let runs_on = if remote { 0 } else { dst };
        sim.migrate_queued(t, 1, dst, runs_on, crate::sim::record::MigrateReason::Idle);
        let p = &sim.cost.params;
        let exit = p.idle_states[sim.cpus[dst as usize].cstate as usize].exit_latency_ns;
        let expect = if remote { p.ipi_ns() + exit } else { 0 };
        assert!(!remote || expect > 0);
        assert_eq!(until_running(&mut sim, t, dst), expect, "remote {remote}");
    }
}

/// `attach_task()` → `wakeup_preempt()` on a busy destination (fair.c v6.8
/// 9180-9187, `check_preempt_wakeup_fair()`): a task pulled onto a CPU whose current
/// task has used its slice and has a later deadline preempts it at the return from
/// the balancing interrupt, not at the next tick; by IPI (whose handler the
/// destination runs) when another CPU pulled it there.
#[test]
fn a_pulled_task_preempts_a_busy_destination_that_it_should() {
    for remote in [false, true] {
        let mut sim = pinned_hogs(&[1, 1, 3], 100);
        until_busy(&mut sim, &[1, 3]);
        let (dst, curr) = (3, sim.cpus[3].curr);
        let t = queued_task(&sim, 1);
        // The current task is at its deadline (no RUN_TO_PARITY protection); the
        // pulled task is owed the most lag there is, so it is eligible with an
        // earlier deadline wherever it is placed.
        sim.update_curr(dst);
        let v = sim.tasks[curr as usize].vruntime;
        sim.tasks[curr as usize].deadline = v;
        let owed = sim.avg_vruntime(1) - 1_000_000_000;
        let old = std::mem::replace(&mut sim.tasks[t as usize].vruntime, owed);
        sim.cpus[1].v_sum += owed - old;
        let stolen = sim.cpus[dst as usize].stolen_ns;
        let runs_on = if remote { 0 } else { dst };
        sim.migrate_queued(
            t,
            1,
            dst,
            runs_on,
            crate::sim::record::MigrateReason::Periodic,
        );
        assert!(sim.should_preempt(dst, t), "the setup makes t preempt");
        let p = &sim.cost.params;
        let (expect, recv) = if remote {
            (p.ipi_ns(), p.ipi_recv_ns)
        } else {
            (0, 0)
        };
        assert_eq!(sim.cpus[dst as usize].stolen_ns, stolen + recv);
        assert_eq!(until_running(&mut sim, t, dst), expect, "remote {remote}");
    }
}

/// `resched_curr()` of a remote running CPU (core.c v6.8 1045-1067): the CPU that
/// moves the task sends `smp_send_reschedule()` and pays its send, the destination
/// pays its receive; and while that flag is set, a second preempting task attached
/// there sends nothing (`resched_curr()`'s `test_tsk_need_resched()` return, and
/// `check_preempt_wakeup_fair()`'s, fair.c 8301): one IPI until it schedules.
#[test]
fn a_remote_resched_is_sent_once_and_paid_by_both_ends() {
    let mut sim = pinned_hogs(&[0, 1, 1, 1, 3], 100);
    until_busy(&mut sim, &[0, 1, 3]);
    let (dst, curr) = (3, sim.cpus[3].curr);
    let pulled: Vec<u32> = sim.cpus[1].queue[..2].to_vec();
    // As above: the current task is at its deadline, the pulled ones are owed lag.
    sim.update_curr(dst);
    let v = sim.tasks[curr as usize].vruntime;
    sim.tasks[curr as usize].deadline = v;
    for &t in &pulled {
        let owed = sim.avg_vruntime(1) - 1_000_000_000;
        let old = std::mem::replace(&mut sim.tasks[t as usize].vruntime, owed);
        sim.cpus[1].v_sum += owed - old;
    }
    let p = sim.cost.params.clone();
    let (send0, recv0) = (sim.cpus[0].stolen_ns, sim.cpus[dst as usize].stolen_ns);
    // The pulls queue nothing but the destination's Resched.
    let pending = sim.queue.len();
    let resched = |sim: &Simulator| sim.queue.len() - pending;
    let reason = crate::sim::record::MigrateReason::Periodic;
    sim.migrate_queued(pulled[0], 1, dst, 0, reason);
    assert!(
        sim.should_preempt(dst, pulled[0]),
        "the setup makes it preempt"
    );
    assert_eq!(
        sim.cpus[0].stolen_ns,
        send0 + p.ipi_send_ns,
        "the sender pays"
    );
    assert_eq!(sim.cpus[dst as usize].stolen_ns, recv0 + p.ipi_recv_ns);
    assert_eq!(resched(&sim), 1);
    sim.migrate_queued(pulled[1], 1, dst, 0, reason);
    assert!(sim.should_preempt(dst, pulled[1]), "it would preempt too");
    assert_eq!(
        sim.cpus[0].stolen_ns,
        send0 + p.ipi_send_ns,
        "no second send"
    );
    assert_eq!(sim.cpus[dst as usize].stolen_ns, recv0 + p.ipi_recv_ns);
    assert_eq!(resched(&sim), 1, "one IPI until the destination schedules");
    let t0 = sim.now;
    while sim.cpus[dst as usize].curr == curr {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(
        sim.now.since(t0),
        p.ipi_ns(),
        "preempted when the IPI lands"
    );
    assert!(pulled.contains(&sim.cpus[dst as usize].curr));
}

/// An idle CPU that kept its tick takes it once out of its C-state, and
/// `run_rebalance_domains()` runs from that interrupt's softirq
/// (`trigger_load_balance()`, fair.c v6.8 12436-12447): a task its balance pulls is
/// `resched_curr()` of the idle task (9180-9187, core.c 1045-1067), which
/// `do_idle()`'s loop sees when the interrupt returns (kernel/sched/idle.c v6.8
/// 258), after the exit latency (`cpuidle_enter_state()`'s `time_end`,
/// drivers/cpuidle/cpuidle.c v6.8 279-302). Jacobsville: CPU 1 idles in C1E (exit
/// 15 us) with its tick kept while CPU 0 has two tasks; at the tick CPU 1 pulls the
/// queued one, which runs 15 us later. Before, it ran at the tick itself.
#[test]
fn a_task_the_idle_tick_pulls_runs_after_the_c_state_exit() {
    let preset = "jacobsville";
    let n = presets::machine(preset).unwrap().nr_cpus();
    // Pinned to CPU 0 until the test lets them go to CPU 1 too; a task that only
    // exits puts CPU 1 in the run.
    let specs = vec![hog(n, 0..1, 100), hog(n, 0..1, 100), hog(n, 1..2, 0)];
    let mut sim = sim_of(preset, "6.8", 0..2, specs, 100);
    run_to(&mut sim, 1);
    for t in 0..2 {
        let both = CpuMask::from_cpus(n, [CpuId(0), CpuId(1)]);
        sim.views[t].task.as_mut().unwrap().allowed = both;
    }
    // CPU 1's balancing as if they had always been allowed there (pinned, the ilb's
    // balances on its behalf stretched its intervals to MAX_PINNED_INTERVAL).
    for li in 0..sim.balance.n_levels(1) {
        let min = sim.balance.levels[1][li].min_interval;
        sim.balance.dom[1][li].balance_interval = min;
    }
    sim.balance.next_balance[1] = 0;
    let states = sim.cost.params.idle_states.clone();
    let tick = SimTime(sim.cost.params.tick_ns);
    run_to(&mut sim, 3);
    sim.now = SimTime(tick.ns() - 100_000);
    sim.leave_idle_accounting(1);
    let c = &mut sim.cpus[1];
    (c.menu.intervals, c.menu.interval_ptr) = ([30; 8], 0);
    sim.enter_idle(1);
    let c = &sim.cpus[1];
    let c1e = &states[c.cstate as usize];
    assert_eq!((c1e.name, c.tick_stopped), ("C1E", false));
    assert_eq!(c1e.exit_latency_ns, 15_000);
    let t = queued_task(&sim, 0);
    while sim.tasks[t as usize].loc != Loc::Running(1) {
        assert!(sim.step(), "task {t} never ran on 1");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(sim.now, SimTime(tick.ns() + 15_000));
    assert_eq!(sim.metrics.migrations_balance, 1);
}
