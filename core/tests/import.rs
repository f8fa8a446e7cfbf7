//! Importers: each captured fixture becomes the machine its `# MACHINE:` header
//! describes, bad text gives the error a user can act on, and nothing panics.
//!
//! Fixtures are read with `include_str!` so the same tests run under wasm32.

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

/// `lscpu -e --all` with SMT siblings 2-3 offline (synthetic, lscpu's layout).
const SYNTH_E_OFFLINE: &str = "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE    MAXMHZ   MINMHZ
  0    0      0    0 0:0:0:0          yes 3000.0000 800.0000
  1    0      0    1 1:1:1:0          yes 3000.0000 800.0000
  2    -      -    - -                 no         -        -
  3    -      -    - -                 no         -        -
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

// The cases, by format, are in import/; this file keeps the fixtures, the helpers
// and the property tests (whose regressions file would be import.proptest-regressions
// beside it, as wakeup.rs's is).
#[path = "import/bad_input.rs"]
mod bad_input;
#[path = "import/impossible.rs"]
mod impossible;
#[path = "import/json.rs"]
mod json;
#[path = "import/lscpu_table.rs"]
mod lscpu_table;
#[path = "import/summary.rs"]
mod summary;
#[path = "import/sysfs.rs"]
mod sysfs;

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
