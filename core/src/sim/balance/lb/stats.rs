//! `load_balance()`'s statistics, fair.c v6.8: `update_sd_lb_stats()` over the
//! domain's groups, `update_sg_lb_stats()` for each (with `group_classify()`,
//! wakeup/lb_stats.rs), `update_sd_pick_busiest()`, and the runqueue reads they
//! share with fork placement, `cpu_load()` and `cpu_util_cfs()`. At the LLC the pass
//! also writes SIS_UTIL's scan depth (`update_idle_cpu_scan()`).

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::SdFlags;
use crate::sim::{Mode, Simulator};
use crate::wakeup;

use super::{group_classify, CpuIdle, GroupType, LbEnv, SdStats, SgStats, SCALE};

impl Simulator {
    /// `cpu_load(rq)`: the CFS runqueue's PELT average as last updated (the kernel
    /// reads `cfs_rq->avg`; idle CPUs' are brought up to date by
    /// `update_blocked_averages()` when balancing visits them, see rebalance.rs).
    #[inline]
    pub(in crate::sim) fn cpu_load(&self, c: u32) -> u64 {
        self.state.rqs[c as usize].load_avg
    }

    /// `cpu_runnable(rq)` (fair.c v6.12.19 7341-7344): the CFS runqueue's
    /// runnable_avg as last updated, its load_avg but for v6.12's delayed tasks.
    #[inline]
    pub(in crate::sim) fn cpu_runnable(&self, c: u32) -> u64 {
        self.state.rqs[c as usize].runnable_avg
    }

    /// `cpu_util_cfs()`: the running PELT average as last updated, at most the capacity.
    #[inline]
    pub(in crate::sim) fn cpu_util(&self, c: u32) -> u64 {
        self.state.rqs[c as usize].util_avg
    }

    /// `update_sg_lb_stats()`, fair.c v6.8, for group `gi` of the env's domain.
    /// Returns the stats and whether a CPU had more than one task (`SG_OVERLOAD`).
    pub(in crate::sim) fn update_sg_lb_stats(&self, env: &LbEnv, gi: usize) -> (SgStats, bool) {
        let lv = self.lv(env);
        let g = &lv.groups[gi];
        let mut s = SgStats::default();
        let mut overload = false;
        if env.excluded.is_empty() {
            // Every CPU of the group: the same sums, kept per block (sums.rs).
            let p = self.balance.sums.sum(&g.pieces);
            s.group_load = p.load;
            s.group_runnable = p.runnable;
            s.group_util = p.util;
            s.sum_nr_running = p.nr_running;
            overload = p.overloaded > 0;
            s.idle_cpus = p.idle;
        } else {
            for &c in g.cpus.iter() {
                if env.excluded.contains(&c) {
                    continue;
                }
                // cpu_load(), cpu_runnable(), cpu_util_cfs(), nr_running, idle_cpu():
                // one runqueue read.
                let rq = &self.state.rqs[c as usize];
                s.group_load += rq.load_avg;
                s.group_runnable += rq.runnable_avg;
                s.group_util += rq.util_avg;
                // rq->nr_running (fair.c v6.8 9897): not the wakees still on its
                // wake list.
                let nr = rq.nr_running;
                s.sum_nr_running += nr;
                if nr > 1 {
                    overload = true;
                }
                if nr == 0 && rq.idle_cpu() {
                    s.idle_cpus += 1;
                }
            }
        }
        s.group_capacity = g.capacity;
        s.group_weight = g.cpus.len() as u32;
        // smt_balance() (v6.6+): an SMT group with more than one task, pulled from
        // by an idle CPU.
        if gi != 0
            && self.balance.release >= Release::new(6, 6)
            && env.idle != CpuIdle::NotIdle
            && g.flags.contains(SdFlags::SHARE_CPUCAPACITY)
            && s.sum_nr_running > 1
        {
            s.group_smt_balance = true;
        }
        let imb = self.balance.sgc_imbalance[g.sgc];
        s.group_type = group_classify(lv.imbalance_pct, imb, &s);
        if s.group_type == GroupType::Overloaded {
            s.avg_load = s.group_load * SCALE / s.group_capacity.max(1);
        }
        (s, overload)
    }

    /// `update_sd_pick_busiest()`, fair.c v6.8 (the misfit, asym and capacity tests
    /// do not apply) for group `gi`: a group without a task is never the busiest
    /// (`if (!sgs->sum_h_nr_running) return false;`, fair.c v6.8 line 9980).
    fn update_sd_pick_busiest(&self, env: &LbEnv, sds: &SdStats, gi: usize, s: &SgStats) -> bool {
        // "Make sure that there is at least one task to pull".
        if s.sum_nr_running == 0 {
            return false;
        }
        let Some(bi) = sds.busiest else {
            return true;
        };
        let b = &sds.busiest_stat;
        if s.group_type != b.group_type {
            return s.group_type > b.group_type;
        }
        let has_spare = |s: &SgStats, b: &SgStats| {
            !(s.idle_cpus > b.idle_cpus
                || (s.idle_cpus == b.idle_cpus && s.sum_nr_running <= b.sum_nr_running))
        };
        match s.group_type {
            GroupType::Overloaded => s.avg_load > b.avg_load,
            // The simulator's statistics never mark a misfit group (lb_stats.rs).
            GroupType::Imbalanced | GroupType::MisfitTask => false,
            GroupType::SmtBalance if s.idle_cpus != 0 || b.idle_cpus != 0 => has_spare(s, b),
            GroupType::SmtBalance | GroupType::FullyBusy => {
                if s.avg_load < b.avg_load {
                    return false;
                }
                // An SMT busiest group keeps its place on a tie.
                !(s.avg_load == b.avg_load
                    && self.lv(env).groups[bi]
                        .flags
                        .contains(SdFlags::SHARE_CPUCAPACITY))
            }
            GroupType::HasSpare => {
                // "Do not pick sg with SMT CPUs over sg with pure CPUs" (6.6+, fair.c
                // v6.8 10072-10083; not in v6.5): between an SMT group and one
                // without SMT, the candidate wins unless it is the SMT one with at
                // most one task.
                let lv = self.lv(env);
                let smt = |g: usize| lv.groups[g].flags.contains(SdFlags::SHARE_CPUCAPACITY);
                if self.balance.release >= Release::new(6, 6) && smt(bi) != smt(gi) {
                    return !(smt(gi) && s.sum_nr_running <= 1);
                }
                has_spare(s, b)
            }
        }
    }

    /// `update_sd_lb_stats()`, fair.c v6.8; at the LLC it also runs
    /// `update_idle_cpu_scan()` (SIS_UTIL), at the top level it sets `rd->overload`.
    pub(in crate::sim) fn update_sd_lb_stats(&mut self, env: &LbEnv) -> SdStats {
        // The runqueues written since the last balance, into the group sums.
        self.balance.sums.flush(&self.state.rqs);
        let mut sds = SdStats::default();
        let mut sum_util = 0u64;
        let mut overload = false;
        let n_groups = self.lv(env).groups.len();
        for gi in 0..n_groups {
            let (s, o) = self.update_sg_lb_stats(env, gi);
            overload |= o;
            if gi == 0 {
                sds.local = s;
            } else if self.update_sd_pick_busiest(env, &sds, gi, &s) {
                sds.busiest = Some(gi);
                sds.busiest_stat = s;
            }
            sds.total_load += s.group_load;
            sds.total_capacity += s.group_capacity;
            sum_util += s.group_util;
        }
        let lv = self.lv(env);
        sds.prefer_sibling = if self.balance.release >= Release::new(6, 5) {
            // "if (sds->busiest) sds->prefer_sibling = !!(sds->busiest->flags &
            // SD_PREFER_SIBLING);" (fair.c v6.8 10604-10605, v6.5 10188-10189;
            // 43726bdedd29): the busiest group's child domain decides. A NUMA domain's
            // remote group, built from another node's child before degeneration, can
            // have the flag when the local child does not (Kunpeng 920's nodes).
            sds.busiest
                .is_some_and(|b| lv.groups[b].flags.contains(SdFlags::PREFER_SIBLING))
        } else {
            // "sds->prefer_sibling = child && child->flags & SD_PREFER_SIBLING;"
            // (fair.c 5.5-6.4, from 0b0695f2b34a): the local domain's child.
            lv.child_flags
                .is_some_and(|f| f.contains(SdFlags::PREFER_SIBLING))
        };
        let (is_llc, top) = (lv.is_llc, lv.parent_sgc.is_none());
        if top {
            self.balance.overload = overload;
        }
        if is_llc && self.env.patches.features.sis_util && env.idle != CpuIdle::NewlyIdle {
            // update_idle_cpu_scan(), only at the LLC level and never from newidle.
            let llc_id = self.llc_id_of[env.dst as usize];
            let nr = wakeup::update_idle_cpu_scan(&self.env, CpuId(llc_id), sum_util);
            // "if ((int)y != sd_share->nr_idle_scan) WRITE_ONCE(...)" (fair.c v6.8
            // 10547-10548): only a change is written, and the write takes the shared
            // line every select_idle_cpu() reads (7368) from the other CPUs' caches.
            // The CPU running the balance writes it, from the tick's softirq (taking
            // the time from its task) or from idle. The comparison reads the line
            // first, so an unchanged hint still costs a transfer when another CPU
            // wrote the line since this one last held it.
            let cost = if self.state.llc_shared[llc_id as usize].nr_idle_scan != nr {
                self.state.llc_shared[llc_id as usize].nr_idle_scan = nr;
                self.llc_line_write_of(env.runs_on, env.dst)
            } else {
                self.llc_line_read(env.runs_on, env.dst)
            };
            let c = &mut self.cpus[env.runs_on as usize];
            if c.mode == Mode::Running {
                c.stolen_ns += cost;
            }
        }
        sds
    }
}
