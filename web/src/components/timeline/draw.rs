//! Painting the timeline on its canvas: the axis and grid, each side's header, the
//! gutter's labels, the tracks' slices (runs coloured by task, idle by C-state, forced
//! idle red; a collapsed group's CPUs overlaid), then the wake-up arrows over them
//! (coloured by distance; the hovered or selected one thicker), in the page's theme
//! colours.

use std::cell::RefCell;
use std::rc::Rc;

use schedlab_core::cost::Distance;
use schedlab_core::wakeup::WakePath;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::hit::Hit;
use super::layout::{cpu_y, gutter, Line, AXIS_H, GUTTER_MIN};
use super::{Props, Ui};
use crate::live::draw::REQUEUE_COLOUR;
use crate::state::sim_wake::side_name;
use crate::timeline::{fmt_tick, task_colour, tick_step, Row, Span};

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

/// Draws the canvas after every render, at the canvas' width on the page (kept in
/// `ui.width`, at least the gutter and 200 px).
#[hook]
pub(super) fn use_draw_each_render(
    canvas: NodeRef,
    ui: Rc<RefCell<Ui>>,
    lines: Rc<Vec<(Line, f64, f64)>>,
    props: Props,
) {
    use_effect(move || {
        if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
            let w = c
                .parent_element()
                .map_or(1000.0, |e| f64::from(e.client_width()));
            // As wide as its box, so that its 11 px text is drawn 11 px, with at
            // least 120 px of plot (the minimum was 200, 390 px in all: wider than
            // a phone's 329 px box, which shrank the canvas and its text to 9 px).
            let mut u = ui.borrow_mut();
            u.width = w.max(GUTTER_MIN + 120.0);
            u.gutter = gutter(u.width);
            drop(u);
            draw(&c, &props, &ui.borrow(), &lines);
        }
    });
}

/// `label` as it fits `room` px in the canvas' font: whole, or without its CPU list
/// ("▾ node 0 · LLC 0 (CPUs 0-31)" to "▾ node 0 · LLC 0"), or cut with an ellipsis.
/// With its width.
fn fit_label(cx: &CanvasRenderingContext2d, label: String, room: f64) -> (String, f64) {
    let width = |s: &str| cx.measure_text(s).map_or(0.0, |m| m.width());
    let w = width(&label);
    if w <= room {
        return (label, w);
    }
    let mut short = match label.find(" (CPUs") {
        Some(at) => label[..at].to_string(),
        None => label,
    };
    let mut w = width(&short);
    if w <= room {
        return (short, w);
    }
    while w > room && short.pop().is_some() {
        w = width(&format!("{short}\u{2026}"));
    }
    short.push('\u{2026}');
    (short, w)
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
    let gutter = ui.gutter;
    let plot_w = w - gutter;
    let v = ui.view;
    // Axis and grid.
    let step = tick_step(v.span(), plot_w);
    let mut t = (v.t0 / step).ceil() * step;
    cx.set_font("11px sans-serif");
    cx.set_text_baseline("middle");
    // A label centred on its tick, moved in to stay over the plot (the last one was cut
    // at the canvas' edge), and left out where it would meet the one before; each drawn
    // as "left-right" in CSS px, for the browser tests.
    let mut ticks = Vec::new();
    let mut last_right = f64::NEG_INFINITY;
    while t <= v.t1 {
        let x = gutter + v.x_of(t, plot_w);
        cx.set_fill_style_str(grid);
        cx.fill_rect(x, AXIS_H, 1.0, h - AXIS_H);
        let label = fmt_tick(t, step);
        let width = cx.measure_text(&label).map_or(0.0, |m| m.width());
        let left = (x - width / 2.0).clamp(gutter, (w - width - 2.0).max(gutter));
        if left >= last_right + 6.0 {
            cx.set_fill_style_str(fg);
            let _ = cx.fill_text(&label, left, AXIS_H / 2.0);
            ticks.push(format!("{left:.0}-{:.0}", left + width));
            last_right = left + width;
        }
        t += step;
    }
    let _ = canvas.set_attribute("data-ticks", &ticks.join(" "));
    let x_of = |t: u64| gutter + v.x_of(t as f64, plot_w);
    // The labels' rightmost end, for the browser tests (inside the column: whole).
    let mut label_right = 0.0f64;
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
                let x = 6.0 + 10.0 * f64::from(depth);
                let (label, width) = fit_label(&cx, label, gutter - 4.0 - x);
                let _ = cx.fill_text(&label, x, y + hgt / 2.0);
                label_right = label_right.max(x + width);
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
                        let (x0, x1) = (x_of(sl.start_ns).max(gutter), x_of(sl.end_ns).min(w));
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
    let _ = canvas.set_attribute("data-gutter", &format!("{gutter:.0}"));
    let _ = canvas.set_attribute("data-label-right", &format!("{label_right:.0}"));
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
            // A wake-list wakee arrives on its rq later (its IPI): the arrow slants to
            // that instant.
            let x_end = x_of(s.built.arrivals.get(k).copied().unwrap_or(*at)) + 3.0;
            let sel = ui.selected == Some((i, k))
                || matches!(&ui.hover, Some((_, _, Hit::Wake(hi, hat, hw))) if *hi == i && *hat == *at && hw.seq == wr.seq);
            let colour = if wr.path == WakePath::Requeue {
                REQUEUE_COLOUR
            } else {
                distance_colour(wr.dist)
            };
            cx.set_stroke_style_str(colour);
            cx.set_line_width(if sel { 3.0 } else { 1.0 });
            cx.begin_path();
            cx.move_to(x, *ya);
            let dir = if yb >= ya { 1.0 } else { -1.0 };
            let tip = if (yb - ya).abs() < 1.0 { ya + 5.0 } else { *yb };
            cx.line_to(x_end, tip);
            cx.stroke();
            // Head.
            cx.begin_path();
            cx.move_to(x_end, tip);
            cx.line_to(x_end - 2.5, tip - 4.0 * dir);
            cx.line_to(x_end + 2.5, tip - 4.0 * dir);
            cx.close_path();
            cx.set_fill_style_str(colour);
            cx.fill();
        }
    }
    Some(())
}
