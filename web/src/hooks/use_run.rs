//! A simulation run's life cycle on the page: the two workers and the scheduler that
//! hands them the run's points, behind one hook, [`use_run`].
//!
//! ```text
//!  components/sim_setup.rs   an input changes ─▶ Action::SetSim ─▶ AppState.sim
//!  hooks/use_run.rs          RunKey::of(state) differs ─▶ RunView::new ─▶ Msg::Run to each worker
//!     (worker.rs, in the workers: LiveRun in batches ─▶ Progress after each)
//!  hooks/use_run.rs          Progress ─▶ RunView.results[point] ─▶ next point ─▶ force_update
//!  components/chart.rs       SimPanel passes RunView's series ─▶ <Chart> draws them
//! ```
//!
//! So a click's way to the chart reads in three files: the input that changed the
//! scenario, this hook, and the chart (`sim_view.rs` only lays them out; `worker.rs`
//! is the far side of the messages). A run starts when the panel opens or its
//! [`RunKey`] changes, and a newer run replaces the older one (ids). Core's `LiveRun`
//! gives the same events for any slicing, so the digests are `schedlab run`'s.

use std::cell::{Ref, RefCell};
use std::rc::{Rc, Weak};

use gloo_worker::{Spawnable, WorkerBridge};
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::{MachineChoice, ScenarioMachine, SimSetup};
use yew::prelude::*;

use crate::state::{Action, AppContext, AppState};
use crate::worker::{now_ms, Codec, Msg, Progress, Report, SimWorker};

/// The loader each worker starts from (see `static/worker.js`).
const WORKER_JS: &str = "static/worker.js";
/// Workers in the pool: A and B side by side, or two points of a sweep at a time.
const N_WORKERS: usize = 2;

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

/// One simulation of a run: a scale (threads, clients …) under one side's patch set.
#[derive(Clone, Copy, Debug)]
struct Point {
    threads: u32,
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
    assigned: [Option<usize>; N_WORKERS],
    pub started_ms: f64,
    pub finished_ms: Option<f64>,
    pub stopped: bool,
}

impl RunView {
    fn new(state: &AppState, id: u64, key: RunKey) -> RunView {
        let patches = state.sides();
        let sim = state.sim().clone();
        let mut threads = sim.points();
        threads.sort_unstable_by(|a, b| b.cmp(a));
        threads.dedup();
        let points: Vec<Point> = threads
            .iter()
            .flat_map(|&threads| (0..patches.len()).map(move |side| Point { threads, side }))
            .collect();
        RunView {
            id,
            key,
            labels: patches.iter().map(ToString::to_string).collect(),
            machine: state.scenario.machine.choice().clone(),
            sim,
            results: vec![None; points.len()],
            points,
            next: 0,
            assigned: [None; N_WORKERS],
            started_ms: now_ms(),
            finished_ms: None,
            stopped: false,
        }
    }

    /// Gives worker `w` the next point, if any is left.
    fn hand_out(&mut self, w: usize, workers: &[WorkerBridge<SimWorker>]) {
        let slot = self.next;
        let (Some(&pt), Some(worker)) = (self.points.get(slot), workers.get(w)) else {
            self.assigned[w] = None;
            return;
        };
        self.next += 1;
        self.assigned[w] = Some(slot);
        worker.send(Msg::Run {
            id: self.id,
            machine: self.machine.clone(),
            patches: self.labels[pt.side].clone(),
            sim: SimSetupV1::from(&SimSetup {
                workload: self.sim.workload.with_threads(pt.threads),
                sweep: Vec::new(),
                ..self.sim.clone()
            }),
        });
    }

    /// Takes worker `w`'s progress on its point; when the point is done, hands the
    /// worker the next one. True when this finished the whole run.
    fn take(&mut self, w: usize, p: Progress, workers: &[WorkerBridge<SimWorker>]) -> bool {
        // An older run's last words, or a worker with nothing to do.
        let Some(slot) = self.assigned[w].filter(|_| p.id == self.id) else {
            return false;
        };
        let next = p.done && p.error.is_none() && !self.stopped;
        self.results[slot] = Some(p);
        if next {
            self.hand_out(w, workers);
        }
        if self.done() && self.finished_ms.is_none() {
            self.finished_ms = Some(now_ms());
            return true;
        }
        false
    }

    /// Whether it runs for `key`; if not, a new run is on its way.
    pub fn is_for(&self, key: &RunKey) -> bool {
        self.key == *key
    }

    /// The number of simulations it makes.
    pub fn n_points(&self) -> usize {
        self.points.len()
    }

    /// A sweep (the table and chart by scale) rather than one run per side.
    pub fn sweep(&self) -> bool {
        !self.sim.sweep.is_empty()
    }

    pub fn progress(&self) -> impl Iterator<Item = &Progress> {
        self.results.iter().flatten()
    }

    /// The points that are running or done.
    pub fn started(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }

    pub fn finished(&self) -> usize {
        self.progress().filter(|p| p.done).count()
    }

    pub fn all_reported(&self) -> bool {
        self.results.iter().all(Option::is_some)
    }

    pub fn done(&self) -> bool {
        self.error().is_some() || (self.all_reported() && self.progress().all(|p| p.done))
    }

    /// Still going: neither done, nor stopped, nor failed.
    pub fn running(&self) -> bool {
        !self.done() && !self.stopped
    }

    pub fn error(&self) -> Option<String> {
        self.points.iter().zip(&self.results).find_map(|(pt, p)| {
            let e = p.as_ref()?.error.as_ref()?;
            Some(if self.sweep() {
                format!("{} at {}: {e}", self.labels[pt.side], pt.threads)
            } else {
                format!("{}: {e}", self.labels[pt.side])
            })
        })
    }

    /// Any point's progress: unit, warm-up and kind are the same on all.
    pub fn first(&self) -> Option<&Progress> {
        self.progress().next()
    }

    /// One run per side: each side's progress, A first.
    pub fn sides(&self) -> Vec<&Progress> {
        self.progress().collect()
    }

    pub fn reports(&self) -> Option<Vec<&Report>> {
        self.results
            .iter()
            .map(|p| p.as_ref()?.report.as_ref())
            .collect()
    }

    /// A sweep's rows: per scale, ascending, each side's result once it is in.
    pub fn rows(&self) -> Vec<(u32, Vec<Option<f64>>)> {
        let mut rows: Vec<(u32, Vec<Option<f64>>)> = Vec::new();
        for (pt, r) in self.points.iter().zip(&self.results) {
            let value = r.as_ref().and_then(|p| p.report.as_ref()).map(|r| r.value);
            match rows.iter_mut().find(|(t, _)| *t == pt.threads) {
                Some((_, v)) => v[pt.side] = value,
                None => {
                    let mut v = vec![None; self.labels.len()];
                    v[pt.side] = value;
                    rows.push((pt.threads, v));
                }
            }
        }
        rows.sort_by_key(|(t, _)| *t);
        rows
    }
}

/// The workers, shared with their callbacks (which hold it weakly, so dropping the
/// pool drops the bridges and gloo-worker closes the workers).
type Pool = Rc<Vec<WorkerBridge<SimWorker>>>;

/// Starts the workers. Each reports into `view`, takes the next point when its own is
/// done, and redraws; a finished single run's utilisation goes to the page state for
/// the drawing.
fn start_pool(
    view: Rc<RefCell<Option<RunView>>>,
    redraw: UseForceUpdateHandle,
    dispatcher: UseReducerDispatcher<AppState>,
) -> Pool {
    Rc::new_cyclic(|pool: &Weak<Vec<WorkerBridge<SimWorker>>>| {
        (0..N_WORKERS)
            .map(|w| {
                let (view, redraw, dispatcher, pool) = (
                    view.clone(),
                    redraw.clone(),
                    dispatcher.clone(),
                    pool.clone(),
                );
                let mut spawner = SimWorker::spawner();
                spawner.callback(move |p: Progress| {
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
                                    .map(|r| Rc::new(r.utilisation_permille.clone()))
                                    .collect(),
                            ));
                        }
                    }
                    redraw.force_update();
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
    let view = use_mut_ref(|| None::<RunView>);
    let pool = use_mut_ref(|| None::<Pool>);
    let ids = use_mut_ref(|| 0u64);
    let redraw = use_force_update();
    let nonce = use_state(|| 0u32);
    let key = RunKey::of(state);
    let held = state.held.is_some();

    // Start a run whenever the inputs change (or Run again is pressed); a newer run
    // replaces it. A link's costly simulation is held: nothing starts until the Run
    // button clears `held` (the effect runs again then).
    {
        let (view, pool, redraw, state) =
            (view.clone(), pool.clone(), redraw.clone(), state.clone());
        use_effect_with((key.clone(), *nonce, held), move |(key, _, held)| {
            let held = *held;
            let cancel: Box<dyn FnOnce()> = Box::new(|| {});
            if held {
                *view.borrow_mut() = None;
                return cancel;
            }
            let id = {
                let mut i = ids.borrow_mut();
                *i += 1;
                *i
            };
            let workers = pool
                .borrow_mut()
                .get_or_insert_with(|| start_pool(view.clone(), redraw.clone(), state.dispatcher()))
                .clone();
            let mut run = RunView::new(&state, id, key.clone());
            for w in 0..workers.len() {
                run.hand_out(w, &workers);
            }
            if !state.sim_heat.is_empty() {
                state.dispatch(Action::SimHeat(Vec::new()));
            }
            *view.borrow_mut() = Some(run);
            redraw.force_update();
            Box::new(move || {
                for w in workers.iter() {
                    w.send(Msg::Cancel { id });
                }
            })
        });
    }
    // The workers end with the component.
    {
        let pool = pool.clone();
        use_effect_with((), move |_| move || drop(pool.borrow_mut().take()));
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
