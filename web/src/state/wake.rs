//! What the wake-up tab shows and what it is computed from: the decisions with their
//! traces, the drawing's marks, and the domains of one machine under one patch set
//! (core's `WakeEnv`), built once and shared by the tabs; and [`AppState`]'s side of
//! them: recomputing the decisions when their inputs changed, rebuilding a side's env
//! when its machine or patch set changed, the marks of the focused side.

use std::collections::BTreeMap;
use std::rc::Rc;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::{ScenarioMachine, View, WakeSetup};
use schedlab_core::sched_domain::SchedDomains;
use schedlab_core::wakeup::{Decision, Reject, Step, Trace, WakeEnv};

use super::{AppState, Side};

/// One decision of core's `wake_up()` and its trace.
#[derive(Clone, Debug, PartialEq)]
pub struct WakeOutcome {
    pub patches: PatchSet,
    pub decision: Decision,
    pub trace: Trace,
}

/// What the drawing marks for a wake-up: probe order and reason per CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct WakeMarks {
    pub busy: CpuMask,
    pub waker: CpuId,
    pub prev: CpuId,
    /// The chosen CPU of A, and of B when comparing.
    pub chosen_a: Option<CpuId>,
    pub chosen_b: Option<CpuId>,
    /// Per probed CPU: its probe numbers (1-based, in order) and the last verdict.
    pub probes: BTreeMap<u32, (Vec<u32>, Option<Reject>)>,
}

/// The domains of one machine under one patch set, as core's [`WakeEnv`] (the
/// domains and the wake-up path's packed view of them), or why the kernel would
/// build none. Built once per (machine, patch set) and shared: equal when built for
/// the same key and the same build.
#[derive(Clone, Debug)]
pub struct Env {
    machine: ScenarioMachine,
    patches: PatchSet,
    built: Result<Rc<WakeEnv>, String>,
}

impl Env {
    pub(super) fn build(machine: &ScenarioMachine, patches: PatchSet) -> Env {
        Env {
            machine: machine.clone(),
            patches,
            built: WakeEnv::new(machine.machine(), patches)
                .map(Rc::new)
                .map_err(|e| e.to_string()),
        }
    }

    /// Whether it was built for `machine` under `patches`.
    pub(super) fn is_for(&self, machine: &ScenarioMachine, patches: PatchSet) -> bool {
        self.patches == patches && self.machine == *machine
    }

    /// The env itself, or why there is none.
    pub fn get(&self) -> Result<&Rc<WakeEnv>, &str> {
        self.built.as_ref().map_err(String::as_str)
    }
}

impl PartialEq for Env {
    fn eq(&self, other: &Self) -> bool {
        self.patches == other.patches
            && self.machine == other.machine
            && match (&self.built, &other.built) {
                (Ok(a), Ok(b)) => Rc::ptr_eq(a, b),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}

/// The inputs the wake-up decisions were computed for.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct WakeKey {
    pub(super) machine: ScenarioMachine,
    pub(super) patches: PatchSet,
    pub(super) wake: WakeSetup,
    /// The captured simulated wake-up decided in place of `wake`, if one is open.
    pub(super) sim: Option<super::SimWake>,
}

impl AppState {
    /// The marks the drawing shows in the wake-up tab.
    pub fn wake_marks(&self) -> Option<WakeMarks> {
        if self.tab() != View::Wakeup {
            return None;
        }
        let ok = |o: &Option<Result<Rc<WakeOutcome>, String>>| {
            o.as_ref().and_then(|r| r.as_ref().ok()).cloned()
        };
        let (a, b) = (ok(&self.wake_a), ok(&self.wake_b));
        let focused = match self.focus() {
            Side::B if b.is_some() => b.clone(),
            _ => a.clone(),
        };
        let mut probes: BTreeMap<u32, (Vec<u32>, Option<Reject>)> = BTreeMap::new();
        if let Some(o) = &focused {
            let mut n = 0;
            for s in &o.trace.steps {
                if let Step::Probe { cpu, reject, .. } = s {
                    n += 1;
                    let e = probes.entry(cpu.0).or_default();
                    e.0.push(n);
                    e.1 = *reject;
                }
            }
        }
        let w = &self.scenario.wake;
        let (busy, waker, prev) = self
            .captured()
            .zip(self.env_a.get().ok())
            .and_then(|(c, env)| c.marks(env))
            .unwrap_or_else(|| (w.busy.clone(), w.waker, w.prev));
        Some(WakeMarks {
            busy,
            waker,
            prev,
            chosen_a: a.map(|o| o.decision.cpu),
            chosen_b: b.map(|o| o.decision.cpu),
            probes,
        })
    }

    /// Recomputes the decisions if the wake-up tab is open and its inputs changed.
    pub(super) fn refresh_wake(&mut self) {
        self.refresh_envs();
        if self.tab() != View::Wakeup {
            return;
        }
        let key = WakeKey {
            machine: self.scenario.machine.clone(),
            patches: self.scenario.patches,
            wake: self.scenario.wake.clone(),
            sim: self.captured().cloned(),
        };
        if self.wake_key.as_ref() == Some(&key) {
            return;
        }
        let s = &self.scenario;
        let captured = key.sim.as_ref();
        let decide = |env: &Env| -> Result<Rc<WakeOutcome>, String> {
            let env = env.get()?;
            if let Some(w) = captured {
                return w.decide(env).map(Rc::new);
            }
            let (decision, trace) = s.decide_in(env).map_err(|e| e.to_string())?;
            Ok(Rc::new(WakeOutcome {
                patches: env.patches,
                decision,
                trace,
            }))
        };
        self.wake_a = Some(decide(&self.env_a));
        self.wake_b = self.env_b.as_ref().map(decide);
        self.wake_key = Some(key);
    }

    /// The most `nr_idle_scan` the waker's LLC can hold: its weight (None without
    /// domains or an LLC). Mirrors the bound core's wake-up scenario checks.
    pub fn nr_idle_scan_max(&self) -> Option<u32> {
        let env = self.env_a.get().ok()?;
        let llc = env.llc_shared_of(self.scenario.wake.waker)?;
        Some(env.domains.cpu(llc).sd_llc_size)
    }

    /// Side A's domains, or why the kernel would build none.
    pub fn domains(&self) -> Result<&SchedDomains, &str> {
        self.env_a.get().map(|e| &e.domains)
    }

    /// Rebuilds a side's env when its machine or patch set changed, and only then:
    /// A's always, B's while the wake-up tab compares (A's own when B's patch set is
    /// A's).
    pub(super) fn refresh_envs(&mut self) {
        let (machine, a) = (&self.scenario.machine, self.scenario.patches);
        if !self.env_a.is_for(machine, a) {
            self.env_a = Env::build(machine, a);
        }
        let open = self.tab() == View::Wakeup;
        self.env_b = match (self.scenario.wake.compare, open) {
            (Some(b), true) => Some(match self.env_b.take() {
                Some(env) if env.is_for(machine, b) => env,
                _ if b == a => self.env_a.clone(),
                _ => Env::build(machine, b),
            }),
            (None, true) => None,
            // Kept while the tab is closed, so coming back builds nothing.
            (_, false) => self.env_b.take(),
        };
    }
}
