//! Unit tests of the simulator's internals (core scheduling, program limits, the
//! wake-up view, the wake-up's resched IPI).

use super::test_support::{test_config, tiny};
use super::*;
use crate::cost::CostParams;
use crate::topology::presets;
use crate::wakeup::{QueuePath, WakeFlags};
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
fn core_steal_run() -> (Simulator, u32, u32) {
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
    use super::record::RecordKind;
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
        .records
        .iter()
        .filter_map(|r| match r.kind {
            RecordKind::Wake(w) if workers.contains(&w.wakee) && messages.contains(&w.waker) => {
                Some(w.seq)
            }
            _ => None,
        })
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

/// A task of `program` pinned to `cpu` of kunpeng920-4826 (96 CPUs).
fn kp4826_pinned(cpu: u32, program: Vec<Op>) -> TaskSpec {
    task_on(96, &[cpu], 0, program)
}

/// On kunpeng920-4826's CPUs 0..8 (one LLC) and `cpu` and `target` under 6.8: a hog `curr` pinned to CPU
/// `target`, a hog `waker` pinned to CPU `cpu`, and `wakee`, pinned to `target`,
/// blocked in its `Wait` with both hogs running. Returns the simulator at that point.
fn remote_running_target(cpu: u32, target: u32) -> Simulator {
    let (curr, waker, wakee) = (0, 1, 2);
    let hog = || vec![Op::Run(Dist::Fixed { ns: 100_000_000 }), Op::Exit];
    let tasks = vec![
        kp4826_pinned(target, hog()),
        kp4826_pinned(cpu, hog()),
        kp4826_pinned(
            target,
            vec![Op::Wait, Op::Run(Dist::Fixed { ns: 1_000_000 }), Op::Exit],
        ),
        // A second sleeper there, for the tests that wake two.
        kp4826_pinned(
            target,
            vec![Op::Wait, Op::Run(Dist::Fixed { ns: 1_000_000 }), Op::Exit],
        ),
    ];
    let allowed = CpuMask::from_cpus(96, (0..8).chain([cpu, target]).map(CpuId));
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 1_000, tasks);
    let ready = |sim: &Simulator| {
        let blocked =
            |t: usize| (sim.tasks[t].loc, sim.tasks[t].block) == (Loc::Blocked, Block::Wait);
        blocked(wakee as usize)
            && blocked(3)
            && sim.tasks[curr as usize].loc == Loc::Running(target)
            && sim.tasks[waker as usize].loc == Loc::Running(cpu)
    };
    while !ready(&sim) {
        assert!(sim.step(), "the wakee never blocked under running hogs");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    sim
}

/// `ttwu_queue()` through the remote rq lock (kernel/sched/core.c v6.8 4046-4058):
/// waker and target share the LLC and the target runs a task, so `ttwu_queue_cond()`
/// (3986-4024) says no. The waker then runs `ttwu_do_activate()` → `wakeup_preempt()`
/// (3804, 2247-2260) → `check_preempt_wakeup_fair()` (fair.c 8268-8344) and, if the
/// wakee should run first, `resched_curr()` of the remote target (core.c 1045-1067):
/// `set_nr_and_not_polling()` of a running task is true, so the waker sends
/// `smp_send_reschedule()` (its `ipi_send_ns`), whose handler (`scheduler_ipi()`, include/linux/sched.h 1905) the target runs. Its
/// current task loses the IPI's receive time (`ipi_recv_ns`) and is preempted one IPI
/// (send + receive) later. The current task has a whole slice left: a wakee owed the
/// most lag makes it ineligible and has the earlier deadline, so it preempts; a wakee
/// of no lag leaves it eligible, and it keeps its slice (`pick_eevdf()`'s
/// RUN_TO_PARITY, fair.c 878-899): no resched_curr(), no IPI, nothing taken from it.
#[test]
fn a_remote_running_target_pays_the_resched_ipi_of_a_remote_lock_wake_up() {
    let (curr, waker, wakee) = (0, 1, 2);
    let (cpu, target) = (2, 3);
    let mut waker_paid = Vec::new();
    for preempt in [true, false] {
        let mut sim = remote_running_target(cpu, target);
        assert_eq!(sim.llc_of[cpu as usize], sim.llc_of[target as usize]);
        // The current task, alone on its queue, has a whole slice left; only the
        // wakee's lag differs between the cases.
        sim.update_curr(target);
        let v = sim.tasks[curr as usize].vruntime;
        sim.tasks[curr as usize].deadline = v + sim.slice_ns;
        sim.tasks[wakee as usize].vlag = if preempt { sim.lag_limit() } else { 0 };
        let stolen = sim.cpus[target as usize].stolen_ns;
        let debt = sim.tasks[waker as usize].debt_ns;
        let (remote_lock, ipis) = (sim.metrics.wake_remote_lock, sim.metrics.wake_ipi);
        // What the waker's `Op::Send` does (program.rs): a pipe write's wake-up.
        sim.tasks[wakee as usize].tokens += 1;
        sim.wake(wakee, Some(waker), cpu, WakeFlags::SYNC);
        assert_eq!(
            (sim.metrics.wake_remote_lock, sim.metrics.wake_ipi),
            (remote_lock + 1, ipis),
            "through the remote rq lock, no wakelist"
        );
        assert_eq!(sim.tasks[wakee as usize].loc, Loc::Queued(target));
        assert_eq!(sim.tasks[curr as usize].loc, Loc::Running(target));
        let p = &sim.cost.params;
        let (ipi, recv) = (p.ipi_ns(), p.ipi_recv_ns);
        assert!(recv > 0);
        let charged = sim.cpus[target as usize].stolen_ns - stolen;
        assert_eq!(charged, if preempt { recv } else { 0 }, "preempt {preempt}");
        waker_paid.push(sim.tasks[waker as usize].debt_ns - debt);
        let t0 = sim.now;
        while sim.tasks[wakee as usize].loc != Loc::Running(target) {
            assert!(sim.step(), "the wakee never ran");
            assert!(sim.error.is_none(), "{:?}", sim.error);
        }
        let waited = sim.now.since(t0);
        if preempt {
            assert_eq!(waited, ipi, "preempted one IPI later");
        } else {
            // Not before the current task's slice is used up (its next tick after that).
            assert!(waited >= sim.slice_ns as u64, "waited {waited} ns");
        }
    }
    // resched_curr() runs on the waker's CPU: its smp_send_reschedule() costs the
    // waker `ipi_send_ns` on top of what it pays either way.
    let send = remote_running_target(cpu, target).cost.params.ipi_send_ns;
    assert!(send > 0);
    assert_eq!(
        waker_paid[0],
        waker_paid[1] + send,
        "the waker sends the IPI"
    );
}

/// `ttwu_queue_wakelist()` to a busy CPU in another LLC (core.c v6.8 3986-4024): the
/// waker sends an IPI, whose handler (`sched_ttwu_pending()`, 3890-3918) activates
/// the wakee and clears `rq->ttwu_pending` when it lands, not at the target's next
/// `schedule()`. Until then a further wake-up joins the list without an IPI of its
/// own (`__smp_call_single_queue()` finds the list non-empty); after it, one sends
/// its own.
#[test]
fn a_busy_targets_wake_list_is_emptied_when_its_ipi_lands() {
    let (curr, waker, wakee) = (0, 1, 2);
    let (cpu, target) = (2, 30);
    let mut sim = remote_running_target(cpu, target);
    assert_ne!(sim.llc_of[cpu as usize], sim.llc_of[target as usize]);
    // The wakee does not preempt (as in the test above): the target keeps running.
    sim.update_curr(target);
    let v = sim.tasks[curr as usize].vruntime;
    sim.tasks[curr as usize].deadline = v + sim.slice_ns;
    sim.tasks[wakee as usize].vlag = 0;
    let ipis = sim.metrics.wake_ipi;
    sim.tasks[wakee as usize].tokens += 1;
    sim.wake(wakee, Some(waker), cpu, WakeFlags::SYNC);
    assert_eq!(sim.metrics.wake_ipi, ipis + 1, "a wake list and an IPI");
    assert!(sim.state.rqs[target as usize].ttwu_pending);
    let (t0, ipi) = (sim.now, sim.cost.params.ipi_ns());
    while sim.state.rqs[target as usize].ttwu_pending && sim.now.since(t0) <= ipi {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert!(
        !sim.state.rqs[target as usize].ttwu_pending,
        "still pending {} ns after the wake-up",
        sim.now.since(t0)
    );
    assert_eq!(sim.now.since(t0), ipi, "cleared as the IPI lands");
    assert_eq!(sim.tasks[curr as usize].loc, Loc::Running(target));
}

/// A wake-up that joins a busy target's wake list while its IPI is on the way
/// (`__smp_call_single_queue()`: the list was not empty, no IPI) sends nothing and
/// charges the target nothing more: the pending IPI's handler activates it and, if it
/// should preempt, reschedules the target locally as that IPI lands.
#[test]
fn a_wake_up_that_joins_a_pending_wake_list_sends_nothing() {
    let (curr, waker, first, second) = (0, 1, 2, 3);
    let (cpu, target) = (2, 30);
    let mut sim = remote_running_target(cpu, target);
    sim.update_curr(target);
    let v = sim.tasks[curr as usize].vruntime;
    sim.tasks[curr as usize].deadline = v + sim.slice_ns;
    sim.tasks[first as usize].vlag = 0;
    sim.tasks[first as usize].tokens += 1;
    sim.wake(first, Some(waker), cpu, WakeFlags::SYNC);
    let t0 = sim.now;
    let (ipis, stolen) = (sim.metrics.wake_ipi, sim.cpus[target as usize].stolen_ns);
    // The second is owed the most lag: it preempts.
    sim.tasks[second as usize].vlag = sim.lag_limit();
    sim.tasks[second as usize].tokens += 1;
    sim.wake(second, Some(waker), cpu, WakeFlags::SYNC);
    assert_eq!(sim.metrics.wake_ipi, ipis, "no IPI of its own");
    assert_eq!(sim.tasks[second as usize].loc, Loc::WakeList(target));
    assert_eq!(
        sim.cpus[target as usize].stolen_ns, stolen,
        "no second receive"
    );
    assert!(
        !sim.cpus[target as usize].resched_ipi,
        "no smp_send_reschedule()"
    );
    while sim.tasks[curr as usize].loc == Loc::Running(target) {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(
        sim.now.since(t0),
        sim.cost.params.ipi_ns(),
        "as the first IPI lands"
    );
    assert_eq!(sim.tasks[second as usize].loc, Loc::Running(target));
}

/// `__ttwu_queue_wakelist()` (core.c v6.8 3944-3952) leaves the wakee off the target's
/// rq: until the IPI's `sched_ttwu_pending()` (3885-3918) runs `ttwu_do_activate()`
/// (3782-3831), it is not in `rq->nr_running` (what `find_busiest_queue()` and
/// `detach_tasks()` read, fair.c v6.8 10806, 9083-9091) nor on the CFS queue, and its
/// vruntime is placed only then, against the target's
/// `avg_vruntime()` after `enqueue_entity()`'s `update_curr()` (fair.c v6.8 5275,
/// 5300). Until session 29 the simulator enqueued, placed and attached it at the
/// wake-up and only discounted it from `nr_running`.
#[test]
fn a_wake_list_wakee_is_enqueued_and_placed_when_its_ipi_lands() {
    let (curr, waker, wakee) = (0, 1, 2);
    let (cpu, target) = (2, 30);
    let mut sim = remote_running_target(cpu, target);
    assert_ne!(sim.llc_of[cpu as usize], sim.llc_of[target as usize]);
    // No preemption: the target keeps running its hog through the IPI.
    sim.update_curr(target);
    let v = sim.tasks[curr as usize].vruntime;
    sim.tasks[curr as usize].deadline = v + sim.slice_ns;
    sim.tasks[wakee as usize].vlag = 0;
    sim.tasks[wakee as usize].tokens += 1;
    sim.wake(wakee, Some(waker), cpu, WakeFlags::SYNC);
    let t0 = sim.now;
    assert_eq!(sim.tasks[wakee as usize].loc, Loc::WakeList(target));
    assert_eq!(sim.state.rqs[target as usize].nr_running, 1, "curr only");
    assert!(!sim.cpus[target as usize].queue.contains(&wakee));
    let placed_before = sim.tasks[wakee as usize].vruntime;
    while sim.tasks[wakee as usize].loc == Loc::WakeList(target) {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(
        sim.now.since(t0),
        sim.cost.params.ipi_ns(),
        "as the IPI lands"
    );
    assert_eq!(sim.tasks[wakee as usize].loc, Loc::Queued(target));
    assert_eq!(sim.state.rqs[target as usize].nr_running, 2);
    // Placed at the target's avg_vruntime() of now (vlag 0): the hog ran on through
    // the IPI, so later than anything the wake-up could have seen.
    let placed = sim.tasks[wakee as usize].vruntime;
    assert!(placed > placed_before, "{placed} <= {placed_before}");
    sim.update_curr(target);
    let hog_v = sim.tasks[curr as usize].vruntime;
    assert_eq!(
        placed,
        (hog_v + placed) / 2,
        "at the mean of the hog's vruntime (updated to now) and its own"
    );
}

/// A wake-up onto an idle CPU of the waker's LLC goes on its wake list
/// (`ttwu_queue_cond()`, core.c v6.8 3986-4024: "if (!cpu_rq(cpu)->nr_running)
/// return true;"), with an IPI (Kunpeng's WFI does not poll). The wakee stays off the
/// target's rq until the target runs `sched_ttwu_pending()` (3885-3918) on its way out
/// of idle (`flush_smp_call_function_queue()`, idle.c v6.8 339), so a second wake-up
/// onto it before then still reads `nr_running == 0`: it joins the list, and sends no
/// IPI (`rq->ttwu_pending` is set), instead of taking the remote rq lock. Once the
/// target has scheduled, its `rq->nr_running` counts both.
#[test]
fn a_second_wake_up_onto_a_pending_idle_target_joins_its_wake_list() {
    let (waker, first, second) = (0, 1, 2);
    let (cpu, target) = (2, 3);
    let sleeper = || {
        kp4826_pinned(
            target,
            vec![Op::Wait, Op::Run(Dist::Fixed { ns: 1_000_000 }), Op::Exit],
        )
    };
    let hog = vec![Op::Run(Dist::Fixed { ns: 100_000_000 }), Op::Exit];
    let tasks = vec![kp4826_pinned(cpu, hog), sleeper(), sleeper()];
    let allowed = CpuMask::from_cpus(96, (0..8).map(CpuId));
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 1_000, tasks);
    let blocked = |sim: &Simulator, t: usize| {
        (sim.tasks[t].loc, sim.tasks[t].block) == (Loc::Blocked, Block::Wait)
    };
    while !(blocked(&sim, 1)
        && blocked(&sim, 2)
        && sim.tasks[waker as usize].loc == Loc::Running(cpu)
        && sim.cpus[target as usize].mode == Mode::Idle)
    {
        assert!(sim.step(), "the sleepers never blocked");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert_eq!(sim.llc_of[cpu as usize], sim.llc_of[target as usize]);
    assert!(!sim.state.rqs[target as usize].polling);
    let (ipis, joined, locked) = (
        sim.metrics.wake_ipi,
        sim.metrics.wake_polling,
        sim.metrics.wake_remote_lock,
    );
    sim.tasks[first as usize].tokens += 1;
    sim.wake(first, Some(waker), cpu, WakeFlags::SYNC);
    assert_eq!(sim.metrics.wake_ipi, ipis + 1, "a wake list and an IPI");
    let rq = &sim.state.rqs[target as usize];
    assert!(rq.ttwu_pending);
    assert_eq!(rq.nr_running, 0, "the wakee is not on the rq yet");
    let pv = sim.views[second as usize].task.clone().unwrap();
    assert!(
        crate::wakeup::ttwu_queue_cond(&sim.env, &sim.state, &pv, CpuId(cpu), CpuId(target)),
        "ttwu_queue_cond() reads an idle target"
    );
    sim.tasks[second as usize].tokens += 1;
    sim.wake(second, Some(waker), cpu, WakeFlags::SYNC);
    assert_eq!(
        sim.metrics.wake_remote_lock, locked,
        "no remote rq lock for the second wake-up"
    );
    assert_eq!(
        (sim.metrics.wake_ipi, sim.metrics.wake_polling),
        (ipis + 1, joined + 1),
        "the second joins the pending list, no IPI of its own"
    );
    assert_eq!(sim.state.rqs[target as usize].nr_running, 0);
    while sim.cpus[target as usize].mode != Mode::Running {
        assert!(sim.step(), "the target never ran");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    let rq = &sim.state.rqs[target as usize];
    assert!(!rq.ttwu_pending);
    assert_eq!(
        (rq.nr_running, rq.nr_running),
        (2, 2),
        "both activated as the target left idle"
    );
}

/// `resched_curr()` of a remote CPU that is idle sends it an IPI (Kunpeng's WFI
/// does not poll); of one already leaving idle, whose idle task has
/// `TIF_NEED_RESCHED` set, it returns early (core.c v6.8 1045-1067): the waker
/// that takes its rq lock sends nothing.
#[test]
fn a_remote_lock_wake_up_onto_a_waking_cpu_sends_no_ipi() {
    let sleeper = kp4826_pinned(
        3,
        vec![Op::Wait, Op::Run(Dist::Fixed { ns: 1_000_000 }), Op::Exit],
    );
    let allowed = CpuMask::from_cpus(96, (0..8).map(CpuId));
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 100, vec![sleeper]);
    while (sim.tasks[0].loc, sim.tasks[0].block) != (Loc::Blocked, Block::Wait)
        || sim.cpus[3].mode != Mode::Idle
    {
        assert!(sim.step());
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    assert!(!sim.state.rqs[3].polling);
    let idle = sim.ttwu_queue(2, 3, QueuePath::RemoteLock, Mode::Idle);
    assert!(idle.need_ipi, "an idle CPU gets an IPI");
    assert!(idle.waker_ns >= sim.cost.params.ipi_send_ns);
    let waking = sim.ttwu_queue(2, 3, QueuePath::RemoteLock, Mode::Waking);
    assert!(!waking.need_ipi, "a waking one gets none");
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
