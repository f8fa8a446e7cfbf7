//! The link on [`AppState`]: the page a URL fragment opens, and the scenario and
//! fragment the URL carries (core's `scenario::encode`).

use std::rc::Rc;

use schedlab_core::scenario::{self, Scenario, View};
use yew::prelude::*;

use super::sim::default_sim;
use super::{Action, AppState};

/// The banner's last words on a bad link: the address bar keeps it (app.rs's
/// `hash_write`) until the scenario changes.
pub(super) const KEPT_LINK: &str =
    "The link stays in the address bar, to fix and try again, until you change the scenario.";

/// The embed view's last words on a bad link: a frame has no address bar its reader
/// could fix the link in, so they name who can.
const EMBED_KEPT_LINK: &str =
    "Whoever embedded this view can copy a new snippet from schedlab's Share menu.";

/// A banner as the embed view (`?embed`, app.rs) shows it: [`KEPT_LINK`]'s advice to
/// fix the link in the address bar, which a frame does not show, becomes
/// [`EMBED_KEPT_LINK`]; any other banner is unchanged.
pub fn embedded_banner(banner: &str) -> String {
    match banner.strip_suffix(KEPT_LINK) {
        Some(head) => format!("{head}{EMBED_KEPT_LINK}"),
        None => banner.to_string(),
    }
}

impl AppState {
    /// The page for a URL fragment: the default page with a banner if it is bad, the
    /// default page without one if there is none.
    pub fn from_fragment(fragment: &str) -> Self {
        let f = fragment.trim().trim_start_matches('#');
        if f.is_empty() {
            return AppState::default();
        }
        let st = Rc::new(AppState::default()).reduce(Action::LoadFragment(f.to_string()));
        let mut st = Rc::try_unwrap(st).unwrap_or_else(|rc| (*rc).clone());
        // A first visit has no scenario to keep: say which one the page shows instead.
        if let (Some(_), Err(e)) = (&st.banner, scenario::decode(f)) {
            st.banner = Some(format!(
                "This link could not be opened, so the page shows its default scenario: {}. \
                 {KEPT_LINK}",
                e.to_string().trim_end_matches('.')
            ));
        }
        st
    }

    /// What the URL carries: the scenario, without the simulation when it is the
    /// untouched default and another tab is open (links without one stay short).
    pub fn link_scenario(&self) -> Scenario {
        let mut s = self.scenario.clone();
        // A simulated wake-up's reference names the simulation: it stays then.
        if s.view != View::Simulate && s.sim.as_ref() == Some(default_sim()) && s.wake.sim.is_none()
        {
            s.sim = None;
        }
        s
    }

    /// The URL fragment (without '#').
    pub fn fragment(&self) -> String {
        scenario::encode(&self.link_scenario())
    }
}
