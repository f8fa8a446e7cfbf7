//! The page's one-click examples: each seed's experiment as a Simulate-tab scenario.

use crate::experiment::{self, change_pct, CpuSelection};
use crate::scenario::{Scenario, SimSetup, View};

use super::points::{points, Point};
use super::{published, ReproError, Scale, EXPERIMENTS};

/// A seed's experiment as the page's Simulate tab opens it: its machine and CPUs, A
/// the table's baseline and B its patched kernel, the workload swept over the table's
/// rows (completion workloads at full size, throughput ones for the CI scale's
/// window: seconds in a browser), the CI scale's seeds per side, and the published
/// change per row.
#[derive(Clone, Debug)]
pub struct Example {
    pub name: &'static str,
    pub title: String,
    pub source: String,
    pub scenario: Scenario,
    /// Per scale (threads, groups …): the published change %, positive when B is
    /// better. One entry for a single run.
    pub published: Vec<(u32, f64)>,
    /// Per scale: the published baseline and patched numbers, where they are in the
    /// model's units and size (the Kunpeng throughput tables; the hackbench tables ran
    /// ten times the model's loops).
    pub published_values: Vec<(u32, f64, f64)>,
}

impl Example {
    /// The runs the page makes for this example, as one sweep (a single run is a sweep
    /// of one scale): A's patch set against B's, the example's scales and seeds.
    /// `schedlab reproduce NAME --scale page` runs these, so its CSV and JSON are the
    /// page's "with published" downloads byte for byte.
    pub fn sweep_spec(&self) -> Result<experiment::SweepSpec, ReproError> {
        let s = &self.scenario;
        let sim = s
            .sim
            .as_ref()
            .ok_or_else(|| ReproError::Setup(format!("{}: no simulation", self.name)))?;
        let patched = s.wake.compare.unwrap_or(s.patches);
        let base = sim
            .run_spec(s.machine(), s.patches)
            .map_err(|e| ReproError::Setup(format!("{}: {e}", self.name)))?;
        Ok(experiment::SweepSpec {
            base,
            threads: sim.points(),
            baseline: s.patches,
            patched,
            seeds: sim.seeds,
        })
    }

    /// Its published numbers, for `experiment::export`'s "with published" tables.
    pub fn published(&self) -> experiment::export::Published<'_> {
        experiment::export::Published {
            name: self.name,
            source: &self.source,
            change: &self.published,
            values: &self.published_values,
        }
    }
}

/// Every experiment of [`EXPERIMENTS`] as a page scenario.
pub fn page_examples() -> Result<Vec<Example>, ReproError> {
    let tables = published()?;
    EXPERIMENTS
        .iter()
        .map(|&name| {
            let (t, full) = points(name, Scale::Full, &tables)?;
            let (_, ci) = points(name, Scale::Ci, &tables)?;
            let (Some(first), Some(short)) = (full.first(), ci.first()) else {
                return Err(ReproError::Data(format!("{name}: no rows")));
            };
            let scales = |pts: &[Point]| -> Vec<u32> {
                pts.iter().map(|p| p.baseline.workload.threads()).collect()
            };
            // Seed 04 compares each cookie run with a run without cookies; the page
            // puts the two cookie runs side by side: 6.12 against 6.12+cookie-fastpath.
            let (a, b, sweep, published) = if name == "seed04-cookie" {
                let last = full.last().unwrap_or(first);
                let change = first
                    .published_patched
                    .zip(last.published_patched)
                    .map(|(x, y)| change_pct(x, y, false));
                (
                    &first.patched,
                    &last.patched,
                    Vec::new(),
                    change.map(|c| vec![(10, c)]).unwrap_or_default(),
                )
            } else {
                let published = full
                    .iter()
                    .filter_map(|p| Some((p.baseline.workload.threads(), p.published_change?)))
                    .collect();
                let sweep = if full.len() > 1 {
                    scales(&full)
                } else {
                    Vec::new()
                };
                (&first.baseline, &first.patched, sweep, published)
            };
            // Completion workloads at full size (seconds in a browser; seed 03's 4 000
            // loops on 384 CPUs about 20 s a run); throughput
            // workloads for the CI scale's shorter window.
            let duration_ms = if a.workload.runs_to_completion() {
                a.duration_ms.min(crate::scenario::MAX_SIM_MS)
            } else {
                short.baseline.duration_ms
            };
            let mut scenario = Scenario::preset(&t.machine, a.patches)
                .map_err(|e| ReproError::Data(format!("{name}: {e}")))?;
            let cpus = CpuSelection::parse(scenario.machine(), &t.cpus)
                .map_err(|e| ReproError::Data(format!("{name}: CPUs {e}")))?;
            scenario.view = View::Simulate;
            scenario.wake.compare = Some(b.patches);
            scenario.sim = Some(SimSetup {
                workload: a.workload.clone(),
                cpus,
                duration_ms,
                seed: a.seed,
                // The CI scale's seeds (seed 04's 32 would be 32 full runs a side).
                seeds: Scale::Ci.seeds(),
                sweep,
                // The CI scale's warm-up: a settled one would make each throughput
                // row ~8× longer in the browser.
                warmup: Scale::Ci.warmup(),
            });
            let comparable = t.kunpeng_throughput();
            let published_values = if comparable {
                full.iter()
                    .filter_map(|p| {
                        Some((
                            p.baseline.workload.threads(),
                            p.published_baseline?,
                            p.published_patched?,
                        ))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            Ok(Example {
                name,
                published_values,
                title: t.title.clone(),
                source: t.source.clone(),
                scenario,
                published,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// `schedlab reproduce NAME --scale page` runs what the page runs for the
    /// example: A against B at every scale of its sweep, its seeds each.
    #[test]
    fn each_page_example_is_one_sweep_of_the_pages_runs() {
        for e in page_examples().unwrap() {
            let sim = e.scenario.sim.clone().unwrap();
            let sw = e.sweep_spec().unwrap();
            assert_eq!(sw.baseline, e.scenario.patches, "{}", e.name);
            assert_eq!(Some(sw.patched), e.scenario.wake.compare, "{}", e.name);
            assert_eq!(sw.threads, sim.points(), "{}", e.name);
            let points = sw.points();
            assert_eq!(points.len(), 2 * sim.points().len() * sim.seeds as usize);
            let first = sim
                .run_spec(e.scenario.machine(), e.scenario.patches)
                .unwrap();
            assert_eq!(points[0].duration_ms, first.duration_ms, "{}", e.name);
            assert_eq!(points[0].seed, sim.seed, "{}", e.name);
            assert_eq!(points[0].patches, e.scenario.patches, "{}", e.name);
            let p = e.published();
            assert_eq!((p.name, p.change.len()), (e.name, e.published.len()));
        }
        let mut e = page_examples().unwrap().remove(0);
        e.scenario.sim = None;
        assert!(e.sweep_spec().is_err());
    }
}
