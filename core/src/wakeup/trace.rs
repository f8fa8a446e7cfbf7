//! The explanation of a wake-up: each step taken, each CPU probed and why it was passed
//! over. Built only when asked for: with [`NoTrace`] the closures are never called.

use std::fmt::Write;

use serde::Serialize;

use crate::cpumask::CpuId;

use super::code::Site;
use super::{Decision, QueuePath};

/// Why a probed CPU was not chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reject {
    /// Not idle: running a task, tasks queued, a wake-up pending, or (in a guest) its
    /// vCPU preempted (`available_idle_cpu()` asks `vcpu_is_preempted()`).
    Busy,
    /// Idle, but its core runs another core-scheduling cookie.
    CookieMismatch,
    /// Not in the task's allowed CPUs.
    NotAllowed,
    /// Idle, but an SMT sibling is busy (looking for a whole idle core).
    NotIdleCore,
    /// The scan budget ran out before this CPU.
    BudgetSpent,
    /// The task would not fit its capacity (asymmetric machines).
    DoesNotFit,
}

impl Reject {
    pub fn as_str(self) -> &'static str {
        match self {
            Reject::Busy => "busy",
            Reject::CookieMismatch => "cookie mismatch",
            Reject::NotAllowed => "not allowed",
            Reject::NotIdleCore => "not an idle core",
            Reject::BudgetSpent => "scan budget spent",
            Reject::DoesNotFit => "does not fit",
        }
    }
}

/// One line of the explanation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Step {
    /// A function entered.
    Enter { func: &'static str, detail: String },
    /// A condition tested and its outcome; `cpu` is the CPU it tested, when it tested
    /// one (the target, prev, recent_used_cpu or waker's CPU of a fast-path check, the
    /// CPU whose wakelist `ttwu_queue_cond()` considered), and is left out of JSON
    /// otherwise.
    Check {
        func: &'static str,
        condition: String,
        outcome: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cpu: Option<CpuId>,
    },
    /// A CPU probed in a scan; `reject` is `None` when it was taken.
    Probe {
        func: &'static str,
        cpu: CpuId,
        reject: Option<Reject>,
    },
    /// The scan budget (`nr`) and where it came from.
    Budget {
        func: &'static str,
        nr: i64,
        why: String,
    },
    /// A function's result.
    Return {
        func: &'static str,
        cpu: Option<CpuId>,
        why: String,
    },
    /// How the wakee is queued.
    Queue { path: QueuePath, why: String },
}

/// Receives steps. The closure is only called when tracing.
pub trait Tracer {
    const ON: bool;
    /// The decision says which path chose the CPU ([`super::Decision::path`]).
    const PATH: bool = Self::ON;
    /// One step, made at `site`: the line of the kernel listing
    /// ([`code::listing()`](super::code::listing)) that produces it. The emitter names
    /// the site as a [`Site`], so the code view's highlight never depends on a step's
    /// wording.
    fn step(&mut self, site: Site, f: impl FnOnce() -> Step);
}

/// Tracing off: zero cost.
pub struct NoTrace;

/// No steps, but the decision's path: what the simulator's event recorder decides with.
pub struct PathOnly;

impl Tracer for PathOnly {
    const ON: bool = false;
    const PATH: bool = true;
    #[inline(always)]
    fn step(&mut self, _site: Site, _f: impl FnOnce() -> Step) {}
}

impl Tracer for NoTrace {
    const ON: bool = false;
    #[inline(always)]
    fn step(&mut self, _site: Site, _f: impl FnOnce() -> Step) {}
}

/// Tracing on: the steps in order, and the listing line each comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Trace {
    pub steps: Vec<Step>,
    /// `sites[i]` is the site of `steps[i]` (private, so the two stay in step).
    #[serde(skip)]
    sites: Vec<Site>,
}

impl Tracer for Trace {
    const ON: bool = true;
    fn step(&mut self, site: Site, f: impl FnOnce() -> Step) {
        self.steps.push(f());
        self.sites.push(site);
    }
}

fn cpu_str(c: Option<CpuId>) -> String {
    c.map_or("-1".to_string(), |c| format!("CPU{}", c.0))
}

impl Trace {
    /// The site of each step, in step order (see [`Tracer::step`]).
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    /// Renders the trace and the decision as indented text.
    pub fn render(&self, d: &Decision) -> String {
        let mut out = String::new();
        // Functions entered and not yet returned from, to indent by call depth.
        let mut stack: Vec<&'static str> = Vec::new();
        for s in &self.steps {
            let depth = stack.len();
            let pad = "  ".repeat(depth);
            match s {
                Step::Enter { func, detail } => {
                    let _ = writeln!(out, "{pad}{func}({detail})");
                    stack.push(func);
                }
                Step::Check {
                    condition, outcome, ..
                } => {
                    let _ = writeln!(
                        out,
                        "{pad}{condition}: {}",
                        if *outcome { "yes" } else { "no" }
                    );
                }
                Step::Probe {
                    func: _,
                    cpu,
                    reject,
                } => match reject {
                    None => {
                        let _ = writeln!(out, "{pad}probe CPU{}: idle, taken", cpu.0);
                    }
                    Some(r) => {
                        let _ = writeln!(out, "{pad}probe CPU{}: {}", cpu.0, r.as_str());
                    }
                },
                Step::Budget { func: _, nr, why } => {
                    let _ = writeln!(out, "{pad}scan budget nr = {nr} ({why})");
                }
                Step::Return { func, cpu, why } => {
                    if stack.last() == Some(func) {
                        stack.pop();
                    }
                    let pad = "  ".repeat(stack.len());
                    let _ = writeln!(out, "{pad}{func} returns {} ({why})", cpu_str(*cpu));
                }
                Step::Queue { path, why } => {
                    let p = match path {
                        QueuePath::Local => "local enqueue".to_string(),
                        QueuePath::Wakelist { ipi: true } => "wakelist + IPI".to_string(),
                        // No IPI: the idle task polls, or the list was not empty
                        // (the reason follows).
                        QueuePath::Wakelist { ipi: false } => "wakelist, no IPI".to_string(),
                        QueuePath::RemoteLock => "remote rq lock".to_string(),
                    };
                    let _ = writeln!(out, "{pad}ttwu_queue: {p} ({why})");
                }
            }
        }
        let _ = writeln!(
            out,
            "=> CPU{} | {} fast-path checks, probed {} CPUs, {} remote rq reads, {} sd_llc_shared reads",
            d.cpu.0,
            d.costs.fast_path_checks,
            d.costs.cpus_probed,
            d.costs.remote_rq_reads,
            d.costs.llc_shared_reads
        );
        out
    }
}
