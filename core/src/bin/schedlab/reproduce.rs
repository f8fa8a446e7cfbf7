//! `schedlab reproduce [--all | NAME...] [--scale full|ci] [--format table|json]
//! [--cost-off TERMS] [--noise quiet|default]`: the seeds' published tables next to
//! the model's.
//!
//! `schedlab reproduce [--all | NAME...] --contributions [--scale full|ci] [--format
//! table|json]`: the same once with everything on and once per switch (each cost term
//! off, then quiet noise), as docs/fidelity.md's markdown tables of what each mechanism
//! contributes (`reproduce::Contributions`).
//!
//! `schedlab reproduce NAME --scale page [--format table|csv|json]`: the page's
//! example of that experiment (its shorter runs, `reproduce::Example::sweep_spec`),
//! written as the page's "with published" downloads (`experiment::export`'s
//! `sweep_csv_published` and `sweep_json_published`), byte for byte.

use clap::ValueEnum;
use serde::Serialize;

use schedlab_core::cost::CostTerms;
use schedlab_core::experiment::{self, export};
use schedlab_core::reproduce::{self, Contributions, Reproduction, Scale, Switch, EXPERIMENTS};
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
    /// cache-refill, tg-line (one column of --contributions).
    #[arg(long, default_value = "")]
    cost_off: String,
    /// The machine's background activity in every run: `default` (the osnoise
    /// tracer's documented rates) or `quiet` (none), as `run --noise` takes it
    /// (`quiet` is one column of --contributions).
    #[arg(long, default_value = "default", value_parser = Noise::parse)]
    noise: Noise,
    /// Run the experiments once with everything on and once per switch (each cost
    /// term off, then `--noise quiet`) and print docs/fidelity.md's tables of what
    /// each mechanism contributes, in markdown (JSON with --format json).
    #[arg(long, conflicts_with_all = ["cost_off", "noise"])]
    contributions: bool,
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
        ReproScale::Page if a.contributions => return Err(CONTRIBUTIONS_NOT_PAGE.into()),
        ReproScale::Page => return page(&a),
    };
    if a.format == ReproFormat::Csv {
        return Err(if a.contributions {
            CONTRIBUTIONS_NOT_CSV
        } else {
            CSV_NEEDS_PAGE
        }
        .into());
    }
    let names = selected(&a)?;
    if a.contributions {
        return contributions(&names, scale, a.format);
    }
    let r = reproduction(&names, scale, crate::sim::cost_terms(&a.cost_off)?, a.noise)?;
    Ok(match a.format {
        ReproFormat::Table => {
            let mut out = String::new();
            for t in &r.tables {
                out.push_str(&t.render());
                out.push('\n');
            }
            let s = &r.summary;
            out.push_str(&format!(
                "summary: sign right {}/{} (rows with |published| >= 3%), size within 4 pp {}/{}, magnitude {}/{}; {} runs in {} round{}, {:.1} s wall\n",
                s.sign_ok, s.sign_checked, s.size_ok, s.size_checked,
                s.magnitude_ok, s.magnitude_checked, r.runs, r.rounds,
                if r.rounds == 1 { "" } else { "s" }, r.wall_s
            ));
            out
        }
        ReproFormat::Csv => return Err(CSV_NEEDS_PAGE.into()),
        ReproFormat::Json => json(&r)?,
    })
}

fn json(v: &impl Serialize) -> Result<String, String> {
    Ok(serde_json::to_string_pretty(v).map_err(|e| e.to_string())? + "\n")
}

/// The experiments `names`, every run with `terms` and `noise`: round after round
/// (`reproduce::more`: the first is `plan`'s, then more seeds for the rows not yet
/// settled), every run of every experiment's round in one parallel batch; each run
/// stays single-threaded and deterministic, and each round depends only on the
/// reports before it.
fn reproduction(
    names: &[String],
    scale: Scale,
    terms: CostTerms,
    noise: Noise,
) -> Result<Reproduction, String> {
    let t0 = crate::wall_clock();
    let mut reports: Vec<Vec<experiment::RunReport>> = names.iter().map(|_| Vec::new()).collect();
    let mut rounds = 0u32;
    loop {
        let mut batch = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let specs = reproduce::more(n, scale, &reports[i]).map_err(|e| e.to_string())?;
            for mut s in specs {
                s.cost_terms = terms;
                s.noise = noise;
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
    Ok(Reproduction {
        summary: reproduce::summary(&tables),
        tables,
        runs: reports.iter().map(Vec::len).sum(),
        rounds,
        wall_s: t0.elapsed().as_secs_f64(),
    })
}

/// `--contributions`: the experiments `names` once with everything on and once per
/// switch (`reproduce::Switch::all`), one after another, each as a plain `reproduce`
/// with that switch's flag runs them; docs/fidelity.md's tables of what each
/// mechanism contributes.
fn contributions(names: &[String], scale: Scale, format: ReproFormat) -> Result<String, String> {
    let mut columns = Vec::new();
    for s in Switch::all() {
        let terms = s.cost_terms().map_err(|e| e.to_string())?;
        columns.push((s, reproduction(names, scale, terms, s.noise())?));
    }
    let c = Contributions::new(columns).map_err(|e| e.to_string())?;
    match format {
        ReproFormat::Json => json(&c),
        ReproFormat::Table => Ok(c.markdown()),
        ReproFormat::Csv => Err(CONTRIBUTIONS_NOT_CSV.into()),
    }
}

const CONTRIBUTIONS_NOT_CSV: &str =
    "--contributions prints markdown tables (--format table) or JSON (--format json), not CSV";

const CONTRIBUTIONS_NOT_PAGE: &str =
    "--contributions runs the full or CI tables (--scale full or ci), not the page's example";

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

    /// Every baseline and patched digest of `tables` (a reproduction's JSON), in table,
    /// row and seed order.
    fn digests_of(tables: &serde_json::Value) -> Vec<String> {
        let mut d = Vec::new();
        for t in tables.as_array().unwrap() {
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

    /// A CI-scale seed 04 reproduction with `args`, as JSON.
    fn seed04_ci(args: &[&str]) -> serde_json::Value {
        let mut argv = vec!["seed04-cookie", "--scale", "ci", "-f", "json"];
        argv.extend_from_slice(args);
        serde_json::from_str(&run_args(&argv).unwrap()).unwrap()
    }

    /// Every baseline and patched digest of a CI-scale seed 04 run, in row and seed order.
    fn digests(args: &[&str]) -> Vec<String> {
        digests_of(&seed04_ci(args)["tables"])
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

    /// `--contributions` runs each column as `reproduce` with its switch's flag runs it
    /// (the same digests, seed by seed: not the all-on runs again, not another
    /// switch's), and a switch that changes the experiment shows another cell than
    /// all on: each of the four moves seed 04's cookie row at CI size.
    #[test]
    fn each_contributions_column_is_its_switch_s_own_runs() {
        let out = seed04_ci(&["--contributions"]);
        let columns = out["columns"].as_array().unwrap();
        let switches = Switch::all();
        assert_eq!(columns.len(), switches.len());
        for (c, s) in columns.iter().zip(&switches) {
            assert_eq!(c["label"], s.label());
            let flag = c["flag"].as_str().unwrap();
            assert_eq!(flag, s.flag());
            let flag: Vec<&str> = flag.split_whitespace().collect();
            assert!(
                digests_of(&c["tables"]) == digests(&flag),
                "the column {flag:?} is not `reproduce` with that flag, run for run"
            );
        }
        let rows = out["rows"].as_array().unwrap();
        let cookie = rows
            .iter()
            .find(|r| r["key"] == "cookies (6.12)")
            .expect("seed 04's cookie row (published -6.03%) is shown");
        let cells = cookie["cells"].as_array().unwrap();
        assert_eq!(cells.len(), switches.len());
        for (c, s) in cells.iter().zip(&switches).skip(1) {
            assert_ne!(c["change_pct"], cells[0]["change_pct"], "{}", s.label());
        }
    }

    /// `--contributions` sets every run's switches itself: a switch of its own, a
    /// page or a CSV alongside is refused with a message, never run or panicked on.
    #[test]
    fn contributions_refuses_flags_it_cannot_honour() {
        for args in [
            &["reproduce", "--contributions", "--cost-off", "rq-lock"][..],
            &["reproduce", "--contributions", "--noise", "quiet"],
            &["reproduce", "--contributions", "--noise", "default"],
        ] {
            let e = Flags::try_parse_from(args).err().expect("refused");
            assert!(
                e.to_string().contains("cannot be used with"),
                "{args:?}: {e}"
            );
        }
        let e = run_args(&["--contributions", "--scale", "page", "seed04-cookie"]).unwrap_err();
        assert_eq!(e, CONTRIBUTIONS_NOT_PAGE);
        let e = run_args(&["--contributions", "-f", "csv", "seed04-cookie"]).unwrap_err();
        assert_eq!(e, CONTRIBUTIONS_NOT_CSV);
        let e = run_args(&["--contributions", "nope"]).unwrap_err();
        assert!(e.contains("\"nope\""), "{e}");
    }
}
