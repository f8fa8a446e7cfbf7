//! The Simulate tab's status line in words: while a run goes, which side and which
//! seed of how many run, how far in simulated time (all the seeds' and sides' together,
//! so it never drops back when a seed starts), warming up or measuring (the least
//! advanced running seed), and how many simulations are done; at the end, what ran and in how long. Plain functions of
//! the [`RunView`], tested on the host; `components/sim_view.rs` draws them.
//!
//! ```text
//!  Running: A seed 2 of 3, B seed 2 of 3 · 3.10 of 7.20 s simulated in all, measuring · 2 of 6 done
//!  Done in 4.1 s: A and B, 3 seeds each · 1000 ms measured after 200 ms of warm-up · …
//! ```
//!
//! A screen reader hears [`Status::announce`], which changes when the run's state does
//! (starts, ends, stops, fails), not with every batch's simulated time.

use super::{Point, RunView};
use crate::format::fmt_ms;
use crate::worker::Progress;

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// No point has reported yet.
    Starting,
    Running,
    Done,
    Stopped,
    Failed,
}

/// What the status line says: `lead` in bold, then `parts`, each a short clause,
/// then `detail`, the clause a slide can leave out (the events and their speed).
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    pub state: RunState,
    pub lead: String,
    pub parts: Vec<String>,
    pub detail: Option<String>,
    /// What the polite live region says: fixed while the state is.
    pub announce: String,
}

impl Status {
    fn new(state: RunState, lead: String, parts: Vec<String>) -> Status {
        Status {
            state,
            lead,
            parts,
            detail: None,
            announce: String::new(),
        }
    }

    /// The line as text: `Lead: part · part · detail`.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .parts
            .iter()
            .chain(&self.detail)
            .map(String::as_str)
            .collect();
        format!("{}: {}", self.lead, parts.join(" · "))
    }

    /// Announced as it reads.
    fn said(self) -> Status {
        Status {
            announce: self.text(),
            ..self
        }
    }
}

/// A side's name on the status line.
fn side_name(side: usize) -> &'static str {
    if side == 0 {
        "A"
    } else {
        "B"
    }
}

/// `A`, `A and B`.
fn and(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Seed numbers (1-based, ascending) as `seed 2`, `seeds 1–3`, `seeds 1, 3`.
fn seed_list(k: &[u32]) -> String {
    match k {
        [one] => format!("seed {one}"),
        [first, .., last] if (last - first) as usize + 1 == k.len() => {
            format!("seeds {first}–{last}")
        }
        _ => format!(
            "seeds {}",
            k.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Simulated time so far against the run's end: `42 of 72 ms`, `0.42 of 1.20 s`.
fn of_total(now_ms: f64, total_ms: f64) -> String {
    if total_ms >= 1000.0 {
        format!("{:.2} of {:.2} s", now_ms / 1e3, total_ms / 1e3)
    } else if total_ms >= 10.0 {
        format!("{now_ms:.0} of {total_ms:.0} ms")
    } else {
        format!("{now_ms:.2} of {total_ms:.2} ms")
    }
}

/// `278121` as `278,121`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl RunView {
    /// The slots handed to a worker and not done: what runs now.
    fn running_slots(&self) -> Vec<usize> {
        let mut slots: Vec<usize> = self
            .assigned
            .iter()
            .flatten()
            .copied()
            .filter(|&s| {
                !self
                    .results
                    .get(s)
                    .is_some_and(|r| r.as_ref().is_some_and(|p| p.done))
            })
            .collect();
        slots.sort_unstable();
        slots.dedup();
        slots
    }

    /// Who runs: `A seed 2 of 3, B seeds 1–2 of 3`, `A and B` with one seed; in a
    /// sweep, by scale: `8 clients (B), 4 clients (A)`.
    fn who(&self, slots: &[usize]) -> String {
        let seeds = self.n_seeds();
        let points: Vec<Point> = slots.iter().map(|&s| self.points[s]).collect();
        let mut scales: Vec<u32> = points.iter().map(|p| p.threads).collect();
        scales.dedup();
        let scale_name = self.sim.workload.scale_name();
        scales
            .iter()
            .map(|&t| {
                let sides: Vec<String> = (0..self.labels.len())
                    .filter_map(|side| {
                        let mut k: Vec<u32> = points
                            .iter()
                            .filter(|p| p.threads == t && p.side == side)
                            .map(|p| p.seed_idx + 1)
                            .collect();
                        k.sort_unstable();
                        let name = side_name(side);
                        match (k.is_empty(), seeds) {
                            (true, _) => None,
                            (false, 1) => Some(name.to_string()),
                            (false, _) => Some(format!("{name} {} of {seeds}", seed_list(&k))),
                        }
                    })
                    .collect();
                let sides = if seeds == 1 {
                    and(&sides)
                } else {
                    sides.join(", ")
                };
                if self.sweep() {
                    // Every scale's name is a plural in -s but lat_pipe's "pair".
                    let name = if t == 1 {
                        scale_name.trim_end_matches('s')
                    } else {
                        scale_name
                    };
                    format!("{t} {name} ({sides})")
                } else {
                    sides
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What the run is, in a few words: `A and B, 3 seeds each`, `42 simulations`.
    fn what(&self) -> String {
        if self.sweep() {
            return format!("{} simulations", self.n_points());
        }
        let sides: Vec<String> = (0..self.labels.len())
            .map(|s| side_name(s).to_string())
            .collect();
        match (self.n_seeds(), sides.len()) {
            (1, _) => and(&sides),
            (n, 1) => format!("{}, {n} seeds", and(&sides)),
            (n, _) => format!("{}, {n} seeds each", and(&sides)),
        }
    }

    /// The simulated time of all the run's points so far, and the sum of their ends
    /// (warm-up and window), ms. It only grows as the points run, seed after seed,
    /// where one point's time starts again at 0 with each. A point that has not told
    /// its end yet (not started, or its clients not yet started) counts with the
    /// latest end told; no total while none is told, nor for a run to completion.
    fn in_all(&self, duration_ms: u64) -> (f64, Option<f64>) {
        let told = self.results.iter().flatten();
        let done_ms = told.clone().map(|p| p.now_ns as f64 / 1e6).sum();
        let ends: Vec<Option<f64>> = self
            .results
            .iter()
            .map(|r| {
                let p = r.as_ref().filter(|p| !p.start_pending)?;
                Some(p.warmup_ns? as f64 / 1e6 + duration_ms as f64)
            })
            .collect();
        let latest = ends.iter().flatten().copied().reduce(f64::max);
        let total = latest
            .filter(|_| !told.clone().any(|p| p.completion))
            .map(|l| ends.iter().map(|e| e.unwrap_or(l)).sum());
        (done_ms, total)
    }

    /// How far the run is: `3.10 of 7.20 s simulated in all`.
    fn so_far(&self, duration_ms: u64) -> String {
        let (done_ms, total) = self.in_all(duration_ms);
        let done = total.map_or_else(|| fmt_ms(done_ms), |t| of_total(done_ms, t));
        format!("{done} simulated in all")
    }

    /// How far the run is, and what point `p` (the least advanced) does:
    /// `3.10 of 7.20 s simulated in all, measuring`.
    fn how_far(&self, p: &Progress, duration_ms: u64) -> String {
        let phase = if p.completion {
            format!("{} tasks still running", p.live_tasks)
        } else if p.start_pending || p.warmup_ns.is_none() {
            "the clients starting (not measured)".to_string()
        } else if p.warming {
            "warming up (not measured)".to_string()
        } else {
            "measuring".to_string()
        };
        format!("{}, {phase}", self.so_far(duration_ms))
    }

    /// The least advanced of `slots` that has reported: its phase is the run's.
    fn slowest<'a>(&'a self, slots: &[usize]) -> Option<&'a Progress> {
        slots
            .iter()
            .filter_map(|&s| self.results.get(s)?.as_ref())
            .min_by_key(|p| p.now_ns)
    }

    /// The status line for a run of `duration_ms` (the measured window of each point).
    pub fn status(&self, duration_ms: u64) -> Status {
        let n = self.n_points();
        let what = self.what();
        let done_count = format!(
            "{} of {n} {}done",
            self.finished(),
            if self.sweep() { "simulations " } else { "" }
        );
        if let Some(e) = self.error() {
            return Status::new(
                RunState::Failed,
                "The simulation stopped".to_string(),
                vec![e],
            )
            .said();
        }
        if self.done() {
            return self.done_status(duration_ms, what);
        }
        let slots = self.running_slots();
        let slowest = self.slowest(&slots);
        let (state, lead) = match (self.stopped, slowest) {
            (true, Some(_)) if !self.sweep() => (
                RunState::Stopped,
                format!("Stopped at {}", self.so_far(duration_ms)),
            ),
            (true, _) => (RunState::Stopped, "Stopped".to_string()),
            (false, None) => (RunState::Starting, "Starting".to_string()),
            (false, Some(_)) if self.sweep() => (RunState::Running, "Sweeping".to_string()),
            (false, Some(_)) => (RunState::Running, "Running".to_string()),
        };
        let mut parts = Vec::new();
        if state == RunState::Stopped {
            if !self.sweep() {
                parts.push(self.who(&slots));
            }
            parts.push(done_count);
            return Status::new(state, lead, parts).said();
        }
        parts.push(self.who(&slots));
        if let Some(p) = slowest {
            parts.push(self.how_far(p, duration_ms));
        }
        if self.finished() > 0 {
            parts.push(done_count);
        }
        let verb = if self.sweep() { "Sweeping" } else { "Running" };
        Status {
            announce: format!("{verb}: {what}."),
            ..Status::new(state, lead, parts)
        }
    }

    /// The finished run: what ran, what was measured, how many events and how fast.
    fn done_status(&self, duration_ms: u64, what: String) -> Status {
        let first = self.first();
        let completion = first.is_some_and(|p| p.completion);
        let events: u64 = self.progress().map(|p| p.events).sum();
        let busy_ms: f64 = self.progress().map(|p| p.busy_ms).sum();
        // A browser with a frozen clock (headless, virtual time) measures nothing.
        let wall_ms = self.finished_ms.map_or(0.0, |f| f - self.started_ms);
        let timed = busy_ms >= 1.0 && wall_ms >= 1.0;
        let lead = if timed {
            format!("Done in {:.1} s", wall_ms / 1e3)
        } else {
            "Done".to_string()
        };
        let measured = if self.sweep() && completion {
            "each to completion".to_string()
        } else if self.sweep() {
            format!("{duration_ms} ms measured each")
        } else if completion {
            let end = self.progress().map(|p| p.now_ns).max().unwrap_or(0);
            format!("finished at {} simulated", fmt_ms(end as f64 / 1e6))
        } else {
            // The warm-up's end, and the benchmark's own start (dbench's release) it
            // counts from (none for a benchmark whose tasks start with the run).
            let warm = first.and_then(|p| p.warmup_ns).unwrap_or(0) as f64 / 1e6;
            match first.and_then(|p| p.start_ns).filter(|&s| s > 0) {
                Some(start) => {
                    let start = start as f64 / 1e6;
                    format!(
                        "{duration_ms} ms measured after the clients' start at {} and {} of warm-up",
                        fmt_ms(start),
                        fmt_ms(warm - start)
                    )
                }
                None => format!(
                    "{duration_ms} ms measured after {} of warm-up",
                    fmt_ms(warm)
                ),
            }
        };
        let mut speed = format!("{} simulated events", grouped(events));
        if timed {
            let workers = self.n_points().min(self.n_workers());
            speed.push_str(&format!(
                ", {:.2} M events/s per worker{}",
                events as f64 / (busy_ms / 1e3) / 1e6,
                if workers > 1 {
                    format!(" ({workers} in parallel)")
                } else {
                    String::new()
                }
            ));
        }
        Status {
            detail: Some(speed),
            ..Status::new(RunState::Done, lead, vec![what, measured])
        }
        .said()
    }
}
