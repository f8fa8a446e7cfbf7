//! What a run's kept results say, read by point so that the order in which the
//! workers finished does not matter: its state (started, done, stopped, failed), each
//! side's live series over the seeds, the rows per scale (means, intervals, B's
//! change paired by seed), the reports and digests by seed, and the sweep's reports in
//! core's order for the export.

use schedlab_core::experiment::change_pct;
use schedlab_core::stats::Estimate;

use super::{RunKey, RunView};
use crate::worker::{Progress, Report};

/// One scale of a run, over its seeds: each side's mean once all its seeds are in,
/// and B's change against A, paired by seed, once every pair is in.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub threads: u32,
    pub values: Vec<Option<f64>>,
    /// Each side's 95% interval over the seeds (none with one seed).
    pub spread: Vec<Option<(f64, f64)>>,
    pub change: Option<Estimate>,
}

/// One side's throughput over the measured window, per sampling interval, over the
/// seeds that have reached it: the mean, and with two or more the 95% interval.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSeries {
    /// Per interval, in order.
    pub points: Vec<Estimate>,
    /// The sampling interval, ns.
    pub interval_ns: u64,
}

impl RunView {
    /// The first seed (`--seed`).
    pub fn base_seed(&self) -> u64 {
        self.sim.seed
    }

    /// Seeds per side.
    pub fn n_seeds(&self) -> u32 {
        self.sim.seeds.max(1)
    }

    /// Workers the run is spread over.
    pub fn n_workers(&self) -> usize {
        self.assigned.len()
    }
    /// The measured window of each of its points, ms.
    pub fn duration_ms(&self) -> u64 {
        self.sim.duration_ms
    }

    /// Whether it runs for `key`; if not, a new run is on its way.
    pub fn is_for(&self, key: &RunKey) -> bool {
        self.key == *key
    }

    /// The number of simulations it makes.
    pub fn n_points(&self) -> usize {
        self.points.len()
    }

    /// A sweep (the table and chart by scale) rather than one run per side.
    pub fn sweep(&self) -> bool {
        !self.sim.sweep.is_empty()
    }

    pub fn progress(&self) -> impl Iterator<Item = &Progress> {
        self.results.iter().flatten()
    }

    pub fn finished(&self) -> usize {
        self.progress().filter(|p| p.done).count()
    }

    pub fn all_reported(&self) -> bool {
        self.results.iter().all(Option::is_some)
    }

    pub fn done(&self) -> bool {
        self.error().is_some() || (self.all_reported() && self.progress().all(|p| p.done))
    }

    /// Still going: neither done, nor stopped, nor failed.
    pub fn running(&self) -> bool {
        !self.done() && !self.stopped
    }

    pub fn error(&self) -> Option<String> {
        self.points.iter().zip(&self.results).find_map(|(pt, p)| {
            let e = p.as_ref()?.error.as_ref()?;
            let seed = if self.n_seeds() > 1 {
                format!(" (seed {})", self.seed(pt.seed_idx))
            } else {
                String::new()
            };
            Some(if self.sweep() {
                format!("{} at {}{seed}: {e}", self.labels[pt.side], pt.threads)
            } else {
                format!("{}{seed}: {e}", self.labels[pt.side])
            })
        })
    }

    /// Any point's progress: unit, warm-up and kind are the same on all.
    pub fn first(&self) -> Option<&Progress> {
        self.progress().next()
    }

    /// The first seed's point of each side (at the first scale), A first.
    fn first_seed(&self) -> impl Iterator<Item = &Option<Progress>> {
        self.points
            .iter()
            .zip(&self.results)
            .filter(|(pt, _)| pt.seed_idx == 0)
            .map(|(_, r)| r)
            .take(self.labels.len())
    }

    /// One run per side: each side's progress under the first seed, A first (what
    /// the live chart draws).
    pub fn sides(&self) -> Vec<&Progress> {
        self.first_seed().flatten().collect()
    }

    /// Side `side`'s live series at the first scale over every seed reported so far
    /// (what the live chart draws: the mean line, and its band from two seeds on).
    /// Interval k's estimate is over the seeds that have reached it.
    pub fn live(&self, side: usize) -> LiveSeries {
        let first = self.scales().first().copied();
        let runs: Vec<&Progress> = self
            .points
            .iter()
            .zip(&self.results)
            .filter(|(pt, _)| pt.side == side && Some(pt.threads) == first)
            .filter_map(|(_, r)| r.as_ref())
            .collect();
        let len = runs.iter().map(|p| p.series.len()).max().unwrap_or(0);
        let points = (0..len)
            .map_while(|k| {
                let at: Vec<f64> = runs
                    .iter()
                    .filter_map(|p| p.series.get(k).copied())
                    .collect();
                Estimate::of(&at)
            })
            .collect();
        LiveSeries {
            points,
            interval_ns: runs.first().map_or(1, |p| p.interval_ns),
        }
    }

    /// Every point reported: the first seed's report of each side, A first.
    pub fn reports(&self) -> Option<Vec<&Report>> {
        if !self
            .results
            .iter()
            .all(|p| p.as_ref().is_some_and(|p| p.report.is_some()))
        {
            return None;
        }
        self.first_seed()
            .map(|p| p.as_ref()?.report.as_ref())
            .collect()
    }

    /// The most of a measured window, over every finished report, that ran before
    /// every LLC's first busy balance round (`RunReport::unsettled_ns`), ns.
    pub fn unsettled_ns(&self) -> u64 {
        self.results
            .iter()
            .filter_map(|p| p.as_ref()?.report.as_ref())
            .map(|r| r.unsettled_ns)
            .max()
            .unwrap_or(0)
    }

    /// Side `side`'s reports at scale `threads`, in seed order, once every seed is in.
    pub fn side_reports(&self, threads: u32, side: usize) -> Option<Vec<&Report>> {
        let mut v: Vec<(u32, &Report)> = self
            .points
            .iter()
            .zip(&self.results)
            .filter(|(pt, _)| pt.threads == threads && pt.side == side)
            .map(|(pt, r)| Some((pt.seed_idx, r.as_ref()?.report.as_ref()?)))
            .collect::<Option<_>>()?;
        v.sort_by_key(|(k, _)| *k);
        (v.len() == self.n_seeds() as usize).then(|| v.into_iter().map(|(_, r)| r).collect())
    }

    /// The scales in the command line's `--threads` order (the sweep's, or the one).
    pub fn scales(&self) -> Vec<u32> {
        self.sim.points()
    }

    /// Every report in core's `SweepSpec::points()` order (per scale, A's seeds then
    /// B's; A's twice without B, as `--patched` equal to `--baseline` runs), once all
    /// are in: what `experiment::export::sweep_rows` pairs.
    pub fn sweep_order(&self) -> Option<Vec<Report>> {
        let b = if self.labels.len() > 1 { 1 } else { 0 };
        let mut out = Vec::new();
        for t in self.scales() {
            for side in [0, b] {
                out.extend(self.side_reports(t, side)?.into_iter().cloned());
            }
        }
        Some(out)
    }

    /// The workers' wall time spent simulating this run's points, s (the JSON's
    /// `wall_ms`, which the CLI measures as its own elapsed time).
    pub fn busy_s(&self) -> f64 {
        self.progress().map(|p| p.busy_ms).sum::<f64>() / 1e3
    }

    /// Per seed (in seed order), each side's report once it is in: the digests.
    pub fn seed_reports(&self) -> Vec<(u64, Vec<Option<&Report>>)> {
        let mut out: Vec<(u64, Vec<Option<&Report>>)> = Vec::new();
        for (pt, r) in self.points.iter().zip(&self.results) {
            let seed = self.seed(pt.seed_idx);
            let rep = r.as_ref().and_then(|p| p.report.as_ref());
            match out.iter_mut().find(|(s, _)| *s == seed) {
                Some((_, v)) => {
                    if v[pt.side].is_none() {
                        v[pt.side] = rep;
                    }
                }
                None => {
                    let mut v = vec![None; self.labels.len()];
                    v[pt.side] = rep;
                    out.push((seed, v));
                }
            }
        }
        out.sort_by_key(|(s, _)| *s);
        out
    }

    /// Per scale, ascending: each side's mean over the seeds and B's change.
    pub fn rows(&self) -> Vec<Row> {
        let higher = self.first().is_none_or(|p| p.higher_is_better);
        let n = self.n_seeds() as usize;
        let mut threads: Vec<u32> = self.points.iter().map(|p| p.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        threads
            .into_iter()
            .map(|t| {
                // values[side][seed_idx], filled by point so arrival order is moot.
                let mut by_side = vec![vec![None; n]; self.labels.len()];
                for (pt, r) in self.points.iter().zip(&self.results) {
                    if pt.threads == t {
                        by_side[pt.side][pt.seed_idx as usize] =
                            r.as_ref().and_then(|p| p.report.as_ref()).map(|r| r.value);
                    }
                }
                let all = |v: &[Option<f64>]| v.iter().copied().collect::<Option<Vec<f64>>>();
                let est: Vec<Option<Estimate>> = by_side
                    .iter()
                    .map(|v| all(v).and_then(|v| Estimate::of(&v)))
                    .collect();
                let values = est.iter().map(|e| e.map(|e| e.mean)).collect();
                let spread = est.iter().map(|e| e.and_then(|e| e.interval())).collect();
                let change = match &by_side[..] {
                    [a, b] => all(a).zip(all(b)).and_then(|(a, b)| {
                        let per: Vec<f64> = a
                            .iter()
                            .zip(&b)
                            .map(|(x, y)| change_pct(*x, *y, higher))
                            .collect();
                        Estimate::of(&per)
                    }),
                    _ => None,
                };
                Row {
                    threads: t,
                    values,
                    spread,
                    change,
                }
            })
            .collect()
    }
}
