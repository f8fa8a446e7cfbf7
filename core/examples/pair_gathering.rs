//! Where a loopback pair's two tasks come to share a cluster, and what splits them:
//! every change of a pair's state (same cluster or not) in a recorded run, counted by
//! the event that made it (fork placement, a wake-up's path and what occupied the
//! wakee's prev, a balancer move) and by phase (before the benchmark's clients are
//! all running, the warm-up, the measured window).
//!
//! ```text
//! cargo run --release --example pair_gathering -- netperf-tcp-rr 8 6.6 1 [quiet]
//! ```
//!
//! Pairs are tasks (2i, 2i+1) as `workload::build` numbers them for tbench and
//! netperf; clusters are CPU / 4 (Kunpeng 920's CLS spans). An analysis aid, not a
//! test: it only reads the recorder's records.

use std::collections::BTreeMap;
use std::process::ExitCode;

use schedlab_core::experiment::Warmup;
use schedlab_core::sim::record::{RecordKind, MAX_RECORD_CAP, NO_TASK};
use schedlab_core::sim::RecordConfig;
use schedlab_core::workload::Noise;
use schedlab_core::{LiveRun, PatchSet, RunSpec, Workload};

const CLUSTER: u16 = 4;

const USAGE: &str = "usage: pair_gathering tbench|netperf-tcp-rr|netperf-udp-rr N PATCHES SEED \
                     [quiet|default] [measured_ms]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pair_gathering: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 5 {
        return Err("too few arguments".into());
    }
    if !matches!(
        a[1].as_str(),
        "tbench" | "netperf-tcp-rr" | "netperf-udp-rr"
    ) {
        return Err(format!(
            "{}: only the loopback pairs (tbench, netperf)",
            a[1]
        ));
    }
    let n: u32 = a[2].parse().map_err(|e| format!("N {}: {e}", a[2]))?;
    let w = Workload::with_defaults(&a[1])
        .ok_or_else(|| format!("unknown workload {}", a[1]))?
        .with_threads(n);
    let patches: PatchSet = a[3].parse().map_err(|e| format!("patches {}: {e}", a[3]))?;
    let seed: u64 = a[4].parse().map_err(|e| format!("seed {}: {e}", a[4]))?;
    let quiet = match a.get(5).map(String::as_str) {
        None | Some("default") => false,
        Some("quiet") => true,
        Some(x) => return Err(format!("noise {x}: quiet or default")),
    };
    let dur: u64 = match a.get(6) {
        None => 200,
        Some(x) => x.parse().map_err(|e| format!("measured_ms {x}: {e}"))?,
    };
    let mut spec = RunSpec::on_preset("kunpeng920-6426", "node0", patches, w, dur, seed)
        .map_err(|e| e.to_string())?;
    spec.warmup = Warmup::Settled;
    if quiet {
        spec.noise = Noise::Quiet;
    }
    let rc = RecordConfig {
        cap: MAX_RECORD_CAP,
        ..RecordConfig::default()
    };
    let mut live = LiveRun::with_recorder(&spec, rc).map_err(|e| e.to_string())?;
    live.finish().map_err(|e| e.to_string())?;
    let warm = live.warmup_ns().unwrap_or(0);
    let rec = live.recording().ok_or("no recording")?;
    if rec.truncated {
        let end = rec.records.last().map_or(0, |r| r.at_ns);
        println!("(recording truncated at {:.1} ms)", end as f64 / 1e6);
    }
    let verbose = std::env::var_os("PAIR_VERBOSE").is_some();
    let verbose_all = std::env::var("PAIR_VERBOSE").is_ok_and(|v| v == "2");
    let nt = 2 * n;
    let mut cpu_of: Vec<Option<u16>> = vec![None; nt as usize];
    let mut curr: BTreeMap<u16, u32> = BTreeMap::new();
    let mut counts: BTreeMap<(String, &'static str, String), u64> = BTreeMap::new();
    let (mut gathered_ns, mut total_ns) = (0u128, 0u128);
    let mut last_t = warm;
    let mut all_started_at: Option<u64> = None;
    let (mut pw_same, mut pw_all) = (0u64, 0u64);
    let gathered = |c: &[Option<u16>], p: usize| match (c[2 * p], c[2 * p + 1]) {
        (Some(x), Some(y)) => Some(x / CLUSTER == y / CLUSTER),
        _ => None,
    };
    let n_gathered = |c: &[Option<u16>]| {
        (0..n as usize)
            .filter(|&p| gathered(c, p) == Some(true))
            .count()
    };
    let mut snapshots = Vec::new();
    for r in &rec.records {
        let t = r.at_ns;
        if t >= warm {
            let g = n_gathered(&cpu_of) as u128;
            total_ns += u128::from(t - last_t) * u128::from(n);
            gathered_ns += u128::from(t - last_t) * g;
            last_t = t;
        }
        let phase = if all_started_at.is_none() {
            "start"
        } else if t < warm {
            "warm-up"
        } else {
            "measured"
        };
        // (task, new cpu, cause)
        let mv: Option<(u32, u16, String)> = match r.kind {
            RecordKind::Switch { cpu, next, .. } => {
                curr.insert(cpu, next);
                if verbose && all_started_at.is_none() && (next == nt || next == nt + 1) {
                    println!(
                        "  {:9.3} ms {} runs on cpu {cpu}",
                        t as f64 / 1e6,
                        if next == nt { "daemon" } else { "launcher" }
                    );
                }
                if next < nt && cpu_of[next as usize].is_none() {
                    Some((next, cpu, "fork: first run".into()))
                } else if next < nt && cpu_of[next as usize] != Some(cpu) {
                    Some((next, cpu, "switch elsewhere (unrecorded move)".into()))
                } else {
                    None
                }
            }
            RecordKind::IdleEnter { cpu, .. } => {
                curr.insert(cpu, NO_TASK);
                None
            }
            RecordKind::Wake(wr) if wr.wakee < nt => {
                let partner = wr.wakee ^ 1;
                if wr.waker == partner && t >= warm {
                    pw_all += 1;
                    if wr.cpu / CLUSTER == wr.waker_cpu / CLUSTER {
                        pw_same += 1;
                    }
                }
                if cpu_of[wr.wakee as usize].is_some() && cpu_of[wr.wakee as usize] != Some(wr.cpu)
                {
                    let occ = match curr.get(&wr.prev_cpu).copied() {
                        None | Some(NO_TASK) => "prev idle".to_string(),
                        Some(x) if x == partner => "prev runs partner".into(),
                        Some(x) if x == wr.wakee => "prev still switching out the wakee".into(),
                        Some(x) if x < nt => "prev runs another pair's task".into(),
                        Some(x) if x < rec.workload_tasks => "prev runs a launcher/daemon".into(),
                        Some(_) => "prev runs noise".into(),
                    };
                    let waker = if wr.waker == partner {
                        "by partner"
                    } else if wr.waker == NO_TASK {
                        "from irq"
                    } else {
                        "by other"
                    };
                    let lands = if wr.cpu / CLUSTER == wr.waker_cpu / CLUSTER {
                        "the waker's cluster"
                    } else if wr.cpu / CLUSTER == wr.prev_cpu / CLUSTER {
                        "prev's cluster"
                    } else {
                        "a third cluster"
                    };
                    Some((
                        wr.wakee,
                        wr.cpu,
                        format!("wake {waker}, {occ}: {} -> {lands}", wr.path.as_str()),
                    ))
                } else {
                    None
                }
            }
            RecordKind::Migrate {
                task, to, reason, ..
            } if task < nt => Some((task, to, format!("migrate: {}", reason.as_str()))),
            _ => None,
        };
        if let Some((task, cpu, cause)) = mv {
            let p = (task / 2) as usize;
            let before = gathered(&cpu_of, p);
            cpu_of[task as usize] = Some(cpu);
            let after = gathered(&cpu_of, p);
            let kind = match (before, after) {
                (_, None) => "",
                (None, Some(true)) => "born gathered",
                (None, Some(false)) => "born split",
                (Some(false), Some(true)) => "GATHER",
                (Some(true), Some(false)) => "SPLIT",
                (Some(true), Some(true)) => "move within",
                (Some(false), Some(false)) => "move, still split",
            };
            if verbose && (phase == "start" || (verbose_all && matches!(kind, "GATHER" | "SPLIT")))
            {
                println!(
                    "  {:9.3} ms task {task:2} (pair {p}) -> cpu {cpu:2}: {kind}: {cause}",
                    t as f64 / 1e6
                );
            }
            if !kind.is_empty() {
                *counts.entry((phase.to_string(), kind, cause)).or_default() += 1;
            }
            if all_started_at.is_none() && cpu_of.iter().all(Option::is_some) {
                all_started_at = Some(t);
                snapshots.push((t, n_gathered(&cpu_of)));
            }
        }
    }
    snapshots.push((last_t, n_gathered(&cpu_of)));
    println!(
        "{} n={} {} seed {} noise {}: warm-up ends {:.1} ms; all tasks placed at {:.3} ms",
        a[1],
        n,
        a[3],
        seed,
        if quiet { "quiet" } else { "default" },
        warm as f64 / 1e6,
        all_started_at.unwrap_or(0) as f64 / 1e6
    );
    for (t, g) in &snapshots {
        println!("  at {:.1} ms: {g} of {n} pairs gathered", *t as f64 / 1e6);
    }
    println!(
        "  measured: time-weighted gathered {:.1}%; partner wake-ups within a cluster {:.1}% of {pw_all}",
        100.0 * gathered_ns as f64 / total_ns.max(1) as f64,
        100.0 * pw_same as f64 / pw_all.max(1) as f64
    );
    for ((phase, kind, cause), c) in &counts {
        if !kind.is_empty() {
            println!("  {phase:9} {kind:14} {c:6}  {cause}");
        }
    }
    Ok(())
}
