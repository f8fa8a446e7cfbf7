//! arm64 topology as drivers/base/arch_topology.c derives it, by release: the
//! coregroup widened to the cluster (v5.18) and the device tree's `/cpus/cpu-map`.

use schedlab_core::release::Release;
use schedlab_core::sched_domain::{
    as_the_kernel_reads_it, build_sched_domains, format, BuildConfig,
};
use schedlab_core::topology::{
    load_machine, Arch, Firmware, ImportHint, KernelConfig, Machine, MachineSpec, Numbering,
};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod common;
use common::cluster_cpu as cpu;

fn dmesg(m: &Machine, r: Release) -> String {
    let sd = build_sched_domains(m, &BuildConfig::new(r)).expect("builds");
    format::dmesg(&sd, None)
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

fn cpu_domains(m: &Machine, r: Release, cpu: usize) -> Vec<(String, &'static str)> {
    let sd = build_sched_domains(m, &BuildConfig::new(r)).expect("builds");
    let cd = sd.cpus[cpu].as_ref().expect("online");
    cd.domains
        .iter()
        .map(|d| (d.span.to_list(), d.name))
        .collect()
}

/// An arm64 machine of `packages` × `cores` (per package, one node and LLC each),
/// `cores_per_cluster` and `threads`, numbered linearly, as `firmware` describes it.
fn arm64_spec(
    name: &str,
    [packages, cores, cores_per_cluster, threads]: [u32; 4],
    firmware: Firmware,
) -> MachineSpec {
    let mut s = MachineSpec::regular(
        name,
        "",
        Arch::Arm64,
        packages,
        1,
        1,
        cores,
        cores_per_cluster,
        threads,
        Numbering::Linear,
    );
    s.firmware = firmware;
    s
}

/// QEMU's virt with a device tree, `-smp 8,sockets=1,clusters=2,cores=2,threads=2`
/// and no cache nodes (core/tests/fixtures/qemu/arm64-dt-clusters-6.1: Debian's 6.1
/// without CONFIG_SCHED_CLUSTER). QEMU 7.0+ writes `socket0/clusterN/coreN/threadN`.
fn qemu_dt_clusters(firmware: Firmware) -> Machine {
    let mut s = arm64_spec("virt", [1, 4, 2, 2], firmware);
    s.no_shared_cache = true;
    s.config = Some(KernelConfig {
        sched_cluster: false,
        ..KernelConfig::SERVER
    });
    s.build().expect("builds")
}

/// From v6.0 `parse_socket()` reads the socket nodes (arch_topology.c v6.8:651-675): the
/// ids as given, the same domains as the guest's own sysfs dump, which
/// core/tests/qemu.rs matches with the real 6.1's dmesg byte for byte.
#[test]
fn qemu_dt_sockets_from_6_0_are_read_as_given() {
    let sysfs = include_str!("fixtures/qemu/arm64-dt-clusters-6.1.sysfs.txt");
    let hint = ImportHint {
        arch: Some(Arch::Arm64),
        config: Some(KernelConfig {
            sched_cluster: false,
            ..KernelConfig::SERVER
        }),
        ..ImportHint::NONE
    };
    let from_guest = load_machine(sysfs, &hint).expect("imports");
    let dt = qemu_dt_clusters(Firmware::Dt);
    for r in [(6, 0), (6, 1), (6, 5), (6, 8), (6, 12)].map(|(a, b)| Release::new(a, b)) {
        assert_eq!(dmesg(&dt, r), dmesg(&from_guest, r), "{r}");
    }
    assert!(dmesg(&dt, Release::new(6, 1)).contains("the SMT domain not a subset of the MC"));
}

/// Before v6.0 the socket nodes are not known: `parse_cluster(map, 0)` finds no
/// `clusterN` or `coreN` child of the map, warns "/cpus/cpu-map: empty cluster", and
/// no CPU gets a package (arch_topology.c v5.12.9:376-484); the topology is reset and
/// `store_cpu_topology()` makes each CPU a core of its own in its node's package
/// (arch/arm64/kernel/topology.c v5.12.9:53-55). No SMT level, MC = the node. The same
/// machine from ACPI (a PPTT without caches) keeps its SMT siblings.
#[test]
fn qemu_dt_sockets_before_6_0_are_a_core_per_cpu() {
    let dt = qemu_dt_clusters(Firmware::Dt);
    let acpi = qemu_dt_clusters(Firmware::Acpi);
    for minor in [12, 15, 16, 19] {
        let r = Release::new(5, minor);
        let d = dmesg(&dt, r);
        assert!(d.starts_with("/cpus/cpu-map: empty cluster\n"), "{r}\n{d}");
        assert_eq!(d.matches("empty cluster").count(), 1);
        assert_eq!(cpu_domains(&dt, r, 0), [("0-7".to_string(), "MC")], "{r}");
        assert_eq!(
            cpu_domains(&acpi, r, 0),
            [("0-1".to_string(), "SMT"), ("0-7".to_string(), "MC")],
            "{r}"
        );
        assert!(!dmesg(&acpi, r).contains("cpu-map"));
    }
    assert!(!dmesg(&dt, Release::new(6, 0)).contains("cpu-map"));
    // Two sockets, a node each: the package is the node, the hierarchy goes on at NUMA.
    let mut s = arm64_spec("virt2", [2, 2, 1, 2], Firmware::Dt);
    s.no_shared_cache = true;
    let m = s.build().expect("builds");
    let names: Vec<&str> = cpu_domains(&m, Release::new(5, 15), 0)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(names, ["MC", "NUMA"]);
    assert_eq!(
        cpu_domains(&m, Release::new(6, 8), 0)[0],
        ("0-1".to_string(), "SMT")
    );
}

/// A cpu-map of clusters only (`cpu-map/clusterN/coreN`, a board's, or QEMU 6.2's
/// virt): before v6.0 every leaf cluster is a package (`parse_cluster()`'s static
/// `package_id`, v5.12.9:382, 421, 439) and has no cluster id; from v6.0 package 0
/// and the clusters ("Don't set cluster identifier as physical package identifier",
/// "Set cluster identifier in each core/thread from /cpu-map"). Two clusters of 4
/// cores sharing an L3 that the device tree describes: v5.16-v5.19 read no LLC from a
/// device tree, so MC is the cluster (as the package) and DIE the machine; v6.0 has
/// CLS and MC at the L3. The same machine from ACPI has CLS and MC from v5.16.
#[test]
fn dt_clusters_are_packages_before_6_0() {
    let mut s = arm64_spec("board", [1, 8, 4, 1], Firmware::DtClusters);
    let dt = s.build().expect("builds");
    s.firmware = Firmware::Acpi;
    let acpi = s.build().expect("builds");
    let top = Release::new(5, 16).name_of_top_level();
    for minor in [16, 19] {
        let r = Release::new(5, minor);
        assert_eq!(
            cpu_domains(&dt, r, 0),
            [("0-3".to_string(), "MC"), ("0-7".to_string(), top)],
            "{r}"
        );
        assert_eq!(
            cpu_domains(&acpi, r, 0),
            [("0-3".to_string(), "CLS"), ("0-7".to_string(), "MC")],
            "{r}"
        );
        assert!(!dmesg(&dt, r).contains("cpu-map"));
    }
    for r in [Release::new(6, 0), Release::new(6, 8)] {
        assert_eq!(cpu_domains(&dt, r, 0), cpu_domains(&acpi, r, 0), "{r}");
        assert_eq!(cpu_domains(&dt, r, 0)[0], ("0-3".to_string(), "CLS"));
    }
    // v5.12 has no CLS level: MC is the cluster with a device tree, the L3 with ACPI.
    let r = Release::new(5, 12);
    assert_eq!(cpu_domains(&dt, r, 0)[0], ("0-3".to_string(), "MC"));
    assert_eq!(cpu_domains(&acpi, r, 0), [("0-7".to_string(), "MC")]);
    // With SMT threads (`coreN/threadN`): before v6.0 no CPU has a cluster id, so
    // v5.16-v5.19's `cpu_clustergroup_mask()` is the CPU alone (`cluster_sibling` is
    // set only for `cluster_id != -1`, v5.16 update_siblings_masks()), narrower than
    // SMT: "BUG: arch topology borken" for every CPU (none on v5.15, no CLS level).
    let m = arm64_spec("smt", [1, 4, 2, 2], Firmware::DtClusters)
        .build()
        .expect("builds");
    let smt_past_cls = "the SMT domain not a subset of the CLS domain";
    assert_eq!(
        dmesg(&m, Release::new(5, 16)).matches(smt_past_cls).count(),
        8
    );
    assert!(!dmesg(&m, Release::new(5, 15)).contains("borken"));
    assert!(!dmesg(&m, Release::new(6, 0)).contains("borken"));
    // Two sockets written as clusters (QEMU 6.2): package 0 from v6.0.
    let m = arm64_spec("virt62", [2, 4, 4, 1], Firmware::DtClusters)
        .build()
        .expect("builds");
    let k = as_the_kernel_reads_it(&m, Release::new(6, 0));
    assert!(k.cpus.iter().all(|c| c.package == 0));
    let k = as_the_kernel_reads_it(&m, Release::new(5, 19));
    assert_eq!(k.cpus[4].package, m.cpus[4].cluster);
}

/// The firmware field in a machine file: "dt" and "dt-clusters" on arm64, refused on
/// x86; a machine saved and loaded back keeps it.
#[test]
fn firmware_in_machine_files() {
    let text = r#"{"name":"q","arch":"arm64","packages":1,"cores_per_llc":4,"firmware":"dt"}"#;
    let m = load_machine(text, &ImportHint::NONE).expect("loads");
    assert_eq!(m.firmware, Firmware::Dt);
    let spec = schedlab_core::topology::import::machine_to_spec(&m);
    assert_eq!(spec.firmware, Firmware::Dt);
    assert_eq!(spec.build().expect("builds"), m);
    let json = serde_json::to_string(&spec).expect("serializes");
    assert!(json.contains(r#""firmware":"dt""#), "{json}");
    let text = "{\"name\":\"q\",\"arch\":\"x86\",\"packages\":1,\"cores_per_llc\":4,\n\
                \"firmware\":\"dt-clusters\"}";
    let e = load_machine(text, &ImportHint::NONE).expect_err("x86 has no device tree");
    let e = e.to_string();
    assert!(e.contains("arm64 only") && e.contains("line 2"), "{e}");
    // ACPI is the default and is not written.
    let m = qemu_dt_clusters(Firmware::Acpi);
    let json = serde_json::to_string(&m).expect("serializes");
    assert!(!json.contains("firmware"), "{json}");
}
