//! The timeline: one track per CPU, grouped by node, LLC and cluster (collapsible),
//! A above B on one time axis, drawn on a canvas as Perfetto draws a trace: runs as
//! bars coloured by task, idle shaded by C-state, forced idle hatched red, wake-ups as
//! flow arrows from the waker's CPU to the chosen CPU (coloured by distance).
//!
//! ```text
//!  ┌ gutter ──────────────┬ plot ─────────────────────────────── axis: ms ┐
//!  │ A v6.6 · seed 1      │                                               │
//!  │ ▾ node 0 · LLC 0     │ ░░░ (collapsed groups: their CPUs overlaid)    │
//!  │   ▾ cluster 0        │                                               │
//!  │       CPU 0          │ ███task 3███░idle C1░░│↓███task 5████          │
//!  │ B v6.6+cluster …     │                                               │
//!  └──────────────────────┴───────────────────────────────────────────────┘
//! ```
//!
//! Mouse: the wheel zooms about the pointer (shift+wheel pans), a drag pans, hovering
//! shows the slice or wake-up under the pointer, a click on a wake-up arrow opens it
//! in the Wake-up tab (`Action::OpenSimWake`), a click on a group's name collapses or
//! expands it (on both sides, so A and B stay row for row). Keyboard (the canvas takes focus): `+`/`-` zoom, `←`/`→` pan, `0`
//! shows the whole window, `]`/`[` select the next/previous wake-up in view (the first
//! press, the one nearest the middle) and `Enter` opens it. The model (rows, slices, the axis) is `crate::timeline`.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;

use schedlab_core::cost::Distance;
use schedlab_core::sim::record::{WakeRecord, NO_TASK};
use schedlab_core::topology::Machine;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use crate::state::sim_wake::side_name;
use crate::state::{Action, AppContext, Side, SimWakeRef};
use crate::timeline::{
    fmt_time, rows, slice_at, task_colour, tick_step, Built, GroupKey, Row, Slice, Span, View,
};

const GUTTER: f64 = 190.0;
const AXIS_H: f64 = 22.0;
const SIDE_H: f64 = 20.0;
const GROUP_H: f64 = 15.0;
const CPU_H: f64 = 11.0;

/// One side's recorded window, ready to draw.
#[derive(Debug)]
pub struct SideWindow {
    pub side: Side,
    pub seed: u64,
    /// Its patch set.
    pub label: String,
    pub built: Built,
    pub window_ns: (u64, u64),
    pub workload_tasks: u32,
    pub truncated: bool,
    /// The sweep point it was recorded at, as a `SimWakeRef` names it (`None`: the
    /// watched scale, `use_run::scale_ref`): its wake-ups open in the Wake-up tab
    /// captured at that point.
    pub scale: Option<u32>,
}

impl SideWindow {
    fn background(&self, t: u32) -> bool {
        t >= self.workload_tasks
    }
}

#[derive(Properties)]
pub struct Props {
    pub sides: Vec<Rc<SideWindow>>,
    pub machine: Arc<Machine>,
    /// The run's CPUs, sorted.
    pub cpus: Rc<Vec<u32>>,
}

impl PartialEq for Props {
    fn eq(&self, o: &Self) -> bool {
        self.sides.len() == o.sides.len()
            && self
                .sides
                .iter()
                .zip(&o.sides)
                .all(|(a, b)| Rc::ptr_eq(a, b))
            && Arc::ptr_eq(&self.machine, &o.machine)
            && Rc::ptr_eq(&self.cpus, &o.cpus)
    }
}

/// A laid-out row: which side, what, where.
#[derive(Clone, Debug)]
enum Line {
    Side(usize),
    Row(usize, Row),
}

fn layout(
    sides: &[Rc<SideWindow>],
    m: &Machine,
    cpus: &[u32],
    collapsed: &BTreeSet<GroupKey>,
) -> Vec<(Line, f64, f64)> {
    let mut out = Vec::new();
    let mut y = AXIS_H;
    for (i, _) in sides.iter().enumerate() {
        out.push((Line::Side(i), y, SIDE_H));
        y += SIDE_H;
        for r in rows(m, cpus, collapsed) {
            let h = match r {
                Row::Group { .. } => GROUP_H,
                Row::Cpu { .. } => CPU_H,
            };
            out.push((Line::Row(i, r), y, h));
            y += h;
        }
    }
    out
}

/// Where each CPU of side `i` is drawn: its row's middle, or its collapsed group's.
fn cpu_y(lines: &[(Line, f64, f64)], i: usize, n: usize) -> Vec<Option<f64>> {
    let mut ys = vec![None; n];
    for (l, y, h) in lines {
        match l {
            Line::Row(s, Row::Cpu { cpu, .. }) if *s == i => {
                if let Some(v) = ys.get_mut(*cpu as usize) {
                    *v = Some(y + h / 2.0);
                }
            }
            Line::Row(
                s,
                Row::Group {
                    cpus,
                    collapsed: true,
                    ..
                },
            ) if *s == i => {
                for &c in cpus {
                    if let Some(v) = ys.get_mut(c as usize) {
                        *v = Some(y + h / 2.0);
                    }
                }
            }
            _ => {}
        }
    }
    ys
}

/// Colours by distance, as the live drawing uses them.
pub fn distance_colour(d: Distance) -> &'static str {
    match d {
        Distance::SameCpu => "#2e7d32",
        Distance::SameCore => "#43a047",
        Distance::SameCluster => "#1e88e5",
        Distance::SameLlc => "#8e24aa",
        Distance::OtherLlc => "#f4511e",
        Distance::OtherNode => "#c62828",
    }
}

fn idle_fill(cstate: u8) -> String {
    let a = 0.22 + 0.12 * f64::from(cstate.min(5));
    format!("rgba(110, 120, 140, {a:.2})")
}

/// The window all sides share: from the earliest start to the latest end.
fn bounds(sides: &[Rc<SideWindow>]) -> (f64, f64) {
    let lo = sides.iter().map(|s| s.window_ns.0).min().unwrap_or(0) as f64;
    let hi = sides.iter().map(|s| s.window_ns.1).max().unwrap_or(1) as f64;
    (lo, hi.max(lo + 1.0))
}

/// What is under the pointer.
#[derive(Clone, Debug, PartialEq)]
enum Hit {
    Wake(usize, u64, WakeRecord),
    Slice(usize, u32, Slice),
    Group(GroupKey),
}

struct Ui {
    view: View,
    collapsed: BTreeSet<GroupKey>,
    drag: Option<(f64, View, bool)>,
    hover: Option<(f64, f64, Hit)>,
    /// The wake-up selected by keyboard: (side, index into its arrows).
    selected: Option<(usize, usize)>,
    width: f64,
    /// The window the view stays inside (ns).
    bounds: (f64, f64),
}

fn hit_test(p: &Props, ui: &Ui, lines: &[(Line, f64, f64)], x: f64, y: f64) -> Option<Hit> {
    let plot_w = ui.width - GUTTER;
    let (l, ly, _) = lines.iter().find(|(_, ly, h)| y >= *ly && y < ly + h)?;
    if x < GUTTER {
        return match l {
            Line::Row(_, Row::Group { key, .. }) => Some(Hit::Group(*key)),
            _ => None,
        };
    }
    let i = match l {
        Line::Side(i) | Line::Row(i, _) => *i,
    };
    let s = p.sides.get(i)?;
    let t = ui.view.time_at(x - GUTTER, plot_w);
    // A wake-up arrow within 4 px whose span covers y.
    let ys = cpu_y(lines, i, p.machine.cpus.len());
    let tol = 4.0 / plot_w * ui.view.span();
    let lo = s
        .built
        .arrows
        .partition_point(|(at, _)| (*at as f64) < t - tol);
    let mut best: Option<(f64, usize)> = None;
    for (k, (at, w)) in s.built.arrows.iter().enumerate().skip(lo) {
        if *at as f64 > t + tol {
            break;
        }
        let (Some(Some(a)), Some(Some(b))) =
            (ys.get(usize::from(w.waker_cpu)), ys.get(usize::from(w.cpu)))
        else {
            continue;
        };
        let (top, bot) = (a.min(*b) - 4.0, a.max(*b) + 4.0);
        let dx = (ui.view.x_of(*at as f64, plot_w) + GUTTER - x).abs();
        if y >= top && y <= bot && best.is_none_or(|(d, _)| dx < d) {
            best = Some((dx, k));
        }
    }
    if let Some((_, k)) = best {
        let (at, w) = s.built.arrows[k];
        return Some(Hit::Wake(i, at, w));
    }
    if let Line::Row(_, Row::Cpu { cpu, .. }) = l {
        let _ = ly;
        let track = s.built.tracks.get(*cpu as usize)?;
        return slice_at(track, t).map(|sl| Hit::Slice(i, *cpu, *sl));
    }
    None
}

fn hit_text(p: &Props, h: &Hit) -> String {
    match h {
        Hit::Wake(i, at, w) => {
            let s = &p.sides[*i];
            let waker = if w.waker == NO_TASK {
                "an interrupt".to_string()
            } else {
                format!("task {}", w.waker)
            };
            format!(
                "wake-up #{} ({} v{}) at {}: task {} woken by {waker} on CPU {}, prev CPU {} → CPU {} ({}, {}, {}, {} CPUs probed). Click to explain it.",
                w.seq,
                side_name(s.side),
                s.label,
                fmt_time(*at as f64, 1.0),
                w.wakee,
                w.waker_cpu,
                w.prev_cpu,
                w.cpu,
                w.path.as_str(),
                w.dist.name(),
                w.queue.as_str(),
                w.probed
            )
        }
        Hit::Slice(i, cpu, sl) => {
            let s = &p.sides[*i];
            let what = match sl.span {
                Span::Task(t) if s.background(t) => format!("background task {t}"),
                Span::Task(t) => format!("task {t}"),
                Span::Idle(c) => format!("idle in C{c}"),
                Span::Forced => "forced idle (core scheduling)".to_string(),
            };
            let dur = sl.end_ns.saturating_sub(sl.start_ns);
            format!(
                "{} CPU {cpu}: {what}, {} – {} ({:.1} µs)",
                side_name(s.side),
                fmt_time(sl.start_ns as f64, 1.0),
                fmt_time(sl.end_ns as f64, 1.0),
                dur as f64 / 1e3
            )
        }
        Hit::Group(_) => "click to collapse or expand this group".to_string(),
    }
}

fn draw(canvas: &HtmlCanvasElement, p: &Props, ui: &Ui, lines: &[(Line, f64, f64)]) -> Option<()> {
    let dpr = web_sys::window()
        .map_or(1.0, |w| w.device_pixel_ratio())
        .max(1.0);
    let w = ui.width;
    let h = lines.last().map_or(AXIS_H, |(_, y, h)| y + h) + 4.0;
    canvas.set_width((w * dpr) as u32);
    canvas.set_height((h * dpr) as u32);
    let _ = canvas.style().set_property("height", &format!("{h}px"));
    let cx: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    let _ = cx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    // The page's theme colours (light or dark), from its CSS variables.
    let css = web_sys::window().and_then(|w| w.get_computed_style(canvas).ok().flatten());
    let var = |name: &str, or: &str| {
        css.as_ref()
            .and_then(|c| c.get_property_value(name).ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| or.to_string())
    };
    let (fg, bg, grid, head) = (
        var("--fg", "#1d232b"),
        var("--panel", "#ffffff"),
        var("--line", "#d5dae1"),
        var("--accent-bg", "#e3edfb"),
    );
    let (fg, bg, grid) = (fg.as_str(), bg.as_str(), grid.as_str());
    cx.set_fill_style_str(bg);
    cx.fill_rect(0.0, 0.0, w, h);
    let plot_w = w - GUTTER;
    let v = ui.view;
    // Axis and grid.
    let step = tick_step(v.span());
    let mut t = (v.t0 / step).ceil() * step;
    cx.set_font("11px sans-serif");
    cx.set_text_baseline("middle");
    while t <= v.t1 {
        let x = GUTTER + v.x_of(t, plot_w);
        cx.set_fill_style_str(grid);
        cx.fill_rect(x, AXIS_H, 1.0, h - AXIS_H);
        cx.set_fill_style_str(fg);
        let _ = cx.fill_text(&fmt_time(t, v.span()), x + 2.0, AXIS_H / 2.0);
        t += step;
    }
    let x_of = |t: u64| GUTTER + v.x_of(t as f64, plot_w);
    for (l, y, hgt) in lines {
        match l {
            Line::Side(i) => {
                let s = &p.sides[*i];
                cx.set_fill_style_str(&head);
                cx.fill_rect(0.0, *y, w, *hgt);
                cx.set_fill_style_str(fg);
                cx.set_font("bold 12px sans-serif");
                let _ = cx.fill_text(
                    &format!(
                        "{}: v{} · seed {} · {} wake-ups{}",
                        side_name(s.side),
                        s.label,
                        s.seed,
                        s.built.arrows.len(),
                        if s.truncated { " (cut at the cap)" } else { "" }
                    ),
                    6.0,
                    y + hgt / 2.0,
                );
                cx.set_font("11px sans-serif");
            }
            Line::Row(i, r) => {
                let s = &p.sides[*i];
                let (label, depth, members): (String, u8, Vec<u32>) = match r {
                    Row::Group {
                        label,
                        depth,
                        cpus,
                        collapsed,
                        ..
                    } => (
                        format!("{} {label}", if *collapsed { "▸" } else { "▾" }),
                        *depth,
                        if *collapsed { cpus.clone() } else { Vec::new() },
                    ),
                    Row::Cpu { cpu, depth } => (format!("CPU {cpu}"), *depth, vec![*cpu]),
                };
                cx.set_fill_style_str(fg);
                cx.save();
                cx.begin_path();
                cx.rect(0.0, *y, GUTTER - 4.0, *hgt);
                cx.clip();
                let _ = cx.fill_text(&label, 6.0 + 10.0 * f64::from(depth), y + hgt / 2.0);
                cx.restore();
                let alpha = if members.len() > 1 {
                    (1.5 / members.len() as f64).clamp(0.08, 1.0)
                } else {
                    1.0
                };
                cx.set_global_alpha(alpha);
                for c in members {
                    let Some(track) = s.built.tracks.get(c as usize) else {
                        continue;
                    };
                    let first = track.partition_point(|sl| (sl.end_ns as f64) < v.t0);
                    let mut last_px = f64::NEG_INFINITY;
                    for sl in &track[first..] {
                        if sl.start_ns as f64 > v.t1 {
                            break;
                        }
                        let (x0, x1) = (x_of(sl.start_ns).max(GUTTER), x_of(sl.end_ns).min(w));
                        if x1 < last_px + 0.5 && (x1 - x0) < 0.5 {
                            continue;
                        }
                        last_px = x1;
                        let fill = match sl.span {
                            Span::Task(t) => task_colour(t, s.background(t)),
                            Span::Idle(c) => idle_fill(c),
                            Span::Forced => "rgba(211, 47, 47, 0.45)".to_string(),
                        };
                        cx.set_fill_style_str(&fill);
                        cx.fill_rect(x0, y + 1.0, (x1 - x0).max(1.0), hgt - 2.0);
                    }
                }
                cx.set_global_alpha(1.0);
            }
        }
    }
    // Wake-up arrows over the tracks.
    for (i, s) in p.sides.iter().enumerate() {
        let ys = cpu_y(lines, i, p.machine.cpus.len());
        let first = s
            .built
            .arrows
            .partition_point(|(at, _)| (*at as f64) < v.t0);
        for (k, (at, wr)) in s.built.arrows.iter().enumerate().skip(first) {
            if *at as f64 > v.t1 {
                break;
            }
            let (Some(Some(ya)), Some(Some(yb))) = (
                ys.get(usize::from(wr.waker_cpu)),
                ys.get(usize::from(wr.cpu)),
            ) else {
                continue;
            };
            let x = x_of(*at);
            let sel = ui.selected == Some((i, k))
                || matches!(&ui.hover, Some((_, _, Hit::Wake(hi, hat, hw))) if *hi == i && *hat == *at && hw.seq == wr.seq);
            cx.set_stroke_style_str(distance_colour(wr.dist));
            cx.set_line_width(if sel { 3.0 } else { 1.0 });
            cx.begin_path();
            cx.move_to(x, *ya);
            let dir = if yb >= ya { 1.0 } else { -1.0 };
            let tip = if (yb - ya).abs() < 1.0 { ya + 5.0 } else { *yb };
            cx.line_to(x + 3.0, tip);
            cx.stroke();
            // Head.
            cx.begin_path();
            cx.move_to(x + 3.0, tip);
            cx.line_to(x + 0.5, tip - 4.0 * dir);
            cx.line_to(x + 5.5, tip - 4.0 * dir);
            cx.close_path();
            cx.set_fill_style_str(distance_colour(wr.dist));
            cx.fill();
        }
    }
    Some(())
}

type WheelListener = Closure<dyn FnMut(web_sys::WheelEvent)>;

#[function_component(Timeline)]
pub fn timeline(p: &Props) -> Html {
    let canvas = use_node_ref();
    let redraw = use_force_update();
    let (lo, hi) = bounds(&p.sides);
    let ui = use_mut_ref(|| Ui {
        view: View { t0: lo, t1: hi },
        collapsed: BTreeSet::new(),
        drag: None,
        hover: None,
        selected: None,
        width: 1000.0,
        bounds: (lo, hi),
    });
    // New windows: show all of them.
    {
        let ui = ui.clone();
        use_effect_with((lo.to_bits(), hi.to_bits()), move |_| {
            let mut u = ui.borrow_mut();
            u.view = View { t0: lo, t1: hi };
            u.selected = None;
            u.hover = None;
        });
    }
    let lines = Rc::new(layout(
        &p.sides,
        &p.machine,
        &p.cpus,
        &ui.borrow().collapsed,
    ));
    let state = use_context::<AppContext>();
    // Draw after every render, at the canvas' width on the page.
    {
        let (canvas, ui, lines) = (canvas.clone(), ui.clone(), lines.clone());
        let props = Props {
            sides: p.sides.clone(),
            machine: p.machine.clone(),
            cpus: p.cpus.clone(),
        };
        use_effect(move || {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                let w = c
                    .parent_element()
                    .map_or(1000.0, |e| f64::from(e.client_width()));
                ui.borrow_mut().width = w.max(GUTTER + 200.0);
                draw(&c, &props, &ui.borrow(), &lines);
            }
        });
    }
    // The wheel, registered by hand: Yew's own wheel listener is passive, and zooming
    // must keep the page from scrolling.
    {
        let (canvas, ui, redraw) = (canvas.clone(), ui.clone(), redraw.clone());
        use_effect_with((), move |_| {
            let held: Rc<RefCell<Option<WheelListener>>> = Rc::default();
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                let f = Closure::<dyn FnMut(web_sys::WheelEvent)>::new(
                    move |e: web_sys::WheelEvent| {
                        e.prevent_default();
                        let mut u = ui.borrow_mut();
                        let x = f64::from(e.offset_x()) - GUTTER;
                        let plot_w = u.width - GUTTER;
                        let (lo, hi) = u.bounds;
                        if e.shift_key() || e.delta_x().abs() > e.delta_y().abs() {
                            let d = if e.delta_x().abs() > e.delta_y().abs() {
                                e.delta_x()
                            } else {
                                e.delta_y()
                            };
                            u.view = u.view.pan(d / plot_w * u.view.span(), lo, hi);
                        } else {
                            let at = u.view.time_at(x.max(0.0), plot_w);
                            u.view = u.view.zoom((e.delta_y() * 0.002).exp(), at, lo, hi);
                        }
                        drop(u);
                        redraw.force_update();
                    },
                );
                let opts = web_sys::AddEventListenerOptions::new();
                opts.set_passive(false);
                let _ = c.add_event_listener_with_callback_and_add_event_listener_options(
                    "wheel",
                    f.as_ref().unchecked_ref(),
                    &opts,
                );
                *held.borrow_mut() = Some(f);
            }
            move || {
                if let (Some(c), Some(f)) =
                    (canvas.cast::<HtmlCanvasElement>(), held.borrow_mut().take())
                {
                    let _ =
                        c.remove_event_listener_with_callback("wheel", f.as_ref().unchecked_ref());
                }
            }
        });
    }
    ui.borrow_mut().bounds = (lo, hi);

    let open_wake = {
        let state = state.clone();
        let sides = p.sides.clone();
        move |i: usize, w: &WakeRecord| {
            if let (Some(st), Some(s)) = (&state, sides.get(i)) {
                st.dispatch(Action::OpenSimWake(SimWakeRef {
                    side: s.side,
                    seed: s.seed,
                    wake: w.seq,
                    scale: s.scale,
                }));
            }
        }
    };
    let props_now = Rc::new(Props {
        sides: p.sides.clone(),
        machine: p.machine.clone(),
        cpus: p.cpus.clone(),
    });
    let onmousedown = {
        let ui = ui.clone();
        Callback::from(move |e: MouseEvent| {
            let mut u = ui.borrow_mut();
            u.drag = Some((f64::from(e.offset_x()), u.view, false));
        })
    };
    let onmousemove = {
        let (ui, redraw, lines, pn) =
            (ui.clone(), redraw.clone(), lines.clone(), props_now.clone());
        Callback::from(move |e: MouseEvent| {
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            let mut u = ui.borrow_mut();
            if let Some((x0, v0, moved)) = u.drag {
                if e.buttons() & 1 == 1 {
                    let dx = x - x0;
                    if moved || dx.abs() > 3.0 {
                        let (lo, hi) = u.bounds;
                        let plot_w = u.width - GUTTER;
                        u.view = v0.pan(-dx / plot_w * v0.span(), lo, hi);
                        u.drag = Some((x0, v0, true));
                        u.hover = None;
                        drop(u);
                        redraw.force_update();
                        return;
                    }
                } else {
                    u.drag = None;
                }
            }
            let h = hit_test(&pn, &u, &lines, x, y).map(|h| (x, y, h));
            if h != u.hover {
                u.hover = h;
                drop(u);
                redraw.force_update();
            }
        })
    };
    let onmouseup = {
        let (ui, redraw, lines, pn, open_wake) = (
            ui.clone(),
            redraw.clone(),
            lines.clone(),
            props_now.clone(),
            open_wake.clone(),
        );
        Callback::from(move |e: MouseEvent| {
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            let mut u = ui.borrow_mut();
            let dragged = u.drag.take().is_some_and(|d| d.2);
            if dragged {
                return;
            }
            match hit_test(&pn, &u, &lines, x, y) {
                Some(Hit::Wake(i, _, w)) => {
                    drop(u);
                    open_wake(i, &w);
                }
                Some(Hit::Group(k)) => {
                    if !u.collapsed.remove(&k) {
                        u.collapsed.insert(k);
                    }
                    drop(u);
                    redraw.force_update();
                }
                _ => {}
            }
        })
    };
    let onmouseleave = {
        let (ui, redraw) = (ui.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let mut u = ui.borrow_mut();
            u.drag = None;
            if u.hover.take().is_some() {
                drop(u);
                redraw.force_update();
            }
        })
    };
    let onkeydown = {
        let (ui, redraw, pn, open_wake) = (
            ui.clone(),
            redraw.clone(),
            props_now.clone(),
            open_wake.clone(),
        );
        Callback::from(move |e: KeyboardEvent| {
            let mut u = ui.borrow_mut();
            let (lo, hi) = u.bounds;
            let mid = (u.view.t0 + u.view.t1) / 2.0;
            let span = u.view.span();
            // Wake-ups in view, A's then B's.
            let in_view = |u: &Ui| -> Vec<(usize, usize)> {
                pn.sides
                    .iter()
                    .enumerate()
                    .flat_map(|(i, s)| {
                        s.built
                            .arrows
                            .iter()
                            .enumerate()
                            .filter(|(_, (at, _))| {
                                (*at as f64) >= u.view.t0 && (*at as f64) <= u.view.t1
                            })
                            .map(move |(k, _)| (i, k))
                    })
                    .collect()
            };
            match e.key().as_str() {
                "+" | "=" => u.view = u.view.zoom(0.5, mid, lo, hi),
                "-" | "_" => u.view = u.view.zoom(2.0, mid, lo, hi),
                "ArrowLeft" => u.view = u.view.pan(-0.2 * span, lo, hi),
                "ArrowRight" => u.view = u.view.pan(0.2 * span, lo, hi),
                "0" | "Home" => u.view = View { t0: lo, t1: hi },
                "]" | "[" => {
                    let all = in_view(&u);
                    let at = u.selected.and_then(|s| all.iter().position(|x| *x == s));
                    // Nothing selected in view yet: the wake-up nearest the middle.
                    let near_mid = || {
                        (0..all.len()).min_by_key(|&j| {
                            let (i, k) = all[j];
                            let at = pn.sides[i].built.arrows[k].0 as f64;
                            (at - mid).abs() as u64
                        })
                    };
                    let next = match (e.key().as_str(), at) {
                        ("]", Some(k)) => (k + 1).min(all.len().saturating_sub(1)),
                        ("[", Some(k)) => k.saturating_sub(1),
                        _ => near_mid().unwrap_or(0),
                    };
                    u.selected = all.get(next).copied();
                }
                "Enter" => {
                    if let Some((i, k)) = u.selected {
                        if let Some((_, w)) = pn.sides.get(i).and_then(|s| s.built.arrows.get(k)) {
                            let w = *w;
                            drop(u);
                            open_wake(i, &w);
                            return;
                        }
                    }
                    return;
                }
                _ => return,
            }
            e.prevent_default();
            drop(u);
            redraw.force_update();
        })
    };
    let u = ui.borrow();
    // Always in the DOM (hidden when nothing is under the pointer): Yew matches
    // unkeyed children from the end, so a tip appearing after the canvas would make
    // it a new canvas.
    let (tip_style, tip_text) = match u.hover.as_ref() {
        Some((x, y, h)) => (
            format!(
                "left: {}px; top: {}px",
                (x + 14.0).min(u.width - 320.0).max(0.0),
                y + 14.0
            ),
            hit_text(p, h),
        ),
        None => (String::new(), String::new()),
    };
    let selected = u.selected.and_then(|(i, k)| {
        let s = p.sides.get(i)?;
        let (at, w) = s.built.arrows.get(k)?;
        Some(hit_text(p, &Hit::Wake(i, *at, *w)))
    });
    // Where the selected arrow is drawn (CSS px in the canvas) and what it chose: the
    // browser tests click there.
    let selected_at = u.selected.and_then(|(i, k)| {
        let (at, w) = p.sides.get(i)?.built.arrows.get(k)?;
        let ys = cpu_y(&lines, i, p.machine.cpus.len());
        let ya = (*ys.get(usize::from(w.waker_cpu))?)?;
        let yb = (*ys.get(usize::from(w.cpu))?)?;
        let x = GUTTER + u.view.x_of(*at as f64, u.width - GUTTER) + 1.5;
        Some((format!("{x:.1},{:.1}", (ya + yb) / 2.0), w.seq, w.cpu, i))
    });
    let span = u.view.span();
    let shown = format!(
        "{} to {} shown",
        fmt_time(u.view.t0, span),
        fmt_time(u.view.t1, span)
    );
    html! {
        <div class="timeline">
            <p class="timeline-keys" id="timeline-keys">
                { "Wheel or + / − zoom; drag or ← / → pan; 0 shows the whole window; [ and ] pick a wake-up (first the middle one), Enter explains it; click an arrow to explain that wake-up, a group's name to fold it. " }
                <span class="timeline-shown">{ shown }</span>
            </p>
            <div class="timeline-canvas">
                <canvas ref={canvas} tabindex="0" role="img"
                    aria-label="Timeline: one track per CPU, side A above side B; wake-ups are arrows from the waker's CPU to the chosen CPU"
                    aria-describedby="timeline-keys"
                    data-wakeups={p.sides.iter().map(|s| s.built.arrows.len().to_string()).collect::<Vec<_>>().join(",")}
                    data-view={format!("{:.0},{:.0}", u.view.t0, u.view.t1)}
                    data-selected-xy={selected_at.as_ref().map(|s| s.0.clone())}
                    data-selected-wake={selected_at.as_ref().map(|s| s.1.to_string())}
                    data-selected-cpu={selected_at.as_ref().map(|s| s.2.to_string())}
                    data-selected-side={selected_at.as_ref().map(|s| side_name(p.sides[s.3].side).to_ascii_lowercase())}
                    {onmousedown} {onmousemove} {onmouseup} {onmouseleave} {onkeydown} />
                <div class="timeline-tip" style={tip_style} hidden={u.hover.is_none()}>{ tip_text }</div>
            </div>
            <p class="timeline-selected" aria-live="polite">{ selected.unwrap_or_default() }</p>
            <ul class="legend timeline-legend">
                { for [Distance::SameCpu, Distance::SameCore, Distance::SameCluster, Distance::SameLlc, Distance::OtherLlc, Distance::OtherNode].into_iter().map(|d| html! {
                    <li><span class="swatch" style={format!("background: {}", distance_colour(d))}></span>{ d.name() }</li>
                }) }
                <li><span class="swatch idle-swatch"></span>{ "idle (darker: deeper C-state)" }</li>
                <li><span class="swatch forced-swatch"></span>{ "forced idle" }</li>
            </ul>
        </div>
    }
}
