//! arm64 topology as drivers/base/arch_topology.c derives it, by release: the
//! coregroup widened to the cluster (v5.18) and the device tree's `/cpus/cpu-map`.

use schedlab_core::release::Release;
use schedlab_core::sched_domain::{build_sched_domains, format, BuildConfig};
use schedlab_core::topology::{Arch, CpuSpec, KernelConfig, Machine, MachineSpec};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn dmesg(m: &Machine, r: Release) -> String {
    let sd = build_sched_domains(m, &BuildConfig::new(r)).expect("builds");
    format::dmesg(&sd, None)
}

fn cpu(cpu: u32, package: u32, node: u16, cluster: u32) -> CpuSpec {
    CpuSpec {
        cpu,
        package,
        node,
        llc: package,
        cluster: Some(cluster),
        core: None,
        capacity: 1024,
        asym_prio: 0,
    }
}

/// "topology: make core_mask include at least cluster_siblings" is in v5.18
/// (driver-core-5.18-rc5), not v6.0 with the clustergroup limit: two sockets whose
/// PPTT cluster holds the whole socket, two NUMA nodes each (QEMU's ACPI virt with
/// `clusters=1`, no cache entries). `cpu_coregroup_mask()` is the node; from 5.18 it
/// widens to the cluster, so that CLS is no longer "not a subset of" MC (the widened
/// MC then passes the node, DIE, on every release).
#[test]
fn the_coregroup_covers_the_cluster_from_5_18() {
    let cpus = (0..16)
        .map(|c| cpu(c, c / 8, (c / 4) as u16, c / 8))
        .collect();
    let mut s = MachineSpec::explicit("one-cluster", "", Arch::Arm64, cpus);
    s.no_shared_cache = true;
    let m = s.build().expect("builds");
    let cls_past_mc = "the CLS domain not a subset of the MC domain";
    let mc_past_die = "the MC domain not a subset of the DIE domain";
    for minor in 16..=19 {
        let d = dmesg(&m, Release::new(5, minor));
        assert_eq!(d.contains(cls_past_mc), minor < 18, "5.{minor}\n{d}");
        assert!(d.contains(mc_past_die), "5.{minor}");
    }
    // CONFIG_SCHED_CLUSTER=n: no CLS level and no widening.
    s.config = Some(KernelConfig {
        sched_cluster: false,
        ..KernelConfig::SERVER
    });
    let m = s.build().expect("builds");
    assert!(!dmesg(&m, Release::new(5, 18)).contains("not a subset"));
}
