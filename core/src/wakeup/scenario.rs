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

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cpumask::{CpuId, CpuMask, CpuMaskError};
use crate::patch::{PatchError, PatchSet};
use crate::release::Release;
use crate::sched_domain::DomainError;
use crate::topology::{presets, MachineSpec, TopologyError};

use super::{
    update_idle_cpu_scan, RqState, SchedState, SisPropState, TaskId, TaskState, WakeEnv, WakeFlags,
    Waker,
};

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
    /// `sync`, `fork`, `exec`, `current-cpu`; TTWU is implied.
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
    /// SIS_PROP's inputs (kernels up to 6.6): per CPU `avg_idle_ns`,
    /// `wake_avg_idle_ns`, `wake_stamp`, and per LLC (indexed by its first CPU)
    /// `avg_scan_cost_ns`, each an array of one entry per CPU. Default all 0.
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

impl WakeScenario {
    pub fn from_json(text: &str) -> Result<WakeScenario, ScenarioError> {
        serde_json::from_str(text).map_err(|e| ScenarioError::Json(e.to_string()))
    }

    /// Builds the machine, domains and state. `patches` overrides the file's.
    pub fn resolve(&self, patches: Option<&str>) -> Result<ResolvedWake, ScenarioError> {
        let env = self.env(patches)?;
        let ResolvedState {
            state,
            wakee,
            waker,
            flags,
        } = self.resolve_in(&env)?;
        Ok(ResolvedWake {
            env,
            state,
            wakee,
            waker,
            flags,
        })
    }

    /// The machine's domains under the file's patch set and features (`patches`
    /// overrides the file's patch set): the part of [`WakeScenario::resolve`] that
    /// depends on neither the CPUs' state nor the tasks, so a caller deciding many
    /// wake-ups on one machine and kernel builds it once and calls
    /// [`WakeScenario::resolve_in`] per wake-up.
    pub fn env(&self, patches: Option<&str>) -> Result<WakeEnv, ScenarioError> {
        let machine = match &self.machine {
            MachineRef::Preset(name) => presets::machine(name)?,
            MachineRef::Spec(spec) => spec.build()?,
        };
        let mut ps: PatchSet = patches
            .or(self.patches.as_deref())
            .unwrap_or("6.8")
            .parse()?;
        for f in &self.features {
            ps.features.set(ps.release, f)?;
        }
        Ok(WakeEnv::new(&machine, ps)?)
    }

    /// The CPUs' state, the tasks and the flags against `env`, built beforehand for
    /// this file's machine (by [`WakeScenario::env`], or `WakeEnv::new` of the same
    /// machine). The file's `machine`, `patches` and `features` are not read: they are
    /// the env's.
    pub fn resolve_in(&self, env: &WakeEnv) -> Result<ResolvedState, ScenarioError> {
        let n = env.domains.cpu_map.nr_cpu_ids();
        let mut state = SchedState::all_idle(n, |_| 0);
        state.jiffies = self.jiffies;
        let mask = |field: &str, text: &str| {
            CpuMask::parse_list(n, text).map_err(|err| ScenarioError::Mask {
                field: field.to_string(),
                err,
            })
        };
        let cpu = |field: &str, c: u32| {
            if c < n {
                Ok(CpuId(c))
            } else {
                Err(ScenarioError::Cpu {
                    field: field.to_string(),
                    cpu: c,
                    last: n - 1,
                })
            }
        };
        for (i, r) in self.cpus.iter().enumerate() {
            let field = |name: &str| format!("cpus[{i}].{name}");
            at_most(&field("util"), r.util, SCHED_CAPACITY_SCALE)?;
            at_most(&field("load"), r.load, MAX_RQ_LOAD)?;
            at_most(&field("capacity"), r.capacity, SCHED_CAPACITY_SCALE)?;
            at_most(
                &field("nr_running"),
                r.nr_running.map(u64::from),
                MAX_NR_RUNNING as u64,
            )?;
            if r.capacity == Some(0) {
                return Err(ScenarioError::Invalid(format!(
                    "{}: 0; a CPU's capacity is at least 1 (scale_rt_capacity() never returns 0)",
                    field("capacity")
                )));
            }
            let m = mask(&format!("cpus[{i}].cpus"), &r.cpus)?;
            for c in m.iter() {
                let rq = &mut state.rqs[c.idx()];
                match r.state {
                    Some(CpuStateKind::Idle) => {
                        *rq = RqState {
                            capacity: rq.capacity,
                            ..RqState::idle()
                        }
                    }
                    Some(CpuStateKind::Busy) => {
                        *rq = RqState {
                            capacity: rq.capacity,
                            ..RqState::busy(r.nr_running.unwrap_or(1))
                        }
                    }
                    Some(CpuStateKind::SchedIdle) => {
                        let nr = r.nr_running.unwrap_or(1).max(1);
                        *rq = RqState {
                            curr_is_idle: false,
                            nr_running: nr,
                            idle_h_nr_running: nr,
                            load_avg: 3 * nr as u64,
                            util_avg: 10,
                            ..RqState::idle()
                        };
                    }
                    None => {}
                }
                if let Some(nr) = r.nr_running {
                    if r.state != Some(CpuStateKind::SchedIdle) {
                        rq.nr_running = nr;
                        rq.curr_is_idle = nr == 0;
                    }
                }
                if let Some(v) = r.ttwu_pending {
                    rq.ttwu_pending = v;
                }
                if let Some(v) = r.load {
                    rq.load_avg = v;
                }
                if let Some(v) = r.util {
                    rq.util_avg = v;
                }
                if let Some(v) = r.cookie {
                    rq.core_cookie = v;
                }
                if let Some(v) = r.polling {
                    rq.polling = v;
                }
                if let Some(v) = r.capacity {
                    rq.capacity = v;
                }
                if let Some(v) = r.active {
                    rq.active = v;
                }
                if let Some(v) = r.vcpu_preempted {
                    rq.vcpu_preempted = v;
                }
                if let Some(v) = r.curr_is_idle {
                    rq.curr_is_idle = v;
                }
            }
        }
        // A core's cookie is the core's: every sibling reports rq->core->core_cookie.
        for c in 0..n {
            let c = CpuId(c);
            let cookie = env
                .smt_mask(c)
                .iter()
                .map(|s| state.rqs[s.idx()].core_cookie)
                .max()
                .unwrap_or(0);
            state.rqs[c.idx()].core_cookie = cookie;
        }
        let cookies = self.wakee.cookie != 0
            || self.waker.task.as_ref().is_some_and(|t| t.cookie != 0)
            || state.rqs.iter().any(|r| r.core_cookie != 0);
        state.core_sched_enabled = match self.core_sched_enabled {
            Some(false) if cookies => {
                return Err(ScenarioError::Invalid(
                    "core_sched_enabled: false, but a task or CPU carries a core-scheduling \
                     cookie (a cookie enables core scheduling)"
                        .into(),
                ))
            }
            Some(v) => v,
            None => cookies,
        };
        if let Some(hz) = self.hz {
            // CONFIG_HZ is one of 100, 250, 300, 1000; any rate up to 1000 is taken.
            if !(1..=1000).contains(&hz) {
                return Err(ScenarioError::Invalid(format!(
                    "hz: {hz}; CONFIG_HZ is 1 to 1000 (100, 250, 300 or 1000 in practice)"
                )));
            }
            state.hz = hz;
        }
        if let Some(sp) = &self.sis_prop {
            for (name, v) in [
                ("avg_idle_ns", &sp.avg_idle_ns),
                ("wake_avg_idle_ns", &sp.wake_avg_idle_ns),
                ("wake_stamp", &sp.wake_stamp),
                ("avg_scan_cost_ns", &sp.avg_scan_cost_ns),
            ] {
                if v.len() != n as usize {
                    return Err(ScenarioError::Invalid(format!(
                        "sis_prop.{name}: {} entries; give one per CPU ({n})",
                        v.len()
                    )));
                }
            }
            state.sis_prop = sp.clone();
        }
        // Derived LLC state.
        for c in env.domains.cpu_map.iter() {
            let cd = env.domains.cpu(c);
            let Some(id) = env.llc_shared_of(c) else {
                continue;
            };
            if id != c {
                continue;
            }
            let llc = cd.llc().expect("shared implies an LLC");
            let sum_util: u64 = llc.span.iter().map(|o| state.rqs[o.idx()].util_avg).sum();
            let idle_core = llc.span.iter().any(|o| {
                env.smt_mask(o)
                    .iter()
                    .all(|s| state.rqs[s.idx()].curr_is_idle && state.rqs[s.idx()].nr_running == 0)
            });
            let sh = &mut state.llc_shared[id.idx()];
            sh.nr_idle_scan = update_idle_cpu_scan(env, id, sum_util);
            sh.has_idle_cores = env.sched_smt_active() && idle_core;
            sh.nr_busy_cpus = llc
                .span
                .iter()
                .filter(|o| !state.rqs[o.idx()].curr_is_idle)
                .count() as u32;
        }
        for (i, r) in self.llc.iter().enumerate() {
            let c = cpu(&format!("llc[{i}].cpu"), r.cpu)?;
            let id = env.llc_shared_of(c).ok_or_else(|| {
                ScenarioError::Invalid(format!("llc[{i}]: CPU {} has no LLC domain", r.cpu))
            })?;
            let sh = &mut state.llc_shared[id.idx()];
            if let Some(v) = r.has_idle_cores {
                sh.has_idle_cores = v;
            }
            if let Some(v) = r.nr_idle_scan {
                // update_idle_cpu_scan() computes it as a share of the LLC's weight:
                // more CPUs than the LLC holds is no state the kernel can be in.
                let llc_size = env.domains.cpu(id).sd_llc_size;
                if v > llc_size {
                    return Err(ScenarioError::Invalid(format!(
                        "llc[{i}].nr_idle_scan: {v}; the LLC of CPU {} has {llc_size} CPUs, \
                         and nr_idle_scan may be at most that",
                        r.cpu
                    )));
                }
                sh.nr_idle_scan = v;
            }
            if let Some(v) = r.nr_busy_cpus {
                let llc_size = env.domains.cpu(id).sd_llc_size;
                if v > llc_size {
                    return Err(ScenarioError::Invalid(format!(
                        "llc[{i}].nr_busy_cpus: {v}; the LLC of CPU {} has {llc_size} CPUs",
                        r.cpu
                    )));
                }
                sh.nr_busy_cpus = v;
            }
        }
        let task =
            |field: &str, t: &TaskSpec, default_prev: u32| -> Result<TaskState, ScenarioError> {
                at_most(&format!("{field}.util"), Some(t.util), SCHED_CAPACITY_SCALE)?;
                at_most(&format!("{field}.load"), Some(t.load), MAX_TASK_LOAD)?;
                let prev = cpu(
                    &format!("{field}.prev_cpu"),
                    t.prev_cpu.unwrap_or(default_prev),
                )?;
                let allowed = match &t.allowed {
                    Some(a) => mask(&format!("{field}.allowed"), a)?,
                    None => CpuMask::full(n),
                };
                if allowed.is_empty() {
                    return Err(ScenarioError::Invalid(format!(
                        "{field}.allowed: no CPU allowed"
                    )));
                }
                Ok(TaskState {
                    id: TaskId(t.id),
                    prev_cpu: prev,
                    recent_used_cpu: cpu(
                        &format!("{field}.recent_used_cpu"),
                        t.recent_used_cpu.unwrap_or(prev.0),
                    )?,
                    allowed,
                    wakee_flips: t.wakee_flips,
                    wakee_flip_decay_ts: t.wakee_flip_decay_ts,
                    last_wakee: t.last_wakee.map(TaskId),
                    load: t.load,
                    util: t.util,
                    cookie: t.cookie,
                    per_cpu_kthread: t.per_cpu_kthread,
                    on_cpu: t.on_cpu,
                    exiting: t.exiting,
                })
            };
        let waker_cpu = cpu("waker.cpu", self.waker.cpu)?;
        let wakee = task("wakee", &self.wakee, self.waker.cpu)?;
        let waker_task = match &self.waker.task {
            Some(t) => Some(task("waker.task", t, self.waker.cpu)?),
            None => None,
        };
        let mut flags = WakeFlags::TTWU;
        for f in &self.wake_flags {
            flags = flags.union(match f.as_str() {
                "sync" => WakeFlags::SYNC,
                "fork" => WakeFlags::FORK,
                "exec" => WakeFlags::EXEC,
                "current-cpu" if !env.patches.release.has_wf_current_cpu() => {
                    let since = Release::all().into_iter().find(|r| r.has_wf_current_cpu());
                    return Err(ScenarioError::Invalid(format!(
                        "wake_flags: current-cpu (WF_CURRENT_CPU) is not in {}; it arrived in {}",
                        env.patches.release,
                        since.map_or("a later release".into(), |r| r.to_string())
                    )));
                }
                "current-cpu" => WakeFlags::CURRENT_CPU,
                other => {
                    return Err(ScenarioError::Invalid(format!(
                        "wake_flags: unknown flag {other:?}; use sync, fork, exec or current-cpu"
                    )))
                }
            });
        }
        Ok(ResolvedState {
            state,
            wakee,
            waker: Waker {
                cpu: waker_cpu,
                task: waker_task,
                in_task: self.waker.in_task,
            },
            flags,
        })
    }
}

impl WakeScenario {
    /// The same wake-up with every default written out, as a state file a user can
    /// edit (`schedlab wake --explain-defaults`): `patches` is the resolved set (with
    /// `patches_override` applied), `features` lists every sched feature the release
    /// has (`NO_` when off), one `cpus` rule per group of CPUs in the same state
    /// covers every CPU with every field, `llc` gives each LLC's `has_idle_cores` and
    /// `nr_idle_scan` as derived, and each task has its `prev_cpu`,
    /// `recent_used_cpu`, `allowed` and `last_wakee` (null: none). Resolving it gives
    /// the same decision.
    pub fn explicit(&self, patches_override: Option<&str>) -> Result<WakeScenario, ScenarioError> {
        let r = self.resolve(patches_override)?;
        Ok(r.to_scenario(self.machine.clone()))
    }
}

impl ResolvedWake {
    /// The state file that resolves to this wake-up on `machine` (see
    /// [`WakeScenario::explicit`]).
    pub fn to_scenario(&self, machine: MachineRef) -> WakeScenario {
        scenario_of(
            &self.env,
            &self.state,
            &self.wakee,
            &self.waker,
            self.flags,
            machine,
            false,
        )
    }
}

/// The state file of one wake-up, every input of the wake-up path written out:
/// [`ResolvedWake::to_scenario`]'s file plus each CPU's `curr_is_idle`, each LLC's
/// `nr_busy_cpus`, `hz`, `core_sched_enabled` and SIS_PROP's inputs, so that
/// resolving it gives back `state` (but the unused `llc_shared` entries of CPUs that
/// are not an LLC's first, and the idle hint) and the same decision. What the
/// simulator's `--capture-wake` writes.
pub fn exact_scenario(
    env: &WakeEnv,
    state: &SchedState,
    wakee: &TaskState,
    waker: &Waker,
    flags: WakeFlags,
    machine: MachineRef,
) -> WakeScenario {
    scenario_of(env, state, wakee, waker, flags, machine, true)
}

fn scenario_of(
    env: &WakeEnv,
    state: &SchedState,
    wakee: &TaskState,
    waker: &Waker,
    flags: WakeFlags,
    machine: MachineRef,
    exact: bool,
) -> WakeScenario {
    {
        let ps = env.patches;
        let rel = ps.release;
        let f = ps.features;
        let d = crate::patch::SchedFeatures::defaults(rel);
        // The exact file names only the features off their release's default, so
        // that it resolves under another release too (the A/B comparison).
        let features = [
            (
                "SIS_UTIL",
                f.sis_util,
                d.sis_util,
                rel >= Release::new(6, 0),
            ),
            ("SIS_PROP", f.sis_prop, d.sis_prop, rel < Release::new(6, 7)),
            ("TTWU_QUEUE", f.ttwu_queue, d.ttwu_queue, true),
            ("WA_IDLE", f.wa_idle, d.wa_idle, true),
            ("WA_WEIGHT", f.wa_weight, d.wa_weight, true),
            ("WA_BIAS", f.wa_bias, d.wa_bias, true),
        ]
        .into_iter()
        .filter(|&(_, on, default, present)| present && (!exact || on != default))
        .map(|(name, on, _, _)| {
            if on {
                name.to_string()
            } else {
                format!("NO_{name}")
            }
        })
        .collect();
        let n = env.nr_cpus();
        // CPUs in the same state share a rule, in order of their first CPU.
        let mut groups: Vec<(CpuRule, CpuMask)> = Vec::new();
        for (c, rq) in state.rqs.iter().enumerate() {
            let state = if rq.nr_running == 0 {
                CpuStateKind::Idle
            } else if rq.idle_h_nr_running == rq.nr_running {
                CpuStateKind::SchedIdle
            } else {
                CpuStateKind::Busy
            };
            let rule = CpuRule {
                cpus: String::new(),
                state: Some(state),
                nr_running: Some(rq.nr_running),
                ttwu_pending: Some(rq.ttwu_pending),
                load: Some(rq.load_avg),
                util: Some(rq.util_avg),
                cookie: Some(rq.core_cookie),
                polling: Some(rq.polling),
                capacity: Some(rq.capacity),
                active: Some(rq.active),
                vcpu_preempted: Some(rq.vcpu_preempted),
                curr_is_idle: exact.then_some(rq.curr_is_idle),
            };
            match groups.iter_mut().find(|(r, _)| *r == rule) {
                Some((_, m)) => m.set_cpu(CpuId(c as u32)),
                None => {
                    let mut m = CpuMask::new(n);
                    m.set_cpu(CpuId(c as u32));
                    groups.push((rule, m));
                }
            }
        }
        let cpus = groups
            .into_iter()
            .map(|(rule, m)| CpuRule {
                cpus: m.to_list(),
                ..rule
            })
            .collect();
        let llc = (0..n)
            .map(CpuId)
            .filter(|&c| env.llc_shared_of(c) == Some(c))
            .map(|c| {
                let sh = &state.llc_shared[c.idx()];
                LlcRule {
                    cpu: c.0,
                    has_idle_cores: Some(sh.has_idle_cores),
                    nr_idle_scan: Some(sh.nr_idle_scan),
                    nr_busy_cpus: exact.then_some(sh.nr_busy_cpus),
                }
            })
            .collect();
        let mut wake_flags = Vec::new();
        for (flag, name) in [
            (WakeFlags::SYNC, "sync"),
            (WakeFlags::FORK, "fork"),
            (WakeFlags::EXEC, "exec"),
            (WakeFlags::CURRENT_CPU, "current-cpu"),
        ] {
            if flags.contains(flag) {
                wake_flags.push(name.to_string());
            }
        }
        WakeScenario {
            machine,
            patches: Some(ps.to_string()),
            features,
            cpus,
            llc,
            jiffies: state.jiffies,
            wakee: task_spec(wakee),
            waker: WakerSpec {
                cpu: waker.cpu.0,
                task: waker.task.as_ref().map(task_spec),
                in_task: waker.in_task,
            },
            wake_flags,
            hz: exact.then_some(state.hz),
            core_sched_enabled: exact.then_some(state.core_sched_enabled),
            sis_prop: exact.then(|| state.sis_prop.clone()),
        }
    }
}

fn task_spec(t: &TaskState) -> TaskSpec {
    TaskSpec {
        id: t.id.0,
        prev_cpu: Some(t.prev_cpu.0),
        recent_used_cpu: Some(t.recent_used_cpu.0),
        allowed: Some(t.allowed.to_list()),
        wakee_flips: t.wakee_flips,
        wakee_flip_decay_ts: t.wakee_flip_decay_ts,
        last_wakee: t.last_wakee.map(|w| w.0),
        load: t.load,
        util: t.util,
        cookie: t.cookie,
        per_cpu_kthread: t.per_cpu_kthread,
        on_cpu: t.on_cpu,
        exiting: t.exiting,
    }
}

/// `Some(v)` with `v > max` is refused, naming the field and the limit.
fn at_most(field: &str, v: Option<u64>, max: u64) -> Result<(), ScenarioError> {
    match v {
        Some(v) if v > max => Err(ScenarioError::Invalid(format!(
            "{field}: {v}; it may be at most {max}"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Kunpeng 920-6426: LLCs of 32 CPUs. `extra` goes in after `wakee`/`waker`.
    fn file(cpu_rule: &str, llc: &str, wakee: &str, extra: &str) -> String {
        format!(
            r#"{{ "machine": "kunpeng920-6426",
                 "cpus": [ {{ "cpus": "0-7", "state": "busy" {cpu_rule} }} ],
                 "llc": [ {{ "cpu": 0 {llc} }} ],
                 "wakee": {{ "id": 1, "prev_cpu": 12 {wakee} }},
                 "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }} {extra} }}"#
        )
    }

    fn err(json: &str, patches: &str) -> String {
        match WakeScenario::from_json(json).and_then(|s| s.resolve(Some(patches))) {
            Ok(_) => panic!("accepted: {json}"),
            Err(e) => e.to_string(),
        }
    }

    fn ok(json: &str, patches: &str) {
        WakeScenario::from_json(json)
            .and_then(|s| s.resolve(Some(patches)))
            .unwrap_or_else(|e| panic!("{e}: {json}"));
    }

    #[test]
    fn values_past_the_kernel_s_ranges_are_refused_by_name() {
        // Issue 16: util, load and capacity were taken as any u64 and summed.
        let big = u64::MAX;
        for (json, want) in [
            (
                file(&format!(r#", "util": {big}"#), "", "", ""),
                "cpus[0].util",
            ),
            (file(r#", "util": 1025"#, "", "", ""), "at most 1024"),
            (
                file(&format!(r#", "load": {big}"#), "", "", ""),
                "cpus[0].load",
            ),
            (
                file(r#", "capacity": 1025"#, "", "", ""),
                "cpus[0].capacity",
            ),
            (file(r#", "capacity": 0"#, "", "", ""), "cpus[0].capacity"),
            (
                file(r#", "nr_running": 4294967295"#, "", "", ""),
                "cpus[0].nr_running",
            ),
            (file("", "", r#", "util": 1025"#, ""), "wakee.util"),
            (
                file("", "", &format!(r#", "load": {big}"#), ""),
                "wakee.load",
            ),
            (
                file("", r#", "nr_idle_scan": 33"#, "", ""),
                "llc[0].nr_idle_scan",
            ),
        ] {
            let e = err(&json, "6.8");
            assert!(e.contains(want), "{want}: {e}");
        }
        // The largest values are accepted, and the derived SIS_UTIL budget is sane.
        ok(
            &file(
                r#", "util": 1024, "capacity": 1024, "load": 372290617344"#,
                r#", "nr_idle_scan": 32"#,
                r#", "util": 1024, "load": 88761"#,
                "",
            ),
            "6.8",
        );
        ok(&file(r#", "capacity": 1"#, "", "", ""), "6.8");
    }

    #[test]
    fn extreme_flips_and_jiffies_decide_without_overflow() {
        let json = format!(
            r#"{{ "machine": "kunpeng920-6426", "jiffies": {j},
                 "wakee": {{ "id": 1, "prev_cpu": 12, "wakee_flips": {f} }},
                 "waker": {{ "cpu": 0, "task": {{ "id": 2, "wakee_flips": {f},
                     "wakee_flip_decay_ts": {j} }} }} }}"#,
            j = u64::MAX,
            f = u32::MAX
        );
        let r = WakeScenario::from_json(&json)
            .unwrap()
            .resolve(None)
            .unwrap();
        let d = super::super::wake_up(
            &r.env,
            &r.state,
            &r.wakee,
            &r.waker,
            r.flags,
            &mut super::super::NoTrace,
        );
        assert!(d.cpu.0 < 128);
    }

    /// The fields `--capture-wake` writes: each reaches the state, and values the
    /// kernel cannot hold are refused by name.
    #[test]
    fn the_exact_state_fields_resolve_and_are_checked() {
        let sis = |n: usize| {
            format!(
                r#""sis_prop": {{ "avg_idle_ns": [{a}], "wake_avg_idle_ns": [{a}],
                   "wake_stamp": [{a}], "avg_scan_cost_ns": [{a}] }}"#,
                a = vec!["7"; n].join(",")
            )
        };
        let json = format!(
            r#"{{ "machine": "kunpeng920-6426", "patches": "5.15",
                 "cpus": [ {{ "cpus": "3", "state": "busy", "nr_running": 1, "curr_is_idle": true }} ],
                 "llc": [ {{ "cpu": 0, "nr_busy_cpus": 5 }} ],
                 "wakee": {{ "id": 1, "prev_cpu": 12 }},
                 "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }},
                 "hz": 1000, "core_sched_enabled": true, {} }}"#,
            sis(128)
        );
        let r = WakeScenario::from_json(&json)
            .unwrap()
            .resolve(None)
            .unwrap();
        assert!(r.state.rqs[3].curr_is_idle && r.state.rqs[3].nr_running == 1);
        assert_eq!(r.state.llc_shared[0].nr_busy_cpus, 5);
        assert_eq!(r.state.hz, 1000);
        assert!(r.state.core_sched_enabled);
        assert_eq!(r.state.sis_prop.wake_avg_idle_ns, vec![7; 128]);
        // Written back exactly, they resolve to the same state.
        let back = exact_scenario(
            &r.env,
            &r.state,
            &r.wakee,
            &r.waker,
            r.flags,
            MachineRef::Preset("kunpeng920-6426".into()),
        );
        let again = back.resolve(None).unwrap();
        assert_eq!(again.state.rqs, r.state.rqs);
        assert_eq!(again.state.sis_prop, r.state.sis_prop);
        assert_eq!(
            (
                again.state.hz,
                again.state.core_sched_enabled,
                again.state.jiffies
            ),
            (r.state.hz, r.state.core_sched_enabled, r.state.jiffies)
        );
        let base = r#"{ "machine": "kunpeng920-6426", "wakee": { "id": 1 }, "waker": { "cpu": 0 }"#;
        for (extra, want) in [
            (r#", "hz": 0"#.to_string(), "hz"),
            (r#", "hz": 100000"#.to_string(), "hz"),
            (format!(", {}", sis(127)), "sis_prop.avg_idle_ns"),
            (
                r#", "core_sched_enabled": false, "cpus": [ { "cpus": "1", "cookie": 5 } ]"#
                    .to_string(),
                "core_sched_enabled",
            ),
            (
                r#", "llc": [ { "cpu": 0, "nr_busy_cpus": 33 } ]"#.to_string(),
                "nr_busy_cpus",
            ),
        ] {
            let e = err(&format!("{base}{extra} }}"), "6.8");
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn current_cpu_is_refused_before_the_release_that_has_it() {
        let json = file("", "", "", r#", "wake_flags": ["current-cpu"]"#);
        let e = err(&json, "6.5");
        assert!(
            e.contains("current-cpu") && e.contains("6.5") && e.contains("6.6"),
            "{e}"
        );
        ok(&json, "6.6");
        ok(&json, "6.8");
    }
}
