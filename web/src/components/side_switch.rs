//! Which side, A or B, the machine drawing shows: the wake-up explainer's probe
//! numbers and the Simulate tab's utilisation shading (`Action::Focus`).
//!
//! ```text
//!  Probe numbers in the drawing: ( A | B )     role=radiogroup, one tab stop
//! ```
//!
//! Exactly one side is always shown, so this is a choice of one of two (the ARIA radio
//! group pattern, as the theme switch is), not a toggle: a toggle promises that
//! pressing it again turns the thing off, and there is no "neither" to turn to.
//! Arrow keys move the choice (present.rs leaves arrows inside a radiogroup alone).

use yew::prelude::*;

use crate::state::{Action, AppContext, Side};

/// The A | B radio group. `labelled_by` is the id of the visible text that names the
/// choice; `heat` marks the Simulate tab's buttons (`data-heat-side`).
pub fn side_switch(state: &AppContext, labelled_by: &'static str, heat: bool) -> Html {
    let d = state.dispatcher();
    let focus = state.focus();
    let button = |side: Side| {
        let checked = focus == side;
        let onclick = {
            let d = d.clone();
            Callback::from(move |_: MouseEvent| d.dispatch(Action::Focus(side)))
        };
        let (label, tag) = match side {
            Side::A => ("A", "a"),
            Side::B => ("B", "b"),
        };
        html! {
            <button class={classes!("seg", checked.then_some("active"))} {onclick}
                role="radio" aria-checked={checked.to_string()}
                tabindex={if checked { "0" } else { "-1" }}
                data-side={tag} data-heat-side={heat.then_some(label)}>
                { label }
            </button>
        }
    };
    let onkeydown = {
        let d = d.clone();
        Callback::from(move |e: KeyboardEvent| {
            if let Some(i) = crate::dom::rove(&e, "[role=radiogroup]", "[role=radio]") {
                d.dispatch(Action::Focus(if i == 0 { Side::A } else { Side::B }));
            }
        })
    };
    html! {
        <span class="side-switch segmented" role="radiogroup" aria-labelledby={labelled_by} {onkeydown}>
            { button(Side::A) }
            { button(Side::B) }
        </span>
    }
}
