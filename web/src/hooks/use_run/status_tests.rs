//! The status line's words at each point of a run (status.rs), on runs whose
//! workers' progress the test hands in by hand.

use super::*;

/// A point's progress at `now_ms` simulated, with a warm-up to `warm_ms`.
fn at(now_ms: u64, warm_ms: u64, done: bool) -> Progress {
    Progress {
        id: 1,
        series: Vec::new(),
        interval_ns: 1,
        now_ns: now_ms * 1_000_000,
        warmup_ns: Some(warm_ms * 1_000_000),
        start_ns: None,
        start_pending: false,
        warming: now_ms < warm_ms,
        live_tasks: 0,
        events: 1000,
        busy_ms: 0.0,
        unit: "MB/s".into(),
        higher_is_better: true,
        completion: false,
        done,
        error: None,
        record: None,
        report: None,
    }
}

/// A run of tbench, A 6.6 against B 6.6+cluster, `seeds` seeds per side, a 1000 ms
/// window, over `workers` workers (none started: the test assigns the points).
fn run(seeds: u32, sweep: Vec<u32>, workers: usize) -> RunView {
    let mut state = AppState::default();
    let mut sim = state.sim().clone();
    sim.seeds = seeds;
    sim.sweep = sweep;
    sim.duration_ms = 1000;
    state.scenario.sim = Some(sim);
    state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
    let mut v = RunView::new(&state, 1, RunKey::of(&state), workers);
    for w in 0..workers {
        v.assigned[w] = Some(w);
    }
    v.next = workers;
    v
}

/// Worker `w` reports `p` on its point; a done point's worker takes `next`.
fn report(v: &mut RunView, w: usize, p: Progress, next: Option<usize>) {
    let done = p.done;
    v.take(w, p, &[]);
    if done {
        v.assigned[w] = next;
    }
}

#[test]
fn a_run_says_which_side_and_seed_how_far_and_what_is_done() {
    let mut v = run(3, Vec::new(), 2);
    let s = v.status(1000);
    assert_eq!(s.state, RunState::Starting);
    assert_eq!(s.text(), "Starting: A seed 1 of 3, B seed 1 of 3");
    let announce = s.announce;
    assert_eq!(announce, "Running: A and B, 3 seeds each.");

    report(&mut v, 0, at(100, 200, false), None);
    let s = v.status(1000);
    assert_eq!(s.state, RunState::Running);
    assert_eq!(
        s.text(),
        "Running: A seed 1 of 3, B seed 1 of 3 · 0.10 of 7.20 s simulated in all, warming up (not measured)"
    );
    assert_eq!(s.announce, announce, "said once, not per batch");

    // A's seed 1 ends; its worker takes A's seed 2 (point 2), while B's seed 1 is
    // measuring: all the points' simulated time says how far, the least advanced
    // reported point its phase.
    report(&mut v, 1, at(700, 200, false), None);
    report(&mut v, 0, at(1200, 200, true), Some(2));
    let s = v.status(1000);
    assert_eq!(
        s.text(),
        "Running: A seed 2 of 3, B seed 1 of 3 · 1.90 of 7.20 s simulated in all, measuring · 1 of 6 done"
    );
    assert_eq!(s.announce, announce);

    // Two seeds of one side at once.
    report(&mut v, 1, at(1200, 200, true), Some(4));
    report(&mut v, 0, at(300, 200, false), None);
    assert_eq!(
        v.status(1000).text(),
        "Running: A seeds 2–3 of 3 · 2.70 of 7.20 s simulated in all, measuring · 2 of 6 done"
    );

    v.stopped = true;
    let s = v.status(1000);
    assert_eq!(s.state, RunState::Stopped);
    assert_eq!(
        s.text(),
        "Stopped at 2.70 of 7.20 s simulated in all: A seeds 2–3 of 3 · 2 of 6 done"
    );
    assert_eq!(s.announce, s.text());
}

#[test]
fn a_finished_run_says_what_ran_and_in_how_long() {
    let mut v = run(3, Vec::new(), 2);
    let order = [(0, 2), (1, 3), (0, 4), (1, 5), (0, 6), (1, 6)];
    for (w, next) in order {
        let next = (next < 6).then_some(next);
        report(&mut v, w, at(1200, 200, true), next);
    }
    let s = v.status(1000);
    assert_eq!(s.state, RunState::Done);
    // A frozen clock (headless) measured no time: no speed.
    assert_eq!(
        s.text(),
        "Done: A and B, 3 seeds each · 1000 ms measured after 200 ms of warm-up · 6,000 simulated events"
    );
    assert_eq!(s.announce, s.text());
    v.started_ms = 0.0;
    v.finished_ms = Some(4100.0);
    for p in v.results.iter_mut().flatten() {
        p.busy_ms = 500.0;
        p.events = 1_000_000;
    }
    assert_eq!(
        v.status(1000).text(),
        "Done in 4.1 s: A and B, 3 seeds each · 1000 ms measured after 200 ms of warm-up · \
         6,000,000 simulated events, 2.00 M events/s per worker (2 in parallel)"
    );
}

#[test]
fn one_seed_names_the_sides_and_a_sweep_its_scales() {
    let mut v = run(1, Vec::new(), 2);
    report(&mut v, 0, at(50, 200, false), None);
    assert_eq!(
        v.status(1000).text(),
        "Running: A and B · 0.05 of 2.40 s simulated in all, warming up (not measured)"
    );
    report(&mut v, 0, at(1200, 200, true), None);
    report(&mut v, 1, at(900, 200, false), None);
    assert_eq!(
        v.status(1000).text(),
        "Running: B · 2.10 of 2.40 s simulated in all, measuring · 1 of 2 done"
    );

    // A sweep hands out its largest scale first, A and B of a seed together.
    let mut v = run(1, vec![1, 4, 8], 2);
    let s = v.status(1000);
    assert_eq!(s.text(), "Starting: 8 clients (A and B)");
    assert_eq!(s.announce, "Sweeping: 6 simulations.");
    report(&mut v, 0, at(1200, 200, true), Some(2));
    report(&mut v, 1, at(400, 200, false), None);
    let s = v.status(1000);
    assert_eq!(
        s.text(),
        "Sweeping: 8 clients (B), 4 clients (A) · 1.60 of 7.20 s simulated in all, measuring · 1 of 6 simulations done"
    );
    v.stopped = true;
    assert_eq!(v.status(1000).text(), "Stopped: 1 of 6 simulations done");

    // One of them is singular (it said "1 clients").
    let v = run(1, vec![1, 4], 4);
    assert_eq!(
        v.status(1000).text(),
        "Starting: 4 clients (A and B), 1 client (A and B)"
    );
}

#[test]
fn a_benchmark_waiting_for_its_start_and_a_failure_say_so() {
    let mut v = run(1, Vec::new(), 2);
    let mut p = at(40, 0, false);
    p.warmup_ns = None;
    p.start_pending = true;
    p.warming = true;
    report(&mut v, 0, p, None);
    assert_eq!(
        v.status(1000).text(),
        "Running: A and B · 40 ms simulated in all, the clients starting (not measured)"
    );
    let mut p = at(41, 0, false);
    p.error = Some("out of memory".to_string());
    report(&mut v, 1, p, None);
    let s = v.status(1000);
    assert_eq!(s.state, RunState::Failed);
    assert_eq!(
        s.text(),
        "The simulation stopped: 6.6+cluster: out of memory"
    );
}

/// The simulated time a status line says is done, ms: `3.10 of 7.20 s simulated …`
/// gives 3100, `40 ms simulated …` 40.
fn simulated_ms(text: &str) -> f64 {
    let part = text
        .split(" · ")
        .find(|p| p.contains(" simulated"))
        .unwrap_or_else(|| panic!("no simulated time in {text:?}"));
    let amount = &part[..part.find(" simulated").unwrap_or(0)];
    let words: Vec<&str> = amount.split(' ').collect();
    let scale = if words.last() == Some(&"s") { 1e3 } else { 1.0 };
    let x: f64 = words[0].parse().unwrap_or_else(|_| panic!("{text:?}"));
    x * scale
}

#[test]
fn the_simulated_time_never_drops_back_when_a_seed_starts() {
    // Two workers at different speeds through 3 seeds of A and B, each point 1200 ms
    // (200 ms of warm-up): seeds start while others are half way.
    let mut v = run(3, Vec::new(), 2);
    let mut now = [0u64; 2];
    let mut next = 2;
    let mut said = Vec::new();
    while !v.done() {
        for (w, step) in [(0, 100), (1, 150)] {
            if v.assigned[w].is_none() {
                continue;
            }
            now[w] = (now[w] + step).min(1200);
            let done = now[w] == 1200;
            let take = (done && next < 6).then_some(next);
            report(&mut v, w, at(now[w], 200, done), take);
            if done {
                now[w] = 0;
                next += usize::from(take.is_some());
            }
            let s = v.status(1000);
            if s.state == RunState::Running {
                said.push((simulated_ms(&s.text()), s.text()));
            }
        }
    }
    for pair in said.windows(2) {
        assert!(
            pair[1].0 >= pair[0].0,
            "the simulated time went back:\n  {}\n  {}",
            pair[0].1,
            pair[1].1
        );
    }
    // The total is every seed's and side's: 6 points of 1200 ms.
    let last = &said.last().expect("the run was seen running").1;
    assert!(last.contains(" of 7.20 s simulated in all"), "{last}");
}

/// The live view's caption names the sweep point it plays (it said "A: 6.6 (seed 1)"
/// with no word of which of the sweep's runs that was).
#[test]
fn the_live_feeds_of_a_sweep_name_their_scale() {
    let v = run(1, vec![1, 4, 8], 2);
    let scales: Vec<String> = v.live.0.iter().map(|f| f.borrow().scale.clone()).collect();
    assert_eq!(scales, ["8 clients, ", "8 clients, "]);
    let v = run(1, Vec::new(), 2);
    assert_eq!(v.live.0[0].borrow().scale, "");
}
