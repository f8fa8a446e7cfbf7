//! The Simulate tab's inputs: the seeds' experiments menu and the workload form. Each
//! change becomes an `Action` on the scenario (`SetSim`, `LoadFragment`); the run
//! follows from the state (`hooks::use_run`), so nothing here starts one.

use std::rc::Rc;

use schedlab_core::experiment::{Warmup, MAX_SEEDS};
use schedlab_core::reproduce::Example;
use schedlab_core::scenario::{self, SimSetup, MAX_SIM_MS};
use schedlab_core::workload::Workload;
use yew::prelude::*;

use crate::dom::{checked, input_value, select_value};
use crate::format::scale_label;
use crate::state::{Action, AppContext};

/// The workload, its scale, CPUs, duration and warm-up, sweep, seed and seeds per side.
#[function_component(SimSetupForm)]
pub fn sim_setup_form() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };
    let sim = state.sim().clone();
    let dispatcher = state.dispatcher();
    let set = move |f: &dyn Fn(&mut SimSetup)| {
        let mut s = sim.clone();
        f(&mut s);
        dispatcher.dispatch(Action::SetSim(s));
    };
    let on_workload = {
        let set = set.clone();
        Callback::from(move |e: Event| {
            if let Some(w) = select_value(&e).and_then(|n| Workload::with_defaults(&n)) {
                set(&|s: &mut SimSetup| {
                    // A completion workload's duration is its cap.
                    let was = s.workload.runs_to_completion();
                    if w.runs_to_completion() != was {
                        s.duration_ms = if w.runs_to_completion() {
                            MAX_SIM_MS
                        } else {
                            SimSetup::default().duration_ms
                        };
                    }
                    s.workload = w.clone();
                })
            }
        })
    };
    // A value that is not a whole number (-5, 2.5, empty) is refused aloud: ignored, it
    // stayed in the field while the run kept the old one.
    let number = |name: &'static str, f: fn(&mut SimSetup, u64)| {
        let (set, d) = (set.clone(), state.dispatcher());
        Callback::from(move |e: Event| {
            let text = input_value(&e).unwrap_or_default();
            match text.trim().parse::<u64>() {
                Ok(v) => set(&|s: &mut SimSetup| f(s, v)),
                Err(_) => d.dispatch(Action::SimInputError(format!(
                    "{name}: {:?} is not a whole number",
                    text.trim()
                ))),
            }
        })
    };
    let on_threads = number("scale", |s, v| {
        s.workload = s.workload.with_threads(v.min(u32::MAX as u64) as u32)
    });
    let on_duration = number("duration", |s, v| s.duration_ms = v);
    let on_seed = number("seed", |s, v| s.seed = v);
    let on_seeds = number("seeds per side", |s, v| {
        s.seeds = v.min(u64::from(u32::MAX)) as u32
    });
    let on_warmup = {
        let set = set.clone();
        Callback::from(move |e: Event| {
            let w = if checked(&e) {
                Warmup::Settled
            } else {
                Warmup::Fifth
            };
            set(&|s: &mut SimSetup| s.warmup = w)
        })
    };
    let on_cpus = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(v) = input_value(&e) {
                d.dispatch(Action::SetSimCpus(v))
            }
        })
    };
    let on_sweep = {
        let (set, d) = (set.clone(), state.dispatcher());
        Callback::from(move |e: Event| {
            let text = input_value(&e).unwrap_or_default();
            match SimSetup::parse_sweep(&text) {
                Ok(list) => set(&|s: &mut SimSetup| s.sweep = list.clone()),
                Err(e) => d.dispatch(Action::SimInputError(e)),
            }
        })
    };

    let w = &state.sim().workload;
    let completion = w.runs_to_completion();
    html! {
        <fieldset class="sim-setup">
            <legend>{ "The workload" }</legend>
            <div class="row grid">
                <label><span>{ "workload" }</span>
                    <select id="sim-workload" onchange={on_workload}>
                        { for Workload::NAMES.iter().map(|n| html! {
                            <option value={*n} selected={*n == w.name()}>{ *n }</option>
                        }) }
                    </select>
                </label>
                if !matches!(w, Workload::LatPipe { .. }) && state.sim().sweep.is_empty() {
                    <label><span>{ scale_label(w) }</span>
                        <input id="sim-threads" type="number" min="1" value={w.threads().to_string()} onchange={on_threads} />
                    </label>
                }
                <label><span>{ "CPUs (all, nodeN, list)" }</span>
                    <input id="sim-cpus" type="text" value={state.sim().cpus.to_string()} onchange={on_cpus} />
                </label>
                <label><span>{ if completion { "cap (ms)" } else { "measured (ms)" } }</span>
                    <input id="sim-duration" type="number" min="1" max={MAX_SIM_MS.to_string()}
                        value={state.sim().duration_ms.to_string()} onchange={on_duration} />
                </label>
                if !completion {
                    <label class="check">
                        <input type="checkbox" id="sim-warmup" checked={state.sim().warmup == Warmup::Settled} onchange={on_warmup} />
                        <span>{ "settled warm-up" }</span>
                    </label>
                }
                <label class="sweep-input"><span>{ format!("sweep {} (e.g. 1,4,8,16)", scale_label(w)) }</span>
                    <input id="sim-sweep" type="text" placeholder="one run"
                        value={state.sim().sweep.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")}
                        onchange={on_sweep} />
                </label>
                <label><span>{ "seed" }</span>
                    <input id="sim-seed" type="number" min="0" value={state.sim().seed.to_string()} onchange={on_seed} />
                </label>
                <label><span>{ "seeds per side" }</span>
                    <input id="sim-seeds" type="number" min="1" max={MAX_SEEDS.to_string()}
                        value={state.sim().seeds.to_string()} onchange={on_seeds} />
                </label>
            </div>
            if let Some(e) = &state.sim_error {
                <p class="error sim-error">{ format!("Not changed: {e}") }</p>
            }
        </fieldset>
    }
}

#[derive(Properties, Clone)]
pub struct ExampleMenuProps {
    /// The seeds' experiments (core's `page_examples()`, built once).
    pub examples: Rc<Vec<Example>>,
    /// The one the scenario is now, if it is one.
    pub current: Option<&'static str>,
}

impl PartialEq for ExampleMenuProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.examples, &other.examples) && self.current == other.current
    }
}

/// Opens a seed's experiment: its whole scenario, through the link's own path.
#[function_component(ExampleMenu)]
pub fn example_menu(props: &ExampleMenuProps) -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! {};
    };
    let on_example = {
        let (d, examples) = (state.dispatcher(), props.examples.clone());
        Callback::from(move |e: Event| {
            let name = select_value(&e).unwrap_or_default();
            if let Some(x) = examples.iter().find(|x| x.name == name) {
                d.dispatch(Action::OpenExample(scenario::encode(&x.scenario)));
            }
        })
    };
    html! {
        <label class="example-menu"><span>{ "A seed's experiment, published numbers beside" }</span>
            <select id="sim-example" onchange={on_example}>
                <option value="" selected={props.current.is_none()}>{ "your own (as set below)" }</option>
                { for props.examples.iter().map(|x| html! {
                    <option value={x.name} selected={props.current == Some(x.name)} title={x.title.clone()}>
                        { format!("{}: {}", x.name, x.title) }
                    </option>
                }) }
            </select>
        </label>
    }
}
