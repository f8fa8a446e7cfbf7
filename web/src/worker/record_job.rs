//! A [`Msg::Record`]: a run with core's event recorder on, answered once with what
//! its [`RecordJob`] asks for (a window's records, the Chrome trace, a captured
//! wake-up).

use schedlab_core::experiment::LiveRun;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::MachineChoice;
use schedlab_core::sim::record::MAX_RECORD_CAP;
use schedlab_core::sim::{RecordConfig, SimTime};

#[cfg(doc)]
use super::messages::Msg;
use super::messages::{Captured, RecordJob, Recorded};
use super::run::start_with;
use super::wire::RecordBytes;
#[cfg(test)]
use super::SLICE_NS;

impl RecordJob {
    fn config(&self) -> RecordConfig {
        RecordConfig {
            cap: (self.cap as usize).min(MAX_RECORD_CAP),
            window: self.window_ns.map(|(a, b)| (SimTime(a), SimTime(b.max(a)))),
            capture_wake: self.capture_wake.into_iter().collect(),
        }
    }

    /// Whether `run` has what this job asks for (or can give no more).
    pub fn satisfied(&self, run: &LiveRun) -> bool {
        if run.done() || self.trace {
            return run.done();
        }
        // A delayed task's requeue (v6.12) is numbered but has nothing to capture.
        let captured = self.capture_wake.is_none()
            || !run.captured_wakes().is_empty()
            || !run.requeued_captures().is_empty();
        let recorded = self.cap == 0
            || run.recording().is_some_and(|r| {
                r.truncated || self.window_ns.is_some_and(|(_, end)| run.now_ns() >= end)
            });
        captured && recorded
    }
}

/// What a [`Msg::Record`] returns of `run` once [`RecordJob::satisfied`] (or failed).
pub fn recorded(
    id: u64,
    run: &LiveRun,
    job: &RecordJob,
    busy_ms: f64,
    error: Option<String>,
) -> Recorded {
    let rec = run.recording();
    let mut error = error;
    let captured = job.capture_wake.and_then(|n| {
        let Some(c) = run.captured_wakes().first() else {
            error.get_or_insert_with(|| {
                if run.requeued_captures().contains(&n) {
                    format!(
                        "wake-up {n} requeued a delayed task in place (v6.12's \
                         ttwu_runnable()): no CPU selection to capture"
                    )
                } else {
                    format!(
                        "wake-up {n}: the run had only {} wake-ups",
                        rec.map_or(0, |r| r.wakeups)
                    )
                }
            });
            return None;
        };
        match serde_json::to_string_pretty(&c.scenario) {
            Ok(text) => Some(Captured {
                seq: c.seq,
                at_ns: c.at_ns,
                cpu: c.decision.cpu.0,
                traced_agrees: c.traced_agrees,
                state: text + "\n",
            }),
            Err(e) => {
                error.get_or_insert(e.to_string());
                None
            }
        }
    });
    Recorded {
        id,
        records: RecordBytes(if job.cap > 0 {
            rec.map(|r| r.to_bytes()).unwrap_or_default()
        } else {
            Vec::new()
        }),
        truncated: rec.is_some_and(|r| r.truncated),
        measured_from: rec.map_or(u64::MAX, |r| {
            u64::try_from(r.measured_from).unwrap_or(u64::MAX)
        }),
        wakeups: rec.map_or(0, |r| r.wakeups),
        workload_tasks: rec.map_or(0, |r| r.workload_tasks),
        window_ns: rec.and_then(|r| r.window_ns),
        end_ns: run.now_ns(),
        warmup_ns: run.warmup_ns(),
        events: run.events(),
        busy_ms,
        trace: if job.trace && error.is_none() {
            run.chrome_trace()
        } else {
            None
        },
        captured,
        error,
    }
}

/// Runs a [`Msg::Record`] to the end in one go (the host tests; the worker runs it
/// in batches).
#[cfg(test)]
pub fn record_now(
    machine: &MachineChoice,
    patches: &str,
    sim: &SimSetupV1,
    job: &RecordJob,
) -> Recorded {
    let mut run = match start_recording(machine, patches, sim, job) {
        Ok(r) => r,
        Err(e) => return record_failed(0, e),
    };
    let mut error = None;
    while !job.satisfied(&run) {
        if let Err(e) = run.advance(SLICE_NS) {
            error = Some(e.to_string());
            break;
        }
    }
    recorded(0, &run, job, 0.0, error)
}

/// A [`Msg::Record`] that could not start.
pub fn record_failed(id: u64, error: String) -> Recorded {
    Recorded {
        id,
        records: RecordBytes::default(),
        truncated: false,
        measured_from: u64::MAX,
        wakeups: 0,
        workload_tasks: 0,
        window_ns: None,
        end_ns: 0,
        warmup_ns: None,
        events: 0,
        busy_ms: 0.0,
        trace: None,
        captured: None,
        error: Some(error),
    }
}

/// The run a [`Msg::Record`] asks for: [`start_with`] its job's recorder.
pub fn start_recording(
    machine: &MachineChoice,
    patches: &str,
    sim: &SimSetupV1,
    job: &RecordJob,
) -> Result<LiveRun, String> {
    start_with(machine, patches, sim, Some(job.config()))
}
