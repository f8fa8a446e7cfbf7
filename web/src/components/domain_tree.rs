//! The chosen CPU's sched domains, bottom-up as `sched_domain_debug()` walks them:
//!
//! ```text
//!  domain-0  CLS   0-3    SD_CLUSTER SD_SHARE_LLC …   groups {0} {1} {2} {3}
//!  domain-1  MC    0-31   SD_SHARE_LLC …              groups {0-3} … {28-31}
//!  domain-2  NUMA  0-63   SD_NUMA …                   groups {0-31} {32-63}
//! ```
//!
//! The dmesg tab shows core's byte-exact `dmesg` text for the CPU, the debugfs tab the
//! debugfs files and the CPU's /proc/schedstat lines, so a user can diff against their
//! own machine; each text has copy and download buttons. Under the domain cards,
//! `domain_diff.rs` compares the kernel with another release or patch set. The tabs themselves
//! are `components::tabs`.

use schedlab_core::cpumask::CpuId;
use schedlab_core::release::Release;
use schedlab_core::sched_domain::format;
use schedlab_core::sched_domain::{CpuDomains, SchedDomain, SchedDomains};
use yew::prelude::*;

use crate::components::domain_diff::DomainDiff;
use crate::components::glossary::Gloss;
use crate::dom::{copy_text, Copied};
use crate::export::{download_text, file_name};

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
                    "kernel-text",
                    file(&state, "dmesg"),
                ),
                View::Debugfs => html! {
                    <>
                        { text_view(
                            format::debugfs(sds, Some(cpu)),
                            "The per-domain files the kernel exposes for this CPU.",
                            "kernel-text",
                            file(&state, "debugfs"),
                        ) }
                        { text_view(
                            format::schedstat(sds, Some(cpu)),
                            "This CPU's lines of /proc/schedstat (version 15: a cpu line, then a \
                             domain line per level; the counters are zero on a machine that has \
                             not run).",
                            "schedstat-text",
                            file(&state, "schedstat"),
                        ) }
                    </>
                },
                // The tab router shows this component for the three domain tabs only.
                View::Domains | View::Wakeup | View::Simulate => {
                    let on_level = {
                        let state = state.clone();
                        Callback::from(move |i: usize| {
                            let next = (state.highlight() != Some(i)).then_some(i);
                            state.dispatch(Action::Highlight(next));
                        })
                    };
                    html! {
                        <>
                            { tree(sds, cd, state.release(), state.highlight(), on_level) }
                            <DomainDiff />
                        </>
                    }
                }
            },
        },
    }
}

/// The download's name: machine, kernel, what and CPU.
fn file(state: &AppContext, what: &str) -> String {
    file_name(
        &state.machine().name,
        &state.patches().to_string(),
        None,
        &format!("{what}-cpu{}", state.cpu().0),
        "txt",
    )
}

fn text_view(text: String, note: &'static str, id: &'static str, file: String) -> Html {
    let text = if text.is_empty() {
        "(the kernel prints nothing for this CPU)".to_string()
    } else {
        text
    };
    html! { <KernelText {text} {note} {id} {file} /> }
}

#[derive(Properties, PartialEq)]
struct KernelTextProps {
    text: String,
    note: &'static str,
    /// The `<pre>`'s id (the copy fallback selects it).
    id: &'static str,
    /// The download's file name.
    file: String,
}

/// The kernel's text (dmesg, debugfs, schedstat) with copy and download buttons that
/// say what happened.
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
        let id = props.id;
        Callback::from(move |_: MouseEvent| copied.set(Some(copy_text(&text, id))))
    };
    let saved = use_state(String::new);
    let ondownload = {
        let (saved, text, name) = (saved.clone(), props.text.clone(), props.file.clone());
        Callback::from(move |_: MouseEvent| {
            saved.set(match download_text(&name, "text/plain", &text) {
                Ok(()) => format!("Saved {name}."),
                Err(e) => format!("Could not save {name}: {e}"),
            })
        })
    };
    let feedback = match *copied {
        Some(Copied::Clipboard) => "Copied.".to_string(),
        Some(Copied::Selected) => {
            "No clipboard here (plain HTTP?): the text is selected, press Ctrl+C (⌘C) to copy it."
                .to_string()
        }
        None => (*saved).clone(),
    };
    html! {
        <>
            <p class="dmesg-note">
                <span class="note-text">{ props.note }</span>
                <button class="copy-text" data-copy={props.id} onclick={oncopy}
                    aria-label={format!("Copy {}", props.file)}>{ "Copy" }</button>
                <button class="copy-text" data-download={props.id} onclick={ondownload}
                    aria-label={format!("Download {}", props.file)}>{ "Download" }</button>
                <span class="share-feedback" role="status" aria-live="polite">{ feedback }</span>
            </p>
            // A scrolling region: focusable, so the keyboard can scroll it.
            <pre id={props.id} class="dmesg" tabindex="0" aria-label={props.note}>{ props.text.clone() }</pre>
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
            <p class="hint levels-hint">{ "Click a level to shade its span in the machine drawing." }</p>
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
