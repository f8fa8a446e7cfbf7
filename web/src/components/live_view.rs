//! "The machine, live": each side's streamed event record played on a canvas, with
//! playback controls, a legend, a status line for screen readers, and the wake-ups as
//! things to click.
//!
//! ```text
//!  RunView.live[side] (live::Feed, filled by the worker's stream)
//!     │  requestAnimationFrame, every frame:
//!     │    clock: t += SPEEDS[speed] (or the newest record, "as fast as it goes");
//!     │           before the benchmark starts its clients, idle stretches skipped
//!     ▼    Player::play_to(feed, t) ─▶ Painter::draw (canvas; only when something moved)
//!  canvas ─ click ─▶ Painter::hit ─▶ SimWakeRef ─▶ Props::on_wake (and the details line)
//!  buttons  Play/Pause · Step to the next wake-up · Restart · Speed
//!  status   role=status: "t = 1.234 ms · A: 12 wake-ups, 3 crossed a cluster · …"
//! ```
//!
//! The players and painters live in a `RefCell` the frame loop and the buttons share;
//! the component itself re-renders only for the status (at most twice a second while
//! playing, and on every button), never per frame: the DOM cannot keep up with 60
//! frames of 384 CPUs. The loop writes its measurements as data attributes on the
//! view (`data-frames`, `data-fps`, `data-draw-ms`, `data-start-ns` and `data-start-up`
//! (the benchmark's start, idle stretches skipped up to it), and per side `data-wakes-a`,
//! `data-crowded-a` (waiting tasks left out: their CPU shows its most waiting dots),
//! `data-arrows-a`, `data-markers-a`, `data-glides-a` (markers that glided to a new
//! place), … `-b`) for the e2e journey `live`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use schedlab_core::cost::{CostParams, Distance};
use schedlab_core::sim::record::WakeRecord;
use schedlab_core::topology::Machine;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use crate::components::machine_svg::layout_fit;
use crate::live::draw::{context, dist_label, Painter, Palette, DIST_COLOURS};
use crate::live::play::{clock_after, step_sides, Player, ARROW_FRAMES};
use crate::live::{Feed, Feeds, SimWakeRef};
use crate::worker::now_ms;

/// Simulated nanoseconds per frame on the speed scale; the last step is "as fast as
/// it goes" (to the newest record each frame).
pub const SPEEDS: [u64; 14] = [
    100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
    1_000_000, 0,
];
/// The speed a run starts at: 5 µs per frame, 300 µs of simulated time a second.
const DEFAULT_SPEED: usize = 5;

const FASTEST: usize = SPEEDS.len() - 1;
/// The status line's refresh while playing.
const STATUS_MS: f64 = 500.0;
/// The tallest a side's canvas gets, CSS px, and at most this share of the window.
const MAX_H: f64 = 640.0;
const MAX_H_SHARE: f64 = 0.7;
/// The width over height the layout aims at (`machine_svg::layout_fit`).
const LAYOUT_ASPECT: f64 = 1.3;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub machine: Arc<Machine>,
    /// Per side, the feed the worker streams.
    pub feeds: Feeds,
    /// Per side, the report's wake-up count once the run is done (for the check
    /// that the drawing played what the run counted).
    #[prop_or_default]
    pub report_wakeups: Vec<Option<u64>>,
    /// A click (or Enter) on a wake-up: which one, so the Wake-up tab can open it.
    #[prop_or_default]
    pub on_wake: Callback<SimWakeRef>,
}

/// What the frame loop and the buttons share.
struct Live {
    feeds: Feeds,
    machine: Option<Arc<Machine>>,
    players: Vec<Player>,
    painters: Vec<Painter>,
    playing: bool,
    speed: usize,
    /// Which sides are drawn: 0 both, 1 only A, 2 only B (all keep playing).
    show: usize,
    t_ns: u64,
    /// Playback frames: they count only while playing (and one per step), so a
    /// paused picture keeps its arrows.
    frame: u64,
    /// Animation frames (requestAnimationFrame calls), for the frame rate.
    ticks: u64,
    /// The playback frame last drawn.
    drawn_at: u64,
    /// Something changed since the last draw (records played, a resize, the theme).
    dirty: bool,
    /// The frame of the newest arrow: drawing goes on while arrows fade.
    last_wake_frame: u64,
    selected: Option<(usize, WakeRecord)>,
    // Measurements.
    frames_drawn: u64,
    draw_ms_avg: f64,
    draw_ms_max: f64,
    fps: f64,
    fps_window: (f64, u64),
    last_status_ms: f64,
    alive: bool,
}

impl Live {
    /// Whether side `i` is drawn.
    fn shows(&self, i: usize) -> bool {
        self.show == 0 || self.show == i + 1
    }

    fn new() -> Live {
        Live {
            feeds: Feeds::default(),
            machine: None,
            players: Vec::new(),
            painters: Vec::new(),
            playing: true,
            speed: DEFAULT_SPEED,
            show: 0,
            t_ns: 0,
            frame: 0,
            ticks: 0,
            drawn_at: u64::MAX,
            dirty: true,
            last_wake_frame: 0,
            selected: None,
            frames_drawn: 0,
            draw_ms_avg: 0.0,
            draw_ms_max: 0.0,
            fps: 0.0,
            fps_window: (0.0, 0),
            last_status_ms: 0.0,
            alive: true,
        }
    }

    /// A new run or machine: everything from the start.
    fn reset(&mut self, feeds: &Feeds, machine: &Arc<Machine>) {
        let n = machine.nr_cpus() as usize;
        let same_machine = self
            .machine
            .as_ref()
            .is_some_and(|m| Arc::ptr_eq(m, machine));
        if !same_machine || self.painters.len() != feeds.0.len() {
            let l = layout_fit(machine, LAYOUT_ASPECT);
            self.painters = feeds.0.iter().map(|_| Painter::new(l.clone())).collect();
        }
        self.players = feeds.0.iter().map(|_| Player::new(n)).collect();
        self.painters.iter_mut().for_each(Painter::forget);
        self.feeds = feeds.clone();
        self.machine = Some(machine.clone());
        self.t_ns = 0;
        self.selected = None;
        self.dirty = true;
        self.playing = true;
        self.draw_ms_max = 0.0;
    }

    fn restart(&mut self) {
        self.players.iter_mut().for_each(Player::reset);
        self.painters.iter_mut().for_each(Painter::forget);
        self.t_ns = 0;
        self.selected = None;
        self.dirty = true;
    }

    /// The newest record's time over the feeds.
    fn end_ns(&self) -> u64 {
        self.feeds
            .0
            .iter()
            .map(|f| f.borrow().records.last().map_or(0, |r| r.at_ns))
            .max()
            .unwrap_or(0)
    }

    /// Until when the clock plays the start-up quickly: the earliest side's start
    /// (`Feed::start_up_until`); `None` when no side has one.
    fn start_up_until(&self) -> Option<u64> {
        self.feeds
            .0
            .iter()
            .filter_map(|f| f.borrow().start_up_until())
            .min()
    }

    /// The clock is in the benchmark's start-up (before its clients start).
    fn in_start_up(&self) -> bool {
        self.start_up_until().is_some_and(|s| self.t_ns < s)
            || self.feeds.0.iter().any(|f| f.borrow().start_pending)
    }

    /// Every feed complete and played to its end.
    fn finished(&self) -> bool {
        !self.feeds.0.is_empty()
            && self.feeds.0.iter().zip(&self.players).all(|(f, p)| {
                let f = f.borrow();
                f.done && p.at_end(&f)
            })
    }

    /// One wake-up on (`play::step_sides`); false when none is left (yet).
    fn step(&mut self) -> bool {
        self.frame += 1;
        let frame = self.frame;
        let feeds: Vec<std::cell::Ref<'_, Feed>> =
            self.feeds.0.iter().map(|f| f.borrow()).collect();
        let refs: Vec<&Feed> = feeds.iter().map(|f| &**f).collect();
        let stepped = step_sides(&refs, &mut self.players, frame);
        drop(refs);
        drop(feeds);
        if let Some((side, w, t)) = stepped {
            self.t_ns = t;
            self.selected = Some((side, w));
            self.last_wake_frame = frame;
        }
        self.dirty = true;
        stepped.is_some()
    }

    /// The status line.
    fn status(&self, labels: &[String]) -> String {
        let mut s = format!("t = {:.3} ms", self.t_ns as f64 / 1e6);
        for (i, p) in self.players.iter().enumerate() {
            let side = if i == 0 { "A" } else { "B" };
            let label = labels.get(i).map_or("", String::as_str);
            s.push_str(&format!(
                " · {side} ({label}): {} wake-ups, {} crossed a cluster, {} left the LLC, {} moves",
                p.wakes,
                p.crossed_cluster(),
                p.left_llc(),
                p.moves
            ));
        }
        if self.in_start_up() {
            match self.feeds.0.iter().filter_map(|f| f.borrow().start_ns).min() {
                Some(t) => s.push_str(&format!(
                    " · start-up: the clients connect and wait at the benchmark's start barrier until t = {:.3} ms; idle stretches skipped",
                    t as f64 / 1e6
                )),
                None => s.push_str(
                    " · start-up: the clients connect and wait at the benchmark's start barrier; idle stretches skipped",
                ),
            }
        }
        if self.finished() {
            s.push_str(" · played to the end of the record");
        } else if !self.playing {
            s.push_str(" · paused");
        }
        s
    }
}

/// One animation frame: the clock, the players, the drawing, the measurements.
/// Returns whether the status line is due.
fn tick(live: &mut Live, root: &NodeRef, canvases: &[NodeRef], now: f64) -> bool {
    live.ticks += 1;
    if live.playing {
        live.frame += 1;
    }
    let frame = live.frame;
    let was_playing = live.playing;
    if live.playing {
        let end = live.end_ns();
        // Before the benchmark starts its clients, idle stretches are skipped
        // (dbench's 100 ms at its barrier would take 5.5 minutes at the default speed).
        let next = live
            .feeds
            .0
            .iter()
            .zip(&live.players)
            .filter_map(|(f, p)| p.next_record_at(&f.borrow()))
            .min();
        live.t_ns = clock_after(
            live.t_ns,
            SPEEDS[live.speed],
            end,
            live.start_up_until(),
            next,
        );
        if live.finished() {
            live.playing = false;
        }
    }
    let t = live.t_ns;
    for (f, p) in live.feeds.0.iter().zip(&mut live.players) {
        let before = p.wakes;
        if p.play_to(&f.borrow(), t, frame) > 0 {
            live.dirty = true;
        }
        if p.wakes != before {
            live.last_wake_frame = frame;
        }
    }
    // Size and theme, a few times a second.
    if live.ticks % 15 == 1 {
        let dpr = web_sys::window()
            .map_or(1.0, |w| w.device_pixel_ratio())
            .max(1.0);
        let shown: Vec<bool> = (0..live.painters.len()).map(|i| live.shows(i)).collect();
        for ((painter, c), shown) in live.painters.iter_mut().zip(canvases).zip(shown) {
            let Some(canvas) = c.cast::<HtmlCanvasElement>().filter(|_| shown) else {
                continue;
            };
            let width = canvas
                .parent_element()
                .map_or(300.0, |p| f64::from(p.client_width()))
                .max(100.0);
            let max_h = web_sys::window()
                .and_then(|w| w.inner_height().ok())
                .and_then(|h| h.as_f64())
                .map_or(MAX_H, |h| (h * MAX_H_SHARE).clamp(160.0, MAX_H));
            if painter.fit(&canvas, width, max_h, dpr) {
                live.dirty = true;
            }
            if painter.set_palette(Palette::of(&canvas)) {
                live.dirty = true;
            }
        }
    }
    let fading = frame.saturating_sub(live.last_wake_frame) <= ARROW_FRAMES;
    // Markers on their way are drawn every frame, paused or not, until they arrive.
    let gliding = live.painters.iter().any(|p| p.gliding > 0);
    if live.dirty || gliding || (fading && frame != live.drawn_at) {
        live.drawn_at = frame;
        let t0 = now_ms();
        let show = live.show;
        let ticks = live.ticks;
        for (i, ((painter, c), p)) in live
            .painters
            .iter_mut()
            .zip(canvases)
            .zip(&mut live.players)
            .enumerate()
        {
            if show != 0 && show != i + 1 {
                continue;
            }
            if let Some(ctx) = c.cast::<HtmlCanvasElement>().as_ref().and_then(context) {
                painter.draw(&ctx, p, frame, ticks);
            }
        }
        let ms = now_ms() - t0;
        live.frames_drawn += 1;
        live.draw_ms_avg = if live.frames_drawn == 1 {
            ms
        } else {
            live.draw_ms_avg * 0.95 + ms * 0.05
        };
        live.draw_ms_max = live.draw_ms_max.max(ms);
        live.dirty = false;
    }
    // Frames per second over the last second.
    let (t_win, n_win) = live.fps_window;
    if now - t_win >= 1000.0 {
        if t_win > 0.0 {
            live.fps = (live.ticks - n_win) as f64 * 1000.0 / (now - t_win);
        }
        live.fps_window = (now, live.ticks);
    }
    // The measurements, every 6th frame while playing (they are for the e2e journey
    // and cost DOM writes), every frame otherwise.
    let write = !live.playing || live.ticks.is_multiple_of(6) || was_playing != live.playing;
    if let Some(el) = root.cast::<web_sys::Element>().filter(|_| write) {
        let set = |k: &str, v: String| {
            let _ = el.set_attribute(k, &v);
        };
        set("data-frames", live.frames_drawn.to_string());
        set("data-fps", format!("{:.1}", live.fps));
        set("data-draw-ms", format!("{:.3}", live.draw_ms_avg));
        set("data-draw-max-ms", format!("{:.3}", live.draw_ms_max));
        set("data-t-ns", live.t_ns.to_string());
        set("data-start-up", live.in_start_up().to_string());
        if let Some(t) = live
            .feeds
            .0
            .iter()
            .filter_map(|f| f.borrow().start_ns)
            .min()
        {
            set("data-start-ns", t.to_string());
        }
        set("data-playing", live.playing.to_string());
        for (side, (p, (f, painter))) in live
            .players
            .iter()
            .zip(live.feeds.0.iter().zip(&live.painters))
            .enumerate()
        {
            let i = if side == 0 { "a" } else { "b" };
            let f = f.borrow();
            set(&format!("data-wakes-{i}"), p.wakes.to_string());
            set(&format!("data-measured-{i}"), p.wakes_measured.to_string());
            set(&format!("data-arrows-{i}"), p.arrows_drawn.to_string());
            set(&format!("data-skipped-{i}"), p.arrows_skipped.to_string());
            set(
                &format!("data-markers-{i}"),
                painter.last_markers.to_string(),
            );
            set(&format!("data-tasks-{i}"), p.markers().to_string());
            set(
                &format!("data-crowded-{i}"),
                painter.last_crowded.to_string(),
            );
            set(&format!("data-moves-{i}"), p.moves.to_string());
            set(
                &format!("data-glides-{i}"),
                painter.glides_begun.to_string(),
            );
            set(
                &format!("data-cpu-glides-{i}"),
                painter.cpu_glides.to_string(),
            );
            set(
                &format!("data-glide-draws-{i}"),
                painter.glide_draws.to_string(),
            );
            set(&format!("data-feed-wakes-{i}"), f.wake_records.to_string());
            set(&format!("data-run-wakeups-{i}"), f.wakeups.to_string());
            set(&format!("data-records-{i}"), f.records.len().to_string());
            set(
                &format!("data-ended-{i}"),
                (f.done && p.at_end(&f)).to_string(),
            );
            if let Some((x, y)) = p.recent(1).next().and_then(|a| painter.arrow_mid(&a.wake)) {
                set(&format!("data-last-arrow-{i}"), format!("{x:.1},{y:.1}"));
            }
        }
    }
    let due =
        (live.playing && now - live.last_status_ms >= STATUS_MS) || was_playing != live.playing;
    if due {
        live.last_status_ms = now;
    }
    due
}

/// The frame loop: requestAnimationFrame until `alive` goes false.
fn start_loop(
    live: Rc<RefCell<Live>>,
    root: NodeRef,
    canvases: Rc<Vec<NodeRef>>,
    status: UseForceUpdateHandle,
) {
    type Frame = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;
    let slot: Frame = Rc::new(RefCell::new(None));
    let again = slot.clone();
    *slot.borrow_mut() = Some(Closure::new(move |now: f64| {
        let due = {
            let Ok(mut l) = live.try_borrow_mut() else {
                return;
            };
            if !l.alive {
                // Drop the closure (and with it this loop).
                drop(l);
                again.borrow_mut().take();
                return;
            }
            tick(&mut l, &root, &canvases, now)
        };
        if due {
            status.force_update();
        }
        if let (Some(w), Some(cb)) = (web_sys::window(), again.borrow().as_ref()) {
            let _ = w.request_animation_frame(cb.as_ref().unchecked_ref());
        }
    }));
    let first = slot.borrow();
    if let (Some(w), Some(cb)) = (web_sys::window(), first.as_ref()) {
        let _ = w.request_animation_frame(cb.as_ref().unchecked_ref());
    }
}

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
    }));
    let step = update(Box::new(|l: &mut Live| {
        l.playing = false;
        l.step();
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
    let labels: Vec<String> = props
        .feeds
        .0
        .iter()
        .map(|f| f.borrow().label.clone())
        .collect();
    let speed_text = match SPEEDS[l.speed] {
        0 => "as fast as it goes".to_string(),
        ns if ns < 1_000 => format!("{ns} ns of simulated time per frame"),
        ns if ns < 1_000_000 => format!("{} µs of simulated time per frame", ns / 1_000),
        ns => format!("{} ms of simulated time per frame", ns / 1_000_000),
    };
    let sides = props.feeds.0.iter().enumerate().map(|(i, f)| {
        let f = f.borrow();
        let side = if i == 0 { "A" } else { "B" };
        let canvas = canvases[i].clone();
        let note = if let Some(e) = &f.error {
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
        };
        let recent: Vec<WakeRecord> = l
            .players
            .get(i)
            .map(|p| p.recent(4).map(|a| a.wake).collect())
            .unwrap_or_default();
        let pick = pick.clone();
        let seed = f.seed;
        html! {
            <figure class="live-side" data-side={i.to_string()} hidden={!l.shows(i)}>
                <figcaption>{ format!("{side}: {} (seed {seed})", f.label) }</figcaption>
                <div class="live-canvas-box">
                    <canvas ref={canvas} class="live-canvas" id={format!("live-canvas-{i}")}
                        role="img"
                        aria-label={format!("Side {side}: each CPU's state, each task as a dot, each wake-up as an arrow from the waker's CPU to the chosen CPU. The status line and the list below say the same in words.")}
                        onclick={on_canvas(i)} />
                </div>
                if !note.is_empty() {
                    <p class="sim-note live-note">{ note }</p>
                }
                <ul class="live-recent" aria-label={format!("Side {side}: the latest wake-ups")}>
                    { for recent.into_iter().map(|w| {
                        let pick = pick.clone();
                        let dist = w.dist as usize;
                        html! {
                            <li>
                                <button class="live-wake" data-wake={w.seq.to_string()} data-cpu={w.cpu.to_string()}
                                    onclick={Callback::from(move |_: MouseEvent| pick(i, w))}>
                                    <span class="live-swatch" style={format!("background:{}", DIST_COLOURS[dist])} aria-hidden="true"></span>
                                    { format!("#{}: task {}, CPU {} → {}", w.seq, w.wakee, w.waker_cpu, w.cpu) }
                                </button>
                            </li>
                        }
                    }) }
                </ul>
            </figure>
        }
    });
    let report_attrs = props.report_wakeups.clone();
    html! {
        <section class="live-view" ref={root} aria-labelledby="live-title"
            data-report-wakeups-a={report_attrs.first().copied().flatten().map(|v| v.to_string())}
            data-report-wakeups-b={report_attrs.get(1).copied().flatten().map(|v| v.to_string())}>
            <h3 id="live-title">{ "The machine, live" }</h3>
            <div class="row live-controls" role="group" aria-label="Playback">
                <button id="live-play" aria-pressed={l.playing.to_string()} onclick={play}>
                    { if l.playing { "Pause" } else { "Play" } }
                </button>
                <button id="live-step" onclick={step}>{ "Step to the next wake-up" }</button>
                <button id="live-restart" onclick={restart}>{ "Restart" }</button>
                <label for="live-speed">{ "Speed" }</label>
                <input id="live-speed" type="range" min="0" max={FASTEST.to_string()} step="1"
                    value={l.speed.to_string()} aria-valuetext={speed_text.clone()} oninput={on_speed} />
                <span class="live-speed-text">{ speed_text }</span>
                if props.feeds.0.len() > 1 {
                    <label for="live-show">{ "Show" }</label>
                    <select id="live-show" onchange={on_show}>
                        { for [(0, "A and B"), (1, "A only"), (2, "B only")].iter().map(|(v, t)| html! {
                            <option value={v.to_string()} selected={l.show == *v}>{ *t }</option>
                        }) }
                    </select>
                }
            </div>
            <p id="live-status" class="live-status" role="status" aria-live="polite">{ l.status(&labels) }</p>
            if let Some((side, w)) = l.selected {
                <p id="live-selected" class="live-selected" data-wake={w.seq.to_string()} data-cpu={w.cpu.to_string()} data-side={side.to_string()}>
                    { describe(side, l.feeds.0.get(side).map_or(0, |f| f.borrow().seed), &w) }
                </p>
            }
            <div class="live-sides">{ for sides }</div>
            <div class="live-legend" role="group" aria-label="Legend">
                <span class="live-legend-title">{ "Wake-up arrows, waker's CPU to chosen CPU:" }</span>
                { for Distance::ALL.iter().map(|d| html! {
                    <span class="live-key">
                        <span class="live-swatch" style={format!("background:{}", DIST_COLOURS[*d as usize])} aria-hidden="true"></span>
                        { dist_label(*d) }
                    </span>
                }) }
                <span class="live-legend-title">{ "CPUs:" }</span>
                <span class="live-key"><span class="live-swatch live-running" aria-hidden="true"></span>{ "running (the big dot: its task, one colour per task)" }</span>
                { for cstates.iter().enumerate().take(3).map(|(i, name)| html! {
                    <span class="live-key"><span class={format!("live-swatch live-idle-{i}")} aria-hidden="true"></span>{ format!("idle in {name}") }</span>
                }) }
                <span class="live-key"><span class="live-swatch live-force" aria-hidden="true"></span>{ "forced idle (core scheduling, struck through)" }</span>
                <span class="live-key">{ "small dots: tasks queued or asleep on that CPU" }</span>
            </div>
        </section>
    }
}
