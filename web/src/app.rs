//! The page: header, link banner, controls, the machine drawing and the right panel.
//!
//! The URL fragment is a projection of the state (`core::scenario`): read once when the
//! reducer starts and again on `hashchange` (which Back and Forward fire), written back
//! whenever the state's encoding changes, so the address bar is always a shareable link.
//! A change the user makes pushes a history entry, so Back and Forward undo and redo;
//! changes within [`COALESCE_MS`] of the last push (typing, dragging) replace it instead,
//! and so do the first canonical write of a link and a bad link's repair.

use gloo_events::EventListener;
use wasm_bindgen::JsValue;
use yew::prelude::*;

use crate::components::controls::Controls;
use crate::components::custom_machine::CustomMachine;
use crate::components::designer::{DesignerPanel, MissingNote};
use crate::components::lessons::{LessonPanel, LessonsMenu};
use crate::components::machine_view::MachineView;
use crate::components::present::{self, Present};
use crate::components::share::ShareMenu;
use crate::components::tabs::{TabPanel, PANEL_ID};
use crate::components::theme_switch::ThemeSwitch;
use crate::state::{Action, AppContext, AppState, View};

/// Whether the page is the embed view (`?embed` in the address, as the Share menu's
/// iframe snippet writes it): the chosen view alone under a one-line header.
fn embedded() -> bool {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .is_some_and(|q| {
            q.trim_start_matches('?')
                .split('&')
                .any(|kv| kv == "embed" || kv.starts_with("embed="))
        })
}

/// The current `location.hash`, or "" outside a browser.
fn current_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Changes closer together than this (ms) make one history entry.
const COALESCE_MS: f64 = 1000.0;

thread_local! {
    /// `performance.now()` of the last pushed entry.
    static LAST_PUSH: std::cell::Cell<f64> = const { std::cell::Cell::new(f64::NEG_INFINITY) };
}

/// Whether a write pushes an entry: the address bar holds another scenario already
/// (not the page's first write), the last push is older than [`COALESCE_MS`], and the
/// write is not the repair of a bad link.
fn pushes(current: &str, now_ms: f64, last_push_ms: f64, repairing: bool) -> bool {
    !current.is_empty() && !repairing && now_ms - last_push_ms >= COALESCE_MS
}

/// Writes the fragment, pushing a history entry or replacing the current one (see the
/// module doc); neither fires `hashchange`.
fn write_hash(fragment: &str, repairing: bool) {
    let Some(w) = web_sys::window() else {
        return;
    };
    let current = current_hash();
    let current = current.trim_start_matches('#');
    if current == fragment {
        return;
    }
    let Ok(history) = w.history() else {
        return;
    };
    let url = format!("#{fragment}");
    let now = w.performance().map_or(0.0, |p| p.now());
    if pushes(current, now, LAST_PUSH.get(), repairing) {
        if history
            .push_state_with_url(&JsValue::NULL, "", Some(&url))
            .is_ok()
        {
            LAST_PUSH.set(now);
        }
    } else {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

/// The phone layout's media query, as static/css/ writes it (its `max-width:
/// 640px` blocks): there the machine drawing is folded, so the tabs are on the first
/// screen.
const NARROW_QUERY: &str = "(max-width: 640px)";

/// The phone layout's query list (none outside a browser): `matches` says whether
/// the viewport is a phone's; its `change` event fires when a resize crosses 640 px.
fn narrow_query() -> Option<web_sys::MediaQueryList> {
    web_sys::window()?.match_media(NARROW_QUERY).ok().flatten()
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| AppState::from_fragment(&current_hash()));
    let presenting = use_state(present::asked);
    let set_presenting = {
        let presenting = presenting.clone();
        Callback::from(move |on: bool| presenting.set(on))
    };

    // Someone edits the address bar or follows another link to this page. The
    // listener is removed when the effect's destructor drops it (the app unmounts).
    {
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|w| {
                EventListener::new(&w, "hashchange", move |_| {
                    // Back, Forward or a typed link: the next change starts a new entry
                    // rather than coalescing into (and overwriting) this one.
                    LAST_PUSH.set(f64::NEG_INFINITY);
                    dispatcher.dispatch(Action::LoadFragment(current_hash()));
                })
            });
            move || drop(listener)
        });
    }

    // The banner is part of the key so a bad link in the address bar is replaced by
    // the scenario the page kept, even though that scenario did not change.
    let fragment = state.fragment();
    use_effect_with((fragment, state.banner.clone()), |(f, banner)| {
        write_hash(f, banner.is_some())
    });

    // The machine drawing is a <details>: open on wide screens (its summary is not
    // drawn there), folded on a phone's, where 128 CPUs of 40 px buttons would push the
    // tabs several screens down. It follows the width live: the query list's `change`
    // fires only when a resize crosses 640 px (not on every resize event, and not
    // while a phone's toolbar or keyboard comes and goes), so narrowing the window
    // folds the drawing and widening it opens it (the summary that would open it is
    // not drawn there), while a drawing opened by hand on a phone stays open.
    let drawing_open = use_state(|| !narrow_query().is_some_and(|q| q.matches()));
    {
        let drawing_open = drawing_open.clone();
        use_effect_with((), move |_| {
            let listener = narrow_query().map(|q| {
                let list = q.clone();
                EventListener::new(&q, "change", move |_| drawing_open.set(!list.matches()))
            });
            move || drop(listener)
        });
    }
    let on_drawing_toggle = {
        let drawing_open = drawing_open.clone();
        Callback::from(move |e: Event| {
            if let Some(d) = e.target_dyn_into::<web_sys::HtmlDetailsElement>() {
                drawing_open.set(d.open());
            }
        })
    };

    let on_select = {
        let dispatcher = state.dispatcher();
        Callback::from(move |cpu| dispatcher.dispatch(Action::ClickCpu(cpu)))
    };
    let wake = state.tab() == View::Wakeup;
    let hint = if wake {
        match state.click() {
            crate::state::ClickMode::ToggleBusy => "Click a CPU to make it busy or idle.",
            crate::state::ClickMode::Waker => "Click a CPU to make it the waker's CPU.",
            crate::state::ClickMode::Prev => "Click a CPU to make it the wakee's prev CPU.",
        }
    } else if state.tab() == View::Simulate {
        "Shaded: the CPUs the workload may use. Click a CPU to show its sched domains."
    } else {
        "Click a CPU to show its sched domains."
    };
    let machine = html! {
            <MachineView
                machine={state.machine().clone()}
                selected={state.cpu()}
                highlight={state.highlight_span()}
                heat={state.heat()}
                wake={state.wake_marks().map(std::rc::Rc::new)}
                hint={hint}
                {on_select}
            />
    };
    // The part of the page the open lesson step points at (a CSS hook).
    let highlight = state
        .scenario
        .lesson
        .and_then(|at| {
            let l = schedlab_core::lesson::lesson(at.lesson)?;
            l.steps.get(at.step.checked_sub(1)? as usize)?.highlight
        })
        .map(|h| h.name());
    let banner = state.banner.clone().map(|b| {
        let dispatcher = state.dispatcher();
        let onclick =
            Callback::from(move |_: MouseEvent| dispatcher.dispatch(Action::DismissBanner));
        html! {
            <div class="error banner" role="alert">
                <span>{ b }</span>
                <button class="dismiss" {onclick} aria-label="dismiss">{ "×" }</button>
            </div>
        }
    });
    if embedded() {
        // One view, no pickers: a wake-up keeps the drawing beside its decisions.
        let open = format!(
            "{}#{}",
            web_sys::window()
                .and_then(|w| w.location().pathname().ok())
                .unwrap_or_default(),
            state.fragment()
        );
        return html! {
            <ContextProvider<AppContext> context={state.clone()}>
                <div class={classes!("embed", wake.then_some("embed-wake"))}>
                    <header class="embed-header">
                        // The frame's one heading (axe: a page has a level-one heading).
                        <h1>
                            <strong>{ "schedlab" }</strong>
                            <span class="embed-title">
                                { format!(
                                    "{} · {}",
                                    state.machine().name,
                                    crate::components::share::kernels(state.tab(), &state.sides())
                                ) }
                            </span>
                        </h1>
                        <a href={open} target="_blank" rel="noopener">{ "open in schedlab ↗" }</a>
                    </header>
                    { for banner }
                    <LessonPanel />
                    <main class="embed-main" data-highlight={highlight}>
                        if wake {
                            <section class="panel machine-panel" aria-label="machine">{ machine }</section>
                        }
                        <section class="panel domain-panel" aria-label="results">
                            <TabPanel embed=true />
                        </section>
                    </main>
                </div>
            </ContextProvider<AppContext>>
        };
    }
    html! {
        <ContextProvider<AppContext> context={state.clone()}>
            // Drawn only when focused: the first Tab stop, past the header, the pickers
            // and the machine drawing, to the results. A button, not an `#anchor`:
            // the fragment holds the scenario.
            <button class="skip-link" onclick={Callback::from(|_: MouseEvent| crate::dom::focus_id(PANEL_ID))}>
                { "Skip to the results" }
            </button>
            <header class="page-header">
                <h1>{ "schedlab" }</h1>
                <p class="tagline">
                    { "The Linux scheduler's sched-domain building and wake-up placement, for machines you may not have." }
                </p>
                <LessonsMenu />
                <ShareMenu />
                <Present on={*presenting} set={set_presenting} />
                <ThemeSwitch />
            </header>
            { for banner }
            <Controls />
            <MissingNote />
            if state.custom_open {
                <CustomMachine key={state.custom_prefill.0} />
            }
            <DesignerPanel />
            <LessonPanel />
            <main class={classes!("layout", matches!(state.tab(), View::Wakeup | View::Simulate).then_some("wide-right"))}
                data-highlight={highlight}>
                <section class="panel machine-panel" aria-label="machine">
                    <details class="machine-fold" open={*drawing_open} ontoggle={on_drawing_toggle}>
                        <summary>{ format!("Machine drawing · {} CPUs", state.machine().nr_cpus()) }</summary>
                        { machine }
                    </details>
                </section>
                <section class="panel domain-panel" aria-label="sched domains">
                    <TabPanel />
                </section>
            </main>
        </ContextProvider<AppContext>>
    }
}

#[cfg(test)]
mod tests {
    use super::{pushes, COALESCE_MS};

    #[test]
    fn a_change_pushes_unless_first_coalesced_or_a_repair() {
        let long_ago = f64::NEG_INFINITY;
        assert!(
            pushes("v1:abc", 5000.0, long_ago, false),
            "a user's change pushes"
        );
        assert!(
            !pushes("", 5000.0, long_ago, false),
            "the page's first write replaces"
        );
        assert!(
            !pushes("v1:abc", 5000.0, long_ago, true),
            "a bad link's repair replaces"
        );
        assert!(
            !pushes("v1:abc", 5000.0, 5000.0 - COALESCE_MS / 2.0, false),
            "typing within the window coalesces"
        );
        assert!(pushes("v1:abc", 5000.0, 5000.0 - COALESCE_MS, false));
    }
}
