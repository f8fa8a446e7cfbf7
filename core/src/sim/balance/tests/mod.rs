//! Load balancing against hand-built states and small runs whose outcome the
//! kernel's rules decide. This file holds the setups they share; the tests are
//! by topic:
//!
//! ```text
//!  groups.rs        group_classify(), the NUMA allowance, imb_numa_nr
//!  fork.rs          fork placement: find_idlest_cpu() and the pure slow path
//!  load_balance.rs  should_we_balance(), find_busiest_group() / _queue(), the balanced exit
//!  migrate.rs       task_hot(), detach_tasks()
//!  periodic.rs      periodic balancing from the tick, in small runs
//!  newidle/         newidle_balance() and rq->avg_idle; a pass's run time, its cuts, what it holds
//!  nohz.rs          nohz idle balancing: the kick, its flags, the stats passes
//!  active.rs        active balancing and the stopper
//!  attach.rs        attach_task() -> wakeup_preempt() -> resched_curr()
//!  locks.rs         the rq locks the balancer takes, queued with the wakers'
//!  tg_line.rs       the task group's line under the balancer's locks
//!  transcript/      find_busiest_group() / _queue() against a transcription of fair.c
//! ```

// `super::lb::...` in the tests below this module names the balancer's `lb/`.
use super::lb::{self, CpuIdle};
use super::NohzFlags;
use crate::cpumask::{CpuId, CpuMask};
use crate::sim::test_support::{test_config, tiny};
use crate::sim::{Loc, Mode, SimTime, Simulator};
use crate::topology::presets;
use crate::workload::{Dist, Op, Plan, TaskSpec};

/// A CPU-bound task (runs `ms`, then exits) allowed on `cpus` of an `n`-CPU machine.
fn hog(n: u32, cpus: std::ops::Range<u32>, ms: u64) -> TaskSpec {
    TaskSpec {
        role: "hog",
        allowed: Some(CpuMask::from_cpus(n, cpus.map(CpuId))),
        ..tiny(
            None,
            vec![Op::Run(Dist::Fixed { ns: ms * 1_000_000 }), Op::Exit],
        )
    }
}

/// Empties runqueues `cpus` by hand: no task, no load or util, the idle task current.
fn idle_rqs(sim: &mut Simulator, cpus: std::ops::Range<usize>) {
    for c in cpus {
        let rq = &mut sim.state.rqs[c];
        (rq.nr_running, rq.load_avg, rq.util_avg, rq.curr_is_idle) = (0, 0, 0, true);
    }
}

/// `tasks` hogs on `cpus` of `preset` under `patches`, run to completion.
fn hogs(
    preset: &str,
    patches: &str,
    cpus: std::ops::Range<u32>,
    tasks: usize,
    ms: u64,
) -> Simulator {
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = (0..tasks).map(|_| hog(n, cpus.clone(), ms)).collect();
    sim_of(preset, patches, cpus, specs, ms)
}

/// Hogs of `ms` on `preset`'s CPUs 0..8 under 6.8, task `i` pinned to `pins[i]`.
fn pinned_hogs(pins: &[u32], ms: u64) -> Simulator {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = pins.iter().map(|&c| hog(n, c..c + 1, ms)).collect();
    sim_of(preset, "6.8", 0..8, specs, ms)
}

/// `tasks` on `cpus` of `preset` under `patches`, run to completion (at most 10 × `ms`).
fn sim_of(
    preset: &str,
    patches: &str,
    cpus: std::ops::Range<u32>,
    tasks: Vec<TaskSpec>,
    ms: u64,
) -> Simulator {
    sim_on(presets::machine(preset).unwrap(), patches, cpus, tasks, ms)
}

/// [`sim_of`] on a machine given whole.
fn sim_on(
    machine: crate::topology::Machine,
    patches: &str,
    cpus: std::ops::Range<u32>,
    tasks: Vec<TaskSpec>,
    ms: u64,
) -> Simulator {
    let n = machine.nr_cpus();
    let plan = Plan::to_completion(tasks);
    // Quiet: the hand-built states hold only the hogs.
    Simulator::new(test_config(
        machine,
        CpuMask::from_cpus(n, cpus.map(CpuId)),
        patches,
        plan,
        SimTime::from_ms(10 * ms),
    ))
    .unwrap()
}

/// Moves every task, still queued where fork placed it at time 0, to `place(t)`.
fn place(sim: &mut Simulator, place: impl Fn(u32) -> u32) {
    for t in 0..sim.tasks.len() as u32 {
        let Loc::Queued(src) = sim.tasks[t as usize].loc else {
            panic!("task {t} is not queued");
        };
        let dst = place(t);
        if dst != src {
            sim.migrate_queued(
                t,
                src,
                dst,
                dst,
                crate::sim::record::MigrateReason::Periodic,
            );
        }
    }
    sim.metrics.migrations_balance = 0;
}

/// Where each task is (running or queued).
fn cpu_of(sim: &Simulator, t: usize) -> u32 {
    match sim.tasks[t].loc {
        Loc::Running(c) | Loc::Queued(c) => c,
        other => panic!("task {t} is {other:?}"),
    }
}

/// Runs to `ms`, failing on any error (invariants are checked).
fn run_to(sim: &mut Simulator, ms: u64) {
    let live = sim.run_until(SimTime::from_ms(ms));
    assert!(sim.error.is_none(), "{:?}", sim.error);
    assert!(live, "the run ended before {ms} ms");
}

/// The queued task of CPU `cpu` (there must be one).
fn queued_task(sim: &Simulator, cpu: u32) -> u32 {
    *sim.cpus[cpu as usize].queue.first().expect("a queued task")
}

/// Steps until every CPU of `cpus` runs a task.
fn until_busy(sim: &mut Simulator, cpus: &[u32]) {
    while cpus
        .iter()
        .any(|&c| sim.cpus[c as usize].mode != Mode::Running)
    {
        assert!(sim.step(), "{cpus:?} never all ran");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
}

/// Steps until task `t` runs on `cpu`; returns how long that took.
fn until_running(sim: &mut Simulator, t: u32, cpu: u32) -> u64 {
    let t0 = sim.now;
    while sim.tasks[t as usize].loc != Loc::Running(cpu) {
        assert!(sim.step(), "task {t} never ran on {cpu}");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    sim.now.since(t0)
}

mod active;
mod attach;
mod fork;
mod groups;
mod load_balance;
mod locks;
mod migrate;
mod newidle;
mod nohz;
mod periodic;
mod tg_line;
mod transcript;
