//! `schedlab reproduce [--all | NAME...] [--scale full|ci] [--format table|json]`:
//! the seeds' published tables next to the model's.

use clap::ValueEnum;
use serde::Serialize;

use schedlab_core::experiment;
use schedlab_core::reproduce::{self, ReproTable, Scale, EXPERIMENTS};

#[derive(Clone, Copy, ValueEnum)]
pub enum ReproFormat {
    Table,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ReproScale {
    /// Every row, full-length runs (what docs/fidelity.md shows).
    Full,
    /// Fewer rows, shorter runs (what the test suite checks).
    Ci,
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
    /// cache-refill (what docs/fidelity.md's with/without rows use)
    #[arg(long, default_value = "")]
    cost_off: String,
}

#[derive(Serialize)]
struct Output<'a> {
    tables: &'a [ReproTable],
    summary: Summary,
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
    };
    let names = selected(&a)?;
    let t0 = crate::wall_clock();
    // Every run of every experiment in one parallel batch; each run stays
    // single-threaded and deterministic.
    let terms = crate::sim::cost_terms(&a.cost_off)?;
    let mut plans = Vec::new();
    for n in &names {
        let mut specs = reproduce::plan(n, scale).map_err(|e| e.to_string())?;
        for s in &mut specs {
            s.cost_terms = terms;
        }
        plans.push((n.clone(), specs));
    }
    let flat: Vec<(usize, usize)> = plans
        .iter()
        .enumerate()
        .flat_map(|(i, (_, specs))| (0..specs.len()).map(move |j| (i, j)))
        .collect();
    // Longest first, estimated as simulated time × scale (threads, groups, pairs).
    let reports = crate::par::map_longest_first(
        &flat,
        |&(i, j)| {
            let s = &plans[i].1[j];
            s.duration_ms * s.workload.threads() as u64
        },
        |&(i, j)| experiment::run(&plans[i].1[j]).map_err(|e| format!("{}: {e}", plans[i].0)),
    )
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let mut tables = Vec::new();
    let mut k = 0;
    for (name, specs) in &plans {
        let part = &reports[k..k + specs.len()];
        k += specs.len();
        tables.push(reproduce::assemble(name, scale, part).map_err(|e| e.to_string())?);
    }
    let wall_s = t0.elapsed().as_secs_f64();
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
                "summary: sign right {}/{} (rows with |published| >= 3%), size within 4 pp {}/{}, magnitude {}/{}; {:.1} s wall\n",
                summary.sign_ok, summary.sign_checked, summary.size_ok, summary.size_checked,
                summary.magnitude_ok, summary.magnitude_checked, wall_s
            ));
            out
        }
        ReproFormat::Json => {
            serde_json::to_string_pretty(&Output {
                tables: &tables,
                summary,
                wall_s,
            })
            .map_err(|e| e.to_string())?
                + "\n"
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
}
