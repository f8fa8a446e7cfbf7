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

#[test]
fn unknown_experiments_are_named() {
    let e = reproduce::plan("seed9", Scale::Ci).unwrap_err().to_string();
    assert!(e.contains("seed01-tbench"), "{e}");
}
