//! The page: header, link banner, controls, the machine drawing and the right panel.
//!
//! The URL fragment is a projection of the state (`core::scenario`): read once when the
//! reducer starts and again on `hashchange`, written back with `history.replaceState`
//! whenever the state's encoding changes, so the address bar is always a shareable link.

use gloo_events::EventListener;
use wasm_bindgen::JsValue;
use yew::prelude::*;

use crate::components::controls::Controls;
use crate::components::custom_machine::CustomMachine;
use crate::components::machine_view::MachineView;
use crate::components::tabs::{TabPanel, PANEL_ID};
use crate::components::theme_switch::ThemeSwitch;
use crate::state::{Action, AppContext, AppState, View};

/// The current `location.hash`, or "" outside a browser.
fn current_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Writes the fragment without adding a history entry or firing `hashchange`.
fn replace_hash(fragment: &str) {
    let Some(w) = web_sys::window() else {
        return;
    };
    if current_hash().trim_start_matches('#') == fragment {
        return;
    }
    if let Ok(history) = w.history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&format!("#{fragment}")));
    }
}

/// The widest viewport, in CSS px, that static/style.css lays out for a phone (its
/// `max-width: 640px` queries): there the machine drawing starts folded, so the tabs
/// are on the first screen.
const NARROW_PX: f64 = 640.0;

/// Whether the viewport is a phone's (false outside a browser).
fn narrow() -> bool {
    web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64())
        .is_some_and(|w| w <= NARROW_PX)
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| AppState::from_fragment(&current_hash()));

    // Someone edits the address bar or follows another link to this page. The
    // listener is removed when the effect's destructor drops it (the app unmounts).
    {
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|w| {
                EventListener::new(&w, "hashchange", move |_| {
                    dispatcher.dispatch(Action::LoadFragment(current_hash()));
                })
            });
            move || drop(listener)
        });
    }

    // The banner is part of the key so a bad link in the address bar is replaced by
    // the scenario the page kept, even though that scenario did not change.
    let fragment = state.fragment();
    use_effect_with((fragment, state.banner.clone()), |(f, _)| replace_hash(f));

    // The machine drawing is a <details>: open on wide screens (its summary is not
    // drawn there), folded on a phone's, where 128 CPUs of 40 px buttons would push the
    // tabs several screens down. Widening the window opens it, since the summary that
    // would open it is not drawn there.
    let drawing_open = use_state(|| !narrow());
    {
        let drawing_open = drawing_open.clone();
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|w| {
                EventListener::new(&w, "resize", move |_| {
                    if !narrow() {
                        drawing_open.set(true);
                    }
                })
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
        match state.ui.click {
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
                <ThemeSwitch />
            </header>
            { for banner }
            <Controls />
            if state.custom_open {
                <CustomMachine />
            }
            <main class={classes!("layout", matches!(state.tab(), View::Wakeup | View::Simulate).then_some("wide-right"))}>
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
