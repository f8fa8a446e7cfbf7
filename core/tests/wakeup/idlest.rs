//! The slow path, `find_idlest_cpu()` and what it calls (fair.c v6.8 7107-7211,
//! 10172-10475), through `select_task_rq_new()` with `WF_FORK` (no `WF_TTWU`, as
//! `wake_up_new_task()` calls it). Kunpeng 920-6426: 4 nodes of 32 CPUs (one LLC
//! each, 8 clusters of 4), two per socket; the parent runs on CPU4 (cluster 4-7).

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// The CPU a task forked on the waker's CPU starts on, and the explanation.
fn fork(json: &str) -> (u32, String) {
    place(json, WakeFlags::FORK)
}

/// `select_task_rq_new()` with `flags`; every step made has its line in the listing.
fn place(json: &str, flags: WakeFlags) -> (u32, String) {
    place_on(json, "6.8", flags)
}

/// [`place`] on the patch set `patches`.
fn place_on(json: &str, patches: &str, flags: WakeFlags) -> (u32, String) {
    let r = resolve(json, patches);
    let mut t = Trace::default();
    let d = wakeup::select_task_rq_new(&r.env, &r.state, &r.wakee, &r.waker, flags, &mut t);
    let listing = code::listing(&r.env.patches);
    for (_, site) in code::hits(&t).unwrap() {
        let line = code::line_site(site);
        assert!(
            listing.iter().any(|l| l.site == Some(line)),
            "no listing line for {site:?}"
        );
    }
    (d.cpu.0, t.render(&d))
}

fn kunpeng(cpus: &str, allowed: &str, parent: u32) -> String {
    format!(
        r#"{{ "machine": "kunpeng920-6426",
             "cpus": [ {cpus} ],
             "wakee": {{ "id": 1, "allowed": "{allowed}" }},
             "waker": {{ "cpu": {parent}, "task": {{ "id": 2 }} }} }}"#
    )
}

/// (a) `find_idlest_group()`, group_has_spare: the local cluster has as many idle
/// CPUs as the idlest (`local_sgs.idle_cpus >= idlest_sgs.idle_cpus` → NULL), so the
/// task stays in it; one level down, the idle CPU6 beats the busy local CPU4 (a
/// fully busy group against one with spare). The simplified slow path took the
/// node's first idle CPU, CPU2.
#[test]
fn fork_stays_in_a_local_cluster_as_idle_as_the_idlest() {
    // Every cluster of node 0: its first two CPUs busy, the last two idle.
    let busy: Vec<String> = (0..8).map(|k| format!("{}-{}", 4 * k, 4 * k + 1)).collect();
    let cpus = format!(
        r#"{{ "cpus": "0-127", "state": "idle" }}, {{ "cpus": "{}", "state": "busy" }}"#,
        busy.join(",")
    );
    let (cpu, trace) = fork(&kunpeng(&cpus, "0-31", 4));
    assert_eq!(cpu, 6, "{trace}");
    assert!(trace.contains("local idle CPUs 2 >= idlest's 2"), "{trace}");
}

/// (b) Fully busy groups compare avg_load with `imbalance_pct`'s margin: MC's 117
/// keeps the task in its cluster while `100 * local <= 117 * idlest`, and pushes it
/// to the least loaded cluster past that. The simplified slow path always took the
/// least loaded CPU (CPU8).
#[test]
fn fork_between_fully_busy_clusters_needs_the_imbalance_pct_margin() {
    let state = |local: u64| {
        kunpeng(
            &format!(
                r#"{{ "cpus": "0-127", "state": "busy", "load": 1400 }},
                   {{ "cpus": "4-7", "load": {local} }},
                   {{ "cpus": "8-11", "load": 1000 }}"#
            ),
            "0-31",
            4,
        )
    };
    // 100 * 1150 <= 117 * 1000: stay (and CPU4's own cluster is even at CLS).
    let (cpu, trace) = fork(&state(1150));
    assert_eq!(cpu, 4, "{trace}");
    assert!(trace.contains("imbalance_pct 117"), "{trace}");
    // 100 * 1200 > 117 * 1000: the least loaded cluster, its least loaded CPU.
    let (cpu, trace) = fork(&state(1200));
    assert_eq!(cpu, 8, "{trace}");
}

/// (c) `find_idlest_group_cpu()`: among idle CPUs, the smallest exit latency first,
/// then the latest `idle_stamp`; the simplified slow path took the first idle CPU.
#[test]
fn find_idlest_group_cpu_prefers_the_shallowest_state_then_the_latest_idle_stamp() {
    let cpus = r#"{ "cpus": "0-127", "state": "busy" },
        { "cpus": "8-11", "state": "idle" },
        { "cpus": "8", "exit_latency": 10, "idle_stamp": 900 },
        { "cpus": "9", "exit_latency": 2, "idle_stamp": 100 },
        { "cpus": "10", "exit_latency": 2, "idle_stamp": 300 },
        { "cpus": "11", "exit_latency": 5, "idle_stamp": 1000 }"#;
    let (cpu, trace) = fork(&kunpeng(cpus, "0-31", 4));
    assert_eq!(cpu, 10, "{trace}");
    assert!(trace.contains("the latest idle_stamp"), "{trace}");
    // No cpuidle state on CPU10: it ties with none and needs a later stamp than the
    // shallowest so far, CPU9's.
    let cpus = cpus.replace(
        r#""cpus": "10", "exit_latency": 2"#,
        r#""cpus": "10", "exit_latency": "none""#,
    );
    assert_eq!(fork(&kunpeng(&cpus, "0-31", 4)).0, 10);
    let cpus = cpus.replace(r#""idle_stamp": 300"#, r#""idle_stamp": 50"#);
    assert_eq!(fork(&kunpeng(&cpus, "0-31", 4)).0, 9);
}

/// (d) NUMA, group_has_spare (v6.0+): an imbalance of at most NUMA_IMBALANCE_MIN (2)
/// idle CPUs is allowed while the local node would run at most `imb_numa_nr` tasks
/// (4 on the socket's NUMA level, min(32 allowed local CPUs, 4)), so the task stays
/// on its node (in the idlest cluster below); the simplified slow path went to the
/// least loaded node, node 1 (CPU32).
#[test]
fn fork_within_imb_numa_nr_stays_on_the_node() {
    let cpus = r#"{ "cpus": "0-127", "state": "idle" }, { "cpus": "4", "state": "busy" }"#;
    let (cpu, trace) = fork(&kunpeng(cpus, "0-127", 4));
    assert_eq!(cpu, 8, "{trace}");
    assert!(trace.contains("within imb_numa_nr 4"), "{trace}");
    // Three tasks on node 0: 3 + 1 is within imb_numa_nr, but the idle CPUs differ
    // by 3 > NUMA_IMBALANCE_MIN: the task goes to node 1.
    let cpus = r#"{ "cpus": "0-127", "state": "idle" }, { "cpus": "4-6", "state": "busy" }"#;
    let (cpu, trace) = fork(&kunpeng(cpus, "0-127", 4));
    assert_eq!(cpu, 32, "{trace}");
}

/// (e) NUMA, group_has_spare, v5.18 and v5.19: "if
/// (allow_numa_imbalance(local_sgs.sum_nr_running + 1, sd->imb_numa_nr)) return
/// NULL;" with "return running <= imb_numa_nr;" (fair.c v5.19.0 9065-9068, 9207;
/// v5.18.12 9096-9099, 9238; e496132ebedd): the bound is inclusive, and it is
/// `sd->imb_numa_nr` itself, with no minimum over the task's CPUs in the local group
/// (that came with 6.0's `p->nr_cpus_allowed != NR_CPUS` block). On Kunpeng
/// 920-6426 the node level's imb_numa_nr is 32 >> 2 = 8 there. Seven busy CPUs in
/// node 0 (7 + 1 = 8 <= 8) keep the fork on node 0; the model tested `8 < 8` and
/// pushed it to node 1, which has more idle CPUs. A task allowed two CPUs of node 0
/// and all of node 1, with two tasks on node 0 (3 <= 8), stays too; with the
/// minimum, min(2, 8) = 2 < 3 sent it to node 1. One more task on node 0 (9 > 8)
/// moves it to node 1 on either reading.
#[test]
fn numa_allowance_on_5_18_and_5_19_is_inclusive_and_uses_sd_imb_numa_nr() {
    let on_node0 = |n: u32| {
        if n == 0 {
            String::new()
        } else {
            format!(r#", {{ "cpus": "{}-{}", "state": "busy" }}"#, 8, 8 + n - 1)
        }
    };
    for rel in ["5.18", "5.19"] {
        let cpus = format!(r#"{{ "cpus": "0-127", "state": "idle" }}{}"#, on_node0(7));
        let (cpu, trace) = place_on(&kunpeng(&cpus, "0-127", 4), rel, WakeFlags::FORK);
        assert!(cpu < 32, "{rel}: stays on node 0: {trace}");
        assert!(trace.contains("within imb_numa_nr 8"), "{rel}: {trace}");
        let cpus = format!(r#"{{ "cpus": "0-127", "state": "idle" }}{}"#, on_node0(8));
        let (cpu, trace) = place_on(&kunpeng(&cpus, "0-127", 4), rel, WakeFlags::FORK);
        assert!(
            (32..64).contains(&cpu),
            "{rel}: 9 > 8 goes to node 1: {trace}"
        );
        let cpus = format!(r#"{{ "cpus": "0-127", "state": "idle" }}{}"#, on_node0(2));
        let (cpu, trace) = place_on(&kunpeng(&cpus, "0-1,32-63", 4), rel, WakeFlags::FORK);
        assert!(cpu < 2, "{rel}: stays on node 0's allowed CPUs: {trace}");
    }
    // 6.0 and later take the minimum: 3 running > min(2 allowed, imb_numa_nr 4), so
    // adjust_numa_imbalance() keeps the imbalance of 2 idle CPUs, and node 1, with
    // more idle CPUs, gets the task.
    let cpus = format!(r#"{{ "cpus": "0-127", "state": "idle" }}{}"#, on_node0(2));
    let (cpu, trace) = place_on(&kunpeng(&cpus, "0-1,32-63", 4), "6.8", WakeFlags::FORK);
    assert!((32..64).contains(&cpu), "6.8: {trace}");
}

/// Exec (`sched_exec()`, `WF_EXEC`): p is `current` on its CPU, so
/// `update_sg_wakeup_stats()` takes it off that CPU's `nr_running`
/// (`task_running_on_cpu()`) and `idle_cpu_without()` counts the CPU idle
/// (`rq->curr == p`), and its util (1024 - 500) comes off: on an otherwise idle node, CPU4's cluster is as idle as any and
/// p stays on CPU4 (no migration). Counting p, the cluster would look busier and p
/// would move to CPU8; the simplified slow path took CPU0.
#[test]
fn exec_does_not_count_the_task_itself() {
    let json = r#"{ "machine": "kunpeng920-6426",
        "cpus": [ { "cpus": "0-127", "state": "idle" }, { "cpus": "4", "state": "busy", "load": 900 } ],
        "wakee": { "id": 1, "prev_cpu": 4, "allowed": "0-31", "load": 900, "util": 500 },
        "waker": { "cpu": 4, "task": { "id": 1, "prev_cpu": 4 } } }"#;
    let (cpu, trace) = place(json, WakeFlags::EXEC);
    assert_eq!(cpu, 4, "{trace}");
    assert!(
        trace.contains("local group 4-7: group_has_spare, 4 idle CPUs, util 524, 0 running"),
        "{trace}"
    );
    // A fork from CPU4 counts the parent there.
    assert_eq!(place(json, WakeFlags::FORK).0, 8);
}

/// The CPU rules' `exit_latency` (µs or "none") and `idle_stamp` (ns) resolve into
/// the state, are written back off their defaults, and bad values are clear errors.
#[test]
fn exit_latency_and_idle_stamp_round_trip_and_are_checked() {
    let json = r#"{ "machine": "kunpeng920-6426",
        "cpus": [ { "cpus": "0-127", "state": "idle" },
                  { "cpus": "8", "exit_latency": 10, "idle_stamp": 900 },
                  { "cpus": "9", "exit_latency": "none", "idle_stamp": 5 } ],
        "wakee": { "id": 1 }, "waker": { "cpu": 4 }, "wake_flags": ["fork"] }"#;
    let sc = WakeScenario::from_json(json).unwrap();
    let r = sc.resolve(Some("6.8")).unwrap();
    assert_eq!(r.state.rqs[8].exit_latency_us, Some(10));
    assert_eq!(r.state.rqs[8].idle_stamp, 900);
    assert_eq!(r.state.rqs[9].exit_latency_us, None);
    assert_eq!(r.state.rqs[10].exit_latency_us, Some(0));
    let back = serde_json::to_string(&r.to_scenario(sc.machine.clone())).unwrap();
    let r2 = WakeScenario::from_json(&back)
        .unwrap()
        .resolve(Some("6.8"))
        .unwrap();
    assert_eq!(r2.state.rqs, r.state.rqs, "{back}");
    for (bad, says) in [
        (r#""exit_latency": "deep""#, "cpus[0].exit_latency"),
        (r#""exit_latency": 4294967296"#, "at most 4294967295"),
        (r#""exit_latency": -1"#, ""),
        (r#""idle_stamp": -1"#, ""),
    ] {
        let json = format!(
            r#"{{ "machine": "flat-16", "cpus": [ {{ "cpus": "0", {bad} }} ],
                 "wakee": {{ "id": 1 }}, "waker": {{ "cpu": 0 }} }}"#
        );
        let err = WakeScenario::from_json(&json)
            .and_then(|s| s.resolve(Some("6.8")))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

/// A wake state file's `fork` is `wake_up_new_task()`'s placement, not a wake-up:
/// `wake_up()` hands it to `select_task_rq_new()` without `WF_TTWU`, so there is no
/// affine wake-up (`want_affine` needs `WF_TTWU`) and the slow path places it. The
/// parent's CPU4 is idle-adjacent and allowed: as a wake-up it would be affine and
/// land in CPU4's cluster. `fork` and `exec` stand alone; another flag with them is a
/// clear error.
#[test]
fn a_state_files_fork_takes_the_slow_path_through_wake_up() {
    // Cluster 4-7 busy but CPU5; every other cluster of node 0 idle.
    let json = r#"{ "machine": "kunpeng920-6426",
        "cpus": [ { "cpus": "0-127", "state": "idle" }, { "cpus": "4,6,7", "state": "busy" } ],
        "wakee": { "id": 1, "allowed": "0-31", "prev_cpu": 4 },
        "waker": { "cpu": 4, "task": { "id": 2 } }, "wake_flags": ["fork"] }"#;
    let r = resolve(json, "6.8");
    assert!(!r.flags.contains(WakeFlags::TTWU));
    let mut t = Trace::default();
    let d = wakeup::wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    let trace = t.render(&d);
    assert_eq!(d.path, Some(wakeup::WakePath::SlowPath), "{trace}");
    let (direct, _) = fork(json);
    assert_eq!(d.cpu.0, direct, "{trace}");
    assert!(
        !(4..8).contains(&d.cpu.0),
        "an idle cluster, not the parent's: {trace}"
    );
    for flags in [
        r#"["fork", "sync"]"#,
        r#"["fork", "exec"]"#,
        r#"["exec", "current-cpu"]"#,
    ] {
        let bad = json.replace(r#"["fork"]"#, flags);
        let err = WakeScenario::from_json(&bad)
            .and_then(|s| s.resolve(Some("6.8")))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains("stand alone"), "{flags}: {err}");
    }
}
