//! The idle governor in the simulator (`idle.rs`, `menu.rs`): what menu.c v6.8 chooses
//! at idle entry, at an idle tick, at POLL's limit, and what it records.

use super::tests::{quiet_sim, task_on};
use super::*;
use crate::cost::IdleState;
use crate::topology::presets;
use crate::workload::{Dist, Op};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Jacobsville (6.8, quiet) with one task running on CPU 0 for a second: its idle
/// states and its last CPU, idle.
fn jacobsville_idle_cpu() -> (Simulator, Vec<IdleState>, u32) {
    let n = presets::machine("jacobsville").unwrap().nr_cpus();
    let tasks = vec![task_on(
        n,
        &[0],
        0,
        vec![Op::Run(Dist::Fixed { ns: 1_000_000_000 }), Op::Exit],
    )];
    let sim = quiet_sim("jacobsville", "6.8", CpuMask::full(n), 2_000, tasks);
    let states = sim.cost.params.idle_states.clone();
    (sim, states, n - 1)
}

/// `menu_update()` (drivers/cpuidle/governors/menu.c v6.8 505-514) records an idle
/// period without the state's exit latency ("we are interested in when the wakeup
/// begun"), and one no longer than twice the exit latency as half its length. On
/// Jacobsville (C1E: exit 15 us, target residency 25 us) a CPU woken 36 us after it
/// entered C1E, its exit done, had its wake-up begin at 21 us: too short for C1E.
#[test]
fn the_governor_records_an_idle_period_without_the_exit_latency() {
    let n = presets::machine("jacobsville").unwrap().nr_cpus();
    let tasks = vec![task_on(
        n,
        &[0],
        0,
        vec![Op::Run(Dist::Fixed { ns: 1_000 }), Op::Exit],
    )];
    let mut sim = quiet_sim("jacobsville", "6.6", CpuMask::full(n), 10, tasks);
    let cpu = n - 1;
    let states = sim.cost.params.idle_states.clone();
    let c1e = states.iter().position(|s| s.name == "C1E").unwrap();
    assert_eq!(states[c1e].exit_latency_ns, 15_000);
    for (residency, recorded) in [(36_000, 21_000), (24_000, 12_000)] {
        let t0 = SimTime::from_ms(1);
        sim.now = t0;
        let c = &mut sim.cpus[cpu as usize];
        (c.mode, c.cstate, c.idle_since, c.cstate_since) = (Mode::Idle, c1e as u8, t0, t0);
        c.menu.interval_ptr = 0;
        sim.now = SimTime(t0.ns() + residency);
        sim.leave_idle_accounting(cpu);
        assert_eq!(
            sim.cpus[cpu as usize].menu.intervals[0] as u64 * 1_000,
            recorded,
            "{residency} ns"
        );
    }
    // Eight such periods: the next idle entry chooses C1, not C1E.
    let c = &mut sim.cpus[cpu as usize];
    c.menu.intervals = [21; 8];
    sim.enter_idle(cpu);
    assert_eq!(states[sim.cpus[cpu as usize].cstate as usize].name, "C1");
}

/// A tick that wakes an idle CPU which kept it sends the CPU round `do_idle()`'s loop:
/// `menu_update()` counts the stay as 45 ms (`9 * MAX_INTERESTING / 10`, the tick
/// wake-up the timer did not foresee; drivers/cpuidle/governors/menu.c v6.8 458-470)
/// and `menu_select()` chooses again. A Jacobsville CPU whose last 8 periods were
/// 10 us keeps its tick in C1 (`get_typical_interval()` drops the 45 ms values as
/// outliers while a tight short pattern remains, menu.c 190-228), and at the 8th
/// idle tick, its history all 45 ms, it stops the tick in C6 and enters the nohz
/// mask. Before, the tick left the governor alone: the CPU ticked in C1 forever.
#[test]
fn idle_ticks_make_the_governor_choose_again_until_it_stops_the_tick() {
    let (mut sim, states, cpu) = jacobsville_idle_cpu();
    let tick = sim.cost.params.tick_ns;
    sim.now = SimTime(10 * tick + tick / 2);
    sim.leave_idle_accounting(cpu);
    let c = &mut sim.cpus[cpu as usize];
    c.menu.intervals = [10; 8];
    sim.cpus[cpu as usize].nohz_tick_stopped = false;
    sim.enter_idle(cpu);
    let name = |sim: &Simulator| states[sim.cpus[cpu as usize].cstate as usize].name;
    assert_eq!(name(&sim), "C1");
    assert!(!sim.cpus[cpu as usize].tick_stopped);
    for k in 1..=8u64 {
        sim.now = SimTime((10 + k) * tick);
        sim.on_tick(cpu);
        let c = &sim.cpus[cpu as usize];
        assert_eq!(c.mode, Mode::Idle);
        if k < 8 {
            assert_eq!((name(&sim), c.tick_stopped), ("C1", false), "tick {k}");
        } else {
            assert_eq!((name(&sim), c.tick_stopped), ("C6", true), "tick {k}");
            assert!(c.nohz_tick_stopped, "nohz_balance_enter_idle()");
        }
    }
    assert_eq!(sim.cpus[cpu as usize].menu.intervals, [45_000; 8]);
}

/// `menu_select()` caps a long typical interval by the next timer event
/// (`tick_nohz_get_sleep_length()` × the bucket's correction factor, menu.c v6.8
/// 288-305): a Jacobsville CPU whose history says 45 ms, idle while its only task
/// sleeps 200 us on an hrtimer armed there, takes C1E (25 us), not C6 (500 us),
/// and keeps its tick. The mean of the history alone chose C6.
#[test]
fn a_sleepers_timer_caps_the_governors_prediction() {
    let n = presets::machine("jacobsville").unwrap().nr_cpus();
    let ms = |x: u64| SimTime(x * 100_000);
    let tasks = vec![task_on(
        n,
        &[0],
        0,
        vec![
            Op::Run(Dist::Fixed { ns: 1_000_000 }),
            Op::Sleep(Dist::Fixed { ns: 200_000 }),
            Op::Run(Dist::Fixed { ns: 1_000_000 }),
            Op::Exit,
        ],
    )];
    let mut sim = quiet_sim("jacobsville", "6.8", CpuMask::full(n), 10, tasks);
    let states = sim.cost.params.idle_states.clone();
    sim.run_until(ms(5));
    assert_eq!(sim.cpus[0].mode, Mode::Running);
    sim.cpus[0].menu.intervals = [45_000; 8];
    sim.run_until(ms(11));
    let c = &sim.cpus[0];
    assert_eq!(c.mode, Mode::Idle);
    assert_eq!(
        (states[c.cstate as usize].name, c.tick_stopped),
        ("C1E", false)
    );
}

/// `poll_idle()` leaves POLL at `cpuidle_poll_time()` (Jacobsville: C1E's 25 us, the
/// first residency of at least 10 us; drivers/cpuidle/cpuidle.c v6.8 429-457) and
/// `menu_update()` records the stay as `next_timer_ns` (menu.c v6.8 471-480): for a
/// prediction under 15 us that is `KTIME_MAX`, whose microseconds the kernel stores
/// truncated to an `unsigned int`. Seven such values are outliers to a tight 1 us
/// pattern; the eighth leaves only them, and the CPU goes to C6 and stops its tick.
/// Before, a CPU that chose POLL polled until it was woken.
#[test]
fn poll_ends_at_its_time_limit_and_the_governor_chooses_again() {
    let (mut sim, states, cpu) = jacobsville_idle_cpu();
    sim.now = SimTime::from_ms(10);
    sim.leave_idle_accounting(cpu);
    sim.cpus[cpu as usize].menu.intervals = [1; 8];
    sim.enter_idle(cpu);
    let name = |sim: &Simulator| states[sim.cpus[cpu as usize].cstate as usize].name;
    assert_eq!(name(&sim), "POLL");
    let truncated = ((i64::MAX as u64) / 1_000) as u32;
    assert_eq!(truncated, 2_783_138_807);
    for k in 1..=8 {
        let gen = sim.cpus[cpu as usize].cstate_gen;
        sim.now = SimTime(sim.now.ns() + 25_000);
        sim.poll_time_limit(cpu, gen);
        let c = &sim.cpus[cpu as usize];
        let expect = if k < 8 { ("POLL", false) } else { ("C6", true) };
        assert_eq!((name(&sim), c.tick_stopped), expect, "limit {k}");
        // A stale limit (another stay) does nothing.
        sim.poll_time_limit(cpu, gen);
        assert_eq!(name(&sim), expect.0);
    }
    assert_eq!(sim.cpus[cpu as usize].menu.intervals, [truncated; 8]);
}

/// `poll_idle()` takes interrupts with IRQs on and polls on until `need_resched()` or
/// its time limit (drivers/cpuidle/poll_state.c v6.8 22-38): a tick that lands in a
/// POLL stay does not end it, but sets `ts->got_idle_tick` (tick-sched.c v6.8
/// 228-229), which `menu_reflect()` reads when the stay ends (menu.c 453): at the time
/// limit, or at a wake-up, the stay counts once, as a tick wake-up the timer did not
/// foresee (45 ms, menu.c 484-494, ahead of the poll-limit rule). Before, the tick
/// ended the POLL stay and started another, and a wake-up after a tick never saw it.
#[test]
fn a_tick_in_poll_is_absorbed_and_marks_the_stay_a_tick_wake_up() {
    let (mut sim, states, cpu) = jacobsville_idle_cpu();
    let tick = sim.cost.params.tick_ns;
    for (k, wake) in [(10u64, false), (20, true)] {
        // POLL entered 10 us before a tick (Jacobsville's limit: 25 us).
        let t0 = SimTime(k * tick - 10_000);
        sim.now = t0;
        sim.leave_idle_accounting(cpu);
        let c = &mut sim.cpus[cpu as usize];
        (c.menu.intervals, c.menu.interval_ptr) = ([1; 8], 0);
        sim.enter_idle(cpu);
        let c = &sim.cpus[cpu as usize];
        assert_eq!(
            (states[c.cstate as usize].name, c.tick_stopped),
            ("POLL", false)
        );
        let gen = c.cstate_gen;
        sim.now = SimTime(k * tick);
        sim.on_tick(cpu);
        let c = &sim.cpus[cpu as usize];
        assert_eq!(
            (c.mode, c.cstate_gen, c.cstate_since),
            (Mode::Idle, gen, t0)
        );
        assert_eq!(c.menu.interval_ptr, 0, "the stay goes on");
        if wake {
            sim.now = SimTime(t0.ns() + 20_000);
            sim.leave_idle_accounting(cpu);
        } else {
            sim.now = SimTime(t0.ns() + 25_000);
            sim.poll_time_limit(cpu, gen);
        }
        let m = &sim.cpus[cpu as usize].menu;
        assert_eq!((m.interval_ptr, m.intervals[0]), (1, 45_000), "wake {wake}");
    }
}

/// A tick ends a physical state's stay once the CPU is out of it:
/// `cpuidle_enter_state()` takes `time_end` after the state returns
/// (drivers/cpuidle/cpuidle.c v6.8 246, 279-302), so the residency includes the exit
/// latency and the next stay starts after it. Jacobsville, a CPU with 30 us periods
/// idles in C1E (exit 15 us) with its tick kept; the tick at T makes it choose C1E
/// again from T + 15 us, and a wake-up 100 us later records 100 − 15 = 85 us. Before,
/// the new stay started at T and the wake-up recorded 100 us.
#[test]
fn a_tick_ends_a_physical_state_after_its_exit_latency() {
    let (mut sim, states, cpu) = jacobsville_idle_cpu();
    let tick = sim.cost.params.tick_ns;
    sim.now = SimTime(10 * tick + tick / 2);
    sim.leave_idle_accounting(cpu);
    let c = &mut sim.cpus[cpu as usize];
    (c.menu.intervals, c.menu.interval_ptr) = ([30; 8], 0);
    sim.enter_idle(cpu);
    let name = |sim: &Simulator| states[sim.cpus[cpu as usize].cstate as usize].name;
    assert_eq!(name(&sim), "C1E");
    assert!(!sim.cpus[cpu as usize].tick_stopped);
    let t = SimTime(11 * tick);
    sim.now = t;
    sim.on_tick(cpu);
    let c = &sim.cpus[cpu as usize];
    assert_eq!(
        (name(&sim), c.cstate_since),
        ("C1E", SimTime(t.ns() + 15_000))
    );
    assert_eq!(c.menu.intervals[0], 45_000);
    sim.now = SimTime(t.ns() + 115_000);
    sim.leave_idle_accounting(cpu);
    assert_eq!(sim.cpus[cpu as usize].menu.intervals[1], 85);
}

/// `tick_nohz_get_sleep_length()` measures from `ts->idle_entrytime` (tick-sched.c
/// v6.8 1254), set at idle entry and at each interrupt's exit: POLL's time limit is
/// no interrupt, so the choice after it still measures from the entry. Jacobsville, a
/// CPU enters POLL 505 us before the watchdog's hrtimer (the next event) with a 0 us
/// history; at the 25 us limit the history has no pattern left, and the next timer
/// is 505 us from the entry (480 from now): C6 (500 us), the tick kept. Before, the
/// model measured from now and chose C1E.
#[test]
fn the_sleep_length_after_polls_limit_is_measured_from_the_idle_entry() {
    let n = presets::machine("jacobsville").unwrap().nr_cpus();
    let tasks = vec![task_on(
        n,
        &[0],
        0,
        vec![Op::Run(Dist::Fixed { ns: 1_000_000_000 }), Op::Exit],
    )];
    let mut sim = quiet_sim("jacobsville", "6.8", CpuMask::full(n), 5_000, tasks);
    let states = sim.cost.params.idle_states.clone();
    let cpu = n - 1;
    let t0 = SimTime(4_000_000_000 - 505_000);
    sim.now = t0;
    sim.leave_idle_accounting(cpu);
    let c = &mut sim.cpus[cpu as usize];
    (c.menu.intervals, c.menu.interval_ptr) = ([1, 0, 0, 0, 0, 0, 0, 0], 0);
    sim.enter_idle(cpu);
    let name = |sim: &Simulator| states[sim.cpus[cpu as usize].cstate as usize].name;
    assert_eq!(name(&sim), "POLL");
    let gen = sim.cpus[cpu as usize].cstate_gen;
    sim.now = SimTime(t0.ns() + 25_000);
    sim.poll_time_limit(cpu, gen);
    let c = &sim.cpus[cpu as usize];
    assert_eq!((name(&sim), c.tick_stopped), ("C6", false));
}

/// A sleeper's hrtimer fires on the CPU it was queued on, which takes the interrupt
/// (`hrtimer_interrupt()` → `hrtimer_wakeup()`) once out of its C-state; when the
/// wakee is placed elsewhere, that CPU is left idle with `need_resched()` clear:
/// `cpuidle_enter_state()` has ended the stay at `time_end`, after the exit
/// (drivers/cpuidle/cpuidle.c v6.8 279-302), the handler's exit is
/// `ts->idle_entrytime` (`tick_nohz_irq_exit()`, tick-sched.c v6.8 1199-1207), and
/// `do_idle()`'s loop goes round to `cpuidle_idle_call()`: `menu_update()` records
/// the stay, `menu_select()` chooses again (kernel/sched/idle.c v6.8 258-315).
/// xeon-smt-8 under 6.12+cookie-fastpath: a task of cookie 2 sleeps on CPU 0 while
/// CPU 0's sibling runs cookie 1, so its wake-up skips idle CPU 0 (the fast path's
/// cookie test) for another core. Before, CPU 0's stay went on as if nothing had
/// happened.
#[test]
fn a_sleepers_timer_that_wakes_its_task_elsewhere_ends_the_idle_stay() {
    let machine = presets::machine("xeon-smt-8").unwrap();
    let n = machine.nr_cpus();
    let env = crate::wakeup::WakeEnv::new(&machine, "6.12".parse().unwrap()).unwrap();
    let sib = env.smt_mask(CpuId(0)).iter().find(|c| c.0 != 0).unwrap().0;
    let other = (1..n).find(|&c| c != sib).unwrap();
    let us = |x: u64| Dist::Fixed { ns: x * 1_000 };
    let tasks = vec![
        // Cookie 1 on CPU 0's sibling from 200 us.
        task_on(
            n,
            &[sib],
            1,
            vec![Op::Sleep(us(200)), Op::Run(us(10_000)), Op::Exit],
        ),
        // Cookie 2: 100 us on CPU 0, then 1 ms asleep there.
        task_on(
            n,
            &[0, other],
            2,
            vec![
                Op::Run(us(100)),
                Op::Sleep(us(1_000)),
                Op::Run(us(100)),
                Op::Exit,
            ],
        ),
    ];
    let all = CpuMask::full(n);
    let mut sim = quiet_sim("xeon-smt-8", "6.12+cookie-fastpath", all, 100, tasks);
    let states = sim.cost.params.idle_states.clone();
    let b = 1usize;
    if let Loc::Queued(c) = sim.tasks[b].loc {
        if c != 0 {
            sim.migrate_queued(b as u32, c, 0, 0, record::MigrateReason::Periodic);
        }
    }
    // Until the sleeper's timer: CPU 0 idle in a physical state, the sibling busy.
    sim.run_until(SimTime::from_us(500));
    assert_eq!(sim.tasks[b].loc, Loc::Blocked);
    assert_eq!(sim.tasks[b].last_cpu, 0);
    let (mut was, mut since, mut ptr) = (0, SimTime::ZERO, 0);
    while sim.tasks[b].loc == Loc::Blocked {
        let c = &sim.cpus[0];
        (was, since, ptr) = (c.cstate as usize, c.cstate_since, c.menu.interval_ptr);
        assert!(sim.step());
    }
    let t = sim.now;
    assert!(!states[was].polling && since < t);
    assert_eq!(sim.cpus[sib as usize].mode, Mode::Running);
    assert!(
        matches!(sim.tasks[b].loc, Loc::Queued(c) | Loc::Running(c) | Loc::WakeList(c) if c == other),
        "the wakee went to CPU {other}: {:?}",
        sim.tasks[b].loc
    );
    let c = &sim.cpus[0];
    assert_eq!(c.mode, Mode::Idle);
    let out = SimTime(t.ns() + states[was].exit_latency_ns);
    assert_eq!((c.cstate_since, c.idle_entry), (out, out), "a new stay");
    assert_eq!(c.menu.interval_ptr, (ptr + 1) % 8, "menu_update() ran");
}

/// A CPU already woken (Mode::Waking: the IPI, the C-state's exit) is still in
/// `do_idle()`'s loop, between `tick_nohz_idle_enter()` and `tick_nohz_idle_exit()`
/// (kernel/sched/idle.c v6.8 256-325). With its tick kept, a tick in that window
/// sets `ts->got_idle_tick` (`ts->inidle`, tick-sched.c v6.8 228-229), and the stay
/// counts as a tick wake-up the timer did not foresee (45 ms, menu.c v6.8 484-494).
/// Before, the Waking CPU's tick left the governor's flag alone.
#[test]
fn a_tick_on_a_waking_cpu_marks_its_stay_a_tick_wake_up() {
    let (mut sim, states, cpu) = jacobsville_idle_cpu();
    let tick = sim.cost.params.tick_ns;
    sim.now = SimTime(10 * tick + tick / 2);
    sim.leave_idle_accounting(cpu);
    let c = &mut sim.cpus[cpu as usize];
    (c.menu.intervals, c.menu.interval_ptr) = ([10; 8], 0);
    c.nohz_tick_stopped = false;
    sim.enter_idle(cpu);
    let c = &sim.cpus[cpu as usize];
    assert_eq!(
        (states[c.cstate as usize].name, c.tick_stopped),
        ("C1", false)
    );
    // A wake-up's kick_target(): the CPU leaves idle at its Resched, later.
    sim.cpus[cpu as usize].mode = Mode::Waking;
    sim.now = SimTime(11 * tick);
    sim.on_tick(cpu);
    sim.now = SimTime(11 * tick + 3_000);
    sim.leave_idle_accounting(cpu);
    assert_eq!(sim.cpus[cpu as usize].menu.intervals[0], 45_000);
}

/// A CPU whose tick is stopped takes none until `tick_nohz_idle_exit()` restarts it
/// (kernel/time/tick-sched.c v6.8 947-951, 1362-1387), which `do_idle()` calls only
/// once it has left its loop (kernel/sched/idle.c v6.8 325), so a CPU already woken
/// but still on its way out (Mode::Waking) has no tick either: no
/// `trigger_load_balance()`, no `nohz_balancer_kick()`. Jacobsville: a task sleeps
/// 6.94 ms on its CPU, which stops its tick in C6, until 60 us before a tick; its
/// wake-up takes the C-state's exit (130 us), across the tick. Before, that tick ran the busy tick's
/// `nohz_balance_exit_idle()` and the periodic balance on the CPU still in C6.
#[test]
fn a_waking_cpu_whose_tick_is_stopped_takes_no_tick() {
    let n = presets::machine("jacobsville").unwrap().nr_cpus();
    let tasks = vec![task_on(
        n,
        &[0],
        0,
        vec![
            Op::Run(Dist::Fixed { ns: 1_000_000 }),
            Op::Sleep(Dist::Fixed { ns: 6_940_000 }),
            Op::Run(Dist::Fixed { ns: 1_000_000 }),
            Op::Exit,
        ],
    )];
    let mut sim = quiet_sim("jacobsville", "6.8", CpuMask::full(n), 20, tasks);
    let states = sim.cost.params.idle_states.clone();
    let tick = SimTime(2 * sim.cost.params.tick_ns);
    sim.run_until(SimTime(tick.ns() - 200_000));
    let c = &sim.cpus[0];
    assert_eq!(c.mode, Mode::Idle);
    assert!(c.tick_stopped && c.nohz_tick_stopped, "{c:?}");
    assert_eq!(states[c.cstate as usize].name, "C6");
    let llc = sim.llc_id_of[0] as usize;
    let busy = sim.state.llc_shared[llc].nr_busy_cpus;
    sim.run_until(tick);
    let c = &sim.cpus[0];
    assert_eq!(
        c.mode,
        Mode::Waking,
        "the wake-up is on its way across the tick"
    );
    assert!(
        c.nohz_tick_stopped,
        "no busy tick, no nohz_balance_exit_idle()"
    );
    assert!(!c.got_idle_tick);
    assert_eq!(sim.state.llc_shared[llc].nr_busy_cpus, busy);
}
