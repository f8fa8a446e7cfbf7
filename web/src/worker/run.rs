//! A [`Msg::Run`]: building the run a message asks for, and what the page sees of it
//! after each batch.

use schedlab_core::experiment::LiveRun;
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::MachineChoice;
use schedlab_core::sim::RecordConfig;

#[cfg(doc)]
use super::messages::Msg;
use super::messages::Progress;

/// What the page sees of `run` now.
pub fn progress(id: u64, run: &LiveRun, busy_ms: f64, error: Option<String>) -> Progress {
    let (series, interval_ns) = run.series();
    let metric = run.metric();
    let report = run.done().then(|| run.report());
    Progress {
        id,
        series,
        interval_ns,
        now_ns: run.now_ns(),
        warmup_ns: run.warmup_ns(),
        start_ns: run.start_ns(),
        start_pending: run.start_pending(),
        warming: run.warming_up(),
        live_tasks: run.live_tasks(),
        events: run.events(),
        busy_ms,
        unit: metric.unit().to_string(),
        higher_is_better: metric.higher_is_better(),
        completion: run.runs_to_completion(),
        done: run.done() || error.is_some(),
        error,
        report,
        record: None,
    }
}

/// A run that could not start, as the page sees it.
pub fn failed(id: u64, error: String) -> Progress {
    Progress {
        id,
        series: Vec::new(),
        interval_ns: 1,
        now_ns: 0,
        warmup_ns: None,
        start_ns: None,
        start_pending: false,
        warming: false,
        live_tasks: 0,
        events: 0,
        busy_ms: 0.0,
        unit: String::new(),
        higher_is_better: true,
        completion: false,
        done: true,
        error: Some(error),
        report: None,
        record: None,
    }
}

/// [`start_with`] without a recorder (the host tests' plain run).
#[cfg(test)]
pub fn start(machine: &MachineChoice, patches: &str, sim: &SimSetupV1) -> Result<LiveRun, String> {
    start_with(machine, patches, sim, None)
}

/// Builds the run a [`Msg::Run`] asks for: the machine and patches through the
/// scenario's own validation, then the setup's `run_spec()`; with core's event
/// recorder on when `rc` is given.
pub fn start_with(
    machine: &MachineChoice,
    patches: &str,
    sim: &SimSetupV1,
    rc: Option<RecordConfig>,
) -> Result<LiveRun, String> {
    let m = machine.build().map_err(|e| e.to_string())?;
    let p: PatchSet = patches.parse().map_err(|e| format!("{patches}: {e}"))?;
    let spec = sim.parse(&m).map_err(|e| e.to_string())?.run_spec(&m, p)?;
    match rc {
        Some(rc) => LiveRun::with_recorder(&spec, rc),
        None => LiveRun::new(&spec),
    }
    .map_err(|e| e.to_string())
}
