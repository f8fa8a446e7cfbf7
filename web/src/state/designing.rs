//! The designer's reducer steps on [`AppState`]: opening and closing it, leaving it for
//! the JSON form, and an edit of the form, which moves the machine (or the custom
//! workload) when the whole form is valid; an irregular machine's architecture and
//! Kconfig are set on its own spec; and keeping an open designer in step with other
//! actions. `designer.rs` holds the form; [`Designer::for_machine`] here opens it on a
//! machine, or says why it cannot.

use std::collections::BTreeMap;

use schedlab_core::scenario::{self, MachineChoice, ScenarioMachine, SimSetup};
use schedlab_core::topology::{presets, Arch, Firmware, KernelConfig, Missing};
use schedlab_core::workload::{defaults as workload_defaults, Workload};

use crate::format::pretty_json;
use schedlab_core::topology::import::machine_to_spec;
use schedlab_core::topology::{CpuTopo, Machine};

use super::designer::{Designer, Draft, Field, MAX_DESIGN_CPUS, MAX_DESIGN_NODES};
use super::{Action, AppState};

/// How `action` treats an open designer: (closing, editing). The designer stays open
/// over a change of machine (and shows the new one) unless it is closed or left for
/// the JSON form; its own edits keep its text.
pub(super) fn designer_effect(action: &Action) -> (bool, bool) {
    match action {
        Action::OpenDesigner(open) => (!open, true),
        Action::EditAsJson => (true, true),
        Action::EditDesign(..) => (false, true),
        _ => (false, false),
    }
}

impl AppState {
    /// The designer's actions ([`Action::OpenDesigner`], [`Action::EditAsJson`],
    /// [`Action::EditDesign`]) on `self`, the next state, from `was`; any other action
    /// is not one of them and changes nothing.
    pub(super) fn reduce_designer(&mut self, was: &AppState, action: Action) {
        match action {
            Action::OpenDesigner(open) => {
                self.designer =
                    open.then(|| Designer::for_machine(&was.scenario.machine, &was.sim().workload));
                if open {
                    self.custom_open = false;
                }
            }
            Action::EditAsJson => {
                if let Some(Designer::Irregular { json, .. }) = self.designer.take() {
                    self.custom_prefill = (was.custom_prefill.0.wrapping_add(1), json);
                    self.custom_open = true;
                    self.custom_error = None;
                }
            }
            Action::EditDesign(field, value) => self.edit_design(field, &value),
            _ => {}
        }
    }

    /// After any action but the designer's own: an open designer follows the new
    /// machine, or the new custom workload (see [`designer_effect`]).
    pub(super) fn follow_designer(&mut self, was: &AppState, closing: bool, editing: bool) {
        if was.designer.is_some() && !closing && !editing {
            if self.designer.is_none() {
                self.designer = Some(Designer::for_machine(
                    &self.scenario.machine,
                    &self.sim().workload,
                ));
            } else if self.sim().workload != was.sim().workload {
                let w = self.sim().workload.clone();
                if let Some(Designer::Form(d)) = &mut self.designer {
                    d.sync_work(&w);
                }
            }
        }
    }

    /// [`Action::EditDesign`]: applies the edit to the designer's text, then moves the
    /// machine (or the custom workload) to what the form describes if all of it is
    /// valid and it changed; the errors replace the form's old ones.
    pub(super) fn edit_design(&mut self, field: Field, value: &str) {
        let mut d = match self.designer.take() {
            Some(Designer::Form(d)) => d,
            Some(irregular) => {
                // The architecture and the Kconfig apply to any spec, explicit too.
                self.designer = Some(irregular);
                self.edit_kernel(field, value);
                return;
            }
            None => return,
        };
        d.set(field, value);
        if field.is_workload() {
            let old = self.sim().workload.clone();
            let pairs = match old {
                Workload::Custom { pairs, .. } => pairs,
                _ => workload_defaults::PAIRS,
            };
            match d.workload(pairs) {
                Ok(w) if w == old => d.set_errors(true, BTreeMap::new()),
                Ok(w) => {
                    let mut sim = self.sim().clone();
                    // A completion workload's duration is its cap (as the Simulate
                    // tab's workload picker does).
                    if w.runs_to_completion() != old.runs_to_completion() {
                        sim.duration_ms = if w.runs_to_completion() {
                            scenario::MAX_SIM_MS
                        } else {
                            SimSetup::default().duration_ms
                        };
                    }
                    sim.workload = w;
                    match sim.run_spec(self.machine(), self.patches()) {
                        Ok(_) => {
                            self.scenario.sim = Some(sim);
                            self.sim_error = None;
                            self.held = None;
                            d.set_errors(true, BTreeMap::new());
                        }
                        Err(e) => d.set_errors(true, BTreeMap::from([(field, e)])),
                    }
                }
                Err(e) => d.set_errors(true, e),
            }
        } else {
            match d.spec() {
                Ok(spec) if self.custom() == Some(&spec) => d.set_errors(false, BTreeMap::new()),
                Ok(spec) => match ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))) {
                    Ok(m) => {
                        let cpu = self.cpu();
                        self.set_machine(m);
                        // The selected CPU stays while the machine still has it.
                        if cpu.0 < self.nr_cpus() {
                            self.scenario.cpu = cpu;
                        }
                        d.set_errors(false, BTreeMap::new());
                    }
                    Err(e) => d.set_errors(false, BTreeMap::from([(Field::Total, e.to_string())])),
                },
                Err(e) => d.set_errors(false, e),
            }
        }
        self.designer = Some(Designer::Form(d));
    }

    /// An irregular machine's architecture or Kconfig option, set on its own spec (a
    /// preset's, or the custom machine's per-CPU one); the designer then shows the
    /// new machine.
    fn edit_kernel(&mut self, field: Field, value: &str) {
        let mut spec = match self.scenario.machine.choice() {
            MachineChoice::Preset(n) => match presets::preset(n) {
                Some(p) => p.spec(),
                None => return,
            },
            MachineChoice::Spec(s) => (**s).clone(),
        };
        match field {
            Field::Arch => match value.parse() {
                Ok(a) => {
                    spec.arch = a;
                    // x86 reads its topology from CPUID and ACPI: no device tree, and
                    // its caches from CPUID leaf 4.
                    if a == Arch::X86 {
                        spec.firmware = Firmware::Acpi;
                        spec.no_shared_cache = false;
                    }
                }
                Err(_) => return,
            },
            Field::Firmware => match value.parse() {
                Ok(f) => spec.firmware = f,
                Err(_) => return,
            },
            Field::NoSharedCache => spec.no_shared_cache = value == "y",
            Field::Config(k) => {
                let mut c = spec.config.unwrap_or(KernelConfig::SERVER);
                k.set(&mut c, value == "y");
                spec.config = (c != KernelConfig::SERVER).then_some(c);
            }
            _ => return,
        }
        if self.custom() == Some(&spec) {
            return;
        }
        match ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))) {
            Ok(m) => {
                let cpu = self.cpu();
                self.set_machine(m);
                if cpu.0 < self.nr_cpus() {
                    self.scenario.cpu = cpu;
                }
                self.designer = Some(Designer::for_machine(
                    &self.scenario.machine,
                    &self.sim().workload,
                ));
            }
            Err(e) => self.banner = Some(e.to_string()),
        }
    }

    /// What the pasted machine's text lacked that the kernel uses (core's notes in
    /// its description), for a custom machine; nothing for a preset.
    pub fn missing(&self) -> Vec<Missing> {
        if self.custom().is_none() {
            return Vec::new();
        }
        Missing::in_description(&self.machine().description)
    }
}

impl Designer {
    /// The designer for `machine` (built from `choice`), its workload fields from `w`.
    pub fn for_machine(machine: &ScenarioMachine, w: &Workload) -> Designer {
        let m = machine.machine();
        let spec = match machine.choice() {
            MachineChoice::Preset(name) => presets::preset(name).map(|p| {
                let mut s = p.spec();
                s.name = format!("{name} (designed)");
                s
            }),
            MachineChoice::Spec(s) => Some((**s).clone()),
        };
        let json = || pretty_json(&serde_json::to_string(&machine_to_spec(m)).unwrap_or_default());
        let regular = spec.and_then(|s| match &s.cpus {
            None => Some(s),
            Some(_) => s.compact(m).map(|mut c| {
                c.name = s.name.clone();
                c
            }),
        });
        let reason = match &regular {
            _ if m.nr_cpus() as u64 > MAX_DESIGN_CPUS => Some(format!(
                "it has {} CPUs, and the designer builds up to {MAX_DESIGN_CPUS}",
                m.nr_cpus()
            )),
            _ if m.nr_nodes() as u64 > MAX_DESIGN_NODES => Some(format!(
                "it has {} NUMA nodes, and the designer's distance grid takes up to {MAX_DESIGN_NODES}",
                m.nr_nodes()
            )),
            None => Some(irregular_reason(m)),
            Some(_) => None,
        };
        match (reason, regular) {
            (None, Some(spec)) => {
                let mut d = Draft::from_spec(&spec, m);
                d.work = Draft::work_of(Some(w));
                Designer::Form(Box::new(d))
            }
            (reason, _) => Designer::Irregular {
                reason: reason.unwrap_or_default(),
                json: json(),
            },
        }
    }

    #[cfg(test)]
    pub fn draft(&self) -> Option<&Draft> {
        match self {
            Designer::Form(d) => Some(d),
            Designer::Irregular { .. } => None,
        }
    }
}

/// A level's id of a CPU.
type Key<'a> = &'a dyn Fn(&CpuTopo) -> u64;

/// Why a machine cannot be written as counts per level, in the first way it fails.
fn irregular_reason(m: &Machine) -> String {
    if m.cpus.iter().any(|c| c.asym_prio != 0) || m.hybrid {
        return "it is a hybrid part (x86 ITMT priorities per CPU, cores of two kinds), which \
                counts per level cannot describe"
            .to_string();
    }
    // The designer adds memory-only nodes after the nodes with CPUs (the regular
    // form's SLIT rows past them); one among them has a node id it cannot place.
    let cpu_nodes = m.cpus.iter().map(|c| usize::from(c.node.0) + 1).max();
    if let Some(empty) =
        (0..cpu_nodes.unwrap_or(0)).find(|&n| !m.cpus.iter().any(|c| usize::from(c.node.0) == n))
    {
        return format!(
            "its node {empty} has no CPUs but comes before nodes that have them (the \
             designer's memory-only nodes come after the nodes with CPUs)"
        );
    }
    // The first level whose groups are not all the same size.
    let sizes = |key: Key| {
        let mut by: BTreeMap<u64, u32> = BTreeMap::new();
        for c in &m.cpus {
            *by.entry(key(c)).or_default() += 1;
        }
        let (lo, hi) = (by.values().min().copied(), by.values().max().copied());
        (lo != hi).then(|| (lo.unwrap_or(0), hi.unwrap_or(0)))
    };
    let levels: [(&str, Key); 5] = [
        ("sockets", &|c| c.package.into()),
        ("NUMA nodes", &|c| c.node.0.into()),
        ("LLCs", &|c| c.llc.into()),
        ("clusters", &|c| c.cluster.into()),
        ("cores", &|c| c.core.into()),
    ];
    for (what, key) in levels {
        if let Some((lo, hi)) = sizes(key) {
            return format!("its {what} are of different sizes ({lo} to {hi} CPUs)");
        }
    }
    "its CPUs are numbered in an order that is neither linear nor x86's SMT split, or \
     its levels do not nest evenly"
        .to_string()
}
