//! Glossary pop-overs: a term as a button that opens its explanation (core's
//! `lesson::glossary`) beside it, and the lessons' rich text (`[[term|shown]]`,
//! `` `code` ``).
//!
//! ```text
//!  [SD_CLUSTER]          ← a button: aria-expanded, aria-controls the note
//!    ┌ a cluster of cores ────────────────┐
//!    │ The CPUs share a cluster: …        │  role=note; Escape or the button closes
//!    └────────────────────────────────────┘
//! ```
//!
//! A disclosure, not a hover tooltip: it opens on click, tap, Enter or Space, stays
//! while read, and closes on Escape (focus back on the button) or a second press. A
//! click inside does not reach the card around it (a domain level card is clickable).

use std::cell::Cell;

use schedlab_core::lesson::glossary::term;
use yew::prelude::*;

thread_local! {
    static NEXT_ID: Cell<u32> = const { Cell::new(0) };
}

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The glossary key (`SD_CLUSTER`, `nr_idle_scan`).
    pub term: AttrValue,
    /// The button's text; the key when absent.
    #[prop_or_default]
    pub label: Option<AttrValue>,
    /// Extra classes for the button (`flag` on the domain cards' chips).
    #[prop_or_default]
    pub class: Classes,
}

#[function_component(Gloss)]
pub fn gloss(props: &Props) -> Html {
    let open = use_state(|| false);
    let id = use_memo((), |_| {
        let n = NEXT_ID.get();
        NEXT_ID.set(n + 1);
        format!("gloss-{n}")
    });
    let button = use_node_ref();
    let label = props.label.clone().unwrap_or_else(|| props.term.clone());
    let Some(t) = term(&props.term) else {
        // No entry: the plain text (a test keeps every flag and lesson term covered).
        return html! { <span class={props.class.clone()}>{ label }</span> };
    };
    let onclick = {
        let open = open.clone();
        Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            open.set(!*open);
        })
    };
    let onkeydown = {
        let (open, button) = (open.clone(), button.clone());
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Escape" && *open {
                e.stop_propagation();
                e.prevent_default();
                open.set(false);
                if let Some(b) = button.cast::<web_sys::HtmlElement>() {
                    let _ = b.focus();
                }
            }
        })
    };
    let stop = Callback::from(|e: MouseEvent| e.stop_propagation());
    html! {
        <span class="gloss" {onkeydown} onclick={stop}>
            <button type="button" ref={button} class={classes!("gloss-btn", props.class.clone())}
                aria-expanded={open.to_string()} aria-controls={(*id).clone()}
                data-term={t.key} {onclick}>
                { label }
            </button>
            if *open {
                <span class="gloss-pop" role="note" id={(*id).clone()} aria-label={t.title}>
                    <strong class="gloss-title">{ t.title }</strong>
                    <span class="gloss-text">{ t.text }</span>
                </span>
            }
        </span>
    }
}

/// A lesson's text: `[[key]]` and `[[key|shown]]` become [`Gloss`] buttons,
/// `` `code` `` becomes `<code>`, the rest is text.
pub fn rich(text: &str) -> Html {
    let mut out: Vec<Html> = Vec::new();
    let mut rest = text;
    loop {
        let gloss = rest.find("[[");
        let code = rest.find('`');
        match (gloss, code) {
            (Some(g), c) if c.is_none_or(|c| g < c) => {
                let Some(end) = rest[g..].find("]]").map(|e| e + g) else {
                    out.push(html! { { rest.to_string() } });
                    break;
                };
                out.push(html! { { rest[..g].to_string() } });
                let inner = &rest[g + 2..end];
                let (key, label) = inner.split_once('|').unwrap_or((inner, inner));
                let (key, label) = (key.to_string(), label.to_string());
                out.push(html! { <Gloss term={key} label={Some(AttrValue::from(label))} /> });
                rest = &rest[end + 2..];
            }
            (_, Some(c)) => {
                let Some(end) = rest[c + 1..].find('`').map(|e| e + c + 1) else {
                    out.push(html! { { rest.to_string() } });
                    break;
                };
                out.push(html! { { rest[..c].to_string() } });
                out.push(html! { <code>{ rest[c + 1..end].to_string() }</code> });
                rest = &rest[end + 1..];
            }
            _ => {
                out.push(html! { { rest.to_string() } });
                break;
            }
        }
    }
    html! { <>{ for out }</> }
}
