//! Seed 03's row (`hackbench -g 32 -f 20 --threads --pipe`, 4 000 loops, on
//! `epyc9654-2p`, as `reproduce --scale full` builds it) with the recorder on, and
//! what carries the patched kernel's gain, counted: every wake-up by its wakee's role
//! (a receiver woken by a write, a sender woken by a read or a write), the distance
//! from the waker's CPU and the queue (`ttwu_queue()`: local, wake list with or
//! without an IPI, remote rq lock), the on_cpu wake-ups, the rq-lock waits, the
//! futile writer wake-ups, how long a wakee waits from its wake-up to its slice
//! (by queue), idle entries by C-state, and the pipes' mutexes (acquisitions,
//! contended ones, spins, sleeps, handoffs, mean wait).
//!
//! ```text
//! cargo run --release --example seed03_counts -- 6.5+ttwu-l2c 1 [cost-off] [quiet]
//! ```
//!
//! An analysis aid, not a test: it only reads the recorder's records and the
//! simulator's counters.

use std::collections::BTreeMap;
use std::process::ExitCode;

use schedlab_core::cost::CostTerms;
use schedlab_core::sim::record::{QueueKind, RecordKind};
use schedlab_core::PatchSet;

#[path = "common/seed03.rs"]
mod seed03;

const USAGE: &str = "usage: seed03_counts PATCHES SEED [COST_OFF|-] [quiet|default] [loops]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("seed03_counts: {e}\n{USAGE}");
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
    let off = a.get(3).map(String::as_str).unwrap_or("-");
    let quiet = match a.get(4).map(String::as_str) {
        None | Some("default") => false,
        Some("quiet") => true,
        Some(x) => return Err(format!("noise {x}: quiet or default")),
    };
    let loops: u64 = seed03::arg_or(&a, 5, "loops", 4_000)?;
    let terms = CostTerms::all_but(if off == "-" { "" } else { off })?;
    let seed03::Seed03Run { sim, roles, .. } =
        seed03::run_seed03(patches, seed, loops, terms, quiet)?;
    let m = sim.metrics();
    let rec = sim.recording().ok_or("no recording")?;
    let role = |t: u32| roles.get(t as usize).copied().unwrap_or("background");
    // (wakee role, distance, queue) -> count; pending wake-up time per task.
    let mut by: BTreeMap<(&str, String, &str), u64> = BTreeMap::new();
    let mut on_cpu: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut woke_at: Vec<Option<(u64, QueueKind)>> = vec![None; 4096];
    let mut lat: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut idle_enter: BTreeMap<u8, u64> = BTreeMap::new();
    let mut moved = 0u64;
    let mut pairs: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for r in &rec.records {
        match r.kind {
            RecordKind::Wake(w) if !rec.background(w.wakee) => {
                let q = match w.queue {
                    QueueKind::Local => "local",
                    QueueKind::WakelistIpi => "wl+ipi",
                    QueueKind::WakelistNoIpi => "wl-poll",
                    QueueKind::RemoteLock => "rlock",
                };
                *by.entry((role(w.wakee), format!("{:?}", w.dist), q))
                    .or_default() += 1;
                if format!("{:?}", w.path) == "OnCpu" {
                    *on_cpu.entry((role(w.wakee), q)).or_default() += 1;
                }
                moved += u64::from(w.cpu != w.prev_cpu);
                let wr = if w.waker == u32::MAX {
                    "irq"
                } else {
                    role(w.waker)
                };
                *pairs.entry((wr, role(w.wakee))).or_default() += 1;
                if let Some(s) = woke_at.get_mut(w.wakee as usize) {
                    *s = Some((r.at_ns, w.queue));
                }
            }
            RecordKind::Switch { next, .. } => {
                if let Some(Some((t0, q))) = woke_at.get_mut(next as usize).map(|s| s.take()) {
                    let e = lat.entry(format!("{q:?}")).or_default();
                    e.0 += 1;
                    e.1 += r.at_ns - t0;
                }
            }
            RecordKind::IdleEnter { cstate, .. } => *idle_enter.entry(cstate).or_default() += 1,
            _ => {}
        }
    }
    println!(
        "{} seed {seed} off={off} quiet={quiet}: {:.3} ms (run {:.3} ms), truncated {}",
        a[1],
        m.report(sim.now().ns(), &[]).window_ns as f64 / 1e6,
        sim.now().ns() as f64 / 1e6,
        rec.truncated
    );
    println!(
        "wakeups {} local {} ipi {} poll {} rlock {}; lock_wait n={} mean={} ns p99={}; \
         on_cpu {} spin {} ({} ns); futile {}; moved {}; newidle_empty {}",
        m.wakeups,
        m.wake_local,
        m.wake_ipi,
        m.wake_polling,
        m.wake_remote_lock,
        m.lock_wait.summary().count,
        m.lock_wait.summary().mean,
        m.lock_wait.quantile(0.99),
        m.wake_on_cpu,
        m.wake_on_cpu_spin,
        m.wake_on_cpu_spin_ns,
        sim.futile_writer_wakeups(),
        moved,
        m.newidle_empty
    );
    // The pipes' mutexes (sim/pipe_mutex.rs, session 33).
    let x = sim.pipe_mutex_stats();
    let per = |ns: u64, n: u64| ns / n.max(1);
    println!(
        "pipe mutex: acquisitions {} contended {} ({:.1}%) spun {} slept {} handoffs {}; \
         mean wait {} ns, mean spin {} ns per spinning acquisition (spin done: {} ms), lines {} ns per \
         acquisition ({} ms)",
        x.acquisitions,
        x.contended,
        100.0 * x.contended as f64 / x.acquisitions.max(1) as f64,
        x.spun,
        x.slept,
        x.handoffs,
        per(x.wait_ns, x.contended),
        per(x.spin_ns, x.spun),
        x.spin_ns / 1_000_000,
        per(x.lines_ns, x.acquisitions),
        x.lines_ns / 1_000_000
    );
    for ((r, d, q), n) in &by {
        println!("  wake {r:9} {d:10} {q:8} {n}");
    }
    println!(
        "  busy_cpu_ms {:.1} ctx_switches {} preemptions {} migrations_balance {}",
        m.busy_ns.iter().sum::<u64>() as f64 / 1e6,
        m.context_switches,
        m.preemptions,
        m.migrations_balance
    );
    for ((a, b), n) in &pairs {
        println!("  waker {a:9} -> {b:9} {n}");
    }
    for ((r, q), n) in &on_cpu {
        println!("  on_cpu {r:9} {q:8} {n}");
    }
    for (q, (n, s)) in &lat {
        println!("  wake->run {q:18} n={n} mean={} ns", s / n.max(&1));
    }
    println!("  idle enters by C-state: {idle_enter:?}");
    Ok(())
}
