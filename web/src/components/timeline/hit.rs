//! What is under the pointer: a wake-up arrow (within 4 px), a CPU's slice, or a
//! group's name in the gutter; and the tip that says it in words (also the keyboard
//! selection's text).

use schedlab_core::sim::record::WakeRecord;

use super::layout::{cpu_y, Line};
use super::{Props, Ui};
use crate::state::sim_wake::side_name;
use crate::timeline::{fmt_time, slice_at, GroupKey, Row, Slice, Span};

/// What is under the pointer.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Hit {
    Wake(usize, u64, WakeRecord),
    Slice(usize, u32, Slice),
    /// A group's name (whole, as the gutter may shorten it).
    Group(GroupKey, String),
}

pub(super) fn hit_test(
    p: &Props,
    ui: &Ui,
    lines: &[(Line, f64, f64)],
    x: f64,
    y: f64,
) -> Option<Hit> {
    let gutter = ui.gutter;
    let plot_w = ui.width - gutter;
    let (l, ly, _) = lines.iter().find(|(_, ly, h)| y >= *ly && y < ly + h)?;
    if x < gutter {
        return match l {
            Line::Row(_, Row::Group { key, label, .. }) => Some(Hit::Group(*key, label.clone())),
            _ => None,
        };
    }
    let i = match l {
        Line::Side(i) | Line::Row(i, _) => *i,
    };
    let s = p.sides.get(i)?;
    let t = ui.view.time_at(x - gutter, plot_w);
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
        let dx = (ui.view.x_of(*at as f64, plot_w) + gutter - x).abs();
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

pub(super) fn hit_text(p: &Props, h: &Hit) -> String {
    match h {
        Hit::Wake(i, at, w) => {
            let s = &p.sides[*i];
            let waker = crate::live::waker_text(w.waker);
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
        Hit::Group(_, label) => format!("{label}: click to collapse or expand this group"),
    }
}

/// The tip for what is under the pointer: its style (beside the pointer, kept on
/// the canvas) and its text; both empty with nothing under it.
pub(super) fn tip(p: &Props, u: &Ui) -> (String, String) {
    match u.hover.as_ref() {
        Some((x, y, h)) => (
            format!(
                "left: {}px; top: {}px",
                (x + 14.0).min(u.width - 320.0).max(0.0),
                y + 14.0
            ),
            hit_text(p, h),
        ),
        None => (String::new(), String::new()),
    }
}

/// The text of the wake-up the keyboard selected, if any.
pub(super) fn selected_text(p: &Props, u: &Ui) -> Option<String> {
    u.selected.and_then(|(i, k)| {
        let s = p.sides.get(i)?;
        let (at, w) = s.built.arrows.get(k)?;
        Some(hit_text(p, &Hit::Wake(i, *at, *w)))
    })
}

/// Where the selected arrow is drawn (`x,y` in CSS px in the canvas) and what it
/// chose: its wake-up number, the chosen CPU and its side. The browser tests click
/// there.
pub(super) fn selected_at(
    p: &Props,
    u: &Ui,
    lines: &[(Line, f64, f64)],
) -> Option<(String, u32, u16, usize)> {
    u.selected.and_then(|(i, k)| {
        let (at, w) = p.sides.get(i)?.built.arrows.get(k)?;
        let ys = cpu_y(lines, i, p.machine.cpus.len());
        let ya = (*ys.get(usize::from(w.waker_cpu))?)?;
        let yb = (*ys.get(usize::from(w.cpu))?)?;
        let x = u.gutter + u.view.x_of(*at as f64, u.width - u.gutter) + 1.5;
        Some((format!("{x:.1},{:.1}", (ya + yb) / 2.0), w.seq, w.cpu, i))
    })
}
