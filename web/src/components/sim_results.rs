//! A finished run's numbers: B's change against A, the side-by-side table (with the
//! digests `schedlab run` prints, per seed), and a sweep's table by scale. Over
//! several seeds a side's number is its mean and the change reads `+x.x % [lo, hi]`
//! (the mean of the per-seed changes and its 95% interval), or "no significant
//! change" when the interval includes 0.

use schedlab_core::reproduce::Example;
use schedlab_core::stats::Estimate;
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
                // A narrow column breaks a patch set after a '+' ("6.6+" over
                // "cluster"), not inside a patch's name ("6.6+cluste" over "r").
                <code>
                    { " " }
                    { for label.split_inclusive('+').enumerate().map(|(k, part)| html! {
                        <>{ if k > 0 { html! { <wbr /> } } else { html! {} } }{ part }</>
                    }) }
                </code>
            </th>
        }) }
    }
}

/// A change as the page prints it: one seed `+12.81%`; more, `+12.8 % [+12.1, +13.5]`.
pub fn change_text(e: &Estimate) -> String {
    if e.interval().is_some() {
        e.fmt_pct()
    } else {
        fmt_pct(e.mean)
    }
}

/// The class of a change over seeds: "same" when it is not significant.
fn estimate_class(e: &Estimate) -> &'static str {
    if e.significant() == Some(false) {
        "same"
    } else {
        change_class(e.mean)
    }
}

/// "no significant change" where the interval includes 0.
fn not_significant(e: &Estimate) -> Html {
    if e.significant() == Some(false) {
        html! { <span class="not-significant">{ " no significant change" }</span> }
    } else {
        html! {}
    }
}

/// The finished runs' results as the seeds' tables give them: B's change against A.
pub fn change(v: &RunView, published: Option<&Example>) -> Html {
    let (Some(first), [row]) = (v.first(), &v.rows()[..]) else {
        return html! {};
    };
    let (Some(c), [Some(a), Some(b)]) = (row.change, &row.values[..]) else {
        return html! {};
    };
    let unit = &first.unit;
    let over = if v.n_seeds() > 1 {
        format!(" (means over {} seeds)", v.n_seeds())
    } else {
        String::new()
    };
    html! {
        <p class={classes!("change", estimate_class(&c))}>
            { format!("A {} {unit}, B {} {unit}{over}: ", fmt_value(*a), fmt_value(*b)) }
            <b class="change-pct">{ change_text(&c) }</b>
            { not_significant(&c) }
            // "for B" kept on one line: a phone broke "+9.31% for" over "B (higher is
            // better)" (session 40).
            { " " }<span class="nobr">{ "for B" }</span>
            { if first.higher_is_better { " (higher is better)" } else { " (lower is better)" } }
            if let Some((_, p)) = published.and_then(|e| e.published.first()) {
                <span class="published">{ format!("; published {}", fmt_pct(*p)) }</span>
            }
        </p>
    }
}

/// Says that the runs measured the benchmark's start-up when part of a measured window
/// ran before every LLC's first busy balance round (the CLI's note): the SIS_UTIL scan
/// depth was still the idle machine's. Nothing with a settled warm-up.
pub fn start_up_note(v: &RunView) -> Html {
    let ns = v.unsettled_ns();
    if ns == 0 {
        return html! {};
    }
    html! {
        <p class="sim-note start-up-note">
            { format!(
                "Measured in the start-up: the first {:.0} ms of the measured window ran before every \
                 LLC's first busy balance round, while SIS_UTIL's scan depth was still the idle \
                 machine's. Tick \"settled warm-up\" to measure the steady state, as the published \
                 runs (minutes long) do.",
                ns as f64 / 1e6
            ) }
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
        .metrics
        .placement
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            row(&format!("wake-ups to {name}"), &move |r: &Report| {
                pct(
                    r.metrics.placement.get(i).map_or(0, |p| p.1),
                    r.metrics.wakeups,
                )
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
                if v.n_seeds() > 1 {
                    <tr><td colspan="3" class="sim-note">{ format!("Seed {} of {} (the digests below list every seed):", v.seed_reports().first().map_or(0, |s| s.0), v.n_seeds()) }</td></tr>
                }
                { row(&format!("result ({})", first.unit), &|r| fmt_value(r.value)) }
                { row("wake-ups", &|r| r.metrics.wakeups.to_string()) }
                { for placement_rows }
                { row("CPUs probed per wake-up", &|r| format!("{:.2}", r.metrics.cpus_probed_mean_x100 as f64 / 100.0)) }
                { row("wake-ups by IPI / remote rq lock", &|r| format!("{} / {}", r.metrics.wake_ipi, r.metrics.wake_remote_lock)) }
                { row("migrations (wake-up / balance)", &|r| format!("{} / {}", r.metrics.migrations_wakeup, r.metrics.migrations_balance)) }
                { row("context switches", &|r| r.metrics.context_switches.to_string()) }
                { row("newidle passes that found nothing (time in them)", &|r| format!("{} ({:.2} ms)", r.metrics.newidle_empty, r.metrics.newidle_empty_ns as f64 / 1e6)) }
                { row("wake-ups of a task still on its CPU (on_cpu): queued back / waker spun (time)", &|r| format!("{} / {} ({:.3} ms)", r.metrics.wake_on_cpu, r.metrics.wake_on_cpu_spin, r.metrics.wake_on_cpu_spin_ns as f64 / 1e6)) }
                { row("force idle", &|r| format!("{:.1} ms", r.metrics.force_idle_ns as f64 / 1e6)) }
                { row("simulated events", &|r| r.events.to_string()) }
                { for v.seed_reports().into_iter().map(|(seed, per_side)| html! {
                    <tr class="digest-row" data-seed={seed.to_string()}>
                        <th scope="row">{ if v.n_seeds() > 1 { format!("digest, seed {seed}") } else { "digest".to_string() } }</th>
                        { for per_side.iter().enumerate().map(|(i, r)| html! {
                            <td><code class="digest" data-side={side_tag(i)} data-seed={seed.to_string()}>
                                { r.map_or_else(Html::default, |r| digest_halves(&r.digest)) }
                            </code></td>
                        }) }
                    </tr>
                }) }
            </tbody>
        </table>
    }
}

/// A sweep as the seeds print it: per scale, A, B, B's change and the published one.
pub fn sweep_table(v: &RunView, scale: &str, published: Option<&Example>) -> Html {
    let published_at =
        |t: u32| published.and_then(|e| e.published.iter().find(|(s, _)| *s == t).map(|(_, c)| *c));
    let rows = v.rows();
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
                { for rows.iter().map(|r| {
                    let (t, vals, change) = (&r.threads, &r.values, r.change);
                    html! {
                        <tr data-threads={t.to_string()}>
                            <th scope="row">{ t }</th>
                            { for vals.iter().map(|x| html! { <td>{ cell(*x) }</td> }) }
                            if vals.len() == 2 {
                                <td class={classes!("change-cell", change.as_ref().map(estimate_class))}>
                                    { change.as_ref().map_or_else(|| "…".to_string(), change_text) }
                                    if let Some(c) = &change {
                                        { not_significant(c) }
                                    }
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

/// A digest with a line break allowed at its middle only (`<wbr>`): on a phone it
/// took two lines broken anywhere, "1c3e190923198" over "a8a"; now two halves of 8.
fn digest_halves(d: &str) -> Html {
    let mid = d.len() / 2;
    match (d.get(..mid), d.get(mid..)) {
        (Some(a), Some(b)) if d.len() >= 12 => html! { <>{ a }<wbr />{ b }</> },
        _ => html! { { d } },
    }
}
