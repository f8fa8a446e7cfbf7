//! Plain `lscpu` summaries: machines rebuilt from counts, with `numactl -H` and the
//! hints where the summary cannot say.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::*;

#[test]
fn kunpeng920_96c_summary() {
    // MACHINE: 2 sockets x 48 cores, 4 NUMA nodes (24 cores each), no SMT.
    let m = load(KP96);
    assert_eq!(m.arch, Arch::Arm64, "from `Architecture: aarch64`");
    assert_eq!(m.nr_cpus(), 96);
    assert!(!m.has_smt());
    assert_eq!(nodes(&m), ["0-23", "24-47", "48-71", "72-95"]);
    assert_eq!(groups(&m, Machine::package_mask), ["0-47", "48-95"]);
    // The summary cannot count Kunpeng's L3 (one per die = node): assumed per node.
    assert_eq!(groups(&m, Machine::llc_mask), nodes(&m));
    // ... and cannot show PPTT clusters at all: no cluster above the core.
    assert_eq!(m.cluster_mask(CpuId(5)).to_list(), "5");
    assert!(m.description.contains("Assumed one LLC per NUMA node"));
    // ... and says so, since the kernel would build a CLS level from them (#18).
    assert!(
        m.description.contains("does not show clusters") && m.description.contains("CLS level"),
        "{}",
        m.description
    );
    assert_eq!(m.name, "Kunpeng-920");
    // Default SLIT: 12 within a package, 20 across.
    assert_eq!(m.numa_distance[0], [10, 12, 20, 20]);
}

#[test]
fn kunpeng920_96c_summary_with_numactl_and_cluster_hint_is_the_preset() {
    // With the cluster size (4, from the PPTT) and the firmware SLIT the summary
    // rebuilds exactly the kunpeng920-4826 preset.
    let text = format!("{KP96}\n{KP96_NUMACTL}");
    let hint = ImportHint {
        cores_per_cluster: Some(4),
        ..ImportHint::NONE
    };
    let m = load_with(&text, &hint);
    let preset = presets::machine("kunpeng920-4826").unwrap();
    assert_same_shape(&m, &preset);
    assert_eq!(m.cluster_mask(CpuId(5)).to_list(), "4-7");
    assert_eq!(m.numa_distance[1], [12, 10, 22, 24]);
    // numactl first works too.
    let text = format!("{KP96_NUMACTL}\n{KP96}");
    assert_same_shape(&load_with(&text, &hint), &preset);
}

#[test]
fn numactl_node_lists_are_cross_checked() {
    // Move CPU 23 to node 1 in numactl's view: the two tools disagree.
    let bad = KP96_NUMACTL
        .replace(" 21 22 23\n", " 21 22\n")
        .replace("node 1 cpus: 24", "node 1 cpus: 23 24");
    let err = load_machine(&format!("{KP96}\n{bad}"), &ImportHint::NONE).unwrap_err();
    assert!(
        matches!(&err, ImportError::NodeMismatch { node: 0, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("0-23"), "{err}");
}

#[test]
fn xeon_gold_6230_summary() {
    // MACHINE: 2 sockets x 20 cores x SMT2; node0 = 0-19,40-59.
    let m = load(XEON6230);
    assert_eq!(m.arch, Arch::X86);
    assert_eq!(m.nr_cpus(), 80);
    assert!(m.has_smt());
    // x86 numbering: CPU n and n+40 are siblings (the node lists allow nothing else
    // but adjacent pairs, and x86 BIOSes list first threads first).
    assert_eq!(m.smt_mask(CpuId(0)).to_list(), "0,40");
    assert_eq!(m.smt_mask(CpuId(59)).to_list(), "19,59");
    assert_eq!(m.smt_mask(CpuId(79)).to_list(), "39,79");
    assert_eq!(nodes(&m), ["0-19,40-59", "20-39,60-79"]);
    assert_eq!(
        groups(&m, Machine::package_mask),
        ["0-19,40-59", "20-39,60-79"]
    );
    assert_eq!(groups(&m, Machine::llc_mask), nodes(&m));
    // Private L2 per core: the cluster is the core.
    assert_eq!(m.cluster_mask(CpuId(3)), m.smt_mask(CpuId(3)));
}

#[test]
fn epyc7742_summary_needs_the_ccx_size() {
    // Old lscpu prints one L3's size (16384K), not the count, and on Zen the LLC is
    // the CCX: guessing "one per node" would be wrong, so the import refuses.
    let err = load_machine(EPYC7742, &ImportHint::NONE).unwrap_err();
    assert!(
        matches!(&err, ImportError::SummaryNotEnough { why } if why.contains("CCX")),
        "{err}"
    );
    assert!(err.to_string().contains("lscpu -p"), "{err}");
    // MACHINE: 2 sockets x 64 cores, no SMT, 16 MiB L3 per 4-core CCX.
    let hint = ImportHint {
        cores_per_llc: Some(4),
        ..ImportHint::NONE
    };
    let m = load_with(EPYC7742, &hint);
    assert_eq!(m.nr_cpus(), 128);
    assert!(!m.has_smt());
    assert_eq!(nodes(&m), ["0-63", "64-127"]);
    let llcs = groups(&m, Machine::llc_mask);
    assert_eq!(llcs.len(), 32);
    assert_eq!(llcs[0], "0-3");
    assert_eq!(llcs[31], "124-127");
    assert_eq!(m.cluster_mask(CpuId(1)).to_list(), "1");
    // Zen: init_amd_zn() sets node_reclaim_distance = 32.
    assert_eq!(m.node_reclaim_distance, 32);
    assert_eq!(load(XEON6230).node_reclaim_distance, 30);
}

#[test]
fn denverton_summary_needs_the_l2_size() {
    // No L3: the LLC is the L2 (per 2-core module), which the summary does not count.
    let err = load_machine(DENVERTON, &ImportHint::NONE).unwrap_err();
    assert!(
        matches!(&err, ImportError::SummaryNotEnough { why } if why.contains("L2")),
        "{err}"
    );
    // MACHINE: 8 cores, L2 shared per 2-core module, no L3.
    let hint = ImportHint {
        cores_per_llc: Some(2),
        ..ImportHint::NONE
    };
    let m = load_with(DENVERTON, &hint);
    assert_eq!(m.nr_cpus(), 8);
    assert_eq!(groups(&m, Machine::llc_mask), ["0-1", "2-3", "4-5", "6-7"]);
    // x86 cluster = CPUs sharing the L2 = the LLC here.
    assert_eq!(
        groups(&m, Machine::cluster_mask),
        groups(&m, Machine::llc_mask)
    );
    assert_eq!(nodes(&m), ["0-7"]);
}

#[test]
fn meteorlake_summary_is_refused_as_hybrid() {
    // 1 socket × 16 cores × 2 threads is not 22 CPUs: 6 P-cores have SMT, 10 E-cores
    // do not, and the summary cannot say which CPU is which.
    let err = load_machine(METEORLAKE, &ImportHint::NONE).unwrap_err();
    assert!(
        matches!(&err, ImportError::SummaryNotEnough { why } if why.contains("22 CPUs")),
        "{err}"
    );
    assert!(err.to_string().contains("`lscpu -e`"), "{err}");
}

#[test]
fn kvm_summary_uses_instance_counts() {
    // lscpu 2.38 counts instances: L2 (2 instances), L3 (1 instance).
    let m = load(KVM_SUMMARY);
    assert_eq!(m.nr_cpus(), 2);
    assert_eq!(groups(&m, Machine::llc_mask), ["0-1"]);
    assert_eq!(groups(&m, Machine::cluster_mask), ["0", "1"]);
    assert!(
        !m.description.contains("Assumed one LLC"),
        "{}",
        m.description
    );
}
