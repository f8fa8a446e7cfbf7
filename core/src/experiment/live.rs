//! One run: [`run`] to its end, or [`LiveRun`] in slices of simulated time, and the
//! [`RunReport`] of what it measured.

use serde::{Deserialize, Serialize};

use crate::cpumask::CpuId;
use crate::metrics::MetricsReport;
use crate::sim::perfetto::{chrome_trace_json, TraceInput};
use crate::sim::{CapturedWake, RecordConfig, Recording, SimConfig, SimError, SimTime, Simulator};
use crate::workload::{self, MetricKind, Workload};

use super::RunSpec;

/// What one run measured. It reads back from its own JSON (the page's workers send it
/// to the page, which renders the same exports as the CLI, [`export`](super::export)).
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
    /// When the benchmark started its clients (dbench's release after its start
    /// barrier; the warm-up counts from here), simulated ns; absent for a benchmark
    /// whose tasks start with the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<u64>,
    pub events: u64,
    /// How much of the measured window, simulated ns, comes before every LLC's first
    /// busy balance round ([`crate::sim::Simulator::unsettled_time`]); 0 with
    /// `--warmup settled` (absent from JSON when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unsettled_ns: u64,
    pub digest: String,
    pub cost_family: String,
    pub metrics: MetricsReport,
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
            settle: spec.warmup == super::Warmup::Settled,
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

    /// Where the warm-up ends, simulated ns from the run's start (0 for completion-time
    /// workloads); `None` while it waits for the benchmark's start (dbench's clients at
    /// their barrier: the warm-up starts at the release, [`LiveRun::start_ns`]).
    pub fn warmup_ns(&self) -> Option<u64> {
        (!self.sim.start_pending()).then(|| self.sim.warmup_time().ns())
    }

    /// When the benchmark started its clients (dbench's release, simulated ns);
    /// `None` before it, or for a benchmark without such a start.
    pub fn start_ns(&self) -> Option<u64> {
        self.sim.start_time().map(SimTime::ns)
    }

    /// The benchmark has a start its warm-up waits for and has not reached it yet.
    pub fn start_pending(&self) -> bool {
        self.sim.start_pending()
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

    /// The wake-ups `RecordConfig::capture_wake` named that requeued a delayed task
    /// in place (v6.12): nothing to capture.
    pub fn requeued_captures(&self) -> &[u32] {
        self.sim.requeued_captures()
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
            start_ns: self.start_ns(),
            events: self.sim.events(),
            unsettled_ns: self.sim.unsettled_time().ns(),
            digest: format!("{:016x}", self.sim.digest()),
            cost_family: self.sim.cost_model().params.family.to_string(),
            metrics: report,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
