//! A new machine or patch set on [`AppState`]: the page starts over on a machine, a
//! patch box ticks through the canonical `6.6+cluster` spelling, and side A's domains
//! follow its patch set.

use schedlab_core::patch::{Patch, PatchSet};
use schedlab_core::scenario::{PageSettings, Scenario, ScenarioMachine};

use super::AppState;

impl AppState {
    /// A new machine: the page starts over on it, keeping the tab, the wake-up
    /// switches, the banner and the simulation (fitted to it).
    pub(super) fn set_machine(&mut self, machine: ScenarioMachine) {
        let mut s = Scenario::on(machine, self.scenario.patches);
        s.view = self.scenario.view;
        s.wake.sync = self.scenario.wake.sync;
        s.wake.compare = self.scenario.wake.compare;
        s.sim = self.scenario.sim.clone();
        s.page = PageSettings {
            highlight: None,
            ..self.scenario.page
        };
        let mut next = Self::from_scenario(s);
        next.banner = self.banner.clone();
        *self = next;
    }

    /// The patch set of a side with `patch` ticked or unticked, through the canonical
    /// `6.6+cluster` spelling so the page and the CLI read patch sets the same way.
    pub(super) fn toggled(base: PatchSet, patch: Patch, on: bool) -> Result<PatchSet, String> {
        let defaults = PatchSet::release(base.release);
        let mut want: Vec<Patch> = Patch::ALL.into_iter().filter(|p| base.has(*p)).collect();
        want.retain(|p| *p != patch);
        if on {
            // cluster and cluster-scan are two versions of one series: ticking one
            // unticks the other.
            want.retain(|p| {
                !matches!(
                    (patch, p),
                    (Patch::Cluster, Patch::ClusterScan) | (Patch::ClusterScan, Patch::Cluster)
                )
            });
            want.push(patch);
        }
        let mut text = base.release.to_string();
        for p in Patch::ALL {
            match (defaults.has(p), want.contains(&p)) {
                (true, false) => text.push_str(&format!("-{}", p.name())),
                (false, true) => text.push_str(&format!("+{}", p.name())),
                _ => {}
            }
        }
        let mut set: PatchSet = text.parse().map_err(|e| format!("{text}: {e}"))?;
        set.features = base.features;
        Ok(set)
    }

    /// A new patch set for side A: the domains follow it.
    pub(super) fn set_patches(&mut self, set: PatchSet) {
        self.scenario.patches = set;
        self.refresh_envs();
        self.scenario.page.highlight = None;
    }
}
