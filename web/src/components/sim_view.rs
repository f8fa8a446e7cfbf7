//! The Simulate tab: the workload run under side A's patch set and, when comparing,
//! side B's, with both throughputs drawn as they come.
//!
//! ```text
//!  SimSetup (state, URL) ─▶ Msg::Run per side ─▶ worker A, worker B (crate::worker)
//!  Progress (after each batch) ─▶ RunView (RefCell) ─force_update─▶ chart + table
//! ```
//!
//! A run starts when the tab opens or its inputs change, and a newer run replaces the
//! older one (ids). Each side runs in its own Web Worker, so the page stays responsive
//! and the two sides run in parallel. Core's `LiveRun` gives the same events for any
//! slicing, so the digests here are `schedlab run`'s: the page prints the command line.

use std::cell::RefCell;
use std::rc::Rc;

use schedlab_core::experiment::change_pct;
use schedlab_core::reproduce::{page_examples, Example};
use schedlab_core::scenario::{MachineChoice, SimSetup, MAX_SIM_MS};
use schedlab_core::workload::Workload;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};
use yew::prelude::*;

use crate::components::wakeup_view::kernel_pickers;
use crate::dom::{input_value, select_value};
use crate::state::{Action, AppContext, AppState, Side};
use crate::worker::{failed, now_ms, Msg, Progress, Report};

/// One simulation of a run: a scale (threads, clients …) under one side's patch set.
#[derive(Clone, Copy, Debug)]
struct Point {
    threads: u32,
    side: usize,
}

/// A run of the current inputs, as the workers report it: one point per side, or a
/// sweep's points, handed to the two workers as they come free.
#[derive(Debug)]
struct RunView {
    id: u64,
    /// The inputs it runs for ([`run_key`]).
    key: String,
    /// Per side, its patch set.
    labels: Vec<String>,
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
    started_ms: f64,
    finished_ms: Option<f64>,
    stopped: bool,
}

impl RunView {
    fn new(state: &AppContext, id: u64, key: String) -> RunView {
        let patches = state.sides();
        let sim = state.sim.clone();
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
            machine: state.scenario().machine,
            sim,
            results: vec![None; points.len()],
            points,
            next: 0,
            assigned: vec![None; 2],
            started_ms: now_ms(),
            finished_ms: None,
            stopped: false,
        }
    }

    /// Gives worker `w` the next point, if any is left.
    fn hand_out(&mut self, w: usize, workers: &[Worker]) {
        let slot = self.next;
        let (Some(&pt), Some(worker)) = (self.points.get(slot), workers.get(w)) else {
            self.assigned[w] = None;
            return;
        };
        self.next += 1;
        self.assigned[w] = Some(slot);
        send(
            worker,
            &Msg::Run {
                id: self.id,
                machine: self.machine.clone(),
                patches: self.labels[pt.side].clone(),
                sim: SimSetup {
                    workload: self.sim.workload.with_threads(pt.threads),
                    sweep: Vec::new(),
                    ..self.sim.clone()
                },
            },
        );
    }

    /// A sweep (the table and chart by scale) rather than one run per side.
    fn sweep(&self) -> bool {
        !self.sim.sweep.is_empty()
    }

    fn progress(&self) -> impl Iterator<Item = &Progress> {
        self.results.iter().flatten()
    }

    /// The points that are running or done.
    fn started(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }

    fn finished(&self) -> usize {
        self.progress().filter(|p| p.done).count()
    }

    fn all_reported(&self) -> bool {
        self.results.iter().all(Option::is_some)
    }

    fn done(&self) -> bool {
        self.error().is_some() || (self.all_reported() && self.progress().all(|p| p.done))
    }

    fn error(&self) -> Option<String> {
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
    fn first(&self) -> Option<&Progress> {
        self.progress().next()
    }

    /// One run per side: each side's progress, A first.
    fn sides(&self) -> Vec<&Progress> {
        self.progress().collect()
    }

    fn reports(&self) -> Option<Vec<&Report>> {
        self.results
            .iter()
            .map(|p| p.as_ref()?.report.as_ref())
            .collect()
    }

    /// A sweep's rows: per scale, ascending, each side's result once it is in.
    fn rows(&self) -> Vec<(u32, Vec<Option<f64>>)> {
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

/// The two simulation workers, and their message handlers (kept alive with them).
struct Pool {
    workers: Vec<Worker>,
    _handlers: Vec<Closure<dyn FnMut(MessageEvent)>>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        for w in &self.workers {
            w.terminate();
        }
    }
}

/// Starts the workers. Each reports into `view` (when the id matches), takes the next
/// point when its own is done, and redraws; a finished single run's utilisation goes
/// to the page state for the drawing.
fn start_pool(
    view: Rc<RefCell<Option<RunView>>>,
    redraw: UseForceUpdateHandle,
    dispatcher: UseReducerDispatcher<AppState>,
) -> Result<Pool, String> {
    let opts = WorkerOptions::new();
    opts.set_type(WorkerType::Module);
    let mut workers = Vec::new();
    for _ in 0..2 {
        workers.push(
            Worker::new_with_options("static/worker.js", &opts)
                .map_err(|e| format!("this browser cannot start a simulation worker: {e:?}"))?,
        );
    }
    let mut handlers = Vec::new();
    for (w, worker) in workers.iter().enumerate() {
        let (view, redraw, dispatcher) = (view.clone(), redraw.clone(), dispatcher.clone());
        let all = workers.clone();
        let h = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            let mut v = view.borrow_mut();
            let Some(v) = v.as_mut() else {
                return;
            };
            let Some(slot) = v.assigned[w] else {
                return;
            };
            let p = match serde_json::from_str::<Progress>(&text) {
                Ok(p) if p.id == v.id => p,
                Ok(_) => return, // an older run's last words
                Err(_) => failed(v.id, format!("the simulation worker failed: {text}")),
            };
            let next = p.done && p.error.is_none() && !v.stopped;
            v.results[slot] = Some(p);
            if next {
                v.hand_out(w, &all);
            }
            if v.done() && v.finished_ms.is_none() {
                v.finished_ms = Some(now_ms());
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
        worker.set_onmessage(Some(h.as_ref().unchecked_ref()));
        handlers.push(h);
    }
    Ok(Pool {
        workers,
        _handlers: handlers,
    })
}

fn send(w: &Worker, m: &Msg) {
    if let Ok(text) = serde_json::to_string(m) {
        let _ = w.post_message(&JsValue::from_str(&text));
    }
}

/// Everything a run depends on: a change starts a new run. Computed on every render
/// (one per batch while a run goes), so it names a custom machine by its `Rc`, not by
/// its spec, as `AppState::refresh_wake()` does.
fn run_key(state: &AppContext) -> String {
    format!(
        "{}|{:?}|{}|{:?}|{:?}",
        state.preset,
        state.custom.as_ref().map(Rc::as_ptr),
        state.patches,
        state.wake.compare,
        state.sim
    )
}

/// The label of a workload's scale parameter.
fn scale_label(w: &Workload) -> &'static str {
    match w {
        Workload::Tbench { .. } => "clients",
        Workload::NetperfTcpRr { .. } | Workload::NetperfUdpRr { .. } => "instances",
        Workload::Hackbench { .. } => "groups",
        Workload::CookiePairs { .. } => "threads",
        Workload::Schbench { .. } => "workers",
        Workload::Custom { .. } => "pairs",
        Workload::LatPipe { .. } => "pair",
    }
}

/// A y-axis top: 1, 2 or 5 times a power of ten, at least `v`.
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|k| k * p)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * p)
}

fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.3} M", v / 1e6)
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        // Four significant digits: 0.8447 s, 0.0002120 s.
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// Simulated milliseconds, with the digits a short run needs.
fn fmt_ms(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// The plot both charts draw on: a 640 × 230 SVG, values up from a zero baseline on
/// the left axis, to a round top above the largest value.
struct Plot {
    top: f64,
}

impl Plot {
    const W: f64 = 640.0;
    const H: f64 = 230.0;
    const LEFT: f64 = 64.0;
    const RIGHT: f64 = 16.0;
    const TOP: f64 = 10.0;
    const BOTTOM: f64 = 28.0;

    fn new(values: impl Iterator<Item = f64>) -> Plot {
        Plot {
            top: nice_ceiling(values.fold(0.0, f64::max) * 1.05),
        }
    }

    /// The plot's width: x runs from `LEFT` to `LEFT + width()`.
    fn width() -> f64 {
        Self::W - Self::LEFT - Self::RIGHT
    }

    fn height() -> f64 {
        Self::H - Self::TOP - Self::BOTTOM
    }

    fn y(&self, v: f64) -> f64 {
        Self::TOP + Self::height() * (1.0 - v / self.top)
    }

    /// A label under the x axis at `x`.
    fn x_tick(x: f64, anchor: &'static str, text: String) -> Html {
        html! {
            <text class="tick" x={x.to_string()} y={(Self::H - 8.0).to_string()}
                text-anchor={anchor}>{ text }</text>
        }
    }

    /// The SVG: grid lines and labels at 0, half and the top, both axes, then `body`.
    fn svg(&self, label: String, x_ticks: Html, body: Html) -> Html {
        let (l, r, t) = (Self::LEFT, Self::W - Self::RIGHT, Self::TOP);
        let base = Self::TOP + Self::height();
        let y_ticks = [0.0, 0.5, 1.0].map(|f| {
            let v = self.top * f;
            let y = self.y(v);
            html! {
                <>
                    <line class="grid" x1={l.to_string()} x2={r.to_string()} y1={y.to_string()} y2={y.to_string()} />
                    <text class="tick" x={(l - 6.0).to_string()} y={(y + 4.0).to_string()}
                        text-anchor="end">{ fmt_value(v) }</text>
                </>
            }
        });
        html! {
            <svg class="sim-chart" viewBox={format!("0 0 {} {}", Self::W, Self::H)} role="img" aria-label={label}>
                { for y_ticks }
                { x_ticks }
                <line class="axis" x1={l.to_string()} x2={l.to_string()} y1={t.to_string()} y2={base.to_string()} />
                <line class="axis" x1={l.to_string()} x2={r.to_string()} y1={base.to_string()} y2={base.to_string()} />
                { body }
            </svg>
        }
    }
}

/// The throughput of every side over the measured window, as lines.
fn chart(sides: &[&Progress], unit: &str, window_ms: f64) -> Html {
    let plot = Plot::new(sides.iter().flat_map(|s| s.series.iter().copied()));
    let x = |ms: f64| Plot::LEFT + Plot::width() * (ms / window_ms.max(1e-9)).min(1.0);
    let lines = sides.iter().enumerate().map(|(i, s)| {
        let iv = s.interval_ns as f64 / 1e6;
        let points: String = s
            .series
            .iter()
            .enumerate()
            .map(|(k, v)| format!("{:.1},{:.1} ", x((k as f64 + 0.5) * iv), plot.y(*v)))
            .collect();
        let side = if i == 0 { "a" } else { "b" };
        html! {
            <polyline class={format!("line line-{side}")} points={points} data-side={side} />
        }
    });
    let x_ticks = [(0.0, "start"), (0.5, "middle"), (1.0, "end")].map(|(f, anchor)| {
        Plot::x_tick(x(window_ms * f), anchor, format!("{:.0} ms", window_ms * f))
    });
    plot.svg(
        format!("throughput over the measured window, {unit}"),
        x_ticks.into_iter().collect(),
        lines.collect(),
    )
}

/// The finished runs' results as the seeds' tables give them: B's change against A.
fn change(v: &RunView, published: Option<&Example>) -> Html {
    let (Some(reports), Some(first)) = (v.reports(), v.first()) else {
        return html! {};
    };
    let [a, b] = reports[..] else {
        return html! {};
    };
    let c = change_pct(a.value, b.value, first.higher_is_better);
    let class = if c > 0.0 {
        "better"
    } else if c < 0.0 {
        "worse"
    } else {
        "same"
    };
    let unit = &first.unit;
    html! {
        <p class={classes!("change", class)}>
            { format!("A {} {unit}, B {} {unit}: ", fmt_value(a.value), fmt_value(b.value)) }
            <b class="change-pct">{ format!("{c:+.2}%") }</b>
            { if first.higher_is_better { " for B (higher is better)" } else { " for B (lower is better)" } }
            if let Some((_, p)) = published.and_then(|e| e.published.first()) {
                <span class="published">{ format!("; published {p:+.2}%") }</span>
            }
        </p>
    }
}

/// The numbers of a finished run, side by side.
fn results(v: &RunView) -> Html {
    let (Some(reports), Some(first)) = (v.reports(), v.first()) else {
        return html! {};
    };
    let row = |label: &str, f: &dyn Fn(&Report) -> String| {
        html! {
            <tr>
                <th scope="row">{ label }</th>
                { for reports.iter().map(|r| html! { <td>{ f(r) }</td> }) }
            </tr>
        }
    };
    let pct = |n: u64, of: u64| {
        if of == 0 {
            "–".to_string()
        } else {
            format!("{:.1}%", n as f64 * 100.0 / of as f64)
        }
    };
    let placement_rows = reports[0]
        .placement
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            row(&format!("wake-ups to {name}"), &move |r: &Report| {
                pct(r.placement.get(i).map_or(0, |p| p.1), r.wakeups)
            })
        });
    html! {
        <table class="sim-results">
            <thead>
                <tr>
                    <th></th>
                    { for v.labels.iter().enumerate().map(|(i, label)| html! {
                        <th class={format!("side-{}", if i == 0 { "a" } else { "b" })}>
                            <span class="side-tag">{ if i == 0 { "A" } else { "B" } }</span>
                            <code>{ format!(" {label}") }</code>
                        </th>
                    }) }
                </tr>
            </thead>
            <tbody>
                { row(&format!("result ({})", first.unit), &|r| fmt_value(r.value)) }
                { row("wake-ups", &|r| r.wakeups.to_string()) }
                { for placement_rows }
                { row("CPUs probed per wake-up", &|r| format!("{:.2}", r.cpus_probed_mean_x100 as f64 / 100.0)) }
                { row("wake-ups by IPI / remote rq lock", &|r| format!("{} / {}", r.wake_ipi, r.wake_remote_lock)) }
                { row("migrations (wake-up / balance)", &|r| format!("{} / {}", r.migrations_wakeup, r.migrations_balance)) }
                { row("context switches", &|r| r.context_switches.to_string()) }
                { row("force idle", &|r| format!("{:.1} ms", r.force_idle_ns as f64 / 1e6)) }
                { row("simulated events", &|r| r.events.to_string()) }
                <tr class="digest-row">
                    <th scope="row">{ "digest" }</th>
                    { for reports.iter().enumerate().map(|(i, r)| html! {
                        <td><code class="digest" data-side={if i == 0 { "a" } else { "b" }}>{ r.digest.clone() }</code></td>
                    }) }
                </tr>
            </tbody>
        </table>
    }
}

/// Picks the side whose utilisation the drawing shades.
fn heat_button(state: &AppContext, side: Side) -> Html {
    let active = state.wake.focus == side;
    let d = state.dispatcher();
    let onclick = Callback::from(move |_: MouseEvent| d.dispatch(Action::Focus(side)));
    let label = if side == Side::A { "A" } else { "B" };
    html! {
        <button class={classes!("seg", active.then_some("active"))} aria-pressed={active.to_string()}
            data-heat-side={label} {onclick}>{ label }</button>
    }
}

/// The line under the buttons: where the run is.
fn status(v: &RunView, duration_ms: u64, stale: bool) -> Html {
    let sim_ms = v.progress().map(|p| p.now_ns).min().unwrap_or(0) as f64 / 1e6;
    let warm = v.first().map_or(0, |p| p.warmup_ns) as f64 / 1e6;
    let n = v.points.len();
    let text = if let Some(e) = v.error() {
        html! { <p class="error">{ format!("The simulation stopped: {e}") }</p> }
    } else if v.done() {
        let events: u64 = v.progress().map(|p| p.events).sum();
        let busy: f64 = v.progress().map(|p| p.busy_ms).sum();
        let what = if v.sweep() && v.first().is_some_and(|p| p.completion) {
            format!("{n} simulations, each to completion")
        } else if v.sweep() {
            format!("{n} simulations of {duration_ms} ms")
        } else if v.first().is_some_and(|p| p.completion) {
            format!("finished at {} simulated", fmt_ms(sim_ms))
        } else {
            format!(
                "{:.0} ms measured after {warm:.0} ms of warm-up",
                sim_ms - warm
            )
        };
        // A browser with a frozen clock (headless, virtual time) measures nothing.
        let wall = v.finished_ms.map_or(0.0, |f| f - v.started_ms);
        let speed = if busy >= 1.0 && wall >= 1.0 {
            format!(
                " in {:.2} s ({}, {:.2} M events/s each)",
                wall / 1e3,
                if n >= 2 {
                    "two workers in parallel"
                } else {
                    "one worker"
                },
                events as f64 / (busy / 1e3) / 1e6
            )
        } else {
            String::new()
        };
        html! {
            <p class="sim-status done">{ format!("Done: {what}; {events} simulated events{speed}.") }</p>
        }
    } else if v.stopped && v.sweep() {
        html! { <p class="sim-status">{ format!("Stopped after {} of {n} simulations.", v.finished()) }</p> }
    } else if v.stopped {
        html! { <p class="sim-status">{ format!("Stopped at {sim_ms:.0} ms simulated.") }</p> }
    } else if v.sweep() {
        html! { <p class="sim-status running">{ format!("Sweeping: {} of {n} simulations done, {} running…", v.finished(), v.started() - v.finished()) }</p> }
    } else if !v.all_reported() {
        html! { <p class="sim-status running">{ "Starting…" }</p> }
    } else if v.progress().any(|p| p.warming) {
        html! { <p class="sim-status running">{ format!("Warming up: {sim_ms:.0} of {warm:.0} ms (not measured)…") }</p> }
    } else if v.first().is_some_and(|p| p.completion) {
        let live: u32 = v.progress().map(|p| p.live_tasks).sum();
        html! { <p class="sim-status running">{ format!("Running: {sim_ms:.0} ms simulated, {live} tasks still running…") }</p> }
    } else {
        html! { <p class="sim-status running">{ format!("Running: {:.0} of {duration_ms} ms measured…", sim_ms - warm) }</p> }
    };
    html! {
        <>
            { text }
            if stale {
                <p class="sim-status">{ "The inputs changed; a new run is starting." }</p>
            }
        </>
    }
}

/// A sweep as the seeds print it: per scale, A, B and B's change; and as a chart.
fn sweep_view(v: &RunView, scale: &str, published: Option<&Example>) -> Html {
    let published_at =
        |t: u32| published.and_then(|e| e.published.iter().find(|(s, _)| *s == t).map(|(_, c)| *c));
    let rows = v.rows();
    let first = v.first();
    let unit = first.map_or("", |p| p.unit.as_str());
    let better = first.is_none_or(|p| p.higher_is_better);
    let cell = |x: Option<f64>| x.map_or_else(|| "…".to_string(), fmt_value);
    let table = html! {
        <table class="sim-results sweep-table">
            <thead>
                <tr>
                    <th>{ scale }</th>
                    { for v.labels.iter().enumerate().map(|(i, label)| html! {
                        <th class={format!("side-{}", if i == 0 { "a" } else { "b" })}>
                            <span class="side-tag">{ if i == 0 { "A" } else { "B" } }</span>
                            <code>{ format!(" {label}") }</code>
                        </th>
                    }) }
                    if v.labels.len() == 2 {
                        <th>{ "change" }</th>
                    }
                    if published.is_some() {
                        <th class="published">{ "published" }</th>
                    }
                </tr>
            </thead>
            <tbody>
                { for rows.iter().map(|(t, vals)| {
                    let change = match vals[..] {
                        [Some(a), Some(b)] => Some(change_pct(a, b, better)),
                        _ => None,
                    };
                    html! {
                        <tr data-threads={t.to_string()}>
                            <th scope="row">{ t }</th>
                            { for vals.iter().map(|x| html! { <td>{ cell(*x) }</td> }) }
                            if vals.len() == 2 {
                                <td class={classes!("change-cell", change.map(|c| if c > 0.0 { "better" } else if c < 0.0 { "worse" } else { "same" }))}>
                                    { change.map_or_else(|| "…".to_string(), |c| format!("{c:+.2}%")) }
                                </td>
                            }
                            if published.is_some() {
                                <td class="published">{ published_at(*t).map_or_else(|| "–".to_string(), |c| format!("{c:+.2}%")) }</td>
                            }
                        </tr>
                    }
                }) }
            </tbody>
        </table>
    };
    html! {
        <>
            { sweep_chart(&rows, published.map_or(&[][..], |e| &e.published_values), unit, scale) }
            <p class="sim-note">
                { format!("{unit} by {scale}; change > 0: B is better ({}).", if better { "higher is better" } else { "lower is better" }) }
                if published.is_some_and(|e| !e.published_values.is_empty()) {
                    { " Dashed: the published numbers." }
                }
            </p>
            { table }
            if let Some(e) = published {
                <p class="sim-note">{ format!("Published: {} ({}). The model's run lengths are shorter than the benchmark's; docs/fidelity.md explains each row the model misses.", e.title, e.source) }</p>
            }
        </>
    }
}

/// A sweep's values by scale (evenly spaced, as the seeds' tables list them).
/// Published numbers in the model's units, where there are some, are drawn dashed.
fn sweep_chart(
    rows: &[(u32, Vec<Option<f64>>)],
    published: &[(u32, f64, f64)],
    unit: &str,
    scale: &str,
) -> Html {
    let plot = Plot::new(
        rows.iter()
            .flat_map(|(_, v)| v.iter().flatten().copied())
            .chain(published.iter().flat_map(|&(_, a, b)| [a, b])),
    );
    let n = rows.len().max(1);
    let x = |i: usize| {
        if n == 1 {
            Plot::LEFT + Plot::width() / 2.0
        } else {
            Plot::LEFT + Plot::width() * i as f64 / (n - 1) as f64
        }
    };
    let sides = rows.first().map_or(0, |(_, v)| v.len());
    let series = (0..sides).map(|s| {
        let side = if s == 0 { "a" } else { "b" };
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, (_, v))| Some((x(i), plot.y(v[s]?))))
            .collect();
        let line: String = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1} ")).collect();
        html! {
            <g class={format!("series-{side}")} data-side={side}>
                <polyline class={format!("line line-{side}")} points={line} />
                { for pts.iter().map(|(a, b)| html! {
                    <circle class={format!("dot dot-{side}")} cx={format!("{a:.1}")} cy={format!("{b:.1}")} r="3.5" />
                }) }
            </g>
        }
    });
    let measured = (0..2).map(|s| {
        let side = if s == 0 { "a" } else { "b" };
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, (t, _))| {
                let &(_, a, b) = published.iter().find(|(p, _, _)| p == t)?;
                Some((x(i), plot.y(if s == 0 { a } else { b })))
            })
            .collect();
        let line: String = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1} ")).collect();
        html! {
            <polyline class={format!("line published-line line-{side}")} points={line} data-side={side} />
        }
    });
    let x_ticks = rows
        .iter()
        .enumerate()
        .map(|(i, (t, _))| Plot::x_tick(x(i), "middle", t.to_string()));
    plot.svg(
        format!("{unit} by {scale}"),
        x_ticks.into_iter().collect(),
        if published.is_empty() {
            series.collect()
        } else {
            series.chain(measured).collect()
        },
    )
}

/// The `schedlab` command lines that rerun this simulation natively, with the same
/// digests: `run` once per patch set, or one `sweep`.
fn cli_lines(state: &AppContext) -> Vec<String> {
    let sim = &state.sim;
    let machine = if state.preset == crate::state::CUSTOM {
        "FILE.json"
    } else {
        &state.preset
    };
    let mut args = sim.workload.cli_args();
    if !sim.sweep.is_empty() {
        if let Some(i) = args.iter().position(|a| a == "--threads") {
            args[i + 1] = sim
                .sweep
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",");
        }
    }
    let mut common = format!("--machine {machine}");
    if sim.cpus != "all" {
        common.push_str(&format!(" --cpus {}", sim.cpus));
    }
    common.push_str(&format!(
        " {} --duration-ms {} --seed {}",
        args.join(" "),
        sim.duration_ms,
        sim.seed
    ));
    let a = state.patches.to_string();
    if sim.sweep.is_empty() {
        state
            .sides()
            .iter()
            .map(|p| format!("schedlab run {common} --patches {p}"))
            .collect()
    } else {
        let b = state
            .wake
            .compare
            .map_or_else(|| a.clone(), |b| b.to_string());
        vec![format!(
            "schedlab sweep {common} --baseline {a} --patched {b}"
        )]
    }
}

#[function_component(SimPanel)]
pub fn sim_panel() -> Html {
    let view = use_mut_ref(|| None::<RunView>);
    let pool = use_mut_ref(|| None::<Result<Pool, String>>);
    let ids = use_mut_ref(|| 0u64);
    let redraw = use_force_update();
    let nonce = use_state(|| 0u32);
    let state = use_context::<AppContext>();
    let key = state.as_ref().map(run_key).unwrap_or_default();
    // The seeds' experiments, built once: a menu, and the published numbers of the
    // one on screen.
    let examples = use_memo((), |_| page_examples().unwrap_or_default());

    // Start a run whenever the inputs change (or Run again is pressed); a newer run
    // replaces it, and the workers go with the tab.
    {
        let (view, pool, redraw, state) =
            (view.clone(), pool.clone(), redraw.clone(), state.clone());
        use_effect_with((key.clone(), *nonce), move |(key, _)| {
            let id = {
                let mut i = ids.borrow_mut();
                *i += 1;
                *i
            };
            if let Some(state) = &state {
                let mut run = RunView::new(state, id, key.clone());
                let p = {
                    let mut pool = pool.borrow_mut();
                    pool.get_or_insert_with(|| {
                        start_pool(view.clone(), redraw.clone(), state.dispatcher())
                    })
                    .as_ref()
                    .map(|p| p.workers.clone())
                    .map_err(Clone::clone)
                };
                match p {
                    Ok(workers) => {
                        for w in 0..workers.len() {
                            run.hand_out(w, &workers);
                        }
                    }
                    Err(e) => run.results[0] = Some(failed(id, e)),
                }
                if !state.sim_heat.is_empty() {
                    state.dispatch(Action::SimHeat(Vec::new()));
                }
                *view.borrow_mut() = Some(run);
                redraw.force_update();
            }
            move || {
                if let Some(Ok(p)) = pool.borrow().as_ref() {
                    for w in &p.workers {
                        send(w, &Msg::Cancel { id });
                    }
                }
            }
        });
    }
    // The workers end with the panel.
    {
        let pool = pool.clone();
        use_effect_with((), move |_| move || drop(pool.borrow_mut().take()));
    }

    let Some(state) = state else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };
    let sim = state.sim.clone();
    let dispatcher = state.dispatcher();
    let set = move |f: &dyn Fn(&mut SimSetup)| {
        let mut s = sim.clone();
        f(&mut s);
        dispatcher.dispatch(Action::SetSim(s));
    };
    let on_workload = {
        let set = set.clone();
        Callback::from(move |e: Event| {
            if let Some(w) = select_value(&e).and_then(|n| Workload::with_defaults(&n)) {
                set(&|s: &mut SimSetup| {
                    // A completion workload's duration is its cap.
                    let was = s.workload.runs_to_completion();
                    if w.runs_to_completion() != was {
                        s.duration_ms = if w.runs_to_completion() {
                            MAX_SIM_MS
                        } else {
                            SimSetup::default().duration_ms
                        };
                    }
                    s.workload = w.clone();
                })
            }
        })
    };
    let number = |f: fn(&mut SimSetup, u64)| {
        let set = set.clone();
        Callback::from(move |e: Event| {
            if let Some(Ok(v)) = input_value(&e).map(|v| v.trim().parse::<u64>()) {
                set(&|s: &mut SimSetup| f(s, v))
            }
        })
    };
    let on_threads =
        number(|s, v| s.workload = s.workload.with_threads(v.min(u32::MAX as u64) as u32));
    let on_duration = number(|s, v| s.duration_ms = v);
    let on_seed = number(|s, v| s.seed = v);
    let on_cpus = {
        let set = set.clone();
        Callback::from(move |e: Event| {
            if let Some(v) = input_value(&e) {
                set(&|s: &mut SimSetup| s.cpus = v.trim().to_string())
            }
        })
    };
    let on_sweep = {
        let (set, d) = (set.clone(), state.dispatcher());
        Callback::from(move |e: Event| {
            let text = input_value(&e).unwrap_or_default();
            match SimSetup::parse_sweep(&text) {
                Ok(list) => set(&|s: &mut SimSetup| s.sweep = list.clone()),
                Err(e) => d.dispatch(Action::SimInputError(e)),
            }
        })
    };
    let on_stop = {
        let (view, pool, redraw) = (view.clone(), pool.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let mut v = view.borrow_mut();
            let Some(v) = v.as_mut() else {
                return;
            };
            if let Some(Ok(p)) = pool.borrow().as_ref() {
                for w in &p.workers {
                    send(w, &Msg::Cancel { id: v.id });
                }
            }
            v.stopped = true;
            redraw.force_update();
        })
    };
    let on_again = {
        let nonce = nonce.clone();
        Callback::from(move |_: MouseEvent| nonce.set(*nonce + 1))
    };

    let w = &state.sim.workload;
    let completion = w.runs_to_completion();
    let setup = html! {
        <fieldset class="sim-setup">
            <legend>{ "The workload" }</legend>
            <div class="row grid">
                <label><span>{ "workload" }</span>
                    <select id="sim-workload" onchange={on_workload}>
                        { for Workload::NAMES.iter().map(|n| html! {
                            <option value={*n} selected={*n == w.name()}>{ *n }</option>
                        }) }
                    </select>
                </label>
                if !matches!(w, Workload::LatPipe { .. }) && state.sim.sweep.is_empty() {
                    <label><span>{ scale_label(w) }</span>
                        <input id="sim-threads" type="number" min="1" value={w.threads().to_string()} onchange={on_threads} />
                    </label>
                }
                <label><span>{ "CPUs (all, nodeN, list)" }</span>
                    <input id="sim-cpus" type="text" value={state.sim.cpus.clone()} onchange={on_cpus} />
                </label>
                <label><span>{ if completion { "cap (ms)" } else { "measured (ms)" } }</span>
                    <input id="sim-duration" type="number" min="1" max={MAX_SIM_MS.to_string()}
                        value={state.sim.duration_ms.to_string()} onchange={on_duration} />
                </label>
                <label class="sweep-input"><span>{ format!("sweep {} (e.g. 1,4,8,16)", scale_label(w)) }</span>
                    <input id="sim-sweep" type="text" placeholder="one run"
                        value={state.sim.sweep.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")}
                        onchange={on_sweep} />
                </label>
                <label><span>{ "seed" }</span>
                    <input id="sim-seed" type="number" min="0" value={state.sim.seed.to_string()} onchange={on_seed} />
                </label>
            </div>
            if let Some(e) = &state.sim_error {
                <p class="error sim-error">{ format!("Not changed: {e}") }</p>
            }
        </fieldset>
    };

    let v = view.borrow();
    let status = match v.as_ref() {
        None => html! { <p class="sim-status">{ "Starting…" }</p> },
        Some(v) => status(v, state.sim.duration_ms, v.key != key),
    };
    let running = v
        .as_ref()
        .is_some_and(|v| !v.done() && !v.stopped && v.error().is_none());
    let example = {
        let (machine, patches) = (
            MachineChoice::Preset(state.preset.clone()),
            state.patches.to_string(),
        );
        let compare = state.wake.compare.map(|p| p.to_string());
        examples.iter().find(|e| {
            e.scenario.machine == machine
                && e.scenario.patches == patches
                && e.scenario.wake.compare == compare
                && e.scenario.sim.as_ref() == Some(&state.sim)
        })
    };
    let on_example = {
        let (d, examples) = (state.dispatcher(), examples.clone());
        Callback::from(move |e: Event| {
            let name = select_value(&e).unwrap_or_default();
            if let Some(x) = examples.iter().find(|x| x.name == name) {
                d.dispatch(Action::LoadFragment(schedlab_core::scenario::encode(
                    &x.scenario,
                )));
            }
        })
    };
    let example_menu = html! {
        <label class="example-menu"><span>{ "A seed's experiment, published numbers beside" }</span>
            <select id="sim-example" onchange={on_example}>
                <option value="" selected={example.is_none()}>{ "your own (as set below)" }</option>
                { for examples.iter().map(|x| html! {
                    <option value={x.name} selected={example.is_some_and(|e| e.name == x.name)} title={x.title.clone()}>
                        { format!("{}: {}", x.name, x.title) }
                    </option>
                }) }
            </select>
        </label>
    };
    let legend = |v: &RunView| {
        html! {
            <ul class="legend sim-legend">
                { for v.labels.iter().enumerate().map(|(i, label)| html! {
                    <li><span class={format!("swatch line-{}", if i == 0 { "a" } else { "b" })}></span>
                        { format!("{} {label}", if i == 0 { "A" } else { "B" }) }</li>
                }) }
                if !state.sim_heat.is_empty() {
                    <li class="heat-focus">
                        { "The drawing shades each CPU by how busy it was under " }
                        if state.sim_heat.len() == 2 {
                            <span class="segmented">
                                { heat_button(&state, Side::A) }
                                { heat_button(&state, Side::B) }
                            </span>
                        } else {
                            <b>{ "A" }</b>
                        }
                    </li>
                }
            </ul>
        }
    };
    let (graph, table) = match v.as_ref() {
        Some(v) if v.sweep() && v.error().is_none() && v.first().is_some() => (
            html! { <>{ legend(v) }{ sweep_view(v, scale_label(w), example) }</> },
            html! {},
        ),
        Some(v) if !v.sweep() && v.all_reported() && v.error().is_none() => {
            let sides = v.sides();
            let completion = sides[0].completion;
            (
                html! {
                    <>
                        { legend(v) }
                        if completion {
                            <p class="sim-note">{ format!("{} reports the time to finish: there is no throughput to draw, the result comes at the end.", w.name()) }</p>
                        } else {
                            { chart(&sides, &sides[0].unit, state.sim.duration_ms as f64) }
                            <p class="sim-note">{ format!("{} per sampling interval over the measured window (after the warm-up).", sides[0].unit) }</p>
                        }
                        { change(v, example) }
                    </>
                },
                results(v),
            )
        }
        _ => (html! {}, html! {}),
    };
    let machine = state.machine().map(|m| m.name.clone()).unwrap_or_default();
    let cli = cli_lines(&state);
    html! {
        <div class="wakeup sim">
            { example_menu }
            { setup }
            <div class="row sim-actions">
                if running {
                    <button id="sim-stop" onclick={on_stop}>{ "Stop" }</button>
                } else {
                    <button id="sim-again" onclick={on_again}>{ "Run again" }</button>
                }
                { status }
            </div>
            { graph }
            { kernel_pickers(&state) }
            { table }
            <p class="sim-cli">
                { format!("The same on the command line ({machine}): ") }
                { for cli.iter().map(|l| html! { <code>{ l }</code> }) }
            </p>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_four_significant_digits_and_axes_end_on_round_numbers() {
        let shown: Vec<String> = [0.0, 0.000212, 0.8447, 258.46, 11656.6, 2.5e6]
            .map(fmt_value)
            .into();
        assert_eq!(
            shown,
            ["0", "0.0002120", "0.8447", "258.5", "11657", "2.500 M"]
        );
        assert_eq!(fmt_value(f64::INFINITY), "–");
        let tops = [0.0, 0.7, 1.0, 1.01, 2332.0, 4999.0].map(nice_ceiling);
        assert_eq!(tops, [1.0, 1.0, 1.0, 2.0, 5000.0, 5000.0]);
        assert_eq!(
            (fmt_ms(0.212), fmt_ms(60.4)),
            ("0.21 ms".to_string(), "60 ms".to_string())
        );
    }
}
