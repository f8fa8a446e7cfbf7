use serde::{Deserialize, Serialize};

use super::page::PageSettingsV1;
use super::{
    parse_patches, MachineChoice, Scenario, ScenarioError, ScenarioMachine, View, MAX_SWEEP_POINTS,
};
use crate::cpumask::{CpuId, CpuMask};
use crate::experiment::{CpuSelection, Warmup};
use crate::workload::Workload;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioV1 {
    pub machine: MachineChoice,
    /// A patch set in the `6.6+cluster` syntax.
    pub patches: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpu: u32,
    #[serde(default)]
    pub view: View,
    #[serde(default)]
    pub wake: WakeSetupV1,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimSetupV1>,
    /// A lesson step, `"2.3"` (lesson 2, step 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson: Option<String>,
    /// The page's settings (from session 10; absent: the defaults).
    #[serde(default, skip_serializing_if = "PageSettingsV1::is_default")]
    pub ui: PageSettingsV1,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WakeSetupV1 {
    /// A kernel CPU list (`0-11,13-127`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub busy: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waker: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prev: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recent: Option<u32>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub sync: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_idle_cores: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_idle_scan: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<String>,
    /// Core-scheduling cookies of running tasks, per CPU list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cookies: Vec<CookieRuleV1>,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub wakee_cookie: u64,
    /// A simulated wake-up explained in place of the hand-set one (session 11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<super::SimWakeAt>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CookieRuleV1 {
    /// A kernel CPU list.
    pub cpus: String,
    pub cookie: u64,
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
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
    #[serde(default = "seed_one", skip_serializing_if = "is_seed_one")]
    pub seed: u64,
    /// Seeds per side; links from before it had one seed (and say so by leaving it
    /// out, which keeps their text unchanged).
    #[serde(default = "seeds_one", skip_serializing_if = "is_one")]
    pub seeds: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<u32>,
    /// `fifth` (left out) or `settled`.
    #[serde(default, skip_serializing_if = "is_fifth")]
    pub warmup: Warmup,
}

fn is_fifth(w: &Warmup) -> bool {
    *w == Warmup::Fifth
}

fn all_cpus() -> String {
    "all".to_string()
}

fn seed_one() -> u64 {
    1
}

// Fields at their defaults are left out of links (they read back as the defaults).
fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_seed_one(v: &u64) -> bool {
    *v == seed_one()
}

fn seeds_one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
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
                cookies: w
                    .cookies
                    .iter()
                    .map(|c| CookieRuleV1 {
                        cpus: c.cpus.to_list(),
                        cookie: c.cookie,
                    })
                    .collect(),
                wakee_cookie: w.wakee_cookie,
                sim: w.sim,
            },
            sim: s.sim.as_ref().map(SimSetupV1::from),
            lesson: s.lesson.map(|l| format!("{}.{}", l.lesson, l.step)),
            ui: PageSettingsV1::from(&s.page),
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
            seeds: sim.seeds,
            sweep: sim.sweep.clone(),
            warmup: sim.warmup,
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
            seeds: self.seeds,
            sweep: self.sweep.clone(),
            warmup: self.warmup,
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
            cookies: w
                .cookies
                .iter()
                .map(|c| {
                    Ok(super::CookieRule {
                        cpus: CpuMask::parse_list(n, &c.cpus).map_err(|err| {
                            ScenarioError::CpuList {
                                field: "cookie CPUs",
                                err,
                            }
                        })?,
                        cookie: c.cookie,
                    })
                })
                .collect::<Result<_, ScenarioError>>()?,
            wakee_cookie: w.wakee_cookie,
            sim: match w.sim {
                Some(at) if at.wake == 0 => {
                    return Err(ScenarioError::Sim(
                        "wake-up 0: simulated wake-ups are numbered from 1".into(),
                    ))
                }
                other => other,
            },
        };
        let lesson = self
            .lesson
            .as_deref()
            .map(|t| {
                let bad = || ScenarioError::Field {
                    path: "lesson".to_string(),
                    problem: format!("must be LESSON.STEP, e.g. \"2.3\", found {t:?}"),
                };
                let (l, st) = t.split_once('.').ok_or_else(bad)?;
                let (lesson, step) = (
                    l.parse::<u32>().map_err(|_| bad())?,
                    st.parse::<u32>().map_err(|_| bad())?,
                );
                if lesson == 0 || step == 0 {
                    return Err(bad());
                }
                Ok(super::LessonStep { lesson, step })
            })
            .transpose()?;
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
        // A sweep point names one of the simulation's scales (the page's default
        // simulation when the link has none).
        if let Some(scale) = wake.sim.and_then(|at| at.scale) {
            let points = sim
                .as_ref()
                .map_or_else(|| super::SimSetup::default().points(), |s| s.points());
            if !points.contains(&scale) {
                return Err(ScenarioError::Sim(format!(
                    "simulated wake-up at scale {scale}: the simulation runs at {}",
                    points
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        Ok(Scenario {
            cpu: cpu("selected CPU", self.cpu)?,
            machine,
            patches,
            view: self.view,
            wake,
            sim,
            lesson,
            page: self.ui.parse().map_err(ScenarioError::Page)?,
        })
    }
}
