//! Importers: each captured fixture becomes the machine its `# MACHINE:` header
//! describes, bad text gives the error a user can act on, and nothing panics.
//!
//! Fixtures are read with `include_str!` so the same tests run under wasm32.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use schedlab_core::cpumask::CpuId;
use schedlab_core::topology::import::{load_json, machine_to_spec, sniff, Format};
use schedlab_core::topology::{
    load_machine, presets, Arch, ImportError, ImportHint, Machine, NodeId,
};

const KP96: &str = include_str!("fixtures/kunpeng920_96c_lscpu.txt");
const EPYC7742: &str = include_str!("fixtures/amd_epyc7742_2S_lscpu.txt");
const DENVERTON: &str = include_str!("fixtures/intel_atom_c3758_denverton_lscpu.txt");
const METEORLAKE: &str = include_str!("fixtures/intel_meteorlake_lscpu.txt");
const XEON6230: &str = include_str!("fixtures/intel_xeon_gold6230_2S_smt_lscpu.txt");
const KP128_SYSFS: &str = include_str!("fixtures/kunpeng920_128c_sysfs_topology.txt");
const EPYC9654_PARTIAL: &str = include_str!("fixtures/amd_epyc9654_2P_sysfs_topology_partial.txt");
const KVM_P: &str = include_str!("fixtures/kvm_2vcpu_lscpu_p.txt");
const KVM_P_CLUSTER: &str = include_str!("fixtures/kvm_2vcpu_lscpu_p_cluster.txt");
const KVM_E: &str = include_str!("fixtures/kvm_2vcpu_lscpu_e.txt");
const KVM_E_CLUSTER: &str = include_str!("fixtures/kvm_2vcpu_lscpu_e_cluster.txt");
const KVM_SUMMARY: &str = include_str!("fixtures/kvm_2vcpu_lscpu.txt");
const EXAMPLE_KUNPENG: &str = include_str!("../../examples/machines/kunpeng920-like.json");
const EXAMPLE_HYBRID: &str = include_str!("../../examples/machines/hybrid-4p4e.json");

/// The D06 SLIT from Valentin Schneider's 2020-03-24 LKML mail, written as
/// `numactl -H` would print it (synthetic text: the numbers are the mail's).
const KP96_NUMACTL: &str = "
available: 4 nodes (0-3)
node 0 cpus: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
node 0 size: 128000 MB
node 0 free: 120000 MB
node 1 cpus: 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47
node 1 size: 128000 MB
node 1 free: 120000 MB
node 2 cpus: 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71
node 2 size: 128000 MB
node 2 free: 120000 MB
node 3 cpus: 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
node 3 size: 128000 MB
node 3 free: 120000 MB
node distances:
node   0   1   2   3
  0:  10  12  20  22
  1:  12  10  22  24
  2:  20  22  10  12
  3:  22  24  12  10
";

fn load(text: &str) -> Machine {
    match load_machine(text, &ImportHint::NONE) {
        Ok(m) => m,
        Err(e) => panic!("import failed: {e}"),
    }
}

fn load_with(text: &str, hint: &ImportHint) -> Machine {
    match load_machine(text, hint) {
        Ok(m) => m,
        Err(e) => panic!("import failed: {e}"),
    }
}

/// The distinct masks `f` gives over all CPUs, as kernel lists, in CPU order.
fn groups(m: &Machine, f: fn(&Machine, CpuId) -> schedlab_core::cpumask::CpuMask) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in 0..m.nr_cpus() {
        let l = f(m, CpuId(c)).to_list();
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

fn nodes(m: &Machine) -> Vec<String> {
    (0..m.nr_nodes())
        .map(|n| m.node_cpus(NodeId(n as u16)).to_list())
        .collect()
}

/// Two machines have the same shape: the same sibling masks for every CPU.
fn assert_same_shape(a: &Machine, b: &Machine) {
    assert_eq!(a.nr_cpus(), b.nr_cpus());
    for c in 0..a.nr_cpus() {
        let c = CpuId(c);
        assert_eq!(a.smt_mask(c), b.smt_mask(c), "SMT of CPU {c}");
        assert_eq!(a.cluster_mask(c), b.cluster_mask(c), "cluster of CPU {c}");
        assert_eq!(a.llc_mask(c), b.llc_mask(c), "LLC of CPU {c}");
        assert_eq!(a.package_mask(c), b.package_mask(c), "package of CPU {c}");
        assert_eq!(a.node_mask(c), b.node_mask(c), "node of CPU {c}");
    }
    assert_eq!(a.numa_distance, b.numa_distance);
    assert_eq!(a.arch, b.arch);
}

// ---- plain lscpu summaries -------------------------------------------------------

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

// ---- lscpu -p / -e ---------------------------------------------------------------

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

/// A 2-socket, 2-node, SMT2 machine with clusters of 2 cores: synthetic `lscpu -p`
/// text in the layout lscpu prints (the numbers are made up).
const SYNTH_P: &str = "# The following is the parsable format, which can be fed to other
# programs. Each different item in every column has an unique ID
# starting usually from zero.
# CPU,Core,Cluster,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,0,,0,0,0,0
1,1,0,0,0,,1,1,1,0
2,2,1,0,0,,2,2,2,0
3,3,1,0,0,,3,3,3,0
4,4,2,1,1,,4,4,4,1
5,5,2,1,1,,5,5,5,1
6,6,3,1,1,,6,6,6,1
7,7,3,1,1,,7,7,7,1
8,0,0,0,0,,0,0,0,0
9,1,0,0,0,,1,1,1,0
10,2,1,0,0,,2,2,2,0
11,3,1,0,0,,3,3,3,0
12,4,2,1,1,,4,4,4,1
13,5,2,1,1,,5,5,5,1
14,6,3,1,1,,6,6,6,1
15,7,3,1,1,,7,7,7,1
";

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

/// `lscpu -e --all` with SMT siblings 2-3 offline (synthetic, lscpu's layout).
const SYNTH_E_OFFLINE: &str = "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE    MAXMHZ   MINMHZ
  0    0      0    0 0:0:0:0          yes 3000.0000 800.0000
  1    0      0    1 1:1:1:0          yes 3000.0000 800.0000
  2    -      -    - -                 no         -        -
  3    -      -    - -                 no         -        -
";

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

// ---- sysfs dump ------------------------------------------------------------------

#[test]
fn kunpeng920_128c_sysfs_is_the_preset() {
    // MACHINE: 128 cores, 2 packages x 2 NUMA nodes x 8 clusters x 4 cores, no SMT.
    assert_eq!(sniff(KP128_SYSFS), Some(Format::SysfsDump));
    let m = load_with(KP128_SYSFS, &ImportHint::arch(Arch::Arm64));
    assert_eq!(m.nr_cpus(), 128);
    assert!(!m.has_smt());
    assert_eq!(groups(&m, Machine::cluster_mask).len(), 32);
    assert_eq!(m.cluster_mask(CpuId(126)).to_list(), "124-127");
    assert_eq!(nodes(&m), ["0-31", "32-63", "64-95", "96-127"]);
    // L3 from the cache rows of CPUs 0, 32, 64; 96-127 fall back to package ∩ node.
    assert_eq!(groups(&m, Machine::llc_mask), nodes(&m));
    assert_eq!(
        m.numa_distance,
        [
            [10, 16, 32, 33],
            [16, 10, 25, 32],
            [32, 25, 10, 16],
            [33, 32, 16, 10]
        ]
    );
    assert_same_shape(&m, &presets::machine("kunpeng920-6426").unwrap());
}

#[test]
fn epyc9654_partial_snapshot_is_not_a_machine() {
    // Three CPUs of 384 with `[file]`/`[test]` prose: nothing to import.
    let err = load_machine(EPYC9654_PARTIAL, &ImportHint::NONE).unwrap_err();
    assert!(matches!(err, ImportError::UnknownFormat { .. }), "{err}");
}

// ---- impossible machines (issue 16) ----------------------------------------------

fn refused(text: &str, arch: Arch) -> String {
    match load_machine(text, &ImportHint::arch(arch)) {
        Ok(m) => panic!("accepted {} CPUs: {text}", m.nr_cpus()),
        Err(e) => e.to_string(),
    }
}

fn says(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "{p:?} missing from: {msg}");
    }
}

#[test]
fn sysfs_sibling_lists_must_agree() {
    // CPU 0 says CPU 1 is its SMT sibling; CPU 1 says it has none.
    let text = "cpu0 0 0 0 0 0-1 0-1 0-1 0-1 0-1\ncpu1 0 0 0 1 1 0-1 0-1 0-1 0-1\n";
    says(
        &refused(text, Arch::X86),
        &[
            "line 1",
            "CPU 0",
            "thread_siblings_list",
            "0-1",
            "CPU 1",
            "line 2",
        ],
    );
}

#[test]
fn sysfs_sibling_lists_hold_the_cpu_itself() {
    let text = "cpu0 0 0 0 0 1 0-1 0-1 0-1 0-1\ncpu1 0 0 0 1 1 0-1 0-1 0-1 0-1\n";
    says(
        &refused(text, Arch::X86),
        &["line 1", "CPU 0", "thread_siblings_list", "leaves out"],
    );
    // A package list without the CPU.
    let text = "cpu0 0 0 0 0 0 0 0-1 0-1 1\ncpu1 0 0 1 1 1 1 0-1 0-1 1\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 1", "CPU 0", "package_cpus_list", "leaves out"],
    );
    // A cache row whose list leaves out its own CPU.
    let text = "cpu0 0 0 0 0 0 0 0-1 0-1 0-1\ncpu1 0 0 1 1 1 1 0-1 0-1 0-1\n\
                cpu0 index3 level=3 type=Unified shared_cpu_list=1\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 3", "CPU 0", "shared_cpu_list", "leaves out"],
    );
}

#[test]
fn sysfs_levels_must_nest() {
    // SMT core 2-3 is not inside CPU 2's cluster 0-2.
    let text = "cpu0 0 0 0 0 0-1 0-2 0-3 0-3 0-3\n\
                cpu1 0 0 0 0 0-1 0-2 0-3 0-3 0-3\n\
                cpu2 0 0 0 1 2-3 0-2 0-3 0-3 0-3\n\
                cpu3 0 0 1 1 2-3 3 0-3 0-3 0-3\n";
    says(
        &refused(text, Arch::Arm64),
        &[
            "line 3",
            "CPU 2",
            "thread_siblings_list",
            "2-3",
            "cluster_cpus_list",
            "0-2",
        ],
    );
    // A cluster wider than the package.
    let text = "cpu0 0 0 0 0 0 0-1 0-1 0 0\ncpu1 1 0 0 1 1 0-1 0-1 1 1\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 1", "CPU 0", "cluster_cpus_list", "package_cpus_list"],
    );
    // Two cache rows that disagree about CPU 1's LLC.
    let text = "cpu0 0 0 0 0 0 0 0-3 0-3 0-3\ncpu1 0 0 1 1 1 1 0-3 0-3 0-3\n\
                cpu2 0 0 2 2 2 2 0-3 0-3 0-3\ncpu3 0 0 3 3 3 3 0-3 0-3 0-3\n\
                cpu0 index3 level=3 type=Unified shared_cpu_list=0-1\n\
                cpu1 index3 level=3 type=Unified shared_cpu_list=1-3\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 6", "CPU 1", "line 5", "shared_cpu_list"],
    );
    // A CPU in two nodes.
    let text = "cpu0 0 0 0 0 0 0 0-1 0-1 0-1\ncpu1 0 0 1 1 1 1 0-1 0-1 0-1\n\
                node0 cpulist=0-1 distance=10 20\nnode1 cpulist=1 distance=20 10\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 4", "CPU 1", "node 0", "node 1"],
    );
}

#[test]
fn sysfs_without_a_shared_cache_is_each_cpu_alone_on_arm64() {
    // QEMU's device tree: SMT threads, but every cache private to one CPU. Debian's
    // arm64 6.1 builds this (core/tests/qemu.rs, arm64-dt-clusters-6.1): llc_sibling
    // is the CPU alone, and MC narrower than SMT is "BUG: arch topology borken".
    let text = "cpu0 0 -1 0 0 0-1 0-1 0-1 0-1 0-1\n\
                cpu1 0 -1 0 0 0-1 0-1 0-1 0-1 0-1\n\
                cpu0 index0 level=1 type=Data shared_cpu_list=0\n\
                cpu0 index2 level=2 type=Unified shared_cpu_list=0\n\
                cpu1 index2 level=2 type=Unified shared_cpu_list=1\n";
    let m = load_with(text, &ImportHint::arch(Arch::Arm64));
    assert!(m.no_shared_cache);
    assert!(
        m.description.contains("No cache is shared between CPUs"),
        "{}",
        m.description
    );
    // The simulator's LLC is package ∩ node.
    assert_eq!(groups(&m, Machine::llc_mask), ["0-1"]);
    // x86 reads its caches from CPUID: such a dump is refused, saying what is missing.
    says(
        &refused(text, Arch::X86),
        &[
            "line 4",
            "the LLC of CPU 0 (0) is narrower than its SMT core (0-1)",
            "describes no shared cache",
        ],
    );
    // A cache shared by some threads of a core but not all: refused on arm64 too.
    let mut text = String::new();
    for c in 0..4 {
        text.push_str(&format!("cpu{c} 0 -1 0 0 0-3 0-3 0-3 0-3 0-3\n"));
    }
    for c in 0..4 {
        let l = if c < 2 { "0-1" } else { "2-3" };
        text.push_str(&format!(
            "cpu{c} index2 level=2 type=Unified shared_cpu_list={l}\n"
        ));
    }
    says(
        &refused(&text, Arch::Arm64),
        &["the LLC of CPU 0 (0-1) is narrower than its SMT core (0-3)"],
    );
}

#[test]
fn sysfs_cache_rows_claiming_every_cpu_are_no_llc() {
    // An ACPI PPTT without cache entries: every cache row claims all CPUs, across
    // packages. arm64 has no valid LLC then and cpu_coregroup_mask() falls back to
    // the package (∩ node).
    let mut text = String::from(
        "cpu0 0 -1 0 0 0 0 0-1 0-1 0-1\n\
         cpu1 0 -1 1 1 1 1 0-1 0-1 0-1\n\
         cpu2 1 -1 2 2 2 2 2-3 2-3 2-3\n\
         cpu3 1 -1 3 3 3 3 2-3 2-3 2-3\n\
         node0 cpulist=0-1 distance=10 20\n\
         node1 cpulist=2-3 distance=20 10\n",
    );
    for c in 0..4 {
        text.push_str(&format!(
            "cpu{c} index3 level=3 type=Unified shared_cpu_list=0-3\n"
        ));
    }
    let m = load_with(&text, &ImportHint::arch(Arch::Arm64));
    assert_eq!(groups(&m, Machine::llc_mask), ["0-1", "2-3"]);
    assert!(m.description.contains("no valid LLC"), "{}", m.description);
    // x86 takes its LLC from CPUID, never across packages: such a dump is refused.
    says(
        &refused(&text, Arch::X86),
        &["line 7", "CPU 0", "0-3", "beyond its package (0-1)"],
    );
}

#[test]
fn lscpu_levels_must_nest_and_errors_give_the_line() {
    // The two threads of core 0 report different L3s.
    let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,0,0,0,,0,0,0,1\n";
    says(
        &refused(text, Arch::X86),
        &["line 3", "CPU 1", "SMT sibling", "CPU 0", "LLC"],
    );
    // SMT siblings on two nodes.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n1,0,0,1\n";
    says(&refused(text, Arch::X86), &["line 3", "CPU 1", "node"]);
}

#[test]
fn slit_entries_stay_below_unreachable() {
    // 255 is the SLIT's "unreachable"; the kernel's NUMA levels need 11-254.
    let text = "{\"name\":\"x\",\"arch\":\"x86\",\"packages\":2,\"cores_per_llc\":1,\
                \"numa_distance\":[[10,255],[255,10]]}";
    says(
        &refused(text, Arch::X86),
        &["node_distance(0, 1)", "255", "254"],
    );
    // The same through numactl -H.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,1,1\n\n\
                available: 2 nodes (0-1)\nnode 0 cpus: 0\nnode 1 cpus: 1\n\
                node distances:\nnode   0   1\n  0:  10  255\n  1:  255  10\n";
    says(&refused(text, Arch::X86), &["255", "254"]);
}

// ---- JSON ------------------------------------------------------------------------

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
            assert!(msg.contains("unknown field `nod`"), "{msg}");
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
    assert!(err.to_string().contains("missing field `name`"), "{err}");
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
    // SMT siblings on two nodes, with a distance table after the list.
    let two_nodes = cpus(&[
        r#"{"cpu": 0, "core": 0, "node": 0}"#,
        r#"{"cpu": 1, "core": 0, "node": 1}"#,
    ]);
    let (line, msg) = at(&two_nodes);
    assert_eq!(line, 6, "{msg}");
    // An asymmetric distance table: the row of the first node it names.
    let slit = two_nodes
        .replace(r#""core": 0, "node": 1"#, r#""core": 1, "node": 1"#)
        .replace(
            "\n  ]\n}",
            "\n  ],\n  \"numa_distance\": [\n    [10, 20],\n    [21, 10]\n  ]\n}",
        );
    let (line, msg) = at(&slit);
    assert_eq!(line, 9, "{msg}");
    assert!(msg.contains("symmetric"), "{msg}");
    // A regular machine's count: the line of its key.
    let (line, msg) = at(
        "{\n  \"name\": \"x\",\n  \"arch\": \"x86\",\n  \"packages\": 1,\n  \"cores_per_llc\": 6,\n  \"cores_per_cluster\": 4\n}\n",
    );
    assert_eq!(line, 6, "{msg}");
    // Braces and brackets inside strings do not confuse the scan.
    let tricky = nest.replace("\"name\": \"x\"", "\"name\": \"x [{\\\"]\"");
    assert_eq!(at(&tricky).0, 8);
}

// ---- bad input -------------------------------------------------------------------

#[test]
fn bad_inputs_say_what_to_do() {
    let none = &ImportHint::NONE;
    assert_eq!(load_machine("  \n\n", none), Err(ImportError::Empty));

    let err = load_machine("hello world", none).unwrap_err();
    assert!(
        matches!(err, ImportError::UnknownFormat { line: 1, .. }),
        "{err}"
    );

    // A short row.
    let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0,0\n";
    let err = load_machine(text, none).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3: expected 9 comma-separated fields like the header, found 4"
    );

    // Data without the header.
    let err = load_machine("0,0,0,0,,0,0,0,0\n", none).unwrap_err();
    assert!(matches!(err, ImportError::NoHeader { .. }), "{err}");

    // Not a number.
    let text = "# CPU,Core,Socket,Node\n0,zero,0,0\n";
    let err = load_machine(text, none).unwrap_err();
    assert!(
        matches!(&err, ImportError::BadField { line: 2, column, .. } if column == "Core"),
        "{err}"
    );

    // A gap in the numbering.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n2,2,0,0\n";
    assert_eq!(
        load_machine(text, none),
        Err(ImportError::CpuGap { missing: 1 })
    );

    // The same CPU twice.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n0,0,0,0\n";
    assert!(matches!(
        load_machine(text, none),
        Err(ImportError::DuplicateCpu { line: 3, cpu: 0 })
    ));

    // Too many CPUs.
    let text = "# CPU,Core,Socket,Node\n5000,0,0,0\n";
    assert_eq!(
        load_machine(text, none),
        Err(ImportError::TooManyCpus { cpus: 5001 })
    );
    let big = KP96.replace(
        "CPU(s):                          96",
        "CPU(s):                          9600",
    );
    assert!(matches!(
        load_machine(&big, none),
        Err(ImportError::TooManyCpus { cpus: 9600 })
    ));

    // numactl on its own.
    assert_eq!(
        load_machine(KP96_NUMACTL, none),
        Err(ImportError::NumactlOnly)
    );

    // A distance table missing a row.
    let text = format!(
        "{KP96}\n{}",
        KP96_NUMACTL.replace("  3:  22  24  12  10\n", "")
    );
    assert!(matches!(
        load_machine(&text, none),
        Err(ImportError::BadLine { .. })
    ));

    // An asymmetric SLIT reaches validation.
    let text = format!(
        "{KP96}\n{}",
        KP96_NUMACTL.replace("  3:  22  24", "  3:  22  25")
    );
    assert!(matches!(
        load_machine(&text, none),
        Err(ImportError::Topology(_))
    ));
}

#[test]
fn a_4096_cpu_machine_imports() {
    let mut text = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for c in 0..4096 {
        text.push_str(&format!("{c},{c},{},0,,{c},{c},{c},{}\n", c / 2048, c / 64));
    }
    let m = load(&text);
    assert_eq!(m.nr_cpus(), 4096);
    text.push_str("4096,4096,1,0,,4096,4096,4096,64\n");
    assert_eq!(
        load_machine(&text, &ImportHint::NONE),
        Err(ImportError::TooManyCpus { cpus: 4097 })
    );
}

// ---- never panic -----------------------------------------------------------------

#[cfg(not(target_arch = "wasm32"))]
mod no_panic {
    use super::*;
    use proptest::prelude::*;

    const FIXTURES: [&str; 12] = [
        KP96,
        EPYC7742,
        DENVERTON,
        METEORLAKE,
        XEON6230,
        KP128_SYSFS,
        KVM_P,
        KVM_E,
        KVM_E_CLUSTER,
        SYNTH_P,
        SYNTH_E_OFFLINE,
        EXAMPLE_HYBRID,
    ];

    /// Replaces, inserts or deletes bytes of a fixture (kept valid UTF-8 by working on
    /// chars), and sometimes appends numactl text.
    fn mutate(base: &str, edits: &[(usize, u8, char)], with_numactl: bool) -> String {
        let mut chars: Vec<char> = base.chars().collect();
        for &(pos, op, ch) in edits {
            if chars.is_empty() {
                chars.push(ch);
                continue;
            }
            let i = pos % chars.len();
            match op % 3 {
                0 => chars[i] = ch,
                1 => chars.insert(i, ch),
                _ => {
                    chars.remove(i);
                }
            }
        }
        let mut s: String = chars.into_iter().collect();
        if with_numactl {
            s.push_str(KP96_NUMACTL);
        }
        s
    }

    fn interesting_char() -> impl Strategy<Value = char> {
        prop_oneof![
            prop::sample::select(vec![
                ',', ':', '-', ' ', '\n', '#', '0', '1', '9', '{', '}', '"', '('
            ]),
            any::<char>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_text_never_panics(text in ".{0,400}") {
            let _ = load_machine(&text, &ImportHint::NONE);
            let _ = load_machine(&text, &ImportHint::arch(Arch::Arm64));
        }

        #[test]
        fn mutated_fixtures_never_panic(
            which in 0..FIXTURES.len(),
            edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting_char()), 1..8),
            with_numactl in any::<bool>(),
            llc in prop::option::of(0u32..6),
            cluster in prop::option::of(0u32..6),
        ) {
            let text = mutate(FIXTURES[which], &edits, with_numactl);
            let hint = ImportHint { cores_per_llc: llc, cores_per_cluster: cluster, ..ImportHint::NONE };
            let _ = load_machine(&text, &hint);
        }
    }
}
