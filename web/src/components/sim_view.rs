//! The Simulate tab: the workload run under side A's patch set and, when comparing,
//! side B's, with both throughputs drawn as they come. This file lays the tab out;
//! the parts live beside it:
//!
//! ```text
//!  sim_setup.rs    ExampleMenu, SimSetupForm   (inputs ─▶ Actions on the scenario)
//!  use_run/        use_run(state) ─▶ RunView   (the workers and the run's points)
//!  chart/          Chart                       (plotters, SVG)
//!  sim_results.rs  change, results, sweep_table
//!  live_view/      LiveView                    (the run's event record, played on a canvas)
//!  format.rs       numbers and the `schedlab` command lines
//! ```

use std::rc::Rc;

use schedlab_core::reproduce::{page_examples, Example};
use yew::prelude::*;

use crate::components::chart::{Chart, Series, XAxis};
use crate::components::export_bar::{sim_files, ExportBar};
use crate::components::live_view::LiveView;
use crate::components::side_switch::side_switch;
use crate::components::sim_results::{change, results, start_up_note, sweep_table};
use crate::components::sim_setup::{ExampleMenu, SimSetupForm};
use crate::components::timeline_panel::TimelinePanel;
use crate::components::wakeup_view::kernel_pickers;
use crate::export::file_stem;
use crate::format::{cli_lines, scale_label, unbroken};
use crate::hooks::use_run::{use_run, RunState, RunView, Status};
use crate::state::{Action, AppContext, Side, CUSTOM};

#[function_component(SimPanel)]
pub fn sim_panel() -> Html {
    // The seeds' experiments, built once: a menu, and the published numbers of the
    // one on screen.
    let examples = use_memo((), |_| page_examples().unwrap_or_default());
    let Some(state) = use_context::<AppContext>() else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };
    let run = use_run(&state);

    let example = current_example(&state, &examples);
    let v = run.view();
    // The run's own window: while a new run is on its way the inputs' may differ.
    let said = v.as_ref().map(|v| v.status(v.duration_ms()));
    let status = match (v.as_ref(), said.as_ref()) {
        (Some(v), Some(s)) => status(s, !v.is_for(&run.key)),
        _ if state.held.is_some() => html! {},
        _ => html! { <p class="sim-status running"><strong>{ "Starting" }</strong>{ "…" }</p> },
    };
    let announce = said.map(|s| s.announce).unwrap_or_default();
    let running = v.as_ref().is_some_and(RunView::running);
    let w = &state.sim().workload;
    let scale = scale_label(w);
    let (graph, table) = match v.as_ref() {
        Some(v) if v.sweep() && v.error().is_none() && v.first().is_some() => {
            let unit = v.first().map_or("", |p| p.unit.as_str());
            let better = v.first().is_none_or(|p| p.higher_is_better);
            (
                html! {
                    <>
                        { legend(&state, v, example.is_some_and(|e| !e.published_values.is_empty()), true) }
                        { sweep_chart(v, example, unit, scale, &state.machine().name) }
                        <p class="sim-note">
                            { format!("{unit} by {scale}; change > 0: B is better ({}).", if better { "higher is better" } else { "lower is better" }) }
                            if example.is_some_and(|e| !e.published_values.is_empty()) {
                                { " Dotted, with squares: the published numbers." }
                            }
                        </p>
                        { sweep_table(v, scale, example) }
                        { start_up_note(v) }
                        if let Some(e) = example {
                            <p class="sim-note">{ format!("Published: {} ({}). The model's run lengths are shorter than the benchmark's; docs/fidelity.md explains each row the model misses.", e.title, e.source) }</p>
                        }
                    </>
                },
                html! {},
            )
        }
        Some(v) if !v.sweep() && v.all_reported() && v.error().is_none() => {
            let sides = v.sides();
            let (completion, unit) = (sides[0].completion, &sides[0].unit);
            (
                html! {
                    <>
                        { legend(&state, v, false, !completion) }
                        if completion {
                            <p class="sim-note">{ format!("{} reports the time to finish: there is no throughput to draw, the result comes at the end.", w.name()) }</p>
                        } else {
                            { live_chart(v, unit, state.sim().duration_ms as f64, &state.machine().name) }
                            <p class="sim-note">{ format!("{unit} per sampling interval over the measured window (after the warm-up).") }</p>
                        }
                        { change(v, example) }
                        { start_up_note(v) }
                    </>
                },
                results(v),
            )
        }
        _ => (html! {}, html! {}),
    };
    // The watched runs' records (the first seed of each side). A click on a wake-up
    // (or Enter on a listed one) opens it in the Wake-up tab, captured by re-running
    // that side's run to it (state/sim_wake.rs), as a click in the timeline does.
    let live = match v.as_ref() {
        Some(v) if v.error().is_none() => {
            let report_wakeups = v
                .sides()
                .iter()
                .map(|p| p.report.as_ref().map(|r| r.metrics.wakeups))
                .collect::<Vec<_>>();
            let on_wake = {
                let d = state.dispatcher();
                let sim = state.sim().clone();
                Callback::from(move |w: crate::live::SimWakeRef| {
                    d.dispatch(Action::OpenSimWake(crate::state::SimWakeRef {
                        side: if w.side == 0 { Side::A } else { Side::B },
                        seed: w.seed,
                        wake: w.wake,
                        scale: crate::hooks::use_run::scale_ref(&sim, w.threads),
                    }))
                })
            };
            html! {
                <LiveView machine={state.machine().clone()} feeds={v.live.clone()} {report_wakeups} {on_wake} />
            }
        }
        _ => html! {},
    };
    let machine = state.machine().name.clone();
    let exports = match v.as_ref() {
        Some(v) if v.done() && v.error().is_none() => match sim_files(v, &machine, example) {
            Ok(files) => html! {
                <ExportBar files={Rc::new(files)} label="Download the results as CSV or JSON" />
            },
            Err(_) => html! {},
        },
        _ => html! {},
    };
    // The latest warm-up end of the watched runs (one per side): a window from there
    // lies after every side's start. `None` until each side knows its own.
    let warmup_ns = v.as_ref().and_then(|v| {
        let s = v.sides();
        (!s.is_empty())
            .then(|| s.iter().map(|p| p.warmup_ns).collect::<Option<Vec<u64>>>())
            .flatten()
            .map(|w| w.into_iter().max().unwrap_or(0))
    });
    let cli_machine = if state.preset() == CUSTOM {
        "FILE.json"
    } else {
        state.preset()
    };
    let cli = cli_lines(cli_machine, state.sim(), &state.sides());
    html! {
        <div class="wakeup sim">
            <ExampleMenu examples={examples.clone()} current={example.map(|e| e.name)} />
            <SimSetupForm />
            if let Some(secs) = state.held {
                { held_prompt(&state, secs) }
            }
            <div class="row sim-actions">
                if state.held.is_some() {
                } else if running {
                    <button id="sim-stop" onclick={run.stop.clone()}>{ "Stop" }</button>
                } else {
                    <button id="sim-again" onclick={run.again.clone()}>{ "Run again" }</button>
                }
                { status }
            </div>
            <p id="sim-announce" class="visually-hidden" role="status">{ announce }</p>
            { graph }
            { live }
            { kernel_pickers(&state) }
            { table }
            { exports }
            if state.held.is_none() {
                <TimelinePanel warmup_ns={warmup_ns} feeds={v.as_ref().map(|v| v.live.clone()).unwrap_or_default()} />
            }
            <p class="sim-cli">
                { format!("The same on the command line ({machine}): ") }
                // Each word kept whole: a line breaks at its spaces only, where it broke
                // after an option's "--" too ("--" over "threads").
                { for cli.iter().map(|l| html! {
                    <code>
                        { for l.split(' ').enumerate().map(|(k, word)| html! {
                            <>{ if k > 0 { " " } else { "" } }<span>{ word }</span></>
                        }) }
                    </code>
                }) }
            </p>
        </div>
    }
}

/// A link's simulation past the budget: what it would cost, and the button that runs it.
fn held_prompt(state: &AppContext, secs: f64) -> Html {
    let about = crate::format::fmt_wall_estimate(secs);
    let run = {
        let d = state.dispatcher();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::RunHeld))
    };
    html! {
        <div class="banner sim-held" role="alert">
            <p>{ format!("This link asks for {about} of simulation. Run it?") }</p>
            <p class="sim-note">{ format!(
                "Estimated from its simulated time, its tasks and CPUs, and this page's speed \
                 ({:.1} M events/s per worker, at least {} workers); links asking for more than {:.0} s \
                 wait for this button. Or change the simulation below.",
                crate::state::WORKER_EVENTS_PER_S / 1e6, crate::state::WORKERS, crate::state::LINK_BUDGET_S
            ) }</p>
            <button id="sim-run-held" onclick={run}>{ "Run" }</button>
        </div>
    }
}

/// The seed's experiment the scenario is, if it is one.
fn current_example<'a>(state: &AppContext, examples: &'a Rc<Vec<Example>>) -> Option<&'a Example> {
    let s = &state.scenario;
    examples.iter().find(|e| {
        e.scenario.machine == s.machine
            && e.scenario.patches == s.patches
            && e.scenario.wake.compare == s.wake.compare
            && e.scenario.sim.as_ref() == Some(state.sim())
    })
}

/// The throughput of every side over the measured window, as it comes.
/// The chart's download name: machine, A (and B), the first seed.
fn chart_stem(machine: &str, v: &RunView) -> String {
    file_stem(
        machine,
        &v.labels.join("-vs-"),
        Some(v.base_seed()),
        "chart",
    )
}

fn live_chart(v: &RunView, unit: &str, window_ms: f64, machine: &str) -> Html {
    let seeds = v.n_seeds();
    let series: Vec<Series> = v
        .labels
        .iter()
        .enumerate()
        .map(|(side, label)| {
            let live = v.live(side);
            let interval_ms = live.interval_ns as f64 / 1e6;
            let x = |k: usize| ((k as f64 + 0.5) * interval_ms).min(window_ms);
            let name = if side == 0 { "A" } else { "B" };
            Series {
                side,
                label: if seeds > 1 {
                    format!("{name} {label}, mean of {seeds} seeds")
                } else {
                    format!("{name} {label}")
                },
                points: live
                    .points
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (x(k), e.mean))
                    .collect(),
                published: false,
                band: live
                    .points
                    .iter()
                    .enumerate()
                    .filter_map(|(k, e)| e.interval().map(|(lo, hi)| (x(k), lo, hi)))
                    .collect(),
            }
        })
        .collect();
    html! {
        <Chart label={format!("throughput over the measured window, {unit}")}
            x={XAxis::Ms(window_ms)} x_desc="simulated time in the measured window (ms)"
            y_desc={y_title(unit, true)} x_name="ms" y_unit={unit.to_string()}
            {series} stem={chart_stem(machine, v)} />
    }
}

/// The y axis's title with its unit: "throughput (MB/s)", "time to finish (s)",
/// "round trip (us)".
pub fn y_title(unit: &str, higher_is_better: bool) -> String {
    if higher_is_better {
        return format!("throughput ({unit})");
    }
    match unit.split_once(" (") {
        Some((u, what)) => format!("{} ({u})", what.trim_end_matches(')')),
        None if unit == "s" => "time to finish (s)".to_string(),
        None => unit.to_string(),
    }
}

/// A sweep's values by scale (evenly spaced, as the seeds' tables list them), with
/// the published numbers in the model's units, where there are some.
fn sweep_chart(
    v: &RunView,
    published: Option<&Example>,
    unit: &str,
    scale: &str,
    machine: &str,
) -> Html {
    let rows = v.rows();
    let published = published.map_or(&[][..], |e| &e.published_values);
    let name = |side: usize| if side == 0 { "A" } else { "B" };
    let seeds = v.n_seeds();
    let higher = v.first().is_none_or(|p| p.higher_is_better);
    let model = (0..v.labels.len()).map(|side| Series {
        side,
        label: if seeds > 1 {
            format!("{} {}, mean of {seeds} seeds", name(side), v.labels[side])
        } else {
            format!("{} {}", name(side), v.labels[side])
        },
        points: rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i as f64, r.values[side]?)))
            .collect(),
        published: false,
        band: rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let (lo, hi) = r.spread.get(side).copied().flatten()?;
                Some((i as f64, lo, hi))
            })
            .collect(),
    });
    let measured = (0..2).filter(|_| !published.is_empty()).map(|side| Series {
        side,
        label: format!("{} published", name(side)),
        points: rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let &(_, a, b) = published.iter().find(|(p, _, _)| *p == r.threads)?;
                Some((i as f64, if side == 0 { a } else { b }))
            })
            .collect(),
        published: true,
        band: Vec::new(),
    });
    html! {
        <Chart label={format!("{unit} by {scale}")}
            x={XAxis::Scales(rows.iter().map(|r| r.threads).collect())}
            x_desc={format!("number of {scale}")} y_desc={y_title(unit, higher)}
            x_name={scale.to_string()} y_unit={unit.to_string()}
            series={model.chain(measured).collect::<Vec<_>>()} dots=true
            stem={chart_stem(machine, v)} />
    }
}

/// The chart's legend, the only one on the page (the chart's own, drawn by plotters,
/// shows only in a saved file: chart/tag.rs): the sides' names with their lines' keys,
/// what the bands are when a chart (`charted`) draws several seeds, the published
/// numbers; and which side's utilisation the drawing shades.
fn legend(state: &AppContext, v: &RunView, published: bool, charted: bool) -> Html {
    let seeds = v.n_seeds();
    let banded = (charted && seeds > 1).then_some("banded");
    html! {
        <ul class="legend sim-legend">
            { for v.labels.iter().enumerate().map(|(i, label)| html! {
                <li><span class={classes!("swatch", if i == 0 { "line-a" } else { "line-b" }, banded)}></span>
                    { format!("{} {label}", if i == 0 { "A" } else { "B" }) }</li>
            }) }
            if banded.is_some() {
                <li>{ format!("each line the mean of {seeds} seeds, shaded its 95% interval") }</li>
            }
            if published {
                <li><span class="swatch line-published"></span>{ "published (dotted, squares)" }</li>
            }
            if !state.sim_heat.is_empty() {
                <li class="heat-focus">
                    <span id="heat-side-label">{ "The drawing shades each CPU by how busy it was under" }</span>
                    if state.sim_heat.len() == 2 {
                        { side_switch(state, "heat-side-label", true) }
                    } else {
                        <b>{ "A" }</b>
                    }
                </li>
            }
        </ul>
    }
}

/// The line beside the buttons: where the run is (hooks/use_run/status.rs says it).
/// Its words change with every batch; the polite live region beside it
/// (`#sim-announce`, drawn by the panel) only when the run's state does.
fn status(s: &Status, stale: bool) -> Html {
    let line = if s.state == RunState::Failed {
        html! { <p class="error">{ s.text() }</p> }
    } else {
        let class = match s.state {
            RunState::Done => "sim-status done",
            RunState::Stopped => "sim-status stopped",
            _ => "sim-status running",
        };
        html! {
            <p {class}>
                // A number and its unit stay on one line ("12" over "ms of warm-up").
                <strong>{ unbroken(&s.lead) }</strong>
                { for s.parts.iter().enumerate().map(|(i, part)| html! {
                    <>{ if i == 0 { ": " } else { " · " } }<span>{ unbroken(part) }</span></>
                }) }
                if let Some(d) = &s.detail {
                    <span class="sim-status-detail">{ " · " }{ unbroken(d) }</span>
                }
            </p>
        }
    };
    html! {
        <>
            { line }
            if stale {
                <p class="sim-status">{ "The inputs changed; a new run is starting." }</p>
            }
        </>
    }
}
