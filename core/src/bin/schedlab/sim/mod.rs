//! `schedlab run` and `schedlab sweep`: the simulator from the command line.
//!
//! ```text
//! schedlab run --machine kunpeng920-6426 --cpus node0 --workload tbench --threads 8 --patches 6.6+cluster
//! schedlab sweep --machine kunpeng920-6426 --cpus node0 --workload tbench \
//!     --threads 1,4,8,16,32,64,128 --baseline 6.6 --patched 6.6+cluster --format table
//! ```
//!
//! Sweep points and seeds run in parallel on all cores (rayon), most threads first;
//! each is one single-threaded deterministic simulation, and core combines them in
//! seed order, so the output does not depend on the number of cores or the order.
//! Wall time is measured here, never in core.
//!
//! `--seeds N` runs seeds `--seed`, `--seed + 1`, … and reports the mean and a 95%
//! Student-t interval (`experiment::ab_stats`). `sweep` defaults to 5 seeds: its
//! headline is a change, and a change from one seed can be noise; at 5 seeds t(4) =
//! 2.78, where with 3 it is 4.30 (the interval's width falls fastest up to about 5
//! seeds), for 5× the simulation spread over the cores. `run` defaults to 1: it is the
//! one-run inspector (every metric, the digest the page and tests compare, the speed
//! reference run); `--seeds N` adds the mean and interval of its number.
//!
//! This file holds the flags both commands share (`Common`) and what they make of
//! them (the workload, the `RunSpec`, the parallel runs); `run.rs` is `schedlab run`
//! (its text report, `--trace`, `--capture-wake`), `sweep.rs` is `schedlab sweep`.

use clap::{Args, ValueEnum};

use schedlab_core::experiment::{self, RunReport, RunSpec, Warmup, MAX_SEEDS};
use schedlab_core::patch::PatchSet;
use schedlab_core::sim::SimError;
use schedlab_core::workload::defaults::{self, PAIRS};
use schedlab_core::workload::{Dist, Noise, Workload};

mod run;
mod sweep;

pub use run::{run, RunArgs};
pub use sweep::{sweep, SweepArgs};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum WorkloadName {
    Tbench,
    NetperfTcpRr,
    NetperfUdpRr,
    Hackbench,
    CookiePairs,
    Schbench,
    Custom,
    LatPipe,
}

/// Workload and machine flags shared by `run` and `sweep`.
#[derive(Args, Debug)]
pub struct Common {
    /// A preset name (see `schedlab machines`) or a machine file (at most 4 MiB; `-`
    /// reads standard input).
    #[arg(long, short)]
    machine: String,
    #[command(flatten)]
    machine_opts: crate::machine::MachineOpts,
    /// CPUs the workload may use: a kernel CPU list (0-31,64), nodeN or nodeA-B
    /// (numactl -C / -N). Default: every CPU.
    #[arg(long)]
    cpus: Option<String>,
    #[arg(long, short, value_enum)]
    workload: WorkloadName,
    /// Throughput workloads: simulated milliseconds measured (after the warm-up,
    /// --warmup). Completion-time workloads: the cap (default 600 s).
    #[arg(long)]
    duration_ms: Option<u64>,
    /// Throughput workloads' warm-up, counted from the benchmark's start: fifth (a
    /// fifth of --duration-ms, at most 200 ms) or settled (at least until every LLC
    /// has had a periodic balance at its busy interval since the start, 0.26-1 s on
    /// the presets: the SIS_UTIL scan depth is then the running benchmark's; what
    /// `reproduce --scale full` uses; docs/fidelity-history.md, "Session 14").
    #[arg(long, default_value = "fifth", value_parser = Warmup::parse)]
    warmup: Warmup,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The machine's background activity besides the workload: quiet (none) or
    /// default (a kthread per CPU, unbound daemons, the tick's interrupt and softirq
    /// time, at the rates of the kernel's osnoise documentation; docs/calibration.md).
    #[arg(long, default_value = "default", value_parser = Noise::parse)]
    noise: Noise,
    /// hackbench -g (sweeps vary it through --threads).
    #[arg(long, default_value_t = defaults::HACKBENCH_GROUPS)]
    groups: u32,
    /// hackbench -f: senders and receivers per group.
    #[arg(long, default_value_t = defaults::HACKBENCH_FDS)]
    fds: u32,
    /// hackbench -l: messages each sender sends to each receiver.
    #[arg(long, default_value_t = defaults::HACKBENCH_LOOPS)]
    loops: u64,
    /// hackbench -p: pipes instead of unix sockets.
    #[arg(long)]
    pipe: bool,
    /// hackbench -T: threads instead of processes.
    #[arg(long)]
    thread_mode: bool,
    /// hackbench -s: message size in bytes.
    #[arg(long, default_value_t = defaults::HACKBENCH_MSG_BYTES)]
    msg_bytes: u32,
    /// cookie-pairs: iterations per thread.
    #[arg(long, default_value_t = defaults::COOKIE_ITERATIONS)]
    iterations: u64,
    /// cookie-pairs: work per iteration (fixed:N, uniform:A-B, exp:MEAN; ns/us/ms/s; each
    /// value at most 14400 s).
    #[arg(long, default_value = defaults::COOKIE_WORK)]
    work: String,
    /// cookie-pairs / custom: sleep per iteration.
    #[arg(long, default_value = defaults::COOKIE_SLEEP)]
    sleep: String,
    /// cookie-pairs: run without cookies (seed 04's first configuration).
    #[arg(long)]
    no_cookies: bool,
    /// schbench -m: message threads.
    #[arg(long, default_value_t = defaults::SCHBENCH_MESSAGE_THREADS)]
    message_threads: u32,
    /// schbench -c: worker CPU time per request.
    #[arg(long, default_value = defaults::SCHBENCH_CPUTIME)]
    cputime: String,
    /// schbench -s: message thread sleep between rounds.
    #[arg(long, default_value = defaults::SCHBENCH_SLEEP)]
    msg_sleep: String,
    /// custom: client work per request.
    #[arg(long, default_value = defaults::CUSTOM_WORK)]
    client_work: String,
    /// custom: server work per request.
    #[arg(long, default_value = defaults::CUSTOM_WORK)]
    server_work: String,
    /// lat-pipe: the two CPUs (e.g. 0,4).
    #[arg(long, default_value = defaults::LAT_PIPE_PIN)]
    pin: String,
}

/// `--seeds`: 1 to [`MAX_SEEDS`].
fn seeds_flag(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_SEEDS).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?}: give a count of seeds from 1 to {MAX_SEEDS}"
        )),
    }
}

fn dist(flag: &str, text: &str) -> Result<Dist, String> {
    Dist::parse(text).map_err(|e| format!("--{flag}: {e}"))
}

fn workload(c: &Common, threads: Option<u32>) -> Result<Workload, String> {
    let n = |d: u32| threads.unwrap_or(d);
    Ok(match c.workload {
        WorkloadName::Tbench => Workload::Tbench { clients: n(PAIRS) },
        WorkloadName::NetperfTcpRr => Workload::NetperfTcpRr {
            instances: n(PAIRS),
        },
        WorkloadName::NetperfUdpRr => Workload::NetperfUdpRr {
            instances: n(PAIRS),
        },
        WorkloadName::Hackbench => Workload::Hackbench {
            groups: n(c.groups),
            fds: c.fds,
            loops: c.loops,
            pipe: c.pipe,
            threads: c.thread_mode,
            msg_bytes: c.msg_bytes,
        },
        WorkloadName::CookiePairs => Workload::CookiePairs {
            threads: n(defaults::COOKIE_THREADS),
            iterations: c.iterations,
            work: dist("work", &c.work)?,
            sleep: dist("sleep", &c.sleep)?,
            cookies: !c.no_cookies,
        },
        WorkloadName::Schbench => Workload::Schbench {
            message_threads: c.message_threads,
            workers: n(defaults::SCHBENCH_WORKERS),
            cputime: dist("cputime", &c.cputime)?,
            sleep: dist("msg-sleep", &c.msg_sleep)?,
        },
        WorkloadName::Custom => Workload::Custom {
            pairs: n(PAIRS),
            client_work: dist("client-work", &c.client_work)?,
            server_work: dist("server-work", &c.server_work)?,
            sleep: if c.sleep == defaults::COOKIE_SLEEP {
                Dist::fixed(0)
            } else {
                dist("sleep", &c.sleep)?
            },
        },
        WorkloadName::LatPipe => {
            let (a, b) = c
                .pin
                .split_once(',')
                .ok_or("--pin: write two CPUs, e.g. 0,4")?;
            let p = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("--pin: {s:?} is not a CPU"))
            };
            Workload::LatPipe {
                cpu_a: p(a)?,
                cpu_b: p(b)?,
            }
        }
    })
}

fn spec(c: &Common, threads: Option<u32>, patches: PatchSet) -> Result<RunSpec, String> {
    let machine = crate::machine::load_machine(&c.machine, &c.machine_opts)?;
    let workload = workload(c, threads)?;
    let duration_ms = c.duration_ms.unwrap_or(if workload.runs_to_completion() {
        600_000
    } else {
        1_000
    });
    let spec = RunSpec::new(
        machine,
        c.cpus.as_deref(),
        patches,
        workload,
        duration_ms,
        c.seed,
    )
    .map_err(|e| format!("{}: {e}", e.flag()))?;
    Ok(RunSpec {
        noise: c.noise,
        warmup: c.warmup,
        ..spec
    })
}

/// A simulation error as the command line reports it: with the flag that fixes it.
fn sim_error(e: SimError) -> String {
    match e {
        SimError::DidNotFinish { .. } => format!("{e}; raise --duration-ms"),
        e => e.to_string(),
    }
}

/// `--cost-off`: every cost term but the named ones.
pub fn cost_terms(off: &str) -> Result<schedlab_core::cost::CostTerms, String> {
    schedlab_core::cost::CostTerms::all_but(off).map_err(|e| format!("--cost-off: {e}"))
}

/// What a report's headline number is, after the number: its unit, and which way is
/// better (`s to completion, lower is better`; `MB/s, higher is better`).
fn headline_meaning(r: &RunReport) -> String {
    let unit = if r.unit == "s" {
        "s to completion"
    } else {
        r.unit.as_str()
    };
    let better = if r.higher_is_better {
        "higher"
    } else {
        "lower"
    };
    format!("{unit}, {better} is better")
}

/// A headline number at a precision that tells runs apart: a completion time in
/// seconds to the microsecond (hackbench's own 3 decimals round a 6 ms run to 0.006),
/// anything else to 3 decimals.
/// A line saying that part of the measured window (the most any of `reports` had)
/// ran before every LLC's first busy balance round, where SIS_UTIL's scan depth is
/// still the idle machine's: a measurement of the benchmark's start-up. `None` when
/// every report's window is past it (`--warmup settled`, or a long enough warm-up).
fn unsettled_note(reports: &[RunReport]) -> Option<String> {
    let ns = reports
        .iter()
        .map(|r| r.unsettled_ns)
        .max()
        .filter(|&n| n > 0)?;
    Some(format!(
        "note: the first {:.0} ms of the measured window ran before every LLC's first busy \
         balance round, with SIS_UTIL's scan depth still the idle machine's (the benchmark's \
         start-up); --warmup settled measures past it\n",
        ns as f64 / 1e6
    ))
}

fn headline_value(r: &RunReport, v: f64) -> String {
    if r.unit == "s" {
        format!("{v:.6}")
    } else {
        format!("{v:.3}")
    }
}

fn patchset(flag: &str, s: &str) -> Result<PatchSet, String> {
    s.parse().map_err(|e| format!("--{flag}: {e}"))
}

/// The runs of `specs` on every core; reports in `specs`' order.
fn run_all(specs: &[RunSpec]) -> Result<Vec<RunReport>, String> {
    crate::par::map_longest_first(
        specs,
        |s| {
            s.duration_ms
                .saturating_mul(u64::from(s.workload.threads()))
        },
        experiment::run,
    )
    .into_iter()
    .collect::<Result<Vec<_>, _>>()
    .map_err(sim_error)
}

impl Common {
    fn workload_name(&self) -> &'static str {
        match self.workload {
            WorkloadName::Tbench => "tbench",
            WorkloadName::NetperfTcpRr => "netperf-tcp-rr",
            WorkloadName::NetperfUdpRr => "netperf-udp-rr",
            WorkloadName::Hackbench => "hackbench",
            WorkloadName::CookiePairs => "cookie-pairs",
            WorkloadName::Schbench => "schbench",
            WorkloadName::Custom => "custom",
            WorkloadName::LatPipe => "lat-pipe",
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        common: Common,
    }

    /// The page starts each workload with `Workload::with_defaults()`; the CLI without
    /// flags must run the same workload.
    #[test]
    fn flags_left_out_give_the_core_defaults() {
        for name in Workload::NAMES {
            let f = Flags::try_parse_from(["schedlab", "--machine", "flat-16", "--workload", name])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                Some(workload(&f.common, None).unwrap()),
                Workload::with_defaults(name),
                "{name}"
            );
        }
        assert_eq!(Workload::with_defaults("dbench"), None);
    }

    /// The library says what is wrong with a value; the command line adds the flag
    /// that sets it.
    #[test]
    fn errors_name_the_flag_that_fixes_them() {
        let f = Flags::try_parse_from([
            "schedlab",
            "--machine",
            "flat-16",
            "--workload",
            "tbench",
            "--duration-ms",
            "0",
        ])
        .unwrap();
        let e = spec(&f.common, None, "6.6".parse().unwrap()).unwrap_err();
        assert_eq!(
            e,
            "--duration-ms: a run lasts at least 1 ms of simulated time"
        );
        assert_eq!(
            sim_error(SimError::DidNotFinish { cap_ms: 5 }),
            "the workload did not finish within its cap of 5 ms of simulated time; raise \
             --duration-ms"
        );
    }

    /// The page prints the command line that reruns its simulation natively: the CLI
    /// must read `cli_args()` back into the same workload, defaults or not.
    #[test]
    fn cli_args_read_back_into_the_same_workload() {
        let d = |t: &str| Dist::parse(t).unwrap();
        let odd = [
            Workload::Tbench { clients: 7 },
            Workload::NetperfUdpRr { instances: 3 },
            Workload::Hackbench {
                groups: 2,
                fds: 5,
                loops: 9,
                pipe: true,
                threads: true,
                msg_bytes: 64,
            },
            Workload::CookiePairs {
                threads: 6,
                iterations: 30,
                work: d("exp:2ms"),
                sleep: d("fixed:1ms"),
                cookies: false,
            },
            Workload::Schbench {
                message_threads: 3,
                workers: 5,
                cputime: d("uniform:1ms-2ms"),
                sleep: d("exp:5ms"),
            },
            Workload::Custom {
                pairs: 2,
                client_work: d("3us"),
                server_work: d("uniform:1us-9us"),
                sleep: d("uniform:0-30ms"),
            },
            Workload::LatPipe { cpu_a: 2, cpu_b: 9 },
        ];
        let defaults = Workload::NAMES.map(|n| Workload::with_defaults(n).unwrap());
        for w in odd.iter().chain(&defaults) {
            let mut argv = vec!["schedlab".to_string(), "--machine".into(), "flat-16".into()];
            let args = w.cli_args();
            let threads = args
                .iter()
                .position(|a| a == "--threads")
                .map(|i| args[i + 1].parse::<u32>().unwrap());
            argv.extend(args.iter().cloned());
            // --threads is run's own flag, not Common's.
            if let Some(i) = argv.iter().position(|a| a == "--threads") {
                argv.drain(i..i + 2);
            }
            let f = Flags::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            assert_eq!(&workload(&f.common, threads).unwrap(), w, "{argv:?}");
        }
    }
}
