//! `schedlab wake --state` files: errors, the examples, `--explain-defaults`, the
//! fields issue 16 added (vcpu_is_preempted(), the fast-path checks, the queue path).

use schedlab_core::cpumask::CpuId;
use schedlab_core::wakeup::scenario::WakeScenario;
use schedlab_core::wakeup::{wake_up, NoTrace, QueuePath, Step, Trace};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{cpu, decide, prev_in_other_cluster, resolve};

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
            include_str!("../../../examples/wake/prev-other-cluster.json"),
        ),
        (
            "smt-cookie",
            include_str!("../../../examples/wake/smt-cookie.json"),
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

// ---- issue 16 item 9: the wake CLI for scripts (core side) ----

fn examples() -> [(&'static str, &'static str); 2] {
    [
        (
            "prev-other-cluster",
            include_str!("../../../examples/wake/prev-other-cluster.json"),
        ),
        (
            "smt-cookie",
            include_str!("../../../examples/wake/smt-cookie.json"),
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
