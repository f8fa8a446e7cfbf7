//! A/B results over seeds ([`ab_stats`]: paired by seed, a mean and a Student-t
//! interval per side and for the change) and sweeps over thread counts
//! ([`SweepSpec`]).

use serde::Serialize;
use thiserror::Error;

use crate::patch::PatchSet;
use crate::sim::SimError;
use crate::stats::Estimate;

use super::{export, run, seeds, RunReport, RunSpec};

/// One seed of an A/B result: both sides' numbers and digests.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedPair {
    pub seed: u64,
    pub baseline: f64,
    pub patched: f64,
    /// [`change_pct`] of this seed's pair.
    pub change_pct: f64,
    pub baseline_digest: String,
    pub patched_digest: String,
}

/// An A/B result over several seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AbStats {
    /// The baseline's headline number over the seeds.
    pub baseline: Estimate,
    pub patched: Estimate,
    /// The per-seed change % (positive = patched better), its mean and interval. An
    /// interval that includes 0 is no significant change.
    pub change_pct: Estimate,
    /// Per seed, in seed order.
    pub seeds: Vec<SeedPair>,
}

/// Why reports cannot be paired into an A/B result.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum AbError {
    #[error("no runs to combine")]
    Empty,
    #[error("seed {seed} ran on one side only (or twice on one side)")]
    Unpaired { seed: u64 },
    #[error("expected {expected} reports, got {got}")]
    Count { expected: usize, got: usize },
}

/// Why a sweep could not run.
#[derive(Debug, Error)]
pub enum SweepError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Pairing(#[from] AbError),
}

/// Pairs `baseline` and `patched` reports by seed and summarises them: the reports may
/// come in any order (parallel runs finish in any order), the result is the same.
pub fn ab_stats(baseline: &[RunReport], patched: &[RunReport]) -> Result<AbStats, AbError> {
    if baseline.is_empty() {
        return Err(AbError::Empty);
    }
    fn sorted(r: &[RunReport]) -> Vec<&RunReport> {
        let mut v: Vec<&RunReport> = r.iter().collect();
        v.sort_by_key(|x| x.seed);
        v
    }
    let (b, p) = (sorted(baseline), sorted(patched));
    let mut pairs = Vec::with_capacity(b.len());
    for (i, x) in b.iter().enumerate() {
        let Some(y) = p.get(i).filter(|y| y.seed == x.seed) else {
            return Err(AbError::Unpaired { seed: x.seed });
        };
        if i > 0 && b[i - 1].seed == x.seed {
            return Err(AbError::Unpaired { seed: x.seed });
        }
        pairs.push(SeedPair {
            seed: x.seed,
            baseline: x.value,
            patched: y.value,
            change_pct: change_pct(x.value, y.value, x.higher_is_better),
            baseline_digest: x.digest.clone(),
            patched_digest: y.digest.clone(),
        });
    }
    if let Some(extra) = p.get(b.len()) {
        return Err(AbError::Unpaired { seed: extra.seed });
    }
    let est = |f: fn(&SeedPair) -> f64| {
        let v: Vec<f64> = pairs.iter().map(f).collect();
        Estimate::of(&v).ok_or(AbError::Empty)
    };
    Ok(AbStats {
        baseline: est(|s| s.baseline)?,
        patched: est(|s| s.patched)?,
        change_pct: est(|s| s.change_pct)?,
        seeds: pairs,
    })
}

/// `change_pct` as the seeds' tables print it: positive when `patched` is better
/// (higher throughput, or shorter time/latency).
pub fn change_pct(baseline: f64, patched: f64, higher_is_better: bool) -> f64 {
    if baseline == 0.0 || !baseline.is_finite() || !patched.is_finite() {
        return 0.0;
    }
    if higher_is_better {
        (patched - baseline) / baseline * 100.0
    } else {
        (baseline - patched) / baseline * 100.0
    }
}

/// A baseline-versus-patched sweep over thread counts, each point over `seeds` seeds
/// (from `base.seed`, see [`seeds`]).
#[derive(Clone, Debug)]
pub struct SweepSpec {
    pub base: RunSpec,
    pub threads: Vec<u32>,
    pub baseline: PatchSet,
    pub patched: PatchSet,
    /// Seeds per side and point, at least 1 (1: today's single-seed sweep).
    pub seeds: u32,
}

/// One row of a sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    pub threads: u32,
    /// The means over the seeds.
    pub baseline: f64,
    pub patched: f64,
    /// The mean of the per-seed change % (one seed: that seed's change).
    pub change_pct: f64,
    /// The change's 95% interval (`None` with one seed).
    pub change_lo: Option<f64>,
    pub change_hi: Option<f64>,
    pub baseline_events: u64,
    pub patched_events: u64,
    /// Each seed's numbers and digests.
    pub seeds: Vec<SeedPair>,
}

impl SweepSpec {
    fn n_seeds(&self) -> usize {
        self.seeds.max(1) as usize
    }

    /// The runs of the sweep: for each thread count, the baseline's seeds then the
    /// patched kernel's. Each is independent and deterministic, so callers may run
    /// them in any order or in parallel.
    pub fn points(&self) -> Vec<RunSpec> {
        let k = self.n_seeds();
        let mut v = Vec::with_capacity(2 * k * self.threads.len());
        for &n in &self.threads {
            for ps in [self.baseline, self.patched] {
                for seed in seeds(self.base.seed, k as u32) {
                    let mut s = self.base.with_seed(seed);
                    s.patches = ps;
                    s.workload = self.base.workload.with_threads(n);
                    v.push(s);
                }
            }
        }
        v
    }

    /// Pairs up the reports of [`SweepSpec::points`] (same order) into rows
    /// ([`export::sweep_rows`], which the page calls without a `RunSpec`).
    pub fn rows(&self, reports: &[RunReport]) -> Result<Vec<SweepRow>, AbError> {
        export::sweep_rows(&self.threads, self.seeds, reports)
    }

    /// Runs every point in order on this thread.
    pub fn run_serial(&self) -> Result<Vec<SweepRow>, SweepError> {
        let reports = self
            .points()
            .iter()
            .map(run)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.rows(&reports)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::tests::spec;
    use crate::workload::Workload;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn netperf(patches: &str, seed: u64) -> RunReport {
        let mut s = spec(
            "kunpeng920-6426",
            "node0",
            Workload::NetperfTcpRr { instances: 4 },
            5,
        );
        s.patches = patches.parse().expect("patches");
        run(&s.with_seed(seed)).expect("runs")
    }

    /// Parallel runs finish in any order: the result is the seed-ordered one.
    #[test]
    fn seeds_combine_in_seed_order_whatever_order_the_reports_come_in() {
        let b: Vec<RunReport> = seeds(7, 3).map(|k| netperf("6.6", k)).collect();
        let p: Vec<RunReport> = seeds(7, 3).map(|k| netperf("6.6+cluster", k)).collect();
        let in_order = ab_stats(&b, &p).unwrap();
        assert_eq!(
            in_order.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(),
            vec![7, 8, 9]
        );
        let rev = |v: &[RunReport]| v.iter().rev().cloned().collect::<Vec<_>>();
        let mixed = vec![b[1].clone(), b[2].clone(), b[0].clone()];
        assert_eq!(ab_stats(&rev(&b), &p).unwrap(), in_order);
        assert_eq!(ab_stats(&mixed, &rev(&p)).unwrap(), in_order);
        // The change is the mean of the paired per-seed changes.
        let per: Vec<f64> = (0..3)
            .map(|i| change_pct(b[i].value, p[i].value, true))
            .collect();
        assert_eq!(in_order.change_pct, Estimate::of(&per).unwrap());
        assert!(in_order.change_pct.interval().is_some());
        // Distinct seeds are distinct runs.
        assert_ne!(b[0].digest, b[1].digest);
        // One seed: that seed's change, no interval.
        let one = ab_stats(&b[..1], &p[..1]).unwrap();
        assert_eq!(one.change_pct.mean, per[0]);
        assert_eq!(one.change_pct.interval(), None);
    }

    #[test]
    fn reports_that_do_not_pair_by_seed_are_refused() {
        let b = [netperf("6.6", 1), netperf("6.6", 2)];
        let p = [netperf("6.6+cluster", 1), netperf("6.6+cluster", 3)];
        assert_eq!(ab_stats(&b, &p), Err(AbError::Unpaired { seed: 2 }));
        assert_eq!(ab_stats(&b, &p[..1]), Err(AbError::Unpaired { seed: 2 }));
        assert_eq!(ab_stats(&b[..1], &p), Err(AbError::Unpaired { seed: 3 }));
        assert_eq!(ab_stats(&[], &[]), Err(AbError::Empty));
        let twice = [b[0].clone(), b[0].clone()];
        assert_eq!(
            ab_stats(&twice, &[p[0].clone(), p[0].clone()]),
            Err(AbError::Unpaired { seed: 1 })
        );
    }
}
