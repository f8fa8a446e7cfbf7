//! Topology levels: the arch table plus the NUMA levels `sched_init_numa()` appends.
//!
//! ```text
//!  arm64 default_topology[]          x86 build_sched_topology()
//!   SMT  cpu_smt_mask                 SMT  cpu_smt_mask
//!   CLS  cpu_clustergroup_mask        CLS  cpu_l2c_shared_mask   (skipped on hybrid < 6.6)
//!   MC   cpu_coregroup_mask           MC   cpu_llc_shared_mask
//!   DIE/PKG  cpu_cpu_mask (node)      PKG  cpu_cpu_mask          (omitted with NUMA in package)
//!   NODE, NUMA...  sd_numa_mask       NODE, NUMA...
//! ```

use crate::cpumask::{CpuId, CpuMask};
use crate::release::Release;
use crate::topology::{Arch, Machine, NodeId};

use super::{BuildConfig, SdFlags};

/// One `struct sched_domain_topology_level` with its mask evaluated for every CPU.
pub(crate) struct Level {
    pub name: &'static str,
    /// `tl->sd_flags()`.
    pub sd_flags: SdFlags,
    /// SDTL_OVERLAP.
    pub overlap: bool,
    pub numa_level: Option<usize>,
    /// `tl->mask(cpu)` for each CPU, already restricted to online CPUs.
    pub masks: Vec<CpuMask>,
}

/// `cpu_smt_flags()`: SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES.
fn cpu_smt_flags() -> SdFlags {
    SdFlags::SHARE_CPUCAPACITY.union(SdFlags::SHARE_LLC)
}

/// `cpu_cluster_flags()`: SD_CLUSTER (v6.7+) | SD_SHARE_PKG_RESOURCES.
fn cpu_cluster_flags(sd_cluster: bool) -> SdFlags {
    if sd_cluster {
        SdFlags::CLUSTER.union(SdFlags::SHARE_LLC)
    } else {
        SdFlags::SHARE_LLC
    }
}

/// `cpu_core_flags()`: SD_SHARE_PKG_RESOURCES.
fn cpu_core_flags() -> SdFlags {
    SdFlags::SHARE_LLC
}

/// Whether ITMT (`sysctl_sched_itmt_enabled`) would be on: the platform reports
/// differing core priorities.
fn itmt_enabled(m: &Machine) -> bool {
    m.arch == Arch::X86
        && m.cpus
            .first()
            .is_some_and(|c0| m.cpus.iter().any(|c| c.asym_prio != c0.asym_prio))
}

/// arm64 `cpu_coregroup_mask()` (drivers/base/arch_topology.c).
fn arm64_coregroup_mask(m: &Machine, cpu: CpuId, release: Release) -> CpuMask {
    let node = m.node_mask(cpu);
    let mut core_mask = node;
    // "Find the smaller of NUMA, core or LLC siblings"
    let pkg = m.package_mask(cpu);
    if pkg.is_subset(&core_mask) {
        core_mask = pkg;
    }
    let llc = m.llc_mask(cpu);
    if llc.is_subset(&core_mask) {
        core_mask = llc;
    }
    // v6.0+: with clusters but no smaller shared LLC, widen to the cluster so that MC
    // degenerates into CLS.
    if release.has_arm64_cluster_limit() && m.config.sched_cluster {
        let cluster = m.cluster_mask(cpu);
        if core_mask.is_subset(&cluster) {
            core_mask = cluster;
        }
    }
    core_mask
}

/// arm64 `cpu_clustergroup_mask()`.
fn arm64_clustergroup_mask(m: &Machine, cpu: CpuId, release: Release) -> CpuMask {
    let cluster = m.cluster_mask(cpu);
    // v6.0+: "Forbid cpu_clustergroup_mask() to span more or the same CPUs as
    // cpu_coregroup_mask()".
    if release.has_arm64_cluster_limit()
        && arm64_coregroup_mask(m, cpu, release).is_subset(&cluster)
    {
        return m.smt_mask(cpu);
    }
    cluster
}

/// `x86_has_numa_in_package`: some package holds CPUs of more than one node.
fn x86_has_numa_in_package(m: &Machine) -> bool {
    m.config.numa
        && m.cpus.iter().any(|a| {
            m.cpus
                .iter()
                .any(|b| a.package == b.package && a.node != b.node)
        })
}

/// The levels for this machine and release, bottom-up, masks evaluated for the online
/// CPUs. Mirrors `default_topology[]` / `build_sched_topology()` + `sched_init_numa()`.
pub(crate) fn topology_levels(m: &Machine, cfg: &BuildConfig, online: &CpuMask) -> Vec<Level> {
    let release = cfg.release;
    let n = m.nr_cpus();
    let cpus = || (0..n).map(CpuId);
    let per_cpu = |f: &dyn Fn(CpuId) -> CpuMask| -> Vec<CpuMask> {
        cpus().map(|c| f(c).and(online)).collect()
    };
    let mut levels = Vec::new();
    let top_name = release.name_of_top_level();
    match m.arch {
        Arch::Arm64 => {
            if m.config.sched_smt {
                levels.push(Level {
                    name: "SMT",
                    sd_flags: cpu_smt_flags(),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| m.smt_mask(c)),
                });
            }
            if m.config.sched_cluster && release.has_cls_level() {
                levels.push(Level {
                    name: "CLS",
                    sd_flags: cpu_cluster_flags(cfg.sd_cluster),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| arm64_clustergroup_mask(m, c, release)),
                });
            }
            if m.config.sched_mc {
                levels.push(Level {
                    name: "MC",
                    sd_flags: cpu_core_flags(),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| arm64_coregroup_mask(m, c, release)),
                });
            }
            levels.push(Level {
                name: top_name,
                sd_flags: SdFlags::EMPTY,
                overlap: false,
                numa_level: None,
                masks: per_cpu(&|c| m.node_mask(c)),
            });
        }
        Arch::X86 => {
            let itmt = if itmt_enabled(m) {
                SdFlags::ASYM_PACKING
            } else {
                SdFlags::EMPTY
            };
            if m.config.sched_smt {
                // x86_smt_flags(): ITMT asym packing on SMT until 995998ebdebd (v6.5).
                let extra = if release.x86_smt_has_asym_packing() {
                    itmt
                } else {
                    SdFlags::EMPTY
                };
                levels.push(Level {
                    name: "SMT",
                    sd_flags: cpu_smt_flags().union(extra),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| m.smt_mask(c)),
                });
            }
            let cls_skipped = m.hybrid && !release.x86_cls_on_hybrid();
            if m.config.sched_cluster && release.has_cls_level() && !cls_skipped {
                // x86_cluster_flags() gained ITMT with CLS on hybrid (v6.6).
                let extra = if release.x86_cls_on_hybrid() {
                    itmt
                } else {
                    SdFlags::EMPTY
                };
                levels.push(Level {
                    name: "CLS",
                    sd_flags: cpu_cluster_flags(cfg.sd_cluster).union(extra),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| m.cluster_mask(c)),
                });
            }
            if m.config.sched_mc {
                levels.push(Level {
                    name: "MC",
                    sd_flags: cpu_core_flags().union(itmt),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| m.llc_mask(c)),
                });
            }
            if !x86_has_numa_in_package(m) {
                // x86_die_flags(): ITMT on hybrid parts (v6.6+).
                let extra = if m.hybrid && release.x86_cls_on_hybrid() {
                    itmt
                } else {
                    SdFlags::EMPTY
                };
                levels.push(Level {
                    name: top_name,
                    sd_flags: extra,
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| m.node_mask(c)),
                });
            }
        }
    }
    if m.config.numa {
        append_numa_levels(m, &mut levels, online);
    }
    levels
}

/// `sched_init_numa()`: one NODE level, then a NUMA level per further distinct distance.
fn append_numa_levels(m: &Machine, levels: &mut Vec<Level>, online: &CpuMask) {
    let distances = numa_distances(m, online);
    let n = m.nr_cpus();
    for (numa_level, &dist) in distances.iter().enumerate() {
        // masks[level][node] = CPUs of every node within `dist` of node.
        let masks = (0..n)
            .map(|c| {
                let node = m.topo(CpuId(c)).node;
                let mut mask = CpuMask::new(n);
                for other in 0..m.nr_nodes() {
                    let other = NodeId(other as u16);
                    if m.node_distance(node, other) <= dist {
                        mask.or_assign(&m.node_cpus(other));
                    }
                }
                mask.and(online)
            })
            .collect();
        levels.push(Level {
            name: if numa_level == 0 { "NODE" } else { "NUMA" },
            sd_flags: if numa_level == 0 {
                SdFlags::EMPTY
            } else {
                SdFlags::NUMA
            },
            overlap: numa_level > 0,
            numa_level: Some(numa_level),
            masks,
        });
    }
}

/// `sched_domains_numa_distance[]`: the sorted distinct distances between nodes that
/// have online CPUs.
pub(crate) fn numa_distances(m: &Machine, online: &CpuMask) -> Vec<u8> {
    let mut nodes: Vec<NodeId> = online.iter().map(|c| m.topo(c).node).collect();
    nodes.sort();
    nodes.dedup();
    let mut d: Vec<u8> = nodes
        .iter()
        .flat_map(|&a| nodes.iter().map(move |&b| (a, b)))
        .map(|(a, b)| m.node_distance(a, b))
        .collect();
    d.sort();
    d.dedup();
    d
}

/// `node_reclaim_distance`: 32 on AMD Zen (arch/x86/kernel/cpu/amd.c), else
/// RECLAIM_DISTANCE (30).
pub(crate) fn node_reclaim_distance(m: &Machine) -> u8 {
    m.node_reclaim_distance
}
