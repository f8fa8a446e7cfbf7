//! The designer's NUMA fieldset: the distance grid `node_distance(row, column)`, the
//! nodes with CPUs first and the memory-only ones after them (headed "no CPUs"), the
//! "symmetric" box, what the kernel makes of a table that is not symmetric or has
//! memory-only nodes, and `node_reclaim_distance`. The form's state is
//! `state::designer_slit`.

use std::collections::BTreeSet;

use schedlab_core::release::Release;
use yew::prelude::*;

use super::designer::{on_check, on_edit, text_field};
use crate::state::designer::{Draft, Field, Slit};

/// How many asymmetric pairs the note spells out before "and N more".
const PAIRS_SHOWN: usize = 3;

/// A node as the grid's labels name it.
fn node_name(draft: &Draft, n: usize) -> String {
    if draft.slit.is_memory_only(n) {
        format!("node {n} (memory only)")
    } else {
        format!("node {n}")
    }
}

/// A column or row heading: the node, and "no CPUs" under a memory-only one.
fn heading(draft: &Draft, n: usize, scope: &'static str) -> Html {
    let memory = draft.slit.is_memory_only(n);
    html! {
        <th {scope} class={classes!(memory.then_some("memory-only"))}>
            { format!("node {n}") }
            if memory {
                <span class="node-tag">{ "no CPUs" }</span>
            }
        </th>
    }
}

/// "nodes 4-5" / "node 4".
fn node_range(first: usize, count: usize) -> String {
    match count {
        1 => format!("node {first}"),
        _ => format!("nodes {first}–{}", first + count - 1),
    }
}

/// The NUMA fieldset of the form; `release` is the page's, for what it counts.
pub fn numa_fieldset(draft: &Draft, release: Release, edit: &Callback<(Field, String)>) -> Html {
    let slit = &draft.slit;
    let n = slit.len();
    let pairs = slit.asymmetric_pairs();
    let grid = slit_grid(draft, &pairs, edit);
    let slit_errors: Vec<String> = draft
        .errors
        .iter()
        .filter(|(f, _)| matches!(f, Field::Distance(..)))
        .map(|(_, e)| e.clone())
        .collect();
    let symmetric_hint = if slit.symmetric() {
        "Editing a cell sets its mirror too. Checking this over a table that is not \
         symmetric copies each cell above the diagonal onto its mirror; unchecking right \
         after gives the table back."
    } else {
        "Each cell is edited on its own: row a, column b is node_distance(a, b), the \
         distance from node a to node b."
    };
    let asym_note = asym_note(slit, &pairs);
    let memory_note = memory_note(slit, release);
    html! {
        // The fieldset is as wide as its grid needs (static/css/11-designer.css reads --slit-nodes).
        <fieldset class="designer-numa" style={format!("--slit-nodes: {n}")}>
            <legend>{ "NUMA distances (SLIT)" }</legend>
            <label class="designer-check">
                <input type="checkbox" id={Field::Symmetric.id()} checked={slit.symmetric()}
                    onchange={on_check(edit, Field::Symmetric)} aria-describedby="designer-symmetric-hint" />
                <span>{ "symmetric: node_distance(a, b) = node_distance(b, a)" }</span>
            </label>
            <p class="hint" id="designer-symmetric-hint">{ symmetric_hint }</p>
            <div class="designer-slit-wrap">{ grid }</div>
            <div id="designer-slit-errors">
                { for slit_errors.into_iter().map(|e| html! { <p class="error field-error">{ e }</p> }) }
            </div>
            { for asym_note }
            { for memory_note }
            <p class="hint">{ "The kernel builds one NUMA level per distinct distance." }</p>
            { text_field(draft, Field::ReclaimDistance, "node_reclaim_distance (30; AMD Zen 32)", &draft.reclaim, true, edit) }
        </fieldset>
    }
}

/// The distance grid: a text field per cell off the diagonal, marked when invalid,
/// when its mirror differs (`pairs`) or when a node has no CPUs.
fn slit_grid(draft: &Draft, pairs: &[(usize, usize)], edit: &Callback<(Field, String)>) -> Html {
    let slit = &draft.slit;
    let n = slit.len();
    let asym: BTreeSet<(usize, usize)> =
        pairs.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
    let rows = slit.rows().iter().enumerate().map(|(a, row)| {
        let cells = row.iter().enumerate().map(|(b, cell)| {
            let field = Field::Distance(a, b);
            if a == b {
                return html! { <td class="local" title="LOCAL_DISTANCE">{ "10" }</td> };
            }
            let error = draft.errors.contains_key(&field);
            let lopsided = asym.contains(&(a, b));
            let described: Vec<&str> = [
                error.then_some("designer-slit-errors"),
                lopsided.then_some("designer-slit-asym"),
            ]
            .into_iter()
            .flatten()
            .collect();
            let oninput = on_edit(edit, field);
            html! {
                <td class={classes!(error.then_some("invalid"), lopsided.then_some("asym"),
                        (slit.is_memory_only(a) || slit.is_memory_only(b)).then_some("memory-only"))}>
                    <input id={field.id()} type="text" inputmode="numeric" size="3"
                        value={cell.clone()} {oninput} autocomplete="off"
                        aria-label={format!("distance from {} to {}", node_name(draft, a), node_name(draft, b))}
                        aria-invalid={error.then_some("true")}
                        aria-describedby={(!described.is_empty()).then(|| described.join(" "))} />
                </td>
            }
        });
        html! {
            <tr>
                { heading(draft, a, "row") }
                { for cells }
            </tr>
        }
    });
    html! {
        <table class="designer-slit">
            <caption class="visually-hidden">{ "node_distance(row, column): the distance from the row's node to the column's" }</caption>
            <thead><tr>
                <th scope="col"><span class="visually-hidden">{ "from node" }</span></th>
                { for (0..n).map(|b| heading(draft, b, "col")) }
            </tr></thead>
            <tbody>{ for rows }</tbody>
        </table>
    }
}

/// The note naming the pairs whose mirrors differ, and what the kernel does with them.
fn asym_note(slit: &Slit, pairs: &[(usize, usize)]) -> Option<Html> {
    (!pairs.is_empty()).then(|| {
        let read = |a: usize, b: usize| slit.rows()[a][b].trim().to_string();
        let mut shown: Vec<String> = pairs
            .iter()
            .take(PAIRS_SHOWN)
            .map(|&(a, b)| {
                format!(
                    "node_distance({a}, {b}) = {} but node_distance({b}, {a}) = {}",
                    read(a, b),
                    read(b, a)
                )
            })
            .collect();
        if pairs.len() > PAIRS_SHOWN {
            shown.push(format!("{} more pairs", pairs.len() - PAIRS_SHOWN));
        }
        html! {
            <p class="designer-asym" id="designer-slit-asym">
                { format!("Not symmetric: {}. ", shown.join("; ")) }
                { "The kernel takes it as given: sched_init_numa() builds each node's NUMA levels from its own row and, with sched_verbose, prints " }
                <code>{ "ERROR: Node-distance not symmetric" }</code>
                { " and the table before the domains." }
            </p>
        }
    })
}

/// The note on the memory-only nodes: what `release`'s `sched_init_numa()` counts.
fn memory_note(slit: &Slit, release: Release) -> Option<Html> {
    let memory = slit.memory_nodes();
    (memory > 0).then(|| {
        let counted = if release.numa_levels_over_cpu_nodes() {
            format!(
                "On {release}, as from 5.18 (0fb3978b0aac), sched_init_numa() counts only the \
                 nodes with CPUs: {} distances add no NUMA level.",
                if memory == 1 { "its" } else { "their" }
            )
        } else {
            format!(
                "On {release}, as before 5.18, sched_init_numa() counts every node: a distance \
                 only {} adds a NUMA level (it degenerates, but sd->level shifts).",
                if memory == 1 { "it has" } else { "they have" }
            )
        };
        html! {
            <p class="hint" id="designer-memory-note">
                { format!(
                    "{} {} no CPUs (memory only: CXL, HBM, Optane, QEMU's -numa node without cpus=) and no sched domains of {}. {counted}",
                    node_range(slit.cpu_nodes(), memory),
                    if memory == 1 { "has" } else { "have" },
                    if memory == 1 { "its own" } else { "their own" },
                ) }
            </p>
        }
    })
}
