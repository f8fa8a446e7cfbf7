//! The Simulate tab's timeline and trace download: pick a window of the run (and, in
//! a sweep, which point of it), and each side's window comes from the record the
//! live view already holds when that record covers it; otherwise a tool worker
//! re-runs the side (deterministic: the same run, event for event) with core's
//! recorder on for that window (`hooks::use_record`).
//!
//! ```text
//!  from / length (ms, warm-up included, as `run --trace-window`) · scale · seed
//!  [Show the timeline] ─▶ per side: live Feed::window(a, b)  (the streamed record: the
//!                                   first seed at the watched scale, ≤ 256 Ki records)
//!                          or Msg::Record { cap, window } ─▶ Recorded   (outside it)
//!                       ─▶ timeline::build ─▶ <Timeline>
//!  [Trace of A / B]    ─▶ Msg::Record { trace: true } ─▶ LiveRun::chrome_trace ─▶ download
//! ```
//!
//! The trace is `schedlab run --trace FILE --trace-window A..B --trace-cap N`'s bytes
//! for the same run (a host test in `worker/tests.rs` compares them). The recorded run is the
//! Simulate tab's setup with the chosen seed at the chosen scale (the watched scale,
//! `use_run::watched_scale`, unless a sweep's other point is picked). The panel says
//! per side where its window came from (`data-source`: `stream` or `rerun`). A click
//! on a wake-up opens it in the Wake-up tab at the point it was drawn at (its
//! `SimWakeRef` names the point: `use_run::scale_ref`).

use std::cell::RefCell;
use std::rc::Rc;

use schedlab_core::sim::record::Recording;
use yew::prelude::*;

use crate::components::timeline::{SideWindow, Timeline};
use crate::dom::{input_number, select_value};
use crate::export::{download_text, file_name};
use crate::format::scale_label;
use crate::hooks::use_record::{record, RecordRequest};
use crate::hooks::use_run::{scale_ref, watched_scale};
use crate::live::Feeds;
use crate::state::sim_wake::side_name;
use crate::state::{AppContext, Side};
use crate::timeline::build;
use crate::worker::{now_ms, RecordJob, Recorded};

/// Records the timeline keeps per side: 400 000 (12.8 MB in the worker).
pub const TIMELINE_CAP: u32 = 400_000;
/// Records a downloaded trace keeps: the CLI's `--trace-cap` default.
pub const TRACE_CAP: u32 = 500_000;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// Where the measured part of the run starts (the window's default start), ns;
    /// `None` until the run knows it (a benchmark that starts its clients later, as
    /// dbench's barrier does, counts its warm-up from that start).
    pub warmup_ns: Option<u64>,
    /// The live view's records (the first seed of each side at the watched scale).
    pub feeds: Feeds,
}

/// Where a side's window came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The record the live view streamed.
    Stream,
    /// A re-run of the side, recording the window.
    Rerun,
}

/// What the panel has: per side, its window (or why not), and what it was asked for.
#[derive(Default)]
struct Held {
    /// The request each side's result answers.
    asked: Vec<Option<RecordRequest>>,
    sides: Vec<Option<Result<Rc<SideWindow>, String>>>,
    /// Per side, where its window comes from.
    sources: Vec<Source>,
    /// When "Show the timeline" was pressed and how long until every side was in
    /// (ms of the page's clock), for the `data-ms` the e2e journey reads.
    asked_ms: f64,
    took_ms: Option<f64>,
    generation: u64,
    /// The trace being made (side), if any, and the last error.
    tracing: Option<Side>,
    trace_error: Option<String>,
}

#[function_component(TimelinePanel)]
pub fn timeline_panel(p: &Props) -> Html {
    // Unset: the end of the warm-up, once the run has said where that is (until then
    // there is no default window, and the button waits for one).
    let from_set = use_state(|| None::<f64>);
    let from_known = from_set.or(p.warmup_ns.map(|w| w as f64 / 1e6));
    let from_ms = from_known.unwrap_or(0.0);
    let len_ms = use_state(|| 2.0f64);
    // Unset: the watched scale (the live view's).
    let scale_set = use_state(|| None::<u32>);
    let held = use_mut_ref(Held::default);
    let redraw = use_force_update();
    let Some(state) = use_context::<AppContext>() else {
        return html! {};
    };
    let seed = state.sim().seed;
    let watched = watched_scale(state.sim());
    let mut scales = state.sim().points();
    // Ascending, then reversed: the one u32 sort the page links (a `b.cmp(a)` closure
    // would be a sort of its own, about 4 KB of code).
    scales.sort_unstable();
    scales.reverse();
    scales.dedup();
    let scale = scale_set.filter(|t| scales.contains(t)).unwrap_or(watched);
    // How its wake-ups name the point when clicked (`None`: the watched scale).
    let scale_at = scale_ref(state.sim(), scale);
    let sides: Vec<Side> = if state.sides().len() > 1 {
        vec![Side::A, Side::B]
    } else {
        vec![Side::A]
    };
    let window_ns = (
        (from_ms * 1e6).max(0.0) as u64,
        ((from_ms + *len_ms) * 1e6).max(0.0) as u64,
    );
    let request =
        |side: Side, job: RecordJob| RecordRequest::side_at(&state, side, seed, scale, job);
    let timeline_job = RecordJob {
        cap: TIMELINE_CAP,
        window_ns: Some(window_ns),
        capture_wake: None,
        trace: false,
    };
    let wanted: Vec<RecordRequest> = sides
        .iter()
        .map(|&s| request(s, timeline_job.clone()))
        .collect();

    let show = show_timeline(
        held.clone(),
        redraw.clone(),
        state.machine().clone(),
        p.feeds.clone(),
        Wanted {
            requests: wanted.clone(),
            sides: sides.clone(),
            window_ns,
            seed,
            scale,
            scale_at,
        },
    );
    let trace = |side: Side| {
        let req = request(
            side,
            RecordJob {
                cap: TRACE_CAP,
                window_ns: Some(window_ns),
                capture_wake: None,
                trace: true,
            },
        );
        let name = file_name(
            &state.machine().name,
            &req.patches,
            Some(seed),
            &format!(
                "trace-{}-{}ms",
                window_ns.0 / 1_000_000,
                window_ns.1 / 1_000_000
            ),
            "json",
        );
        trace_callback(held.clone(), redraw.clone(), side, req, name)
    };
    let on_from = {
        let from_set = from_set.clone();
        Callback::from(move |e: Event| {
            if let Some(v) = input_number(&e) {
                if v.is_finite() && v >= 0.0 {
                    from_set.set(Some(v));
                }
            }
        })
    };
    let on_scale = {
        let scale_set = scale_set.clone();
        Callback::from(move |e: Event| {
            if let Some(Ok(v)) = select_value(&e).map(|v| v.parse::<u32>()) {
                scale_set.set(Some(v));
            }
        })
    };
    let on_len = {
        let len_ms = len_ms.clone();
        Callback::from(move |e: Event| {
            if let Some(v) = input_number(&e) {
                if v.is_finite() && v > 0.0 {
                    len_ms.set(v.min(1000.0));
                }
            }
        })
    };

    let h = held.borrow();
    let current = h.asked.iter().flatten().cloned().collect::<Vec<_>>() == wanted;
    let all: Option<Vec<Rc<SideWindow>>> = h
        .sides
        .iter()
        .map(|s| s.as_ref().and_then(|r| r.as_ref().ok()).cloned())
        .collect();
    let errors: Vec<String> = h
        .sides
        .iter()
        .flatten()
        .filter_map(|r| r.as_ref().err().cloned())
        .collect();
    let pending = !h.sides.is_empty() && h.sides.iter().any(Option::is_none);
    let cpus: Rc<Vec<u32>> = Rc::new(
        schedlab_core::CpuSelection::mask(&state.sim().cpus, state.machine())
            .map(|m| m.iter().map(|c| c.0).collect())
            .unwrap_or_default(),
    );
    let sources = source_note(&h.sources, &sides, p.feeds.0.first());
    let body = match all {
        Some(s) if !s.is_empty() && errors.is_empty() => html! {
            <>
                if !current {
                    <p class="sim-note">{ "Recorded for earlier inputs: show the timeline again for these." }</p>
                }
                <p class="sim-note timeline-source">{ sources }</p>
                <Timeline sides={s} machine={state.machine().clone()} {cpus} />
            </>
        },
        _ if pending => {
            html! { <p class="sim-status running" role="status">{ "Recording the window…" }</p> }
        }
        _ => html! {},
    };
    let source_attr = source_attr(&h.sources);
    let took = h.took_ms.map(|ms| format!("{ms:.1}"));
    html! {
        <section class="timeline-panel" aria-label="timeline" data-source={source_attr} data-ms={took}>
            <h3>{ "Timeline" }</h3>
            <div class="row timeline-controls">
                <label>{ "from (ms)" }
                    <input id="timeline-from" type="number" min="0" step="0.1" value={from_known.map(|f| f.to_string()).unwrap_or_default()} onchange={on_from} />
                </label>
                <label>{ "length (ms)" }
                    <input id="timeline-len" type="number" min="0.01" step="0.1" value={len_ms.to_string()} onchange={on_len} />
                </label>
                if scales.len() > 1 {
                    <label>{ format!("sweep point ({})", scale_label(&state.sim().workload)) }
                        <select id="timeline-scale" onchange={on_scale}>
                            { for scales.iter().map(|t| html! {
                                <option value={t.to_string()} selected={*t == scale}>
                                    { if *t == watched { format!("{t} (the live view's)") } else { t.to_string() } }
                                </option>
                            }) }
                        </select>
                    </label>
                }
                // The option in code, kept whole: on a phone it broke at its hyphen.
                <span class="sim-note">{ format!("seed {seed}; warm-up included, as ") }<code>{ "run --trace-window" }</code></span>
                <button id="timeline-show" onclick={show} disabled={from_known.is_none()}>{ "Show the timeline" }</button>
                if from_known.is_none() {
                    <span class="sim-note timeline-waits">{ "The window starts after the warm-up, which counts from the benchmark's start: known once the run has started its clients (or give a start)." }</span>
                }
                { for sides.iter().map(|&s| html! {
                    <button class="trace-download" data-side={side_name(s).to_ascii_lowercase()}
                        onclick={trace(s)} disabled={h.tracing.is_some()}>
                        { format!("Trace of {} (Perfetto JSON)", side_name(s)) }
                    </button>
                }) }
            </div>
            if let Some(s) = h.tracing {
                <p class="sim-status running" role="status">{ format!("Making side {}'s trace…", side_name(s)) }</p>
            }
            if let Some(e) = &h.trace_error {
                <p class="error">{ format!("The trace could not be made: {e}") }</p>
            }
            { for errors.iter().map(|e| html! { <p class="error">{ format!("The timeline could not be recorded: {e}") }</p> }) }
            { body }
        </section>
    }
}

/// What "Show the timeline" asks for: a request per side, the sides, the window (ns),
/// the seed, the scale, and the point as a `SimWakeRef` names it.
struct Wanted {
    requests: Vec<RecordRequest>,
    sides: Vec<Side>,
    window_ns: (u64, u64),
    seed: u64,
    scale: u32,
    scale_at: Option<u32>,
}

/// "Show the timeline": per side, its window from the live view's record when that
/// holds it, else from a re-run recording it; kept in `held` (a newer click's
/// results replace an older one's).
fn show_timeline(
    held: Rc<RefCell<Held>>,
    redraw: UseForceUpdateHandle,
    machine: std::sync::Arc<schedlab_core::topology::Machine>,
    feeds: Feeds,
    wanted: Wanted,
) -> Callback<MouseEvent> {
    let Wanted {
        requests: wanted,
        sides,
        window_ns,
        seed,
        scale,
        scale_at,
    } = wanted;
    Callback::from(move |_: MouseEvent| {
        let generation = {
            let mut h = held.borrow_mut();
            h.generation += 1;
            h.asked = wanted.iter().cloned().map(Some).collect();
            h.sides = vec![None; wanted.len()];
            h.sources = vec![Source::Rerun; wanted.len()];
            h.asked_ms = now_ms();
            h.took_ms = None;
            h.generation
        };
        for (i, req) in wanted.iter().enumerate() {
            let side = sides[i];
            let label = req.patches.clone();
            let (a, b) = window_ns;
            // The live view's record of this side, if it is this run and holds
            // the window.
            let streamed = feeds.0.get(i).and_then(|f| {
                let f = f.borrow();
                let same = f.label == label && f.seed == seed && f.threads == scale;
                let at = (side, seed, scale_at);
                same.then(|| streamed_window(&f, at, &label, (a, b), machine.cpus.len()))?
            });
            if let Some(w) = streamed {
                let mut h = held.borrow_mut();
                h.sources[i] = Source::Stream;
                h.sides[i] = Some(Ok(Rc::new(w)));
                h.settle();
                continue;
            }
            let (held, redraw, machine) = (held.clone(), redraw.clone(), machine.clone());
            record(req.clone(), move |r| {
                let mut h = held.borrow_mut();
                if h.generation != generation {
                    return;
                }
                let got = recorded_window(r, (side, seed, scale_at), label, machine.cpus.len());
                if let Some(slot) = h.sides.get_mut(i) {
                    *slot = Some(got);
                }
                h.settle();
                drop(h);
                redraw.force_update();
            });
        }
        redraw.force_update();
    })
}

/// Side `at.0`'s window `(a, b)` (ns) out of the live view's record `f` of the same
/// run, if it holds it; `at` is (side, seed, sweep point as `SimWakeRef` names it).
fn streamed_window(
    f: &crate::live::Feed,
    at: (Side, u64, Option<u32>),
    label: &str,
    (a, b): (u64, u64),
    n_cpus: usize,
) -> Option<SideWindow> {
    let (side, seed, scale) = at;
    f.window(a, b).map(|(records, end)| SideWindow {
        side,
        seed,
        label: label.to_string(),
        built: build(records, n_cpus, end),
        window_ns: (a, end.max(a + 1)),
        workload_tasks: f.workload_tasks,
        truncated: false,
        scale,
    })
}

/// A re-run's recorded window (or why not); `at` as for [`streamed_window`].
fn recorded_window(
    r: Recorded,
    at: (Side, u64, Option<u32>),
    label: String,
    n_cpus: usize,
) -> Result<Rc<SideWindow>, String> {
    let (side, seed, scale) = at;
    match r.error {
        Some(e) => Err(e),
        None => Recording::records_from_bytes(&r.records.0)
            .map_err(|e| e.to_string())
            .map(|records| {
                let (a, b) = r.window_ns.unwrap_or((0, r.end_ns));
                let end = b.min(r.end_ns);
                Rc::new(SideWindow {
                    side,
                    seed,
                    label,
                    built: build(&records, n_cpus, end),
                    window_ns: (a, end.max(a + 1)),
                    workload_tasks: r.workload_tasks,
                    truncated: r.truncated,
                    scale,
                })
            }),
    }
}

/// The trace button's click: re-runs the side with its trace on, then downloads it
/// as `name` (or keeps why not in `held`).
fn trace_callback(
    held: Rc<RefCell<Held>>,
    redraw: UseForceUpdateHandle,
    side: Side,
    req: RecordRequest,
    name: String,
) -> Callback<MouseEvent> {
    Callback::from(move |_: MouseEvent| {
        {
            let mut h = held.borrow_mut();
            h.tracing = Some(side);
            h.trace_error = None;
        }
        redraw.force_update();
        let (held, redraw, name) = (held.clone(), redraw.clone(), name.clone());
        record(req.clone(), move |r| {
            let mut h = held.borrow_mut();
            h.tracing = None;
            h.trace_error = match (r.error, r.trace) {
                (Some(e), _) => Some(e),
                (None, None) => Some("the run kept no recording".into()),
                (None, Some(t)) => download_text(&name, "application/json", &t).err(),
            };
            drop(h);
            redraw.force_update();
        });
    })
}

impl Held {
    /// Notes when every side is in (the time to the timeline).
    fn settle(&mut self) {
        if self.took_ms.is_none()
            && !self.sides.is_empty()
            && self.sides.iter().all(Option::is_some)
        {
            self.took_ms = Some(now_ms() - self.asked_ms);
        }
    }
}

/// Where each side's window came from, for the e2e journey: "stream,rerun".
fn source_attr(sources: &[Source]) -> String {
    sources
        .iter()
        .map(|s| match s {
            Source::Stream => "stream",
            Source::Rerun => "rerun",
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Where each side's window came from, in words.
fn source_note(
    sources: &[Source],
    sides: &[Side],
    feed: Option<&std::rc::Rc<std::cell::RefCell<crate::live::Feed>>>,
) -> String {
    let held_to = feed.map_or(0.0, |f| {
        f.borrow().records.last().map_or(0, |r| r.at_ns) as f64 / 1e6
    });
    let parts: Vec<String> = sources
        .iter()
        .zip(sides)
        .map(|(s, &side)| match s {
            Source::Stream => format!("{}: from the live view's record", side_name(side)),
            Source::Rerun => format!("{}: re-run to record this window", side_name(side)),
        })
        .collect();
    let mut text = parts.join("; ");
    if sources.contains(&Source::Rerun) {
        text.push_str(&format!(
            " (the live view's record holds the first seed at the watched scale, up to {held_to:.3} ms: a window past it, another seed or another sweep point is re-run)"
        ));
    }
    text
}
