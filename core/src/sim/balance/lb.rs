//! `load_balance()` (`sched_balance_rq()` from 6.10) and what it calls, fair.c v6.8:
//! `should_we_balance()`, `update_sd_lb_stats()` / `update_sg_lb_stats()`,
//! `group_classify()`, `update_sd_pick_busiest()`, `find_busiest_group()`,
//! `calculate_imbalance()`, `find_busiest_queue()`, `detach_tasks()` with
//! `can_migrate_task()` / `task_hot()`, and active balancing.
//!
//! Release differences mirrored: the SMT-aware parts of 6.6 (`group_smt_balance`,
//! `sibling_imbalance()`, `should_we_balance()` preferring an idle core) and, before
//! them, `prefer_sibling`'s plain `nr_running` difference; the NUMA allowance's three
//! forms (before 5.18 a quarter of the group, `<`; from 5.18 `imb_numa_nr` with `<=`,
//! of the busiest group before 5.18 and of the local one from then), and before 6.0
//! `calculate_imbalance()` halving the difference before the allowance sees it.

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::SdFlags;
use crate::wakeup;

use super::super::{Mode, SimTime};
use super::{Level, Simulator};

/// `SCHED_CAPACITY_SCALE`.
const SCALE: u64 = 1024;

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum CpuIdle {
    NotIdle,
    Idle,
    NewlyIdle,
}

/// `enum migration_type` (without `migrate_misfit`, see [`GroupType`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum MigrationType {
    Load,
    Util,
    Task,
}

pub(in crate::sim) use crate::wakeup::lb_stats::{
    adjust_numa_imbalance, allow_numa_imbalance, group_classify, update_pick_idlest, GroupType,
    SgStats,
};

/// `struct lb_env`, what this model needs of it.
pub(in crate::sim) struct LbEnv {
    pub dst: u32,
    /// `smp_processor_id()`: the CPU running the balance, `dst` itself or the idle
    /// load balancer on `dst`'s behalf (`_nohz_idle_balance()`).
    pub runs_on: u32,
    /// Level index into the dst CPU's domains.
    pub li: usize,
    pub idle: CpuIdle,
    pub imbalance: i64,
    pub migration_type: MigrationType,
    /// CPUs left out after `LBF_ALL_PINNED` (`env->cpus` cleared bits).
    pub excluded: Vec<u32>,
    pub some_pinned: bool,
    pub all_pinned: bool,
    pub src: u32,
}

impl LbEnv {
    /// `struct lb_env` as `load_balance()` sets it up for `dst`'s domain `li`, run on
    /// `runs_on`: nothing measured yet (`migrate_task`, imbalance 0), no busiest queue
    /// (`src` = `dst`), no CPU excluded, no pinned task met.
    pub(in crate::sim) fn new(dst: u32, runs_on: u32, li: usize, idle: CpuIdle) -> LbEnv {
        LbEnv {
            dst,
            runs_on,
            li,
            idle,
            imbalance: 0,
            migration_type: MigrationType::Task,
            excluded: Vec::new(),
            some_pinned: false,
            all_pinned: false,
            src: dst,
        }
    }
}

/// `struct sd_lb_stats`.
#[derive(Clone, Debug, Default)]
pub(in crate::sim) struct SdStats {
    pub busiest: Option<usize>,
    pub local: SgStats,
    pub busiest_stat: SgStats,
    pub total_load: u64,
    pub total_capacity: u64,
    pub avg_load: u64,
    pub prefer_sibling: bool,
}

impl Simulator {
    pub(super) fn lv(&self, env: &LbEnv) -> &Level {
        &self.balance.levels[env.dst as usize][env.li]
    }

    /// `cpu_load(rq)` (also `cpu_runnable()`): the CFS runqueue's PELT average as
    /// last updated (the kernel reads `cfs_rq->avg`; idle CPUs' are brought up to date
    /// by `update_blocked_averages()` when balancing visits them, see rebalance.rs).
    #[inline]
    pub(in crate::sim) fn cpu_load(&self, c: u32) -> u64 {
        self.state.rqs[c as usize].load_avg
    }

    /// `cpu_util_cfs()`: the running PELT average as last updated, at most the capacity.
    #[inline]
    pub(in crate::sim) fn cpu_util(&self, c: u32) -> u64 {
        self.state.rqs[c as usize].util_avg
    }

    /// `is_core_idle()`: every SMT sibling of `c` is idle.
    fn is_core_idle(&self, c: u32) -> bool {
        self.siblings[c as usize].iter().all(|&s| self.cpu_idle(s))
    }

    /// `should_we_balance()`, fair.c v6.8: newidle always (unless work arrived, from
    /// v6.0: "if (env->dst_rq->nr_running > 0 || env->dst_rq->ttwu_pending) return
    /// 0;", fair.c v6.8 11214-11217, Josh Don's 792b9f65a568; v5.12 returns 1, fair.c
    /// 9620-9621); else the first idle CPU of the local group's balance mask (from 6.6
    /// preferring one on an idle core above the SMT level), else its first CPU.
    pub(in crate::sim) fn should_we_balance(&self, env: &LbEnv) -> bool {
        if env.idle == CpuIdle::NewlyIdle {
            let rq = &self.state.rqs[env.dst as usize];
            return self.balance.release < Release::new(6, 0)
                || (rq.nr_running == 0 && !rq.ttwu_pending);
        }
        let lv = self.lv(env);
        let local = &lv.groups[0];
        let smt_aware = self.balance.release >= Release::new(6, 6)
            && !lv.flags.contains(SdFlags::SHARE_CPUCAPACITY);
        let mut idle_smt: Option<u32> = None;
        for &c in local.balance.iter() {
            if env.excluded.contains(&c) || !self.cpu_idle(c) {
                continue;
            }
            if smt_aware && !self.is_core_idle(c) {
                // Remember the first idle SMT thread of a busy core (its siblings are
                // skipped in the kernel; they cannot come before it).
                if idle_smt.is_none() {
                    idle_smt = Some(c);
                }
                continue;
            }
            return c == env.dst;
        }
        if let Some(c) = idle_smt {
            return c == env.dst;
        }
        local.balance.first().or(local.cpus.first()) == Some(&env.dst)
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
            s.group_runnable = p.load;
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
                s.group_runnable += rq.load_avg;
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
    /// do not apply): a group without a task is never the busiest
    /// (`if (!sgs->sum_h_nr_running) return false;`, fair.c v6.8 line 9980).
    fn update_sd_pick_busiest(&self, env: &LbEnv, sds: &SdStats, s: &SgStats) -> bool {
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
            GroupType::HasSpare => has_spare(s, b),
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
            } else if self.update_sd_pick_busiest(env, &sds, &s) {
                sds.busiest = Some(gi);
                sds.busiest_stat = s;
            }
            sds.total_load += s.group_load;
            sds.total_capacity += s.group_capacity;
            sum_util += s.group_util;
        }
        let lv = self.lv(env);
        sds.prefer_sibling = lv
            .child_flags
            .is_some_and(|f| f.contains(SdFlags::PREFER_SIBLING));
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
    pub(super) fn calculate_imbalance(&self, env: &mut LbEnv, sds: &mut SdStats) {
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
        let a = busiest.avg_load.saturating_sub(sds.avg_load) * busiest.group_capacity;
        let b = sds.avg_load.saturating_sub(local.avg_load) * local.group_capacity;
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
                    let u = self.cpu_util(c);
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

    /// `load_balance()` (`sched_balance_rq()` from 6.10), fair.c v6.8, of `dst`'s
    /// domain `li`, run on `runs_on` (`dst`, or the idle load balancer on its behalf).
    /// Returns the tasks pulled and whether to keep balancing higher domains
    /// (`continue_balancing`). Takes busiest's rq lock for `detach_tasks()` and the
    /// active-balance check, and `dst`'s for `attach_tasks()`, as the kernel does
    /// (locks.rs).
    pub(in crate::sim) fn load_balance(
        &mut self,
        dst: u32,
        li: usize,
        idle: CpuIdle,
        runs_on: u32,
    ) -> (Vec<u32>, bool) {
        let mut env = LbEnv::new(dst, runs_on, li, idle);
        let parent_sgc = self.lv(&env).parent_sgc;
        let mut moved = Vec::new();
        let mut continue_balancing = true;
        let outcome = 'redo: loop {
            if !self.should_we_balance(&env) {
                // "*continue_balancing = 0; goto out_balanced;"
                continue_balancing = false;
                break 'redo Outcome::Balanced;
            }
            let Some(gi) = self.find_busiest_group(&mut env) else {
                break 'redo Outcome::Balanced;
            };
            let Some(src) = self.find_busiest_queue(&env, gi) else {
                break 'redo Outcome::Balanced;
            };
            env.src = src;
            env.all_pinned = true;
            if self.state.rqs[src as usize].nr_running > 1 {
                // more_balance: detach_tasks() under busiest's lock, whatever it
                // then moves; attach_tasks() under dst's (locks.rs).
                self.lb_rq_lock(env.runs_on, src, self.lb_hold_ns(1));
                moved = self.detach_tasks(&mut env);
                if !moved.is_empty() {
                    self.lb_rq_lock(env.runs_on, env.dst, self.lb_hold_ns(moved.len()));
                }
                if let Some(p) = parent_sgc {
                    if env.some_pinned && env.imbalance > 0 {
                        self.balance.sgc_imbalance[p] = true;
                    }
                }
                if env.all_pinned {
                    env.excluded.push(src);
                    let local = &self.lv(&env).groups[0].cpus;
                    let rest_local = self
                        .lv(&env)
                        .span
                        .iter()
                        .all(|c| env.excluded.contains(c) || local.contains(c));
                    if !rest_local {
                        // LBF_ALL_PINNED stays set across the redo.
                        continue 'redo;
                    }
                    break 'redo Outcome::AllPinned;
                }
            }
            break 'redo Outcome::Unbalanced;
        };
        match outcome {
            Outcome::Unbalanced => {
                if moved.is_empty() {
                    if idle != CpuIdle::NewlyIdle {
                        self.balance.dom[dst as usize][li].nr_balance_failed += 1;
                    }
                    if self.need_active_balance(&env) {
                        let src = env.src;
                        // raw_spin_rq_lock_irqsave(busiest) for the checks below.
                        self.lb_rq_lock(env.runs_on, src, 0);
                        let curr = self.cpus[src as usize].curr;
                        let running = self.cpus[src as usize].mode == Mode::Running;
                        if !running || !self.allowed_on(curr, dst) {
                            // goto out_one_pinned: the interval is tuned up as below.
                            self.tune_up_balance_interval(dst, li, idle, env.all_pinned);
                            return (moved, true);
                        }
                        // if (!busiest->active_balance): push_cpu = this_cpu, and
                        // after raw_spin_rq_unlock_irqrestore(busiest),
                        // stop_one_cpu_nowait() wakes busiest's stopper (wake_up_q()
                        // → try_to_wake_up(), stop_machine.c v6.8 109): by its rq
                        // lock and resched_curr()'s IPI, or across LLCs by the
                        // wakelist's IPI; one IPI either way, so the stopper runs one
                        // IPI after the wake-up, where the pass has got to
                        // (Event::Stopper). ld_moved stays 0.
                        if self.balance.push_cpu[src as usize].is_none() {
                            self.balance.push_cpu[src as usize] = Some(dst);
                            // ttwu_queue_cond() (core.c v6.8 3986-4024, v6.5
                            // 3956-3994) for the stopper, woken from runs_on: the
                            // wake list across LLCs; in the LLC src runs a task
                            // (nr_running; before 6.0 the stopper is not on a CPU,
                            // no WF_ON_CPU: v5.15 3713-3739, v5.12 3125-3151), so
                            // ttwu_queue() takes busiest's lock for
                            // ttwu_do_activate() (core.c v6.8 4054-4057), the
                            // wake-up's enqueue hold (locks.rs), then
                            // resched_curr().
                            let (a, b) = (
                                self.llc_id_of[env.runs_on as usize],
                                self.llc_id_of[src as usize],
                            );
                            let wakelist = a != b;
                            self.balance.stopper_wakelist[src as usize] = wakelist;
                            if !wakelist {
                                self.lb_rq_lock(env.runs_on, src, self.lb_hold_ns(1));
                            }
                            let woken = self.lb_clock.at_ns.max(self.now.ns());
                            let at = SimTime(woken) + self.cost.params.ipi_ns();
                            self.queue
                                .push(at, super::super::Event::Stopper { cpu: src });
                        }
                    }
                } else {
                    self.balance.dom[dst as usize][li].nr_balance_failed = 0;
                }
                // We were unbalanced: reset the balancing interval. (The kernel tests
                // `!active_balance || need_active_balance()`: true either way, as
                // nr_balance_failed is still above the mark until the stopper runs.)
                let min = self.balance.levels[dst as usize][li].min_interval;
                self.balance.dom[dst as usize][li].balance_interval = min;
            }
            Outcome::Balanced | Outcome::AllPinned => {
                // out_balanced: clear the parent's imbalance flag unless LBF_ALL_PINNED
                // (set on the first busiest queue found, kept across a redo).
                if outcome == Outcome::Balanced && !env.all_pinned {
                    if let Some(p) = parent_sgc {
                        self.balance.sgc_imbalance[p] = false;
                    }
                }
                // out_all_pinned:
                self.balance.dom[dst as usize][li].nr_balance_failed = 0;
                // out_one_pinned:
                self.tune_up_balance_interval(dst, li, idle, env.all_pinned);
            }
        }
        (moved, continue_balancing)
    }

    /// `load_balance()`'s `out_one_pinned` tail, fair.c v6.8: except for newidle
    /// balancing, double `sd->balance_interval` while it is below `max_interval`
    /// (or, with `LBF_ALL_PINNED`, below `MAX_PINNED_INTERVAL`, 512 ms).
    fn tune_up_balance_interval(&mut self, dst: u32, li: usize, idle: CpuIdle, all_pinned: bool) {
        if idle == CpuIdle::NewlyIdle {
            return;
        }
        let max = self.balance.levels[dst as usize][li].max_interval;
        let dom = &mut self.balance.dom[dst as usize][li];
        if (all_pinned && dom.balance_interval < 512) || dom.balance_interval < max {
            dom.balance_interval *= 2;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Balanced,
    AllPinned,
    Unbalanced,
}
