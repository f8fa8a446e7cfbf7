//! Runs and sweeps written as CSV and JSON: the bytes of `schedlab run|sweep --format
//! csv|json` and of the page's downloads, which are the same function over the same
//! values (the page's workers send their `RunReport`s whole; `web/` builds the rows
//! with [`sweep_rows`] as the CLI does).
//!
//! ```text
//!  [RunReport] (one side, seeds in order) ──run_csv()──▶ one row per seed, every metric
//!                                         ──run_json()─▶ the first seed's report (+ over_seeds)
//!  [RunReport] (SweepSpec::points order) ──sweep_rows()──▶ [SweepRow] ──sweep_csv() / sweep_json()
//! ```
//!
//! Wall time is the caller's measurement (core has no clock): the JSON forms carry
//! `wall_ms` and `events_per_s` from the `wall_s` they are given, so two callers'
//! JSON differ in those two values only; the CSV forms have no wall time and are equal
//! byte for byte for the same runs.

use serde_json::json;
use thiserror::Error;

use super::{ab_stats, AbError, RunReport, SweepRow};
use crate::patch::PatchSet;
use crate::stats::Estimate;

/// Why a run or sweep could not be written.
#[derive(Debug, Error)]
pub enum ExportError {
    #[error("no runs to write")]
    Empty,
    #[error(transparent)]
    Pairing(#[from] AbError),
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break,
/// quotes doubled.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The sweep's rows from the reports of its points, in `SweepSpec::points()` order:
/// per scale of `threads`, the baseline's `seeds` seeds, then the patched kernel's.
pub fn sweep_rows(
    threads: &[u32],
    seeds: u32,
    reports: &[RunReport],
) -> Result<Vec<SweepRow>, AbError> {
    let k = seeds.max(1) as usize;
    let expected = 2 * k * threads.len();
    if reports.len() != expected {
        return Err(AbError::Count {
            expected,
            got: reports.len(),
        });
    }
    threads
        .iter()
        .zip(reports.chunks(2 * k))
        .map(|(&n, runs)| {
            let (b, p) = runs.split_at(k);
            let ab = ab_stats(b, p)?;
            Ok(SweepRow {
                threads: n,
                baseline: ab.baseline.mean,
                patched: ab.patched.mean,
                change_pct: ab.change_pct.mean,
                change_lo: ab.change_pct.lo,
                change_hi: ab.change_pct.hi,
                baseline_events: b.iter().map(|r| r.events).sum(),
                patched_events: p.iter().map(|r| r.events).sum(),
                seeds: ab.seeds,
            })
        })
        .collect()
}

/// `schedlab sweep --format csv`: a row per scale, the change's interval empty with
/// one seed.
pub fn sweep_csv(rows: &[SweepRow]) -> String {
    let mut o = String::from("threads,baseline,patched,change_pct,change_lo,change_hi\n");
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_default();
    for r in rows {
        o += &format!(
            "{},{:.4},{:.4},{:.2},{},{}\n",
            r.threads,
            r.baseline,
            r.patched,
            r.change_pct,
            opt(r.change_lo),
            opt(r.change_hi)
        );
    }
    o
}

/// The published numbers a sweep is set beside: one seed's experiment (core's
/// `reproduce::Example`, which the page's examples and `schedlab reproduce NAME
/// --scale page` run).
#[derive(Clone, Copy, Debug)]
pub struct Published<'a> {
    /// The experiment's name (`seed01-tbench`).
    pub name: &'a str,
    /// Where the numbers come from.
    pub source: &'a str,
    /// Per scale, the published change %, positive when the patched kernel is better.
    pub change: &'a [(u32, f64)],
    /// Per scale, the published baseline and patched numbers in the model's units.
    pub values: &'a [(u32, f64, f64)],
}

/// The published numbers of scale `threads`: its change %, and its baseline and
/// patched numbers where they are in the model's units.
fn published_at(
    change: &[(u32, f64)],
    values: &[(u32, f64, f64)],
    threads: u32,
) -> (Option<f64>, Option<(f64, f64)>) {
    let c = change.iter().find(|(t, _)| *t == threads).map(|c| c.1);
    let v = values
        .iter()
        .find(|(t, _, _)| *t == threads)
        .map(|v| (v.1, v.2));
    (c, v)
}

/// [`sweep_csv`] with the published numbers beside each row (the page's seed
/// examples, core's `reproduce::Example`): `published_change_pct`, and
/// `published_baseline` / `published_patched` where they are in the model's units;
/// empty where a scale has none. `schedlab reproduce NAME --scale page --format csv`
/// writes it for the runs the page makes.
pub fn sweep_csv_published(
    rows: &[SweepRow],
    change: &[(u32, f64)],
    values: &[(u32, f64, f64)],
) -> String {
    let mut lines = sweep_csv(rows)
        .lines()
        .map(str::to_string)
        .collect::<Vec<_>>();
    if let Some(head) = lines.first_mut() {
        head.push_str(",published_change_pct,published_baseline,published_patched");
    }
    for (line, r) in lines.iter_mut().skip(1).zip(rows) {
        let (c, v) = published_at(change, values, r.threads);
        line.push_str(&format!(
            ",{},{},{}",
            c.map(|c| format!("{c:.2}")).unwrap_or_default(),
            v.map(|v| format!("{:.4}", v.0)).unwrap_or_default(),
            v.map(|v| format!("{:.4}", v.1)).unwrap_or_default()
        ));
    }
    lines.into_iter().map(|l| l + "\n").collect()
}

/// `schedlab sweep --format json`: the sweep's setting, its rows (with every seed's
/// numbers and digests), and the caller's wall time.
pub fn sweep_json(
    reports: &[RunReport],
    rows: &[SweepRow],
    baseline: PatchSet,
    patched: PatchSet,
    seeds: u32,
    wall_s: f64,
) -> Result<String, ExportError> {
    let v = sweep_value(reports, rows, baseline, patched, seeds, wall_s)?;
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

/// [`sweep_json`] with the published numbers: the experiment's `name` and `source`,
/// and in each row `published_change_pct`, `published_baseline` and
/// `published_patched` (null where the scale has none), as [`sweep_csv_published`]
/// adds them. `schedlab reproduce NAME --scale page --format json` writes it.
pub fn sweep_json_published(
    reports: &[RunReport],
    rows: &[SweepRow],
    (baseline, patched): (PatchSet, PatchSet),
    seeds: u32,
    wall_s: f64,
    published: &Published,
) -> Result<String, ExportError> {
    let mut v = sweep_value(reports, rows, baseline, patched, seeds, wall_s)?;
    v["experiment"] = json!(published.name);
    v["source"] = json!(published.source);
    if let Some(out) = v["rows"].as_array_mut() {
        for (row, r) in out.iter_mut().zip(rows) {
            let (c, x) = published_at(published.change, published.values, r.threads);
            row["published_change_pct"] = json!(c);
            row["published_baseline"] = json!(x.map(|x| x.0));
            row["published_patched"] = json!(x.map(|x| x.1));
        }
    }
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

fn sweep_value(
    reports: &[RunReport],
    rows: &[SweepRow],
    baseline: PatchSet,
    patched: PatchSet,
    seeds: u32,
    wall_s: f64,
) -> Result<serde_json::Value, ExportError> {
    let first = reports.first().ok_or(ExportError::Empty)?;
    let events: u64 = reports.iter().map(|r| r.events).sum();
    let v = json!({
        "machine": first.machine,
        "cpus": first.cpus,
        "workload": first.workload.name(),
        "unit": first.unit,
        "higher_is_better": first.higher_is_better,
        "baseline": baseline.to_string(),
        "patched": patched.to_string(),
        "seeds": seeds,
        "rows": rows,
        "events": events,
        "wall_ms": wall_s * 1e3,
        "events_per_s": events as f64 / wall_s.max(1e-9),
    });
    Ok(v)
}

/// `schedlab run --format json`: the first seed's report whole, the caller's wall time
/// over all of them, and with more than one seed their mean, 95% interval and each
/// seed's number and digest (`over_seeds`).
pub fn run_json(reports: &[RunReport], wall_s: f64) -> Result<String, ExportError> {
    let r = reports.first().ok_or(ExportError::Empty)?;
    let events: u64 = reports.iter().map(|r| r.events).sum();
    let values: Vec<f64> = reports.iter().map(|r| r.value).collect();
    let over = Estimate::of(&values).filter(|_| reports.len() > 1);
    let mut v = serde_json::to_value(r)?;
    v["wall_ms"] = json!(wall_s * 1e3);
    v["events_per_s"] = json!(events as f64 / wall_s.max(1e-9));
    if let Some(e) = over {
        v["over_seeds"] = json!({
            "n": e.n, "mean": e.mean, "lo": e.lo, "hi": e.hi,
            "runs": reports.iter().map(|r| json!({
                "seed": r.seed, "value": r.value, "events": r.events, "digest": r.digest,
            })).collect::<Vec<_>>(),
        });
    }
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

/// A column of [`run_csv`]: its header and how a report writes its field.
type Column = (&'static str, fn(&RunReport) -> String);

/// The fixed columns of [`run_csv`], before the placement classes: each name beside
/// how a report writes it, so a column cannot lose its header.
const RUN_COLUMNS: &[Column] = &[
    ("machine", |r| csv_field(&r.machine)),
    ("cpus", |r| csv_field(&r.cpus)),
    ("patches", |r| csv_field(&r.patches)),
    ("workload", |r| r.workload.name().to_string()),
    ("threads", |r| r.workload.threads().to_string()),
    ("seed", |r| r.seed.to_string()),
    ("value", |r| r.value.to_string()),
    ("unit", |r| csv_field(&r.unit)),
    ("higher_is_better", |r| r.higher_is_better.to_string()),
    ("sim_ns", |r| r.sim_ns.to_string()),
    ("events", |r| r.events.to_string()),
    ("digest", |r| r.digest.clone()),
    ("cost_family", |r| csv_field(&r.cost_family)),
    ("window_ns", |r| r.metrics.window_ns.to_string()),
    ("units", |r| r.metrics.units.to_string()),
    ("wakeups", |r| r.metrics.wakeups.to_string()),
    ("wake_local", |r| r.metrics.wake_local.to_string()),
    ("wake_ipi", |r| r.metrics.wake_ipi.to_string()),
    ("wake_polling", |r| r.metrics.wake_polling.to_string()),
    ("wake_remote_lock", |r| {
        r.metrics.wake_remote_lock.to_string()
    }),
    ("cpus_probed_mean_x100", |r| {
        r.metrics.cpus_probed_mean_x100.to_string()
    }),
    ("cpus_probed_p99", |r| r.metrics.cpus_probed.p99.to_string()),
    ("cpus_probed_max", |r| r.metrics.cpus_probed.max.to_string()),
    ("wake_latency_p50_ns", |r| {
        r.metrics.wake_latency_ns.p50.to_string()
    }),
    ("wake_latency_p90_ns", |r| {
        r.metrics.wake_latency_ns.p90.to_string()
    }),
    ("wake_latency_p99_ns", |r| {
        r.metrics.wake_latency_ns.p99.to_string()
    }),
    ("wake_latency_p999_ns", |r| {
        r.metrics.wake_latency_ns.p999.to_string()
    }),
    ("wake_latency_max_ns", |r| {
        r.metrics.wake_latency_ns.max.to_string()
    }),
    ("task_wake_latency_p99_ns", |r| {
        r.metrics.task_wake_latency_ns.p99.to_string()
    }),
    ("lock_wait_mean_ns", |r| {
        r.metrics.lock_wait_ns.mean.to_string()
    }),
    ("lock_wait_p99_ns", |r| {
        r.metrics.lock_wait_ns.p99.to_string()
    }),
    ("llc_line_reads", |r| r.metrics.llc_line_reads.to_string()),
    ("llc_line_misses", |r| r.metrics.llc_line_misses.to_string()),
    ("tg_line_reads", |r| r.metrics.tg_line_reads.to_string()),
    ("tg_line_writes", |r| r.metrics.tg_line_writes.to_string()),
    ("tg_line_misses", |r| r.metrics.tg_line_misses.to_string()),
    ("tg_line_ns", |r| r.metrics.tg_line_ns.to_string()),
    ("migrations_wakeup", |r| {
        r.metrics.migrations_wakeup.to_string()
    }),
    ("migrations_balance", |r| {
        r.metrics.migrations_balance.to_string()
    }),
    ("core_steals", |r| r.metrics.core_steals.to_string()),
    ("active_balances", |r| r.metrics.active_balances.to_string()),
    ("context_switches", |r| {
        r.metrics.context_switches.to_string()
    }),
    ("preemptions", |r| r.metrics.preemptions.to_string()),
    ("newidle_empty", |r| r.metrics.newidle_empty.to_string()),
    ("newidle_empty_ns", |r| {
        r.metrics.newidle_empty_ns.to_string()
    }),
    ("newidle_cut", |r| r.metrics.newidle_cut.to_string()),
    ("wake_on_cpu", |r| r.metrics.wake_on_cpu.to_string()),
    ("wake_on_cpu_spin", |r| {
        r.metrics.wake_on_cpu_spin.to_string()
    }),
    ("wake_on_cpu_spin_ns", |r| {
        r.metrics.wake_on_cpu_spin_ns.to_string()
    }),
    ("force_idle_ns", |r| r.metrics.force_idle_ns.to_string()),
];

/// `schedlab run --format csv`: one row per report (per seed, in the order given)
/// with every scalar metric, then a `wakeups_to_CLASS` column per placement class
/// (the classes of all the reports, in their first report's order). The page's
/// results table writes both sides' rows under one header: A's rows, then B's.
pub fn run_csv(reports: &[RunReport]) -> String {
    let mut classes: Vec<&str> = Vec::new();
    for r in reports {
        for (name, _) in &r.metrics.placement {
            if !classes.contains(&name.as_str()) {
                classes.push(name);
            }
        }
    }
    let mut o = RUN_COLUMNS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(",");
    for c in &classes {
        o += ",";
        o += &csv_field(&format!("wakeups_to_{c}"));
    }
    o += "\n";
    for r in reports {
        let m = &r.metrics;
        let fields: Vec<String> = RUN_COLUMNS.iter().map(|(_, field)| field(r)).collect();
        o += &fields.join(",");
        for c in &classes {
            let n = m
                .placement
                .iter()
                .find(|(name, _)| name == c)
                .map_or(0, |p| p.1);
            o += &format!(",{n}");
        }
        o += "\n";
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{run, RunSpec, SweepSpec};
    use crate::workload::Workload;

    fn spec(patches: &str, seed: u64) -> RunSpec {
        RunSpec::on_preset(
            "kunpeng920-6426",
            "node0",
            patches.parse().unwrap(),
            Workload::NetperfTcpRr { instances: 2 },
            6,
            seed,
        )
        .unwrap()
    }

    #[test]
    fn csv_fields_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_field("0-31"), "0-31");
        assert_eq!(csv_field("0-31,64"), "\"0-31,64\"");
        assert_eq!(csv_field("a \"b\""), "\"a \"\"b\"\"\"");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }

    /// `sweep_rows` is `SweepSpec::rows`: the same rows from the same reports.
    #[test]
    fn sweep_rows_are_the_sweeps_rows() {
        let sw = SweepSpec {
            base: spec("6.6", 1),
            threads: vec![2, 1],
            baseline: "6.6".parse().unwrap(),
            patched: "6.6+cluster".parse().unwrap(),
            seeds: 2,
        };
        let reports: Vec<RunReport> = sw.points().iter().map(|s| run(s).unwrap()).collect();
        let rows = sweep_rows(&sw.threads, sw.seeds, &reports).unwrap();
        assert_eq!(
            serde_json::to_string(&rows).unwrap(),
            serde_json::to_string(&sw.rows(&reports).unwrap()).unwrap()
        );
        let csv = sweep_csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3, "{csv}");
        assert!(
            lines[1].starts_with("2,") && lines[2].starts_with("1,"),
            "{csv}"
        );
        assert_eq!(lines[1].split(',').count(), 6, "{csv}");
        assert!(sweep_rows(&sw.threads, 3, &reports).is_err());
        let json = sweep_json(&reports, &rows, sw.baseline, sw.patched, 2, 0.5).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["wall_ms"], 500.0);
        assert_eq!(v["workload"], "netperf-tcp-rr");
        assert_eq!(v["rows"][0]["seeds"][1]["seed"], 2);
        assert!(sweep_json(&[], &rows, sw.baseline, sw.patched, 2, 0.5).is_err());
        let with = sweep_csv_published(&rows, &[(1, 12.5)], &[(1, 10.0, 11.25)]);
        let w: Vec<&str> = with.lines().collect();
        assert!(w[0].ends_with(",published_change_pct,published_baseline,published_patched"));
        assert!(
            w[1].starts_with(lines[1]) && w[1].ends_with(",,,"),
            "{with}"
        );
        assert_eq!(w[2], format!("{},12.50,10.0000,11.2500", lines[2]));
        // The JSON twin: the sweep's JSON, the experiment named, each row's numbers.
        let published = Published {
            name: "seed01-tbench",
            source: "the seed",
            change: &[(1, 12.5)],
            values: &[(1, 10.0, 11.25)],
        };
        let pair = (sw.baseline, sw.patched);
        let pj = sweep_json_published(&reports, &rows, pair, 2, 0.5, &published).unwrap();
        let p: serde_json::Value = serde_json::from_str(&pj).unwrap();
        assert_eq!(p["experiment"], "seed01-tbench");
        assert_eq!(p["rows"][0]["threads"], 2);
        assert!(p["rows"][0]["published_change_pct"].is_null(), "{pj}");
        assert_eq!(p["rows"][1]["published_change_pct"], 12.5);
        assert_eq!(p["rows"][1]["published_patched"], 11.25);
        // Without the added keys it is the sweep's JSON.
        let mut bare = p.clone();
        for k in ["experiment", "source"] {
            bare.as_object_mut().unwrap().remove(k);
        }
        for row in bare["rows"].as_array_mut().unwrap() {
            for k in [
                "published_change_pct",
                "published_baseline",
                "published_patched",
            ] {
                row.as_object_mut().unwrap().remove(k);
            }
        }
        assert_eq!(bare, v);
        assert!(sweep_json_published(&[], &rows, pair, 2, 0.5, &published).is_err());
    }

    /// A report read back from its JSON (as the page's workers send it) writes the
    /// same bytes as the report it came from.
    #[test]
    fn reports_read_back_write_the_same_bytes() {
        let reports: Vec<RunReport> = (1..=2).map(|k| run(&spec("6.6", k)).unwrap()).collect();
        let back: Vec<RunReport> =
            serde_json::from_str(&serde_json::to_string(&reports).unwrap()).unwrap();
        assert_eq!(back, reports);
        assert_eq!(run_csv(&back), run_csv(&reports));
        assert_eq!(
            run_json(&back, 0.25).unwrap(),
            run_json(&reports, 0.25).unwrap()
        );
        let csv = run_csv(&reports);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3, "{csv}");
        let head: Vec<&str> = lines[0].split(',').collect();
        let row: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(head.len(), row.len(), "{csv}");
        assert!(head.iter().any(|h| h.starts_with("wakeups_to_")), "{csv}");
        let col = |name: &str| row[head.iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("digest"), reports[0].digest);
        assert_eq!(col("seed"), "1");
        assert_eq!(col("wakeups"), reports[0].metrics.wakeups.to_string());
        let json: serde_json::Value =
            serde_json::from_str(&run_json(&reports, 0.25).unwrap()).unwrap();
        assert_eq!(json["over_seeds"]["n"], 2);
        assert_eq!(json["digest"], reports[0].digest.as_str());
        assert!(run_json(&reports[..1], 0.25)
            .map(|j| !j.contains("over_seeds"))
            .unwrap());
    }
}
