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

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::experiment::{estimate_events, CpuSelection};
use schedlab_core::lesson;
use schedlab_core::patch::{Patch, PatchSet};
use schedlab_core::release::Release;
use schedlab_core::scenario::{
    self, KernelText, LessonStep, MachineChoice, PageSettings, Scenario, ScenarioMachine, SimSetup,
    WakeSetup,
};
use schedlab_core::sched_domain::SchedDomains;
use schedlab_core::topology::{Machine, MachineSpec};
use schedlab_core::wakeup::{Reject, Step};
use yew::prelude::*;

pub use schedlab_core::scenario::View;

pub mod designer;
mod designing;
mod lesson_step;
mod page_settings;
pub mod sim_wake;
mod wake;
use designer::{Designer, Field};
use designing::designer_effect;
use lesson_step::Opened;
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
    SetNrIdleScan(Option<u32>),
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

/// The simulation a page opens with, before anyone changes it.
fn default_sim() -> &'static SimSetup {
    static DEFAULT: OnceLock<SimSetup> = OnceLock::new();
    DEFAULT.get_or_init(SimSetup::default)
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

    /// The page for a URL fragment: the default page with a banner if it is bad, the
    /// default page without one if there is none.
    pub fn from_fragment(fragment: &str) -> Self {
        let f = fragment.trim().trim_start_matches('#');
        if f.is_empty() {
            return AppState::default();
        }
        let st = Rc::new(AppState::default()).reduce(Action::LoadFragment(f.to_string()));
        Rc::try_unwrap(st).unwrap_or_else(|rc| (*rc).clone())
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

    /// The simulation the Simulate tab runs (always one that can run on the machine).
    pub fn sim(&self) -> &SimSetup {
        self.scenario.sim.as_ref().unwrap_or_else(|| default_sim())
    }

    /// What the URL carries: the scenario, without the simulation when it is the
    /// untouched default and another tab is open (links without one stay short).
    pub fn link_scenario(&self) -> Scenario {
        let mut s = self.scenario.clone();
        // A simulated wake-up's reference names the simulation: it stays then.
        if s.view != View::Simulate && s.sim.as_ref() == Some(default_sim()) && s.wake.sim.is_none()
        {
            s.sim = None;
        }
        s
    }

    /// Keeps the simulation runnable on a new machine: CPUs it does not have become
    /// `all`, and a setup that still cannot run becomes the default one.
    fn fit_sim(&mut self) {
        let m = self.scenario.machine().clone();
        let patches = self.scenario.patches;
        let mut sim = self.sim().clone();
        if sim.run_spec(&m, patches).is_err() {
            sim.cpus = CpuSelection::All;
            if sim.run_spec(&m, patches).is_err() {
                sim = SimSetup {
                    cpus: CpuSelection::All,
                    ..SimSetup::default()
                };
            }
        }
        // An untouched default that needed no fitting stays the default (and so out
        // of links for other tabs).
        self.scenario.sim = Some(sim);
    }

    /// About how long the simulation takes in this page's workers, in seconds: core's
    /// `estimate_events` of each point under each side and seed, at
    /// [`WORKER_EVENTS_PER_S`] on [`WORKERS`] workers (no faster than its longest
    /// point).
    pub fn sim_estimate_s(&self) -> f64 {
        let sim = self.sim();
        let mut total = 0.0f64;
        let mut longest = 0.0f64;
        let mut n = 0usize;
        for threads in sim.points() {
            for p in self.sides() {
                let Ok(spec) = sim.point_spec(self.machine(), p, threads) else {
                    continue;
                };
                let secs = estimate_events(&spec) as f64 / WORKER_EVENTS_PER_S;
                let seeds = sim.seeds.max(1);
                total += secs * f64::from(seeds);
                longest = longest.max(secs);
                n += seeds as usize;
            }
        }
        (total / n.clamp(1, WORKERS) as f64).max(longest)
    }

    /// The URL fragment (without '#').
    pub fn fragment(&self) -> String {
        scenario::encode(&self.link_scenario())
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

    /// In the Simulate tab after a run: the focused side's per-CPU utilisation.
    pub fn heat(&self) -> Option<Rc<Vec<(u32, u64)>>> {
        if self.tab() != View::Simulate {
            return None;
        }
        let i = match self.focus() {
            Side::B if self.scenario.wake.compare.is_some() => 1,
            _ => 0,
        };
        self.sim_heat.get(i).cloned()
    }

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

    /// Closes the simulated wake-up when its reference would now name another run:
    /// the simulation changed, or the patch set of the side it came from.
    fn close_stale_sim_wake(&mut self, before: &AppState) {
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

    /// Recomputes the decisions if the wake-up tab is open and its inputs changed.
    fn refresh_wake(&mut self) {
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

    /// Side A's domains, or why the kernel would build none.
    pub fn domains(&self) -> Result<&SchedDomains, &str> {
        self.env_a.get().map(|e| &e.domains)
    }

    /// Rebuilds a side's env when its machine or patch set changed, and only then:
    /// A's always, B's while the wake-up tab compares (A's own when B's patch set is
    /// A's).
    fn refresh_envs(&mut self) {
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

    /// A new machine: the page starts over on it, keeping the tab, the wake-up
    /// switches, the banner and the simulation (fitted to it).
    fn set_machine(&mut self, machine: ScenarioMachine) {
        let mut s = Scenario::on(machine, self.scenario.patches);
        s.view = self.scenario.view;
        s.wake.sync = self.scenario.wake.sync;
        s.wake.compare = self.scenario.wake.compare;
        s.sim = self.scenario.sim.clone();
        s.page = PageSettings {
            highlight: None,
            ..self.scenario.page
        };
        let mut next = Self::from_scenario(s);
        next.banner = self.banner.clone();
        *self = next;
    }

    /// The patch set of a side with `patch` ticked or unticked, through the canonical
    /// `6.6+cluster` spelling so the page and the CLI read patch sets the same way.
    fn toggled(base: PatchSet, patch: Patch, on: bool) -> Result<PatchSet, String> {
        let defaults = PatchSet::release(base.release);
        let mut want: Vec<Patch> = Patch::ALL.into_iter().filter(|p| base.has(*p)).collect();
        want.retain(|p| *p != patch);
        if on {
            // cluster and cluster-scan are two versions of one series: ticking one
            // unticks the other.
            want.retain(|p| {
                !matches!(
                    (patch, p),
                    (Patch::Cluster, Patch::ClusterScan) | (Patch::ClusterScan, Patch::Cluster)
                )
            });
            want.push(patch);
        }
        let mut text = base.release.to_string();
        for p in Patch::ALL {
            match (defaults.has(p), want.contains(&p)) {
                (true, false) => text.push_str(&format!("-{}", p.name())),
                (false, true) => text.push_str(&format!("+{}", p.name())),
                _ => {}
            }
        }
        let mut set: PatchSet = text.parse().map_err(|e| format!("{text}: {e}"))?;
        set.features = base.features;
        Ok(set)
    }

    /// A new patch set for side A: the domains follow it.
    fn set_patches(&mut self, set: PatchSet) {
        self.scenario.patches = set;
        self.refresh_envs();
        self.scenario.page.highlight = None;
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

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let (closing, editing) = designer_effect(&action);
        let mut next = (*self).clone();
        let nr = self.nr_cpus();
        let valid = |c: CpuId| c.0 < nr;
        let wake = &mut next.scenario.wake;
        match action {
            Action::SelectPreset(name) => {
                if name == CUSTOM {
                    next.custom_open = true;
                } else if name == self.preset() {
                    return self;
                } else {
                    match ScenarioMachine::preset(&name) {
                        Ok(m) => next.set_machine(m),
                        Err(e) => next.banner = Some(e.to_string()),
                    }
                }
            }
            Action::SelectRelease(release) | Action::SetSideRelease(Side::A, release) => {
                if release == self.release() {
                    return self;
                }
                next.set_patches(PatchSet::release(release));
                next.ui.patch_error = None;
            }
            Action::SetSideRelease(Side::B, release) => {
                wake.compare = Some(PatchSet::release(release));
                next.ui.patch_error = None;
            }
            Action::TogglePatch(side, patch, on) => {
                let base = match side {
                    Side::A => self.patches(),
                    Side::B => self.wake().compare.unwrap_or(self.patches()),
                };
                match AppState::toggled(base, patch, on) {
                    Ok(set) => {
                        next.ui.patch_error = None;
                        match side {
                            Side::A => next.set_patches(set),
                            Side::B => next.scenario.wake.compare = Some(set),
                        }
                    }
                    Err(e) => next.ui.patch_error = Some(e),
                }
            }
            Action::SetCompare(on) => {
                wake.compare = if on {
                    // The teaching default: the same kernel with or without seed 01.
                    let p = self.patches();
                    let flip = !p.has(Patch::Cluster);
                    Some(AppState::toggled(p, Patch::Cluster, flip).unwrap_or(p))
                } else {
                    None
                };
                next.scenario.page.focus = Side::A;
            }
            Action::SelectCpu(cpu) => {
                // A CPU outside the machine is ignored rather than trusted.
                if !valid(cpu) {
                    return self;
                }
                next.scenario.cpu = cpu;
                next.scenario.page.highlight = None;
            }
            Action::ClickCpu(cpu) => {
                if !valid(cpu) {
                    return self;
                }
                if self.tab() != View::Wakeup {
                    return self.reduce(Action::SelectCpu(cpu));
                }
                // A captured wake-up's inputs are the simulation's: not edited here.
                if self.sim_wake.is_some() {
                    return self;
                }
                match self.click() {
                    ClickMode::ToggleBusy => return self.reduce(Action::ToggleBusy(cpu)),
                    ClickMode::Waker => wake.waker = cpu,
                    ClickMode::Prev => wake.prev = cpu,
                }
            }
            action @ (Action::SetClickMode(_)
            | Action::SetDiff(..)
            | Action::Focus(_)
            | Action::RandomBusy { .. }
            | Action::SetRandomInputs { .. }
            | Action::PresentStep(_)
            | Action::Highlight(_)) => next.reduce_page(&self, action),
            Action::ToggleBusy(cpu) => {
                if !valid(cpu) {
                    return self;
                }
                if wake.busy.test_cpu(cpu) {
                    wake.busy.clear_cpu(cpu);
                } else {
                    wake.busy.set_cpu(cpu);
                }
            }
            Action::AllIdle => wake.busy = CpuMask::new(nr),
            Action::AllBusy => wake.busy = CpuMask::full(nr),
            Action::SetWaker(c) if valid(c) => wake.waker = c,
            Action::SetPrev(c) if valid(c) => wake.prev = c,
            Action::SetRecent(c) if c.is_none_or(valid) => wake.recent = c,
            Action::SetWaker(_) | Action::SetPrev(_) | Action::SetRecent(_) => return self,
            Action::SetSync(v) => wake.sync = v,
            Action::SetHasIdleCores(v) => wake.has_idle_cores = v,
            Action::SetNrIdleScan(v) => wake.nr_idle_scan = v,
            Action::ShowTab(tab) => next.scenario.view = tab,
            Action::OpenCustom(open) => {
                next.custom_open = open;
                next.custom_error = None;
            }
            Action::CustomRead(read) => {
                let loaded = read.and_then(|spec| {
                    ScenarioMachine::new(MachineChoice::Spec(spec)).map_err(|e| e.to_string())
                });
                match loaded {
                    Ok(m) => {
                        next.set_machine(m);
                        next.custom_open = true;
                        next.custom_error = None;
                    }
                    Err(e) => next.custom_error = Some(e),
                }
            }
            Action::LoadFragment(f) => {
                let f = f.trim().trim_start_matches('#').to_string();
                if f.is_empty() || f == self.fragment() {
                    return self;
                }
                match scenario::decode(&f) {
                    Ok(s) => {
                        next = AppState::from_scenario(s);
                        let secs = next.sim_estimate_s();
                        next.held = (secs > LINK_BUDGET_S).then_some(secs);
                    }
                    Err(e) => {
                        next.banner = Some(format!(
                        "This link could not be opened, so the page keeps its current scenario: {e}"
                    ))
                    }
                }
            }
            Action::DismissBanner => next.banner = None,
            action @ (Action::OpenDesigner(_) | Action::EditAsJson | Action::EditDesign(..)) => {
                next.reduce_designer(&self, action)
            }
            Action::Lesson(None) => next.scenario.lesson = None,
            Action::Lesson(Some(at)) => match self.open_lesson(&mut next, at) {
                Opened::Unknown => return self,
                // A step without a scene of its own keeps the page as the student left it.
                Opened::Kept => {
                    next.refresh_wake();
                    return Rc::new(next);
                }
                Opened::Loaded => {}
            },
            Action::RunHeld => next.held = None,
            Action::OpenExample(f) => {
                let mut st = (*self.reduce(Action::LoadFragment(f))).clone();
                st.held = None;
                return Rc::new(st);
            }
            Action::SimHeat(heat) => next.sim_heat = heat,
            Action::OpenSimWake(at) => {
                if at.wake == 0 {
                    return self;
                }
                next.scenario.wake.sim = Some(at);
                next.sim_wake = Some(SimWakeStatus::Capturing(at));
                next.scenario.view = View::Wakeup;
            }
            Action::SimWakeCaptured(at, got) => {
                if self.scenario.wake.sim != Some(at) {
                    return self;
                }
                next.sim_wake = Some(match got {
                    Ok(w) => SimWakeStatus::Ready(w),
                    Err(e) => SimWakeStatus::Failed(at, e),
                });
            }
            Action::CloseSimWake => {
                next.sim_wake = None;
                next.scenario.wake.sim = None;
            }
            Action::SimInputError(e) => next.sim_error = Some(e),
            Action::SetSimCpus(text) => match CpuSelection::parse(self.machine(), &text) {
                Ok(cpus) => {
                    let sim = SimSetup {
                        cpus,
                        ..self.sim().clone()
                    };
                    return self.reduce(Action::SetSim(sim));
                }
                Err(e) => next.sim_error = Some(format!("CPUs {e}")),
            },
            Action::SetSim(sim) => match sim.run_spec(self.machine(), self.patches()) {
                Ok(_) => {
                    next.scenario.sim = Some(sim);
                    next.sim_error = None;
                    // The user's own edit: it runs.
                    next.held = None;
                }
                Err(e) => next.sim_error = Some(e),
            },
        }
        next.follow_designer(&self, closing, editing);
        next.close_stale_sim_wake(&self);
        next.refresh_wake();
        Rc::new(next)
    }
}

/// What components receive through context.
pub type AppContext = UseReducerHandle<AppState>;

#[cfg(test)]
mod designer_tests;
#[cfg(test)]
mod sim_wake_tests;
#[cfg(test)]
mod tests;
