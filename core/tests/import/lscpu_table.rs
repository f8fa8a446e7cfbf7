//! `lscpu -p` and `lscpu -e`: the per-CPU tables, their columns and offline CPUs.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::*;

#[test]
fn kvm_lscpu_p_and_e_agree_with_the_summary() {
    // MACHINE: 1 socket x 2 cores, no SMT, private L1/L2 per core, one shared L3.
    let summary = load(KVM_SUMMARY);
    for (text, format) in [
        (KVM_P, Format::LscpuParse),
        (KVM_P_CLUSTER, Format::LscpuParse),
        (KVM_E, Format::LscpuExtended),
        (KVM_E_CLUSTER, Format::LscpuExtended),
    ] {
        assert_eq!(sniff(text), Some(format));
        let m = load(text);
        assert_same_shape(&m, &summary);
        assert!(m.description.contains("assumed x86"), "{}", m.description);
    }
    let m = load_with(KVM_P, &ImportHint::arch(Arch::Arm64));
    assert_eq!(m.arch, Arch::Arm64);
    // arm64 does not take clusters from the L2.
    assert_eq!(groups(&m, Machine::cluster_mask), ["0", "1"]);
}

#[test]
fn lscpu_p_with_cluster_column() {
    let m = load_with(SYNTH_P, &ImportHint::arch(Arch::Arm64));
    assert_eq!(m.nr_cpus(), 16);
    assert_eq!(m.smt_mask(CpuId(1)).to_list(), "1,9");
    assert_eq!(m.cluster_mask(CpuId(1)).to_list(), "0-1,8-9");
    assert_eq!(m.llc_mask(CpuId(1)).to_list(), "0-3,8-11");
    assert_eq!(nodes(&m), ["0-3,8-11", "4-7,12-15"]);
    let numactl = "\navailable: 2 nodes (0-1)\nnode 0 cpus: 0 1 2 3 8 9 10 11\nnode 1 cpus: 4 5 6 7 12 13 14 15\nnode distances:\nnode   0   1\n  0:  10  21\n  1:  21  10\n";
    let m = load_with(
        &format!("{SYNTH_P}{numactl}"),
        &ImportHint::arch(Arch::Arm64),
    );
    assert_eq!(m.numa_distance, [[10, 21], [21, 10]]);
}

#[test]
fn lscpu_p_without_node_column_takes_nodes_from_numactl() {
    let text = "# CPU,Core,Socket,,L1d,L1i,L2\n0,0,0,,0,0,0\n1,1,0,,1,1,1\n2,2,1,,2,2,2\n3,3,1,,3,3,3\n\navailable: 2 nodes (0-1)\nnode 0 cpus: 0 1\nnode 1 cpus: 2 3\nnode distances:\nnode 0 1\n 0: 10 20\n 1: 20 10\n";
    let m = load(text);
    assert_eq!(nodes(&m), ["0-1", "2-3"]);
    // No L3: the LLC is the L2, private here.
    assert_eq!(groups(&m, Machine::llc_mask), ["0", "1", "2", "3"]);
}

#[test]
fn lscpu_e_drops_offline_cpus_at_the_top() {
    let m = load(SYNTH_E_OFFLINE);
    assert_eq!(m.nr_cpus(), 2);
    assert!(
        m.description.contains("2 offline CPU(s)"),
        "{}",
        m.description
    );
}

#[test]
fn lscpu_e_rejects_an_offline_hole() {
    // CPU 1 offline below online CPU 2.
    let text = SYNTH_E_OFFLINE
        .replace(
            "  1    0      0    1 1:1:1:0          yes",
            "  1    -      -    - -                 no",
        )
        .replace(
            "  2    -      -    - -                 no",
            "  2    0      0    2 2:2:2:0          yes",
        );
    let err = load_machine(&text, &ImportHint::NONE).unwrap_err();
    assert_eq!(err, ImportError::OfflineGap { cpu: 1, above: 2 });
    assert!(err.to_string().contains("cpu1/online"), "{err}");
}
