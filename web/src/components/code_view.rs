//! The code view beside a decision's trace (issue 17): the wake-up path as
//! kernel-style code (core's `wakeup::code::listing()` for the side's patch set), the
//! lines this decision went through highlighted and annotated with what happened
//! there (a test's outcome, the CPUs probed in order, a return's CPU), and the lines a
//! patch of the set adds or changes marked with the patch. Functions the decision
//! never reached are folded to one line, so a student reads the path, not 250 lines.
//!
//! A stepper walks the path the way a debugger does: Start, Step back, Step and End
//! (or n / ↓ and p / ↑ in the focused listing) move a cursor through the decision's
//! steps in trace order, the order of the trace list beside it. The line of the
//! current step is marked and scrolled into view with that step's note in bold; lines
//! of earlier steps stay highlighted, later ones are plain, and a function unfolds
//! when the cursor enters it. A polite live region says "step k of n" and the note.
//! Before Start (and after the decision changes) every line the decision ran is
//! highlighted at once.

use std::collections::BTreeMap;
use std::rc::Rc;

use schedlab_core::patch::Patch;
use schedlab_core::wakeup::code::{hits, line_site, listing, CodeLine, Site};
use schedlab_core::wakeup::{Reject, Step};
use yew::prelude::*;

use crate::state::WakeOutcome;

/// What happened at each step, in trace order, with the step's site.
fn step_notes(o: &WakeOutcome) -> Result<Vec<(Site, String)>, String> {
    let mut out = Vec::new();
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
        out.push((site, note));
    }
    Ok(out)
}

/// The listing line of each step (`sites` in trace order): an error names a site the
/// listing has no line for.
fn step_lines(lines: &[CodeLine], sites: &[Site]) -> Result<Vec<usize>, String> {
    sites
        .iter()
        .map(|&s| {
            let at = line_site(s);
            lines
                .iter()
                .position(|l| l.site == Some(at))
                .ok_or_else(|| format!("no line of the listing for {s:?}"))
        })
        .collect()
}

/// The functions unfolded with the steps `0..upto` done: those with a line of one of
/// them (all steps when not stepping).
fn reached_funcs(lines: &[CodeLine], at: &[usize]) -> Vec<&'static str> {
    let mut f: Vec<&'static str> = Vec::new();
    for &i in at {
        if !f.contains(&lines[i].func) {
            f.push(lines[i].func);
        }
    }
    f
}

/// The stepper's cursor after `key` at `cursor` (`None`: not stepping) with `n`
/// steps: n or ↓ steps on (from "not stepping" to the first step), p or ↑ back;
/// `None` for a key the stepper does not take (or no move).
fn step_key(key: &str, cursor: Option<usize>, n: usize) -> Option<usize> {
    if n == 0 {
        return None;
    }
    match (key, cursor) {
        ("n" | "ArrowDown", None) => Some(0),
        ("n" | "ArrowDown", Some(k)) if k + 1 < n => Some(k + 1),
        ("p" | "ArrowUp", Some(k)) if k > 0 => Some(k - 1),
        _ => None,
    }
}

fn patch_label(p: Patch) -> String {
    format!("{}: {}", p.name(), p.summary())
}

#[derive(Properties, PartialEq)]
pub struct CodeViewProps {
    pub outcome: Rc<WakeOutcome>,
}

/// The listing of one side, folded to the functions its decision reached, with the
/// stepper.
#[function_component(CodeView)]
pub fn code_view(props: &CodeViewProps) -> Html {
    // The cursor and the decision it steps through: another decision is not stepping.
    let stepper = use_state(|| None::<(Rc<WakeOutcome>, usize)>);
    let container = use_node_ref();
    let current = use_node_ref();
    let o = &props.outcome;
    let cursor = stepper
        .as_ref()
        .filter(|(of, _)| Rc::ptr_eq(of, o) || **of == **o)
        .map(|&(_, k)| k);
    {
        // A new decision drops the cursor, so that coming back to an equal one later
        // does not bring it back either.
        let stepper = stepper.clone();
        use_effect_with(o.clone(), move |_| {
            if stepper.is_some() {
                stepper.set(None);
            }
        });
    }
    {
        let (container, current) = (container.clone(), current.clone());
        use_effect_with(cursor, move |c| {
            if c.is_some() {
                scroll_into(&container, &current);
            }
        });
    }
    let lines = listing(&o.patches);
    let (notes, at) = match step_notes(o).and_then(|n| {
        let sites: Vec<Site> = n.iter().map(|(s, _)| *s).collect();
        step_lines(&lines, &sites).map(|at| (n, at))
    }) {
        Ok(v) => v,
        Err(e) => return html! { <p class="error">{ format!("No code view: {e}") }</p> },
    };
    let n = at.len();
    let cursor = cursor.filter(|&k| k < n);
    let done = cursor.map_or(n, |k| k + 1);
    // Per line, the steps done there: (step, note), in trace order.
    let mut per_line: BTreeMap<usize, Vec<(usize, &str)>> = BTreeMap::new();
    for (j, &i) in at[..done].iter().enumerate() {
        per_line
            .entry(i)
            .or_default()
            .push((j, notes[j].1.as_str()));
    }
    let reached = reached_funcs(&lines, &at[..done]);
    let now_line = cursor.map(|k| at[k]);
    let mut rows: Vec<Html> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let func = lines[i].func;
        let end = lines[i..]
            .iter()
            .position(|l| l.func != func)
            .map_or(lines.len(), |k| i + k);
        if reached.contains(&func) {
            for (idx, l) in lines.iter().enumerate().take(end).skip(i) {
                let is_now = now_line == Some(idx);
                let node = if is_now {
                    current.clone()
                } else {
                    NodeRef::default()
                };
                rows.push(row(idx, l, per_line.get(&idx), cursor, is_now, node));
            }
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
    let go = |to: Option<usize>| {
        let (stepper, o) = (stepper.clone(), o.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(k) = to {
                stepper.set(Some((o.clone(), k)));
            }
        })
    };
    let onkeydown = {
        let (stepper, o) = (stepper.clone(), o.clone());
        Callback::from(move |e: KeyboardEvent| {
            if e.ctrl_key() || e.alt_key() || e.meta_key() {
                return;
            }
            if let Some(k) = step_key(&e.key(), cursor, n) {
                e.prevent_default();
                stepper.set(Some((o.clone(), k)));
            }
        })
    };
    let last = n.saturating_sub(1);
    let said = match cursor {
        Some(k) => {
            let l = &lines[at[k]];
            format!(
                "Step {} of {n}, {}(): {} // {}",
                k + 1,
                l.func,
                l.text.trim(),
                notes[k].1
            )
        }
        None => {
            format!("{n} steps, all highlighted. Start or Step (keys n, p) walks them one by one.")
        }
    };
    let side = format!("v{}", o.patches);
    html! {
        <details class="code-view">
            <summary>{ format!("Code: the path through {side}") }</summary>
            <p class="code-legend">
                <span class="code-line hit"><code>{ "highlighted" }</code></span>{ " this decision ran it · " }
                <span class="code-line patched"><span class="gutter">{ "+" }</span><code>{ "+" }</code></span>{ " a patch of this kernel adds or changes it" }
            </p>
            if n > 0 {
                <div class="code-stepper" role="group" aria-label={format!("step through the code of {side}")}>
                    <button type="button" class="code-start" onclick={go(Some(0))}
                        disabled={cursor == Some(0)}>{ "Start" }</button>
                    <button type="button" class="code-back" onclick={go(cursor.and_then(|k| k.checked_sub(1)))}
                        disabled={cursor.is_none_or(|k| k == 0)} title="p or ↑ in the listing">{ "Step back" }</button>
                    <button type="button" class="code-step-on" onclick={go(step_key("n", cursor, n))}
                        disabled={cursor == Some(last)} title="n or ↓ in the listing">{ "Step" }</button>
                    <button type="button" class="code-end" onclick={go(Some(last))}
                        disabled={cursor == Some(last)}>{ "End" }</button>
                </div>
            }
            <p class="code-step" role="status" aria-live="polite">{ said }</p>
            <div class={classes!("code-lines", cursor.map(|_| "stepping"))} role="region" ref={container}
                aria-label={format!("wake-up code of {side}")} tabindex="0" {onkeydown}>
                { for rows }
            </div>
        </details>
    }
}

/// Scrolls `container` (the listing, not the page) so that the `line` is in view.
fn scroll_into(container: &NodeRef, line: &NodeRef) {
    let (Some(c), Some(l)) = (
        container.cast::<web_sys::Element>(),
        line.cast::<web_sys::Element>(),
    ) else {
        return;
    };
    let (cr, lr) = (c.get_bounding_client_rect(), l.get_bounding_client_rect());
    let margin = lr.height() * 2.0;
    let top = f64::from(c.scroll_top());
    if lr.top() < cr.top() + margin {
        c.set_scroll_top((top - (cr.top() + margin - lr.top())) as i32);
    } else if lr.bottom() > cr.bottom() - margin {
        c.set_scroll_top((top + (lr.bottom() - cr.bottom() + margin)) as i32);
    }
}

/// One line: highlighted with its notes if a step done so far ran it, the current
/// step's note in bold.
fn row(
    idx: usize,
    l: &CodeLine,
    done: Option<&Vec<(usize, &str)>>,
    cursor: Option<usize>,
    is_now: bool,
    node: NodeRef,
) -> Html {
    let title = l.by.map(patch_label);
    let note = done.map(|d| {
        let parts = d.iter().enumerate().map(|(x, &(j, text))| {
            let sep = if x > 0 { ", " } else { "" };
            if cursor == Some(j) {
                html! { <>{ sep }<strong class="code-now">{ text }</strong></> }
            } else {
                html! { <>{ sep }{ text }</> }
            }
        });
        html! { <span class="code-note">{ "// " }{ for parts }</span> }
    });
    html! {
        <div class={classes!("code-line", done.map(|_| "hit"), l.by.map(|_| "patched"), is_now.then_some("current"))}
            title={title} ref={node} aria-current={is_now.then_some("step")} data-line={idx.to_string()}>
            <span class="gutter" aria-hidden="true">{ if is_now { "▶" } else if l.by.is_some() { "+" } else { " " } }</span>
            <code>{ l.text.clone() }</code>
            { for note }
            if let Some(p) = l.by {
                <span class="visually-hidden">{ format!(" (added by {})", p.name()) }</span>
            }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::patch::PatchSet;

    fn lines() -> Vec<CodeLine> {
        listing(&PatchSet::release("6.8".parse().unwrap()))
    }

    #[test]
    fn each_step_lands_on_its_own_line_in_trace_order() {
        let l = lines();
        let sites = [
            Site::FairEnter,
            Site::SisEnter,
            Site::SisTarget,
            Site::QueueLocal,
        ];
        let at = step_lines(&l, &sites).unwrap();
        assert_eq!(at.len(), 4);
        assert_eq!(l[at[0]].site, Some(Site::FairEnter));
        assert_eq!(l[at[2]].site, Some(Site::SisTarget));
        // The local enqueue stands on the remote one's line.
        assert_eq!(l[at[3]].site, Some(Site::QueueRemote));
        assert!(
            at[1] < at[2],
            "select_idle_sibling() enters before its first test"
        );
    }

    #[test]
    fn a_site_without_a_line_is_an_error() {
        // 6.8 dropped SIS_PROP (off by default): its budget line is not in the listing.
        assert!(step_lines(&lines(), &[Site::ScanPropBudget]).is_err());
    }

    #[test]
    fn a_function_unfolds_when_the_cursor_enters_it() {
        let l = lines();
        let at = step_lines(&l, &[Site::FairEnter, Site::SisEnter]).unwrap();
        assert_eq!(reached_funcs(&l, &at[..1]), vec!["select_task_rq_fair"]);
        assert_eq!(
            reached_funcs(&l, &at[..2]),
            vec!["select_task_rq_fair", "select_idle_sibling"]
        );
    }

    #[test]
    fn keys_step_on_and_back_within_the_steps() {
        assert_eq!(step_key("n", None, 3), Some(0));
        assert_eq!(step_key("ArrowDown", Some(0), 3), Some(1));
        assert_eq!(step_key("n", Some(2), 3), None);
        assert_eq!(step_key("p", Some(2), 3), Some(1));
        assert_eq!(step_key("ArrowUp", Some(0), 3), None);
        assert_eq!(step_key("p", None, 3), None);
        assert_eq!(step_key("x", Some(1), 3), None);
        assert_eq!(step_key("n", None, 0), None);
    }
}
