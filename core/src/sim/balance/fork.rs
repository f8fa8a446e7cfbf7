//! Fork placement, fair.c v6.8: `select_task_rq_fair(WF_FORK)`'s slow path,
//! `find_idlest_cpu()` (`sched_balance_find_dst_cpu()` from 6.10) walking down the
//! SD_BALANCE_FORK domains with `find_idlest_group()`, `update_sg_wakeup_stats()`,
//! `update_pick_idlest()` and `find_idlest_group_cpu()`.
//!
//! A new task has no load or util of its own yet when it is placed (the kernel runs
//! `post_init_entity_util_avg()` after `select_task_rq()`), so its `*_without()`
//! equal the plain values. Simplified: no NUMA preferred node, and
//! `sched_group_cookie_match()` / `sched_core_cookie_match()` are not applied (the
//! entry point knows the task's mask, not its cookie).

use crate::cpumask::{CpuId, CpuMask};
use crate::release::Release;
use crate::sched_domain::SdFlags;

use super::lb::{
    adjust_numa_imbalance, allow_numa_imbalance, group_classify, update_pick_idlest, GroupType,
    SgStats,
};
use super::{Group, Level, Simulator};
use crate::wakeup::lb_stats::{find_idlest_cpu_walk, IdlestWalk};

impl Simulator {
    /// The CPU a task forked on `parent` with CPU mask `mask` starts on:
    /// `select_task_rq()` (a single allowed CPU, else) `select_task_rq_fair()` with `WF_FORK` (the highest domain of the unbroken
    /// SD_BALANCE_FORK chain from the bottom, then `find_idlest_cpu()`; the parent's
    /// CPU when there is none), then `select_task_rq()`'s `is_cpu_allowed()` check with
    /// `select_fallback_rq()` (the first allowed CPU of the parent's node, else the
    /// first allowed).
    pub(in crate::sim) fn find_idlest_cpu_fork(&self, parent: u32, mask: &CpuMask) -> u32 {
        // select_task_rq(): a task allowed one CPU goes there (cpumask_any()).
        if mask.weight() == 1 {
            return mask.first().map_or(parent, |c| c.0);
        }
        let levels = &self.balance.levels[parent as usize];
        let top = levels
            .iter()
            .take_while(|l| l.flags.contains(SdFlags::BALANCE_FORK))
            .count()
            .checked_sub(1);
        let cpu = match top {
            Some(li) => self.find_idlest_cpu(li, parent, mask),
            None => parent,
        };
        if mask.test_cpu(CpuId(cpu)) {
            return cpu;
        }
        let node = self.machine.cpus[parent as usize].node;
        mask.iter()
            .find(|c| self.machine.cpus[c.idx()].node == node)
            .or_else(|| mask.first())
            .map_or(parent, |c| c.0)
    }

    /// `find_idlest_cpu()`, fair.c v6.8, from `cpu`'s domain `li` (prev_cpu = cpu).
    /// The walk down the domains is [`find_idlest_cpu_walk`], one definition with
    /// the wake-up slow path (`wakeup/select/idlest.rs`) over [`ForkWalk`].
    fn find_idlest_cpu(&self, li: usize, parent: u32, mask: &CpuMask) -> u32 {
        // `cpumask_intersects(sched_domain_span(sd), p->cpus_ptr)`: the level keeps only
        // the span's run CPUs, but those hold every task's mask (the run's CPUs are
        // the masks put together), so the answer is the same.
        let span = &self.balance.levels[parent as usize][li].span;
        if !span.iter().any(|&c| mask.test_cpu(CpuId(c))) {
            return parent;
        }
        let mut walk = ForkWalk { sim: self, mask };
        find_idlest_cpu_walk(&mut walk, li, CpuId(parent), SdFlags::BALANCE_FORK).0
    }

    /// `update_sg_wakeup_stats()`, fair.c v6.8, for a new task (nothing to subtract).
    pub(in crate::sim) fn update_sg_wakeup_stats(&self, lv: &Level, g: &Group) -> SgStats {
        let mut s = SgStats::default();
        for &c in g.cpus.iter() {
            s.group_load += self.cpu_load(c);
            // cpu_runnable_without(): a new task, nothing to subtract.
            s.group_runnable += self.cpu_runnable(c);
            s.group_util += self.cpu_util(c);
            // rq->nr_running (fair.c v6.8 10223): not the wakees still on its wake
            // list.
            let nr = self.state.rqs[c as usize].nr_running;
            s.sum_nr_running += nr;
            if nr == 0 && self.cpu_idle(c) {
                s.idle_cpus += 1;
            }
        }
        s.group_capacity = g.capacity;
        s.group_weight = g.cpus.len() as u32;
        s.group_type = group_classify(lv.imbalance_pct, self.balance.sgc_imbalance[g.sgc], &s);
        if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            s.avg_load = s.group_load * 1024 / s.group_capacity.max(1);
        }
        s
    }

    /// `find_idlest_group()`, fair.c v6.8, in `cpu`'s domain `lv`.
    fn find_idlest_group(&self, lv: &Level, cpu: u32, mask: &CpuMask) -> Option<usize> {
        let rel = self.balance.release;
        let mut idlest: Option<(usize, SgStats)> = None;
        let mut local: Option<SgStats> = None;
        for (gi, g) in lv.groups.iter().enumerate() {
            if !g.cpus.iter().any(|&c| mask.test_cpu(CpuId(c))) {
                continue;
            }
            let s = self.update_sg_wakeup_stats(lv, g);
            if gi == 0 && g.cpus.contains(&cpu) {
                local = Some(s);
            } else if idlest.is_none_or(|(_, i)| update_pick_idlest(&i, &s)) {
                idlest = Some((gi, s));
            }
        }
        let (ig, is) = idlest?;
        let Some(ls) = local else {
            return Some(ig);
        };
        if ls.group_type != is.group_type {
            return (ls.group_type > is.group_type).then_some(ig);
        }
        let numa = lv.flags.contains(SdFlags::NUMA);
        match ls.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = 1024 * (lv.imbalance_pct - 100) / 100;
                if numa && is.avg_load + imbalance >= ls.avg_load {
                    return None;
                }
                if is.avg_load >= ls.avg_load + imbalance {
                    return None;
                }
                if 100 * ls.avg_load <= lv.imbalance_pct * is.avg_load {
                    return None;
                }
            }
            // The simulator's statistics never mark a misfit group (lb_stats.rs).
            GroupType::Imbalanced | GroupType::SmtBalance | GroupType::MisfitTask => return None,
            GroupType::HasSpare => {
                if numa {
                    if rel >= Release::new(6, 0) {
                        let imb = self.fork_imb_numa_nr(lv, mask);
                        let imbalance = (ls.idle_cpus as i64 - is.idle_cpus as i64).abs();
                        if adjust_numa_imbalance(rel, imbalance, ls.sum_nr_running + 1, imb) == 0 {
                            return None;
                        }
                    } else if rel >= Release::new(5, 18) {
                        // v5.18-5.19: sd->imb_numa_nr as is (fair.c v5.19.0 9207).
                        if allow_numa_imbalance(rel, ls.sum_nr_running + 1, lv.imb_numa_nr) {
                            return None;
                        }
                    } else if allow_numa_imbalance(rel, ls.sum_nr_running, lv.span_weight) {
                        return None;
                    }
                }
                if ls.idle_cpus >= is.idle_cpus {
                    return None;
                }
            }
        }
        Some(ig)
    }

    /// `imb_numa_nr` from 6.0, fair.c v6.8 lines 10427-10454: the smaller of `sd->imb_numa_nr`
    /// and the task's CPUs in the local group, under `if (p->nr_cpus_allowed !=
    /// NR_CPUS)`. `NR_CPUS` is `CONFIG_NR_CPUS`, the build's maximum (8192 on
    /// distribution kernels, above [`crate::cpumask::MAX_CPUS`]) and a task allowed
    /// everything has `cpu_possible_mask`, so the test always holds: the minimum is
    /// taken for every task, as in `wakeup::select`'s `find_idlest_group()`.
    fn fork_imb_numa_nr(&self, lv: &Level, mask: &CpuMask) -> u32 {
        let local = lv.groups[0]
            .cpus
            .iter()
            .filter(|&&c| mask.test_cpu(CpuId(c)))
            .count();
        (local as u32).min(lv.imb_numa_nr)
    }

    /// `find_idlest_group_cpu()`, fair.c v6.8: the idle CPU in the shallowest C-state
    /// (the most recently idled on a tie), else the least loaded; `this` if none.
    fn find_idlest_group_cpu(&self, g: &Group, this: u32, mask: &CpuMask) -> u32 {
        if g.cpus.len() == 1 {
            return g.cpus[0];
        }
        let (mut min_exit, mut latest) = (u64::MAX, 0u64);
        let mut shallowest: Option<u32> = None;
        let (mut min_load, mut least) = (u64::MAX, this);
        for &c in g.cpus.iter() {
            if !mask.test_cpu(CpuId(c)) {
                continue;
            }
            if self.cpu_idle(c) {
                let cc = &self.cpus[c as usize];
                let exit = self.cost.params.idle_states[cc.cstate as usize].exit_latency_ns;
                let stamp = cc.idle_since.ns();
                if exit < min_exit {
                    (min_exit, latest, shallowest) = (exit, stamp, Some(c));
                } else if exit == min_exit && stamp > latest {
                    (latest, shallowest) = (stamp, Some(c));
                }
            } else if shallowest.is_none() {
                let load = self.cpu_load(c);
                if load < min_load {
                    (min_load, least) = (load, c);
                }
            }
        }
        shallowest.unwrap_or(least)
    }
}

/// The simulator's balancing levels for [`find_idlest_cpu_walk`]: a fork of a task
/// allowed `mask`, with this module's `find_idlest_group()` and
/// `find_idlest_group_cpu()`.
struct ForkWalk<'s> {
    sim: &'s Simulator,
    mask: &'s CpuMask,
}

impl<'s> IdlestWalk for ForkWalk<'s> {
    type Group = &'s Group;

    fn n_domains(&self, cpu: CpuId) -> usize {
        self.sim.balance.levels[cpu.idx()].len()
    }

    fn domain(&self, cpu: CpuId, level: usize) -> (SdFlags, u32) {
        let lv = &self.sim.balance.levels[cpu.idx()][level];
        (lv.flags, lv.span_weight)
    }

    /// Only forks come here: `sd_flag` is `SD_BALANCE_FORK` and the task is new.
    fn idlest_group(&mut self, cpu: CpuId, level: usize, _sd_flag: SdFlags) -> Option<&'s Group> {
        let lv = &self.sim.balance.levels[cpu.idx()][level];
        let gi = self.sim.find_idlest_group(lv, cpu.0, self.mask)?;
        Some(&lv.groups[gi])
    }

    fn idlest_group_cpu(&mut self, group: &'s Group, cpu: CpuId) -> CpuId {
        CpuId(self.sim.find_idlest_group_cpu(group, cpu.0, self.mask))
    }
}
