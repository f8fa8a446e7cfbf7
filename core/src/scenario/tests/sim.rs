//! The simulation in a link (`sim.rs`): it travels, and bad ones are named.

use super::*;
use crate::experiment::{CpuSelection, Warmup};
use crate::workload::Workload;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn a_simulation_travels_with_the_link_and_bad_ones_are_named() {
    let mut s = Scenario::preset("kunpeng920-6426", ps("6.6")).expect("preset");
    let m = s.machine().clone();
    s.view = View::Simulate;
    s.sim = Some(SimSetup {
        warmup: Default::default(),
        workload: Workload::NetperfTcpRr { instances: 16 },
        cpus: CpuSelection::parse(&m, "node0-1").expect("nodes"),
        duration_ms: 200,
        seed: 3,
        seeds: 4,
        sweep: vec![1, 16, 64],
    });
    assert_eq!(decode(&encode(&s)), Ok(s.clone()));
    // Written by hand: cpus and seed may be left out.
    let json = r#"{"machine":"flat-16","patches":"6.8","view":"simulate","sim":{"workload":{"kind":"tbench","clients":4},"duration_ms":50}}"#;
    let link = format!("v1:{}", b64(json.as_bytes()));
    let back = decode(&link).expect("decodes");
    let sim = back.sim.clone().expect("a simulation");
    assert_eq!(
        (sim.cpus.clone(), sim.seed, sim.seeds),
        (CpuSelection::All, 1, 1),
        "links from before seeds had one"
    );
    // One seed is written as before: the field is left out.
    let mut one = back.clone();
    one.sim.as_mut().expect("set").seeds = 1;
    assert!(!base64_json(&encode(&one)).contains("seeds"));
    assert!(base64_json(&encode(&s)).contains(r#""seeds":4"#));
    assert_eq!(sim.points(), vec![4], "no sweep: the workload's own scale");
    // The warm-up: a fifth is left out of the link (old links read as a fifth);
    // settled travels and reaches the run.
    assert_eq!(sim.warmup, Warmup::Fifth);
    assert!(!base64_json(&encode(&s)).contains("warmup"));
    let mut settled = s.clone();
    settled.sim.as_mut().expect("set").warmup = Warmup::Settled;
    assert!(base64_json(&encode(&settled)).contains(r#""warmup":"settled""#));
    assert_eq!(decode(&encode(&settled)), Ok(settled.clone()));
    let spec = settled
        .sim
        .as_ref()
        .expect("set")
        .run_spec(&m, ps("6.6"))
        .expect("runs");
    assert_eq!(spec.warmup, Warmup::Settled);
    let typo = json.replace(r#""duration_ms":50"#, r#""duration_ms":50,"warmup":"long""#);
    let e = decode(&format!("v1:{}", b64(typo.as_bytes()))).expect_err("unknown warm-up");
    assert!(e.to_string().contains("long"), "{e}");
    assert_eq!(SimSetup::parse_sweep(" 1, 4,16 "), Ok(vec![1, 4, 16]));
    assert_eq!(SimSetup::parse_sweep(""), Ok(vec![]));
    let e = SimSetup::parse_sweep("1,four").expect_err("not a number");
    assert!(e.contains("\"four\" is not a count"), "{e}");
    // Bad setups as a link would carry them (the v1 wire form).
    let ok = v1::SimSetupV1::from(s.sim.as_ref().expect("set"));
    let bad = |sim: v1::SimSetupV1, want: &str| {
        let mut wire = v1::ScenarioV1::from(&s);
        wire.sim = Some(sim);
        let json = serde_json::to_string(&wire).expect("json");
        let e = decode(&format!("v1:{}", b64(json.as_bytes())))
            .expect_err(want)
            .to_string();
        assert!(e.contains("simulation") && e.contains(want), "{e}");
    };
    bad(
        v1::SimSetupV1 {
            cpus: "node9".to_string(),
            ..ok.clone()
        },
        "has nodes 0-3",
    );
    for seeds in [0, crate::experiment::MAX_SEEDS + 1] {
        bad(
            v1::SimSetupV1 {
                seeds,
                ..ok.clone()
            },
            "1 to 64 seeds",
        );
    }
    bad(
        v1::SimSetupV1 {
            duration_ms: MAX_SIM_MS + 1,
            ..ok.clone()
        },
        "at most 60000 ms",
    );
    bad(
        v1::SimSetupV1 {
            workload: Workload::Tbench { clients: 0 },
            sweep: Vec::new(),
            ..ok.clone()
        },
        "at least one client",
    );
    bad(
        v1::SimSetupV1 {
            sweep: vec![4, 0, 8],
            ..ok.clone()
        },
        "at least one instance",
    );
    bad(
        v1::SimSetupV1 {
            sweep: (1..=17).collect(),
            ..ok.clone()
        },
        "at most 16 points",
    );
    bad(
        v1::SimSetupV1 {
            duration_ms: 0,
            ..ok
        },
        "at least 1 ms",
    );
    let unknown = r#"{"machine":"flat-16","patches":"6.8","sim":{"workload":{"kind":"dbench"},"duration_ms":50}}"#;
    let e = decode(&format!("v1:{}", b64(unknown.as_bytes()))).expect_err("dbench");
    assert!(e.to_string().contains("dbench"), "{e}");
}
