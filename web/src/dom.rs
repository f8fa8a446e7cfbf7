//! Reading form controls from the events they fire: the one place the page reaches
//! into `web_sys` element types. Each helper is `None`/`false` when the event did not
//! come from such an element, so a stray event is ignored instead of panicking.

use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::{Event, TargetCast};

/// The value of the `<select>` an event came from.
pub fn select_value(e: &Event) -> Option<String> {
    e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value())
}

/// The value of the `<input>` an event came from.
pub fn input_value(e: &Event) -> Option<String> {
    e.target_dyn_into::<HtmlInputElement>().map(|i| i.value())
}

/// Whether the checkbox an event came from is ticked.
pub fn checked(e: &Event) -> bool {
    e.target_dyn_into::<HtmlInputElement>()
        .is_some_and(|i| i.checked())
}

/// The text of the `<textarea>` an event came from.
pub fn textarea_value(e: &Event) -> Option<String> {
    e.target_dyn_into::<HtmlTextAreaElement>()
        .map(|t| t.value())
}
