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

/// The tab panel's id: the tabs' `aria-controls` and the skip link's target.
pub const PANEL_ID: &str = "tabpanel";

/// A tab button's id (the panel's `aria-labelledby`).
fn tab_id(tab: View) -> String {
    let i = TABS.iter().position(|&(t, _)| t == tab).unwrap_or(0);
    format!("tab-{i}")
}

#[derive(Properties, PartialEq, Default)]
pub struct Props {
    /// The embed view: the chosen tab's body alone, no tab bar.
    #[prop_or_default]
    pub embed: bool,
}

#[function_component(TabPanel)]
pub fn tab_panel(props: &Props) -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! { <p class="error">{ "internal error: the app state is missing" }</p> };
    };

    // The ARIA tabs pattern: the active tab is the bar's one tab stop, arrow keys move
    // along the bar and open the tab they reach (automatic activation), and the body
    // below is the tab panel the tabs control.
    let tab_button = |(tab, label): (View, &'static str)| {
        let active = state.tab() == tab;
        let class = classes!(active.then_some("active"));
        let dispatch = state.dispatcher();
        let onclick = Callback::from(move |_: MouseEvent| dispatch.dispatch(Action::ShowTab(tab)));
        html! {
            <button {class} {onclick} role="tab" id={tab_id(tab)} aria-controls={PANEL_ID}
                aria-selected={active.to_string()} tabindex={if active { "0" } else { "-1" }}>
                { label }
            </button>
        }
    };
    let onkeydown = {
        let dispatch = state.dispatcher();
        Callback::from(move |e: KeyboardEvent| {
            if let Some(i) = crate::dom::rove(&e, "[role=tablist]", "[role=tab]") {
                dispatch.dispatch(Action::ShowTab(TABS[i].0));
            }
        })
    };

    let (title, sub, body) = match state.tab() {
        View::Wakeup => (
            "Where does the wakee go?".to_string(),
            "select_task_rq_fair() step by step".to_string(),
            html! { <WakeupPanel /> },
        ),
        View::Simulate => (
            "What does the patch do to the benchmark?".to_string(),
            "the simulator, A against B".to_string(),
            html! { <SimPanel /> },
        ),
        View::Domains | View::Dmesg | View::Debugfs => (
            format!("Sched domains of CPU {}", state.cpu().0),
            format!("Linux v{}", state.patches()),
            html! { <DomainTree /> },
        ),
    };
    html! {
        <div class="domains">
            // The subtitle wraps whole, its "·" (drawn by the style sheet) before it on
            // the title's line and out of sight at the start of a line of its own: on
            // a phone the dot was left at the end of the title's line and "B" of "the
            // simulator, A against B" alone on a third.
            <h2 class="titled"><span class="title">{ title }</span><span class="sub">{ sub }</span></h2>
            if props.embed {
                { body }
            } else {
                <div class="tabs" role="tablist" aria-label="views" {onkeydown}>
                    { for TABS.into_iter().map(tab_button) }
                </div>
                <div role="tabpanel" id={PANEL_ID} aria-labelledby={tab_id(state.tab())} tabindex="-1">
                    { body }
                </div>
            }
        </div>
    }
}
