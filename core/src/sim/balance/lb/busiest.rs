//! `find_busiest_group()`'s verdict on the statistics (stats.rs), fair.c v6.8: its
//! early outs, `sibling_imbalance()` and `calculate_imbalance()` (`migrate_task`,
//! `migrate_util`, `migrate_load`, the NUMA allowance), then `find_busiest_queue()`
//! in the busiest group.

use crate::release::Release;
use crate::sched_domain::SdFlags;
use crate::sim::Simulator;

use super::{adjust_numa_imbalance, CpuIdle, GroupType, LbEnv, MigrationType, SdStats, SCALE};

impl Simulator {
    /// `sibling_imbalance()` (v6.6+): tasks to move so both groups run the same number
    /// per core; before 6.6 the plain `nr_running` difference.
    fn sibling_imbalance(&self, env: &LbEnv, sds: &SdStats) -> i64 {
        let (b, l) = (&sds.busiest_stat, &sds.local);
        if self.balance.release < Release::new(6, 6) {
            return (b.sum_nr_running as i64 - l.sum_nr_running as i64).max(0);
        }
        if env.idle == CpuIdle::NotIdle || b.sum_nr_running == 0 {
            return 0;
        }
        let lv = self.lv(env);
        let nb = lv.groups[sds.busiest.expect("busiest")].cores as i64;
        let nl = lv.groups[0].cores as i64;
        if nb == nl {
            return (b.sum_nr_running as i64 - l.sum_nr_running as i64).max(0);
        }
        let mut imb = (nl * b.sum_nr_running as i64 - nb * l.sum_nr_running as i64).max(0);
        imb = (2 * imb + nl + nb) / (nl + nb);
        if imb <= 1 && l.sum_nr_running == 0 && b.sum_nr_running > 1 {
            imb = 2;
        }
        imb
    }

    /// `find_busiest_group()`, fair.c v6.8: the stats, the early outs, then
    /// `calculate_imbalance()`. Returns the busiest group's index.
    pub(in crate::sim) fn find_busiest_group(&mut self, env: &mut LbEnv) -> Option<usize> {
        let mut sds = self.update_sd_lb_stats(env);
        let bi = sds.busiest?;
        let busiest = sds.busiest_stat;
        let local = sds.local;
        let pct = self.lv(env).imbalance_pct;
        // Each `break 'force` is the kernel's `goto force_balance`.
        'force: {
            if busiest.group_type == GroupType::Imbalanced {
                break 'force;
            }
            if local.group_type > busiest.group_type {
                return None;
            }
            if local.group_type == GroupType::Overloaded {
                if local.avg_load >= busiest.avg_load {
                    return None;
                }
                sds.avg_load = sds.total_load * SCALE / sds.total_capacity.max(1);
                if local.avg_load >= sds.avg_load {
                    return None;
                }
                if 100 * busiest.avg_load <= pct * local.avg_load {
                    return None;
                }
            }
            // Try to move all excess tasks to a sibling domain of the busiest group's
            // child domain.
            if sds.prefer_sibling && local.group_type == GroupType::HasSpare {
                let more = if self.balance.release >= Release::new(6, 6) {
                    self.sibling_imbalance(env, &sds) > 1
                } else {
                    busiest.sum_nr_running > local.sum_nr_running + 1
                };
                if more {
                    break 'force;
                }
            }
            if busiest.group_type != GroupType::Overloaded {
                if env.idle == CpuIdle::NotIdle {
                    return None;
                }
                if busiest.group_type == GroupType::SmtBalance {
                    // smt_vs_nonsmt_groups(): let a non-SMT CPU pull from an SMT group.
                    let lv = self.lv(env);
                    let smt = |g: usize| lv.groups[g].flags.contains(SdFlags::SHARE_CPUCAPACITY);
                    if smt(0) != smt(bi) {
                        break 'force;
                    }
                }
                if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                    return None;
                }
                if busiest.sum_nr_running == 1 {
                    return None;
                }
            }
        }
        self.calculate_imbalance(env, &mut sds);
        (env.imbalance > 0).then_some(bi)
    }

    /// `calculate_imbalance()`, fair.c v6.8 (no misfit or asym cases).
    pub(in crate::sim::balance) fn calculate_imbalance(&self, env: &mut LbEnv, sds: &mut SdStats) {
        let busiest = sds.busiest_stat;
        let mut local = sds.local;
        let lv = self.lv(env);
        let rel = self.balance.release;
        if matches!(
            busiest.group_type,
            GroupType::SmtBalance | GroupType::Imbalanced
        ) {
            // Reduce the tasks sharing a core / move any task to fix an imbalance due
            // to affinity; the next pass balances back the surplus.
            env.migration_type = MigrationType::Task;
            env.imbalance = 1;
            return;
        }
        if local.group_type == GroupType::HasSpare {
            if busiest.group_type > GroupType::FullyBusy && !lv.flags.contains(SdFlags::SHARE_LLC) {
                // Fill the local group's spare capacity.
                env.migration_type = MigrationType::Util;
                env.imbalance =
                    (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                if env.idle != CpuIdle::NotIdle && env.imbalance == 0 {
                    env.migration_type = MigrationType::Task;
                    env.imbalance = 1;
                }
                return;
            }
            env.migration_type = MigrationType::Task;
            if busiest.group_weight == 1 || sds.prefer_sibling {
                env.imbalance = self.sibling_imbalance(env, sds);
            } else {
                env.imbalance = (local.idle_cpus as i64 - busiest.idle_cpus as i64).max(0);
            }
            // Before 6.0 the difference is halved first and the NUMA allowance sees
            // the halved value (fair.c v5.15/v5.19 calculate_imbalance(): `nr_diff >>
            // 1`, `(local->idle_cpus - busiest->idle_cpus) >> 1`, then
            // adjust_numa_imbalance(), no halving after); 6.0 (cb29a5c19d2d, "Apply
            // imbalance limitations consistently") moved `env->imbalance >>= 1` after
            // the allowance, as below.
            let halved_first = rel < Release::new(6, 0);
            if halved_first {
                env.imbalance >>= 1;
            }
            if lv.flags.contains(SdFlags::NUMA) {
                env.imbalance = if rel >= Release::new(5, 18) {
                    adjust_numa_imbalance(
                        rel,
                        env.imbalance,
                        local.sum_nr_running + 1,
                        lv.imb_numa_nr,
                    )
                } else {
                    adjust_numa_imbalance(
                        rel,
                        env.imbalance,
                        busiest.sum_nr_running,
                        busiest.group_weight,
                    )
                };
            }
            // Number of tasks to move to restore balance.
            if !halved_first {
                env.imbalance >>= 1;
            }
            return;
        }
        if local.group_type < GroupType::Overloaded {
            local.avg_load = local.group_load * SCALE / local.group_capacity.max(1);
            if local.avg_load >= busiest.avg_load {
                env.imbalance = 0;
                return;
            }
            sds.avg_load = sds.total_load * SCALE / sds.total_capacity.max(1);
            if local.avg_load >= sds.avg_load {
                env.imbalance = 0;
                return;
            }
        }
        env.migration_type = MigrationType::Load;
        // "min((busiest->avg_load - sds->avg_load) * busiest->group_capacity,
        // (sds->avg_load - local->avg_load) * local->group_capacity) / SCALE" (fair.c
        // v6.8 10800-10803) in unsigned long: the domain's average can be above the
        // busiest group's (a group that is not overloaded has no avg_load but counts in
        // total_load), and then the first difference wraps and min() takes the second.
        // The second is positive here (local->avg_load < sds->avg_load was checked).
        let a = busiest
            .avg_load
            .wrapping_sub(sds.avg_load)
            .wrapping_mul(busiest.group_capacity);
        let b = sds
            .avg_load
            .wrapping_sub(local.avg_load)
            .wrapping_mul(local.group_capacity);
        env.imbalance = (a.min(b) / SCALE) as i64;
    }

    /// `find_busiest_queue()`, fair.c v6.8 (lines 10979-11110: `busiest_load` and
    /// `busiest_util` start at 0, so a runqueue whose load or util is 0 is never the
    /// busiest for `migrate_load` / `migrate_util`).
    pub(in crate::sim) fn find_busiest_queue(&self, env: &LbEnv, gi: usize) -> Option<u32> {
        let lv = self.lv(env);
        let mut busiest: Option<u32> = None;
        let (mut b_load, mut b_cap, mut b_util, mut b_nr) = (0u64, 1u64, 0u64, 0u32);
        for &c in lv.groups[gi].cpus.iter() {
            if env.excluded.contains(&c) {
                continue;
            }
            // rq->cfs.h_nr_running: not the wakees still on its wake list.
            let nr = self.state.rqs[c as usize].nr_running;
            if nr == 0 {
                continue;
            }
            let cap = self.state.rqs[c as usize].capacity.max(1);
            match env.migration_type {
                MigrationType::Load => {
                    let load = self.cpu_load(c);
                    // nr == 1 && load > imbalance && !check_cpu_capacity(): skip.
                    if nr == 1 && load as i64 > env.imbalance {
                        continue;
                    }
                    // busiest_load starts at 0: a CPU without load is never picked.
                    if load * b_cap > b_load * cap {
                        (b_load, b_cap, busiest) = (load, cap, Some(c));
                    }
                }
                MigrationType::Util => {
                    if nr <= 1 {
                        continue;
                    }
                    // From 6.5 cpu_util_cfs_boost() (fair.c v6.8 11080, v6.5 10650;
                    // 7d0583cf9ec7, 'runnable boosting'): cpu_util() with boost, the
                    // larger of util_avg and runnable_avg (the load, nice 0, less
                    // v6.12's delayed tasks: `cpu_runnable()`), at most the CPU's
                    // capacity (7659-7717). Before, cpu_util_cfs().
                    let u = if self.balance.release >= Release::new(6, 5) {
                        self.cpu_util(c).max(self.cpu_runnable(c)).min(cap)
                    } else {
                        self.cpu_util(c)
                    };
                    if b_util < u {
                        (b_util, busiest) = (u, Some(c));
                    }
                }
                MigrationType::Task => {
                    if b_nr < nr {
                        (b_nr, busiest) = (nr, Some(c));
                    }
                }
            }
        }
        busiest
    }
}
