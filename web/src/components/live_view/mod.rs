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
//!  buttons  Play/Pause · Next wake-up (a step) · Restart · Speed
//!  status   "t = 1.234 ms · A: 12 wake-ups, 3 crossed a cluster · …" (seen, not live)
//!  said     role=status, hidden: set by events only (pause, the end, a step, a restart,
//!           a record that stopped), never by the clock
//! ```
//!
//! The players and painters live in a `RefCell` the frame loop and the buttons share;
//! the component itself re-renders only for the status (at most twice a second while
//! playing, and on every button), never per frame. A screen reader hears `Live::said`,
//! not the status line: a live region that changed twice a second would talk over
//! everything else while the record plays: the DOM cannot keep up with 60
//! frames of 384 CPUs. The loop writes its measurements as data attributes on the
//! view (`data-frames`, `data-fps`, `data-draw-ms`, `data-start-ns` and `data-start-up`
//! (the benchmark's start, idle stretches skipped up to it), and per side `data-wakes-a`,
//! `data-crowded-a` (waiting tasks left out: their CPU shows its most waiting dots),
//! `data-arrows-a`, `data-markers-a`, `data-glides-a` (markers that glided to a new
//! place), … `-b`) for the e2e journey `live`.
//!
//! This file holds what the frame loop and the buttons share (`Live`), the speeds and
//! sizes; `frame.rs` is the frame loop (the clock, the players, the drawing, the
//! measurements), `view.rs` the component: the canvases, the buttons, the status
//! line, the legend.

use std::sync::Arc;

use schedlab_core::sim::record::WakeRecord;
use schedlab_core::topology::Machine;
use yew::prelude::*;

use crate::components::machine_svg::layout_fit;
use crate::live::draw::Painter;
use crate::live::play::{step_sides, Player};
use crate::live::{Feed, Feeds, SimWakeRef};

mod frame;
mod view;

pub use view::LiveView;

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
/// The tallest a side's canvas gets, CSS px, and the least it is given: else the
/// window's height less the view's controls above it (`frame::room_above`; it was 70%
/// of the window until session 38: 590 px on a 844 px phone, under 379 px of controls).
const MAX_H: f64 = 640.0;
const MIN_H: f64 = 200.0;
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
    /// What the live region says: the last playback event, in words.
    said: String,
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
            said: String::new(),
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
        self.said.clear();
    }

    fn restart(&mut self) {
        self.players.iter_mut().for_each(Player::reset);
        self.painters.iter_mut().for_each(Painter::forget);
        self.t_ns = 0;
        self.selected = None;
        self.dirty = true;
        self.said = "Back at the start of the record.".to_string();
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
    fn status(&self) -> String {
        let mut s = format!("t = {:.3} ms", self.t_ns as f64 / 1e6);
        for (i, (p, f)) in self.players.iter().zip(&self.feeds.0).enumerate() {
            let side = if i == 0 { "A" } else { "B" };
            s.push_str(&side_counts(
                side,
                &f.borrow().label,
                p.wakes,
                p.crossed_cluster(),
                p.left_llc(),
                p.moves,
            ));
        }
        if self.in_start_up() {
            match self
                .feeds
                .0
                .iter()
                .filter_map(|f| f.borrow().start_ns)
                .min()
            {
                Some(t) => s.push_str(&format!(
                    " · start-up: idle stretches skipped to the clients' start at t = {:.3} ms",
                    t as f64 / 1e6
                )),
                None => s.push_str(" · start-up: idle stretches skipped to the clients' start"),
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

/// One side's part of the status line: " · A (6.6): 12 wake-ups, 3 crossed a cluster,
/// 0 left the LLC, 1 move" (it said "1 moves" and "1 wake-ups").
fn side_counts(side: &str, label: &str, wakes: u32, crossed: u32, left: u32, moves: u32) -> String {
    use crate::format::count;
    format!(
        " · {side} ({label}): {}, {crossed} crossed a cluster, {left} left the LLC, {}",
        count(wakes, "wake-up"),
        count(moves, "move")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_status_counts_one_of_a_thing_in_the_singular() {
        assert_eq!(
            super::side_counts("A", "6.6", 1, 1, 0, 1),
            " · A (6.6): 1 wake-up, 1 crossed a cluster, 0 left the LLC, 1 move"
        );
        assert_eq!(
            super::side_counts("B", "6.6+cluster", 31, 5, 0, 6),
            " · B (6.6+cluster): 31 wake-ups, 5 crossed a cluster, 0 left the LLC, 6 moves"
        );
    }
}
