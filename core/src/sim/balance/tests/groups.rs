//! Group statistics as `load_balance()` and fork placement read them (`lb/stats.rs`,
//! `wakeup::lb_stats`): `group_classify()`, the NUMA allowance in its release forms,
//! and `imb_numa_nr` as the domains are built.

use super::lb::{adjust_numa_imbalance, group_classify, GroupType, SgStats};
use super::*;
use crate::release::Release;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

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
    // 5.18-5.19: allow_numa_imbalance()'s "running <= imb_numa_nr" (fair.c v5.19.0
    // 9065-9068), the same bound.
    assert_eq!(adjust_numa_imbalance(r518, 2, 2, 2), 0);
    assert_eq!(adjust_numa_imbalance(r518, 2, 3, 2), 2);
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

/// `calculate_imbalance()`'s spare-capacity case at a NUMA level: before 6.0 the
/// difference is halved before `adjust_numa_imbalance()` sees it (fair.c v5.15 and
/// v5.19: `nr_diff >> 1`, then the allowance, no halving after), so a difference of 5
/// tasks is forgiven (5 >> 1 = 2 <= NUMA_IMBALANCE_MIN); from 6.0 (cb29a5c19d2d) the
/// allowance sees the whole 5 and 2 tasks move.
#[test]
fn before_6_0_the_numa_allowance_sees_the_halved_imbalance() {
    for (kernel, want) in [("5.15", 0), ("5.19", 0), ("6.1", 2)] {
        let sim = hogs("kunpeng920-6426", kernel, 0..128, 1, 1);
        let li = (0..sim.balance.n_levels(0))
            .find(|&li| {
                sim.balance.levels[0][li]
                    .flags
                    .contains(crate::sched_domain::SdFlags::NUMA)
            })
            .unwrap();
        let group = |nr: u32, idle: u32| SgStats {
            idle_cpus: idle,
            group_type: GroupType::HasSpare,
            ..stats(nr, 32, 100 * nr as u64, 100 * nr as u64)
        };
        let mut sds = lb::SdStats {
            busiest: Some(1),
            local: group(0, 32),
            busiest_stat: group(5, 27),
            total_load: 0,
            total_capacity: 0,
            avg_load: 0,
            prefer_sibling: true,
        };
        let mut env = lb::LbEnv::new(0, 0, li, CpuIdle::Idle);
        sim.calculate_imbalance(&mut env, &mut sds);
        assert_eq!(env.imbalance, want, "{kernel}");
    }
}
