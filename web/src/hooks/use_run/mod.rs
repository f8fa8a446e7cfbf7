//! A simulation run's life cycle on the page: the two workers and the scheduler that
//! hands them the run's points, behind one hook, [`use_run`].
//!
//! ```text
//!  components/sim_setup.rs   an input changes ─▶ Action::SetSim ─▶ AppState.sim
//!  hooks/use_run/            RunKey::of(state) differs ─▶ RunView::new ─▶ Msg::Run to each worker
//!     (worker/, in the workers: LiveRun in batches ─▶ Progress after each)
//!  hooks/use_run/            Progress ─▶ RunView.results[point] ─▶ next point ─▶ force_update
//!  components/chart/         SimPanel passes RunView's series ─▶ <Chart> draws them
//!  live/                     the first seed of each side streams its event record:
//!                            Progress.record ─▶ RunView.live[side] (a live::Feed)
//! ```
//!
//! So a click's way to the chart reads in three files: the input that changed the
//! scenario, this hook, and the chart (`sim_view.rs` only lays them out; `worker/`
//! is the far side of the messages). A run starts when the panel opens or its
//! [`RunKey`] changes, and a newer run replaces the older one (ids). Core's `LiveRun`
//! gives the same events for any slicing, so the digests are `schedlab run`'s.
//!
//! Seeds: each side runs `sim.seeds` seeds (`seed`, `seed + 1`, …), each a point of
//! its own spread over the pool (one worker per hardware thread, see [`pool_size`]).
//! Results are kept by point, not by arrival, so the means and intervals (core's
//! `stats::Estimate`, paired by seed as `experiment::ab_stats`) do not depend on which
//! worker finished first.
//!
//! Kept across tab switches ([`Kept`]): the pool starts once per page (the workers'
//! own wasm module, `schedlab-worker`, is fetched the first time the pool starts, then
//! served from the cache: its URL is content-named and `immutable`; the page's module
//! never holds the simulator) and a finished run stays. Leaving the
//! Simulate tab cancels an unfinished run; coming back to the same inputs shows the
//! finished one without running it again, and other inputs start a new one.
//!
//! The files: this one holds the run's inputs ([`RunKey`], the watched scale), the
//! [`RunView`] itself, the worker pool and the hook with what it keeps across tab
//! switches; `stream.rs` lays out the points, hands them out and takes the workers'
//! progress as it streams in; `results.rs` reads the results kept by point (rows,
//! live series, reports, digests); `status.rs` says in words where the run is.

mod results;
mod status;
mod stream;

pub use status::{RunState, Status};

use std::cell::{Ref, RefCell};
use std::rc::{Rc, Weak};

use gloo_worker::{Spawnable, WorkerBridge};
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::{MachineChoice, ScenarioMachine, SimSetup};
use yew::prelude::*;

use crate::live::Feeds;
use crate::state::{Action, AppContext, AppState, SimWakeRef};
use crate::worker::{Codec, Msg, Progress, Reply, SimWorker};

/// The loader each worker starts from (see `static/worker.js`).
const WORKER_JS: &str = "static/worker.js";
/// The most workers the pool starts, whatever the browser reports: each holds its own
/// copy of the wasm module and machine.
const MAX_WORKERS: usize = 8;

/// Workers in the pool: one per hardware thread the browser reports
/// (`navigator.hardwareConcurrency`), 2 to [`MAX_WORKERS`] (2 when it says nothing: A
/// and B side by side).
pub fn pool_size() -> usize {
    web_sys::window()
        .map(|w| w.navigator().hardware_concurrency())
        .filter(|n| n.is_finite() && *n >= 1.0)
        .map_or(2, |n| n as usize)
        .clamp(2, MAX_WORKERS)
}

/// Everything a run depends on: a change starts a new run. Compared on every render
/// (one per batch while a run goes); the machine compares by its shared build first,
/// so that is a pointer comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct RunKey {
    machine: ScenarioMachine,
    patches: PatchSet,
    compare: Option<PatchSet>,
    sim: SimSetup,
}

impl RunKey {
    pub fn of(state: &AppState) -> RunKey {
        RunKey {
            machine: state.scenario.machine.clone(),
            patches: state.patches(),
            compare: state.wake().compare,
            sim: state.sim().clone(),
        }
    }
}

/// The scale the live view watches, and that a simulated wake-up naming no sweep
/// point (`SimWakeRef::scale` `None`) and the timeline's default window mean: the run's first scale, handed out first (most
/// threads first, as the CLI's sweep): the sweep's largest point, or the workload's
/// own scale when there is no sweep.
pub fn watched_scale(sim: &SimSetup) -> u32 {
    sim.points()
        .into_iter()
        .max()
        .unwrap_or_else(|| sim.workload.threads())
}

/// The scale a simulated wake-up's run is at: its sweep point, or the watched scale
/// when it names none (every link before session 12).
pub fn wake_scale(sim: &SimSetup, at: &SimWakeRef) -> u32 {
    at.scale.unwrap_or_else(|| watched_scale(sim))
}

/// How a wake-up of the run at scale `threads` names it: `None` at the watched
/// scale (so those links read as they always did), else the sweep point.
pub fn scale_ref(sim: &SimSetup, threads: u32) -> Option<u32> {
    (threads != watched_scale(sim)).then_some(threads)
}

/// One simulation of a run: a scale (threads, clients …) under one side's patch set,
/// with the run's `seed_idx`-th seed.
#[derive(Clone, Copy, Debug)]
struct Point {
    threads: u32,
    seed_idx: u32,
    side: usize,
}
/// A run of the current inputs, as the workers report it: one point per side, or a
/// sweep's points, handed to the workers as they come free.
#[derive(Debug)]
pub struct RunView {
    id: u64,
    /// The inputs it runs for.
    key: RunKey,
    /// Per side, its patch set.
    pub labels: Vec<String>,
    machine: MachineChoice,
    sim: SimSetup,
    /// In the order they are handed out: most threads first, as the CLI's sweep.
    points: Vec<Point>,
    /// Per point, its last progress.
    results: Vec<Option<Progress>>,
    /// The next point to hand out.
    next: usize,
    /// Per worker, the point it runs.
    assigned: Vec<Option<usize>>,
    pub started_ms: f64,
    pub finished_ms: Option<f64>,
    pub stopped: bool,
    /// Per side, the event record its first seed streams (at the first scale): what
    /// the live view plays. Shared with the view, which reads it each frame.
    pub live: Feeds,
}

/// The workers, shared with their callbacks (which hold it weakly, so dropping the
/// pool drops the bridges and gloo-worker closes the workers).
type Pool = Rc<Vec<WorkerBridge<SimWorker>>>;

/// What outlives the panel: the run, the pool, and the mounted panel's redraw (the
/// workers' messages redraw whichever panel is mounted, none while another tab shows).
#[derive(Clone)]
struct Kept {
    view: Rc<RefCell<Option<RunView>>>,
    pool: Rc<RefCell<Option<Pool>>>,
    redraw: Rc<RefCell<Option<UseForceUpdateHandle>>>,
}

thread_local! {
    static KEPT: Kept = Kept {
        view: Rc::new(RefCell::new(None)),
        pool: Rc::new(RefCell::new(None)),
        redraw: Rc::new(RefCell::new(None)),
    };
}

/// Redraws the mounted panel, if one is.
fn redraw_mounted(redraw: &RefCell<Option<UseForceUpdateHandle>>) {
    if let Some(r) = redraw.borrow().as_ref() {
        r.force_update();
    }
}

/// Starts the workers. Each reports into `view`, takes the next point when its own is
/// done, and redraws; a finished single run's utilisation goes to the page state for
/// the drawing.
fn start_pool(
    view: Rc<RefCell<Option<RunView>>>,
    redraw: Rc<RefCell<Option<UseForceUpdateHandle>>>,
    dispatcher: UseReducerDispatcher<AppState>,
) -> Pool {
    Rc::new_cyclic(|pool: &Weak<Vec<WorkerBridge<SimWorker>>>| {
        (0..pool_size())
            .map(|w| {
                let (view, redraw, dispatcher, pool) = (
                    view.clone(),
                    redraw.clone(),
                    dispatcher.clone(),
                    pool.clone(),
                );
                let mut spawner = SimWorker::spawner();
                spawner.callback(move |r: Reply| {
                    let Reply::Progress(p) = r else {
                        return;
                    };
                    let p = *p;
                    let Some(pool) = pool.upgrade() else {
                        return;
                    };
                    let mut v = view.borrow_mut();
                    let Some(v) = v.as_mut() else {
                        return;
                    };
                    if v.take(w, p, &pool) {
                        if let (false, Some(reports)) = (v.sweep(), v.reports()) {
                            dispatcher.dispatch(Action::SimHeat(
                                reports
                                    .iter()
                                    .map(|r| Rc::new(r.metrics.utilisation_permille.clone()))
                                    .collect(),
                            ));
                        }
                    }
                    redraw_mounted(&redraw);
                });
                spawner.encoding::<Codec>().spawn_with_loader(WORKER_JS)
            })
            .collect()
    })
}

/// What [`use_run`] gives the panel.
pub struct UseRun {
    view: Rc<RefCell<Option<RunView>>>,
    /// The inputs of this render.
    pub key: RunKey,
    /// Stops the run where it is.
    pub stop: Callback<MouseEvent>,
    /// Runs the same inputs again.
    pub again: Callback<MouseEvent>,
}

impl UseRun {
    /// The current run (`None` before the first starts).
    pub fn view(&self) -> Ref<'_, Option<RunView>> {
        self.view.borrow()
    }
}

/// Runs the state's simulation in the workers whenever its inputs change, for as long
/// as the calling component is mounted; the component redraws after each batch.
#[hook]
pub fn use_run(state: &AppContext) -> UseRun {
    let kept = KEPT.with(Kept::clone);
    let (view, pool) = (kept.view.clone(), kept.pool.clone());
    let ids = use_mut_ref(|| 0u64);
    let redraw = use_force_update();
    // This mount's first effect may reuse the kept run.
    let fresh_mount = use_mut_ref(|| true);
    {
        let (slot, redraw) = (kept.redraw.clone(), redraw.clone());
        use_effect_with((), move |_| {
            *slot.borrow_mut() = Some(redraw);
            move || *slot.borrow_mut() = None
        });
    }
    let nonce = use_state(|| 0u32);
    let key = RunKey::of(state);
    let held = state.held.is_some();

    // Start a run whenever the inputs change (or Run again is pressed); a newer run
    // replaces it. A link's costly simulation is held: nothing starts until the Run
    // button clears `held` (the effect runs again then).
    {
        let (view, pool, redraw, state) =
            (view.clone(), pool.clone(), redraw.clone(), state.clone());
        let kept_redraw = kept.redraw.clone();
        use_effect_with((key.clone(), *nonce, held), move |(key, _, held)| {
            let held = *held;
            let first = fresh_mount.replace(false);
            // Leaving (or new inputs) cancels an unfinished run and forgets it; a
            // finished one stays for the next mount.
            let cancel_unfinished = {
                let (view, pool) = (view.clone(), pool.clone());
                move || {
                    let mut v = view.borrow_mut();
                    if v.as_ref().is_some_and(|r| r.running()) {
                        let id = v.as_ref().map_or(0, |r| r.id);
                        for w in pool.borrow().iter().flat_map(|p| p.iter()) {
                            w.send(Msg::Cancel { id });
                        }
                        *v = None;
                    }
                }
            };
            if held {
                *view.borrow_mut() = None;
                return Box::new(cancel_unfinished) as Box<dyn FnOnce()>;
            }
            let same = view
                .borrow()
                .as_ref()
                .is_some_and(|r| r.key == *key && !r.stopped);
            if first && same {
                // Back on the tab with the same inputs: the kept run, not a new one.
                return Box::new(cancel_unfinished);
            }
            let id = {
                let mut i = ids.borrow_mut();
                // Ids go on across mounts, past the kept run's.
                *i = (*i).max(view.borrow().as_ref().map_or(0, |r| r.id)) + 1;
                *i
            };
            let workers = pool
                .borrow_mut()
                .get_or_insert_with(|| start_pool(view.clone(), kept_redraw, state.dispatcher()))
                .clone();
            let mut run = RunView::new(&state, id, key.clone(), workers.len());
            for w in 0..workers.len() {
                run.hand_out(w, &workers);
            }
            if !state.sim_heat.is_empty() {
                state.dispatch(Action::SimHeat(Vec::new()));
            }
            *view.borrow_mut() = Some(run);
            redraw.force_update();
            Box::new(cancel_unfinished)
        });
    }

    let stop = {
        let (view, pool, redraw) = (view.clone(), pool.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let mut v = view.borrow_mut();
            let Some(v) = v.as_mut() else {
                return;
            };
            for w in pool.borrow().iter().flat_map(|p| p.iter()) {
                w.send(Msg::Cancel { id: v.id });
            }
            v.stopped = true;
            redraw.force_update();
        })
    };
    let again = Callback::from(move |_: MouseEvent| nonce.set(*nonce + 1));
    UseRun {
        view,
        key,
        stop,
        again,
    }
}

#[cfg(test)]
mod status_tests;
#[cfg(test)]
mod tests;
