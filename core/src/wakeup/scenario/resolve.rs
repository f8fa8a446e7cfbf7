//! Reading a state file and resolving it against its machine: the JSON read
//! ([`WakeScenario::from_json`]), the machine, domains and features built
//! ([`WakeScenario::env`]), then the CPUs' runqueues, their LLCs' shared state and
//! the two tasks as the file's rules say ([`WakeScenario::resolve_in`]), each number
//! held to the kernel's range.

use crate::cpumask::{CpuId, CpuMask};
use crate::patch::PatchSet;
use crate::release::Release;
use crate::topology::presets;

use super::super::{
    update_idle_cpu_scan, RqState, SchedState, SisPropState, TaskId, TaskState, WakeEnv, WakeFlags,
    Waker,
};
use super::{
    CpuRule, CpuStateKind, LlcRule, MachineRef, ResolvedState, ResolvedWake, ScenarioError,
    TaskSpec, WakeScenario, MAX_NR_RUNNING, MAX_RQ_LOAD, MAX_TASK_LOAD, SCHED_CAPACITY_SCALE,
};

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
    ///
    /// The file's parts are resolved in a fixed order, so a file with several faults
    /// is refused for the first of: the `cpus` rules, `core_sched_enabled`, `hz`,
    /// `sis_prop`, the `llc` rules, the waker's CPU, the wakee, the waker's task, the
    /// wake flags.
    pub fn resolve_in(&self, env: &WakeEnv) -> Result<ResolvedState, ScenarioError> {
        let n = env.domains.cpu_map.nr_cpu_ids();
        let mut state = SchedState::all_idle(n, |_| 0);
        state.jiffies = self.jiffies;
        for (i, r) in self.cpus.iter().enumerate() {
            apply_cpu_rule(&mut state, n, i, r)?;
        }
        share_core_cookies(env, &mut state);
        state.core_sched_enabled = self.core_sched_enabled(&state)?;
        if let Some(hz) = self.hz {
            state.hz = checked_hz(hz)?;
        }
        if let Some(sp) = &self.sis_prop {
            check_sis_prop(sp, n)?;
            state.sis_prop = sp.clone();
        }
        derive_llc_shared(env, &mut state);
        for (i, r) in self.llc.iter().enumerate() {
            apply_llc_rule(env, &mut state, i, r)?;
        }
        let (wakee, waker) = self.resolve_tasks(n)?;
        let flags = wake_flags(&self.wake_flags, env.patches.release)?;
        Ok(ResolvedState {
            state,
            wakee,
            waker,
            flags,
        })
    }

    /// Whether core scheduling is on: the file's `core_sched_enabled`, else whether any
    /// task or CPU carries a cookie. `state`'s cookies are the resolved ones. Refuses
    /// `false` beside a cookie (`ScenarioError::Invalid`, "core_sched_enabled: false, ...").
    fn core_sched_enabled(&self, state: &SchedState) -> Result<bool, ScenarioError> {
        let cookies = self.wakee.cookie != 0
            || self.waker.task.as_ref().is_some_and(|t| t.cookie != 0)
            || state.rqs.iter().any(|r| r.core_cookie != 0);
        match self.core_sched_enabled {
            Some(false) if cookies => Err(ScenarioError::Invalid(
                "core_sched_enabled: false, but a task or CPU carries a core-scheduling \
                 cookie (a cookie enables core scheduling)"
                    .into(),
            )),
            Some(v) => Ok(v),
            None => Ok(cookies),
        }
    }

    /// The wakee and the waker (its CPU, and its task if the file gives one), resolved
    /// in that order of errors: `waker.cpu`, then the wakee's fields, then
    /// `waker.task`'s (see [`resolve_task`]). A task's `prev_cpu` defaults to the
    /// waker's CPU.
    fn resolve_tasks(&self, n: u32) -> Result<(TaskState, Waker), ScenarioError> {
        let waker_cpu = cpu_in(n, "waker.cpu", self.waker.cpu)?;
        let wakee = resolve_task(n, "wakee", &self.wakee, self.waker.cpu)?;
        let waker_task = match &self.waker.task {
            Some(t) => Some(resolve_task(n, "waker.task", t, self.waker.cpu)?),
            None => None,
        };
        let waker = Waker {
            cpu: waker_cpu,
            task: waker_task,
            in_task: self.waker.in_task,
        };
        Ok((wakee, waker))
    }
}

/// `text`, a CPU list such as `0-3,8`, as a mask of `n` CPUs; a bad list is
/// `ScenarioError::Mask` naming `field`.
fn mask_in(n: u32, field: &str, text: &str) -> Result<CpuMask, ScenarioError> {
    CpuMask::parse_list(n, text).map_err(|err| ScenarioError::Mask {
        field: field.to_string(),
        err,
    })
}

/// CPU `c` of a machine of `n` CPUs; one past the last is `ScenarioError::Cpu`
/// naming `field` and the last CPU.
fn cpu_in(n: u32, field: &str, c: u32) -> Result<CpuId, ScenarioError> {
    if c < n {
        Ok(CpuId(c))
    } else {
        Err(ScenarioError::Cpu {
            field: field.to_string(),
            cpu: c,
            last: n - 1,
        })
    }
}

/// Rule `cpus[i]`: checks its numbers, then sets the runqueue of every CPU its list
/// names (later rules overwrite earlier ones). Errors, in order: `util`, `load`,
/// `capacity`, `nr_running` above the kernel's range ("it may be at most"), a
/// capacity of 0, a bad `exit_latency`, a bad `cpus` list (`ScenarioError::Mask`).
fn apply_cpu_rule(
    state: &mut SchedState,
    n: u32,
    i: usize,
    r: &CpuRule,
) -> Result<(), ScenarioError> {
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
    let m = mask_in(n, &format!("cpus[{i}].cpus"), &r.cpus)?;
    for c in m.iter() {
        let rq = &mut state.rqs[c.idx()];
        set_rq_kind(rq, r);
        set_rq_fields(rq, r, exit_latency);
    }
    Ok(())
}

/// The runqueue a rule's `state` starts from (idle, busy with `nr_running` tasks, or
/// running only SCHED_IDLE tasks), keeping the CPU's capacity; no `state` keeps the
/// runqueue as it was. Cannot fail.
fn set_rq_kind(rq: &mut RqState, r: &CpuRule) {
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
}

/// The fields a rule gives one by one, over the state [`set_rq_kind`] set; checked
/// beforehand by [`apply_cpu_rule`], so this cannot fail. `exit_latency` is the
/// rule's, resolved.
fn set_rq_fields(rq: &mut RqState, r: &CpuRule, exit_latency: Option<Option<u32>>) {
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

/// A core's cookie is the core's: every sibling reports rq->core->core_cookie, the
/// largest any sibling's rule gave. Cannot fail.
fn share_core_cookies(env: &WakeEnv, state: &mut SchedState) {
    for c in 0..env.domains.cpu_map.nr_cpu_ids() {
        let c = CpuId(c);
        let cookie = env
            .smt_mask(c)
            .iter()
            .map(|s| state.rqs[s.idx()].core_cookie)
            .max()
            .unwrap_or(0);
        state.rqs[c.idx()].core_cookie = cookie;
    }
}

/// The file's `hz`, if it is 1 to 1000; else `ScenarioError::Invalid` ("hz: ...").
fn checked_hz(hz: u64) -> Result<u64, ScenarioError> {
    // CONFIG_HZ is one of 100, 250, 300, 1000; any rate up to 1000 is taken.
    if !(1..=1000).contains(&hz) {
        return Err(ScenarioError::Invalid(format!(
            "hz: {hz}; CONFIG_HZ is 1 to 1000 (100, 250, 300 or 1000 in practice)"
        )));
    }
    Ok(hz)
}

/// The file's `sis_prop` arrays must each hold one entry per CPU; the first that does
/// not is `ScenarioError::Invalid` ("sis_prop.<name>: ... entries").
fn check_sis_prop(sp: &SisPropState, n: u32) -> Result<(), ScenarioError> {
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
    Ok(())
}

/// Each LLC's shared state as the runqueues imply it: `nr_idle_scan` from the LLC's
/// summed utilisation (update_idle_cpu_scan()), `has_idle_cores` if SMT is on and a
/// core is wholly idle, `nr_busy_cpus` the CPUs not running idle. Cannot fail.
fn derive_llc_shared(env: &WakeEnv, state: &mut SchedState) {
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
}

/// Rule `llc[i]`: overrides the derived shared state of the LLC holding its CPU.
/// Errors, in order: the CPU out of range (`ScenarioError::Cpu`), a CPU with no LLC
/// domain, `nr_idle_scan` or `nr_busy_cpus` above the LLC's size.
fn apply_llc_rule(
    env: &WakeEnv,
    state: &mut SchedState,
    i: usize,
    r: &LlcRule,
) -> Result<(), ScenarioError> {
    let c = cpu_in(
        env.domains.cpu_map.nr_cpu_ids(),
        &format!("llc[{i}].cpu"),
        r.cpu,
    )?;
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
    Ok(())
}

/// The task `t` stands for, named `field` in errors; `prev_cpu` defaults to
/// `default_prev`, `recent_used_cpu` to `prev_cpu`, `allowed` to every CPU. Errors,
/// in order: `util`, `load` above the kernel's range, `prev_cpu` out of range, a bad
/// `allowed` list, an empty one, `recent_used_cpu` out of range.
fn resolve_task(
    n: u32,
    field: &str,
    t: &TaskSpec,
    default_prev: u32,
) -> Result<TaskState, ScenarioError> {
    at_most(&format!("{field}.util"), Some(t.util), SCHED_CAPACITY_SCALE)?;
    at_most(&format!("{field}.load"), Some(t.load), MAX_TASK_LOAD)?;
    let prev = cpu_in(
        n,
        &format!("{field}.prev_cpu"),
        t.prev_cpu.unwrap_or(default_prev),
    )?;
    let allowed = match &t.allowed {
        Some(a) => mask_in(n, &format!("{field}.allowed"), a)?,
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
        recent_used_cpu: cpu_in(
            n,
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
}

/// The file's `wake_flags` as `WakeFlags` under `release`: TTWU added unless the
/// wake-up is a fork or an exec placement. Errors (`ScenarioError::Invalid`,
/// "wake_flags: ..."), in order: `current-cpu` before the release that has it, an
/// unknown word (the first fault in list order), fork or exec with any other flag.
fn wake_flags(words: &[String], release: Release) -> Result<WakeFlags, ScenarioError> {
    let mut flags = WakeFlags::NONE;
    for f in words {
        flags = flags.union(match f.as_str() {
            "sync" => WakeFlags::SYNC,
            "fork" => WakeFlags::FORK,
            "exec" => WakeFlags::EXEC,
            "current-cpu" if !release.has_wf_current_cpu() => {
                let since = Release::all().into_iter().find(|r| r.has_wf_current_cpu());
                return Err(ScenarioError::Invalid(format!(
                    "wake_flags: current-cpu (WF_CURRENT_CPU) is not in {}; it arrived in {}",
                    release,
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
                "wake_flags: {words:?}: fork and exec each stand alone (wake_up_new_task() \
                 passes WF_FORK, sched_exec() WF_EXEC, and nothing else)"
            )));
        }
    } else {
        flags = flags.union(WakeFlags::TTWU);
    }
    Ok(flags)
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
