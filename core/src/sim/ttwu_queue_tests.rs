//! The wake-up's queueing (`ttwu_queue()`, core.c v6.8 4037-4058): the remote rq
//! lock and its resched IPI, and the wake list (`ttwu_queue_wakelist()`, 4026-4035),
//! whose wakees stay off the target's rq until `sched_ttwu_pending()` (3885-3918).

use super::test_support::step_while_at;
use super::tests::{quiet_sim, task_on};
use super::*;
use crate::wakeup::{QueuePath, WakeFlags};
use crate::workload::{Dist, Op, TaskSpec};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Charges `curr`, running on `target`, to now and gives it a whole slice to its
/// deadline: an eligible current keeps the CPU (RUN_TO_PARITY) unless a wakee's lag
/// says otherwise.
pub(super) fn curr_keeps_its_slice(sim: &mut Simulator, curr: u32, target: u32) {
    sim.update_curr(target);
    let v = sim.tasks[curr as usize].vruntime;
    sim.tasks[curr as usize].deadline = v + sim.slice_ns;
}

/// A task of `program` pinned to `cpu` of kunpeng920-4826 (96 CPUs).
pub(super) fn kp4826_pinned(cpu: u32, program: Vec<Op>) -> TaskSpec {
    task_on(96, &[cpu], 0, program)
}

/// On kunpeng920-4826's CPUs 0..8 (one LLC) and `cpu` and `target` under 6.8: a hog `curr` pinned to CPU
/// `target`, a hog `waker` pinned to CPU `cpu`, and `wakee`, pinned to `target`,
/// blocked in its `Wait` with both hogs running. Returns the simulator at that point.
pub(in crate::sim) fn remote_running_target(cpu: u32, target: u32) -> Simulator {
    remote_running_target_with(cpu, target, None)
}

/// [`remote_running_target`], with the recorder on if `rc` is given.
pub(super) fn remote_running_target_with(
    cpu: u32,
    target: u32,
    rc: Option<record::RecordConfig>,
) -> Simulator {
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
    let mut sim = match rc {
        None => quiet_sim("kunpeng920-4826", "6.8", allowed, 1_000, tasks),
        Some(rc) => {
            let machine = crate::topology::presets::machine("kunpeng920-4826").unwrap();
            let plan = crate::workload::Plan::to_completion(tasks);
            let cfg =
                test_support::test_config(machine, allowed, "6.8", plan, SimTime::from_ms(1_000));
            Simulator::with_recorder(cfg, rc).unwrap()
        }
    };
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
        curr_keeps_its_slice(&mut sim, curr, target);
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
    curr_keeps_its_slice(&mut sim, curr, target);
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
    curr_keeps_its_slice(&mut sim, curr, target);
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
    step_while_at(&mut sim, curr, Loc::Running(target));
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
    curr_keeps_its_slice(&mut sim, curr, target);
    sim.tasks[wakee as usize].vlag = 0;
    sim.tasks[wakee as usize].tokens += 1;
    sim.wake(wakee, Some(waker), cpu, WakeFlags::SYNC);
    let t0 = sim.now;
    assert_eq!(sim.tasks[wakee as usize].loc, Loc::WakeList(target));
    assert_eq!(sim.state.rqs[target as usize].nr_running, 1, "curr only");
    assert!(!sim.cpus[target as usize].queue.contains(&wakee));
    let placed_before = sim.tasks[wakee as usize].vruntime;
    step_while_at(&mut sim, wakee, Loc::WakeList(target));
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
    assert_eq!(rq.nr_running, 2, "both activated as the target left idle");
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
    let idle = sim.ttwu_queue(2, 3, QueuePath::RemoteLock, Mode::Idle, true);
    assert!(idle.need_ipi, "an idle CPU gets an IPI");
    assert!(idle.waker_ns >= sim.cost.params.ipi_send_ns);
    let waking = sim.ttwu_queue(2, 3, QueuePath::RemoteLock, Mode::Waking, true);
    assert!(!waking.need_ipi, "a waking one gets none");
}
