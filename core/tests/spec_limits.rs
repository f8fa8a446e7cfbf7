//! Every number a machine description carries is checked against a documented limit
//! before anything is sized from it, on every path that builds a machine: JSON machine
//! files, links, inline machines in wake files and the page's worker messages all go
//! through `MachineSpec::build()` (issue 16).
//!
//! (The workspace forbids `unsafe`, so no counting allocator here: the unit test
//! `spec::tests::ids_are_checked_before_the_slit_is_sized` checks the order.)

use schedlab_core::topology::MachineSpec;
use schedlab_core::wakeup::scenario::WakeScenario;

/// Builds a spec from JSON and returns the error text.
fn refused(json: &str) -> String {
    let spec: MachineSpec = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
    match spec.build() {
        Ok(m) => panic!("accepted a {}-CPU machine: {json}", m.nr_cpus()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_large_node_id_is_refused_before_sizing_a_table() {
    for node in [5000u32, 65535] {
        let json = format!(r#"{{"name":"x","arch":"x86","cpus":[{{"cpu":0,"node":{node}}}]}}"#);
        let msg = refused(&json);
        assert!(
            msg.contains("cpus[0].node") && msg.contains("1024"),
            "{msg}"
        );
    }
    // At the limit: nodes 0..1022 are CPU-less (memory-only) nodes, which the kernel
    // accepts (sched_init_numa(), topology.c v6.8:1857-1858); a 1024² default table.
    let spec: MachineSpec =
        serde_json::from_str(r#"{"name":"x","arch":"x86","cpus":[{"cpu":0,"node":1023}]}"#)
            .expect("json");
    assert_eq!(spec.build().expect("node 1023").nr_nodes(), 1024);
}

#[test]
fn counts_name_the_field_and_the_limit() {
    let ok: MachineSpec =
        serde_json::from_str(r#"{"name":"x","arch":"x86","packages":1,"cores_per_llc":4096}"#)
            .unwrap();
    assert_eq!(ok.build().unwrap().nr_cpus(), 4096);

    for (field, json) in [
        (
            "cores_per_llc",
            r#"{"name":"x","arch":"x86","packages":1,"cores_per_llc":1000000000}"#,
        ),
        (
            "packages",
            r#"{"name":"x","arch":"x86","packages":4294967295,"cores_per_llc":1}"#,
        ),
        (
            "threads_per_core",
            r#"{"name":"x","arch":"x86","packages":1,"cores_per_llc":1,"threads_per_core":5000}"#,
        ),
        (
            "cores_per_cluster",
            r#"{"name":"x","arch":"x86","packages":1,"cores_per_llc":2,"cores_per_cluster":1000000000}"#,
        ),
    ] {
        let msg = refused(json);
        assert!(
            msg.contains(field) && msg.contains("4096"),
            "{field}: {msg}"
        );
    }
    // Each count fits, the product does not: the message names the product.
    let msg = refused(
        r#"{"name":"x","arch":"x86","packages":4096,"nodes_per_package":4096,"llcs_per_node":4096,"cores_per_llc":4096,"threads_per_core":4096}"#,
    );
    assert!(
        msg.contains(
            "packages × nodes_per_package × llcs_per_node × cores_per_llc × threads_per_core"
        ) && msg.contains("4096"),
        "{msg}"
    );
    // 1025 nodes of one CPU each: within MAX_CPUS, beyond MAX_NUMNODES.
    let msg = refused(r#"{"name":"x","arch":"x86","packages":1025,"cores_per_llc":1}"#);
    assert!(msg.contains("1025") && msg.contains("1024"), "{msg}");
}

#[test]
fn an_inline_machine_in_a_wake_file_is_bounded_too() {
    let json = r#"{ "machine": {"name":"x","arch":"x86","cpus":[{"cpu":0,"node":65535}]},
                    "cpus": [], "wakee": { "id": 1, "prev_cpu": 0 },
                    "waker": { "cpu": 0, "task": { "id": 2 } } }"#;
    let s = WakeScenario::from_json(json).unwrap();
    let msg = s.resolve(None).err().expect("refused").to_string();
    assert!(msg.contains("cpus[0].node"), "{msg}");
}
