//! The simulation a scenario carries: [`SimSetup`] (the workload, its CPUs, duration,
//! seeds and sweep), the limits a link may ask for, and the [`RunSpec`] of each of its
//! points, the one description of a run that the CLI, the page and `reproduce` share.

use crate::experiment::{CpuSelection, RunSpec, Warmup};
use crate::patch::PatchSet;
use crate::topology::Machine;
use crate::workload::Workload;

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
    /// Throughput workloads: the warm-up before the window (`--warmup`).
    pub warmup: Warmup,
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
            warmup: Warmup::Fifth,
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
        let spec = RunSpec {
            warmup: self.warmup,
            ..spec
        };
        let cost = crate::cost::CostParams::for_machine(machine);
        crate::workload::build(&spec.workload, &cost, machine.nr_cpus())?;
        Ok(spec)
    }
}
