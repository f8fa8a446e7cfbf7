//! The timeline's wheel, pointer and keyboard, apart from the component that wires
//! them: the wheel's listener (registered by hand), a drag or a hover, a click, and
//! what each key does to the view and the selection.

use std::cell::RefCell;
use std::rc::Rc;

use schedlab_core::sim::record::WakeRecord;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use super::hit::{hit_test, Hit};
use super::layout::Line;
use super::{Props, SideWindow, Ui};
use crate::timeline::{GroupKey, View};

type WheelListener = Closure<dyn FnMut(web_sys::WheelEvent)>;

/// The wheel on `canvas`: zoom about the pointer, pan with shift or a sideways
/// wheel. Registered by hand: Yew's own wheel listener is passive, and zooming must
/// keep the page from scrolling. Removed when the component goes.
#[hook]
pub(super) fn use_wheel_zoom(canvas: NodeRef, ui: Rc<RefCell<Ui>>, redraw: UseForceUpdateHandle) {
    use_effect_with((), move |_| {
        let held: Rc<RefCell<Option<WheelListener>>> = Rc::default();
        if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
            let f =
                Closure::<dyn FnMut(web_sys::WheelEvent)>::new(move |e: web_sys::WheelEvent| {
                    e.prevent_default();
                    let mut u = ui.borrow_mut();
                    let x = f64::from(e.offset_x()) - u.gutter;
                    let plot_w = u.width - u.gutter;
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
                });
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
                let _ = c.remove_event_listener_with_callback("wheel", f.as_ref().unchecked_ref());
            }
        }
    });
}

/// The pointer moved to (`x`, `y`), the left button down or not: a drag pans the
/// view once it has moved more than 3 px (and drops the hover), a release ends it;
/// otherwise the hover follows what is under the pointer. Whether to redraw.
pub(super) fn on_move(
    u: &mut Ui,
    p: &Props,
    lines: &[(Line, f64, f64)],
    (x, y): (f64, f64),
    left_down: bool,
) -> bool {
    if let Some((x0, v0, moved)) = u.drag {
        if left_down {
            let dx = x - x0;
            if moved || dx.abs() > 3.0 {
                let (lo, hi) = u.bounds;
                let plot_w = u.width - u.gutter;
                u.view = v0.pan(-dx / plot_w * v0.span(), lo, hi);
                u.drag = Some((x0, v0, true));
                u.hover = None;
                return true;
            }
        } else {
            u.drag = None;
        }
    }
    let h = hit_test(p, u, lines, x, y).map(|h| (x, y, h));
    if h != u.hover {
        u.hover = h;
        return true;
    }
    false
}

/// What a click (a release that ended no drag) or a key asks of the component.
pub(super) enum Ask {
    Nothing,
    Redraw,
    /// Open side `.0`'s wake-up `.1` in the Wake-up tab.
    Open(usize, WakeRecord),
}

/// A release at (`x`, `y`): after a drag, nothing; on a wake-up arrow, open it; on a
/// group's name, fold or unfold the group.
pub(super) fn on_click(
    u: &mut Ui,
    p: &Props,
    lines: &[(Line, f64, f64)],
    (x, y): (f64, f64),
) -> Ask {
    let dragged = u.drag.take().is_some_and(|d| d.2);
    if dragged {
        return Ask::Nothing;
    }
    match hit_test(p, u, lines, x, y) {
        Some(Hit::Wake(i, _, w)) => Ask::Open(i, w),
        Some(Hit::Group(k, _)) => {
            toggle(&mut u.collapsed, k);
            Ask::Redraw
        }
        _ => Ask::Nothing,
    }
}

/// Folds group `k` if it is open, else opens it.
fn toggle(collapsed: &mut std::collections::BTreeSet<GroupKey>, k: GroupKey) {
    if !collapsed.remove(&k) {
        collapsed.insert(k);
    }
}

/// Key `key` on the canvas: `+`/`-` zoom about the middle, `←`/`→` pan a fifth,
/// `0`/Home show the whole window, `]`/`[` select the next/previous wake-up in
/// view (the first press, the one nearest the middle), Enter opens the selected
/// one. `Redraw` for a key it took (the page must not also scroll).
pub(super) fn on_key(u: &mut Ui, key: &str, sides: &[Rc<SideWindow>]) -> Ask {
    let (lo, hi) = u.bounds;
    let mid = (u.view.t0 + u.view.t1) / 2.0;
    let span = u.view.span();
    match key {
        "+" | "=" => u.view = u.view.zoom(0.5, mid, lo, hi),
        "-" | "_" => u.view = u.view.zoom(2.0, mid, lo, hi),
        "ArrowLeft" => u.view = u.view.pan(-0.2 * span, lo, hi),
        "ArrowRight" => u.view = u.view.pan(0.2 * span, lo, hi),
        "0" | "Home" => u.view = View { t0: lo, t1: hi },
        "]" | "[" => {
            let all = in_view(u, sides);
            let at = u.selected.and_then(|s| all.iter().position(|x| *x == s));
            // Nothing selected in view yet: the wake-up nearest the middle.
            let near_mid = || {
                (0..all.len()).min_by_key(|&j| {
                    let (i, k) = all[j];
                    let at = sides[i].built.arrows[k].0 as f64;
                    (at - mid).abs() as u64
                })
            };
            let next = match (key, at) {
                ("]", Some(k)) => (k + 1).min(all.len().saturating_sub(1)),
                ("[", Some(k)) => k.saturating_sub(1),
                _ => near_mid().unwrap_or(0),
            };
            u.selected = all.get(next).copied();
        }
        "Enter" => {
            let selected = u
                .selected
                .and_then(|(i, k)| Some((i, sides.get(i)?.built.arrows.get(k)?.1)));
            return match selected {
                Some((i, w)) => Ask::Open(i, w),
                None => Ask::Nothing,
            };
        }
        _ => return Ask::Nothing,
    }
    Ask::Redraw
}

/// The wake-ups in view, A's then B's, as (side, index into its arrows).
fn in_view(u: &Ui, sides: &[Rc<SideWindow>]) -> Vec<(usize, usize)> {
    sides
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.built
                .arrows
                .iter()
                .enumerate()
                .filter(|(_, (at, _))| (*at as f64) >= u.view.t0 && (*at as f64) <= u.view.t1)
                .map(move |(k, _)| (i, k))
        })
        .collect()
}
