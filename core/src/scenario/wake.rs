//! The wake-up to explain: [`WakeSetup`] (busy CPUs, waker and prev, the overrides,
//! cookies, or a simulated wake-up's reference, [`SimWakeAt`]), its mapping onto the
//! `schedlab wake` state file ([`Scenario::wake_scenario`]) and its decision through
//! core's `wake_up()` ([`Scenario::decide`], [`Scenario::decide_in`]); and
//! [`random_busy`], the page's seeded random busy set.

use serde::{Deserialize, Serialize};

use super::{MachineChoice, Scenario, Side};
use crate::cpumask::{CpuId, CpuMask};
use crate::patch::PatchSet;
use crate::wakeup::scenario::{
    CpuRule, CpuStateKind, LlcRule, MachineRef, TaskSpec, WakeScenario, WakerSpec,
};
use crate::wakeup::{wake_up, Decision, Trace, WakeEnv};

/// One wake-up to explain: which CPUs are busy, who wakes whom, and what to compare.
/// Every CPU is one of the scenario's machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeSetup {
    /// Busy CPUs; every other CPU is idle.
    pub busy: CpuMask,
    /// The CPU the wake-up runs on (`smp_processor_id()`).
    pub waker: CpuId,
    /// The wakee's `task_cpu(p)`.
    pub prev: CpuId,
    /// `p->recent_used_cpu`; `None`: the same as `prev`.
    pub recent: Option<CpuId>,
    /// WF_SYNC: the waker is about to sleep.
    pub sync: bool,
    /// Overrides the waker's LLC `has_idle_cores` (otherwise derived from the CPUs).
    pub has_idle_cores: Option<bool>,
    /// Overrides the waker's LLC `nr_idle_scan` (otherwise `update_idle_cpu_scan()`'s).
    pub nr_idle_scan: Option<u32>,
    /// A second patch set to decide the same wake-up under, side by side.
    pub compare: Option<PatchSet>,
    /// Core scheduling: the cookie of the task each listed CPU runs (a core's cookie
    /// is its siblings' too, as `rq->core->core_cookie`). Only busy CPUs run a task:
    /// an idle CPU's entry has no effect. Empty: no cookies.
    pub cookies: Vec<CookieRule>,
    /// The wakee's `p->core_cookie` (0: none).
    pub wakee_cookie: u64,
    /// A simulated wake-up the page explains in place of the hand-set one above (which
    /// stays, for the way back): a reference, not the state, which the page gets back
    /// by re-running the simulation (deterministic) up to that wake-up.
    pub sim: Option<SimWakeAt>,
}

/// A wake-up of one of the Simulate tab's runs: the `wake`-th (from 1, as `schedlab
/// run --capture-wake N` counts) of side `side`'s run of the scenario's simulation
/// with seed `seed`, at scale `scale` (one of
/// [`SimSetup::points`](super::SimSetup::points); absent: the page's watched scale, a
/// sweep's largest point or the workload's own scale, as every link before session 12
/// meant). A link carries this reference, never the captured state (which is every
/// CPU's runqueue: kilobytes to hundreds of kilobytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimWakeAt {
    pub side: Side,
    pub seed: u64,
    pub wake: u32,
    /// The sweep point (threads, clients, instances … as the workload counts them);
    /// `None`: the watched scale. Left out of links when `None` (session 12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<u32>,
}

/// Some CPUs running tasks of one core-scheduling cookie (seed 04's setting).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CookieRule {
    pub cpus: CpuMask,
    pub cookie: u64,
}
impl WakeSetup {
    /// Every CPU of an `nr_cpus` machine idle; waker and prev CPU 0.
    pub fn idle(nr_cpus: u32) -> WakeSetup {
        WakeSetup {
            busy: CpuMask::new(nr_cpus),
            waker: CpuId(0),
            prev: CpuId(0),
            recent: None,
            sync: false,
            has_idle_cores: None,
            nr_idle_scan: None,
            compare: None,
            cookies: Vec::new(),
            wakee_cookie: 0,
            sim: None,
        }
    }
}
impl Scenario {
    /// The wake-up as a `schedlab wake` state file, for [`WakeScenario::resolve`].
    pub fn wake_scenario(&self) -> WakeScenario {
        let w = &self.wake;
        let mut cpus = Vec::new();
        if !w.busy.is_empty() {
            cpus.push(rule(&w.busy.to_list(), CpuStateKind::Busy));
        }
        // An idle CPU runs no task, so a cookie listed for it has no effect.
        for c in &w.cookies {
            let mut running = c.cpus.clone();
            running.and_assign(&w.busy);
            if running.is_empty() {
                continue;
            }
            cpus.push(CpuRule {
                cpus: running.to_list(),
                cookie: Some(c.cookie),
                ..CpuRule::default()
            });
        }
        let llc = (w.has_idle_cores.is_some() || w.nr_idle_scan.is_some())
            .then_some(LlcRule {
                cpu: w.waker.0,
                has_idle_cores: w.has_idle_cores,
                nr_idle_scan: w.nr_idle_scan,
                nr_busy_cpus: None,
            })
            .into_iter()
            .collect();
        WakeScenario {
            machine: match self.machine.choice() {
                MachineChoice::Preset(n) => MachineRef::Preset(n.clone()),
                MachineChoice::Spec(s) => MachineRef::Spec(s.clone()),
            },
            patches: Some(self.patches.to_string()),
            features: Vec::new(),
            cpus,
            llc,
            jiffies: 0,
            wakee: TaskSpec {
                cookie: w.wakee_cookie,
                ..task(1, Some(w.prev.0), w.recent.map(|c| c.0))
            },
            waker: WakerSpec {
                cpu: w.waker.0,
                task: Some(task(2, None, None)),
                in_task: true,
            },
            wake_flags: if w.sync {
                vec!["sync".to_string()]
            } else {
                Vec::new()
            },
            hz: None,
            core_sched_enabled: None,
            sis_prop: None,
        }
    }

    /// Decides the wake-up under `patches` with core's `wake_up()`, traced. Builds the
    /// domains for it; a caller deciding more than once on one machine and patch set
    /// builds them once with [`Scenario::wake_env`] and calls [`Scenario::decide_in`].
    pub fn decide(
        &self,
        patches: PatchSet,
    ) -> Result<(Decision, Trace), crate::wakeup::scenario::ScenarioError> {
        self.decide_in(&self.wake_env(patches)?)
    }

    /// The domains (and the wake-up path's packed view of them) of this scenario's
    /// machine under `patches`: what [`Scenario::decide_in`] decides in. It depends on
    /// the machine and the patch set only, not on the wake-up's inputs.
    pub fn wake_env(
        &self,
        patches: PatchSet,
    ) -> Result<WakeEnv, crate::wakeup::scenario::ScenarioError> {
        Ok(WakeEnv::new(self.machine(), patches)?)
    }

    /// Decides the wake-up in `env` (from [`Scenario::wake_env`] for this scenario's
    /// machine, under the patch set to decide with), traced. The same decision and
    /// trace as [`Scenario::decide`] under `env.patches`, without building anything.
    /// An env of a machine of another size is refused.
    pub fn decide_in(
        &self,
        env: &WakeEnv,
    ) -> Result<(Decision, Trace), crate::wakeup::scenario::ScenarioError> {
        let n = self.machine.nr_cpus();
        let env_n = env.domains.cpu_map.nr_cpu_ids();
        if env_n != n {
            return Err(crate::wakeup::scenario::ScenarioError::Invalid(format!(
                "the wake-up's domains are of a {env_n}-CPU machine, the scenario's has {n} CPUs"
            )));
        }
        let r = self.wake_scenario().resolve_in(env)?;
        let mut t = Trace::default();
        let d = wake_up(env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
        Ok((d, t))
    }
}
fn rule(cpus: &str, state: CpuStateKind) -> CpuRule {
    CpuRule {
        cpus: cpus.to_string(),
        state: Some(state),
        ..CpuRule::default()
    }
}

fn task(id: u32, prev: Option<u32>, recent: Option<u32>) -> TaskSpec {
    TaskSpec {
        prev_cpu: prev,
        recent_used_cpu: recent,
        ..TaskSpec::new(id)
    }
}
/// A deterministic random set of busy CPUs: `round(n · permille / 1000)` of them,
/// picked by a seeded Fisher–Yates shuffle with the crate's one PRNG ([`crate::rng`]),
/// the same on every platform. (Links store the resulting list, never the seed, so
/// no link's meaning depends on the generator.)
pub fn random_busy(nr_cpus: u32, busy_permille: u32, seed: u64) -> CpuMask {
    let permille = u64::from(busy_permille.min(1000));
    let k = ((u64::from(nr_cpus) * permille + 500) / 1000) as usize;
    let mut order: Vec<u32> = (0..nr_cpus).collect();
    let mut rng = crate::rng::Rng::new(seed);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    CpuMask::from_cpus(nr_cpus, order.into_iter().take(k).map(CpuId))
}
