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
//!
//! This file holds the component: its state, the mouse and keyboard, the page around
//! the canvas. `layout.rs` places the rows, `draw.rs` paints the canvas and `hit.rs`
//! finds (and words) what is under the pointer.

mod draw;
mod hit;
mod layout;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;

use schedlab_core::cost::Distance;
use schedlab_core::sim::record::WakeRecord;
use schedlab_core::topology::Machine;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use crate::state::sim_wake::side_name;
use crate::state::{Action, AppContext, Side, SimWakeRef};
use crate::timeline::{fmt_time, Built, GroupKey, View};
use draw::{distance_colour, draw};
use hit::{hit_test, hit_text, Hit};
use layout::{cpu_y, layout, GUTTER};

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
/// The window all sides share: from the earliest start to the latest end.
fn bounds(sides: &[Rc<SideWindow>]) -> (f64, f64) {
    let lo = sides.iter().map(|s| s.window_ns.0).min().unwrap_or(0) as f64;
    let hi = sides.iter().map(|s| s.window_ns.1).max().unwrap_or(1) as f64;
    (lo, hi.max(lo + 1.0))
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
                // As wide as its box, so that its 11 px text is drawn 11 px, with at
                // least 120 px of plot (the minimum was 200, 390 px in all: wider than
                // a phone's 329 px box, which shrank the canvas and its text to 9 px).
                ui.borrow_mut().width = w.max(GUTTER + 120.0);
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
