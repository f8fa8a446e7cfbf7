//! Seed 03's run (`hackbench -g 32 -f 20 --threads --pipe`, 4 000 loops, on
//! `epyc9654-2p`) read by CCX (LLC) from the recorder: where fork put the 1280
//! workers, how many workers each CCX holds over time (a worker belongs to the CPU
//! it last ran on, was woken to or was moved to), when each CCX first and last ran
//! a worker, its busy share, and the moves into and out of each CCX by reason
//! (wake-up, each balancer).
//!
//! ```text
//! cargo run --release --example seed03_ccx -- 6.5 1 [loops] [step_ms]
//! ```
//!
//! An analysis aid, not a test: it only reads the recorder's records.

use std::process::ExitCode;

use schedlab_core::cost::CostTerms;
use schedlab_core::cpumask::CpuId;
use schedlab_core::sim::record::{RecordKind, NO_TASK};
use schedlab_core::wakeup::TaskId;
use schedlab_core::PatchSet;

#[path = "common/seed03.rs"]
mod seed03;

const USAGE: &str = "usage: seed03_ccx PATCHES SEED [loops] [step_ms]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("seed03_ccx: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        return Err("too few arguments".into());
    }
    let patches: PatchSet = a[1].parse().map_err(|e| format!("patches {}: {e}", a[1]))?;
    let seed: u64 = a[2].parse().map_err(|e| format!("seed {}: {e}", a[2]))?;
    let loops: u64 = seed03::arg_or(&a, 3, "loops", 4_000)?;
    let step_ms: u64 = seed03::arg_or(&a, 4, "step_ms", 5)?;
    let seed03::Seed03Run {
        sim,
        machine,
        roles,
    } = seed03::run_seed03(patches, seed, loops, CostTerms::ALL, false)?;
    let m = sim.metrics();
    let rec = sim.recording().ok_or("no recording")?;
    let n_cpus = machine.nr_cpus() as usize;
    // CCX index per CPU: the LLC masks in order of their first CPU.
    let mut ccx_of = vec![usize::MAX; n_cpus];
    let mut ccx_cpus: Vec<Vec<usize>> = Vec::new();
    for c in 0..n_cpus {
        if ccx_of[c] != usize::MAX {
            continue;
        }
        let mask = machine.llc_mask(CpuId(c as u32));
        let k = ccx_cpus.len();
        let cs: Vec<usize> = (0..n_cpus)
            .filter(|&o| mask.test_cpu(CpuId(o as u32)))
            .collect();
        for &o in &cs {
            ccx_of[o] = k;
        }
        ccx_cpus.push(cs);
    }
    let n_ccx = ccx_cpus.len();
    let workers: Vec<u32> = (0..roles.len() as u32)
        .filter(|&t| roles[t as usize] == "sender" || roles[t as usize] == "receiver")
        .collect();
    let is_worker = |t: u32| {
        (t as usize) < roles.len()
            && (roles[t as usize] == "sender" || roles[t as usize] == "receiver")
    };
    let start = sim.start_time().map_or(0, |s| s.ns());
    let end = sim.now().ns();
    println!(
        "{} seed {seed}: release at {:.3} ms, end {:.3} ms, window {:.3} ms, {} CCXs, truncated {}",
        a[1],
        start as f64 / 1e6,
        end as f64 / 1e6,
        m.report(end, &[]).window_ns as f64 / 1e6,
        n_ccx,
        rec.truncated
    );
    // Fork placement.
    let mut forked = vec![0u32; n_ccx];
    for &t in &workers {
        if let Some(c) = sim.start_cpu(TaskId(t)) {
            forked[ccx_of[c.0 as usize]] += 1;
        }
    }
    println!("forked per CCX: {forked:?}");
    let seq: Vec<String> = workers
        .iter()
        .map(|&t| {
            sim.start_cpu(TaskId(t))
                .map_or("-".into(), |c| format!("{}", c.0))
        })
        .collect();
    println!("fork CPUs in order: {}", seq.join(" "));
    // Walk the records: each worker's CPU, per-CCX counts at each step.
    let mut at_cpu: Vec<Option<usize>> = vec![None; roles.len()];
    for &t in &workers {
        at_cpu[t as usize] = sim.start_cpu(TaskId(t)).map(|c| c.0 as usize);
    }
    let count = |at_cpu: &[Option<usize>]| {
        let mut v = vec![0u32; n_ccx];
        for &t in &workers {
            if let Some(c) = at_cpu[t as usize] {
                v[ccx_of[c]] += 1;
            }
        }
        v
    };
    let mut first_run = vec![u64::MAX; n_ccx];
    let mut last_run = vec![0u64; n_ccx];
    let mut busy_since = vec![None::<u64>; n_cpus];
    let mut busy = vec![0u64; n_ccx];
    let mut noise = vec![0u32; n_ccx];
    // moves[(from_ccx != to_ccx)] by kind: wake, periodic, idle, newidle, active.
    let mut moves_in = vec![[0u32; 6]; n_ccx];
    let mut moves_out = vec![[0u32; 6]; n_ccx];
    let mut next_sample = start;
    let mut samples: Vec<(u64, Vec<u32>)> = Vec::new();
    for r in &rec.records {
        while r.at_ns >= next_sample && next_sample <= end {
            samples.push((next_sample, count(&at_cpu)));
            next_sample += step_ms * 1_000_000;
        }
        match r.kind {
            RecordKind::Switch { cpu, next, .. } => {
                let cpu = cpu as usize;
                if let Some(s) = busy_since[cpu].take() {
                    busy[ccx_of[cpu]] += r.at_ns.saturating_sub(s);
                }
                if next != NO_TASK && is_worker(next) {
                    at_cpu[next as usize] = Some(cpu);
                    let k = ccx_of[cpu];
                    if r.at_ns >= start {
                        first_run[k] = first_run[k].min(r.at_ns);
                        last_run[k] = last_run[k].max(r.at_ns);
                    }
                    busy_since[cpu] = Some(r.at_ns.max(start));
                } else if next != NO_TASK {
                    busy_since[cpu] = None;
                    if r.at_ns >= start {
                        noise[ccx_of[cpu]] += 1;
                    }
                }
            }
            RecordKind::IdleEnter { cpu, .. } => {
                let cpu = cpu as usize;
                if let Some(s) = busy_since[cpu].take() {
                    busy[ccx_of[cpu]] += r.at_ns.saturating_sub(s);
                }
            }
            RecordKind::Wake(w) if is_worker(w.wakee) => {
                let (f, t) = (ccx_of[w.prev_cpu as usize], ccx_of[w.cpu as usize]);
                if f != t {
                    moves_out[f][0] += 1;
                    moves_in[t][0] += 1;
                }
                at_cpu[w.wakee as usize] = Some(w.cpu as usize);
            }
            RecordKind::Migrate {
                task,
                from,
                to,
                reason,
            } if is_worker(task) => {
                let (f, t) = (ccx_of[from as usize], ccx_of[to as usize]);
                if f != t {
                    let k = 1 + reason as usize;
                    moves_out[f][k.min(5)] += 1;
                    moves_in[t][k.min(5)] += 1;
                }
                at_cpu[task as usize] = Some(to as usize);
            }
            _ => {}
        }
    }
    samples.push((end, count(&at_cpu)));
    let span = (end - start).max(1);
    println!("noise switches per CCX after the release: {noise:?}");
    println!("ccx  cpus     first_ms  last_ms  busy%  in:wake/per/idle/newidle/active  out:...");
    for k in 0..n_ccx {
        let f = if first_run[k] == u64::MAX {
            "never".to_string()
        } else {
            format!("{:.3}", (first_run[k] - start) as f64 / 1e6)
        };
        println!(
            "{k:3}  {:3}-{:3}  {f:>8} {:8.3} {:6.1}  {:?}  {:?}",
            ccx_cpus[k][0],
            ccx_cpus[k].last().copied().unwrap_or(0),
            last_run[k].saturating_sub(start) as f64 / 1e6,
            busy[k] as f64 * 100.0 / (span as f64 * ccx_cpus[k].len() as f64),
            &moves_in[k][..5],
            &moves_out[k][..5],
        );
    }
    println!("workers per CCX over time (ms from the release):");
    for (t, v) in &samples {
        let ms = t.saturating_sub(start) as f64 / 1e6;
        let s: Vec<String> = v.iter().map(|n| format!("{n:3}")).collect();
        println!("{ms:7.1} {}", s.join(""));
    }
    println!(
        "busy CPUs (busy time / span): {:.1}",
        busy.iter().sum::<u64>() as f64 / span as f64
    );
    Ok(())
}
