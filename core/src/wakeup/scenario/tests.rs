use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Kunpeng 920-6426: LLCs of 32 CPUs. `extra` goes in after `wakee`/`waker`.
fn file(cpu_rule: &str, llc: &str, wakee: &str, extra: &str) -> String {
    format!(
        r#"{{ "machine": "kunpeng920-6426",
             "cpus": [ {{ "cpus": "0-7", "state": "busy" {cpu_rule} }} ],
             "llc": [ {{ "cpu": 0 {llc} }} ],
             "wakee": {{ "id": 1, "prev_cpu": 12 {wakee} }},
             "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }} {extra} }}"#
    )
}

fn err(json: &str, patches: &str) -> String {
    match WakeScenario::from_json(json).and_then(|s| s.resolve(Some(patches))) {
        Ok(_) => panic!("accepted: {json}"),
        Err(e) => e.to_string(),
    }
}

fn ok(json: &str, patches: &str) {
    WakeScenario::from_json(json)
        .and_then(|s| s.resolve(Some(patches)))
        .unwrap_or_else(|e| panic!("{e}: {json}"));
}

#[test]
fn values_past_the_kernel_s_ranges_are_refused_by_name() {
    // Issue 16: util, load and capacity were taken as any u64 and summed.
    let big = u64::MAX;
    for (json, want) in [
        (
            file(&format!(r#", "util": {big}"#), "", "", ""),
            "cpus[0].util",
        ),
        (file(r#", "util": 1025"#, "", "", ""), "at most 1024"),
        (
            file(&format!(r#", "load": {big}"#), "", "", ""),
            "cpus[0].load",
        ),
        (
            file(r#", "capacity": 1025"#, "", "", ""),
            "cpus[0].capacity",
        ),
        (file(r#", "capacity": 0"#, "", "", ""), "cpus[0].capacity"),
        (
            file(r#", "nr_running": 4294967295"#, "", "", ""),
            "cpus[0].nr_running",
        ),
        (file("", "", r#", "util": 1025"#, ""), "wakee.util"),
        (
            file("", "", &format!(r#", "load": {big}"#), ""),
            "wakee.load",
        ),
        (
            file("", r#", "nr_idle_scan": 33"#, "", ""),
            "llc[0].nr_idle_scan",
        ),
    ] {
        let e = err(&json, "6.8");
        assert!(e.contains(want), "{want}: {e}");
    }
    // The largest values are accepted, and the derived SIS_UTIL budget is sane.
    ok(
        &file(
            r#", "util": 1024, "capacity": 1024, "load": 372290617344"#,
            r#", "nr_idle_scan": 32"#,
            r#", "util": 1024, "load": 88761"#,
            "",
        ),
        "6.8",
    );
    ok(&file(r#", "capacity": 1"#, "", "", ""), "6.8");
}

#[test]
fn extreme_flips_and_jiffies_decide_without_overflow() {
    let json = format!(
        r#"{{ "machine": "kunpeng920-6426", "jiffies": {j},
             "wakee": {{ "id": 1, "prev_cpu": 12, "wakee_flips": {f} }},
             "waker": {{ "cpu": 0, "task": {{ "id": 2, "wakee_flips": {f},
                 "wakee_flip_decay_ts": {j} }} }} }}"#,
        j = u64::MAX,
        f = u32::MAX
    );
    let r = WakeScenario::from_json(&json)
        .unwrap()
        .resolve(None)
        .unwrap();
    let d = super::super::wake_up(
        &r.env,
        &r.state,
        &r.wakee,
        &r.waker,
        r.flags,
        &mut super::super::NoTrace,
    );
    assert!(d.cpu.0 < 128);
}

/// The fields `--capture-wake` writes: each reaches the state, and values the
/// kernel cannot hold are refused by name.
#[test]
fn the_exact_state_fields_resolve_and_are_checked() {
    let sis = |n: usize| {
        format!(
            r#""sis_prop": {{ "avg_idle_ns": [{a}], "wake_avg_idle_ns": [{a}],
               "wake_stamp": [{a}], "avg_scan_cost_ns": [{a}] }}"#,
            a = vec!["7"; n].join(",")
        )
    };
    let json = format!(
        r#"{{ "machine": "kunpeng920-6426", "patches": "5.15",
             "cpus": [ {{ "cpus": "3", "state": "busy", "nr_running": 1, "curr_is_idle": true }} ],
             "llc": [ {{ "cpu": 0, "nr_busy_cpus": 5 }} ],
             "wakee": {{ "id": 1, "prev_cpu": 12 }},
             "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }},
             "hz": 1000, "core_sched_enabled": true, {} }}"#,
        sis(128)
    );
    let r = WakeScenario::from_json(&json)
        .unwrap()
        .resolve(None)
        .unwrap();
    assert!(r.state.rqs[3].curr_is_idle && r.state.rqs[3].nr_running == 1);
    assert_eq!(r.state.llc_shared[0].nr_busy_cpus, 5);
    assert_eq!(r.state.hz, 1000);
    assert!(r.state.core_sched_enabled);
    assert_eq!(r.state.sis_prop.wake_avg_idle_ns, vec![7; 128]);
    // Written back exactly, they resolve to the same state.
    let back = exact_scenario(
        &r.env,
        &r.state,
        &r.wakee,
        &r.waker,
        r.flags,
        MachineRef::Preset("kunpeng920-6426".into()),
    );
    let again = back.resolve(None).unwrap();
    assert_eq!(again.state.rqs, r.state.rqs);
    assert_eq!(again.state.sis_prop, r.state.sis_prop);
    assert_eq!(
        (
            again.state.hz,
            again.state.core_sched_enabled,
            again.state.jiffies
        ),
        (r.state.hz, r.state.core_sched_enabled, r.state.jiffies)
    );
    let base = r#"{ "machine": "kunpeng920-6426", "wakee": { "id": 1 }, "waker": { "cpu": 0 }"#;
    for (extra, want) in [
        (r#", "hz": 0"#.to_string(), "hz"),
        (r#", "hz": 100000"#.to_string(), "hz"),
        (format!(", {}", sis(127)), "sis_prop.avg_idle_ns"),
        (
            r#", "core_sched_enabled": false, "cpus": [ { "cpus": "1", "cookie": 5 } ]"#
                .to_string(),
            "core_sched_enabled",
        ),
        (
            r#", "llc": [ { "cpu": 0, "nr_busy_cpus": 33 } ]"#.to_string(),
            "nr_busy_cpus",
        ),
    ] {
        let e = err(&format!("{base}{extra} }}"), "6.8");
        assert!(e.contains(want), "{want}: {e}");
    }
}

#[test]
fn current_cpu_is_refused_before_the_release_that_has_it() {
    let json = file("", "", "", r#", "wake_flags": ["current-cpu"]"#);
    let e = err(&json, "6.5");
    assert!(
        e.contains("current-cpu") && e.contains("6.5") && e.contains("6.6"),
        "{e}"
    );
    ok(&json, "6.6");
    ok(&json, "6.8");
}
