//! The hierarchical machine description used by presets and JSON machine files.
//!
//! A regular machine is described by counts (`packages`, `nodes_per_package`,
//! `llcs_per_node`, `cores_per_llc`, `cores_per_cluster`, `threads_per_core`) and a
//! CPU numbering; an irregular one (hybrid parts, partial captures) lists its CPUs.
//! Both produce a validated [`Machine`].

use serde::{Deserialize, Serialize};

use super::{Arch, CpuTopo, Firmware, KernelConfig, Machine, NodeId, TopologyError, MAX_NODES};
use crate::cpumask::MAX_CPUS;

/// How Linux numbers the SMT threads of a regular machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Numbering {
    /// Threads of a core are adjacent: core c has CPUs `c*T .. c*T+T-1` (arm64 servers,
    /// Alder Lake P-cores).
    #[default]
    Linear,
    /// The first thread of every core in the machine, then the second threads: on an
    /// N-CPU SMT2 machine CPU n and n+N/2 are siblings (x86 servers: EPYC, Xeon).
    SmtSplit,
}

/// One CPU of an explicitly listed machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    pub cpu: u32,
    #[serde(default)]
    pub package: u32,
    #[serde(default)]
    pub node: u16,
    #[serde(default)]
    pub llc: u32,
    /// Defaults to the core id (no cluster above the core).
    #[serde(default)]
    pub cluster: Option<u32>,
    /// Defaults to the CPU number (no SMT).
    #[serde(default)]
    pub core: Option<u32>,
    #[serde(default = "default_capacity")]
    pub capacity: u32,
    #[serde(default)]
    pub asym_prio: u32,
}

fn default_capacity() -> u32 {
    1024
}

fn one() -> u32 {
    1
}

/// A machine description (the JSON machine-file schema; see README).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub arch: Arch,
    #[serde(default)]
    pub hybrid: bool,
    /// Kconfig; defaults to [`KernelConfig::SERVER`].
    #[serde(default)]
    pub config: Option<KernelConfig>,
    #[serde(default)]
    pub packages: Option<u32>,
    #[serde(default = "one")]
    pub nodes_per_package: u32,
    #[serde(default = "one")]
    pub llcs_per_node: u32,
    #[serde(default)]
    pub cores_per_llc: Option<u32>,
    /// Cores sharing a cluster (arm64 PPTT cluster, x86 L2). 1 = no cluster.
    #[serde(default = "one")]
    pub cores_per_cluster: u32,
    #[serde(default = "one")]
    pub threads_per_core: u32,
    #[serde(default)]
    pub numbering: Numbering,
    /// SLIT. Defaults to 10 locally, 12 between nodes of a package, 20 across packages.
    #[serde(default)]
    pub numa_distance: Option<Vec<Vec<u8>>>,
    /// `node_reclaim_distance`; defaults to RECLAIM_DISTANCE (30). AMD Zen uses 32.
    #[serde(default)]
    pub node_reclaim_distance: Option<u8>,
    /// An explicit CPU list instead of the counts above.
    #[serde(default)]
    pub cpus: Option<Vec<CpuSpec>>,
    /// The regular form's per-CPU `arch_scale_cpu_capacity()`, indexed by CPU number
    /// (one entry per CPU, each 1-1024): asymmetric parts whose levels are regular, such
    /// as an arm64 DynamIQ phone with big and LITTLE clusters. Absent: 1024 everywhere.
    /// An explicit `cpus` list gives each CPU's `capacity` there instead. Written only
    /// when set, so specs without it (every link before it) encode as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacities: Option<Vec<u32>>,
    /// arm64: the firmware describes no cache shared between CPUs (QEMU's device
    /// tree has no cache nodes; a sysfs dump whose last cache level is private to each
    /// CPU). cacheinfo's last level is then each CPU's own, so `llc_sibling`
    /// (drivers/base/arch_topology.c, `update_siblings_masks()`) is the CPU alone and
    /// `cpu_coregroup_mask()` returns it (or the cluster, v6.0+ with
    /// CONFIG_SCHED_CLUSTER); an MC level narrower than SMT is "BUG: arch topology
    /// borken". Before v6.0 `cpu_coregroup_mask()` looked at the LLC only with an
    /// `llc_id` from a PPTT cache entry, so MC is the package ∩ node there (read as
    /// a device tree or a PPTT without caches, as QEMU's). The CPUs' `llc` ids are kept package ∩ node for the simulator (an
    /// assumption: nothing says what they share). Ignored on x86 (CPUID).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_shared_cache: bool,
    /// arm64: `"acpi"` (the default: a PPTT, ids as given), `"dt"` (a device tree
    /// whose cpu-map has socket nodes, as QEMU's virt writes) or `"dt-clusters"` (a
    /// cpu-map of clusters only). Kernels before v6.0 read a device tree's cpu-map
    /// differently ([`Firmware`]). Written only when not ACPI.
    #[serde(default, skip_serializing_if = "Firmware::is_acpi")]
    pub firmware: Firmware,
}

impl MachineSpec {
    /// A regular machine with default Kconfig and SLIT; adjust fields afterwards.
    #[allow(clippy::too_many_arguments)]
    pub fn regular(
        name: &str,
        description: &str,
        arch: Arch,
        packages: u32,
        nodes_per_package: u32,
        llcs_per_node: u32,
        cores_per_llc: u32,
        cores_per_cluster: u32,
        threads_per_core: u32,
        numbering: Numbering,
    ) -> Self {
        MachineSpec {
            name: name.to_string(),
            description: description.to_string(),
            arch,
            hybrid: false,
            config: None,
            packages: Some(packages),
            nodes_per_package,
            llcs_per_node,
            cores_per_llc: Some(cores_per_llc),
            cores_per_cluster,
            threads_per_core,
            numbering,
            numa_distance: None,
            node_reclaim_distance: None,
            cpus: None,
            capacities: None,
            no_shared_cache: false,
            firmware: Firmware::Acpi,
        }
    }

    /// A machine given CPU by CPU (`cpus`), with default Kconfig and SLIT; adjust
    /// fields afterwards (`hybrid`, `capacities`).
    pub fn explicit(name: &str, description: &str, arch: Arch, cpus: Vec<CpuSpec>) -> Self {
        MachineSpec {
            packages: None,
            cores_per_llc: None,
            cores_per_cluster: 1,
            threads_per_core: 1,
            cpus: Some(cpus),
            ..MachineSpec::regular(name, description, arch, 1, 1, 1, 1, 1, 1, Numbering::Linear)
        }
    }

    /// The same machine in the short regular form (counts per level, a numbering, and
    /// the SLIT only if it is not the default), when an explicit per-CPU spec
    /// describes a regular machine: `None` when it does not, or when it cannot be
    /// built. The regular form is kept only if it builds exactly `self`'s machine
    /// (every CPU's ids, the SLIT, the config), so nothing is guessed. Links carry
    /// this form: a 384-CPU per-CPU spec is about 37 KB of JSON, its regular form
    /// under 300 bytes.
    /// `m` is `self.build()`'s machine, already built by the caller.
    pub fn compact(&self, m: &Machine) -> Option<MachineSpec> {
        let list = self.cpus.as_ref()?;
        if self.hybrid || list.is_empty() || m.cpus.len() != list.len() {
            return None;
        }
        let distinct = |f: &dyn Fn(&crate::topology::CpuTopo) -> u64| {
            let mut v: Vec<u64> = m.cpus.iter().map(f).collect();
            v.sort_unstable();
            v.dedup();
            v.len() as u32
        };
        let n = m.cpus.len() as u32;
        let packages = distinct(&|t| t.package as u64);
        let nodes = distinct(&|t| t.node.0 as u64);
        let llcs = distinct(&|t| t.llc as u64);
        let clusters = distinct(&|t| t.cluster as u64);
        let cores = distinct(&|t| t.core as u64);
        let divides = |a: u32, b: u32| b > 0 && a.is_multiple_of(b);
        if !(divides(nodes, packages)
            && divides(llcs, nodes)
            && divides(cores, llcs)
            && divides(cores, clusters)
            && divides(n, cores))
        {
            return None;
        }
        let mut base = MachineSpec::regular(
            &self.name,
            &self.description,
            self.arch,
            packages,
            nodes / packages,
            llcs / nodes,
            cores / llcs,
            cores / clusters,
            n / cores,
            Numbering::Linear,
        );
        base.config = self.config;
        base.node_reclaim_distance = self.node_reclaim_distance;
        // Capacities that are not all 1024 travel as the regular form's list.
        if m.cpus.iter().any(|c| c.capacity != 1024) {
            base.capacities = Some(m.cpus.iter().map(|c| c.capacity).collect());
        }
        base.no_shared_cache = self.no_shared_cache;
        base.firmware = self.firmware;
        // SMT siblings next to each other, or the first thread of every core first.
        if n > cores && m.cpus.len() > 1 && m.cpus[0].core != m.cpus[1].core {
            base.numbering = Numbering::SmtSplit;
        }
        // One build: the default SLIT, replaced by the machine's if it differs.
        let mut built = base.build().ok()?;
        if built.numa_distance != m.numa_distance {
            base.numa_distance = Some(m.numa_distance.clone());
            built.numa_distance = m.numa_distance.clone();
        }
        (built == *m).then_some(base)
    }

    /// Builds and validates the machine.
    pub fn build(&self) -> Result<Machine, TopologyError> {
        let config = self.config.unwrap_or(KernelConfig::SERVER);
        let (mut cpus, nodes) = match &self.cpus {
            Some(list) => self.explicit_cpus(list)?,
            None => self.regular_cpus()?,
        };
        if let Some(caps) = &self.capacities {
            if self.cpus.is_some() {
                return Err(TopologyError::CapacitiesWithCpuList);
            }
            if caps.len() != cpus.len() {
                return Err(TopologyError::CapacitiesWrongLength {
                    len: caps.len(),
                    cpus: cpus.len(),
                });
            }
            // Each value is checked (1-1024) by validate() below, with its CPU.
            for (c, &cap) in cpus.iter_mut().zip(caps) {
                c.capacity = cap;
            }
        }
        let numa_distance = match &self.numa_distance {
            Some(d) => {
                // Rows past the CPUs' nodes are CPU-less nodes (QEMU's `-numa node`
                // without cpus=, a CXL or HBM memory node); their count is checked
                // (MAX_NODES) by validate() below.
                if d.len() < nodes {
                    return Err(TopologyError::SlitWrongSize {
                        rows: d.len(),
                        nodes,
                    });
                }
                d.clone()
            }
            None => default_slit(&cpus, nodes),
        };
        let m = Machine {
            name: self.name.clone(),
            description: self.description.clone(),
            arch: self.arch,
            hybrid: self.hybrid,
            config,
            cpus,
            numa_distance,
            node_reclaim_distance: self
                .node_reclaim_distance
                .unwrap_or(super::RECLAIM_DISTANCE),
            no_shared_cache: self.no_shared_cache,
            firmware: self.firmware,
        };
        m.validate()?;
        Ok(m)
    }

    fn regular_cpus(&self) -> Result<(Vec<CpuTopo>, usize), TopologyError> {
        let packages = self.packages.ok_or(TopologyError::ZeroCount {
            what: "packages (or an explicit \"cpus\" list)",
        })?;
        let cores_per_llc = self.cores_per_llc.ok_or(TopologyError::ZeroCount {
            what: "cores_per_llc",
        })?;
        let counts = [
            ("packages", packages),
            ("nodes_per_package", self.nodes_per_package),
            ("llcs_per_node", self.llcs_per_node),
            ("cores_per_llc", cores_per_llc),
            ("cores_per_cluster", self.cores_per_cluster),
            ("threads_per_core", self.threads_per_core),
        ];
        for (what, v) in counts {
            if v == 0 {
                return Err(TopologyError::ZeroCount { what });
            }
            // Each count is a number of CPUs or of groups of CPUs: none can pass
            // MAX_CPUS, and with all five at most 4096 their product fits a u64.
            if v > MAX_CPUS {
                return Err(TopologyError::TooLarge {
                    field: what.to_string(),
                    value: v.into(),
                    limit: MAX_CPUS.into(),
                    why: CPUS_WHY,
                });
            }
        }
        if cores_per_llc % self.cores_per_cluster != 0 {
            return Err(TopologyError::ClusterDoesNotDivide {
                cluster: self.cores_per_cluster,
                llc: cores_per_llc,
            });
        }
        let product = |vs: &[u32]| {
            vs.iter()
                .try_fold(1u64, |acc, &v| acc.checked_mul(v.into()))
                .unwrap_or(u64::MAX)
        };
        let n_cpus = product(&[
            packages,
            self.nodes_per_package,
            self.llcs_per_node,
            cores_per_llc,
            self.threads_per_core,
        ]);
        if n_cpus > MAX_CPUS.into() {
            return Err(TopologyError::TooLarge {
                field: "packages × nodes_per_package × llcs_per_node × cores_per_llc × threads_per_core (the number of CPUs)".to_string(),
                value: n_cpus,
                limit: MAX_CPUS.into(),
                why: CPUS_WHY,
            });
        }
        let nodes = product(&[packages, self.nodes_per_package]);
        if nodes > MAX_NODES as u64 {
            return Err(TopologyError::TooLarge {
                field: "packages × nodes_per_package (the number of NUMA nodes)".to_string(),
                value: nodes,
                limit: MAX_NODES as u64,
                why: NODES_WHY,
            });
        }
        let n_cpus = n_cpus as u32;
        let n_cores = n_cpus / self.threads_per_core;
        let nodes = nodes as usize;
        let mut cpus = vec![None; n_cpus as usize];
        for core in 0..n_cores {
            let llc = core / cores_per_llc;
            let node = llc / self.llcs_per_node;
            let package = node / self.nodes_per_package;
            let cluster = core / self.cores_per_cluster;
            for thread in 0..self.threads_per_core {
                let cpu = match self.numbering {
                    Numbering::Linear => core * self.threads_per_core + thread,
                    Numbering::SmtSplit => thread * n_cores + core,
                };
                cpus[cpu as usize] = Some(CpuTopo {
                    package,
                    node: NodeId(node as u16),
                    llc,
                    cluster,
                    core,
                    capacity: 1024,
                    asym_prio: 0,
                });
            }
        }
        let cpus = cpus
            .into_iter()
            .map(|c| c.expect("every CPU numbered"))
            .collect();
        Ok((cpus, nodes))
    }

    fn explicit_cpus(&self, list: &[CpuSpec]) -> Result<(Vec<CpuTopo>, usize), TopologyError> {
        if list.is_empty() {
            return Err(TopologyError::NoCpus);
        }
        if list.len() > MAX_CPUS as usize {
            return Err(TopologyError::TooManyCpus {
                cpus: list.len() as u64,
            });
        }
        let n = list.len();
        let mut cpus: Vec<Option<CpuTopo>> = vec![None; n];
        for (i, c) in list.iter().enumerate() {
            let idx = c.cpu as usize;
            if idx >= n {
                return Err(TopologyError::Inconsistent {
                    cpu: c.cpu,
                    what: format!(
                        "CPU numbers must run 0-{} without gaps ({} CPUs listed)",
                        n - 1,
                        n
                    ),
                });
            }
            if cpus[idx].is_some() {
                return Err(TopologyError::Inconsistent {
                    cpu: c.cpu,
                    what: "is listed twice".to_string(),
                });
            }
            if c.node as usize >= MAX_NODES {
                // Before anything is sized from it: the SLIT is nodes² bytes.
                return Err(TopologyError::TooLarge {
                    field: format!("cpus[{i}].node (CPU {})", c.cpu),
                    value: c.node.into(),
                    limit: MAX_NODES as u64 - 1,
                    why: NODES_WHY,
                });
            }
            let core = c.core.unwrap_or(c.cpu);
            cpus[idx] = Some(CpuTopo {
                package: c.package,
                node: NodeId(c.node),
                llc: c.llc,
                cluster: c.cluster.unwrap_or(core),
                core,
                capacity: c.capacity,
                asym_prio: c.asym_prio,
            });
        }
        let cpus: Vec<CpuTopo> = cpus.into_iter().map(|c| c.expect("checked")).collect();
        let nodes = cpus
            .iter()
            .map(|c| c.node.0 as usize + 1)
            .max()
            .unwrap_or(1);
        // A node id below the highest that no CPU uses is a CPU-less (memory-only)
        // node; the SLIT may add more past it (build()).
        Ok((cpus, nodes))
    }
}

const CPUS_WHY: &str = "schedlab models at most 4096 CPUs (MAX_CPUS)";
const NODES_WHY: &str = "the kernel allows at most 1024 NUMA nodes, ids 0-1023 (MAX_NUMNODES)";
// The two texts above spell the limits out.
const _: () = assert!(MAX_CPUS == 4096 && MAX_NODES == 1024);

/// 10 locally, 12 between nodes of one package, 20 across packages: the common shape of
/// firmware SLITs on two-socket servers. A CPU-less node (no package) is 20 from every
/// other node.
fn default_slit(cpus: &[CpuTopo], nodes: usize) -> Vec<Vec<u8>> {
    let mut pkg_of = vec![u32::MAX; nodes];
    for c in cpus {
        if let Some(p) = pkg_of.get_mut(c.node.0 as usize) {
            *p = c.package;
        }
    }
    (0..nodes)
        .map(|a| {
            (0..nodes)
                .map(|b| {
                    if a == b {
                        10
                    } else if pkg_of[a] == pkg_of[b] && pkg_of[a] != u32::MAX {
                        12
                    } else {
                        20
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> MachineSpec {
        serde_json::from_str(json).expect("valid spec")
    }

    /// The SLIT is `nodes × nodes` bytes and `nodes` comes from the CPUs' node ids: the
    /// ids must be refused by the stage that reads them, before `build()` sizes a table.
    #[test]
    fn ids_are_checked_before_the_slit_is_sized() {
        for node in [1023, 1024, 65535] {
            let s = spec(&format!(
                r#"{{"name":"x","arch":"x86","cpus":[{{"cpu":0,"node":{node}}}]}}"#
            ));
            let list = s.cpus.as_deref().expect("explicit");
            // Node 1023 is the last id MAX_NUMNODES allows (nodes 0-1022 CPU-less).
            assert_eq!(s.explicit_cpus(list).is_err(), node > 1023, "node {node}");
        }
        // Regular form: the node count is refused before the default SLIT too.
        let s = spec(r#"{"name":"x","arch":"x86","packages":1025,"cores_per_llc":1}"#);
        assert!(s.regular_cpus().is_err());
    }
}
