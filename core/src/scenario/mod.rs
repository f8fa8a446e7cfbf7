//! The page's scenario and its URL projection.
//!
//! ```text
//!  Scenario ──encode──▶ "v2:" + base64url(deflate(JSON))   (the link fragment after '#')
//!     ▲                          │     ("v1:" + base64url(JSON) still decodes)
//!     └──────────decode──────────┘  version check · base64 · (inflate) · JSON · validate
//!
//!  Scenario { machine: ScenarioMachine (preset name | MachineSpec, built),
//!             patches: PatchSet, cpu: CpuId, view,
//!             wake: { busy: CpuMask, waker, prev, recent, sync, overrides, compare: PatchSet,
//!                     cookies: [{ cpus, cookie }], wakee_cookie },
//!             sim: { workload, cpus: CpuSelection, duration_ms, seed, sweep } (optional),
//!             lesson: { lesson, step } (optional),
//!             page: { click mode, focused side, shaded level, randomise inputs,
//!                     domain diff: kernel, text } }
//! ```
//!
//! Parse, don't validate: [`decode`] reads the link's JSON into the serde structs of
//! [`v1`] (the wire form, nothing else uses them) and turns them into a typed
//! [`Scenario`]: the machine built, patch sets parsed, CPU lists as masks of that
//! machine, CPU ids in range, the simulation one that can run. So a link either opens
//! as it was shared or says what is wrong with it, and code holding a `Scenario` has
//! nothing left to check. Old versions keep decoding: `v2` ([`v2`]) is a new container
//! (deflate) around `v1`'s JSON wire form, it does not reinterpret `v1`, and every v1
//! link opens as it did (core/tests/fixtures/links.txt holds old ones).
//!
//! The wake-up part maps onto the `schedlab wake` state file
//! ([`WakeScenario`](crate::wakeup::scenario::WakeScenario)), so the page and the CLI
//! explain a wake-up through the same `resolve()` and `wake_up()`.
//!
//! The files: this one holds the typed [`Scenario`], its machine, view and lesson step,
//! and [`ScenarioError`]; `link.rs` the link's encoding and versions ([`encode`],
//! [`decode`]); `wake.rs` the wake-up part ([`WakeSetup`]) and its decision; `sim.rs`
//! the simulation ([`SimSetup`]); [`page`] the page's own settings; [`v1`] and [`v2`]
//! the wire form and its container.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use std::sync::Arc;

use crate::cpumask::{CpuId, CpuMaskError};
use crate::patch::{PatchError, PatchSet};
use crate::topology::{presets, Machine, MachineSpec, TopologyError};

pub mod page;
pub use page::{ClickMode, KernelText, PageSettings, Side};
mod link;
mod sim;
mod wake;
mod wire_error;
pub use link::{decode, encode, encode_v1, wire_json, MAX_FRAGMENT_BYTES, VERSION};
pub use sim::{SimSetup, MAX_SIM_MS, MAX_SWEEP_POINTS};
pub use wake::{random_busy, CookieRule, SimWakeAt, WakeSetup};

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ScenarioError {
    #[error("this link does not hold a schedlab scenario: it should start with #v2: or #v1: (got {0:?})")]
    NotAScenario(String),
    #[error("this link is from schedlab scenario version {0}, which this page does not know (it reads v1 and v2); it may come from a newer schedlab")]
    UnknownVersion(String),
    #[error("this link is {bytes} bytes long; links up to {MAX_FRAGMENT_BYTES} bytes are read")]
    TooLong { bytes: usize },
    #[error("this link is damaged: {0}")]
    Base64(String),
    /// The link's text is not a scenario's JSON at all (cut short, not JSON).
    #[error("this link's scenario cannot be read: {0}")]
    Json(String),
    /// A field of the link's JSON holds the wrong thing, or is missing or unknown:
    /// `path` as `sim.seed`, `wake.cookies[1].cpus` ([`decode`] finds it).
    #[error("this link's field `{path}` {problem}")]
    Field { path: String, problem: String },
    #[error("this link names machine preset {name:?}, which this page does not know; known presets: {known}{}", crate::near::did_you_mean(name, known.split(", ")))]
    UnknownPreset { name: String, known: String },
    #[error("this link's machine is not valid: {0}")]
    Machine(TopologyError),
    #[error("this link's patch set {text:?} is not valid: {err}")]
    Patches { text: String, err: PatchError },
    #[error("this link's {field} is not a valid CPU list: {err}")]
    CpuList {
        field: &'static str,
        err: CpuMaskError,
    },
    #[error("this link's simulation cannot run: {0}")]
    Sim(String),
    #[error("this link's page settings are not valid: {0}")]
    Page(String),
    #[error("this link's {field} is CPU {cpu}, but the machine has CPUs 0-{last}")]
    CpuOutOfRange {
        field: &'static str,
        cpu: u32,
        last: u32,
    },
}

/// The machine: a preset by name, or a full spec (imported or hand-written). This is
/// also its form in a link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MachineChoice {
    Preset(String),
    Spec(Box<MachineSpec>),
}

impl MachineChoice {
    /// Builds the machine, or says why it cannot be built.
    pub fn build(&self) -> Result<Machine, ScenarioError> {
        match self {
            MachineChoice::Preset(name) => match presets::preset(name) {
                Some(p) => p.spec().build().map_err(ScenarioError::Machine),
                None => Err(ScenarioError::UnknownPreset {
                    name: name.clone(),
                    known: presets::PRESETS
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                }),
            },
            MachineChoice::Spec(spec) => spec.build().map_err(ScenarioError::Machine),
        }
    }
}

/// A scenario's machine: where it came from and the machine built from it, shared.
/// Two are equal when they came from the same choice (the build is a function of it).
#[derive(Clone, Debug)]
pub struct ScenarioMachine {
    choice: MachineChoice,
    built: Arc<Machine>,
}

impl ScenarioMachine {
    /// Builds `choice`. A custom machine's explicit per-CPU spec that describes a
    /// regular machine is kept in the regular form ([`MachineSpec::compact`], which
    /// builds the identical machine), so its links stay short.
    pub fn new(choice: MachineChoice) -> Result<ScenarioMachine, ScenarioError> {
        let built = Arc::new(choice.build()?);
        let choice = match choice {
            MachineChoice::Spec(spec) => match spec.compact(&built) {
                Some(short) => MachineChoice::Spec(Box::new(short)),
                None => MachineChoice::Spec(spec),
            },
            preset => preset,
        };
        Ok(ScenarioMachine { choice, built })
    }

    /// A preset by name.
    pub fn preset(name: &str) -> Result<ScenarioMachine, ScenarioError> {
        ScenarioMachine::new(MachineChoice::Preset(name.to_string()))
    }

    pub fn choice(&self) -> &MachineChoice {
        &self.choice
    }

    /// The preset's name, or `None` for a custom machine.
    pub fn preset_name(&self) -> Option<&str> {
        match &self.choice {
            MachineChoice::Preset(n) => Some(n),
            MachineChoice::Spec(_) => None,
        }
    }

    pub fn machine(&self) -> &Arc<Machine> {
        &self.built
    }

    pub fn nr_cpus(&self) -> u32 {
        self.built.nr_cpus()
    }
}

impl PartialEq for ScenarioMachine {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.built, &other.built) || self.choice == other.choice
    }
}

/// What the right-hand panel shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum View {
    /// The chosen CPU's domain levels as cards.
    #[default]
    Domains,
    /// `sched_domain_debug()` text.
    Dmesg,
    /// The debugfs files.
    Debugfs,
    /// The wake-up explainer.
    Wakeup,
    /// The simulator: a workload run under both patch sets, with live graphs.
    Simulate,
}
/// A step of one of the page's lessons, as a link names it: lesson `lesson` (from 1),
/// step `step` (from 1). Which lessons exist is the page's to say (`lesson`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LessonStep {
    pub lesson: u32,
    pub step: u32,
}
/// Everything the page shows, typed and consistent: every CPU, list and patch set is
/// one the machine and the modelled releases have, and the simulation can run.
/// Built by [`decode`] or [`Scenario::preset`]; the page changes it through checked
/// actions.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub machine: ScenarioMachine,
    pub patches: PatchSet,
    /// The CPU whose domains are shown.
    pub cpu: CpuId,
    pub view: View,
    pub wake: WakeSetup,
    /// The simulation (the page's default when absent).
    pub sim: Option<SimSetup>,
    /// The lesson step the page shows beside the scenario, if any.
    pub lesson: Option<LessonStep>,
    /// The page's own settings ([`page`]): they change no decision or number.
    pub page: PageSettings,
}

impl Scenario {
    /// A preset on a patch set, CPU 0, the domain cards, every CPU idle.
    pub fn preset(name: &str, patches: PatchSet) -> Result<Scenario, ScenarioError> {
        Ok(Scenario::on(ScenarioMachine::preset(name)?, patches))
    }

    /// `machine` on a patch set, CPU 0, the domain cards, every CPU idle.
    pub fn on(machine: ScenarioMachine, patches: PatchSet) -> Scenario {
        let n = machine.nr_cpus();
        Scenario {
            machine,
            patches,
            cpu: CpuId(0),
            view: View::Domains,
            wake: WakeSetup::idle(n),
            sim: None,
            lesson: None,
            page: PageSettings::default(),
        }
    }

    /// The built machine.
    pub fn machine(&self) -> &Arc<Machine> {
        self.machine.machine()
    }

    /// The patch sets side by side: A, and B when comparing.
    pub fn sides(&self) -> Vec<PatchSet> {
        std::iter::once(self.patches)
            .chain(self.wake.compare)
            .collect()
    }
}

fn parse_patches(text: &str) -> Result<PatchSet, ScenarioError> {
    text.parse().map_err(|err| ScenarioError::Patches {
        text: text.to_string(),
        err,
    })
}

#[cfg(test)]
mod tests;
/// Version 1 of the link: its JSON, as serde structs. These are the wire form only:
/// [`decode`] turns them into a [`Scenario`] at once, and [`encode`] writes them from
/// one. Their field names, order and defaults are frozen: every v1 link ever written
/// must keep opening, and a scenario must keep encoding to the same bytes.
pub mod v1;
pub mod v2;
