//! `schedlab reproduce [--all | NAME...] [--scale full|ci] [--format table|json]
//! [--cost-off TERMS] [--noise quiet|default]`: the seeds' published tables next to
//! the model's.
//!
//! `schedlab reproduce NAME --scale page [--format table|csv|json]`: the page's
//! example of that experiment (its shorter runs, `reproduce::Example::sweep_spec`),
//! written as the page's "with published" downloads (`experiment::export`'s
//! `sweep_csv_published` and `sweep_json_published`), byte for byte.

use clap::ValueEnum;
use serde::Serialize;

use schedlab_core::experiment::{self, export};
use schedlab_core::reproduce::{self, ReproTable, Scale, EXPERIMENTS};
use schedlab_core::workload::Noise;

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum ReproFormat {
    Table,
    Json,
    /// The page's "with published" CSV (with `--scale page` only).
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ReproScale {
    /// Every row, full-length runs (what docs/fidelity.md shows).
    Full,
    /// Fewer rows, shorter runs (what the test suite checks).
    Ci,
    /// One experiment as the page's example runs it (its runs and seeds), with the
    /// published numbers beside each row: the page's downloads.
    Page,
}

#[derive(clap::Args)]
pub struct ReproArgs {
    /// Experiments to run (default: all). Known: seed01-tbench, seed01-netperf-tcp-rr,
    /// seed01-hackbench-3of3, seed02-hackbench, seed03-hackbench, seed04-cookie.
    names: Vec<String>,
    /// Run every experiment (the default when no name is given).
    #[arg(long)]
    all: bool,
    #[arg(long, value_enum, default_value = "full")]
    scale: ReproScale,
    #[arg(long, short, value_enum, default_value = "table")]
    format: ReproFormat,
    /// Cost terms to switch off in every run, comma-separated: llc-line, rq-lock,
    /// cache-refill (what docs/fidelity.md's "What each mechanism contributes" uses)
    #[arg(long, default_value = "")]
    cost_off: String,
    /// The machine's background activity in every run: `default` (the osnoise
    /// tracer's documented rates) or `quiet` (none), as `run --noise` takes it
    /// (what docs/fidelity.md's "What each mechanism contributes" uses).
    #[arg(long, default_value = "default", value_parser = Noise::parse)]
    noise: Noise,
}

#[derive(Serialize)]
struct Output<'a> {
    tables: &'a [ReproTable],
    summary: Summary,
    /// Simulations run, over every round and experiment.
    runs: usize,
    rounds: u32,
    wall_s: f64,
}

#[derive(Serialize)]
struct Summary {
    sign_ok: usize,
    sign_checked: usize,
    size_ok: usize,
    size_checked: usize,
    magnitude_ok: usize,
    magnitude_checked: usize,
}

/// The experiments to run: every one with `--all` or no name, else the names given.
/// Every name given must be known, `--all` or not.
fn selected(a: &ReproArgs) -> Result<Vec<String>, String> {
    if let Some(n) = a.names.iter().find(|n| !EXPERIMENTS.contains(&n.as_str())) {
        return Err(reproduce::ReproError::Unknown {
            name: n.clone(),
            known: EXPERIMENTS.join(", "),
        }
        .to_string());
    }
    Ok(if a.all || a.names.is_empty() {
        EXPERIMENTS.iter().map(|s| s.to_string()).collect()
    } else {
        a.names.clone()
    })
}

pub fn run(a: ReproArgs) -> Result<String, String> {
    let scale = match a.scale {
        ReproScale::Full => Scale::Full,
        ReproScale::Ci => Scale::Ci,
        ReproScale::Page => return page(&a),
    };
    if a.format == ReproFormat::Csv {
        return Err(CSV_NEEDS_PAGE.into());
    }
    let names = selected(&a)?;
    let t0 = crate::wall_clock();
    let terms = crate::sim::cost_terms(&a.cost_off)?;
    // Round after round (`reproduce::more`: the first is `plan`'s, then more seeds for
    // the rows not yet settled), every run of every experiment's round in one
    // parallel batch; each run stays single-threaded and deterministic, and each
    // round depends only on the reports before it.
    let mut reports: Vec<Vec<experiment::RunReport>> = names.iter().map(|_| Vec::new()).collect();
    let mut rounds = 0u32;
    loop {
        let mut batch = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let specs = reproduce::more(n, scale, &reports[i]).map_err(|e| e.to_string())?;
            for mut s in specs {
                s.cost_terms = terms;
                s.noise = a.noise;
                batch.push((i, s));
            }
        }
        if batch.is_empty() {
            break;
        }
        rounds += 1;
        // Longest first, estimated as simulated time × scale (threads, groups, pairs).
        let done = crate::par::map_longest_first(
            &batch,
            |(_, s)| s.duration_ms * s.workload.threads() as u64,
            |(i, s)| experiment::run(s).map_err(|e| format!("{}: {e}", names[*i])),
        );
        for ((i, _), r) in batch.iter().zip(done) {
            reports[*i].push(r?);
        }
    }
    let mut tables = Vec::new();
    for (name, part) in names.iter().zip(&reports) {
        tables.push(reproduce::assemble(name, scale, part).map_err(|e| e.to_string())?);
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let runs: usize = reports.iter().map(Vec::len).sum();
    let [s, z, m] = reproduce::summary(&tables);
    let summary = Summary {
        sign_ok: s.0,
        sign_checked: s.1,
        size_ok: z.0,
        size_checked: z.1,
        magnitude_ok: m.0,
        magnitude_checked: m.1,
    };
    Ok(match a.format {
        ReproFormat::Table => {
            let mut out = String::new();
            for t in &tables {
                out.push_str(&t.render());
                out.push('\n');
            }
            out.push_str(&format!(
                "summary: sign right {}/{} (rows with |published| >= 3%), size within 4 pp {}/{}, magnitude {}/{}; {} runs in {} round{}, {:.1} s wall\n",
                summary.sign_ok, summary.sign_checked, summary.size_ok, summary.size_checked,
                summary.magnitude_ok, summary.magnitude_checked, runs, rounds,
                if rounds == 1 { "" } else { "s" }, wall_s
            ));
            out
        }
        ReproFormat::Csv => return Err(CSV_NEEDS_PAGE.into()),
        ReproFormat::Json => {
            serde_json::to_string_pretty(&Output {
                tables: &tables,
                summary,
                runs,
                rounds,
                wall_s,
            })
            .map_err(|e| e.to_string())?
                + "\n"
        }
    })
}

const CSV_NEEDS_PAGE: &str =
    "--format csv writes the page's table of one experiment: add --scale page";

/// `--scale page`: one experiment's page example, run as the page runs it.
fn page(a: &ReproArgs) -> Result<String, String> {
    let [name] = &a.names[..] else {
        return Err(format!(
            "--scale page runs one experiment as the page's example; name one of {}",
            EXPERIMENTS.join(", ")
        ));
    };
    if a.all {
        return Err("--scale page runs one experiment: drop --all".into());
    }
    selected(a)?;
    let examples = reproduce::page_examples().map_err(|e| e.to_string())?;
    let e = examples
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| format!("{name}: the page has no example of it"))?;
    let mut sw = e.sweep_spec().map_err(|e| e.to_string())?;
    sw.base.cost_terms = crate::sim::cost_terms(&a.cost_off)?;
    sw.base.noise = a.noise;
    let t0 = crate::wall_clock();
    let points = sw.points();
    let reports = crate::par::map_longest_first(
        &points,
        |s| s.duration_ms * s.workload.threads() as u64,
        |s| experiment::run(s).map_err(|err| format!("{name}: {err}")),
    )
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let wall_s = t0.elapsed().as_secs_f64();
    let rows = sw.rows(&reports).map_err(|e| e.to_string())?;
    let published = e.published();
    Ok(match a.format {
        ReproFormat::Csv => export::sweep_csv_published(&rows, published.change, published.values),
        ReproFormat::Json => export::sweep_json_published(
            &reports,
            &rows,
            (sw.baseline, sw.patched),
            sw.seeds,
            wall_s,
            &published,
        )
        .map_err(|e| e.to_string())?,
        ReproFormat::Table => {
            let mut o = format!(
                "{} ({}), the page's example: {} against {}, {} seed(s) a side\n{:>8}  {:>14}  {:>14}  {:>26}  {:>10}\n",
                e.title,
                e.source,
                sw.baseline,
                sw.patched,
                sw.seeds,
                "scale",
                "A",
                "B",
                "change [95% interval]",
                "published"
            );
            for r in &rows {
                let iv = r
                    .change_lo
                    .zip(r.change_hi)
                    .map_or_else(String::new, |(lo, hi)| format!(" [{lo:+.2}, {hi:+.2}]"));
                let p = published
                    .change
                    .iter()
                    .find(|(t, _)| *t == r.threads)
                    .map_or_else(|| "–".to_string(), |(_, c)| format!("{c:+.2}%"));
                o += &format!(
                    "{:>8}  {:>14.4}  {:>14.4}  {:>26}  {:>10}\n",
                    r.threads,
                    r.baseline,
                    r.patched,
                    format!("{:+.2}%{iv}", r.change_pct),
                    p
                );
            }
            o += &format!("({} runs, {wall_s:.2} s wall)\n", reports.len());
            o
        }
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        a: ReproArgs,
    }

    fn sel(args: &[&str]) -> Result<Vec<String>, String> {
        let mut argv = vec!["reproduce"];
        argv.extend_from_slice(args);
        selected(&Flags::try_parse_from(argv).unwrap().a)
    }

    /// Issue 16: `reproduce --all nope` ran everything and ignored the unknown name.
    #[test]
    fn unknown_experiment_names_are_refused_with_or_without_all() {
        for args in [
            &["nope"][..],
            &["--all", "nope"],
            &["seed01-tbench", "nope"],
        ] {
            let e = sel(args).unwrap_err();
            assert!(
                e.contains("\"nope\"") && e.contains(&EXPERIMENTS.join(", ")),
                "{e}"
            );
        }
        assert_eq!(sel(&[]).unwrap().len(), EXPERIMENTS.len());
        assert_eq!(
            sel(&["--all", "seed04-cookie"]).unwrap().len(),
            EXPERIMENTS.len()
        );
        assert_eq!(sel(&["seed04-cookie"]).unwrap(), vec!["seed04-cookie"]);
    }

    fn run_args(args: &[&str]) -> Result<String, String> {
        let mut argv = vec!["reproduce"];
        argv.extend_from_slice(args);
        run(Flags::try_parse_from(argv).unwrap().a)
    }

    /// `--scale page` runs one experiment, the page's table; CSV is that table only.
    #[test]
    fn the_page_scale_takes_one_known_experiment_and_csv_needs_it() {
        for args in [
            &["--scale", "page"][..],
            &["--scale", "page", "seed01-tbench", "seed04-cookie"],
            &["--scale", "page", "--all", "seed04-cookie"],
        ] {
            let e = run_args(args).unwrap_err();
            assert!(e.contains("one experiment"), "{args:?}: {e}");
        }
        let e = run_args(&["--scale", "page", "nope"]).unwrap_err();
        assert!(e.contains("\"nope\""), "{e}");
        for args in [
            &["--format", "csv"][..],
            &["--scale", "ci", "-f", "csv", "seed04-cookie"],
        ] {
            assert_eq!(run_args(args).unwrap_err(), CSV_NEEDS_PAGE);
        }
    }

    /// Every baseline and patched digest of a CI-scale seed 04 run, in row and seed order.
    fn digests(args: &[&str]) -> Vec<String> {
        let mut argv = vec!["seed04-cookie", "--scale", "ci", "-f", "json"];
        argv.extend_from_slice(args);
        let out: serde_json::Value = serde_json::from_str(&run_args(&argv).unwrap()).unwrap();
        let mut d = Vec::new();
        for t in out["tables"].as_array().unwrap() {
            for r in t["rows"].as_array().unwrap() {
                for p in r["per_seed"].as_array().unwrap() {
                    for side in ["baseline_digest", "patched_digest"] {
                        d.push(p[side].as_str().unwrap().to_string());
                    }
                }
            }
        }
        d
    }

    /// `--noise quiet` reaches every run (no kthreads, daemons, tick or softirq time,
    /// so every digest moves); `--noise default` is what the flag's absence runs.
    #[test]
    fn noise_quiet_reaches_every_run_and_default_is_the_default() {
        let plain = digests(&[]);
        assert!(!plain.is_empty());
        assert_eq!(digests(&["--noise", "default"]), plain);
        let quiet = digests(&["--noise", "quiet"]);
        assert_eq!(quiet.len(), plain.len());
        for (q, p) in quiet.iter().zip(&plain) {
            assert_ne!(q, p, "a quiet run kept the default run's digest");
        }
        assert!(Flags::try_parse_from(["reproduce", "--noise", "loud"]).is_err());
    }
}
