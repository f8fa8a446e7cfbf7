//! Where an arm64 kernel reads the CPU topology from, and what it makes of it by release.
//!
//! The ids a release derives from each are `sched_domain::as_the_kernel_reads_it()`'s
//! (a table there).
//!
//! drivers/base/arch_topology.c: `parse_dt_topology()`, `parse_cluster()`,
//! `parse_core()` (v5.12.9:329-484), `parse_socket()` (v6.8:651-675); the socket nodes,
//! the cluster ids and package 0 for a socket-less map came together in v6.0 (Sudeep
//! Holla's series in driver-core-6.0-rc1: "arch_topology: Add support for parsing
//! sockets in /cpu-map", "… Set cluster identifier in each core/thread from
//! /cpu-map", "… Don't set cluster identifier as physical package identifier").

use serde::{Deserialize, Serialize};

/// The firmware the kernel reads an arm64 machine's topology from. The machine's ids
/// are what the firmware describes; `sched_domain::as_the_kernel_reads_it()` gives the
/// ids `cpu_topology[]` holds on a release.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Firmware {
    /// ACPI's PPTT, or ids already as the kernel keeps them (a sysfs dump, x86): taken
    /// as given on every release.
    #[default]
    Acpi,
    /// A device tree whose `/cpus/cpu-map` has socket nodes,
    /// `socketN/clusterN/coreN[/threadN]`, as QEMU's `virt` machine writes from QEMU
    /// 7.0 (one `cluster0` per socket without `-smp clusters=`): the `package` ids are
    /// its sockets, the `cluster` ids its clusters. Before v6.0 `parse_cluster(map, 0)`
    /// finds neither `clusterN` nor `coreN` under the map, warns "empty cluster", and
    /// every CPU's `package_id` stays -1: the topology is reset and
    /// `store_cpu_topology()` gives each CPU a core of its own in the package of its
    /// node (arch/arm64/kernel/topology.c v5.12.9:25-63). The cores' `cpu` phandles
    /// are never reached, so no `capacity-dmips-mhz` is read either.
    Dt,
    /// A device tree whose `/cpus/cpu-map` starts at clusters, `clusterN/coreN`
    /// (boards; QEMU 6.2's `virt`, whose clusters are its sockets): the `cluster` ids
    /// are its leaf clusters. Before v6.0 each leaf cluster is a package (the static
    /// `package_id` of `parse_cluster()`, v5.12.9:382, 439) and `cluster_id` stays -1;
    /// from v6.0 every CPU is in package 0 and the leaf clusters are the clusters.
    DtClusters,
}

impl Firmware {
    pub fn is_acpi(&self) -> bool {
        *self == Firmware::Acpi
    }

    pub fn is_device_tree(self) -> bool {
        !self.is_acpi()
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Firmware::Acpi => "acpi",
            Firmware::Dt => "dt",
            Firmware::DtClusters => "dt-clusters",
        }
    }

    /// Every firmware, in the order a picker lists them.
    pub const ALL: [Firmware; 3] = [Firmware::Acpi, Firmware::Dt, Firmware::DtClusters];
}

impl std::str::FromStr for Firmware {
    type Err = String;

    /// What [`Firmware::as_str`] writes (as machine files spell it).
    fn from_str(s: &str) -> Result<Firmware, String> {
        Firmware::ALL
            .into_iter()
            .find(|f| f.as_str() == s.trim())
            .ok_or_else(|| format!("{s:?} is not a firmware: write acpi, dt or dt-clusters"))
    }
}
