//! `schedlab run`: one run (or one per seed), as text, JSON or CSV; with the
//! recorder on, `--trace`'s Chrome/Perfetto file and `--capture-wake`'s state file.

use clap::{Args, ValueEnum};

use schedlab_core::experiment::{self, export, LiveRun, RunReport, RunSpec};
use schedlab_core::sim::{RecordConfig, SimTime};
use schedlab_core::stats::Estimate;

use super::{
    cost_terms, headline_meaning, headline_value, patchset, run_all, seeds_flag, sim_error, spec,
    unsettled_note, Common,
};

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
    /// llc-line, rq-lock, cache-refill, tg-line (docs/fidelity.md)
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
                    "over {} seeds ({}-{}): mean {} {}{}\n",
                    e.n,
                    r.seed,
                    reports[reports.len() - 1].seed,
                    headline_value(r, e.mean),
                    r.unit,
                    e.interval()
                        .map(|(lo, hi)| format!(
                            ", 95% interval [{}, {}]",
                            headline_value(r, lo),
                            headline_value(r, hi)
                        ))
                        .unwrap_or_default()
                );
                for x in &reports {
                    o += &format!(
                        "  seed {:>4}: {} {}, {} events, digest {}\n",
                        x.seed,
                        headline_value(x, x.value),
                        x.unit,
                        x.events,
                        x.digest
                    );
                }
                o += &format!(
                    "({} runs, {:.3} s wall)\n",
                    reports.len(),
                    wall.as_secs_f64()
                );
            }
            o += &unsettled_note(&reports).unwrap_or_default();
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
            if live.requeued_captures().contains(&n) {
                format!(
                    "--capture-wake {n}: that wake-up requeued a delayed task in place \
                     (v6.12's ttwu_runnable()): no CPU selection to capture"
                )
            } else {
                format!(
                    "--capture-wake {n}: the run had only {} wake-ups",
                    live.recording().map_or(0, |r| r.wakeups)
                )
            }
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
    o += &format!(
        "result: {} {}\n",
        headline_value(r, r.value),
        headline_meaning(r)
    );
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
    if m.lb_lock_takes > 0 {
        o += &format!(
            "  rq locks the balancer took: {} (wait mean {} ns)\n",
            m.lb_lock_takes,
            m.lb_lock_wait_ns / m.lb_lock_takes
        );
    }
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
    o += &format!(
        "  tg->load_avg line: {} reads, {} writes, {} moved it, {} ns\n",
        m.tg_line_reads, m.tg_line_writes, m.tg_line_misses, m.tg_line_ns
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
    o += &format!(
        "newidle passes that found nothing: {} ({:.3} ms in them, {} cut short by a task queued meanwhile)\n",
        m.newidle_empty,
        m.newidle_empty_ns as f64 / 1e6,
        m.newidle_cut,
    );
    o += &format!(
        "wake-ups of a task still on_cpu: {} queued back on its CPU, {} waited for its switch to end ({:.3} ms spun)\n",
        m.wake_on_cpu,
        m.wake_on_cpu_spin,
        m.wake_on_cpu_spin_ns as f64 / 1e6
    );
    if m.delayed_dequeues > 0 || m.wake_delayed > 0 {
        o += &format!(
            "delayed dequeues (6.12): {} blocks left queued, {} wake-ups requeued such a task on its CPU\n",
            m.delayed_dequeues, m.wake_delayed
        );
    }
    o += &format!("force idle: {:.3} ms\n", m.force_idle_ns as f64 / 1e6);
    let util: Vec<String> = m
        .utilisation_permille
        .iter()
        .map(|(c, u)| format!("{c}:{}%", u / 10))
        .collect();
    o += &format!("utilisation: {}\n", util.join(" "));
    // The series counts the benchmark's units (transactions, tbench operations) per
    // second; the headline scales them (bytes per operation, per instance): the same
    // scale puts the series in the headline's unit, as the page's chart shows it.
    let scale = (r.higher_is_better && m.units > 0)
        .then(|| r.value * m.window_ns as f64 / (m.units as f64 * 1e9));
    if let (Some(scale), false) = (scale, m.series_per_s.is_empty()) {
        let s: Vec<String> = m
            .series_per_s
            .iter()
            .take(20)
            .map(|&v| format!("{:.0}", v as f64 * scale))
            .collect();
        o += &format!(
            "throughput series ({}, each {} ms of the measured window): {}{}\n",
            r.unit,
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

#[cfg(test)]
mod tests {
    /// `schedlab run` of 2 netperf TCP_RR instances on Jacobsville for 40 ms, with
    /// `more` arguments: a short throughput run whose output the tests read.
    fn jacobsville_netperf(more: &[&str]) -> String {
        let mut args = vec![
            "run",
            "-m",
            "jacobsville",
            "-w",
            "netperf-tcp-rr",
            "-t",
            "2",
            "--duration-ms",
            "40",
        ];
        args.extend_from_slice(more);
        crate::tests::cli(&args).unwrap()
    }

    /// A throughput run whose measured window starts before the LLC's first busy
    /// balance round says so (a fifth of 40 ms is 8 ms of warm-up; Jacobsville's LLC
    /// round is 24 × 2 ms × 16 = 768 ms), and one with `--warmup settled` does not.
    #[test]
    fn a_run_measured_in_the_start_up_says_so() {
        let run = jacobsville_netperf;
        let fifth = run(&["--warmup", "fifth"]);
        let note = fifth
            .lines()
            .find(|l| l.starts_with("note: "))
            .unwrap_or_else(|| panic!("no note in\n{fifth}"));
        assert!(
            note.starts_with("note: the first 40 ms of the measured window ran before")
                && note.ends_with("--warmup settled measures past it"),
            "{note}"
        );
        let settled = run(&["--warmup", "settled"]);
        assert!(!settled.contains("note: "), "{settled}");
        let json = run(&["-f", "json"]);
        assert!(json.contains("\"unsettled_ns\": 40000000"), "{json}");
    }

    /// The text report says what its numbers are: the headline with its unit and which
    /// way is better (a completion time to the microsecond), and the throughput series
    /// in the headline's unit, as the page charts it.
    #[test]
    fn the_text_report_labels_its_numbers() {
        let netperf = jacobsville_netperf(&[]);
        let line = |text: &str, start: &str| {
            text.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no {start:?} line in\n{text}"))
                .to_string()
        };
        assert!(
            line(&netperf, "result: ").ends_with(" trans/s per instance, higher is better"),
            "{netperf}"
        );
        let series = line(
            &netperf,
            "throughput series (trans/s per instance, each 10 ms",
        );
        // Each interval is near the headline (per instance), not the count of all
        // instances' transactions.
        let headline: f64 = line(&netperf, "result: ")[8..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let first: f64 = series
            .split(": ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            (first / headline - 1.0).abs() < 0.5,
            "{first} against {headline}: {netperf}"
        );
        let hackbench = crate::tests::cli(&[
            "run",
            "-m",
            "jacobsville",
            "-w",
            "hackbench",
            "-t",
            "1",
            "--loops",
            "2",
            "--fds",
            "2",
        ])
        .unwrap();
        let result = line(&hackbench, "result: ");
        assert!(
            result.ends_with(" s to completion, lower is better"),
            "{hackbench}"
        );
        let digits = result[8..].split(' ').next().unwrap();
        assert_eq!(digits.split('.').nth(1).map(str::len), Some(6), "{result}");
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
}
