//! Hand-built wake-ups for every branch of select_idle_sibling() under each patch,
//! and property tests of the wake-up path.

use proptest::prelude::*;
use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::patch::PatchSet;
use schedlab_core::topology::presets;
use schedlab_core::wakeup::scenario::{ResolvedWake, WakeScenario};
use schedlab_core::wakeup::{
    self, code, wake_up, Decision, NoTrace, PathOnly, QueuePath, RqState, SchedState, Step, TaskId,
    TaskState, Trace, WakeEnv, WakeFlags, Waker,
};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn resolve(json: &str, patches: &str) -> ResolvedWake {
    WakeScenario::from_json(json)
        .unwrap()
        .resolve(Some(patches))
        .unwrap()
}

fn decide(json: &str, patches: &str) -> (Decision, Trace) {
    let r = resolve(json, patches);
    let mut t = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    (d, t)
}

fn cpu(json: &str, patches: &str) -> u32 {
    decide(json, patches).0.cpu.0
}

/// Kunpeng 920-6426 node 0 (8 clusters of 4). The waker runs on CPU0; the wakee last
/// ran on CPU12 (cluster 12-15) and CPU12 is idle.
fn prev_in_other_cluster(idle_in_target_cluster: bool, nr_idle_scan: Option<u32>) -> String {
    let extra = if idle_in_target_cluster {
        r#", { "cpus": "2", "state": "idle" }"#
    } else {
        ""
    };
    let llc = nr_idle_scan.map_or(String::new(), |n| {
        format!(r#", "llc": [ {{ "cpu": 0, "nr_idle_scan": {n} }} ]"#)
    });
    format!(
        r#"{{ "machine": "kunpeng920-6426",
             "cpus": [ {{ "cpus": "0-127", "state": "busy" }}, {{ "cpus": "12", "state": "idle" }}{extra} ]{llc},
             "wakee": {{ "id": 1, "prev_cpu": 12, "allowed": "0-31" }},
             "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }},
             "wake_flags": ["sync"] }}"#
    )
}

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
fn ttwu_queue_cond_llc_versus_l2_sharing() {
    // EPYC: CPUs 0 and 1 share the CCX L3 but not an L2 (L2 per core).
    let m = presets::machine("epyc9654-2p").unwrap();
    let base: PatchSet = "6.8".parse().unwrap();
    let l2c: PatchSet = "6.8+ttwu-l2c".parse().unwrap();
    let env = WakeEnv::new(&m, base).unwrap();
    let env_l2c = WakeEnv::new(&m, l2c).unwrap();
    let mut s = SchedState::all_idle(m.nr_cpus(), |_| 16);
    s.rqs[1] = RqState::busy(1);
    let p = TaskState::new(TaskId(1), CpuId(1), CpuMask::full(m.nr_cpus()));
    // Busy target in the same LLC: the waker locks the remote rq...
    assert!(!wakeup::ttwu_queue_cond(&env, &s, &p, CpuId(0), CpuId(1)));
    // ...unless they must share an L2 (seed 03): then the wakelist and an IPI.
    assert!(wakeup::ttwu_queue_cond(
        &env_l2c,
        &s,
        &p,
        CpuId(0),
        CpuId(1)
    ));
    // SMT siblings share the L2: no IPI either way.
    s.rqs[192] = RqState::busy(1);
    assert!(!wakeup::ttwu_queue_cond(
        &env_l2c,
        &s,
        &p,
        CpuId(0),
        CpuId(192)
    ));
    // Another CCX: always the wakelist.
    s.rqs[8] = RqState::busy(1);
    assert!(wakeup::ttwu_queue_cond(&env, &s, &p, CpuId(0), CpuId(8)));
    // Idle target in the same LLC: wakelist (v5.19+).
    assert!(wakeup::ttwu_queue_cond(&env, &s, &p, CpuId(0), CpuId(2)));
}

#[test]
fn wakelist_without_ipi_when_the_target_polls() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "5", "state": "idle", "polling": true } ],
                 "wakee": { "id": 1, "prev_cpu": 5 }, "waker": { "cpu": 0, "task": { "id": 2 } } }"#;
    let (d, _) = decide(s, "6.8");
    assert_eq!(d.cpu.0, 5);
    assert_eq!(d.queue, QueuePath::Wakelist { ipi: false });
    let (d, _) = decide(&s.replace("\"polling\": true", "\"polling\": false"), "6.8");
    assert_eq!(d.queue, QueuePath::Wakelist { ipi: true });
}

/// EPYC 9654 NPS1: one node per socket holds 12 LLCs (CCX 40-47 holds prev 43 and
/// CPU 40). Every CPU busy; p may run on CPUs 0 and 40 only; the waker runs on prev.
fn fallback_case(machine: &str, allowed: &str, extra: &str) -> String {
    format!(
        r#"{{ "machine": "{machine}", "patches": "6.8",
             "cpus": [ {{ "cpus": "0-{last}", "state": "busy" }}{extra} ],
             "wakee": {{ "id": 1, "prev_cpu": 43, "allowed": "{allowed}" }},
             "waker": {{ "cpu": 43, "task": {{ "id": 2 }} }} }}"#,
        last = if machine == "epyc9654-1p" { 191 } else { 383 },
    )
}

/// kernel/sched/core.c (v6.8), select_task_rq() lines 3655-3656 and
/// select_fallback_rq() lines 3561-3630. select_task_rq_fair() cannot pull to the
/// waker's CPU 43 (not allowed), select_idle_sibling(p, 43, 43) finds nothing idle
/// (nr_idle_scan is 0) and returns 43, which is_cpu_allowed() rejects; then
/// select_fallback_rq(43, p) walks `cpumask_of_node(cpu_to_node(43))` (lines
/// 3573-3581) from CPU 0, not prev's LLC, and CPU 0 is allowed and active: it wins over
/// CPU 40 although 40 shares prev's L3. CPU 0 shares no cache with the waker, so
/// ttwu_queue_cond() (line 3997: "!cpus_share_cache(smp_processor_id(), cpu)")
/// queues it on CPU 0's wakelist with an IPI; CPU 40 would have taken the remote rq
/// lock.
#[test]
fn select_fallback_rq_tries_prevs_node_before_its_llc() {
    for machine in ["epyc9654-2p", "epyc9654-1p"] {
        let (d, t) = decide(&fallback_case(machine, "0,40", ""), "6.8");
        assert_eq!(d.cpu.0, 0, "{machine}: {}", t.render(&d));
        assert_eq!(d.queue, QueuePath::Wakelist { ipi: true }, "{machine}");
        assert!(
            t.render(&d).contains("first allowed CPU of prev's node"),
            "{}",
            t.render(&d)
        );
    }
}

/// select_fallback_rq() (kernel/sched/core.c v6.8): past prev's node, lines 3583-3590
/// take the first allowed CPU that is_cpu_allowed() (line 2479: a user task needs
/// cpu_active()); with none, lines 3592-3613 widen p's mask (cpuset, then
/// cpu_possible_mask) and take the first active CPU.
#[test]
fn select_fallback_rq_then_any_allowed_cpu_then_any_active_cpu() {
    // Node 1 of the 2P (CPUs 96-191, 288-383): nothing allowed on prev's node 0.
    let (d, _) = decide(&fallback_case("epyc9654-2p", "100,300", ""), "6.8");
    assert_eq!(d.cpu.0, 100);
    // CPU 0 is going down (not active): the node walk passes it for CPU 40.
    let inactive0 = r#", { "cpus": "0", "active": false }"#;
    let (d, _) = decide(&fallback_case("epyc9654-2p", "0,40", inactive0), "6.8");
    assert_eq!(d.cpu.0, 40);
    // Neither allowed CPU active: affinity is broken, the first active CPU takes it.
    let both = r#", { "cpus": "0,40", "active": false }"#;
    let (d, t) = decide(&fallback_case("epyc9654-2p", "0,40", both), "6.8");
    assert_eq!(d.cpu.0, 1);
    assert!(
        t.render(&d).contains("affinity widened"),
        "{}",
        t.render(&d)
    );
}

/// kernel/sched/fair.c (v6.8), wake_wide() lines 6985-6996: `master` and `slave`
/// are `unsigned int` and `factor` (sd_llc_size, 16 on an EPYC 9654 CCX) converts to
/// `unsigned int`, so `slave * factor` = 2^28 * 16 wraps to 0: `master < 0` is false
/// and the wake-up goes wide. want_affine is then false, the domain walk breaks at
/// the first level, and select_idle_sibling(p, prev, prev) finds nothing idle: prev
/// (CPU 8, another CCX) it is. Without the wrap (a saturating product) wake_wide()
/// says no and the sync wake_affine_idle() pulls p to the waker's CPU 0.
#[test]
fn wake_wide_multiplies_flips_as_unsigned_int_and_wraps() {
    let s = r#"{ "machine": "epyc9654-2p", "patches": "6.8",
                 "cpus": [ { "cpus": "0-383", "state": "busy" } ],
                 "wakee": { "id": 1, "prev_cpu": 8, "wakee_flips": 268435456 },
                 "waker": { "cpu": 0, "task": { "id": 2, "wakee_flips": 268435456, "last_wakee": 1 } },
                 "wake_flags": ["sync"] }"#;
    let (d, t) = decide(s, "6.8");
    assert_eq!(d.cpu.0, 8, "{}", t.render(&d));
    assert!(t.steps.iter().any(|s| matches!(
        s,
        Step::Check {
            func: "wake_wide",
            outcome: true,
            ..
        }
    )));
    // record_wakee() left the waker's flips alone (same last_wakee, no decay).
    assert_eq!(d.effects.waker_wakee.map(|w| w.0), Some(268435456));
    // One flip less on each side: 2^28 - 1 times 16 does not wrap, and 2^28 - 1 <
    // 2^32 - 16: wake_wide() says no, the sync wake-up pulls to the waker.
    let s = s.replace("268435456", "268435455");
    assert_eq!(cpu(&s, "6.8"), 0);
}

/// kernel/sched/fair.c (v6.8), record_wakee() lines 6951-6966: `wakee_flips` is
/// `unsigned int`, so `current->wakee_flips++` wraps to 0; `time_after(jiffies,
/// decay_ts + HZ)` is a signed difference of `unsigned long`s.
#[test]
fn record_wakee_wraps_the_flip_count_and_uses_time_after() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" } ],
                 "wakee": { "id": 1, "prev_cpu": 5 },
                 "waker": { "cpu": 0, "task": { "id": 2, "wakee_flips": 4294967295, "last_wakee": 3 } } }"#;
    let (d, _) = decide(s, "6.8");
    assert_eq!(d.effects.waker_wakee, Some((0, 0, TaskId(1))));
    // decay_ts far ahead of jiffies (0): decay_ts + HZ wraps past 2^64, and
    // time_after() still says jiffies is before it: no decay.
    let s = s.replace(
        r#""last_wakee": 3"#,
        r#""last_wakee": 1, "wakee_flip_decay_ts": 18446744073709551615"#,
    );
    let (d, _) = decide(&s, "6.8");
    assert_eq!(
        d.effects.waker_wakee,
        Some((4294967295, u64::MAX, TaskId(1)))
    );
}

/// kernel/sched/fair.c (v6.8), select_idle_cpu() line 7368: `nr =
/// READ_ONCE(sd_share->nr_idle_scan) + 1` in `int`. An nr_idle_scan whose bits read
/// as -1 gives nr = 0, not 1: no early return, but the first `--nr <= 0` (line 7406)
/// ends the scan before any probe.
#[test]
fn sis_util_budget_is_an_int() {
    // A state file may not hold such a value (nr_idle_scan is at most the LLC's
    // size there), so the state is set directly: the decision path still mirrors the
    // kernel's int arithmetic for whatever the state holds.
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "9", "state": "idle" } ],
                 "wakee": { "id": 1, "prev_cpu": 5 }, "waker": { "cpu": 0, "task": { "id": 2 } },
                 "wake_flags": ["sync"] }"#;
    let mut r = resolve(s, "6.8");
    for sh in &mut r.state.llc_shared {
        sh.nr_idle_scan = u32::MAX;
    }
    let mut t = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    assert_eq!(d.costs.cpus_probed, 0, "{}", t.render(&d));
    assert_eq!(d.cpu.0, 0);
}

/// kernel/sched/fair.c (v6.8), wake_affine_weight() lines 7037-7078: the effective
/// loads are `s64` and every step wraps (-fno-strict-overflow; the `unsigned long`
/// operands make some steps `u64`, with the same bits). this_eff_load = (2^55 + 1024)
/// × 100 × 1024 = 25 × 2^67 + 104857600 ≡ 104857600 (mod 2^64); prev_eff_load =
/// (2048 - 1024) × 108 × 1024 = 113246208 (imbalance_pct 117: 100 + 17 / 2). The
/// wrapped product is the smaller: the kernel pulls p to the waker.
#[test]
fn wake_affine_weight_wraps_like_the_kernels_s64() {
    // Past what a state file accepts (a CPU's load is bounded there), so set directly.
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" },
                   { "cpus": "5", "load": 2048 } ],
                 "wakee": { "id": 1, "prev_cpu": 5 }, "waker": { "cpu": 0, "task": { "id": 2 } } }"#;
    let mut r = resolve(s, "6.8");
    r.state.rqs[0].load_avg = 1 << 55;
    let mut t = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    assert!(
        t.render(&d)
            .contains("this_eff_load 104857600 < prev_eff_load 113246208"),
        "{}",
        t.render(&d)
    );
    assert_eq!(d.cpu.0, 0);
}

#[test]
fn bad_state_files_get_clear_errors() {
    let e = WakeScenario::from_json("{").unwrap_err().to_string();
    assert!(e.contains("cannot read"), "{e}");
    let s =
        r#"{ "machine": "flat-16", "wakee": { "id": 1, "prev_cpu": 99 }, "waker": { "cpu": 0 } }"#;
    let e = WakeScenario::from_json(s)
        .unwrap()
        .resolve(None)
        .err()
        .unwrap()
        .to_string();
    assert_eq!(e, "wakee.prev_cpu: CPU 99 is out of range (CPUs 0-15)");
    let s = r#"{ "machine": "nope", "wakee": { "id": 1 }, "waker": { "cpu": 0 } }"#;
    let e = WakeScenario::from_json(s)
        .unwrap()
        .resolve(None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown machine preset"), "{e}");
    let s = r#"{ "machine": "flat-16", "wakee": { "id": 1, "allowed": "3-1" }, "waker": { "cpu": 0 } }"#;
    assert!(WakeScenario::from_json(s).unwrap().resolve(None).is_err());
    let s = r#"{ "machine": "flat-16", "wakee": { "id": 1 }, "waker": { "cpu": 0 }, "wake_flags": ["fast"] }"#;
    let e = WakeScenario::from_json(s)
        .unwrap()
        .resolve(None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown flag"), "{e}");
}

#[test]
fn example_state_files_resolve() {
    for (name, text) in [
        (
            "prev-other-cluster",
            include_str!("../../examples/wake/prev-other-cluster.json"),
        ),
        (
            "smt-cookie",
            include_str!("../../examples/wake/smt-cookie.json"),
        ),
    ] {
        let r = WakeScenario::from_json(text)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .resolve(None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut NoTrace);
        assert!(r.wakee.allowed.test_cpu(d.cpu), "{name}");
    }
}

// ---- properties ----

const PRESETS: [&str; 6] = [
    "kunpeng920-4826",
    "jacobsville",
    "xeon-smt-8",
    "flat-16",
    "epyc9654-1p",
    // SMT cores and clusters in one LLC: the cluster scan meets has_idle_cores.
    "alderlake-8p8e",
];
const SETS: [&str; 9] = [
    "6.6",
    "6.6+cluster",
    "6.6+cluster-scan",
    "6.8",
    "6.8+cookie-fastpath+ttwu-l2c",
    "6.12",
    "5.15",
    "6.6-no-smt-idle-cores",
    "6.6+cluster-no-smt-idle-cores",
];

prop_compose! {
    fn random_wakeup()(
        preset in 0usize..PRESETS.len(),
        set in 0usize..SETS.len(),
        seed in any::<u64>(),
        busy_pct in 0u64..=100,
        sync in any::<bool>(),
        restrict in any::<bool>(),
    ) -> (usize, usize, u64, u64, bool, bool) {
        (preset, set, seed, busy_pct, sync, restrict)
    }
}

/// Domains are built once per (preset, patch set): building them per case would
/// dominate the test's time.
fn env_for(preset: usize, set: usize) -> &'static WakeEnv {
    use std::sync::OnceLock;
    static ENVS: OnceLock<Vec<Vec<WakeEnv>>> = OnceLock::new();
    &ENVS.get_or_init(|| {
        PRESETS
            .iter()
            .map(|name| {
                let m = presets::machine(name).unwrap();
                SETS.iter()
                    .map(|s| WakeEnv::new(&m, s.parse().unwrap()).unwrap())
                    .collect()
            })
            .collect()
    })[preset][set]
}

mod common;

/// The crate's PRNG with the name the random states below draw through.
struct Draws(schedlab_core::rng::Rng);
impl Draws {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
}

fn random_state(
    env: &WakeEnv,
    seed: u64,
    busy_pct: u64,
    restrict: bool,
) -> (SchedState, TaskState, Waker) {
    let n = env.nr_cpus();
    let mut r = Draws(common::rng(seed));
    let mut s = SchedState::all_idle(n, |_| 0);
    s.core_sched_enabled = r.next().is_multiple_of(4);
    for c in 0..n as usize {
        if r.next() % 100 < busy_pct {
            s.rqs[c] = RqState::busy(1 + (r.next() % 3) as u32);
        }
        if r.next().is_multiple_of(10) {
            s.rqs[c].ttwu_pending = true;
        }
        s.rqs[c].core_cookie = r.next() % 3;
    }
    for c in env.domains.cpu_map.iter() {
        if env.llc_shared_of(c) == Some(c) {
            let sum: u64 = env
                .domains
                .cpu(c)
                .llc()
                .unwrap()
                .span
                .iter()
                .map(|o| s.rqs[o.idx()].util_avg)
                .sum();
            s.llc_shared[c.idx()].nr_idle_scan = wakeup::update_idle_cpu_scan(env, c, sum);
            s.llc_shared[c.idx()].has_idle_cores = r.next().is_multiple_of(2);
        }
    }
    let allowed = if restrict {
        let a = CpuMask::from_cpus(n, (0..n).filter(|_| r.next().is_multiple_of(2)).map(CpuId));
        if a.is_empty() {
            CpuMask::of(n, CpuId((r.next() % n as u64) as u32))
        } else {
            a
        }
    } else {
        CpuMask::full(n)
    };
    let mut p = TaskState::new(TaskId(1), CpuId((r.next() % n as u64) as u32), allowed);
    p.recent_used_cpu = CpuId((r.next() % n as u64) as u32);
    p.wakee_flips = (r.next() % 64) as u32;
    p.cookie = r.next() % 3;
    let mut cur = TaskState::new(TaskId(2), CpuId(0), CpuMask::full(n));
    cur.wakee_flips = (r.next() % 64) as u32;
    let waker = Waker {
        cpu: CpuId((r.next() % n as u64) as u32),
        task: Some(cur),
        in_task: true,
    };
    (s, p, waker)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn wakeups_are_allowed_deterministic_and_bounded(w in random_wakeup()) {
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (s, p, waker) = random_state(env, seed, busy_pct, restrict);
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let mut t = Trace::default();
        let d = wake_up(env, &s, &p, &waker, flags, &mut t);
        prop_assert!(p.allowed.test_cpu(d.cpu), "seed {seed}: CPU{} not allowed ({})", d.cpu.0, p.allowed);
        // Deterministic, and tracing does not change the answer.
        let d2 = wake_up(env, &s, &p, &waker, flags, &mut PathOnly);
        prop_assert_eq!(&d, &d2);
        // Rendering never panics.
        let _ = t.render(&d);
        let _ = serde_json::to_string(&t).unwrap();
    }

    #[test]
    fn every_step_of_a_decision_has_its_line_in_the_listing(
        w in random_wakeup(), on_cpu in any::<bool>(), kthread in any::<bool>()
    ) {
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (s, mut p, mut waker) = random_state(env, seed, busy_pct, restrict);
        p.on_cpu = on_cpu && seed % 3 == 0;
        if kthread {
            // A per-CPU kthread waking on prev: select_idle_sibling()'s stacking case.
            waker.cpu = p.prev_cpu;
            if let Some(t) = &mut waker.task {
                t.per_cpu_kthread = true;
            }
        }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let mut t = Trace::default();
        let _ = wake_up(env, &s, &p, &waker, flags, &mut t);
        let hits = code::hits(&t);
        prop_assert!(hits.is_ok(), "{} on {}: {}", SETS[set], PRESETS[preset], hits.unwrap_err());
        let listing = code::listing(&env.patches);
        for (_, site) in hits.unwrap() {
            let line = code::line_site(site);
            prop_assert!(
                listing.iter().any(|l| l.site == Some(line)),
                "{} on {}: the listing has no line for {site:?}", SETS[set], PRESETS[preset]
            );
        }
    }

    #[test]
    fn with_nothing_idle_the_result_is_target_prev_or_fallback(
        preset in 0usize..PRESETS.len(), set in 0usize..SETS.len(), seed in any::<u64>(), sync in any::<bool>()
    ) {
        let env = env_for(preset, set);
        let (mut s, p, waker) = random_state(env, seed, 100, false);
        for rq in &mut s.rqs { *rq = RqState::busy(2); }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let mut t = Trace::default();
        let d = wake_up(env, &s, &p, &waker, flags, &mut t);
        // select_idle_sibling() was called with target = waker CPU or prev.
        prop_assert!(d.cpu == waker.cpu || d.cpu == p.prev_cpu, "seed {seed}: CPU{}", d.cpu.0);
    }

    #[test]
    fn sis_util_bounds_the_probes(seed in any::<u64>(), busy_pct in 50u64..=100, nr in 0u32..8) {
        // !SMT: no idle-core search, so at most nr CPUs are probed.
        let m = presets::machine("kunpeng920-6426").unwrap();
        let env = WakeEnv::new(&m, "6.8".parse().unwrap()).unwrap();
        let (mut s, p, waker) = random_state(&env, seed, busy_pct, false);
        for sh in &mut s.llc_shared { sh.nr_idle_scan = nr; }
        let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
        prop_assert!(d.costs.cpus_probed <= nr, "seed {seed}: probed {} > {nr}", d.costs.cpus_probed);
    }

}

proptest! {
    // Cheap per case, and the interesting corners (a small budget running out inside
    // the cluster, has_idle_cores set on a !SMT machine) are rare: many cases.
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn the_idle_hint_changes_nothing_but_speed(
        w in random_wakeup(), nr in 0u32..40, waker_in_llc in any::<bool>()
    ) {
        // The simulator's fast scan (idle hint, no trace) against the CPU-by-CPU walk
        // the trace forces: same CPU, same probes, same remote reads, same effects.
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (mut s, p, mut waker) = random_state(env, seed, busy_pct, restrict);
        s.core_sched_enabled = false;
        if nr < 32 {
            for sh in &mut s.llc_shared { sh.nr_idle_scan = nr; }
        }
        if waker_in_llc {
            // Let the waker sit inside the scanned LLC so it can be among the probes.
            waker.cpu = CpuId((p.prev_cpu.0 + 1) % env.nr_cpus());
        }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let slow = wake_up(env, &s, &p, &waker, flags, &mut Trace::default());
        let mut fast_state = s.clone();
        fast_state.enable_idle_hint();
        let fast = wake_up(env, &fast_state, &p, &waker, flags, &mut PathOnly);
        prop_assert_eq!(&slow, &fast, "seed {}", seed);
    }
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

#[test]
fn sis_prop_budget_on_kernels_before_6_0() {
    // 5.15: SIS_PROP on, no SIS_UTIL. nr = span_weight × wake_avg_idle / avg_scan_cost,
    // at least 4.
    let m = presets::machine("flat-16").unwrap();
    let ps: PatchSet = "5.15".parse().unwrap();
    assert!(ps.features.sis_prop && !ps.features.sis_util);
    let env = WakeEnv::new(&m, ps).unwrap();
    let mut s = SchedState::all_idle(16, |_| 16);
    for c in 0..15 {
        s.rqs[c] = RqState::busy(1);
    }
    s.sis_prop.avg_scan_cost_ns[0] = 999;
    let p = TaskState::new(TaskId(1), CpuId(0), CpuMask::full(16));
    let waker = Waker {
        cpu: CpuId(0),
        task: Some(TaskState::new(TaskId(2), CpuId(0), CpuMask::full(16))),
        in_task: true,
    };
    // Plenty of recent idle time: 16 × 1000 / 1000 = 16, the scan reaches CPU15.
    s.sis_prop.wake_avg_idle_ns[0] = 1000;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(15));
    assert!(d.effects.sis_prop_scan);
    // Little idle time: the floor of 4 leaves 3 probes, and the wakee stays on target.
    s.sis_prop.wake_avg_idle_ns[0] = 100;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(0));
    assert_eq!(d.costs.cpus_probed, 3);
    // One jiffy later the average is halved before use.
    s.sis_prop.wake_avg_idle_ns[0] = 1000;
    s.jiffies = 1;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(
        d.costs.cpus_probed, 7,
        "nr = 16 x 500 / 1000 = 8: !--nr stops at the 8th"
    );
}

/// The flat-16 case of `sis_prop_budget_on_kernels_before_6_0` on `release`: CPUs 0-14
/// busy, CPU15 idle, avg_scan_cost 999 ns, the waker on CPU0.
fn sis_prop_case(release: &str) -> (WakeEnv, SchedState, TaskState, Waker) {
    let m = presets::machine("flat-16").unwrap();
    let env = WakeEnv::new(&m, release.parse().unwrap()).unwrap();
    let mut s = SchedState::all_idle(16, |_| 16);
    for c in 0..15 {
        s.rqs[c] = RqState::busy(1);
    }
    s.sis_prop.avg_scan_cost_ns[0] = 999;
    let p = TaskState::new(TaskId(1), CpuId(0), CpuMask::full(16));
    let waker = Waker {
        cpu: CpuId(0),
        task: Some(TaskState::new(TaskId(2), CpuId(0), CpuMask::full(16))),
        in_task: true,
    };
    (env, s, p, waker)
}

/// v5.12/v5.13 select_idle_cpu(): "avg_idle = this_rq()->avg_idle / 512;" — not
/// wake_avg_idle (added in v5.14 by 94aafc3ee31d, "sched/fair: Age the average idle
/// time"), and nothing is aged.
#[test]
fn sis_prop_before_5_14_budgets_from_avg_idle_over_512() {
    let (env, mut s, p, waker) = sis_prop_case("5.12");
    // wake_avg_idle is not read: a large one changes nothing.
    s.sis_prop.wake_avg_idle_ns[0] = 1 << 30;
    s.sis_prop.avg_idle_ns[0] = 1_000_000; // 1 ms, the sched_init() value
    s.jiffies = 5;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    // 16 × (1_000_000 / 512 = 1953) = 31248 > 4 × 1000: nr = 31; CPU15 is found.
    assert_eq!(d.cpu, CpuId(15));
    assert!(d.effects.sis_prop_scan);
    assert_eq!(d.effects.sis_prop_aged, None);
    // 16 × (200_000 / 512 = 390) = 6240 > 4000: nr = 6, five probes, none idle.
    s.sis_prop.avg_idle_ns[0] = 200_000;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!((d.cpu, d.costs.cpus_probed), (CpuId(0), 5));
    // "if (!--nr) return -1;" skips the accounting at the end of the function.
    assert!(!d.effects.sis_prop_scan);
    // The same avg_idle on 5.14 is not read: wake_avg_idle (2^30) is.
    let (env, mut s, p, waker) = sis_prop_case("5.14");
    s.sis_prop.avg_idle_ns[0] = 200_000;
    s.sis_prop.wake_avg_idle_ns[0] = 1 << 30;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(15));
}

/// v5.14-v6.6 select_idle_cpu(): "while (this_rq->wake_stamp < now &&
/// this_rq->wake_avg_idle) { this_rq->wake_stamp++; this_rq->wake_avg_idle >>= 1; }" —
/// one halving per jiffy, stopping at 0 with wake_stamp left behind; the aged pair is
/// written back.
#[test]
fn sis_prop_ages_wake_avg_idle_per_jiffy_and_writes_it_back() {
    let (env, mut s, p, waker) = sis_prop_case("5.15");
    s.sis_prop.wake_avg_idle_ns[0] = 8000;
    s.sis_prop.wake_stamp[0] = 10;
    s.jiffies = 13;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    // 8000 >> 3 = 1000: nr = 16 × 1000 / 1000 = 16, CPU15 found, accounted.
    assert_eq!(d.effects.sis_prop_aged, Some((1000, 13)));
    assert_eq!(d.cpu, CpuId(15));
    assert!(d.effects.sis_prop_scan);
    // 5 ns halves to 0 after 3 jiffies of 100: the loop stops there, wake_stamp 13.
    s.sis_prop.wake_avg_idle_ns[0] = 5;
    s.jiffies = 110;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.effects.sis_prop_aged, Some((0, 13)));
    // nr = 4: three probes, budget spent, "if (--nr <= 0) return -1": no accounting.
    assert_eq!(d.costs.cpus_probed, 3);
    assert!(!d.effects.sis_prop_scan);
    // wake_stamp current: nothing aged, nothing written.
    s.sis_prop.wake_stamp[0] = 110;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.effects.sis_prop_aged, None);
}

/// SIS_PROP (kernel/sched/fair.c v6.6, select_idle_cpu(); removed in 6.7): `nr =
/// div_u64(span_avg, avg_cost)` lands in an `int`. 16 × 2^40 ns / 1 ns = 2^44, whose
/// low 32 bits are 0: nr is 0, and the first `--nr <= 0` ends the scan before a probe.
#[test]
fn sis_prop_budget_is_truncated_to_int() {
    let m = presets::machine("flat-16").unwrap();
    let env = WakeEnv::new(&m, "5.15".parse().unwrap()).unwrap();
    let mut s = SchedState::all_idle(16, |_| 16);
    for c in 0..15 {
        s.rqs[c] = RqState::busy(1);
    }
    s.sis_prop.avg_scan_cost_ns[0] = 0;
    s.sis_prop.wake_avg_idle_ns[0] = 1 << 40;
    let p = TaskState::new(TaskId(1), CpuId(0), CpuMask::full(16));
    let waker = Waker {
        cpu: CpuId(0),
        task: Some(TaskState::new(TaskId(2), CpuId(0), CpuMask::full(16))),
        in_task: true,
    };
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.costs.cpus_probed, 0);
    assert_eq!(d.cpu, CpuId(0));
    // One ns less: the quotient is 2^44 - 16, whose low 32 bits read as the int -16.
    s.sis_prop.wake_avg_idle_ns[0] = (1 << 40) - 1;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.costs.cpus_probed, 0);
}

// ---- issue 16 item 9: the wake CLI for scripts (core side) ----

fn examples() -> [(&'static str, &'static str); 2] {
    [
        (
            "prev-other-cluster",
            include_str!("../../examples/wake/prev-other-cluster.json"),
        ),
        (
            "smt-cookie",
            include_str!("../../examples/wake/smt-cookie.json"),
        ),
    ]
}

/// `--explain-defaults`: the explicit file resolves to the same state and decision,
/// and making it explicit again changes nothing.
#[test]
fn the_explicit_state_file_decides_as_the_original() {
    for (name, text) in examples() {
        for patches in [None, Some("5.15"), Some("6.6+cluster"), Some("6.12")] {
            let s = WakeScenario::from_json(text).unwrap();
            let a = s.resolve(patches).unwrap();
            let explicit = s.explicit(patches).unwrap();
            let json = serde_json::to_string(&explicit).unwrap();
            let b = WakeScenario::from_json(&json)
                .unwrap_or_else(|e| panic!("{name}: {e}: {json}"))
                .resolve(None)
                .unwrap_or_else(|e| panic!("{name}: {e}: {json}"));
            assert_eq!(a.state, b.state, "{name} {patches:?}");
            assert_eq!(a.env.patches, b.env.patches, "{name} {patches:?}");
            let (mut ta, mut tb) = (Trace::default(), Trace::default());
            let da = wake_up(&a.env, &a.state, &a.wakee, &a.waker, a.flags, &mut ta);
            let db = wake_up(&b.env, &b.state, &b.wakee, &b.waker, b.flags, &mut tb);
            assert_eq!((da, ta), (db, tb), "{name} {patches:?}");
            let again = serde_json::to_string(
                &WakeScenario::from_json(&json)
                    .unwrap()
                    .explicit(None)
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(json, again, "{name} {patches:?}");
        }
    }
}

/// The defaults the README documents, as `--explain-defaults` writes them.
#[test]
fn explicit_defaults_are_the_documented_ones() {
    let s = WakeScenario::from_json(
        r#"{ "machine": "flat-16", "wakee": { "id": 1 }, "waker": { "cpu": 3, "task": { "id": 2 } } }"#,
    )
    .unwrap();
    let e = serde_json::to_value(s.explicit(None).unwrap()).unwrap();
    assert_eq!(e["patches"], "6.8");
    assert_eq!(
        e["features"],
        serde_json::json!(["SIS_UTIL", "TTWU_QUEUE", "WA_IDLE", "WA_WEIGHT", "WA_BIAS"])
    );
    // prev_cpu: the waker's CPU; recent_used_cpu: prev_cpu; last_wakee: none.
    assert_eq!(e["wakee"]["prev_cpu"], 3);
    assert_eq!(e["wakee"]["recent_used_cpu"], 3);
    assert_eq!(e["wakee"]["allowed"], "0-15");
    assert_eq!(e["wakee"]["last_wakee"], serde_json::Value::Null);
    assert_eq!(e["waker"]["task"]["load"], 1024);
    assert_eq!(e["waker"]["in_task"], true);
    // Every CPU idle, in one rule, with every field.
    assert_eq!(e["cpus"].as_array().unwrap().len(), 1);
    assert_eq!(e["cpus"][0]["cpus"], "0-15");
    assert_eq!(e["cpus"][0]["state"], "idle");
    assert_eq!(e["cpus"][0]["vcpu_preempted"], false);
    assert_eq!(e["llc"][0]["nr_idle_scan"], 16);
    // Before 6.0, SIS_PROP instead of SIS_UTIL.
    let e = serde_json::to_value(s.explicit(Some("5.15")).unwrap()).unwrap();
    assert_eq!(e["features"][0], "SIS_PROP");
}

/// Issue 16: a state file could not set vcpu_is_preempted(), which
/// available_idle_cpu() reads. An idle prev whose vCPU is preempted is passed over.
#[test]
fn a_preempted_vcpu_is_not_an_available_idle_cpu() {
    let file = |preempted: bool| {
        format!(
            r#"{{ "machine": "flat-16", "cpus": [ {{ "cpus": "0-15", "state": "busy" }},
                 {{ "cpus": "5,9", "state": "idle" }}, {{ "cpus": "5", "vcpu_preempted": {preempted} }} ],
                 "llc": [ {{ "cpu": 0, "nr_idle_scan": 16 }} ],
                 "wakee": {{ "id": 1, "prev_cpu": 5 }}, "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }} }}"#
        )
    };
    let r = resolve(&file(true), "6.8");
    assert!(r.state.rqs[5].vcpu_preempted && !r.state.rqs[9].vcpu_preempted);
    assert_eq!(cpu(&file(false), "6.8"), 5);
    let (d, t) = decide(&file(true), "6.8");
    assert_eq!(d.cpu.0, 9, "{}", t.render(&d));
    // prev (the target) is checked and found not idle; the scan takes CPU9.
    assert!(t.steps.iter().any(|s| matches!(
        s,
        Step::Check {
            func: "select_idle_sibling",
            cpu: Some(CpuId(5)),
            outcome: false,
            ..
        }
    )));
}

/// Issue 16: the CPUs the fast-path checks tested were only in prose; and
/// cpus_probed leaves them out (the kernel's SIS scan counts select_idle_cpu()'s
/// loop), so they are counted apart.
#[test]
fn fast_path_checks_name_their_cpu_and_are_counted_apart() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "9", "state": "idle" } ],
                 "wakee": { "id": 1, "prev_cpu": 5, "recent_used_cpu": 9 }, "waker": { "cpu": 0, "task": { "id": 2 } },
                 "wake_flags": ["sync"] }"#;
    let (d, t) = decide(s, "6.8");
    assert_eq!(d.cpu.0, 9);
    // target (0), prev (5), recent (9): three checks, no scan.
    assert_eq!(d.costs.fast_path_checks, 3);
    assert_eq!(d.costs.cpus_probed, 0);
    let checked: Vec<u32> = t
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Check {
                func: "select_idle_sibling",
                cpu,
                ..
            } => cpu.map(|c| c.0),
            _ => None,
        })
        .collect();
    assert_eq!(checked, vec![0, 5, 9]);
    let json = serde_json::to_value(&t).unwrap();
    let with_cpu: Vec<_> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["func"] == "select_idle_sibling" && s["kind"] == "check")
        .map(|s| s["cpu"].as_u64())
        .collect();
    assert_eq!(with_cpu, vec![Some(0), Some(5), Some(9)]);
    // A check that tests no CPU has no cpu field.
    let wide = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["func"] == "wake_wide")
        .unwrap();
    assert!(wide.get("cpu").is_none(), "{wide}");
    // A scan's probes stay in cpus_probed.
    let (d, _) = decide(&prev_in_other_cluster(true, Some(8)), "6.8");
    assert_eq!((d.costs.fast_path_checks, d.costs.cpus_probed), (2, 2));
}

/// Issue 16: `queue` was a string ("local") or an object ({"wakelist":{"ipi":true}}).
#[test]
fn the_queue_path_has_one_json_shape() {
    for (q, want) in [
        (QueuePath::Local, r#"{"path":"local","ipi":false}"#),
        (
            QueuePath::Wakelist { ipi: true },
            r#"{"path":"wakelist","ipi":true}"#,
        ),
        (
            QueuePath::Wakelist { ipi: false },
            r#"{"path":"wakelist","ipi":false}"#,
        ),
        (
            QueuePath::RemoteLock,
            r#"{"path":"remote-lock","ipi":false}"#,
        ),
    ] {
        assert_eq!(serde_json::to_string(&q).unwrap(), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any state a file can describe survives --explain-defaults: the explicit file
    /// resolves to the same state and decision, and is a fixed point.
    #[test]
    fn explicit_state_files_are_a_fixed_point(w in random_wakeup(), preempt in any::<u64>()) {
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (mut state, wakee, waker) = random_state(env, seed, busy_pct, restrict);
        for (i, rq) in state.rqs.iter_mut().enumerate() {
            rq.vcpu_preempted = (preempt >> (i % 64)) & 1 == 1;
        }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let r0 = ResolvedWake { env: env.clone(), state, wakee, waker, flags };
        let machine = || schedlab_core::wakeup::scenario::MachineRef::Preset(PRESETS[preset].into());
        // r0's cookies are per CPU; a file's are per core (resolve() merges them), so
        // the fixed point is reached from the first resolved file on.
        let f0 = serde_json::to_string(&r0.to_scenario(machine())).unwrap();
        let r1 = WakeScenario::from_json(&f0).unwrap().resolve(None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}: {f0}"));
        let f1 = serde_json::to_string(&r1.to_scenario(machine())).unwrap();
        let r2 = WakeScenario::from_json(&f1).unwrap().resolve(None).unwrap();
        let f2 = serde_json::to_string(&r2.to_scenario(machine())).unwrap();
        prop_assert_eq!(&f1, &f2, "seed {}", seed);
        prop_assert_eq!(&r1.state, &r2.state, "seed {}", seed);
        let d1 = wake_up(&r1.env, &r1.state, &r1.wakee, &r1.waker, r1.flags, &mut NoTrace);
        let d2 = wake_up(&r2.env, &r2.state, &r2.wakee, &r2.waker, r2.flags, &mut NoTrace);
        prop_assert_eq!(d1, d2, "seed {}", seed);
    }
}
