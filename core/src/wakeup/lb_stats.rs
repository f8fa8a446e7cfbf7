//! The group statistics of fair.c v6.8 shared by the wake-up slow path
//! (`find_idlest_group()`, `wakeup/select/idlest.rs`) and the simulator's load balancer and
//! fork placement (`sim::balance`): `struct sg_lb_stats`, `enum group_type`,
//! `group_classify()` with `group_has_capacity()` / `group_is_overloaded()`, the NUMA
//! allowances `allow_numa_imbalance()` / `adjust_numa_imbalance()`, and
//! `update_pick_idlest()`. Pure functions of their arguments: one definition for both.
//! Likewise `find_idlest_cpu()`'s walk down the domains ([`find_idlest_cpu_walk`]),
//! generic over what each side reads ([`IdlestWalk`]).

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::SdFlags;

/// `NUMA_IMBALANCE_MIN`.
pub(crate) const NUMA_IMBALANCE_MIN: i64 = 2;

/// `enum group_type`, in the kernel's order (a later one is busier).
/// `group_asym_packing` is never produced. `group_misfit_task` only by the wake-up
/// slow path's `update_sg_wakeup_stats()` on an SD_ASYM_CPUCAPACITY domain (a machine
/// with CPUs of several capacities); the simulator's statistics do not track misfit
/// tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    MisfitTask,
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
    /// `group_misfit_task_load != 0` (the wake-up slow path only).
    pub group_misfit_task: bool,
    /// `group->sgc->max_capacity`, which `update_pick_idlest()` and
    /// `find_idlest_group()` compare between misfit groups (the wake-up slow path
    /// only).
    pub max_capacity: u64,
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
    } else if s.group_misfit_task {
        GroupType::MisfitTask
    } else if !group_has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `allow_numa_imbalance()`: from v5.18 `running <= imb_numa_nr` ("static inline bool
/// allow_numa_imbalance(int running, int imb_numa_nr) { return running <=
/// imb_numa_nr; }", fair.c v5.18.12 9096-9099, v5.19.0 9065-9068, e496132ebedd; 6.0
/// folded it into adjust_numa_imbalance() as "if (dst_running > imb_numa_nr) return
/// imbalance;", fair.c v6.8 1329-1345); before, `running < weight / 4`
/// (`imb_or_weight` is then the weight; fair.c v5.17 9043-9046).
pub(crate) fn allow_numa_imbalance(rel: Release, running: u32, imb_or_weight: u32) -> bool {
    if rel >= Release::new(5, 18) {
        running <= imb_or_weight
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
        // "Select group with the highest max capacity".
        GroupType::MisfitTask => idlest.max_capacity < s.max_capacity,
        GroupType::HasSpare => {
            !(idlest.idle_cpus > s.idle_cpus
                || (idlest.idle_cpus == s.idle_cpus && idlest.group_util <= s.group_util))
        }
    }
}

/// What `find_idlest_cpu()`'s walk down the domains reads of a CPU's domains and
/// what it calls at a level: the wake-up slow path's context
/// (`wakeup/select/idlest.rs`: the wake-up state's domains, traced) and the
/// simulator's fork placement (`sim/balance/fork.rs`: its balancing levels) each
/// give it their own `find_idlest_group()` and `find_idlest_group_cpu()`.
pub(crate) trait IdlestWalk {
    /// What `find_idlest_group()` returns: a group of the domain it was asked about.
    type Group;
    /// How many domains `cpu` has (`for_each_domain(cpu, tmp)`'s bound).
    fn n_domains(&self, cpu: CpuId) -> usize;
    /// `cpu`'s domain `level` (0 the lowest, `sd->child` one less): its `sd->flags`
    /// and `sd->span_weight`.
    fn domain(&self, cpu: CpuId, level: usize) -> (SdFlags, u32);
    /// `find_idlest_group(sd, p, cpu)` in `cpu`'s domain `level`; `sd_flag` says
    /// who p is (new on a fork).
    fn idlest_group(&mut self, cpu: CpuId, level: usize, sd_flag: SdFlags) -> Option<Self::Group>;
    /// `find_idlest_group_cpu(group, p, cpu)`.
    fn idlest_group_cpu(&mut self, group: Self::Group, cpu: CpuId) -> CpuId;
}

/// `find_idlest_cpu()`'s walk, fair.c v6.8 lines 7178-7213, from `cpu`'s domain
/// `sd_idx`: returns `new_cpu`. A level without `sd_flag`, with no idlest group, or
/// whose idlest CPU is `cpu` itself hands over to its child; a new CPU restarts the
/// walk at its highest `sd_flag` domain below the span weight of the level that
/// chose it ("Now try balancing at a lower domain level of 'new_cpu'"). Bounded:
/// each turn goes down a level or to a domain of a smaller span.
pub(crate) fn find_idlest_cpu_walk<W: IdlestWalk>(
    w: &mut W,
    sd_idx: usize,
    cpu: CpuId,
    sd_flag: SdFlags,
) -> CpuId {
    let (mut cpu, mut new_cpu) = (cpu, cpu);
    let mut sd = Some(sd_idx);
    while let Some(l) = sd {
        let (flags, weight) = w.domain(cpu, l);
        if !flags.intersects(sd_flag) {
            sd = l.checked_sub(1);
            continue;
        }
        let Some(group) = w.idlest_group(cpu, l, sd_flag) else {
            sd = l.checked_sub(1);
            continue;
        };
        new_cpu = w.idlest_group_cpu(group, cpu);
        if new_cpu == cpu {
            // "Now try balancing at a lower domain level of 'cpu'".
            sd = l.checked_sub(1);
            continue;
        }
        // "Now try balancing at a lower domain level of 'new_cpu'": the highest
        // domain of new_cpu below this one's weight that carries sd_flag.
        cpu = new_cpu;
        sd = None;
        for j in 0..w.n_domains(cpu) {
            let (tmp_flags, tmp_weight) = w.domain(cpu, j);
            if weight <= tmp_weight {
                break;
            }
            if tmp_flags.intersects(sd_flag) {
                sd = Some(j);
            }
        }
    }
    new_cpu
}
