//! The page's lessons (issue 17): a guided tour of six short lessons, each a list of
//! steps whose scenarios the page loads, and a "now try" task the page checks.
//!
//! ```text
//!  Lesson { number, title, steps: [Step { text, scene?, highlight?, claims }], task }
//!     scene  ─▶ Scene::scenario() ─▶ scenario::Scenario (machine, kernels, wake-up, tab)
//!     claims ─▶ checked by the tests against core's decisions (wake_up()) and domains
//!     task   ─▶ Goal: conditions on the page's scenario and decisions ("done" when met)
//! ```
//!
//! The text is for a student; it names the kernel functions (fair.c, core.c,
//! topology.c, v6.8 unless a release is named) and the seeds it follows. `[[key]]`
//! and `[[key|shown text]]` mark glossary terms ([`glossary`]), which the page draws
//! as pop-overs; `` `code` `` is code. Every claim a step's text makes about a
//! decision or a domain is a [`Claim`] the tests check with core, so the text cannot
//! drift from the model. Also here: the Wake-up tab's examples (each seed's decisive
//! wake-up) and the page's default scenario ([`examples`]).

pub mod content;
pub mod examples;
pub mod glossary;
pub mod scene;

use crate::cpumask::{CpuId, CpuMask};
use crate::patch::Patch;
use crate::scenario::{Scenario, View};
use crate::wakeup::{Decision, QueuePath};

pub use content::LESSONS;
pub use scene::Scene;

/// One of the two compared sides: A (the page's patch set) or B (the compared one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// A part of the page a step points at (the page outlines it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Highlight {
    /// The machine drawing.
    Drawing,
    /// The domain level cards.
    Levels,
    /// The flag chips of the level cards.
    Flags,
    /// The per-CPU facts above the cards (sd_llc_id, …).
    Facts,
    /// The wake-up's inputs.
    Setup,
    /// The kernel pickers (A and B).
    Kernel,
    /// The decisions.
    Decisions,
    /// The decisions' traces.
    Trace,
}

impl Highlight {
    /// The name the page uses (`data-highlight`, the CSS hook).
    pub fn name(self) -> &'static str {
        match self {
            Highlight::Drawing => "drawing",
            Highlight::Levels => "levels",
            Highlight::Flags => "flags",
            Highlight::Facts => "facts",
            Highlight::Setup => "setup",
            Highlight::Kernel => "kernel",
            Highlight::Decisions => "decisions",
            Highlight::Trace => "trace",
        }
    }
}

/// Something a step's text says that core can check (tests only).
#[derive(Clone, Copy, Debug)]
pub enum Claim {
    /// The side's decision is this CPU.
    Chooses(Side, u32),
    /// The side's decision is queued this way.
    Queues(Side, QueuePath),
    /// The side probes more CPUs than the other side.
    ProbesMore(Side),
    /// The side's scan probes at least this many CPUs.
    ProbesAtLeast(Side, u32),
    /// The side's scan probes exactly this many CPUs.
    Probes(Side, u32),
    /// The side reads `sd_llc_shared` fewer times than the other.
    FewerLlcSharedReads(Side),
    /// Side A's domains of the scenario's CPU: the level named so spans this list.
    Level(&'static str, &'static str),
    /// … the level has (or has not) this flag.
    Flag(&'static str, &'static str, bool),
    /// … the level has this many groups.
    Groups(&'static str, usize),
    /// … no level has this name.
    NoLevel(&'static str),
    /// Side A's `sched_cluster_active`.
    ClusterActive(bool),
}

/// One condition of a task's goal, read from the page's scenario and decisions.
#[derive(Clone, Copy, Debug)]
pub enum Cond {
    /// This tab is open.
    View(View),
    /// The selected CPU is not in this list.
    SelectedOutside(&'static str),
    /// The side's patch set has (or lacks) this patch.
    Patch(Side, Patch, bool),
    /// This CPU is busy (or idle).
    Busy(u32, bool),
    /// The side's decision is (or is not) in this CPU list.
    Chosen(Side, &'static str, bool),
    /// The side's decision is an idle CPU.
    ChosenIdle(Side),
    /// The side's decision is queued this way.
    Queued(Side, QueuePath),
}

/// A "now try" task: what to do, and the goal that says it was done.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    pub text: &'static str,
    pub goal: &'static [Cond],
    /// Said when the goal is met.
    pub done: &'static str,
}

/// One step: its narration, the scenario it loads (none: keep the page's), the part
/// of the page it points at, and what core must agree with.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub text: &'static str,
    pub scene: Option<Scene>,
    pub highlight: Option<Highlight>,
    pub claims: &'static [Claim],
}

#[derive(Clone, Copy, Debug)]
pub struct Lesson {
    /// From 1, as links name it (`"lesson": "2.3"`).
    pub number: u32,
    pub title: &'static str,
    pub steps: &'static [Step],
    /// The task after the last step, starting from the scene the steps left.
    pub task: Task,
}

/// Lesson `number` (from 1).
pub fn lesson(number: u32) -> Option<&'static Lesson> {
    LESSONS.iter().find(|l| l.number == number)
}

impl Lesson {
    /// The scene in force at step `step` (from 1): that step's, or the nearest
    /// earlier one's.
    pub fn scene_at(&self, step: u32) -> Option<&'static Scene> {
        let n = (step as usize).min(self.steps.len());
        self.steps[..n].iter().rev().find_map(|s| s.scene.as_ref())
    }
}

fn mask(s: &Scenario, list: &str) -> Option<CpuMask> {
    CpuMask::parse_list(s.machine.nr_cpus(), list).ok()
}

impl Cond {
    /// Whether the condition holds on the page: its scenario and the decisions of
    /// side A and (when comparing) B.
    pub fn holds(&self, s: &Scenario, a: Option<&Decision>, b: Option<&Decision>) -> bool {
        let side = |x: Side| match x {
            Side::A => a,
            Side::B => b,
        };
        match *self {
            Cond::View(v) => s.view == v,
            Cond::SelectedOutside(list) => mask(s, list).is_some_and(|m| !m.test_cpu(s.cpu)),
            Cond::Patch(Side::A, p, on) => s.patches.has(p) == on,
            Cond::Patch(Side::B, p, on) => s.wake.compare.is_some_and(|b| b.has(p) == on),
            Cond::Busy(c, busy) => {
                c < s.machine.nr_cpus() && s.wake.busy.test_cpu(CpuId(c)) == busy
            }
            Cond::Chosen(x, list, inside) => side(x)
                .zip(mask(s, list))
                .is_some_and(|(d, m)| m.test_cpu(d.cpu) == inside),
            Cond::ChosenIdle(x) => side(x).is_some_and(|d| !s.wake.busy.test_cpu(d.cpu)),
            Cond::Queued(x, q) => side(x).is_some_and(|d| d.queue == q),
        }
    }
}

impl Task {
    /// Whether every condition of the goal holds.
    pub fn done(&self, s: &Scenario, a: Option<&Decision>, b: Option<&Decision>) -> bool {
        self.goal.iter().all(|c| c.holds(s, a, b))
    }
}

#[cfg(test)]
mod tests;
