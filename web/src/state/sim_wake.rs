//! One simulated wake-up opened in the Wake-up tab ("click to explain").
//!
//! ```text
//!  timeline / live drawing: click a wake-up arrow
//!        │  Action::OpenSimWake(SimWakeRef { side, seed, wake, scale })
//!        ▼
//!  AppState.sim_wake = Capturing(ref) ── hooks::use_record sends worker Msg::Record
//!        │                                  { capture_wake: Some(N), .. }: the worker re-runs
//!        │                                  that side's run at that scale (deterministic)
//!        │                                  up to wake-up N
//!        ▼                                  and stops there
//!  Action::SimWakeCaptured(Ok(SimWake))  ── the captured `schedlab wake --state` file
//!        │
//!        ▼
//!  refresh_wake(): both sides decide the captured inputs (`WakeScenario::resolve_in`
//!  in each side's env), traced; `Action::CloseSimWake` returns to the hand-set wake-up
//! ```
//!
//! The run a [`SimWakeRef`] names is the Simulate tab's setup as the page holds it,
//! one point of it: the given side's patch set, seed `seed`, and the setup's workload
//! at scale `scale` (a sweep point the timeline shows), or when it names none at the
//! watched scale (`hooks::use_run::watched_scale`: its own scale, or a sweep's
//! largest point, the run the live view plays); `hooks::use_run::scale_ref` leaves
//! the watched scale unnamed, so those links read as they did before the field.
//! Since a run is deterministic, the reference alone reproduces the state, and
//! it is all the link carries (`scenario.wake.sim`): the captured file can be large
//! (6-10 KiB on 32 CPUs, a few hundred KiB on 384), so the page keeps it in memory
//! only and offers it as a download. A link holding a reference opens the Wake-up tab
//! capturing it again. Changing the simulation, or the patch set of the side the
//! wake-up came from, closes it (the reference would name another run).

use std::rc::Rc;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::scenario::SimWakeAt;
use schedlab_core::wakeup::scenario::WakeScenario;
use schedlab_core::wakeup::WakeEnv;

use super::{AppState, Side, WakeOutcome};

/// Which simulated wake-up: core's [`SimWakeAt`], the `wake`-th (from 1, as
/// `schedlab run --capture-wake N` counts) of side `side`'s run with seed `seed` at
/// sweep point `scale` (`None`: the watched scale). The scenario (so the link)
/// carries it in `wake.sim`.
pub type SimWakeRef = SimWakeAt;

/// A captured wake-up, as the worker returns it.
#[derive(Clone, Debug)]
pub struct SimWake {
    pub at: SimWakeRef,
    /// Simulated time of the wake-up (warm-up included).
    pub at_ns: u64,
    /// The CPU the simulation chose (the record's `cpu`).
    pub simulated_cpu: CpuId,
    /// The patch set of the run it came from, as text.
    pub patches: String,
    /// The state file, parsed.
    pub scenario: Rc<WakeScenario>,
    /// The state file as text (`schedlab wake --state` reads it).
    pub json: Rc<str>,
}

impl PartialEq for SimWake {
    /// Two captures of one reference are the same run's same wake-up.
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.at_ns == o.at_ns && Rc::ptr_eq(&self.json, &o.json)
    }
}

/// Where a simulated wake-up opened in the Wake-up tab stands.
#[derive(Clone, Debug, PartialEq)]
pub enum SimWakeStatus {
    /// The worker is re-running the run to it.
    Capturing(SimWakeRef),
    Ready(SimWake),
    Failed(SimWakeRef, String),
}

impl SimWakeStatus {
    pub fn at(&self) -> SimWakeRef {
        match self {
            SimWakeStatus::Capturing(r) | SimWakeStatus::Failed(r, _) => *r,
            SimWakeStatus::Ready(w) => w.at,
        }
    }
}

impl SimWake {
    /// Reads a worker's capture: the state file's text and what the record said.
    pub fn parse(
        at: SimWakeRef,
        at_ns: u64,
        simulated_cpu: u32,
        patches: String,
        json: &str,
    ) -> Result<SimWake, String> {
        let scenario = WakeScenario::from_json(json).map_err(|e| e.to_string())?;
        Ok(SimWake {
            at,
            at_ns,
            simulated_cpu: CpuId(simulated_cpu),
            patches,
            scenario: Rc::new(scenario),
            json: Rc::from(json),
        })
    }

    /// "wake-up #N of side A, seed S, t = … ms".
    pub fn origin(&self) -> String {
        format!(
            "wake-up #{} of side {}, seed {}, t = {}.{:06} ms",
            self.at.wake,
            side_name(self.at.side),
            self.at.seed,
            self.at_ns / 1_000_000,
            self.at_ns % 1_000_000
        )
    }

    /// Decides the captured inputs in `env` (either side's), traced, as `schedlab
    /// wake --state FILE --patches …` does.
    pub fn decide(&self, env: &WakeEnv) -> Result<WakeOutcome, String> {
        let r = self.scenario.resolve_in(env).map_err(|e| e.to_string())?;
        let mut trace = schedlab_core::wakeup::Trace::default();
        let decision =
            schedlab_core::wakeup::wake_up(env, &r.state, &r.wakee, &r.waker, r.flags, &mut trace);
        Ok(WakeOutcome {
            patches: env.patches,
            decision,
            trace,
        })
    }

    /// The drawing's busy CPUs, waker and prev for the captured inputs: the CPUs not
    /// running the idle task or with tasks queued, as `resolve_in` sets them.
    pub fn marks(&self, env: &WakeEnv) -> Option<(CpuMask, CpuId, CpuId)> {
        let r = self.scenario.resolve_in(env).ok()?;
        let n = env.domains.cpu_map.nr_cpu_ids();
        let mut busy = CpuMask::new(n);
        for (i, rq) in r.state.rqs.iter().enumerate() {
            if !rq.curr_is_idle || rq.nr_running > 0 {
                busy.set_cpu(CpuId(i as u32));
            }
        }
        Some((busy, r.waker.cpu, r.wakee.prev_cpu))
    }
}

pub fn side_name(s: Side) -> &'static str {
    match s {
        Side::A => "A",
        Side::B => "B",
    }
}

impl AppState {
    /// Closes the simulated wake-up when its reference would now name another run:
    /// the simulation changed, or the patch set of the side it came from.
    pub(super) fn close_stale_sim_wake(&mut self, before: &AppState) {
        let Some(at) = self.scenario.wake.sim else {
            self.sim_wake = None;
            return;
        };
        let side_set = |st: &AppState| match at.side {
            Side::A => Some(st.patches()),
            Side::B => st.wake().compare,
        };
        // A new reference (opened, or a link loaded) is not stale.
        let same_ref = before.scenario.wake.sim == Some(at);
        if same_ref && (self.sim() != before.sim() || side_set(self) != side_set(before)) {
            self.scenario.wake.sim = None;
            self.sim_wake = None;
        }
    }

    /// The captured simulated wake-up the Wake-up tab explains, once it is in.
    pub fn captured(&self) -> Option<&SimWake> {
        match &self.sim_wake {
            Some(SimWakeStatus::Ready(w)) => Some(w),
            _ => None,
        }
    }
}
