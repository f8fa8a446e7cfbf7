//! The topology designer (issue 18): a machine built by hand from counts per level
//! (and memory-only NUMA nodes), its architecture and Kconfig, per-CPU capacities and
//! the NUMA distance grid (`designer_numa`), plus
//! the custom workload's distributions. Each keystroke is an `Action::EditDesign`;
//! `state::designer` reads the form and the machine follows while it is valid, so the
//! drawing and the domains update as one types. An error shows beside its field
//! (`aria-describedby`), and the page keeps the last valid machine.
//!
//! Also here: [`MissingNote`], the note under the pickers when a pasted machine lacked
//! what the kernel uses (core's `Missing`), with a button into the designer.

use schedlab_core::topology::{Arch, Firmware, KernelConfig, Numbering};
use schedlab_core::workload::Workload;
use yew::prelude::*;

use super::designer_numa::numa_fieldset;
use crate::dom::{checked, input_value, select_value};
use crate::state::designer::{Count, Designer, Draft, Field, Kopt};
use crate::state::{Action, AppContext};

/// What each option builds, for the checkbox's hint.
fn kopt_hint(k: Kopt) -> &'static str {
    match k {
        Kopt::Smt => "the SMT level",
        Kopt::Cluster => "the CLS level (arm64 clusters, x86 shared L2)",
        Kopt::Mc => "the MC level (the LLC)",
        Kopt::Numa => "the NODE and NUMA levels; off: one node",
    }
}

/// What each firmware is and where it is found, for its option.
fn firmware_label(f: Firmware) -> &'static str {
    match f {
        Firmware::Acpi => "ACPI PPTT (servers)",
        Firmware::Dt => "DT: socket nodes (QEMU virt)",
        Firmware::DtClusters => "DT: clusters only (boards)",
    }
}

/// arm64 only: the firmware picker and the shared-cache box (before v6.0 a device
/// tree's cpu-map reads differently; without a shared cache MC shrinks).
fn firmware_fields(
    firmware: Firmware,
    no_shared_cache: bool,
    edit: &Callback<(Field, String)>,
) -> Html {
    let options = Firmware::ALL.iter().map(|&f| {
        html! { <option value={f.as_str()} selected={f == firmware}>{ firmware_label(f) }</option> }
    });
    html! {
        <>
            <div class="designer-field">
                <label for={Field::Firmware.id()}>{ "firmware: where the kernel reads the topology (a device tree's cpu-map reads differently before 6.0)" }</label>
                <select id={Field::Firmware.id()} onchange={on_select(edit, Field::Firmware)}>{ for options }</select>
            </div>
            <label class="designer-check">
                <input type="checkbox" id={Field::NoSharedCache.id()} checked={no_shared_cache} onchange={on_check(edit, Field::NoSharedCache)} />
                <span>{ "no shared cache described (QEMU's device tree): MC is each CPU alone, or its cluster from 6.0" }</span>
            </label>
        </>
    }
}

/// The architecture picker, arm64's firmware fields and the Kconfig boxes: the
/// form's, and an irregular machine's (they apply to any spec).
fn kernel_fields(
    arch: Arch,
    (firmware, no_shared_cache): (Firmware, bool),
    config: &KernelConfig,
    edit: &Callback<(Field, String)>,
) -> Html {
    let boxes = Kopt::ALL.iter().map(|&k| {
        let field = Field::Config(k);
        let onchange = on_check(edit, field);
        html! {
            <label class="designer-check">
                <input type="checkbox" id={field.id()} checked={k.get(config)} {onchange} />
                <span><code>{ k.name() }</code>{ format!(" — {}", kopt_hint(k)) }</span>
            </label>
        }
    });
    html! {
        <fieldset class="designer-kconfig">
            <legend>{ "Kernel (--arch, --kconfig)" }</legend>
            <div class="designer-field">
                <label for={Field::Arch.id()}>{ "architecture: which topology table the kernel uses" }</label>
                <select id={Field::Arch.id()} onchange={on_select(edit, Field::Arch)}>
                    <option value="x86" selected={arch == Arch::X86}>{ "x86 (CLS = shared L2, MC = LLC)" }</option>
                    <option value="arm64" selected={arch == Arch::Arm64}>{ "arm64 (CLS = PPTT cluster)" }</option>
                </select>
            </div>
            if arch == Arch::Arm64 {
                { firmware_fields(firmware, no_shared_cache, edit) }
            }
            { for boxes }
        </fieldset>
    }
}

/// The `oninput` of a text field that edits `field`: its value, emitted to `d`.
pub(super) fn on_edit(d: &Callback<(Field, String)>, field: Field) -> Callback<InputEvent> {
    let d = d.clone();
    Callback::from(move |e: InputEvent| {
        if let Some(v) = input_value(&e) {
            d.emit((field, v));
        }
    })
}

/// The `onchange` of a `<select>` that edits `field`: the chosen value, emitted to `d`.
fn on_select(d: &Callback<(Field, String)>, field: Field) -> Callback<Event> {
    let d = d.clone();
    Callback::from(move |e: Event| {
        if let Some(v) = select_value(&e) {
            d.emit((field, v));
        }
    })
}

/// The `onchange` of a checkbox that edits `field`: "y" when checked, "n" when not.
pub(super) fn on_check(d: &Callback<(Field, String)>, field: Field) -> Callback<Event> {
    let d = d.clone();
    Callback::from(move |e: Event| d.emit((field, if checked(&e) { "y" } else { "n" }.to_string())))
}

/// A labelled text field of the form, its error beside it.
pub(super) fn text_field(
    draft: &Draft,
    field: Field,
    label: &str,
    value: &str,
    numeric: bool,
    d: &Callback<(Field, String)>,
) -> Html {
    let id = field.id();
    let error = draft.errors.get(&field).cloned();
    let oninput = on_edit(d, field);
    html! {
        <div class={classes!("designer-field", error.is_some().then_some("invalid"))}>
            <label for={id.clone()}>{ label.to_string() }</label>
            <input id={id} type="text" value={value.to_string()} {oninput}
                inputmode={numeric.then_some("numeric")} autocomplete="off" spellcheck="false"
                aria-invalid={error.is_some().then_some("true")}
                aria-describedby={error.is_some().then(|| field.error_id())} />
            if let Some(e) = error {
                <span class="error field-error" id={field.error_id()}>{ e }</span>
            }
        </div>
    }
}

#[function_component(DesignerPanel)]
pub fn designer_panel() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };
    let Some(designer) = state.designer.clone() else {
        return html! {};
    };
    let onclose = {
        let d = state.dispatcher();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::OpenDesigner(false)))
    };
    let head = html! {
        <div class="custom-head">
            <h2 id="designer-title">{ "Topology designer" }</h2>
            <button class="close" onclick={onclose} aria-label="close the designer">{ "×" }</button>
        </div>
    };
    let edit: Callback<(Field, String)> = {
        let d = state.dispatcher();
        Callback::from(move |(f, v): (Field, String)| d.dispatch(Action::EditDesign(f, v)))
    };
    let draft = match designer {
        Designer::Irregular { reason, .. } => {
            let m = state.machine();
            let onjson = {
                let d = state.dispatcher();
                Callback::from(move |_: MouseEvent| d.dispatch(Action::EditAsJson))
            };
            return html! {
                <section class="panel custom designer" aria-labelledby="designer-title">
                    { head }
                    <p class="designer-irregular" id="designer-irregular">
                        { format!("{} cannot be drawn as counts per level: {reason}. ", state.machine().name) }
                        { "Its per-CPU JSON spec describes it exactly; edit that instead (each CPU's package, node, LLC, cluster, core, capacity)." }
                    </p>
                    <button id="designer-json" class="primary" onclick={onjson}>{ "Edit its per-CPU JSON" }</button>
                    <p class="hint">{ "Its architecture and kernel config can still be chosen here:" }</p>
                    <div class="designer-body">{ kernel_fields(m.arch, (m.firmware, m.no_shared_cache), &m.config, &edit) }</div>
                </section>
            };
        }
        Designer::Form(d) => d,
    };
    let m = state.machine();
    // The levels the kernel builds for the selected CPU, with their spans' sizes, so
    // the effect of an edit shows here as well as in the domain tree.
    let levels_built = match state.domains() {
        Ok(d) => match d.try_cpu(state.cpu()) {
            Some(c) if !c.domains.is_empty() => format!(
                "The kernel builds, for CPU {}: {}",
                state.cpu().0,
                c.domains
                    .iter()
                    .map(|sd| format!("{} ({})", sd.name, sd.span.weight()))
                    .collect::<Vec<_>>()
                    .join(" › ")
            ),
            _ => format!(
                "CPU {} has no sched domains (a one-CPU machine).",
                state.cpu().0
            ),
        },
        Err(e) => format!("No sched domains: {e}"),
    };

    // The memory-only nodes come next to the nodes per socket: both size the grid.
    let counts = Count::ALL.iter().flat_map(|&c| {
        let field = text_field(
            &draft,
            Field::Count(c),
            c.label(),
            draft.count(c),
            true,
            &edit,
        );
        let memory = (c == Count::NodesPerSocket).then(|| {
            text_field(
                &draft,
                Field::MemoryNodes,
                "memory-only nodes (no CPUs)",
                &draft.memory_nodes,
                true,
                &edit,
            )
        });
        std::iter::once(field).chain(memory)
    });
    // The machine in use's nodes without CPUs (the form's may not have built yet).
    let memory_in_use = m.nr_nodes().saturating_sub(
        m.cpus
            .iter()
            .map(|c| usize::from(c.node.0) + 1)
            .max()
            .unwrap_or(0),
    );
    let total_error = draft.errors.get(&Field::Total).cloned();
    let custom_now = matches!(state.sim().workload, Workload::Custom { .. });
    let work_fields = [
        (Field::ClientWork, "client work per request", &draft.work[0]),
        (Field::ServerWork, "server work per request", &draft.work[1]),
        (
            Field::Sleep,
            "client sleep between requests",
            &draft.work[2],
        ),
    ];

    html! {
        <section class="panel custom designer" aria-labelledby="designer-title">
            { head }
            <p class="hint">
                { "Every edit rebuilds the machine, the drawing and the domains; a field with an error keeps the last machine that built. The link carries the machine as its spec." }
            </p>
            <div class="designer-body">
                <fieldset class="designer-levels">
                    <legend>{ "Levels" }</legend>
                    <div class="designer-row">
                        { text_field(&draft, Field::Name, "name", &draft.name, false, &edit) }
                        <div class="designer-field">
                            <label for={Field::Numbering.id()}>{ "SMT numbering" }</label>
                            <select id={Field::Numbering.id()} onchange={on_select(&edit, Field::Numbering)}>
                                <option value="linear" selected={draft.numbering == Numbering::Linear}>{ "siblings adjacent" }</option>
                                <option value="smt-split" selected={draft.numbering == Numbering::SmtSplit}>{ "n and n+N/2 (x86)" }</option>
                            </select>
                        </div>
                    </div>
                    <div class="designer-counts">{ for counts }</div>
                    <p class="designer-total" id={Field::Total.id()} role="status"
                        aria-describedby={total_error.is_some().then(|| Field::Total.error_id())}>
                        { format!("In use: {} CPU{}, {} NUMA node{}", m.nr_cpus(), if m.nr_cpus() == 1 { "" } else { "s" }, m.nr_nodes(), if m.nr_nodes() == 1 { "" } else { "s" }) }
                        if memory_in_use > 0 {
                            { format!(" ({memory_in_use} memory-only)") }
                        }
                    </p>
                    <p class="designer-levels-built" id="designer-levels-built">
                        { levels_built }
                    </p>
                    if let Some(e) = total_error {
                        <p class="error field-error" id={Field::Total.error_id()}>{ e }</p>
                    }
                </fieldset>
                { kernel_fields(draft.arch, (draft.firmware, draft.no_shared_cache), &draft.config, &edit) }
                <fieldset class="designer-capacity">
                    <legend>{ "CPU capacity (hybrid parts)" }</legend>
                    { text_field(&draft, Field::Capacities, "capacity per CPU, in CPU order", &draft.capacities, false, &edit) }
                    <p class="hint">{ "arch_scale_cpu_capacity(), 1-1024, e.g. 1024×8, 446×8 for 8 big and 8 LITTLE CPUs; empty: 1024 each (symmetric)." }</p>
                </fieldset>
                { numa_fieldset(&draft, state.release(), &edit) }
                <fieldset class="designer-work">
                    <legend>{ "Custom workload (Simulate tab)" }</legend>
                    <p class="hint">
                        { "As the CLI writes them: fixed:5us, uniform:5-10us, exp:20us." }
                        if !custom_now {
                            { format!(" The Simulate tab runs {} now; editing these switches it to the custom workload.", state.sim().workload.name()) }
                        }
                    </p>
                    <div class="designer-row">
                        { for work_fields.into_iter().map(|(f, label, v)| text_field(&draft, f, label, v, false, &edit)) }
                    </div>
                </fieldset>
            </div>
        </section>
    }
}

/// Under the pickers, for a pasted machine that lacked something the kernel uses:
/// what was assumed, and the designer to add it.
#[function_component(MissingNote)]
pub fn missing_note() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! {};
    };
    let missing = state.missing();
    if missing.is_empty() {
        return html! {};
    }
    let what: Vec<&str> = missing.iter().map(|m| m.what()).collect();
    let onclick = {
        let d = state.dispatcher();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::OpenDesigner(true)))
    };
    html! {
        <p class="missing-note" id="missing-note">
            { format!("The pasted text does not give {}; schedlab assumed defaults (see the machine's description). ", what.join(", nor ")) }
            if state.designer.is_some() {
                { "Fill them in in the designer below." }
            } else {
                <button id="missing-designer" {onclick}>{ "Add them in the designer" }</button>
            }
        </p>
    }
}
