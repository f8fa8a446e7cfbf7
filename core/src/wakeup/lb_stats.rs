//! The group statistics of fair.c v6.8 shared by the wake-up slow path
//! (`find_idlest_group()`, `wakeup/select/idlest.rs`) and the simulator's load balancer and
//! fork placement (`sim::balance`): `struct sg_lb_stats`, `enum group_type`,
//! `group_classify()` with `group_has_capacity()` / `group_is_overloaded()`, the NUMA
//! allowances `allow_numa_imbalance()` / `adjust_numa_imbalance()`, and
//! `update_pick_idlest()`. Pure functions of their arguments: one definition for both.

use crate::release::Release;

/// `NUMA_IMBALANCE_MIN`.
pub(crate) const NUMA_IMBALANCE_MIN: i64 = 2;

/// `enum group_type`, in the kernel's order (a later one is busier).
/// `group_misfit_task` and `group_asym_packing` need asymmetric capacity or packing,
/// which no modelled machine's domains have: they are never produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    SmtBalance,
    Imbalanced,
    Overloaded,
}

/// `struct sg_lb_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SgStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: GroupType,
    pub group_smt_balance: bool,
}

/// `group_has_capacity()`.
pub(crate) fn group_has_capacity(pct: u64, s: &SgStats) -> bool {
    if s.sum_nr_running < s.group_weight {
        return true;
    }
    if s.group_capacity * pct < s.group_runnable * 100 {
        return false;
    }
    s.group_capacity * 100 > s.group_util * pct
}

/// `group_is_overloaded()`.
pub(crate) fn group_is_overloaded(pct: u64, s: &SgStats) -> bool {
    if s.sum_nr_running <= s.group_weight {
        return false;
    }
    s.group_capacity * 100 < s.group_util * pct || s.group_capacity * pct < s.group_runnable * 100
}

/// `group_classify()`, fair.c v6.8 (`sg_imbalanced()` is `imbalanced`).
pub(crate) fn group_classify(pct: u64, imbalanced: bool, s: &SgStats) -> GroupType {
    if group_is_overloaded(pct, s) {
        GroupType::Overloaded
    } else if imbalanced {
        GroupType::Imbalanced
    } else if s.group_smt_balance {
        GroupType::SmtBalance
    } else if !group_has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `allow_numa_imbalance()`: v6.0+ `running <= imb_numa_nr`; v5.18-5.19
/// `running < imb_numa_nr`; before, `running < weight / 4` (`imb_or_weight` is then
/// the weight).
pub(crate) fn allow_numa_imbalance(rel: Release, running: u32, imb_or_weight: u32) -> bool {
    if rel >= Release::new(6, 0) {
        running <= imb_or_weight
    } else if rel >= Release::new(5, 18) {
        running < imb_or_weight
    } else {
        running < imb_or_weight >> 2
    }
}

/// `adjust_numa_imbalance()`: a small imbalance (at most `NUMA_IMBALANCE_MIN` tasks)
/// is allowed while the destination stays lightly loaded.
pub(crate) fn adjust_numa_imbalance(
    rel: Release,
    imbalance: i64,
    dst_running: u32,
    imb_or_weight: u32,
) -> i64 {
    if !allow_numa_imbalance(rel, dst_running, imb_or_weight) {
        return imbalance;
    }
    if imbalance <= NUMA_IMBALANCE_MIN {
        0
    } else {
        imbalance
    }
}

/// `update_pick_idlest()`, fair.c v6.8: whether group stats `s` beat the idlest so far.
pub(crate) fn update_pick_idlest(idlest: &SgStats, s: &SgStats) -> bool {
    if s.group_type != idlest.group_type {
        return s.group_type < idlest.group_type;
    }
    match s.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => idlest.avg_load > s.avg_load,
        GroupType::Imbalanced | GroupType::SmtBalance => false,
        GroupType::HasSpare => {
            !(idlest.idle_cpus > s.idle_cpus
                || (idlest.idle_cpus == s.idle_cpus && idlest.group_util <= s.group_util))
        }
    }
}
