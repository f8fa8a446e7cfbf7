use super::*;
use crate::patch::PatchSet;
use crate::wakeup::trace::{Step, Trace, Tracer};

fn set(text: &str) -> PatchSet {
    text.parse().expect("a patch set")
}

fn text(set: &PatchSet) -> String {
    listing(set)
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn marked(set: &PatchSet, p: Patch) -> usize {
    listing(set).iter().filter(|l| l.by == Some(p)).count()
}

#[test]
fn the_listing_follows_the_release() {
    let v515 = text(&set("5.15"));
    assert!(v515.contains("sched_feat(SIS_PROP)") && v515.contains("wake_avg_idle"));
    assert!(!v515.contains("SIS_UTIL") && !v515.contains("WF_CURRENT_CPU"));
    assert!(v515.contains("WF_ON_CPU"), "before 6.0's idle-target rule");
    let v68 = text(&set("6.8"));
    assert!(v68.contains("nr_idle_scan") && !v68.contains("SIS_PROP"));
    assert!(v68.contains("WF_CURRENT_CPU") && v68.contains("!cpu_rq(cpu)->nr_running"));
    assert!(v68.contains("for_each_cpu_wrap(cpu, cpus, target + 1)"));
    let llc_test = "if (!cpumask_test_cpu(cpu, sched_domain_span(sd)))";
    assert!(!v68.contains(llc_test), "6.9's LLC test is not in 6.8");
    assert!(text(&set("6.12")).contains(llc_test));
}

#[test]
fn each_patch_marks_the_lines_it_adds_or_changes() {
    // Seed 01: the cluster tests on prev and recent, the cluster-first scan, and
    // (3/3 only) the prev/recent fallback.
    assert_eq!(marked(&set("6.6"), Patch::Cluster), 0);
    let full = marked(&set("6.6+cluster"), Patch::Cluster);
    let scan = marked(&set("6.6+cluster-scan"), Patch::ClusterScan);
    assert!(full > scan && scan >= 20, "full {full}, scan-only {scan}");
    assert!(text(&set("6.6+cluster")).contains("return prev_aff;"));
    assert!(!text(&set("6.6+cluster-scan")).contains("prev_aff"));
    // Seed 02: the sched_smt_active() test around test_idle_cores().
    assert_eq!(marked(&set("6.6"), Patch::NoSmtIdleCores), 1);
    assert_eq!(
        marked(&set("6.6-no-smt-idle-cores"), Patch::NoSmtIdleCores),
        0
    );
    // Seed 03: the L2 test; seed 04: a cookie test in each fast path and in
    // select_idle_smt().
    let both = set("6.8+ttwu-l2c+cookie-fastpath");
    assert_eq!(marked(&both, Patch::TtwuL2c), 1);
    assert!(text(&both).contains("cpus_share_l2c(smp_processor_id(), cpu)"));
    assert_eq!(marked(&both, Patch::CookieFastpath), 4);
    // Every site a line carries is one hits() can name, and each function's
    // lines are together.
    let l = listing(&both);
    let mut seen: Vec<&str> = Vec::new();
    for line in &l {
        if seen.last() != Some(&line.func) {
            assert!(!seen.contains(&line.func), "{} is split", line.func);
            seen.push(line.func);
        }
    }
}

#[test]
fn each_step_maps_to_the_site_it_was_made_at() {
    let mut t = Trace::default();
    t.step(Site::ScanEnter, || Step::Enter {
        func: "select_idle_cpu",
        detail: String::new(),
    });
    t.step(Site::ClusterProbe, || Step::Probe {
        func: "select_idle_cpu",
        cpu: crate::cpumask::CpuId(1),
        reject: Some(crate::wakeup::Reject::Busy),
    });
    t.step(Site::ScanBudget, || Step::Probe {
        func: "select_idle_cpu",
        cpu: crate::cpumask::CpuId(5),
        reject: Some(crate::wakeup::Reject::BudgetSpent),
    });
    assert_eq!(
        hits(&t).expect("mapped"),
        [
            (0, Site::ScanEnter),
            (1, Site::ClusterProbe),
            (2, Site::ScanBudget)
        ]
    );
    // A step pushed by hand has no site: refused, not guessed from its words.
    t.steps.push(Step::Enter {
        func: "select_idle_nothing",
        detail: String::new(),
    });
    let e = hits(&t).unwrap_err();
    assert!(
        e.contains("step 3") && e.contains("select_idle_nothing"),
        "{e}"
    );
}
