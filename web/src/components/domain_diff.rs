//! The Domains tab's "compare with": the chosen CPU's domains under A's kernel and
//! under another release or patch set, as the kernel prints them (dmesg, debugfs or
//! /proc/schedstat), side by side with a line diff (`line_diff.rs`), as Compiler
//! Explorer diffs two compilers. A summary line compares the whole machine's domains
//! level by level ([`summary`]); the text is the chosen CPU's, the way a user reads
//! dmesg for one CPU.
//!
//! The comparison (the other kernel and the text) travels in the link as page
//! settings (`scenario::PageSettings::diff_with`, `diff_text`), so a shared link opens
//! on the same diff; left at the page's choice, nothing is added to the link.

use schedlab_core::cpumask::CpuId;
use schedlab_core::patch::{Patch, PatchSet};
use schedlab_core::release::Release;
use schedlab_core::scenario::KernelText;
use schedlab_core::sched_domain::{format, BuildConfig, SchedDomain, SchedDomains};
use yew::prelude::*;

use crate::dom::select_value;
use crate::format::unbroken;
use crate::line_diff::{diff, Row};
use crate::state::{Action, AppContext};

/// What the format picker calls each kernel text.
fn text_label(t: KernelText) -> &'static str {
    match t {
        KernelText::Dmesg => "dmesg (sched_domain_debug)",
        KernelText::Debugfs => "debugfs files",
        KernelText::Schedstat => "/proc/schedstat",
    }
}

/// One CPU's text in `fmt`.
pub fn kernel_text(sds: &SchedDomains, cpu: CpuId, fmt: KernelText) -> String {
    match fmt {
        KernelText::Debugfs => format::debugfs(sds, Some(cpu)),
        KernelText::Schedstat => format::schedstat(sds, Some(cpu)),
        KernelText::Dmesg => format::dmesg(sds, Some(cpu)),
    }
}

/// The patch sets to compare with: B's first (when the page compares), then every
/// modelled release, then A's release with each seed patch.
fn choices(a: PatchSet, b: Option<PatchSet>) -> Vec<PatchSet> {
    let mut v: Vec<PatchSet> = b.into_iter().collect();
    let mut add = |p: PatchSet| {
        if !v.contains(&p) {
            v.push(p);
        }
    };
    for r in Release::all().into_iter().rev() {
        if let Ok(p) = r.to_string().parse() {
            add(p);
        }
    }
    for patch in Patch::ALL {
        if let Ok(p) = format!("{}+{}", a.release, patch.name()).parse() {
            add(p);
        }
    }
    v
}

/// What differs between two machines' domains, CPU by CPU and level by level (by
/// name, the k-th of a name against the k-th): levels one side builds on some CPUs and
/// the other does not, and levels both build whose flags (the bits, not their
/// release's names) or spans differ.
pub fn summary(a_label: &str, a: &SchedDomains, b_label: &str, b: &SchedDomains) -> String {
    let mut added: Vec<(&str, usize)> = Vec::new();
    let mut removed: Vec<(&str, usize)> = Vec::new();
    let mut flags: Vec<&str> = Vec::new();
    let mut spans: Vec<&str> = Vec::new();
    let bump = |v: &mut Vec<(&'static str, usize)>, name: &'static str| match v
        .iter_mut()
        .find(|(n, _)| *n == name)
    {
        Some(e) => e.1 += 1,
        None => v.push((name, 1)),
    };
    for (ca, cb) in a.cpus.iter().zip(&b.cpus) {
        let (Some(ca), Some(cb)) = (ca, cb) else {
            continue;
        };
        for (i, sd) in cb.domains.iter().enumerate() {
            match find(&ca.domains, nth(&cb.domains, i)) {
                None => bump(&mut added, sd.name),
                Some(x) => {
                    if x.flags != sd.flags && !flags.contains(&sd.name) {
                        flags.push(sd.name);
                    }
                    if x.span != sd.span && !spans.contains(&sd.name) {
                        spans.push(sd.name);
                    }
                }
            }
        }
        for (i, sd) in ca.domains.iter().enumerate() {
            if find(&cb.domains, nth(&ca.domains, i)).is_none() {
                bump(&mut removed, sd.name);
            }
        }
    }
    let cpus = |n: usize| {
        if n == 1 {
            "1 CPU".to_string()
        } else {
            format!("{n} CPUs")
        }
    };
    let levels = |v: &[&str]| {
        format!(
            "{} level{} ({})",
            v.len(),
            if v.len() == 1 { "" } else { "s" },
            v.join(", ")
        )
    };
    let mut parts: Vec<String> = Vec::new();
    for (name, n) in &added {
        parts.push(format!("{b_label} adds {name} on {}", cpus(*n)));
    }
    for (name, n) in &removed {
        parts.push(format!("{b_label} drops {name} on {}", cpus(*n)));
    }
    if !flags.is_empty() {
        parts.push(format!("flags differ on {}", levels(&flags)));
    }
    if !spans.is_empty() {
        parts.push(format!("spans differ on {}", levels(&spans)));
    }
    if parts.is_empty() {
        format!("{a_label} and {b_label} build the same levels, flags and spans on every CPU")
    } else {
        parts.join("; ")
    }
}

/// Level `i`'s name and how many levels of that name come below it: the k-th level of
/// a name on one side pairs with the k-th of that name on the other (a machine has
/// several NUMA levels).
fn nth(doms: &[SchedDomain], i: usize) -> (&'static str, usize) {
    let name = doms[i].name;
    (name, doms[..i].iter().filter(|d| d.name == name).count())
}

fn find<'a>(doms: &'a [SchedDomain], key: (&str, usize)) -> Option<&'a SchedDomain> {
    (0..doms.len())
        .find(|&i| nth(doms, i) == key)
        .map(|i| &doms[i])
}

/// The comparison under the domain cards.
#[function_component(DomainDiff)]
pub fn domain_diff() -> Html {
    let state = use_context::<AppContext>();
    let Some(state) = state else {
        return html! {};
    };
    let (with, fmt) = (state.scenario.page.diff_with, state.scenario.page.diff_text);
    let a = state.patches();
    let mut options = choices(a, state.wake().compare);
    // A link's kernel the menu does not list (a patch set of its own): listed too.
    if let Some(w) = with.filter(|w| !options.contains(w)) {
        options.push(w);
    }
    // Default: B when the page compares another patch set, else A's release with the
    // cluster patch (the seeds' first), else the newest release.
    let b = with.unwrap_or_else(|| {
        options
            .iter()
            .copied()
            .find(|p| *p != a && Some(*p) == state.wake().compare)
            .or_else(|| {
                format!("{}+cluster", a.release)
                    .parse()
                    .ok()
                    .filter(|p| *p != a)
            })
            .or_else(|| options.iter().copied().find(|p| *p != a))
            .unwrap_or(a)
    });
    let machine = state.scenario.machine.clone();
    let built = use_memo((machine, b), |(m, b)| {
        SchedDomains::build(m.machine(), &BuildConfig::for_patches(b)).map_err(|e| e.to_string())
    });
    let Ok(da) = state.domains() else {
        return html! {};
    };
    let cpu = state.cpu();
    let onwith = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(p) = select_value(&e).and_then(|v| v.parse::<PatchSet>().ok()) {
                d.dispatch(Action::SetDiff(Some(p), fmt));
            }
        })
    };
    let onfmt = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(t) = select_value(&e).and_then(|v| KernelText::from_name(&v)) {
                d.dispatch(Action::SetDiff(with, t));
            }
        })
    };
    let picker = html! {
        <div class="row diff-pickers">
            <label for="diff-with">{ format!("Compare v{a} with") }</label>
            <select id="diff-with" onchange={onwith}>
                { for options.iter().map(|p| {
                    let text = if Some(*p) == state.wake().compare { format!("{p} (B)") } else { p.to_string() };
                    html! { <option value={p.to_string()} selected={*p == b}>{ text }</option> }
                }) }
            </select>
            <label for="diff-format">{ "as" }</label>
            <select id="diff-format" onchange={onfmt}>
                { for KernelText::ALL.iter().map(|t| html! {
                    <option value={t.name()} selected={fmt == *t}>{ text_label(*t) }</option>
                }) }
            </select>
        </div>
    };
    let body = match built.as_ref() {
        Err(e) => {
            html! { <p class="error">{ format!("v{b} would build no sched domains: {e}") }</p> }
        }
        Ok(db) => {
            let left = kernel_text(da, cpu, fmt);
            let right = db
                .try_cpu(cpu)
                .map(|_| kernel_text(db, cpu, fmt))
                .unwrap_or_default();
            let d = diff(&left, &right);
            let counts = if d.identical() {
                format!(
                    "CPU {}'s {} text is the same under both.",
                    cpu.0,
                    fmt.name()
                )
            } else {
                format!(
                    "CPU {}'s {} text: {} changed, {} only in v{a}, {} only in v{b}{}.",
                    cpu.0,
                    fmt.name(),
                    d.changed,
                    d.removed,
                    d.added,
                    if d.capped {
                        " (too many edits to align: paired in order)"
                    } else {
                        ""
                    }
                )
            };
            html! {
                <>
                    <p class="diff-summary" role="status">
                        <b>{ summary(&a.to_string(), da, &b.to_string(), db) }</b>{ ". " }{ counts }
                    </p>
                    <div class="diff-scroll" tabindex="0" role="region"
                        aria-label={format!("v{a} and v{b} side by side")}>
                        <table class="line-diff" data-identical={d.identical().to_string()}>
                            <thead><tr>
                                <th scope="col"><span class="visually-hidden">{ "change" }</span></th>
                                <th scope="col">{ format!("v{a}") }</th>
                                <th scope="col">{ format!("v{b}") }</th>
                            </tr></thead>
                            <tbody>
                                { for d.rows.iter().map(|r| {
                                    let (class, mark) = r.kind();
                                    let (l, rt) = match r {
                                        Row::Same(s) => (s.as_str(), s.as_str()),
                                        Row::Changed(x, y) => (x.as_str(), y.as_str()),
                                        Row::Removed(x) => (x.as_str(), ""),
                                        Row::Added(y) => ("", y.as_str()),
                                    };
                                    let title = match class {
                                        "changed" => "changed",
                                        "removed" => "only on the left",
                                        "added" => "only on the right",
                                        _ => "the same",
                                    };
                                    html! {
                                        <tr class={classes!("diff-row", class)}>
                                            <td class="diff-mark" title={title}>{ mark }</td>
                                            // A range ("span=20-23") is not broken
                                            // at its hyphen.
                                            <td class="diff-left"><code>{ unbroken(l) }</code></td>
                                            <td class="diff-right"><code>{ unbroken(rt) }</code></td>
                                        </tr>
                                    }
                                }) }
                            </tbody>
                        </table>
                    </div>
                    <p class="hint">{ "Marks: ~ changed, - only on the left, + only on the right." }</p>
                </>
            }
        }
    };
    html! {
        <section class="domain-diff" aria-label="compare two kernels' domains">
            <h3>{ "Compare kernels" }</h3>
            { picker }
            // An embed shows the link's comparison, not a menu of others (its picker is
            // hidden there): this line says which it is.
            <p class="diff-fixed">{ format!("v{a} with v{b}, as {}.", text_label(fmt)) }</p>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::topology::presets;

    fn build(m: &str, p: &str) -> SchedDomains {
        let m = presets::machine(m).unwrap();
        SchedDomains::build(&m, &BuildConfig::for_patches(&p.parse().unwrap())).unwrap()
    }

    #[test]
    fn the_cluster_patch_changes_the_cls_level_on_kunpeng() {
        let a = build("kunpeng920-6426", "6.6");
        let b = build("kunpeng920-6426", "6.6+cluster");
        let s = summary("6.6", &a, "6.6+cluster", &b);
        // v6.6 builds CLS already; the patch makes it a cluster domain (SD_CLUSTER).
        assert!(s.contains("flags differ on") && s.contains("CLS"), "{s}");
        let d = diff(
            &kernel_text(&a, CpuId(0), KernelText::Debugfs),
            &kernel_text(&b, CpuId(0), KernelText::Debugfs),
        );
        assert!(!d.identical() && d.added + d.changed > 0, "{d:?}");
        // dmesg prints no flags: the same text under both.
        let d = diff(
            &kernel_text(&a, CpuId(0), KernelText::Dmesg),
            &kernel_text(&b, CpuId(0), KernelText::Dmesg),
        );
        assert!(d.identical(), "{d:?}");
        let same = summary("6.6", &a, "6.6", &a);
        assert!(same.contains("the same levels"), "{same}");
        for f in KernelText::ALL {
            let t = kernel_text(&a, CpuId(0), f);
            assert!(diff(&t, &t).identical());
        }
    }

    #[test]
    fn choices_put_b_first_and_hold_every_release() {
        let a: PatchSet = "6.8".parse().unwrap();
        let b: PatchSet = "6.6+cluster".parse().unwrap();
        let c = choices(a, Some(b));
        assert_eq!(c[0], b);
        assert!(c.len() > Release::all().len());
        assert!(c.contains(&"5.12".parse().unwrap()));
        let mut dedup = c.clone();
        dedup.dedup();
        assert_eq!(dedup.len(), c.len());
    }
}
