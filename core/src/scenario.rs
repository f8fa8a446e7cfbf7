//! The page's scenario and its URL projection.
//!
//! ```text
//!  Scenario ──encode──▶ "v1:" + base64url(JSON)      (the link fragment after '#')
//!     ▲                          │
//!     └──────────decode──────────┘  version check · base64 · JSON · validate
//!
//!  Scenario { machine: ScenarioMachine (preset name | MachineSpec, built),
//!             patches: PatchSet, cpu: CpuId, view,
//!             wake: { busy: CpuMask, waker, prev, recent, sync, overrides, compare: PatchSet },
//!             sim: { workload, cpus: CpuSelection, duration_ms, seed, sweep } (optional) }
//! ```
//!
//! Parse, don't validate: [`decode`] reads the link's JSON into the serde structs of
//! [`v1`] (the wire form, nothing else uses them) and turns them into a typed
//! [`Scenario`]: the machine built, patch sets parsed, CPU lists as masks of that
//! machine, CPU ids in range, the simulation one that can run. So a link either opens
//! as it was shared or says what is wrong with it, and code holding a `Scenario` has
//! nothing left to check. Old versions keep decoding: a future `v2` adds a module
//! beside `v1`, it does not reinterpret `v1`.
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

/// The version this build writes; [`decode`] reads it and every older one.
pub const VERSION: u32 = 1;

/// Links longer than this are refused before decoding (a machine spec with an explicit
/// CPU list for 4096 CPUs stays well below it).
pub const MAX_FRAGMENT_BYTES: usize = 1 << 20;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ScenarioError {
    #[error("this link does not hold a schedlab scenario: it should start with #v1: (got {0:?})")]
    NotAScenario(String),
    #[error("this link is from schedlab scenario version {0}, which this page does not know (it reads v1); it may come from a newer schedlab")]
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
    /// Builds `choice`.
    pub fn new(choice: MachineChoice) -> Result<ScenarioMachine, ScenarioError> {
        let built = Arc::new(choice.build()?);
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
            duration_ms: 300,
            seed: 1,
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
        let llc = (w.has_idle_cores.is_some() || w.nr_idle_scan.is_some())
            .then_some(LlcRule {
                cpu: w.waker.0,
                has_idle_cores: w.has_idle_cores,
                nr_idle_scan: w.nr_idle_scan,
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
            wakee: task(1, Some(w.prev.0), w.recent.map(|c| c.0)),
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
pub mod v1 {
    use serde::{Deserialize, Serialize};

    use super::{
        parse_patches, MachineChoice, Scenario, ScenarioError, ScenarioMachine, View,
        MAX_SWEEP_POINTS,
    };
    use crate::cpumask::{CpuId, CpuMask};
    use crate::experiment::CpuSelection;
    use crate::workload::Workload;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct ScenarioV1 {
        pub machine: MachineChoice,
        /// A patch set in the `6.6+cluster` syntax.
        pub patches: String,
        #[serde(default)]
        pub cpu: u32,
        #[serde(default)]
        pub view: View,
        #[serde(default)]
        pub wake: WakeSetupV1,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sim: Option<SimSetupV1>,
    }

    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct WakeSetupV1 {
        /// A kernel CPU list (`0-11,13-127`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        pub busy: String,
        #[serde(default)]
        pub waker: u32,
        #[serde(default)]
        pub prev: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub recent: Option<u32>,
        #[serde(default)]
        pub sync: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub has_idle_cores: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub nr_idle_scan: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub compare: Option<String>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct SimSetupV1 {
        /// The CLI's JSON form, e.g. `{"kind":"tbench","clients":16}`.
        pub workload: Workload,
        /// `all`, a kernel CPU list, `nodeN` or `nodeA-B`.
        #[serde(default = "all_cpus")]
        pub cpus: String,
        pub duration_ms: u64,
        #[serde(default = "seed_one")]
        pub seed: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub sweep: Vec<u32>,
    }

    fn all_cpus() -> String {
        "all".to_string()
    }

    fn seed_one() -> u64 {
        1
    }

    impl From<&Scenario> for ScenarioV1 {
        fn from(s: &Scenario) -> ScenarioV1 {
            let w = &s.wake;
            ScenarioV1 {
                machine: s.machine.choice().clone(),
                patches: s.patches.to_string(),
                cpu: s.cpu.0,
                view: s.view,
                wake: WakeSetupV1 {
                    busy: w.busy.to_list(),
                    waker: w.waker.0,
                    prev: w.prev.0,
                    recent: w.recent.map(|c| c.0),
                    sync: w.sync,
                    has_idle_cores: w.has_idle_cores,
                    nr_idle_scan: w.nr_idle_scan,
                    compare: w.compare.map(|p| p.to_string()),
                },
                sim: s.sim.as_ref().map(SimSetupV1::from),
            }
        }
    }

    impl From<&super::SimSetup> for SimSetupV1 {
        fn from(sim: &super::SimSetup) -> SimSetupV1 {
            SimSetupV1 {
                workload: sim.workload.clone(),
                cpus: sim.cpus.to_string(),
                duration_ms: sim.duration_ms,
                seed: sim.seed,
                sweep: sim.sweep.clone(),
            }
        }
    }

    impl SimSetupV1 {
        /// The typed setup on `machine`, or why it does not fit it (the CPUs). Whether
        /// it can run is [`super::SimSetup::run_spec`]'s to say.
        pub fn parse(
            &self,
            machine: &crate::topology::Machine,
        ) -> Result<super::SimSetup, ScenarioError> {
            let cpus = CpuSelection::parse(machine, &self.cpus)
                .map_err(|e| ScenarioError::Sim(format!("its CPUs {e}")))?;
            Ok(super::SimSetup {
                workload: self.workload.clone(),
                cpus,
                duration_ms: self.duration_ms,
                seed: self.seed,
                sweep: self.sweep.clone(),
            })
        }
    }

    impl ScenarioV1 {
        /// Builds the machine and reads every field against it.
        pub fn parse(&self) -> Result<Scenario, ScenarioError> {
            let machine = ScenarioMachine::new(self.machine.clone())?;
            let patches = parse_patches(&self.patches)?;
            let n = machine.nr_cpus();
            let cpu = |field: &'static str, cpu: u32| {
                if cpu < n {
                    Ok(CpuId(cpu))
                } else {
                    Err(ScenarioError::CpuOutOfRange {
                        field,
                        cpu,
                        last: n.saturating_sub(1),
                    })
                }
            };
            let w = &self.wake;
            let wake = super::WakeSetup {
                busy: CpuMask::parse_list(n, &w.busy).map_err(|err| ScenarioError::CpuList {
                    field: "busy CPUs",
                    err,
                })?,
                waker: cpu("waker CPU", w.waker)?,
                prev: cpu("wakee's prev CPU", w.prev)?,
                recent: w
                    .recent
                    .map(|r| cpu("wakee's recent_used_cpu", r))
                    .transpose()?,
                sync: w.sync,
                has_idle_cores: w.has_idle_cores,
                nr_idle_scan: w.nr_idle_scan,
                compare: w.compare.as_deref().map(parse_patches).transpose()?,
            };
            let sim = match &self.sim {
                Some(sim) => {
                    let typed = sim.parse(machine.machine())?;
                    if typed.sweep.len() > MAX_SWEEP_POINTS {
                        return Err(ScenarioError::Sim(format!(
                            "a sweep here has at most {MAX_SWEEP_POINTS} points (asked {})",
                            typed.sweep.len()
                        )));
                    }
                    typed
                        .run_spec(machine.machine(), patches)
                        .map_err(ScenarioError::Sim)?;
                    Some(typed)
                }
                None => None,
            };
            Ok(Scenario {
                cpu: cpu("selected CPU", self.cpu)?,
                machine,
                patches,
                view: self.view,
                wake,
                sim,
            })
        }
    }
}

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
    // Serialising plain structs of strings, numbers and options cannot fail.
    let json = serde_json::to_string(&v1::ScenarioV1::from(s)).unwrap_or_default();
    format!("v{VERSION}:{}", LINK_BASE64.encode(json.as_bytes()))
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
    if number != VERSION.to_string() {
        return Err(ScenarioError::UnknownVersion(version.to_string()));
    }
    let bytes = base64url_decode(body).map_err(ScenarioError::Base64)?;
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
mod tests {
    use super::*;
    use crate::topology::import::machine_to_spec;
    use proptest::prelude::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Seed 01's teaching case: kunpeng920-6426, everything busy but CPU2 (the waker
    /// CPU0's cluster) and CPU12 (the wakee's prev, another cluster). nr_idle_scan 8 as
    /// a recent balance with some spare capacity left it (all-busy util would give 0).
    fn prev_other_cluster() -> Scenario {
        let mut s = Scenario::preset("kunpeng920-6426", ps("6.6")).expect("preset");
        s.view = View::Wakeup;
        s.wake = WakeSetup {
            busy: CpuMask::parse_list(128, "0-1,3-11,13-127").expect("list"),
            prev: CpuId(12),
            sync: true,
            nr_idle_scan: Some(8),
            compare: Some(ps("6.6+cluster")),
            ..WakeSetup::idle(128)
        };
        s
    }

    fn ps(text: &str) -> PatchSet {
        text.parse().expect("a patch set")
    }

    fn b64(bytes: &[u8]) -> String {
        LINK_BASE64.encode(bytes)
    }

    #[test]
    fn the_teaching_case_encodes_to_the_bytes_it_always_did() {
        // Written by the page before scenarios were typed: links keep their bytes.
        let json = r#"{"machine":"kunpeng920-6426","patches":"6.6","cpu":0,"view":"wakeup","wake":{"busy":"0-1,3-11,13-127","waker":0,"prev":12,"sync":true,"nr_idle_scan":8,"compare":"6.6+cluster"}}"#;
        assert_eq!(
            encode(&prev_other_cluster()),
            format!("v1:{}", b64(json.as_bytes()))
        );
    }

    #[test]
    fn round_trip_of_the_teaching_case() {
        let s = prev_other_cluster();
        let link = encode(&s);
        assert!(link.starts_with("v1:"), "{link}");
        assert!(link
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_:".contains(&b)));
        assert_eq!(decode(&link), Ok(s.clone()));
        assert_eq!(decode(&format!("#{link}")), Ok(s));
    }

    #[test]
    fn the_teaching_case_decides_prev_on_6_6_and_the_cluster_cpu_with_the_patch() {
        let s = prev_other_cluster();
        let (d, _) = s.decide(s.patches).expect("resolves");
        assert_eq!(d.cpu, CpuId(12));
        let (d, t) = s.decide(ps("6.6+cluster")).expect("resolves");
        assert_eq!(d.cpu, CpuId(2));
        assert!(t.render(&d).contains("select_idle_cpu"));
    }

    #[test]
    fn one_env_decides_every_wake_up_as_decide_does() {
        // Issue 16: the page built the machine's domains again for every decision.
        let mut s = prev_other_cluster();
        for patches in [s.patches, ps("6.6+cluster"), ps("6.8")] {
            let env = s.wake_env(patches).expect("builds");
            for (busy, waker, prev) in [
                ("0-1,3-11,13-127", 0, 12),
                ("", 5, 7),
                ("0-127", 3, 100),
                ("0-63", 64, 2),
            ] {
                s.wake.busy = CpuMask::parse_list(128, busy).expect("list");
                s.wake.waker = CpuId(waker);
                s.wake.prev = CpuId(prev);
                let (d, t) = s.decide_in(&env).expect("decides");
                let (d2, t2) = s.decide(patches).expect("decides");
                assert_eq!((d, t), (d2, t2));
            }
        }
        let other = Scenario::preset("xeon-smt-8", ps("6.8")).expect("preset");
        let small = other.wake_env(ps("6.8")).expect("builds");
        let e = s.decide_in(&small).expect_err("another machine's env");
        assert!(e.to_string().contains("8-CPU"), "{e}");
    }

    #[test]
    fn a_link_with_node_ids_past_max_numnodes_is_refused_before_building() {
        // MachineSpec::build() bounds node ids (MAX_NUMNODES) before it sizes the
        // SLIT, so the issue's hostile link is refused at once, with the reason.
        let link = "v1:eyJtYWNoaW5lIjp7Im5hbWUiOiJtIiwiYXJjaCI6Ing4NiIsImNwdXMiOlt7ImNwdSI6MCwibm9kZSI6NjU1MzV9XX0sInBhdGNoZXMiOiI2LjgifQ";
        let e = decode(link).expect_err("refused");
        assert!(matches!(e, ScenarioError::Machine(_)), "{e}");
        assert!(
            e.to_string().contains("65535") && e.to_string().contains("1024 NUMA nodes"),
            "{e}"
        );
        let regular = r#"{"machine":{"name":"m","arch":"x86","packages":2,"nodes_per_package":1024,"cores_per_llc":1},"patches":"6.8"}"#;
        let e = decode(&format!("v1:{}", LINK_BASE64.encode(regular))).expect_err("refused");
        assert!(matches!(e, ScenarioError::Machine(_)), "{e}");
        let ok = r#"{"machine":{"name":"m","arch":"x86","cpus":[{"cpu":0,"node":1023}]},"patches":"6.8"}"#;
        let near = decode(&format!("v1:{}", LINK_BASE64.encode(ok))).expect_err("1023 empty nodes");
        assert!(!near.to_string().contains("1024 NUMA nodes"), "{near}");
    }

    #[test]
    fn a_custom_machine_travels_as_its_spec() {
        let m = presets::machine("xeon-smt-8").expect("preset");
        let mut spec = machine_to_spec(&m);
        spec.name = "my box".to_string();
        let machine = ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))).expect("builds");
        let mut s = Scenario::on(machine, ps("6.8+ttwu-l2c"));
        s.cpu = CpuId(3);
        let back = decode(&encode(&s)).expect("decodes");
        assert_eq!(back, s);
        assert_eq!(back.machine().name, "my box");
        assert_eq!(back.machine.preset_name(), None);
    }

    #[test]
    fn a_simulation_travels_with_the_link_and_bad_ones_are_named() {
        let mut s = Scenario::preset("kunpeng920-6426", ps("6.6")).expect("preset");
        let m = s.machine().clone();
        s.view = View::Simulate;
        s.sim = Some(SimSetup {
            workload: Workload::NetperfTcpRr { instances: 16 },
            cpus: CpuSelection::parse(&m, "node0-1").expect("nodes"),
            duration_ms: 200,
            seed: 3,
            sweep: vec![1, 16, 64],
        });
        assert_eq!(decode(&encode(&s)), Ok(s.clone()));
        // Written by hand: cpus and seed may be left out.
        let json = r#"{"machine":"flat-16","patches":"6.8","view":"simulate","sim":{"workload":{"kind":"tbench","clients":4},"duration_ms":50}}"#;
        let link = format!("v1:{}", b64(json.as_bytes()));
        let back = decode(&link).expect("decodes");
        let sim = back.sim.expect("a simulation");
        assert_eq!((sim.cpus.clone(), sim.seed), (CpuSelection::All, 1));
        assert_eq!(sim.points(), vec![4], "no sweep: the workload's own scale");
        assert_eq!(SimSetup::parse_sweep(" 1, 4,16 "), Ok(vec![1, 4, 16]));
        assert_eq!(SimSetup::parse_sweep(""), Ok(vec![]));
        let e = SimSetup::parse_sweep("1,four").expect_err("not a number");
        assert!(e.contains("\"four\" is not a count"), "{e}");
        // Bad setups as a link would carry them (the v1 wire form).
        let ok = v1::SimSetupV1::from(s.sim.as_ref().expect("set"));
        let bad = |sim: v1::SimSetupV1, want: &str| {
            let mut wire = v1::ScenarioV1::from(&s);
            wire.sim = Some(sim);
            let json = serde_json::to_string(&wire).expect("json");
            let e = decode(&format!("v1:{}", b64(json.as_bytes())))
                .expect_err(want)
                .to_string();
            assert!(e.contains("simulation") && e.contains(want), "{e}");
        };
        bad(
            v1::SimSetupV1 {
                cpus: "node9".to_string(),
                ..ok.clone()
            },
            "has nodes 0-3",
        );
        bad(
            v1::SimSetupV1 {
                duration_ms: MAX_SIM_MS + 1,
                ..ok.clone()
            },
            "at most 60000 ms",
        );
        bad(
            v1::SimSetupV1 {
                workload: Workload::Tbench { clients: 0 },
                sweep: Vec::new(),
                ..ok.clone()
            },
            "at least one client",
        );
        bad(
            v1::SimSetupV1 {
                sweep: vec![4, 0, 8],
                ..ok.clone()
            },
            "at least one instance",
        );
        bad(
            v1::SimSetupV1 {
                sweep: (1..=17).collect(),
                ..ok.clone()
            },
            "at most 16 points",
        );
        bad(
            v1::SimSetupV1 {
                duration_ms: 0,
                ..ok
            },
            "at least 1 ms",
        );
        let unknown = r#"{"machine":"flat-16","patches":"6.8","sim":{"workload":{"kind":"dbench"},"duration_ms":50}}"#;
        let e = decode(&format!("v1:{}", b64(unknown.as_bytes()))).expect_err("dbench");
        assert!(e.to_string().contains("dbench"), "{e}");
    }

    #[test]
    fn garbage_says_it_is_not_a_scenario() {
        for g in ["", "#", "hello", "#tab=dmesg", "x1:abc", "v:abc", "vx:abc"] {
            let e = decode(g).expect_err(g);
            assert!(matches!(e, ScenarioError::NotAScenario(_)), "{g}: {e}");
            assert!(e.to_string().contains("#v1:"), "{e}");
        }
    }

    #[test]
    fn an_unknown_version_is_named() {
        let e = decode("#v7:e30").expect_err("v7");
        assert_eq!(e, ScenarioError::UnknownVersion("v7".to_string()));
        assert!(e.to_string().contains("version v7"), "{e}");
    }

    #[test]
    fn damaged_base64_and_json_are_told_apart() {
        let e = decode("v1:ab$d").expect_err("bad char");
        assert!(matches!(e, ScenarioError::Base64(_)), "{e}");
        assert!(e.to_string().contains("'$' at position 2"), "{e}");
        let e = decode("v1:abcde").expect_err("5 chars");
        assert!(matches!(e, ScenarioError::Base64(_)), "{e}");
        let link = encode(&prev_other_cluster());
        let e = decode(&link[..link.len() / 2]).expect_err("cut short");
        assert!(matches!(e, ScenarioError::Json(_)), "{e}");
        let e = decode(&format!("v1:{}", b64(b"{\"machine\":1}"))).expect_err("json");
        assert!(e.to_string().contains("cannot be read"), "{e}");
    }

    fn with_json(json: &str) -> Result<Scenario, ScenarioError> {
        decode(&format!("v1:{}", b64(json.as_bytes())))
    }

    #[test]
    fn an_unknown_preset_lists_the_known_ones() {
        let e = with_json(r#"{"machine":"pdp-11","patches":"6.8"}"#).expect_err("pdp-11");
        assert!(matches!(e, ScenarioError::UnknownPreset { .. }), "{e}");
        assert!(e.to_string().contains("kunpeng920-6426"), "{e}");
    }

    #[test]
    fn bad_cpu_lists_and_cpus_are_named_by_field() {
        let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"busy":"0-3,,5"}}"#)
            .expect_err("bad list");
        assert!(e.to_string().contains("busy CPUs"), "{e}");
        assert!(e.to_string().contains("empty element"), "{e}");
        let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"busy":"0-16"}}"#)
            .expect_err("out of range list");
        assert!(e.to_string().contains("busy CPUs"), "{e}");
        let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"prev":99}}"#)
            .expect_err("prev out of range");
        assert_eq!(
            e,
            ScenarioError::CpuOutOfRange {
                field: "wakee's prev CPU",
                cpu: 99,
                last: 15
            }
        );
        let e = with_json(r#"{"machine":"flat-16","patches":"6.8+frobnicate"}"#)
            .expect_err("bad patch");
        assert!(e.to_string().contains("frobnicate"), "{e}");
        let e = with_json(r#"{"machine":"flat-16","patches":"6.8","zoom":2}"#)
            .expect_err("unknown field");
        assert!(e.to_string().contains("zoom"), "{e}");
    }

    #[test]
    fn random_busy_is_deterministic_and_exact() {
        let a = random_busy(128, 750, 42);
        assert_eq!(a, random_busy(128, 750, 42));
        assert_eq!(a.weight(), 96);
        assert_ne!(a, random_busy(128, 750, 43));
        assert_eq!(random_busy(16, 0, 1).weight(), 0);
        assert_eq!(random_busy(16, 5000, 1).weight(), 16);
    }

    #[test]
    fn base64url_matches_rfc4648_vectors() {
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64(plain.as_bytes()), enc);
            assert_eq!(base64url_decode(enc).as_deref(), Ok(plain.as_bytes()));
            // Padding added back by some tools is read too.
            let padded = format!("{enc}{}", "=".repeat((4 - enc.len() % 4) % 4));
            assert_eq!(base64url_decode(&padded).as_deref(), Ok(plain.as_bytes()));
        }
        assert_eq!(b64(&[0xfb, 0xff]), "-_8");
        // Non-zero trailing bits, which the hand-written reader took: still read.
        assert_eq!(base64url_decode("Zh").as_deref(), Ok(&b"f"[..]));
    }

    fn arb_scenario() -> impl Strategy<Value = Scenario> {
        let presets: Vec<&'static str> = presets::PRESETS.iter().map(|p| p.name).collect();
        let views = prop_oneof![
            Just(View::Domains),
            Just(View::Dmesg),
            Just(View::Debugfs),
            Just(View::Wakeup),
            Just(View::Simulate)
        ];
        let patches = prop_oneof![
            Just("6.6"),
            Just("6.6+cluster"),
            Just("6.8-cluster+cluster-scan"),
            Just("5.15+no-smt-idle-cores"),
            Just("6.12+ttwu-l2c+cookie-fastpath"),
        ];
        (
            proptest::sample::select(presets),
            patches,
            views,
            any::<u64>(),
            0u32..=1000,
            any::<(u32, u32, u32, bool)>(),
            proptest::option::of(any::<bool>()),
            proptest::option::of(0u32..64),
            proptest::option::of(Just("6.6+cluster")),
            proptest::option::of((0usize..7, 1u32..64, 1u64..5000, any::<bool>())),
        )
            .prop_map(
                |(name, patches, view, seed, permille, (a, b, c, sync), hic, nis, cmp, sim)| {
                    let mut s = Scenario::preset(name, ps(patches)).expect("preset");
                    let n = s.machine.nr_cpus();
                    s.cpu = CpuId(a % n);
                    s.view = view;
                    s.wake = WakeSetup {
                        busy: random_busy(n, permille, seed),
                        waker: CpuId(b % n),
                        prev: CpuId(c % n),
                        recent: sync.then_some(CpuId(a % n)),
                        sync,
                        has_idle_cores: hic,
                        nr_idle_scan: nis,
                        compare: cmp.map(ps),
                    };
                    s.sim = sim.map(|(w, threads, ms, all)| SimSetup {
                        workload: Workload::with_defaults(Workload::NAMES[w])
                            .expect("a name")
                            .with_threads(threads),
                        cpus: if all {
                            CpuSelection::All
                        } else {
                            SimSetup::default().cpus
                        },
                        sweep: if all { vec![1, threads] } else { Vec::new() },
                        duration_ms: ms,
                        seed,
                    });
                    s
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn encode_decode_round_trips(s in arb_scenario()) {
            prop_assert_eq!(decode(&encode(&s)), Ok(s));
        }

        #[test]
        fn base64url_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(base64url_decode(&b64(&bytes)), Ok(bytes));
        }

        #[test]
        fn decode_never_panics_on_garbage(text in "\\PC{0,80}") {
            let _ = decode(&text);
            let _ = decode(&format!("v1:{text}"));
        }
    }
}
