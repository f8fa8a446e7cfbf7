//! Workload models: each benchmark becomes a set of tasks running small programs.
//!
//! ```text
//!  netperf TCP_RR pair             hackbench group (20 × 20, pipes)
//!  client: run(send) ─ send ─┐     sender s:   for loops: for r: run(write) ─ send(r)
//!          wait ◀────────────┼─┐   receiver r: for loops×20: wait ─ run(read)
//!          run(recv) count   │ │
//!  server: wait ◀────────────┘ │
//!          run(recv+send) ─ send ─┘
//! ```
//!
//! A program is a list of [`Op`]s: CPU bursts, messages to another task's mailbox
//! (waking it through the wake-up path when it waits), waits on the own mailbox,
//! timed sleeps, counters and loops. Per-message CPU work comes from the machine's
//! [`CostParams`] (`pipe_msg_ns` is calibrated on lmbench `lat_pipe`); what each
//! workload adds is written next to it and in docs/calibration.md.

pub mod programs;

use serde::{Deserialize, Serialize};

use crate::cost::CostParams;
use crate::cpumask::CpuMask;
use crate::sim::rng::Dist;

pub use programs::build;

/// One step of a task's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Run on the CPU for a sampled time.
    Run(Dist),
    /// Put one message in task `to`'s mailbox; block while it is full (a full pipe).
    Send {
        to: u32,
    },
    /// Take one message from the own mailbox, blocking while it is empty.
    Wait,
    /// Sleep for a sampled time (an hrtimer wakes the task).
    Sleep(Dist),
    /// Count completed units (transactions, bytes) for the throughput metric.
    Count(u32),
    /// Jump back to `to` until the op has run `times` times in all, then go on.
    Repeat {
        to: u16,
        times: u64,
    },
    /// Jump back to `to` forever.
    Jump {
        to: u16,
    },
    Exit,
}

/// A task to create.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    pub role: &'static str,
    pub program: Vec<Op>,
    /// Core-scheduling cookie (0 = none).
    pub cookie: u64,
    /// Messages the mailbox holds before senders block.
    pub mailbox_cap: u32,
    /// Wake-ups this task's sends cause happen in task context (pipes, unix sockets)
    /// rather than softirq (loopback TCP/UDP receive).
    pub wakes_in_task: bool,
    /// Separate address space (hackbench process mode): context switches to it pay
    /// the mm switch.
    pub own_mm: bool,
    /// Own affinity, narrower than the run's (lat_pipe pinning); `None` = the run's.
    pub allowed: Option<CpuMask>,
    /// A send to a full mailbox is dropped instead of blocking the sender (a futex
    /// wake of a task that is not waiting).
    pub drop_when_full: bool,
}

/// What a run reports as its headline number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetricKind {
    /// Counted units per second × `scale` / `divisor` (e.g. MB/s, transactions/s per instance).
    Throughput {
        unit: &'static str,
        scale: u64,
        divisor: u64,
    },
    /// Simulated seconds until every task has exited.
    CompletionTime,
    /// 99th percentile of the wake-up latency of the counted tasks, in microseconds.
    WakeLatencyP99,
    /// Mean round trip (time per counted unit per pair), microseconds.
    RoundTripUs { pairs: u64 },
}

impl MetricKind {
    pub fn higher_is_better(self) -> bool {
        matches!(self, MetricKind::Throughput { .. })
    }

    pub fn unit(self) -> &'static str {
        match self {
            MetricKind::Throughput { unit, .. } => unit,
            MetricKind::CompletionTime => "s",
            MetricKind::WakeLatencyP99 => "us (p99 wake-up latency)",
            MetricKind::RoundTripUs { .. } => "us (round trip)",
        }
    }
}

/// A workload and its parameters (what the CLI flags set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Workload {
    /// dbench's tbench: `clients` client/server process pairs over loopback TCP.
    Tbench { clients: u32 },
    /// netperf TCP_RR: `instances` request/response pairs over loopback TCP.
    NetperfTcpRr { instances: u32 },
    /// netperf UDP_RR.
    NetperfUdpRr { instances: u32 },
    /// hackbench: `groups` of `fds` senders and `fds` receivers.
    Hackbench {
        groups: u32,
        fds: u32,
        loops: u64,
        pipe: bool,
        threads: bool,
        msg_bytes: u32,
    },
    /// Seed 04's core-scheduling test.
    CookiePairs {
        threads: u32,
        iterations: u64,
        work: Dist,
        sleep: Dist,
        cookies: bool,
    },
    /// schbench: message threads each waking `workers` worker threads.
    Schbench {
        message_threads: u32,
        workers: u32,
        cputime: Dist,
        sleep: Dist,
    },
    /// Request/response pairs with user-set work and sleep.
    Custom {
        pairs: u32,
        client_work: Dist,
        server_work: Dist,
        sleep: Dist,
    },
    /// lmbench lat_pipe: one pair ping-ponging over pipes, each end pinned.
    LatPipe { cpu_a: u32, cpu_b: u32 },
}

impl Workload {
    pub const NAMES: [&'static str; 8] = [
        "tbench",
        "netperf-tcp-rr",
        "netperf-udp-rr",
        "hackbench",
        "cookie-pairs",
        "schbench",
        "custom",
        "lat-pipe",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Workload::Tbench { .. } => "tbench",
            Workload::NetperfTcpRr { .. } => "netperf-tcp-rr",
            Workload::NetperfUdpRr { .. } => "netperf-udp-rr",
            Workload::Hackbench { .. } => "hackbench",
            Workload::CookiePairs { .. } => "cookie-pairs",
            Workload::Schbench { .. } => "schbench",
            Workload::Custom { .. } => "custom",
            Workload::LatPipe { .. } => "lat-pipe",
        }
    }

    /// The same workload with its scale parameter (what a sweep's `--threads` varies) set.
    pub fn with_threads(&self, n: u32) -> Workload {
        let mut w = self.clone();
        match &mut w {
            Workload::Tbench { clients } => *clients = n,
            Workload::NetperfTcpRr { instances } | Workload::NetperfUdpRr { instances } => {
                *instances = n
            }
            Workload::Hackbench { groups, .. } => *groups = n,
            Workload::CookiePairs { threads, .. } => *threads = n,
            Workload::Schbench { workers, .. } => *workers = n,
            Workload::Custom { pairs, .. } => *pairs = n,
            Workload::LatPipe { .. } => {}
        }
        w
    }

    /// The scale parameter [`Workload::with_threads`] sets (1 for lat-pipe).
    pub fn threads(&self) -> u32 {
        match *self {
            Workload::Tbench { clients: n }
            | Workload::NetperfTcpRr { instances: n }
            | Workload::NetperfUdpRr { instances: n }
            | Workload::Hackbench { groups: n, .. }
            | Workload::CookiePairs { threads: n, .. }
            | Workload::Schbench { workers: n, .. }
            | Workload::Custom { pairs: n, .. } => n,
            Workload::LatPipe { .. } => 1,
        }
    }
}

/// A workload expanded for one machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub tasks: Vec<TaskSpec>,
    pub metric: MetricKind,
    /// The run ends when every task has exited (completion-time workloads).
    pub until_exit: bool,
    /// Only these tasks' wake-up latencies feed `WakeLatencyP99` (schbench workers);
    /// empty = all.
    pub latency_tasks: Vec<u32>,
}

impl Plan {
    /// A plan that runs for the whole duration and reports `metric` over all tasks.
    pub fn for_duration(tasks: Vec<TaskSpec>, metric: MetricKind) -> Plan {
        Plan {
            tasks,
            metric,
            until_exit: false,
            latency_tasks: vec![],
        }
    }

    /// A plan that runs until every task has exited and reports the time that took.
    pub fn to_completion(tasks: Vec<TaskSpec>) -> Plan {
        Plan {
            tasks,
            metric: MetricKind::CompletionTime,
            until_exit: true,
            latency_tasks: vec![],
        }
    }
}

/// Work per message derived from the machine's parameters, shared by the programs.
pub(crate) fn tcp_split(p: &CostParams, factor_pct: u64) -> (u64, u64) {
    // Loopback: the sender runs the whole stack including the receive softirq
    // (netif_rx → process_backlog on the same CPU) before waking the reader, who only
    // copies out. Split 70/30 (assumption).
    let one_way = p.tcp_msg_ns * factor_pct / 100;
    (one_way * 7 / 10, one_way * 3 / 10)
}
