//! The wake-up part (`wake.rs`): its decision, one env for many, its CPU lists,
//! `random_busy`, cookies and a lesson step, and a simulated wake-up's reference.

use super::*;
use crate::workload::Workload;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn the_teaching_case_decides_prev_on_6_6_and_the_cluster_cpu_with_the_patch() {
    let s = prev_other_cluster();
    let (d, _) = s.decide(s.patches).expect("resolves");
    assert_eq!(d.cpu, CpuId(12));
    let (d, t) = s.decide(ps("6.6+cluster")).expect("resolves");
    assert_eq!(d.cpu, CpuId(2));
    assert!(t.render(&d).contains("select_idle_cpu"));
}

#[test]
fn one_env_decides_every_wake_up_as_decide_does() {
    // Issue 16: the page built the machine's domains again for every decision.
    let mut s = prev_other_cluster();
    for patches in [s.patches, ps("6.6+cluster"), ps("6.8")] {
        let env = s.wake_env(patches).expect("builds");
        for (busy, waker, prev) in [
            ("0-1,3-11,13-127", 0, 12),
            ("", 5, 7),
            ("0-127", 3, 100),
            ("0-63", 64, 2),
        ] {
            s.wake.busy = CpuMask::parse_list(128, busy).expect("list");
            s.wake.waker = CpuId(waker);
            s.wake.prev = CpuId(prev);
            let (d, t) = s.decide_in(&env).expect("decides");
            let (d2, t2) = s.decide(patches).expect("decides");
            assert_eq!((d, t), (d2, t2));
        }
    }
    let other = Scenario::preset("xeon-smt-8", ps("6.8")).expect("preset");
    let small = other.wake_env(ps("6.8")).expect("builds");
    let e = s.decide_in(&small).expect_err("another machine's env");
    assert!(e.to_string().contains("8-CPU"), "{e}");
}

#[test]
fn bad_cpu_lists_and_cpus_are_named_by_field() {
    let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"busy":"0-3,,5"}}"#)
        .expect_err("bad list");
    assert!(e.to_string().contains("busy CPUs"), "{e}");
    assert!(e.to_string().contains("empty element"), "{e}");
    let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"busy":"0-16"}}"#)
        .expect_err("out of range list");
    assert!(e.to_string().contains("busy CPUs"), "{e}");
    let e = with_json(r#"{"machine":"flat-16","patches":"6.8","wake":{"prev":99}}"#)
        .expect_err("prev out of range");
    assert_eq!(
        e,
        ScenarioError::CpuOutOfRange {
            field: "wakee's prev CPU",
            cpu: 99,
            last: 15
        }
    );
    let e =
        with_json(r#"{"machine":"flat-16","patches":"6.8+frobnicate"}"#).expect_err("bad patch");
    assert!(e.to_string().contains("frobnicate"), "{e}");
    let e =
        with_json(r#"{"machine":"flat-16","patches":"6.8","zoom":2}"#).expect_err("unknown field");
    assert!(e.to_string().contains("zoom"), "{e}");
}

#[test]
fn random_busy_is_deterministic_and_exact() {
    let a = random_busy(128, 750, 42);
    assert_eq!(a, random_busy(128, 750, 42));
    assert_eq!(a.weight(), 96);
    assert_ne!(a, random_busy(128, 750, 43));
    assert_eq!(random_busy(16, 0, 1).weight(), 0);
    assert_eq!(random_busy(16, 5000, 1).weight(), 16);
}

#[test]
fn cookies_and_a_lesson_step_round_trip_and_old_links_keep_their_bytes() {
    let mut s = Scenario::preset("xeon-smt-8", ps("6.12")).expect("preset");
    s.view = View::Wakeup;
    s.wake.cookies = vec![CookieRule {
        cpus: CpuMask::parse_list(8, "1").expect("list"),
        cookie: 2,
    }];
    s.wake.wakee_cookie = 1;
    s.wake.busy = CpuMask::parse_list(8, "1").expect("list");
    s.lesson = Some(LessonStep { lesson: 6, step: 2 });
    let link = encode(&s);
    let json = base64_json(&link);
    assert!(
        json.contains(r#""cookies":[{"cpus":"1","cookie":2}]"#),
        "{json}"
    );
    assert!(json.contains(r#""wakee_cookie":1"#), "{json}");
    assert!(json.contains(r#""lesson":"6.2""#), "{json}");
    assert_eq!(decode(&link), Ok(s.clone()));
    // The cookies reach the wake state: the idle CPU 0 shares a core with CPU 1's
    // cookie 2, so core scheduling is on and CPU 0 fails the wakee's cookie 1.
    let ws = s.wake_scenario();
    assert_eq!(ws.wakee.cookie, 1);
    assert!(ws.cpus.iter().any(|r| r.cookie == Some(2) && r.cpus == "1"));
    // An idle CPU runs no task: its cookie is dropped.
    s.wake.busy = CpuMask::new(8);
    assert!(s.wake_scenario().cpus.iter().all(|r| r.cookie.is_none()));
    // Fields at their defaults stay out: the teaching case's bytes are unchanged
    // (the_teaching_case_encodes_to_the_bytes_it_always_did), and a bad step is named.
    for bad in ["0.1", "2", "2.x"] {
        let mut json: serde_json::Value = serde_json::from_str(&base64_json(&link)).expect("json");
        json["lesson"] = serde_json::Value::String(bad.to_string());
        let e = decode(&format!("v1:{}", b64(json.to_string().as_bytes()))).expect_err(bad);
        assert!(e.to_string().contains("LESSON.STEP"), "{bad}: {e}");
    }
}

/// A simulated wake-up's reference rides in the link's `wake` block, round-trips,
/// keeps old links' encoding (absent when unset), and wake-up 0 is refused.
#[test]
fn a_simulated_wake_ups_reference_rides_in_the_link() {
    let mut s = Scenario::preset("kunpeng920-6426", "6.6".parse().unwrap()).unwrap();
    let plain = encode(&s);
    s.wake.sim = Some(SimWakeAt {
        side: Side::B,
        seed: 7,
        wake: 1234,
        scale: None,
    });
    let back = decode(&encode(&s)).unwrap();
    assert_eq!(back.wake.sim, s.wake.sim);
    let json = serde_json::to_string(&v1::ScenarioV1::from(&s)).unwrap();
    assert!(
        json.contains(r#""sim":{"side":"b","seed":7,"wake":1234}"#),
        "{json}"
    );
    s.wake.sim = None;
    assert_eq!(encode(&s), plain);
    let bad = json.replace(r#""wake":1234"#, r#""wake":0"#);
    let e = decode(&format!("v1:{}", base64_url(&bad))).unwrap_err();
    assert!(e.to_string().contains("numbered from 1"), "{e}");
}

/// A reference to a wake-up at a sweep point carries the point, round-trips, and
/// leaves a reference without one (every link before it) encoded as it was; a
/// point the simulation does not run is refused.
#[test]
fn a_simulated_wake_up_at_a_sweep_point_rides_in_the_link() {
    let mut s = Scenario::preset("kunpeng920-6426", "6.6".parse().unwrap()).unwrap();
    s.sim = Some(SimSetup {
        workload: Workload::Tbench { clients: 8 },
        sweep: vec![2, 8],
        ..SimSetup::default()
    });
    let at = SimWakeAt {
        side: Side::A,
        seed: 3,
        wake: 99,
        scale: None,
    };
    s.wake.sim = Some(at);
    let watched = encode(&s);
    let json = serde_json::to_string(&v1::ScenarioV1::from(&s)).unwrap();
    assert!(
        json.contains(r#""sim":{"side":"a","seed":3,"wake":99}"#),
        "{json}"
    );
    s.wake.sim = Some(SimWakeAt {
        scale: Some(2),
        ..at
    });
    let link = encode(&s);
    assert_ne!(link, watched);
    let back = decode(&link).unwrap();
    assert_eq!(back.wake.sim, s.wake.sim);
    assert_eq!(back, s);
    let json = serde_json::to_string(&v1::ScenarioV1::from(&s)).unwrap();
    assert!(
        json.contains(r#""sim":{"side":"a","seed":3,"wake":99,"scale":2}"#),
        "{json}"
    );
    // The old form (no scale) reads back as the watched scale.
    assert_eq!(decode(&watched).unwrap().wake.sim, Some(at));
    for (bad, want) in [
        (r#""scale":4"#, "runs at 2, 8"),
        (r#""scale":0"#, "runs at"),
    ] {
        let text = json.replace(r#""scale":2"#, bad);
        let e = decode(&format!("v1:{}", base64_url(&text))).unwrap_err();
        assert!(e.to_string().contains(want), "{bad}: {e}");
    }
    // Without a simulation in the link, the page's default one is named.
    s.sim = None;
    let default_point = SimSetup::default().points()[0];
    s.wake.sim = Some(SimWakeAt {
        scale: Some(default_point),
        ..at
    });
    assert_eq!(decode(&encode(&s)).unwrap().wake.sim, s.wake.sim);
    s.wake.sim = Some(SimWakeAt {
        scale: Some(default_point + 1),
        ..at
    });
    assert!(decode(&encode(&s)).is_err());
}
