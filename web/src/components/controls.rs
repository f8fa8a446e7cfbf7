//! The pickers: machine preset, kernel release and CPU.
//!
//! The machine picker always names the machine in use. "Custom…" is an action (it
//! opens the paste form), not a machine: picking it leaves the machine as it was, so
//! the picker goes back to that machine's name, and a paste that fails to load leaves
//! it there (the browser would otherwise keep showing "Custom…", which Yew's
//! unchanged `selected` attributes do not undo).

use schedlab_core::cpumask::CpuId;
use schedlab_core::release::Release;
use schedlab_core::topology::presets::{self, PRESETS};
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::dom::select_value;
use crate::state::{Action, AppContext, CUSTOM};

#[function_component(Controls)]
pub fn controls() -> Html {
    let ctx = use_context::<AppContext>();
    let picker = use_node_ref();
    let in_use = ctx.as_ref().map(|s| s.preset().to_string());
    {
        // After every render the picker shows the machine in use.
        let (picker, in_use) = (picker.clone(), in_use.clone());
        use_effect(move || {
            if let (Some(select), Some(in_use)) = (picker.cast::<HtmlSelectElement>(), in_use) {
                if select.value() != in_use {
                    select.set_value(&in_use);
                }
            }
        });
    }
    let Some(state) = ctx else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };

    let on_preset = {
        let state = state.clone();
        let in_use = in_use.unwrap_or_default();
        Callback::from(move |e: Event| {
            if let Some(name) = select_value(&e) {
                if name == CUSTOM {
                    // Opening the form changes no machine.
                    if let Some(select) = e.target_dyn_into::<HtmlSelectElement>() {
                        select.set_value(&in_use);
                    }
                }
                state.dispatch(Action::SelectPreset(name));
            }
        })
    };
    let on_release = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            if let Some(Ok(release)) = select_value(&e).map(|v| v.parse::<Release>()) {
                state.dispatch(Action::SelectRelease(release));
            }
        })
    };
    let on_cpu = {
        let state = state.clone();
        Callback::from(move |e: Event| {
            if let Some(Ok(cpu)) = select_value(&e).map(|v| v.parse::<u32>()) {
                state.dispatch(Action::SelectCpu(CpuId(cpu)));
            }
        })
    };

    let on_design = {
        let state = state.clone();
        let open = state.designer.is_none();
        Callback::from(move |_: MouseEvent| state.dispatch(Action::OpenDesigner(open)))
    };
    let nr_cpus = state.machine().nr_cpus();
    let summary = presets::preset(state.preset()).map(|p| (p.summary, p.source));

    html! {
        <section class="controls" aria-label="controls">
            <label>
                <span>{ "Machine" }</span>
                <select id="preset" ref={picker} onchange={on_preset}>
                    { for PRESETS.iter().map(|p| html! {
                        <option value={p.name} selected={p.name == state.preset()}>{ p.name }</option>
                    }) }
                    if state.preset() == CUSTOM {
                        <option value={CUSTOM} selected=true>{ format!("custom: {}", state.machine().name) }</option>
                    }
                    <option value={CUSTOM} selected=false>{ "Custom…" }</option>
                </select>
            </label>
            <button id="open-designer" class="designer-open" onclick={on_design}
                aria-expanded={if state.designer.is_some() { "true" } else { "false" }}>
                { "Edit in designer" }
            </button>
            <label>
                <span>{ "Kernel" }</span>
                <select id="release" onchange={on_release}>
                    { for Release::all().into_iter().map(|r| html! {
                        <option value={r.to_string()} selected={r == state.release()}>
                            { format!("v{r}") }
                        </option>
                    }) }
                </select>
            </label>
            <label>
                <span>{ "CPU" }</span>
                <select id="cpu" onchange={on_cpu}>
                    { for (0..nr_cpus).map(|c| html! {
                        <option value={c.to_string()} selected={c == state.cpu().0}>{ c }</option>
                    }) }
                </select>
            </label>
            if state.preset() == CUSTOM {
                <p class="preset-summary">
                    { format!("Custom machine: {}", state.machine().name) }
                    <span class="source">{ if state.machine().description.starts_with("Built in the topology designer") {
                        "Built in the topology designer; the link carries its spec."
                    } else {
                        "Loaded from pasted text; the link carries its JSON spec."
                    } }</span>
                </p>
            }
            if let Some((summary, source)) = summary {
                <p class="preset-summary">
                    { summary }
                    <span class="source">{ format!("Source: {source}") }</span>
                </p>
            }
        </section>
    }
}
