//! The slow path of `select_task_rq_fair()`, kernel/sched/fair.c v6.8:
//! `find_idlest_cpu()` (lines 7163-7211; `sched_balance_find_dst_cpu()` from 6.10)
//! walking down the domains that carry `sd_flag`, `find_idlest_group()` (10314-10475)
//! with `update_sg_wakeup_stats()` (10200-10254), `idle_cpu_without()` (10172-10191)
//! and `update_pick_idlest()` (10256-10306, in [`crate::wakeup::lb_stats`]), and
//! `find_idlest_group_cpu()` (7107-7161). The group statistics are the ones the
//! simulator's load balancer and fork placement use ([`crate::wakeup::lb_stats`]).
//!
//! Who `p` is to the statistics (`cpu_load_without()`, `cpu_util_without()`,
//! `cpu_runnable_without()`, `task_running_on_cpu()`): on a fork (`SD_BALANCE_FORK`
//! in `sd_flag`) p is new (`p->se.avg.last_update_time == 0`) and contributes
//! nowhere; otherwise (exec, or `SD_BALANCE_WAKE`) its load and util come off
//! `task_cpu(p)` = `prev_cpu`, and on exec, where p is `current` on `prev_cpu`, it is
//! also off that CPU's `nr_running` and does not keep it from counting as idle
//! (`task_running_on_cpu()` = 1, `rq->curr == p` in `idle_cpu_without()`). A sleeping
//! wakee is not queued, so for SD_BALANCE_WAKE only its load and util come off.
//!
//! What the wake-up state does not carry, and what stands in for it:
//! - `sgc->imbalance` (`sg_imbalanced()`, set by a load balance that met pinned
//!   tasks): false, so no group is `group_imbalanced`.
//! - `cpu_runnable_without()`: the state has no `runnable_avg`; the load stands in
//!   (as in the simulator's fork placement), which is the runnable average of
//!   nice-0 tasks that never wait.
//! - `cpu_util_without()`: `util_avg` less `task_util_est(p)` on prev (the state's
//!   `util_avg` is already `cpu_util_cfs()`'s max with util_est, clamped to the
//!   capacity).
//! - `CONFIG_NUMA_BALANCING`'s preferred node (`p->numa_preferred_nid`): not
//!   modelled (no preferred node). `SD_ASYM_CPUCAPACITY`'s `group_misfit_task` is:
//!   `task_fits_cpu()` without uclamp, and `sgc->max_capacity` as the largest
//!   `capacity_of()` in the group.
//! - `sched_group_cookie_match()` / `sched_core_cookie_match()`: the module's
//!   cookie helpers (core scheduling from 5.14).

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::{SchedDomain, SchedGroup, SdFlags};
use crate::wakeup::code::Site;
use crate::wakeup::lb_stats::{
    adjust_numa_imbalance, allow_numa_imbalance, find_idlest_cpu_walk, group_classify,
    update_pick_idlest, GroupType, IdlestWalk, SgStats,
};
use crate::wakeup::trace::{Step, Tracer};

use super::Ctx;

/// `SCHED_CAPACITY_SCALE` (= `scale_load_down(NICE_0_LOAD)`).
const SCALE: u64 = 1024;

/// `group_type`'s name in the kernel.
fn type_name(t: GroupType) -> &'static str {
    match t {
        GroupType::HasSpare => "group_has_spare",
        GroupType::FullyBusy => "group_fully_busy",
        GroupType::MisfitTask => "group_misfit_task",
        GroupType::SmtBalance => "group_smt_balance",
        GroupType::Imbalanced => "group_imbalanced",
        GroupType::Overloaded => "group_overloaded",
    }
}

/// One group's statistics as a trace line.
fn describe(s: &SgStats) -> String {
    match s.group_type {
        GroupType::FullyBusy | GroupType::Overloaded => format!(
            "{}, avg_load {} (load {} / capacity {}), {} running",
            type_name(s.group_type),
            s.avg_load,
            s.group_load,
            s.group_capacity,
            s.sum_nr_running
        ),
        _ => format!(
            "{}, {} idle CPUs, util {}, {} running",
            type_name(s.group_type),
            s.idle_cpus,
            s.group_util,
            s.sum_nr_running
        ),
    }
}

impl<'a, T: Tracer> Ctx<'a, T> {
    /// `find_idlest_cpu(sd, p, cpu, prev_cpu, sd_flag)`, fair.c v6.8 lines 7163-7211,
    /// from `cpu`'s domain `sd_idx` (the highest domain of the unbroken `sd_flag` chain
    /// `select_task_rq_fair()` found):
    ///
    /// ```c
    /// if (!cpumask_intersects(sched_domain_span(sd), p->cpus_ptr)) return prev_cpu;
    /// while (sd) {
    ///     if (!(sd->flags & sd_flag)) { sd = sd->child; continue; }
    ///     group = find_idlest_group(sd, p, cpu);
    ///     if (!group) { sd = sd->child; continue; }
    ///     new_cpu = find_idlest_group_cpu(group, p, cpu);
    ///     if (new_cpu == cpu) { sd = sd->child; continue; }
    ///     /* Now try balancing at a lower domain level of 'new_cpu': */
    ///     cpu = new_cpu; weight = sd->span_weight; sd = NULL;
    ///     for_each_domain(cpu, tmp) {
    ///         if (weight <= tmp->span_weight) break;
    ///         if (tmp->flags & sd_flag) sd = tmp;
    ///     }
    /// }
    /// return new_cpu;
    /// ```
    ///
    /// The `while (sd)` walk is [`find_idlest_cpu_walk`], one definition with the
    /// simulator's fork placement (`sim/balance/fork.rs`) over this context's
    /// [`IdlestWalk`].
    pub(super) fn find_idlest_cpu(
        &mut self,
        sd_idx: usize,
        cpu: CpuId,
        prev: CpuId,
        sd_flag: SdFlags,
    ) -> CpuId {
        let env = self.env;
        let top = &env.domains.cpu(cpu).domains[sd_idx];
        self.t.step(Site::FindIdlest, || Step::Enter {
            func: "find_idlest_cpu",
            detail: format!(
                "sd={} ({}), cpu={}, prev_cpu={}, sd_flag={:#x}",
                top.name, top.span, cpu.0, prev.0, sd_flag.0
            ),
        });
        if !top.span.intersects(&self.p.allowed) {
            return self.ret(
                "find_idlest_cpu",
                Site::IdlestNoAllowed,
                prev,
                "no allowed CPU in the domain: prev_cpu",
            );
        }
        let new_cpu = find_idlest_cpu_walk(self, sd_idx, cpu, sd_flag);
        self.ret(
            "find_idlest_cpu",
            Site::IdlestReturn,
            new_cpu,
            "the CPU the walk down the domains settled on",
        )
    }

    /// `idle_cpu_without(cpu, p)`, fair.c v6.8 lines 10172-10191, for a CPU whose
    /// `nr_running` without p is 0: `rq->curr` is the idle task or p (p is current
    /// only on exec, on `task_cpu(p)`), and no wake-up is pending.
    fn idle_cpu_without(&self, cpu: CpuId, p_is_curr: bool) -> bool {
        let rq = self.s.rq(cpu);
        (rq.curr_is_idle || p_is_curr) && !rq.ttwu_pending
    }

    /// `update_sg_wakeup_stats(sd, group, sgs, p)`, fair.c v6.8 lines 10200-10254.
    /// `sd_flag` says who p is (see the module's notes): new on a fork, current on
    /// prev on exec, a sleeping wakee otherwise.
    fn update_sg_wakeup_stats(
        &mut self,
        sd: &SchedDomain,
        g: &SchedGroup,
        sd_flag: SdFlags,
    ) -> SgStats {
        // Task has no contribution or is new: p->se.avg.last_update_time == 0.
        let new = sd_flag.contains(SdFlags::BALANCE_FORK);
        let exec = !new && sd_flag.contains(SdFlags::BALANCE_EXEC);
        let mut s = SgStats::default();
        // "Assume that task can't fit any CPU of the group": cleared by the first CPU
        // that task_fits_cpu(p, i), i.e. fits_capacity(task_util_est(p),
        // capacity_of(i)) without uclamp; a new task's util is 0.
        let asym = sd.flags.contains(SdFlags::ASYM_CPUCAPACITY);
        s.group_misfit_task = asym;
        let task_util = if new { 0 } else { self.p.util };
        for c in g.span.iter() {
            self.touch(c);
            let rq = self.s.rq(c);
            s.max_capacity = s.max_capacity.max(rq.capacity);
            if asym
                && s.group_misfit_task
                && task_util.wrapping_mul(1280) < rq.capacity.wrapping_mul(1024)
            {
                s.group_misfit_task = false;
            }
            let on_prev = !new && c == self.p.prev_cpu;
            let load = if on_prev {
                // cpu_load_without(): "unsigned int load"; lsub_positive() with
                // task_h_load(p) converted to the same unsigned int.
                u64::from((rq.load_avg as u32).saturating_sub(self.p.load as u32))
            } else {
                rq.load_avg
            };
            let util = if on_prev {
                rq.util_avg.saturating_sub(self.p.util)
            } else {
                rq.util_avg
            };
            s.group_load += load;
            s.group_util += util;
            s.group_runnable += load;
            // task_running_on_cpu(): p queued on this CPU, i.e. current here on exec.
            let local = u32::from(exec && on_prev);
            let nr = rq.nr_running.saturating_sub(local);
            s.sum_nr_running += nr;
            if nr == 0 && self.idle_cpu_without(c, local == 1) {
                s.idle_cpus += 1;
            }
        }
        s.group_capacity = g.capacity;
        s.group_weight = g.span.weight();
        // sg_imbalanced(group): sgc->imbalance is not in the wake-up state.
        s.group_type = group_classify(u64::from(sd.imbalance_pct), false, &s);
        if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            s.avg_load = s.group_load * SCALE / s.group_capacity.max(1);
        }
        s
    }

    /// `sched_group_cookie_match(rq, p, group)`: core scheduling off, or some allowed
    /// CPU of the group matches p's cookie (`sched_core_cookie_match()`).
    fn sched_group_cookie_match(&self, g: &SchedGroup) -> bool {
        !self.core_sched_enabled()
            || g.span
                .iter()
                .any(|c| self.p.allowed.test_cpu(c) && self.sched_core_cookie_match(c))
    }

    /// `find_idlest_group(sd, p, this_cpu)`, fair.c v6.8 lines 10314-10475: the
    /// idlest group of `sd` other than the local one, if the task should go there.
    ///
    /// NUMA, `group_has_spare`: from 6.0 the imbalance of idle CPUs is forgiven by
    /// `adjust_numa_imbalance(imbalance, local_sgs.sum_nr_running + 1, imb_numa_nr)`;
    /// 5.18-5.19 stay local while `allow_numa_imbalance(local_sgs.sum_nr_running + 1,
    /// sd->imb_numa_nr)` (fair.c v5.19.0 9207, v5.18.12 9238: `sd->imb_numa_nr` as
    /// is); before, while `allow_numa_imbalance(local running, sd->span_weight)` (a
    /// quarter of the domain), as the simulator's fork placement does. From 6.0
    /// `imb_numa_nr` is `min(cpumask_weight(local group span & p->cpus_ptr),
    /// sd->imb_numa_nr)` under `if (p->nr_cpus_allowed != NR_CPUS)`: `NR_CPUS` is the
    /// build's maximum (`CONFIG_NR_CPUS`, 8192 on distribution kernels), larger than
    /// any modelled machine, so the test always holds and the minimum is always
    /// taken, even for a task allowed every CPU.
    fn find_idlest_group(
        &mut self,
        sd: &'a SchedDomain,
        this: CpuId,
        sd_flag: SdFlags,
    ) -> Option<&'a SchedGroup> {
        let (idlest, local) = self.idlest_and_local_group(sd, this, sd_flag);
        let Some((idlest, idlest_sgs)) = idlest else {
            return self.no_group(Site::IdlestGroupNone, sd, "no remote group to push to");
        };
        let Some((local, local_sgs)) = local else {
            return self.push_to_group(
                Site::IdlestGroupNoLocal,
                sd,
                idlest,
                "the local group is not allowed",
            );
        };
        if local_sgs.group_type < idlest_sgs.group_type {
            return self.no_group(
                Site::IdlestGroupLessBusy,
                sd,
                "the local group is of a less busy type",
            );
        }
        if local_sgs.group_type > idlest_sgs.group_type {
            return self.push_to_group(
                Site::IdlestGroupBusier,
                sd,
                idlest,
                "the local group is of a busier type",
            );
        }
        if self.local_group_stays(sd, local, &local_sgs, &idlest_sgs) {
            return None;
        }
        self.push_to_group(
            Site::IdlestGroupPush,
            sd,
            idlest,
            "the idlest group beats the local one",
        )
    }

    /// `find_idlest_group()`'s loop over `sd`'s groups (fair.c v6.8 10326-10355):
    /// groups with no allowed CPU or whose cookie does not match are skipped; returns
    /// the idlest remote group by `update_pick_idlest()` and the local group (the one
    /// holding `this`), each with its `update_sg_wakeup_stats()`.
    #[allow(clippy::type_complexity)]
    #[inline]
    fn idlest_and_local_group(
        &mut self,
        sd: &'a SchedDomain,
        this: CpuId,
        sd_flag: SdFlags,
    ) -> (
        Option<(&'a SchedGroup, SgStats)>,
        Option<(&'a SchedGroup, SgStats)>,
    ) {
        // idlest_sgs starts as { .avg_load = UINT_MAX, .group_type = group_overloaded }.
        let mut idlest_sgs = SgStats {
            avg_load: u64::from(u32::MAX),
            group_type: GroupType::Overloaded,
            ..SgStats::default()
        };
        let mut idlest: Option<&'a SchedGroup> = None;
        let mut local: Option<(&'a SchedGroup, SgStats)> = None;
        for g in &sd.groups {
            if !g.span.intersects(&self.p.allowed) {
                continue;
            }
            if !self.sched_group_cookie_match(g) {
                self.t.step(Site::IdlestGroupCookie, || Step::Check {
                    func: "find_idlest_group",
                    condition: format!("{}: group {} matches p's core cookie", sd.name, g.span),
                    outcome: false,
                    cpu: None,
                });
                continue;
            }
            let is_local = g.span.test_cpu(this);
            let s = self.update_sg_wakeup_stats(sd, g, sd_flag);
            let picked = !is_local && update_pick_idlest(&idlest_sgs, &s);
            self.t.step(Site::IdlestGroupStats, || Step::Check {
                func: "find_idlest_group",
                condition: format!(
                    "{}: {} group {}: {}; idlest so far",
                    sd.name,
                    if is_local { "local" } else { "remote" },
                    g.span,
                    describe(&s)
                ),
                outcome: picked,
                cpu: None,
            });
            if is_local {
                local = Some((g, s));
            } else if picked {
                idlest = Some(g);
                idlest_sgs = s;
            }
        }
        (idlest.map(|g| (g, idlest_sgs)), local)
    }

    /// `find_idlest_group()`'s `switch (local_sgs.group_type)` (fair.c v6.8
    /// 10380-10474) for a local and an idlest group of the same type: whether the
    /// local group stays (`return NULL`, its step written) or the idlest one wins
    /// (`break`, then `return idlest`).
    #[inline]
    fn local_group_stays(
        &mut self,
        sd: &'a SchedDomain,
        local: &'a SchedGroup,
        local_sgs: &SgStats,
        idlest_sgs: &SgStats,
    ) -> bool {
        let pct = u64::from(sd.imbalance_pct);
        match local_sgs.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                // imbalance = scale_load_down(NICE_0_LOAD) * (sd->imbalance_pct-100) / 100
                let imbalance = SCALE * pct.saturating_sub(100) / 100;
                let (l, i) = (local_sgs.avg_load, idlest_sgs.avg_load);
                if sd.flags.contains(SdFlags::NUMA) && i + imbalance >= l {
                    self.no_group(
                        Site::IdlestGroupNumaLoad,
                        sd,
                        &format!("NUMA: idlest avg_load {i} + imbalance {imbalance} >= local {l}"),
                    );
                    return true;
                }
                if i >= l + imbalance {
                    self.no_group(
                        Site::IdlestGroupLoad,
                        sd,
                        &format!("idlest avg_load {i} >= local {l} + imbalance {imbalance}"),
                    );
                    return true;
                }
                if 100 * l <= pct * i {
                    self.no_group(
                        Site::IdlestGroupPct,
                        sd,
                        &format!("100 * local avg_load {l} <= imbalance_pct {pct} * idlest {i}"),
                    );
                    return true;
                }
            }
            GroupType::MisfitTask => {
                // "Select group with the highest max capacity".
                let (l, i) = (local_sgs.max_capacity, idlest_sgs.max_capacity);
                if l >= i {
                    self.no_group(
                        Site::IdlestGroupMisfit,
                        sd,
                        &format!("misfit: local max capacity {l} >= idlest's {i}"),
                    );
                    return true;
                }
            }
            GroupType::Imbalanced | GroupType::SmtBalance => {
                self.no_group(
                    Site::IdlestGroupUnused,
                    sd,
                    "type not used in the slow wake-up path",
                );
                return true;
            }
            GroupType::HasSpare => {
                if sd.flags.contains(SdFlags::NUMA)
                    && self.numa_keeps_local(sd, local, local_sgs, idlest_sgs)
                {
                    return true;
                }
                if local_sgs.idle_cpus >= idlest_sgs.idle_cpus {
                    self.no_group(
                        Site::IdlestGroupIdle,
                        sd,
                        &format!(
                            "local idle CPUs {} >= idlest's {}",
                            local_sgs.idle_cpus, idlest_sgs.idle_cpus
                        ),
                    );
                    return true;
                }
            }
        }
        false
    }

    /// The NUMA allowance of `group_has_spare` (fair.c v6.8 10425-10464, per release
    /// as [`Ctx::find_idlest_group`] says): whether the wakee stays on the local node
    /// (its step written).
    #[inline]
    fn numa_keeps_local(
        &mut self,
        sd: &'a SchedDomain,
        local: &'a SchedGroup,
        local_sgs: &SgStats,
        idlest_sgs: &SgStats,
    ) -> bool {
        let rel = self.release;
        let running = local_sgs.sum_nr_running;
        if rel >= Release::new(5, 18) {
            let (keep, imb_numa_nr) = if rel >= Release::new(6, 0) {
                let local_allowed = local.span.and(&self.p.allowed).weight();
                let imb_numa_nr = local_allowed.min(sd.imb_numa_nr);
                let imbalance =
                    (i64::from(local_sgs.idle_cpus) - i64::from(idlest_sgs.idle_cpus)).abs();
                let keep = adjust_numa_imbalance(rel, imbalance, running + 1, imb_numa_nr) == 0;
                (keep, imb_numa_nr)
            } else {
                // v5.18-5.19: sd->imb_numa_nr itself, no minimum.
                let keep = allow_numa_imbalance(rel, running + 1, sd.imb_numa_nr);
                (keep, sd.imb_numa_nr)
            };
            if keep {
                self.no_group(
                    Site::IdlestGroupNuma,
                    sd,
                    &format!(
                        "NUMA: {} running locally (+1) within imb_numa_nr {imb_numa_nr}: stay on the node",
                        running
                    ),
                );
                return true;
            }
        } else if allow_numa_imbalance(rel, running, sd.span_weight) {
            self.no_group(
                Site::IdlestGroupNuma,
                sd,
                &format!(
                    "NUMA: {running} running locally, under a quarter of the domain's {} CPUs",
                    sd.span_weight
                ),
            );
            return true;
        }
        false
    }

    /// `find_idlest_group()` returns NULL: stay in the local group at this level.
    fn no_group(&mut self, site: Site, sd: &SchedDomain, why: &str) -> Option<&'a SchedGroup> {
        self.t.step(site, || Step::Check {
            func: "find_idlest_group",
            condition: format!("{}: the local group stays ({why})", sd.name),
            outcome: false,
            cpu: None,
        });
        None
    }

    /// `find_idlest_group()` returns `g`.
    fn push_to_group(
        &mut self,
        site: Site,
        sd: &SchedDomain,
        g: &'a SchedGroup,
        why: &str,
    ) -> Option<&'a SchedGroup> {
        self.t.step(site, || Step::Check {
            func: "find_idlest_group",
            condition: format!("{}: push to the idlest group {} ({why})", sd.name, g.span),
            outcome: true,
            cpu: None,
        });
        Some(g)
    }

    /// `find_idlest_group_cpu(group, p, this_cpu)`, fair.c v6.8 lines 7107-7161: a
    /// group of one CPU is its CPU; else, over the allowed CPUs whose core matches p's
    /// cookie, a `sched_idle_cpu()` at once, else the available idle CPU whose idle
    /// state has the smallest exit latency (`idle_get_state(rq)->exit_latency`), on a
    /// tie (or with no idle state) the one idled most recently (`rq->idle_stamp`),
    /// else the least `cpu_load()`, else `this_cpu`.
    fn find_idlest_group_cpu(&mut self, g: &SchedGroup, this: CpuId) -> CpuId {
        const F: &str = "find_idlest_group_cpu";
        if g.span.weight() == 1 {
            let c = g.span.first().unwrap_or(this);
            return self.ret(F, Site::IdlestCpuOne, c, "a group of one CPU");
        }
        let mut min_load = u64::MAX;
        let mut min_exit_latency = u32::MAX;
        let mut latest_idle_timestamp = 0u64;
        let mut least_loaded = this;
        let mut shallowest: Option<(CpuId, &'static str)> = None;
        for c in g.span.and(&self.p.allowed).iter() {
            self.touch(c);
            if !self.sched_core_cookie_match(c) {
                continue;
            }
            if self.sched_idle_cpu(c) {
                return self.ret(
                    F,
                    Site::IdlestCpuSchedIdle,
                    c,
                    "only SCHED_IDLE tasks: sched_idle_cpu()",
                );
            }
            let rq = self.s.rq(c);
            if self.available_idle_cpu(c) {
                let idle = rq.exit_latency_us;
                match idle {
                    Some(exit) if exit < min_exit_latency => {
                        min_exit_latency = exit;
                        latest_idle_timestamp = rq.idle_stamp;
                        shallowest = Some((c, "the idle CPU of the smallest exit latency"));
                    }
                    _ if (idle.is_none() || idle == Some(min_exit_latency))
                        && rq.idle_stamp > latest_idle_timestamp =>
                    {
                        latest_idle_timestamp = rq.idle_stamp;
                        shallowest = Some((c, "of equal exit latency, the latest idle_stamp"));
                    }
                    _ => {}
                }
            } else if shallowest.is_none() {
                let load = rq.load_avg;
                if load < min_load {
                    min_load = load;
                    least_loaded = c;
                }
            }
        }
        match shallowest {
            Some((c, why)) => {
                let why = format!(
                    "{why} ({}, idle_stamp {})",
                    self.s
                        .rq(c)
                        .exit_latency_us
                        .map_or("no idle state".to_string(), |e| format!(
                            "exit latency {e} µs"
                        )),
                    self.s.rq(c).idle_stamp
                );
                self.ret(F, Site::IdlestCpuReturn, c, &why)
            }
            None if least_loaded != this || min_load != u64::MAX => self.ret(
                F,
                Site::IdlestCpuReturn,
                least_loaded,
                &format!("no idle CPU: the least cpu_load ({min_load})"),
            ),
            None => self.ret(F, Site::IdlestCpuReturn, this, "no candidate: this_cpu"),
        }
    }
}

/// The wake-up state's domains for [`find_idlest_cpu_walk`]: `rq->sd` of each CPU,
/// with the traced `find_idlest_group()` and `find_idlest_group_cpu()` above.
impl<'a, T: Tracer> IdlestWalk for Ctx<'a, T> {
    type Group = &'a SchedGroup;

    fn n_domains(&self, cpu: CpuId) -> usize {
        self.env.domains.cpu(cpu).domains.len()
    }

    fn domain(&self, cpu: CpuId, level: usize) -> (SdFlags, u32) {
        let sd = &self.env.domains.cpu(cpu).domains[level];
        (sd.flags, sd.span_weight)
    }

    fn idlest_group(
        &mut self,
        cpu: CpuId,
        level: usize,
        sd_flag: SdFlags,
    ) -> Option<&'a SchedGroup> {
        let env = self.env;
        self.find_idlest_group(&env.domains.cpu(cpu).domains[level], cpu, sd_flag)
    }

    fn idlest_group_cpu(&mut self, group: &'a SchedGroup, cpu: CpuId) -> CpuId {
        self.find_idlest_group_cpu(group, cpu)
    }
}
