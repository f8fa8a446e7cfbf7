//! The wake-up explainer: set up one wake-up on the current machine, pick one or two
//! patch sets, and read core's `wake_up()` decision step by step.
//!
//! ```text
//!  ┌ setup ───────────────────────────────┐  ┌ A: v6.6 ────────┐ ┌ B: v6.6+cluster ┐
//!  │ click: busy/idle · waker · prev      │  │ → CPU 12        │ │ → CPU 2          │
//!  │ all idle · all busy · random % seed  │  │ wakelist + IPI  │ │ wakelist + IPI   │
//!  │ waker · prev · recent · sync · LLC   │  │ trace …         │ │ trace …          │
//!  └──────────────────────────────────────┘  └─────────────────┘ └──────────────────┘
//! ```
//!
//! Nothing here decides anything: the reducer asks core and this draws what came back.
//!
//! A simulated wake-up opened from the timeline (`Action::OpenSimWake`) takes the
//! hand-set inputs' place: a banner says where it came from ("wake-up #N of side A,
//! seed S, t = … ms") and whether the replay chose the simulation's CPU, offers the
//! state file, and leads back; the decisions, traces and code view are the captured
//! inputs' (`state::sim_wake`).

use std::rc::Rc;

use schedlab_core::lesson::examples::WAKE_EXAMPLES;
use schedlab_core::patch::{Patch, PatchSet};
use schedlab_core::release::Release;
use schedlab_core::wakeup::{QueuePath, Reject, Step};
use yew::prelude::*;

use crate::components::code_view::CodeView;
use crate::components::machine_view::reject_class;
use crate::components::side_switch::side_switch;
use crate::components::wake_setup::wake_setup;
use crate::dom::{checked, select_value};
use crate::format::unbroken;
use crate::state::sim_wake::side_name;
use crate::state::{Action, AppContext, Side, SimWakeStatus, WakeOutcome};

/// Release dropdown plus a box per seed patch, with its summary.
fn patch_picker(
    side: Side,
    set: PatchSet,
    dispatcher: UseReducerDispatcher<crate::state::AppState>,
) -> Html {
    let tag = match side {
        Side::A => "a",
        Side::B => "b",
    };
    let on_release = {
        let d = dispatcher.clone();
        Callback::from(move |e: Event| {
            if let Some(Ok(r)) = select_value(&e).map(|v| v.parse::<Release>()) {
                d.dispatch(Action::SetSideRelease(side, r));
            }
        })
    };
    let boxes = Patch::ALL.into_iter().map(|p| {
        let d = dispatcher.clone();
        let onchange = Callback::from(move |e: Event| d.dispatch(Action::TogglePatch(side, p, checked(&e))));
        let merged = p
            .merged_in()
            .is_some_and(|r| r <= set.release)
            .then_some(" merged");
        html! {
            <label class="patch" title={p.summary()}>
                <input type="checkbox" checked={set.has(p)} {onchange}
                    data-patch={p.name()} data-side={tag} />
                <span class="patch-name">{ p.name() }{ for merged.map(|m| html! { <em>{ m }</em> }) }</span>
                <span class="patch-summary">{ p.summary() }</span>
            </label>
        }
    });
    html! {
        <div class={classes!("patch-picker", format!("side-{tag}"))}>
            <div class="picker-head">
                <span class="side-tag">{ tag.to_ascii_uppercase() }</span>
                <select class="side-release" data-side={tag} onchange={on_release}
                    aria-label={format!("kernel release of side {}", tag.to_ascii_uppercase())}>
                    { for Release::all().into_iter().map(|r| html! {
                        <option value={r.to_string()} selected={r == set.release}>{ format!("v{r}") }</option>
                    }) }
                </select>
                <code class="patch-string">{ set.to_string() }</code>
            </div>
            { for boxes }
        </div>
    }
}

fn queue_text(q: QueuePath) -> &'static str {
    match q {
        QueuePath::Local => "local enqueue (the waker's own runqueue)",
        QueuePath::Wakelist { ipi: true } => "wakelist + IPI",
        QueuePath::Wakelist { ipi: false } => {
            "wakelist, no IPI (idle task polling, or a wake-up already pending there)"
        }
        QueuePath::RemoteLock => "remote rq lock",
    }
}

/// The steps as an indented list, indented by call depth as `Trace::render` does.
fn trace_list(o: &WakeOutcome) -> Html {
    let mut stack: Vec<&'static str> = Vec::new();
    let mut probe_no = 0;
    let items = o.trace.steps.iter().map(|s| {
        let mut depth = stack.len();
        let (class, body): (Classes, Html) = match s {
            Step::Enter { func, detail } => {
                stack.push(func);
                (classes!("st-enter"), html! { <><code class="fn">{ *func }</code>{ unbroken(&format!("({detail})")) }</> })
            }
            Step::Check { condition, outcome, .. } => (
                classes!("st-check", if *outcome { "yes" } else { "no" }),
                html! { <>{ unbroken(condition) }{ ": " }<b>{ if *outcome { "yes" } else { "no" } }</b></> },
            ),
            Step::Probe { cpu, reject, .. } => {
                probe_no += 1;
                (
                    classes!("st-probe", reject_class(*reject)),
                    html! { <>
                        <span class="probe-dot">{ probe_no }</span>
                        { format!("probe CPU {}: {}", cpu.0, reject.map_or("idle, taken", Reject::as_str)) }
                    </> },
                )
            }
            Step::Budget { nr, why, .. } => (
                classes!("st-budget"),
                html! { <>{ format!("scan budget nr = {nr}") }<span class="why">{ unbroken(&format!(" ({why})")) }</span></> },
            ),
            Step::Return { func, cpu, why } => {
                if stack.last() == Some(func) {
                    stack.pop();
                }
                depth = stack.len();
                let c = cpu.map_or("-1".to_string(), |c| format!("CPU {}", c.0));
                (
                    classes!("st-return"),
                    html! { <><code class="fn">{ *func }</code>{ " returns " }<b>{ c }</b><span class="why">{ unbroken(&format!(" ({why})")) }</span></> },
                )
            }
            Step::Queue { path, why } => (
                classes!("st-queue"),
                html! { <>{ "ttwu_queue: " }<b>{ queue_text(*path) }</b><span class="why">{ unbroken(&format!(" ({why})")) }</span></> },
            ),
        };
        let style = format!("padding-left: {}em", 0.2 + 1.1 * depth as f32);
        html! { <li {class} {style}>{ body }</li> }
    });
    html! { <ol class="trace">{ for items.collect::<Vec<_>>() }</ol> }
}

fn decision_card(side: Side, r: &Result<Rc<WakeOutcome>, String>) -> Html {
    let tag = match side {
        Side::A => "a",
        Side::B => "b",
    };
    let o = match r {
        Err(e) => {
            return html! { <div class="decision-col"><p class="error">{ format!("No decision: {e}") }</p></div> }
        }
        Ok(o) => o,
    };
    let d = &o.decision;
    html! {
        <div class={classes!("decision-col", format!("side-{tag}"))}>
            <div class="decision" data-side={tag} data-cpu={d.cpu.0.to_string()}>
                <div class="decision-head">
                    <span class="side-tag">{ tag.to_ascii_uppercase() }</span>
                    <code>{ format!("v{}", o.patches) }</code>
                </div>
                <div class="chosen">{ "→ " }<span class="chosen-cpu">{ format!("CPU {}", d.cpu.0) }</span></div>
                <dl class="costs">
                    <div><dt>{ "queued by" }</dt><dd class="queue">{ queue_text(d.queue) }</dd></div>
                    <div><dt>{ "CPUs probed" }</dt><dd>{ d.costs.cpus_probed }</dd></div>
                    <div><dt>{ "remote rq reads" }</dt><dd>{ d.costs.remote_rq_reads }</dd></div>
                    <div><dt>{ "sd_llc_shared reads" }</dt><dd>{ d.costs.llc_shared_reads }</dd></div>
                </dl>
            </div>
            { trace_list(o) }
            <CodeView outcome={o.clone()} />
        </div>
    }
}

/// The two patch sets, A (the page's) and B (compared), with the compare switch: the
/// wake-up tab decides under both, the Simulate tab runs under both.
pub(crate) fn kernel_pickers(state: &AppContext) -> Html {
    let w = state.wake();
    let dispatcher = state.dispatcher();
    let comparing = w.compare.is_some();
    let on_compare = {
        let d = dispatcher.clone();
        Callback::from(move |e: Event| d.dispatch(Action::SetCompare(checked(&e))))
    };
    html! {
        <fieldset class="wake-kernel">
            <legend>{ "Kernel" }</legend>
            <div class={classes!("pickers", comparing.then_some("compare"))}>
                { patch_picker(Side::A, state.patches(), dispatcher.clone()) }
                if let Some(b) = w.compare {
                    { patch_picker(Side::B, b, dispatcher.clone()) }
                }
            </div>
            <label class="check compare-toggle">
                <input type="checkbox" id="compare" checked={comparing} onchange={on_compare} />
                <span>{ "Compare with a second patch set, side by side" }</span>
            </label>
            if let Some(e) = &state.ui.patch_error {
                <p class="error">{ e.clone() }</p>
            }
        </fieldset>
    }
}

/// The examples menu: each seed's decisive wake-up (core's `WAKE_EXAMPLES`), loaded
/// as a link the user picked (never held), with what it shows.
#[function_component(WakeExamples)]
fn wake_examples() -> Html {
    let picked = use_state(|| None::<&'static str>);
    let Some(state) = use_context::<AppContext>() else {
        return html! {};
    };
    let onchange = {
        let (d, picked) = (state.dispatcher(), picked.clone());
        Callback::from(move |e: Event| {
            let v = select_value(&e).unwrap_or_default();
            let Some(ex) = WAKE_EXAMPLES.iter().find(|x| x.name == v) else {
                return;
            };
            picked.set(Some(ex.name));
            if let Ok(s) = ex.scene.scenario() {
                d.dispatch(Action::OpenExample(schedlab_core::scenario::encode(&s)));
            }
        })
    };
    let note = picked
        .and_then(|n| WAKE_EXAMPLES.iter().find(|x| x.name == n))
        .map(|x| x.note);
    html! {
        <div class="wake-examples">
            <label for="wake-example">{ "Examples" }</label>
            <select id="wake-example" {onchange}>
                <option value="" selected={picked.is_none()}>{ "Each seed's decisive wake-up…" }</option>
                { for WAKE_EXAMPLES.iter().map(|x| html! {
                    <option value={x.name} selected={*picked == Some(x.name)}>{ x.label }</option>
                }) }
            </select>
            if let Some(n) = note {
                <p class="example-note">{ n }</p>
            }
        </div>
    }
}

/// Where a captured simulated wake-up came from, the check that the replay chose the
/// simulation's CPU, its state file, and the way back to the hand-set wake-up.
fn sim_wake_banner(state: &AppContext, status: &SimWakeStatus) -> Html {
    let d = state.dispatcher();
    let back = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::CloseSimWake))
    };
    let back_btn = html! {
        <button id="sim-wake-close" onclick={back}>{ "Back to the hand-set wake-up" }</button>
    };
    let at = status.at();
    // The sweep point, when the reference names one (the watched scale otherwise).
    let point = at.scale.map_or(String::new(), |t| {
        format!(
            " at {t} {}",
            crate::format::scale_label(&state.sim().workload)
        )
    });
    let body = match status {
        SimWakeStatus::Capturing(_) => html! {
            <p class="sim-wake-status" role="status">
                { format!("Re-running side {}'s simulation (seed {}){point} to its wake-up #{}…",
                    side_name(at.side), at.seed, at.wake) }
            </p>
        },
        SimWakeStatus::Failed(_, e) => html! {
            <p class="error">{ format!("Wake-up #{} could not be captured: {e}", at.wake) }</p>
        },
        SimWakeStatus::Ready(w) => {
            let replayed = state
                .wake_a
                .as_ref()
                .zip(state.wake_b.as_ref().or(state.wake_a.as_ref()))
                .and_then(|(a, b)| {
                    let o = if at.side == Side::B && state.wake().compare.is_some() {
                        b
                    } else {
                        a
                    };
                    o.as_ref().ok().map(|o| o.decision.cpu)
                });
            let agrees = replayed == Some(w.simulated_cpu);
            let json = w.json.clone();
            let name = format!(
                "wake-{}-side-{}-seed-{}{}.json",
                at.wake,
                side_name(at.side),
                at.seed,
                at.scale.map_or(String::new(), |t| format!("-scale-{t}"))
            );
            let save = Callback::from(move |_: MouseEvent| {
                let _ = crate::export::download_text(&name, "application/json", &json);
            });
            let s = &w.scenario;
            let waker = s
                .waker
                .task
                .as_ref()
                .map_or("an interrupt".to_string(), |t| format!("task {}", t.id));
            html! {
                <>
                <p class="sim-wake-origin" data-wake={at.wake.to_string()}
                    data-simulated-cpu={w.simulated_cpu.0.to_string()}
                    data-scale={at.scale.map(|t| t.to_string())}>
                    { "Simulated: " }<b>{ w.origin() }</b>{ format!("{point} (v{}). ", w.patches) }
                    { format!("Task {} (prev CPU {}) woken by {waker} on CPU {}; the simulation chose ",
                        s.wakee.id, s.wakee.prev_cpu.unwrap_or(s.waker.cpu), s.waker.cpu) }
                    <b class="sim-cpu">{ format!("CPU {}", w.simulated_cpu.0) }</b>
                    { if agrees { " — replayed here from the captured state: the same CPU." }
                      else { " — the replay here differs (a bug: please report it)." } }
                </p>
                <p class="sim-wake-note">
                    { "Every input the wake-up path read at that instant (runqueues, SIS_PROP averages, \
                       LLC shared state, flags) is the simulation's; both sides decide these same inputs. \
                       The link carries the reference (side, seed, wake-up number, and a sweep point other than the live view's): re-running is deterministic." }
                    <button class="sim-wake-save" onclick={save}>{ "Download the state file" }</button>
                </p>
                </>
            }
        }
    };
    html! {
        <section class="sim-wake" aria-label="simulated wake-up">
            { body }
            { back_btn }
        </section>
    }
}

#[function_component(WakeupPanel)]
pub fn wakeup_panel() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };
    crate::hooks::use_record::use_capture(&state);
    let w = state.wake();
    let comparing = w.compare.is_some();
    // Which side's probes the drawing numbers: one side always is, so a choice of
    // one of two (side_switch.rs), over both cards, not a toggle in each.
    let results = html! {
        <>
        if comparing {
            <div class="probe-numbers">
                <span id="probe-numbers-label">{ "Probe numbers in the drawing:" }</span>
                { side_switch(&state, "probe-numbers-label", false) }
            </div>
        }
        <div class={classes!("decisions", comparing.then_some("compare"))}>
            if let Some(a) = &state.wake_a {
                { decision_card(Side::A, a) }
            }
            if let Some(b) = &state.wake_b {
                { decision_card(Side::B, b) }
            }
        </div>
        </>
    };
    let legend = [
        (None, "taken"),
        (Some(Reject::Busy), "busy"),
        (Some(Reject::CookieMismatch), "cookie mismatch"),
        (Some(Reject::NotIdleCore), "not an idle core"),
        (Some(Reject::BudgetSpent), "budget spent"),
    ];

    let sim_wake = state.sim_wake.as_ref().map(|s| sim_wake_banner(&state, s));
    let hand_set = sim_wake.is_none();
    html! {
        <div class="wakeup">
            if let Some(b) = sim_wake {
                { b }
            } else {
                <WakeExamples />
            }
            // Results first (issue 17: the decision in the first screen at 1280×720),
            // the inputs that change them below.
            { results }
            // Two groups, each wrapping whole: the probes' outcomes, then the CPUs'
            // roles (one list of seven left "prev" alone on a line at 1280 px).
            <div class="legend wake-legend">
                <ul class="legend-group" aria-label="Probed CPUs">
                    { for legend.iter().map(|(r, label)| html! {
                        <li><span class={classes!("swatch", reject_class(*r))}></span>{ *label }</li>
                    }) }
                </ul>
                <ul class="legend-group" aria-label="The wake-up's CPUs">
                    <li><span class="swatch waker"></span>{ "waker" }</li>
                    <li><span class="swatch prev"></span>{ "prev" }</li>
                </ul>
            </div>
            if hand_set {
                { wake_setup(&state) }
            }
            { kernel_pickers(&state) }
        </div>
    }
}
