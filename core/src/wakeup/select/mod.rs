//! The wake-up path itself. Each function names its kernel twin; differences between
//! releases and the seed patches are gated where the kernel's code differs.
//!
//! One decision is one `Ctx`: the inputs, the costs and writes it gathers, and the
//! tracer. Its methods live beside their kernel twins, one file per function family:
//!
//! ```text
//!  ttwu.rs           kernel/sched/core.c   try_to_wake_up()'s placement part: select_task_rq(),
//!                                          is_cpu_allowed(), select_fallback_rq(),
//!                                          ttwu_queue_cond(), ttwu_queue_wakelist()
//!  fair.rs           kernel/sched/fair.c   select_task_rq_fair(): record_wakee(), wake_wide(),
//!                                          wake_affine(), wake_affine_idle(), wake_affine_weight()
//!  idlest.rs         kernel/sched/fair.c   the slow path: find_idlest_cpu(), find_idlest_group(),
//!                                          update_sg_wakeup_stats(), find_idlest_group_cpu()
//!  idle_sibling.rs   kernel/sched/fair.c   select_idle_sibling(): test_idle_cores(),
//!                                          select_idle_smt(), select_idle_capacity()
//!  idle_cpu.rs       kernel/sched/fair.c   select_idle_cpu(), __select_idle_cpu(), select_idle_core(),
//!                                          SIS_PROP's budget, SIS_UTIL's update_idle_cpu_scan()
//!  mod.rs            sched.h, fair.c       the per-CPU predicates they share (available_idle_cpu(),
//!                                          sched_idle_cpu(), the cookie matches, util_fits_cpu())
//! ```

use crate::cpumask::CpuId;
use crate::patch::Patch;
use crate::release::Release;

use super::code::Site;
use super::trace::{Reject, Step, Tracer};
use super::{Costs, Decision, Effects, QueuePath, SchedState, TaskState, WakeEnv, WakePath, Waker};

mod fair;
mod idle_cpu;
mod idle_sibling;
mod idlest;
mod ttwu;

pub use idle_cpu::update_idle_cpu_scan;
pub use ttwu::{select_task_rq_new, ttwu_queue_cond, wake_up};

/// Everything one wake-up decision carries along.
struct Ctx<'a, T: Tracer> {
    env: &'a WakeEnv,
    s: &'a SchedState,
    p: &'a TaskState,
    this: CpuId,
    /// `task_h_load(current)`.
    waker_load: u64,
    /// `is_per_cpu_kthread(current)`.
    waker_kthread: bool,
    /// `in_task()`: the wake-up does not run in interrupt context.
    waker_in_task: bool,
    /// `select_fallback_rq()` widened `p->cpus_ptr` ("No more Mr. Nice Guy").
    affinity_widened: bool,
    release: Release,
    costs: Costs,
    effects: Effects,
    /// Which return of the selection chose the CPU (set at each return that decides).
    path: WakePath,
    /// How `select_idle_cpu()` last returned -1, for the trace of the fall-backs after
    /// it (set only when tracing).
    scan_end: ScanEnd,
    t: &'a mut T,
}

/// How `select_idle_cpu()` returned -1: the words the trace of seed 01 3/3's fall-backs
/// uses, which must not say the scan "found nothing" when it never probed a CPU.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ScanEnd {
    /// Before 6.1 (or in 6.1-6.6's SIS_PROP block): "if (!this_sd) return -1;".
    NoThisLlc,
    /// SIS_UTIL: "if (nr == 1) return -1;", nr_idle_scan is 0.
    UtilZero,
    /// The budget test ("--nr <= 0" with seed 01, "!--nr" before) returned -1.
    Budget,
    /// The loops ran out of CPUs.
    Exhausted,
}

impl<'a, T: Tracer> Ctx<'a, T> {
    fn new(
        env: &'a WakeEnv,
        s: &'a SchedState,
        p: &'a TaskState,
        waker: &Waker,
        t: &'a mut T,
    ) -> Self {
        Ctx {
            env,
            s,
            p,
            this: waker.cpu,
            waker_load: waker.task.as_ref().map_or(0, |t| t.load),
            waker_kthread: waker.task.as_ref().is_some_and(|t| t.per_cpu_kthread),
            waker_in_task: waker.in_task,
            affinity_widened: false,
            release: env.patches.release,
            costs: Costs::default(),
            effects: Effects::default(),
            path: WakePath::NothingIdle,
            scan_end: ScanEnd::Exhausted,
            t,
        }
    }

    fn finish(self, cpu: CpuId, queue: QueuePath) -> Decision {
        Decision {
            cpu,
            queue,
            path: T::PATH.then_some(self.path),
            costs: self.costs,
            effects: self.effects,
        }
    }

    /// Notes which return chose the CPU, when the tracer wants it (`Tracer::PATH`):
    /// the simulator's untraced hot path does not pay for it.
    #[inline(always)]
    fn set_path(&mut self, p: WakePath) {
        if T::PATH {
            self.path = p;
        }
    }

    /// Notes how `select_idle_cpu()` returned -1, when tracing.
    #[inline(always)]
    fn set_scan_end(&mut self, e: ScanEnd) {
        if T::ON {
            self.scan_end = e;
        }
    }

    fn has(&self, patch: Patch) -> bool {
        self.env.patches.has(patch)
    }

    /// Counts a read of another CPU's runqueue line.
    #[inline]
    fn touch(&mut self, cpu: CpuId) {
        if cpu != self.this {
            self.costs.remote_rq_reads += 1;
        }
    }

    /// `available_idle_cpu()`.
    #[inline]
    fn available_idle_cpu(&self, cpu: CpuId) -> bool {
        self.s.rq(cpu).available_idle_cpu()
    }

    /// `sched_idle_cpu()`: only SCHED_IDLE tasks queued.
    #[inline]
    fn sched_idle_cpu(&self, cpu: CpuId) -> bool {
        self.s.rq(cpu).sched_idle_cpu()
    }

    #[inline]
    fn idle_ish(&mut self, cpu: CpuId) -> bool {
        self.touch(cpu);
        self.available_idle_cpu(cpu) || self.sched_idle_cpu(cpu)
    }

    /// `sched_core_enabled()`: core scheduling (CONFIG_SCHED_CORE) arrived in 5.14;
    /// 5.12 and 5.13's `__select_idle_cpu(cpu)` has no cookie test at all.
    fn core_sched_enabled(&self) -> bool {
        self.s.core_sched_enabled && self.release >= Release::new(5, 14)
    }

    /// `sched_cpu_cookie_match()`: the core runs p's cookie (or core scheduling is off).
    fn sched_cpu_cookie_match(&self, cpu: CpuId) -> bool {
        !self.core_sched_enabled() || self.s.rq(cpu).core_cookie == self.p.cookie
    }

    /// `sched_core_cookie_match()`: as above, or the whole core is idle.
    fn sched_core_cookie_match(&self, cpu: CpuId) -> bool {
        if !self.core_sched_enabled() {
            return true;
        }
        let idle_core = self
            .env
            .smt_siblings(cpu)
            .iter()
            .all(|&c| self.available_idle_cpu(c));
        idle_core || self.s.rq(cpu).core_cookie == self.p.cookie
    }

    /// `sched_asym_cpucap_active()`.
    fn asym_active(&self) -> bool {
        self.env.domains.sched_asym_cpucapacity
    }

    /// `util_fits_cpu()` without uclamp (kernel/sched/fair.c v6.8, lines 4962-4977):
    /// `fits_capacity(util, capacity)`, the macro of line 108, `(cap) * 1280 < (max) *
    /// 1024` on two `unsigned long`s: both products wrap modulo 2^64.
    fn util_fits_cpu(&self, cpu: CpuId) -> bool {
        self.p.util.wrapping_mul(1280) < self.s.rq(cpu).capacity.wrapping_mul(1024)
    }

    /// `asym_fits_cpu()`; before 5.17 `asym_fits_capacity(int task_util, int cpu)`
    /// (fair.c v5.12.9 line 6259, until ef8df9798d46): the util arrives as an `int`
    /// and `fits_capacity()`'s "(cap) * 1280" is an `int` product (wrapping under
    /// -fno-strict-overflow), compared with the `unsigned long` "(max) * 1024" after
    /// sign extension.
    fn asym_fits_cpu(&self, cpu: CpuId) -> bool {
        if !self.asym_active() {
            return true;
        }
        if self.release < Release::new(5, 17) {
            let lhs = (self.p.util as u32 as i32).wrapping_mul(1280) as i64 as u64;
            return lhs < self.s.rq(cpu).capacity.wrapping_mul(1024);
        }
        self.util_fits_cpu(cpu)
    }

    fn share_cache(&self, a: CpuId, b: CpuId) -> bool {
        self.env.cpus_share_cache(a, b)
    }

    /// Records one probed CPU and its verdict in the trace.
    #[inline]
    fn probe(&mut self, func: &'static str, site: Site, cpu: CpuId, reject: Option<Reject>) {
        self.t.step(site, || Step::Probe { func, cpu, reject });
    }

    /// Records `func`'s return of `cpu` and why, at `site`; returns `cpu`.
    fn ret(&mut self, func: &'static str, site: Site, cpu: CpuId, why: &str) -> CpuId {
        self.t.step(site, || Step::Return {
            func,
            cpu: Some(cpu),
            why: why.to_string(),
        });
        cpu
    }

    /// [`Ctx::ret`] for a function that may find nothing.
    fn ret_some(&mut self, func: &'static str, site: Site, cpu: CpuId, why: &str) -> Option<CpuId> {
        Some(self.ret(func, site, cpu, why))
    }

    /// `func` found nothing, at `site`.
    fn ret_none(&mut self, func: &'static str, site: Site, why: &str) -> Option<CpuId> {
        self.t.step(site, || Step::Return {
            func,
            cpu: None,
            why: why.to_string(),
        });
        None
    }
}
