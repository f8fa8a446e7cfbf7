//! "Custom…": paste what `lscpu -p`, `lscpu -e`, plain `lscpu` (optionally followed by
//! `numactl -H`), a sysfs dump or a JSON machine spec printed on your machine, and
//! core's `load_machine()` models it, in the import module (`machine_import`: fetched
//! the first time Load is pressed; the button says "Reading…" until the answer comes).
//! Errors are core's, shown verbatim, or say that the module could not be fetched; the
//! current machine stays until a load succeeds. An error sits right under the Load
//! button, is announced (`role="alert"`) and is scrolled into view if it landed below
//! the screen (a phone's, where the button is the last thing on it). "Copy as JSON"
//! gives the spec back.

use schedlab_core::topology::Arch;
use yew::prelude::*;

use crate::dom::{copy_text, select_value, textarea_value, Copied};
use crate::format::pretty_json;
use crate::machine_import;
use crate::state::{Action, AppContext};

#[function_component(CustomMachine)]
pub fn custom_machine() -> Html {
    let ctx = use_context::<AppContext>();
    // Opens holding the designer's "edit as JSON" text, if that is how it opened.
    let text = {
        let prefill = ctx.as_ref().map(|s| s.custom_prefill.1.clone());
        use_state(move || prefill.unwrap_or_default())
    };
    let arch = use_state(|| None::<Arch>);
    let copied = use_state(|| None::<Copied>);
    // A Load in flight: the import module is being fetched or is reading the text.
    let reading = use_state(|| false);
    let error_box = use_node_ref();
    // The spec's JSON is written (and put in its textarea) only while its fold is open,
    // once per spec: a 1024-node machine's is 10 MB, and Yew reads a textarea's whole
    // value back from the DOM at every render, which froze the page for seconds a click.
    let json_open = use_state(|| false);
    let spec = ctx.as_ref().and_then(|s| s.custom().cloned());
    let json = use_memo((spec, *json_open), |(spec, open)| {
        spec.as_ref()
            .filter(|_| *open)
            .map(|spec| pretty_json(&serde_json::to_string(spec).unwrap_or_default()))
    });
    {
        // Each new error (or the same one again, after another Load) is brought on screen.
        let error = ctx.as_ref().and_then(|s| s.custom_error.clone());
        let error_box = error_box.clone();
        use_effect_with((error, *reading), move |(error, reading)| {
            if let (Some(_), false, Some(e)) =
                (error, reading, error_box.cast::<web_sys::Element>())
            {
                let r = e.get_bounding_client_rect();
                let height = web_sys::window()
                    .and_then(|w| w.inner_height().ok())
                    .and_then(|h| h.as_f64())
                    .unwrap_or(f64::MAX);
                if r.bottom() > height || r.top() < 0.0 {
                    e.scroll_into_view_with_bool(false);
                }
            }
        });
    }
    let Some(state) = ctx else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };

    let oninput = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(t) = textarea_value(&e) {
                text.set(t);
            }
        })
    };
    let onarch = {
        let arch = arch.clone();
        Callback::from(move |e: Event| {
            let v = select_value(&e);
            arch.set(match v.as_deref() {
                Some("arm64") => Some(Arch::Arm64),
                Some("x86") => Some(Arch::X86),
                _ => None,
            });
        })
    };
    let onload = {
        let (text, arch, dispatcher) = (text.clone(), arch.clone(), state.dispatcher());
        let (copied, reading) = (copied.clone(), reading.clone());
        Callback::from(move |_: MouseEvent| {
            if *reading {
                return;
            }
            copied.set(None);
            reading.set(true);
            let (text, arch) = ((*text).clone(), *arch);
            let (dispatcher, reading) = (dispatcher.clone(), reading.clone());
            yew::platform::spawn_local(async move {
                let read = machine_import::load(text, arch).await;
                reading.set(false);
                dispatcher.dispatch(Action::CustomRead(read.map(Box::new)));
            });
        })
    };
    let onclose = {
        let dispatcher = state.dispatcher();
        Callback::from(move |_: MouseEvent| dispatcher.dispatch(Action::OpenCustom(false)))
    };

    let ontoggle = {
        let json_open = json_open.clone();
        Callback::from(move |e: Event| {
            if let Some(d) = e.target_dyn_into::<web_sys::HtmlDetailsElement>() {
                json_open.set(d.open());
            }
        })
    };
    let oncopy = {
        let json = json.clone();
        let copied = copied.clone();
        Callback::from(move |_: MouseEvent| {
            copied.set(Some(copy_text(
                json.as_deref().unwrap_or_default(),
                "custom-json-text",
            )))
        })
    };

    html! {
        <section class="panel custom" aria-label="custom machine">
            <div class="custom-head">
                <h2>{ "Custom machine" }</h2>
                <button class="close" onclick={onclose} aria-label="close">{ "×" }</button>
            </div>
            <p class="hint">
                { "Paste the output of " }<code>{ "lscpu -p" }</code>{ ", " }<code>{ "lscpu -e" }</code>
                { " or plain " }<code>{ "lscpu" }</code>{ " (optionally followed by " }
                <code>{ "numactl -H" }</code>{ "), a sysfs topology dump, or a JSON machine spec." }
            </p>
            <div class="custom-row">
                <textarea id="custom-text" rows="10" spellcheck="false" value={(*text).clone()} {oninput}
                    placeholder="# CPU,Core,Socket,Node,,L1d,L1i,L2,L3&#10;0,0,0,0,,0,0,0,0&#10;…" />
                <div class="custom-side">
                    <label>
                        <span>{ "Architecture" }</span>
                        <select id="custom-arch" onchange={onarch}>
                            <option value="" selected={arch.is_none()}>{ "from the text (else x86)" }</option>
                            <option value="arm64" selected={*arch == Some(Arch::Arm64)}>{ "arm64" }</option>
                            <option value="x86" selected={*arch == Some(Arch::X86)}>{ "x86" }</option>
                        </select>
                    </label>
                    <button id="custom-load" class="primary" onclick={onload} disabled={*reading}
                        aria-busy={reading.to_string()}>{ if *reading { "Reading…" } else { "Load" } }</button>
                    <span class="share-feedback" role="status" aria-live="polite">{
                        if *reading { "Reading the machine…" } else { "" }
                    }</span>
                    if let (Some(e), false) = (&state.custom_error, *reading) {
                        <pre class="error custom-error" role="alert" ref={error_box}>{ e.clone() }</pre>
                    }
                </div>
            </div>
            if state.custom().is_some() {
                <details class="custom-json" {ontoggle}>
                    <summary>{ "This machine as JSON" }</summary>
                    <button onclick={oncopy}>{ match *copied {
                        Some(Copied::Clipboard) => "Copied",
                        _ => "Copy as JSON",
                    } }</button>
                    <span class="share-feedback" role="status" aria-live="polite">{
                        if *copied == Some(Copied::Selected) {
                            "No clipboard here (plain HTTP?): the JSON is selected, press Ctrl+C (⌘C) to copy it."
                        } else { "" }
                    }</span>
                    <textarea id="custom-json-text" class="custom-json-text" readonly=true rows="12"
                        aria-label="this machine as JSON" value={(*json).clone().unwrap_or_default()} />
                </details>
            }
        </section>
    }
}
