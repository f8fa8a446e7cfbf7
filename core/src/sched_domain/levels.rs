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
use crate::fxhash::FxHashMap;
use crate::release::Release;
use crate::topology::{Arch, CpuTopo, Machine, NodeId};

use super::{BuildConfig, SdFlags};

/// Masks stored once per distinct value and an index per CPU: the kernel's topology
/// masks are per CPU but equal across siblings (`sched_domains_numa_masks[level][node]`
/// are per node), and a 4096-CPU machine cannot afford 4096 copies of each.
pub(crate) struct Masks {
    /// The distinct masks, in order of their first CPU.
    pub distinct: Vec<CpuMask>,
    /// Index into `distinct` of each CPU's mask.
    pub of: Vec<u32>,
}

impl Masks {
    /// `f(cpu)` for every CPU, equal results stored once.
    fn collect(n: u32, mut f: impl FnMut(CpuId) -> CpuMask) -> Masks {
        let mut index: FxHashMap<CpuMask, u32> = FxHashMap::default();
        let mut distinct = Vec::new();
        let of = (0..n)
            .map(|c| {
                let m = f(CpuId(c));
                *index.entry(m).or_insert_with_key(|m| {
                    distinct.push(m.clone());
                    distinct.len() as u32 - 1
                })
            })
            .collect();
        Masks { distinct, of }
    }

    /// The online CPUs sharing `key`, one pass over the machine (the arch's sibling
    /// masks). An offline CPU's masks are the CPU alone and no other CPU's hold it:
    /// the arch code clears it from its siblings' masks and resets its own
    /// (`remove_cpu_topology()`, `clear_cpu_topology()`, arch_topology.c v6.8:807-853,
    /// called with `numa_remove_cpu()` from arm64's `__cpu_disable()`, smp.c
    /// v6.8:309-310; x86's `remove_siblinginfo()` and `numa_remove_cpu()`), and a CPU
    /// never brought up (`maxcpus=`) was never added (`update_siblings_masks()` walks
    /// the online CPUs, v6.8:767-805).
    fn siblings(m: &Machine, online: &CpuMask, key: impl Fn(&CpuTopo) -> u64) -> Masks {
        let n = m.nr_cpus();
        let mut index: FxHashMap<u64, u32> = FxHashMap::default();
        let mut distinct: Vec<CpuMask> = Vec::new();
        let of = m
            .cpus
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let key = online.test_cpu(CpuId(i as u32)).then(|| key(t));
                let mut new = || {
                    distinct.push(CpuMask::new(n));
                    distinct.len() as u32 - 1
                };
                let d = match key {
                    Some(k) => *index.entry(k).or_insert_with(new),
                    None => new(),
                };
                distinct[d as usize].set_cpu(CpuId(i as u32));
                d
            })
            .collect();
        Masks { distinct, of }
    }

    /// `tl->mask(cpu)` / the sibling mask of `cpu`.
    pub fn get(&self, cpu: CpuId) -> &CpuMask {
        &self.distinct[self.of[cpu.idx()] as usize]
    }
}

/// The machine's sibling masks, each computed once (`topology_sibling_cpumask()`,
/// `topology_cluster_cpumask()`, `cpu_llc_shared_mask()`, `topology_core_cpumask()`,
/// `cpumask_of_node()`), for the per-CPU mask functions below. They hold the online
/// CPUs only, as the kernel's do ([`Masks::siblings`]): arm64's `cpu_coregroup_mask()`
/// and `cpu_clustergroup_mask()` choose between them by `cpumask_subset()`, so with
/// CPUs offline the choice is made on what is left, not on the whole machine.
pub(crate) struct TopoMasks {
    pub smt: Masks,
    pub cluster: Masks,
    pub llc: Masks,
    pub package: Masks,
    /// `cpumask_of_node(cpu_to_node(cpu))`; every CPU with CONFIG_NUMA=n.
    pub node: Masks,
}

impl TopoMasks {
    pub fn new(m: &Machine, online: &CpuMask) -> TopoMasks {
        let numa = m.config.numa;
        let node = |t: &CpuTopo| if numa { u64::from(t.node.0) } else { 0 };
        // x86's match_l2c() and match_llc() (arch/x86/kernel/smpboot.c) end in
        // topology_sane(), which refuses a sibling on another node ("…-sibling CPU #n
        // is not on the same node! … Ignoring dependency.", or silently for Intel SNC in
        // match_llc()): the kernel's cpu_l2c_shared_mask() and cpu_llc_shared_mask()
        // never cross a node, whatever the caches say (sysfs shared_cpu_list still
        // spans the package on an SNC machine). arm64 keeps the cache's siblings and
        // cpu_coregroup_mask() deals with an LLC wider than the node.
        let per_node = m.arch == Arch::X86;
        let split = |id: u32, t: &CpuTopo| {
            if per_node {
                (u64::from(id) << 16) | node(t)
            } else {
                u64::from(id)
            }
        };
        // arm64 without a shared cache in the firmware: llc_sibling is the CPU alone
        // (update_siblings_masks() links only CPUs whose last cacheinfo level is shared).
        let llc = if m.arch == Arch::Arm64 && m.no_shared_cache {
            let n = m.nr_cpus();
            Masks::collect(n, |c| CpuMask::of(n, c))
        } else {
            Masks::siblings(m, online, |t| split(t.llc, t))
        };
        TopoMasks {
            smt: Masks::siblings(m, online, |t| t.core as u64),
            cluster: Masks::siblings(m, online, |t| split(t.cluster, t)),
            llc,
            package: Masks::siblings(m, online, |t| t.package as u64),
            node: Masks::siblings(m, online, node),
        }
    }
}

/// One `struct sched_domain_topology_level` with its mask evaluated for every CPU.
pub(crate) struct Level {
    pub name: &'static str,
    /// `tl->sd_flags()`.
    pub sd_flags: SdFlags,
    /// SDTL_OVERLAP.
    pub overlap: bool,
    pub numa_level: Option<usize>,
    /// `tl->mask(cpu)` for each CPU, already restricted to online CPUs.
    pub masks: Masks,
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
fn arm64_coregroup_mask<'t>(
    m: &Machine,
    t: &'t TopoMasks,
    cpu: CpuId,
    release: Release,
) -> &'t CpuMask {
    let node = t.node.get(cpu);
    let mut core_mask = node;
    // "Find the smaller of NUMA, core or LLC siblings"
    let pkg = t.package.get(cpu);
    if pkg.is_subset(core_mask) {
        core_mask = pkg;
    }
    // Before v6.0 "if (cpu_topology[cpu].llc_id != -1)" (arch_topology.c
    // v5.12.9:501-504): llc_id comes only from a PPTT cache entry (arm64 topology.c
    // v5.12.9:110-119), so with a device tree, or a PPTT without caches, the LLC is not
    // looked at. v6.0+: last_level_cache_is_valid() (v6.8:737-740), true for the CPU's
    // own cacheinfo.
    let llc_id_known = super::firmware::arm64_llc_known(m, release);
    let llc = t.llc.get(cpu);
    if llc_id_known && llc.is_subset(core_mask) {
        core_mask = llc;
    }
    // v5.18+: with clusters but no smaller shared LLC, widen to the cluster so that MC
    // degenerates into CLS (v6.8:742-750).
    if release.arm64_coregroup_covers_cluster() && m.config.sched_cluster {
        let cluster = t.cluster.get(cpu);
        if core_mask.is_subset(cluster) {
            core_mask = cluster;
        }
    }
    core_mask
}

/// arm64 `cpu_clustergroup_mask()`.
fn arm64_clustergroup_mask<'t>(
    m: &Machine,
    t: &'t TopoMasks,
    cpu: CpuId,
    release: Release,
) -> &'t CpuMask {
    let cluster = t.cluster.get(cpu);
    // v6.0+: "Forbid cpu_clustergroup_mask() to span more or the same CPUs as
    // cpu_coregroup_mask()".
    if release.has_arm64_cluster_limit()
        && arm64_coregroup_mask(m, t, cpu, release).is_subset(cluster)
    {
        return t.smt.get(cpu);
    }
    cluster
}

/// `x86_has_numa_in_package`: some package holds CPUs of more than one node.
fn x86_has_numa_in_package(m: &Machine) -> bool {
    let mut node_of_package: FxHashMap<u32, NodeId> = FxHashMap::default();
    m.config.numa
        && m.cpus
            .iter()
            .any(|c| *node_of_package.entry(c.package).or_insert(c.node) != c.node)
}

/// The levels for this machine and release, bottom-up, masks evaluated for the online
/// CPUs. Mirrors `default_topology[]` / `build_sched_topology()` + `sched_init_numa()`.
pub(crate) fn topology_levels<'t>(
    m: &Machine,
    t: &'t TopoMasks,
    cfg: &BuildConfig,
    online: &CpuMask,
) -> Vec<Level> {
    let release = cfg.release;
    let n = m.nr_cpus();
    let per_cpu =
        |f: &dyn Fn(CpuId) -> &'t CpuMask| -> Masks { Masks::collect(n, |c| f(c).and(online)) };
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
                    masks: per_cpu(&|c| t.smt.get(c)),
                });
            }
            if m.config.sched_cluster && release.has_cls_level() {
                levels.push(Level {
                    name: "CLS",
                    sd_flags: cpu_cluster_flags(cfg.sd_cluster),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| arm64_clustergroup_mask(m, t, c, release)),
                });
            }
            if m.config.sched_mc {
                levels.push(Level {
                    name: "MC",
                    sd_flags: cpu_core_flags(),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| arm64_coregroup_mask(m, t, c, release)),
                });
            }
            levels.push(Level {
                name: top_name,
                sd_flags: SdFlags::EMPTY,
                overlap: false,
                numa_level: None,
                masks: per_cpu(&|c| t.node.get(c)),
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
                    masks: per_cpu(&|c| t.smt.get(c)),
                });
            }
            let cls_skipped = m.hybrid && !release.x86_cls_on_hybrid();
            if m.config.sched_cluster && release.has_cls_level() && !cls_skipped {
                // x86_cluster_flags(): cpu_cluster_flags() | x86_sched_itmt_flags() since
                // the level came (66558b730f25, v5.16; smpboot.c v6.5:609-613).
                levels.push(Level {
                    name: "CLS",
                    sd_flags: cpu_cluster_flags(cfg.sd_cluster).union(itmt),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| t.cluster.get(c)),
                });
            }
            if m.config.sched_mc {
                levels.push(Level {
                    name: "MC",
                    sd_flags: cpu_core_flags().union(itmt),
                    overlap: false,
                    numa_level: None,
                    masks: per_cpu(&|c| t.llc.get(c)),
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
                    masks: per_cpu(&|c| t.node.get(c)),
                });
            }
        }
    }
    if m.config.numa {
        append_numa_levels(m, t, &mut levels, online, release);
    }
    levels
}

/// `sched_init_numa()`: one NODE level, then a NUMA level per further distinct distance.
///
/// The node masks are `sched_domains_numa_masks[level][node]`: the CPUs of every node
/// `k` with `node_distance(node, k) <= sched_domains_numa_distance[level]`, read in that
/// direction when the SLIT is not symmetric (topology.c v6.8:1930-1937). A CPU-less
/// node adds no CPU to any mask (`cpumask_of_node()` is empty); whether its distances
/// make levels depends on the release ([`numa_distances`]).
fn append_numa_levels(
    m: &Machine,
    t: &TopoMasks,
    levels: &mut Vec<Level>,
    online: &CpuMask,
    release: Release,
) {
    let distances = numa_distances(m, online, release);
    let n = m.nr_cpus();
    // cpumask_of_node() of each node: its online CPUs (empty for a node without any;
    // an offline CPU's own mask is the CPU alone, see `Masks::siblings`).
    let mut node_cpus = vec![CpuMask::new(n); m.nr_nodes()];
    for c in online.iter() {
        node_cpus[m.topo(c).node.0 as usize] = t.node.get(c).clone();
    }
    for (numa_level, &dist) in distances.iter().enumerate() {
        // masks[level][node] = CPUs of every node within `dist` of node: one mask per
        // node, as `sched_domains_numa_masks[level][node]`.
        let per_node: Vec<CpuMask> = (0..m.nr_nodes())
            .map(|node| {
                let node = NodeId(node as u16);
                let mut mask = CpuMask::new(n);
                for (other, cpus) in node_cpus.iter().enumerate() {
                    if m.node_distance(node, NodeId(other as u16)) <= dist {
                        mask.or_assign(cpus);
                    }
                }
                mask.and(online)
            })
            .collect();
        let masks = Masks::collect(n, |c| per_node[m.topo(c).node.0 as usize].clone());
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

/// The nodes `sched_init_numa()` walks: v5.18+ the nodes with online CPUs (N_CPU,
/// `for_each_cpu_node_but()`, topology.c v6.8:1775-1779; vmstat_cpu_online() and
/// vmstat_cpu_dead() keep N_CPU to the nodes whose `cpumask_of_node()` is not empty),
/// before every node id (`for (i = 0; i < nr_node_ids; i++)`, v5.12.9:1649-1650),
/// CPU-less (memory-only) nodes and nodes whose CPUs are all offline included.
fn sched_numa_nodes(m: &Machine, online: &CpuMask, release: Release) -> Vec<NodeId> {
    if !release.numa_levels_over_cpu_nodes() {
        return (0..m.nr_nodes()).map(|n| NodeId(n as u16)).collect();
    }
    let mut nodes: Vec<NodeId> = online.iter().map(|c| m.topo(c).node).collect();
    nodes.sort();
    nodes.dedup();
    nodes
}

/// `sched_domains_numa_distance[]`: the sorted distinct distances between the nodes
/// `sched_init_numa()` walks ([`sched_numa_nodes`]).
pub(crate) fn numa_distances(m: &Machine, online: &CpuMask, release: Release) -> Vec<u8> {
    let nodes = sched_numa_nodes(m, online, release);
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

/// `sched_numa_warn("Node-distance not symmetric")`, as `sched_init_numa()` prints it
/// with sched_verbose (v5.12: sched_debug) when some `node_distance(j, k) !=
/// node_distance(k, j)` among the nodes it walks (topology.c v6.8:1930-1932,
/// v5.12.9:1722-1723): once, the whole table after it (v6.8:1726-1749). From v5.18
/// (0fb3978b0aac) an entry of a node without CPUs is printed "(%02d) ", the others
/// " %02d  "; before, every entry "%02d ". Empty when the table is symmetric there.
/// Each line as dmesg shows it ("ERROR: %s\n\n" leaves an empty line).
pub(crate) fn numa_warnings(m: &Machine, online: &CpuMask, release: Release) -> Vec<String> {
    let nodes = sched_numa_nodes(m, online, release);
    let asymmetric = nodes.iter().any(|&j| {
        nodes
            .iter()
            .any(|&k| m.node_distance(j, k) != m.node_distance(k, j))
    });
    if !asymmetric {
        return Vec::new();
    }
    let mut has_cpu = vec![false; m.nr_nodes()];
    for c in online.iter() {
        has_cpu[m.topo(c).node.0 as usize] = true;
    }
    let mut lines = vec![
        "ERROR: Node-distance not symmetric".to_string(),
        String::new(),
    ];
    let n = m.nr_nodes();
    for i in 0..n {
        let mut line = "  ".to_string();
        for j in 0..n {
            let d = m.node_distance(NodeId(i as u16), NodeId(j as u16));
            if !release.numa_levels_over_cpu_nodes() {
                line.push_str(&format!("{d:02} "));
            } else if !has_cpu[i] || !has_cpu[j] {
                line.push_str(&format!("({d:02}) "));
            } else {
                line.push_str(&format!(" {d:02}  "));
            }
        }
        lines.push(line);
    }
    lines.push(String::new());
    lines
}
