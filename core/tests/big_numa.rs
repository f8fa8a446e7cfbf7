//! The sched domains of a machine of 1024 NUMA nodes, all at one distance, build in
//! bounded memory. Every CPU's NUMA domain spans the machine and the kernel gives each
//! its own copy of the 1024 overlapping groups (`build_overlap_sched_groups()`): a
//! million groups, 1.1 GB and 1.9 s natively before session 32, which the page met
//! when a pasted `lscpu -p` + `numactl -H` of such a machine was opened. Equal groups
//! are now stored once and the rings shared (`sched_domain/build/overlap.rs`).
//!
//! The bound is the process's peak resident memory, so this file holds one test: its
//! own process, nothing running beside it. Linux only (it reads /proc).

#![cfg(target_os = "linux")]

mod common;

use schedlab_core::sched_domain::{build_sched_domains, BuildConfig};
use schedlab_core::topology::MachineSpec;

/// Measured after the fix: about 20 MiB (the machine and its domains); 1.1 GB before.
const MAX_RESIDENT_BYTES: u64 = 150 << 20;

#[test]
fn a_1024_node_machine_builds_its_domains_in_bounded_memory() {
    // 1024 packages of one CPU, one node each: the default SLIT puts every pair of
    // nodes at 20, so one NUMA level spans all 1024 CPUs.
    let spec: MachineSpec = serde_json::from_str(
        r#"{"name":"nodes-1024","arch":"x86","packages":1024,"cores_per_llc":1}"#,
    )
    .expect("json");
    let machine = spec.build().expect("a 1024-node machine");
    let release = "6.8".parse().expect("release");
    let sd = build_sched_domains(&machine, &BuildConfig::new(release)).expect("domains");
    // Each CPU keeps one domain, NUMA over the machine, with a group per node.
    for cpu in [0u32, 511, 1023] {
        let cd = sd
            .try_cpu(schedlab_core::cpumask::CpuId(cpu))
            .expect("online");
        let numa = cd.domains.last().expect("a domain");
        assert_eq!(numa.span_weight, 1024);
        assert_eq!(numa.groups.len(), 1024);
        assert!(numa.groups[0]
            .span
            .test_cpu(schedlab_core::cpumask::CpuId(cpu)));
    }
    let peak = common::peak_resident_bytes();
    assert!(
        peak < MAX_RESIDENT_BYTES,
        "a 1024-node machine's domains left the process's peak resident memory at {} MiB (bound {} MiB)",
        peak >> 20,
        MAX_RESIDENT_BYTES >> 20
    );
}
