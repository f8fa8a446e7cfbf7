use super::*;
use crate::patch::PatchSet;
use crate::wakeup::trace::{Step, Trace};

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
    assert!(v515.contains("WF_ON_CPU"), "before 5.19's idle-target rule");
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
fn steps_map_to_their_lines() {
    let t = Trace {
        steps: vec![
            Step::Enter {
                func: "select_idle_cpu",
                detail: String::new(),
            },
            Step::Enter {
                func: "select_idle_cpu/cluster",
                detail: String::new(),
            },
            Step::Probe {
                func: "select_idle_cpu",
                cpu: crate::cpumask::CpuId(1),
                reject: Some(crate::wakeup::Reject::Busy),
            },
            Step::Return {
                func: "select_idle_cpu/cluster",
                cpu: None,
                why: "nothing idle in the cluster; scan the rest of the LLC".into(),
            },
            Step::Probe {
                func: "select_idle_cpu",
                cpu: crate::cpumask::CpuId(5),
                reject: Some(crate::wakeup::Reject::BudgetSpent),
            },
        ],
    };
    let sites: Vec<Site> = hits(&t).expect("mapped").into_iter().map(|h| h.1).collect();
    assert_eq!(
        sites,
        [
            Site::ScanEnter,
            Site::ClusterEnter,
            Site::ClusterProbe,
            Site::ClusterDone,
            Site::ScanBudget
        ]
    );
    let unknown = Trace {
        steps: vec![Step::Enter {
            func: "select_idle_nothing",
            detail: String::new(),
        }],
    };
    assert!(hits(&unknown).unwrap_err().contains("select_idle_nothing"));
}
