//! The machine's own background activity ("OS noise"): a machine is never silent.
//!
//! ```text
//!  per CPU of the run   kthread "kworker/N", bound to N: 2.5 wake-ups/s (exp sleeps),
//!                        run 2-10 us (kworker, ksoftirqd, rcuc, migration: one task)
//!  per 8 CPUs           an unbound task ("daemon"): sleep exp, run 10-100 us, placed by
//!                        the wake-up path (journald, sshd, irqbalance, …)
//!  every tick           the timer interrupt's time on a running CPU (TICK_IRQ_NS)
//!  some ticks           softirq work (timers, RCU) on a running CPU (SOFTIRQ_PER_S)
//! ```
//!
//! The rates come from the per-CPU interference counters in the kernel's osnoise
//! tracer documentation (Documentation/trace/osnoise-tracer.rst, its example of 8
//! CPUs each sampled for 1 s): IRQ 1002-1016 per second (the 1000 Hz tick and a few
//! device interrupts), SIRQ 16-49 (median 24), THREAD 0-41 (median 2.5, mean 11); its
//! tracepoint example shows `local_timer` interrupts of 1845 and 2848 ns and a
//! `migration/8` thread of 3068 ns. The thread counts split into a per-CPU kthread at
//! the median and unbound tasks making up the mean; the durations not in the document
//! are assumptions (docs/calibration.md). The example was taken in a virtual machine,
//! so its hardware-noise column is not used.
//!
//! Simplified: the tasks are nice 0 fair tasks (real kworkers are too; ksoftirqd is
//! only woken under softirq load, rcuc only with RCU_BOOST), the unbound tasks run
//! only on the run's CPUs, and the interrupt and softirq time is taken only from a
//! CPU running a task (an idle CPU's tick is stopped in the model).

use serde::{Deserialize, Serialize};

use super::{Dist, Op, TaskSpec};
use crate::cpumask::{CpuId, CpuMask};

/// The role of the kthread bound to each CPU of the run.
pub const KWORKER: &str = "kworker";

/// Whether `spec` is one of the bound kthreads [`Noise::tasks`] adds: a per-CPU
/// kthread (`kthread_is_per_cpu()`: workqueue.c v6.8 2115 `kthread_set_per_cpu()`
/// for a per-CPU pool's kworker, smpboot.c 190 for ksoftirqd, migration, rcuc).
pub fn is_per_cpu_kthread(spec: &TaskSpec) -> bool {
    spec.background && spec.role == KWORKER
}

/// How much background activity a run has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Noise {
    /// None at all: only the workload's tasks run (the model before noise existed;
    /// an isolated, `nohz_full` machine comes close).
    Quiet,
    /// An idle server distribution's background, at the rates of the osnoise
    /// tracer's documented example (module docs).
    #[default]
    Default,
}

/// Per-CPU kthread wake-ups per second, doubled (the median of osnoise's THREAD
/// counter is 2.5/s, not an integer): the mean sleep is 2e9 / this ns.
pub(crate) const KTHREAD_PER_S_X2: u64 = 5;
/// A per-CPU kthread's run, ns (**assumption** around osnoise's 3068 ns
/// `migration/8` sample: kworker items are short).
pub(crate) const KTHREAD_RUN_NS: (u64, u64) = (2_000, 10_000);
/// Unbound task wake-ups per second per CPU of the run: osnoise's THREAD mean less
/// its median (11 - 2.5, rounded).
pub(crate) const UNBOUND_PER_CPU_S: u64 = 8;
/// CPUs per unbound task (**assumption**: a server's few busy daemons).
pub(crate) const CPUS_PER_UNBOUND: u32 = 8;
/// An unbound task's run, ns (**assumption**: a daemon's short wake-up).
pub(crate) const UNBOUND_RUN_NS: (u64, u64) = (10_000, 100_000);
/// The tick's timer interrupt, ns: the mean of osnoise's two `local_timer` samples.
pub(crate) const TICK_IRQ_NS: u64 = 2_300;
/// Softirqs per second on a CPU: the median of osnoise's SIRQ counter.
pub(crate) const SOFTIRQ_PER_S: u64 = 24;
/// One softirq's work (timer callbacks, `rcu_core()`), ns (**assumption**: the
/// osnoise document gives no softirq duration; `osnoise:softirq_noise` on the
/// machine would settle it).
pub(crate) const SOFTIRQ_NS: u64 = 5_000;

impl Noise {
    pub const NAMES: [&'static str; 2] = ["quiet", "default"];

    pub fn name(self) -> &'static str {
        match self {
            Noise::Quiet => "quiet",
            Noise::Default => "default",
        }
    }

    pub fn parse(text: &str) -> Result<Noise, String> {
        match text {
            "quiet" => Ok(Noise::Quiet),
            "default" => Ok(Noise::Default),
            _ => Err(format!(
                "unknown noise {text:?}; known: {}",
                Noise::NAMES.join(", ")
            )),
        }
    }

    /// The timer interrupt's time taken from a running CPU at each tick, ns.
    pub fn tick_irq_ns(self) -> u64 {
        match self {
            Noise::Quiet => 0,
            Noise::Default => TICK_IRQ_NS,
        }
    }

    /// Softirq work at a tick: (the chance per tick in parts per million at the given
    /// tick period, ns of work).
    pub fn softirq(self, tick_ns: u64) -> (u64, u64) {
        match self {
            Noise::Quiet => (0, 0),
            Noise::Default => ((SOFTIRQ_PER_S * tick_ns / 1_000).min(1_000_000), SOFTIRQ_NS),
        }
    }

    /// The background tasks for a run on `cpus` of a machine of `nr_cpu_ids` CPUs:
    /// one kthread bound to each CPU, then the unbound tasks. Each starts asleep (its
    /// program begins with the sleep).
    pub fn tasks(self, cpus: &CpuMask, nr_cpu_ids: u32) -> Vec<TaskSpec> {
        if self == Noise::Quiet {
            return Vec::new();
        }
        let bg = |role: &'static str, sleep: Dist, run: (u64, u64), own_mm, allowed| TaskSpec {
            role,
            program: vec![
                Op::Sleep(sleep),
                Op::Run(Dist::Uniform {
                    lo: run.0,
                    hi: run.1,
                }),
                Op::Jump { to: 0 },
            ],
            cookie: 0,
            mailbox_cap: 1,
            wakes_in_task: true,
            own_mm,
            allowed,
            drop_when_full: true,
            pipe: None,
            // The same assumed footprint as any task (docs/calibration.md).
            footprint_bytes: super::TASK_FOOTPRINT_BYTES,
            parent: None,
            background: true,
        };
        let kthread_sleep = Dist::Exp {
            mean: 2_000_000_000 / KTHREAD_PER_S_X2,
        };
        let mut v: Vec<TaskSpec> = cpus
            .iter()
            .map(|c: CpuId| {
                bg(
                    KWORKER,
                    kthread_sleep,
                    KTHREAD_RUN_NS,
                    false,
                    Some(CpuMask::of(nr_cpu_ids, c)),
                )
            })
            .collect();
        let n = cpus.weight();
        let unbound = n.div_ceil(CPUS_PER_UNBOUND);
        if unbound > 0 {
            // Each unbound task wakes CPUS_PER_UNBOUND × UNBOUND_PER_CPU_S times a second
            // (the last one for the CPUs left over, the same rate for simplicity).
            let mean = 1_000_000_000 / (UNBOUND_PER_CPU_S * CPUS_PER_UNBOUND as u64);
            for _ in 0..unbound {
                v.push(bg(
                    "daemon",
                    Dist::Exp { mean },
                    UNBOUND_RUN_NS,
                    true,
                    Some(cpus.clone()),
                ));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn quiet_has_nothing_and_default_a_kthread_per_cpu() {
        let cpus = CpuMask::parse_list(16, "0-9").unwrap();
        assert!(Noise::Quiet.tasks(&cpus, 16).is_empty());
        assert_eq!(Noise::Quiet.tick_irq_ns(), 0);
        assert_eq!(Noise::Quiet.softirq(4_000_000), (0, 0));
        let t = Noise::Default.tasks(&cpus, 16);
        // 10 bound kthreads, then 2 unbound tasks (10 CPUs, 8 per task).
        assert_eq!(t.len(), 12);
        for (i, k) in t[..10].iter().enumerate() {
            assert_eq!(k.allowed, Some(CpuMask::of(16, CpuId(i as u32))));
            assert!(k.background && k.parent.is_none());
            assert!(matches!(k.program[0], Op::Sleep(_)));
        }
        assert_eq!(t[10].allowed.as_ref(), Some(&cpus));
        // 24 softirqs a second at HZ=250: 9.6 % of ticks.
        assert_eq!(Noise::Default.softirq(4_000_000), (96_000, SOFTIRQ_NS));
    }

    #[test]
    fn names_round_trip() {
        for n in Noise::NAMES {
            assert_eq!(Noise::parse(n).unwrap().name(), n);
        }
        assert!(Noise::parse("loud").is_err());
        assert_eq!(Noise::default(), Noise::Default);
    }
}
