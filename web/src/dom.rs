//! Reading form controls from the events they fire, and moving the keyboard focus: the
//! one place the page reaches into `web_sys` element types. Each helper is `None`/`false`
//! (or does nothing) when the event did not come from such an element, so a stray event
//! is ignored instead of panicking.

use wasm_bindgen::JsCast;
use web_sys::{
    Element, HtmlDocument, HtmlElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement,
};
use yew::{Event, KeyboardEvent, TargetCast};

/// The value of the `<select>` an event came from.
pub fn select_value(e: &Event) -> Option<String> {
    e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value())
}

/// The value of the `<input>` an event came from.
pub fn input_value(e: &Event) -> Option<String> {
    e.target_dyn_into::<HtmlInputElement>().map(|i| i.value())
}

/// The number an `<input type="number">` an event came from holds, as the browser
/// read it (`valueAsNumber`; `None` when empty or not a number). The page parses no
/// decimal text itself: that would link core's `f64::from_str` and its tables, about
/// 10 KB brotli (docs/web.md, "Three modules").
pub fn input_number(e: &Event) -> Option<f64> {
    e.target_dyn_into::<HtmlInputElement>()
        .map(|i| i.value_as_number())
        .filter(|v| !v.is_nan())
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

/// A roving tabindex over the elements matching `selector` inside the group the
/// focused one is in (its closest ancestor matching `group`): an arrow key moves the
/// focus (and the one tab stop, tabindex 0) from the focused item to its neighbour,
/// so the whole group is one Tab press. Returns the newly focused element's index, if
/// the key moved it.
///
/// The group is found from the focused item, not from `current_target()`: Yew
/// delegates events to the app's root, which is the current target of every one, so
/// items matched from there are every group's (the theme switch's radios came first
/// in the page, so it worked; a second radio group's did not).
pub fn rove(e: &KeyboardEvent, group: &str, selector: &str) -> Option<usize> {
    let group = e
        .target()?
        .dyn_into::<Element>()
        .ok()?
        .closest(group)
        .ok()??;
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

thread_local! {
    /// One do-nothing rejection handler, made once, for every clipboard promise.
    static IGNORE_REJECTION: wasm_bindgen::closure::Closure<dyn FnMut(wasm_bindgen::JsValue)> =
        wasm_bindgen::closure::Closure::new(|_: wasm_bindgen::JsValue| {});
}

/// How a copy went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copied {
    /// Handed to the clipboard (the async Clipboard API, or `execCommand("copy")`).
    Clipboard,
    /// Neither worked (no clipboard API on plain HTTP, a refusal): the text is selected
    /// in its field for the user to copy with Ctrl+C / Cmd+C.
    Selected,
}

/// Copies `text`, falling back where the Clipboard API is missing (pages served over
/// plain HTTP on a LAN have no `navigator.clipboard`; calling it there throws): first
/// `navigator.clipboard.writeText()`, else `document.execCommand("copy")` on a
/// temporary textarea, else the text is selected in the field `field_id` (an input or
/// textarea showing it). Never throws.
pub fn copy_text(text: &str, field_id: &str) -> Copied {
    let Some(w) = web_sys::window() else {
        return Copied::Selected;
    };
    let nav = w.navigator();
    let has_api = js_sys::Reflect::get(nav.as_ref(), &"clipboard".into())
        .is_ok_and(|c| !c.is_undefined() && !c.is_null());
    if has_api {
        // A refusal arrives later as a rejected promise; swallow it (the text is on
        // screen in its field either way).
        let promise = nav.clipboard().write_text(text);
        IGNORE_REJECTION.with(|ignore| {
            let _ = promise.catch(ignore);
        });
        return Copied::Clipboard;
    }
    let Some(doc) = w.document() else {
        return Copied::Selected;
    };
    let via_command = (|| {
        let area = doc
            .create_element("textarea")
            .ok()?
            .dyn_into::<HtmlTextAreaElement>()
            .ok()?;
        area.set_value(text);
        let _ = area.set_attribute("readonly", "");
        let _ = area.set_attribute("class", "visually-hidden");
        let body = doc.body()?;
        body.append_child(&area).ok()?;
        area.select();
        let ok = doc
            .clone()
            .dyn_into::<HtmlDocument>()
            .ok()
            .and_then(|d| d.exec_command("copy").ok())
            .unwrap_or(false);
        area.remove();
        Some(ok)
    })()
    .unwrap_or(false);
    if via_command {
        return Copied::Clipboard;
    }
    select_field(field_id);
    Copied::Selected
}

/// Focuses and selects the text of the input, textarea or other element (a `<pre>`)
/// with this id.
pub fn select_field(id: &str) {
    let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    else {
        return;
    };
    if let Some(i) = el.dyn_ref::<HtmlInputElement>() {
        let _ = i.focus();
        i.select();
    } else if let Some(t) = el.dyn_ref::<HtmlTextAreaElement>() {
        let _ = t.focus();
        t.select();
    } else if let Some(sel) = web_sys::window().and_then(|w| w.get_selection().ok().flatten()) {
        let _ = sel.select_all_children(&el);
    }
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
