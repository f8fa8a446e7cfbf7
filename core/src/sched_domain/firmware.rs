//! What an arm64 kernel makes of the firmware's topology on a release
//! ([`Firmware`]: a PPTT, or a device tree's `/cpus/cpu-map`, which kernels before
//! v6.0 read differently).
//!
//! ```text
//!  firmware      cpu-map / PPTT              5.12 - 5.19                        6.0+
//!  acpi          PPTT package/cluster/core   the ids as given                   the ids as given
//!  dt            socketN/clusterN/coreN      map refused ("empty cluster"):     the ids as given
//!                (QEMU 7.0+ virt)            package = node, a core per CPU,
//!                                            no cluster, capacities 1024
//!  dt-clusters   clusterN/coreN              package = cluster, no cluster      package 0, the clusters
//!                (boards; QEMU 6.2 virt)
//!  dt, dt-clusters before 6.0: no llc_id (only a PPTT cache entry sets it), MC is package ∩ node
//! ```

use std::borrow::Cow;

use crate::release::Release;
use crate::topology::{Arch, Firmware, Machine};

/// `m` with the package, cluster and core ids (and capacities) that
/// `cpu_topology[]` holds on `release`, given the firmware ([`Firmware`]); the
/// machine itself when the kernel takes its ids as they are. The cluster id of a
/// CPU without one (`cluster_id` -1) and the core id of a CPU that is its own core
/// are ids no other CPU has. On x86, whose ids come from CPUID and ACPI on every
/// release, only the threads of a core that QEMU placed on different nodes change
/// (`x86_smt_within_nodes()`).
pub fn as_the_kernel_reads_it(m: &Machine, release: Release) -> Cow<'_, Machine> {
    if m.arch == Arch::X86 {
        return x86_smt_within_nodes(m);
    }
    let as_given = match m.firmware {
        Firmware::Acpi => true,
        Firmware::Dt => release.reads_dt_cpu_map_sockets(),
        Firmware::DtClusters => {
            release.reads_dt_cpu_map_sockets() && m.cpus.iter().all(|c| c.package == 0)
        }
    };
    if as_given {
        return Cow::Borrowed(m);
    }
    let mut m = m.clone();
    // Ids past every id the machine uses, one per CPU.
    let own = |i: usize| u32::try_from(i).unwrap_or(u32::MAX) | 1 << 31;
    let numa = m.config.numa;
    let firmware = m.firmware;
    for (i, c) in m.cpus.iter_mut().enumerate() {
        match (firmware, release.reads_dt_cpu_map_sockets()) {
            (Firmware::Dt, _) => {
                // store_cpu_topology(): core_id = cpu, package_id = cpu_to_node(cpu).
                c.package = if numa { u32::from(c.node.0) } else { 0 };
                c.core = own(i);
                c.cluster = own(i);
                c.capacity = 1024;
            }
            (Firmware::DtClusters, false) => {
                c.package = c.cluster;
                c.cluster = own(i);
            }
            (Firmware::DtClusters, true) => c.package = 0,
            (Firmware::Acpi, _) => {}
        }
    }
    Cow::Owned(m)
}

/// x86's `match_smt()` ends in `topology_sane()` (arch/x86/kernel/smpboot.c
/// v6.8:468-505, v5.12.9:419-456): two threads of one core on different nodes are not
/// SMT siblings ("sched: CPU #%d's smt-sibling CPU #%d is not on the same node! …
/// Ignoring dependency.", once), as QEMU's `-numa cpu,node-id=N,…,thread-id=T` can
/// place them. Each such core's CPUs become one core per node (the cluster and LLC
/// masks are cut at the node already, `TopoMasks`). With CONFIG_NUMA=n every CPU is
/// on node 0 and nothing changes.
fn x86_smt_within_nodes(m: &Machine) -> Cow<'_, Machine> {
    let mut node_of_core = crate::fxhash::FxHashMap::default();
    let split = m.config.numa
        && m.cpus
            .iter()
            .any(|c| *node_of_core.entry(c.core).or_insert(c.node) != c.node);
    if !split {
        return Cow::Borrowed(m);
    }
    let mut m = m.clone();
    // Only equality of core ids matters: number the (core, node) pairs afresh.
    let mut ids = crate::fxhash::FxHashMap::default();
    for c in m.cpus.iter_mut() {
        let next = ids.len() as u32;
        c.core = *ids.entry((c.core, c.node)).or_insert(next);
    }
    Cow::Owned(m)
}

/// Whether arm64's `cpu_coregroup_mask()` looks at the LLC on `release`: from
/// v6.0 the cacheinfo's (`last_level_cache_is_valid()`, arch_topology.c
/// v6.8:737-740); before, only an `llc_id`, which only a PPTT cache entry sets
/// (arch/arm64/kernel/topology.c v5.12.9:109-119), so never with a device tree, nor
/// with a PPTT without cache entries (`no_shared_cache`).
pub(crate) fn arm64_llc_known(m: &Machine, release: Release) -> bool {
    release.arm64_llc_from_cacheinfo() || (m.firmware.is_acpi() && !m.no_shared_cache)
}

/// What arch_topology.c prints while reading the firmware on `release`: the
/// socket nodes a kernel before v6.0 does not know leave the map an "empty
/// cluster" (`pr_warn("%pOF: empty cluster\n")`, v5.12.9:435-436).
pub(crate) fn firmware_messages(m: &Machine, release: Release) -> Vec<String> {
    if m.arch == Arch::Arm64 && m.firmware == Firmware::Dt && !release.reads_dt_cpu_map_sockets() {
        vec!["/cpus/cpu-map: empty cluster".to_string()]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{MachineSpec, Numbering};

    #[test]
    fn dt_sockets_before_6_0_are_a_core_per_cpu_in_the_node_package() {
        let mut s = MachineSpec::regular("q", "", Arch::Arm64, 2, 1, 1, 4, 2, 2, Numbering::Linear);
        s.firmware = Firmware::Dt;
        let m = s.build().expect("builds");
        let k = as_the_kernel_reads_it(&m, Release::new(5, 19));
        assert!(matches!(k, Cow::Owned(_)));
        for i in 0..m.cpus.len() {
            assert_eq!(k.cpus[i].package, u32::from(m.cpus[i].node.0));
            assert!(k.cpus.iter().filter(|c| c.core == k.cpus[i].core).count() == 1);
        }
        assert!(matches!(
            as_the_kernel_reads_it(&m, Release::new(6, 0)),
            Cow::Borrowed(_)
        ));
        assert_eq!(firmware_messages(&m, Release::new(5, 12)).len(), 1);
        assert!(firmware_messages(&m, Release::new(6, 0)).is_empty());
    }
}
