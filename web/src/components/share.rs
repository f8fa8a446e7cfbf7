//! The Share menu: the scenario's link, an iframe snippet of its embed view (size
//! chosen) and a Markdown link, each with a copy button that works on plain HTTP too
//! (`dom::copy_text`'s fallbacks) and says what happened.
//!
//! ```text
//!  Share ▾  link      [https://…/#v2:…        ] [Copy link]      312 characters
//!           embed     [1280×720 ▾] [<iframe src="…?embed#v2:…" …>] [Copy snippet]
//!           Markdown  [[schedlab: kunpeng920-6426, v6.8](…)]      [Copy Markdown]
//! ```

use schedlab_core::patch::PatchSet;
use yew::prelude::*;

use crate::dom::{copy_text, select_value, Copied};
use crate::state::{AppContext, View};

/// The embed sizes offered (width, height), the first the default: a 16:9 slide's,
/// where a simulation's chart and both machines, live, are whole side by side (e2e
/// `embed` measures kunpeng920-6426 and epyc9654-1p there; at 800×450 only the chart
/// is, the drawings scroll below it).
pub const EMBED_SIZES: [(u32, u32); 3] = [(1280, 720), (800, 450), (640, 360)];

/// The page's address without query and fragment ("" outside a browser).
fn page_base() -> String {
    web_sys::window()
        .and_then(|w| {
            let l = w.location();
            Some(format!("{}{}", l.origin().ok()?, l.pathname().ok()?))
        })
        .unwrap_or_default()
}

/// The scenario's link.
pub fn share_link(base: &str, fragment: &str) -> String {
    format!("{base}#{fragment}")
}

/// The iframe snippet of the scenario's embed view.
pub fn iframe_snippet(base: &str, fragment: &str, (w, h): (u32, u32), title: &str) -> String {
    format!(
        "<iframe src=\"{base}?embed#{fragment}\" width=\"{w}\" height=\"{h}\" \
         title=\"{}\" loading=\"lazy\" style=\"border:0\"></iframe>",
        html_attr(title)
    )
}

/// A Markdown link to the scenario.
pub fn markdown_link(base: &str, fragment: &str, title: &str) -> String {
    let text = title.replace('[', "(").replace(']', ")");
    format!("[{text}]({base}#{fragment})")
}

/// Escapes text for a double-quoted HTML attribute.
fn html_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The kernels a view shows: `v6.6`, or `v6.6 against v6.6+cluster` where the
/// Wake-up and Simulate tabs compare a second patch set (a slide's title and the
/// embed's header must name both sides, not A alone).
pub fn kernels(view: View, sides: &[PatchSet]) -> String {
    match (view, sides) {
        (View::Wakeup | View::Simulate, [a, b, ..]) if a != b => format!("v{a} against v{b}"),
        (_, [a, ..]) => format!("v{a}"),
        (_, []) => String::new(),
    }
}

/// What the scenario shows, in a few words (link text, iframe title).
fn title(state: &AppContext) -> String {
    let what = match state.tab() {
        View::Domains | View::Dmesg | View::Debugfs => {
            format!("sched domains of CPU {}", state.cpu().0)
        }
        View::Wakeup => "a wake-up decision".to_string(),
        View::Simulate => "a simulation".to_string(),
    };
    format!(
        "schedlab: {} on {}, {}",
        what,
        state.machine().name,
        kernels(state.tab(), &state.sides())
    )
}

#[function_component(ShareMenu)]
pub fn share_menu() -> Html {
    let size = use_state(|| EMBED_SIZES[0]);
    // Which copy ran last and how it went, for the feedback line.
    let outcome = use_state(|| None::<(&'static str, Copied)>);
    let Some(state) = use_context::<AppContext>() else {
        return html! {};
    };
    let base = page_base();
    let fragment = state.fragment();
    let title = title(&state);
    let link = share_link(&base, &fragment);
    let snippet = iframe_snippet(&base, &fragment, *size, &title);
    let markdown = markdown_link(&base, &fragment, &title);

    let copy = |what: &'static str, text: String, field: &'static str| {
        let outcome = outcome.clone();
        Callback::from(move |_: MouseEvent| outcome.set(Some((what, copy_text(&text, field)))))
    };
    let onsize = {
        let size = size.clone();
        Callback::from(move |e: Event| {
            let picked = select_value(&e).and_then(|v| {
                EMBED_SIZES
                    .into_iter()
                    .find(|(w, h)| format!("{w}x{h}") == v)
            });
            if let Some(s) = picked {
                size.set(s);
            }
        })
    };
    let feedback = outcome.as_ref().map(|(what, how)| match how {
        Copied::Clipboard => format!("Copied the {what}."),
        Copied::Selected => format!(
            "This page cannot reach the clipboard (plain HTTP?): the {what} is selected, press Ctrl+C (⌘C on a Mac) to copy it."
        ),
    });
    html! {
        <details class="share">
            <summary>{ "Share" }</summary>
            <div class="share-body">
                <label for="share-link">{ "Link" }</label>
                <input id="share-link" readonly=true value={link.clone()} />
                <button onclick={copy("link", link.clone(), "share-link")}>{ "Copy link" }</button>
                <span class="share-len">{ format!("{} characters", link.chars().count()) }</span>

                <label for="share-embed">{ "Embed" }</label>
                <textarea id="share-embed" readonly=true rows="3" value={snippet.clone()} />
                <button onclick={copy("snippet", snippet, "share-embed")}>{ "Copy snippet" }</button>
                <select class="share-size" aria-label="embed size" onchange={onsize}>
                    { for EMBED_SIZES.iter().map(|&(w, h)| html! {
                        <option value={format!("{w}x{h}")} selected={(w, h) == *size}>
                            { format!("{w} × {h}") }
                        </option>
                    }) }
                </select>

                <label for="share-md">{ "Markdown" }</label>
                <input id="share-md" readonly=true value={markdown.clone()} />
                <button onclick={copy("Markdown", markdown, "share-md")}>{ "Copy Markdown" }</button>
                <span></span>
                <p class="share-feedback" role="status" aria-live="polite">{ feedback.unwrap_or_default() }</p>
            </div>
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison names both kernels; a view without one, or B the same as A,
    /// names A alone.
    #[test]
    fn the_title_names_both_sides_of_a_comparison() {
        let p = |s: &str| s.parse::<PatchSet>().unwrap();
        let ab = [p("6.6"), p("6.6+cluster")];
        assert_eq!(kernels(View::Simulate, &ab), "v6.6 against v6.6+cluster");
        assert_eq!(kernels(View::Wakeup, &ab), "v6.6 against v6.6+cluster");
        assert_eq!(kernels(View::Domains, &ab), "v6.6");
        assert_eq!(kernels(View::Wakeup, &[p("6.8"), p("6.8")]), "v6.8");
        assert_eq!(kernels(View::Simulate, &[p("6.8")]), "v6.8");
    }

    #[test]
    fn snippets_carry_the_fragment_and_escape_the_title() {
        let base = "https://example.org/schedlab/";
        assert_eq!(
            share_link(base, "v1:abc"),
            "https://example.org/schedlab/#v1:abc"
        );
        let s = iframe_snippet(base, "v1:abc", (800, 450), "a \"b\" <c> & d");
        assert_eq!(
            s,
            "<iframe src=\"https://example.org/schedlab/?embed#v1:abc\" width=\"800\" \
             height=\"450\" title=\"a &quot;b&quot; &lt;c&gt; &amp; d\" loading=\"lazy\" \
             style=\"border:0\"></iframe>"
        );
        assert_eq!(
            markdown_link(base, "v1:abc", "x [y]"),
            "[x (y)](https://example.org/schedlab/#v1:abc)"
        );
    }
}
