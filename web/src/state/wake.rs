//! What the wake-up tab shows and what it is computed from: the decisions with their
//! traces, the drawing's marks, and the domains of one machine under one patch set
//! (core's `WakeEnv`), built once and shared by the tabs.

use std::collections::BTreeMap;
use std::rc::Rc;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::{ScenarioMachine, WakeSetup};
use schedlab_core::wakeup::{Decision, Reject, Trace, WakeEnv};

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
