//! The right-hand panel's tab router: a heading, the tab bar and the chosen tab's
//! component.
//!
//! ```text
//!  Domains · dmesg · debugfs ─▶ DomainTree   (domain_tree.rs)
//!  Wake-up                   ─▶ WakeupPanel  (wakeup_view.rs)
//!  Simulate                  ─▶ SimPanel     (sim_view.rs)
//! ```

use yew::prelude::*;

use crate::components::domain_tree::DomainTree;
use crate::components::sim_view::SimPanel;
use crate::components::wakeup_view::WakeupPanel;
use crate::state::{Action, AppContext, View};

/// The tabs in the bar's order (the end-to-end test clicks them by position).
const TABS: [(View, &str); 5] = [
    (View::Domains, "Domains"),
    (View::Dmesg, "dmesg"),
    (View::Debugfs, "debugfs"),
    (View::Wakeup, "Wake-up"),
    (View::Simulate, "Simulate"),
];

#[function_component(TabPanel)]
pub fn tab_panel() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };

    let tab_button = |(tab, label): (View, &'static str)| {
        let active = state.tab() == tab;
        let class = classes!(active.then_some("active"));
        let dispatch = state.dispatcher();
        let onclick = Callback::from(move |_: MouseEvent| dispatch.dispatch(Action::ShowTab(tab)));
        html! {
            <button {class} {onclick} role="tab" aria-selected={active.to_string()}>{ label }</button>
        }
    };

    let (title, sub, body) = match state.tab() {
        View::Wakeup => (
            "Where does the wakee go?".to_string(),
            " · select_task_rq_fair() step by step".to_string(),
            html! { <WakeupPanel /> },
        ),
        View::Simulate => (
            "What does the patch do to the benchmark?".to_string(),
            " · the simulator, A against B".to_string(),
            html! { <SimPanel /> },
        ),
        View::Domains | View::Dmesg | View::Debugfs => (
            format!("Sched domains of CPU {}", state.cpu().0),
            format!(" · Linux v{}", state.patches()),
            html! { <DomainTree /> },
        ),
    };
    html! {
        <div class="domains">
            <h2>{ title }<span class="sub">{ sub }</span></h2>
            <div class="tabs" role="tablist">
                { for TABS.into_iter().map(tab_button) }
            </div>
            { body }
        </div>
    }
}
