//! The CI-sized reproduction of the seeds' tables: same checks as `schedlab reproduce`,
//! fewer rows and shorter runs. Rows that match the published numbers today are listed
//! in data/reproduce-ci-matching.json; a change that breaks one of them fails here.
//! Regenerate that file (after looking at why a row moved) with
//! `SCHEDLAB_BLESS=1 cargo test -p schedlab-core --test reproduce`.

use schedlab_core::reproduce::{self, Scale, EXPERIMENTS};

const MATCHING: &str = include_str!("../data/reproduce-ci-matching.json");

#[test]
fn rows_that_match_today_keep_matching() {
    let mut matching_now: Vec<String> = Vec::new();
    let mut report = String::new();
    for name in EXPERIMENTS {
        let t = reproduce::reproduce(name, Scale::Ci).unwrap_or_else(|e| panic!("{name}: {e}"));
        report.push_str(&t.render());
        assert!(!t.rows.is_empty(), "{name}: no rows");
        // Throughput tables say what each run measured; completion times have no window.
        assert_eq!(
            t.window.is_some(),
            name.starts_with("seed01-") && !name.contains("hackbench"),
            "{name}"
        );
        for r in &t.rows {
            assert!(
                r.model_baseline.is_finite() && r.model_baseline > 0.0,
                "{name} {}: no result",
                r.key
            );
            if r.matches() && (r.sign_ok.is_some() || r.size_ok.is_some()) {
                matching_now.push(format!("{name} {}", r.key));
            }
        }
    }
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        let json = serde_json::to_string_pretty(&matching_now).unwrap();
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/data/reproduce-ci-matching.json"
            ),
            json + "\n",
        )
        .unwrap();
        return;
    }
    let expected: Vec<String> = serde_json::from_str(MATCHING).unwrap();
    let lost: Vec<&String> = expected
        .iter()
        .filter(|k| !matching_now.contains(k))
        .collect();
    assert!(
        lost.is_empty(),
        "rows that matched the published numbers no longer do: {lost:?}\n{report}"
    );
}

#[test]
fn reproductions_are_deterministic() {
    let a = reproduce::reproduce("seed01-netperf-tcp-rr", Scale::Ci).unwrap();
    let b = reproduce::reproduce("seed01-netperf-tcp-rr", Scale::Ci).unwrap();
    let va: Vec<f64> = a.rows.iter().map(|r| r.model_change_pct).collect();
    let vb: Vec<f64> = b.rows.iter().map(|r| r.model_change_pct).collect();
    assert_eq!(va, vb);
}

/// The full tables measure past the LLC's first busy balance round; CI's a fifth.
#[test]
fn the_full_throughput_tables_measure_after_a_settled_warm_up() {
    use schedlab_core::experiment::Warmup;
    for (scale, warmup) in [(Scale::Full, Warmup::Settled), (Scale::Ci, Warmup::Fifth)] {
        for name in ["seed01-tbench", "seed01-netperf-tcp-rr"] {
            let specs = reproduce::plan(name, scale).unwrap();
            assert!(specs.iter().all(|s| s.warmup == warmup), "{name} {scale:?}");
        }
    }
}

#[test]
fn unknown_experiments_are_named() {
    let e = reproduce::plan("seed9", Scale::Ci).unwrap_err().to_string();
    assert!(e.contains("seed01-tbench"), "{e}");
}

/// The page's one-click seed experiments: each opens as a valid link, A and B are the
/// table's kernels, the sweep covers the table's rows with their published changes, and
/// a point run as the page runs it is the reproduction's own number.
#[test]
fn page_examples_are_the_reproductions() {
    use schedlab_core::scenario::{decode, encode};
    let examples = reproduce::page_examples().expect("examples");
    let names: Vec<&str> = examples.iter().map(|e| e.name).collect();
    assert_eq!(names, reproduce::EXPERIMENTS);
    for e in &examples {
        let back = decode(&encode(&e.scenario)).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        assert_eq!(back, e.scenario, "{}", e.name);
        let sim = e.scenario.sim.as_ref().expect("a simulation");
        let with_published = e.name != "seed01-hackbench-3of3";
        assert_eq!(!e.published.is_empty(), with_published, "{}", e.name);
        for (scale, _) in &e.published {
            assert!(sim.points().contains(scale), "{}: {scale}", e.name);
        }
    }
    let tbench = &examples[0];
    assert_eq!(tbench.scenario.patches.to_string(), "6.6");
    assert_eq!(
        tbench
            .scenario
            .wake
            .compare
            .map(|p| p.to_string())
            .as_deref(),
        Some("6.6+cluster")
    );
    let sim = tbench.scenario.sim.as_ref().expect("a simulation");
    assert_eq!(sim.points(), vec![1, 4, 8, 16, 32, 64, 128]);
    assert_eq!(tbench.published.first(), Some(&(1, 13.8)));
    assert_eq!(
        tbench.published_values.last(),
        Some(&(128, 6203.26, 6191.65))
    );
    assert!(
        examples[3].published_values.is_empty(),
        "seed 02's times ran 10x the loops"
    );
    // threads=1 under A, as the page runs it (each of its seeds), is the CI
    // reproduction's baseline: the same seeds, the same per-seed digests, the same mean.
    let spec = sim
        .point_spec(tbench.scenario.machine(), "6.6".parse().unwrap(), 1)
        .expect("a run");
    assert_eq!(sim.seeds, Scale::Ci.seeds());
    let page: Vec<_> = schedlab_core::experiment::seeds(sim.seed, sim.seeds)
        .map(|k| schedlab_core::experiment::run(&spec.with_seed(k)).expect("runs"))
        .collect();
    let table = reproduce::reproduce("seed01-tbench", Scale::Ci).expect("reproduces");
    let row = &table.rows[0];
    assert_eq!(row.key, "threads=1");
    let digests: Vec<&str> = page.iter().map(|r| r.digest.as_str()).collect();
    let want: Vec<&str> = row
        .per_seed
        .iter()
        .map(|s| s.baseline_digest.as_str())
        .collect();
    assert_eq!(digests, want);
    let values: Vec<f64> = page.iter().map(|r| r.value).collect();
    let mean = schedlab_core::stats::Estimate::of(&values)
        .expect("seeds")
        .mean;
    assert_eq!(mean, row.model_baseline);
    let cookies = examples.last().expect("seed 04");
    assert_eq!(
        cookies
            .scenario
            .wake
            .compare
            .map(|p| p.to_string())
            .as_deref(),
        Some("6.12+cookie-fastpath")
    );
    let (_, c) = cookies.published[0];
    assert!((c - 3.5).abs() < 0.05, "about 26.04 s against 25.13 s: {c}");
}
