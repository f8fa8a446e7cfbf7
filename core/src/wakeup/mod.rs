//! Wake-up CPU selection, function by function as kernel/sched/fair.c and core.c have
//! it, for a chosen release and seed patches.
//!
//! ```text
//!  try_to_wake_up()
//!   └─ select_task_rq()                         core.c: allowed/fallback wrapper
//!       └─ select_task_rq_fair()                record_wakee, wake_wide, affine walk
//!           ├─ wake_affine()                    WA_IDLE, WA_WEIGHT, WA_BIAS
//!           └─ select_idle_sibling()            target/prev/recent fast paths
//!               ├─ select_idle_capacity()       asymmetric machines
//!               ├─ select_idle_smt()            SMT siblings of prev
//!               └─ select_idle_cpu()            SIS_UTIL/SIS_PROP budget, cluster first
//!                   └─ select_idle_core()       whole idle core (has_idle_cores)
//!   └─ ttwu_queue() / ttwu_queue_cond()         wakelist + IPI, or remote rq lock
//! ```
//!
//! Every function reads [`SchedState`] and returns a [`Decision`]: the CPU, the
//! effects the kernel would write, what the scan cost, and (with a tracer) a step-by-step
//! explanation. Nothing here mutates scheduler state, so one decision
//! (`schedlab wake`) and millions (the simulator) run the same code.

pub mod scenario;
mod select;
pub mod state;
pub mod trace;

pub use select::{ttwu_queue_cond, update_idle_cpu_scan, wake_up};
pub use state::{
    LlcShared, RqState, SchedState, SisPropState, TaskId, TaskState, WakeFlags, Waker,
};
pub use trace::{NoTrace, Reject, Step, Trace, Tracer};

use serde::Serialize;

use crate::cpumask::{CpuId, CpuMask};
use crate::patch::PatchSet;
use crate::sched_domain::{BuildConfig, DomainError, SchedDomains, SdFlags};
use crate::topology::Machine;

/// The read-only topology a wake-up consults: the machine, its domains for the patch
/// set's kernel, and per-CPU masks precomputed for the hot path.
#[derive(Clone, Debug)]
pub struct WakeEnv {
    pub patches: PatchSet,
    pub domains: SchedDomains,
    /// `cpu_smt_mask(cpu)` restricted to online CPUs.
    smt: Vec<CpuMask>,
    /// `cpu_smt_mask(cpu)` as a list, for the tight loops.
    smt_list: Vec<Vec<CpuId>>,
}

impl WakeEnv {
    /// Builds the domains the patch set's kernel would build for `machine`.
    pub fn new(machine: &Machine, patches: PatchSet) -> Result<WakeEnv, DomainError> {
        let domains = SchedDomains::build(machine, &BuildConfig::for_patches(&patches))?;
        let online = domains.cpu_map.clone();
        let smt: Vec<CpuMask> = machine.smt_masks().iter().map(|m| m.and(&online)).collect();
        let smt_list = smt.iter().map(|m| m.iter().collect()).collect();
        Ok(WakeEnv {
            patches,
            domains,
            smt,
            smt_list,
        })
    }

    pub fn nr_cpus(&self) -> u32 {
        self.domains.cpu_map.nr_cpu_ids()
    }

    /// `cpu_smt_mask(cpu)`.
    pub fn smt_mask(&self, cpu: CpuId) -> &CpuMask {
        &self.smt[cpu.idx()]
    }

    pub(crate) fn smt_siblings(&self, cpu: CpuId) -> &[CpuId] {
        &self.smt_list[cpu.idx()]
    }

    /// `sched_smt_active()`.
    pub fn sched_smt_active(&self) -> bool {
        self.domains.sched_smt_present
    }

    /// `static_branch_unlikely(&sched_cluster_active)`.
    pub fn sched_cluster_active(&self) -> bool {
        self.domains.sched_cluster_active
    }

    /// The LLC id whose `sched_domain_shared` serves `cpu`, if any.
    pub fn llc_shared_of(&self, cpu: CpuId) -> Option<CpuId> {
        self.domains.cpu(cpu).sd_llc_shared.map(|s| s.cpu)
    }

    /// Whether the first group of the CPU's LLC domain carries SD_CLUSTER (the
    /// `sg->flags & SD_CLUSTER` test of select_idle_cpu()).
    pub fn llc_first_group_is_cluster(&self, cpu: CpuId) -> bool {
        self.domains
            .cpu(cpu)
            .llc()
            .is_some_and(|d| d.groups[0].flags.contains(SdFlags::CLUSTER))
    }
}

/// How the woken task reaches its CPU's runqueue (`ttwu_queue()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueuePath {
    /// The waker's own runqueue: no remote access.
    Local,
    /// `ttwu_queue_wakelist()`: queued on the target's wake list; `ipi` is false when
    /// the target's idle task was polling (`set_nr_if_polling()`).
    Wakelist { ipi: bool },
    /// The waker takes the target's rq lock and enqueues remotely.
    RemoteLock,
}

/// What a wake-up costs, counted as the simulator charges it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Costs {
    /// Runqueues whose idle state was read in the select_idle_* scans.
    pub cpus_probed: u32,
    /// Runqueue cache lines of other CPUs read while deciding (fast-path checks and
    /// scans), each one a line that may be remote.
    pub remote_rq_reads: u32,
    /// Reads of the LLC's `sched_domain_shared` line (`has_idle_cores`,
    /// `nr_idle_scan`): it shares a line with `nr_busy_cpus`, written on idle entry
    /// and exit.
    pub llc_shared_reads: u32,
}

/// What the kernel writes while deciding, for the caller to apply.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// New `p->recent_used_cpu` (select_idle_sibling() sets it to prev).
    pub recent_used_cpu: Option<CpuId>,
    /// New (wakee_flips, wakee_flip_decay_ts, last_wakee) of the waker (`record_wakee`).
    pub waker_wakee: Option<(u32, u64, TaskId)>,
    /// `set_idle_cores(target, false)`: clear has_idle_cores of this LLC.
    pub clear_idle_cores: Option<CpuId>,
    /// SIS_PROP ran a limited scan on this CPU's behalf: the caller measures the scan
    /// time and updates `wake_avg_idle` and `avg_scan_cost`.
    pub sis_prop_scan: bool,
}

/// The outcome of one wake-up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub cpu: CpuId,
    pub queue: QueuePath,
    pub costs: Costs,
    pub effects: Effects,
}
