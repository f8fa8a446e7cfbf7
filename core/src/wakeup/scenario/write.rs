//! The other direction: a resolved wake-up written back out as a state file
//! ([`WakeScenario::explicit`], [`ResolvedWake::to_scenario`], [`exact_scenario`]).

use super::*;

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
            // The kernel's rq->nr_running: a simulator's wakees still on a wake list
            // are not on the rq (a file has no wake list).
            let nr = rq.nr_running;
            let state = if nr == 0 {
                CpuStateKind::Idle
            } else if rq.idle_h_nr_running == nr {
                CpuStateKind::SchedIdle
            } else {
                CpuStateKind::Busy
            };
            let rule = CpuRule {
                cpus: String::new(),
                state: Some(state),
                nr_running: Some(nr),
                ttwu_pending: Some(rq.ttwu_pending),
                load: Some(rq.load_avg),
                util: Some(rq.util_avg),
                cookie: Some(rq.core_cookie),
                polling: Some(rq.polling),
                capacity: Some(rq.capacity),
                active: Some(rq.active),
                vcpu_preempted: Some(rq.vcpu_preempted),
                curr_is_idle: exact.then_some(rq.curr_is_idle),
                // Written only off their defaults, so files of CPUs without them
                // read as before.
                exit_latency: (rq.exit_latency_us != Some(0))
                    .then(|| ExitLatency::of(rq.exit_latency_us)),
                idle_stamp: (rq.idle_stamp != 0).then_some(rq.idle_stamp),
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
