//! Running a reproduction: the runs an experiment needs ([`plan`]), the table built
//! from their reports ([`assemble`]), or both serially ([`reproduce`]).

use crate::experiment::{self, change_pct, RunReport, RunSpec};

use super::checks::{magnitude_check, sign_check, sign_check_of_means, size_check};
use super::points::{points, Point};
use super::{published, ReproError, ReproRow, ReproTable, Scale};

/// The runs an experiment needs, in order (baseline, patched per row), so callers can
/// run them in parallel and hand the reports to [`assemble`].
pub fn plan(name: &str, scale: Scale) -> Result<Vec<RunSpec>, ReproError> {
    let tables = published()?;
    let (_, pts) = points(name, scale, &tables)?;
    Ok(pts.iter().flat_map(Point::specs).collect())
}

/// Builds the table from the reports of [`plan`] (same order).
pub fn assemble(name: &str, scale: Scale, reports: &[RunReport]) -> Result<ReproTable, ReproError> {
    let tables = published()?;
    let (t, pts) = points(name, scale, &tables)?;
    let expected: usize = pts.iter().map(|p| 2 * p.runs as usize).sum();
    if reports.len() != expected {
        return Err(ReproError::Setup(format!(
            "{name}: expected {expected} reports, got {}",
            reports.len()
        )));
    }
    let mut rest = reports;
    let kunpeng_throughput = t.kunpeng_throughput();
    let mut rows: Vec<ReproRow> = pts
        .iter()
        .map(|p| {
            let (runs, tail) = rest.split_at(2 * p.runs as usize);
            rest = tail;
            let (b, q) = runs.split_at(p.runs as usize);
            let ab = experiment::ab_stats(b, q)
                .map_err(|e| ReproError::Setup(format!("{name} {}: {e}", p.key)))?;
            let (bv, qv) = (ab.baseline.mean, ab.patched.mean);
            let model_change = ab.change_pct.mean;
            let sign_ok = sign_check(p.published_change, &ab.change_pct);
            let size_ok = size_check(p.published_change, model_change);
            let magnitude_ok = if kunpeng_throughput {
                magnitude_check(p.published_baseline, bv)
            } else {
                None
            };
            Ok(ReproRow {
                key: p.key.clone(),
                published_baseline: p.published_baseline,
                published_patched: p.published_patched,
                published_change_pct: p.published_change,
                model_baseline: bv,
                model_patched: qv,
                model_change_pct: model_change,
                model_change_lo: ab.change_pct.lo,
                model_change_hi: ab.change_pct.hi,
                seeds: p.runs,
                per_seed: ab.seeds,
                sign_ok,
                size_ok,
                magnitude_ok,
                events: runs.iter().map(|r| r.events).sum(),
            })
        })
        .collect::<Result<_, ReproError>>()?;
    if name == "seed04-cookie" && rows.len() == 2 {
        // Seed 04's headline: the share of the cookie overhead the patch removes.
        let (without, with) = (&rows[0], &rows[1]);
        let pub_over = without
            .published_patched
            .zip(without.published_baseline)
            .map(|(c, n)| c - n);
        let pub_over_p = with
            .published_patched
            .zip(with.published_baseline)
            .map(|(c, n)| c - n);
        let model_over = without.model_patched - without.model_baseline;
        let model_over_p = with.model_patched - with.model_baseline;
        let pub_cut = pub_over
            .zip(pub_over_p)
            .map(|(a, b)| change_pct(a, b, false));
        let model_cut = change_pct(model_over, model_over_p, false);
        rows.push(ReproRow {
            key: "overhead cut by the patch".into(),
            published_baseline: pub_over,
            published_patched: pub_over_p,
            published_change_pct: pub_cut,
            model_baseline: model_over,
            model_patched: model_over_p,
            model_change_pct: model_cut,
            // Derived from the means: a per-seed cut divides by a per-seed overhead
            // that can be near 0, so this row has no interval: its sign is checked on
            // the means (`sign_check_of_means`).
            model_change_lo: None,
            model_change_hi: None,
            seeds: without.seeds,
            per_seed: Vec::new(),
            sign_ok: sign_check_of_means(pub_cut, model_cut),
            size_ok: size_check(pub_cut, model_cut),
            magnitude_ok: None,
            events: 0,
        });
    }
    let window = pts
        .first()
        .filter(|p| !p.baseline.workload.runs_to_completion())
        .map(|p| {
            format!(
                "{} ms measured after {}, counted from the benchmark's start",
                p.baseline.duration_ms,
                p.baseline.warmup.describe()
            )
        });
    Ok(ReproTable {
        window,
        name: t.name.clone(),
        title: t.title.clone(),
        source: t.source.clone(),
        unit: t.unit.clone(),
        baseline: t
            .baseline
            .clone()
            .unwrap_or_else(|| "6.12 without cookies".into()),
        patched: t
            .patched
            .clone()
            .unwrap_or_else(|| "6.12 with cookies (with and without cookie-fastpath)".into()),
        scale,
        rows,
        note: t.note.clone(),
    })
}

/// Runs an experiment serially (the CLI runs [`plan`]'s points in parallel instead).
pub fn reproduce(name: &str, scale: Scale) -> Result<ReproTable, ReproError> {
    let specs = plan(name, scale)?;
    let reports = specs
        .iter()
        .map(|s| {
            experiment::run(s).map_err(|err| ReproError::Sim {
                name: name.to_string(),
                err,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    assemble(name, scale, &reports)
}
