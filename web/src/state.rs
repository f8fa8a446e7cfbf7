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

    /// The span of the highlighted level of the chosen CPU, if any.
    pub fn highlight_span(&self) -> Option<CpuMask> {
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
