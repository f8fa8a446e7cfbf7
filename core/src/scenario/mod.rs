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
//! The wake-up part maps onto the `schedlab wake` state file ([`WakeScenario`]), so the
//! page and the CLI explain a wake-up through the same `resolve()` and `wake_up()`.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use std::sync::Arc;

use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

use crate::cpumask::{CpuId, CpuMask, CpuMaskError};
use crate::experiment::{CpuSelection, RunSpec};
use crate::patch::{PatchError, PatchSet};
use crate::topology::{presets, Machine, MachineSpec, TopologyError};
use crate::wakeup::scenario::{
    CpuRule, CpuStateKind, LlcRule, MachineRef, TaskSpec, WakeScenario, WakerSpec,
};
use crate::wakeup::{wake_up, Decision, Trace, WakeEnv};
use crate::workload::Workload;

pub mod page;
pub use page::{ClickMode, KernelText, PageSettings, Side};

/// The version this build writes; [`decode`] reads it and every older one.
pub const VERSION: u32 = 2;

/// Links longer than this are refused before decoding (a machine spec with an explicit
/// CPU list for 4096 CPUs stays well below it).
pub const MAX_FRAGMENT_BYTES: usize = 1 << 20;

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
    #[error("this link's scenario cannot be read: {0}")]
    Json(String),
    #[error("this link names machine preset {name:?}, which this page does not know; known presets: {known}")]
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
/// with seed `seed`, at scale `scale` (one of [`SimSetup::points`]; absent: the
/// page's watched scale, a sweep's largest point or the workload's own scale, as
/// every link before session 12 meant). A link carries this reference, never the
/// captured state (which is every CPU's runqueue: kilobytes to hundreds of kilobytes).
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

/// A step of one of the page's lessons, as a link names it: lesson `lesson` (from 1),
/// step `step` (from 1). Which lessons exist is the page's to say (`lesson`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LessonStep {
    pub lesson: u32,
    pub step: u32,
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

/// The longest simulation a link may ask for: the page runs it in slices, so a long
/// one stays responsive, but a minute of simulated tbench is minutes of wall time.
pub const MAX_SIM_MS: u64 = 60_000;

/// The most points a sweep in a link may have.
pub const MAX_SWEEP_POINTS: usize = 16;

/// A simulation to run under the page's patch set (A) and the compared one (B): what
/// `schedlab run` and `schedlab sweep` take, minus the machine and patches, which are
/// the scenario's. [`SimSetup::point_spec`] makes the [`RunSpec`] of one point, the
/// one description of a run that the CLI, the page and `reproduce` all run.
#[derive(Clone, Debug, PartialEq)]
pub struct SimSetup {
    /// The workload and every parameter.
    pub workload: Workload,
    /// The CPUs the workload may use.
    pub cpus: CpuSelection,
    /// Throughput workloads: the measured window (after a warm-up of a fifth).
    /// Completion workloads: the cap.
    pub duration_ms: u64,
    pub seed: u64,
    /// Seeds per side (`seed`, `seed + 1`, …; `--seeds`): from 2 on, each side's
    /// number is a mean and the change has a 95% interval. 1 to
    /// [`crate::experiment::MAX_SEEDS`].
    pub seeds: u32,
    /// A sweep over these scales (threads, clients, groups …) instead of one run at
    /// the workload's own: `schedlab sweep --threads`. Empty: one run.
    pub sweep: Vec<u32>,
}

impl Default for SimSetup {
    /// Seed 01's first table on its own machine: tbench pinned to node 0.
    fn default() -> Self {
        SimSetup {
            workload: Workload::Tbench { clients: 8 },
            cpus: CpuSelection::Nodes {
                first: crate::topology::NodeId(0),
                last: crate::topology::NodeId(0),
            },
            // 3 seeds of 100 ms: the simulation one 300 ms run cost (warm-ups
            // included), with an interval.
            duration_ms: 100,
            seed: 1,
            seeds: 3,
            sweep: Vec::new(),
        }
    }
}

impl SimSetup {
    /// Reads a sweep as `--threads` takes it (`1,4,8,16`); empty text is no sweep.
    pub fn parse_sweep(text: &str) -> Result<Vec<u32>, String> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(Vec::new());
        }
        t.split(',')
            .map(|x| {
                x.trim().parse::<u32>().map_err(|_| {
                    format!(
                        "sweep {t:?}: {:?} is not a count; write e.g. 1,4,8,16",
                        x.trim()
                    )
                })
            })
            .collect()
    }

    /// The scales to run: the sweep's, or the workload's own.
    pub fn points(&self) -> Vec<u32> {
        if self.sweep.is_empty() {
            vec![self.workload.threads()]
        } else {
            self.sweep.clone()
        }
    }

    /// The run of this setup on `machine` under `patches`, or what is wrong with it;
    /// for a sweep, its first point, after checking every point.
    pub fn run_spec(&self, machine: &Machine, patches: PatchSet) -> Result<RunSpec, String> {
        if !(1..=crate::experiment::MAX_SEEDS).contains(&self.seeds) {
            return Err(format!(
                "a simulation runs 1 to {} seeds per side (asked {})",
                crate::experiment::MAX_SEEDS,
                self.seeds
            ));
        }
        if self.sweep.len() > MAX_SWEEP_POINTS {
            return Err(format!(
                "a sweep here has at most {MAX_SWEEP_POINTS} points (asked {})",
                self.sweep.len()
            ));
        }
        let mut first = None;
        for n in self.points() {
            let spec = self.point_spec(machine, patches, n)?;
            first.get_or_insert(spec);
        }
        first.ok_or_else(|| "a sweep needs at least one point".to_string())
    }

    /// The run at scale `n` (`Workload::with_threads`) of this setup.
    pub fn point_spec(
        &self,
        machine: &Machine,
        patches: PatchSet,
        n: u32,
    ) -> Result<RunSpec, String> {
        if self.duration_ms > MAX_SIM_MS {
            return Err(format!(
                "a simulation here lasts at most {MAX_SIM_MS} ms (asked {} ms); the command line runs longer ones",
                self.duration_ms
            ));
        }
        let spec = RunSpec::with_cpus(
            machine.clone(),
            &self.cpus,
            patches,
            self.workload.with_threads(n),
            self.duration_ms,
            self.seed,
        )
        .map_err(|e| e.to_string())?;
        let cost = crate::cost::CostParams::for_machine(machine);
        crate::workload::build(&spec.workload, &cost, machine.nr_cpus())?;
        Ok(spec)
    }
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

fn parse_patches(text: &str) -> Result<PatchSet, ScenarioError> {
    text.parse().map_err(|err| ScenarioError::Patches {
        text: text.to_string(),
        err,
    })
}

/// Version 1 of the link: its JSON, as serde structs. These are the wire form only:
/// [`decode`] turns them into a [`Scenario`] at once, and [`encode`] writes them from
/// one. Their field names, order and defaults are frozen: every v1 link ever written
/// must keep opening, and a scenario must keep encoding to the same bytes.
pub mod v1;
pub mod v2;

/// RFC 4648 §5 base64url: written without padding; read with or without it, and with
/// any trailing bits (links written before this crate read them so).
const LINK_BASE64: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// The link fragment (without '#') for a scenario.
pub fn encode(s: &Scenario) -> String {
    format!(
        "v{VERSION}:{}",
        LINK_BASE64.encode(v2::pack(wire_json(s).as_bytes()))
    )
}

/// The scenario's JSON wire form (v1's, which v2 deflates).
pub fn wire_json(s: &Scenario) -> String {
    // Serialising plain structs of strings, numbers and options cannot fail.
    serde_json::to_string(&v1::ScenarioV1::from(s)).unwrap_or_default()
}

/// The v1 form of a scenario's link (uncompressed), which every schedlab since v1
/// opens: for tests and for tools that read the JSON by eye.
pub fn encode_v1(s: &Scenario) -> String {
    format!("v1:{}", LINK_BASE64.encode(wire_json(s).as_bytes()))
}

/// Reads a link fragment (with or without the leading '#') into a typed scenario.
pub fn decode(fragment: &str) -> Result<Scenario, ScenarioError> {
    let f = fragment.trim();
    let f = f.strip_prefix('#').unwrap_or(f);
    if f.len() > MAX_FRAGMENT_BYTES {
        return Err(ScenarioError::TooLong { bytes: f.len() });
    }
    let Some((version, body)) = f.split_once(':') else {
        return Err(ScenarioError::NotAScenario(shorten(f)));
    };
    let Some(number) = version.strip_prefix('v') else {
        return Err(ScenarioError::NotAScenario(shorten(f)));
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ScenarioError::NotAScenario(shorten(f)));
    }
    let deflated = match number {
        "1" => false,
        "2" => true,
        _ => return Err(ScenarioError::UnknownVersion(version.to_string())),
    };
    let bytes = base64url_decode(body).map_err(ScenarioError::Base64)?;
    let bytes = if deflated {
        v2::unpack(&bytes).map_err(ScenarioError::Base64)?
    } else {
        bytes
    };
    let json = String::from_utf8(bytes)
        .map_err(|_| ScenarioError::Base64("its text is not UTF-8".to_string()))?;
    let s: v1::ScenarioV1 =
        serde_json::from_str(&json).map_err(|e| ScenarioError::Json(e.to_string()))?;
    s.parse()
}

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
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

/// RFC 4648 §5 base64url without padding, read leniently: padding is tolerated (some
/// tools add it back), and a bad character is named with its position, so a damaged
/// link says where.
fn base64url_decode(text: &str) -> Result<Vec<u8>, String> {
    let text = text.trim_end_matches('=');
    if let Some((i, c)) = text
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(format!("character {c:?} at position {i} is not base64url"));
    }
    if text.len() % 4 == 1 {
        return Err(format!(
            "{} characters of base64 cannot be whole bytes (was the link cut short when copied?)",
            text.len()
        ));
    }
    LINK_BASE64
        .decode(text)
        .map_err(|e| format!("it is not base64url: {e}"))
}

#[cfg(test)]
mod tests;
