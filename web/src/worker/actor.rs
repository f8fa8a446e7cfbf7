//! The worker itself: gloo-worker's [`Worker`](gloo_worker::Worker) that drives one
//! run at a time in batches, reporting after each.

use std::time::Duration;

use gloo_worker::{HandlerId, Registrable, WorkerScope};
use schedlab_core::experiment::LiveRun;

use super::messages::{Msg, RecordJob, Reply};
use super::record_job::{record_failed, recorded, start_recording};
use super::run::{failed, start_with};
use super::stream::{live_record_config, next_progress};
use super::wire::Codec;
use super::{now_ms, BATCH_MS, SLICE_NS};

/// Makes this worker a [`SimWorker`]: gloo-worker answers the page's handshake and
/// hands it the messages it held while the module loaded.
pub fn register() {
    SimWorker::registrar().encoding::<Codec>().register();
}

struct Current {
    /// Tells its batches from a cancelled or replaced run's.
    generation: u64,
    id: u64,
    run: LiveRun,
    who: HandlerId,
    busy_ms: f64,
    /// Records of its recording already posted (a watched run's stream).
    sent: usize,
    /// A [`Msg::Record`]'s job: answered once, when satisfied.
    job: Option<RecordJob>,
}

/// A simulation worker: one run at a time, in batches of `BATCH_MS`, reporting after
/// each; a newer run (or a cancel) takes the place of the current one.
pub struct SimWorker {
    current: Option<Current>,
    generations: u64,
}

impl SimWorker {
    /// Makes `run` the current run (a newer generation, so batches of the one it
    /// replaces stop) and schedules its first batch.
    fn begin(
        &mut self,
        scope: &WorkerScope<Self>,
        id: u64,
        run: LiveRun,
        who: HandlerId,
        job: Option<RecordJob>,
    ) {
        self.generations += 1;
        self.current = Some(Current {
            generation: self.generations,
            id,
            run,
            who,
            busy_ms: 0.0,
            sent: 0,
            job,
        });
        scope.send_message(self.generations);
    }
}

impl gloo_worker::Worker for SimWorker {
    /// Run the next batch of the run of this generation.
    type Message = u64;
    type Input = Msg;
    type Output = Reply;

    fn create(_: &WorkerScope<Self>) -> Self {
        SimWorker {
            current: None,
            generations: 0,
        }
    }

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Msg, who: HandlerId) {
        match msg {
            Msg::Run {
                id,
                machine,
                patches,
                sim,
                record,
            } => {
                self.current = None;
                let rc = record.then(live_record_config);
                match start_with(&machine, &patches, &sim, rc) {
                    Ok(run) => self.begin(scope, id, run, who, None),
                    Err(e) => scope.respond(who, Reply::Progress(Box::new(failed(id, e)))),
                }
            }
            Msg::Record {
                id,
                machine,
                patches,
                sim,
                job,
            } => {
                self.current = None;
                match start_recording(&machine, &patches, &sim, &job) {
                    Ok(run) => self.begin(scope, id, run, who, Some(job)),
                    Err(e) => scope.respond(who, Reply::Recorded(Box::new(record_failed(id, e)))),
                }
            }
            Msg::Cancel { id } => {
                if self.current.as_ref().is_some_and(|c| c.id == id) {
                    self.current = None;
                }
            }
        }
    }

    fn update(&mut self, scope: &WorkerScope<Self>, generation: u64) {
        let Some(c) = self.current.as_mut().filter(|c| c.generation == generation) else {
            return;
        };
        let t0 = now_ms();
        let mut error = None;
        // A run that has ended but still has records queued only posts them.
        while !c.run.done() && now_ms() - t0 < BATCH_MS {
            if c.job.as_ref().is_some_and(|j| j.satisfied(&c.run)) {
                break;
            }
            match c.run.advance(SLICE_NS) {
                Ok(false) => {}
                Ok(true) => break,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        c.busy_ms += now_ms() - t0;
        let done = match &c.job {
            Some(job) => {
                let done = error.is_some() || job.satisfied(&c.run);
                if done {
                    let r = recorded(c.id, &c.run, job, c.busy_ms, error);
                    scope.respond(c.who, Reply::Recorded(Box::new(r)));
                }
                done
            }
            None => {
                let p = next_progress(c.id, &c.run, &mut c.sent, c.busy_ms, error);
                let done = p.done;
                scope.respond(c.who, Reply::Progress(Box::new(p)));
                done
            }
        };
        if done {
            self.current = None;
        } else {
            // A macrotask, so a Cancel or a newer Run waiting in the queue is read first.
            scope.send_future(async move {
                gloo_timers::future::sleep(Duration::ZERO).await;
                generation
            });
        }
    }
}
