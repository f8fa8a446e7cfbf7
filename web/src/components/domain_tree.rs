//! The chosen CPU's sched domains, bottom-up as `sched_domain_debug()` walks them:
//!
//! ```text
//!  domain-0  CLS   0-3    SD_CLUSTER SD_SHARE_LLC …   groups {0} {1} {2} {3}
//!  domain-1  MC    0-31   SD_SHARE_LLC …              groups {0-3} … {28-31}
//!  domain-2  NUMA  0-63   SD_NUMA …                   groups {0-31} {32-63}
//! ```
//!
//! The dmesg tab shows core's byte-exact `dmesg` text for the CPU, the debugfs tab the
//! debugfs files, so a user can diff against their own machine. The tabs themselves
//! are `components::tabs`.

use schedlab_core::cpumask::CpuId;
use schedlab_core::release::Release;
use schedlab_core::sched_domain::format;
use schedlab_core::sched_domain::{CpuDomains, SchedDomain, SchedDomains};
use yew::prelude::*;

use crate::components::glossary::Gloss;
use crate::dom::{copy_text, Copied};

use crate::state::{Action, AppContext, View};

/// The Domains, dmesg and debugfs tabs' body: the chosen CPU's domain cards, or the
/// kernel's text for it.
#[function_component(DomainTree)]
pub fn domain_tree() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };
    let cpu = state.cpu();
    match state.domains() {
        Err(e) => html! {
            <p class="error">{ format!("The kernel would build no sched domains: {e}") }</p>
        },
        Ok(sds) => match sds.try_cpu(cpu) {
            None => html! {
                <p class="error">{ format!("CPU {} is offline: it has no sched domains.", cpu.0) }</p>
            },
            Some(cd) => match state.tab() {
                View::Dmesg => text_view(
                    format::dmesg(sds, Some(cpu)),
                    "sched_domain_debug() output for this CPU, as dmesg shows it with the \
                     sched_verbose boot parameter (timestamps left out).",
                ),
                View::Debugfs => text_view(
                    format::debugfs(sds, Some(cpu)),
                    "The per-domain files the kernel exposes for this CPU.",
                ),
                // The tab router shows this component for the three domain tabs only.
                View::Domains | View::Wakeup | View::Simulate => {
                    let on_level = {
                        let state = state.clone();
                        Callback::from(move |i: usize| {
                            let next = (state.highlight() != Some(i)).then_some(i);
                            state.dispatch(Action::Highlight(next));
                        })
                    };
                    tree(sds, cd, state.release(), state.highlight(), on_level)
                }
            },
        },
    }
}

fn text_view(text: String, note: &'static str) -> Html {
    let text = if text.is_empty() {
        "(the kernel prints nothing for this CPU)".to_string()
    } else {
        text
    };
    html! { <KernelText {text} {note} /> }
}

#[derive(Properties, PartialEq)]
struct KernelTextProps {
    text: String,
    note: &'static str,
}

/// The kernel's text (dmesg, debugfs) with a copy button that says what happened.
#[function_component(KernelText)]
fn kernel_text(props: &KernelTextProps) -> Html {
    let copied = use_state(|| None::<Copied>);
    // A new text (another CPU or tab) clears the old feedback.
    {
        let copied = copied.clone();
        use_effect_with(props.text.clone(), move |_| copied.set(None));
    }
    let oncopy = {
        let (copied, text) = (copied.clone(), props.text.clone());
        Callback::from(move |_: MouseEvent| copied.set(Some(copy_text(&text, "kernel-text"))))
    };
    let feedback = match *copied {
        Some(Copied::Clipboard) => "Copied.",
        Some(Copied::Selected) => {
            "No clipboard here (plain HTTP?): the text is selected, press Ctrl+C (⌘C) to copy it."
        }
        None => "",
    };
    html! {
        <>
            <p class="dmesg-note">
                { props.note }
                <button class="copy-text" onclick={oncopy}>{ "Copy" }</button>
                <span class="share-feedback" role="status" aria-live="polite">{ feedback }</span>
            </p>
            // A scrolling region: focusable, so the keyboard can scroll it.
            <pre id="kernel-text" class="dmesg" tabindex="0" aria-label={props.note}>{ props.text.clone() }</pre>
        </>
    }
}

fn tree(
    sds: &SchedDomains,
    cd: &CpuDomains,
    release: Release,
    highlight: Option<usize>,
    on_level: Callback<usize>,
) -> Html {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let facts = html! {
        <dl class="cpu-facts">
            <div><dt><Gloss term="sd_llc" label={Some(AttrValue::from("sd_llc_id"))} /></dt><dd>{ cd.sd_llc_id.0 }</dd></div>
            <div><dt><Gloss term="sd_llc" label={Some(AttrValue::from("sd_llc_size"))} /></dt><dd>{ cd.sd_llc_size }</dd></div>
            <div><dt><Gloss term="sd_share_id" /></dt><dd>{ cd.sd_share_id.0 }</dd></div>
            <div><dt><Gloss term="SMT" label={Some(AttrValue::from("sched_smt_present"))} /></dt><dd>{ yes_no(sds.sched_smt_present) }</dd></div>
            <div><dt><Gloss term="sched_cluster_active" /></dt><dd>{ yes_no(sds.sched_cluster_active) }</dd></div>
        </dl>
    };
    let messages = html! {
        { for sds.build_messages.iter().map(|m| html! { <p class="error">{ m.clone() }</p> }) }
    };
    if cd.domains.is_empty() {
        return html! {
            <>
                { messages }
                { facts }
                <p>{ "The kernel attaches no sched domain to this CPU: it has nothing to balance with." }</p>
            </>
        };
    }
    let levels = cd.domains.iter().enumerate().map(|(i, sd)| {
        let roles = [
            (cd.sd_llc == Some(i), "sd_llc"),
            (cd.sd_numa == Some(i), "sd_numa"),
            (cd.sd_asym_packing == Some(i), "sd_asym_packing"),
            (cd.sd_asym_cpucapacity == Some(i), "sd_asym_cpucapacity"),
        ];
        level(
            cd.cpu,
            i,
            sd,
            release,
            &roles,
            highlight == Some(i),
            &on_level,
        )
    });
    html! {
        <>
            { messages }
            { facts }
            <ol class="levels">{ for levels }</ol>
            <p class="hint">{ "Click a level to shade its span in the machine drawing." }</p>
        </>
    }
}

fn level(
    cpu: CpuId,
    index: usize,
    sd: &SchedDomain,
    release: Release,
    roles: &[(bool, &'static str)],
    active: bool,
    on_level: &Callback<usize>,
) -> Html {
    let onclick = {
        let on_level = on_level.clone();
        Callback::from(move |_: MouseEvent| on_level.emit(index))
    };
    let class = classes!("level", active.then_some("active"));
    let groups = sd.groups.iter().map(|g| {
        let class = classes!("group", g.span.test_cpu(cpu).then_some("local"));
        let balance =
            (g.balance_mask != g.span).then(|| format!(" (balance {})", g.balance_mask.to_list()));
        html! {
            <li {class} title={format!("group of CPU {} (sgc id {})", g.id.0, g.id.0)}>
                { g.span.to_list() }
                { balance.unwrap_or_default() }
                <span class="cap">{ format!("cap={}", g.capacity) }</span>
            </li>
        }
    });
    html! {
        <li {class} {onclick} data-level={sd.name}>
            <div class="level-head">
                <span class="level-num">{ format!("domain-{index}") }</span>
                <span class="level-name">{ sd.name }</span>
                <span class="level-span">{ sd.span.to_list() }</span>
                <span class="weight">{ format!("{} CPUs · level {}", sd.span_weight, sd.level) }</span>
                { for roles.iter().filter(|(on, _)| *on).map(|(_, r)| html! {
                    <span class="role">{ *r }</span>
                }) }
            </div>
            <div class="flags">
                { for sd.flags.names(release).into_iter().map(|f| html! { <Gloss term={f} class="flag" /> }) }
            </div>
            <div class="groups-title">{ format!("{} groups", sd.groups.len()) }</div>
            <ul class="groups">{ for groups }</ul>
        </li>
    }
}
