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

use clap::{Args, ValueEnum};

use schedlab_core::experiment::{self, export, LiveRun, RunReport, RunSpec, SweepSpec, MAX_SEEDS};
use schedlab_core::patch::PatchSet;
use schedlab_core::sim::{RecordConfig, SimError, SimTime};
use schedlab_core::stats::Estimate;
use schedlab_core::workload::defaults::{self, PAIRS};
use schedlab_core::workload::{Dist, Noise, Workload};

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
    machine_opts: crate::MachineOpts,
    /// CPUs the workload may use: a kernel CPU list (0-31,64), nodeN or nodeA-B
    /// (numactl -C / -N). Default: every CPU.
    #[arg(long)]
    cpus: Option<String>,
    #[arg(long, short, value_enum)]
    workload: WorkloadName,
    /// Throughput workloads: simulated milliseconds measured (after a warm-up of a
    /// fifth, at most 200 ms). Completion-time workloads: the cap (default 600 s).
    #[arg(long)]
    duration_ms: Option<u64>,
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

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RunFormat {
    Text,
    Json,
    /// One row per seed with every metric (what the page's results table downloads).
    Csv,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    common: Common,
    /// Clients / instances / threads / workers (the workload's scale); for hackbench,
    /// the groups.
    #[arg(long, short)]
    threads: Option<u32>,
    /// RELEASE[+PATCH...][-PATCH...], e.g. 6.6+cluster.
    #[arg(long, short, default_value = "6.8")]
    patches: String,
    /// Seeds to run (--seed, --seed + 1, …, in parallel): more than 1 adds the mean and
    /// its 95% interval, and each seed's number and digest.
    #[arg(long, default_value_t = 1, value_parser = seeds_flag)]
    seeds: u32,
    #[arg(long, short, value_enum, default_value = "text")]
    format: RunFormat,
    /// Cost terms to switch off, comma-separated, to measure what each contributes:
    /// llc-line, rq-lock, cache-refill (docs/fidelity.md)
    #[arg(long, default_value = "")]
    cost_off: String,
    /// Write the run's events as a Chrome/Perfetto trace (JSON; open it in
    /// ui.perfetto.dev or chrome://tracing): a track per CPU grouped by LLC, task runs,
    /// idle with its C-state, wake-ups as flows from the waker's CPU. At most
    /// --trace-cap records are kept (a warning says when the cap cut the trace).
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Only the events at START <= t < END simulated milliseconds (warm-up included),
    /// e.g. 250..260.
    #[arg(long, value_name = "START..END", value_parser = trace_window)]
    trace_window: Option<(u64, u64)>,
    /// The most events --trace keeps (about 130 bytes of JSON each).
    #[arg(long, default_value_t = TRACE_CAP, value_parser = trace_cap)]
    trace_cap: usize,
    /// Write the wake-up path's state at the N-th wake-up of the run (from 1, every
    /// wake-up counted, background tasks' too) as a `schedlab wake --state` file:
    /// replaying it gives the decision the simulation made.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    capture_wake: Option<u32>,
    /// Where --capture-wake writes (default wake-N.json).
    #[arg(long, value_name = "FILE", requires = "capture_wake")]
    capture_file: Option<String>,
}

/// `--trace-cap`'s default: 500 000 records, about 65 MB of JSON.
const TRACE_CAP: usize = 500_000;

/// `--trace-cap`: 1 to `sim::record::MAX_RECORD_CAP`.
fn trace_cap(text: &str) -> Result<usize, String> {
    let max = schedlab_core::sim::record::MAX_RECORD_CAP;
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("{text:?}: give a count of events from 1 to {max}")),
    }
}

/// `--trace-window START..END` in ms.
fn trace_window(text: &str) -> Result<(u64, u64), String> {
    let err = || format!("{text:?}: write START..END in simulated milliseconds, e.g. 250..260");
    let (a, b) = text.split_once("..").ok_or_else(err)?;
    let a: u64 = a.trim().parse().map_err(|_| err())?;
    let b: u64 = b.trim().parse().map_err(|_| err())?;
    if a >= b {
        return Err(format!("{text:?}: START must be below END"));
    }
    if b > 3_600_000 {
        return Err(format!(
            "{text:?}: END is past any run (at most 3 600 000 ms)"
        ));
    }
    Ok((a, b))
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

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SweepFormat {
    Table,
    Csv,
    Json,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    #[command(flatten)]
    common: Common,
    /// Comma-separated scale values (for hackbench: groups).
    #[arg(long, short, default_value = "1,4,8,16,32,64,128")]
    threads: String,
    #[arg(long)]
    baseline: String,
    #[arg(long)]
    patched: String,
    /// Seeds per point and side (--seed, --seed + 1, …): the change is the mean of the
    /// per-seed changes with its 95% interval. 1 gives the single-seed sweep.
    #[arg(long, default_value_t = 5, value_parser = seeds_flag)]
    seeds: u32,
    #[arg(long, short, value_enum, default_value = "table")]
    format: SweepFormat,
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
    let machine = crate::load_machine(&c.machine, &c.machine_opts)?;
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

pub fn run(a: RunArgs) -> Result<String, String> {
    let mut s = spec(&a.common, a.threads, patchset("patches", &a.patches)?)?;
    s.cost_terms = cost_terms(&a.cost_off)?;
    let recording = a.trace.is_some() || a.capture_wake.is_some();
    if recording && a.seeds > 1 {
        return Err("--trace and --capture-wake record one run: drop --seeds".into());
    }
    let t0 = crate::wall_clock();
    let specs: Vec<RunSpec> = experiment::seeds(s.seed, a.seeds)
        .map(|k| s.with_seed(k))
        .collect();
    let reports = if recording {
        vec![run_recorded(&a, &specs[0])?]
    } else {
        run_all(&specs)?
    };
    let wall = t0.elapsed();
    let r = &reports[0];
    let values: Vec<f64> = reports.iter().map(|r| r.value).collect();
    let over = Estimate::of(&values).filter(|_| reports.len() > 1);
    Ok(match a.format {
        RunFormat::Json => {
            export::run_json(&reports, wall.as_secs_f64()).map_err(|e| e.to_string())?
        }
        RunFormat::Csv => export::run_csv(&reports),
        RunFormat::Text => {
            let mut o = text_report(r, wall.as_secs_f64() / reports.len() as f64);
            if let Some(e) = over {
                o += &format!(
                    "over {} seeds ({}-{}): mean {:.3} {}{}\n",
                    e.n,
                    r.seed,
                    reports[reports.len() - 1].seed,
                    e.mean,
                    r.unit,
                    e.interval()
                        .map(|(lo, hi)| format!(", 95% interval [{lo:.3}, {hi:.3}]"))
                        .unwrap_or_default()
                );
                for x in &reports {
                    o += &format!(
                        "  seed {:>4}: {:.3} {}, {} events, digest {}\n",
                        x.seed, x.value, x.unit, x.events, x.digest
                    );
                }
                o += &format!(
                    "({} runs, {:.3} s wall)\n",
                    reports.len(),
                    wall.as_secs_f64()
                );
            }
            o
        }
    })
}

/// One run with the recorder on: writes `--trace` and `--capture-wake`'s files, and
/// says on standard error what it wrote.
fn run_recorded(a: &RunArgs, spec: &RunSpec) -> Result<RunReport, String> {
    let rc = RecordConfig {
        // Capturing alone keeps no records.
        cap: if a.trace.is_some() { a.trace_cap } else { 0 },
        window: a
            .trace_window
            .map(|(s, e)| (SimTime::from_ms(s), SimTime::from_ms(e))),
        capture_wake: a.capture_wake.into_iter().collect(),
    };
    let mut live = LiveRun::with_recorder(spec, rc).map_err(sim_error)?;
    live.finish().map_err(sim_error)?;
    if let Some(path) = &a.trace {
        let json = live.chrome_trace().ok_or("the run kept no recording")?;
        std::fs::write(path, &json).map_err(|e| format!("--trace {path}: {e}"))?;
        let rec = live.recording().ok_or("the run kept no recording")?;
        eprintln!(
            "trace: {} events of the run's {} wake-ups{} to {path} ({} bytes)",
            rec.records.len(),
            rec.wakeups,
            rec.window_ns
                .map(|(s, e)| format!(", {}..{} ms", s / 1_000_000, e / 1_000_000))
                .unwrap_or_default(),
            json.len()
        );
        if rec.truncated {
            eprintln!(
                "warning: the trace stopped at --trace-cap {} events ({} more were left out, \
                 the last kept at {:.3} ms); raise --trace-cap or take a --trace-window",
                rec.cap,
                rec.dropped,
                rec.records.last().map_or(0.0, |r| r.at_ns as f64 / 1e6)
            );
        }
    }
    if let Some(n) = a.capture_wake {
        let c = live.captured_wakes().first().ok_or_else(|| {
            format!(
                "--capture-wake {n}: the run had only {} wake-ups",
                live.recording().map_or(0, |r| r.wakeups)
            )
        })?;
        let path = a
            .capture_file
            .clone()
            .unwrap_or_else(|| format!("wake-{n}.json"));
        let text = serde_json::to_string_pretty(&c.scenario).map_err(|e| e.to_string())? + "\n";
        std::fs::write(&path, text).map_err(|e| format!("--capture-file {path}: {e}"))?;
        let w = &c.scenario;
        eprintln!(
            "wake-up {n} at {:.6} ms: task {} (prev CPU {}) woken from CPU {} by {}: CPU {} ({}, {}, {} CPUs probed); \
             state written to {path}: schedlab wake --state {path}",
            c.at_ns as f64 / 1e6,
            w.wakee.id,
            w.wakee.prev_cpu.unwrap_or(w.waker.cpu),
            w.waker.cpu,
            w.waker
                .task
                .as_ref()
                .map_or("an interrupt".to_string(), |t| format!("task {}", t.id)),
            c.decision.cpu.0,
            c.decision.path.map_or("?", |p| p.as_str()),
            c.decision.queue.name(),
            c.decision.costs.cpus_probed
        );
        if !c.traced_agrees {
            eprintln!("warning: the traced decision differs from the simulated one (a bug: please report it)");
        }
    }
    Ok(live.report())
}

fn text_report(r: &RunReport, wall_s: f64) -> String {
    let m = &r.metrics;
    let mut o = String::new();
    o += &format!(
        "{} on {} (CPUs {}), {}, seed {}\n",
        r.workload.name(),
        r.machine,
        r.cpus,
        r.patches,
        r.seed
    );
    o += &format!("result: {:.3} {}\n", r.value, r.unit);
    o += &format!(
        "simulated {:.3} ms, {} events, {:.1} M events/s wall ({:.3} s), digest {}\n",
        r.sim_ns as f64 / 1e6,
        r.events,
        r.events as f64 / wall_s.max(1e-9) / 1e6,
        wall_s,
        r.digest
    );
    o += &format!("cost parameters: {}\n", r.cost_family);
    let total: u64 = m.placement.iter().map(|(_, v)| v).sum::<u64>().max(1);
    o += &format!("wake-ups: {} (", m.wakeups);
    o += &m
        .placement
        .iter()
        .map(|(k, v)| format!("{k} {:.1}%", *v as f64 * 100.0 / total as f64))
        .collect::<Vec<_>>()
        .join(", ");
    o += ")\n";
    o += &format!(
        "  queued: local {}, wakelist+IPI {}, wakelist polling {}, remote lock {} (lock wait mean {} ns, p99 {} ns)\n",
        m.wake_local, m.wake_ipi, m.wake_polling, m.wake_remote_lock, m.lock_wait_ns.mean, m.lock_wait_ns.p99
    );
    o += &format!(
        "  CPUs probed per wake-up: mean {:.2}, p99 {}, max {}\n",
        m.cpus_probed_mean_x100 as f64 / 100.0,
        m.cpus_probed.p99,
        m.cpus_probed.max
    );
    let l = &m.wake_latency_ns;
    o += &format!(
        "  wake-up latency ns: p50 {} p90 {} p99 {} p99.9 {} max {}\n",
        l.p50, l.p90, l.p99, l.p999, l.max
    );
    o += &format!(
        "  sd_llc_shared line: {} reads, {} misses\n",
        m.llc_line_reads, m.llc_line_misses
    );
    let mut steals = String::new();
    if m.core_steals > 0 {
        steals += &format!(" ({} stolen by forced-idle CPUs)", m.core_steals);
    }
    if m.active_balances > 0 {
        steals += &format!(
            " ({} running tasks pushed by active balance)",
            m.active_balances
        );
    }
    o += &format!(
        "migrations: {} at wake-up, {} by load balance{steals}; context switches {}, preemptions {}\n",
        m.migrations_wakeup, m.migrations_balance, m.context_switches, m.preemptions
    );
    o += &format!("force idle: {:.3} ms\n", m.force_idle_ns as f64 / 1e6);
    let util: Vec<String> = m
        .utilisation_permille
        .iter()
        .map(|(c, u)| format!("{c}:{}%", u / 10))
        .collect();
    o += &format!("utilisation: {}\n", util.join(" "));
    if !m.series_per_s.is_empty() {
        let s: Vec<String> = m
            .series_per_s
            .iter()
            .take(20)
            .map(|v| v.to_string())
            .collect();
        o += &format!(
            "throughput series (units/s per {} ms): {}{}\n",
            m.series_interval_ns / 1_000_000,
            s.join(" "),
            if m.series_per_s.len() > 20 {
                " ..."
            } else {
                ""
            }
        );
    }
    o
}

pub fn sweep(a: SweepArgs) -> Result<String, String> {
    let baseline = patchset("baseline", &a.baseline)?;
    let patched = patchset("patched", &a.patched)?;
    let threads: Vec<u32> = a
        .threads
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| format!("--threads: {s:?} is not a whole number up to {}", u32::MAX))
        })
        .collect::<Result<_, _>>()?;
    if threads.is_empty() {
        return Err("--threads: give at least one value".into());
    }
    let base = spec(&a.common, Some(threads[0]), baseline)?;
    let sw = SweepSpec {
        base,
        threads: threads.clone(),
        baseline,
        patched,
        seeds: a.seeds,
    };
    let t0 = crate::wall_clock();
    let reports = run_all(&sw.points())?;
    let wall = t0.elapsed();
    let rows = sw.rows(&reports).map_err(|e| e.to_string())?;
    let unit = &reports[0].unit;
    let events: u64 = reports.iter().map(|r| r.events).sum();
    Ok(match a.format {
        SweepFormat::Csv => export::sweep_csv(&rows),
        SweepFormat::Json => export::sweep_json(
            &reports,
            &rows,
            baseline,
            patched,
            a.seeds,
            wall.as_secs_f64(),
        )
        .map_err(|e| e.to_string())?,
        SweepFormat::Table => {
            let mut o = format!(
                "{} on {} (CPUs {}), {}\n{:>8}  {:>16}  {:>16}  {:>9}\n",
                a.common.workload_name(),
                reports[0].machine,
                reports[0].cpus,
                unit,
                "threads",
                baseline.to_string(),
                patched.to_string(),
                "change"
            );
            for r in &rows {
                o += &format!(
                    "{:>8}  {:>16.4}  {:>16.4}  {:>+8.2}%{}\n",
                    r.threads,
                    r.baseline,
                    r.patched,
                    r.change_pct,
                    interval_note(r.change_lo.zip(r.change_hi))
                );
            }
            if a.seeds > 1 {
                o += &format!(
                    "(means over seeds {}-{}; change: mean of the per-seed changes, 95% interval)\n",
                    sw.base.seed,
                    sw.base.seed.wrapping_add(u64::from(a.seeds) - 1)
                );
            }
            o += &format!(
                "({} runs, {} simulated events, {:.2} s wall, {:.1} M events/s)\n",
                reports.len(),
                events,
                wall.as_secs_f64(),
                events as f64 / wall.as_secs_f64().max(1e-9) / 1e6
            );
            o
        }
    })
}

/// `  [lo, hi]`, or `  [lo, hi] no significant change` when it includes 0; nothing
/// without an interval.
fn interval_note(iv: Option<(f64, f64)>) -> String {
    match iv {
        None => String::new(),
        Some((lo, hi)) if lo <= 0.0 && hi >= 0.0 => {
            format!("  [{lo:+.2}, {hi:+.2}] no significant change")
        }
        Some((lo, hi)) => format!("  [{lo:+.2}, {hi:+.2}]"),
    }
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

    /// `--trace` writes a trace whose wake-up slices number the run's wake-ups, and
    /// `--capture-wake` a state file that `schedlab wake` decides as the run did;
    /// bad windows and caps are refused with the flag.
    #[test]
    fn trace_and_capture_wake_write_their_files() {
        let dir = std::env::temp_dir().join(format!("schedlab-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("t.json");
        let state = dir.join("w.json");
        let (t, w) = (trace.to_str().unwrap(), state.to_str().unwrap());
        let out = crate::tests::cli(&[
            "run",
            "-m",
            "kunpeng920-6426",
            "--cpus",
            "node0",
            "-w",
            "tbench",
            "-t",
            "16",
            "--duration-ms",
            "5",
            "--trace",
            t,
            "--capture-wake",
            "300",
            "--capture-file",
            w,
            "--format",
            "json",
        ])
        .unwrap();
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
        let wakes = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "wake" && e["name"].as_str().unwrap().starts_with("wake "))
            .count() as u64;
        assert!(wakes >= report["metrics"]["wakeups"].as_u64().unwrap() && wakes >= 300);
        let decided = crate::tests::cli(&["wake", "--state", w, "--format", "json"]).unwrap();
        let d: serde_json::Value = serde_json::from_str(&decided).unwrap();
        assert!(d["decision"]["cpu"].is_u64(), "{decided}");
        std::fs::remove_dir_all(&dir).ok();
        for (flag, value) in [
            ("--trace-window", "10..5"),
            ("--trace-window", "5"),
            ("--trace-cap", "0"),
        ] {
            let e = crate::tests::cli(&[
                "run", "-m", "flat-16", "-w", "tbench", "--trace", "x.json", flag, value,
            ])
            .unwrap_err();
            assert!(e.contains(flag) || e.contains(value), "{flag} {value}: {e}");
        }
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

    #[derive(Parser)]
    struct SweepFlags {
        #[command(flatten)]
        a: SweepArgs,
    }

    /// Seeds run on rayon's threads in whatever order they finish; the rows are the
    /// same on one thread or several, run twice.
    #[test]
    fn seeds_combine_in_order_whatever_the_thread_timing() {
        let csv = |threads: usize| {
            let f = SweepFlags::try_parse_from([
                "sweep",
                "--machine",
                "kunpeng920-6426",
                "--cpus",
                "node0",
                "--workload",
                "netperf-tcp-rr",
                "--threads",
                "1,4",
                "--baseline",
                "6.6",
                "--patched",
                "6.6+cluster",
                "--duration-ms",
                "4",
                "--seeds",
                "4",
                "--format",
                "csv",
            ])
            .unwrap();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| sweep(f.a)).unwrap()
        };
        let one = csv(1);
        assert_eq!(one.lines().count(), 3, "{one}");
        assert!(
            one.lines()
                .nth(1)
                .unwrap()
                .split(',')
                .all(|f| !f.is_empty()),
            "{one}"
        );
        assert_eq!(csv(3), one);
        assert_eq!(csv(3), one);
    }

    #[test]
    fn seeds_are_counted_from_one_to_the_bound() {
        assert_eq!(seeds_flag("5"), Ok(5));
        assert!(seeds_flag("0").is_err());
        assert!(seeds_flag(&(MAX_SEEDS + 1).to_string()).is_err());
        assert!(seeds_flag("x").is_err());
        assert_eq!(interval_note(None), "");
        assert_eq!(
            interval_note(Some((-0.5, 1.0))),
            "  [-0.50, +1.00] no significant change"
        );
        assert_eq!(interval_note(Some((0.5, 1.0))), "  [+0.50, +1.00]");
    }
}
