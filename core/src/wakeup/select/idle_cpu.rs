//! kernel/sched/fair.c's scan of the LLC: `select_idle_cpu()` (seed 01's cluster
//! first, the idle-core search, the budgeted CPU loop and its untraced form over the
//! idle hint), `__select_idle_cpu()`, `select_idle_core()`, SIS_PROP's budget (before
//! 6.7) and SIS_UTIL's `update_idle_cpu_scan()`, which sets the budget's other source.

use std::ops::ControlFlow;

use crate::cpumask::{CpuId, CpuMask, WrapWalk};
use crate::release::Release;
use crate::sched_domain::SdFlags;
use crate::wakeup::code::Site;
use crate::wakeup::trace::{Reject, Step, Tracer};
use crate::wakeup::WakeEnv;

use super::{Ctx, ScanEnd};

/// The name `select_idle_cpu()`'s steps report under.
const SIC: &str = "select_idle_cpu";

/// `update_idle_cpu_scan()` (kernel/sched/fair.c v6.8, lines 10480-10549): the new
/// `nr_idle_scan` of the LLC whose first CPU is `llc_id`, given the sum of its CPUs'
/// CFS util. Called from periodic and idle balancing at the LLC level only (never
/// newidle), with SIS_UTIL on.
///
/// C types: `llc_weight` and `pct` are `int`, `x`, `y`, `tmp` are `u64`; `x * x * pct *
/// pct` is a `u64` product (wrapping), `min_t(long, tmp, 1024)` compares as `long`,
/// and the result is stored truncated to `int` (`(int)y`): returned here as that
/// `int`'s bits, which `LlcShared::nr_idle_scan` holds.
pub fn update_idle_cpu_scan(env: &WakeEnv, llc_id: CpuId, sum_util: u64) -> u32 {
    let cd = env.domains.cpu(llc_id);
    let Some(llc) = cd.llc() else {
        return 0;
    };
    let llc_weight = cd.sd_llc_size as u64;
    let pct = llc.imbalance_pct as i32 as i64 as u64;
    // x = sum_util / llc_weight; tmp = x^2 * pct^2 / (10000 * 1024), capped at 1024;
    // y = (1024 - tmp) * llc_weight / 1024 — integer division at each step as in C.
    let x = sum_util / llc_weight;
    let tmp = x.wrapping_mul(x).wrapping_mul(pct).wrapping_mul(pct) / (10000 * 1024);
    let tmp = (tmp as i64).min(1024) as u64;
    let y = 1024u64.wrapping_sub(tmp).wrapping_mul(llc_weight) / 1024;
    y as i32 as u32
}

impl<'a, T: Tracer> Ctx<'a, T> {
    /// `__select_idle_cpu(cpu, p)`.
    pub(super) fn select_idle_cpu_one(
        &mut self,
        func: &'static str,
        site: Site,
        cpu: CpuId,
    ) -> Option<CpuId> {
        self.costs.cpus_probed += 1;
        let idle = self.idle_ish(cpu);
        let verdict = if !idle {
            Some(Reject::Busy)
        } else if !self.sched_cpu_cookie_match(cpu) {
            Some(Reject::CookieMismatch)
        } else {
            None
        };
        self.probe(func, site, cpu, verdict);
        verdict.is_none().then_some(cpu)
    }

    /// `select_idle_core(p, core, cpus, &idle_cpu)`: the whole core idle, else remember
    /// an idle thread and drop the core's siblings from `cpus`.
    fn select_idle_core(
        &mut self,
        core: CpuId,
        cpus: &mut CpuMask,
        idle_cpu: &mut Option<CpuId>,
    ) -> Option<CpuId> {
        const F: &str = "select_idle_core";
        // Until 6.0 the SMT build opens with "if (!static_branch_likely(
        // &sched_smt_present)) return __select_idle_cpu(core, p);" (fair.c v5.12.9-v6.0.1);
        // 6.1 dropped it (has_idle_core is only read with sched_smt_active()), so a
        // !SMT machine that still finds has_idle_core set (a patch set without seed 02)
        // walks the one-CPU SMT mask below.
        if !self.env.sched_smt_active() && self.release < Release::new(6, 1) {
            return self.select_idle_cpu_one(F, Site::CoreProbe, core);
        }
        let new_check = self.release >= Release::new(6, 9);
        let mut idle = true;
        for &c in self.env.smt_siblings(core) {
            self.costs.cpus_probed += 1;
            self.touch(c);
            let allowed_here = if new_check {
                cpus.test_cpu(c)
            } else {
                self.p.allowed.test_cpu(c)
            };
            if !self.available_idle_cpu(c) {
                idle = false;
                if idle_cpu.is_none() {
                    if self.sched_idle_cpu(c) && allowed_here {
                        *idle_cpu = Some(c);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && allowed_here {
                *idle_cpu = Some(c);
            }
        }
        if idle {
            self.probe(F, Site::CoreProbe, core, None);
            return Some(core);
        }
        self.probe(F, Site::CoreProbe, core, Some(Reject::NotIdleCore));
        cpus.andnot_assign(self.env.smt_mask(core));
        None
    }

    /// `select_idle_cpu(p, sd_llc, has_idle_core, target)` (kernel/sched/fair.c v6.8,
    /// lines 7356-7418): the budget ([`Ctx::scan_budget`]), seed 01's cluster first
    /// ([`Ctx::scan_cluster`]), the rest of the LLC ([`Ctx::scan_llc`]), and what the
    /// end of the function writes ([`Ctx::scan_done`]). Each part that can return is
    /// a helper of its own; `Break` is the function's answer.
    pub(super) fn select_idle_cpu(&mut self, has_idle_core: bool, target: CpuId) -> Option<CpuId> {
        let env = self.env;
        let llc = env.sd_llc(target).expect("checked by caller");
        // this_sd = rcu_dereference(*this_cpu_ptr(&sd_llc)): the waker CPU's LLC.
        // Before 6.1 "if (!this_sd) return -1;" opens the function (fair.c
        // v5.12-v6.0); 6.1 to 6.6 test it only inside the SIS_PROP block below.
        let this_has_llc = env.sd_llc(self.this).is_some();
        if !this_has_llc && self.release < Release::new(6, 1) {
            self.set_scan_end(ScanEnd::NoThisLlc);
            return self.ret_none(SIC, Site::ScanEnter, "this CPU has no sd_llc (this_sd)");
        }
        let cpus = llc.span.and(&self.p.allowed);
        self.t.step(Site::ScanEnter, || Step::Enter {
            func: SIC,
            detail: format!(
                "LLC {} ∩ allowed = {}, has_idle_core={}",
                llc.span, cpus, has_idle_core
            ),
        });
        // SIS_PROP (removed in 6.7): budget from this CPU's recent idle time. Its scan
        // accounting runs only where the kernel's does: after the loop (see the end).
        let sis_prop =
            env.patches.features.sis_prop && self.release < Release::new(6, 7) && !has_idle_core;
        let nr = match self.scan_budget(llc.span_weight, target, this_has_llc, sis_prop) {
            ControlFlow::Break(r) => return r,
            ControlFlow::Continue(nr) => nr,
        };
        let mut scan = LlcScan {
            cpus,
            idle_cpu: None,
            nr,
            // Wrap start: target + 1 since 56498cfb045d (v5.15; fair.c v5.14 still has
            // "for_each_cpu_wrap(cpu, cpus, target)"), target before.
            start: if self.release >= Release::new(5, 15) {
                target.0 + 1
            } else {
                target.0
            },
            has_idle_core,
            // The budget's stop test: "if (--nr <= 0) return -1;" from seed 01 2/3
            // (v6.7), "if (!--nr) return -1;" before (fair.c v5.12-v6.6): a budget
            // that starts at 0 or below (an int SIS_PROP quotient or nr_idle_scan + 1
            // that wrapped) then never stops the scan.
            stop_at_zero_only: !env.patches.has_cluster_topology(),
        };
        if let ControlFlow::Break(r) = self.scan_cluster(target, &mut scan) {
            return r;
        }
        if let ControlFlow::Break(r) = self.scan_llc(&mut scan, sis_prop) {
            return r;
        }
        self.scan_done(target, has_idle_core, sis_prop, scan.idle_cpu)
    }

    /// The scan's budget `nr` (fair.c v6.8, lines 7359 and 7364-7373): `INT_MAX`,
    /// SIS_PROP's quotient when `sis_prop` (v6.6 and before, [`Ctx::sis_prop_budget`]),
    /// then under SIS_UTIL the LLC's `nr_idle_scan + 1`. `Break(None)` where the
    /// function returns -1: no `this_sd` for SIS_PROP (6.1-6.6), or `nr_idle_scan` 0.
    #[inline]
    fn scan_budget(
        &mut self,
        span_weight: u32,
        target: CpuId,
        this_has_llc: bool,
        sis_prop: bool,
    ) -> ControlFlow<Option<CpuId>, i32> {
        // `int nr = INT_MAX` (fair.c v6.8 line 7359). An `int` throughout, and the
        // kernel builds with -fno-strict-overflow: `--nr` wraps INT_MIN to INT_MAX.
        let mut nr: i32 = i32::MAX;
        if sis_prop {
            if !this_has_llc {
                // 6.1-6.6: "this_sd = ...; if (!this_sd) return -1;" in the block.
                self.set_scan_end(ScanEnd::NoThisLlc);
                return ControlFlow::Break(self.ret_none(
                    SIC,
                    Site::ScanEnter,
                    "this CPU has no sd_llc (this_sd)",
                ));
            }
            nr = self.sis_prop_budget(span_weight);
        }
        if self.env.patches.features.sis_util {
            if let Some(id) = self.env.llc_shared_of(target) {
                self.costs.llc_shared_reads += 1;
                // fair.c v6.8 line 7368: "nr = READ_ONCE(sd_share->nr_idle_scan) + 1;",
                // `int` (as nr_idle_scan is) plus one, wrapping under
                // -fno-strict-overflow.
                let scan = self.s.llc_shared[id.idx()].nr_idle_scan as i32;
                nr = scan.wrapping_add(1);
                let scan = scan as i64;
                self.t.step(Site::ScanUtilBudget, || Step::Budget {
                    func: SIC,
                    nr: scan,
                    why: "SIS_UTIL: sd_llc_shared->nr_idle_scan".into(),
                });
                if nr == 1 {
                    self.set_scan_end(ScanEnd::UtilZero);
                    return ControlFlow::Break(self.ret_none(
                        SIC,
                        Site::ScanUtilZero,
                        "nr_idle_scan is 0: the LLC is overloaded, no scan",
                    ));
                }
            }
        }
        ControlFlow::Continue(nr)
    }

    /// Seed 01 2/3, target's cluster first (fair.c v6.8, lines 7375-7397): when the
    /// LLC's first group is a cluster ("sg = sd->groups; if (sg->flags &
    /// SD_CLUSTER)"), its CPUs are scanned as the LLC's are, then dropped from
    /// `scan.cpus`. `Break` is the function's answer: an idle core or CPU in the
    /// cluster, or -1 when the budget runs out there.
    #[inline]
    fn scan_cluster(&mut self, target: CpuId, scan: &mut LlcScan) -> ControlFlow<Option<CpuId>> {
        let env = self.env;
        let Some(sg) = env
            .sd_llc_first_group(target)
            .filter(|sg| env.sched_cluster_active() && sg.flags.contains(SdFlags::CLUSTER))
        else {
            return ControlFlow::Continue(());
        };
        let sg_span = &sg.span;
        self.t.step(Site::ClusterEnter, || Step::Enter {
            func: "select_idle_cpu/cluster",
            detail: format!("target's cluster {sg_span} first"),
        });
        // The hint answers the budgeted !has_idle_core loop only; the idle-core
        // search below spends no budget and probes whole cores.
        let hint = self.fast_scan_hint().filter(|_| !scan.has_idle_core);
        if let Some(hint) = hint {
            let m = sg_span.and(&scan.cpus);
            match self.scan_with_hint(hint, &m, scan.start, &mut scan.nr, scan.stop_at_zero_only) {
                Scan::Found(i) => return ControlFlow::Break(Some(i)),
                Scan::Spent => {
                    self.set_scan_end(ScanEnd::Budget);
                    return ControlFlow::Break(None);
                }
                Scan::Exhausted => {}
            }
        } else {
            // sg_span is the group's own span, which nothing writes here: a plain
            // for_each_cpu_wrap().
            for c in sg_span.iter_wrap(scan.start) {
                if !scan.cpus.test_cpu(c) {
                    continue;
                }
                if scan.has_idle_core {
                    if let Some(i) = self.select_idle_core(c, &mut scan.cpus, &mut scan.idle_cpu) {
                        return ControlFlow::Break(self.ret_some(
                            SIC,
                            Site::ClusterCoreReturn,
                            i,
                            "idle core in the cluster",
                        ));
                    }
                } else {
                    scan.nr = scan.nr.wrapping_sub(1);
                    if scan.nr <= 0 {
                        self.probe(SIC, Site::ClusterBudget, c, Some(Reject::BudgetSpent));
                        self.set_scan_end(ScanEnd::Budget);
                        return ControlFlow::Break(self.ret_none(
                            SIC,
                            Site::ClusterBudget,
                            "scan budget spent in the cluster",
                        ));
                    }
                    if let Some(i) = self.select_idle_cpu_one(SIC, Site::ClusterProbe, c) {
                        return ControlFlow::Break(self.ret_some(
                            SIC,
                            Site::ClusterProbeReturn,
                            i,
                            "idle CPU in the cluster",
                        ));
                    }
                }
            }
            self.t.step(Site::ClusterDone, || Step::Return {
                func: "select_idle_cpu/cluster",
                cpu: None,
                why: "nothing idle in the cluster; scan the rest of the LLC".into(),
            });
        }
        scan.cpus.andnot_assign(sg_span);
        ControlFlow::Continue(())
    }

    /// The LLC's loop (fair.c v6.8, lines 7399-7412): whole cores with
    /// `has_idle_core`, else CPU by CPU under the budget, from the idle hint when
    /// nothing is traced. `Break` is the function's answer (an idle core, the hint's
    /// outcome, or -1 when the budget runs out); `Continue` leaves what the loop found
    /// in `scan.idle_cpu` for [`Ctx::scan_done`].
    #[inline]
    fn scan_llc(&mut self, scan: &mut LlcScan, sis_prop: bool) -> ControlFlow<Option<CpuId>> {
        if scan.has_idle_core {
            // select_idle_core() drops a core's siblings from cpus as it goes: each
            // step reads the live mask.
            let mut cur = WrapCursor::new(scan.start, scan.cpus.nr_cpu_ids());
            while let Some(c) = cur.next(&scan.cpus) {
                if let Some(i) = self.select_idle_core(c, &mut scan.cpus, &mut scan.idle_cpu) {
                    return ControlFlow::Break(self.ret_some(
                        SIC,
                        Site::ScanCoreReturn,
                        i,
                        "idle core",
                    ));
                }
            }
        } else if let Some(hint) = self.fast_scan_hint() {
            let (out, accounted) = match self.scan_with_hint(
                hint,
                &scan.cpus,
                scan.start,
                &mut scan.nr,
                scan.stop_at_zero_only,
            ) {
                Scan::Found(i) => (Some(i), true),
                Scan::Exhausted => (None, true),
                Scan::Spent => (None, false),
            };
            let end = if accounted {
                ScanEnd::Exhausted
            } else {
                ScanEnd::Budget
            };
            self.set_scan_end(end);
            // As the traced loop below: accounted after a break or the end, not after
            // `return -1`.
            self.effects.sis_prop_scan = sis_prop && accounted;
            return ControlFlow::Break(out);
        } else {
            // Nothing writes cpus on this branch: a plain for_each_cpu_wrap().
            for c in scan.cpus.iter_wrap(scan.start) {
                scan.nr = scan.nr.wrapping_sub(1);
                if scan.nr == 0 || (scan.nr < 0 && !scan.stop_at_zero_only) {
                    self.probe(SIC, Site::ScanBudget, c, Some(Reject::BudgetSpent));
                    self.set_scan_end(ScanEnd::Budget);
                    return ControlFlow::Break(self.ret_none(
                        SIC,
                        Site::ScanBudget,
                        "scan budget spent",
                    ));
                }
                scan.idle_cpu = self.select_idle_cpu_one(SIC, Site::ScanProbe, c);
                if scan.idle_cpu.is_some() {
                    break;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The end of `select_idle_cpu()` after its loop (fair.c v6.8, lines 7414-7417):
    /// clears the LLC's idle-core hint when an idle core was sought and none found,
    /// accounts SIS_PROP's scan, and returns `idle_cpu` (an idle thread, an idle CPU,
    /// or -1).
    #[inline]
    fn scan_done(
        &mut self,
        target: CpuId,
        has_idle_core: bool,
        sis_prop: bool,
        idle_cpu: Option<CpuId>,
    ) -> Option<CpuId> {
        if has_idle_core {
            // "looked for an idle core and found none": "set_idle_cores(target,
            // false);" (fair.c v6.8 line 7415) since 02dbb7246c5b (v5.13-rc2); v5.12
            // has "set_idle_cores(this, false);", the waker's LLC (9fe1f127b913).
            let llc_of = if self.release >= Release::new(5, 13) {
                target
            } else {
                self.this
            };
            self.effects.clear_idle_cores = self.env.llc_shared_of(llc_of);
        }
        // "if (sched_feat(SIS_PROP) && !has_idle_core) { time = cpu_clock(this) - time;
        // ... update_avg(&this_sd->avg_scan_cost, time); }" (fair.c v5.12 and on; from
        // v5.14 also "this_rq->wake_avg_idle -= min(this_rq->wake_avg_idle, time);"):
        // reached after a `break` or an exhausted loop, never after `return -1`.
        self.effects.sis_prop_scan = sis_prop;
        match idle_cpu {
            Some(c) => self.ret_some(
                SIC,
                Site::ScanReturn,
                c,
                if has_idle_core {
                    "an idle thread (no idle core)"
                } else {
                    "idle CPU"
                },
            ),
            None => {
                self.set_scan_end(ScanEnd::Exhausted);
                self.ret_none(SIC, Site::ScanReturn, "no idle CPU in the LLC")
            }
        }
    }

    /// The idle hint, when the untraced scan may use it: no trace to write, and no
    /// core-scheduling cookie to match per CPU.
    #[inline]
    fn fast_scan_hint(&self) -> Option<&'a CpuMask> {
        if T::ON || self.s.core_sched_enabled {
            return None;
        }
        self.s.idle_hint.as_ref()
    }

    /// The `!has_idle_core` scan loop of select_idle_cpu() over `m` from `start`,
    /// computed from the idle hint: the loop decrements `nr` before each probe, gives
    /// up when it reaches 0, and stops at the first CPU for which
    /// `__select_idle_cpu()` holds. The same CPUs are counted as probed (and as
    /// remote runqueue reads) as the CPU-by-CPU loop counts. `stop_at_zero_only`:
    /// the `!--nr` test, under which a budget that starts at 0 or below never stops.
    fn scan_with_hint(
        &mut self,
        hint: &CpuMask,
        m: &CpuMask,
        start: u32,
        nr: &mut i32,
        stop_at_zero_only: bool,
    ) -> Scan {
        // Loop positions 0, 1, ...: position i is the (i+1)-th CPU of m in wrap order.
        // The k-th `--nr` (k from 1) stops the loop, in C `int` arithmetic: a positive
        // nr reaches 0 at k = nr; below that "!--nr" waits for the wrap to 0 (k = nr +
        // 2^32) and "--nr <= 0" stops at once (k = 1), except that INT_MIN wraps to
        // INT_MAX first (k = 2^31).
        let n = i64::from(*nr);
        let k: u64 = if n > 0 {
            n as u64
        } else if stop_at_zero_only {
            (n + (1i64 << 32)) as u64
        } else if *nr == i32::MIN {
            1 << 31
        } else {
            1
        };
        let spend_at = k - 1;
        let (probes, out) = match m.wrap_walk(hint, start, spend_at) {
            WrapWalk::Hit { pos, cpu } => (pos + 1, Scan::Found(cpu)),
            WrapWalk::Limit => (spend_at, Scan::Spent),
            WrapWalk::End { len } => (len, Scan::Exhausted),
        };
        *nr = nr.wrapping_sub((probes + matches!(out, Scan::Spent) as u64) as i32);
        let this_probed = probes > 0
            && m.test_cpu(self.this)
            && (m.wrap_position(start, self.this) as u64) < probes;
        self.costs.cpus_probed += probes as u32;
        self.costs.remote_rq_reads += probes as u32 - this_probed as u32;
        out
    }

    /// The SIS_PROP block of `select_idle_cpu()` (v6.6 and before): the idle time it
    /// budgets from is, before v5.14, "avg_idle = this_rq()->avg_idle / 512;" (fair.c
    /// v5.12/v5.13), and from v5.14 (94aafc3ee31d, "sched/fair: Age the average idle
    /// time") `this_rq->wake_avg_idle`, first aged by one halving per jiffy since
    /// `wake_stamp` while it is non-zero:
    /// "if (unlikely(this_rq->wake_stamp < now)) { while (this_rq->wake_stamp < now &&
    /// this_rq->wake_avg_idle) { this_rq->wake_stamp++; this_rq->wake_avg_idle >>= 1; } }"
    /// (fair.c v6.5 select_idle_cpu()). The aged pair is a write, returned in
    /// [`Effects::sis_prop_aged`](crate::wakeup::Effects::sis_prop_aged).
    fn sis_prop_budget(&mut self, span_weight: u32) -> i32 {
        let sp = &self.s.sis_prop;
        let this = self.this.idx();
        let avg_idle = if self.release >= Release::new(5, 14) {
            let mut avg = sp.wake_avg_idle_ns.get(this).copied().unwrap_or(0);
            let mut stamp = sp.wake_stamp.get(this).copied().unwrap_or(0);
            let now = self.s.jiffies;
            if stamp < now {
                let before = (avg, stamp);
                // At most 64 rounds: each halves a u64 that ends the loop at 0.
                while stamp < now && avg != 0 {
                    stamp += 1;
                    avg >>= 1;
                }
                if (avg, stamp) != before {
                    self.effects.sis_prop_aged = Some((avg, stamp));
                }
            }
            avg
        } else {
            sp.avg_idle_ns.get(this).copied().unwrap_or(0) / 512
        };
        // C types (v6.6 fair.c, select_idle_cpu()'s SIS_PROP block): avg_cost, avg_idle
        // and span_avg are u64, span_weight unsigned int, nr an int:
        // "avg_cost = this_sd->avg_scan_cost + 1; span_avg = sd->span_weight *
        // avg_idle; if (span_avg > 4*avg_cost) nr = div_u64(span_avg, avg_cost); else
        // nr = 4;" — u64 products wrap, div_u64()'s divisor is a u32 ("static inline
        // u64 div_u64(u64 dividend, u32 divisor)", include/linux/math64.h), so avg_cost
        // is divided by as its low 32 bits, and the quotient is truncated to int.
        // this_sd = rcu_dereference(*this_cpu_ptr(&sd_llc)): the waker CPU's own
        // sched_domain, whose avg_scan_cost no other CPU of the LLC shares.
        let stored_cost = sp.avg_scan_cost_ns.get(this).copied().unwrap_or(0);
        let avg_cost = stored_cost.wrapping_add(1);
        let span_avg = (span_weight as u64).wrapping_mul(avg_idle);
        let nr: i32 = if span_avg > avg_cost.wrapping_mul(4) {
            // The u32 divisor is 0 when avg_cost's low 32 bits are: the kernel's
            // division would trap; the model divides by 1 instead.
            (span_avg / u64::from((avg_cost as u32).max(1))) as i32
        } else {
            4
        };
        self.t.step(Site::ScanPropBudget, || Step::Budget {
            func: "select_idle_cpu",
            nr: nr as i64,
            why: if self.release >= Release::new(5, 14) {
                format!("SIS_PROP: span {span_weight} × wake_avg_idle {avg_idle} ns / avg_scan_cost {avg_cost} ns")
            } else {
                format!("SIS_PROP: span {span_weight} × avg_idle/512 {avg_idle} ns / avg_scan_cost {avg_cost} ns")
            },
        });
        nr
    }
}

/// One `select_idle_cpu()` scan's moving parts: the CPUs still to scan (`cpus`, the
/// kernel's per-CPU `select_rq_mask`), the idle thread `select_idle_core()` remembers
/// or the CPU the loop found (`idle_cpu`), the budget (`nr`), where the walk starts,
/// and the two switches fixed for the call.
struct LlcScan {
    cpus: CpuMask,
    idle_cpu: Option<CpuId>,
    nr: i32,
    start: u32,
    has_idle_core: bool,
    /// The `!--nr` stop test (before seed 01 2/3), under which a budget that starts at
    /// 0 or below never stops the scan.
    stop_at_zero_only: bool,
}

/// How a budgeted scan ended.
enum Scan {
    Found(CpuId),
    /// `nr` reached 0: select_idle_cpu() returns -1.
    Spent,
    /// Every CPU probed, none idle.
    Exhausted,
}

/// `for_each_cpu_wrap(cpu, mask, start)` over a mask that may shrink while iterating:
/// like the kernel's macro, each step reads the live mask.
struct WrapCursor {
    start: u32,
    pos: u32,
    wrapped: bool,
}

impl WrapCursor {
    fn new(start: u32, nr: u32) -> Self {
        let start = if start >= nr { 0 } else { start };
        WrapCursor {
            start,
            pos: start,
            wrapped: false,
        }
    }

    fn next(&mut self, mask: &CpuMask) -> Option<CpuId> {
        if !self.wrapped {
            if let Some(c) = mask.next_from(self.pos) {
                self.pos = c.0 + 1;
                return Some(c);
            }
            self.wrapped = true;
            self.pos = 0;
        }
        match mask.next_from(self.pos) {
            Some(c) if c.0 < self.start => {
                self.pos = c.0 + 1;
                Some(c)
            }
            _ => None,
        }
    }
}
