//! Running a reproduction: the runs an experiment needs, round by round ([`plan`]
//! for the first, [`more`] for each next one), the table built from all their
//! reports ([`assemble`]), or all of it serially ([`reproduce`]).

use crate::experiment::{self, change_pct, AbStats, RunReport, RunSpec};
use crate::stats::{ratio_interval, Estimate, PooledRuns};

use super::checks::{magnitude_check, settled, sign_check, sign_check_of_means, size_check};
use super::points::{points, Point};
use super::{published, PublishedTable, ReproError, ReproRow, ReproTable, Scale, SETTLED_PP};

/// The first round's runs, in order (per row: its baselines, then its patched runs),
/// so callers can run them in parallel; then [`more`] for the next rounds and
/// [`assemble`] for the table. The same as `more(name, scale, &[])`.
pub fn plan(name: &str, scale: Scale) -> Result<Vec<RunSpec>, ReproError> {
    more(name, scale, &[])
}

/// The next round's runs, given the reports of every round so far in the order they
/// were asked for ([`plan`]'s, then each earlier `more`'s): [`Scale::seeds`] more
/// seeds for each row whose change is not yet settled (its 95% interval half-width
/// above [`SETTLED_PP`]) and under its cap, the next seed numbers;
/// empty when every row is settled or capped. Pure: the same reports give the same
/// runs, so the rounds, and the table, are the same on every run.
pub fn more(name: &str, scale: Scale, reports: &[RunReport]) -> Result<Vec<RunSpec>, ReproError> {
    let tables = published()?;
    let (_, pts) = points(name, scale, &tables)?;
    if reports.is_empty() {
        return Ok(pts.iter().flat_map(|p| p.specs(0, p.runs)).collect());
    }
    let (sides, due) = replay(name, scale, &pts, reports)?;
    Ok(due
        .iter()
        .flat_map(|&i| {
            let (p, done) = (&pts[i], sides[i].0.len() as u32);
            p.specs(done, scale.seeds().min(p.cap - done))
        })
        .collect())
}

/// One row's reports so far: baselines, patched runs.
type Sides = (Vec<RunReport>, Vec<RunReport>);

/// Splits `reports` into rounds as [`plan`] and [`more`] asked for them: round 1 is
/// every row's `runs` seeds, each next round [`Scale::seeds`] more for the rows that
/// were due after the round before. Returns each row's reports and the rows due for
/// another round after the last one given.
fn replay(
    name: &str,
    scale: Scale,
    pts: &[Point],
    reports: &[RunReport],
) -> Result<(Vec<Sides>, Vec<usize>), ReproError> {
    let mut sides: Vec<Sides> = pts.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let mut due: Vec<usize> = (0..pts.len()).collect();
    let mut rest = reports;
    let mut first = true;
    // Bounded: every round takes at least one seed per due row, and a row is due only
    // under its cap.
    while !rest.is_empty() {
        if due.is_empty() {
            return Err(ReproError::Setup(format!(
                "{name}: {} reports more than the rounds asked for",
                rest.len()
            )));
        }
        for &i in &due {
            let (p, done) = (&pts[i], sides[i].0.len() as u32);
            let n = if first {
                p.runs
            } else {
                scale.seeds().min(p.cap - done)
            } as usize;
            if rest.len() < 2 * n {
                return Err(ReproError::Setup(format!(
                    "{name} {}: a round cut short ({} reports left, {} due)",
                    p.key,
                    rest.len(),
                    2 * n
                )));
            }
            let (b, tail) = rest.split_at(n);
            let (q, tail) = tail.split_at(n);
            sides[i].0.extend_from_slice(b);
            sides[i].1.extend_from_slice(q);
            rest = tail;
        }
        first = false;
        due = Vec::new();
        for (i, p) in pts.iter().enumerate() {
            if (sides[i].0.len() as u32) < p.cap && !settled(&stats(name, p, &sides[i])?.change_pct)
            {
                due.push(i);
            }
        }
    }
    Ok((sides, due))
}

fn stats(name: &str, p: &Point, (b, q): &Sides) -> Result<AbStats, ReproError> {
    experiment::ab_stats(b, q).map_err(|e| ReproError::Setup(format!("{name} {}: {e}", p.key)))
}

/// Builds the table from the reports of every round ([`plan`]'s, then each
/// [`more`]'s, in that order) once `more` asks for none: each row over the seeds it
/// ran. Whole rounds short of that give the table so far.
pub fn assemble(name: &str, scale: Scale, reports: &[RunReport]) -> Result<ReproTable, ReproError> {
    let tables = published()?;
    let (t, pts) = points(name, scale, &tables)?;
    if reports.is_empty() {
        return Err(ReproError::Setup(format!("{name}: no reports")));
    }
    let (sides, _) = replay(name, scale, &pts, reports)?;
    let kunpeng_throughput = t.kunpeng_throughput();
    let mut rows: Vec<ReproRow> = pts
        .iter()
        .zip(&sides)
        .map(|(p, side)| {
            let ab = stats(name, p, side)?;
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
                published_change_lo: None,
                published_change_hi: None,
                model_baseline: bv,
                model_patched: qv,
                model_change_pct: model_change,
                model_change_lo: ab.change_pct.lo,
                model_change_hi: ab.change_pct.hi,
                seeds: ab.change_pct.n,
                per_seed: ab.seeds,
                sign_ok,
                size_ok,
                magnitude_ok,
                events: side.0.iter().chain(&side.1).map(|r| r.events).sum(),
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
        let cut_interval = cut_interval(&without.per_seed, &with.per_seed);
        rows.push(ReproRow {
            key: "overhead cut by the patch".into(),
            published_baseline: pub_over,
            published_patched: pub_over_p,
            published_change_pct: pub_cut,
            published_change_lo: None,
            published_change_hi: None,
            model_baseline: model_over,
            model_patched: model_over_p,
            model_change_pct: model_cut,
            // Derived from the means (a per-seed cut divides by a per-seed overhead
            // that can be near 0), with Fieller's interval of the ratio of the two
            // overheads over the shared seeds; without one, the sign is checked on
            // the means (`sign_check_of_means`).
            model_change_lo: cut_interval.map(|(lo, _)| lo),
            model_change_hi: cut_interval.map(|(_, hi)| hi),
            seeds: without.seeds,
            per_seed: Vec::new(),
            sign_ok: match cut_interval {
                Some((lo, hi)) => sign_check(
                    pub_cut,
                    &Estimate {
                        n: without.seeds,
                        mean: model_cut,
                        lo: Some(lo),
                        hi: Some(hi),
                    },
                ),
                None => sign_check_of_means(pub_cut, model_cut),
            },
            size_ok: size_check(pub_cut, model_cut),
            magnitude_ok: None,
            events: 0,
        });
    }
    if name == "seed04-cookie" {
        published_intervals(&t, &mut rows);
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
    let seeding = pts.first().filter(|p| p.cap > p.runs).map(|p| {
        format!(
            "{} seeds per side, then {} more at a time while the change's 95% interval is wider than ±{} pp, up to {}",
            p.runs,
            scale.seeds(),
            SETTLED_PP,
            p.cap
        )
    });
    Ok(ReproTable {
        window,
        seeding,
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

/// Runs an experiment serially, round after round (the CLI runs each round's runs in
/// parallel instead).
pub fn reproduce(name: &str, scale: Scale) -> Result<ReproTable, ReproError> {
    let mut reports = Vec::new();
    // Bounded: `more` asks for nothing once every row is settled or at its cap.
    loop {
        let specs = more(name, scale, &reports)?;
        if specs.is_empty() {
            break;
        }
        for s in &specs {
            reports.push(experiment::run(s).map_err(|err| ReproError::Sim {
                name: name.to_string(),
                err,
            })?);
        }
    }
    assemble(name, scale, &reports)
}

/// Seed 04's published intervals, from the runs its source lists for each
/// configuration (`runs` in published.json): each cookie row's change `100 × (1 −
/// C̄/N̄)` and the derived cut `100 × (1 − (P̄ − N̄)/(C̄ − N̄))`, by Fieller's interval
/// of the ratio with the runs' variance pooled ([`PooledRuns`]). Rows without runs in
/// the data keep `None`.
fn published_intervals(t: &PublishedTable, rows: &mut [ReproRow]) {
    let runs = |config: &str| -> Option<Vec<f64>> {
        let r = t
            .rows
            .iter()
            .find(|r| r.get("config").and_then(|x| x.as_str()) == Some(config))?;
        r.get("runs")?
            .as_array()?
            .iter()
            .map(serde_json::Value::as_f64)
            .collect()
    };
    let (Some(no), Some(ck), Some(ckp)) = (runs("no-cookie"), runs("cookie"), runs("cookie+patch"))
    else {
        return;
    };
    let Some(pooled) = PooledRuns::of(&[&no, &ck, &ckp]) else {
        return;
    };
    // 1 − ρ over ρ's interval, in percent.
    let cut = |iv: Option<(f64, f64)>| iv.map(|(lo, hi)| (100.0 * (1.0 - hi), 100.0 * (1.0 - lo)));
    let ivs = [
        cut(pooled.ratio_interval(1, 0, None)),
        cut(pooled.ratio_interval(2, 0, None)),
        cut(pooled.ratio_interval(2, 1, Some(0))),
    ];
    for (row, iv) in rows.iter_mut().zip(ivs) {
        row.published_change_lo = iv.map(|i| i.0);
        row.published_change_hi = iv.map(|i| i.1);
    }
}

/// The 95% interval of seed 04's derived cut, `100 × (1 − B̄/Ā)` with `A = cookies −
/// none` and `B = cookies with the patch − none` per seed: Fieller's interval of
/// `B̄/Ā` ([`ratio_interval`]), the seeds paired. `None` unless both rows ran the same
/// seeds against the same baseline runs (equal digests), or when the overhead's own
/// interval reaches 0.
fn cut_interval(
    without: &[experiment::SeedPair],
    with: &[experiment::SeedPair],
) -> Option<(f64, f64)> {
    let paired = without.len() == with.len()
        && without
            .iter()
            .zip(with)
            .all(|(a, b)| a.seed == b.seed && a.baseline_digest == b.baseline_digest);
    if !paired {
        return None;
    }
    let over: Vec<f64> = without.iter().map(|s| s.patched - s.baseline).collect();
    let over_p: Vec<f64> = with.iter().map(|s| s.patched - s.baseline).collect();
    ratio_interval(&over_p, &over).map(|(lo, hi)| (100.0 * (1.0 - hi), 100.0 * (1.0 - lo)))
}

#[cfg(test)]
mod tests {
    use super::super::{FULL_FIRST_ROUND, FULL_SEED_CAP};
    use super::*;
    use crate::workload::Workload;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Runs `name`'s rounds without simulating: each spec's report is one real run's
    /// (cheap, CI tbench) with the spec's seed and `value(spec)`. Returns the reports
    /// and each round's seeds per row (seeds of the specs asked for, baselines only).
    fn rounds(
        name: &str,
        scale: Scale,
        value: impl Fn(&RunSpec) -> f64,
    ) -> (Vec<RunReport>, Vec<Vec<u64>>) {
        let template = experiment::run(&plan("seed01-tbench", Scale::Ci).unwrap()[0]).unwrap();
        let (mut reports, mut asked) = (Vec::new(), Vec::new());
        loop {
            let specs = more(name, scale, &reports).unwrap();
            if specs.is_empty() {
                return (reports, asked);
            }
            assert!(asked.len() < 64, "{name}: rounds without end");
            asked.push(specs.iter().map(|s| s.seed).collect());
            reports.extend(specs.iter().map(|s| RunReport {
                seed: s.seed,
                value: value(s),
                ..template.clone()
            }));
        }
    }

    /// `+pp` on odd seeds, `-pp` on even ones: a change that never settles.
    fn swing(seed: u64, pp: f64) -> f64 {
        if seed.is_multiple_of(2) {
            -pp
        } else {
            pp
        }
    }

    /// A one-row table whose baseline runs `base`: the baseline 100, the patched side
    /// `100 + change(seed)`.
    fn one_row(base: &'static str, change: impl Fn(u64) -> f64) -> impl Fn(&RunSpec) -> f64 {
        move |s| {
            if s.patches.to_string() == base {
                100.0
            } else {
                100.0 + change(s.seed)
            }
        }
    }

    /// Seed 03's one row (6.5 against 6.5+ttwu-l2c).
    fn seed03(change: impl Fn(u64) -> f64) -> impl Fn(&RunSpec) -> f64 {
        one_row("6.5", change)
    }

    /// Seed 01 3/3's one row, under the full tables' common cap (seed 03 has its own).
    const JACOBSVILLE: &str = "seed01-hackbench-3of3";
    fn jacobsville(change: impl Fn(u64) -> f64) -> impl Fn(&RunSpec) -> f64 {
        one_row("6.6+cluster-scan", change)
    }

    #[test]
    fn a_settled_row_runs_its_first_round_and_no_more() {
        // Changes of 5% ± 0.5: a half-width of about 0.4 pp at 10 seeds.
        let (reports, asked) = rounds(
            JACOBSVILLE,
            Scale::Full,
            jacobsville(|k| 5.0 + (k % 2) as f64 - 0.5),
        );
        let first: Vec<u64> = (1..=10).chain(1..=10).collect();
        assert_eq!(asked, vec![first]);
        let t = assemble(JACOBSVILLE, Scale::Full, &reports).unwrap();
        assert_eq!(t.rows[0].seeds, FULL_FIRST_ROUND);
        assert!(t.seeding.is_some());
    }

    /// Five seeds whose spread happens to be small would have settled the row (the
    /// rule until session 34); the first round of ten does not stop there and sees
    /// the next five.
    #[test]
    fn five_narrow_seeds_do_not_settle_a_row() {
        // −3 ± 0.5 pp on seeds 1-5 (settled at 5: half-width 0.7 pp), then ±4 pp.
        let change = |k: u64| match k {
            1..=5 => -3.0 + (k % 2) as f64 - 0.5,
            _ => swing(k, 4.0),
        };
        let (reports, asked) = rounds(JACOBSVILLE, Scale::Full, jacobsville(change));
        assert_eq!(asked[0].len() as u32, 2 * FULL_FIRST_ROUND);
        let t = assemble(JACOBSVILLE, Scale::Full, &reports).unwrap();
        let row = &t.rows[0];
        assert!(row.seeds > 5);
        let (lo, hi) = row.interval().unwrap();
        assert!(
            lo < 0.0 && hi > 0.0,
            "the first five's sign is not kept: [{lo}, {hi}]"
        );
    }

    #[test]
    fn a_wide_row_takes_rounds_of_five_more_seeds_until_settled() {
        // ±5 pp on seeds 1-5, then 0 on every later seed: the interval narrows as
        // the zeros come in (±6.8, ±2.6, ±1.6 pp at 5, 10, 15 seeds), and the rounds
        // stop at the first one at or under 2 pp.
        let wide = |k: u64| match k {
            1..=5 => swing(k, 5.0),
            _ => 0.0,
        };
        let (reports, asked) = rounds(JACOBSVILLE, Scale::Full, jacobsville(wide));
        assert!(asked.len() > 1, "one round only");
        let first = u64::from(FULL_FIRST_ROUND);
        for (r, seeds) in asked.iter().enumerate().skip(1) {
            let from = first + 5 * (r as u64 - 1) + 1;
            let next: Vec<u64> = (from..from + 5).chain(from..from + 5).collect();
            assert_eq!(seeds, &next, "round {r}: the next seed numbers, each side");
        }
        let t = assemble(JACOBSVILLE, Scale::Full, &reports).unwrap();
        let row = &t.rows[0];
        assert_eq!(row.seeds, 15);
        assert_eq!(row.seeds as usize, first as usize + 5 * (asked.len() - 1));
        assert!(row.seeds < FULL_SEED_CAP, "settled before the cap");
        let (lo, hi) = row.interval().unwrap();
        assert!((hi - lo) / 2.0 <= SETTLED_PP, "[{lo}, {hi}]");
        // One round fewer was still wide.
        let fewer = 2 * (first as usize + 5 * (asked.len() - 2));
        let before = assemble(JACOBSVILLE, Scale::Full, &reports[..fewer]).unwrap();
        let (lo, hi) = before.rows[0].interval().unwrap();
        assert!((hi - lo) / 2.0 > SETTLED_PP, "[{lo}, {hi}]");
        let seeds: Vec<u64> = row.per_seed.iter().map(|s| s.seed).collect();
        assert_eq!(seeds, (1..=u64::from(row.seeds)).collect::<Vec<_>>());
    }

    #[test]
    fn a_row_that_never_settles_stops_at_the_cap() {
        let never = |k: u64| swing(k, 10.0);
        let (reports, asked) = rounds(JACOBSVILLE, Scale::Full, jacobsville(never));
        assert_eq!(
            asked.len() as u32,
            1 + (FULL_SEED_CAP - FULL_FIRST_ROUND) / Scale::Full.seeds()
        );
        let t = assemble(JACOBSVILLE, Scale::Full, &reports).unwrap();
        assert_eq!(t.rows[0].seeds, FULL_SEED_CAP);
        assert!(more(JACOBSVILLE, Scale::Full, &reports).unwrap().is_empty());
    }

    /// Seed 03's full row runs 4 000 loops a seed and stops at 10 seeds a side (its
    /// budget, points.rs): one round, its first, however wide.
    #[test]
    fn seed03_stops_at_its_own_cap_of_ten() {
        let never = |k: u64| swing(k, 10.0);
        let (reports, asked) = rounds("seed03-hackbench", Scale::Full, seed03(never));
        assert_eq!(asked.len(), 1);
        let t = assemble("seed03-hackbench", Scale::Full, &reports).unwrap();
        assert_eq!(t.rows[0].seeds, 10);
        assert_eq!(t.seeding, None, "{t:?}");
        let (_, pts) =
            super::super::points::points("seed03-hackbench", Scale::Full, &published().unwrap())
                .unwrap();
        assert!(matches!(
            pts[0].baseline.workload,
            Workload::Hackbench { loops: 4_000, .. }
        ));
    }

    /// Seed 02's g=2 wide, every other row settled: only g=2 takes more seeds.
    #[test]
    fn only_the_unsettled_rows_take_more_seeds() {
        let value = |s: &RunSpec| {
            let g2 = matches!(s.workload, Workload::Hackbench { groups: 2, .. });
            let c = if g2 && s.seed.is_multiple_of(2) {
                20.0
            } else {
                1.0
            };
            if s.patches.to_string() == "5.12" {
                100.0
            } else {
                100.0 + c
            }
        };
        let (reports, asked) = rounds("seed02-hackbench", Scale::Full, value);
        assert_eq!(asked[0].len() as u32, 7 * 2 * FULL_FIRST_ROUND);
        assert!(asked.len() > 1 && asked[1..].iter().all(|r| r.len() == 10));
        let t = assemble("seed02-hackbench", Scale::Full, &reports).unwrap();
        let n: Vec<(String, u32)> = t.rows.iter().map(|r| (r.key.clone(), r.seeds)).collect();
        assert!(n[0].1 > FULL_FIRST_ROUND, "{n:?}");
        assert!(n[1..].iter().all(|(_, k)| *k == FULL_FIRST_ROUND), "{n:?}");
    }

    /// CI keeps its 3 seeds and seed 04 its 32, however wide.
    #[test]
    fn ci_and_seed04_run_one_round() {
        let never = |s: &RunSpec| 100.0 + swing(s.seed, 10.0);
        for (name, scale, n) in [
            ("seed03-hackbench", Scale::Ci, 3),
            ("seed02-hackbench", Scale::Ci, 3),
            ("seed04-cookie", Scale::Full, 32),
        ] {
            let (reports, asked) = rounds(name, scale, never);
            assert_eq!(asked.len(), 1, "{name}");
            let t = assemble(name, scale, &reports).unwrap();
            assert!(t.rows.iter().all(|r| r.seeds == n), "{name}");
            assert_eq!(t.seeding, None, "{name}");
        }
    }

    /// The same reports give the same rounds and the same table, and a report too
    /// many or a round cut short is refused.
    #[test]
    fn the_rounds_are_deterministic_and_whole() {
        let wide = |k: u64| ((k * 7919) % 13) as f64 - 6.0;
        let (a, asked_a) = rounds("seed03-hackbench", Scale::Full, seed03(wide));
        let (b, asked_b) = rounds("seed03-hackbench", Scale::Full, seed03(wide));
        assert_eq!((&a, &asked_a), (&b, &asked_b));
        let json = |r: &[RunReport]| {
            serde_json::to_string(&assemble("seed03-hackbench", Scale::Full, r).unwrap()).unwrap()
        };
        assert_eq!(json(&a), json(&b));
        let mut extra = a.clone();
        extra.push(a[0].clone());
        assert!(assemble("seed03-hackbench", Scale::Full, &extra).is_err());
        assert!(assemble("seed03-hackbench", Scale::Full, &a[..a.len() - 1]).is_err());
    }

    fn pair(seed: u64, baseline: f64, patched: f64, digest: &str) -> experiment::SeedPair {
        experiment::SeedPair {
            seed,
            baseline,
            patched,
            change_pct: change_pct(baseline, patched, false),
            baseline_digest: digest.into(),
            patched_digest: format!("{seed}-{patched}"),
        }
    }

    /// Seed 04's cut: overheads (cookies − none) 1.0, 1.4, 1.2, 0.9, 1.5 and with the
    /// patch 0.3, 0.5, 0.4, 0.2, 0.6 (same seeds and baseline runs): means 1.2 and 0.4,
    /// a cut of 100 × (1 − 0.4/1.2) = 66.7%, with Fieller's interval of 0.4/1.2 mapped
    /// to [100(1 − hi), 100(1 − lo)] around it. Unpaired rows have none.
    /// Seed 04's source lists its 3 runs of each configuration: each published change
    /// has its interval (hand-computed in `stats`' test, [−7.41, −4.66] for cookies,
    /// [−3.67, −0.97] with the patch, [+42.41, +82.09] for the cut); a table whose
    /// source gives means only (seed 02) has none.
    #[test]
    fn seed04s_published_rows_have_the_interval_of_their_runs() {
        let value = |s: &RunSpec| 100.0 + swing(s.seed, 10.0);
        let (reports, _) = rounds("seed04-cookie", Scale::Full, value);
        let t = assemble("seed04-cookie", Scale::Full, &reports).unwrap();
        let ivs: Vec<_> = t
            .rows
            .iter()
            .map(|r| r.published_change_lo.zip(r.published_change_hi).unwrap())
            .collect();
        let want = [
            (-7.405_27, -4.658_12),
            (-3.667_00, -0.970_34),
            (42.410_33, 82.088_29),
        ];
        assert_eq!(ivs.len(), 3);
        for ((lo, hi), (wlo, whi)) in ivs.iter().zip(want) {
            assert!(
                (lo - wlo).abs() < 1e-4 && (hi - whi).abs() < 1e-4,
                "{ivs:?}"
            );
        }
        assert!(
            t.render().contains("+61.62 [+42.4, +82.1]"),
            "{}",
            t.render()
        );
        let (reports, _) = rounds("seed02-hackbench", Scale::Ci, value);
        let t = assemble("seed02-hackbench", Scale::Ci, &reports).unwrap();
        assert!(t.rows.iter().all(|r| r.published_change_lo.is_none()));
        assert!(!t.render().contains("pub % [95% interval]"));
    }

    #[test]
    fn seed04s_cut_has_the_interval_of_its_ratio_when_the_seeds_are_paired() {
        let base = [24.0, 25.0, 24.5, 24.2, 25.1];
        let over = [1.0, 1.4, 1.2, 0.9, 1.5];
        let over_p = [0.3, 0.5, 0.4, 0.2, 0.6];
        let d = |i: usize| format!("d{i}");
        let without: Vec<_> = (0..5)
            .map(|i| pair(i as u64, base[i], base[i] + over[i], &d(i)))
            .collect();
        let with: Vec<_> = (0..5)
            .map(|i| pair(i as u64, base[i], base[i] + over_p[i], &d(i)))
            .collect();
        let (lo, hi) = cut_interval(&without, &with).unwrap();
        let (rlo, rhi) = ratio_interval(&over_p, &over).unwrap();
        assert!((lo - 100.0 * (1.0 - rhi)).abs() < 1e-9 && (hi - 100.0 * (1.0 - rlo)).abs() < 1e-9);
        let cut = 100.0 * (1.0 - 0.4 / 1.2);
        assert!(lo < cut && cut < hi && hi - lo < 30.0, "{lo} {cut} {hi}");
        // Another baseline run for one seed, or another seed: not paired, no interval.
        let mut other = with.clone();
        other[2].baseline_digest = "elsewhere".into();
        assert_eq!(cut_interval(&without, &other), None);
        assert_eq!(cut_interval(&without, &with[..4]), None);
    }
}
