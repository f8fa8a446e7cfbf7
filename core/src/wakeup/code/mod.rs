//! The wake-up path as readable kernel-style code, and which of its lines a traced
//! decision went through (issue 17: "a code view … highlights the lines this decision
//! went through and marks the lines a toggled patch adds or changes").
//!
//! [`listing()`] writes `try_to_wake_up()`'s placement part for a patch set: the
//! functions `wakeup/select/` mirrors, in the kernel's order and with the kernel's
//! names, condensed (comments, locking, statistics and the EAS/uclamp arguments left
//! out; `asym_fits_cpu(…)` keeps its name but not its arguments). The text follows the
//! release and the patch set the way the model does: SIS_PROP before 6.7 and while the
//! feature is on, SIS_UTIL from 6.0, `select_idle_smt(p, prev)` from 5.13, seed 02's
//! `sched_smt_active()` test, seed 01's cluster scan and its prev/recent fallback,
//! seed 03's L2 test in `ttwu_queue_cond()`, seed 04's cookie checks, the
//! `for_each_cpu_wrap()` start (`target + 1` from 5.15), `WF_CURRENT_CPU` from 6.6.
//! A line a patch of the set adds or changes names that patch ([`CodeLine::by`]).
//!
//! [`hits()`] maps each [`Step`](crate::wakeup::Step) of a [`Trace`](crate::wakeup::Trace) to the line ([`Site`]) that produced
//! it. The wake-up path names the site as it makes each step
//! ([`Tracer::step`](crate::wakeup::Tracer::step)), so rewording a step cannot move
//! or drop a highlight. The property test
//! `every_step_of_a_decision_has_its_line_in_the_listing` (core/tests/wakeup.rs)
//! decides random wake-ups on every preset and patch set there and fails on a step
//! without a line, or on a line missing from the listing of the set that decided.

use crate::patch::Patch;

mod hits;
mod listing;
mod listing_idlest;
mod listing_scan;
mod listing_sis;

pub use hits::{hits, line_site};
pub use listing::listing;

/// A line of the listing that a trace step can point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Site {
    /// `try_to_wake_up()`: p still on_cpu, queued to its old CPU.
    OnCpuWakelist,
    /// `select_task_rq()`: one allowed CPU.
    SingleCpu,
    /// `select_task_rq()`: the chosen CPU is not allowed, `select_fallback_rq()`.
    Fallback,
    FairEnter,
    CurrentCpu,
    WakeWide,
    AffineDomain,
    FindIdlest,
    /// `find_idlest_cpu()`: no allowed CPU in the domain, prev_cpu.
    IdlestNoAllowed,
    /// `find_idlest_cpu()`'s return.
    IdlestReturn,
    /// `find_idlest_group()`: a group whose cookie does not match is skipped.
    IdlestGroupCookie,
    /// `find_idlest_group()`: a group's `update_sg_wakeup_stats()`.
    IdlestGroupStats,
    /// `find_idlest_group()` returns NULL: no idlest group.
    IdlestGroupNone,
    /// `find_idlest_group()` returns the idlest: the local group is not allowed.
    IdlestGroupNoLocal,
    /// `find_idlest_group()` returns NULL: the local group's type is less busy.
    IdlestGroupLessBusy,
    /// `find_idlest_group()` returns the idlest: the local group's type is busier.
    IdlestGroupBusier,
    /// `find_idlest_group()`, fully busy/overloaded on NUMA: the local node's load
    /// is within the margin.
    IdlestGroupNumaLoad,
    /// `find_idlest_group()`, fully busy/overloaded: the idlest is not less loaded.
    IdlestGroupLoad,
    /// `find_idlest_group()`, fully busy/overloaded: within `imbalance_pct`.
    IdlestGroupPct,
    /// `find_idlest_group()`: a group type the slow path does not use.
    IdlestGroupUnused,
    /// `find_idlest_group()`, misfit task: the local group's max capacity is as large.
    IdlestGroupMisfit,
    /// `find_idlest_group()`, has spare on NUMA: the allowed imbalance keeps the node.
    IdlestGroupNuma,
    /// `find_idlest_group()`, has spare: the local group has as many idle CPUs.
    IdlestGroupIdle,
    /// `find_idlest_group()` returns the idlest group.
    IdlestGroupPush,
    /// `find_idlest_group_cpu()`: a group of one CPU.
    IdlestCpuOne,
    /// `find_idlest_group_cpu()`: a `sched_idle_cpu()`.
    IdlestCpuSchedIdle,
    /// `find_idlest_group_cpu()`'s return (shallowest idle, else least loaded).
    IdlestCpuReturn,
    FairReturnSlow,
    FairReturnFast,
    /// `wake_affine()` keeps prev.
    WakeAffinePrev,
    /// `wake_affine()` pulls to the waker's CPU.
    WakeAffineThis,
    AffineIdleThis,
    AffineIdleSync,
    AffineIdlePrev,
    AffineWeight,
    SisEnter,
    SisTarget,
    SisTargetReturn,
    SisPrev,
    SisPrevReturn,
    SisPrevCluster,
    SisKthread,
    SisKthreadReturn,
    SisRecent,
    SisRecentReturn,
    SisCapacity,
    CapacityProbe,
    SisNoLlc,
    SisIdleCores,
    SmtProbe,
    SisSmtReturn,
    SisScanReturn,
    SisPrevAffReturn,
    SisRecentAffReturn,
    SisTargetLast,
    ScanEnter,
    ScanPropBudget,
    ScanUtilBudget,
    ScanUtilZero,
    ClusterEnter,
    ClusterCore,
    ClusterCoreReturn,
    ClusterBudget,
    ClusterProbe,
    ClusterProbeReturn,
    ClusterDone,
    ScanCore,
    ScanCoreReturn,
    ScanBudget,
    ScanProbe,
    ScanReturn,
    CoreProbe,
    QueueCond,
    QueueWakelist,
    QueueLocal,
    QueueRemote,
}

/// One line of the listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeLine {
    /// The kernel function the line belongs to.
    pub func: &'static str,
    /// The text, indented with spaces.
    pub text: String,
    /// The trace steps this line produces, if any.
    pub site: Option<Site>,
    /// The patch of the set that adds or changes this line.
    pub by: Option<Patch>,
}

/// Builds the listing line by line.
struct Listing {
    lines: Vec<CodeLine>,
    func: &'static str,
}

impl Listing {
    fn func(&mut self, name: &'static str, signature: &str) {
        if !self.lines.is_empty() {
            self.plain("");
        }
        self.func = name;
        self.plain(signature);
    }

    fn line(&mut self, text: &str, site: Option<Site>, by: Option<Patch>) {
        self.lines.push(CodeLine {
            func: self.func,
            text: text.to_string(),
            site,
            by,
        });
    }

    fn plain(&mut self, text: &str) {
        self.line(text, None, None);
    }

    fn at(&mut self, text: &str, site: Site) {
        self.line(text, Some(site), None);
    }
}

#[cfg(test)]
mod tests;
