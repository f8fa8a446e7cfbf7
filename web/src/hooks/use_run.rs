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
//!
//! Seeds: each side runs `sim.seeds` seeds (`seed`, `seed + 1`, …), each a point of
//! its own spread over the pool (one worker per hardware thread, see [`pool_size`]).
//! Results are kept by point, not by arrival, so the means and intervals (core's
//! `stats::Estimate`, paired by seed as `experiment::ab_stats`) do not depend on which
//! worker finished first.
//!
//! Kept across tab switches ([`Kept`]): the pool starts once per page (the wasm is
//! fetched once, then served from the cache) and a finished run stays. Leaving the
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

use crate::state::{Action, AppContext, AppState};
use crate::worker::{now_ms, Codec, Msg, Progress, Report, SimWorker};

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
        RunView {
            id,
            key,
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

    /// Takes worker `w`'s progress on its point; when the point is done, hands the
    /// worker the next one. True when this finished the whole run.
    fn take(&mut self, w: usize, p: Progress, workers: &[WorkerBridge<SimWorker>]) -> bool {
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
mod tests {
    use super::*;

    fn progress(id: u64, value: f64, digest: String) -> Progress {
        Progress {
            id,
            series: Vec::new(),
            interval_ns: 1,
            now_ns: 1,
            warmup_ns: 0,
            warming: false,
            live_tasks: 0,
            events: 1,
            busy_ms: 1.0,
            unit: "MB/s".into(),
            higher_is_better: true,
            completion: false,
            done: true,
            error: None,
            report: Some(Report {
                value,
                events: 1,
                digest,
                ..template()
            }),
        }
    }

    /// A real report to vary (a 1 ms run on flat-16).
    fn template() -> Report {
        thread_local! {
            static T: Report = schedlab_core::experiment::run(
                &schedlab_core::experiment::RunSpec::on_preset(
                    "flat-16",
                    "all",
                    "6.8".parse().unwrap(),
                    schedlab_core::workload::Workload::Tbench { clients: 1 },
                    1,
                    1,
                )
                .unwrap(),
            )
            .unwrap();
        }
        T.with(Clone::clone)
    }

    /// Workers finish in any order: the rows and digests are the seed-ordered ones.
    #[test]
    fn seeds_combine_by_point_whatever_order_the_workers_finish() {
        let mut state = AppState::default();
        let mut sim = state.sim().clone();
        sim.seeds = 3;
        sim.seed = 7;
        sim.sweep = Vec::new();
        state.scenario.sim = Some(sim);
        state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
        type Digests = Vec<(u64, Vec<Option<String>>)>;
        let run = |order: &[usize]| -> (Vec<Row>, Digests) {
            let mut v = RunView::new(&state, 1, RunKey::of(&state), 1);
            assert_eq!(v.n_points(), 6);
            for &slot in order {
                let pt = v.points[slot];
                // Seed k: A 100 + 10k, B 5 + k more.
                let k = f64::from(pt.seed_idx);
                let value = 100.0 + 10.0 * k + if pt.side == 1 { 5.0 + k } else { 0.0 };
                v.assigned[0] = Some(slot);
                v.take(
                    0,
                    progress(1, value, format!("{}{}", pt.seed_idx, pt.side)),
                    &[],
                );
            }
            assert!(v.done());
            let digests = v
                .seed_reports()
                .into_iter()
                .map(|(s, r)| (s, r.iter().map(|x| x.map(|x| x.digest.clone())).collect()))
                .collect();
            (v.rows(), digests)
        };
        let (rows, digests) = run(&[0, 1, 2, 3, 4, 5]);
        assert_eq!(run(&[5, 3, 1, 4, 0, 2]), (rows.clone(), digests.clone()));
        assert_eq!(run(&[2, 5, 4, 0, 3, 1]).0, rows);
        let seeds: Vec<u64> = digests.iter().map(|d| d.0).collect();
        assert_eq!(seeds, vec![7, 8, 9]);
        assert_eq!(
            digests[2].1,
            vec![Some("20".to_string()), Some("21".to_string())]
        );
        let [row] = &rows[..] else {
            panic!("one scale: {rows:?}")
        };
        assert_eq!(row.values, vec![Some(110.0), Some(116.0)]);
        let per = [5.0, 6.0 / 110.0 * 100.0, 7.0 / 120.0 * 100.0];
        assert_eq!(row.change, Estimate::of(&per));
        assert!(row.change.and_then(|c| c.significant()).unwrap());
    }

    /// The live chart's series over seeds: per interval the mean, and its interval
    /// once two seeds have reached it; a sweep's rows carry each side's interval.
    #[test]
    fn the_live_series_is_the_mean_over_seeds_with_its_interval() {
        let mut state = AppState::default();
        let mut sim = state.sim().clone();
        sim.seeds = 2;
        sim.sweep = Vec::new();
        state.scenario.sim = Some(sim);
        state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
        let mut v = RunView::new(&state, 1, RunKey::of(&state), 1);
        let a: Vec<usize> = (0..v.n_points())
            .filter(|&i| v.points[i].side == 0)
            .collect();
        let feed = |v: &mut RunView, slot: usize, series: Vec<f64>| {
            let mut p = progress(1, series.iter().sum(), String::new());
            p.series = series;
            v.assigned[0] = Some(slot);
            v.take(0, p, &[]);
        };
        feed(&mut v, a[0], vec![10.0, 20.0, 30.0]);
        let one = v.live(0);
        assert_eq!(
            one.points.iter().map(|e| e.mean).collect::<Vec<_>>(),
            [10.0, 20.0, 30.0]
        );
        assert!(
            one.points.iter().all(|e| e.interval().is_none()),
            "one seed: no band"
        );
        feed(&mut v, a[1], vec![14.0, 22.0]);
        let two = v.live(0);
        assert_eq!(
            two.points.iter().map(|e| e.mean).collect::<Vec<_>>(),
            [12.0, 21.0, 30.0]
        );
        let (lo, hi) = two.points[0].interval().unwrap();
        assert!(lo < 12.0 && 12.0 < hi && (hi - 12.0 - (12.0 - lo)).abs() < 1e-9);
        assert!(
            two.points[2].interval().is_none(),
            "only one seed reached the third"
        );
        assert!(v.live(1).points.is_empty(), "B has not reported");
        // A's two results (60 and 36) have their interval; B has none yet.
        let rows = v.rows();
        let (lo, hi) = rows[0].spread[0].unwrap();
        assert!(lo < 48.0 && 48.0 < hi, "{:?}", rows[0]);
        assert_eq!(rows[0].spread[1], None);
    }

    /// Every point of `state`'s simulation run the page's way: the worker's `start()`
    /// in slices, its `Progress` through serde, taken by `RunView` last point first.
    fn run_the_pages_way(state: &AppState) -> RunView {
        let mut v = RunView::new(state, 1, RunKey::of(state), 1);
        let machine = state.scenario.machine.choice().clone();
        for slot in (0..v.n_points()).rev() {
            let pt = v.points[slot];
            let setup = v.point_setup(pt);
            let mut live = crate::worker::start(&machine, &v.labels[pt.side], &setup).unwrap();
            while !live.advance(1_000_000).unwrap() {}
            let p = crate::worker::progress(1, &live, 1.0, None);
            let p: Progress = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
            v.assigned[0] = Some(slot);
            v.take(0, p, &[]);
        }
        assert!(v.done());
        v
    }

    /// A seed's example: its "with published" CSV and JSON are the bytes of `schedlab
    /// reproduce NAME --scale page --format csv|json`, which runs the example's
    /// `sweep_spec()` and writes with the same `export` functions
    /// (`core/src/bin/schedlab/reproduce.rs`). Shortened here (two scales, two seeds,
    /// 8 ms) so that it runs in a test; the page checks its example as it is against
    /// the CLI in the browser test (`export`).
    #[test]
    fn the_pages_published_tables_are_the_clis_bytes() {
        use schedlab_core::experiment::{export, run};
        let mut e = schedlab_core::reproduce::page_examples()
            .unwrap()
            .into_iter()
            .find(|e| e.name == "seed01-tbench")
            .unwrap();
        let sim = e.scenario.sim.as_mut().unwrap();
        sim.sweep = vec![1, 4];
        sim.seeds = 2;
        sim.duration_ms = 8;
        let state = AppState::from_scenario(e.scenario.clone());
        let v = run_the_pages_way(&state);
        let files =
            crate::components::export_bar::sim_files(&v, "kunpeng920-6426", Some(&e)).unwrap();
        let text = |hook: &str| files.iter().find(|f| f.hook == hook).unwrap().text.clone();

        let sw = e.sweep_spec().unwrap();
        let reports: Vec<_> = sw.points().iter().map(|s| run(s).unwrap()).collect();
        let rows = sw.rows(&reports).unwrap();
        let p = e.published();
        let csv = text("published-csv");
        assert_eq!(csv, export::sweep_csv_published(&rows, p.change, p.values));
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert!(csv.lines().nth(1).unwrap().contains(",13.80,"), "{csv}");
        let json = text("published-json");
        let wall = serde_json::from_str::<serde_json::Value>(&json).unwrap()["wall_ms"]
            .as_f64()
            .unwrap()
            / 1e3;
        let pair = (sw.baseline, sw.patched);
        assert_eq!(
            json,
            export::sweep_json_published(&reports, &rows, pair, 2, wall, &p).unwrap()
        );
        assert!(json.contains("\"experiment\": \"seed01-tbench\""), "{json}");
    }

    /// The page's export is the CLI's: a run made the page's way (the worker's
    /// `start()` in slices, its `Progress` through serde, `RunView` by point, in any
    /// order) writes the bytes `schedlab sweep --format csv` and `schedlab run
    /// --format csv` write for the same runs, which call `experiment::run` and the
    /// same `export` functions (`core/src/bin/schedlab/sim.rs`).
    #[test]
    fn the_pages_csv_is_the_clis_bytes() {
        use schedlab_core::experiment::{export, run, SweepSpec};
        let mut state = AppState::default();
        let mut sim = state.sim().clone();
        sim.workload = schedlab_core::workload::Workload::NetperfTcpRr { instances: 2 };
        sim.duration_ms = 8;
        sim.seeds = 2;
        sim.seed = 3;
        sim.sweep = Vec::new();
        state.scenario.sim = Some(sim.clone());
        state.scenario.patches = "6.6".parse().unwrap();
        state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
        let v = run_the_pages_way(&state);
        assert_eq!(v.labels, ["6.6", "6.6+cluster"]);
        let files = crate::components::export_bar::sim_files(&v, "kunpeng920-6426", None).unwrap();
        let text = |hook: &str| files.iter().find(|f| f.hook == hook).unwrap().text.clone();

        // The CLI's way: `schedlab sweep … --threads 2 --seeds 2 --format csv`.
        let m = state.machine().clone();
        let base = sim.run_spec(&m, "6.6".parse().unwrap()).unwrap();
        let sw = SweepSpec {
            base: base.clone(),
            threads: vec![2],
            baseline: "6.6".parse().unwrap(),
            patched: "6.6+cluster".parse().unwrap(),
            seeds: 2,
        };
        let reports: Vec<_> = sw.points().iter().map(|s| run(s).unwrap()).collect();
        assert_eq!(
            text("ab-csv"),
            export::sweep_csv(&sw.rows(&reports).unwrap())
        );
        // `schedlab run … --seeds 2 --format csv` per side: A's output, then B's rows.
        let cli_run = |p: &str| {
            let s = sim.run_spec(&m, p.parse().unwrap()).unwrap();
            let r: Vec<_> = [3, 4].map(|k| run(&s.with_seed(k)).unwrap()).into();
            export::run_csv(&r)
        };
        let (a, b) = (cli_run("6.6"), cli_run("6.6+cluster"));
        let b_rows = b.split_once('\n').unwrap().1;
        assert_eq!(text("metrics-csv"), format!("{a}{b_rows}"));
        assert_eq!(text("metrics-csv").lines().count(), 5);
        // JSON: the same but for the wall time each measures itself.
        let a_json = text("a-json");
        let reports_a: Vec<_> = [3, 4].map(|k| run(&base.with_seed(k)).unwrap()).into();
        let wall: f64 = serde_json::from_str::<serde_json::Value>(&a_json).unwrap()["wall_ms"]
            .as_f64()
            .unwrap()
            / 1e3;
        assert_eq!(a_json, export::run_json(&reports_a, wall).unwrap());
    }
}
