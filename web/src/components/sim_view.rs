//! The Simulate tab: the workload run under side A's patch set and, when comparing,
//! side B's, in slices of simulated time, with both throughputs drawn as they come.
//!
//! ```text
//!  SimSetup (state, URL) ─run_spec()─▶ RunSpec A [, B] ─LiveRun::new─▶ spawn_local loop
//!     loop: advance A and B by the same simulated slice for ~40 ms of wall time
//!           ─▶ Snapshot (use_state) ─▶ chart + table ─▶ yield to the browser, repeat
//! ```
//!
//! A run starts when the tab opens or its inputs change, and a newer run cancels the
//! older one (a generation counter). Core's `LiveRun` gives the same events for any
//! slicing, so the digests here are `schedlab run`'s: the page prints the command line.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use schedlab_core::experiment::{change_pct, LiveRun, RunReport};
use schedlab_core::scenario::{SimSetup, MAX_SIM_MS};
use schedlab_core::workload::Workload;
use yew::platform::spawn_local;
use yew::platform::time::sleep;
use yew::prelude::*;

use crate::components::wakeup_view::{input_value, kernel_pickers, select_value};
use crate::state::{Action, AppContext};

/// Simulated time per slice: both sides advance by it in turn.
const SLICE_NS: u64 = 1_000_000;
/// Wall time per batch of slices before the page draws and yields.
const FRAME_MS: f64 = 40.0;

/// The page's monotonic clock, in ms (0 outside a browser).
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// One side while it runs.
struct SideRun {
    label: String,
    run: LiveRun,
}

/// One side as drawn.
#[derive(Clone, Debug)]
struct SideView {
    label: String,
    series: Rc<Vec<f64>>,
    interval_ns: u64,
    events: u64,
    /// The full report, once the run is over.
    report: Option<Rc<RunReport>>,
}

/// What the tab shows of a run.
#[derive(Clone, Debug)]
struct Snapshot {
    /// The inputs it ran for ([`run_key`]).
    key: String,
    sides: Vec<SideView>,
    now_ns: u64,
    warmup_ns: u64,
    warming: bool,
    live_tasks: u32,
    done: bool,
    stopped: bool,
    error: Option<String>,
    /// Wall time spent simulating, ms.
    busy_ms: f64,
    unit: &'static str,
    higher_is_better: bool,
    completion: bool,
}

/// Everything a run depends on: a change starts a new run.
fn run_key(state: &AppContext) -> String {
    let s = state.scenario();
    format!(
        "{:?}|{}|{:?}|{:?}",
        s.machine, s.patches, s.wake.compare, state.sim
    )
}

fn snapshot(key: &str, runs: &[SideRun], busy_ms: f64, error: Option<String>) -> Snapshot {
    let first = &runs[0].run;
    let done = runs.iter().all(|r| r.run.done());
    let metric = first.metric();
    let sides = runs
        .iter()
        .map(|r| {
            let (series, interval_ns) = r.run.series();
            SideView {
                label: r.label.clone(),
                series: Rc::new(series),
                interval_ns,
                events: r.run.events(),
                report: r.run.done().then(|| Rc::new(r.run.report())),
            }
        })
        .collect();
    Snapshot {
        key: key.to_string(),
        sides,
        now_ns: runs.iter().map(|r| r.run.now_ns()).min().unwrap_or(0),
        warmup_ns: first.warmup_ns(),
        warming: runs.iter().any(|r| r.run.warming_up()),
        live_tasks: runs.iter().map(|r| r.run.live_tasks()).sum(),
        done,
        stopped: false,
        error,
        busy_ms,
        unit: metric.unit(),
        higher_is_better: metric.higher_is_better(),
        completion: first.runs_to_completion(),
    }
}

/// Builds the runs of the current inputs: A, and B when comparing.
fn start_runs(state: &AppContext) -> Result<Vec<SideRun>, String> {
    let m = state.machine().ok_or("there is no machine to run on")?;
    let mut sides = vec![state.patches];
    sides.extend(state.wake.compare);
    sides
        .into_iter()
        .map(|p| {
            let spec = state.sim.run_spec(m, p)?;
            let run = LiveRun::new(&spec).map_err(|e| e.to_string())?;
            Ok(SideRun {
                label: p.to_string(),
                run,
            })
        })
        .collect()
}

/// Runs `runs` to their end in batches, drawing after each, unless `gen` moves on.
async fn drive(
    mut runs: Vec<SideRun>,
    key: String,
    gen: Rc<RefCell<u64>>,
    mine: u64,
    snap: UseStateHandle<Option<Snapshot>>,
) {
    let mut busy_ms = 0.0;
    loop {
        if *gen.borrow() != mine {
            return;
        }
        let t0 = now_ms();
        let mut error = None;
        let mut over = false;
        while now_ms() - t0 < FRAME_MS {
            let mut all_done = true;
            for r in runs.iter_mut() {
                match r.run.advance(SLICE_NS) {
                    Ok(done) => all_done &= done,
                    Err(e) => error = Some(format!("{}: {e}", r.label)),
                }
            }
            if all_done || error.is_some() {
                over = true;
                break;
            }
        }
        busy_ms += now_ms() - t0;
        snap.set(Some(snapshot(&key, &runs, busy_ms, error)));
        if over {
            return;
        }
        // A macrotask: the browser paints and handles input before the next batch.
        sleep(Duration::ZERO).await;
    }
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
        format!("{v:.4}")
    }
}

/// The throughput of every side over the measured window, as an SVG line chart.
fn chart(snap: &Snapshot, window_ms: f64) -> Html {
    const W: f64 = 640.0;
    const H: f64 = 230.0;
    const L: f64 = 64.0;
    const R: f64 = 12.0;
    const T: f64 = 10.0;
    const B: f64 = 28.0;
    let (pw, ph) = (W - L - R, H - T - B);
    let top = nice_ceiling(
        snap.sides
            .iter()
            .flat_map(|s| s.series.iter().copied())
            .fold(0.0, f64::max)
            * 1.05,
    );
    let x = |ms: f64| L + pw * (ms / window_ms.max(1e-9)).min(1.0);
    let y = |v: f64| T + ph * (1.0 - v / top);
    let lines = snap.sides.iter().enumerate().map(|(i, s)| {
        let iv = s.interval_ns as f64 / 1e6;
        let points: String = s
            .series
            .iter()
            .enumerate()
            .map(|(k, v)| format!("{:.1},{:.1} ", x((k as f64 + 0.5) * iv), y(*v)))
            .collect();
        let side = if i == 0 { "a" } else { "b" };
        html! {
            <polyline class={format!("line line-{side}")} points={points} data-side={side} />
        }
    });
    let yticks = [0.0, 0.5, 1.0].map(|f| {
        let v = top * f;
        html! {
            <>
                <line class="grid" x1={L.to_string()} x2={(W - R).to_string()}
                    y1={y(v).to_string()} y2={y(v).to_string()} />
                <text class="tick" x={(L - 6.0).to_string()} y={(y(v) + 4.0).to_string()}
                    text-anchor="end">{ fmt_value(v) }</text>
            </>
        }
    });
    let xticks = [(0.0, "start"), (0.5, "middle"), (1.0, "end")].map(|(f, anchor)| {
        let ms = window_ms * f;
        html! {
            <text class="tick" x={x(ms).to_string()} y={(H - 8.0).to_string()}
                text-anchor={anchor}>{ format!("{ms:.0} ms") }</text>
        }
    });
    html! {
        <svg class="sim-chart" viewBox={format!("0 0 {W} {H}")} role="img"
            aria-label={format!("throughput over the measured window, {}", snap.unit)}>
            { for yticks }
            { for xticks }
            <line class="axis" x1={L.to_string()} x2={L.to_string()} y1={T.to_string()} y2={(T + ph).to_string()} />
            <line class="axis" x1={L.to_string()} x2={(W - R).to_string()} y1={(T + ph).to_string()} y2={(T + ph).to_string()} />
            { for lines }
        </svg>
    }
}

/// The finished runs' results as the seeds' tables give them: B's change against A.
fn change(snap: &Snapshot) -> Html {
    let reports: Vec<&RunReport> = snap
        .sides
        .iter()
        .filter_map(|s| s.report.as_deref())
        .collect();
    let [a, b] = reports[..] else {
        return html! {};
    };
    let c = change_pct(a.value, b.value, snap.higher_is_better);
    let class = if c > 0.0 {
        "better"
    } else if c < 0.0 {
        "worse"
    } else {
        "same"
    };
    html! {
        <p class={classes!("change", class)}>
            { format!("A {} {}, B {} {}: ", fmt_value(a.value), snap.unit, fmt_value(b.value), snap.unit) }
            <b class="change-pct">{ format!("{c:+.2}%") }</b>
            { if snap.higher_is_better { " for B (higher is better)" } else { " for B (lower is better)" } }
        </p>
    }
}

/// The numbers of a finished run, side by side.
fn results(snap: &Snapshot) -> Html {
    let reports: Vec<&RunReport> = snap
        .sides
        .iter()
        .filter_map(|s| s.report.as_deref())
        .collect();
    if reports.len() != snap.sides.len() {
        return html! {};
    }
    let row = |label: &str, f: &dyn Fn(&RunReport) -> String| {
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
        .metrics
        .placement
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let name = name.clone();
            row(&format!("wake-ups to {name}"), &move |r: &RunReport| {
                pct(r.metrics.placement[i].1, r.metrics.wakeups)
            })
        });
    html! {
        <>
            <table class="sim-results">
                <thead>
                    <tr>
                        <th></th>
                        { for snap.sides.iter().enumerate().map(|(i, s)| html! {
                            <th class={format!("side-{}", if i == 0 { "a" } else { "b" })}>
                                <span class="side-tag">{ if i == 0 { "A" } else { "B" } }</span>
                                <code>{ format!(" {}", s.label) }</code>
                            </th>
                        }) }
                    </tr>
                </thead>
                <tbody>
                    { row(&format!("result ({})", snap.unit), &|r| fmt_value(r.value)) }
                    { row("wake-ups", &|r| r.metrics.wakeups.to_string()) }
                    { for placement_rows }
                    { row("CPUs probed per wake-up", &|r| format!("{:.2}", r.metrics.cpus_probed_mean_x100 as f64 / 100.0)) }
                    { row("wake-ups by IPI / remote rq lock", &|r| format!("{} / {}", r.metrics.wake_ipi, r.metrics.wake_remote_lock)) }
                    { row("migrations (wake-up / balance)", &|r| format!("{} / {}", r.metrics.migrations_wakeup, r.metrics.migrations_balance)) }
                    { row("context switches", &|r| r.metrics.context_switches.to_string()) }
                    { row("force idle", &|r| format!("{:.1} ms", r.metrics.force_idle_ns as f64 / 1e6)) }
                    { row("simulated events", &|r| r.events.to_string()) }
                    <tr class="digest-row">
                        <th scope="row">{ "digest" }</th>
                        { for reports.iter().enumerate().map(|(i, r)| html! {
                            <td><code class="digest" data-side={if i == 0 { "a" } else { "b" }}>{ r.digest.clone() }</code></td>
                        }) }
                    </tr>
                </tbody>
            </table>
        </>
    }
}

#[function_component(SimPanel)]
pub fn sim_panel() -> Html {
    let gen = use_mut_ref(|| 0u64);
    let snap = use_state(|| None::<Snapshot>);
    let nonce = use_state(|| 0u32);
    let state = use_context::<AppContext>();
    let key = state.as_ref().map(run_key).unwrap_or_default();

    // Start a run whenever the inputs change (or Run again is pressed); cancel the
    // previous one, and this one when the tab closes.
    {
        let (gen, snap, state) = (gen.clone(), snap.clone(), state.clone());
        use_effect_with((key.clone(), *nonce), move |(key, _)| {
            let mine = {
                let mut g = gen.borrow_mut();
                *g += 1;
                *g
            };
            if let Some(state) = &state {
                match start_runs(state) {
                    Ok(runs) => spawn_local(drive(runs, key.clone(), gen.clone(), mine, snap)),
                    Err(e) => snap.set(Some(Snapshot {
                        key: key.clone(),
                        sides: Vec::new(),
                        now_ns: 0,
                        warmup_ns: 0,
                        warming: false,
                        live_tasks: 0,
                        done: true,
                        stopped: false,
                        error: Some(e),
                        busy_ms: 0.0,
                        unit: "",
                        higher_is_better: true,
                        completion: false,
                    })),
                }
            }
            move || *gen.borrow_mut() += 1
        });
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
    let on_stop = {
        let (gen, snap) = (gen.clone(), snap.clone());
        Callback::from(move |_: MouseEvent| {
            *gen.borrow_mut() += 1;
            if let Some(s) = (*snap).clone() {
                snap.set(Some(Snapshot { stopped: true, ..s }));
            }
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
                if !matches!(w, Workload::LatPipe { .. }) {
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
                <label><span>{ "seed" }</span>
                    <input id="sim-seed" type="number" min="0" value={state.sim.seed.to_string()} onchange={on_seed} />
                </label>
            </div>
            if let Some(e) = &state.sim_error {
                <p class="error sim-error">{ format!("Not changed: {e}") }</p>
            }
        </fieldset>
    };

    let status = match &*snap {
        None => html! { <p class="sim-status">{ "Starting…" }</p> },
        Some(s) => {
            let stale = s.key != key;
            let sim_ms = s.now_ns as f64 / 1e6;
            let text = if let Some(e) = &s.error {
                html! { <p class="error">{ format!("The simulation stopped: {e}") }</p> }
            } else if s.done {
                let events: u64 = s.sides.iter().map(|x| x.events).sum();
                let warm = s.warmup_ns as f64 / 1e6;
                let what = if s.completion {
                    format!("finished at {sim_ms:.0} ms simulated")
                } else {
                    format!(
                        "{:.0} ms measured after {warm:.0} ms of warm-up",
                        sim_ms - warm
                    )
                };
                // A browser with a frozen clock (headless, virtual time) measures nothing.
                let speed = if s.busy_ms >= 1.0 {
                    format!(
                        " in {:.2} s of this browser's time ({:.2} M events/s)",
                        s.busy_ms / 1e3,
                        events as f64 / (s.busy_ms / 1e3) / 1e6
                    )
                } else {
                    String::new()
                };
                html! {
                    <p class="sim-status done">
                        { format!("Done: {what}; {events} simulated events{speed}.") }
                    </p>
                }
            } else if s.stopped {
                html! { <p class="sim-status">{ format!("Stopped at {sim_ms:.0} ms simulated.") }</p> }
            } else if s.warming {
                html! { <p class="sim-status running">{ format!("Warming up: {sim_ms:.0} of {:.0} ms (not measured)…", s.warmup_ns as f64 / 1e6) }</p> }
            } else if s.completion {
                html! { <p class="sim-status running">{ format!("Running: {sim_ms:.0} ms simulated, {} tasks still running…", s.live_tasks) }</p> }
            } else {
                html! { <p class="sim-status running">{ format!("Running: {:.0} of {} ms measured…", sim_ms - s.warmup_ns as f64 / 1e6, state.sim.duration_ms) }</p> }
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
    };
    let running = snap
        .as_ref()
        .is_some_and(|s| !s.done && !s.stopped && s.error.is_none());
    let (graph, table) = match &*snap {
        Some(s) if !s.sides.is_empty() => (
            html! {
                <>
                    <ul class="legend sim-legend">
                        { for s.sides.iter().enumerate().map(|(i, side)| html! {
                            <li><span class={format!("swatch line-{}", if i == 0 { "a" } else { "b" })}></span>
                                { format!("{} {}", if i == 0 { "A" } else { "B" }, side.label) }</li>
                        }) }
                    </ul>
                    if s.completion {
                        <p class="sim-note">{ format!("{} reports the time to finish: there is no throughput to draw, the result comes at the end.", w.name()) }</p>
                    } else {
                        { chart(s, state.sim.duration_ms as f64) }
                        <p class="sim-note">{ format!("{} per sampling interval over the measured window (after the warm-up).", s.unit) }</p>
                    }
                    { change(s) }
                </>
            },
            results(s),
        ),
        _ => (html! {}, html! {}),
    };
    let machine = state.machine().map(|m| m.name.clone()).unwrap_or_default();
    let mut cmd = vec![
        "schedlab run".to_string(),
        format!(
            "--machine {}",
            if state.preset == crate::state::CUSTOM {
                "FILE"
            } else {
                &state.preset
            }
        ),
    ];
    if state.sim.cpus != "all" {
        cmd.push(format!("--cpus {}", state.sim.cpus));
    }
    cmd.push(state.sim.workload.cli_args().join(" "));
    cmd.push(format!(
        "--duration-ms {} --seed {}",
        state.sim.duration_ms, state.sim.seed
    ));
    let patches: Vec<String> = std::iter::once(state.patches)
        .chain(state.wake.compare)
        .map(|p| p.to_string())
        .collect();

    html! {
        <div class="wakeup sim">
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
                { format!("The same on the command line ({machine}), once per patch set: ") }
                { for patches.iter().map(|p| html! { <code>{ format!("{} --patches {p}", cmd.join(" ")) }</code> }) }
            </p>
        </div>
    }
}
