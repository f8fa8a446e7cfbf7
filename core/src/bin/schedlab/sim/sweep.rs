//! `schedlab sweep`: baseline against patched over a list of scales, each point over
//! its seeds, as a table, CSV or JSON.

use clap::{Args, ValueEnum};

use schedlab_core::experiment::{export, SweepSpec};

use super::{headline_meaning, patchset, run_all, seeds_flag, spec, unsettled_note, Common};

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
    /// The kernel to compare against: RELEASE[+PATCH...][-PATCH...], e.g. 6.6.
    #[arg(long)]
    baseline: String,
    /// The kernel under test, e.g. 6.6+cluster: the change column is positive when it
    /// does better than --baseline.
    #[arg(long)]
    patched: String,
    /// Seeds per point and side (--seed, --seed + 1, …): the change is the mean of the
    /// per-seed changes with its 95% interval. 1 gives the single-seed sweep.
    #[arg(long, default_value_t = 5, value_parser = seeds_flag)]
    seeds: u32,
    #[arg(long, short, value_enum, default_value = "table")]
    format: SweepFormat,
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
            // A kernel's column is as wide as its name where that is longer than 16.
            let (b, p) = (baseline.to_string(), patched.to_string());
            let (wb, wp) = (b.len().max(16), p.len().max(16));
            let mut o = format!(
                "{} on {} (CPUs {}): {}\n{:>9}  {b:>wb$}  {p:>wp$}  {:>9}\n",
                a.common.workload_name(),
                reports[0].machine,
                reports[0].cpus,
                headline_meaning(&reports[0]),
                reports[0].workload.scale_name(),
                "change"
            );
            for r in &rows {
                o += &format!(
                    "{:>9}  {:>wb$}  {:>wp$}  {:>+8.2}%{}\n",
                    r.threads,
                    table_value(&reports[0], r.baseline),
                    table_value(&reports[0], r.patched),
                    r.change_pct,
                    interval_note(r.change_lo.zip(r.change_hi))
                );
            }
            o += &format!("(change: positive when {patched} does better than {baseline})\n");
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
            o += &unsettled_note(&reports).unwrap_or_default();
            o
        }
    })
}

/// A table cell: a completion time to the microsecond (as `run` prints it; a sweep of
/// small hackbench runs differs below the millisecond), anything else to 4 decimals.
fn table_value(r: &schedlab_core::experiment::RunReport, v: f64) -> String {
    if r.unit == "s" {
        super::headline_value(r, v)
    } else {
        format!("{v:.4}")
    }
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use schedlab_core::experiment::MAX_SEEDS;

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

    /// The table of a one-point, two-loop hackbench sweep on Jacobsville, 6.6 against
    /// `patched`.
    fn tiny_hackbench_sweep(patched: &str) -> String {
        let f = SweepFlags::try_parse_from([
            "sweep",
            "--machine",
            "jacobsville",
            "--workload",
            "hackbench",
            "--threads",
            "1",
            "--loops",
            "2",
            "--fds",
            "2",
            "--baseline",
            "6.6",
            "--patched",
            patched,
            "--seeds",
            "1",
        ])
        .unwrap();
        sweep(f.a).unwrap()
    }

    /// The table says what its numbers are: the unit and which way is better, the
    /// scale by the benchmark's name for it, and which sign of the change is good.
    #[test]
    fn the_table_labels_its_unit_scale_and_sign() {
        let table = tiny_hackbench_sweep("6.6+cluster");
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].ends_with(": s to completion, lower is better"),
            "{table}"
        );
        assert!(lines[1].trim_start().starts_with("groups"), "{table}");
        let cell = lines[2].split_whitespace().nth(1).unwrap();
        assert_eq!(cell.split('.').nth(1).map(str::len), Some(6), "{table}");
        assert!(
            table.contains("(change: positive when 6.6+cluster does better than 6.6)"),
            "{table}"
        );
    }

    /// The table's columns line up under their headings, also where a kernel's name
    /// is longer than a number's cell (before, `6.6+cluster-scan+ttwu-l2c` pushed its
    /// heading and `change` past the numbers under them).
    #[test]
    fn the_table_keeps_its_columns_under_long_kernel_names() {
        let table = tiny_hackbench_sweep("6.6+cluster-scan+ttwu-l2c");
        // Where each whitespace-separated cell of a line ends.
        let ends = |line: &str| -> Vec<usize> {
            let b = line.as_bytes();
            (0..b.len())
                .filter(|&i| b[i] != b' ' && (i + 1 == b.len() || b[i + 1] == b' '))
                .map(|i| i + 1)
                .collect()
        };
        let lines: Vec<&str> = table.lines().collect();
        let (head, row) = (ends(lines[1]), ends(lines[2]));
        assert_eq!(head.len(), 4, "{table}");
        assert_eq!(head[..], row[..4], "{table}");
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
