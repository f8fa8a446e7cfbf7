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

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cpumask::{CpuId, CpuMask, CpuMaskError};
use crate::metrics::MetricsReport;
use crate::patch::PatchSet;
use crate::sim::perfetto::{chrome_trace_json, TraceInput};
use crate::sim::{CapturedWake, RecordConfig, Recording, SimConfig, SimError, SimTime, Simulator};
use crate::stats::Estimate;
use crate::topology::{Machine, NodeId};
use crate::workload::{self, MetricKind, Noise, Workload};

pub mod export;

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
    let simulated_ms = d.saturating_add((d / 5).min(200));
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

/// One seed of an A/B result: both sides' numbers and digests.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedPair {
    pub seed: u64,
    pub baseline: f64,
    pub patched: f64,
    /// [`change_pct`] of this seed's pair.
    pub change_pct: f64,
    pub baseline_digest: String,
    pub patched_digest: String,
}

/// An A/B result over several seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AbStats {
    /// The baseline's headline number over the seeds.
    pub baseline: Estimate,
    pub patched: Estimate,
    /// The per-seed change % (positive = patched better), its mean and interval. An
    /// interval that includes 0 is no significant change.
    pub change_pct: Estimate,
    /// Per seed, in seed order.
    pub seeds: Vec<SeedPair>,
}

/// Why reports cannot be paired into an A/B result.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum AbError {
    #[error("no runs to combine")]
    Empty,
    #[error("seed {seed} ran on one side only (or twice on one side)")]
    Unpaired { seed: u64 },
    #[error("expected {expected} reports, got {got}")]
    Count { expected: usize, got: usize },
}

/// Why a sweep could not run.
#[derive(Debug, Error)]
pub enum SweepError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Pairing(#[from] AbError),
}

/// Pairs `baseline` and `patched` reports by seed and summarises them: the reports may
/// come in any order (parallel runs finish in any order), the result is the same.
pub fn ab_stats(baseline: &[RunReport], patched: &[RunReport]) -> Result<AbStats, AbError> {
    if baseline.is_empty() {
        return Err(AbError::Empty);
    }
    fn sorted(r: &[RunReport]) -> Vec<&RunReport> {
        let mut v: Vec<&RunReport> = r.iter().collect();
        v.sort_by_key(|x| x.seed);
        v
    }
    let (b, p) = (sorted(baseline), sorted(patched));
    let mut pairs = Vec::with_capacity(b.len());
    for (i, x) in b.iter().enumerate() {
        let Some(y) = p.get(i).filter(|y| y.seed == x.seed) else {
            return Err(AbError::Unpaired { seed: x.seed });
        };
        if i > 0 && b[i - 1].seed == x.seed {
            return Err(AbError::Unpaired { seed: x.seed });
        }
        pairs.push(SeedPair {
            seed: x.seed,
            baseline: x.value,
            patched: y.value,
            change_pct: change_pct(x.value, y.value, x.higher_is_better),
            baseline_digest: x.digest.clone(),
            patched_digest: y.digest.clone(),
        });
    }
    if let Some(extra) = p.get(b.len()) {
        return Err(AbError::Unpaired { seed: extra.seed });
    }
    let est = |f: fn(&SeedPair) -> f64| {
        let v: Vec<f64> = pairs.iter().map(f).collect();
        Estimate::of(&v).ok_or(AbError::Empty)
    };
    Ok(AbStats {
        baseline: est(|s| s.baseline)?,
        patched: est(|s| s.patched)?,
        change_pct: est(|s| s.change_pct)?,
        seeds: pairs,
    })
}

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

/// The CPUs a workload may use, as the page's CPU field and `--cpus` take them:
/// `all`, a kernel CPU list (`0-31,64`), `nodeN` or `nodeA-B`.
///
/// Parsed against a machine, so a selection is always one that machine has; it keeps
/// its form (`node0` stays `node0`), which is what links and command lines print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuSelection {
    /// Every CPU of the machine.
    All,
    /// The CPUs of nodes `first..=last`.
    Nodes { first: NodeId, last: NodeId },
    /// An explicit, non-empty CPU list, sized to the machine.
    Cpus(CpuMask),
}

/// Why a CPU selection does not fit a machine.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CpuSelectionError {
    #[error("{text:?}: write all, a CPU list (0-31,64), nodeN or nodeA-B, e.g. node0 or node0-1")]
    NodeSyntax { text: String },
    #[error("{text:?}: {machine} has nodes 0-{last}")]
    NoSuchNode {
        text: String,
        machine: String,
        last: usize,
    },
    #[error("{0}")]
    List(#[from] CpuMaskError),
    #[error("the CPU list is empty")]
    Empty,
    #[error("the CPU list {list} is for a machine of {list_cpus} CPUs, not {machine_cpus}")]
    OtherMachine {
        list: String,
        list_cpus: u32,
        machine_cpus: u32,
    },
}

impl CpuSelection {
    /// Reads a selection of `machine`'s CPUs.
    pub fn parse(machine: &Machine, text: &str) -> Result<CpuSelection, CpuSelectionError> {
        let t = text.trim();
        if t == "all" {
            return Ok(CpuSelection::All);
        }
        if let Some(rest) = t.strip_prefix("node") {
            let (a, b) = rest.split_once('-').unwrap_or((rest, rest));
            let parse = |s: &str| {
                s.parse::<usize>()
                    .map_err(|_| CpuSelectionError::NodeSyntax {
                        text: t.to_string(),
                    })
            };
            let (a, b) = (parse(a)?, parse(b)?);
            let no_such = || CpuSelectionError::NoSuchNode {
                text: t.to_string(),
                machine: machine.name.clone(),
                last: machine.nr_nodes().saturating_sub(1),
            };
            if a > b || b >= machine.nr_nodes() {
                return Err(no_such());
            }
            let node = |n: usize| NodeId::try_from(n).map_err(|_| no_such());
            return Ok(CpuSelection::Nodes {
                first: node(a)?,
                last: node(b)?,
            });
        }
        let m = CpuMask::parse_list(machine.nr_cpus(), t)?;
        if m.is_empty() {
            return Err(CpuSelectionError::Empty);
        }
        Ok(CpuSelection::Cpus(m))
    }

    /// The selected CPUs of `machine` (the machine it was parsed for).
    pub fn mask(&self, machine: &Machine) -> Result<CpuMask, CpuSelectionError> {
        match self {
            CpuSelection::All => Ok(machine.all_cpus()),
            CpuSelection::Nodes { first, last } => {
                if usize::from(last.0) >= machine.nr_nodes() || first > last {
                    return Err(CpuSelectionError::NoSuchNode {
                        text: self.to_string(),
                        machine: machine.name.clone(),
                        last: machine.nr_nodes().saturating_sub(1),
                    });
                }
                let mut m = CpuMask::new(machine.nr_cpus());
                for node in first.0..=last.0 {
                    m.or_assign(&machine.node_cpus(NodeId(node)));
                }
                Ok(m)
            }
            CpuSelection::Cpus(m) if m.nr_cpu_ids() == machine.nr_cpus() => Ok(m.clone()),
            CpuSelection::Cpus(m) => Err(CpuSelectionError::OtherMachine {
                list: m.to_list(),
                list_cpus: m.nr_cpu_ids(),
                machine_cpus: machine.nr_cpus(),
            }),
        }
    }
}

impl std::fmt::Display for CpuSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuSelection::All => f.write_str("all"),
            CpuSelection::Nodes { first, last } if first == last => write!(f, "node{}", first.0),
            CpuSelection::Nodes { first, last } => write!(f, "node{}-{}", first.0, last.0),
            CpuSelection::Cpus(m) => f.write_str(&m.to_list()),
        }
    }
}

/// What one run measured. It reads back from its own JSON (the page's workers send it
/// to the page, which renders the same exports as the CLI, [`export`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub machine: String,
    pub patches: String,
    pub cpus: String,
    pub workload: Workload,
    pub seed: u64,
    /// The benchmark's headline number, in `unit`.
    pub value: f64,
    pub unit: String,
    pub higher_is_better: bool,
    pub sim_ns: u64,
    pub events: u64,
    pub digest: String,
    pub cost_family: String,
    pub metrics: MetricsReport,
}

/// The CPUs of a [`CpuSelection`] written as text (`0-31,64`, `nodeN`, `nodeA-B`, `all`).
pub fn parse_cpus(machine: &Machine, text: &str) -> Result<CpuMask, CpuSelectionError> {
    CpuSelection::parse(machine, text)?.mask(machine)
}

/// Runs one simulation to its end.
pub fn run(spec: &RunSpec) -> Result<RunReport, SimError> {
    let mut live = LiveRun::new(spec)?;
    live.finish()?;
    Ok(live.report())
}

/// One simulation run in slices of simulated time, for a caller that shows it while it
/// runs (the page's live graphs). Any slicing gives the same events in the same order
/// as [`run`], so the same report and digest.
pub struct LiveRun {
    sim: Simulator,
    spec: RunSpec,
    metric: MetricKind,
    /// How far [`LiveRun::advance`] has been asked to go (events may be sparser).
    until: SimTime,
    done: bool,
}

impl LiveRun {
    /// Builds the simulator for `spec`; nothing has run yet.
    pub fn new(spec: &RunSpec) -> Result<LiveRun, SimError> {
        LiveRun::build(spec, None)
    }

    /// [`LiveRun::new`] with the simulator's event recorder on (`sim::record`): the
    /// same run and digest, plus its [`Recording`] and, if asked, a captured wake-up.
    pub fn with_recorder(spec: &RunSpec, rc: RecordConfig) -> Result<LiveRun, SimError> {
        LiveRun::build(spec, Some(rc))
    }

    fn build(spec: &RunSpec, rc: Option<RecordConfig>) -> Result<LiveRun, SimError> {
        let cost = crate::cost::CostParams::for_machine(&spec.machine);
        let plan = workload::build(&spec.workload, &cost, spec.machine.nr_cpus())
            .map_err(SimError::Workload)?;
        let metric = plan.metric;
        let until_exit = plan.until_exit;
        let d = SimTime::from_ms(spec.duration_ms.max(1));
        let warmup = if until_exit {
            SimTime::ZERO
        } else {
            SimTime((d.ns() / 5).min(200_000_000))
        };
        let cfg = SimConfig {
            machine: spec.machine.clone(),
            patches: spec.patches,
            allowed: spec.cpus.clone(),
            plan,
            seed: spec.seed,
            duration: if until_exit { d } else { warmup + d.ns() },
            warmup,
            check_invariants: spec.check_invariants,
            cost_terms: spec.cost_terms,
            noise: spec.noise,
        };
        let sim = match rc {
            Some(rc) => Simulator::with_recorder(cfg, rc)?,
            None => Simulator::new(cfg)?,
        };
        Ok(LiveRun {
            sim,
            spec: spec.clone(),
            metric,
            until: SimTime::ZERO,
            done: false,
        })
    }

    /// Runs `ns` more simulated nanoseconds, or to the end if that comes first.
    /// Returns whether the run is over.
    pub fn advance(&mut self, ns: u64) -> Result<bool, SimError> {
        if self.done {
            return Ok(true);
        }
        self.until = SimTime(self.until.ns().saturating_add(ns));
        if self.until >= self.sim.end_time() || !self.sim.run_until(self.until) {
            // The last stretch (or an error, or every task gone) through `run()`,
            // which also closes the accounting at the end.
            return self.finish().map(|()| true);
        }
        Ok(false)
    }

    /// Runs to the end.
    pub fn finish(&mut self) -> Result<(), SimError> {
        if !self.done {
            self.sim.run()?;
            self.done = true;
        }
        Ok(())
    }

    pub fn done(&self) -> bool {
        self.done
    }

    /// Simulated time so far, warm-up included.
    pub fn now_ns(&self) -> u64 {
        self.sim.now().ns()
    }

    /// Still in the warm-up, whose metrics are thrown away.
    pub fn warming_up(&self) -> bool {
        !self.sim.measuring()
    }

    pub fn events(&self) -> u64 {
        self.sim.events()
    }

    /// The warm-up's length (0 for completion-time workloads).
    pub fn warmup_ns(&self) -> u64 {
        self.sim.warmup_time().ns()
    }

    /// The run lasts until every task exits ([`Workload::runs_to_completion`]).
    pub fn runs_to_completion(&self) -> bool {
        self.spec.workload.runs_to_completion()
    }

    /// Tasks that have not exited.
    pub fn live_tasks(&self) -> u32 {
        self.sim.live_tasks()
    }

    pub fn metric(&self) -> MetricKind {
        self.metric
    }

    /// The throughput series so far, in the headline's unit per sampling interval
    /// (empty for completion-time workloads), and the interval.
    pub fn series(&self) -> (Vec<f64>, u64) {
        let m = self.sim.metrics();
        let iv = m.series_interval_ns.max(1);
        let v = m
            .series
            .iter()
            .map_while(|&u| self.metric.throughput(u, iv))
            .collect();
        (v, iv)
    }

    /// The recorder's records (`None` unless built [`LiveRun::with_recorder`]).
    pub fn recording(&self) -> Option<&Recording> {
        self.sim.recording()
    }

    /// The wake-ups `RecordConfig::capture_wake` named that the run has reached.
    pub fn captured_wakes(&self) -> &[CapturedWake] {
        self.sim.captured_wakes()
    }

    /// The recording as a Chrome/Perfetto trace (`sim::perfetto`), with the run's
    /// throughput series as a counter; `None` without a recorder.
    pub fn chrome_trace(&self) -> Option<String> {
        let rec = self.sim.recording()?;
        let spec = &self.spec;
        let cpus: Vec<CpuId> = self.sim.active_cpus().collect();
        let (series, iv) = self.series();
        let unit = self.metric.unit();
        let title = format!(
            "{} on {} (CPUs {}), {}, seed {}",
            spec.workload.name(),
            spec.machine.name,
            spec.cpus.to_list(),
            spec.patches,
            spec.seed
        );
        Some(chrome_trace_json(&TraceInput {
            machine: &spec.machine,
            cpus: &cpus,
            recording: rec,
            end_ns: self.sim.now().ns(),
            title: &title,
            series: (!series.is_empty()).then_some((
                series.as_slice(),
                iv,
                self.sim.warmup_time().ns(),
                unit,
            )),
        }))
    }

    /// What the run measured; complete once [`LiveRun::done`].
    pub fn report(&self) -> RunReport {
        let spec = &self.spec;
        let now = self.sim.now().ns();
        let cpus: Vec<u32> = spec.cpus.iter().map(|c| c.0).collect();
        let report = self.sim.metrics().report(now, &cpus);
        let value = headline(self.metric, &report);
        RunReport {
            machine: spec.machine.name.clone(),
            patches: spec.patches.to_string(),
            cpus: spec.cpus.to_list(),
            workload: spec.workload.clone(),
            seed: spec.seed,
            value,
            unit: self.metric.unit().to_string(),
            higher_is_better: self.metric.higher_is_better(),
            sim_ns: now,
            events: self.sim.events(),
            digest: format!("{:016x}", self.sim.digest()),
            cost_family: self.sim.cost_model().params.family.to_string(),
            metrics: report,
        }
    }
}

fn headline(metric: MetricKind, r: &MetricsReport) -> f64 {
    let window = r.window_ns.max(1) as f64;
    match metric {
        MetricKind::Throughput { .. } => metric.throughput(r.units, r.window_ns).unwrap_or(0.0),
        // From the benchmark's own start time (`Op::StartClock`; else the run's start).
        MetricKind::CompletionTime => r.window_ns as f64 / 1e9,
        MetricKind::WakeLatencyP99 => r.task_wake_latency_ns.p99 as f64 / 1e3,
        MetricKind::RoundTripUs { pairs } => {
            if r.units == 0 {
                f64::INFINITY
            } else {
                window * pairs as f64 / r.units as f64 / 1e3
            }
        }
    }
}

/// `change_pct` as the seeds' tables print it: positive when `patched` is better
/// (higher throughput, or shorter time/latency).
pub fn change_pct(baseline: f64, patched: f64, higher_is_better: bool) -> f64 {
    if baseline == 0.0 || !baseline.is_finite() || !patched.is_finite() {
        return 0.0;
    }
    if higher_is_better {
        (patched - baseline) / baseline * 100.0
    } else {
        (baseline - patched) / baseline * 100.0
    }
}

/// A baseline-versus-patched sweep over thread counts, each point over `seeds` seeds
/// (from `base.seed`, see [`seeds`]).
#[derive(Clone, Debug)]
pub struct SweepSpec {
    pub base: RunSpec,
    pub threads: Vec<u32>,
    pub baseline: PatchSet,
    pub patched: PatchSet,
    /// Seeds per side and point, at least 1 (1: today's single-seed sweep).
    pub seeds: u32,
}

/// One row of a sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    pub threads: u32,
    /// The means over the seeds.
    pub baseline: f64,
    pub patched: f64,
    /// The mean of the per-seed change % (one seed: that seed's change).
    pub change_pct: f64,
    /// The change's 95% interval (`None` with one seed).
    pub change_lo: Option<f64>,
    pub change_hi: Option<f64>,
    pub baseline_events: u64,
    pub patched_events: u64,
    /// Each seed's numbers and digests.
    pub seeds: Vec<SeedPair>,
}

impl SweepSpec {
    fn n_seeds(&self) -> usize {
        self.seeds.max(1) as usize
    }

    /// The runs of the sweep: for each thread count, the baseline's seeds then the
    /// patched kernel's. Each is independent and deterministic, so callers may run
    /// them in any order or in parallel.
    pub fn points(&self) -> Vec<RunSpec> {
        let k = self.n_seeds();
        let mut v = Vec::with_capacity(2 * k * self.threads.len());
        for &n in &self.threads {
            for ps in [self.baseline, self.patched] {
                for seed in seeds(self.base.seed, k as u32) {
                    let mut s = self.base.with_seed(seed);
                    s.patches = ps;
                    s.workload = self.base.workload.with_threads(n);
                    v.push(s);
                }
            }
        }
        v
    }

    /// Pairs up the reports of [`SweepSpec::points`] (same order) into rows
    /// ([`export::sweep_rows`], which the page calls without a `RunSpec`).
    pub fn rows(&self, reports: &[RunReport]) -> Result<Vec<SweepRow>, AbError> {
        export::sweep_rows(&self.threads, self.seeds, reports)
    }

    /// Runs every point in order on this thread.
    pub fn run_serial(&self) -> Result<Vec<SweepRow>, SweepError> {
        let reports = self
            .points()
            .iter()
            .map(run)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.rows(&reports)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn spec(preset: &str, cpus: &str, workload: Workload, ms: u64) -> RunSpec {
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

    fn netperf(patches: &str, seed: u64) -> RunReport {
        let mut s = spec(
            "kunpeng920-6426",
            "node0",
            Workload::NetperfTcpRr { instances: 4 },
            5,
        );
        s.patches = patches.parse().expect("patches");
        run(&s.with_seed(seed)).expect("runs")
    }

    /// Parallel runs finish in any order: the result is the seed-ordered one.
    #[test]
    fn seeds_combine_in_seed_order_whatever_order_the_reports_come_in() {
        let b: Vec<RunReport> = seeds(7, 3).map(|k| netperf("6.6", k)).collect();
        let p: Vec<RunReport> = seeds(7, 3).map(|k| netperf("6.6+cluster", k)).collect();
        let in_order = ab_stats(&b, &p).unwrap();
        assert_eq!(
            in_order.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(),
            vec![7, 8, 9]
        );
        let rev = |v: &[RunReport]| v.iter().rev().cloned().collect::<Vec<_>>();
        let mixed = vec![b[1].clone(), b[2].clone(), b[0].clone()];
        assert_eq!(ab_stats(&rev(&b), &p).unwrap(), in_order);
        assert_eq!(ab_stats(&mixed, &rev(&p)).unwrap(), in_order);
        // The change is the mean of the paired per-seed changes.
        let per: Vec<f64> = (0..3)
            .map(|i| change_pct(b[i].value, p[i].value, true))
            .collect();
        assert_eq!(in_order.change_pct, Estimate::of(&per).unwrap());
        assert!(in_order.change_pct.interval().is_some());
        // Distinct seeds are distinct runs.
        assert_ne!(b[0].digest, b[1].digest);
        // One seed: that seed's change, no interval.
        let one = ab_stats(&b[..1], &p[..1]).unwrap();
        assert_eq!(one.change_pct.mean, per[0]);
        assert_eq!(one.change_pct.interval(), None);
    }

    #[test]
    fn reports_that_do_not_pair_by_seed_are_refused() {
        let b = [netperf("6.6", 1), netperf("6.6", 2)];
        let p = [netperf("6.6+cluster", 1), netperf("6.6+cluster", 3)];
        assert_eq!(ab_stats(&b, &p), Err(AbError::Unpaired { seed: 2 }));
        assert_eq!(ab_stats(&b, &p[..1]), Err(AbError::Unpaired { seed: 2 }));
        assert_eq!(ab_stats(&b[..1], &p), Err(AbError::Unpaired { seed: 3 }));
        assert_eq!(ab_stats(&[], &[]), Err(AbError::Empty));
        let twice = [b[0].clone(), b[0].clone()];
        assert_eq!(
            ab_stats(&twice, &[p[0].clone(), p[0].clone()]),
            Err(AbError::Unpaired { seed: 1 })
        );
    }

    #[test]
    fn seeds_count_up_from_the_base_and_wrap() {
        assert_eq!(seeds(5, 3).collect::<Vec<_>>(), vec![5, 6, 7]);
        assert_eq!(seeds(u64::MAX, 2).collect::<Vec<_>>(), vec![u64::MAX, 0]);
        assert_eq!(seeds(1, 0).count(), 0);
    }
}
