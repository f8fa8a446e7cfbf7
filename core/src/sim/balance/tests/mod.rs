//! Load balancing against hand-built states and small runs whose outcome the
//! kernel's rules decide.

use super::lb::{adjust_numa_imbalance, group_classify, CpuIdle, GroupType, SgStats};
use super::NohzFlags;
use crate::cpumask::{CpuId, CpuMask};
use crate::release::Release;
use crate::sim::{Loc, Mode, SimConfig, SimTime, Simulator};
use crate::topology::presets;
use crate::workload::{Dist, Op, Plan, TaskSpec};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// A CPU-bound task (runs `ms`, then exits) allowed on `cpus` of an `n`-CPU machine.
fn hog(n: u32, cpus: std::ops::Range<u32>, ms: u64) -> TaskSpec {
    TaskSpec {
        role: "hog",
        program: vec![Op::Run(Dist::Fixed { ns: ms * 1_000_000 }), Op::Exit],
        cookie: 0,
        mailbox_cap: 1,
        wakes_in_task: true,
        own_mm: false,
        allowed: Some(CpuMask::from_cpus(n, cpus.map(CpuId))),
        drop_when_full: false,
        footprint_bytes: crate::workload::TASK_FOOTPRINT_BYTES,
        parent: None,
        background: false,
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
    Simulator::new(SimConfig {
        allowed: CpuMask::from_cpus(n, cpus.map(CpuId)),
        machine,
        patches: patches.parse().unwrap(),
        plan,
        seed: 1,
        duration: SimTime::from_ms(10 * ms),
        warmup: SimTime::ZERO,
        settle: false,
        check_invariants: true,
        // The hand-built states hold only the hogs.
        noise: crate::workload::Noise::Quiet,
        cost_terms: Default::default(),
    })
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

fn stats(nr: u32, weight: u32, util: u64, runnable: u64) -> SgStats {
    SgStats {
        sum_nr_running: nr,
        group_weight: weight,
        group_capacity: 1024 * weight as u64,
        group_util: util,
        group_runnable: runnable,
        ..SgStats::default()
    }
}

/// `group_classify()`: spare while fewer tasks than CPUs; fully busy once the
/// runnable or util average crosses capacity / imbalance_pct; overloaded only with
/// more tasks than CPUs and util or runnable over capacity × pct; `sgc->imbalance`
/// ranks below overloaded and above the rest.
#[test]
fn groups_are_classified_as_the_kernel_does() {
    let pct = 117;
    let c = |s: &SgStats, imb: bool| group_classify(pct, imb, s);
    assert_eq!(c(&stats(3, 4, 4000, 4000), false), GroupType::HasSpare);
    // 4 tasks on 4 CPUs: util 3600 × 117 > 4096 × 100 → no capacity left.
    assert_eq!(c(&stats(4, 4, 3600, 3600), false), GroupType::FullyBusy);
    // ... but at util 3400 (× 117 = 397800 < 409600) and runnable below, spare.
    assert_eq!(c(&stats(4, 4, 3400, 3400), false), GroupType::HasSpare);
    // 4096 × 117 < runnable 4800 × 100: no capacity even with little util.
    assert_eq!(c(&stats(4, 4, 100, 4800), false), GroupType::FullyBusy);
    // More tasks than CPUs, but new tasks with no average yet: still spare.
    assert_eq!(c(&stats(8, 4, 0, 0), false), GroupType::HasSpare);
    assert_eq!(c(&stats(5, 4, 3600, 3600), false), GroupType::Overloaded);
    assert_eq!(c(&stats(5, 4, 100, 4800), false), GroupType::Overloaded);
    assert_eq!(c(&stats(4, 4, 100, 100), true), GroupType::Imbalanced);
    assert_eq!(c(&stats(5, 4, 3600, 3600), true), GroupType::Overloaded);
}

/// `adjust_numa_imbalance()` in its three forms.
#[test]
fn the_numa_allowance_follows_the_release() {
    let (r68, r518, r512) = (Release::new(6, 8), Release::new(5, 18), Release::new(5, 12));
    // 6.0+: up to imb_numa_nr tasks (inclusive) on the destination, imbalance <= 2.
    assert_eq!(adjust_numa_imbalance(r68, 2, 2, 2), 0);
    assert_eq!(adjust_numa_imbalance(r68, 3, 2, 2), 3);
    assert_eq!(adjust_numa_imbalance(r68, 2, 3, 2), 2);
    // 5.18-5.19: strictly below imb_numa_nr.
    assert_eq!(adjust_numa_imbalance(r518, 2, 2, 2), 2);
    assert_eq!(adjust_numa_imbalance(r518, 2, 1, 2), 0);
    // Before: below a quarter of the weight.
    assert_eq!(adjust_numa_imbalance(r512, 2, 7, 32), 0);
    assert_eq!(adjust_numa_imbalance(r512, 2, 8, 32), 2);
}

/// `imb_numa_nr` as build_sched_domains() computes it on Kunpeng 920-6426: the node
/// (32 CPUs) is both the LLC (MC) and the package (arm64's PKG is the node), so the
/// first non-LLC parent of the LLC, PKG, holds one LLC: 32 / 8 = 4. The levels above
/// scale it by their span over the first NUMA domain's (64): 4 for the 64 and 96-CPU
/// NUMA levels, 8 for the 128-CPU one.
#[test]
fn imb_numa_nr_counts_llcs() {
    let sim = hogs("kunpeng920-6426", "6.8", 0..128, 1, 1);
    let b = &sim.balance.levels[0];
    let numa: Vec<u32> = b
        .iter()
        .filter(|l| l.flags.contains(crate::sched_domain::SdFlags::NUMA))
        .map(|l| l.imb_numa_nr)
        .collect();
    assert_eq!(numa, vec![4, 4, 8]);
    assert!(b
        .iter()
        .filter(|l| !l.flags.contains(crate::sched_domain::SdFlags::NUMA))
        .all(|l| l.imb_numa_nr == 0));
}

/// Fork placement spreads over clusters first (find_idlest_group() by idle CPUs),
/// then over the CPUs of each: on Kunpeng's CPUs 0-7 (clusters 0-3 and 4-7).
#[test]
fn forks_spread_per_find_idlest_group() {
    let sim = hogs("kunpeng920-6426", "6.8", 0..8, 8, 1);
    let placed: Vec<u32> = (0..8).map(|t| cpu_of(&sim, t)).collect();
    assert_eq!(placed, vec![0, 4, 1, 5, 2, 6, 3, 7]);
}

/// The NUMA allowance at fork: on two nodes of 32 CPUs (imb_numa_nr 4) the parent's
/// node keeps new tasks while it would run at most 4 with an idle-CPU difference of
/// at most 2; the fourth task (an imbalance of 3) goes to the other node.
#[test]
fn forks_stay_on_the_node_within_imb_numa_nr() {
    let sim = hogs("kunpeng920-6426", "6.8", 0..64, 5, 1);
    let nodes: Vec<u32> = (0..5).map(|t| cpu_of(&sim, t) / 32).collect();
    assert_eq!(nodes, vec![0, 0, 0, 1, 0]);
}

/// Fork placement's `find_idlest_cpu()` tests the task's mask against its level's
/// span as kept here (the domain's run CPUs) where fair.c v6.8 line 7168 tests
/// `sched_domain_span(sd)`; its groups and `find_idlest_group_cpu()` use the whole
/// group span, as lines 10330 and 7121 do. The same answers, because the run's CPUs
/// are all the tasks' masks put together (build.rs): no mask reaches outside them,
/// not even one outside the `numactl` CPUs.
#[test]
fn fork_placement_sees_masks_meet_spans_as_the_kernel_does() {
    let preset = "kunpeng920-6426";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = vec![hog(n, 0..4, 1), hog(n, 66..68, 1)];
    let sim = sim_of(preset, "6.8", 0..4, specs, 1);
    let run = CpuMask::from_cpus(n, sim.active_cpus());
    for v in &sim.views {
        let mask = &v.task.as_ref().unwrap().allowed;
        assert!(mask.is_subset(&run), "{mask} outside the run's {run}");
        for c in sim.active_cpus() {
            let doms = &sim.env.domains.cpu(c).domains;
            for (lv, sd) in sim.balance.levels[c.idx()].iter().zip(doms) {
                assert_eq!(
                    lv.span.iter().any(|&x| mask.test_cpu(CpuId(x))),
                    sd.span.intersects(mask)
                );
            }
        }
    }
}

/// The NUMA allowance at fork clamps `imb_numa_nr` for a task allowed every CPU too:
/// `find_idlest_group()`'s `group_has_spare` case (fair.c v6.8 lines 10427-10454)
/// takes `min(cpumask_weight(local group span & p->cpus_ptr), sd->imb_numa_nr)`
/// under `if (p->nr_cpus_allowed != NR_CPUS)`, and `NR_CPUS` is `CONFIG_NR_CPUS`
/// (include/linux/threads.h line 21), the build's maximum: a task allowed everything
/// has `cpu_possible_mask` (core.c line 9940 moves init there, isolation.c line 61),
/// fewer CPUs. A machine where that minimum bites: 8 nodes of 2 CPUs, each CPU its
/// own LLC, nodes paired at distance 12, 20 between pairs. PKG (a node) holds 2 LLCs,
/// so imb_numa_nr is 2, scaled at the 16-CPU NUMA level by its span over the first
/// NUMA domain's (4) to 8 (topology.c v6.8 lines 2473-2490), while that level's
/// local group (a pair of nodes) has 4 CPUs. With 4 tasks on CPUs 0-3 and 2 in each
/// other pair, a fork on CPU 0 makes 5 running locally: over min(4, 8), so the
/// idle-CPU difference of 2 is not forgiven (`adjust_numa_imbalance()`, lines
/// 1329-1348) and the task goes to another pair. With `sd->imb_numa_nr` unclamped
/// (5 <= 8, a difference of 2 forgiven) it stayed on CPU 0, where the pure slow path
/// (`wakeup::select_task_rq_new()`, which already clamped) chose CPU 6.
#[test]
fn the_numa_allowance_at_fork_is_clamped_for_a_task_allowed_every_cpu() {
    let mut spec = crate::topology::MachineSpec::regular(
        "pairs-8x2",
        "8 nodes of 2 CPUs in pairs, no shared cache",
        crate::topology::Arch::X86,
        8,
        1,
        2,
        1,
        1,
        1,
        crate::topology::Numbering::Linear,
    );
    spec.numa_distance = Some(
        (0..8u8)
            .map(|i| {
                (0..8u8)
                    .map(|j| match (i, j) {
                        _ if i == j => 10,
                        _ if i / 2 == j / 2 => 12,
                        _ => 20,
                    })
                    .collect()
            })
            .collect(),
    );
    let machine = spec.build().unwrap();
    let n = machine.nr_cpus();
    assert_eq!(n, 16);
    let specs = (0..10).map(|_| hog(n, 0..n, 10)).collect();
    let mut sim = sim_on(machine, "6.8", 0..n, specs, 10);
    let top = sim.balance.levels[0].last().unwrap();
    assert!(top.flags.contains(crate::sched_domain::SdFlags::NUMA));
    assert_eq!((top.span_weight, top.imb_numa_nr), (16, 8));
    assert_eq!(top.groups[0].cpus, vec![0, 1, 2, 3]);
    let at = [0, 1, 2, 3, 4, 5, 8, 9, 12, 13];
    place(&mut sim, |t| at[t as usize]);
    let all = CpuMask::from_cpus(n, (0..n).map(CpuId));
    let cpu = sim.find_idlest_cpu_fork(0, &all);
    // The first idle CPU of pair 4-7 (CPUs 6 and 7 idle, alike), kept further down.
    assert_eq!(cpu, 6, "the fork stayed on CPU {cpu}");
    // The pure slow path on the same state.
    let mut s = sim.state.clone();
    for c in 0..n as usize {
        let cc = &sim.cpus[c];
        let exit = sim.cost.params.idle_states[cc.cstate as usize].exit_latency_ns;
        s.rqs[c].exit_latency_us = Some((exit / 1000) as u32);
        s.rqs[c].idle_stamp = cc.idle_since.ns();
    }
    let p = crate::wakeup::TaskState::new(crate::wakeup::TaskId(u32::MAX), CpuId(0), all);
    let waker = crate::wakeup::Waker {
        cpu: CpuId(0),
        task: None,
        in_task: true,
    };
    let mut t = crate::wakeup::Trace::default();
    let d = crate::wakeup::select_task_rq_new(
        &sim.env,
        &s,
        &p,
        &waker,
        crate::wakeup::WakeFlags::FORK,
        &mut t,
    );
    assert_eq!(d.cpu.0, cpu, "{}", t.render(&d));
}

/// An overloaded cluster sheds tasks to an idle one: eight hogs on cluster 0 of
/// Kunpeng (CPUs 0-3), cluster 1 (4-7) idle with its tick stopped; the busy CPUs'
/// ticks kick the idle load balancer, which balances the MC level (groups are
/// clusters) on behalf of CPUs 4-7 until each runs one task. One task moves per MC
/// balance (newly idle or idle, `detach_tasks()` stops when the source has one task
/// left), and after each move the next idle CPU of cluster 1 becomes the MC level's
/// balancing CPU (`should_we_balance()`), whose `balance_interval` was doubled to
/// `max_interval` (64 ms) by the balanced exit while it was not: the four moves come
/// at ~40, 100, 160 and 230 ms.
#[test]
fn an_overloaded_cluster_sheds_tasks_to_an_idle_cluster() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..8, 8, 400);
    place(&mut sim, |t| t % 4);
    run_to(&mut sim, 260);
    let per_cpu: Vec<usize> = (0..8)
        .map(|c| (0..8).filter(|&t| cpu_of(&sim, t) == c).count())
        .collect();
    assert_eq!(per_cpu, vec![1; 8], "{per_cpu:?}");
    assert!(sim.metrics.migrations_balance >= 4);
}

/// NUMA allowance in periodic balancing (6.8, two nodes, imb_numa_nr 4): two hogs
/// on node 0 stay there (an imbalance of 2 is allowed); six move partly to node 1
/// (the running tasks cannot be pulled: active balancing pushes them once the
/// balance has failed more than cache_nice_tries + 2 times).
#[test]
fn numa_allows_a_small_imbalance_only() {
    for (tasks, moved) in [(2, false), (6, true)] {
        let mut sim = hogs("kunpeng920-6426", "6.8", 0..64, tasks, 1500);
        place(&mut sim, |t| 4 * t);
        run_to(&mut sim, 1000);
        let on_node1 = (0..tasks).filter(|&t| cpu_of(&sim, t) >= 32).count();
        assert_eq!(on_node1 > 0, moved, "{tasks} tasks: {on_node1} on node 1");
        assert_eq!(sim.metrics.active_balances > 0, moved);
    }
}

/// newidle_balance() runs only when rq->avg_idle covers the lowest domain's
/// max_newidle_lb_cost (and rd->overload is set): with two cold tasks queued on
/// CPU 1, idle CPU 0 pulls one only when its average idle time is long enough.
#[test]
fn newidle_is_gated_by_max_newidle_lb_cost() {
    for (avg_idle, pulls) in [(1_000, false), (1_000_000, true)] {
        let mut sim = hogs("flat-16", "6.8", 0..16, 3, 100);
        place(&mut sim, |t| if t < 2 { 1 } else { 2 });
        sim.now = SimTime::from_ms(5);
        assert!(sim.balance.overload, "CPU 1 reached two tasks");
        sim.balance.dom[0][0].max_newidle_lb_cost = 50_000;
        sim.cpus[0].avg_idle_ns = avg_idle;
        let pulled = sim.newidle_balance(0);
        assert_eq!(pulled.is_some(), pulls, "avg_idle {avg_idle}");
        if let Some(t) = pulled {
            assert_eq!(sim.tasks[t as usize].loc, Loc::Queued(0));
            assert!(t < 2);
        }
    }
}

/// `newidle_balance()` takes time even when it pulls nothing (fair.c v6.8
/// 12349-12384: the domains' `load_balance()` between `t0` and `t1`, with `rq->curr`
/// still the task that blocked): the CPU goes idle only after the pass, and until
/// then a waker does not see it idle (`idle_cpu()`, core.c 7409: `rq->curr !=
/// rq->idle`). Two hogs pinned to CPU 1 set `rd->overload` and leave CPU 0 nothing it
/// may pull when its own task exits.
#[test]
fn a_newidle_pass_that_pulls_nothing_delays_the_idle_entry() {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = vec![hog(n, 1..2, 100), hog(n, 1..2, 100), hog(n, 0..1, 1)];
    let mut sim = sim_of(preset, "6.8", 0..8, specs, 100);
    let mut t = SimTime::from_ms(1);
    while sim.tasks[2].loc != Loc::Exited {
        t += 100;
        assert!(sim.run_until(t), "{:?}", sim.error);
        assert!(t < SimTime::from_ms(2), "task 2 did not exit");
    }
    assert!(sim.balance.overload);
    let exit = sim.tasks[2].last_ran;
    let cost: u64 = sim.balance.dom[0]
        .iter()
        .map(|d| d.max_newidle_lb_cost)
        .sum();
    assert!(cost > 0, "the pass balanced every domain");
    assert!(
        !sim.state.rqs[0].idle_cpu(),
        "in the pass, CPU 0 is not idle"
    );
    assert_eq!(sim.cpus[0].mode, Mode::Waking);
    assert!(sim.run_until(exit + cost));
    assert_eq!(sim.cpus[0].mode, Mode::Idle);
    assert_eq!(sim.cpus[0].idle_since, exit + cost);
    assert!(sim.state.rqs[0].idle_cpu());
}

/// A wake-up onto a CPU in its newidle pass stops the pass after the domain it is
/// in (fair.c v6.8 12378-12380: `this_rq->ttwu_pending`), and the CPU runs the
/// wakee once its wake list's IPI is in, before the pass would have ended.
#[test]
fn a_wake_up_cuts_a_newidle_pass_short() {
    let preset = "kunpeng920-4826";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let mut sleeper = hog(n, 0..1, 1);
    sleeper.program = vec![
        Op::Sleep(Dist::Fixed { ns: 50_000_000 }),
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Exit,
    ];
    let specs = vec![
        hog(n, 1..2, 100),
        hog(n, 1..2, 100),
        hog(n, 0..1, 1),
        sleeper,
    ];
    let mut sim = sim_of(preset, "6.8", 0..8, specs, 100);
    let mut t = SimTime::from_ms(1);
    while sim.tasks[2].loc != Loc::Exited {
        t += 100;
        assert!(sim.run_until(t), "{:?}", sim.error);
        assert!(t < SimTime::from_ms(2), "task 2 did not exit");
    }
    assert!(sim.cpus[0].in_newidle);
    assert_eq!(sim.tasks[3].loc, Loc::Blocked);
    let exit = sim.tasks[2].last_ran;
    let ends = sim.cpus[0].newidle_ends.clone();
    assert!(ends.len() >= 2, "{ends:?}");
    // The last instant before the pass would have ended.
    let before_end = exit + (*ends.last().unwrap() - 1);
    sim.wake(3, None, 0, crate::wakeup::WakeFlags::NONE);
    assert_eq!(sim.tasks[3].loc, Loc::Queued(0));
    assert!(sim.run_until(before_end));
    assert_eq!(
        sim.tasks[3].loc,
        Loc::Running(0),
        "the wakee runs before the pass's end"
    );
}

/// `rq->avg_idle` is fed by wake-ups only (core.c v6.8 3819-3829): `newidle_balance()`
/// stamps the CPU (fair.c 12316), a CPU that then leaves idle for another reason (a
/// balancer's pull) keeps its average and its stamp, and the next wake-up onto it
/// averages in the whole time since the stamp (`update_avg()`: an eighth of the
/// difference), capped at twice `max_idle_balance_cost`, and clears the stamp.
#[test]
fn avg_idle_is_updated_by_wake_ups_only() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 1, 100);
    place(&mut sim, |_| 1);
    idle_rqs(&mut sim, 0..1);
    sim.now = SimTime::from_ms(5);
    sim.cpus[0].avg_idle_ns = 100_000;
    assert_eq!(sim.newidle_balance(0), None, "nothing to pull");
    assert_eq!(sim.cpus[0].idle_stamp, Some(SimTime::from_ms(5)));
    sim.enter_idle(0);
    // Leaving idle without a wake-up (the idle governor keeps its history).
    sim.now = SimTime::from_us(5_200);
    sim.cpus[0].mode = Mode::Waking;
    sim.leave_idle_accounting(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, 100_000, "no wake-up, no update");
    assert_eq!(sim.cpus[0].idle_stamp, Some(SimTime::from_ms(5)));
    // A wake-up 400 us after the stamp: 100 + (400 - 100) / 8 us.
    sim.now = SimTime::from_us(5_400);
    sim.update_avg_idle(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, 137_500);
    assert_eq!(sim.cpus[0].idle_stamp, None);
    sim.now = SimTime::from_us(6_000);
    sim.update_avg_idle(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, 137_500, "the stamp was used up");
    // The cap: twice max_idle_balance_cost.
    sim.cpus[0].idle_stamp = Some(SimTime::ZERO);
    sim.now = SimTime::from_ms(90);
    sim.update_avg_idle(0);
    let cap = 2 * sim.balance.max_idle_balance_cost(0);
    assert_eq!(sim.cpus[0].avg_idle_ns, cap);
}

/// `should_we_balance()`: newidle balancing always runs (on a CPU with no task);
/// periodic balancing of the MC level (groups are Kunpeng's clusters) only on the
/// first idle CPU of the local cluster.
#[test]
fn only_the_first_idle_cpu_of_the_group_balances() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..8, 1, 10);
    place(&mut sim, |_| 0);
    let mc = 1;
    let env = |dst: u32, idle: CpuIdle| super::lb::LbEnv::new(dst, dst, mc, idle);
    assert_eq!(sim.balance.levels[5][mc].groups[0].cpus, vec![4, 5, 6, 7]);
    let swb = |c: u32, idle: CpuIdle| sim.should_we_balance(&env(c, idle));
    assert!(swb(4, CpuIdle::Idle) && !swb(5, CpuIdle::Idle));
    // CPU 0 holds the task: CPU 1 is the first idle CPU of cluster 0.
    assert!(swb(1, CpuIdle::Idle) && !swb(2, CpuIdle::Idle) && !swb(0, CpuIdle::NotIdle));
    assert!(swb(2, CpuIdle::NewlyIdle));
    assert!(!swb(0, CpuIdle::NewlyIdle), "CPU 0 has a task");
}

/// `calculate_imbalance()` on hand-built runqueues (Kunpeng, CPUs 0-63, 6.8): an
/// overloaded busiest group seen from a group with spare capacity is filled by
/// utilisation above the LLC (the NUMA level: `migrate_util`, the local group's spare
/// capacity) and by task count inside it (the MC level, groups are clusters:
/// `prefer_sibling` → `sibling_imbalance()` / 2 = 12 / 2 tasks).
#[test]
fn the_migration_type_depends_on_the_level() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..64, 1, 10);
    let load = |sim: &mut Simulator, cpus: std::ops::Range<usize>| {
        for c in cpus {
            let rq = &mut sim.state.rqs[c];
            (rq.nr_running, rq.load_avg, rq.util_avg, rq.curr_is_idle) = (3, 3072, 1024, false);
        }
    };
    let env = |dst: u32, li: usize| super::lb::LbEnv {
        migration_type: super::lb::MigrationType::Load,
        ..super::lb::LbEnv::new(dst, dst, li, CpuIdle::Idle)
    };
    idle_rqs(&mut sim, 0..64);
    // Node 0 overloaded, node 1 idle: from CPU 32 at the 64-CPU NUMA level.
    load(&mut sim, 0..32);
    sim.resync_rq_sums();
    let numa = 2;
    assert!(sim.balance.levels[32][numa]
        .flags
        .contains(crate::sched_domain::SdFlags::NUMA));
    let mut e = env(32, numa);
    assert_eq!(sim.find_busiest_group(&mut e), Some(1));
    assert_eq!(e.migration_type, super::lb::MigrationType::Util);
    assert_eq!(e.imbalance, 32 * 1024);
    // Only cluster 0 loaded: from CPU 4 at the MC level.
    for c in 4..32 {
        sim.state.rqs[c] = sim.state.rqs[40].clone();
    }
    sim.resync_rq_sums();
    let mc = 1;
    let cluster0 = sim.balance.levels[4][mc]
        .groups
        .iter()
        .position(|g| g.cpus[0] == 0);
    let mut e = env(4, mc);
    assert_eq!(sim.find_busiest_group(&mut e), cluster0);
    assert_eq!(e.migration_type, super::lb::MigrationType::Task);
    assert_eq!(e.imbalance, 6);
    // A busy CPU does not pull when the busiest group is not overloaded and nothing
    // is queued beyond one task per CPU.
    for c in 0..4 {
        sim.state.rqs[c].nr_running = 1;
        sim.state.rqs[c].util_avg = 300;
        sim.state.rqs[c].load_avg = 300;
    }
    sim.resync_rq_sums();
    let mut e = env(4, mc);
    e.idle = CpuIdle::NotIdle;
    assert_eq!(sim.find_busiest_group(&mut e), None);
}

/// The domains were built at boot, long before the run (`sd_init()`: `last_balance =
/// jiffies`; the machine idle since, its ticks stopped): a CPU busy from the start
/// balances every level at its first tick, not a busy interval after the run starts
/// (the LLC's 32 ms × busy_factor 16 = 508 ms on Kunpeng's 32-CPU node, where every
/// CPU's first busy balance of the LLC used to fall on the same jiffy).
#[test]
fn every_domain_is_due_at_the_first_tick() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..32, 32, 500);
    let up = sim.balance.uptime;
    assert!(up >= sim.balance.max_lb_interval, "{up}");
    run_to(&mut sim, 9);
    let n = sim.balance.n_levels(0);
    assert!(n >= 2, "CLS and MC at least");
    for li in 0..n {
        let last = sim.balance.dom[0][li].last_balance;
        assert!(
            (up..=up + 2).contains(&last),
            "CPU 0 level {li}: last balance at jiffy {last}, the run starts at {up}"
        );
    }
    // The LLC's next busy balance is a busy interval later, not before.
    let li = (0..n).find(|&li| sim.balance.levels[0][li].is_llc).unwrap();
    let last = sim.balance.dom[0][li].last_balance;
    run_to(&mut sim, 100);
    assert_eq!(sim.balance.dom[0][li].last_balance, last);
}

/// `load_balance()` when `should_we_balance()` says another CPU balances (fair.c v6.8
/// lines 11291-11293: `*continue_balancing = 0; goto out_balanced;`) takes the
/// balanced exit: the parent's `sgc->imbalance` is cleared (11488-11499),
/// `nr_balance_failed` reset (11509) and `balance_interval` doubled up to
/// `max_interval` (11511-11527). Kunpeng (6.8), CPUs 0-7, the task on CPU 0: CPU 1
/// is the first idle CPU of cluster 0, so CPU 2 does not balance the MC level.
#[test]
fn a_cpu_that_does_not_balance_takes_the_balanced_exit() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..8, 1, 10);
    place(&mut sim, |_| 0);
    let mc = 1;
    let min = sim.balance.levels[2][mc].min_interval;
    assert!(sim.balance.levels[2][mc].max_interval >= 2 * min);
    let parent = sim.balance.levels[2][mc]
        .parent_sgc
        .expect("MC has a parent");
    sim.balance.sgc_imbalance[parent] = true;
    sim.balance.dom[2][mc].nr_balance_failed = 3;
    sim.balance.dom[2][mc].balance_interval = min;
    let (moved, cont) = sim.load_balance(2, mc, CpuIdle::Idle, 2);
    assert!(moved.is_empty() && !cont);
    assert_eq!(sim.balance.dom[2][mc].nr_balance_failed, 0);
    assert_eq!(sim.balance.dom[2][mc].balance_interval, 2 * min);
    assert!(!sim.balance.sgc_imbalance[parent]);
    // Newidle: the failure count is reset too, the interval is left alone.
    sim.balance.dom[0][mc].nr_balance_failed = 2;
    let (moved, cont) = sim.load_balance(0, mc, CpuIdle::NewlyIdle, 0);
    assert!(moved.is_empty() && !cont, "CPU 0 has a task");
    assert_eq!(sim.balance.dom[0][mc].nr_balance_failed, 0);
    assert_eq!(sim.balance.dom[0][mc].balance_interval, min);
}

/// `update_sd_pick_busiest()` never picks a group without a task (fair.c v6.8 lines
/// 9979-9981: `if (!sgs->sum_h_nr_running) return false;`). Kunpeng (6.8), CPUs
/// 0-31, only CPU 8 (cluster 2) busy, seen from CPU 0 at the MC level: cluster 1
/// (CPUs 4-7, empty) comes first but flagged `sgc->imbalance` it would rank as
/// `group_imbalanced`, above cluster 2's `group_has_spare`; the kernel skips it.
#[test]
fn an_empty_group_is_never_the_busiest() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..32, 1, 10);
    idle_rqs(&mut sim, 0..32);
    let rq = &mut sim.state.rqs[8];
    (rq.nr_running, rq.load_avg, rq.util_avg, rq.curr_is_idle) = (2, 2048, 1024, false);
    sim.resync_rq_sums();
    let mc = 1;
    let groups = &sim.balance.levels[0][mc].groups;
    let g1 = groups.iter().position(|g| g.cpus[0] == 4).unwrap();
    let g2 = groups.iter().position(|g| g.cpus[0] == 8).unwrap();
    assert!(g1 < g2);
    let sgc1 = groups[g1].sgc;
    sim.balance.sgc_imbalance[sgc1] = true;
    let mut e = super::lb::LbEnv {
        migration_type: super::lb::MigrationType::Load,
        ..super::lb::LbEnv::new(0, 0, mc, CpuIdle::Idle)
    };
    assert_eq!(sim.find_busiest_group(&mut e), Some(g2));
}

/// Every CPU's tick falls on the jiffy grid at the same instant
/// (`tick_setup_sched_timer()`, kernel/time/tick-sched.c v6.8 lines 1558-1567:
/// `hrtimer_set_expires(&ts->sched_timer, tick_init_jiffy_update())`, offset only
/// `if (sched_skew_tick)`, a boot option that is off by default). This decides
/// `nohz_balancer_kick()`'s `nr_busy_cpus > 1`: with short bursts, two CPUs are busy at
/// the same tick far more often than one is still busy at another's staggered tick.
#[test]
fn every_cpu_ticks_on_the_jiffy_grid() {
    let sim = hogs("kunpeng920-6426", "6.6", 0..32, 1, 1);
    let offs = sim.queue.tick_offsets();
    assert_eq!(offs.len(), 32);
    assert!(offs.iter().all(|&(o, _)| o == 0), "{offs:?}");
}

/// `task_hot()` after a migration: the kernel zeroes `se->exec_start` when a task is
/// enqueued on a CPU other than its last (`ENQUEUE_MIGRATED`, enqueue_entity(), fair.c
/// v6.8 lines 5304-5306), so `rq_clock_task() - exec_start` (line 8836) exceeds
/// `sysctl_sched_migration_cost` until it runs again. flat-16 (6.8): task 0 last ran
/// on CPU 1 100 µs ago and is queued there (hot); moved to CPU 2, it is cold.
#[test]
fn a_migrated_task_is_not_cache_hot() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 2, 100);
    place(&mut sim, |_| 1);
    sim.now = SimTime::from_ms(5);
    let t = &mut sim.tasks[0];
    (t.last_cpu, t.last_ran, t.exec_start_zero) = (1, SimTime::from_us(4_900), false);
    let env = super::lb::LbEnv {
        src: 1,
        ..super::lb::LbEnv::new(3, 3, 0, CpuIdle::Idle)
    };
    assert!(sim.task_hot(&env, 0), "ran on its CPU 100 us ago");
    sim.migrate_queued(0, 1, 2, 2, crate::sim::record::MigrateReason::Periodic);
    let env = super::lb::LbEnv { src: 2, ..env };
    assert!(!sim.task_hot(&env, 0), "migrated, not run since");
}

/// `find_busiest_queue()` for `migrate_load` / `migrate_util` starts from
/// `busiest_load = 0` / `busiest_util = 0` and picks a runqueue only on a strict
/// increase (fair.c v6.8 lines 11072 and 11090): with no load or util anywhere in the
/// group there is no busiest queue. flat-16 (6.8): CPU 1 runs two tasks whose
/// averages are 0.
#[test]
fn a_queue_without_load_is_not_the_busiest() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 1, 10);
    idle_rqs(&mut sim, 0..16);
    let rq = &mut sim.state.rqs[1];
    (rq.nr_running, rq.curr_is_idle) = (2, false);
    let gi = sim.balance.levels[0][0]
        .groups
        .iter()
        .position(|g| g.cpus.contains(&1))
        .unwrap();
    for mt in [
        super::lb::MigrationType::Load,
        super::lb::MigrationType::Util,
    ] {
        let env = super::lb::LbEnv {
            imbalance: 1024,
            migration_type: mt,
            ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
        };
        assert_eq!(sim.find_busiest_queue(&env, gi), None, "{mt:?}");
        sim.state.rqs[1].load_avg = 10;
        sim.state.rqs[1].util_avg = 10;
        assert_eq!(sim.find_busiest_queue(&env, gi), Some(1), "{mt:?}");
        sim.state.rqs[1].load_avg = 0;
        sim.state.rqs[1].util_avg = 0;
    }
}

/// `detach_tasks()` walks `rq->cfs_tasks` from the tail, and a task goes to the head
/// when it is enqueued (`account_entity_enqueue()`, fair.c v6.8 line 3578) or picked
/// (line 8487), not when it last ran: flat-16 (6.8), task 0 queued on CPU 1 first
/// (it last ran 100 µs ago), task 1 enqueued after it (woken, it last ran 4 ms ago).
/// The tail is task 0, the one a one-task imbalance moves.
#[test]
fn detach_tasks_walks_cfs_tasks_from_the_least_recently_queued() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 2, 100);
    place(&mut sim, |_| 2);
    place(&mut sim, |_| 1);
    assert!(sim.cfs_mru[0] < sim.cfs_mru[1], "task 0 queued first");
    sim.now = SimTime::from_ms(5);
    sim.tasks[0].last_ran = SimTime::from_us(4_900);
    sim.tasks[1].last_ran = SimTime::from_ms(1);
    let mut env = super::lb::LbEnv {
        imbalance: 1,
        all_pinned: true,
        src: 1,
        ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
    };
    assert_eq!(sim.detach_tasks(&mut env), vec![0]);
}

/// A wakee on a CPU's wake list (`ttwu_queue_wakelist()`) is not on that runqueue
/// until `sched_ttwu_pending()` activates it (core.c v6.8 3885-3918, 4026-4035): it
/// is neither in `rq->nr_running` nor on `rq->cfs_tasks`. flat-16 (6.8): CPU 1 holds
/// task 0, queued, and task 1, just woken onto its wake list. `detach_tasks()` finds
/// one task there ("if (env->src_rq->nr_running <= 1) return 0", fair.c v6.8 9083-9091)
/// and `find_busiest_queue()` reads `rq->cfs.h_nr_running` = 1 (10806). Before, the
/// model counted and walked both, and moved task 0.
#[test]
fn the_balancer_does_not_see_a_wakee_still_on_the_wake_list() {
    let mut sim = hogs("flat-16", "6.8", 0..16, 2, 100);
    place(&mut sim, |_| 1);
    sim.on_wakelist[1] = true;
    sim.update_rq(1, |rq| {
        rq.wakelist_queued = 1;
        rq.ttwu_pending = true;
    });
    sim.now = SimTime::from_ms(5);
    let mut env = super::lb::LbEnv {
        imbalance: 1,
        all_pinned: true,
        src: 1,
        ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
    };
    assert_eq!(sim.detach_tasks(&mut env), Vec::<u32>::new());
    assert_eq!(sim.cpus[1].queue.len(), 2);
    // Once the list is flushed, the same balance moves one of them.
    sim.sched_ttwu_pending(1);
    assert!(!sim.on_wakelist[1]);
    let mut env = super::lb::LbEnv {
        imbalance: 1,
        all_pinned: true,
        src: 1,
        ..super::lb::LbEnv::new(0, 0, 0, CpuIdle::Idle)
    };
    assert_eq!(sim.detach_tasks(&mut env).len(), 1);
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
mod nohz;
