//! A run on its way: [`RunView::new`] lays out the run's points (scale × seed × side,
//! in the order they are handed out), [`RunView::hand_out`] sends a worker its next
//! point, and [`RunView::take`] takes a worker's progress as it streams in: the
//! progress is kept by point, the first seed's event record goes to its side's live
//! feed, and a finished point frees the worker for the next.

use std::cell::RefCell;
use std::rc::Rc;

use gloo_worker::WorkerBridge;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::SimSetup;

use super::{watched_scale, Point, RunKey, RunView};
use crate::live::{Feed, Feeds};
use crate::state::AppState;
use crate::worker::{now_ms, Msg, Progress, SimWorker};

impl RunView {
    pub(super) fn new(state: &AppState, id: u64, key: RunKey, n_workers: usize) -> RunView {
        let patches = state.sides();
        let sim = state.sim().clone();
        let mut threads = sim.points();
        // Ascending, then reversed: the one u32 sort the page links (a `b.cmp(a)` closure
        // would be a sort of its own, about 4 KB of code).
        threads.sort_unstable();
        threads.reverse();
        threads.dedup();
        // Most threads first, then seed by seed with A and B of a seed together, so
        // the first pairs' change shows early.
        let n_sides = patches.len();
        let points: Vec<Point> = threads
            .iter()
            .flat_map(|&threads| {
                (0..sim.seeds.max(1)).flat_map(move |seed_idx| {
                    (0..n_sides).map(move |side| Point {
                        threads,
                        seed_idx,
                        side,
                    })
                })
            })
            .collect();
        let live = Feeds(
            patches
                .iter()
                .map(|p| {
                    Rc::new(RefCell::new(Feed {
                        threads: watched_scale(&sim),
                        scale: if sim.sweep.is_empty() {
                            String::new()
                        } else {
                            format!("{} {}, ", watched_scale(&sim), sim.workload.scale_name())
                        },
                        ..Feed::new(p.to_string(), sim.seed)
                    }))
                })
                .collect(),
        );
        RunView {
            id,
            key,
            live,
            labels: patches.iter().map(ToString::to_string).collect(),
            machine: state.scenario.machine.choice().clone(),
            sim,
            results: vec![None; points.len()],
            points,
            next: 0,
            assigned: vec![None; n_workers],
            started_ms: now_ms(),
            finished_ms: None,
            stopped: false,
        }
    }

    /// The run's `k`-th seed (core's `experiment::seeds`).
    pub(super) fn seed(&self, k: u32) -> u64 {
        self.sim.seed.wrapping_add(u64::from(k))
    }

    /// Gives worker `w` the next point, if any is left.
    pub(super) fn hand_out(&mut self, w: usize, workers: &[WorkerBridge<SimWorker>]) {
        let slot = self.next;
        let (Some(&pt), Some(worker)) = (self.points.get(slot), workers.get(w)) else {
            if let Some(a) = self.assigned.get_mut(w) {
                *a = None;
            }
            return;
        };
        self.next += 1;
        if let Some(a) = self.assigned.get_mut(w) {
            *a = Some(slot);
        }
        worker.send(Msg::Run {
            id: self.id,
            machine: self.machine.clone(),
            patches: self.labels[pt.side].clone(),
            sim: self.point_setup(pt),
            record: self.watched(slot).is_some(),
        });
    }

    /// What a worker runs for point `pt`: one seed at one scale.
    pub(super) fn point_setup(&self, pt: Point) -> SimSetupV1 {
        SimSetupV1::from(&SimSetup {
            workload: self.sim.workload.with_threads(pt.threads),
            sweep: Vec::new(),
            seed: self.seed(pt.seed_idx),
            seeds: 1,
            ..self.sim.clone()
        })
    }

    /// The side whose live feed point `slot` is: the first points, one per side, are
    /// the first seed at the first scale (see [`RunView::new`]'s order).
    fn watched(&self, slot: usize) -> Option<usize> {
        (slot < self.labels.len()).then(|| self.points[slot].side)
    }

    /// Takes worker `w`'s progress on its point; when the point is done, hands the
    /// worker the next one. True when this finished the whole run.
    pub(super) fn take(
        &mut self,
        w: usize,
        mut p: Progress,
        workers: &[WorkerBridge<SimWorker>],
    ) -> bool {
        // An older run's last words, or a worker with nothing to do.
        let Some(slot) = self
            .assigned
            .get(w)
            .copied()
            .flatten()
            .filter(|_| p.id == self.id)
        else {
            return false;
        };
        let next = p.done && p.error.is_none() && !self.stopped;
        // The record goes to the side's feed, not into the kept progress; so does
        // where the benchmark started its clients.
        if let Some(f) = self.watched(slot).and_then(|side| self.live.0.get(side)) {
            let mut f = f.borrow_mut();
            f.start_ns = p.start_ns;
            f.start_pending = p.start_pending;
            if let Some(c) = p.record.take() {
                f.push(&c, p.done);
                if p.done {
                    f.run_end_ns = p.now_ns;
                }
            }
        }
        self.results[slot] = Some(p);
        if next {
            self.hand_out(w, workers);
        }
        if self.done() && self.finished_ms.is_none() {
            self.finished_ms = Some(now_ms());
            return true;
        }
        false
    }
}
