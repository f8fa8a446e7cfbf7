//! kernel/sched/fair.c's `select_idle_sibling()`: target, prev, the per-CPU kthread,
//! recent_used_cpu, asymmetric capacity (`select_idle_capacity()`), the LLC's idle-core
//! hint (`test_idle_cores()`), prev's SMT siblings (`select_idle_smt()`), then the LLC
//! scan of `idle_cpu.rs`, and seed 01's fall-backs outside the cluster.

use crate::cpumask::CpuId;
use crate::patch::Patch;
use crate::release::Release;
use crate::wakeup::code::Site;
use crate::wakeup::trace::{Reject, Step, Tracer};
use crate::wakeup::WakePath;

use super::{Ctx, ScanEnd};

impl<'a, T: Tracer> Ctx<'a, T> {
    /// `select_idle_sibling(p, prev, target)`.
    pub(super) fn select_idle_sibling(&mut self, prev: CpuId, target: CpuId) -> CpuId {
        const F: &str = "select_idle_sibling";
        self.t.step(Site::SisEnter, || Step::Enter {
            func: F,
            detail: format!("prev={}, target={}", prev.0, target.0),
        });
        let fastpath_cookie = self.has(Patch::CookieFastpath);
        // asym_fits_cpu() is part of each fast-path test on asymmetric machines.
        let fits = if self.asym_active() {
            " and p fits its capacity"
        } else {
            ""
        };
        let cluster_active = self.env.sched_cluster_active();
        let full_cluster = self.has(Patch::Cluster);

        // 1. target itself.
        self.costs.fast_path_checks += 1;
        let target_ok = self.idle_ish(target)
            && (!fastpath_cookie || self.sched_core_cookie_match(target))
            && self.asym_fits_cpu(target);
        self.t.step(Site::SisTarget, || Step::Check {
            func: F,
            condition: format!(
                "target CPU{} idle{}{fits}",
                target.0,
                if fastpath_cookie {
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
            return self.ret(F, Site::SisTargetReturn, target, "target is idle");
        }

        // 2. prev, if cache affine and idle ("don't be stupid").
        let mut prev_aff: Option<CpuId> = None;
        if prev != target && self.share_cache(prev, target) {
            self.costs.fast_path_checks += 1;
            let ok = self.idle_ish(prev)
                && (!fastpath_cookie || self.sched_core_cookie_match(prev))
                && self.asym_fits_cpu(prev);
            self.t.step(Site::SisPrev, || Step::Check {
                func: F,
                condition: format!(
                    "prev CPU{} shares the LLC with target and is idle{fits}",
                    prev.0
                ),
                outcome: ok,
                cpu: Some(prev),
            });
            if ok {
                let share_res = self.env.cpus_share_resources(prev, target);
                if !cluster_active || share_res {
                    self.set_path(WakePath::Prev);
                    return self.ret(
                        F,
                        Site::SisPrevReturn,
                        prev,
                        "prev is idle and cache affine",
                    );
                }
                self.t.step(Site::SisPrevCluster, || Step::Check {
                    func: F,
                    condition: format!("prev CPU{} shares the cluster with target", prev.0),
                    outcome: false,
                    cpu: Some(prev),
                });
                if full_cluster {
                    prev_aff = Some(prev);
                }
            }
        }

        // 3. per-CPU kthread stacking (e.g. IO completion). "is_per_cpu_kthread(current)
        // && in_task() && prev == smp_processor_id() && this_rq()->nr_running <= 1 &&
        // asym_fits_cpu(task_util, util_min, util_max, prev)" (fair.c v6.8, lines
        // 7540-7545); before 5.16 neither the in_task() nor the capacity test: "if
        // (is_per_cpu_kthread(current) && prev == smp_processor_id() &&
        // this_rq()->nr_running <= 1)" (fair.c v5.12-v5.15).
        let v5_16 = self.release >= Release::new(5, 16);
        if self.waker_kthread
            && (!v5_16 || self.waker_in_task)
            && prev == self.this
            && self.s.rq(self.this).nr_running <= 1
            && (!v5_16 || self.asym_fits_cpu(prev))
        {
            self.t.step(Site::SisKthread, || Step::Check {
                func: F,
                condition: "waker is a per-CPU kthread on prev with nr_running <= 1".into(),
                outcome: true,
                cpu: Some(prev),
            });
            self.set_path(WakePath::KthreadStack);
            return self.ret(
                F,
                Site::SisKthreadReturn,
                prev,
                "stack with the per-CPU kthread",
            );
        }

        // 4. recent_used_cpu. From 5.15 (89aafd67f28c) "recent_used_cpu =
        // p->recent_used_cpu; p->recent_used_cpu = prev;" before the test, whose
        // "cpumask_test_cpu(p->recent_used_cpu, p->cpus_ptr)" therefore tests prev
        // until 6.5 fixed it to "cpumask_test_cpu(recent_used_cpu, p->cpus_ptr)"
        // (fair.c v6.8 line 7555). Before 5.15 p->recent_used_cpu became prev only
        // when recent_used_cpu was returned (fair.c v5.12-v5.14).
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
        let mut recent_fallback: Option<CpuId> = None;
        if recent != prev && recent != target && self.share_cache(recent, target) {
            self.costs.fast_path_checks += 1;
            let ok = self.idle_ish(recent)
                && (!fastpath_cookie || self.sched_core_cookie_match(recent))
                && self.p.allowed.test_cpu(affinity_test)
                && self.asym_fits_cpu(recent);
            self.t.step(Site::SisRecent, || Step::Check {
                func: F,
                condition: format!(
                    "recent_used_cpu CPU{} shares the LLC with target, is idle and CPU{} is allowed{fits}",
                    recent.0, affinity_test.0
                ),
                outcome: ok,
                cpu: Some(recent),
            });
            if ok {
                if !cluster_active || self.env.cpus_share_resources(recent, target) {
                    self.effects.recent_used_cpu = Some(prev);
                    self.set_path(WakePath::Recent);
                    return self.ret(
                        F,
                        Site::SisRecentReturn,
                        recent,
                        "recent_used_cpu is idle and cache affine",
                    );
                }
                if full_cluster {
                    recent_fallback = Some(recent);
                }
            }
        }

        // 5. asymmetric capacity.
        if self.asym_active() {
            if let Some(i) = self.env.domains.cpu(target).sd_asym_cpucapacity {
                let r = self.select_idle_capacity(i, target);
                self.set_path(WakePath::Capacity);
                return self.ret(
                    F,
                    Site::SisCapacity,
                    r.unwrap_or(target),
                    "select_idle_capacity()",
                );
            }
        }

        // 6. the LLC.
        if self.env.sd_llc(target).is_none() {
            self.set_path(WakePath::NoLlc);
            return self.ret(F, Site::SisNoLlc, target, "no LLC domain");
        }

        // 7. idle cores and SMT siblings of prev.
        let mut has_idle_core = false;
        let smt = self.env.sched_smt_active();
        if smt || !self.has(Patch::NoSmtIdleCores) {
            // Without seed 02 the shared line is read on !SMT machines too (its
            // value stays false: only __update_idle_core() sets it, on SMT).
            has_idle_core = self.test_idle_cores(target);
            self.t.step(Site::SisIdleCores, || Step::Check {
                func: F,
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
                return self.ret(F, Site::SisSmtReturn, i, "idle SMT sibling of prev");
            }
        }

        // 8. scan the LLC.
        let probed_before = self.costs.cpus_probed;
        if let Some(i) = self.select_idle_cpu(has_idle_core, target) {
            self.set_path(WakePath::IdleScan);
            return self.ret(
                F,
                Site::SisScanReturn,
                i,
                "select_idle_cpu() found an idle CPU",
            );
        }

        // 9. seed 01 3/3: prev or recent outside the cluster.
        if let Some(p) = prev_aff {
            self.set_path(WakePath::PrevOutsideCluster);
            let why = self.scan_failed_why(probed_before, "prev");
            return self.ret(F, Site::SisPrevAffReturn, p, &why);
        }
        if let Some(r) = recent_fallback {
            self.set_path(WakePath::RecentOutsideCluster);
            let why = self.scan_failed_why(probed_before, "recent_used_cpu");
            return self.ret(F, Site::SisRecentAffReturn, r, &why);
        }
        self.set_path(WakePath::NothingIdle);
        self.ret(
            F,
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
