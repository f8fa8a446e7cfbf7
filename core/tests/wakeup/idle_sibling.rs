//! Hand-built wake-ups for the branches of select_idle_sibling(), select_idle_cpu()
//! and their budgets (SIS_UTIL, `update_idle_cpu_scan()`) under each patch.

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::topology::presets;
use schedlab_core::wakeup::scenario::WakeScenario;
use schedlab_core::wakeup::{
    self, wake_up, NoTrace, PathOnly, RqState, SchedState, Step, TaskId, TaskState, Trace, WakeEnv,
    WakeFlags, Waker,
};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{cpu, decide, prev_in_other_cluster};

#[test]
fn prev_idle_in_another_cluster_is_returned_on_6_6() {
    let s = prev_in_other_cluster(true, Some(8));
    assert_eq!(cpu(&s, "6.6"), 12);
}

#[test]
fn cluster_passes_prev_over_for_an_idle_cpu_in_targets_cluster() {
    let s = prev_in_other_cluster(true, Some(8));
    let (d, t) = decide(&s, "6.6+cluster");
    assert_eq!(d.cpu.0, 2);
    // The cluster (0-3) is scanned from target+1: CPU1 busy, CPU2 idle.
    let probes: Vec<u32> = t
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Probe { cpu, .. } => Some(cpu.0),
            _ => None,
        })
        .collect();
    assert_eq!(probes, vec![1, 2]);
    // 6.8 merged it: same answer.
    assert_eq!(cpu(&s, "6.8"), 2);
    assert_eq!(cpu(&s, "6.8-cluster"), 12);
}

#[test]
fn cluster_falls_back_to_prev_when_the_scan_finds_nothing_but_cluster_scan_does_not() {
    // The LLC looks overloaded (nr_idle_scan 0): select_idle_cpu() scans nothing.
    let s = prev_in_other_cluster(false, Some(0));
    let (d, t) = decide(&s, "6.6+cluster");
    assert_eq!(d.cpu.0, 12);
    assert!(t.render(&d).contains("fall back to prev"));
    // Seed 01 without 3/3 forgets prev: the wakee stacks on the busy target.
    assert_eq!(cpu(&s, "6.6+cluster-scan"), 0);
    assert_eq!(cpu(&s, "6.6"), 12);
}

#[test]
fn cluster_scan_then_llc_scan_find_prev_when_the_budget_allows() {
    // Nothing idle in 0-3; the LLC scan (cluster excluded) reaches CPU12 within budget.
    let s = prev_in_other_cluster(false, Some(16));
    let (d, _) = decide(&s, "6.6+cluster-scan");
    assert_eq!(d.cpu.0, 12);
    // Probes: cluster 1,2,3,0 then 4..12 = 4 + 9.
    assert_eq!(d.costs.cpus_probed, 13);
}

#[test]
fn target_idle_is_taken_first() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "3,7", "state": "idle" } ],
                 "wakee": { "id": 1, "prev_cpu": 7 }, "waker": { "cpu": 3, "task": { "id": 2 } } }"#;
    let (d, _) = decide(s, "6.8");
    // wake_affine_idle: this CPU3 idle and shares cache -> prev idle too -> prev.
    assert_eq!(d.cpu.0, 7);
    assert_eq!(d.costs.cpus_probed, 0);
}

#[test]
fn recent_used_cpu_is_tried_and_updated() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "9", "state": "idle" } ],
                 "wakee": { "id": 1, "prev_cpu": 5, "recent_used_cpu": 9 }, "waker": { "cpu": 0, "task": { "id": 2 } },
                 "wake_flags": ["sync"] }"#;
    let (d, _) = decide(s, "6.8");
    assert_eq!(d.cpu.0, 9);
    assert_eq!(d.effects.recent_used_cpu, Some(CpuId(5)));
}

#[test]
fn per_cpu_kthread_waker_stacks_on_prev() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "8", "state": "idle" } ],
                 "wakee": { "id": 1, "prev_cpu": 4 },
                 "waker": { "cpu": 4, "task": { "id": 2, "per_cpu_kthread": true } } }"#;
    assert_eq!(cpu(s, "6.8"), 4);
}

/// xeon-smt-8: cores (0,4) (1,5) (2,6) (3,7). CPU0 busy, CPU4 idle, core (1,5) idle.
fn smt_case(has_idle_cores: bool) -> String {
    format!(
        r#"{{ "machine": "xeon-smt-8",
             "cpus": [ {{ "cpus": "0,2,3,6,7", "state": "busy" }} ],
             "llc": [ {{ "cpu": 0, "has_idle_cores": {has_idle_cores} }} ],
             "wakee": {{ "id": 1, "prev_cpu": 0 }},
             "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }} }}"#
    )
}

#[test]
fn smt_idle_core_is_preferred_over_an_idle_sibling() {
    let (d, _) = decide(&smt_case(true), "6.8");
    assert_eq!(d.cpu.0, 1, "a whole idle core");
    assert!(d.costs.llc_shared_reads >= 1);
    let (d, _) = decide(&smt_case(false), "6.8");
    assert_eq!(d.cpu.0, 4, "select_idle_smt: idle sibling of prev");
}

#[test]
fn has_idle_cores_is_cleared_when_no_idle_core_is_found() {
    let s = r#"{ "machine": "xeon-smt-8", "cpus": [ { "cpus": "0-3", "state": "busy" } ],
                 "llc": [ { "cpu": 0, "has_idle_cores": true } ],
                 "wakee": { "id": 1, "prev_cpu": 0 }, "waker": { "cpu": 0, "task": { "id": 2 } } }"#;
    let (d, _) = decide(s, "6.8");
    // No whole idle core; select_idle_core remembered the first idle thread (CPU5).
    assert_eq!(d.cpu.0, 5);
    assert_eq!(d.effects.clear_idle_cores, Some(CpuId(0)));
}

/// Core scheduling: CPU0 runs cookie 9, its sibling CPU4 is idle. The wakee has
/// cookie 7. Core (2,6) is idle with nothing running.
fn cookie_case() -> &'static str {
    r#"{ "machine": "xeon-smt-8",
         "cpus": [ { "cpus": "0", "state": "busy", "cookie": 9 }, { "cpus": "1,3,5,7", "state": "busy", "cookie": 3 } ],
         "llc": [ { "cpu": 0, "has_idle_cores": false } ],
         "wakee": { "id": 1, "prev_cpu": 0, "cookie": 7 },
         "waker": { "cpu": 0, "task": { "id": 2, "cookie": 9 } } }"#
}

#[test]
fn cookie_mismatch_in_select_idle_smt_without_and_with_cookie_fastpath() {
    // Without seed 04 the sibling is taken although its core runs another cookie:
    // the wakee will be force-idled or force the sibling idle.
    let (d, _) = decide(cookie_case(), "6.8");
    assert_eq!(d.cpu.0, 4);
    // With it, select_idle_smt() checks the cookie and the LLC scan finds CPU2,
    // whose core runs no cookie... which also mismatches 7; CPU6 likewise. Nothing
    // matches: the scan returns -1 and the wakee stays on target.
    let (d, t) = decide(cookie_case(), "6.8+cookie-fastpath");
    let rejects: Vec<_> = t
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Probe {
                cpu,
                reject: Some(r),
                ..
            } => Some((cpu.0, r.as_str())),
            _ => None,
        })
        .collect();
    assert!(rejects.contains(&(4, "cookie mismatch")), "{rejects:?}");
    assert_eq!(d.cpu.0, 0);
}

#[test]
fn cookie_fastpath_accepts_a_whole_idle_core_for_target() {
    // target CPU2 idle and its whole core (2,6) idle: sched_core_cookie_match() is
    // true for an idle core whatever the cookie.
    let s = r#"{ "machine": "xeon-smt-8",
         "cpus": [ { "cpus": "0,1,3,4,5,7", "state": "busy", "cookie": 9 } ],
         "wakee": { "id": 1, "prev_cpu": 2, "cookie": 7 },
         "waker": { "cpu": 2, "in_task": false } }"#;
    assert_eq!(cpu(s, "6.8+cookie-fastpath"), 2);
}

fn budget_case(nr_idle_scan: u32) -> String {
    format!(
        r#"{{ "machine": "flat-16", "cpus": [ {{ "cpus": "0-14", "state": "busy" }} ],
             "llc": [ {{ "cpu": 0, "nr_idle_scan": {nr_idle_scan} }} ],
             "wakee": {{ "id": 1, "prev_cpu": 0 }}, "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }} }}"#
    )
}

#[test]
fn sis_util_budget_exhaustion() {
    let (d, t) = decide(&budget_case(3), "6.8");
    assert_eq!(d.cpu.0, 0, "budget spent before CPU15");
    assert_eq!(d.costs.cpus_probed, 3);
    assert!(t
        .steps
        .iter()
        .any(|s| matches!(s, Step::Probe { cpu, reject: Some(wakeup::Reject::BudgetSpent), .. } if cpu.0 == 4)));
    let (d, _) = decide(&budget_case(15), "6.8");
    assert_eq!(d.cpu.0, 15);
    assert_eq!(d.costs.cpus_probed, 15);
    // NO_SIS_UTIL: unlimited.
    let r = WakeScenario::from_json(&budget_case(3)).unwrap();
    let mut r2 = r.clone();
    r2.features = vec!["NO_SIS_UTIL".into()];
    let res = r2.resolve(Some("6.8")).unwrap();
    let d = wake_up(
        &res.env,
        &res.state,
        &res.wakee,
        &res.waker,
        res.flags,
        &mut NoTrace,
    );
    assert_eq!(d.cpu.0, 15);
}

#[test]
fn update_idle_cpu_scan_follows_the_kernel_formula() {
    let m = presets::machine("kunpeng920-6426").unwrap();
    let env = WakeEnv::new(&m, "6.8".parse().unwrap()).unwrap();
    // llc_weight 32, pct 117: idle -> 32; 50% util -> 32*(1 - 0.25*1.3689) = 21.
    assert_eq!(wakeup::update_idle_cpu_scan(&env, CpuId(0), 0), 32);
    assert_eq!(wakeup::update_idle_cpu_scan(&env, CpuId(0), 32 * 512), 21);
    // ~85% average util reaches 0.
    assert_eq!(wakeup::update_idle_cpu_scan(&env, CpuId(0), 32 * 880), 0);
}

#[test]
fn no_smt_idle_cores_removes_the_shared_line_read_on_non_smt_machines() {
    let s = budget_case(15);
    let (with, _) = decide(&s, "6.6");
    let (without, _) = decide(&s, "6.6-no-smt-idle-cores");
    assert_eq!(with.cpu, without.cpu, "same decision");
    assert_eq!(
        without.costs.llc_shared_reads,
        with.costs.llc_shared_reads + 1
    );
}

#[test]
fn cluster_scan_looking_for_idle_cores_ignores_the_budget_with_or_without_the_idle_hint() {
    // Alder Lake: E-core cluster 16-19 inside an LLC with SMT P-cores, so
    // has_idle_cores is read and true. The cluster loop then calls select_idle_core()
    // without spending nr: a budget of 1 (nr = 2) must not stop it before CPU18.
    let m = presets::machine("alderlake-8p8e").unwrap();
    let env = WakeEnv::new(&m, "6.6+cluster".parse().unwrap()).unwrap();
    let mut s = SchedState::all_idle(24, |_| 24);
    s.rqs[16] = RqState::busy(1);
    s.rqs[17] = RqState::busy(1);
    for sh in &mut s.llc_shared {
        sh.nr_idle_scan = 1;
        sh.has_idle_cores = true;
    }
    let p = TaskState::new(TaskId(1), CpuId(16), CpuMask::full(24));
    let waker = Waker {
        cpu: CpuId(16),
        task: Some(TaskState::new(TaskId(2), CpuId(16), CpuMask::full(24))),
        in_task: true,
    };
    let traced = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut Trace::default());
    assert_eq!(traced.cpu, CpuId(18));
    s.enable_idle_hint();
    let fast = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut PathOnly);
    assert_eq!(traced, fast);
}

/// The fall-back's trace words say whether select_idle_cpu() scanned at all. The
/// LLC's nr_idle_scan is set on the resolved state: a scenario file refuses one above
/// the LLC's weight.
fn fallback_words(nr_idle_scan: u32) -> String {
    let s = prev_in_other_cluster(false, Some(0));
    let mut r = super::resolve(&s, "6.6+cluster");
    r.state.llc_shared[0].nr_idle_scan = nr_idle_scan;
    let mut t = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    assert_eq!(d.cpu.0, 12, "falls back to prev");
    t.render(&d)
}

#[test]
fn the_fallback_says_no_scan_when_nr_idle_scan_is_0() {
    let r = fallback_words(0);
    assert!(
        r.contains("no scan (SIS_UTIL: nr_idle_scan is 0); fall back to prev"),
        "{r}"
    );
    assert!(!r.contains("found"), "{r}");
}

#[test]
fn the_fallback_says_no_scan_when_the_cluster_budget_starts_at_0() {
    // nr_idle_scan's int bits -1: nr = -1 + 1 = 0 passes "if (nr == 1)", and the
    // cluster loop's "if (--nr <= 0) return -1;" stops before its first probe.
    let r = fallback_words(u32::MAX);
    assert!(
        r.contains("no scan (scan budget nr is 0 at the first CPU); fall back to prev"),
        "{r}"
    );
}

#[test]
fn the_fallback_counts_the_probes_of_a_scan_that_found_nothing() {
    // nr = 3: CPUs 1 and 2 probed busy, then the budget stops the loop at CPU 3.
    let r = fallback_words(2);
    assert!(
        r.contains(
            "the scan found no idle CPU in 2 probes before its budget ran out; fall back to prev"
        ),
        "{r}"
    );
}
