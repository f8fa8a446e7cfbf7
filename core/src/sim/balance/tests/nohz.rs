//! nohz idle balancing: the kick (`kick_ilb()` → `nohz_csd_func()`), its flags, and
//! the stats passes that decay idle CPUs' blocked averages.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Whether a kick is on its way to `cpu` (`NOHZ_KICK_MASK`).
fn kick_pending(sim: &Simulator, cpu: u32) -> bool {
    sim.balance.nohz_flags[cpu as usize].intersects(NohzFlags::KICK_MASK)
}

/// CPU `c` is idle with its tick stopped: in `nohz.idle_cpus_mask` (which it leaves
/// only at its first busy tick) and in the idle task.
fn stopped_idle(sim: &Simulator, c: u32) -> bool {
    sim.nohz_idle(c) && sim.cpus[c as usize].mode == Mode::Idle
}

/// Steps until a kick is on its way to one of CPUs 0..8; returns that ilb.
fn until_kicked(sim: &mut Simulator) -> u32 {
    while (0..8).all(|c| !kick_pending(sim, c)) {
        assert!(sim.step(), "no kick before the end");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    (0..8).find(|&c| kick_pending(sim, c)).unwrap()
}

/// The `last_balance` of every domain of `cpus`.
fn last_balances(sim: &Simulator, cpus: &[u32]) -> Vec<u64> {
    cpus.iter()
        .flat_map(|&c| sim.balance.dom[c as usize].iter().map(|d| d.last_balance))
        .collect()
}

/// `kick_ilb()` → `nohz_csd_func()` (fair.c v6.8 11817-11846, core.c 1198-1215):
/// a busy CPU's tick sends the idle load balancer an IPI; it balances once that has
/// arrived and it has left its C-state, and a second kick does not go out while one
/// is on its way (`NOHZ_KICK_MASK`).
#[test]
fn the_idle_load_balancer_balances_after_its_kick_arrives() {
    let mut sim = hogs("kunpeng920-4826", "6.8", 0..8, 3, 100);
    place(&mut sim, |_| 1);
    let ilb = until_kicked(&mut sim);
    assert_eq!(sim.cpus[ilb as usize].mode, Mode::Idle);
    let p = &sim.cost.params;
    let exit = p.idle_states[sim.cpus[ilb as usize].cstate as usize].exit_latency_ns;
    let delay = p.ipi_ns() + exit;
    let kicked = sim.now;
    // The tick-stopped CPUs balance only through the ilb: their last_balance stays
    // until the kick arrives.
    let stopped: Vec<u32> = (0..8).filter(|&c| stopped_idle(&sim, c)).collect();
    let last = |sim: &Simulator| last_balances(sim, &stopped);
    let before = last(&sim);
    let nb = sim.balance.nohz_next_balance;
    // A second kick finds the first on its way.
    let pending = sim.queue.len();
    sim.balance.nohz_next_balance = 0;
    sim.kick_ilb(1, NohzFlags::STATS | NohzFlags::BALANCE);
    assert_eq!(sim.queue.len(), pending, "one kick at a time");
    sim.balance.nohz_next_balance = nb;
    while kick_pending(&sim, ilb) {
        assert_eq!(last(&sim), before, "no balance before the kick arrives");
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(
        sim.now.since(kicked),
        delay,
        "the kick takes an IPI and the exit"
    );
    assert_ne!(
        last(&sim),
        before,
        "the ilb balanced for the tick-stopped CPUs"
    );
}

/// `nohz_csd_func()` (core.c v6.8 1198-1215) runs `_nohz_idle_balance()` only if the
/// kicked CPU is idle and `!need_resched()`. A kick that found it polling set that
/// flag instead of sending an IPI (`set_nr_if_polling()`, 922-935): the CPU leaves
/// its polling loop and schedules (`schedule_idle()`, idle.c 340) without balancing
/// for the tick-stopped CPUs. A kick that reaches a busy CPU by IPI costs its task
/// the receive (and one that was polled, nothing).
#[test]
fn a_kick_that_found_the_ilb_polling_schedules_instead_of_balancing() {
    for polled in [false, true] {
        let mut sim = hogs("kunpeng920-4826", "6.8", 0..8, 3, 100);
        place(&mut sim, |_| 1);
        // Up to the first kick, whose pass would find every domain due.
        let ilb = until_kicked(&mut sim);
        let others: Vec<u32> = (0..8)
            .filter(|&c| c != ilb && stopped_idle(&sim, c))
            .collect();
        assert!(!others.is_empty());
        let last = |sim: &Simulator| last_balances(sim, &others);
        let before = last(&sim);
        let gen = sim.cpus[ilb as usize].switch_gen;
        // The kick arrives as if it had found the ilb polling, or not (set by hand
        // before it lands; the run delivers it, so no second delivery follows).
        sim.balance.nohz_kick_polled[ilb as usize] = polled;
        while !sim.balance.nohz_flags[ilb as usize].is_empty() {
            assert!(sim.step());
            assert!(sim.error.is_none(), "{:?}", sim.error);
        }
        if polled {
            assert_eq!(last(&sim), before, "no balance on the others' behalf");
            assert_eq!(sim.cpus[ilb as usize].mode, Mode::Waking, "it schedules");
            while matches!(
                sim.cpus[ilb as usize].mode,
                Mode::Waking | Mode::NewidlePass
            ) {
                assert!(sim.step());
                assert!(sim.error.is_none(), "{:?}", sim.error);
            }
            assert_ne!(
                sim.cpus[ilb as usize].switch_gen, gen,
                "it went through schedule()"
            );
        } else {
            assert_ne!(last(&sim), before, "it balanced for the tick-stopped CPUs");
        }
        // Then a kick reaching a busy CPU.
        let running = |sim: &Simulator| {
            (0..8u32).find(|&c| c != ilb && sim.cpus[c as usize].mode == Mode::Running)
        };
        while running(&sim).is_none() {
            assert!(sim.step());
            assert!(sim.error.is_none(), "{:?}", sim.error);
        }
        let busy = running(&sim).unwrap();
        let stolen = sim.cpus[busy as usize].stolen_ns;
        sim.balance.nohz_flags[busy as usize] = NohzFlags::BALANCE;
        sim.balance.nohz_kick_polled[busy as usize] = polled;
        sim.nohz_csd_func(busy);
        let recv = if polled {
            0
        } else {
            sim.cost.params.ipi_recv_ns
        };
        let paid = sim.cpus[busy as usize].stolen_ns - stolen;
        assert_eq!(paid, recv, "polled {polled}");
    }
}

/// A task on `cpu` of an `n`-CPU machine that runs 5 ms, then sleeps 10 s: its
/// averages stay on `cpu` as blocked load (an exiting task would take them along).
fn sleeper(n: u32, cpu: u32) -> TaskSpec {
    let mut t = hog(n, cpu..cpu + 1, 5);
    let sleep = Dist::Fixed { ns: 10_000_000_000 };
    t.program = vec![
        Op::Run(Dist::Fixed { ns: 5_000_000 }),
        Op::Sleep(sleep),
        Op::Exit,
    ];
    t
}

/// A CPU-bound task on CPU 0 of `kunpeng920-4826`'s CPUs 0..8 for `busy_ms` and a
/// [`sleeper`] on CPU `short_cpu`, which then goes idle with its tick stopped (WFI,
/// the only idle state) and blocked averages, while CPU 0 stays the LLC's only busy
/// CPU with one task: no balance kick is ever due again.
fn one_busy_cpu(short_cpu: u32, busy_ms: u64) -> Simulator {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = vec![hog(n, 0..1, busy_ms), sleeper(n, short_cpu)];
    sim_of(preset, "6.8", 0..8, specs, busy_ms)
}

/// Steps until CPU `cpu` has run a task and gone idle again with its tick stopped.
fn until_nohz_idle_again(sim: &mut Simulator, cpu: u32) {
    until_busy(sim, &[cpu]);
    while !stopped_idle(sim, cpu) {
        assert!(sim.step(), "CPU {cpu} never went idle");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
}

/// `NOHZ_STATS_KICK` (fair.c v6.8 11876-11878, 12122-12190): with one busy CPU in the
/// LLC no balance kick goes out, yet an idle tick-stopped CPU's blocked util decays
/// within `LOAD_AVG_PERIOD` (32 ms) and a jiffy of its idle entry, and again every
/// `msecs_to_jiffies(32)` + 1 jiffies (`time_after(now, nohz.next_blocked)`), through
/// kicks that only refresh the idle CPUs' averages: no `rebalance_domains()` runs
/// for it.
#[test]
fn a_stats_kick_decays_an_idle_cpus_blocked_util_without_a_balance() {
    let mut sim = one_busy_cpu(2, 200);
    until_nohz_idle_again(&mut sim, 2);
    let tick = sim.cost.params.tick_ns;
    let period = 32_000_000u64.div_ceil(tick) + 1;
    let last_balance: Vec<u64> = sim.balance.dom[2].iter().map(|d| d.last_balance).collect();
    let p = &sim.cost.params;
    let exit = p.idle_states[0].exit_latency_ns;
    // The last stats pass was at the idle entry's jiffy at the latest.
    let mut deadline = SimTime((sim.now.ns() / tick + period) * tick + p.ipi_ns() + exit);
    let mut decayed_at = Vec::new();
    for _ in 0..3 {
        let util = sim.state.rqs[2].util_avg;
        assert!(util > 0, "CPU 2 has blocked util");
        while sim.state.rqs[2].util_avg == util {
            assert!(
                sim.now <= deadline,
                "CPU 2's util not decayed by {deadline:?}"
            );
            assert!(sim.step());
            assert!(sim.error.is_none(), "{:?}", sim.error);
        }
        assert!(sim.state.rqs[2].util_avg < util);
        assert_eq!(sim.cpus[2].mode, Mode::Idle, "decayed by another CPU");
        decayed_at.push(sim.now);
        deadline = sim.now + period * tick;
    }
    assert_eq!(decayed_at[2].since(decayed_at[1]), period * tick);
    assert_eq!(decayed_at[1].since(decayed_at[0]), period * tick);
    let now: Vec<u64> = sim.balance.dom[2].iter().map(|d| d.last_balance).collect();
    assert_eq!(now, last_balance, "no rebalance_domains() for CPU 2");
}

/// `kick_ilb()`'s `atomic_fetch_or()` (fair.c v6.8 11836-11838): a balance kick while
/// a stats kick is on its way to the idle load balancer sends no second IPI; the
/// flags are OR'ed, and the one pass does both the stats and the balance.
#[test]
fn a_balance_kick_joins_a_pending_stats_kick() {
    let mut sim = one_busy_cpu(2, 200);
    until_nohz_idle_again(&mut sim, 2);
    let stats_only = |sim: &Simulator, c: usize| {
        let f = sim.balance.nohz_flags[c];
        f.contains(NohzFlags::STATS) && !f.contains(NohzFlags::BALANCE)
    };
    while (0..8).all(|c| !stats_only(&sim, c)) {
        assert!(sim.step(), "no stats kick before the end");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    let ilb = (0..8).find(|&c| stats_only(&sim, c)).unwrap();
    let stopped: Vec<u32> = (0..8).filter(|&c| stopped_idle(&sim, c)).collect();
    let last = |sim: &Simulator| last_balances(sim, &stopped);
    let before = last(&sim);
    // CPU 2's balance due now (`rq->next_balance`), whatever its last one left.
    sim.balance.next_balance[2] = sim.jiffies();
    let (pending, stolen) = (sim.queue.len(), sim.cpus[0].stolen_ns);
    sim.kick_ilb(0, NohzFlags::STATS | NohzFlags::BALANCE);
    assert_eq!(sim.queue.len(), pending, "no second IPI");
    assert_eq!(sim.cpus[0].stolen_ns, stolen, "no IPI sent");
    assert!(sim.balance.nohz_flags[ilb].contains(NohzFlags::STATS | NohzFlags::BALANCE));
    let util_ns = sim.cpus[2].util.last_ns;
    while sim.balance.nohz_flags[ilb].intersects(NohzFlags::KICK_MASK) {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert!(
        sim.cpus[2].util.last_ns > util_ns,
        "the stats were refreshed"
    );
    assert_ne!(last(&sim), before, "and the due idle CPUs balanced");
}

/// `nohz.has_blocked` (fair.c v6.8 12080-12091, 12122-12123, 12194-12195, 9262-9266):
/// once every idle CPU's load and util averages have decayed to 0
/// (`rq->has_blocked_load` cleared) a stats pass leaves it clear, and no more stats
/// kicks go out until a CPU enters nohz idle again.
#[test]
fn stats_kicks_stop_once_the_blocked_load_has_decayed() {
    let mut sim = one_busy_cpu(2, 1000);
    until_nohz_idle_again(&mut sim, 2);
    assert!(sim.balance.nohz_has_blocked);
    while sim.balance.nohz_has_blocked {
        assert!(sim.step(), "has_blocked never cleared");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert!(sim.now < SimTime::from_ms(700), "{:?}", sim.now);
    for c in (0..8).filter(|&c| stopped_idle(&sim, c)) {
        let cpu = &sim.cpus[c as usize];
        assert!(!sim.balance.has_blocked_load[c as usize], "CPU {c}");
        assert_eq!((cpu.load.avg(), cpu.util.avg()), (0, 0), "CPU {c}");
    }
    let end = sim.now + SimTime::from_ms(200).ns();
    while sim.now < end {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
        assert!(!sim.balance.nohz_has_blocked);
        for c in 0..8 {
            let f = sim.balance.nohz_flags[c];
            assert!(
                !f.intersects(NohzFlags::KICK_MASK),
                "a kick at {:?}",
                sim.now
            );
        }
    }
}

/// `nohz_newidle_balance()` → `nohz_run_idle_balance()` (fair.c v6.8 12234-12273,
/// idle.c 244): a CPU going newly idle, with `avg_idle` over the migration cost,
/// `nohz.has_blocked` and `nohz.next_blocked` passed, decays the other idle CPUs'
/// blocked averages itself as it enters idle, with no kick and no IPI.
#[test]
fn a_newly_idle_cpu_decays_the_blocked_load_itself() {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    // CPU 3 alone busy once CPU 2 has gone idle: no balance kick.
    let specs = vec![sleeper(n, 2), hog(n, 3..4, 60)];
    let mut sim = sim_of(preset, "6.8", 0..8, specs, 60);
    until_nohz_idle_again(&mut sim, 2);
    let tick = sim.cost.params.tick_ns;
    // No stats kick from CPU 3's ticks (time_after(now, next_blocked) never holds);
    // next_blocked comes at the jiffy CPU 3's task ends.
    while sim.cpus[3].mode == Mode::Running {
        let end = sim.cpus[3].burst_end;
        sim.balance.nohz_next_blocked = if sim.queue.peek_time().unwrap() >= end {
            sim.balance.uptime + end.ns() / tick
        } else {
            u64::MAX
        };
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(sim.cpus[3].mode, Mode::Idle);
    assert!(sim.cpus[3].avg_idle_ns >= crate::sim::MIGRATION_COST_NS);
    assert_eq!(
        sim.cpus[2].util.last_ns,
        sim.now.ns(),
        "CPU 2 decayed by CPU 3"
    );
    assert_eq!(
        sim.balance.nohz_next_blocked,
        sim.jiffies() + 32_000_000u64.div_ceil(tick),
        "a stats pass ran"
    );
    for c in 0..8 {
        assert!(sim.balance.nohz_flags[c].is_empty(), "CPU {c}: no kick");
    }
}

/// `trigger_load_balance()` (fair.c v6.8 12436-12447) only raises `SCHED_SOFTIRQ`
/// for a due `rebalance_domains()`, which runs at the interrupt's exit, after
/// `nohz_balancer_kick()` has read the tick's runqueue: a task the rebalance then
/// pulls does not count towards the kick's `rq->nr_running >= 2`. Kunpeng (6.8),
/// CPUs 0-7: CPUs 0, 2 and 3 each run a task pinned to them, CPU 1 six tasks allowed
/// on CPUs 0 and 1; the other cluster, after a short task, is tick-stopped and idle. After 100 ms CPU 0
/// is fully busy, so its cluster-level balance is `migrate_load`: the cluster's
/// average load (9 tasks on 4 CPUs) exceeds CPU 0's by more than one task's load,
/// and one of CPU 1's tasks moves.
#[test]
fn the_tick_kicks_before_its_rebalance_pulls() {
    let n = presets::machine("kunpeng920-4826").unwrap().nr_cpus();
    let mut specs: Vec<TaskSpec> = [0, 2, 3].iter().map(|&c| hog(n, c..c + 1, 500)).collect();
    specs.extend((0..6).map(|_| hog(n, 0..2, 500)));
    // A short task makes the other cluster part of the run.
    specs.push(hog(n, 4..8, 1));
    let mut sim = sim_of("kunpeng920-4826", "6.8", 0..8, specs, 500);
    place(&mut sim, |t| match t {
        0..3 => [0, 2, 3][t as usize],
        9 => 4,
        _ => 1,
    });
    run_to(&mut sim, 100);
    while (0..8).any(|c| kick_pending(&sim, c)) {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert!((4..8).all(|c| stopped_idle(&sim, c)));
    assert_eq!(sim.state.rqs[0].nr_running, 1);
    // CPU 0's tick: every domain due, a nohz balance due, and no other reason to
    // kick (no blocked load to decay, nothing to collate, one busy CPU counted on
    // the LLC's line).
    let j = sim.jiffies();
    sim.balance.next_balance[0] = j;
    for d in sim.balance.dom[0].iter_mut() {
        d.last_balance = 0;
    }
    sim.balance.nohz_next_balance = j;
    sim.balance.nohz_has_blocked = false;
    sim.balance.nohz_needs_update = false;
    sim.cpus[0].nohz_tick_stopped = false;
    let llc = sim.llc_id_of[0] as usize;
    sim.state.llc_shared[llc].nr_busy_cpus = 1;
    sim.trigger_load_balance(0);
    assert_eq!(
        sim.state.rqs[0].nr_running, 2,
        "the rebalance pulled one of CPU 1's tasks"
    );
    assert!(
        (0..8).all(|c| !kick_pending(&sim, c)),
        "the kick read one task on CPU 0, before the pull"
    );
}

/// `kick_ilb()` → `smp_call_function_single_async()` → `send_call_function_single_ipi()`
/// (kernel/smp.c, core.c v6.8 922-935): to an ilb whose idle task polls,
/// `set_nr_if_polling()` sets its need-resched flag instead of sending an IPI, so the
/// kicking CPU's task pays no `ipi_send_ns` and the kick is recorded as polled (which
/// `nohz_csd_func()` then reads). Jacobsville (6.8, POLL as its state 0): CPU 0 busy;
/// the ilb, tick-stopped and still in `nohz.idle_cpus_mask`, left idle a moment and
/// re-entered it with a short predicted idle, in POLL. The same kick to it in C6 is
/// an IPI.
#[test]
fn a_kick_to_a_polling_ilb_is_recorded_and_sends_no_ipi() {
    for poll in [false, true] {
        let preset = "jacobsville";
        let n = presets::machine(preset).unwrap().nr_cpus();
        let mut sim = sim_of(preset, "6.8", 0..8, vec![hog(n, 0..8, 100)], 100);
        place(&mut sim, |_| 0);
        run_to(&mut sim, 20);
        let ilb = (1..8u32)
            .find(|&c| stopped_idle(&sim, c))
            .expect("a tick-stopped CPU");
        let states = sim.cost.params.idle_states.clone();
        // It leaves idle (its tick restarts; it stays in the nohz mask until a busy
        // tick) and comes back predicting a short idle (state 0, POLL) or a long one
        // (C6).
        sim.leave_idle_accounting(ilb);
        // Typical 1 us: Jacobsville's C1 exits in 2, over menu's limit of the
        // prediction, so POLL; typical 10 ms: C6.
        sim.cpus[ilb as usize].menu.intervals = [if poll { 1 } else { 10_000 }; 8];
        sim.enter_idle(ilb);
        assert!(stopped_idle(&sim, ilb));
        let cstate = sim.cpus[ilb as usize].cstate as usize;
        assert_eq!(states[cstate].polling, poll, "{}", states[cstate].name);
        assert_eq!(sim.state.rqs[ilb as usize].polling, poll);
        for c in 0..8 {
            sim.balance.nohz_flags[c] = NohzFlags::EMPTY;
        }
        let stolen = sim.cpus[0].stolen_ns;
        sim.kick_ilb(0, NohzFlags::STATS | NohzFlags::BALANCE);
        assert!(kick_pending(&sim, ilb), "the kick went to CPU {ilb}");
        assert_eq!(sim.balance.nohz_kick_polled[ilb as usize], poll);
        let send = if poll { 0 } else { sim.cost.params.ipi_send_ns };
        assert_eq!(sim.cpus[0].stolen_ns - stolen, send, "poll {poll}");
    }
}

/// `nohz.idle_cpus_mask` (fair.c v6.8 12019-12074, 11983-11998): a CPU joins it when
/// its tick stops and leaves it at its first busy tick (`nohz_balancer_kick()` →
/// `nohz_balance_exit_idle()`), not when it leaves idle: in between it counts for
/// `nohz.nr_cpus` and `update_nohz_stats()` (12076-12092), and only the callers that
/// test `idle_cpu()` too (`find_new_ilb()`, `_nohz_idle_balance()`) pass it over.
#[test]
fn a_cpu_stays_in_the_nohz_mask_until_its_first_busy_tick() {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    // A second task on CPU 2 wakes there 20 ms in, after CPU 2 went nohz idle.
    let mut late = hog(n, 2..3, 5);
    let ms = |m: u64| Dist::Fixed { ns: m * 1_000_000 };
    late.program = vec![Op::Sleep(ms(20)), Op::Run(ms(5)), Op::Exit];
    let specs = vec![hog(n, 0..1, 60), sleeper(n, 2), late];
    let mut sim = sim_of(preset, "6.8", 0..8, specs, 60);
    until_nohz_idle_again(&mut sim, 2);
    until_busy(&mut sim, &[2]);
    assert!(sim.nohz_idle(2), "running, before its first busy tick");
    assert!(!sim.cpu_idle(2));
    let tick = sim.cost.params.tick_ns;
    while sim.nohz_idle(2) {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(sim.now.ns() % tick, 0, "left at a tick");
    assert_eq!(sim.cpus[2].mode, Mode::Running);
}
