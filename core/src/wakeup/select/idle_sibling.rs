//! kernel/sched/fair.c's `select_idle_sibling()`: target, prev, the per-CPU kthread,
//! recent_used_cpu, asymmetric capacity (`select_idle_capacity()`), the LLC's idle-core
//! hint (`test_idle_cores()`), prev's SMT siblings (`select_idle_smt()`), then the LLC
//! scan of `idle_cpu.rs`, and seed 01's fall-backs outside the cluster.

use std::ops::ControlFlow;

use crate::cpumask::CpuId;
use crate::patch::Patch;
use crate::release::Release;
use crate::wakeup::code::Site;
use crate::wakeup::trace::{Reject, Step, Tracer};
use crate::wakeup::WakePath;

use super::{Ctx, ScanEnd};

/// The name `select_idle_sibling()`'s steps report under.
const SIS: &str = "select_idle_sibling";

/// What each fast-path test of one `select_idle_sibling()` call reads, fixed for the
/// call: whether the cookie test is part of it (seed 04), the capacity words of the
/// trace, and the cluster switches (`sched_cluster_active`, seed 01's whole patch).
#[derive(Clone, Copy)]
struct SisFast {
    cookie: bool,
    fits: &'static str,
    cluster_active: bool,
    full_cluster: bool,
}

impl<'a, T: Tracer> Ctx<'a, T> {
    /// `select_idle_sibling(p, prev, target)` (kernel/sched/fair.c v6.8, lines
    /// 7491-7618), its steps in the kernel's order: target, prev, the per-CPU kthread,
    /// recent_used_cpu, asymmetric capacity, the LLC, idle cores and prev's SMT
    /// siblings, the LLC scan, then seed 01's fall-backs outside the cluster. Each
    /// step that can return is a helper of its own; `Break` is its CPU.
    pub(super) fn select_idle_sibling(&mut self, prev: CpuId, target: CpuId) -> CpuId {
        self.t.step(Site::SisEnter, || Step::Enter {
            func: SIS,
            detail: format!("prev={}, target={}", prev.0, target.0),
        });
        let fast = SisFast {
            cookie: self.has(Patch::CookieFastpath),
            // asym_fits_cpu() is part of each fast-path test on asymmetric machines.
            fits: if self.asym_active() {
                " and p fits its capacity"
            } else {
                ""
            },
            cluster_active: self.env.sched_cluster_active(),
            full_cluster: self.has(Patch::Cluster),
        };
        if let Some(c) = self.sis_target(target, fast) {
            return c;
        }
        let prev_aff = match self.sis_prev(prev, target, fast) {
            ControlFlow::Break(c) => return c,
            ControlFlow::Continue(aff) => aff,
        };
        if let Some(c) = self.sis_kthread(prev) {
            return c;
        }
        let recent_fallback = match self.sis_recent(prev, target, fast) {
            ControlFlow::Break(c) => return c,
            ControlFlow::Continue(fallback) => fallback,
        };

        // 5. asymmetric capacity (fair.c v6.8, lines 7569-7584).
        if self.asym_active() {
            if let Some(i) = self.env.domains.cpu(target).sd_asym_cpucapacity {
                let r = self.select_idle_capacity(i, target);
                self.set_path(WakePath::Capacity);
                return self.ret(
                    SIS,
                    Site::SisCapacity,
                    r.unwrap_or(target),
                    "select_idle_capacity()",
                );
            }
        }

        // 6. the LLC (lines 7586-7588).
        if self.env.sd_llc(target).is_none() {
            self.set_path(WakePath::NoLlc);
            return self.ret(SIS, Site::SisNoLlc, target, "no LLC domain");
        }

        let has_idle_core = match self.sis_idle_core_or_smt(prev, target) {
            ControlFlow::Break(c) => return c,
            ControlFlow::Continue(has) => has,
        };
        self.sis_scan(has_idle_core, target, prev_aff, recent_fallback)
    }

    /// Step 1, target itself (fair.c v6.8, lines 7514-7516): idle (or running only
    /// SCHED_IDLE tasks), its cookie matching under seed 04, and fitting p's capacity.
    #[inline]
    fn sis_target(&mut self, target: CpuId, fast: SisFast) -> Option<CpuId> {
        self.costs.fast_path_checks += 1;
        let target_ok = self.idle_ish(target)
            && (!fast.cookie || self.sched_core_cookie_match(target))
            && self.asym_fits_cpu(target);
        let fits = fast.fits;
        self.t.step(Site::SisTarget, || Step::Check {
            func: SIS,
            condition: format!(
                "target CPU{} idle{}{fits}",
                target.0,
                if fast.cookie {
                    " and cookie matches"
                } else {
                    ""
                }
            ),
            outcome: target_ok,
            cpu: Some(target),
        });
        if target_ok {
            self.set_path(WakePath::Target);
            return Some(self.ret(SIS, Site::SisTargetReturn, target, "target is idle"));
        }
        None
    }

    /// Step 2, prev if cache affine and idle, "don't be stupid" (fair.c v6.8, lines
    /// 7521-7530). `Break(prev)` when it shares the cluster with target too (or no
    /// cluster is active); `Continue(Some(prev))` for seed 01's fall-back after the
    /// scan ("prev_aff"), `Continue(None)` otherwise.
    #[inline]
    fn sis_prev(
        &mut self,
        prev: CpuId,
        target: CpuId,
        fast: SisFast,
    ) -> ControlFlow<CpuId, Option<CpuId>> {
        if prev == target || !self.share_cache(prev, target) {
            return ControlFlow::Continue(None);
        }
        self.costs.fast_path_checks += 1;
        let ok = self.idle_ish(prev)
            && (!fast.cookie || self.sched_core_cookie_match(prev))
            && self.asym_fits_cpu(prev);
        let fits = fast.fits;
        self.t.step(Site::SisPrev, || Step::Check {
            func: SIS,
            condition: format!(
                "prev CPU{} shares the LLC with target and is idle{fits}",
                prev.0
            ),
            outcome: ok,
            cpu: Some(prev),
        });
        if !ok {
            return ControlFlow::Continue(None);
        }
        let share_res = self.env.cpus_share_resources(prev, target);
        if !fast.cluster_active || share_res {
            self.set_path(WakePath::Prev);
            return ControlFlow::Break(self.ret(
                SIS,
                Site::SisPrevReturn,
                prev,
                "prev is idle and cache affine",
            ));
        }
        self.t.step(Site::SisPrevCluster, || Step::Check {
            func: SIS,
            condition: format!("prev CPU{} shares the cluster with target", prev.0),
            outcome: false,
            cpu: Some(prev),
        });
        ControlFlow::Continue(fast.full_cluster.then_some(prev))
    }

    /// Step 3, per-CPU kthread stacking (e.g. IO completion): prev when the waker is a
    /// per-CPU kthread on prev with at most one task queued. "is_per_cpu_kthread(current)
    /// && in_task() && prev == smp_processor_id() && this_rq()->nr_running <= 1 &&
    /// asym_fits_cpu(task_util, util_min, util_max, prev)" (fair.c v6.8, lines
    /// 7540-7545); before 5.16 neither the in_task() nor the capacity test: "if
    /// (is_per_cpu_kthread(current) && prev == smp_processor_id() &&
    /// this_rq()->nr_running <= 1)" (fair.c v5.12-v5.15).
    #[inline]
    fn sis_kthread(&mut self, prev: CpuId) -> Option<CpuId> {
        let v5_16 = self.release >= Release::new(5, 16);
        if self.waker_kthread
            && (!v5_16 || self.waker_in_task)
            && prev == self.this
            && self.s.rq(self.this).nr_running <= 1
            && (!v5_16 || self.asym_fits_cpu(prev))
        {
            self.t.step(Site::SisKthread, || Step::Check {
                func: SIS,
                condition: "waker is a per-CPU kthread on prev with nr_running <= 1".into(),
                outcome: true,
                cpu: Some(prev),
            });
            self.set_path(WakePath::KthreadStack);
            return Some(self.ret(
                SIS,
                Site::SisKthreadReturn,
                prev,
                "stack with the per-CPU kthread",
            ));
        }
        None
    }

    /// Step 4, recent_used_cpu (fair.c v6.8, lines 7548-7563). From 5.15
    /// (89aafd67f28c) "recent_used_cpu = p->recent_used_cpu; p->recent_used_cpu =
    /// prev;" before the test, whose "cpumask_test_cpu(p->recent_used_cpu,
    /// p->cpus_ptr)" therefore tests prev until 6.5 fixed it to
    /// "cpumask_test_cpu(recent_used_cpu, p->cpus_ptr)" (fair.c v6.8 line 7555).
    /// Before 5.15 p->recent_used_cpu became prev only when recent_used_cpu was
    /// returned (fair.c v5.12-v5.14). `Break` as [`Ctx::sis_prev`]'s; `Continue(Some)`
    /// is seed 01's fall-back after the scan.
    #[inline]
    fn sis_recent(
        &mut self,
        prev: CpuId,
        target: CpuId,
        fast: SisFast,
    ) -> ControlFlow<CpuId, Option<CpuId>> {
        let recent = self.p.recent_used_cpu;
        let v5_15 = self.release >= Release::new(5, 15);
        if v5_15 {
            self.effects.recent_used_cpu = Some(prev);
        }
        let affinity_test = if v5_15 && self.release < Release::new(6, 5) {
            prev
        } else {
            recent
        };
        if recent == prev || recent == target || !self.share_cache(recent, target) {
            return ControlFlow::Continue(None);
        }
        self.costs.fast_path_checks += 1;
        let ok = self.idle_ish(recent)
            && (!fast.cookie || self.sched_core_cookie_match(recent))
            && self.p.allowed.test_cpu(affinity_test)
            && self.asym_fits_cpu(recent);
        let fits = fast.fits;
        self.t.step(Site::SisRecent, || Step::Check {
            func: SIS,
            condition: format!(
                "recent_used_cpu CPU{} shares the LLC with target, is idle and CPU{} is allowed{fits}",
                recent.0, affinity_test.0
            ),
            outcome: ok,
            cpu: Some(recent),
        });
        if !ok {
            return ControlFlow::Continue(None);
        }
        if !fast.cluster_active || self.env.cpus_share_resources(recent, target) {
            self.effects.recent_used_cpu = Some(prev);
            self.set_path(WakePath::Recent);
            return ControlFlow::Break(self.ret(
                SIS,
                Site::SisRecentReturn,
                recent,
                "recent_used_cpu is idle and cache affine",
            ));
        }
        ControlFlow::Continue(fast.full_cluster.then_some(recent))
    }

    /// Step 7, idle cores and prev's SMT siblings (fair.c v6.8, lines 7590-7598):
    /// reads the LLC's idle-core hint, then with none tries an idle SMT sibling of
    /// prev. `Break` is that sibling; `Continue` carries the hint for the scan.
    #[inline]
    fn sis_idle_core_or_smt(&mut self, prev: CpuId, target: CpuId) -> ControlFlow<CpuId, bool> {
        let mut has_idle_core = false;
        let smt = self.env.sched_smt_active();
        if smt || !self.has(Patch::NoSmtIdleCores) {
            // Without seed 02 the shared line is read on !SMT machines too (its
            // value stays false: only __update_idle_core() sets it, on SMT).
            has_idle_core = self.test_idle_cores(target);
            self.t.step(Site::SisIdleCores, || Step::Check {
                func: SIS,
                condition: format!(
                    "test_idle_cores(target): sd_llc_shared read{}",
                    if smt {
                        ""
                    } else {
                        " on a !SMT machine (seed 02 absent)"
                    }
                ),
                outcome: has_idle_core,
                cpu: None,
            });
        }
        if smt
            && self.release >= Release::new(5, 13)
            && !has_idle_core
            && self.share_cache(prev, target)
        {
            if let Some(i) = self.select_idle_smt(prev, target) {
                self.set_path(WakePath::IdleSmt);
                return ControlFlow::Break(self.ret(
                    SIS,
                    Site::SisSmtReturn,
                    i,
                    "idle SMT sibling of prev",
                ));
            }
        }
        ControlFlow::Continue(has_idle_core)
    }

    /// Steps 8 and 9: the LLC scan (`select_idle_cpu()`, fair.c v6.8, lines
    /// 7600-7602), then seed 01 3/3's fall-backs outside the cluster, prev before
    /// recent_used_cpu (lines 7610-7615), and at last target.
    #[inline]
    fn sis_scan(
        &mut self,
        has_idle_core: bool,
        target: CpuId,
        prev_aff: Option<CpuId>,
        recent_fallback: Option<CpuId>,
    ) -> CpuId {
        let probed_before = self.costs.cpus_probed;
        if let Some(i) = self.select_idle_cpu(has_idle_core, target) {
            self.set_path(WakePath::IdleScan);
            return self.ret(
                SIS,
                Site::SisScanReturn,
                i,
                "select_idle_cpu() found an idle CPU",
            );
        }
        if let Some(p) = prev_aff {
            self.set_path(WakePath::PrevOutsideCluster);
            let why = self.scan_failed_why(probed_before, "prev");
            return self.ret(SIS, Site::SisPrevAffReturn, p, &why);
        }
        if let Some(r) = recent_fallback {
            self.set_path(WakePath::RecentOutsideCluster);
            let why = self.scan_failed_why(probed_before, "recent_used_cpu");
            return self.ret(SIS, Site::SisRecentAffReturn, r, &why);
        }
        self.set_path(WakePath::NothingIdle);
        self.ret(
            SIS,
            Site::SisTargetLast,
            target,
            "nothing idle: stay on target",
        )
    }

    /// Why seed 01 3/3 falls back to `to` after `select_idle_cpu()` returned -1: no
    /// scan at all (no `this_sd`, SIS_UTIL's nr_idle_scan 0, or a budget that stopped
    /// the loop before its first probe) or a scan that probed CPUs and found none
    /// idle. `probed_before` is `costs.cpus_probed` before the call. Empty when not
    /// tracing: the words are the trace's only.
    fn scan_failed_why(&self, probed_before: u32, to: &str) -> String {
        if !T::ON {
            return String::new();
        }
        let n = self.costs.cpus_probed - probed_before;
        let what = match (self.scan_end, n) {
            (ScanEnd::NoThisLlc, _) => "no scan (this CPU has no sd_llc)".to_string(),
            (ScanEnd::UtilZero, _) => "no scan (SIS_UTIL: nr_idle_scan is 0)".to_string(),
            (ScanEnd::Budget, 0) => "no scan (scan budget nr is 0 at the first CPU)".to_string(),
            (ScanEnd::Exhausted, 0) => "no scan (no allowed CPU left to scan)".to_string(),
            (ScanEnd::Budget, n) => {
                format!(
                    "the scan found no idle CPU in {n} probe{} before its budget ran out",
                    plural(n)
                )
            }
            (ScanEnd::Exhausted, n) => {
                format!("the scan found no idle CPU in {n} probe{}", plural(n))
            }
        };
        format!("select_idle_cpu(): {what}; fall back to {to}")
    }

    /// `test_idle_cores(cpu)`: reads the LLC's shared line.
    fn test_idle_cores(&mut self, cpu: CpuId) -> bool {
        match self.env.llc_shared_of(cpu) {
            Some(id) => {
                self.costs.llc_shared_reads += 1;
                self.s.llc_shared[id.idx()].has_idle_cores
            }
            None => false,
        }
    }

    /// `select_idle_capacity(p, sd, target)` (kernel/sched/fair.c v6.8, lines
    /// 7425-7471), without uclamp (`fits` is 1 or 0): "best_cap = 0; ... if ((fits <
    /// best_fits) || ((fits == best_fits) && (cpu_cap > best_cap)))", so a CPU of
    /// capacity 0 is never the best. The walk starts at `target`, except in 6.3 to
    /// 6.5, whose "for_each_cpu_wrap(cpu, cpus, target + 1)" starts after it.
    fn select_idle_capacity(&mut self, sd_idx: usize, target: CpuId) -> Option<CpuId> {
        const F: &str = "select_idle_capacity";
        let sd = &self.env.domains.cpu(target).domains[sd_idx];
        let cpus = sd.span.and(&self.p.allowed);
        let mut best: Option<CpuId> = None;
        let mut best_cap: u64 = 0;
        let start = if (Release::new(6, 3)..=Release::new(6, 5)).contains(&self.release) {
            target.0 + 1
        } else {
            target.0
        };
        for c in cpus.iter_wrap(start) {
            self.costs.cpus_probed += 1;
            if !self.idle_ish(c) {
                self.probe(F, Site::CapacityProbe, c, Some(Reject::Busy));
                continue;
            }
            let fits = self.util_fits_cpu(c);
            if fits {
                self.probe(F, Site::CapacityProbe, c, None);
                return Some(c);
            }
            self.probe(F, Site::CapacityProbe, c, Some(Reject::DoesNotFit));
            let cap = self.s.rq(c).capacity;
            if cap > best_cap {
                best_cap = cap;
                best = Some(c);
            }
        }
        best
    }

    /// `select_idle_smt(p, [sd,] target)`: an idle sibling of prev.
    fn select_idle_smt(&mut self, target: CpuId, llc_of: CpuId) -> Option<CpuId> {
        const F: &str = "select_idle_smt";
        let llc_span = self.env.sd_llc(llc_of).map(|d| &d.span);
        for &c in self.env.smt_siblings(target) {
            if c == target || !self.p.allowed.test_cpu(c) {
                continue;
            }
            // v6.9+: skip siblings outside the LLC domain (isolcpus).
            if self.release >= Release::new(6, 9)
                && llc_span.as_ref().is_some_and(|s| !s.test_cpu(c))
            {
                continue;
            }
            let found = if self.has(Patch::CookieFastpath) {
                self.select_idle_cpu_one(F, Site::SmtProbe, c).is_some()
            } else {
                self.costs.cpus_probed += 1;
                let idle = self.idle_ish(c);
                self.probe(F, Site::SmtProbe, c, (!idle).then_some(Reject::Busy));
                idle
            };
            if found {
                return Some(c);
            }
        }
        None
    }
}

/// "s" after a count other than 1.
fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
