//! App state: one [`Reducible`] struct and the [`Action`]s that change it.
//!
//! The machine is rebuilt only when the preset changes and the domains only when the
//! machine or the release changes; both are then shared read-only. Errors from core
//! are kept as text so components can show them; nothing here panics on user input.

use std::rc::Rc;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::release::Release;
use schedlab_core::sched_domain::{build_sched_domains, BuildConfig, SchedDomains};
use schedlab_core::topology::{presets, Machine};
use yew::prelude::*;

/// The preset the page opens with: seed 01's machine, where CLS matters.
pub const DEFAULT_PRESET: &str = "kunpeng920-6426";

/// Which view of the chosen CPU's domains the right-hand panel shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    /// The domain levels drawn as cards.
    Tree,
    /// The exact text `sched_domain_debug()` prints with `sched_verbose`.
    Dmesg,
    /// What /sys/kernel/debug/sched/domains (or /proc/sys/kernel/sched_domain) shows.
    Debugfs,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AppState {
    pub preset: String,
    pub release: Release,
    pub cpu: CpuId,
    pub tab: Tab,
    /// The built machine, or why it could not be built.
    pub machine: Result<Rc<Machine>, String>,
    /// `build_sched_domains()` for that machine and release, or why it failed.
    pub domains: Result<Rc<SchedDomains>, String>,
    /// The index into the chosen CPU's domains whose span the drawing shades.
    pub highlight: Option<usize>,
}

pub enum Action {
    SelectPreset(String),
    SelectRelease(Release),
    SelectCpu(CpuId),
    ShowTab(Tab),
    /// Shade a domain level's span in the drawing, or nothing.
    Highlight(Option<usize>),
}

impl AppState {
    pub fn new(preset: &str, release: Release) -> Self {
        let machine = presets::machine(preset)
            .map(Rc::new)
            .map_err(|e| e.to_string());
        let domains = build(&machine, release);
        AppState {
            preset: preset.to_string(),
            release,
            cpu: CpuId(0),
            tab: Tab::Tree,
            machine,
            domains,
            highlight: None,
        }
    }

    /// The machine, if it was built.
    pub fn machine(&self) -> Option<&Rc<Machine>> {
        self.machine.as_ref().ok()
    }

    /// The span of the highlighted level of the chosen CPU, if any. Only while the
    /// level cards are on screen: shading with no visible reason would puzzle.
    pub fn highlight_span(&self) -> Option<CpuMask> {
        if self.tab != Tab::Tree {
            return None;
        }
        let level = self.highlight?;
        let domains = self.domains.as_ref().ok()?;
        let sd = domains.try_cpu(self.cpu)?.domains.get(level)?;
        Some(sd.span.clone())
    }
}

/// Builds the domains, or says why there are none.
fn build(
    machine: &Result<Rc<Machine>, String>,
    release: Release,
) -> Result<Rc<SchedDomains>, String> {
    match machine {
        Ok(m) => build_sched_domains(m, &BuildConfig::new(release))
            .map(Rc::new)
            .map_err(|e| e.to_string()),
        Err(_) => Err("there is no machine to build sched domains for".to_string()),
    }
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new(DEFAULT_PRESET, Release::DEFAULT)
    }
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            Action::SelectPreset(name) => {
                if name == self.preset {
                    return self;
                }
                next = AppState::new(&name, self.release);
                next.tab = self.tab;
            }
            Action::SelectRelease(release) => {
                if release == self.release {
                    return self;
                }
                next.release = release;
                next.domains = build(&self.machine, release);
                next.highlight = None;
            }
            Action::SelectCpu(cpu) => {
                // A CPU outside the machine is ignored rather than trusted.
                match self.machine() {
                    Some(m) if cpu.0 < m.nr_cpus() => {
                        next.cpu = cpu;
                        next.highlight = None;
                    }
                    _ => return self,
                }
            }
            Action::ShowTab(tab) => next.tab = tab,
            Action::Highlight(level) => next.highlight = level,
        }
        Rc::new(next)
    }
}

/// What components receive through context.
pub type AppContext = UseReducerHandle<AppState>;

#[cfg(test)]
mod tests {
    use super::*;

    fn level_names(state: &AppState) -> Vec<&'static str> {
        let domains = state.domains.as_ref().expect("domains build");
        let cpu = domains.try_cpu(state.cpu).expect("CPU is online");
        cpu.domains.iter().map(|d| d.name).collect()
    }

    #[test]
    fn default_page_has_kunpeng_domains_for_cpu0() {
        let state = AppState::default();
        assert_eq!(state.preset, DEFAULT_PRESET);
        assert_eq!(state.release, Release::new(6, 8));
        assert_eq!(state.cpu, CpuId(0));
        assert_eq!(&level_names(&state)[..2], &["CLS", "MC"]);
    }

    #[test]
    fn a_cpu_outside_the_machine_is_ignored() {
        let state = Rc::new(AppState::default());
        let next = state.clone().reduce(Action::SelectCpu(CpuId(128)));
        assert!(Rc::ptr_eq(&state, &next));
        let next = state.reduce(Action::SelectCpu(CpuId(127)));
        assert_eq!(next.cpu, CpuId(127));
    }

    #[test]
    fn changing_release_rebuilds_domains_and_keeps_the_cpu() {
        let state = Rc::new(AppState::default()).reduce(Action::SelectCpu(CpuId(5)));
        let state = state.reduce(Action::Highlight(Some(1)));
        assert!(state.highlight_span().is_some());
        // CONFIG_SCHED_CLUSTER's CLS level arrived in v5.16.
        let old = state.reduce(Action::SelectRelease(Release::new(5, 15)));
        assert_eq!(old.cpu, CpuId(5));
        assert_eq!(old.highlight, None);
        assert!(!level_names(&old).contains(&"CLS"));
    }

    #[test]
    fn changing_preset_resets_the_cpu() {
        let state = Rc::new(AppState::default()).reduce(Action::SelectCpu(CpuId(100)));
        let state = state.reduce(Action::SelectPreset("xeon-smt-8".to_string()));
        assert_eq!(state.cpu, CpuId(0));
        assert_eq!(level_names(&state)[0], "SMT");
    }

    #[test]
    fn an_unknown_preset_is_an_error_message_not_a_panic() {
        let state = Rc::new(AppState::default()).reduce(Action::SelectPreset("nope".to_string()));
        let err = state.machine.as_ref().expect_err("unknown preset");
        assert!(err.contains("unknown machine preset"), "{err}");
        assert!(state.domains.is_err());
        assert_eq!(state.highlight_span(), None);
    }

    #[test]
    fn every_preset_builds_without_error() {
        // All releases × presets is core's to test; here the page's three anchors.
        for p in presets::PRESETS {
            for r in [Release::OLDEST, Release::DEFAULT, Release::NEWEST] {
                let state = AppState::new(p.name, r);
                assert!(state.machine.is_ok(), "{} {r}", p.name);
                assert!(state.domains.is_ok(), "{} {r}: {:?}", p.name, state.domains);
            }
        }
    }
}
