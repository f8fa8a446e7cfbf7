//! `load_balance()`'s steps on hand-built runqueues (`lb/`): `should_we_balance()`,
//! `find_busiest_group()`, `find_busiest_queue()` and the balanced exit.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// `should_we_balance()`: newidle balancing always runs (on a CPU with no task);
/// periodic balancing of the MC level (groups are Kunpeng's clusters) only on the
/// first idle CPU of the local cluster.
#[test]
fn only_the_first_idle_cpu_of_the_group_balances() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..8, 1, 10);
    place(&mut sim, |_| 0);
    let mc = 1;
    let env = |dst: u32, idle: CpuIdle| super::lb::LbEnv::new(dst, dst, mc, idle);
    assert_eq!(*sim.balance.levels[5][mc].groups[0].cpus, [4, 5, 6, 7]);
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

/// `prefer_sibling` is the busiest group's flag from 6.5 ("if (sds->busiest)
/// sds->prefer_sibling = !!(sds->busiest->flags & SD_PREFER_SIBLING);", fair.c v6.8
/// 10604-10605, v6.5 10188-10189), the local domain's child's before. Kunpeng
/// 920-4826, CPU 20's level 3 (NUMA, CPUs 0-71): its child, the 48-CPU NUMA level, has
/// no SD_PREFER_SIBLING, but the remote group (node 2, CPUs 48-71, built from that
/// node's package domain) has it. Six tasks in the local group, two in node 2, CPU 20
/// idle: with prefer_sibling calculate_imbalance() takes sibling_imbalance() (v6.8
/// 10722-10728: (48 × 2 − 24 × 6 → 0, rounded up to 1), the NUMA allowance keeps it
/// (7 tasks > imb_numa_nr 3) and `>> 1` makes 0: balanced; without it, half the idle
/// CPUs' difference (42 − 22) / 2 = 10 tasks.
#[test]
fn prefer_sibling_is_the_busiest_groups_flag_from_6_5() {
    let (dst, level) = (20, 3);
    for (release, want) in [("6.8", None), ("6.5", None), ("6.4", Some(10))] {
        let mut sim = hogs("kunpeng920-4826", release, 0..96, 1, 10);
        idle_rqs(&mut sim, 0..96);
        for c in [0, 1, 2, 3, 4, 5, 48, 49] {
            let rq = &mut sim.state.rqs[c];
            (rq.nr_running, rq.load_avg, rq.util_avg, rq.curr_is_idle) = (1, 100, 100, false);
        }
        sim.resync_rq_sums();
        let lv = &sim.balance.levels[dst as usize][level];
        assert_eq!(lv.span.len(), 72);
        assert!(!lv
            .child_flags
            .unwrap()
            .contains(crate::sched_domain::SdFlags::PREFER_SIBLING));
        assert_eq!(lv.groups[1].cpus[0], 48);
        let mut e = super::lb::LbEnv::new(dst, dst, level, CpuIdle::Idle);
        let got = sim.find_busiest_group(&mut e);
        assert_eq!(got.map(|_| e.imbalance), want, "{release}");
    }
}

/// `find_busiest_queue()` for `migrate_util` reads `cpu_util_cfs_boost()` from 6.5
/// ("util = cpu_util_cfs_boost(i);", fair.c v6.8 11080, v6.5 10650): cpu_util() with
/// boost takes the larger of util_avg and runnable_avg (7659-7717; runnable is the load
/// here), capped at the CPU's capacity; before 6.5 util alone. Kunpeng 920-4826's MC
/// level seen from CPU 4, cluster 0: CPU 1 runs two tasks at util 300 but runnable
/// 900, CPU 2 two at 500 and 500.
#[test]
fn the_util_busiest_queue_is_boosted_by_runnable_from_6_5() {
    for (release, want) in [("6.8", 1), ("6.5", 1), ("6.4", 2)] {
        let mut sim = hogs("kunpeng920-4826", release, 0..24, 1, 10);
        idle_rqs(&mut sim, 0..24);
        for (c, util, load) in [(1, 300, 900), (2, 500, 500)] {
            let rq = &mut sim.state.rqs[c];
            (rq.nr_running, rq.load_avg, rq.util_avg, rq.curr_is_idle) = (2, load, util, false);
            rq.runnable_avg = load;
        }
        let gi = |c: u32| {
            sim.balance.levels[4][1]
                .groups
                .iter()
                .position(|g| g.cpus.contains(&c))
                .unwrap()
        };
        assert_eq!(gi(1), gi(2), "one group");
        let env = super::lb::LbEnv {
            imbalance: 1024,
            migration_type: super::lb::MigrationType::Util,
            ..super::lb::LbEnv::new(4, 4, 1, CpuIdle::Idle)
        };
        assert_eq!(sim.find_busiest_queue(&env, gi(1)), Some(want), "{release}");
    }
}

/// `calculate_imbalance()`'s `migrate_load` is computed in `unsigned long` (fair.c
/// v6.8 10800-10803): when the domain's average load is above the busiest group's,
/// `busiest->avg_load - sds->avg_load` wraps and `min()` takes the local side, so the
/// local group pulls up to the average. Jacobsville's CLS level from CPU 1 (groups
/// are CPUs 0-3), busy: CPU 1 fully busy at load 8, CPU 2 overloaded (4 tasks) at load
/// 32, CPU 3 fully busy at load 1000 (not overloaded, so no avg_load, but in the
/// total): the domain's average is 1040 × 1024 / 4096 = 260, and the imbalance
/// (260 − 8) × 1024 / 1024 = 252, from CPU 2.
#[test]
fn a_domain_average_above_the_busiest_groups_still_moves_load() {
    let mut sim = hogs("jacobsville", "6.8", 0..24, 1, 10);
    idle_rqs(&mut sim, 0..24);
    for (c, nr, load, util) in [(1, 1, 8, 978), (2, 4, 32, 901), (3, 1, 1000, 1000)] {
        let rq = &mut sim.state.rqs[c];
        (rq.nr_running, rq.load_avg, rq.util_avg, rq.curr_is_idle) = (nr, load, util, false);
    }
    sim.resync_rq_sums();
    let mut e = super::lb::LbEnv::new(1, 1, 0, CpuIdle::NotIdle);
    assert_eq!(sim.balance.levels[1][0].groups.len(), 4);
    let gi = sim.find_busiest_group(&mut e).expect("unbalanced");
    assert_eq!(*sim.balance.levels[1][0].groups[gi].cpus, [2]);
    assert_eq!(e.migration_type, super::lb::MigrationType::Load);
    assert_eq!(e.imbalance, 252);
    assert_eq!(sim.find_busiest_queue(&e, gi), Some(2));
}

/// `update_sd_pick_busiest()` between an SMT group and one without SMT, both with
/// spare capacity, picks the candidate from 6.6 unless it is the SMT one with at most
/// one task ("Do not pick sg with SMT CPUs over sg with pure CPUs", fair.c v6.8
/// 10072-10083; not in v6.5, which compares idle CPUs, then tasks). Alder Lake's MC
/// level from P-core CPU 0, balancing while busy (so no group_smt_balance): core
/// {2, 3} runs two tasks, one per CPU; E-core 16 one, in cluster {16-19} from 6.6 (a
/// group of its own in 6.5). 6.6 and 6.8 pick the cluster; 6.5 keeps the core (no
/// idle CPU either side, fewer tasks on CPU 16).
#[test]
fn a_group_without_smt_is_picked_over_an_smt_one_from_6_6() {
    for (release, want) in [("6.8", 16), ("6.6", 16), ("6.5", 2)] {
        let mut sim = hogs("alderlake-8p8e", release, 0..24, 1, 10);
        idle_rqs(&mut sim, 0..24);
        for c in [2, 3, 16] {
            let rq = &mut sim.state.rqs[c];
            (rq.nr_running, rq.load_avg, rq.util_avg, rq.curr_is_idle) = (1, 100, 100, false);
        }
        sim.resync_rq_sums();
        let lv = &sim.balance.levels[0][1];
        let smt = crate::sched_domain::SdFlags::SHARE_CPUCAPACITY;
        let at = |c: u32| lv.groups.iter().position(|g| g.cpus[0] == c).unwrap();
        assert!(lv.groups[at(2)].flags.contains(smt) && !lv.groups[at(16)].flags.contains(smt));
        assert!(at(2) < at(16), "the core comes first");
        let e = super::lb::LbEnv::new(0, 0, 1, CpuIdle::NotIdle);
        let b = sim.update_sd_lb_stats(&e).busiest.expect("a busiest group");
        assert_eq!(
            sim.balance.levels[0][1].groups[b].cpus[0], want,
            "{release}"
        );
    }
}
