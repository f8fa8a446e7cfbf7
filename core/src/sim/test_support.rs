//! What the simulator's unit tests share: the run configuration they start from,
//! the smallest task, the pure slow path set up on a simulator's state (the
//! differential tests of fork placement), and stepping while a task stays put.

use super::{Loc, SimConfig, SimTime, Simulator};
use crate::cpumask::{CpuId, CpuMask};
use crate::topology::Machine;
use crate::wakeup::{
    select_task_rq_new, Decision, SchedState, TaskId, TaskState, Trace, WakeFlags, Waker,
};
use crate::workload::{Noise, Op, Plan, TaskSpec};

/// A test run: `plan` on CPUs `allowed` of `machine` under `patches`, for
/// `duration`, with seed 1, no warm-up, no settling, invariants checked, no
/// background noise and every cost term. A test that needs another value sets it
/// where the reader sees it: `SimConfig { seed: 3, ..test_config(...) }` (no hidden
/// defaults, as for any config that changes behaviour).
pub(in crate::sim) fn test_config(
    machine: Machine,
    allowed: CpuMask,
    patches: &str,
    plan: Plan,
    duration: SimTime,
) -> SimConfig {
    SimConfig {
        allowed,
        machine,
        patches: patches.parse().unwrap(),
        plan,
        seed: 1,
        duration,
        warmup: SimTime::ZERO,
        settle: false,
        check_invariants: true,
        noise: Noise::Quiet,
        cost_terms: Default::default(),
    }
}

/// A minimal task running `program`.
pub(in crate::sim) fn tiny(parent: Option<u32>, program: Vec<Op>) -> TaskSpec {
    TaskSpec {
        role: "t",
        program,
        cookie: 0,
        mailbox_cap: 1,
        wakes_in_task: true,
        own_mm: false,
        allowed: None,
        drop_when_full: false,
        pipe: None,
        footprint_bytes: crate::workload::TASK_FOOTPRINT_BYTES,
        parent,
        background: false,
    }
}

/// The simulator's wake-up state as the pure slow path reads it: each CPU's C-state
/// exit latency (ns to the kernel's µs, `idle_get_state(rq)->exit_latency`) and
/// `idle_since` as `rq->idle_stamp`, which the simulator keeps beside its runqueues.
pub(in crate::sim) fn slow_path_state(sim: &Simulator) -> SchedState {
    let mut s = sim.state.clone();
    for c in 0..sim.cpus.len() {
        let cc = &sim.cpus[c];
        let exit = sim.cost.params.idle_states[cc.cstate as usize].exit_latency_ns;
        s.rqs[c].exit_latency_us = Some((exit / 1000) as u32);
        s.rqs[c].idle_stamp = cc.idle_since.ns();
    }
    s
}

/// Where the pure slow path (`wakeup::select_task_rq_new()` with `WF_FORK`) places
/// a task allowed `mask` forked on `cpu`, in state `s` ([`slow_path_state`]), with
/// its trace.
pub(in crate::sim) fn slow_path_fork(
    sim: &Simulator,
    s: &SchedState,
    cpu: u32,
    mask: &CpuMask,
) -> (Decision, Trace) {
    let p = TaskState::new(TaskId(u32::MAX), CpuId(cpu), mask.clone());
    let waker = Waker {
        cpu: CpuId(cpu),
        task: None,
        in_task: true,
    };
    let mut t = Trace::default();
    let d = select_task_rq_new(&sim.env, s, &p, &waker, WakeFlags::FORK, &mut t);
    (d, t)
}

/// Steps `sim` while task `t` is at `loc` (on a wake list, running somewhere),
/// failing the test on a simulator error or a run that ends first; returns the
/// instant it left.
pub(in crate::sim) fn step_while_at(sim: &mut Simulator, t: u32, loc: Loc) -> SimTime {
    while sim.tasks[t as usize].loc == loc {
        assert!(sim.step(), "task {t} never left {loc:?}");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    sim.now
}
