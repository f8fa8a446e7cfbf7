//! A simulation run's life cycle on the page: the two workers and the scheduler that
//! hands them the run's points, behind one hook, [`use_run`].
//!
//! ```text
//!  components/sim_setup.rs   an input changes ─▶ Action::SetSim ─▶ AppState.sim
//!  hooks/use_run.rs          RunKey::of(state) differs ─▶ RunView::new ─▶ Msg::Run to each worker
//!     (worker/, in the workers: LiveRun in batches ─▶ Progress after each)
//!  hooks/use_run.rs          Progress ─▶ RunView.results[point] ─▶ next point ─▶ force_update
//!  components/chart.rs       SimPanel passes RunView's series ─▶ <Chart> draws them
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

use std::cell::{Ref, RefCell};
use std::rc::{Rc, Weak};

use gloo_worker::{Spawnable, WorkerBridge};
use schedlab_core::experiment::change_pct;
use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::{MachineChoice, ScenarioMachine, SimSetup};
use schedlab_core::stats::Estimate;
use yew::prelude::*;

use crate::live::{Feed, Feeds};
use crate::state::{Action, AppContext, AppState, SimWakeRef};
use crate::worker::{now_ms, Codec, Msg, Progress, Reply, Report, SimWorker};

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

/// One scale of a run, over its seeds: each side's mean once all its seeds are in,
/// and B's change against A, paired by seed, once every pair is in.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub threads: u32,
    pub values: Vec<Option<f64>>,
    /// Each side's 95% interval over the seeds (none with one seed).
    pub spread: Vec<Option<(f64, f64)>>,
    pub change: Option<Estimate>,
}

/// One side's throughput over the measured window, per sampling interval, over the
/// seeds that have reached it: the mean, and with two or more the 95% interval.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSeries {
    /// Per interval, in order.
    pub points: Vec<Estimate>,
    /// The sampling interval, ns.
    pub interval_ns: u64,
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

impl RunView {
    fn new(state: &AppState, id: u64, key: RunKey, n_workers: usize) -> RunView {
        let patches = state.sides();
        let sim = state.sim().clone();
        let mut threads = sim.points();
        threads.sort_unstable_by(|a, b| b.cmp(a));
        threads.dedup();
        // Most threads first, then seed by seed with A and B of a seed together, so
        // the first pairs' change shows early.
        let n_sides = patches.len();
        let points: Vec<Point> = threads
            .iter()
            .flat_map(|&threads| {
                (0..sim.seeds.max(1)).flat_map(move |seed_idx| {
                    (0..n_sides).map(move |side| Point {
                        threads,
                        seed_idx,
                        side,
                    })
                })
            })
            .collect();
        let live = Feeds(
            patches
                .iter()
                .map(|p| {
                    Rc::new(RefCell::new(Feed {
                        threads: watched_scale(&sim),
                        ..Feed::new(p.to_string(), sim.seed)
                    }))
                })
                .collect(),
        );
        RunView {
            id,
            key,
            live,
            labels: patches.iter().map(ToString::to_string).collect(),
            machine: state.scenario.machine.choice().clone(),
            sim,
            results: vec![None; points.len()],
            points,
            next: 0,
            assigned: vec![None; n_workers],
            started_ms: now_ms(),
            finished_ms: None,
            stopped: false,
        }
    }

    /// The run's `k`-th seed (core's `experiment::seeds`).
    fn seed(&self, k: u32) -> u64 {
        self.sim.seed.wrapping_add(u64::from(k))
    }

    /// The first seed (`--seed`).
    pub fn base_seed(&self) -> u64 {
        self.sim.seed
    }

    /// Seeds per side.
    pub fn n_seeds(&self) -> u32 {
        self.sim.seeds.max(1)
    }

    /// Workers the run is spread over.
    pub fn n_workers(&self) -> usize {
        self.assigned.len()
    }

    /// Gives worker `w` the next point, if any is left.
    fn hand_out(&mut self, w: usize, workers: &[WorkerBridge<SimWorker>]) {
        let slot = self.next;
        let (Some(&pt), Some(worker)) = (self.points.get(slot), workers.get(w)) else {
            if let Some(a) = self.assigned.get_mut(w) {
                *a = None;
            }
            return;
        };
        self.next += 1;
        if let Some(a) = self.assigned.get_mut(w) {
            *a = Some(slot);
        }
        worker.send(Msg::Run {
            id: self.id,
            machine: self.machine.clone(),
            patches: self.labels[pt.side].clone(),
            sim: self.point_setup(pt),
            record: self.watched(slot).is_some(),
        });
    }

    /// What a worker runs for point `pt`: one seed at one scale.
    fn point_setup(&self, pt: Point) -> SimSetupV1 {
        SimSetupV1::from(&SimSetup {
            workload: self.sim.workload.with_threads(pt.threads),
            sweep: Vec::new(),
            seed: self.seed(pt.seed_idx),
            seeds: 1,
            ..self.sim.clone()
        })
    }

    /// The side whose live feed point `slot` is: the first points, one per side, are
    /// the first seed at the first scale (see [`RunView::new`]'s order).
    fn watched(&self, slot: usize) -> Option<usize> {
        (slot < self.labels.len()).then(|| self.points[slot].side)
    }

    /// Takes worker `w`'s progress on its point; when the point is done, hands the
    /// worker the next one. True when this finished the whole run.
    fn take(&mut self, w: usize, mut p: Progress, workers: &[WorkerBridge<SimWorker>]) -> bool {
        // An older run's last words, or a worker with nothing to do.
        let Some(slot) = self
            .assigned
            .get(w)
            .copied()
            .flatten()
            .filter(|_| p.id == self.id)
        else {
            return false;
        };
        let next = p.done && p.error.is_none() && !self.stopped;
        // The record goes to the side's feed, not into the kept progress; so does
        // where the benchmark started its clients.
        if let Some(f) = self.watched(slot).and_then(|side| self.live.0.get(side)) {
            let mut f = f.borrow_mut();
            f.start_ns = p.start_ns;
            f.start_pending = p.start_pending;
            if let Some(c) = p.record.take() {
                f.push(&c, p.done);
                if p.done {
                    f.run_end_ns = p.now_ns;
                }
            }
        }
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
            let seed = if self.n_seeds() > 1 {
                format!(" (seed {})", self.seed(pt.seed_idx))
            } else {
                String::new()
            };
            Some(if self.sweep() {
                format!("{} at {}{seed}: {e}", self.labels[pt.side], pt.threads)
            } else {
                format!("{}{seed}: {e}", self.labels[pt.side])
            })
        })
    }

    /// Any point's progress: unit, warm-up and kind are the same on all.
    pub fn first(&self) -> Option<&Progress> {
        self.progress().next()
    }

    /// The first seed's point of each side (at the first scale), A first.
    fn first_seed(&self) -> impl Iterator<Item = &Option<Progress>> {
        self.points
            .iter()
            .zip(&self.results)
            .filter(|(pt, _)| pt.seed_idx == 0)
            .map(|(_, r)| r)
            .take(self.labels.len())
    }

    /// One run per side: each side's progress under the first seed, A first (what
    /// the live chart draws).
    pub fn sides(&self) -> Vec<&Progress> {
        self.first_seed().flatten().collect()
    }

    /// Side `side`'s live series at the first scale over every seed reported so far
    /// (what the live chart draws: the mean line, and its band from two seeds on).
    /// Interval k's estimate is over the seeds that have reached it.
    pub fn live(&self, side: usize) -> LiveSeries {
        let first = self.scales().first().copied();
        let runs: Vec<&Progress> = self
            .points
            .iter()
            .zip(&self.results)
            .filter(|(pt, _)| pt.side == side && Some(pt.threads) == first)
            .filter_map(|(_, r)| r.as_ref())
            .collect();
        let len = runs.iter().map(|p| p.series.len()).max().unwrap_or(0);
        let points = (0..len)
            .map_while(|k| {
                let at: Vec<f64> = runs
                    .iter()
                    .filter_map(|p| p.series.get(k).copied())
                    .collect();
                Estimate::of(&at)
            })
            .collect();
        LiveSeries {
            points,
            interval_ns: runs.first().map_or(1, |p| p.interval_ns),
        }
    }

    /// Every point reported: the first seed's report of each side, A first.
    pub fn reports(&self) -> Option<Vec<&Report>> {
        if !self
            .results
            .iter()
            .all(|p| p.as_ref().is_some_and(|p| p.report.is_some()))
        {
            return None;
        }
        self.first_seed()
            .map(|p| p.as_ref()?.report.as_ref())
            .collect()
    }

    /// Side `side`'s reports at scale `threads`, in seed order, once every seed is in.
    pub fn side_reports(&self, threads: u32, side: usize) -> Option<Vec<&Report>> {
        let mut v: Vec<(u32, &Report)> = self
            .points
            .iter()
            .zip(&self.results)
            .filter(|(pt, _)| pt.threads == threads && pt.side == side)
            .map(|(pt, r)| Some((pt.seed_idx, r.as_ref()?.report.as_ref()?)))
            .collect::<Option<_>>()?;
        v.sort_by_key(|(k, _)| *k);
        (v.len() == self.n_seeds() as usize).then(|| v.into_iter().map(|(_, r)| r).collect())
    }

    /// The scales in the command line's `--threads` order (the sweep's, or the one).
    pub fn scales(&self) -> Vec<u32> {
        self.sim.points()
    }

    /// Every report in core's `SweepSpec::points()` order (per scale, A's seeds then
    /// B's; A's twice without B, as `--patched` equal to `--baseline` runs), once all
    /// are in: what `experiment::export::sweep_rows` pairs.
    pub fn sweep_order(&self) -> Option<Vec<Report>> {
        let b = if self.labels.len() > 1 { 1 } else { 0 };
        let mut out = Vec::new();
        for t in self.scales() {
            for side in [0, b] {
                out.extend(self.side_reports(t, side)?.into_iter().cloned());
            }
        }
        Some(out)
    }

    /// The workers' wall time spent simulating this run's points, s (the JSON's
    /// `wall_ms`, which the CLI measures as its own elapsed time).
    pub fn busy_s(&self) -> f64 {
        self.progress().map(|p| p.busy_ms).sum::<f64>() / 1e3
    }

    /// Per seed (in seed order), each side's report once it is in: the digests.
    pub fn seed_reports(&self) -> Vec<(u64, Vec<Option<&Report>>)> {
        let mut out: Vec<(u64, Vec<Option<&Report>>)> = Vec::new();
        for (pt, r) in self.points.iter().zip(&self.results) {
            let seed = self.seed(pt.seed_idx);
            let rep = r.as_ref().and_then(|p| p.report.as_ref());
            match out.iter_mut().find(|(s, _)| *s == seed) {
                Some((_, v)) => {
                    if v[pt.side].is_none() {
                        v[pt.side] = rep;
                    }
                }
                None => {
                    let mut v = vec![None; self.labels.len()];
                    v[pt.side] = rep;
                    out.push((seed, v));
                }
            }
        }
        out.sort_by_key(|(s, _)| *s);
        out
    }

    /// Per scale, ascending: each side's mean over the seeds and B's change.
    pub fn rows(&self) -> Vec<Row> {
        let higher = self.first().is_none_or(|p| p.higher_is_better);
        let n = self.n_seeds() as usize;
        let mut threads: Vec<u32> = self.points.iter().map(|p| p.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        threads
            .into_iter()
            .map(|t| {
                // values[side][seed_idx], filled by point so arrival order is moot.
                let mut by_side = vec![vec![None; n]; self.labels.len()];
                for (pt, r) in self.points.iter().zip(&self.results) {
                    if pt.threads == t {
                        by_side[pt.side][pt.seed_idx as usize] =
                            r.as_ref().and_then(|p| p.report.as_ref()).map(|r| r.value);
                    }
                }
                let all = |v: &[Option<f64>]| v.iter().copied().collect::<Option<Vec<f64>>>();
                let est: Vec<Option<Estimate>> = by_side
                    .iter()
                    .map(|v| all(v).and_then(|v| Estimate::of(&v)))
                    .collect();
                let values = est.iter().map(|e| e.map(|e| e.mean)).collect();
                let spread = est.iter().map(|e| e.and_then(|e| e.interval())).collect();
                let change = match &by_side[..] {
                    [a, b] => all(a).zip(all(b)).and_then(|(a, b)| {
                        let per: Vec<f64> = a
                            .iter()
                            .zip(&b)
                            .map(|(x, y)| change_pct(*x, *y, higher))
                            .collect();
                        Estimate::of(&per)
                    }),
                    _ => None,
                };
                Row {
                    threads: t,
                    values,
                    spread,
                    change,
                }
            })
            .collect()
    }
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
mod tests;
