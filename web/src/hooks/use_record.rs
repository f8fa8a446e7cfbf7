//! Recorded runs on demand: the timeline's window, a trace download, a captured
//! wake-up. Two workers of their own (started on the first request, kept for the
//! page), apart from `use_run`'s pool, so asking for a recording never cancels the
//! live run.
//!
//! ```text
//!  timeline / trace button / Wake-up tab ── record(RecordRequest, on_done) ──▶ queue
//!     queue ──▶ a free tool worker: Msg::Record { job } (worker/: LiveRun::with_recorder,
//!               stops as soon as the job is satisfied)
//!     Reply::Recorded ──▶ on_done(Recorded)  ──▶ the next queued job
//! ```
//!
//! A request names its run as the Simulate tab's points do (machine, patch-set text,
//! setup with one seed and no sweep), so the recorded run is the run the chart shows,
//! event for event. [`capture_effect`] drives `AppState::sim_wake`: when it says
//! `Capturing`, it asks for that wake-up and dispatches what came back.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use gloo_worker::{Spawnable, WorkerBridge};
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::{MachineChoice, SimSetup};
use yew::prelude::*;

use crate::hooks::use_run::wake_scale;
use crate::state::{Action, AppState, Side, SimWake, SimWakeRef, SimWakeStatus};
use crate::worker::{Codec, Msg, RecordJob, Recorded, Reply, SimWorker};

/// The loader each worker starts from (see `static/worker.js`).
const WORKER_JS: &str = "static/worker.js";
/// Tool workers: A's and B's timeline windows record side by side.
const TOOL_WORKERS: usize = 2;

/// One recorded run to make.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordRequest {
    pub machine: MachineChoice,
    pub patches: String,
    pub sim: SimSetupV1,
    pub job: RecordJob,
}

impl RecordRequest {
    /// The run a [`SimWakeRef`] names: its side and seed at its sweep point
    /// (`use_run::wake_scale`: the watched scale when it names none).
    pub fn wake(state: &AppState, at: &SimWakeRef, job: RecordJob) -> RecordRequest {
        let threads = wake_scale(state.sim(), at);
        RecordRequest::side_at(state, at.side, at.seed, threads, job)
    }

    /// Side `side`'s run of the page's simulation with seed `seed` at scale `threads`
    /// (the watched scale, `use_run::watched_scale`, or a sweep's other point), no
    /// sweep, one seed: at the watched scale, the run the live view plays.
    pub fn side_at(
        state: &AppState,
        side: Side,
        seed: u64,
        threads: u32,
        job: RecordJob,
    ) -> RecordRequest {
        let sides = state.sides();
        let set = match side {
            Side::B if sides.len() > 1 => sides[1],
            _ => sides[0],
        };
        RecordRequest {
            machine: state.scenario.machine.choice().clone(),
            patches: set.to_string(),
            sim: SimSetupV1::from(&SimSetup {
                workload: state.sim().workload.with_threads(threads),
                sweep: Vec::new(),
                seed,
                seeds: 1,
                ..state.sim().clone()
            }),
            job,
        }
    }
}

type Done = Box<dyn FnOnce(Recorded)>;

struct Tools {
    workers: Vec<WorkerBridge<SimWorker>>,
    /// Per worker, the id and the callback of its job.
    busy: Vec<Option<(u64, Done)>>,
    queue: VecDeque<(u64, RecordRequest, Done)>,
    next_id: u64,
}

thread_local! {
    static TOOLS: RefCell<Option<Rc<RefCell<Tools>>>> = const { RefCell::new(None) };
}

fn tools() -> Rc<RefCell<Tools>> {
    TOOLS.with(|t| {
        t.borrow_mut()
            .get_or_insert_with(|| {
                let tools = Rc::new(RefCell::new(Tools {
                    workers: Vec::new(),
                    busy: Vec::new(),
                    queue: VecDeque::new(),
                    next_id: 0,
                }));
                let workers = (0..TOOL_WORKERS)
                    .map(|w| {
                        let weak = Rc::downgrade(&tools);
                        let mut spawner = SimWorker::spawner();
                        spawner.callback(move |r: Reply| {
                            let (Reply::Recorded(r), Some(t)) = (r, weak.upgrade()) else {
                                return;
                            };
                            let done = {
                                let mut t = t.borrow_mut();
                                match t.busy.get_mut(w).and_then(Option::take) {
                                    Some((id, done)) if id == r.id => Some(done),
                                    other => {
                                        // A stale answer: keep the current job.
                                        if let Some(slot) = t.busy.get_mut(w) {
                                            *slot = other;
                                        }
                                        None
                                    }
                                }
                            };
                            if let Some(done) = done {
                                done(*r);
                                pump(&t);
                            }
                        });
                        spawner.encoding::<Codec>().spawn_with_loader(WORKER_JS)
                    })
                    .collect();
                {
                    let mut t = tools.borrow_mut();
                    t.workers = workers;
                    t.busy = (0..TOOL_WORKERS).map(|_| None).collect();
                }
                tools
            })
            .clone()
    })
}

/// Hands queued jobs to free workers.
fn pump(tools: &Rc<RefCell<Tools>>) {
    let mut t = tools.borrow_mut();
    while let Some(w) = t.busy.iter().position(Option::is_none) {
        let Some((id, req, done)) = t.queue.pop_front() else {
            return;
        };
        t.workers[w].send(Msg::Record {
            id,
            machine: req.machine,
            patches: req.patches,
            sim: req.sim,
            job: req.job,
        });
        t.busy[w] = Some((id, done));
    }
}

/// Makes `req`'s recorded run in a tool worker; `done` gets the answer.
pub fn record(req: RecordRequest, done: impl FnOnce(Recorded) + 'static) {
    let t = tools();
    {
        let mut tb = t.borrow_mut();
        tb.next_id += 1;
        let id = tb.next_id;
        tb.queue.push_back((id, req, Box::new(done)));
    }
    pump(&t);
}

/// Asks a tool worker for the wake-up `AppState::sim_wake` is capturing, once per
/// reference, and dispatches [`Action::SimWakeCaptured`] with what comes back.
#[hook]
pub fn use_capture(state: &UseReducerHandle<AppState>) {
    let capturing = match &state.sim_wake {
        Some(SimWakeStatus::Capturing(at)) => Some(*at),
        _ => None,
    };
    let st = state.clone();
    use_effect_with(capturing, move |at| {
        if let Some(at) = *at {
            let job = RecordJob {
                cap: 0,
                window_ns: None,
                capture_wake: Some(at.wake),
                trace: false,
            };
            let req = RecordRequest::wake(&st, &at, job);
            let patches = req.patches.clone();
            let d = st.dispatcher();
            record(req, move |r| d.dispatch(captured_action(at, patches, r)));
        }
    });
}

/// The action a capture's answer makes.
pub fn captured_action(at: SimWakeRef, patches: String, r: Recorded) -> Action {
    let got = match (r.error, r.captured) {
        (Some(e), _) => Err(e),
        (None, None) => Err(format!("wake-up {}: nothing was captured", at.wake)),
        (None, Some(c)) => SimWake::parse(at, c.at_ns, c.cpu, patches, &c.state),
    };
    Action::SimWakeCaptured(at, got)
}
