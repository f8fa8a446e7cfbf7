//! The Simulate tab's setup on [`AppState`]: the default one, fitting it to a new
//! machine, its estimated time in this page's workers (which a link's
//! [`LINK_BUDGET_S`](super::LINK_BUDGET_S) is held against), and the finished run's heat.

use std::rc::Rc;
use std::sync::OnceLock;

use schedlab_core::experiment::{estimate_events, CpuSelection};
use schedlab_core::scenario::{SimSetup, View};

use super::{AppState, Side, WORKERS, WORKER_EVENTS_PER_S};

/// The simulation a page opens with, before anyone changes it.
pub(super) fn default_sim() -> &'static SimSetup {
    static DEFAULT: OnceLock<SimSetup> = OnceLock::new();
    DEFAULT.get_or_init(SimSetup::default)
}

impl AppState {
    /// The simulation the Simulate tab runs (always one that can run on the machine).
    pub fn sim(&self) -> &SimSetup {
        self.scenario.sim.as_ref().unwrap_or_else(|| default_sim())
    }

    /// Keeps the simulation runnable on a new machine: CPUs it does not have become
    /// `all`, and a setup that still cannot run becomes the default one.
    pub(super) fn fit_sim(&mut self) {
        let m = self.scenario.machine().clone();
        let patches = self.scenario.patches;
        let mut sim = self.sim().clone();
        if sim.run_spec(&m, patches).is_err() {
            sim.cpus = CpuSelection::All;
            if sim.run_spec(&m, patches).is_err() {
                sim = SimSetup {
                    cpus: CpuSelection::All,
                    ..SimSetup::default()
                };
            }
        }
        // An untouched default that needed no fitting stays the default (and so out
        // of links for other tabs).
        self.scenario.sim = Some(sim);
    }

    /// About how long the simulation takes in this page's workers, in seconds: core's
    /// `estimate_events` of each point under each side and seed, at
    /// [`WORKER_EVENTS_PER_S`] on [`WORKERS`] workers (no faster than its longest
    /// point).
    pub fn sim_estimate_s(&self) -> f64 {
        let sim = self.sim();
        let mut total = 0.0f64;
        let mut longest = 0.0f64;
        let mut n = 0usize;
        for threads in sim.points() {
            for p in self.sides() {
                let Ok(spec) = sim.point_spec(self.machine(), p, threads) else {
                    continue;
                };
                let secs = estimate_events(&spec) as f64 / WORKER_EVENTS_PER_S;
                let seeds = sim.seeds.max(1);
                total += secs * f64::from(seeds);
                longest = longest.max(secs);
                n += seeds as usize;
            }
        }
        (total / n.clamp(1, WORKERS) as f64).max(longest)
    }

    /// In the Simulate tab after a run: the focused side's per-CPU utilisation.
    pub fn heat(&self) -> Option<Rc<Vec<(u32, u64)>>> {
        if self.tab() != View::Simulate {
            return None;
        }
        let i = match self.focus() {
            Side::B if self.scenario.wake.compare.is_some() => 1,
            _ => 0,
        };
        self.sim_heat.get(i).cloned()
    }
}
