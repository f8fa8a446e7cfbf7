//! The frame loop: every animation frame, the clock and the players step on, the
//! canvases are drawn when something moved, and the measurements are written on the
//! view for the e2e journey.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use schedlab_core::topology::Machine;

use super::{Live, LAYOUT_ASPECT, MAX_H, MIN_H, SPEEDS, STATUS_MS};
use crate::components::machine_svg::{layout_fit, layout_flow_fit, layout_scroll_fit, Layout};
use crate::live::draw::{context, number_scale, numbers_fit, Palette};
use crate::live::play::{clock_after, ARROW_FRAMES};
use crate::worker::now_ms;

/// The layout for a canvas `width` × `max_h` CSS px: the square one (`layout_fit`)
/// where its CPUs hold their numbers; else the flowed one whose CPUs are biggest
/// (`layout_flow_fit`), where its do (Kunpeng 920 in 269 × 589 px at 1280 × 800);
/// else the flowed one without the clusters' names, where its do (Kunpeng 920 on a
/// 390 × 844 phone, 331 × 552 px, and at 1280 × 720: the cluster boxes stay, the
/// CPU numbers tell them apart); else one as wide as the canvas and up to
/// [`SCROLL_MAX`] times as tall as its box, which scrolls (`layout_scroll_fit`: EPYC
/// 9654's 192 CPUs at every size; `scroll_w` wide, the box less its scroll bar), but
/// in a slide's fixed frame (`may_scroll` false: there the whole machine is shown);
/// else the one whose CPUs are bigger, unnumbered.
/// With whether it scrolls. Until session 38 wide screens kept the square one, whose
/// boxes were too small for 11 px labels; until session 39 the named flowed one left
/// Kunpeng 920's CPUs unnumbered on a phone and at 1280 × 720; until session 40
/// machines of 192 CPUs and more were unnumbered in every layout.
fn fitted_layout(
    m: &Machine,
    width: f64,
    scroll_w: f64,
    max_h: f64,
    may_scroll: bool,
) -> (Layout, bool) {
    let square = layout_fit(m, LAYOUT_ASPECT);
    let square_scale = (width / square.w).min(max_h / square.h);
    if numbers_fit(&square, square_scale) {
        return (square, false);
    }
    let (tall, scale) = layout_flow_fit(m, width, max_h, true);
    if numbers_fit(&tall, scale) {
        return (tall, false);
    }
    let (bare, bare_scale) = layout_flow_fit(m, width, max_h, false);
    if numbers_fit(&bare, bare_scale) {
        return (bare, false);
    }
    // A little over the least scale, so that rounding does not undo the fit.
    let least = number_scale(&square) * (1.0 + 1e-9);
    if let Some((long, s)) = may_scroll
        .then(|| layout_scroll_fit(m, scroll_w, least, SCROLL_MAX * max_h))
        .flatten()
    {
        if numbers_fit(&long, s) {
            return (long, true);
        }
    }
    (if scale > square_scale { tall } else { square }, false)
}

/// How many times its box's height a canvas that scrolls may be: EPYC 9654's 192
/// CPUs take 1.7-1.9 (973 px in 1280 × 720's 509 px box, 1072 in a phone's 552
/// beside a 15 px scroll bar, 913 where the bar overlays); the 2-socket one's 384
/// would take 3.1-4.0, more scrolling than numbers are worth (and 4-8 MB of canvas a
/// side at 3 device pixels to the CSS pixel).
const SCROLL_MAX: f64 = 2.5;

/// Room kept under a canvas that fills the rest of the window (CSS px).
const FIT_MARGIN: f64 = 8.0;

/// In an embed's fixed frame (every frame but a phone's, which scrolls as a page) the
/// view does not start at the top of the screen: a canvas there is at most the room
/// from the first shown one's top (as if the results panel were not scrolled) down to
/// the panel's padding, less the clicked wake-up's line. `None`: not in such a frame.
fn frame_room(root: &NodeRef, canvases: &[Option<HtmlCanvasElement>]) -> Option<f64> {
    let root = root.cast::<web_sys::Element>()?;
    root.closest(".embed").ok()??;
    let window = web_sys::window()?;
    let phone = window
        .match_media("(max-width: 640px) and (orientation: portrait)")
        .ok()
        .flatten()
        .is_some_and(|q| q.matches());
    if phone {
        return None;
    }
    let panel: web_sys::HtmlElement = root.closest(".domain-panel").ok()??.dyn_into().ok()?;
    // Its whole pixels and one more for a fraction ("9.6px": 10): parsing a decimal
    // would bring the float parser into the page's module (about 14 KB brotli).
    let pad = window
        .get_computed_style(&panel)
        .ok()
        .flatten()
        .and_then(|s| s.get_property_value("padding-bottom").ok())
        .and_then(|v| {
            let whole: String = v.chars().take_while(char::is_ascii_digit).collect();
            whole.parse::<u32>().ok()
        })
        .map_or(0.0, |px| f64::from(px) + 1.0);
    let border = f64::from(panel.offset_height() - panel.client_height() - panel.client_top());
    let bottom = panel.get_bounding_client_rect().bottom() - border - pad;
    let top = canvases
        .iter()
        .flatten()
        .map(box_top)
        .fold(f64::INFINITY, f64::min)
        + f64::from(panel.scroll_top())
        + selected_height(&root);
    // The canvas' border (1 px a side) and a pixel to spare.
    Some(bottom - top - 3.0)
}

/// The top of a canvas' box (the canvas' own top moves up as a box that scrolls is
/// scrolled).
fn box_top(c: &HtmlCanvasElement) -> f64 {
    c.parent_element()
        .map_or_else(
            || c.get_bounding_client_rect(),
            |b| b.get_bounding_client_rect(),
        )
        .top()
}

/// The height of the clicked wake-up's line, if shown (it comes and goes: the
/// canvases are not resized for it).
fn selected_height(root: &web_sys::Element) -> f64 {
    root.query_selector("#live-selected")
        .ok()
        .flatten()
        .map_or(0.0, |e| e.get_bounding_client_rect().height())
}

/// How far below the view's top its first shown canvas starts (its heading, controls,
/// status line and caption), less the clicked wake-up's line (which comes and goes):
/// a canvas is at most the window's height less this, so that the view's controls and
/// one canvas fit one screen.
fn room_above(root: &NodeRef, canvases: &[Option<HtmlCanvasElement>]) -> f64 {
    let top = |e: &web_sys::Element| e.get_bounding_client_rect().top();
    let Some(root) = root.cast::<web_sys::Element>() else {
        return 0.0;
    };
    let selected = selected_height(&root);
    canvases
        .iter()
        .flatten()
        .map(|c| box_top(c) - top(&root) - selected)
        .fold(f64::INFINITY, f64::min)
        .max(0.0)
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
            live.said = live.status();
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
        // The shown sides' canvases.
        let shown: Vec<Option<HtmlCanvasElement>> = canvases
            .iter()
            .enumerate()
            .map(|(i, c)| c.cast::<HtmlCanvasElement>().filter(|_| live.shows(i)))
            .collect();
        // A slide's fixed frame shows the whole machine: no canvas scrolls there.
        let framed = frame_room(root, &shown);
        let may_scroll = framed.is_none();
        // The width a scroll bar takes (the page's: 0 where it overlays, as on a
        // phone), kept in a box that scrolls.
        let bar = web_sys::window()
            .and_then(|w| {
                let inner = w.inner_width().ok()?.as_f64()?;
                let page = w.document()?.document_element()?.client_width();
                Some((inner - f64::from(page)).clamp(0.0, 30.0))
            })
            .unwrap_or(0.0);
        let room = framed.or_else(|| {
            let above = room_above(root, &shown);
            web_sys::window()
                .and_then(|w| w.inner_height().ok())
                .and_then(|h| h.as_f64())
                .map(|h| h - above - FIT_MARGIN)
        });
        let max_h = room.map_or(MAX_H, |h| h.clamp(MIN_H, MAX_H));
        let machine = live.machine.clone();
        for (painter, canvas) in live.painters.iter_mut().zip(shown) {
            let Some(canvas) = canvas else {
                continue;
            };
            let width = canvas
                .parent_element()
                .map_or(300.0, |p| f64::from(p.client_width()))
                .max(100.0);
            // The layout follows the canvas' size: a taller one where the square one's
            // CPUs are too small to number.
            let want = Some((width.round() as u32, max_h.round() as u32));
            if want != painter.fitted_for {
                if let Some(m) = &machine {
                    // The layout that scrolls is chosen for the box less its scroll
                    // bar (measured without it while the box does not scroll yet), so
                    // that the bar's coming does not undo the choice.
                    let net = if painter.scrolls { width } else { width - bar };
                    let (layout, scrolls) = fitted_layout(m, width, net, max_h, may_scroll);
                    painter.set_layout(layout);
                    painter.scrolls = scrolls;
                    // A canvas taller than the room scrolls in its box; the scroll
                    // bar's room is kept from the start (its width is then the one
                    // measured, and the layout is chosen once more for it).
                    if let Some(b) = canvas.parent_element() {
                        let style = if scrolls {
                            format!(
                                "max-height:{}px;overflow-y:auto;scrollbar-gutter:stable",
                                max_h.round()
                            )
                        } else {
                            String::new()
                        };
                        let _ = b.set_attribute("style", &style);
                    }
                }
                painter.fitted_for = want;
            }
            let fit_h = if painter.scrolls {
                f64::INFINITY
            } else {
                max_h
            };
            if painter.fit(&canvas, width, fit_h, dpr) {
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
pub(super) fn start_loop(
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
