//! Runs and sweeps as library functions: what the CLI's `run` and `sweep` print, and
//! what the reproductions of the seeds' tables build on.
//!
//! ```text
//!  RunSpec ──run()──▶ RunReport { value (the benchmark's own number), metrics, events, digest }
//!  SweepSpec ─points()─▶ [(threads, variant, seed)] ─run() each (in parallel in the CLI)─▶ rows()
//!  A/B over seeds: [RunReport] × 2 ──ab_stats()──▶ AbStats { per side mean, change % [lo, hi] }
//! ```
//!
//! Seeds: an A/B result over `n` seeds runs each side with seeds `base, base + 1, …`
//! ([`seeds`]); each seed is a whole independent run (its own start placement and its
//! own random draws, the warm-up dropped by the simulator). The change is paired by
//! seed: the mean of the per-seed change %, with a Student-t 95% interval
//! ([`crate::stats::Estimate`]). Reports are combined in seed order whatever order
//! they arrive in, so parallel callers get the same numbers as serial ones.
//!
//! Nothing here measures wall time: callers that want it (the CLI) take it themselves.
//!
//! [`export`] writes runs and sweeps as CSV and JSON: the CLI's `--format csv|json`
//! and the page's downloads are that one module's bytes.
//!
//! The files: this one holds [`RunSpec`] and the seeds; `cpus.rs` the CPU selection
//! (`--cpus`, the page's CPU field), `live.rs` one run ([`run`], [`LiveRun`],
//! [`RunReport`]), `ab.rs` the A/B results over seeds and the sweeps.

use thiserror::Error;

use crate::cpumask::CpuMask;
use crate::patch::PatchSet;
use crate::topology::Machine;
use crate::workload::{Noise, Workload};

mod ab;
mod cpus;
pub mod export;
mod live;

pub use ab::{ab_stats, change_pct, AbError, AbStats, SeedPair, SweepError, SweepRow, SweepSpec};
pub use cpus::{parse_cpus, CpuSelection, CpuSelectionError};
pub use live::{run, LiveRun, RunReport};

/// Simulated events per busy CPU per simulated millisecond, an upper figure: a CPU
/// running a benchmark's tasks ends a burst (one event) every couple of µs.
/// Calibrated on docs/performance.md's runs (session 7, `--cpus node0` of
/// kunpeng920-6426): tbench with 1 client 540–607 events per ms of simulated time, 8
/// clients 4.2–4.8 k, 32 clients (every CPU of the node busy) 13.0 k, 405 per CPU;
/// the netperf reference run (32 pairs on 64 CPUs) 347 per CPU. Since the workloads
/// fork their tasks over time (session 9), each pair of that run gets two CPUs of its
/// own and every wake-up an IPI: 622 per pair, 311 per CPU.
pub const EVENTS_PER_CPU_MS: u64 = 700;

/// About how many events `spec` simulates, an upper estimate for deciding whether to
/// start it without asking: [`EVENTS_PER_CPU_MS`] × the CPUs its tasks can keep busy
/// (its scale, [`Workload::threads`], but no more than its CPUs: more tasks than CPUs
/// queue, they do not add events) × the simulated time, warm-up included. Nothing is
/// built or run; saturating, so a hostile spec gives a huge number, not a wrap.
pub fn estimate_events(spec: &RunSpec) -> u64 {
    let busy = u64::from(spec.workload.threads().max(1)).min(u64::from(spec.cpus.weight().max(1)));
    let d = spec.duration_ms.max(1);
    let mut warmup_ms = (d / 5).min(200);
    if spec.warmup == Warmup::Settled {
        // The LLC's busy round: max_interval (2 ms per CPU) × busy_factor (16), and
        // two ticks of at most 10 ms.
        let llc = spec
            .cpus
            .iter()
            .next()
            .map_or(1, |c| u64::from(spec.machine.llc_mask(c).weight()));
        warmup_ms = warmup_ms.max(llc.saturating_mul(32).saturating_add(20));
    }
    let simulated_ms = d.saturating_add(warmup_ms);
    EVENTS_PER_CPU_MS
        .saturating_mul(busy)
        .saturating_mul(simulated_ms)
}

/// One simulation to run.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub machine: Machine,
    pub patches: PatchSet,
    /// The CPUs the workload may use.
    pub cpus: CpuMask,
    pub workload: Workload,
    /// Throughput workloads: the measured window (a warm-up of a fifth of it, at most
    /// 200 ms, runs first). Completion workloads: the cap on simulated time.
    pub duration_ms: u64,
    pub seed: u64,
    /// Check conservation invariants after every event (slow; tests).
    pub check_invariants: bool,
    /// The cost terms priced (all unless one is switched off to measure it).
    pub cost_terms: crate::cost::CostTerms,
    /// The machine's background activity (`--noise`); `Noise::Default` unless set.
    pub noise: Noise,
    /// Throughput workloads: how long the warm-up lasts at least (`--warmup`).
    pub warmup: Warmup,
}

/// How long a throughput run's warm-up lasts (its metrics are dropped), counted from
/// the benchmark's start (dbench's release) or the run's. The measured window,
/// [`RunSpec::duration_ms`], follows it either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Warmup {
    /// A fifth of the measured window, at most 200 ms: dbench's rule
    /// (`options.warmup = options.timelimit / 5`), scaled down with the window.
    #[default]
    Fifth,
    /// At least until each LLC has been balanced at its busy interval after the
    /// benchmark started (the LLC's `max_interval` × `busy_factor`, 0.26-1 s on the
    /// presets), so that the SIS_UTIL scan depth the wake-ups read is the running
    /// benchmark's rather than the idle machine's it started with. The published runs
    /// warm up for minutes; a shorter warm-up measures their start-up.
    Settled,
}

impl Warmup {
    /// The names `--warmup` takes.
    pub const NAMES: [&'static str; 2] = ["fifth", "settled"];

    /// The name `--warmup` takes and prints.
    pub fn name(self) -> &'static str {
        match self {
            Warmup::Fifth => Warmup::NAMES[0],
            Warmup::Settled => Warmup::NAMES[1],
        }
    }

    /// What the warm-up is, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Warmup::Fifth => "a warm-up of a fifth of it (at most 200 ms)",
            Warmup::Settled => {
                "a settled warm-up (past the LLC's first busy balance round: max_interval × busy_factor)"
            }
        }
    }

    /// `--warmup`'s value.
    pub fn parse(text: &str) -> Result<Warmup, String> {
        match text {
            "fifth" => Ok(Warmup::Fifth),
            "settled" => Ok(Warmup::Settled),
            _ => Err(format!(
                "unknown warm-up {text:?}; known: {}",
                Warmup::NAMES.join(", ")
            )),
        }
    }
}

impl RunSpec {
    /// A run on `machine`, `cpus` as `--cpus` takes it (`None`: every CPU); invariant
    /// checks off.
    pub fn new(
        machine: Machine,
        cpus: Option<&str>,
        patches: PatchSet,
        workload: Workload,
        duration_ms: u64,
        seed: u64,
    ) -> Result<RunSpec, RunSpecError> {
        let cpus = match cpus {
            None => CpuSelection::All,
            Some(t) => CpuSelection::parse(&machine, t)?,
        };
        RunSpec::with_cpus(machine, &cpus, patches, workload, duration_ms, seed)
    }

    /// A run on `machine` of the CPUs `cpus` selects; invariant checks off.
    pub fn with_cpus(
        machine: Machine,
        cpus: &CpuSelection,
        patches: PatchSet,
        workload: Workload,
        duration_ms: u64,
        seed: u64,
    ) -> Result<RunSpec, RunSpecError> {
        if duration_ms == 0 {
            return Err(RunSpecError::NoDuration);
        }
        let cpus = cpus.mask(&machine)?;
        Ok(RunSpec {
            machine,
            patches,
            cpus,
            workload,
            duration_ms,
            seed,
            check_invariants: false,
            cost_terms: crate::cost::CostTerms::ALL,
            noise: Noise::default(),
            warmup: Warmup::Fifth,
        })
    }

    /// [`RunSpec::new`] on a preset machine; `cpus` may also be `all`.
    pub fn on_preset(
        machine: &str,
        cpus: &str,
        patches: PatchSet,
        workload: Workload,
        duration_ms: u64,
        seed: u64,
    ) -> Result<RunSpec, RunSpecError> {
        let machine = crate::topology::presets::machine(machine)
            .map_err(|e| RunSpecError::Machine(e.to_string()))?;
        let cpus = CpuSelection::parse(&machine, cpus)?;
        RunSpec::with_cpus(machine, &cpus, patches, workload, duration_ms, seed)
    }
}

impl RunSpec {
    /// The same run with another seed.
    pub fn with_seed(&self, seed: u64) -> RunSpec {
        RunSpec {
            seed,
            ..self.clone()
        }
    }
}

/// The seeds of an `n`-seed experiment that starts at `base`: `base, base + 1, …`
/// (wrapping past `u64::MAX`, so any base is valid).
pub fn seeds(base: u64, n: u32) -> impl Iterator<Item = u64> {
    (0..u64::from(n)).map(move |i| base.wrapping_add(i))
}

/// The most seeds one A/B result takes: a bound on the runs a flag or a link can ask
/// for (each seed is a whole run per side).
pub const MAX_SEEDS: u32 = 64;

/// Why a run cannot be set up. The messages name the value, not a command-line flag:
/// the CLI adds the flag ([`RunSpecError::flag`]), the page shows them as they are.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RunSpecError {
    #[error("a run lasts at least 1 ms of simulated time")]
    NoDuration,
    #[error(transparent)]
    Cpus(#[from] CpuSelectionError),
    #[error("{0}")]
    Machine(String),
}

impl RunSpecError {
    /// The CLI flag that set the value this error is about.
    pub fn flag(&self) -> &'static str {
        match self {
            RunSpecError::NoDuration => "--duration-ms",
            RunSpecError::Cpus(_) => "--cpus",
            RunSpecError::Machine(_) => "--machine",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    pub(super) fn spec(preset: &str, cpus: &str, workload: Workload, ms: u64) -> RunSpec {
        let m = presets::machine(preset).expect("preset");
        RunSpec::new(
            m,
            Some(cpus),
            PatchSet::release(crate::release::Release::new(6, 8)),
            workload,
            ms,
            1,
        )
        .expect("spec")
    }

    #[test]
    fn the_estimate_bounds_real_runs_from_above_within_a_few_times() {
        for (cpus, workload) in [
            ("node0", Workload::Tbench { clients: 1 }),
            ("node0", Workload::Tbench { clients: 8 }),
            ("node0", Workload::Tbench { clients: 64 }),
            ("node0-1", Workload::NetperfTcpRr { instances: 32 }),
        ] {
            let s = spec("kunpeng920-6426", cpus, workload.clone(), 50);
            let est = estimate_events(&s);
            let real = run(&s).expect("runs").events;
            assert!(
                real <= est && est <= 4 * real,
                "{workload:?} on {cpus}: estimated {est}, simulated {real}"
            );
        }
    }

    #[test]
    fn a_settled_warm_up_is_simulated_and_estimated() {
        let fifth = spec(
            "kunpeng920-6426",
            "node0",
            Workload::NetperfTcpRr { instances: 8 },
            20,
        );
        let settled = RunSpec {
            warmup: Warmup::Settled,
            ..fifth.clone()
        };
        let (a, b) = (run(&fifth).expect("runs"), run(&settled).expect("runs"));
        // The LLC of node 0 has 32 CPUs: max_interval 64 ms × busy_factor 16 at HZ 250
        // is 256 jiffies less one, and two ticks: 257 jiffies = 1028 ms, then 20 ms.
        assert_eq!(a.sim_ns, 24_000_000);
        assert_eq!(b.sim_ns, 1_048_000_000);
        let est = estimate_events(&settled);
        assert!(
            b.events <= est && est <= 4 * b.events,
            "estimated {est}, simulated {}",
            b.events
        );
    }

    #[test]
    fn a_hostile_link_s_run_is_estimated_in_billions_without_running() {
        // Issue 16: tbench at 50,000 clients for 60 s on 384 CPUs.
        let s = spec(
            "epyc9654-2p",
            "all",
            Workload::Tbench { clients: 50_000 },
            60_000,
        );
        let est = estimate_events(&s);
        assert_eq!(est, EVENTS_PER_CPU_MS * 384 * 60_200);
        assert!(est > 10_000_000_000, "{est}");
        let mut s = s;
        s.duration_ms = u64::MAX;
        assert_eq!(estimate_events(&s), u64::MAX, "saturates");
    }

    #[test]
    fn warm_ups_parse_by_name_and_say_what_they_know() {
        for w in [Warmup::Fifth, Warmup::Settled] {
            assert_eq!(Warmup::parse(w.name()), Ok(w));
        }
        assert_eq!(Warmup::default(), Warmup::Fifth);
        let e = Warmup::parse("Settled").unwrap_err();
        assert!(
            e.contains("\"Settled\"") && e.contains("fifth, settled"),
            "{e}"
        );
    }

    #[test]
    fn seeds_count_up_from_the_base_and_wrap() {
        assert_eq!(seeds(5, 3).collect::<Vec<_>>(), vec![5, 6, 7]);
        assert_eq!(seeds(u64::MAX, 2).collect::<Vec<_>>(), vec![u64::MAX, 0]);
        assert_eq!(seeds(1, 0).count(), 0);
    }
}
