//! `--capture-wake N`: the wake-up path's inputs at the N-th simulated wake-up,
//! written as a `schedlab wake --state` file.
//!
//! ```text
//!   wake(p, waker, cpu)  ── sync_wake_view() ── decide_wake() ─┬─ capture_wake() when seq == N
//!                                                              │    exact_scenario(env, state, p, waker, flags)
//!                                                              │    wake_up(.., Trace) on the same inputs
//!                                                              └─ apply effects, queue, …
//! ```
//!
//! The file holds every input `wakeup::wake_up()` reads (`wakeup::scenario::exact_scenario`):
//! each CPU's runqueue as the wake-up path sees it, each LLC's shared line, SIS_PROP's
//! averages, `jiffies` and `HZ`, the wakee and the waker as the simulator's views hold
//! them, the wake flags the simulator passes. Resolving it against the run's machine
//! and kernel gives the same decision, which `sim/tests.rs` and
//! `core/tests/capture.rs` check wake-up by wake-up.

use serde::Serialize;

use crate::topology::{import::machine_to_spec, presets};
use crate::wakeup::scenario::{exact_scenario, MachineRef, WakeScenario};
use crate::wakeup::{self, Decision, Trace, WakeFlags};

use super::Simulator;

/// One simulated wake-up, captured.
#[derive(Clone, Debug, Serialize)]
pub struct CapturedWake {
    /// Its number in the run (from 1).
    pub seq: u32,
    pub at_ns: u64,
    /// The state file.
    pub scenario: WakeScenario,
    /// The decision the simulation made and applied (decided untraced).
    pub decision: Decision,
    /// The same inputs decided traced, as `schedlab wake` decides: the probed CPUs
    /// in scan order.
    pub trace: Trace,
    /// Whether the traced decision equals `decision` (the untraced scan takes the
    /// idle hint's word operations where the traced one probes CPU by CPU).
    pub traced_agrees: bool,
}

impl Simulator {
    /// The machine as a state file names it: its preset when it is one unchanged,
    /// else its explicit-`cpus` spec.
    fn machine_ref(&self) -> MachineRef {
        if let Some(p) = presets::preset(&self.machine.name) {
            if p.machine() == self.machine {
                return MachineRef::Preset(p.name.to_string());
            }
        }
        MachineRef::Spec(Box::new(machine_to_spec(&self.machine)))
    }

    /// Captures the wake-up numbered `seq` of `p` by `waker` on `cpu`, which the
    /// simulation decided as `d`, before any of its effects are applied.
    #[cold]
    #[inline(never)]
    pub(super) fn capture_wake(
        &mut self,
        seq: u32,
        p: u32,
        waker: Option<u32>,
        cpu: u32,
        flags: WakeFlags,
        d: &Decision,
    ) {
        let (pv, wv) = self.wake_inputs(p, waker, cpu);
        let scenario = exact_scenario(&self.env, &self.state, pv, wv, flags, self.machine_ref());
        let mut trace = Trace::default();
        let traced = wakeup::wake_up(&self.env, &self.state, pv, wv, flags, &mut trace);
        let c = CapturedWake {
            seq,
            at_ns: self.now.ns(),
            scenario,
            decision: d.clone(),
            traced_agrees: traced == *d,
            trace,
        };
        if let Some(r) = self.rec.as_deref_mut() {
            r.captured.push(c);
        }
    }
}
