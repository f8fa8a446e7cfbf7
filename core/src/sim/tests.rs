//! Unit tests of the simulator's internals (core scheduling, program limits, the
//! wake-up view; the wake-up's queueing is in `ttwu_queue_tests.rs`).

use super::test_support::{test_config, tiny};
use super::ttwu_queue_tests::kp4826_pinned;
use super::*;
use crate::cost::CostParams;
use crate::topology::presets;
use crate::workload::{self, Dist, Op, TaskSpec, Workload, MAX_REPEAT};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// A cookie-pairs plan on a preset, and a 10 ms run of it on all its CPUs.
fn cookie_pairs(preset: &str, threads: u32, work: Dist, cookies: bool) -> SimConfig {
    let machine = presets::machine(preset).unwrap();
    let n = machine.nr_cpus();
    let w = Workload::CookiePairs {
        threads,
        iterations: 2,
        work,
        sleep: work,
        cookies,
    };
    let plan = workload::build(&w, &CostParams::for_machine(&machine), n).unwrap();
    SimConfig {
        check_invariants: false,
        ..test_config(machine, CpuMask::full(n), "6.8", plan, SimTime::from_ms(10))
    }
}

/// The wake-up path reads `p->core_cookie` from the task's view: the simulator
/// must put each task's cookie there (it once kept its own copy and left the
/// view's at 0, so every wakee looked cookie-less to select_idle_sibling()).
#[test]
fn the_wake_up_view_carries_the_task_cookie() {
    let work = Dist::Uniform { lo: 0, hi: 1_000 };
    let cfg = cookie_pairs("xeon-smt-8", 10, work, true);
    let want: Vec<u64> = cfg.plan.tasks.iter().map(|t| t.cookie).collect();
    assert!(want.iter().any(|&c| c != 0));
    let sim = Simulator::new(cfg).unwrap();
    for (t, &c) in want.iter().enumerate() {
        assert_eq!(sim.views[t].task.as_ref().map(|v| v.cookie), Some(c));
    }
}

/// A loop longer than a task can count is refused up front with the op named,
/// and one at the limit is accepted.
#[test]
fn a_loop_past_the_repeat_limit_is_refused() {
    let cfg = |times: u64| {
        let mut cfg = cookie_pairs("flat-16", 2, Dist::Fixed { ns: 1_000 }, false);
        for t in &mut cfg.plan.tasks {
            for op in &mut t.program {
                if let Op::Repeat { times: x, .. } = op {
                    *x = times;
                }
            }
        }
        cfg
    };
    match Simulator::new(cfg(MAX_REPEAT as u64 + 1)) {
        Err(SimError::Workload(msg)) => {
            assert!(
                msg.contains("the loop at op 2 repeats 4294967296 times"),
                "{msg}"
            )
        }
        other => panic!("expected a workload error, got {:?}", other.err()),
    }
    assert!(Simulator::new(cfg(MAX_REPEAT as u64)).is_ok());
}

/// `task_tick_core()`: a lone task yields to a forced-idle sibling once it has run
/// more than half its slice, and not before, nor with company on its own CPU.
#[test]
fn a_lone_task_yields_the_core_after_half_a_slice() {
    let cfg = cookie_pairs("xeon-smt-8", 10, Dist::Fixed { ns: 1_000 }, true);
    let mut sim = Simulator::new(cfg).unwrap();
    let cpu = 0;
    let sib = sim.siblings[0][0];
    sim.now = SimTime::from_ms(100);
    let half = sim.slice_ns as u64 / 2;
    let set = |sim: &mut Simulator, ran: u64, nr: u32, sib_mode: Mode| {
        let c = &mut sim.cpus[cpu];
        c.mode = Mode::Running;
        c.curr = 0;
        c.slice_start = SimTime(sim.now.ns() - ran);
        sim.state.rqs[cpu].nr_running = nr;
        sim.cpus[sib as usize].mode = sib_mode;
    };
    set(&mut sim, half, 1, Mode::ForceIdle);
    assert!(
        !sim.core_tick_hands_over(0),
        "exactly half a slice is not more"
    );
    set(&mut sim, half + 1, 1, Mode::ForceIdle);
    assert!(sim.core_tick_hands_over(0));
    set(&mut sim, half + 1, 2, Mode::ForceIdle);
    assert!(!sim.core_tick_hands_over(0), "another task queued here");
    set(&mut sim, half + 1, 1, Mode::Idle);
    assert!(!sim.core_tick_hands_over(0), "no sibling forced idle");
}

/// Two pinned tasks of different cookies on the two threads of one core: the one
/// running since the last core-wide pick (its vruntime ahead of its base), the
/// other just woken. The core-wide pick prefers the wakee (`cfs_prio_less()`):
/// the running sibling is preempted and forced idle, not the wakee.
fn core_pick_run() -> (Simulator, u32) {
    let sib = smt8_sibling_of_0();
    let ms = |n: u64| Dist::Fixed { ns: n * 1_000_000 };
    let tasks = vec![
        smt8_task(&[sib], 1, vec![Op::Run(ms(10)), Op::Exit]),
        smt8_task(&[0], 2, vec![Op::Sleep(ms(1)), Op::Run(ms(1)), Op::Exit]),
    ];
    (smt8_run(tasks), sib)
}

/// CPU 0's SMT sibling on xeon-smt-8.
fn smt8_sibling_of_0() -> u32 {
    let machine = presets::machine("xeon-smt-8").unwrap();
    let env = WakeEnv::new(&machine, "6.12".parse().unwrap()).unwrap();
    let sib = env.smt_mask(CpuId(0)).iter().find(|c| c.0 != 0).unwrap();
    sib.0
}

/// A task of `cookie` that may run on `allowed` (CPUs of xeon-smt-8).
fn smt8_task(allowed: &[u32], cookie: u64, program: Vec<Op>) -> TaskSpec {
    task_on(8, allowed, cookie, program)
}

/// A task of `cookie` that may run on `allowed`, CPUs of an `n`-CPU machine.
pub(super) fn task_on(n: u32, allowed: &[u32], cookie: u64, program: Vec<Op>) -> TaskSpec {
    TaskSpec {
        cookie,
        allowed: Some(CpuMask::from_cpus(n, allowed.iter().map(|&c| CpuId(c)))),
        ..tiny(None, program)
    }
}

/// `tasks` on `allowed` of `preset` under `patches`, quiet, to completion (at most
/// `ms`), invariants checked.
pub(super) fn quiet_sim(
    preset: &str,
    patches: &str,
    allowed: CpuMask,
    ms: u64,
    tasks: Vec<TaskSpec>,
) -> Simulator {
    Simulator::new(test_config(
        presets::machine(preset).unwrap(),
        allowed,
        patches,
        Plan::to_completion(tasks),
        SimTime::from_ms(ms),
    ))
    .unwrap()
}

/// `tasks` on xeon-smt-8 under 6.12, to completion, invariants checked.
fn smt8_run(tasks: Vec<TaskSpec>) -> Simulator {
    quiet_sim("xeon-smt-8", "6.12", CpuMask::full(8), 100, tasks)
}

#[test]
fn the_core_wide_pick_prefers_the_wakee_over_the_running_sibling() {
    let (mut sim, sib) = core_pick_run();
    assert!(sim.run_until(SimTime::from_us(900)));
    assert_eq!(sim.cpus[sib as usize].mode, Mode::Running);
    assert_eq!(sim.cpus[0].mode, Mode::Idle);
    // The wakee runs from about 1 ms (timer, C-state exit) to about 2 ms.
    assert!(sim.run_until(SimTime::from_us(1_600)));
    assert_eq!((sim.cpus[0].mode, sim.cpus[0].curr), (Mode::Running, 1));
    assert_eq!(sim.cpus[sib as usize].mode, Mode::ForceIdle);
    // Then the preempted task gets its core back and finishes.
    sim.run().unwrap();
    assert_eq!(sim.live_tasks(), 0);
    assert!(
        sim.metrics.force_idle_ns > 900_000,
        "{}",
        sim.metrics.force_idle_ns
    );
}

/// One core (CPU 0 and its sibling) and a CPU `x` of another core: D (cookie 2)
/// pinned to `x`; B and B' (cookie 2) pinned to CPU 0; A (cookie 1) pinned to the
/// sibling; E (cookie 1) may run on CPU 0 or `x`, and forks onto `x` (CPU 0 has
/// two tasks already), behind D. At time 0 CPU 0 picks B for the core, then the
/// sibling's pick prefers A (ties go to the picking CPU) and forces CPU 0 idle.
pub(super) fn core_steal_run() -> (Simulator, u32, u32) {
    let sib = smt8_sibling_of_0();
    let x = (1..8).find(|&c| c != sib).unwrap();
    let run = || vec![Op::Run(Dist::Fixed { ns: 10_000_000 }), Op::Exit];
    let tasks = vec![
        smt8_task(&[x], 2, run()),
        smt8_task(&[0], 2, run()),
        smt8_task(&[0], 2, run()),
        smt8_task(&[sib], 1, run()),
        smt8_task(&[0, x], 1, run()),
    ];
    (smt8_run(tasks), sib, x)
}

/// `sched_core_balance()`: CPU 0, forced idle when the core-wide pick gives its
/// core A's cookie, steals E (A's cookie) from behind D on another core; it
/// leaves E there when E last ran with its whole core busy
/// (`p->core_occupation > dst->idle->core_occupation`).
#[test]
fn a_forced_idle_cpu_steals_a_task_of_the_core_cookie() {
    let (a, e) = (3, 4);
    for (occupation, stolen) in [(0, true), (2, false)] {
        let (mut sim, sib, x) = core_steal_run();
        assert_eq!(sim.tasks[e].loc, Loc::Queued(x));
        sim.core_occ[e] = occupation;
        while sim.cpus[0].mode != Mode::ForceIdle {
            assert!(sim.step());
        }
        assert_eq!(sim.cpus[sib as usize].curr, a as u32);
        let want = if stolen {
            Loc::Queued(0)
        } else {
            Loc::Queued(x)
        };
        assert_eq!(sim.tasks[e].loc, want, "occupation {occupation}");
        assert_eq!(sim.metrics.core_steals, stolen as u64);
        sim.run().unwrap();
        assert_eq!(sim.live_tasks(), 0);
    }
}

/// menu.c's `state_count <= 1` rule: with one non-polling idle state (Kunpeng's WFI)
/// every idle entry stops the tick, however short the idle looks, and takes the CPU
/// out of `nr_busy_cpus`; it is counted busy again at its first busy tick
/// (`nohz_balance_exit_idle()`), not when it leaves idle. With a polling state 0
/// (x86), a short predicted idle keeps the tick.
#[test]
fn a_single_idle_state_stops_the_tick_at_every_idle_entry() {
    for (preset, stops) in [("kunpeng920-6426", true), ("xeon-smt-8", false)] {
        let cfg = cookie_pairs(preset, 2, Dist::Fixed { ns: 1_000 }, false);
        let mut sim = Simulator::new(cfg).unwrap();
        let cpu = sim.machine.nr_cpus() - 1;
        let llc = sim.llc_id_of[cpu as usize] as usize;
        let c = &mut sim.cpus[cpu as usize];
        c.menu.intervals = [1; 8];
        c.tick_stopped = false;
        c.nohz_tick_stopped = false;
        sim.state.llc_shared[llc].nr_busy_cpus = 1;
        sim.enter_idle(cpu);
        let c = &sim.cpus[cpu as usize];
        assert_eq!(
            (c.tick_stopped, c.nohz_tick_stopped),
            (stops, stops),
            "{preset}"
        );
        assert_eq!(sim.state.llc_shared[llc].nr_busy_cpus, 1 - stops as u32);
        sim.leave_idle_accounting(cpu);
        assert!(!sim.cpus[cpu as usize].tick_stopped, "the tick restarts");
        assert_eq!(sim.state.llc_shared[llc].nr_busy_cpus, 1 - stops as u32);
        sim.nohz_balance_exit_idle(cpu);
        assert_eq!(sim.state.llc_shared[llc].nr_busy_cpus, 1, "{preset}");
    }
}

/// schbench's message thread wakes its workers with a futex (`fpost()`:
/// FUTEX_WAKE_PRIVATE), and futex_wake() wakes through `wake_up_q()`
/// (kernel/futex/waitwake.c v6.8 lines 155-199), i.e. `wake_up_process()` =
/// `try_to_wake_up(p, TASK_NORMAL, 0)` (kernel/sched/core.c v6.8 lines 1017-1033,
/// 4507-4510): the captured wake-ups of the workers carry no `sync` flag. The pipes'
/// and sockets' wake-ups keep theirs (`wake_up_interruptible_sync_poll()`), as the
/// start barrier's test shows for tbench.
#[test]
fn schbench_workers_are_woken_by_futex_without_wf_sync() {
    let machine = presets::machine("kunpeng920-6426").unwrap();
    let n = machine.nr_cpus();
    let w = Workload::Schbench {
        message_threads: 2,
        workers: 4,
        cputime: Dist::Fixed { ns: 20_000 },
        sleep: Dist::Fixed { ns: 50_000 },
    };
    let plan = workload::build(&w, &CostParams::for_machine(&machine), n).unwrap();
    let workers: Vec<u32> = plan.latency_tasks.clone();
    let messages: Vec<u32> = (0..plan.tasks.len() as u32)
        .filter(|&t| plan.tasks[t as usize].role == "message")
        .collect();
    let cfg = || {
        test_config(
            machine.clone(),
            CpuMask::parse_list(n, "0-31").unwrap(),
            "6.6",
            plan.clone(),
            SimTime::from_ms(3),
        )
    };
    let mut sim = Simulator::with_recorder(cfg(), RecordConfig::default()).unwrap();
    sim.run().unwrap();
    let seqs: Vec<u32> = sim
        .recording()
        .unwrap()
        .wakes()
        .filter(|w| workers.contains(&w.wakee) && messages.contains(&w.waker))
        .map(|w| w.seq)
        .take(20)
        .collect();
    assert!(
        seqs.len() >= 10,
        "the message threads woke workers: {seqs:?}"
    );
    let rc = RecordConfig {
        capture_wake: seqs.clone(),
        ..RecordConfig::default()
    };
    let mut sim = Simulator::with_recorder(cfg(), rc).unwrap();
    sim.run().unwrap();
    let got = sim.captured_wakes();
    assert_eq!(got.len(), seqs.len());
    for c in got {
        assert!(
            !c.scenario.wake_flags.iter().any(|f| f == "sync"),
            "wake-up {}: {:?}",
            c.seq,
            c.scenario.wake_flags
        );
    }
}

/// A sleeper's hrtimer fires on the CPU it slept on, and `hrtimer_wakeup()` wakes it
/// from interrupt context: `current` is whatever that CPU runs, and
/// `select_task_rq_fair()`'s `record_wakee(p)` (fair.c v6.8 8154, 6951-6966)
/// counts the wakee against it, a task it interrupted or the CPU's idle task.
/// Two sleepers on kunpeng920-4826 under 6.8, each allowed two CPUs (a pinned
/// wakee skips `select_task_rq_fair()`, core.c v6.8 3646-3649): one on CPUs 2 and 5,
/// each busy with a pinned hog that never wakes anyone itself, the other on idle
/// CPUs 3 and 6.
#[test]
fn a_timer_wake_up_is_recorded_against_the_interrupted_current() {
    let (shared, alone) = (1, 2);
    let sleeper = || {
        let ms = Dist::Fixed { ns: 1_000_000 };
        vec![Op::Sleep(ms), Op::Run(ms), Op::Sleep(ms), Op::Exit]
    };
    let hog = || vec![Op::Run(Dist::Fixed { ns: 20_000_000 }), Op::Exit];
    let tasks = vec![
        kp4826_pinned(2, hog()),
        task_on(96, &[2, 5], 0, sleeper()),
        task_on(96, &[3, 6], 0, sleeper()),
        kp4826_pinned(5, hog()),
    ];
    let allowed = CpuMask::from_cpus(96, (0..8).map(CpuId));
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 50, tasks);
    sim.run_until(SimTime::from_ms(10));
    assert!(sim.error.is_none(), "{:?}", sim.error);
    let view = |w: &Waker| {
        let t = w.task.as_ref().expect("views hold tasks");
        (t.last_wakee, t.wakee_flips)
    };
    // The sleeper's two timers fired on a hog's CPU: the hogs' flips count its
    // wake-ups there, once per hog (`last_wakee` is then the sleeper).
    let once = |v: [(Option<TaskId>, u32); 2], p: u32| {
        let counted = (Some(TaskId(p)), 1);
        v.contains(&counted) && v.iter().all(|h| *h == counted || *h == (None, 0))
    };
    let hogs = [view(&sim.views[0]), view(&sim.views[3])];
    assert!(once(hogs, shared), "{hogs:?}");
    // The other sleeper's timers fired on idle CPUs: their idle tasks count them.
    let idle = [view(&sim.idle_views[3]), view(&sim.idle_views[6])];
    assert!(once(idle, alone), "{idle:?}");
    // Nothing woke from an interrupt on CPU 4.
    assert_eq!(view(&sim.idle_views[4]), (None, 0));
}

/// SIS_PROP's accounting, "update_avg(&this_sd->avg_scan_cost, time)" (fair.c
/// v5.12.9:6219), charges the waker CPU's own LLC domain (one `struct sched_domain`
/// per CPU, topology.c v5.12.9:1857): CPU 3's average moves by 1/8 of the cost, the
/// LLC's first CPU's does not.
#[test]
fn sis_prop_scan_cost_goes_to_the_waker_cpus_own_domain() {
    let t = task_on(16, &[0], 0, vec![Op::Exit]);
    let mut sim = quiet_sim("flat-16", "5.15", CpuMask::full(16), 10, vec![t]);
    sim.update_sis_prop_scan(3, 800);
    let sp = &sim.state.sis_prop;
    assert_eq!((sp.avg_scan_cost_ns[3], sp.avg_scan_cost_ns[0]), (100, 0));
}

/// Z (cookie 2) pinned to CPU 0, X (cookie 1) and Y (cookie 2) pinned to its
/// sibling, each running 10 ms, under `patches`: stepped until the core runs X's
/// cookie (X on the sibling, Y queued behind it, CPU 0 forced idle with Z queued).
fn running_sibling_run(patches: &str) -> (Simulator, u32) {
    let sib = smt8_sibling_of_0();
    let run = || vec![Op::Run(Dist::Fixed { ns: 10_000_000 }), Op::Exit];
    let tasks = vec![
        smt8_task(&[0], 2, run()),
        smt8_task(&[sib], 1, run()),
        smt8_task(&[sib], 2, run()),
    ];
    let mut sim = quiet_sim("xeon-smt-8", patches, CpuMask::full(8), 100, tasks);
    let s = sib as usize;
    while !(sim.cpus[s].mode == Mode::Running
        && sim.cpus[s].curr == 1
        && sim.cpus[0].mode == Mode::ForceIdle)
    {
        assert!(
            sim.step() && sim.error.is_none(),
            "{patches}: {:?}",
            sim.error
        );
        assert!(sim.now < SimTime::from_ms(30), "{patches}: X never ran");
    }
    (sim, sib)
}

/// The core-wide pick takes a running sibling's candidate from its own fair pick
/// over its current task and its queue (`pick_task()` on `rq_i`, core.c v6.12.19
/// 6165; `pick_eevdf()` with `cfs_rq->curr`, fair.c 907-970; 6.5's
/// `pick_next_entity(cfs_rq, curr)`), not its current task. X runs on CPU 0's
/// sibling 2 ms of vruntime ahead of Y queued there, so X is not eligible (6.12) or
/// not the leftmost (6.5), and Y is that CPU's pick; Z's vruntime, against CPU 0's
/// `min_vruntime_fi`, is behind X's but not Y's. CPU 0's core-wide pick then gives
/// the core Y's cookie: CPU 0 runs Z and the sibling switches to Y (`resched_curr()`
/// as its core pick is not its current task, 6259-6265). Taking X as the sibling's
/// candidate would have kept X's cookie and left CPU 0 forced idle. With X eligible
/// and its slice protected (RUN_TO_PARITY, fair.c 928-929) X stays the candidate.
#[test]
fn a_running_siblings_candidate_is_its_own_fair_pick() {
    let (x, y, z) = (1, 2, 0);
    for (patches, x_ahead) in [("6.12", true), ("6.5", true), ("6.12", false)] {
        let (mut sim, sib) = running_sibling_run(patches);
        let s = sib as usize;
        sim.update_curr(sib);
        assert_eq!(sim.tasks[y].loc, Loc::Queued(sib));
        let yv = sim.tasks[y].vruntime;
        // Ahead of Y by 2 ms (not eligible) or level with it (eligible), and short
        // of its deadline.
        let xv = if x_ahead { yv + 2_000_000 } else { yv };
        sim.cpus[s].v_sum += xv - sim.tasks[x].vruntime;
        sim.tasks[x].vruntime = xv;
        sim.tasks[x].deadline = xv + 1_000_000;
        sim.tasks[y].deadline = yv + 500_000;
        // Z's normalized vruntime 1 ms behind X's.
        let nx = xv - sim.cpus[s].fi_base;
        sim.cpus[0].fi_base = sim.tasks[z].vruntime - nx - 1_000_000;
        sim.schedule(0);
        sim.check_invariants().unwrap();
        let on = |c: usize| (sim.cpus[c].mode, sim.cpus[c].curr);
        if x_ahead {
            assert_eq!(on(0), (Mode::Running, z as u32), "{patches}");
            assert_eq!(on(s), (Mode::Running, y as u32), "{patches}");
            assert_eq!(sim.tasks[x].loc, Loc::Queued(sib), "{patches}");
        } else {
            assert_eq!(on(0).0, Mode::ForceIdle, "{patches}: X protected");
            assert_eq!(on(s), (Mode::Running, x as u32), "{patches}");
        }
    }
}
