//! The `schedlab wake --state FILE.json` format: one wake-up, written by hand.
//!
//! ```json
//! {
//!   "machine": "kunpeng920-6426",
//!   "patches": "6.6+cluster",
//!   "cpus": [ { "cpus": "0-31", "state": "busy" }, { "cpus": "5", "state": "idle" } ],
//!   "wakee": { "id": 1, "prev_cpu": 12, "allowed": "0-31" },
//!   "waker": { "cpu": 0, "task": { "id": 2 } },
//!   "wake_flags": ["sync"]
//! }
//! ```
//!
//! Every CPU starts idle; `cpus` rules apply in order. Unless given, each LLC's
//! `nr_idle_scan` is what `update_idle_cpu_scan()` computes from the CPUs' util, and
//! `has_idle_cores` is set when the LLC holds a whole idle core (as
//! `__update_idle_core()` would have left it).
//!
//! Numbers are held to the kernel's ranges ([`SCHED_CAPACITY_SCALE`], [`MAX_TASK_LOAD`],
//! [`MAX_RQ_LOAD`], [`MAX_NR_RUNNING`], `nr_idle_scan` ≤ the LLC's weight) and refused
//! past them with the field's name, so no sum or product in the wake-up path can wrap.
//!
//! By file: this one the format (its types and limits); resolve.rs reading a file and
//! resolving it against its machine; write.rs the other direction.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cpumask::{CpuId, CpuMask, CpuMaskError};
use crate::patch::PatchError;
use crate::release::Release;
use crate::sched_domain::DomainError;
use crate::topology::{MachineSpec, TopologyError};

use super::{SchedState, SisPropState, TaskState, WakeEnv, WakeFlags, Waker};

/// `SCHED_CAPACITY_SCALE`: the largest `util` (a CPU's `cpu_util_cfs()` is clamped to
/// its original capacity, a task's util_avg cannot pass it) and the largest
/// `capacity` of a CPU.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;

/// The largest `load` of a task: `sched_prio_to_weight[0]`, a nice -20 task's weight
/// (its load_avg, and so `task_h_load()`, cannot pass it).
pub const MAX_TASK_LOAD: u64 = 88761;

/// `PID_MAX_LIMIT` (2^22): the most tasks a kernel can have, so the largest
/// `nr_running` of a CPU.
pub const MAX_NR_RUNNING: u32 = 1 << 22;

/// The largest `load` of a CPU: every possible task at nice -20 on it. With it
/// `wake_affine_weight()`'s products (load × 100 × capacity) stay far inside `i64`.
pub const MAX_RQ_LOAD: u64 = MAX_TASK_LOAD * MAX_NR_RUNNING as u64;

#[derive(Debug, Error)]
pub enum ScenarioError {
    #[error("cannot read the wake-up state: {0}")]
    Json(String),
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error(transparent)]
    Patch(#[from] PatchError),
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("{field}: {err}")]
    Mask { field: String, err: CpuMaskError },
    #[error("{field}: CPU {cpu} is out of range (CPUs 0-{last})")]
    Cpu { field: String, cpu: u32, last: u32 },
    #[error("{0}")]
    Invalid(String),
}

/// A machine: preset name or inline spec.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum MachineRef {
    Preset(String),
    Spec(Box<MachineSpec>),
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CpuStateKind {
    /// Running the idle task, nothing queued.
    Idle,
    /// Running a CFS task.
    Busy,
    /// Running only SCHED_IDLE tasks.
    SchedIdle,
}

/// A rule setting the state of some CPUs. Unset fields leave the CPUs as earlier rules
/// (or the all-idle start) left them.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuRule {
    pub cpus: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<CpuStateKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_running: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttwu_pending: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cookie: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polling: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    /// `vcpu_is_preempted(cpu)`: in a guest, the host has preempted this vCPU. An idle
    /// CPU with it set is not `available_idle_cpu()`, so the wake-up path passes it
    /// over as busy (it may still be `sched_idle_cpu()`). Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vcpu_preempted: Option<bool>,
    /// `rq->curr == rq->idle`, when it differs from what `state` and `nr_running`
    /// imply (applied after them): an idle CPU with a task queued that has not yet
    /// scheduled (`true` with `nr_running` > 0), or a CPU whose task has just
    /// dequeued itself inside `schedule()` (`false` with `nr_running` 0).
    /// `ttwu_queue_wakelist()` reads it (`set_nr_if_polling()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curr_is_idle: Option<bool>,
    /// `idle_get_state(rq)->exit_latency`, µs (0 to 2^32 - 1, the kernel's `unsigned
    /// int`), or `"none"` for no cpuidle state (`idle_get_state()` NULL): what the slow
    /// path's `find_idlest_group_cpu()` compares idle CPUs by, shallowest first.
    /// Default 0 (every idle CPU in one state; the first in span order wins a tie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_latency: Option<ExitLatency>,
    /// `rq->idle_stamp`, ns: among idle CPUs of equal exit latency,
    /// `find_idlest_group_cpu()` takes the most recently idled. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_stamp: Option<u64>,
}

/// A CPU rule's `exit_latency`: microseconds, or the word `"none"` (no cpuidle state).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ExitLatency {
    Us(u64),
    Word(String),
}

impl ExitLatency {
    /// The rule's value for [`RqState::exit_latency_us`](super::RqState::exit_latency_us).
    pub fn of(v: Option<u32>) -> Self {
        match v {
            Some(us) => ExitLatency::Us(u64::from(us)),
            None => ExitLatency::Word("none".into()),
        }
    }

    /// The value for [`RqState::exit_latency_us`](super::RqState::exit_latency_us), or
    /// why `field` is invalid.
    fn resolve(&self, field: &str) -> Result<Option<u32>, ScenarioError> {
        match self {
            ExitLatency::Us(v) => u32::try_from(*v).map(Some).map_err(|_| {
                ScenarioError::Invalid(format!(
                    "{field}: {v}; an exit latency is an unsigned int of µs, at most {}",
                    u32::MAX
                ))
            }),
            ExitLatency::Word(w) if w == "none" => Ok(None),
            ExitLatency::Word(w) => Err(ScenarioError::Invalid(format!(
                "{field}: {w:?}; use a number of µs, or \"none\" for no cpuidle state"
            ))),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LlcRule {
    /// Any CPU of the LLC.
    pub cpu: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_idle_cores: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_idle_scan: Option<u32>,
    /// `sd_llc_shared->nr_busy_cpus`; default the LLC's CPUs not running the idle
    /// task. At most the LLC's weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_busy_cpus: Option<u32>,
}

/// A task. The defaults that change a decision: `prev_cpu` missing is the waker's CPU,
/// `recent_used_cpu` missing is `prev_cpu`, `allowed` missing is every CPU, and
/// `last_wakee` missing (or null) is "no task", so `record_wakee()` counts a flip for
/// any wakee (`--explain-defaults` writes them all out).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub id: u32,
    #[serde(default)]
    pub prev_cpu: Option<u32>,
    #[serde(default)]
    pub recent_used_cpu: Option<u32>,
    /// CPU list; default every CPU.
    #[serde(default)]
    pub allowed: Option<String>,
    #[serde(default)]
    pub wakee_flips: u32,
    #[serde(default)]
    pub wakee_flip_decay_ts: u64,
    #[serde(default)]
    pub last_wakee: Option<u32>,
    #[serde(default = "default_load")]
    pub load: u64,
    #[serde(default)]
    pub util: u64,
    #[serde(default)]
    pub cookie: u64,
    #[serde(default)]
    pub per_cpu_kthread: bool,
    #[serde(default)]
    pub on_cpu: bool,
    #[serde(default)]
    pub exiting: bool,
}

fn default_load() -> u64 {
    1024
}

impl TaskSpec {
    /// A plain CFS task with every other field at the file format's default.
    pub fn new(id: u32) -> Self {
        TaskSpec {
            id,
            prev_cpu: None,
            recent_used_cpu: None,
            allowed: None,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: None,
            load: default_load(),
            util: 0,
            cookie: 0,
            per_cpu_kthread: false,
            on_cpu: false,
            exiting: false,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WakerSpec {
    pub cpu: u32,
    #[serde(default)]
    pub task: Option<TaskSpec>,
    #[serde(default = "yes")]
    pub in_task: bool,
}

fn yes() -> bool {
    true
}

/// The whole file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WakeScenario {
    pub machine: MachineRef,
    #[serde(default)]
    pub patches: Option<String>,
    /// Sched features as written to debugfs: `NO_SIS_UTIL`, `WA_BIAS`, ...
    #[serde(default)]
    pub features: Vec<String>,
    #[serde(default)]
    pub cpus: Vec<CpuRule>,
    #[serde(default)]
    pub llc: Vec<LlcRule>,
    #[serde(default)]
    pub jiffies: u64,
    pub wakee: TaskSpec,
    pub waker: WakerSpec,
    /// `sync`, `fork`, `exec`, `current-cpu`; TTWU is implied, except with `fork` or
    /// `exec`, which stand alone: they place a new task (`wake_up_new_task()`) or an
    /// exec'ing one (`sched_exec()`), not a wake-up.
    #[serde(default)]
    pub wake_flags: Vec<String>,
    /// CONFIG_HZ (jiffies per second, for `record_wakee()`'s decay); default 250.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hz: Option<u64>,
    /// `sched_core_enabled()`; default: some task or CPU carries a cookie. It may be
    /// true without one (a task elsewhere on the machine has a cookie), never false
    /// with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_sched_enabled: Option<bool>,
    /// SIS_PROP's inputs (kernels up to 6.6), each an array of one entry per CPU:
    /// `avg_idle_ns`, `wake_avg_idle_ns`, `wake_stamp`, and `avg_scan_cost_ns` (the
    /// CPU's own LLC `sched_domain`'s; the waker's is read). Default all 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sis_prop: Option<SisPropState>,
}

/// A scenario resolved against its machine.
pub struct ResolvedWake {
    pub env: WakeEnv,
    pub state: SchedState,
    pub wakee: TaskState,
    pub waker: Waker,
    pub flags: WakeFlags,
}

/// A scenario's wake-up resolved against a [`WakeEnv`] built beforehand
/// ([`WakeScenario::resolve_in`]): everything of [`ResolvedWake`] but the env.
pub struct ResolvedState {
    pub state: SchedState,
    pub wakee: TaskState,
    pub waker: Waker,
    pub flags: WakeFlags,
}

mod resolve;
mod write;
pub use write::exact_scenario;

#[cfg(test)]
mod tests;
