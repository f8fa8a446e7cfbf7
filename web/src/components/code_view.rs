//! The code view beside a decision's trace (issue 17): the wake-up path as
//! kernel-style code (core's `wakeup::code::listing()` for the side's patch set), the
//! lines this decision went through highlighted and annotated with what happened
//! there (a test's outcome, the CPUs probed in order, a return's CPU), and the lines a
//! patch of the set adds or changes marked with the patch. Functions the decision
//! never reached are folded to one line, so a student reads the path, not 250 lines.

use std::collections::BTreeMap;

use schedlab_core::patch::Patch;
use schedlab_core::wakeup::code::{hits, line_site, listing, CodeLine, Site};
use schedlab_core::wakeup::{Reject, Step};
use yew::prelude::*;

use crate::state::WakeOutcome;

/// What happened at one line, in step order.
fn notes(o: &WakeOutcome) -> Result<BTreeMap<Site, Vec<String>>, String> {
    let mut out: BTreeMap<Site, Vec<String>> = BTreeMap::new();
    let mut probe_no = 0;
    for (i, site) in hits(&o.trace)? {
        let note = match &o.trace.steps[i] {
            Step::Enter { .. } => "entered".to_string(),
            Step::Check {
                outcome, cpu: c, ..
            } => {
                let on = c.map(|c| format!("CPU {}: ", c.0)).unwrap_or_default();
                format!("{on}{}", if *outcome { "true" } else { "false" })
            }
            Step::Probe { cpu, reject, .. } => {
                probe_no += 1;
                format!(
                    "#{probe_no} CPU {} {}",
                    cpu.0,
                    reject.map_or("idle ✓", Reject::as_str)
                )
            }
            Step::Budget { nr, .. } => format!("nr_idle_scan / budget = {nr}"),
            Step::Return { cpu, .. } => {
                format!(
                    "→ {}",
                    cpu.map_or("-1".to_string(), |c| format!("CPU {}", c.0))
                )
            }
            Step::Queue { path, .. } => format!("queued: {}", path.name()),
        };
        out.entry(line_site(site)).or_default().push(note);
    }
    Ok(out)
}

fn patch_label(p: Patch) -> String {
    format!("{}: {}", p.name(), p.summary())
}

#[derive(Properties, PartialEq)]
pub struct CodeViewProps {
    pub outcome: std::rc::Rc<WakeOutcome>,
}

/// The listing of one side, folded to the functions its decision reached.
#[function_component(CodeView)]
pub fn code_view(props: &CodeViewProps) -> Html {
    let o = &props.outcome;
    let notes = match notes(o) {
        Ok(n) => n,
        Err(e) => return html! { <p class="error">{ format!("No code view: {e}") }</p> },
    };
    let lines = listing(&o.patches);
    // The functions with at least one line this decision went through.
    let reached: Vec<&'static str> = {
        let mut f: Vec<&'static str> = lines
            .iter()
            .filter(|l| l.site.is_some_and(|s| notes.contains_key(&s)))
            .map(|l| l.func)
            .collect();
        f.dedup();
        f
    };
    let mut rows: Vec<Html> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let func = lines[i].func;
        let end = lines[i..]
            .iter()
            .position(|l| l.func != func)
            .map_or(lines.len(), |k| i + k);
        if reached.contains(&func) {
            rows.extend(lines[i..end].iter().map(|l| row(l, &notes)));
        } else {
            rows.push(html! {
                <div class="code-line folded">
                    <span class="gutter" aria-hidden="true">{ " " }</span>
                    <code>{ format!("{func}() — not reached") }</code>
                </div>
            });
        }
        i = end;
    }
    html! {
        <details class="code-view">
            <summary>{ format!("Code: the path through v{}", o.patches) }</summary>
            <p class="code-legend">
                <span class="code-line hit"><code>{ "highlighted" }</code></span>{ " this decision ran it · " }
                <span class="code-line patched"><span class="gutter">{ "+" }</span><code>{ "+" }</code></span>{ " a patch of this kernel adds or changes it" }
            </p>
            <div class="code-lines" role="region" aria-label={format!("wake-up code of v{}", o.patches)} tabindex="0">
                { for rows }
            </div>
        </details>
    }
}

fn row(l: &CodeLine, notes: &BTreeMap<Site, Vec<String>>) -> Html {
    let hit = l.site.and_then(|s| notes.get(&s));
    let title = l.by.map(patch_label);
    html! {
        <div class={classes!("code-line", hit.map(|_| "hit"), l.by.map(|_| "patched"))} title={title}>
            <span class="gutter" aria-hidden="true">{ if l.by.is_some() { "+" } else { " " } }</span>
            <code>{ l.text.clone() }</code>
            if let Some(n) = hit {
                <span class="code-note">{ format!("// {}", n.join(", ")) }</span>
            }
            if let Some(p) = l.by {
                <span class="visually-hidden">{ format!(" (added by {})", p.name()) }</span>
            }
        </div>
    }
}
