//! JSON machine files: the examples load and round-trip, imported machines save as
//! JSON, and errors point at the field and the line.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::*;

#[test]
fn example_machine_files_load() {
    let m = load(EXAMPLE_KUNPENG);
    assert_eq!(m.nr_cpus(), 96);
    assert_same_shape(&m, &presets::machine("kunpeng920-4826").unwrap());

    let h = load(EXAMPLE_HYBRID);
    assert!(h.hybrid);
    assert_eq!(h.nr_cpus(), 12);
    assert_eq!(h.smt_mask(CpuId(0)).to_list(), "0-1");
    assert_eq!(h.cluster_mask(CpuId(9)).to_list(), "8-11");
    assert_eq!(h.topo(CpuId(9)).asym_prio, 39);
    assert_eq!(h.topo(CpuId(1)).asym_prio, 17);
    assert_eq!(groups(&h, Machine::llc_mask), ["0-11"]);
}

#[test]
fn example_machine_files_round_trip() {
    for text in [EXAMPLE_KUNPENG, EXAMPLE_HYBRID] {
        let spec: schedlab_core::topology::MachineSpec = serde_json::from_str(text).unwrap();
        let again = serde_json::to_string_pretty(&spec).unwrap();
        assert_eq!(
            serde_json::from_str::<schedlab_core::topology::MachineSpec>(&again).unwrap(),
            spec
        );
        assert_eq!(load(&again), load(text));
    }
}

#[test]
fn imported_machines_save_as_json_and_load_back() {
    for m in [
        load(XEON6230),
        load_with(KP128_SYSFS, &ImportHint::arch(Arch::Arm64)),
        load(EXAMPLE_HYBRID),
        load_with(
            EPYC7742,
            &ImportHint {
                cores_per_llc: Some(4),
                ..ImportHint::NONE
            },
        ),
    ] {
        let json = serde_json::to_string(&machine_to_spec(&m)).unwrap();
        assert_eq!(load(&json), m);
    }
}

#[test]
fn json_errors_point_at_the_field() {
    let text = "{\n  \"name\": \"x\",\n  \"arch\": \"x86\",\n  \"cpus\": [\n    {\"cpu\": 0},\n    {\"cpu\": 1, \"nod\": 0}\n  ]\n}\n";
    let err = load_json(text).unwrap_err();
    match &err {
        ImportError::Json {
            line, path, msg, ..
        } => {
            assert_eq!(*line, 6);
            assert_eq!(path, "cpus[1].nod");
            assert!(
                msg.starts_with("the field `cpus[1].nod` is not one schedlab knows; `cpus[1]` has one of `cpu`, `package`, `node`"),
                "{msg}"
            );
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().starts_with("line 6, column"), "{err}");

    let err = load_json("{\"name\": \"x\", \"arch\": \"sparc\", \"packages\": 1}").unwrap_err();
    assert!(
        matches!(&err, ImportError::Json { path, .. } if path == "arch"),
        "{err}"
    );
    let err = load_json("{\"arch\": \"x86\"}").unwrap_err();
    assert!(
        err.to_string()
            .ends_with(": the field `name` is missing (it is required)"),
        "{err}"
    );
    // Valid JSON, impossible machine: the topology error, not a panic or a huge SLIT.
    let err = load_json(
        "{\"name\": \"x\", \"arch\": \"x86\", \"cpus\": [{\"cpu\": 0, \"node\": 60000}]}",
    )
    .unwrap_err();
    assert!(
        matches!(err, ImportError::TopologyAt { line: 1, .. }),
        "{err}"
    );
}

/// A JSON machine file's wrong value is told as a link's wrong field is: the field's
/// path, what it must hold in words and what it holds, with the line and column (it
/// was serde's "invalid type: string \"2\", expected u32" and "EOF while parsing a
/// list").
#[test]
fn json_errors_say_what_the_field_must_hold_in_words() {
    let machine = |rest: &str| format!("{{\"name\": \"x\", \"arch\": \"x86\"{rest}");
    for (rest, want) in [
        (
            r#", "packages": "2"}"#,
            r#"the field `packages` must be a whole number from 0 to 4294967295, found "2""#,
        ),
        (
            r#", "cpus": [{"cpu": 0, "node": -1}]}"#,
            "the field `cpus[0].node` must be a whole number from 0 to 65535, found -1",
        ),
        (
            r#", "numa_distance": [[10, 300]]}"#,
            "the field `numa_distance[0][1]` must be a whole number from 0 to 255, found 300",
        ),
        (
            r#", "cpus": {"cpu": 0}}"#,
            "the field `cpus` must be a list […], found an object {…}",
        ),
        (r#", "firmware": 1}"#, "the field `firmware` must be "),
        (
            r#", "cpus": [{"node": 1}]}"#,
            "the field `cpus[0].cpu` is missing (it is required)",
        ),
        (
            r#", "cpus": [{"cpu": 0, "node": 1}"#,
            "the text ends early in `cpus` (is the end of the file missing?)",
        ),
        (
            r#", "cpus": [{"cpu": 0 "node": 1}]}"#,
            "it is not valid JSON: expected `,` or `}` in `cpus[0]`",
        ),
        (
            r#"} x"#,
            "there is more text after the machine's closing `}`",
        ),
        (r#", "arch": "arm64"}"#, "the field `arch` is given twice"),
    ] {
        let text = machine(rest);
        let err = load_json(&text).unwrap_err().to_string();
        assert!(err.starts_with("line 1, column "), "{text}\n{err}");
        let (_, words) = err.split_once(": ").expect("line, column: words");
        assert!(words.starts_with(want), "{text}\n{err}\nwant {want}");
        for serde in ["expected u", "EOF while", "invalid type", "(at `", ".?"] {
            assert!(!err.contains(serde), "{text}\n{err}");
        }
    }
    let err = load_json(r#"{"name": "x", "arch": "sparc"}"#).unwrap_err();
    assert!(
        err.to_string()
            .ends_with(r#"the field `arch` must be one of `arm64`, `x86`, found "sparc""#),
        "{err}"
    );
    // A typo gets the name it missed.
    let err = load_json(r#"{"name": "x", "arch": "arm46"}"#).unwrap_err();
    assert!(
        err.to_string()
            .ends_with(r#"found "arm46"; did you mean arm64?"#),
        "{err}"
    );
    let err = load_json(r#"{"name": "x", "arhc": "x86"}"#).unwrap_err();
    assert!(err.to_string().ends_with("; did you mean arch?"), "{err}");
}

/// Issue 16: an inconsistent JSON machine file's error names the CPU and the line of
/// its `cpus` entry (or of the distance table's row, or of the count's key).
#[test]
fn json_machine_errors_name_the_line() {
    let cpus = |entries: &[&str]| {
        format!(
            "{{\n  \"name\": \"x\",\n  \"arch\": \"x86\",\n  \"cpus\": [\n{}\n  ]\n}}\n",
            entries
                .iter()
                .map(|e| format!("    {e}"))
                .collect::<Vec<_>>()
                .join(",\n")
        )
    };
    let at = |text: &str| match load_json(text) {
        Err(ImportError::TopologyAt { line, source }) => (line, source.to_string()),
        other => panic!("{other:?}"),
    };
    // Lines 5-8 hold CPUs 0-3; CPU 3's core 1 is in cluster 1, CPU 2's in cluster 0.
    let nest = cpus(&[
        r#"{"cpu": 0, "core": 0, "cluster": 0}"#,
        r#"{"cpu": 1, "core": 0, "cluster": 0}"#,
        r#"{"cpu": 2, "core": 1, "cluster": 0}"#,
        r#"{"cpu": 3, "core": 1, "cluster": 1}"#,
    ]);
    let (line, msg) = at(&nest);
    assert_eq!(line, 8, "{msg}");
    assert!(msg.contains("CPU 3") && msg.contains("spans two"), "{msg}");
    let err = load_json(&nest).unwrap_err().to_string();
    assert!(err.starts_with("line 8: "), "{err}");
    // Listed in another order: the line follows the entry, not the CPU number.
    let (line, msg) = at(&cpus(&[
        r#"{"cpu": 3, "core": 1, "cluster": 1}"#,
        r#"{"cpu": 0, "core": 0, "cluster": 0}"#,
        r#"{"cpu": 2, "core": 1, "cluster": 0}"#,
        r#"{"cpu": 1, "core": 0, "cluster": 0}"#,
    ]));
    assert_eq!(line, 5, "{msg}");
    // A CPU listed twice: the second entry.
    let (line, msg) = at(&cpus(&[r#"{"cpu": 0}"#, r#"{"cpu": 1}"#, r#"{"cpu": 0}"#]));
    assert_eq!((line, msg.contains("CPU 0")), (7, true), "{msg}");
    // A node beyond the limit: its entry.
    let (line, _) = at(&cpus(&[r#"{"cpu": 0}"#, r#"{"cpu": 1, "node": 5000}"#]));
    assert_eq!(line, 6);
    // SMT siblings on two nodes, with a distance table after the list: refused on
    // arm64, whose kernel keeps them siblings across the nodes; x86's match_smt()
    // makes them two cores (domains_corners.rs).
    let two_nodes = cpus(&[
        r#"{"cpu": 0, "core": 0, "node": 0}"#,
        r#"{"cpu": 1, "core": 0, "node": 1}"#,
    ]);
    let (line, msg) = at(&two_nodes.replace("\"x86\"", "\"arm64\""));
    assert_eq!(line, 6, "{msg}");
    assert!(load_json(&two_nodes).is_ok());
    // A bad distance table: the row of the node it names. (An asymmetric one is
    // accepted, as the kernel accepts it: topology.c v6.8:1930-1932.)
    let slit = |rows: &str| {
        two_nodes
            .replace(r#""core": 0, "node": 1"#, r#""core": 1, "node": 1"#)
            .replace(
                "\n  ]\n}",
                &format!("\n  ],\n  \"numa_distance\": [\n{rows}\n  ]\n}}"),
            )
    };
    let (line, msg) = at(&slit("    [10, 20],\n    [20, 11]"));
    assert_eq!(line, 10, "{msg}");
    assert!(msg.contains("must be 10"), "{msg}");
    let asym = load_json(&slit("    [10, 20],\n    [21, 10]")).expect("asymmetric SLIT");
    assert_eq!(asym.numa_distance, vec![vec![10, 20], vec![21, 10]]);
    // A regular machine's count: the line of its key.
    let (line, msg) = at(
        "{\n  \"name\": \"x\",\n  \"arch\": \"x86\",\n  \"packages\": 1,\n  \"cores_per_llc\": 6,\n  \"cores_per_cluster\": 4\n}\n",
    );
    assert_eq!(line, 6, "{msg}");
    // Braces and brackets inside strings do not confuse the scan.
    let tricky = nest.replace("\"name\": \"x\"", "\"name\": \"x [{\\\"]\"");
    assert_eq!(at(&tricky).0, 8);
}

#[test]
fn a_wake_up_state_file_says_what_it_is_not_unknown_field_machine() {
    let text = include_str!("../../../examples/wake/prev-other-cluster.json");
    let err = load_json(text).unwrap_err().to_string();
    assert!(
        err.starts_with("this is a wake-up state file (`schedlab wake --state FILE` reads it), not a machine file"),
        "{err}"
    );
    assert!(err.contains("the preset \"kunpeng920-6426\""), "{err}");
    assert!(!err.contains("unknown field"), "{err}");
    // The pasted-text entry point the CLI's -m and the page share says the same.
    let err = load_machine(text, &ImportHint::NONE)
        .unwrap_err()
        .to_string();
    assert!(err.contains("wake-up state file"), "{err}");
}

#[test]
fn a_page_scenario_says_what_it_is() {
    use schedlab_core::scenario::{wire_json, Scenario};
    let s = Scenario::preset("flat-16", "6.8".parse().unwrap()).unwrap();
    let err = load_json(&wire_json(&s)).unwrap_err().to_string();
    assert!(err.starts_with("this is the page's scenario"), "{err}");
    assert!(err.contains("the preset \"flat-16\""), "{err}");
}

#[test]
fn a_machine_file_with_a_stray_machine_key_keeps_its_own_error() {
    let text = "{\"name\": \"x\", \"arch\": \"x86\", \"machine\": \"flat-16\", \"packages\": 1}";
    let err = load_json(text).unwrap_err();
    assert!(matches!(err, ImportError::Json { .. }), "{err}");
}
