//! App state: the typed scenario, the caches built from it, and the [`Action`]s that
//! change it.
//!
//! ```text
//!  Action ─▶ reduce ─▶ AppState ─┬─ scenario: core's typed Scenario   (what the link carries)
//!                                ├─ env_a / env_b: WakeEnv           (domains; rebuilt on machine / patch change)
//!                                ├─ wake_a / wake_b                 (core's wake_up() decisions, traced)
//!                                └─ ui: errors, banner, heat (not in the link; the click
//!                                       mode, focus, shaded level and randomise inputs are
//!                                       the scenario's `page` and are)
//!  link_scenario() ─▶ core::scenario::encode ─▶ URL fragment
//! ```
//!
//! The state holds core's [`Scenario`] itself, not a mirror of it: every CPU, CPU list
//! and patch set in it is already one the machine has, so components read it without
//! checks and actions change it only through checked steps. The domains are built
//! once per machine and patch set, as core's `WakeEnv` (a side's [`Env`], keyed by
//! both): side A's always (the domain tabs draw it), side B's while the wake-up tab
//! compares; a wake-up decision decides in its side's env and builds nothing. The
//! decisions are recomputed only while the wake-up tab is open and their inputs (a
//! `PartialEq` key) changed. Errors from core
//! are kept as text so components can show them; nothing here panics on user input.
//!
//! ```text
//!  mod.rs            AppState, Action, the constructors and plain getters
//!  reduce.rs         the reducer (Reducible for AppState)
//!  link.rs           a URL fragment's page; the scenario and fragment the URL carries
//!  machine.rs        a new machine or patch set; a patch box's canonical patch set
//!  sim.rs            the Simulate tab's setup: default, fitted, estimated; its heat
//!  wake.rs           the wake-up decisions, their envs (domains) and the drawing's marks
//!  sim_wake.rs       a simulated wake-up opened in the Wake-up tab
//!  page_settings.rs  click mode, focus, shaded level, Randomise inputs, the diff
//!  lesson_step.rs    opening a lesson step
//!  designer.rs, designing.rs  the topology designer's form and its reducer steps
//!  designer_slit.rs           its NUMA distance grid (memory-only nodes, symmetry)
//! ```

use std::rc::Rc;
use std::sync::Arc;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::experiment::CpuSelection;
use schedlab_core::lesson;
use schedlab_core::patch::{Patch, PatchSet};
use schedlab_core::release::Release;
use schedlab_core::scenario::{
    KernelText, LessonStep, MachineChoice, Scenario, SimSetup, WakeSetup,
};
use schedlab_core::topology::{Machine, MachineSpec};
use yew::prelude::*;

pub use schedlab_core::scenario::View;

pub mod designer;
mod designer_slit;
mod designing;
mod lesson_step;
mod link;
mod machine;
mod page_settings;
mod reduce;
mod sim;
pub mod sim_wake;
mod wake;
use designer::{Designer, Field};
pub use link::embedded_banner;
pub use sim_wake::{SimWake, SimWakeRef, SimWakeStatus};
use wake::WakeKey;
pub use wake::{Env, WakeMarks, WakeOutcome};

/// The preset the page opens with: seed 01's machine, where CLS matters.
pub const DEFAULT_PRESET: &str = "kunpeng920-6426";

/// The machine picker's value while a custom machine is loaded.
pub const CUSTOM: &str = "custom";

/// The longest simulation a link may start on opening, in estimated seconds of this
/// page's workers; a longer one waits for the Run button (issue 16).
pub const LINK_BUDGET_S: f64 = 30.0;

/// Simulated events per second of one worker: the reference run in Chromium, page
/// build after `wasm-opt -Oz` (docs/performance.md, session 7: 4.6 M events/s).
pub const WORKER_EVENTS_PER_S: f64 = 4.6e6;

/// Workers the link budget counts on: `hooks::use_run`'s pool has one per hardware
/// thread, at least 2, so a machine with more only finishes sooner than estimated.
pub const WORKERS: usize = 2;

pub use schedlab_core::scenario::{ClickMode, Side};

/// The wake-up explainer's own state that is not part of the link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WakeUi {
    /// Why the last patch change was refused, if it was.
    pub patch_error: Option<String>,
    /// Why the last value typed in the wake-up's inputs (busy %, seed, nr_idle_scan)
    /// was refused: the field's name and the range it takes. The scenario stays.
    pub input_error: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AppState {
    /// What the page shows and the link carries. Its simulation is always set (the
    /// default one fitted to the machine until someone changes it).
    pub scenario: Scenario,
    /// Side A's domains: `build_sched_domains()` for the machine and patch set (in
    /// core's `WakeEnv`, which the wake-up decisions of side A share), or why it failed.
    env_a: Env,
    /// Side B's, while the wake-up tab compares another patch set (A's when the same).
    env_b: Option<Env>,
    pub ui: WakeUi,
    /// The decisions for side A and (when comparing) B, or why there is none.
    pub wake_a: Option<Result<Rc<WakeOutcome>, String>>,
    pub wake_b: Option<Result<Rc<WakeOutcome>, String>>,
    wake_key: Option<WakeKey>,
    /// A link (or machine) that could not be opened, shown above everything.
    pub banner: Option<String>,
    /// The custom-machine form is open.
    pub custom_open: bool,
    /// Why the last custom machine did not load, verbatim from core.
    pub custom_error: Option<String>,
    /// Why the last change to the simulation was refused, if it was.
    pub sim_error: Option<String>,
    /// Per side of the last finished simulation: each CPU's busy share, per mille
    /// (the drawing shades the focused side's). Not part of the link.
    pub sim_heat: Vec<Rc<Vec<(u32, u64)>>>,
    /// A simulation a link asked for whose estimate is past [`LINK_BUDGET_S`]: it
    /// does not start until the Run button ([`Action::RunHeld`]) or an edit of the
    /// simulation. The estimate, in seconds.
    pub held: Option<f64>,
    /// The topology designer, while open (`state::designer`); it follows the machine.
    pub designer: Option<Designer>,
    /// Text the custom-machine form opens with (a machine's per-CPU JSON, from the
    /// designer's "edit as JSON"), and a count that changes with each, so the form
    /// starts over.
    pub custom_prefill: (u32, String),
    /// A simulated wake-up the Wake-up tab explains in place of the hand-set one
    /// (`state::sim_wake`); `None`: the hand-set wake-up. Not part of the link.
    pub sim_wake: Option<SimWakeStatus>,
}

pub enum Action {
    SelectPreset(String),
    SelectRelease(Release),
    SelectCpu(CpuId),
    ShowTab(View),
    /// Shade a domain level's span in the drawing, or nothing.
    Highlight(Option<usize>),
    /// A click on a CPU in the drawing: selects it, or in the wake-up tab does what
    /// the click mode says.
    ClickCpu(CpuId),
    SetClickMode(ClickMode),
    /// The Domains tab's diff: the kernel compared with A's and the text compared.
    SetDiff(Option<PatchSet>, KernelText),
    ToggleBusy(CpuId),
    AllIdle,
    AllBusy,
    /// Busy fraction in permille and a seed: deterministic. Also keeps both as the
    /// Randomise inputs.
    RandomBusy {
        permille: u32,
        seed: u64,
    },
    /// Presentation mode's next (+1) or previous (-1) step: see
    /// [`AppState::present_step`].
    PresentStep(i32),
    /// The Randomise inputs changed (busy share per mille, seed); nothing is drawn.
    SetRandomInputs {
        permille: u32,
        seed: u64,
    },
    SetWaker(CpuId),
    SetPrev(CpuId),
    SetRecent(Option<CpuId>),
    SetSync(bool),
    SetHasIdleCores(Option<bool>),
    /// The waker's LLC's `nr_idle_scan` (None: derived); refused with the reason if
    /// past the LLC's weight, the scenario and its decisions kept.
    SetNrIdleScan(Option<u32>),
    /// A wake-up input that could not be read: the scenario stays, the reason shows.
    WakeInputError(String),
    /// A release for one side: its patches become that release's defaults.
    SetSideRelease(Side, Release),
    /// A patch box ticked or unticked on one side.
    TogglePatch(Side, Patch, bool),
    SetCompare(bool),
    Focus(Side),
    OpenCustom(bool),
    /// A pasted machine as the import module read it (`machine_import::load`): its
    /// spec becomes the machine, or the form shows why not and the machine stays.
    CustomRead(Result<Box<MachineSpec>, String>),
    /// A new simulation setup from the Simulate tab's inputs; refused (with the reason
    /// shown) if it cannot run on the machine.
    SetSim(SimSetup),
    /// The Simulate tab's CPU field as typed: parsed against the machine, or refused
    /// with the reason (the setup stays).
    SetSimCpus(String),
    /// A Simulate-tab input that could not be read: the setup stays, the reason shows.
    SimInputError(String),
    /// The utilisation of a finished simulation's sides (empty: none to show).
    SimHeat(Vec<Rc<Vec<(u32, u64)>>>),
    /// A URL fragment (on load or `hashchange`): a link, whose simulation is held
    /// if it costs more than [`LINK_BUDGET_S`].
    LoadFragment(String),
    /// A scenario the user picked on the page (an example): loaded as a link, but
    /// never held.
    OpenExample(String),
    /// Run the held simulation of a link.
    RunHeld,
    /// Open a lesson step (its own scene, if it has one, is loaded unless the page
    /// shows it already; a step without one keeps the page), or close the lesson.
    Lesson(Option<LessonStep>),
    DismissBanner,
    /// Opens the topology designer on the current machine, or closes it.
    OpenDesigner(bool),
    /// One edit of a designer field: the machine (or the custom workload) follows
    /// when the whole form is valid; otherwise the field shows why, and the page keeps
    /// the last machine.
    EditDesign(Field, String),
    /// The designer's way out for a machine it cannot draw as counts: the
    /// custom-machine form, holding the machine's per-CPU JSON.
    EditAsJson,
    /// Explain a simulated wake-up: the Wake-up tab opens, and a worker re-runs that
    /// side's run (the Simulate tab's setup with `seed`, deterministic) up to wake-up
    /// `wake` and captures its state (`hooks::use_record`), which both sides then
    /// decide. The timeline's arrows and the live drawing dispatch it.
    OpenSimWake(SimWakeRef),
    /// The worker's answer to [`Action::OpenSimWake`] (ignored if another wake-up
    /// was asked for meanwhile).
    SimWakeCaptured(SimWakeRef, Result<SimWake, String>),
    /// Back to the hand-set wake-up.
    CloseSimWake,
}

impl AppState {
    /// A preset on a release, with everything else at its default.
    pub fn new(preset: &str, release: Release) -> Result<Self, String> {
        let s = Scenario::preset(preset, PatchSet::release(release)).map_err(|e| e.to_string())?;
        Ok(Self::from_scenario(s))
    }

    /// The page showing `s`, with its caches built.
    pub fn from_scenario(s: Scenario) -> Self {
        let env_a = Env::build(&s.machine, s.patches);
        let mut st = AppState {
            scenario: s,
            env_a,
            env_b: None,
            ui: WakeUi::default(),
            wake_a: None,
            wake_b: None,
            wake_key: None,
            banner: None,
            custom_open: false,
            custom_error: None,
            sim_error: None,
            sim_heat: Vec::new(),
            held: None,
            designer: None,
            custom_prefill: (0, String::new()),
            sim_wake: None,
        };
        // A link's simulated wake-up: captured again by re-running (use_capture).
        st.sim_wake = st.scenario.wake.sim.map(SimWakeStatus::Capturing);
        st.fit_sim();
        st.refresh_wake();
        st
    }

    /// The machine picker's value: the preset's name, or [`CUSTOM`].
    pub fn preset(&self) -> &str {
        self.scenario.machine.preset_name().unwrap_or(CUSTOM)
    }

    /// The loaded custom machine's spec, if the machine is one.
    pub fn custom(&self) -> Option<&MachineSpec> {
        match self.scenario.machine.choice() {
            MachineChoice::Spec(spec) => Some(spec),
            MachineChoice::Preset(_) => None,
        }
    }

    pub fn patches(&self) -> PatchSet {
        self.scenario.patches
    }

    pub fn cpu(&self) -> CpuId {
        self.scenario.cpu
    }

    pub fn tab(&self) -> View {
        self.scenario.view
    }

    /// The wake-up explainer's inputs.
    pub fn wake(&self) -> &WakeSetup {
        &self.scenario.wake
    }

    /// The built machine.
    pub fn machine(&self) -> &Arc<Machine> {
        self.scenario.machine()
    }

    pub fn release(&self) -> Release {
        self.scenario.patches.release
    }

    fn nr_cpus(&self) -> u32 {
        self.scenario.machine.nr_cpus()
    }

    /// The span of the highlighted level of the chosen CPU, if any. Only while the
    /// level cards are on screen: shading with no visible reason would puzzle.
    /// In the Simulate tab, the CPUs the workload may use.
    pub fn highlight_span(&self) -> Option<CpuMask> {
        match self.tab() {
            View::Simulate => match &self.sim().cpus {
                CpuSelection::All => None,
                cpus => cpus.mask(self.machine()).ok(),
            },
            View::Domains => {
                let level = usize::from(self.scenario.page.highlight?);
                let domains = self.domains().ok()?;
                let sd = domains.try_cpu(self.cpu())?.domains.get(level)?;
                Some(sd.span.clone())
            }
            _ => None,
        }
    }

    /// The patch sets side by side: A, and B when comparing.
    pub fn sides(&self) -> Vec<PatchSet> {
        self.scenario.sides()
    }
}

impl Default for AppState {
    /// Core's default scene (`lesson::examples::DEFAULT_SCENE`): the Domains tab of
    /// [`DEFAULT_PRESET`] on [`Release::DEFAULT`], with a busy wake-up whose two sides
    /// differ waiting on the Wake-up tab.
    fn default() -> Self {
        // Core's tests build the default scene; the preset builds on every release
        // (`every_preset_builds`), so the fallback is for a broken build only.
        match lesson::examples::DEFAULT_SCENE.scenario() {
            Ok(s) => AppState::from_scenario(s),
            Err(_) => AppState::new(DEFAULT_PRESET, Release::DEFAULT)
                .unwrap_or_else(|e| unreachable!("the default preset builds: {e}")),
        }
    }
}

/// What components receive through context.
pub type AppContext = UseReducerHandle<AppState>;

#[cfg(test)]
mod designer_firmware_tests;
#[cfg(test)]
mod designer_numa_tests;
#[cfg(test)]
mod designer_tests;
#[cfg(test)]
mod sim_wake_tests;
#[cfg(test)]
mod tests;
