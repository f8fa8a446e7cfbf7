//! The table model: what each published table's rows run on the model (machine,
//! CPUs, workload, the two patch sets, length, seeds), scaled for CI or the full
//! tables.

use crate::experiment::{self, change_pct, RunSpec};
use crate::patch::PatchSet;
use crate::workload::{Dist, Workload};

use super::{PublishedTable, ReproError, Scale, EXPERIMENTS};

/// What to simulate for one published row: the baseline and patched runs.
pub(super) struct Point {
    pub(super) key: String,
    pub(super) published_baseline: Option<f64>,
    pub(super) published_patched: Option<f64>,
    pub(super) published_change: Option<f64>,
    pub(super) baseline: RunSpec,
    pub(super) patched: RunSpec,
    /// Runs per side in the first round, with seeds `seed`, `seed + 1`, ...
    /// ([`experiment::seeds`]), paired by seed.
    pub(super) runs: u32,
    /// The most runs per side the row takes: more rounds of [`Scale::seeds`] follow
    /// while its interval is unsettled (`run::more`), up to this; `runs` where the
    /// row takes no more rounds (CI, seed 04).
    pub(super) cap: u32,
}

impl Point {
    /// The runs of seeds `from .. from + n` (counted from the row's first seed),
    /// baselines first.
    pub(super) fn specs(&self, from: u32, n: u32) -> impl Iterator<Item = RunSpec> + '_ {
        [&self.baseline, &self.patched]
            .into_iter()
            .flat_map(move |s| {
                experiment::seeds(s.seed.wrapping_add(u64::from(from)), n)
                    .map(move |k| s.with_seed(k))
            })
    }
}

fn num(v: &serde_json::Value, k: &str) -> Option<f64> {
    v.get(k).and_then(|x| x.as_f64())
}

fn patches(s: &str) -> Result<PatchSet, ReproError> {
    s.parse()
        .map_err(|e| ReproError::Setup(format!("{s}: {e}")))
}

fn spec(
    machine: &str,
    cpus: &str,
    workload: Workload,
    ps: PatchSet,
    duration_ms: u64,
    seed: u64,
) -> Result<RunSpec, ReproError> {
    RunSpec::on_preset(machine, cpus, ps, workload, duration_ms, seed)
        .map_err(|e| ReproError::Setup(e.to_string()))
}

/// hackbench as the seeds ran it: `-p -T` (pipes, threads), 100-byte messages.
fn hackbench(groups: u32, fds: u32, loops: u64) -> Workload {
    Workload::Hackbench {
        groups,
        fds,
        loops,
        pipe: true,
        threads: true,
        msg_bytes: 100,
    }
}

/// Seed 04: runs per configuration (seeds 1 to 32), see `points()`.
const SEED04_RUNS: u32 = 32;

/// Seed 03 at full scale: loops per seed. 400 loops are the run's start-up: the
/// change builds over thousands of loops and by 4 000 agrees with 40 000 loops and
/// with the steady-state rate between them (+35.3, +37.1, +37.3%; docs/fidelity-history.md,
/// "Session 28: seeds 02 and 03 past the start-up"). Chosen as the shortest length
/// whose change a 10× longer run confirms, not from the published figure.
const SEED03_LOOPS: u64 = 4_000;

/// Seed 03 at full scale: the most seeds per side. A 4 000-loop seed costs about
/// 8.5 s of CPU a side and its change spreads ±13 pp between seeds, so the row never
/// settles to ±[`super::SETTLED_PP`] pp: 10 seeds (two rounds) from the wall-time
/// budget, about a minute more of `reproduce` on 2 cores than 25 seeds of 400 loops.
const SEED03_CAP: u32 = 10;

/// Completion-time runs stop at this much simulated time at most.
const CAP_MS: u64 = 600_000;

pub(super) fn points(
    name: &str,
    scale: Scale,
    tables: &[PublishedTable],
) -> Result<(PublishedTable, Vec<Point>), ReproError> {
    let seed = 1;
    let find = |n: &str| {
        tables
            .iter()
            .find(|t| t.name == n)
            .cloned()
            .ok_or_else(|| ReproError::Data(format!("table {n} missing")))
    };
    let ci = scale == Scale::Ci;
    let cap = scale.seed_cap();
    let runs = scale.first_round().min(cap);
    match name {
        "seed01-tbench" | "seed01-netperf-tcp-rr" => {
            let t = find(name)?;
            let (b, p) = (
                patches(t.baseline.as_deref().unwrap_or("6.6"))?,
                patches(t.patched.as_deref().unwrap_or("6.6+cluster"))?,
            );
            // Per seed: CI 3 × 35 ms, full 5 × 200 ms (what one 100 or 1000 ms run
            // cost, warm-ups included).
            let dur = if ci { 35 } else { 200 };
            let keep: &[u32] = if ci {
                &[1, 16, 64]
            } else {
                &[1, 4, 8, 16, 32, 64, 128]
            };
            let mut v = Vec::new();
            for r in &t.rows {
                let n = num(r, "threads").unwrap_or(0.0) as u32;
                if !keep.contains(&n) {
                    continue;
                }
                let w = if name == "seed01-tbench" {
                    Workload::Tbench { clients: n }
                } else {
                    Workload::NetperfTcpRr { instances: n }
                };
                v.push(Point {
                    key: format!("threads={n}"),
                    published_baseline: num(r, "baseline"),
                    published_patched: num(r, "patched"),
                    published_change: num(r, "change_pct"),
                    baseline: RunSpec {
                        warmup: scale.warmup(),
                        ..spec(&t.machine, &t.cpus, w.clone(), b, dur, seed)?
                    },
                    patched: RunSpec {
                        warmup: scale.warmup(),
                        ..spec(&t.machine, &t.cpus, w, p, dur, seed)?
                    },
                    runs,
                    cap,
                });
            }
            Ok((t, v))
        }
        "seed01-hackbench-3of3" => {
            // Chen Yu's report on Jacobsville (24 CPUs): hackbench threads equal to
            // the CPU count. One group of 12 senders + 12 receivers = 24 threads.
            // Per seed (3 or 5 seeds): about the loops one seed ran before.
            let loops = if ci { 200 } else { 4000 };
            let t = PublishedTable {
                name: name.into(),
                title: "Seed 01 v10 3/3: hackbench with as many threads as CPUs on Jacobsville, cluster-scan (1/3+2/3) vs cluster (1/3-3/3)".into(),
                source: "reference/seeds/01-cluster-wakeup-v10.txt, [PATCH v10 3/3] commit message (Chen Yu's report; no table in the thread)".into(),
                machine: "jacobsville".into(),
                cpus: "all".into(),
                workload: "hackbench".into(),
                baseline: Some("6.6+cluster-scan".into()),
                patched: Some("6.6+cluster".into()),
                unit: "s".into(),
                better: "lower".into(),
                rows: vec![],
                note: Some("The thread reports a regression fixed by 3/3 but publishes no numbers: only the direction is checked (a positive change means 3/3 helps).".into()),
            };
            let w = hackbench(1, 12, loops);
            let v = vec![Point {
                key: "24 threads".into(),
                published_baseline: None,
                published_patched: None,
                published_change: None,
                baseline: spec(
                    "jacobsville",
                    "all",
                    w.clone(),
                    patches("6.6+cluster-scan")?,
                    CAP_MS,
                    seed,
                )?,
                patched: spec(
                    "jacobsville",
                    "all",
                    w,
                    patches("6.6+cluster")?,
                    CAP_MS,
                    seed,
                )?,
                runs,
                cap,
            }];
            Ok((t, v))
        }
        "seed02-hackbench" => {
            let t = find(name)?;
            let (b, p) = (
                patches(t.baseline.as_deref().unwrap_or("5.12"))?,
                patches(t.patched.as_deref().unwrap_or("5.12+no-smt-idle-cores"))?,
            );
            // -l 20000 scaled down; relative times are compared. Per seed (CI: 3
            // seeds of what one ran; full: 5 × 400 = the 2000 one ran).
            let loops = if ci { 100 } else { 400 };
            let keep: &[u32] = if ci {
                &[2, 10]
            } else {
                &[2, 4, 6, 8, 10, 12, 14]
            };
            let mut v = Vec::new();
            for r in &t.rows {
                let g = num(r, "groups").unwrap_or(0.0) as u32;
                if !keep.contains(&g) {
                    continue;
                }
                let w = hackbench(g, 20, loops);
                v.push(Point {
                    key: format!("g={g}"),
                    published_baseline: num(r, "baseline"),
                    published_patched: num(r, "patched"),
                    published_change: num(r, "change_pct"),
                    baseline: spec(&t.machine, &t.cpus, w.clone(), b, CAP_MS, seed)?,
                    patched: spec(&t.machine, &t.cpus, w, p, CAP_MS, seed)?,
                    runs,
                    cap,
                });
            }
            Ok((t, v))
        }
        "seed03-hackbench" => {
            let t = find(name)?;
            let (b, p) = (
                patches(t.baseline.as_deref().unwrap_or("6.5"))?,
                patches(t.patched.as_deref().unwrap_or("6.5+ttwu-l2c"))?,
            );
            // -l 480000 scaled down; -g 32 -f 20 kept (1280 threads on 384 CPUs).
            // CI: 40 loops, the start only (a smoke test of the row); full: past the
            // start (SEED03_LOOPS).
            let loops = if ci { 40 } else { SEED03_LOOPS };
            let r = t.rows.first().cloned().unwrap_or_default();
            let w = hackbench(32, 20, loops);
            let v = vec![Point {
                key: "g=32".into(),
                published_baseline: num(&r, "baseline"),
                published_patched: num(&r, "patched"),
                published_change: num(&r, "change_pct"),
                baseline: spec(&t.machine, &t.cpus, w.clone(), b, CAP_MS, seed)?,
                patched: spec(&t.machine, &t.cpus, w, p, CAP_MS, seed)?,
                runs,
                cap: cap.min(SEED03_CAP),
            }];
            Ok((t, v))
        }
        "seed04-cookie" => {
            let t = find(name)?;
            let iterations = if ci { 60 } else { 1200 };
            let w = |cookies| Workload::CookiePairs {
                threads: 10,
                iterations,
                work: Dist::Uniform {
                    lo: 0,
                    hi: 10_000_000,
                },
                sleep: Dist::Uniform {
                    lo: 0,
                    hi: 30_000_000,
                },
                cookies,
            };
            let get = |c: &str| {
                t.rows
                    .iter()
                    .find(|r| r.get("config").and_then(|x| x.as_str()) == Some(c))
                    .and_then(|r| num(r, "time"))
            };
            let (no, ck, ckp) = (get("no-cookie"), get("cookie"), get("cookie+patch"));
            // The published times are means of 3 runs. One run's cookie overhead varies
            // a lot with the seed (over 20 seeds, standard deviation 0.19 s without the
            // patch and 0.27 s with it, on means of 1.3 s and 0.5 s), so the model's is a
            // mean over SEED04_RUNS seeds: a standard error of about 4 pp on the cut.
            let runs = SEED04_RUNS; // not the scale's: see above
                                    // Rows: the cookie overhead without and with the patch, each against the
                                    // no-cookie run (baseline = no cookies).
            let base = spec(
                "xeon-smt-8",
                "all",
                w(false),
                patches("6.12")?,
                CAP_MS,
                seed,
            )?;
            let v = vec![
                Point {
                    key: "cookies (6.12)".into(),
                    published_baseline: no,
                    published_patched: ck,
                    published_change: change(no, ck),
                    baseline: base.clone(),
                    patched: spec("xeon-smt-8", "all", w(true), patches("6.12")?, CAP_MS, seed)?,
                    runs,
                    cap: runs,
                },
                Point {
                    key: "cookies (6.12+cookie-fastpath)".into(),
                    published_baseline: no,
                    published_patched: ckp,
                    published_change: change(no, ckp),
                    baseline: base,
                    patched: spec(
                        "xeon-smt-8",
                        "all",
                        w(true),
                        patches("6.12+cookie-fastpath")?,
                        CAP_MS,
                        seed,
                    )?,
                    runs,
                    cap: runs,
                },
            ];
            Ok((t, v))
        }
        other => Err(ReproError::Unknown {
            name: other.to_string(),
            known: EXPERIMENTS.join(", "),
        }),
    }
}

fn change(base: Option<f64>, patched: Option<f64>) -> Option<f64> {
    Some(change_pct(base?, patched?, false))
}
