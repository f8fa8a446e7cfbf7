//! The machine model: what the kernel's topology code sees of a machine.
//!
//! ```text
//!  package ─┬─ NUMA node ─┬─ LLC ─┬─ cluster ─┬─ core ─┬─ SMT thread (logical CPU)
//!           │             │       │           │        └─ SMT thread
//!           │             │       │           └─ core ...
//!           │             │       └─ cluster ...  (arm64: PPTT cluster; x86: CPUs sharing an L2)
//!           │             └─ LLC ...
//!           └─ node ...            + SLIT: node_distance(a, b)
//! ```
//!
//! The canonical form is flat: one [`CpuTopo`] per logical CPU carrying the ids the
//! kernel derives for it (`topology_core_id`, `cpu_clustergroup_mask`/L2 id, `cpu_llc_id`,
//! `cpu_to_node`, `topology_physical_package_id`). Every sibling mask is "the CPUs with
//! the same id", which is how drivers/base/arch_topology.c and arch/x86/kernel/smpboot.c
//! build them. [`MachineSpec`] is the hierarchical description presets and JSON files use.

mod firmware;
pub mod import;
pub mod presets;
mod spec;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cpumask::{CpuId, CpuMask, MAX_CPUS};

pub use firmware::Firmware;
pub use import::{load_machine, ImportError, ImportHint, Missing};
pub use spec::{CpuSpec, MachineSpec, Numbering};

/// A NUMA node id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u16);

impl TryFrom<usize> for NodeId {
    type Error = TopologyError;
    fn try_from(value: usize) -> Result<Self, Self::Error> {
        u16::try_from(value)
            .map(NodeId)
            .map_err(|_| TopologyError::TooManyNodes { nodes: value })
    }
}

/// Which architecture's topology code builds the domain levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// `default_topology[]` with drivers/base/arch_topology.c masks.
    Arm64,
    /// `build_sched_topology()` in arch/x86/kernel/smpboot.c.
    X86,
}

impl Arch {
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::Arm64 => "arm64",
            Arch::X86 => "x86",
        }
    }
}

impl std::str::FromStr for Arch {
    type Err = String;

    /// `x86` (also `x86_64`, `amd64`) or `arm64` (also `aarch64`), as `uname -m` and
    /// distributions spell them.
    fn from_str(s: &str) -> Result<Arch, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "x86" | "x86_64" | "x86-64" | "amd64" => Ok(Arch::X86),
            "arm64" | "aarch64" => Ok(Arch::Arm64),
            other => Err(format!(
                "{other:?} is not an architecture schedlab models: write x86 or arm64"
            )),
        }
    }
}

/// The Kconfig options that decide which levels exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KernelConfig {
    /// CONFIG_NUMA. Off: one node spans the machine and no NODE/NUMA levels exist.
    pub numa: bool,
    /// CONFIG_SCHED_SMT.
    pub sched_smt: bool,
    /// CONFIG_SCHED_CLUSTER (default y on x86; no default on arm64, distros for
    /// Kunpeng enable it).
    pub sched_cluster: bool,
    /// CONFIG_SCHED_MC.
    pub sched_mc: bool,
}

impl KernelConfig {
    /// What a distribution kernel for a server enables.
    pub const SERVER: KernelConfig = KernelConfig {
        numa: true,
        sched_smt: true,
        sched_cluster: true,
        sched_mc: true,
    };

    /// This configuration with `options` applied: a comma-separated list of
    /// `NAME=y|n` (or `NAME=m`, refused: these are bool options), NAME one of
    /// `SCHED_SMT`, `SCHED_CLUSTER`, `SCHED_MC`, `NUMA`, with or without `CONFIG_`,
    /// as a distribution's /boot/config-* spells them. `# CONFIG_X is not set` lines
    /// are not read: write `X=n`.
    pub fn with_options(mut self, options: &str) -> Result<KernelConfig, String> {
        for item in options.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = item.split_once('=').ok_or_else(|| {
                format!("{item:?}: write NAME=y or NAME=n, e.g. CONFIG_SCHED_CLUSTER=n")
            })?;
            let name = name.trim();
            let key = name.strip_prefix("CONFIG_").unwrap_or(name);
            let on = match value.trim() {
                "y" | "Y" => true,
                "n" | "N" => false,
                v => return Err(format!("{name}={v}: the value is y or n")),
            };
            let field = match key {
                "SCHED_SMT" => &mut self.sched_smt,
                "SCHED_CLUSTER" => &mut self.sched_cluster,
                "SCHED_MC" => &mut self.sched_mc,
                "NUMA" => &mut self.numa,
                _ => {
                    return Err(format!(
                        "{name}: not an option that changes the sched domains; \
                         these are SCHED_SMT, SCHED_CLUSTER, SCHED_MC and NUMA"
                    ))
                }
            };
            *field = on;
        }
        Ok(self)
    }
}

/// One logical CPU and the ids the kernel keeps for it. Ids are machine-global.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTopo {
    /// `topology_physical_package_id()`.
    pub package: u32,
    /// `cpu_to_node()`.
    pub node: NodeId,
    /// `cpu_llc_id` / cache index3 id: CPUs with the same id share the LLC.
    pub llc: u32,
    /// arm64: PPTT cluster id; x86: L2 id (`cpu_l2c_id`).
    pub cluster: u32,
    /// A machine-global core id: CPUs with the same id are SMT siblings.
    pub core: u32,
    /// `arch_scale_cpu_capacity()`, 1024 on symmetric machines.
    pub capacity: u32,
    /// x86 ITMT priority (hybrid parts), 0 when absent. Drives SD_ASYM_PACKING.
    pub asym_prio: u32,
}

/// A whole machine as the scheduler's topology code sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub name: String,
    pub description: String,
    pub arch: Arch,
    /// X86_FEATURE_HYBRID_CPU (Alder Lake and later client parts).
    #[serde(default)]
    pub hybrid: bool,
    pub config: KernelConfig,
    /// Indexed by logical CPU number.
    pub cpus: Vec<CpuTopo>,
    /// SLIT: `node_distance(a, b)`, square, diagonal 10; not necessarily symmetric
    /// (the kernel takes it as given). Nodes no CPU is on are CPU-less (memory-only)
    /// nodes.
    pub numa_distance: Vec<Vec<u8>>,
    /// `node_reclaim_distance`: RECLAIM_DISTANCE (30), or 32 on AMD Zen
    /// (arch/x86/kernel/cpu/amd.c). NUMA levels farther than this lose
    /// SD_WAKE_AFFINE and SD_BALANCE_EXEC/FORK in sd_init().
    #[serde(default = "default_reclaim_distance")]
    pub node_reclaim_distance: u8,
    /// arm64: the firmware describes no cache shared between CPUs (QEMU's device
    /// tree has no cache nodes; a sysfs dump whose last cache level is private to each
    /// CPU). cacheinfo's last level is then each CPU's own, so `llc_sibling`
    /// (drivers/base/arch_topology.c, `update_siblings_masks()`) is the CPU alone and
    /// `cpu_coregroup_mask()` returns it (or the cluster, v6.0+ with
    /// CONFIG_SCHED_CLUSTER); an MC level narrower than SMT is "BUG: arch topology
    /// borken". Before v6.0 `cpu_coregroup_mask()` looked at the LLC only with an
    /// `llc_id` from a PPTT cache entry, so MC is the package ∩ node there (read as
    /// a device tree or a PPTT without caches, as QEMU's). The CPUs' `llc` ids stay package ∩ node for the simulator (an
    /// assumption: nothing says what they share). Ignored on x86 (CPUID).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_shared_cache: bool,
    /// arm64: the firmware the topology comes from ([`Firmware`]): ACPI's PPTT (the
    /// ids as given), or a device tree's cpu-map, which kernels before v6.0 read
    /// differently (`sched_domain::as_the_kernel_reads_it()`). x86: always ACPI.
    #[serde(default, skip_serializing_if = "Firmware::is_acpi")]
    pub firmware: Firmware,
}

/// The most NUMA nodes a machine may have: MAX_NUMNODES of a kernel built with
/// NODES_SHIFT=10, the largest x86 and arm64 allow. A node id is at most
/// `MAX_NODES - 1`; the SLIT is at most `MAX_NODES²` bytes.
pub const MAX_NODES: usize = 1024;

/// RECLAIM_DISTANCE in include/linux/topology.h.
pub(crate) const RECLAIM_DISTANCE: u8 = 30;

fn default_reclaim_distance() -> u8 {
    RECLAIM_DISTANCE
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TopologyError {
    #[error("the machine has no CPUs: give at least one package with one core")]
    NoCpus,
    #[error("the machine has {cpus} CPUs; schedlab models at most {MAX_CPUS}")]
    TooManyCpus { cpus: u64 },
    #[error("{nodes} NUMA nodes is more than the kernel's limit of {MAX_NODES} (MAX_NUMNODES)")]
    TooManyNodes { nodes: usize },
    /// A number of the description is beyond a documented limit; checked before
    /// anything is sized from it.
    #[error("{field} is {value}, more than {limit}: {why}")]
    TooLarge {
        field: String,
        value: u64,
        limit: u64,
        why: &'static str,
    },
    #[error("{what} must be at least 1, got 0")]
    ZeroCount { what: &'static str },
    #[error("cluster size {cluster} does not divide {llc} cores per LLC")]
    ClusterDoesNotDivide { cluster: u32, llc: u32 },
    #[error("{inner} of {inner_size} does not divide {outer} of {outer_size}")]
    DoesNotDivide {
        inner: &'static str,
        inner_size: u32,
        outer: &'static str,
        outer_size: u32,
    },
    #[error("the NUMA distance table has {rows} rows but the CPUs' node ids need {nodes}: give a row for every node (rows past the CPUs' nodes are CPU-less nodes)")]
    SlitWrongSize { rows: usize, nodes: usize },
    #[error(
        "the NUMA distance table is not square: row {row} has {len} entries, expected {expected}"
    )]
    SlitNotSquare {
        row: usize,
        len: usize,
        expected: usize,
    },
    #[error("node_distance({node}, {node}) is {value}; a node's distance to itself must be 10 (LOCAL_DISTANCE)")]
    SlitDiagonal { node: usize, value: u8 },
    #[error("node_distance({a}, {b}) is {value}; distances between different nodes must be more than 10 (11-255); the kernel does not use such a table (ACPI: every remote distance 20; device tree: a single node)")]
    SlitRemoteTooSmall { a: usize, b: usize, value: u8 },
    #[error("capacities has {len} entries but the machine has {cpus} CPUs: give one capacity per CPU, in CPU order")]
    CapacitiesWrongLength { len: usize, cpus: usize },
    #[error("capacities is for the regular form (counts); with an explicit \"cpus\" list give each CPU's \"capacity\" there")]
    CapacitiesWithCpuList,
    #[error("CPU {cpu}: {what}")]
    Inconsistent { cpu: u32, what: String },
    #[error("firmware {0:?} is a device tree, which schedlab models on arm64 only: x86 reads its topology from CPUID and ACPI (leave firmware out, or write \"acpi\")")]
    DeviceTreeOnX86(&'static str),
    #[error("unknown machine preset {name:?}; known presets: {known}{}", crate::near::did_you_mean(name, known.split(", ")))]
    UnknownPreset { name: String, known: String },
}

impl Machine {
    /// `nr_cpu_ids`.
    pub fn nr_cpus(&self) -> u32 {
        self.cpus.len() as u32
    }

    pub fn nr_nodes(&self) -> usize {
        self.numa_distance.len()
    }

    pub fn topo(&self, cpu: CpuId) -> &CpuTopo {
        &self.cpus[cpu.idx()]
    }

    fn mask_where(&self, pred: impl Fn(&CpuTopo) -> bool) -> CpuMask {
        let mut m = CpuMask::new(self.nr_cpus());
        for (i, t) in self.cpus.iter().enumerate() {
            if pred(t) {
                m.set_cpu(CpuId(i as u32));
            }
        }
        m
    }

    /// Every CPU (`cpu_online_mask` with everything online).
    pub fn all_cpus(&self) -> CpuMask {
        CpuMask::full(self.nr_cpus())
    }

    /// `topology_sibling_cpumask()` / `cpu_smt_mask()`.
    pub fn smt_mask(&self, cpu: CpuId) -> CpuMask {
        let t = self.topo(cpu);
        self.mask_where(|o| o.core == t.core)
    }

    /// [`Machine::smt_mask`] of every CPU, in one pass over the CPUs.
    pub fn smt_masks(&self) -> Vec<CpuMask> {
        let mut by_core: crate::fxhash::FxHashMap<u32, CpuMask> = Default::default();
        for (i, t) in self.cpus.iter().enumerate() {
            by_core
                .entry(t.core)
                .or_insert_with(|| CpuMask::new(self.nr_cpus()))
                .set_cpu(CpuId(i as u32));
        }
        self.cpus.iter().map(|t| by_core[&t.core].clone()).collect()
    }

    /// `cluster_sibling` on arm64, `cpu_l2c_shared_mask()` on x86.
    pub fn cluster_mask(&self, cpu: CpuId) -> CpuMask {
        let t = self.topo(cpu);
        self.mask_where(|o| o.cluster == t.cluster)
    }

    /// `llc_sibling` / `cpu_llc_shared_mask()`.
    pub fn llc_mask(&self, cpu: CpuId) -> CpuMask {
        let t = self.topo(cpu);
        self.mask_where(|o| o.llc == t.llc)
    }

    /// `core_sibling` / `topology_core_cpumask()`: the CPUs of the package.
    pub fn package_mask(&self, cpu: CpuId) -> CpuMask {
        let t = self.topo(cpu);
        self.mask_where(|o| o.package == t.package)
    }

    /// `cpumask_of_node(cpu_to_node(cpu))`; with CONFIG_NUMA=n every CPU.
    pub fn node_mask(&self, cpu: CpuId) -> CpuMask {
        if !self.config.numa {
            return self.all_cpus();
        }
        self.node_cpus(self.topo(cpu).node)
    }

    /// `cpumask_of_node(node)`.
    pub fn node_cpus(&self, node: NodeId) -> CpuMask {
        self.mask_where(|o| o.node == node)
    }

    /// `node_distance(a, b)`.
    pub fn node_distance(&self, a: NodeId, b: NodeId) -> u8 {
        self.numa_distance[a.0 as usize][b.0 as usize]
    }

    /// The number of SMT threads of the CPU's core.
    pub fn smt_threads(&self, cpu: CpuId) -> u32 {
        self.smt_mask(cpu).weight()
    }

    /// Whether any core has two or more threads (`sched_smt_present`, given
    /// CONFIG_SCHED_SMT).
    pub fn has_smt(&self) -> bool {
        let mut seen = crate::fxhash::FxHashMap::default();
        self.cpus.iter().any(|t| {
            let n = seen.entry(t.core).or_insert(0u32);
            *n += 1;
            *n > 1
        })
    }

    /// Checks what the kernel (or schedlab) relies on. The messages say what to change.
    pub fn validate(&self) -> Result<(), TopologyError> {
        let n = self.cpus.len();
        if n == 0 {
            return Err(TopologyError::NoCpus);
        }
        if n > MAX_CPUS as usize {
            return Err(TopologyError::TooManyCpus { cpus: n as u64 });
        }
        validate_slit(&self.numa_distance)?;
        if self.arch == Arch::X86 && self.firmware.is_device_tree() {
            return Err(TopologyError::DeviceTreeOnX86(self.firmware.as_str()));
        }
        let nodes = self.numa_distance.len();
        for (i, t) in self.cpus.iter().enumerate() {
            if t.node.0 as usize >= nodes {
                return Err(TopologyError::Inconsistent {
                    cpu: i as u32,
                    what: format!(
                        "is on node {} but the distance table has only {} nodes",
                        t.node.0, nodes
                    ),
                });
            }
            if t.capacity == 0 || t.capacity > 1024 {
                return Err(TopologyError::Inconsistent {
                    cpu: i as u32,
                    what: format!("capacity {} must be within 1-1024", t.capacity),
                });
            }
        }
        // A node no CPU is on is a CPU-less (memory-only) node: the kernel builds its
        // levels around it (sched_init_numa(), see Release::numa_levels_over_cpu_nodes).
        // Nesting: SMT siblings share a cluster, cluster siblings share an LLC, LLC
        // siblings share a package. (An LLC may span nodes: AMD NPS>1 and Intel SNC
        // without the SNC LLC split are both real; the kernel copes through
        // topology_span_sane() and the arch masks.)
        let mut first_of = crate::fxhash::FxHashMap::default();
        for (i, t) in self.cpus.iter().enumerate() {
            let checks: [(&str, u32, u32, &str); 3] = [
                ("core", t.core, t.cluster, "cluster"),
                ("cluster", t.cluster, t.llc, "LLC"),
                ("LLC", t.llc, t.package, "package"),
            ];
            for (inner, id, outer_id, outer) in checks {
                let key = (inner, id);
                match first_of.get(&key) {
                    None => {
                        first_of.insert(key, (i, outer_id));
                    }
                    Some(&(j, o)) if o != outer_id => {
                        return Err(TopologyError::Inconsistent {
                            cpu: i as u32,
                            what: format!(
                                "{inner} {id} spans two {outer}s (CPU {j} is in {outer} {o}, CPU {i} in {outer} {outer_id})"
                            ),
                        });
                    }
                    Some(_) => {}
                }
            }
            // x86 takes two threads of one core on different nodes for two cores
            // (`sched_domain::as_the_kernel_reads_it()`); arm64 keeps them SMT
            // siblings across the nodes, which is not modelled.
            if self.arch != Arch::Arm64 || !self.config.numa {
                continue;
            }
            let key = ("core-node", t.core);
            match first_of.get(&key) {
                None => {
                    first_of.insert(key, (i, t.node.0 as u32));
                }
                Some(&(j, o)) if o != t.node.0 as u32 => {
                    return Err(TopologyError::Inconsistent {
                        cpu: i as u32,
                        what: format!(
                            "SMT siblings on different nodes (CPU {j} on node {o}, CPU {i} on node {}): \
                             an arm64 kernel keeps them siblings, wider than the node's MC \
                             (\"BUG: arch topology borken\"), which schedlab does not model",
                            t.node.0
                        ),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// Checks a SLIT as `sched_init_numa()` and the ACPI SLIT parser (`slit_valid()`) need
/// it: square, 10 on the diagonal, 11-255 elsewhere. 255 is taken as a distance like
/// any other: `numa_set_distance()` bounds it by `(u8)distance != distance` only
/// (arch/x86/mm/numa.c v6.8, drivers/base/arch_numa.c, mm/numa_memblks.c v6.12),
/// `slit_valid()` by `val <= LOCAL_DISTANCE` off the diagonal (drivers/acpi/numa/srat.c
/// v6.8:181-195), the device tree's `of_numa_parse_distance_map_v1()` likewise
/// (drivers/of/of_numa.c v6.8:107-112), and `sched_init_numa()` only refuses
/// `distance >= NR_DISTANCE_VALUES` (256; topology.c v5.12.9:1653, v6.8:1861). It need
/// not be symmetric: the kernel builds the levels from `node_distance(i, j)` as given
/// and, with sched_verbose, warns "Node-distance not symmetric" (topology.c
/// v6.8:1931-1932).
pub fn validate_slit(d: &[Vec<u8>]) -> Result<(), TopologyError> {
    let n = d.len();
    if n == 0 {
        return Err(TopologyError::ZeroCount {
            what: "the number of NUMA nodes",
        });
    }
    if n > MAX_NODES {
        return Err(TopologyError::TooManyNodes { nodes: n });
    }
    for (i, row) in d.iter().enumerate() {
        if row.len() != n {
            return Err(TopologyError::SlitNotSquare {
                row: i,
                len: row.len(),
                expected: n,
            });
        }
    }
    for (i, row) in d.iter().enumerate() {
        if row[i] != 10 {
            return Err(TopologyError::SlitDiagonal {
                node: i,
                value: row[i],
            });
        }
        for (j, &value) in row.iter().enumerate() {
            if i != j && value <= 10 {
                return Err(TopologyError::SlitRemoteTooSmall { a: i, b: j, value });
            }
        }
    }
    Ok(())
}
