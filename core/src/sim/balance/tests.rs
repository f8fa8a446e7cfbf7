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
    let machine = presets::machine(preset).unwrap();
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
            let (moved, _) = sim.load_balance(dst, li, CpuIdle::Idle, dst);
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
        assert_eq!(sim.now.since(kicked), ipi, "the stopper runs an IPI later");
        if exits_first {
            assert_eq!(sim.tasks[t as usize].loc, Loc::Exited);
            assert_eq!(sim.metrics.active_balances, 0, "nothing left to move");
        } else {
            assert_eq!(cpu_of(&sim, t as usize), dst, "the stopper pushed the task");
            assert_eq!(sim.metrics.active_balances, 1);
            assert_eq!(sim.cpus[src as usize].avg_idle_ns, (800_000 + ipi) / 8);
        }
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
    let env = |dst: u32, idle: CpuIdle| super::lb::LbEnv {
        dst,
        runs_on: dst,
        li: mc,
        idle,
        imbalance: 0,
        migration_type: super::lb::MigrationType::Task,
        excluded: Vec::new(),
        some_pinned: false,
        all_pinned: false,
        src: dst,
    };
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
        dst,
        runs_on: dst,
        li,
        idle: CpuIdle::Idle,
        imbalance: 0,
        migration_type: super::lb::MigrationType::Load,
        excluded: Vec::new(),
        some_pinned: false,
        all_pinned: false,
        src: dst,
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
        dst: 0,
        runs_on: 0,
        li: mc,
        idle: CpuIdle::Idle,
        imbalance: 0,
        migration_type: super::lb::MigrationType::Load,
        excluded: Vec::new(),
        some_pinned: false,
        all_pinned: false,
        src: 0,
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
        dst: 3,
        runs_on: 3,
        li: 0,
        idle: CpuIdle::Idle,
        imbalance: 0,
        migration_type: super::lb::MigrationType::Task,
        excluded: Vec::new(),
        some_pinned: false,
        all_pinned: false,
        src: 1,
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
            dst: 0,
            runs_on: 0,
            li: 0,
            idle: CpuIdle::Idle,
            imbalance: 1024,
            migration_type: mt,
            excluded: Vec::new(),
            some_pinned: false,
            all_pinned: false,
            src: 0,
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
        dst: 0,
        runs_on: 0,
        li: 0,
        idle: CpuIdle::Idle,
        imbalance: 1,
        migration_type: super::lb::MigrationType::Task,
        excluded: Vec::new(),
        some_pinned: false,
        all_pinned: true,
        src: 1,
    };
    assert_eq!(sim.detach_tasks(&mut env), vec![0]);
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

/// `kick_ilb()` → `nohz_csd_func()` (fair.c v6.8 11817-11846, core.c 1198-1215):
/// a busy CPU's tick sends the idle load balancer an IPI; it balances once that has
/// arrived and it has left its C-state, and a second kick does not go out while one
/// is on its way (`NOHZ_KICK_MASK`).
#[test]
fn the_idle_load_balancer_balances_after_its_kick_arrives() {
    let mut sim = hogs("kunpeng920-4826", "6.8", 0..8, 3, 100);
    place(&mut sim, |_| 1);
    let kick_on =
        |sim: &Simulator, c: usize| sim.balance.nohz_flags[c].intersects(NohzFlags::KICK_MASK);
    while (0..8).all(|c| !kick_on(&sim, c)) {
        assert!(sim.step(), "no kick before the end");
        assert!(sim.error.is_none(), "{:?}", sim.error);
    }
    let ilb = (0..8).find(|&c| kick_on(&sim, c)).unwrap() as u32;
    assert_eq!(sim.cpus[ilb as usize].mode, Mode::Idle);
    let p = &sim.cost.params;
    let exit = p.idle_states[sim.cpus[ilb as usize].cstate as usize].exit_latency_ns;
    let delay = p.ipi_ns() + exit;
    let kicked = sim.now;
    // The tick-stopped CPUs balance only through the ilb: their last_balance stays
    // until the kick arrives.
    let stopped: Vec<u32> = (0..8).filter(|&c| sim.nohz_idle(c)).collect();
    let last = |sim: &Simulator| -> Vec<u64> {
        stopped
            .iter()
            .flat_map(|&c| sim.balance.dom[c as usize].iter().map(|d| d.last_balance))
            .collect()
    };
    let before = last(&sim);
    let nb = sim.balance.nohz_next_balance;
    // A second kick finds the first on its way.
    let pending = sim.queue.len();
    sim.balance.nohz_next_balance = 0;
    sim.kick_ilb(1, NohzFlags::STATS | NohzFlags::BALANCE);
    assert_eq!(sim.queue.len(), pending, "one kick at a time");
    sim.balance.nohz_next_balance = nb;
    while kick_on(&sim, ilb as usize) {
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
        let kick_on =
            |sim: &Simulator, c: usize| sim.balance.nohz_flags[c].intersects(NohzFlags::KICK_MASK);
        while (0..8).all(|c| !kick_on(&sim, c)) {
            assert!(sim.step(), "no kick before the end");
            assert!(sim.error.is_none(), "{:?}", sim.error);
        }
        let ilb = (0..8).find(|&c| kick_on(&sim, c)).unwrap() as u32;
        let others: Vec<u32> = (0..8).filter(|&c| c != ilb && sim.nohz_idle(c)).collect();
        assert!(!others.is_empty());
        let last = |sim: &Simulator| -> Vec<u64> {
            others
                .iter()
                .flat_map(|&c| sim.balance.dom[c as usize].iter().map(|d| d.last_balance))
                .collect()
        };
        let before = last(&sim);
        let gen = sim.cpus[ilb as usize].switch_gen;
        // The kick arrives (here by hand) as if it had found the ilb polling, or not.
        sim.balance.nohz_kick_polled[ilb as usize] = polled;
        sim.nohz_csd_func(ilb);
        assert!(sim.balance.nohz_flags[ilb as usize].is_empty());
        if polled {
            assert_eq!(last(&sim), before, "no balance on the others' behalf");
            assert_eq!(sim.cpus[ilb as usize].mode, Mode::Waking, "it schedules");
            while sim.cpus[ilb as usize].mode == Mode::Waking {
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
    while !sim.nohz_idle(cpu) {
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
    let stopped: Vec<u32> = (0..8).filter(|&c| sim.nohz_idle(c)).collect();
    let last = |sim: &Simulator| -> Vec<u64> {
        stopped
            .iter()
            .flat_map(|&c| sim.balance.dom[c as usize].iter().map(|d| d.last_balance))
            .collect()
    };
    let before = last(&sim);
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
    for c in (0..8).filter(|&c| sim.nohz_idle(c)) {
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
