//! The page's scenario and its URL projection.
//!
//! ```text
//!  Scenario ──encode──▶ "v1:" + base64url(JSON)      (the link fragment after '#')
//!     ▲                          │
//!     └──────────decode──────────┘  version check · base64 · JSON · validate
//!
//!  Scenario { machine: preset name | MachineSpec, patches: "6.6+cluster", cpu, view,
//!             wake: { busy CPUs, waker, prev, recent, sync, overrides, compare },
//!             sim: { workload, cpus, duration_ms, seed } (optional) }
//! ```
//!
//! `decode` validates everything against the machine (preset known, spec builds, patch
//! sets parse, CPU lists and ids in range), so a link either opens as it was shared or
//! says what is wrong with it. Old versions keep decoding: a future `v2` adds a branch
//! here, it does not reinterpret `v1`.
//!
//! The wake-up part maps onto the `schedlab wake` state file ([`WakeScenario`]), so the
//! page and the CLI explain a wake-up through the same `resolve()` and `wake_up()`.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cpumask::{CpuId, CpuMask, CpuMaskError};
use crate::experiment::RunSpec;
use crate::patch::{PatchError, PatchSet};
use crate::topology::{presets, Machine, MachineSpec, TopologyError};
use crate::wakeup::scenario::{
    CpuRule, CpuStateKind, LlcRule, MachineRef, TaskSpec, WakeScenario, WakerSpec,
};
use crate::wakeup::{wake_up, Decision, Trace};
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

/// The machine: a preset by name, or a full spec (imported or hand-written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MachineChoice {
    Preset(String),
    Spec(Box<MachineSpec>),
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WakeSetup {
    /// Busy CPUs as a kernel list (`0-11,13-127`); every other CPU is idle.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub busy: String,
    /// The CPU the wake-up runs on (`smp_processor_id()`).
    #[serde(default)]
    pub waker: u32,
    /// The wakee's `task_cpu(p)`.
    #[serde(default)]
    pub prev: u32,
    /// `p->recent_used_cpu`; defaults to `prev`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recent: Option<u32>,
    /// WF_SYNC: the waker is about to sleep.
    #[serde(default)]
    pub sync: bool,
    /// Overrides the waker's LLC `has_idle_cores` (otherwise derived from the CPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_idle_cores: Option<bool>,
    /// Overrides the waker's LLC `nr_idle_scan` (otherwise `update_idle_cpu_scan()`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_idle_scan: Option<u32>,
    /// A second patch set to decide the same wake-up under, side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<String>,
}

/// The longest simulation a link may ask for: the page runs it in slices, so a long
/// one stays responsive, but a minute of simulated tbench is minutes of wall time.
pub const MAX_SIM_MS: u64 = 60_000;

/// A simulation to run under the page's patch set (A) and the compared one (B): what
/// `schedlab run` takes, minus the machine and patches, which are the page's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSetup {
    /// The workload and every parameter (the CLI's JSON form, e.g.
    /// `{"kind":"tbench","clients":16}`).
    pub workload: Workload,
    /// The CPUs the workload may use: `all`, a kernel CPU list, `nodeN` or `nodeA-B`.
    #[serde(default = "SimSetup::all_cpus")]
    pub cpus: String,
    /// Throughput workloads: the measured window (after a warm-up of a fifth).
    /// Completion workloads: the cap.
    pub duration_ms: u64,
    #[serde(default = "SimSetup::seed_one")]
    pub seed: u64,
    /// A sweep over these scales (threads, clients, groups …) instead of one run at
    /// the workload's own: `schedlab sweep --threads`. Empty: one run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<u32>,
}

/// The most points a sweep in a link may have.
pub const MAX_SWEEP_POINTS: usize = 16;

impl Default for SimSetup {
    /// Seed 01's first table on its own machine: tbench pinned to node 0.
    fn default() -> Self {
        SimSetup {
            workload: Workload::Tbench { clients: 8 },
            cpus: "node0".to_string(),
            duration_ms: 300,
            seed: 1,
            sweep: Vec::new(),
        }
    }
}

impl SimSetup {
    fn all_cpus() -> String {
        "all".to_string()
    }

    fn seed_one() -> u64 {
        1
    }

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
        let cpus = (self.cpus.trim() != "all").then_some(self.cpus.as_str());
        let spec = RunSpec::new(
            machine.clone(),
            cpus,
            patches,
            self.workload.with_threads(n),
            self.duration_ms,
            self.seed,
        )?;
        let cost = crate::cost::CostParams::for_machine(machine);
        crate::workload::build(&spec.workload, &cost, machine.nr_cpus())?;
        Ok(spec)
    }
}

/// Everything the page shows, in serialisable form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub machine: MachineChoice,
    /// A patch set in the `6.6+cluster` syntax.
    pub patches: String,
    /// The CPU whose domains are shown.
    #[serde(default)]
    pub cpu: u32,
    #[serde(default)]
    pub view: View,
    #[serde(default)]
    pub wake: WakeSetup,
    /// The simulation (the page's default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimSetup>,
}

impl Scenario {
    /// A preset on a patch set, CPU 0, the domain cards, every CPU idle.
    pub fn preset(name: &str, patches: &str) -> Scenario {
        Scenario {
            machine: MachineChoice::Preset(name.to_string()),
            patches: patches.to_string(),
            cpu: 0,
            view: View::Domains,
            wake: WakeSetup::default(),
            sim: None,
        }
    }

    /// Builds the machine and checks every field against it.
    pub fn validate(&self) -> Result<Machine, ScenarioError> {
        let machine = match &self.machine {
            MachineChoice::Preset(name) => match presets::preset(name) {
                Some(p) => p.spec().build().map_err(ScenarioError::Machine)?,
                None => {
                    return Err(ScenarioError::UnknownPreset {
                        name: name.clone(),
                        known: presets::PRESETS
                            .iter()
                            .map(|p| p.name)
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
                }
            },
            MachineChoice::Spec(spec) => spec.build().map_err(ScenarioError::Machine)?,
        };
        parse_patches(&self.patches)?;
        if let Some(c) = &self.wake.compare {
            parse_patches(c)?;
        }
        let n = machine.nr_cpus();
        let in_range = |field: &'static str, cpu: u32| {
            if cpu < n {
                Ok(())
            } else {
                Err(ScenarioError::CpuOutOfRange {
                    field,
                    cpu,
                    last: n.saturating_sub(1),
                })
            }
        };
        in_range("selected CPU", self.cpu)?;
        in_range("waker CPU", self.wake.waker)?;
        in_range("wakee's prev CPU", self.wake.prev)?;
        if let Some(r) = self.wake.recent {
            in_range("wakee's recent_used_cpu", r)?;
        }
        self.busy_mask(n)?;
        if let Some(sim) = &self.sim {
            let patches = parse_patches(&self.patches)?;
            sim.run_spec(&machine, patches)
                .map_err(ScenarioError::Sim)?;
        }
        Ok(machine)
    }

    /// The busy CPUs as a mask of an `nr_cpus` machine.
    pub fn busy_mask(&self, nr_cpus: u32) -> Result<CpuMask, ScenarioError> {
        CpuMask::parse_list(nr_cpus, &self.wake.busy).map_err(|err| ScenarioError::CpuList {
            field: "busy CPUs",
            err,
        })
    }

    /// The wake-up as a `schedlab wake` state file, for [`WakeScenario::resolve`].
    pub fn wake_scenario(&self) -> WakeScenario {
        let w = &self.wake;
        let mut cpus = Vec::new();
        if !w.busy.trim().is_empty() {
            cpus.push(rule(&w.busy, CpuStateKind::Busy));
        }
        let llc = (w.has_idle_cores.is_some() || w.nr_idle_scan.is_some())
            .then_some(LlcRule {
                cpu: w.waker,
                has_idle_cores: w.has_idle_cores,
                nr_idle_scan: w.nr_idle_scan,
            })
            .into_iter()
            .collect();
        WakeScenario {
            machine: match &self.machine {
                MachineChoice::Preset(n) => MachineRef::Preset(n.clone()),
                MachineChoice::Spec(s) => MachineRef::Spec(s.clone()),
            },
            patches: Some(self.patches.clone()),
            features: Vec::new(),
            cpus,
            llc,
            jiffies: 0,
            wakee: task(1, Some(w.prev), w.recent),
            waker: WakerSpec {
                cpu: w.waker,
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

    /// Decides the wake-up under `patches` with core's `wake_up()`, traced.
    pub fn decide(
        &self,
        patches: &str,
    ) -> Result<(Decision, Trace), crate::wakeup::scenario::ScenarioError> {
        let r = self.wake_scenario().resolve(Some(patches))?;
        let mut t = Trace::default();
        let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
        Ok((d, t))
    }
}

fn rule(cpus: &str, state: CpuStateKind) -> CpuRule {
    CpuRule {
        cpus: cpus.to_string(),
        state: Some(state),
        nr_running: None,
        ttwu_pending: None,
        load: None,
        util: None,
        cookie: None,
        polling: None,
        capacity: None,
        active: None,
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

/// The link fragment (without '#') for a scenario.
pub fn encode(s: &Scenario) -> String {
    // Serialising plain structs of strings, numbers and options cannot fail.
    let json = serde_json::to_string(s).unwrap_or_default();
    format!("v{VERSION}:{}", base64url_encode(json.as_bytes()))
}

/// Reads a link fragment (with or without the leading '#') and validates it.
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
    let s: Scenario =
        serde_json::from_str(&json).map_err(|e| ScenarioError::Json(e.to_string()))?;
    s.validate()?;
    Ok(s)
}

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// A deterministic random set of busy CPUs: `round(n · permille / 1000)` of them,
/// picked by a seeded Fisher–Yates shuffle (splitmix64), the same on every platform.
pub fn random_busy(nr_cpus: u32, busy_permille: u32, seed: u64) -> CpuMask {
    let permille = u64::from(busy_permille.min(1000));
    let k = ((u64::from(nr_cpus) * permille + 500) / 1000) as usize;
    let mut order: Vec<u32> = (0..nr_cpus).collect();
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..order.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    CpuMask::from_cpus(nr_cpus, order.into_iter().take(k).map(CpuId))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// RFC 4648 §5 base64url without padding.
fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn base64url_decode(text: &str) -> Result<Vec<u8>, String> {
    // Padding is tolerated (some tools add it back), standard base64's +/ are not.
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    for (chunk_idx, chunk) in text.as_bytes().chunks(4).enumerate() {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'-' => 62,
                b'_' => 63,
                _ => {
                    return Err(format!(
                        "character {:?} at position {} is not base64url",
                        c as char,
                        chunk_idx * 4 + i
                    ))
                }
            };
            n |= u32::from(v) << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    // Checked after the characters, so a stray character is named rather than counted.
    if text.len() % 4 == 1 {
        return Err(format!(
            "{} characters of base64 cannot be whole bytes (was the link cut short when copied?)",
            text.len()
        ));
    }
    Ok(out)
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
        Scenario {
            view: View::Wakeup,
            wake: WakeSetup {
                busy: "0-1,3-11,13-127".to_string(),
                waker: 0,
                prev: 12,
                sync: true,
                nr_idle_scan: Some(8),
                compare: Some("6.6+cluster".to_string()),
                ..WakeSetup::default()
            },
            ..Scenario::preset("kunpeng920-6426", "6.6")
        }
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
        let (d, _) = s.decide(&s.patches).expect("resolves");
        assert_eq!(d.cpu, CpuId(12));
        let (d, t) = s.decide("6.6+cluster").expect("resolves");
        assert_eq!(d.cpu, CpuId(2));
        assert!(t.render(&d).contains("select_idle_cpu"));
    }

    #[test]
    fn a_custom_machine_travels_as_its_spec() {
        let m = presets::machine("xeon-smt-8").expect("preset");
        let mut spec = machine_to_spec(&m);
        spec.name = "my box".to_string();
        let s = Scenario {
            machine: MachineChoice::Spec(Box::new(spec)),
            cpu: 3,
            ..Scenario::preset("unused", "6.8+ttwu-l2c")
        };
        let back = decode(&encode(&s)).expect("decodes");
        assert_eq!(back, s);
        assert_eq!(back.validate().expect("builds").name, "my box");
    }

    #[test]
    fn a_simulation_travels_with_the_link_and_bad_ones_are_named() {
        let s = Scenario {
            view: View::Simulate,
            sim: Some(SimSetup {
                workload: Workload::NetperfTcpRr { instances: 16 },
                cpus: "node0-1".to_string(),
                duration_ms: 200,
                seed: 3,
                sweep: vec![1, 16, 64],
            }),
            ..Scenario::preset("kunpeng920-6426", "6.6")
        };
        assert_eq!(decode(&encode(&s)), Ok(s.clone()));
        // Written by hand: cpus and seed may be left out.
        let json = r#"{"machine":"flat-16","patches":"6.8","view":"simulate","sim":{"workload":{"kind":"tbench","clients":4},"duration_ms":50}}"#;
        let link = format!("v1:{}", base64url_encode(json.as_bytes()));
        let back = decode(&link).expect("decodes");
        let sim = back.sim.expect("a simulation");
        assert_eq!((sim.cpus.as_str(), sim.seed), ("all", 1));
        assert_eq!(sim.points(), vec![4], "no sweep: the workload's own scale");
        assert_eq!(SimSetup::parse_sweep(" 1, 4,16 "), Ok(vec![1, 4, 16]));
        assert_eq!(SimSetup::parse_sweep(""), Ok(vec![]));
        let e = SimSetup::parse_sweep("1,four").expect_err("not a number");
        assert!(e.contains("\"four\" is not a count"), "{e}");
        let bad = |sim: SimSetup, want: &str| {
            let s = Scenario {
                sim: Some(sim),
                ..s.clone()
            };
            let e = decode(&encode(&s)).expect_err(want).to_string();
            assert!(e.contains("simulation") && e.contains(want), "{e}");
        };
        let ok = s.sim.clone().expect("set");
        bad(
            SimSetup {
                cpus: "node9".to_string(),
                ..ok.clone()
            },
            "has nodes 0-3",
        );
        bad(
            SimSetup {
                duration_ms: MAX_SIM_MS + 1,
                ..ok.clone()
            },
            "at most 60000 ms",
        );
        bad(
            SimSetup {
                workload: Workload::Tbench { clients: 0 },
                sweep: Vec::new(),
                ..ok.clone()
            },
            "at least one client",
        );
        bad(
            SimSetup {
                sweep: vec![4, 0, 8],
                ..ok.clone()
            },
            "at least one instance",
        );
        bad(
            SimSetup {
                sweep: (1..=17).collect(),
                ..ok.clone()
            },
            "at most 16 points",
        );
        bad(
            SimSetup {
                duration_ms: 0,
                ..ok
            },
            "at least 1 ms",
        );
        let unknown = r#"{"machine":"flat-16","patches":"6.8","sim":{"workload":{"kind":"dbench"},"duration_ms":50}}"#;
        let e =
            decode(&format!("v1:{}", base64url_encode(unknown.as_bytes()))).expect_err("dbench");
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
        let e = decode(&format!("v1:{}", base64url_encode(b"{\"machine\":1}"))).expect_err("json");
        assert!(e.to_string().contains("cannot be read"), "{e}");
    }

    fn with_json(json: &str) -> Result<Scenario, ScenarioError> {
        decode(&format!("v1:{}", base64url_encode(json.as_bytes())))
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
            assert_eq!(base64url_encode(plain.as_bytes()), enc);
            assert_eq!(base64url_decode(enc).as_deref(), Ok(plain.as_bytes()));
        }
        assert_eq!(base64url_encode(&[0xfb, 0xff]), "-_8");
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
                    let n = presets::machine(name).expect("preset").nr_cpus();
                    Scenario {
                        machine: MachineChoice::Preset(name.to_string()),
                        patches: patches.to_string(),
                        cpu: a % n,
                        view,
                        wake: WakeSetup {
                            busy: random_busy(n, permille, seed).to_list(),
                            waker: b % n,
                            prev: c % n,
                            recent: sync.then_some(a % n),
                            sync,
                            has_idle_cores: hic,
                            nr_idle_scan: nis,
                            compare: cmp.map(str::to_string),
                        },
                        sim: sim.map(|(w, threads, ms, all)| SimSetup {
                            workload: Workload::with_defaults(Workload::NAMES[w])
                                .expect("a name")
                                .with_threads(threads),
                            cpus: if all { "all" } else { "node0" }.to_string(),
                            sweep: if all { vec![1, threads] } else { Vec::new() },
                            duration_ms: ms,
                            seed,
                        }),
                    }
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
            prop_assert_eq!(base64url_decode(&base64url_encode(&bytes)), Ok(bytes));
        }

        #[test]
        fn decode_never_panics_on_garbage(text in "\\PC{0,80}") {
            let _ = decode(&text);
            let _ = decode(&format!("v1:{text}"));
        }
    }
}
