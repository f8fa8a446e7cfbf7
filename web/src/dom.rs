//! Reading form controls from the events they fire, and moving the keyboard focus: the
//! one place the page reaches into `web_sys` element types. Each helper is `None`/`false`
//! (or does nothing) when the event did not come from such an element, so a stray event
//! is ignored instead of panicking.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::{Event, KeyboardEvent, TargetCast};

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

/// Focuses the element with this id (the skip link's target), if it is there.
pub fn focus_id(id: &str) {
    let el = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.dyn_into::<HtmlElement>().ok());
    if let Some(el) = el {
        let _ = el.focus();
    }
}

/// Where an arrow key moves the focus in a one-dimensional list of `n` items: the
/// ARIA "roving tabindex" keys (arrows wrap, Home and End jump). `None` for other keys.
pub fn roving_target(key: &str, at: usize, n: usize) -> Option<usize> {
    if n == 0 {
        return None;
    }
    match key {
        "ArrowRight" | "ArrowDown" => Some((at + 1) % n),
        "ArrowLeft" | "ArrowUp" => Some((at + n - 1) % n),
        "Home" => Some(0),
        "End" => Some(n - 1),
        _ => None,
    }
}

/// A roving tabindex over the elements matching `selector` inside the element the
/// key event is bound to: an arrow key moves the focus (and the one tab stop, tabindex
/// 0) from the focused item to its neighbour, so the whole group is one Tab press.
/// Returns the newly focused element's index, if the key moved it.
pub fn rove(e: &KeyboardEvent, selector: &str) -> Option<usize> {
    let group = e.current_target()?.dyn_into::<Element>().ok()?;
    let items = group.query_selector_all(selector).ok()?;
    let n = items.length() as usize;
    let focused = e.target()?.dyn_into::<Element>().ok()?;
    let at = (0..n).find(|&i| {
        items
            .item(i as u32)
            .is_some_and(|x| x.is_same_node(Some(focused.as_ref())))
    })?;
    let to = roving_target(&e.key(), at, n)?;
    e.prevent_default();
    let next = items.item(to as u32)?.dyn_into::<HtmlElement>().ok()?;
    let _ = focused.set_attribute("tabindex", "-1");
    let _ = next.set_attribute("tabindex", "0");
    let _ = next.focus();
    Some(to)
}

#[cfg(test)]
mod tests {
    use super::roving_target;

    #[test]
    fn arrows_wrap_and_home_end_jump() {
        assert_eq!(roving_target("ArrowRight", 0, 3), Some(1));
        assert_eq!(roving_target("ArrowDown", 2, 3), Some(0));
        assert_eq!(roving_target("ArrowLeft", 0, 3), Some(2));
        assert_eq!(roving_target("ArrowUp", 1, 3), Some(0));
        assert_eq!(roving_target("Home", 2, 3), Some(0));
        assert_eq!(roving_target("End", 0, 3), Some(2));
        assert_eq!(roving_target("Enter", 0, 3), None);
        assert_eq!(roving_target("ArrowRight", 0, 0), None);
    }
}
