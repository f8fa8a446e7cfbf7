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
//!
//! Each workload is also a process tree, started as the real benchmark starts
//! (`tree.rs`): the tasks without a [`TaskSpec::parent`] run when the run starts (a
//! daemon such as `tbench_srv` or `netserver`, the benchmark's launcher), and every
//! other task is created when its parent runs [`Op::Fork`], placed then by the
//! kernel's fork balancing. [`Noise`] adds the machine's own background activity.

mod dist;
mod noise;
mod programs;
mod tree;

use serde::{Deserialize, Serialize};

use crate::cost::CostParams;
use crate::cpumask::CpuMask;
pub use dist::Dist;
pub use noise::{is_per_cpu_kthread, Noise};
pub use programs::{build, task_count, TASK_FOOTPRINT_BYTES};
#[cfg(test)]
pub(crate) use tree::DBENCH_BARRIER_POLL_NS;

/// The most tasks a workload may have (the largest preset workloads have a few
/// thousand). The simulator sizes its event queue bound from it.
pub const MAX_TASKS: usize = 100_000;

/// The most passes a `Repeat` op may make (a task counts them in 32 bits). Far above
/// what a run's 4-hour cap lets a loop do: every loop holds a run, wait or sleep.
pub const MAX_REPEAT: u32 = u32::MAX;

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
    /// Create the own next child (`fork()` / `clone()`, ending in `wake_up_new_task()`):
    /// the n-th `Fork` a task runs starts the n-th task whose [`TaskSpec::parent`] it
    /// is, in task order. The call's own CPU time is a `Run` the program puts before it.
    Fork,
    /// Put one message in each own child's mailbox, never blocking: a write to a pipe
    /// every child polls, which `__wake_up()` answers by waking all of them
    /// (hackbench's start barrier, its `wakefd`).
    SendChildren,
    /// The benchmark reads its start time: a completion workload's time and metrics
    /// count from here (hackbench's `gettimeofday()` once every worker is ready); a
    /// throughput workload's warm-up starts here and its measured window follows it
    /// (dbench's `tv_start`, read as it releases its clients). The first one run counts.
    StartClock,
    /// Wait at the own parent's start barrier: dbench 4.0's `semop()` wait-for-zero on
    /// the SysV semaphore its parent holds at 1. Blocks until the parent's
    /// [`Op::ReleaseBarrier`]; goes on at once if that has already run.
    WaitBarrier,
    /// Poll the own barrier (`semctl(GETZCNT)`): go on when every own child waits at
    /// it; else sleep a sampled time (dbench's `usleep()`, an hrtimer) and poll again.
    PollBarrier(Dist),
    /// Release the own barrier (`semop()` of −1: the semaphore reaches 0): every child
    /// waiting at it wakes, in the order they began waiting, without `WF_SYNC`
    /// (ipc/sem.c `wake_const_ops()` → `wake_up_q()` → `wake_up_process()`).
    ReleaseBarrier,
    Exit,
}

/// A pipe's ring of pages (fs/pipe.c, alike in v5.12-v6.12 here), in the workload's
/// messages, all of one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeRing {
    /// `pipe->max_usage`, the pages the ring holds: `PIPE_DEF_BUFFERS`, 16
    /// (include/linux/pipe_fs_i.h v6.5 line 5, fs/pipe.c v6.5 lines 787, 816).
    pub slots: u32,
    /// Messages a page takes: pipe_write() merges a write into the head page while
    /// `offset + chars <= PAGE_SIZE` (fs/pipe.c v6.5 lines 457-464), so PAGE_SIZE /
    /// the message size, at least 1 (a message of more than a page is taken as one
    /// page: the model's send is not split).
    pub msgs_per_page: u32,
}

/// A task to create.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    pub role: &'static str,
    pub program: Vec<Op>,
    /// Core-scheduling cookie (0 = none).
    pub cookie: u64,
    /// Messages the mailbox holds before senders block (a pipe counts pages instead,
    /// [`TaskSpec::pipe`]).
    pub mailbox_cap: u32,
    /// Wake-ups this task's sends cause happen in task context (pipes, unix sockets)
    /// rather than softirq (loopback TCP/UDP receive).
    pub wakes_in_task: bool,
    /// Separate address space (hackbench process mode): context switches to it pay
    /// the mm switch.
    pub own_mm: bool,
    /// Own affinity, narrower than the run's (lat_pipe pinning); `None` = the run's.
    pub allowed: Option<CpuMask>,
    /// The task waits on a futex (schbench's workers): a send to a full mailbox is
    /// dropped instead of blocking the sender (a FUTEX_WAKE of a task that is not
    /// waiting wakes nothing), and a send that wakes it is futex_wake()'s wake-up,
    /// through `wake_up_q()`, without `WF_SYNC`.
    pub drop_when_full: bool,
    /// The mailbox is a pipe ([`PipeRing`]): its capacity is counted in pages, not
    /// in `mailbox_cap` messages, and its senders wait exclusively
    /// (`wait_event_interruptible_exclusive(pipe->wr_wait, ..)` in pipe_write(),
    /// fs/pipe.c v6.5 line 573): a read of the full pipe wakes the first of them, not
    /// all (`__wake_up_sync_key()` with `nr_exclusive` 1, kernel/sched/wait.c v6.5
    /// lines 80-121, 202-208), and a woken writer that leaves room passes the wake-up
    /// on (`wake_next_writer`, fs/pipe.c v6.5 lines 576-599). `None`: every blocked
    /// sender is woken (a unix socket's `sock_wait_for_wmem()` waits non-exclusively,
    /// net/core/sock.c v6.5 line 2745).
    pub pipe: Option<PipeRing>,
    /// The data the task touches each time it runs, bytes: what other tasks on its
    /// CPU displace and it refills (`cost::CacheShare`).
    pub footprint_bytes: u64,
    /// The task that creates this one with [`Op::Fork`]; `None`: already running when
    /// the run starts (a daemon, the benchmark's launcher).
    pub parent: Option<u32>,
    /// Background activity ([`Noise`]), not part of the workload: it never exits, is
    /// not waited for by a completion workload, and stays out of the wake-up metrics.
    pub background: bool,
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
    /// A throughput metric's value for `units` counted over `window_ns`; `None` for the
    /// other kinds.
    pub fn throughput(self, units: u64, window_ns: u64) -> Option<f64> {
        match self {
            MetricKind::Throughput { scale, divisor, .. } => Some(
                units as f64 * scale as f64 * 1e9 / window_ns.max(1) as f64 / divisor.max(1) as f64,
            ),
            _ => None,
        }
    }

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

/// Every workload parameter's default: what `schedlab run` uses for a flag left out,
/// and what the page starts a workload with. The CLI's flags take their defaults from
/// here, so the two cannot drift apart.
pub mod defaults {
    /// The scale of tbench, netperf and custom (clients, instances, pairs).
    pub const PAIRS: u32 = 1;
    /// hackbench -g.
    pub const HACKBENCH_GROUPS: u32 = 10;
    /// hackbench -f.
    pub const HACKBENCH_FDS: u32 = 20;
    /// hackbench -l.
    pub const HACKBENCH_LOOPS: u64 = 100;
    /// hackbench -s.
    pub const HACKBENCH_MSG_BYTES: u32 = 100;
    /// Seed 04's test: threads, iterations, work and sleep per iteration.
    pub const COOKIE_THREADS: u32 = 10;
    pub const COOKIE_ITERATIONS: u64 = 1200;
    pub const COOKIE_WORK: &str = "uniform:0-10ms";
    pub const COOKIE_SLEEP: &str = "uniform:0-30ms";
    /// schbench -m, the workers per message thread, -c and -s.
    pub const SCHBENCH_MESSAGE_THREADS: u32 = 2;
    pub const SCHBENCH_WORKERS: u32 = 4;
    pub const SCHBENCH_CPUTIME: &str = "fixed:10ms";
    pub const SCHBENCH_SLEEP: &str = "fixed:30ms";
    /// custom: work per request on each side; no sleep.
    pub const CUSTOM_WORK: &str = "fixed:5us";
    /// lat-pipe: the two CPUs, as `--pin` takes them.
    pub const LAT_PIPE_PIN: &str = "0,1";
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

    /// What the workload's scale (`threads()`, the CLI's `--threads`) counts, as the
    /// benchmark calls it: a sweep's first column, the page's scale field.
    pub fn scale_name(&self) -> &'static str {
        match self {
            Workload::Tbench { .. } => "clients",
            Workload::NetperfTcpRr { .. } | Workload::NetperfUdpRr { .. } => "instances",
            Workload::Hackbench { .. } => "groups",
            Workload::CookiePairs { .. } => "threads",
            Workload::Schbench { .. } => "workers",
            Workload::Custom { .. } => "pairs",
            Workload::LatPipe { .. } => "pair",
        }
    }

    /// The workload called `name` (one of [`Workload::NAMES`]) with every parameter
    /// at its default ([`defaults`]).
    pub fn with_defaults(name: &str) -> Option<Workload> {
        use defaults::*;
        let dist = |t: &str| Dist::parse(t).expect("the defaults parse");
        Some(match name {
            "tbench" => Workload::Tbench { clients: PAIRS },
            "netperf-tcp-rr" => Workload::NetperfTcpRr { instances: PAIRS },
            "netperf-udp-rr" => Workload::NetperfUdpRr { instances: PAIRS },
            "hackbench" => Workload::Hackbench {
                groups: HACKBENCH_GROUPS,
                fds: HACKBENCH_FDS,
                loops: HACKBENCH_LOOPS,
                pipe: false,
                threads: false,
                msg_bytes: HACKBENCH_MSG_BYTES,
            },
            "cookie-pairs" => Workload::CookiePairs {
                threads: COOKIE_THREADS,
                iterations: COOKIE_ITERATIONS,
                work: dist(COOKIE_WORK),
                sleep: dist(COOKIE_SLEEP),
                cookies: true,
            },
            "schbench" => Workload::Schbench {
                message_threads: SCHBENCH_MESSAGE_THREADS,
                workers: SCHBENCH_WORKERS,
                cputime: dist(SCHBENCH_CPUTIME),
                sleep: dist(SCHBENCH_SLEEP),
            },
            "custom" => Workload::Custom {
                pairs: PAIRS,
                client_work: dist(CUSTOM_WORK),
                server_work: dist(CUSTOM_WORK),
                sleep: Dist::fixed(0),
            },
            "lat-pipe" => {
                let (a, b) = LAT_PIPE_PIN.split_once(',').expect("two CPUs");
                Workload::LatPipe {
                    cpu_a: a.parse().expect("a CPU"),
                    cpu_b: b.parse().expect("a CPU"),
                }
            }
            _ => return None,
        })
    }

    /// The `schedlab run` flags that give this workload: `--workload`, its scale as
    /// `--threads`, and each parameter that is not at its default ([`defaults`]).
    pub fn cli_args(&self) -> Vec<String> {
        use defaults::*;
        let mut a = vec!["--workload".to_string(), self.name().to_string()];
        if let Workload::LatPipe { cpu_a, cpu_b } = self {
            let pin = format!("{cpu_a},{cpu_b}");
            if pin != LAT_PIPE_PIN {
                a.extend(["--pin".to_string(), pin]);
            }
            return a;
        }
        a.extend(["--threads".to_string(), self.threads().to_string()]);
        // `--name value` where the value is not the default; `--name` for a switch on.
        let mut flag = |name: &str, value: String, default: String| {
            if value != default {
                a.extend([format!("--{name}"), value]);
            }
        };
        let dist = |text: &str| Dist::parse(text).expect("the defaults parse").to_string();
        match self {
            Workload::Hackbench {
                fds,
                loops,
                pipe,
                threads,
                msg_bytes,
                ..
            } => {
                flag("fds", fds.to_string(), HACKBENCH_FDS.to_string());
                flag("loops", loops.to_string(), HACKBENCH_LOOPS.to_string());
                flag(
                    "msg-bytes",
                    msg_bytes.to_string(),
                    HACKBENCH_MSG_BYTES.to_string(),
                );
                a.extend(pipe.then(|| "--pipe".to_string()));
                a.extend(threads.then(|| "--thread-mode".to_string()));
            }
            Workload::CookiePairs {
                iterations,
                work,
                sleep,
                cookies,
                ..
            } => {
                flag(
                    "iterations",
                    iterations.to_string(),
                    COOKIE_ITERATIONS.to_string(),
                );
                flag("work", work.to_string(), dist(COOKIE_WORK));
                flag("sleep", sleep.to_string(), dist(COOKIE_SLEEP));
                a.extend((!cookies).then(|| "--no-cookies".to_string()));
            }
            Workload::Schbench {
                message_threads,
                cputime,
                sleep,
                ..
            } => {
                flag(
                    "message-threads",
                    message_threads.to_string(),
                    SCHBENCH_MESSAGE_THREADS.to_string(),
                );
                flag("cputime", cputime.to_string(), dist(SCHBENCH_CPUTIME));
                flag("msg-sleep", sleep.to_string(), dist(SCHBENCH_SLEEP));
            }
            Workload::Custom {
                client_work,
                server_work,
                sleep,
                ..
            } => {
                flag("client-work", client_work.to_string(), dist(CUSTOM_WORK));
                flag("server-work", server_work.to_string(), dist(CUSTOM_WORK));
                flag("sleep", sleep.to_string(), Dist::fixed(0).to_string());
            }
            Workload::Tbench { .. }
            | Workload::NetperfTcpRr { .. }
            | Workload::NetperfUdpRr { .. }
            | Workload::LatPipe { .. } => {}
        }
        a
    }

    /// Runs until every task exits and reports the time that took (hackbench,
    /// cookie-pairs), rather than for a set duration.
    pub fn runs_to_completion(&self) -> bool {
        matches!(
            self,
            Workload::Hackbench { .. } | Workload::CookiePairs { .. }
        )
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
