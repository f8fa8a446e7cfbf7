//! Seed 03's run as `reproduce --scale full` builds it (`hackbench -g 32 -f 20
//! --threads --pipe`, 100-byte messages, on `epyc9654-2p`, every CPU), recorded and
//! run to its end: the set-up the seed-03 analysis examples share (`#[path]`-included
//! by `seed03_ccx.rs` and `seed03_counts.rs`; not an example itself).

// Each including example is its own crate and may leave a field or helper unused.
#![allow(dead_code)]

use schedlab_core::cost::{CostParams, CostTerms};
use schedlab_core::sim::record::MAX_RECORD_CAP;
use schedlab_core::sim::{RecordConfig, SimConfig, SimTime, Simulator};
use schedlab_core::workload::{self, Noise};
use schedlab_core::{Machine, PatchSet, RunSpec, Workload};

/// A finished seed-03 run with the recorder on (its cap at the maximum).
pub struct Seed03Run {
    pub sim: Simulator,
    pub machine: Machine,
    /// Each task's role (`workload::build`'s plan), by task id.
    pub roles: Vec<&'static str>,
}

/// Runs seed 03 under `patches` and `seed` for `loops` loops, with the cost `terms`
/// and, if `quiet`, no background noise (else the preset's default).
pub fn run_seed03(
    patches: PatchSet,
    seed: u64,
    loops: u64,
    terms: CostTerms,
    quiet: bool,
) -> Result<Seed03Run, String> {
    let w = Workload::Hackbench {
        groups: 32,
        fds: 20,
        loops,
        pipe: true,
        threads: true,
        msg_bytes: 100,
    };
    let spec = RunSpec::on_preset("epyc9654-2p", "all", patches, w, 600_000, seed)
        .map_err(|e| e.to_string())?;
    let cost = CostParams::for_machine(&spec.machine);
    let plan = workload::build(&spec.workload, &cost, spec.machine.nr_cpus())?;
    let roles: Vec<&'static str> = plan.tasks.iter().map(|t| t.role).collect();
    let cfg = SimConfig {
        machine: spec.machine.clone(),
        patches: spec.patches,
        allowed: spec.cpus.clone(),
        plan,
        seed,
        duration: SimTime::from_ms(600_000),
        warmup: SimTime::ZERO,
        check_invariants: false,
        cost_terms: terms,
        noise: if quiet { Noise::Quiet } else { spec.noise },
        settle: false,
    };
    let rc = RecordConfig {
        cap: MAX_RECORD_CAP,
        ..RecordConfig::default()
    };
    let mut sim = Simulator::with_recorder(cfg, rc).map_err(|e| e.to_string())?;
    sim.run().map_err(|e| e.to_string())?;
    Ok(Seed03Run {
        sim,
        machine: spec.machine,
        roles,
    })
}

/// The optional positional argument `i` parsed as a number, or `default`.
pub fn arg_or<T: std::str::FromStr>(
    a: &[String],
    i: usize,
    name: &str,
    default: T,
) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    match a.get(i) {
        None => Ok(default),
        Some(x) => x.parse().map_err(|e| format!("{name} {x}: {e}")),
    }
}
