//! The Wake-up tab's hand-set inputs (`wakeup_view.rs` draws the decisions): what a
//! click in the drawing sets, all idle or busy or a random share, the waker, prev and
//! recent CPUs, WF_SYNC, has_idle_cores, nr_idle_scan, the cores' cookies and the
//! terms to look up.

use schedlab_core::cpumask::CpuId;
use yew::prelude::*;

use crate::components::glossary::Gloss;
use crate::dom::{checked, input_value, select_value};
use schedlab_core::scenario::WakeSetup;

use crate::state::{Action, AppContext, ClickMode};

/// A `<select>` of the machine's CPUs.
fn cpu_select(
    id: &'static str,
    n: u32,
    value: Option<CpuId>,
    none: Option<&'static str>,
    on: Callback<Option<CpuId>>,
) -> Html {
    let onchange = Callback::from(move |e: Event| match select_value(&e).as_deref() {
        Some("") => on.emit(None),
        Some(v) => {
            if let Ok(c) = v.parse::<u32>() {
                on.emit(Some(CpuId(c)));
            }
        }
        None => {}
    });
    html! {
        <select {id} {onchange}>
            if let Some(label) = none {
                <option value="" selected={value.is_none()}>{ label }</option>
            }
            { for (0..n).map(|c| html! {
                <option value={c.to_string()} selected={value == Some(CpuId(c))}>{ format!("CPU {c}") }</option>
            }) }
        </select>
    }
}

/// The terms the Wake-up tab explains on demand.
const TERMS: [&str; 16] = [
    "select_task_rq_fair",
    "wake_affine",
    "wake_wide",
    "select_idle_sibling",
    "select_idle_cpu",
    "SIS_UTIL",
    "SIS_PROP",
    "nr_idle_scan",
    "has_idle_cores",
    "recent_used_cpu",
    "WF_SYNC",
    "wakelist",
    "IPI",
    "LLC",
    "cluster",
    "cookie",
];

/// The fieldset of the hand-set wake-up (a simulated one opened from the timeline
/// takes its place).
pub(crate) fn wake_setup(state: &AppContext) -> Html {
    let n = state.machine().nr_cpus();
    let w = state.wake();
    let dispatcher = state.dispatcher();
    let act = |a: fn() -> Action| {
        let d = dispatcher.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(a()))
    };

    let mode_btn = |mode: ClickMode, label: &'static str| {
        let d = dispatcher.clone();
        let active = state.click() == mode;
        let onclick = Callback::from(move |_: MouseEvent| d.dispatch(Action::SetClickMode(mode)));
        html! {
            <button class={classes!("seg", active.then_some("active"))} aria-pressed={active.to_string()} {onclick}>{ label }</button>
        }
    };
    let (permille, seed) = state.random_inputs();
    // A value out of a field's range (-3, 2.5, empty, 101) is refused aloud with the
    // field's name and range, and the field shows the value in use again: ignored, it
    // stayed in the field while Randomise used the old one.
    let on_permille = {
        let d = dispatcher.clone();
        Callback::from(move |e: Event| {
            let text = input_value(&e).unwrap_or_default();
            d.dispatch(match text.trim().parse::<u32>() {
                Ok(v) if v <= 100 => Action::SetRandomInputs {
                    permille: v * 10,
                    seed,
                },
                _ => Action::WakeInputError(format!(
                    "busy %: {:?} is not a whole number from 0 to 100",
                    text.trim()
                )),
            })
        })
    };
    let on_seed = {
        let d = dispatcher.clone();
        Callback::from(move |e: Event| {
            let text = input_value(&e).unwrap_or_default();
            d.dispatch(match text.trim().parse::<u64>() {
                Ok(v) => Action::SetRandomInputs { permille, seed: v },
                Err(_) => Action::WakeInputError(format!(
                    "seed: {:?} is not a whole number, 0 or more",
                    text.trim()
                )),
            })
        })
    };
    let on_random = {
        let (d, p, s) = (dispatcher.clone(), permille, seed);
        Callback::from(move |_: MouseEvent| {
            d.dispatch(Action::RandomBusy {
                permille: p,
                seed: s,
            })
        })
    };
    let on_cpu = |f: fn(CpuId) -> Action| {
        let d = dispatcher.clone();
        Callback::from(move |c: Option<CpuId>| {
            if let Some(c) = c {
                d.dispatch(f(c));
            }
        })
    };
    let on_recent = {
        let d = dispatcher.clone();
        Callback::from(move |c: Option<CpuId>| d.dispatch(Action::SetRecent(c)))
    };
    let on_sync = {
        let d = dispatcher.clone();
        Callback::from(move |e: Event| d.dispatch(Action::SetSync(checked(&e))))
    };
    let on_hic = {
        let d = dispatcher.clone();
        Callback::from(move |e: Event| {
            d.dispatch(Action::SetHasIdleCores(match select_value(&e).as_deref() {
                Some("1") => Some(true),
                Some("0") => Some(false),
                _ => None,
            }))
        })
    };
    // Empty is "derived"; past the LLC's weight the reducer refuses it (decisions kept).
    let nis_max = state.nr_idle_scan_max();
    let on_nis = {
        let d = dispatcher.clone();
        Callback::from(move |e: Event| {
            let text = input_value(&e).unwrap_or_default();
            let text = text.trim();
            d.dispatch(match text.parse::<u32>() {
                _ if text.is_empty() => Action::SetNrIdleScan(None),
                Ok(v) => Action::SetNrIdleScan(Some(v)),
                Err(_) => Action::WakeInputError(format!(
                    "nr_idle_scan: {text:?} is not a whole number from 0 to {}, or empty for derived",
                    nis_max.map_or("the LLC's weight".to_string(), |m| m.to_string())
                )),
            })
        })
    };
    let cookies = cookies_note(w);
    html! {
        <fieldset class="wake-setup">
            <legend>{ "The wake-up" }</legend>
            <div class="row">
                <span class="label">{ "Click in the drawing sets" }</span>
                <span class="segmented">
                    { mode_btn(ClickMode::ToggleBusy, "busy / idle") }
                    { mode_btn(ClickMode::Waker, "waker") }
                    { mode_btn(ClickMode::Prev, "prev") }
                </span>
            </div>
            <div class="row">
                <button id="all-idle" onclick={act(|| Action::AllIdle)}>{ "All idle" }</button>
                <button id="all-busy" onclick={act(|| Action::AllBusy)}>{ "All busy" }</button>
                <span class="random">
                    <label>{ "busy %" }<input id="busy-pct" type="number" min="0" max="100" value={(permille / 10).to_string()} onchange={on_permille} /></label>
                    <label>{ "seed" }<input id="random-seed" type="number" min="0" value={seed.to_string()} onchange={on_seed} /></label>
                    <button onclick={on_random}>{ "Randomise" }</button>
                </span>
                <span class="count">{ format!("{} of {n} busy", w.busy.weight()) }</span>
            </div>
            if let Some(e) = &state.ui.input_error {
                <p class="error wake-input-error" role="alert">{ e.clone() }</p>
            }
            <div class="row grid">
                <label><span>{ "waker CPU" }</span>{ cpu_select("waker-cpu", n, Some(w.waker), None, on_cpu(Action::SetWaker)) }</label>
                <label><span>{ "wakee's prev CPU" }</span>{ cpu_select("prev-cpu", n, Some(w.prev), None, on_cpu(Action::SetPrev)) }</label>
                <label><span>{ "recent_used_cpu" }</span>{ cpu_select("recent-cpu", n, w.recent, Some("= prev"), on_recent) }</label>
                <label class="check"><input type="checkbox" id="sync" checked={w.sync} onchange={on_sync} /><span>{ "WF_SYNC (waker about to sleep)" }</span></label>
                <label><span>{ "has_idle_cores" }</span>
                    <select id="has-idle-cores" onchange={on_hic}>
                        <option value="" selected={w.has_idle_cores.is_none()}>{ "derived" }</option>
                        <option value="1" selected={w.has_idle_cores == Some(true)}>{ "true" }</option>
                        <option value="0" selected={w.has_idle_cores == Some(false)}>{ "false" }</option>
                    </select>
                </label>
                <label><span>{ "nr_idle_scan" }</span>
                    <input id="nr-idle-scan" type="number" min="0" max={nis_max.map(|m| m.to_string())} placeholder="derived"
                        value={w.nr_idle_scan.map(|v| v.to_string()).unwrap_or_default()} onchange={on_nis} />
                </label>
            </div>
            { for cookies }
            <p class="terms"><span class="label">{ "Terms:" }</span>
                { for TERMS.iter().map(|t| html! { <Gloss term={*t} /> }) }
            </p>
        </fieldset>
    }
}

/// Which busy CPUs run which core-scheduling cookie, and the wakee's (none: no
/// cookie set).
fn cookies_note(w: &WakeSetup) -> Option<Html> {
    (!w.cookies.is_empty() || w.wakee_cookie != 0).then(|| {
    let running: Vec<String> = w
        .cookies
        .iter()
        .filter(|c| c.cpus.intersects(&w.busy))
        .map(|c| format!("CPU {} runs cookie {}", c.cpus.and(&w.busy).to_list(), c.cookie))
        .collect();
    html! {
        <p class="cookies">
            <Gloss term="core scheduling" label={Some(AttrValue::from("Core scheduling"))} />
            { format!(": {}; the wakee has cookie {}.",
                if running.is_empty() { "no busy CPU runs a cookie".to_string() } else { running.join(", ") },
                w.wakee_cookie) }
        </p>
    }
    })
}
