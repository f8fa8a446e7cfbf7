//! The page: header, controls, the machine drawing and the domain panel.

use yew::prelude::*;

use crate::components::controls::Controls;
use crate::components::domain_tree::DomainPanel;
use crate::components::machine_view::MachineView;
use crate::state::{Action, AppContext, AppState};

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(AppState::default);
    let on_select = {
        let state = state.clone();
        Callback::from(move |cpu| state.dispatch(Action::SelectCpu(cpu)))
    };
    let machine = match &state.machine {
        Ok(m) => html! {
            <MachineView
                machine={m.clone()}
                selected={state.cpu}
                highlight={state.highlight_span()}
                {on_select}
            />
        },
        Err(e) => html! { <p class="error">{ format!("Cannot build the machine: {e}") }</p> },
    };
    html! {
        <ContextProvider<AppContext> context={state.clone()}>
            <header class="page-header">
                <h1>{ "schedlab" }</h1>
                <p class="tagline">
                    { "The Linux scheduler's sched-domain building, for machines you may not have." }
                </p>
            </header>
            <Controls />
            <main class="layout">
                <section class="panel machine-panel" aria-label="machine">
                    { machine }
                </section>
                <section class="panel domain-panel" aria-label="sched domains">
                    <DomainPanel />
                </section>
            </main>
        </ContextProvider<AppContext>>
    }
}
