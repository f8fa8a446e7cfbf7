//! The component: the canvases, the playback buttons, the status line, the latest
//! wake-ups as buttons, the legend.

use schedlab_core::cost::{CostParams, Distance};
use schedlab_core::sim::record::WakeRecord;
use yew::prelude::*;

use super::frame::start_loop;
use super::{Live, Props, DEFAULT_SPEED, FASTEST, SPEEDS};
use crate::format::unbroken;
use crate::live::draw::{dist_label, wake_colour, DIST_COLOURS, REQUEUE_COLOUR};
use crate::live::SimWakeRef;

/// A wake-up in words.
fn describe(side: usize, seed: u64, w: &WakeRecord) -> String {
    let waker = crate::live::waker_text(w.waker);
    format!(
        "Wake-up #{} ({}, seed {seed}): task {} woken by {waker} on CPU {}, last on CPU {}; chosen CPU {} ({}), path: {}, queue: {}, {} CPUs probed",
        w.seq,
        if side == 0 { "A" } else { "B" },
        w.wakee,
        w.waker_cpu,
        w.prev_cpu,
        w.cpu,
        dist_label(w.dist),
        w.path.as_str(),
        w.queue.as_str(),
        w.probed
    )
}

#[function_component(LiveView)]
pub fn live_view(props: &Props) -> Html {
    let live = use_mut_ref(Live::new);
    // The machine's C-state names for the legend (core's cost parameters: built once
    // per machine, not on every status refresh).
    let cstates = use_memo(props.machine.clone(), |m| {
        CostParams::for_machine(m)
            .idle_states
            .iter()
            .map(|s| s.name)
            .collect::<Vec<&'static str>>()
    });
    let root = use_node_ref();
    let canvases = use_memo((), |_| vec![NodeRef::default(), NodeRef::default()]);
    let status = use_force_update();

    // A new run (new feeds) or machine starts the playback over.
    {
        let live = live.clone();
        use_effect_with(
            (props.feeds.clone(), props.machine.clone()),
            move |(feeds, machine)| {
                live.borrow_mut().reset(feeds, machine);
            },
        );
    }
    // The frame loop, for as long as the view is mounted.
    {
        let (live, root, canvases, status) =
            (live.clone(), root.clone(), canvases.clone(), status.clone());
        use_effect_with((), move |_| {
            live.borrow_mut().alive = true;
            start_loop(live.clone(), root, canvases, status);
            move || live.borrow_mut().alive = false
        });
    }

    let update = |f: Box<dyn Fn(&mut Live)>| {
        let (live, status) = (live.clone(), status.clone());
        Callback::from(move |_: MouseEvent| {
            f(&mut live.borrow_mut());
            status.force_update();
        })
    };
    let play = update(Box::new(|l: &mut Live| {
        if l.finished() {
            l.restart();
        }
        l.playing = !l.playing;
        l.said = if l.playing {
            "Playing.".to_string()
        } else {
            l.status()
        };
    }));
    let step = update(Box::new(|l: &mut Live| {
        l.playing = false;
        l.said = if l.step() {
            l.selected.map_or_else(String::new, |(side, w)| {
                describe(side, l.feeds.0.get(side).map_or(0, |f| f.borrow().seed), &w)
            })
        } else {
            "No wake-up left to step to (yet).".to_string()
        };
    }));
    let restart = update(Box::new(Live::restart));
    let on_speed = {
        let (live, status) = (live.clone(), status.clone());
        Callback::from(move |e: InputEvent| {
            let v = e
                .target_dyn_into::<web_sys::HtmlInputElement>()
                .and_then(|i| i.value().parse::<usize>().ok())
                .unwrap_or(DEFAULT_SPEED)
                .min(FASTEST);
            live.borrow_mut().speed = v;
            status.force_update();
        })
    };
    let on_show = {
        let (live, status) = (live.clone(), status.clone());
        Callback::from(move |e: Event| {
            let v = e
                .target_dyn_into::<web_sys::HtmlSelectElement>()
                .and_then(|s| s.value().parse::<usize>().ok())
                .unwrap_or(0)
                .min(2);
            let mut l = live.borrow_mut();
            l.show = v;
            // The shown canvases change size: fit them on the next frame.
            l.ticks = 0;
            l.dirty = true;
            drop(l);
            status.force_update();
        })
    };
    let pick = {
        let (live, status, on_wake) = (live.clone(), status.clone(), props.on_wake.clone());
        move |side: usize, w: WakeRecord| {
            let (seed, threads) = {
                let mut l = live.borrow_mut();
                l.selected = Some((side, w));
                l.feeds.0.get(side).map_or((0, 0), |f| {
                    let f = f.borrow();
                    (f.seed, f.threads)
                })
            };
            status.force_update();
            on_wake.emit(SimWakeRef {
                side,
                seed,
                wake: w.seq,
                cpu: u32::from(w.cpu),
                threads,
            });
        }
    };
    let on_canvas = |side: usize| {
        let (live, pick) = (live.clone(), pick.clone());
        Callback::from(move |e: MouseEvent| {
            let hit = {
                let l = live.borrow();
                let (Some(painter), Some(player)) = (l.painters.get(side), l.players.get(side))
                else {
                    return;
                };
                painter.hit(
                    player,
                    l.frame,
                    f64::from(e.offset_x()),
                    f64::from(e.offset_y()),
                )
            };
            if let Some(w) = hit {
                pick(side, w);
            }
        })
    };

    let l = live.borrow();
    let said = announcement(&props.feeds, &l.said);
    // A canvas whose clusters' names gave their line to the CPU numbers.
    let unnamed_clusters = l.painters.iter().any(|p| {
        p.layout
            .groups
            .iter()
            .any(|g| g.class == "cluster" && g.label.is_empty())
    });
    let sides = props.feeds.0.iter().enumerate().map(|(i, f)| {
        let f = f.borrow();
        let side = if i == 0 { "A" } else { "B" };
        let canvas = canvases[i].clone();
        let note = feed_note(&f);
        let recent: Vec<WakeRecord> = l
            .players
            .get(i)
            .map(|p| p.recent(4).map(|a| a.wake).collect())
            .unwrap_or_default();
        let caption = format!("{side}: {} ({}seed {})", f.label, f.scale, f.seed);
        html! {
            <figure class="live-side" data-side={i.to_string()} hidden={!l.shows(i)}>
                <figcaption>{ caption }</figcaption>
                <div class="live-canvas-box">
                    <canvas ref={canvas} class="live-canvas" id={format!("live-canvas-{i}")}
                        role="img"
                        aria-label={format!("Side {side}: each CPU's state, each task as a dot, each wake-up as an arrow from the waker's CPU to the chosen CPU. The status line and the list below say the same in words.")}
                        onclick={on_canvas(i)} />
                </div>
                if !note.is_empty() {
                    <p class="sim-note live-note">{ note }</p>
                }
                { recent_list(i, side, recent, pick.clone()) }
            </figure>
        }
    });
    let report_attrs = props.report_wakeups.clone();
    html! {
        <section class="live-view" ref={root} aria-labelledby="live-title"
            data-report-wakeups-a={report_attrs.first().copied().flatten().map(|v| v.to_string())}
            data-report-wakeups-b={report_attrs.get(1).copied().flatten().map(|v| v.to_string())}>
            // The side picker on the heading's line: on a phone a row of its own took
            // 46 px from the canvas under the controls.
            <div class="live-head">
                <h3 id="live-title">{ "The machine, live" }</h3>
                if props.feeds.0.len() > 1 {
                    { show_picker(l.show, on_show) }
                }
            </div>
            { playback(l.playing, l.speed, [play, step, restart], on_speed) }
            <p id="live-status" class="live-status">{ unbroken(&l.status()) }</p>
            <p id="live-announce" class="visually-hidden" role="status">{ said }</p>
            if let Some((side, w)) = l.selected {
                <p id="live-selected" class="live-selected" data-wake={w.seq.to_string()} data-cpu={w.cpu.to_string()} data-side={side.to_string()}>
                    { describe(side, l.feeds.0.get(side).map_or(0, |f| f.borrow().seed), &w) }
                </p>
            }
            <div class="live-sides">{ for sides }</div>
            { legend(&cstates, unnamed_clusters) }
        </section>
    }
}

/// What the live region says: a record that stopped, over the playback's events
/// (`said`): it changes once.
fn announcement(feeds: &crate::live::Feeds, said: &str) -> String {
    feeds
        .0
        .iter()
        .zip(["A", "B"])
        .find_map(|(f, side)| {
            let f = f.borrow();
            f.error
                .as_ref()
                .map(|e| format!("Side {side}'s record stopped: {e}"))
        })
        .unwrap_or_else(|| said.to_string())
}

/// The playback row: Play/Pause, Next wake-up and Restart (`buttons`' clicks, in
/// that order), and the speed scale at step `speed`.
fn playback(
    playing: bool,
    speed: usize,
    buttons: [Callback<MouseEvent>; 3],
    on_speed: Callback<InputEvent>,
) -> Html {
    let [play, step, restart] = buttons;
    let speed_text = speed_words(SPEEDS[speed]);
    html! {
        <div class="row live-controls" role="group" aria-label="Playback">
            <button id="live-play" aria-pressed={playing.to_string()} onclick={play}>
                { if playing { "Pause" } else { "Play" } }
            </button>
            <button id="live-step" onclick={step}>{ "Next wake-up" }</button>
            <button id="live-restart" onclick={restart}>{ "Restart" }</button>
            // Each label wraps with its control, never apart from it.
            <span class="live-pair">
                <label for="live-speed">{ "Speed" }</label>
                <input id="live-speed" type="range" min="0" max={FASTEST.to_string()} step="1"
                    value={speed.to_string()} aria-valuetext={speed_text.clone()} oninput={on_speed} />
                <span class="live-speed-text">{ speed_text }</span>
            </span>
        </div>
    }
}

/// The speed scale's step in words.
fn speed_words(ns: u64) -> String {
    match ns {
        0 => "as fast as it goes".to_string(),
        ns if ns < 1_000 => format!("{ns} ns of simulated time per frame"),
        ns if ns < 1_000_000 => format!("{} µs of simulated time per frame", ns / 1_000),
        ns => format!("{} ms of simulated time per frame", ns / 1_000_000),
    }
}

/// What a side's record left out or why it stopped (empty: nothing to say).
fn feed_note(f: &crate::live::Feed) -> String {
    if let Some(e) = &f.error {
        format!("The record stopped: {e}")
    } else if f.left_out > 0 {
        format!(
            "The record holds the run's first {} events (up to {:.3} ms); {} more were left out.",
            f.records.len(),
            f.records.last().map_or(0, |r| r.at_ns) as f64 / 1e6,
            f.left_out
        )
    } else {
        String::new()
    }
}

/// Side `i`'s latest wake-ups as buttons (a click picks one).
fn recent_list(
    i: usize,
    side: &str,
    recent: Vec<WakeRecord>,
    pick: impl Fn(usize, WakeRecord) + Clone + 'static,
) -> Html {
    html! {
        <ul class="live-recent" aria-label={format!("Side {side}: the latest wake-ups")}>
            { for recent.into_iter().map(|w| {
                let pick = pick.clone();
                html! {
                    <li>
                        <button class="live-wake" data-wake={w.seq.to_string()} data-cpu={w.cpu.to_string()}
                            onclick={Callback::from(move |_: MouseEvent| pick(i, w))}>
                            <span class="live-swatch" style={format!("background:{}", wake_colour(&w))} aria-hidden="true"></span>
                            { format!("#{}: task {}, CPU {} → {}", w.seq, w.wakee, w.waker_cpu, w.cpu) }
                        </button>
                    </li>
                }
            }) }
        </ul>
    }
}

/// The side picker: A and B, or one of them.
fn show_picker(show: usize, on_show: Callback<Event>) -> Html {
    html! {
        <span class="live-pair">
            <label for="live-show">{ "Show" }</label>
            <select id="live-show" onchange={on_show}>
                { for [(0, "A and B"), (1, "A only"), (2, "B only")].iter().map(|(v, t)| html! {
                    <option value={v.to_string()} selected={show == *v}>{ *t }</option>
                }) }
            </select>
        </span>
    }
}

/// The key: the arrows' colours by distance (and 6.12's requeue in place), the
/// CPUs' states (`cstates`: the machine's C-state names), and what the boxes without
/// a name are where a canvas left the clusters' names out (`unnamed_clusters`).
fn legend(cstates: &[&'static str], unnamed_clusters: bool) -> Html {
    html! {
    // A group per heading, the heading a line of its own and its keys flowing under
    // it: a heading is never left at the end of a line with its keys on the next,
    // and a key not alone on the last line where it would fit the line before
    // ("requeued in place" was, at 1280 px).
    <div class="live-legend" role="group" aria-label="Legend">
        <div class="live-legend-group">
            <span class="live-legend-title">{ "Wake-up arrows, waker's CPU to chosen CPU:" }</span>
            { for Distance::ALL.iter().map(|d| html! {
                <span class="live-key">
                    <span class="live-swatch" style={format!("background:{}", DIST_COLOURS[*d as usize])} aria-hidden="true"></span>
                    { dist_label(*d) }
                </span>
            }) }
            <span class="live-key">
                <span class="live-swatch" style={format!("background:{REQUEUE_COLOUR}")} aria-hidden="true"></span>
                { "requeued in place (6.12's delayed task)" }
            </span>
        </div>
        <div class="live-legend-group">
            <span class="live-legend-title">{ "CPUs:" }</span>
            <span class="live-key"><span class="live-swatch live-running" aria-hidden="true"></span>{ "running (the big dot: its task, one colour per task)" }</span>
            { for cstates.iter().enumerate().take(3).map(|(i, name)| html! {
                <span class="live-key"><span class={format!("live-swatch live-idle-{i}")} aria-hidden="true"></span>{ format!("idle in {name}") }</span>
            }) }
            <span class="live-key"><span class="live-swatch live-force" aria-hidden="true"></span>{ "forced idle (core scheduling, struck through)" }</span>
        </div>
        // Notes, not keys: they have no swatch to pair with.
        <p class="live-legend-note">
            { "Small dots: tasks queued or asleep on that CPU." }
            if unnamed_clusters {
                { " A box of CPUs without a name: a cluster." }
            }
        </p>
    </div>
    }
}
