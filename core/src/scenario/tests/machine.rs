//! The machine in a link (`mod.rs`'s `ScenarioMachine`): presets, custom specs kept
//! compact, irregular ones explicit, bad ones refused with the reason.

use base64::Engine as _;

use super::*;
use crate::topology::import::machine_to_spec;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn a_link_with_node_ids_past_max_numnodes_is_refused_before_building() {
    // MachineSpec::build() bounds node ids (MAX_NUMNODES) before it sizes the
    // SLIT, so the issue's hostile link is refused at once, with the reason.
    let link = "v1:eyJtYWNoaW5lIjp7Im5hbWUiOiJtIiwiYXJjaCI6Ing4NiIsImNwdXMiOlt7ImNwdSI6MCwibm9kZSI6NjU1MzV9XX0sInBhdGNoZXMiOiI2LjgifQ";
    let e = decode(link).expect_err("refused");
    assert!(matches!(e, ScenarioError::Machine(_)), "{e}");
    assert!(
        e.to_string().contains("65535") && e.to_string().contains("1024 NUMA nodes"),
        "{e}"
    );
    let regular = r#"{"machine":{"name":"m","arch":"x86","packages":2,"nodes_per_package":1024,"cores_per_llc":1},"patches":"6.8"}"#;
    let e = decode(&format!("v1:{}", LINK_BASE64.encode(regular))).expect_err("refused");
    assert!(matches!(e, ScenarioError::Machine(_)), "{e}");
    let ok =
        r#"{"machine":{"name":"m","arch":"x86","cpus":[{"cpu":0,"node":1023}]},"patches":"6.8"}"#;
    // Node 1023 is within MAX_NUMNODES; nodes 0-1022 are CPU-less (memory-only), as
    // the kernel accepts them (sched_init_numa(), topology.c v6.8:1857-1858).
    let near = decode(&format!("v1:{}", LINK_BASE64.encode(ok))).expect("node 1023");
    assert_eq!(near.machine().nr_nodes(), 1024);
}

#[test]
fn a_custom_machine_travels_as_its_spec() {
    let m = presets::machine("xeon-smt-8").expect("preset");
    let mut spec = machine_to_spec(&m);
    spec.name = "my box".to_string();
    let machine = ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))).expect("builds");
    let mut s = Scenario::on(machine, ps("6.8+ttwu-l2c"));
    s.cpu = CpuId(3);
    let back = decode(&encode(&s)).expect("decodes");
    assert_eq!(back, s);
    assert_eq!(back.machine().name, "my box");
    assert_eq!(back.machine.preset_name(), None);
}

#[test]
fn an_unknown_preset_lists_the_known_ones() {
    let e = with_json(r#"{"machine":"pdp-11","patches":"6.8"}"#).expect_err("pdp-11");
    assert!(matches!(e, ScenarioError::UnknownPreset { .. }), "{e}");
    assert!(e.to_string().contains("kunpeng920-6426"), "{e}");
}

#[test]
fn pasted_machines_travel_compact() {
    // Real captures, as the page's custom-machine form loads them: each link is the
    // regular spec when the capture describes a regular machine.
    use crate::topology::import::{load_machine, ImportHint};
    for (name, text, most) in [
        (
            "xeon 6230 lscpu",
            include_str!("../../../tests/fixtures/intel_xeon_gold6230_2S_smt_lscpu.txt"),
            700,
        ),
        (
            "kunpeng920 sysfs",
            include_str!("../../../tests/fixtures/kunpeng920_128c_sysfs_topology.txt"),
            700,
        ),
        (
            "kunpeng920 lscpu",
            include_str!("../../../tests/fixtures/kunpeng920_96c_lscpu.txt"),
            700,
        ),
    ] {
        let m = load_machine(text, &ImportHint::NONE).expect(name);
        let spec = machine_to_spec(&m);
        let machine = ScenarioMachine::new(MachineChoice::Spec(Box::new(spec))).expect(name);
        let s = Scenario::on(machine, ps("6.8"));
        let link = encode(&s);
        assert!(
            link.len() < most && !wire_json(&s).contains("\"cpus\":["),
            "{name}: {} characters, not the regular form: {}",
            link.len(),
            wire_json(&s)
        );
        assert_eq!(decode(&link).expect(name).machine().as_ref(), &m, "{name}");
    }
}

#[test]
fn an_irregular_machine_keeps_its_explicit_spec() {
    // Three CPUs, LLCs of two and one: no regular form builds it.
    let json = r#"{"name":"odd","arch":"arm64","cpus":[{"cpu":0,"llc":0},{"cpu":1,"llc":0},{"cpu":2,"llc":1}]}"#;
    let spec: MachineSpec = serde_json::from_str(json).expect("spec");
    let machine =
        ScenarioMachine::new(MachineChoice::Spec(Box::new(spec.clone()))).expect("builds");
    assert_eq!(machine.choice(), &MachineChoice::Spec(Box::new(spec)));
    let s = Scenario::on(machine, ps("6.8"));
    assert_eq!(decode(&encode(&s)), Ok(s));
}
