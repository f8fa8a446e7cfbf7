use schedlab_core::stats::Estimate;

use super::results::Row;
use super::*;
use crate::worker::Report;

fn progress(id: u64, value: f64, digest: String) -> Progress {
    Progress {
        id,
        series: Vec::new(),
        interval_ns: 1,
        now_ns: 1,
        warmup_ns: Some(0),
        start_ns: None,
        start_pending: false,
        warming: false,
        live_tasks: 0,
        events: 1,
        busy_ms: 1.0,
        unit: "MB/s".into(),
        higher_is_better: true,
        completion: false,
        done: true,
        error: None,
        record: None,
        report: Some(Report {
            value,
            events: 1,
            digest,
            ..template()
        }),
    }
}

/// A real report to vary (a 1 ms run on flat-16).
fn template() -> Report {
    thread_local! {
        static T: Report = schedlab_core::experiment::run(
            &schedlab_core::experiment::RunSpec::on_preset(
                "flat-16",
                "all",
                "6.8".parse().unwrap(),
                schedlab_core::workload::Workload::Tbench { clients: 1 },
                1,
                1,
            )
            .unwrap(),
        )
        .unwrap();
    }
    T.with(Clone::clone)
}

/// Workers finish in any order: the rows and digests are the seed-ordered ones.
#[test]
fn seeds_combine_by_point_whatever_order_the_workers_finish() {
    let mut state = AppState::default();
    let mut sim = state.sim().clone();
    sim.seeds = 3;
    sim.seed = 7;
    sim.sweep = Vec::new();
    state.scenario.sim = Some(sim);
    state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
    type Digests = Vec<(u64, Vec<Option<String>>)>;
    let run = |order: &[usize]| -> (Vec<Row>, Digests) {
        let mut v = RunView::new(&state, 1, RunKey::of(&state), 1);
        assert_eq!(v.n_points(), 6);
        for &slot in order {
            let pt = v.points[slot];
            // Seed k: A 100 + 10k, B 5 + k more.
            let k = f64::from(pt.seed_idx);
            let value = 100.0 + 10.0 * k + if pt.side == 1 { 5.0 + k } else { 0.0 };
            v.assigned[0] = Some(slot);
            v.take(
                0,
                progress(1, value, format!("{}{}", pt.seed_idx, pt.side)),
                &[],
            );
        }
        assert!(v.done());
        let digests = v
            .seed_reports()
            .into_iter()
            .map(|(s, r)| (s, r.iter().map(|x| x.map(|x| x.digest.clone())).collect()))
            .collect();
        (v.rows(), digests)
    };
    let (rows, digests) = run(&[0, 1, 2, 3, 4, 5]);
    assert_eq!(run(&[5, 3, 1, 4, 0, 2]), (rows.clone(), digests.clone()));
    assert_eq!(run(&[2, 5, 4, 0, 3, 1]).0, rows);
    let seeds: Vec<u64> = digests.iter().map(|d| d.0).collect();
    assert_eq!(seeds, vec![7, 8, 9]);
    assert_eq!(
        digests[2].1,
        vec![Some("20".to_string()), Some("21".to_string())]
    );
    let [row] = &rows[..] else {
        panic!("one scale: {rows:?}")
    };
    assert_eq!(row.values, vec![Some(110.0), Some(116.0)]);
    let per = [5.0, 6.0 / 110.0 * 100.0, 7.0 / 120.0 * 100.0];
    assert_eq!(row.change, Estimate::of(&per));
    assert!(row.change.and_then(|c| c.significant()).unwrap());
}

/// The live chart's series over seeds: per interval the mean, and its interval
/// once two seeds have reached it; a sweep's rows carry each side's interval.
#[test]
fn the_live_series_is_the_mean_over_seeds_with_its_interval() {
    let mut state = AppState::default();
    let mut sim = state.sim().clone();
    sim.seeds = 2;
    sim.sweep = Vec::new();
    state.scenario.sim = Some(sim);
    state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
    let mut v = RunView::new(&state, 1, RunKey::of(&state), 1);
    let a: Vec<usize> = (0..v.n_points())
        .filter(|&i| v.points[i].side == 0)
        .collect();
    let feed = |v: &mut RunView, slot: usize, series: Vec<f64>| {
        let mut p = progress(1, series.iter().sum(), String::new());
        p.series = series;
        v.assigned[0] = Some(slot);
        v.take(0, p, &[]);
    };
    feed(&mut v, a[0], vec![10.0, 20.0, 30.0]);
    let one = v.live(0);
    assert_eq!(
        one.points.iter().map(|e| e.mean).collect::<Vec<_>>(),
        [10.0, 20.0, 30.0]
    );
    assert!(
        one.points.iter().all(|e| e.interval().is_none()),
        "one seed: no band"
    );
    feed(&mut v, a[1], vec![14.0, 22.0]);
    let two = v.live(0);
    assert_eq!(
        two.points.iter().map(|e| e.mean).collect::<Vec<_>>(),
        [12.0, 21.0, 30.0]
    );
    let (lo, hi) = two.points[0].interval().unwrap();
    assert!(lo < 12.0 && 12.0 < hi && (hi - 12.0 - (12.0 - lo)).abs() < 1e-9);
    assert!(
        two.points[2].interval().is_none(),
        "only one seed reached the third"
    );
    assert!(v.live(1).points.is_empty(), "B has not reported");
    // A's two results (60 and 36) have their interval; B has none yet.
    let rows = v.rows();
    let (lo, hi) = rows[0].spread[0].unwrap();
    assert!(lo < 48.0 && 48.0 < hi, "{:?}", rows[0]);
    assert_eq!(rows[0].spread[1], None);
}

/// Every point of `state`'s simulation run the page's way: the worker's `start()`
/// in slices, its `Progress` through serde, taken by `RunView` last point first.
fn run_the_pages_way(state: &AppState) -> RunView {
    let mut v = RunView::new(state, 1, RunKey::of(state), 1);
    let machine = state.scenario.machine.choice().clone();
    for slot in (0..v.n_points()).rev() {
        let pt = v.points[slot];
        let setup = v.point_setup(pt);
        let mut live = crate::worker::start(&machine, &v.labels[pt.side], &setup).unwrap();
        while !live.advance(1_000_000).unwrap() {}
        let p = crate::worker::progress(1, &live, 1.0, None);
        let p: Progress = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        v.assigned[0] = Some(slot);
        v.take(0, p, &[]);
    }
    assert!(v.done());
    v
}

/// A seed's example: its "with published" CSV and JSON are the bytes of `schedlab
/// reproduce NAME --scale page --format csv|json`, which runs the example's
/// `sweep_spec()` and writes with the same `export` functions
/// (`core/src/bin/schedlab/reproduce.rs`). Shortened here (two scales, two seeds,
/// 8 ms) so that it runs in a test; the page checks its example as it is against
/// the CLI in the browser test (`export`).
#[test]
fn the_pages_published_tables_are_the_clis_bytes() {
    use schedlab_core::experiment::{export, run};
    let mut e = schedlab_core::reproduce::page_examples()
        .unwrap()
        .into_iter()
        .find(|e| e.name == "seed01-tbench")
        .unwrap();
    let sim = e.scenario.sim.as_mut().unwrap();
    sim.sweep = vec![1, 4];
    sim.seeds = 2;
    sim.duration_ms = 8;
    let state = AppState::from_scenario(e.scenario.clone());
    let v = run_the_pages_way(&state);
    let files = crate::components::export_bar::sim_files(&v, "kunpeng920-6426", Some(&e)).unwrap();
    let text = |hook: &str| files.iter().find(|f| f.hook == hook).unwrap().text.clone();

    let sw = e.sweep_spec().unwrap();
    let reports: Vec<_> = sw.points().iter().map(|s| run(s).unwrap()).collect();
    let rows = sw.rows(&reports).unwrap();
    let p = e.published();
    let csv = text("published-csv");
    assert_eq!(csv, export::sweep_csv_published(&rows, p.change, p.values));
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().nth(1).unwrap().contains(",13.80,"), "{csv}");
    let json = text("published-json");
    let wall = serde_json::from_str::<serde_json::Value>(&json).unwrap()["wall_ms"]
        .as_f64()
        .unwrap()
        / 1e3;
    let pair = (sw.baseline, sw.patched);
    assert_eq!(
        json,
        export::sweep_json_published(&reports, &rows, pair, 2, wall, &p).unwrap()
    );
    assert!(json.contains("\"experiment\": \"seed01-tbench\""), "{json}");
}

/// The page's export is the CLI's: a run made the page's way (the worker's
/// `start()` in slices, its `Progress` through serde, `RunView` by point, in any
/// order) writes the bytes `schedlab sweep --format csv` and `schedlab run
/// --format csv` write for the same runs, which call `experiment::run` and the
/// same `export` functions (`core/src/bin/schedlab/sim.rs`).
#[test]
fn the_pages_csv_is_the_clis_bytes() {
    use schedlab_core::experiment::{export, run, SweepSpec};
    let mut state = AppState::default();
    let mut sim = state.sim().clone();
    sim.workload = schedlab_core::workload::Workload::NetperfTcpRr { instances: 2 };
    sim.duration_ms = 8;
    sim.seeds = 2;
    sim.seed = 3;
    sim.sweep = Vec::new();
    state.scenario.sim = Some(sim.clone());
    state.scenario.patches = "6.6".parse().unwrap();
    state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
    let v = run_the_pages_way(&state);
    assert_eq!(v.labels, ["6.6", "6.6+cluster"]);
    let files = crate::components::export_bar::sim_files(&v, "kunpeng920-6426", None).unwrap();
    let text = |hook: &str| files.iter().find(|f| f.hook == hook).unwrap().text.clone();

    // The CLI's way: `schedlab sweep … --threads 2 --seeds 2 --format csv`.
    let m = state.machine().clone();
    let base = sim.run_spec(&m, "6.6".parse().unwrap()).unwrap();
    let sw = SweepSpec {
        base: base.clone(),
        threads: vec![2],
        baseline: "6.6".parse().unwrap(),
        patched: "6.6+cluster".parse().unwrap(),
        seeds: 2,
    };
    let reports: Vec<_> = sw.points().iter().map(|s| run(s).unwrap()).collect();
    assert_eq!(
        text("ab-csv"),
        export::sweep_csv(&sw.rows(&reports).unwrap())
    );
    // `schedlab run … --seeds 2 --format csv` per side: A's output, then B's rows.
    let cli_run = |p: &str| {
        let s = sim.run_spec(&m, p.parse().unwrap()).unwrap();
        let r: Vec<_> = [3, 4].map(|k| run(&s.with_seed(k)).unwrap()).into();
        export::run_csv(&r)
    };
    let (a, b) = (cli_run("6.6"), cli_run("6.6+cluster"));
    let b_rows = b.split_once('\n').unwrap().1;
    assert_eq!(text("metrics-csv"), format!("{a}{b_rows}"));
    assert_eq!(text("metrics-csv").lines().count(), 5);
    // JSON: the same but for the wall time each measures itself.
    let a_json = text("a-json");
    let reports_a: Vec<_> = [3, 4].map(|k| run(&base.with_seed(k)).unwrap()).into();
    let wall: f64 = serde_json::from_str::<serde_json::Value>(&a_json).unwrap()["wall_ms"]
        .as_f64()
        .unwrap()
        / 1e3;
    assert_eq!(a_json, export::run_json(&reports_a, wall).unwrap());
}

/// Where the benchmark starts its clients (dbench's release) reaches the watched
/// side's live feed from every message, records or not: the live view plays the
/// start-up from it. A merge once left this out and only the browser test noticed.
#[test]
fn the_live_feed_learns_where_the_clients_start() {
    let mut state = AppState::default();
    let mut sim = state.sim().clone();
    sim.sweep = Vec::new();
    state.scenario.sim = Some(sim);
    state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
    let mut v = RunView::new(&state, 1, RunKey::of(&state), 1);
    let a = (0..v.n_points())
        .find(|&i| v.points[i].side == 0 && v.points[i].seed_idx == 0)
        .unwrap();
    v.assigned[0] = Some(a);
    let mut waiting = progress(1, 1.0, String::new());
    (waiting.done, waiting.report, waiting.start_pending) = (false, None, true);
    v.take(0, waiting, &[]);
    {
        let f = v.live.0[0].borrow();
        assert_eq!((f.start_ns, f.start_pending), (None, true));
    }
    let mut started = progress(1, 1.0, String::new());
    started.start_ns = Some(100_103_052);
    v.take(0, started, &[]);
    let f = v.live.0[0].borrow();
    assert_eq!((f.start_ns, f.start_pending), (Some(100_103_052), false));
    let b = v.live.0[1].borrow();
    assert_eq!(
        (b.start_ns, b.start_pending),
        (None, false),
        "B's feed is B's"
    );
}

/// The start-up note reads the most any finished report measured before every LLC's
/// first busy balance round, and nothing when every window is past it.
#[test]
fn the_start_up_is_the_most_any_report_measured_before_the_balance() {
    let mut state = AppState::default();
    let mut sim = state.sim().clone();
    (sim.seeds, sim.sweep) = (1, Vec::new());
    state.scenario.sim = Some(sim);
    state.scenario.wake.compare = Some("6.6+cluster".parse().unwrap());
    let run = |unsettled: [u64; 2]| {
        let mut v = RunView::new(&state, 1, RunKey::of(&state), 1);
        assert_eq!(v.n_points(), 2);
        for (slot, &ns) in unsettled.iter().enumerate() {
            let mut p = progress(1, 100.0, format!("{slot}"));
            p.report.as_mut().unwrap().unsettled_ns = ns;
            v.assigned[0] = Some(slot);
            v.take(0, p, &[]);
        }
        v.unsettled_ns()
    };
    assert_eq!(run([0, 0]), 0);
    assert_eq!(run([0, 7_000_000]), 7_000_000);
    assert_eq!(run([9_000_000, 7_000_000]), 9_000_000);
}
