//! The reducer: each [`Action`] applied to a copy of the [`AppState`], then the
//! designer, the simulated wake-up and the wake-up decisions follow the change.

use std::rc::Rc;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::experiment::CpuSelection;
use schedlab_core::patch::{Patch, PatchSet};
use schedlab_core::scenario::{self, MachineChoice, ScenarioMachine, SimSetup, View};
use yew::prelude::*;

use super::designing::designer_effect;
use super::lesson_step::Opened;
use super::link::KEPT_LINK;
use super::{Action, AppState, ClickMode, Side, SimWakeStatus, CUSTOM, LINK_BUDGET_S};

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let (closing, editing) = designer_effect(&action);
        let mut next = (*self).clone();
        let nr = self.nr_cpus();
        let valid = |c: CpuId| c.0 < nr;
        let wake = &mut next.scenario.wake;
        match action {
            Action::SelectPreset(name) => {
                if name == CUSTOM {
                    next.custom_open = true;
                } else if name == self.preset() {
                    return self;
                } else {
                    match ScenarioMachine::preset(&name) {
                        Ok(m) => next.set_machine(m),
                        Err(e) => next.banner = Some(e.to_string()),
                    }
                }
            }
            Action::SelectRelease(release) | Action::SetSideRelease(Side::A, release) => {
                if release == self.release() {
                    return self;
                }
                next.set_patches(PatchSet::release(release));
                next.ui.patch_error = None;
            }
            Action::SetSideRelease(Side::B, release) => {
                wake.compare = Some(PatchSet::release(release));
                next.ui.patch_error = None;
            }
            Action::TogglePatch(side, patch, on) => {
                let base = match side {
                    Side::A => self.patches(),
                    Side::B => self.wake().compare.unwrap_or(self.patches()),
                };
                match AppState::toggled(base, patch, on) {
                    Ok(set) => {
                        next.ui.patch_error = None;
                        match side {
                            Side::A => next.set_patches(set),
                            Side::B => next.scenario.wake.compare = Some(set),
                        }
                    }
                    Err(e) => next.ui.patch_error = Some(e),
                }
            }
            Action::SetCompare(on) => {
                wake.compare = if on {
                    // The teaching default: the same kernel with or without seed 01.
                    let p = self.patches();
                    let flip = !p.has(Patch::Cluster);
                    Some(AppState::toggled(p, Patch::Cluster, flip).unwrap_or(p))
                } else {
                    None
                };
                next.scenario.page.focus = Side::A;
            }
            Action::SelectCpu(cpu) => {
                // A CPU outside the machine is ignored rather than trusted.
                if !valid(cpu) {
                    return self;
                }
                next.scenario.cpu = cpu;
                next.scenario.page.highlight = None;
            }
            Action::ClickCpu(cpu) => {
                if !valid(cpu) {
                    return self;
                }
                if self.tab() != View::Wakeup {
                    return self.reduce(Action::SelectCpu(cpu));
                }
                // A captured wake-up's inputs are the simulation's: not edited here.
                if self.sim_wake.is_some() {
                    return self;
                }
                match self.click() {
                    ClickMode::ToggleBusy => return self.reduce(Action::ToggleBusy(cpu)),
                    ClickMode::Waker => wake.waker = cpu,
                    ClickMode::Prev => wake.prev = cpu,
                }
            }
            action @ (Action::SetClickMode(_)
            | Action::SetDiff(..)
            | Action::Focus(_)
            | Action::RandomBusy { .. }
            | Action::SetRandomInputs { .. }
            | Action::PresentStep(_)
            | Action::Highlight(_)) => next.reduce_page(&self, action),
            Action::ToggleBusy(cpu) => {
                if !valid(cpu) {
                    return self;
                }
                if wake.busy.test_cpu(cpu) {
                    wake.busy.clear_cpu(cpu);
                } else {
                    wake.busy.set_cpu(cpu);
                }
            }
            Action::AllIdle => wake.busy = CpuMask::new(nr),
            Action::AllBusy => wake.busy = CpuMask::full(nr),
            Action::SetWaker(c) if valid(c) => wake.waker = c,
            Action::SetPrev(c) if valid(c) => wake.prev = c,
            Action::SetRecent(c) if c.is_none_or(valid) => wake.recent = c,
            Action::SetWaker(_) | Action::SetPrev(_) | Action::SetRecent(_) => return self,
            Action::SetSync(v) => wake.sync = v,
            Action::SetHasIdleCores(v) => wake.has_idle_cores = v,
            Action::SetNrIdleScan(v) => {
                let max = self.nr_idle_scan_max();
                match (v, max) {
                    (Some(v), Some(max)) if v > max => {
                        next.ui.input_error = Some(format!(
                            "nr_idle_scan: {v} is more than the waker's LLC holds: a whole \
                             number from 0 to {max}, or empty for derived"
                        ));
                        return Rc::new(next);
                    }
                    _ => {
                        wake.nr_idle_scan = v;
                        next.ui.input_error = None;
                    }
                }
            }
            Action::WakeInputError(e) => {
                next.ui.input_error = Some(e);
                return Rc::new(next);
            }
            Action::ShowTab(tab) => next.scenario.view = tab,
            Action::OpenCustom(open) => {
                next.custom_open = open;
                next.custom_error = None;
            }
            Action::CustomRead(read) => {
                let loaded = read.and_then(|spec| {
                    ScenarioMachine::new(MachineChoice::Spec(spec)).map_err(|e| e.to_string())
                });
                match loaded {
                    Ok(m) => {
                        next.set_machine(m);
                        next.custom_open = true;
                        next.custom_error = None;
                    }
                    Err(e) => next.custom_error = Some(e),
                }
            }
            Action::LoadFragment(f) => {
                let f = f.trim().trim_start_matches('#').to_string();
                // A link that is only a byte-order mark (raw, or percent-encoded as the
                // address bar gives it) is as empty as a bare '#'.
                let only_bom = f.trim_start_matches('\u{feff}').is_empty()
                    || f.eq_ignore_ascii_case("%EF%BB%BF");
                if f.is_empty() || only_bom || f == self.fragment() {
                    return self;
                }
                match scenario::decode(&f) {
                    Ok(s) => {
                        next = AppState::from_scenario(s);
                        let secs = next.sim_estimate_s();
                        next.held = (secs > LINK_BUDGET_S).then_some(secs);
                    }
                    Err(e) => {
                        next.banner = Some(format!(
                            "This link could not be opened, so the page keeps its current \
                             scenario: {}. {KEPT_LINK}",
                            e.to_string().trim_end_matches('.')
                        ))
                    }
                }
            }
            Action::DismissBanner => next.banner = None,
            action @ (Action::OpenDesigner(_) | Action::EditAsJson | Action::EditDesign(..)) => {
                next.reduce_designer(&self, action)
            }
            Action::Lesson(None) => next.scenario.lesson = None,
            Action::Lesson(Some(at)) => match self.open_lesson(&mut next, at) {
                Opened::Unknown => return self,
                // A step without a scene of its own keeps the page as the student left it.
                Opened::Kept => {
                    next.refresh_wake();
                    return Rc::new(next);
                }
                Opened::Loaded => {}
            },
            Action::RunHeld => next.held = None,
            Action::OpenExample(f) => {
                let mut st = (*self.reduce(Action::LoadFragment(f))).clone();
                st.held = None;
                return Rc::new(st);
            }
            Action::SimHeat(heat) => next.sim_heat = heat,
            Action::OpenSimWake(at) => {
                if at.wake == 0 {
                    return self;
                }
                next.scenario.wake.sim = Some(at);
                next.sim_wake = Some(SimWakeStatus::Capturing(at));
                next.scenario.view = View::Wakeup;
            }
            Action::SimWakeCaptured(at, got) => {
                if self.scenario.wake.sim != Some(at) {
                    return self;
                }
                next.sim_wake = Some(match got {
                    Ok(w) => SimWakeStatus::Ready(w),
                    Err(e) => SimWakeStatus::Failed(at, e),
                });
            }
            Action::CloseSimWake => {
                next.sim_wake = None;
                next.scenario.wake.sim = None;
            }
            Action::SimInputError(e) => next.sim_error = Some(e),
            Action::SetSimCpus(text) => match CpuSelection::parse(self.machine(), &text) {
                Ok(cpus) => {
                    let sim = SimSetup {
                        cpus,
                        ..self.sim().clone()
                    };
                    return self.reduce(Action::SetSim(sim));
                }
                Err(e) => next.sim_error = Some(format!("CPUs: {e}")),
            },
            Action::SetSim(sim) => match sim.run_spec(self.machine(), self.patches()) {
                Ok(_) => {
                    next.scenario.sim = Some(sim);
                    next.sim_error = None;
                    // The user's own edit: it runs.
                    next.held = None;
                }
                Err(e) => next.sim_error = Some(e),
            },
        }
        next.follow_designer(&self, closing, editing);
        next.close_stale_sim_wake(&self);
        next.refresh_wake();
        Rc::new(next)
    }
}
