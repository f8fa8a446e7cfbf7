//! A finished run's numbers: B's change against A, the side-by-side table (with the
//! digests `schedlab run` prints), and a sweep's table by scale.

use schedlab_core::experiment::change_pct;
use schedlab_core::reproduce::Example;
use yew::prelude::*;

use crate::format::{fmt_pct, fmt_value};
use crate::hooks::use_run::RunView;
use crate::worker::Report;

/// "a" or "b": side `i`'s tag in class names and data attributes.
pub fn side_tag(i: usize) -> &'static str {
    if i == 0 {
        "a"
    } else {
        "b"
    }
}

/// The class of a change: better, worse or the same for B.
fn change_class(c: f64) -> &'static str {
    if c > 0.0 {
        "better"
    } else if c < 0.0 {
        "worse"
    } else {
        "same"
    }
}

/// The table head's side columns: A and B with their patch sets.
fn side_heads(v: &RunView) -> Html {
    html! {
        { for v.labels.iter().enumerate().map(|(i, label)| html! {
            <th class={format!("side-{}", side_tag(i))}>
                <span class="side-tag">{ if i == 0 { "A" } else { "B" } }</span>
                <code>{ format!(" {label}") }</code>
            </th>
        }) }
    }
}

/// The finished runs' results as the seeds' tables give them: B's change against A.
pub fn change(v: &RunView, published: Option<&Example>) -> Html {
    let (Some(reports), Some(first)) = (v.reports(), v.first()) else {
        return html! {};
    };
    let [a, b] = reports[..] else {
        return html! {};
    };
    let c = change_pct(a.value, b.value, first.higher_is_better);
    let unit = &first.unit;
    html! {
        <p class={classes!("change", change_class(c))}>
            { format!("A {} {unit}, B {} {unit}: ", fmt_value(a.value), fmt_value(b.value)) }
            <b class="change-pct">{ fmt_pct(c) }</b>
            { if first.higher_is_better { " for B (higher is better)" } else { " for B (lower is better)" } }
            if let Some((_, p)) = published.and_then(|e| e.published.first()) {
                <span class="published">{ format!("; published {}", fmt_pct(*p)) }</span>
            }
        </p>
    }
}

/// The numbers of a finished run, side by side.
pub fn results(v: &RunView) -> Html {
    let (Some(reports), Some(first)) = (v.reports(), v.first()) else {
        return html! {};
    };
    let row = |label: &str, f: &dyn Fn(&Report) -> String| {
        html! {
            <tr>
                <th scope="row">{ label }</th>
                { for reports.iter().map(|r| html! { <td>{ f(r) }</td> }) }
            </tr>
        }
    };
    let pct = |n: u64, of: u64| {
        if of == 0 {
            "–".to_string()
        } else {
            format!("{:.1}%", n as f64 * 100.0 / of as f64)
        }
    };
    let placement_rows = reports[0]
        .placement
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            row(&format!("wake-ups to {name}"), &move |r: &Report| {
                pct(r.placement.get(i).map_or(0, |p| p.1), r.wakeups)
            })
        });
    html! {
        <table class="sim-results">
            <thead>
                <tr>
                    <th scope="col"><span class="visually-hidden">{ "measure" }</span></th>
                    { side_heads(v) }
                </tr>
            </thead>
            <tbody>
                { row(&format!("result ({})", first.unit), &|r| fmt_value(r.value)) }
                { row("wake-ups", &|r| r.wakeups.to_string()) }
                { for placement_rows }
                { row("CPUs probed per wake-up", &|r| format!("{:.2}", r.cpus_probed_mean_x100 as f64 / 100.0)) }
                { row("wake-ups by IPI / remote rq lock", &|r| format!("{} / {}", r.wake_ipi, r.wake_remote_lock)) }
                { row("migrations (wake-up / balance)", &|r| format!("{} / {}", r.migrations_wakeup, r.migrations_balance)) }
                { row("context switches", &|r| r.context_switches.to_string()) }
                { row("force idle", &|r| format!("{:.1} ms", r.force_idle_ns as f64 / 1e6)) }
                { row("simulated events", &|r| r.events.to_string()) }
                <tr class="digest-row">
                    <th scope="row">{ "digest" }</th>
                    { for reports.iter().enumerate().map(|(i, r)| html! {
                        <td><code class="digest" data-side={side_tag(i)}>{ r.digest.clone() }</code></td>
                    }) }
                </tr>
            </tbody>
        </table>
    }
}

/// A sweep as the seeds print it: per scale, A, B, B's change and the published one.
pub fn sweep_table(v: &RunView, scale: &str, published: Option<&Example>) -> Html {
    let published_at =
        |t: u32| published.and_then(|e| e.published.iter().find(|(s, _)| *s == t).map(|(_, c)| *c));
    let rows = v.rows();
    let first = v.first();
    let better = first.is_none_or(|p| p.higher_is_better);
    let cell = |x: Option<f64>| x.map_or_else(|| "…".to_string(), fmt_value);
    html! {
        <table class="sim-results sweep-table">
            <thead>
                <tr>
                    <th>{ scale }</th>
                    { side_heads(v) }
                    if v.labels.len() == 2 {
                        <th>{ "change" }</th>
                    }
                    if published.is_some() {
                        <th class="published">{ "published" }</th>
                    }
                </tr>
            </thead>
            <tbody>
                { for rows.iter().map(|(t, vals)| {
                    let change = match vals[..] {
                        [Some(a), Some(b)] => Some(change_pct(a, b, better)),
                        _ => None,
                    };
                    html! {
                        <tr data-threads={t.to_string()}>
                            <th scope="row">{ t }</th>
                            { for vals.iter().map(|x| html! { <td>{ cell(*x) }</td> }) }
                            if vals.len() == 2 {
                                <td class={classes!("change-cell", change.map(change_class))}>
                                    { change.map_or_else(|| "…".to_string(), fmt_pct) }
                                </td>
                            }
                            if published.is_some() {
                                <td class="published">{ published_at(*t).map_or_else(|| "–".to_string(), fmt_pct) }</td>
                            }
                        </tr>
                    }
                }) }
            </tbody>
        </table>
    }
}
