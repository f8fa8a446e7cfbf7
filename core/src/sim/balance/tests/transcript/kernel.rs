//! The transcription itself: fair.c v6.8's `find_busiest_group()` and what it calls
//! (`should_we_balance()` and `find_busiest_queue()` in queue.rs), statement by statement in C's types (`unsigned long`
//! = u64, `unsigned int` = u32, `long` = i64, `int` = i32, with C's wrap-around and
//! conversions), written from the kernel text, not from the model (`lb/`). The
//! release switches and what is left out are in `mod.rs`'s header.

use crate::cpumask::{CpuId, CpuMask};
use crate::sched_domain::{SchedDomain, SchedGroup, SdFlags};

/// Which fair.c.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fair {
    V6_5,
    V6_8,
    V6_12,
}

/// `enum cpu_idle_type` (6.12: `__CPU_NOT_IDLE = 0`, so `!env->idle` is NOT_IDLE).
// The kernel's names (CPU_NOT_IDLE, CPU_IDLE, CPU_NEWLY_IDLE).
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IdleType {
    CpuNotIdle,
    CpuIdle,
    CpuNewlyIdle,
}

/// `enum group_type`, v6.8 8721-8755 (v6.5 has no group_smt_balance: the order of the
/// others is the same, so one numbering serves both).
pub(super) const HAS_SPARE: u8 = 0;
pub(super) const FULLY_BUSY: u8 = 1;
pub(super) const MISFIT_TASK: u8 = 2;
pub(super) const SMT_BALANCE: u8 = 3;
pub(super) const ASYM_PACKING: u8 = 4;
pub(super) const IMBALANCED: u8 = 5;
pub(super) const OVERLOADED: u8 = 6;

/// `enum migration_type`, v6.8 8757-8762.
pub(super) const MIGRATE_LOAD: u8 = 0;
pub(super) const MIGRATE_UTIL: u8 = 1;
pub(super) const MIGRATE_TASK: u8 = 2;
pub(super) const MIGRATE_MISFIT: u8 = 3;

/// `enum fbq_type { regular, remote, all }`.
pub(super) const REGULAR: u8 = 0;
pub(super) const ALL: u8 = 2;

/// `SCHED_CAPACITY_SCALE`.
const SCALE: u64 = 1024;
/// `NUMA_IMBALANCE_MIN`.
const NUMA_IMBALANCE_MIN: i32 = 2;

/// One `struct rq`, the fields the balancer reads.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rq {
    /// `rq->curr == rq->idle`.
    pub curr_is_idle: bool,
    pub nr_running: u32,
    /// `rq->cfs.h_nr_running`.
    pub h_nr_running: u32,
    pub ttwu_pending: bool,
    /// `rq->cfs.avg.load_avg`, `.runnable_avg`, `.util_avg`, `.util_est`.
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    pub util_est: u64,
    /// `rq->cpu_capacity` (`capacity_of()`).
    pub cpu_capacity: u64,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub arch_capacity: u64,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: u64,
}

/// `struct sg_lb_stats`, v6.8 9434-9452 (no NUMA-balancing counts: see `fbq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Sgs {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: u8,
    pub group_asym_packing: u32,
    pub group_smt_balance: u32,
    pub group_misfit_task_load: u64,
}

/// `struct sd_lb_stats`, v6.8 9458-9468; groups by their index in `sd->groups`.
#[derive(Clone, Debug, Default)]
pub(super) struct Sds {
    pub busiest: Option<usize>,
    pub local: Option<usize>,
    pub total_load: u64,
    pub total_capacity: u64,
    pub avg_load: u64,
    pub prefer_sibling: u32,
    pub busiest_stat: Sgs,
    pub local_stat: Sgs,
}

/// `struct lb_env`, what `find_busiest_group()` and `find_busiest_queue()` read and
/// write, with the runqueues and `sgc->imbalance` they reach through pointers.
pub(super) struct Env<'a> {
    pub fair: Fair,
    pub sd: &'a SchedDomain,
    /// `!!sd->parent`.
    pub has_parent: bool,
    pub dst_cpu: u32,
    pub idle: IdleType,
    /// `env->cpus`: `sched_domain_span(sd) & cpu_active_mask` (load_balance(), v6.8
    /// 11286), less the CPUs a redo after LBF_ALL_PINNED cleared.
    pub cpus: CpuMask,
    pub imbalance: i64,
    pub migration_type: u8,
    pub fbq_type: u8,
    pub rqs: &'a [Rq],
    /// `sg->sgc->imbalance` of a group.
    pub sgc_imbalance: &'a dyn Fn(&SchedGroup) -> bool,
    /// `rd->overload` as update_sd_lb_stats() leaves it (written at the top level).
    pub rd_overload: Option<bool>,
    /// `cpu_smt_mask(cpu)`.
    pub smt_mask: &'a dyn Fn(u32) -> CpuMask,
}

/// `lsub_positive()` (v6.8 3644-3647).
fn lsub_long(x: i64, y: i64) -> i64 {
    x - x.min(y)
}

/// adjust_numa_imbalance(), v6.8 1328-1349.
fn adjust_numa_imbalance(imbalance: i32, dst_running: i32, imb_numa_nr: i32) -> i64 {
    if dst_running > imb_numa_nr {
        return i64::from(imbalance);
    }
    if imbalance <= NUMA_IMBALANCE_MIN {
        return 0;
    }
    i64::from(imbalance)
}

impl Env<'_> {
    pub(super) fn rq(&self, c: u32) -> &Rq {
        &self.rqs[c as usize]
    }
    pub(super) fn group(&self, i: usize) -> &SchedGroup {
        self.sd.groups.get(i).expect("a group")
    }
    pub(super) fn has(&self, f: SdFlags) -> bool {
        self.sd.flags.contains(f)
    }
    pub(super) fn smt_aware(&self) -> bool {
        self.fair != Fair::V6_5
    }

    /// idle_cpu(), core.c v6.8 7425-7441.
    pub(super) fn idle_cpu(&self, c: u32) -> bool {
        let rq = self.rq(c);
        if !rq.curr_is_idle {
            return false;
        }
        if rq.nr_running != 0 {
            return false;
        }
        !rq.ttwu_pending
    }
    /// cpu_load() 6887-6890, cpu_runnable() 6923-6926.
    pub(super) fn cpu_load(&self, c: u32) -> u64 {
        self.rq(c).load_avg
    }
    fn cpu_runnable(&self, c: u32) -> u64 {
        self.rq(c).runnable_avg
    }
    /// cpu_util(cpu, NULL, -1, boost), 7659-7717 (UTIL_EST on).
    pub(super) fn cpu_util(&self, c: u32, boost: bool) -> u64 {
        let rq = self.rq(c);
        let mut util = rq.util_avg;
        if boost {
            util = util.max(rq.runnable_avg);
        }
        util = util.max(rq.util_est);
        util.min(rq.arch_capacity)
    }
    /// check_cpu_capacity(), 9597-9601.
    pub(super) fn check_cpu_capacity(&self, c: u32) -> bool {
        self.rq(c).cpu_capacity * u64::from(self.sd.imbalance_pct) < self.rq(c).arch_capacity * 100
    }
    /// sched_reduced_capacity(), 9855-9865.
    fn sched_reduced_capacity(&self, c: u32) -> bool {
        if self.rq(c).h_nr_running != 1 {
            return false;
        }
        self.check_cpu_capacity(c)
    }

    /// group_has_capacity(), 9662-9677.
    fn group_has_capacity(pct: u64, s: &Sgs) -> bool {
        if s.sum_nr_running < s.group_weight {
            return true;
        }
        if s.group_capacity * pct < s.group_runnable * 100 {
            return false;
        }
        if s.group_capacity * 100 > s.group_util * pct {
            return true;
        }
        false
    }
    /// group_is_overloaded(), 9687-9702.
    fn group_is_overloaded(pct: u64, s: &Sgs) -> bool {
        if s.sum_nr_running <= s.group_weight {
            return false;
        }
        if s.group_capacity * 100 < s.group_util * pct {
            return true;
        }
        if s.group_capacity * pct < s.group_runnable * 100 {
            return true;
        }
        false
    }
    /// group_classify(), 9704-9728 (v6.5 9385-9406: no group_smt_balance).
    fn group_classify(&self, g: &SchedGroup, s: &Sgs) -> u8 {
        let pct = u64::from(self.sd.imbalance_pct);
        if Self::group_is_overloaded(pct, s) {
            return OVERLOADED;
        }
        if (self.sgc_imbalance)(g) {
            return IMBALANCED;
        }
        if s.group_asym_packing != 0 {
            return ASYM_PACKING;
        }
        if self.smt_aware() && s.group_smt_balance != 0 {
            return SMT_BALANCE;
        }
        if s.group_misfit_task_load != 0 {
            return MISFIT_TASK;
        }
        if !Self::group_has_capacity(pct, s) {
            return FULLY_BUSY;
        }
        HAS_SPARE
    }

    /// smt_vs_nonsmt_groups(), 9791-9799 (6.6+).
    fn smt_vs_nonsmt_groups(&self, a: Option<usize>, b: Option<usize>) -> bool {
        let (Some(a), Some(b)) = (a, b) else {
            return false;
        };
        let smt = |g: usize| self.group(g).flags.contains(SdFlags::SHARE_CPUCAPACITY);
        smt(a) != smt(b)
    }
    /// smt_balance(), 9801-9818 (6.6+).
    fn smt_balance(&self, s: &Sgs, g: &SchedGroup) -> bool {
        if self.idle == IdleType::CpuNotIdle {
            return false;
        }
        g.flags.contains(SdFlags::SHARE_CPUCAPACITY) && s.sum_h_nr_running > 1
    }
    /// sibling_imbalance(), 9820-9853 (6.6+).
    fn sibling_imbalance(&self, sds: &Sds) -> i64 {
        let (busiest, local) = (&sds.busiest_stat, &sds.local_stat);
        if self.idle == IdleType::CpuNotIdle || busiest.sum_nr_running == 0 {
            return 0;
        }
        let ncores_busiest = self.group(sds.busiest.unwrap()).cores as i32;
        let ncores_local = self.group(sds.local.unwrap()).cores as i32;
        if ncores_busiest == ncores_local {
            let imbalance = i64::from(busiest.sum_nr_running);
            return lsub_long(imbalance, i64::from(local.sum_nr_running));
        }
        // int * unsigned int: unsigned int.
        let mut imbalance = i64::from((ncores_local as u32).wrapping_mul(busiest.sum_nr_running));
        imbalance = lsub_long(
            imbalance,
            i64::from((ncores_busiest as u32).wrapping_mul(local.sum_nr_running)),
        );
        imbalance = 2 * imbalance + i64::from(ncores_local) + i64::from(ncores_busiest);
        imbalance /= i64::from(ncores_local + ncores_busiest);
        if imbalance <= 1 && local.sum_nr_running == 0 && busiest.sum_nr_running > 1 {
            imbalance = 2;
        }
        imbalance
    }

    /// update_sg_lb_stats(), 9876-9957 (v6.5 9489-9566, v6.12 10390-10469). Returns
    /// the stats and SG_OVERLOAD.
    fn update_sg_lb_stats(&self, sds: &Sds, gi: usize) -> (Sgs, bool) {
        let group = self.group(gi);
        let mut sgs = Sgs::default();
        let mut overload = false;
        let local_group = sds.local == Some(gi);
        for i in group.span.and(&self.cpus).iter().map(|c| c.0) {
            let rq = self.rq(i);
            let load = self.cpu_load(i);
            sgs.group_load += load;
            sgs.group_util += self.cpu_util(i, false);
            sgs.group_runnable += self.cpu_runnable(i);
            sgs.sum_h_nr_running += rq.h_nr_running;
            let nr_running = rq.nr_running;
            sgs.sum_nr_running += nr_running;
            if nr_running > 1 {
                overload = true;
            }
            if nr_running == 0 && self.idle_cpu(i) {
                sgs.idle_cpus += 1;
                continue;
            }
            if local_group {
                continue;
            }
            if self.has(SdFlags::ASYM_CPUCAPACITY) {
                if sgs.group_misfit_task_load < rq.misfit_task_load {
                    sgs.group_misfit_task_load = rq.misfit_task_load;
                    overload = true;
                }
            } else if self.idle != IdleType::CpuNotIdle
                && self.sched_reduced_capacity(i)
                && sgs.group_misfit_task_load < load
            {
                sgs.group_misfit_task_load = load;
            }
        }
        sgs.group_capacity = group.capacity;
        sgs.group_weight = group.span.weight();
        // SD_ASYM_PACKING (sched_asym()): left out, as the model leaves it out (mod.rs).
        if self.smt_aware() && !local_group && self.smt_balance(&sgs, group) {
            sgs.group_smt_balance = 1;
        }
        sgs.group_type = self.group_classify(group, &sgs);
        if sgs.group_type == OVERLOADED {
            sgs.avg_load = sgs.group_load * SCALE / sgs.group_capacity;
        }
        (sgs, overload)
    }

    /// update_sd_pick_busiest(), 9972-10114 (v6.5 9581-9700: no group_smt_balance case
    /// nor smt_vs_nonsmt_groups(); v6.12 10484-10620: `return` in place of `break`).
    fn update_sd_pick_busiest(&self, sds: &Sds, sg: usize, sgs: &Sgs) -> bool {
        let busiest = &sds.busiest_stat;
        if sgs.sum_h_nr_running == 0 {
            return false;
        }
        // SD_ASYM_CPUCAPACITY misfit test: no such domain (checked by the caller).
        if sgs.group_type > busiest.group_type {
            return true;
        }
        if sgs.group_type < busiest.group_type {
            return false;
        }
        let has_spare = |sgs: &Sgs| {
            if sgs.idle_cpus > busiest.idle_cpus {
                return false;
            }
            !(sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running)
        };
        let fully_busy = |sgs: &Sgs| {
            if sgs.avg_load < busiest.avg_load {
                return false;
            }
            if sgs.avg_load == busiest.avg_load {
                let b = sds
                    .busiest
                    .expect("fully busy ties only with a busiest group");
                if self.group(b).flags.contains(SdFlags::SHARE_CPUCAPACITY) {
                    return false;
                }
            }
            true
        };
        let picked = match sgs.group_type {
            OVERLOADED => sgs.avg_load > busiest.avg_load,
            IMBALANCED => return false,
            ASYM_PACKING | MISFIT_TASK => unreachable!("no asymmetric domain"),
            SMT_BALANCE => {
                if sgs.idle_cpus != 0 || busiest.idle_cpus != 0 {
                    has_spare(sgs)
                } else {
                    fully_busy(sgs)
                }
            }
            FULLY_BUSY => fully_busy(sgs),
            _ => {
                if self.smt_aware() && self.smt_vs_nonsmt_groups(sds.busiest, Some(sg)) {
                    let smt = self.group(sg).flags.contains(SdFlags::SHARE_CPUCAPACITY);
                    return !(smt && sgs.sum_h_nr_running <= 1);
                }
                has_spare(sgs)
            }
        };
        // The SD_ASYM_CPUCAPACITY min_capacity test after the switch: no such domain.
        picked
    }

    /// update_sd_lb_stats(), 10557-10628 (v6.5 10141-10212, v6.12 11061-11121),
    /// from init_sd_lb_stats() (9470-9489). update_group_capacity() of the local group
    /// recomputes the same sums (capacities do not change); update_idle_cpu_scan()
    /// (SIS_UTIL's hint) and rd->overutilized are not compared.
    fn update_sd_lb_stats(&mut self) -> Sds {
        let mut sds = Sds {
            busiest_stat: Sgs {
                idle_cpus: u32::MAX,
                group_type: HAS_SPARE,
                ..Sgs::default()
            },
            ..Sds::default()
        };
        let mut overload = false;
        for gi in 0..self.sd.groups.len() {
            let local_group = self.group(gi).span.test_cpu(CpuId(self.dst_cpu));
            if local_group {
                sds.local = Some(gi);
            }
            let (sgs, o) = self.update_sg_lb_stats(&sds, gi);
            overload |= o;
            if local_group {
                sds.local_stat = sgs;
            } else if self.update_sd_pick_busiest(&sds, gi, &sgs) {
                sds.busiest = Some(gi);
                sds.busiest_stat = sgs;
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
        }
        if let Some(b) = sds.busiest {
            sds.prefer_sibling = u32::from(self.group(b).flags.contains(SdFlags::PREFER_SIBLING));
        }
        if self.has(SdFlags::NUMA) {
            self.fbq_type = fbq_classify_group(&sds.busiest_stat);
        }
        if !self.has_parent {
            self.rd_overload = Some(overload);
        }
        sds
    }

    /// calculate_imbalance(), 10636-10804 (v6.5 10220-10383: no group_smt_balance
    /// case, and `nr_diff = busiest->sum_nr_running - local->sum_nr_running` with
    /// lsub_positive() in place of sibling_imbalance(); v6.12 11129-11297).
    fn calculate_imbalance(&mut self, sds: &mut Sds) {
        let busiest = sds.busiest_stat;
        if busiest.group_type == MISFIT_TASK {
            if self.has(SdFlags::ASYM_CPUCAPACITY) {
                self.migration_type = MIGRATE_MISFIT;
                self.imbalance = 1;
            } else {
                self.migration_type = MIGRATE_LOAD;
                self.imbalance = busiest.group_misfit_task_load as i64;
            }
            return;
        }
        if busiest.group_type == ASYM_PACKING {
            self.migration_type = MIGRATE_TASK;
            self.imbalance = i64::from(busiest.sum_h_nr_running);
            return;
        }
        if self.smt_aware() && busiest.group_type == SMT_BALANCE {
            self.migration_type = MIGRATE_TASK;
            self.imbalance = 1;
            return;
        }
        if busiest.group_type == IMBALANCED {
            self.migration_type = MIGRATE_TASK;
            self.imbalance = 1;
            return;
        }
        let local = sds.local_stat;
        if local.group_type == HAS_SPARE {
            if busiest.group_type > FULLY_BUSY && !self.has(SdFlags::SHARE_LLC) {
                self.migration_type = MIGRATE_UTIL;
                self.imbalance =
                    (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                if self.idle != IdleType::CpuNotIdle && self.imbalance == 0 {
                    self.migration_type = MIGRATE_TASK;
                    self.imbalance = 1;
                }
                return;
            }
            if busiest.group_weight == 1 || sds.prefer_sibling != 0 {
                self.migration_type = MIGRATE_TASK;
                if self.smt_aware() {
                    self.imbalance = self.sibling_imbalance(sds);
                } else {
                    let nr_diff = busiest.sum_nr_running;
                    let nr_diff = nr_diff - nr_diff.min(local.sum_nr_running);
                    self.imbalance = i64::from(nr_diff);
                }
            } else {
                self.migration_type = MIGRATE_TASK;
                // max_t(long, 0, (local->idle_cpus - busiest->idle_cpus)): an
                // unsigned int difference, converted to long.
                let d = local.idle_cpus.wrapping_sub(busiest.idle_cpus);
                self.imbalance = 0i64.max(i64::from(d));
            }
            if self.has(SdFlags::NUMA) {
                self.imbalance = adjust_numa_imbalance(
                    self.imbalance as i32,
                    local.sum_nr_running.wrapping_add(1) as i32,
                    self.sd.imb_numa_nr as i32,
                );
            }
            self.imbalance >>= 1;
            return;
        }
        if local.group_type < OVERLOADED {
            let local = &mut sds.local_stat;
            local.avg_load = local.group_load * SCALE / local.group_capacity;
            if local.avg_load >= busiest.avg_load {
                self.imbalance = 0;
                return;
            }
            let local_avg = local.avg_load;
            sds.avg_load = sds.total_load * SCALE / sds.total_capacity;
            if local_avg >= sds.avg_load {
                self.imbalance = 0;
                return;
            }
        }
        let local = sds.local_stat;
        self.migration_type = MIGRATE_LOAD;
        // unsigned long arithmetic, wrapping as C's does.
        let a = busiest
            .avg_load
            .wrapping_sub(sds.avg_load)
            .wrapping_mul(busiest.group_capacity);
        let b = sds
            .avg_load
            .wrapping_sub(local.avg_load)
            .wrapping_mul(local.group_capacity);
        self.imbalance = (a.min(b) / SCALE) as i64;
    }

    /// find_busiest_group(), 10838-10974 (v6.5 10417-10544; v6.12
    /// sched_balance_find_src_group(), 11331-11464). sched_energy_enabled() is false
    /// (no asymmetric capacity, no energy model). Returns the busiest group's index,
    /// and the statistics as update_sd_lb_stats() left them.
    pub(super) fn find_busiest_group(&mut self) -> (Option<usize>, Sds) {
        let mut sds = self.update_sd_lb_stats();
        let stats = sds.clone();
        let out_balanced = |e: &mut Self| {
            e.imbalance = 0;
            (None, stats.clone())
        };
        let Some(_) = sds.busiest else {
            return out_balanced(self);
        };
        let busiest = sds.busiest_stat;
        'force_balance: {
            if busiest.group_type == MISFIT_TASK {
                break 'force_balance;
            }
            if busiest.group_type == ASYM_PACKING {
                break 'force_balance;
            }
            if busiest.group_type == IMBALANCED {
                break 'force_balance;
            }
            let local = sds.local_stat;
            if local.group_type > busiest.group_type {
                return out_balanced(self);
            }
            if local.group_type == OVERLOADED {
                if local.avg_load >= busiest.avg_load {
                    return out_balanced(self);
                }
                sds.avg_load = sds.total_load * SCALE / sds.total_capacity;
                if local.avg_load >= sds.avg_load {
                    return out_balanced(self);
                }
                if 100 * busiest.avg_load <= u64::from(self.sd.imbalance_pct) * local.avg_load {
                    return out_balanced(self);
                }
            }
            if sds.prefer_sibling != 0 && local.group_type == HAS_SPARE {
                let more = if self.smt_aware() {
                    self.sibling_imbalance(&sds) > 1
                } else {
                    busiest.sum_nr_running > local.sum_nr_running.wrapping_add(1)
                };
                if more {
                    break 'force_balance;
                }
            }
            if busiest.group_type != OVERLOADED {
                if self.idle == IdleType::CpuNotIdle {
                    return out_balanced(self);
                }
                if self.smt_aware()
                    && busiest.group_type == SMT_BALANCE
                    && self.smt_vs_nonsmt_groups(sds.local, sds.busiest)
                {
                    break 'force_balance;
                }
                if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus.wrapping_add(1)
                {
                    return out_balanced(self);
                }
                if busiest.sum_h_nr_running == 1 {
                    return out_balanced(self);
                }
            }
        }
        self.calculate_imbalance(&mut sds);
        let b = if self.imbalance != 0 {
            sds.busiest
        } else {
            None
        };
        (b, stats)
    }
}

/// fbq_classify_group(), 10117-10124 (CONFIG_NUMA_BALANCING), with
/// no task placed by NUMA balancing (`nr_numa_running` = `nr_preferred_running` = 0).
fn fbq_classify_group(sgs: &Sgs) -> u8 {
    if sgs.sum_h_nr_running > 0 {
        return REGULAR;
    }
    ALL
}
