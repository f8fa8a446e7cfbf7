//! Runs and sweeps as library functions: what the CLI's `run` and `sweep` print, and
//! what the reproductions of the seeds' tables build on.
//!
//! ```text
//!  RunSpec ──run()──▶ RunReport { value (the benchmark's own number), metrics, events, digest }
//!  SweepSpec ─points()─▶ [(threads, variant)] ─run() each (in parallel in the CLI)─▶ rows()
//! ```
//!
//! Nothing here measures wall time: callers that want it (the CLI) take it themselves.

use serde::Serialize;

use crate::cpumask::{CpuId, CpuMask};
use crate::metrics::MetricsReport;
use crate::patch::PatchSet;
use crate::sim::{SimConfig, SimError, SimTime, Simulator};
use crate::topology::{Machine, NodeId};
use crate::workload::{self, MetricKind, Workload};

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
    ) -> Result<RunSpec, String> {
        if duration_ms == 0 {
            return Err("the run lasts 0 ms; a run lasts at least 1 ms of simulated time".into());
        }
        let cpus = match cpus {
            None => machine.all_cpus(),
            Some(t) => parse_cpus(&machine, t)?,
        };
        Ok(RunSpec {
            machine,
            patches,
            cpus,
            workload,
            duration_ms,
            seed,
            check_invariants: false,
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
    ) -> Result<RunSpec, String> {
        let machine = crate::topology::presets::machine(machine).map_err(|e| e.to_string())?;
        let cpus = (cpus != "all").then_some(cpus);
        RunSpec::new(machine, cpus, patches, workload, duration_ms, seed)
    }
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub machine: String,
    pub patches: String,
    pub cpus: String,
    pub workload: Workload,
    pub seed: u64,
    /// The benchmark's headline number, in `unit`.
    pub value: f64,
    pub unit: &'static str,
    pub higher_is_better: bool,
    pub sim_ns: u64,
    pub events: u64,
    pub digest: String,
    pub cost_family: &'static str,
    pub metrics: MetricsReport,
}

/// Parses `--cpus`: a kernel CPU list (`0-31,64`), `nodeN`, or `nodeA-B`.
pub fn parse_cpus(machine: &Machine, text: &str) -> Result<CpuMask, String> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("node") {
        let (a, b) = match rest.split_once('-') {
            Some((a, b)) => (a, b),
            None => (rest, rest),
        };
        let parse = |s: &str| -> Result<usize, String> {
            s.parse::<usize>()
                .map_err(|_| format!("--cpus {t:?}: write nodeN or nodeA-B, e.g. node0 or node0-1"))
        };
        let (a, b) = (parse(a)?, parse(b)?);
        if a > b || b >= machine.nr_nodes() {
            return Err(format!(
                "--cpus {t:?}: {} has nodes 0-{}",
                machine.name,
                machine.nr_nodes() - 1
            ));
        }
        let mut m = CpuMask::new(machine.nr_cpus());
        for node in a..=b {
            let id = NodeId::try_from(node).map_err(|e| e.to_string())?;
            m.or_assign(&machine.node_cpus(id));
        }
        return Ok(m);
    }
    let m = CpuMask::parse_list(machine.nr_cpus(), t).map_err(|e| format!("--cpus: {e}"))?;
    if m.is_empty() {
        return Err("--cpus: the list is empty".into());
    }
    Ok(m)
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
        };
        Ok(LiveRun {
            sim: Simulator::new(cfg)?,
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

    /// What the run measured; complete once [`LiveRun::done`].
    pub fn report(&self) -> RunReport {
        let spec = &self.spec;
        let now = self.sim.now().ns();
        let cpus: Vec<u32> = spec.cpus.iter().map(|c| c.0).collect();
        let report = self.sim.metrics().report(now, &cpus);
        let value = headline(self.metric, &report, now);
        RunReport {
            machine: spec.machine.name.clone(),
            patches: spec.patches.to_string(),
            cpus: spec.cpus.to_list(),
            workload: spec.workload.clone(),
            seed: spec.seed,
            value,
            unit: self.metric.unit(),
            higher_is_better: self.metric.higher_is_better(),
            sim_ns: now,
            events: self.sim.events(),
            digest: format!("{:016x}", self.sim.digest()),
            cost_family: self.sim.cost_model().params.family,
            metrics: report,
        }
    }
}

fn headline(metric: MetricKind, r: &MetricsReport, now_ns: u64) -> f64 {
    let window = r.window_ns.max(1) as f64;
    match metric {
        MetricKind::Throughput { .. } => metric.throughput(r.units, r.window_ns).unwrap_or(0.0),
        MetricKind::CompletionTime => now_ns as f64 / 1e9,
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

/// A baseline-versus-patched sweep over thread counts.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    pub base: RunSpec,
    pub threads: Vec<u32>,
    pub baseline: PatchSet,
    pub patched: PatchSet,
}

/// One row of a sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    pub threads: u32,
    pub baseline: f64,
    pub patched: f64,
    pub change_pct: f64,
    pub baseline_events: u64,
    pub patched_events: u64,
}

impl SweepSpec {
    /// The runs of the sweep, baseline then patched for each thread count. Each is
    /// independent and deterministic, so callers may run them in any order or in
    /// parallel.
    pub fn points(&self) -> Vec<RunSpec> {
        let mut v = Vec::with_capacity(2 * self.threads.len());
        for &n in &self.threads {
            for ps in [self.baseline, self.patched] {
                let mut s = self.base.clone();
                s.patches = ps;
                s.workload = self.base.workload.with_threads(n);
                v.push(s);
            }
        }
        v
    }

    /// Pairs up the reports of [`SweepSpec::points`] (same order) into rows.
    pub fn rows(&self, reports: &[RunReport]) -> Vec<SweepRow> {
        self.threads
            .iter()
            .zip(reports.chunks(2))
            .map(|(&n, pair)| {
                let (b, p) = (&pair[0], &pair[1]);
                SweepRow {
                    threads: n,
                    baseline: b.value,
                    patched: p.value,
                    change_pct: change_pct(b.value, p.value, b.higher_is_better),
                    baseline_events: b.events,
                    patched_events: p.events,
                }
            })
            .collect()
    }

    /// Runs every point in order on this thread.
    pub fn run_serial(&self) -> Result<Vec<SweepRow>, SimError> {
        let reports = self
            .points()
            .iter()
            .map(run)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.rows(&reports))
    }
}

/// The CPU the tests and benches use as "the first CPU of the set".
pub fn first_cpu(m: &CpuMask) -> CpuId {
    m.first().unwrap_or(CpuId(0))
}
