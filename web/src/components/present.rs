//! Presentation mode (issue 18): the page on a projector. Larger type, the header's
//! inputs out of the way, the browser's fullscreen when allowed, and keys that step
//! through the scenario as a speaker would ([`AppState::present_step`]):
//!
//! - → / PageDown / Space: the next step; ← / PageUp: the previous one;
//! - F: fullscreen on or off; Esc: leave (the browser's own Esc leaves fullscreen
//!   first).
//!
//! `?present` in the address opens the page in it (fullscreen then waits for F or the
//! button: a browser grants it only on a key press or click). The mode is a class on
//! `<html>`, so the stylesheet does all the resizing; keys typed into a field are the
//! field's.
//!
//! [`AppState::present_step`]: crate::state::AppState::present_step

use gloo_events::EventListener;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::state::{Action, AppContext};

/// Whether the address asks for presentation mode (`?present`).
pub fn asked() -> bool {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .is_some_and(|q| {
            q.trim_start_matches('?')
                .split('&')
                .any(|kv| kv == "present" || kv.starts_with("present="))
        })
}

/// What a key does in presentation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAction {
    Step(i32),
    Fullscreen,
    Leave,
}

/// The key map ([module docs](self)); `None` leaves the key to the page.
pub fn key_action(key: &str) -> Option<KeyAction> {
    match key {
        "ArrowRight" | "PageDown" | " " => Some(KeyAction::Step(1)),
        "ArrowLeft" | "PageUp" => Some(KeyAction::Step(-1)),
        "f" | "F" => Some(KeyAction::Fullscreen),
        "Escape" => Some(KeyAction::Leave),
        _ => None,
    }
}

fn root() -> Option<web_sys::Element> {
    web_sys::window()?.document()?.document_element()
}

fn fullscreen() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.fullscreen_element())
        .is_some()
}

/// Fullscreen on or off. A browser may refuse (no user gesture, an iframe without
/// `allowfullscreen`): the mode goes on without it.
fn toggle_fullscreen() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if doc.fullscreen_element().is_some() {
        doc.exit_fullscreen();
    } else if let Some(el) = doc.document_element() {
        let _ = el.request_fullscreen();
    }
}

/// Whether a key belongs to what has the focus: any key in a text field or select,
/// Space on a button (it presses it), the arrows in a roving group (the CPU grid, the
/// tabs, the theme switch move the focus with them).
fn typing(e: &web_sys::KeyboardEvent) -> bool {
    let Some(el) = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return false;
    };
    let key = e.key();
    let tag = el.tag_name();
    matches!(tag.as_str(), "INPUT" | "TEXTAREA" | "SELECT")
        || (key == " " && matches!(tag.as_str(), "BUTTON" | "A" | "SUMMARY"))
        || (key.starts_with("Arrow")
            && el
                .closest("[role=tablist], [role=group], [role=radiogroup]")
                .ok()
                .flatten()
                .is_some())
}

#[derive(Properties, PartialEq)]
pub struct PresentProps {
    /// Presentation mode is on.
    pub on: bool,
    pub set: Callback<bool>,
}

/// The header's "Present" button, and while presenting, the key handler and the
/// bar that says which keys do what.
#[function_component(Present)]
pub fn present(props: &PresentProps) -> Html {
    let state = use_context::<AppContext>();
    let on = props.on;
    {
        use_effect_with(on, move |on| {
            if let Some(r) = root() {
                let _ = if *on {
                    r.class_list().add_1("present")
                } else {
                    r.class_list().remove_1("present")
                };
            }
        });
    }
    {
        let set = props.set.clone();
        let dispatcher = state.as_ref().map(|s| s.dispatcher());
        use_effect_with(on, move |on| {
            let listener = (*on)
                .then(|| web_sys::window().and_then(|w| w.document()))
                .flatten()
                .map(|doc| {
                    EventListener::new(&doc, "keydown", move |e| {
                        let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
                            return;
                        };
                        if e.ctrl_key() || e.meta_key() || e.alt_key() || typing(e) {
                            return;
                        }
                        match key_action(&e.key()) {
                            Some(KeyAction::Step(dir)) => {
                                e.prevent_default();
                                if let Some(d) = &dispatcher {
                                    d.dispatch(Action::PresentStep(dir));
                                }
                            }
                            Some(KeyAction::Fullscreen) => toggle_fullscreen(),
                            // In fullscreen the browser's own Esc leaves that first.
                            Some(KeyAction::Leave) if !fullscreen() => set.emit(false),
                            Some(KeyAction::Leave) | None => {}
                        }
                    })
                });
            move || drop(listener)
        });
    }
    let toggle = {
        let set = props.set.clone();
        Callback::from(move |_: MouseEvent| {
            if on {
                if fullscreen() {
                    toggle_fullscreen();
                }
                set.emit(false);
            } else {
                toggle_fullscreen();
                set.emit(true);
            }
        })
    };
    let step = |dir: i32, label: &'static str, text: &'static str| {
        let dispatcher = state.as_ref().map(|s| s.dispatcher());
        let onclick = Callback::from(move |_: MouseEvent| {
            if let Some(d) = &dispatcher {
                d.dispatch(Action::PresentStep(dir));
            }
        });
        html! { <button class="present-step" aria-label={label} {onclick}>{ text }</button> }
    };
    html! {
        <>
            <button id="present-toggle" class="present-toggle" aria-pressed={on.to_string()} onclick={toggle}>
                { if on { "Leave presentation" } else { "Present" } }
            </button>
            if on {
                <div class="present-bar" role="region" aria-label="presentation controls">
                    { step(-1, "previous step", "←") }
                    <span class="present-keys">{ "← → step · F fullscreen · Esc leave" }</span>
                    { step(1, "next step", "→") }
                    <button class="present-full" onclick={Callback::from(|_: MouseEvent| toggle_fullscreen())}>{ "Fullscreen" }</button>
                </div>
            }
        </>
    }
}

#[cfg(test)]
mod tests {
    use super::{key_action, KeyAction};

    #[test]
    fn the_keys_a_presenter_expects() {
        assert_eq!(key_action("ArrowRight"), Some(KeyAction::Step(1)));
        assert_eq!(key_action("PageDown"), Some(KeyAction::Step(1)));
        assert_eq!(key_action(" "), Some(KeyAction::Step(1)));
        assert_eq!(key_action("ArrowLeft"), Some(KeyAction::Step(-1)));
        assert_eq!(key_action("PageUp"), Some(KeyAction::Step(-1)));
        assert_eq!(key_action("f"), Some(KeyAction::Fullscreen));
        assert_eq!(key_action("Escape"), Some(KeyAction::Leave));
        assert_eq!(key_action("ArrowDown"), None);
        assert_eq!(key_action("a"), None);
    }
}
