//! The page: header, link banner, controls, the machine drawing and the right panel.
//!
//! The URL fragment is a projection of the state (`core::scenario`): read once when the
//! reducer starts and again on `hashchange` (which Back and Forward fire), written back
//! whenever the state's encoding changes, so the address bar is always a shareable link.
//! A change the user makes pushes a history entry, so Back and Forward undo and redo;
//! changes within [`COALESCE_MS`] of the last push (typing, dragging) replace it instead,
//! and so does the first canonical write of a link. A damaged link stays in the address
//! bar, for the user to fix and retry, until they change the scenario: that change
//! replaces it (a damaged link never stays in the history).

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
/// write does not replace a link the page never showed (a damaged one).
fn pushes(current: &str, now_ms: f64, last_push_ms: f64, repairing: bool) -> bool {
    !current.is_empty() && !repairing && now_ms - last_push_ms >= COALESCE_MS
}

/// What a write of the link does to the address bar.
#[derive(Clone, Copy, Debug, PartialEq)]
enum HashWrite {
    /// Leave it: it holds the link already, or a damaged link the page just opened.
    Keep,
    Push,
    Replace,
}

/// How the page writes `fragment` when the address bar holds `current` and the page
/// last showed `shown` there. `keep_bad`: the page has just opened on a damaged link
/// (its first write with the banner up), which stays for the user to fix. A `current`
/// the page never showed (a damaged link kept, or a link typed in another spelling) is
/// replaced, not pushed over, so Back skips it.
fn hash_write(
    current: &str,
    shown: &str,
    fragment: &str,
    keep_bad: bool,
    now_ms: f64,
    last_push_ms: f64,
) -> HashWrite {
    if current == fragment || keep_bad {
        HashWrite::Keep
    } else if pushes(current, now_ms, last_push_ms, current != shown) {
        HashWrite::Push
    } else {
        HashWrite::Replace
    }
}

thread_local! {
    /// The fragment the page last showed in the address bar (written or found there).
    static SHOWN: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Writes the fragment, pushing a history entry or replacing the current one (see the
/// module doc and [`hash_write`]); neither fires `hashchange`.
fn write_hash(fragment: &str, keep_bad: bool) {
    let Some(w) = web_sys::window() else {
        return;
    };
    let current = current_hash();
    let current = current.trim_start_matches('#');
    let now = w.performance().map_or(0.0, |p| p.now());
    let how = SHOWN
        .with_borrow(|shown| hash_write(current, shown, fragment, keep_bad, now, LAST_PUSH.get()));
    if how == HashWrite::Keep && keep_bad {
        return;
    }
    SHOWN.set(fragment.to_string());
    let Ok(history) = w.history() else {
        return;
    };
    let url = format!("#{fragment}");
    match how {
        HashWrite::Keep => {}
        HashWrite::Push => {
            if history
                .push_state_with_url(&JsValue::NULL, "", Some(&url))
                .is_ok()
            {
                LAST_PUSH.set(now);
            }
        }
        HashWrite::Replace => {
            let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
        }
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

/// On `hashchange` (someone edits the address bar or follows another link to this
/// page) the fragment is loaded. The listener is removed when the effect's destructor
/// drops it (the app unmounts).
#[hook]
fn use_hashchange(state: &AppContext) {
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

/// Whether the machine drawing's `<details>` is open, following the window across
/// 640 px, and its toggle's callback.
#[hook]
fn use_drawing_open() -> (UseStateHandle<bool>, Callback<Event>) {
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
    (drawing_open, on_drawing_toggle)
}

/// What a click on a CPU does, said above the drawing (so that it is on the first
/// screen) and, on a phone, in the folded drawing's summary: (the hint, the summary's).
fn click_hints(state: &AppContext) -> (String, String) {
    let click = if state.tab() == View::Wakeup {
        match state.click() {
            crate::state::ClickMode::ToggleBusy => "click a CPU to make it busy or idle.",
            crate::state::ClickMode::Waker => "click a CPU to make it the waker's CPU.",
            crate::state::ClickMode::Prev => "click a CPU to make it the wakee's prev CPU.",
        }
    } else {
        "click a CPU to show its sched domains."
    };
    // After a run the shade is how busy each CPU was (the heat map) and the CPUs the
    // workload may use keep only their outline.
    let shaded = match (state.tab() == View::Simulate, state.heat().is_some()) {
        (true, false) => "Shaded: the CPUs the workload may use. ",
        (true, true) => "Outlined: the CPUs the workload may use; shaded: how busy each was. ",
        (false, _) => "",
    };
    // "click" as the sentence's first word: its 'c' upper-cased (ASCII).
    (
        format!("{shaded}C{}", &click[1..]),
        format!("Open it, then {click}"),
    )
}

/// The banner of a link that could not be read, with its dismiss button.
fn link_banner(state: &AppContext, embed: bool) -> Option<Html> {
    state.banner.clone().map(|b| {
        let b = if embed {
            crate::state::embedded_banner(&b)
        } else {
            b
        };
        let dispatcher = state.dispatcher();
        let onclick =
            Callback::from(move |_: MouseEvent| dispatcher.dispatch(Action::DismissBanner));
        html! {
            <div class="error banner" role="alert">
                <span>{ b }</span>
                <button class="dismiss" {onclick} aria-label="dismiss">{ "×" }</button>
            </div>
        }
    })
}

/// The embed view: one view, no pickers; a wake-up keeps the drawing beside its
/// decisions.
fn embed_view(
    state: &AppContext,
    machine: Html,
    banner: Option<Html>,
    highlight: Option<&'static str>,
) -> Html {
    let wake = state.tab() == View::Wakeup;
    let open = format!(
        "{}#{}",
        web_sys::window()
            .and_then(|w| w.location().pathname().ok())
            .unwrap_or_default(),
        state.fragment()
    );
    html! {
        <ContextProvider<AppContext> context={state.clone()}>
            <div class={classes!("embed", wake.then_some("embed-wake"))}>
                <header class="embed-header">
                    // The frame's one heading (axe: a page has a level-one heading).
                    <h1>
                        <strong>{ "schedlab" }</strong>
                        // A domains view names its CPU here: the view's own heading
                        // ("Sched domains of CPU 0") is read, not drawn, in an embed.
                        <span class="embed-title">
                            { format!(
                                "{} · {}{}",
                                state.machine().name,
                                if wake || state.tab() == View::Simulate {
                                    String::new()
                                } else {
                                    format!("CPU {} · ", state.cpu().0)
                                },
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
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| AppState::from_fragment(&current_hash()));
    let presenting = use_state(present::asked);
    let set_presenting = {
        let presenting = presenting.clone();
        Callback::from(move |on: bool| presenting.set(on))
    };

    use_hashchange(&state);

    // Written when the scenario changes, not when a link fails: a damaged link stays in
    // the address bar (a bad link after a good one changes nothing here; on a first
    // visit the page's first write, under the banner, is skipped) until the user
    // changes the scenario.
    let fragment = state.fragment();
    let first_write = use_mut_ref(|| true);
    let opened_bad = state.banner.is_some();
    use_effect_with(fragment, move |f| {
        write_hash(f, first_write.replace(false) && opened_bad)
    });

    // The machine drawing is a <details>: open on wide screens (its summary is not
    // drawn there), folded on a phone's, where 128 CPUs of 40 px buttons would push the
    // tabs several screens down. It follows the width live: the query list's `change`
    // fires only when a resize crosses 640 px (not on every resize event, and not
    // while a phone's toolbar or keyboard comes and goes), so narrowing the window
    // folds the drawing and widening it opens it (the summary that would open it is
    // not drawn there), while a drawing opened by hand on a phone stays open.
    let (drawing_open, on_drawing_toggle) = use_drawing_open();

    let on_select = {
        let dispatcher = state.dispatcher();
        Callback::from(move |cpu| dispatcher.dispatch(Action::ClickCpu(cpu)))
    };
    let (hint, fold_hint) = click_hints(&state);
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
    let embed = embedded();
    let banner = link_banner(&state, embed);
    if embed {
        return embed_view(&state, machine, banner, highlight);
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
                        <summary>
                            { format!("Machine drawing · {} CPUs", state.machine().nr_cpus()) }
                            <span class="fold-hint">{ fold_hint }</span>
                        </summary>
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
    use super::{hash_write, pushes, HashWrite, COALESCE_MS};

    #[test]
    fn a_damaged_link_stays_until_the_scenario_changes_then_is_replaced() {
        let long_ago = f64::NEG_INFINITY;
        // A first visit on a damaged link: the page's first write keeps it.
        assert_eq!(
            hash_write("v1:bad!", "", "v1:default", true, 5000.0, long_ago),
            HashWrite::Keep
        );
        // The user changes the scenario: the damaged link (never shown by the page)
        // is replaced, not pushed over.
        assert_eq!(
            hash_write("v1:bad!", "", "v1:changed", false, 5000.0, long_ago),
            HashWrite::Replace
        );
        // A bad link after a good one: the next change replaces it too.
        assert_eq!(
            hash_write("v1:bad!", "v1:good", "v1:changed", false, 5000.0, long_ago),
            HashWrite::Replace
        );
        // An ordinary change pushes.
        assert_eq!(
            hash_write("v1:good", "v1:good", "v1:changed", false, 5000.0, long_ago),
            HashWrite::Push
        );
        assert_eq!(
            hash_write("v1:same", "v1:old", "v1:same", false, 5000.0, long_ago),
            HashWrite::Keep
        );
    }

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
