//! Preset machines, each with where its shape comes from.
//!
//! | preset | CPUs | shape |
//! |---|---|---|
//! | kunpeng920-4826 | 96 | 2 sockets × 2 dies (nodes) × 6 clusters × 4 cores |
//! | kunpeng920-6426 | 128 | 2 sockets × 2 dies (nodes) × 8 clusters × 4 cores |
//! | jacobsville | 24 | 6 L2 clusters × 4 Atom cores, one LLC |
//! | epyc9654-1p / -2p | 192 / 384 | 12 CCX × 8 cores × SMT2 per socket, NPS1 |
//! | xeon-smt-8 | 8 | 4 cores × SMT2, one LLC |
//! | spr-2s / spr-2s-snc2 | 224 | 2 × 56 cores × SMT2, SNC off / SNC2 |
//! | alderlake-8p8e | 24 | 8 P-cores × SMT2 + 2 E-core clusters × 4, hybrid |
//! | flat-16 | 16 | one LLC, no clusters, no SMT |

use super::spec::{CpuSpec, MachineSpec, Numbering};
use super::{Arch, Machine, TopologyError};

/// A preset's name, one-line description and where its numbers come from.
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    spec: fn() -> MachineSpec,
}

impl Preset {
    pub fn spec(&self) -> MachineSpec {
        (self.spec)()
    }

    pub fn machine(&self) -> Machine {
        self.spec()
            .build()
            .expect("presets are valid (checked by tests)")
    }
}

/// D06 board SLIT, as printed in Valentin Schneider's 2020-03-24 LKML mail
/// (fixtures/kunpeng920_D06_2P96c_sched_domains_v5.6_dmesg.txt).
const KP4826_SLIT: [[u8; 4]; 4] = [
    [10, 12, 20, 22],
    [12, 10, 22, 24],
    [20, 22, 10, 12],
    [22, 24, 12, 10],
];

/// /sys/devices/system/node/nodeN/distance of a 128-core Kunpeng 920
/// (fixtures/kunpeng920_128c_sysfs_topology.txt).
const KP6426_SLIT: [[u8; 4]; 4] = [
    [10, 16, 32, 33],
    [16, 10, 25, 32],
    [32, 25, 10, 16],
    [33, 32, 16, 10],
];

fn slit<const N: usize>(t: [[u8; N]; N]) -> Option<Vec<Vec<u8>>> {
    Some(t.iter().map(|r| r.to_vec()).collect())
}

fn kunpeng920_4826() -> MachineSpec {
    let mut s = MachineSpec::regular(
        "kunpeng920-4826",
        "HiSilicon Kunpeng 920-4826, 2 sockets, 96 cores, 4 nodes of 24, clusters of 4",
        Arch::Arm64,
        2,
        2,
        1,
        24,
        4,
        1,
        Numbering::Linear,
    );
    s.numa_distance = slit(KP4826_SLIT);
    s
}

fn kunpeng920_6426() -> MachineSpec {
    let mut s = MachineSpec::regular(
        "kunpeng920-6426",
        "HiSilicon Kunpeng 920-6426, 2 sockets, 128 cores, 4 nodes of 32 = 8 clusters of 4",
        Arch::Arm64,
        2,
        2,
        1,
        32,
        4,
        1,
        Numbering::Linear,
    );
    s.numa_distance = slit(KP6426_SLIT);
    s
}

fn jacobsville() -> MachineSpec {
    MachineSpec::regular(
        "jacobsville",
        "Intel Atom P5962B (Jacobsville), 24 cores in 6 clusters of 4 sharing an L2, no SMT",
        Arch::X86,
        1,
        1,
        1,
        24,
        4,
        1,
        Numbering::Linear,
    )
}

fn epyc9654(packages: u32) -> MachineSpec {
    let mut s = MachineSpec::regular(
        if packages == 1 {
            "epyc9654-1p"
        } else {
            "epyc9654-2p"
        },
        if packages == 1 {
            "AMD EPYC 9654 (Zen 4), 96 cores × SMT2, 12 CCX of 8 cores (32 MiB L3 each), NPS1"
        } else {
            "2 × AMD EPYC 9654 (Zen 4), 192 cores × SMT2, 24 CCX of 8 cores, NPS1: 2 nodes"
        },
        Arch::X86,
        packages,
        1,
        12,
        8,
        1,
        2,
        Numbering::SmtSplit,
    );
    if packages == 2 {
        // 32 across sockets: the value AMD 2P firmware reports and the reason Zen sets
        // node_reclaim_distance = 32 (arch/x86/kernel/cpu/amd.c).
        s.numa_distance = Some(vec![vec![10, 32], vec![32, 10]]);
    }
    s.node_reclaim_distance = Some(32);
    s
}

fn xeon_smt_8() -> MachineSpec {
    MachineSpec::regular(
        "xeon-smt-8",
        "8 CPUs: 4 cores × 2 hyperthreads, one LLC (the machine of seed 04's test)",
        Arch::X86,
        1,
        1,
        1,
        4,
        1,
        2,
        Numbering::SmtSplit,
    )
}

fn spr_2s(snc2: bool) -> MachineSpec {
    let (name, desc, nodes, cores) = if snc2 {
        (
            "spr-2s-snc2",
            "2 × Xeon Sapphire Rapids, 56 cores × SMT2 each, SNC2: 4 nodes, LLC split per node",
            2,
            28,
        )
    } else {
        (
            "spr-2s",
            "2 × Xeon Sapphire Rapids, 56 cores × SMT2 each, SNC off: 2 nodes",
            1,
            56,
        )
    };
    let mut s = MachineSpec::regular(
        name,
        desc,
        Arch::X86,
        2,
        nodes,
        1,
        cores,
        1,
        2,
        Numbering::SmtSplit,
    );
    s.numa_distance = if snc2 {
        Some(vec![
            vec![10, 12, 21, 21],
            vec![12, 10, 21, 21],
            vec![21, 21, 10, 12],
            vec![21, 21, 12, 10],
        ])
    } else {
        Some(vec![vec![10, 21], vec![21, 10]])
    };
    s
}

fn alderlake_8p8e() -> MachineSpec {
    // P-cores 0-15 (threads adjacent), E-cores 16-23 in two clusters of 4 sharing an L2.
    let mut cpus = Vec::new();
    for cpu in 0..24u32 {
        let (core, cluster, prio) = if cpu < 16 {
            (cpu / 2, cpu / 2, if cpu % 2 == 0 { 68 } else { 17 })
        } else {
            (cpu - 8, 100 + (cpu - 16) / 4, 39)
        };
        cpus.push(CpuSpec {
            cpu,
            package: 0,
            node: 0,
            llc: 0,
            cluster: Some(cluster),
            core: Some(core),
            capacity: 1024,
            asym_prio: prio,
        });
    }
    MachineSpec {
        hybrid: true,
        ..MachineSpec::explicit(
            "alderlake-8p8e",
            "Intel Alder Lake (hybrid): 8 P-cores × SMT2 (CPUs 0-15) + 8 E-cores in 2 L2 clusters (16-23)",
            Arch::X86,
            cpus,
        )
    }
}

fn flat_16() -> MachineSpec {
    MachineSpec::regular(
        "flat-16",
        "16 CPUs, one LLC, no clusters, no SMT",
        Arch::X86,
        1,
        1,
        1,
        16,
        1,
        1,
        Numbering::Linear,
    )
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "kunpeng920-4826",
        summary: "Kunpeng 920-4826: 2 sockets, 4 nodes × 24 cores, clusters of 4",
        source: "fixtures/kunpeng920_96c_lscpu.txt; SLIT from the D06 dmesg in fixtures/kunpeng920_D06_2P96c_sched_domains_v5.6_dmesg.txt",
        spec: kunpeng920_4826,
    },
    Preset {
        name: "kunpeng920-6426",
        summary: "Kunpeng 920-6426: 2 sockets, 4 nodes × 32 cores (8 clusters of 4); seed 01's machine",
        source: "fixtures/kunpeng920_128c_sysfs_topology.txt (cluster_cpus_list, node distances); seed 01",
        spec: kunpeng920_6426,
    },
    Preset {
        name: "jacobsville",
        summary: "Atom P5962B: 24 cores, 6 L2 clusters of 4, MC spans all 24, no SMT",
        source: "Tim Chen's x86 cluster scheduling series (v5.16) describing Jacobsville; issue 2",
        spec: jacobsville,
    },
    Preset {
        name: "epyc9654-1p",
        summary: "EPYC 9654: 96 cores × SMT2, 12 CCX of 8, NPS1",
        source: "fixtures/amd_epyc9654_2P_sysfs_topology_partial.txt (one socket of it)",
        spec: || epyc9654(1),
    },
    Preset {
        name: "epyc9654-2p",
        summary: "2 × EPYC 9654: 384 CPUs, 24 CCX of 8 cores, 2 nodes (NPS1); seed 03's machine",
        source: "fixtures/amd_epyc9654_2P_sysfs_topology_partial.txt, amd_epyc9654_2P_hwloc_cpuid.xml",
        spec: || epyc9654(2),
    },
    Preset {
        name: "xeon-smt-8",
        summary: "4 cores × 2 threads, one LLC; seed 04's machine",
        source: "seed 04 (\"10 threads on 8 CPUs ... each core sporting two hyperthreads\")",
        spec: xeon_smt_8,
    },
    Preset {
        name: "spr-2s",
        summary: "2 × Sapphire Rapids 56c × SMT2, SNC off (2 nodes)",
        source: "Intel Xeon 4th gen (8480+) topology; SLIT 10/21 as typical 2S firmware",
        spec: || spr_2s(false),
    },
    Preset {
        name: "spr-2s-snc2",
        summary: "2 × Sapphire Rapids 56c × SMT2, SNC2 (4 nodes, PKG level omitted)",
        source: "Intel SNC2; LLC split per node as match_llc() does for SNC (arch/x86/kernel/smpboot.c)",
        spec: || spr_2s(true),
    },
    Preset {
        name: "alderlake-8p8e",
        summary: "Alder Lake hybrid: 8 P-cores × SMT2 + 8 E-cores (2 L2 clusters of 4)",
        source: "fixtures/intel_alderlake_sched_domains_dmesg.txt",
        spec: alderlake_8p8e,
    },
    Preset {
        name: "flat-16",
        summary: "16 CPUs, one LLC, no clusters, no SMT",
        source: "a synthetic baseline",
        spec: flat_16,
    },
];

/// Looks a preset up by name.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Builds a preset machine, or says which names exist.
pub fn machine(name: &str) -> Result<Machine, TopologyError> {
    match preset(name) {
        Some(p) => p.spec().build(),
        None => Err(TopologyError::UnknownPreset {
            name: name.to_string(),
            known: PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpumask::CpuId;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn every_preset_builds_and_validates() {
        for p in PRESETS {
            let m = p
                .spec()
                .build()
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(m.name, p.name);
        }
    }

    #[test]
    fn preset_sizes() {
        let n = |name| machine(name).unwrap().nr_cpus();
        assert_eq!(n("kunpeng920-4826"), 96);
        assert_eq!(n("kunpeng920-6426"), 128);
        assert_eq!(n("jacobsville"), 24);
        assert_eq!(n("epyc9654-1p"), 192);
        assert_eq!(n("epyc9654-2p"), 384);
        assert_eq!(n("xeon-smt-8"), 8);
        assert_eq!(n("spr-2s"), 224);
        assert_eq!(n("spr-2s-snc2"), 224);
        assert_eq!(n("flat-16"), 16);
    }

    #[test]
    fn epyc_numbering_matches_sysfs_snapshot() {
        // fixtures/amd_epyc9654_2P_sysfs_topology_partial.txt
        let m = machine("epyc9654-2p").unwrap();
        assert_eq!(m.smt_mask(CpuId(0)).to_list(), "0,192");
        assert_eq!(m.llc_mask(CpuId(192)).to_list(), "0-7,192-199");
        assert_eq!(m.llc_mask(CpuId(104)).to_list(), "104-111,296-303");
        assert_eq!(m.package_mask(CpuId(0)).to_list(), "0-95,192-287");
        assert_eq!(m.node_mask(CpuId(104)).to_list(), "96-191,288-383");
        assert_eq!(m.cluster_mask(CpuId(104)).to_list(), "104,296");
        let all = m.smt_masks();
        for c in m.all_cpus().iter() {
            assert_eq!(all[c.idx()], m.smt_mask(c), "CPU {c}");
        }
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let e = machine("kunpeng").unwrap_err().to_string();
        assert!(e.contains("kunpeng920-4826"), "{e}");
    }
}
