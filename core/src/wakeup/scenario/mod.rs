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
    /// The rule's value for [`RqState::exit_latency_us`].
    pub fn of(v: Option<u32>) -> Self {
        match v {
            Some(us) => ExitLatency::Us(u64::from(us)),
            None => ExitLatency::Word("none".into()),
        }
    }

    /// The value for [`RqState::exit_latency_us`], or why `field` is invalid.
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
            let exit_latency = match &r.exit_latency {
                Some(e) => Some(e.resolve(&field("exit_latency"))?),
                None => None,
            };
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
                if let Some(v) = exit_latency {
                    rq.exit_latency_us = v;
                }
                if let Some(v) = r.idle_stamp {
                    rq.idle_stamp = v;
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
        let mut flags = WakeFlags::NONE;
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
        let placement = WakeFlags::FORK.union(WakeFlags::EXEC);
        if flags.intersects(placement) {
            // wake_up_new_task() passes WF_FORK alone, sched_exec() WF_EXEC alone.
            if flags.without(placement).0 != 0 || flags.contains(placement) {
                return Err(ScenarioError::Invalid(format!(
                    "wake_flags: {:?}: fork and exec each stand alone (wake_up_new_task() \
                     passes WF_FORK, sched_exec() WF_EXEC, and nothing else)",
                    self.wake_flags
                )));
            }
        } else {
            flags = flags.union(WakeFlags::TTWU);
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

/// `Some(v)` with `v > max` is refused, naming the field and the limit.
fn at_most(field: &str, v: Option<u64>, max: u64) -> Result<(), ScenarioError> {
    match v {
        Some(v) if v > max => Err(ScenarioError::Invalid(format!(
            "{field}: {v}; it may be at most {max}"
        ))),
        _ => Ok(()),
    }
}

mod write;
pub use write::exact_scenario;

#[cfg(test)]
mod tests;
