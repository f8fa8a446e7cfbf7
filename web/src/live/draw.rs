//! The live view's canvas: the machine drawing's boxes (`machine_svg::layout`, so the
//! groups are the ones the Machine panel and the SVG export show), then, each frame,
//! the CPUs' states, the tasks' markers and the wake-ups' arrows from a [`Player`].
//!
//! ```text
//!  static layer (an offscreen canvas, redrawn on resize or theme change only):
//!    package ▸ node ▸ LLC ▸ cluster ▸ core boxes, labels, CPU numbers
//!  each frame, over it:
//!    CPU fill     running · idle (darker for deeper C-states) · forced idle
//!    markers      the running task: a dot in its colour; queued/sleeping ones: small
//!                 dots along the CPU's bottom edge (up to 4); a marker whose place
//!                 changes (a migration, a wake-up elsewhere) glides there over
//!                 `--live-glide` frames (0, a jump, under prefers-reduced-motion)
//!    arrows       waker's CPU ─▶ chosen CPU, coloured by distance, fading over
//!                 ARROW_FRAMES frames; a ring round the CPU for a same-CPU wake-up
//! ```
//!
//! The colour is the record's `dist`, the distance the metrics count: from the
//! waker's CPU, or from prev for a wake-up from interrupt context (a timer), whose
//! arrow still starts at the CPU the interrupt ran on.
//!
//! A frame allocates nothing that grows with the machine: colours are looked up in
//! vectors built when a task or the theme first shows up, and the per-CPU scratch
//! is reused.

use schedlab_core::cost::Distance;
use schedlab_core::sim::record::WakeRecord;
use schedlab_core::wakeup::WakePath;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::play::{CpuState, Player, ARROW_FRAMES, NO_CPU};
use crate::components::machine_svg::Layout;

/// Per distance (`Distance as usize`), the arrow colour: the Okabe–Ito palette, told
/// apart with most colour-vision deficiencies, readable on light and dark panels.
pub const DIST_COLOURS: [&str; 6] = [
    "#999999", // same CPU
    "#009e73", // same core (SMT)
    "#56b4e9", // same cluster
    "#0072b2", // same LLC, other cluster
    "#e69f00", // other LLC
    "#d55e00", // other node
];

/// A delayed task's requeue in place (v6.12, `WakePath::Requeue`): no distance's
/// colour, the palette's reddish purple.
pub const REQUEUE_COLOUR: &str = "#cc79a7";

/// A wake-up arrow's colour: its distance's, or [`REQUEUE_COLOUR`].
pub fn wake_colour(w: &WakeRecord) -> &'static str {
    if w.path == WakePath::Requeue {
        REQUEUE_COLOUR
    } else {
        DIST_COLOURS[w.dist as usize]
    }
}

/// The CPU numbers' size, CSS px: drawn only where a CPU's box holds one that size
/// ([`numbers_fit`]); 9 px until session 37, too small to read on a phone.
pub const NUMBER_PX: f64 = 11.0;

/// The group labels' size, CSS px ("cluster 0", "node 0 · LLC 0"): drawn only where
/// the box holds one whole at that size ([`label_fits`]). They were 10 px, squeezed
/// into boxes too narrow for them, until session 38.
pub const LABEL_PX: f64 = 11.0;

/// The room a group's label has above its children, layout units: its line and the
/// padding under it (`machine_svg`'s LABEL_H and PAD).
const LABEL_ROOM: f64 = 20.0;

/// Whether a label `text_w` CSS px wide fits a box `box_w` units wide drawn at `scale`
/// CSS px per unit: 5 units in, 3 px spare at its right, and a line of [`LABEL_PX`]
/// in the room above the children.
pub fn label_fits(text_w: f64, box_w: f64, scale: f64) -> bool {
    5.0 * scale + text_w + 3.0 <= box_w * scale && LABEL_ROOM * scale >= LABEL_PX + 1.0
}

/// Whether CPU numbers of [`NUMBER_PX`] fit the boxes of `layout` drawn at `scale` CSS
/// px per unit: the widest number (its digits at 0.6 em each, a margin of 3 px) and a
/// line (3 px over the size). Digits are 0.55-0.64 em in the usual sans-serif faces;
/// a wider face's number is squeezed into the box, not drawn past it.
pub fn numbers_fit(layout: &Layout, scale: f64) -> bool {
    scale >= number_scale(layout)
}

/// The least scale (CSS px per unit) at which [`numbers_fit`].
pub fn number_scale(layout: &Layout) -> f64 {
    let digits = layout.cpus.len().saturating_sub(1).max(1).ilog10() + 1;
    layout.cpus.first().map_or(f64::INFINITY, |b| {
        ((f64::from(digits) * 0.6 * NUMBER_PX + 3.0) / b[2]).max((NUMBER_PX + 3.0) / b[3])
    })
}

/// Per distance, what the legend says.
pub fn dist_label(d: Distance) -> &'static str {
    match d {
        Distance::SameCpu => "same CPU",
        Distance::SameCore => "same core (SMT sibling)",
        Distance::SameCluster => "same cluster",
        Distance::SameLlc => "same LLC, other cluster",
        Distance::OtherLlc => "other LLC",
        Distance::OtherNode => "other node",
    }
}

/// The most queued-task dots drawn on one CPU.
const QUEUED_DOTS: u8 = 4;

/// The theme's colours, read from the page's CSS custom properties.
#[derive(Clone, Debug, PartialEq)]
pub struct Palette {
    pub panel: String,
    pub fg: String,
    pub muted: String,
    pub line: String,
    pub cpu_line: String,
    pub boxes: [String; 5],
    pub running: String,
    pub running_line: String,
    /// Idle fills from shallow to deep C-states.
    pub idle: [String; 3],
    pub force_idle: String,
    pub unknown: String,
    /// Lightness of task colours (darker on light panels).
    pub task_l: u8,
    /// Frames a marker takes to glide to its new place (`--live-glide`; the style
    /// sheet sets 0 under prefers-reduced-motion: markers jump then).
    pub glide: u32,
}

impl Palette {
    /// Reads the colours off `el`'s computed style (they follow the theme).
    pub fn of(el: &web_sys::Element) -> Palette {
        let style = web_sys::window().and_then(|w| w.get_computed_style(el).ok().flatten());
        let get = |name: &str, fallback: &str| -> String {
            style
                .as_ref()
                .and_then(|s| s.get_property_value(name).ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| fallback.to_string())
        };
        let panel = get("--panel", "#ffffff");
        let dark = luminance(&panel) < 0.5;
        Palette {
            fg: get("--fg", "#1d232b"),
            muted: get("--muted", "#5a6472"),
            line: get("--line", "#d5dae1"),
            cpu_line: get("--cpu-line", "#b9c1cc"),
            boxes: [
                get("--box-package", "#f3f5f8"),
                get("--box-node", "#f8f9fb"),
                get("--box-llc", "#ffffff"),
                get("--box-cluster", "#f4f7fc"),
                get("--smt-bg", "#eef1f5"),
            ],
            running: get("--accent-bg", "#e3edfb"),
            running_line: get("--accent", "#1f5fbf"),
            idle: [
                get("--control-bg", "#ffffff"),
                get("--smt-bg", "#eef1f5"),
                get("--busy-bg", "#e8eaed"),
            ],
            force_idle: get("--span-bg", "#fff1c2"),
            unknown: panel.clone(),
            task_l: if dark { 62 } else { 42 },
            glide: get("--live-glide", "6").parse().unwrap_or(6).min(60),
            panel,
        }
    }
}

/// A `#rrggbb` colour's rough lightness, 0 to 1 (0.5 for anything else).
fn luminance(c: &str) -> f64 {
    let h = c.trim_start_matches('#');
    let ch = |i: usize| u8::from_str_radix(h.get(i..i + 2).unwrap_or("80"), 16).unwrap_or(128);
    if h.len() != 6 {
        return 0.5;
    }
    (0.2126 * f64::from(ch(0)) + 0.7152 * f64::from(ch(2)) + 0.0722 * f64::from(ch(4))) / 255.0
}

/// Task `t`'s colour: hues a golden angle apart, so neighbours differ.
pub fn task_colour(t: u32, lightness: u8) -> String {
    let hue = (u64::from(t) * 137_508 / 1000) % 360;
    format!("hsl({hue} 70% {lightness}%)")
}

/// Draws one side: the layout scaled into a canvas, and the per-frame layer.
pub struct Painter {
    pub layout: Layout,
    /// CSS pixels per layout unit, and device pixels per CSS pixel.
    pub scale: f64,
    pub dpr: f64,
    /// The canvas size in CSS pixels.
    pub css_w: f64,
    pub css_h: f64,
    /// Of the labelled groups, those the last drawing of the boxes left unlabelled
    /// (their box too small for [`LABEL_PX`]).
    pub labels_left_out: usize,
    /// The canvas size (CSS px) a phone's layout was chosen for; `None`: the square
    /// layout, as on a wide screen (components/live_view/frame.rs).
    pub fitted_for: Option<(u32, u32)>,
    /// Whether that layout is taller than the room and its canvas' box scrolls.
    pub scrolls: bool,
    stat: Option<HtmlCanvasElement>,
    palette: Option<Palette>,
    task_colours: Vec<String>,
    queued: Vec<u8>,
    /// Per task, where its marker is drawn and where it glides to.
    glides: Vec<Glide>,
    /// What the last frame drew.
    pub last_arrows: usize,
    pub last_markers: usize,
    /// Of the tasks placed, those the last frame left out: waiting on a CPU that
    /// already shows `QUEUED_DOTS` waiting markers.
    pub last_crowded: usize,
    /// Markers the last frame drew on their way (between two places).
    pub gliding: usize,
    /// Glides begun (of them, to another CPU: a migration or a wake-up elsewhere),
    /// and marker draws on the way, since the run started.
    pub glides_begun: u32,
    pub cpu_glides: u32,
    pub glide_draws: u32,
}

/// A marker's move: from where it was drawn to its new place, begun at a tick.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Glide {
    from: (f64, f64),
    to: (f64, f64),
    start: u64,
    /// The CPU `to` is on.
    cpu: u16,
}

impl Glide {
    const NONE: Glide = Glide {
        from: (f64::NAN, f64::NAN),
        to: (f64::NAN, f64::NAN),
        start: 0,
        cpu: NO_CPU,
    };

    /// Where it is at `tick` over `frames` frames (eased out), and whether it is
    /// still on its way.
    fn at(&self, tick: u64, frames: u32) -> ((f64, f64), bool) {
        let k = if frames == 0 {
            1.0
        } else {
            (tick.saturating_sub(self.start) as f64 / f64::from(frames)).min(1.0)
        };
        if k >= 1.0 || self.from == self.to {
            return (self.to, false);
        }
        let e = k * (2.0 - k);
        (
            (
                self.from.0 + (self.to.0 - self.from.0) * e,
                self.from.1 + (self.to.1 - self.from.1) * e,
            ),
            true,
        )
    }
}

impl Painter {
    pub fn new(layout: Layout) -> Painter {
        let n = layout.cpus.len();
        Painter {
            layout,
            scale: 1.0,
            dpr: 1.0,
            css_w: 0.0,
            css_h: 0.0,
            fitted_for: None,
            scrolls: false,
            labels_left_out: 0,
            stat: None,
            palette: None,
            task_colours: Vec::new(),
            queued: vec![0; n],
            glides: Vec::new(),
            last_arrows: 0,
            last_markers: 0,
            last_crowded: 0,
            gliding: 0,
            glides_begun: 0,
            cpu_glides: 0,
            glide_draws: 0,
        }
    }

    /// Takes another layout of the same machine (a phone's taller one, or back): the
    /// boxes are redrawn at the next fit and the markers jump to their places in it.
    pub fn set_layout(&mut self, layout: Layout) {
        if layout != self.layout {
            self.layout = layout;
            self.stat = None;
            self.css_w = 0.0;
            self.glides.clear();
        }
    }

    /// Forgets where the markers were (a new run, or a restart: no glide from there).
    pub fn forget(&mut self) {
        self.glides.clear();
        self.gliding = 0;
        self.glides_begun = 0;
        self.cpu_glides = 0;
        self.glide_draws = 0;
    }

    /// Where task `t`'s marker is drawn at `tick` when its place is `to`, on `cpu`: a
    /// new place starts a glide from where it is drawn now, over `frames` frames (0: a
    /// jump).
    fn marker_at(
        &mut self,
        t: usize,
        to: (f64, f64),
        cpu: u16,
        tick: u64,
        frames: u32,
    ) -> (f64, f64) {
        if t >= self.glides.len() {
            self.glides.resize(t + 1, Glide::NONE);
        }
        let g = &mut self.glides[t];
        if frames == 0 || g.to.0.is_nan() {
            *g = Glide {
                from: to,
                to,
                start: tick,
                cpu,
            };
            return to;
        }
        if g.to != to {
            let (now, _) = g.at(tick, frames);
            self.glides_begun += 1;
            self.cpu_glides += u32::from(g.cpu != cpu);
            *g = Glide {
                from: now,
                to,
                start: tick,
                cpu,
            };
        }
        let (p, moving) = g.at(tick, frames);
        if moving {
            self.gliding += 1;
            self.glide_draws += 1;
        }
        p
    }

    /// Sizes `canvas` for `width` CSS pixels (height from the layout's aspect, at most
    /// `max_h`); true when that changed anything (the static layer is redrawn then).
    pub fn fit(&mut self, canvas: &HtmlCanvasElement, width: f64, max_h: f64, dpr: f64) -> bool {
        let (lw, lh) = (self.layout.w.max(1.0), self.layout.h.max(1.0));
        let scale = (width / lw).min(max_h / lh).clamp(0.05, 2.0);
        let (w, h) = ((lw * scale).floor(), (lh * scale).floor());
        if (w, h, dpr) == (self.css_w, self.css_h, self.dpr) && self.stat.is_some() {
            return false;
        }
        self.scale = scale;
        self.dpr = dpr;
        self.css_w = w;
        self.css_h = h;
        canvas.set_width((w * dpr) as u32);
        canvas.set_height((h * dpr) as u32);
        let _ = canvas.set_attribute("style", &format!("width:{w}px;height:{h}px"));
        // The CPU numbers' size in the canvas' own pixels (0: not drawn), for the
        // browser tests to measure as drawn on the page.
        let number = if self.numbers_fit() {
            NUMBER_PX * dpr
        } else {
            0.0
        };
        let _ = canvas.set_attribute("data-number-px", &number.to_string());
        self.stat = None;
        true
    }

    /// Takes the theme's colours; true when they changed (a redraw of everything).
    pub fn set_palette(&mut self, p: Palette) -> bool {
        if self.palette.as_ref() == Some(&p) {
            return false;
        }
        self.palette = Some(p);
        self.task_colours.clear();
        self.stat = None;
        true
    }

    fn units(&self) -> f64 {
        self.scale * self.dpr
    }

    /// The boxes, labels and CPU numbers, drawn once into an offscreen canvas.
    fn static_layer(&mut self) -> Option<HtmlCanvasElement> {
        if let Some(s) = &self.stat {
            return Some(s.clone());
        }
        let p = self.palette.as_ref()?;
        let doc = web_sys::window()?.document()?;
        let c: HtmlCanvasElement = doc.create_element("canvas").ok()?.dyn_into().ok()?;
        c.set_width((self.css_w * self.dpr) as u32);
        c.set_height((self.css_h * self.dpr) as u32);
        let ctx = context(&c)?;
        let k = self.units();
        ctx.set_fill_style_str(&p.panel);
        ctx.fill_rect(0.0, 0.0, self.css_w * self.dpr, self.css_h * self.dpr);
        let _ = ctx.set_transform(k, 0.0, 0.0, k, 0.0, 0.0);
        ctx.set_line_width(1.0 / k);
        ctx.set_font(&format!("{}px sans-serif", LABEL_PX / self.scale));
        // A label's baseline: its line's middle in the room above the children, less
        // half its capitals' height (0.72 em); in layout units.
        let base =
            ((LABEL_ROOM * self.scale).min(2.0 * LABEL_PX) / 2.0 + 0.36 * LABEL_PX) / self.scale;
        self.labels_left_out = 0;
        for g in &self.layout.groups {
            let fill = match g.class {
                "package" => &p.boxes[0],
                "node" => &p.boxes[1],
                "llc" => &p.boxes[2],
                "cluster" => &p.boxes[3],
                "core" => &p.boxes[4],
                _ => &p.panel,
            };
            ctx.set_fill_style_str(fill);
            ctx.fill_rect(g.x, g.y, g.w, g.h);
            if g.class != "machine" {
                ctx.set_stroke_style_str(&p.line);
                ctx.stroke_rect(g.x, g.y, g.w, g.h);
            }
            // A label where it fits whole at its size.
            if !g.label.is_empty() {
                let w = ctx
                    .measure_text(&g.label)
                    .map_or(f64::INFINITY, |m| m.width())
                    * self.scale;
                if label_fits(w, g.w, self.scale) {
                    ctx.set_fill_style_str(&p.muted);
                    let _ = ctx.fill_text(&g.label, g.x + 5.0, g.y + base);
                } else {
                    self.labels_left_out += 1;
                }
            }
        }
        ctx.set_stroke_style_str(&p.cpu_line);
        for b in &self.layout.cpus {
            ctx.stroke_rect(b[0], b[1], b[2], b[3]);
        }
        self.stat = Some(c.clone());
        Some(c)
    }

    /// Whether CPU numbers fit in the CPU boxes on screen.
    fn numbers_fit(&self) -> bool {
        numbers_fit(&self.layout, self.scale)
    }

    /// Draws `player`'s state in `frame` on `ctx`; `tick` (the animation frame, which
    /// goes on while paused) times the markers' glides.
    pub fn draw(
        &mut self,
        ctx: &CanvasRenderingContext2d,
        player: &mut Player,
        frame: u64,
        tick: u64,
    ) {
        let fresh = self.stat.is_none();
        let Some(stat) = self.static_layer() else {
            return;
        };
        if fresh {
            // The labels' size in the canvas' own pixels and how many were left out,
            // for the browser tests to measure as drawn on the page.
            if let Some(c) = ctx.canvas() {
                let _ = c.set_attribute("data-label-px", &(LABEL_PX * self.dpr).to_string());
                let _ = c.set_attribute("data-labels-left-out", &self.labels_left_out.to_string());
            }
        }
        let Some(p) = self.palette.clone() else {
            return;
        };
        let _ = ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
        ctx.set_global_alpha(1.0);
        let _ = ctx.draw_image_with_html_canvas_element(&stat, 0.0, 0.0);
        let k = self.units();
        let _ = ctx.set_transform(k, 0.0, 0.0, k, 0.0, 0.0);
        // Task colours for tasks seen for the first time (not per frame).
        while self.task_colours.len() < player.task_cpu.len() {
            let t = self.task_colours.len() as u32;
            self.task_colours.push(task_colour(t, p.task_l));
        }
        // CPU states.
        let numbers = self.numbers_fit();
        // A number's left margin and its baseline, in layout units: 1.5 px in, and its
        // digits' height (0.75 em) and 1.5 px down from the box's top.
        let (nx, ny) = (1.5 / self.scale, (0.75 * NUMBER_PX + 1.5) / self.scale);
        if numbers {
            ctx.set_font(&format!("{}px sans-serif", NUMBER_PX / self.scale));
        }
        for (c, (b, s)) in self.layout.cpus.iter().zip(&player.cpus).enumerate() {
            let fill = match s {
                CpuState::Unknown => &p.unknown,
                CpuState::Running(_) => &p.running,
                CpuState::Idle(i) => &p.idle[(*i as usize).min(2)],
                CpuState::ForceIdle => &p.force_idle,
            };
            ctx.set_fill_style_str(fill);
            ctx.fill_rect(b[0] + 1.0, b[1] + 1.0, b[2] - 2.0, b[3] - 2.0);
            if let CpuState::ForceIdle = s {
                // Hatched, as Perfetto draws forced idle: not only a colour.
                ctx.set_stroke_style_str(&p.muted);
                ctx.begin_path();
                ctx.move_to(b[0] + 1.0, b[1] + b[3] - 1.0);
                ctx.line_to(b[0] + b[2] - 1.0, b[1] + 1.0);
                ctx.stroke();
            }
            if numbers {
                ctx.set_fill_style_str(&p.muted);
                let _ = ctx.fill_text_with_max_width(
                    &c.to_string(),
                    b[0] + nx,
                    b[1] + ny,
                    b[2] - 2.0 * nx,
                );
            }
        }
        // Markers: the running task big in the middle, the others small along the
        // bottom edge of their CPU.
        self.queued.iter_mut().for_each(|q| *q = 0);
        self.gliding = 0;
        let glide = p.glide;
        let (mut markers, mut crowded) = (0, 0);
        for (t, &c) in player.task_cpu.iter().enumerate() {
            if c == NO_CPU {
                continue;
            }
            let Some(b) = self.layout.cpus.get(c as usize) else {
                continue;
            };
            let b = *b;
            let (place, r) = if player.cpus.get(c as usize) == Some(&CpuState::Running(t as u32)) {
                (
                    (b[0] + b[2] / 2.0, b[1] + b[3] / 2.0 + 1.0),
                    b[2].min(b[3]) * 0.3,
                )
            } else {
                let q = &mut self.queued[c as usize];
                if *q >= QUEUED_DOTS {
                    crowded += 1;
                    continue;
                }
                let r = (b[3] * 0.12).max(1.2);
                let x = b[0] + 2.0 + r + f64::from(*q) * (2.0 * r + 1.0);
                *q += 1;
                ((x, b[1] + b[3] - 2.0 - r), r)
            };
            let (x, y) = self.marker_at(t, place, c, tick, glide);
            markers += 1;
            ctx.set_fill_style_str(&self.task_colours[t]);
            ctx.begin_path();
            let _ = ctx.arc(x, y, r, 0.0, std::f64::consts::TAU);
            ctx.fill();
        }
        self.last_markers = markers;
        self.last_crowded = crowded;
        // Arrows, oldest first so the newest are on top.
        let mut arrows = 0;
        ctx.set_line_width(1.6);
        let cpus = &self.layout.cpus;
        for (a, age) in player.live_arrows(frame) {
            arrows += 1;
            let colour = wake_colour(&a.wake);
            ctx.set_global_alpha(1.0 - age as f64 / ARROW_FRAMES as f64 * 0.85);
            ctx.set_stroke_style_str(colour);
            ctx.set_fill_style_str(colour);
            let (Some(from), Some(to)) = (
                cpus.get(a.wake.waker_cpu as usize),
                cpus.get(a.wake.cpu as usize),
            ) else {
                continue;
            };
            let (x0, y0) = centre(from);
            let (x1, y1) = centre(to);
            ctx.begin_path();
            if a.wake.waker_cpu == a.wake.cpu {
                let _ = ctx.arc(x1, y1, to[2].min(to[3]) * 0.45, 0.0, std::f64::consts::TAU);
                ctx.stroke();
                continue;
            }
            ctx.move_to(x0, y0);
            ctx.line_to(x1, y1);
            ctx.stroke();
            // The head.
            let (dx, dy) = (x1 - x0, y1 - y0);
            let len = (dx * dx + dy * dy).sqrt().max(1e-6);
            let (ux, uy) = (dx / len, dy / len);
            let hl = 6.0;
            ctx.begin_path();
            ctx.move_to(x1, y1);
            ctx.line_to(x1 - ux * hl - uy * hl * 0.5, y1 - uy * hl + ux * hl * 0.5);
            ctx.line_to(x1 - ux * hl + uy * hl * 0.5, y1 - uy * hl - ux * hl * 0.5);
            ctx.fill();
        }
        ctx.set_global_alpha(1.0);
        self.last_arrows = arrows;
    }

    /// The middle of `w`'s arrow in CSS pixels on the canvas (where a click picks it).
    pub fn arrow_mid(&self, w: &WakeRecord) -> Option<(f64, f64)> {
        let a = centre(self.layout.cpus.get(w.waker_cpu as usize)?);
        let b = centre(self.layout.cpus.get(w.cpu as usize)?);
        Some((
            (a.0 + b.0) / 2.0 * self.scale,
            (a.1 + b.1) / 2.0 * self.scale,
        ))
    }

    /// The wake-up whose arrow passes nearest the CSS-pixel point (x, y), within a
    /// few pixels, among those on screen in `frame`.
    pub fn hit(&self, player: &Player, frame: u64, x: f64, y: f64) -> Option<WakeRecord> {
        let (px, py) = (x / self.scale, y / self.scale);
        let reach = 8.0 / self.scale;
        let cpus = &self.layout.cpus;
        let mut best: Option<(f64, WakeRecord)> = None;
        for a in player.recent(super::play::ARROWS) {
            if frame.saturating_sub(a.born) >= ARROW_FRAMES {
                continue;
            }
            let (Some(from), Some(to)) = (
                cpus.get(a.wake.waker_cpu as usize),
                cpus.get(a.wake.cpu as usize),
            ) else {
                continue;
            };
            let d = seg_dist(centre(from), centre(to), (px, py));
            if d <= reach && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, a.wake));
            }
        }
        best.map(|(_, w)| w)
    }
}

fn centre(b: &[f64; 4]) -> (f64, f64) {
    (b[0] + b[2] / 2.0, b[1] + b[3] / 2.0)
}

/// Distance from `p` to the segment a–b.
fn seg_dist(a: (f64, f64), b: (f64, f64), p: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let l2 = dx * dx + dy * dy;
    let t = if l2 == 0.0 {
        0.0
    } else {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / l2).clamp(0.0, 1.0)
    };
    let (qx, qy) = (a.0 + t * dx - p.0, a.1 + t * dy - p.1);
    (qx * qx + qy * qy).sqrt()
}

/// The canvas's 2D context.
pub fn context(c: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    c.get_context("2d").ok().flatten()?.dyn_into().ok()
}

#[cfg(test)]
#[path = "draw_tests.rs"]
mod tests;
