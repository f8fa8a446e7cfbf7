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
//! This file holds the component: its state and the page around the canvas.
//! `input.rs` says what the wheel, the pointer and the keys do, `layout.rs` places
//! the rows, `draw.rs` paints the canvas and `hit.rs` finds (and words) what is under
//! the pointer.

mod draw;
mod hit;
mod input;
mod layout;

use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;

use schedlab_core::cost::Distance;
use schedlab_core::sim::record::WakeRecord;
use schedlab_core::topology::Machine;
use yew::prelude::*;

use crate::state::sim_wake::side_name;
use crate::state::{Action, AppContext, Side, SimWakeRef};
use crate::timeline::{fmt_time, Built, GroupKey, View};
use draw::{distance_colour, use_draw_each_render};
use hit::{selected_at, selected_text, tip, Hit};
use input::{on_click, on_key, on_move, use_wheel_zoom, Ask};
use layout::layout;

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
    /// The label column's width (`layout::gutter` of `width`).
    gutter: f64,
    /// The window the view stays inside (ns).
    bounds: (f64, f64),
}

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
        gutter: layout::gutter(1000.0),
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
    use_draw_each_render(
        canvas.clone(),
        ui.clone(),
        lines.clone(),
        Props {
            sides: p.sides.clone(),
            machine: p.machine.clone(),
            cpus: p.cpus.clone(),
        },
    );
    use_wheel_zoom(canvas.clone(), ui.clone(), redraw.clone());
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
            let at = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            let redraw_now = on_move(&mut ui.borrow_mut(), &pn, &lines, at, e.buttons() & 1 == 1);
            if redraw_now {
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
            let at = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            let ask = on_click(&mut ui.borrow_mut(), &pn, &lines, at);
            match ask {
                Ask::Open(i, w) => open_wake(i, &w),
                Ask::Redraw => redraw.force_update(),
                Ask::Nothing => {}
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
            let ask = on_key(&mut ui.borrow_mut(), e.key().as_str(), &pn.sides);
            match ask {
                Ask::Open(i, w) => open_wake(i, &w),
                Ask::Redraw => {
                    e.prevent_default();
                    redraw.force_update();
                }
                Ask::Nothing => {}
            }
        })
    };
    let u = ui.borrow();
    // Always in the DOM (hidden when nothing is under the pointer): Yew matches
    // unkeyed children from the end, so a tip appearing after the canvas would make
    // it a new canvas.
    let (tip_style, tip_text) = tip(p, &u);
    let selected = selected_text(p, &u);
    let selected_at = selected_at(p, &u, &lines);
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
