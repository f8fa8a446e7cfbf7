//! NUMA inputs the kernel accepts: CPU-less (memory-only) nodes and a SLIT that is not
//! symmetric. kernel/sched/topology.c `sched_init_numa()` (v5.12.9:1633-1775,
//! v6.8:1839-1986).

use schedlab_core::release::Release;
use schedlab_core::sched_domain::{build_sched_domains, format, BuildConfig};
use schedlab_core::topology::{Arch, CpuSpec, MachineSpec, Numbering};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Two sockets of 4 CPUs (nodes 0, 1) and two memory-only nodes (2, 3): the SLIT of
/// 0fb3978b0aac's commit message (an Optane DCPMM machine).
fn optane(arch: Arch) -> MachineSpec {
    let mut s = MachineSpec::regular("optane", "", arch, 2, 1, 1, 4, 1, 1, Numbering::Linear);
    s.numa_distance = Some(vec![
        vec![10, 21, 17, 28],
        vec![21, 10, 28, 17],
        vec![17, 28, 10, 28],
        vec![28, 17, 28, 10],
    ]);
    s
}

fn level_distances(s: &MachineSpec, release: Release) -> Vec<Option<u8>> {
    let m = s.build().expect("CPU-less nodes are accepted");
    let sd = build_sched_domains(&m, &BuildConfig::new(release)).expect("builds");
    sd.levels.iter().map(|l| l.numa_distance).collect()
}

/// The regular form: SLIT rows past the CPUs' nodes are CPU-less nodes. v5.12-v5.17
/// collect the distances over every node id (`for (i = 0; i < nr_node_ids; i++)`,
/// topology.c v5.12.9:1649-1660); v5.18+ over the nodes with CPUs only
/// (`for_each_cpu_node_but()`, 0fb3978b0aac, topology.c v6.8:1857-1867).
#[test]
fn memory_only_nodes_count_as_levels_before_5_18_only() {
    for arch in [Arch::X86, Arch::Arm64] {
        let s = optane(arch);
        let m = s.build().expect("CPU-less nodes are accepted");
        assert_eq!(m.nr_nodes(), 4);
        let numa = |r| {
            level_distances(&s, r)
                .into_iter()
                .flatten()
                .collect::<Vec<u8>>()
        };
        assert_eq!(numa(Release::new(5, 12)), vec![10, 17, 21, 28]);
        assert_eq!(numa(Release::new(5, 17)), vec![10, 17, 21, 28]);
        assert_eq!(numa(Release::new(5, 18)), vec![10, 21]);
        assert_eq!(numa(Release::new(6, 8)), vec![10, 21]);
        // The attached domains: the extra levels of v5.12 have the span of the level
        // below and degenerate; the NUMA domain that stays is level 2 above NODE there.
        for r in [Release::new(5, 12), Release::new(6, 8)] {
            let sd = build_sched_domains(&m, &BuildConfig::new(r)).expect("builds");
            let cpu0 = sd.cpus[0].as_ref().expect("online");
            let top = cpu0.domains.last().expect("domains");
            assert_eq!(top.span_weight, 8, "{r}");
            assert_eq!(top.name, "NUMA", "{r}");
            let node = cpu0
                .domains
                .iter()
                .find(|d| d.name == "NODE" || d.name == "PKG" || d.name == "DIE");
            let want = if r < Release::new(5, 18) { 2 } else { 1 };
            if let Some(node) = node {
                assert_eq!(top.level - node.level, want, "{r}");
            }
        }
    }
}

/// The explicit form: a node id no CPU uses, between the CPUs' nodes, and one past
/// them given by the SLIT.
#[test]
fn explicit_cpu_list_with_cpu_less_nodes() {
    let cpus: Vec<CpuSpec> = (0..4)
        .map(|c| CpuSpec {
            cpu: c,
            package: c / 2,
            node: if c < 2 { 0 } else { 2 },
            llc: c / 2,
            cluster: None,
            core: None,
            capacity: 1024,
            asym_prio: 0,
        })
        .collect();
    let mut s = MachineSpec::explicit("gap", "", Arch::X86, cpus);
    s.numa_distance = Some(vec![
        vec![10, 15, 20, 25],
        vec![15, 10, 15, 25],
        vec![20, 15, 10, 25],
        vec![25, 25, 25, 10],
    ]);
    let m = s.build().expect("nodes 1 and 3 have no CPUs");
    assert_eq!(m.nr_nodes(), 4);
    for r in Release::all() {
        let sd = build_sched_domains(&m, &BuildConfig::new(r)).expect("builds");
        let d: Vec<u8> = sd.levels.iter().filter_map(|l| l.numa_distance).collect();
        let want: &[u8] = if r < Release::new(5, 18) {
            &[10, 15, 20, 25]
        } else {
            &[10, 20]
        };
        assert_eq!(d, want, "{r}");
        // Every CPU ends with the whole machine.
        for cd in sd.cpus.iter().flatten() {
            assert_eq!(cd.domains.last().expect("domains").span_weight, 4);
        }
        let _ = format::dmesg(&sd, None);
        let _ = format::debugfs(&sd, None);
    }
    // Without the SLIT the ids still need rows: the default table covers nodes 0-2.
    s.numa_distance = None;
    let m = s.build().expect("default SLIT for nodes 0-2");
    assert_eq!(m.nr_nodes(), 3);
    assert_eq!(m.numa_distance[1], vec![20, 10, 20]);
}

/// A SLIT that is not symmetric: the kernel builds `sched_domains_numa_masks[i][j]`
/// from `node_distance(j, k) <= sched_domains_numa_distance[i]` (topology.c
/// v6.8:1921-1939) and, with sched_verbose (v5.12: sched_debug), warns once with the
/// whole table (`sched_numa_warn()`, v6.8:1726-1749).
#[test]
fn asymmetric_slit_is_built_as_given_and_warned() {
    let mut s = MachineSpec::regular("asym", "", Arch::X86, 3, 1, 1, 2, 1, 1, Numbering::Linear);
    // node 0 sees node 2 at 15, node 2 sees node 0 at 25.
    s.numa_distance = Some(vec![vec![10, 20, 15], vec![20, 10, 20], vec![25, 20, 10]]);
    let m = s.build().expect("the kernel accepts an asymmetric SLIT");
    let sd = build_sched_domains(&m, &BuildConfig::new(Release::new(6, 8))).expect("builds");
    let d: Vec<u8> = sd.levels.iter().filter_map(|l| l.numa_distance).collect();
    assert_eq!(d, vec![10, 15, 20, 25]);
    // CPU 0 (node 0): the level at 15 spans nodes 0 and 2; CPU 4 (node 2): nothing
    // new at 15 or 20... its level at 20 spans node 1 and 2, at 25 everything.
    let spans = |cpu: usize| -> Vec<String> {
        sd.cpus[cpu]
            .as_ref()
            .expect("online")
            .domains
            .iter()
            .map(|d| d.span.to_list())
            .collect()
    };
    assert!(spans(0).contains(&"0-1,4-5".to_string()), "{:?}", spans(0));
    assert!(spans(4).contains(&"2-5".to_string()), "{:?}", spans(4));
    let dmesg = format::dmesg(&sd, None);
    let warn = "ERROR: Node-distance not symmetric\n\n   10   20   15  \n   20   10   20  \n   25   20   10  \n\n";
    assert!(dmesg.starts_with(warn), "{dmesg}");
    assert_eq!(dmesg.matches("not symmetric").count(), 1);
    // v5.12 prints "%02d " (topology.c v5.12.9:1554-1558).
    let sd = build_sched_domains(&m, &BuildConfig::new(Release::new(5, 12))).expect("builds");
    let dmesg = format::dmesg(&sd, None);
    let warn = "ERROR: Node-distance not symmetric\n\n  10 20 15 \n  20 10 20 \n  25 20 10 \n\n";
    assert!(dmesg.starts_with(warn), "{dmesg}");
}

/// v5.18+ looks only at nodes with CPUs: an asymmetry to a CPU-less node is not
/// warned there, and the table marks the CPU-less node's entries "(%02d) "
/// (topology.c v6.8:1738-1746); v5.12 walks every node.
#[test]
fn asymmetry_to_a_cpu_less_node() {
    let mut s = MachineSpec::regular("asym", "", Arch::X86, 2, 1, 1, 2, 1, 1, Numbering::Linear);
    s.numa_distance = Some(vec![vec![10, 20, 30], vec![20, 10, 30], vec![31, 30, 10]]);
    let m = s.build().expect("accepted");
    let sd = build_sched_domains(&m, &BuildConfig::new(Release::new(6, 8))).expect("builds");
    assert!(!format::dmesg(&sd, None).contains("not symmetric"));
    let sd = build_sched_domains(&m, &BuildConfig::new(Release::new(5, 17))).expect("builds");
    assert!(format::dmesg(&sd, None).starts_with(
        "ERROR: Node-distance not symmetric\n\n  10 20 30 \n  20 10 30 \n  31 30 10 \n\n"
    ));
    // An asymmetry between CPU nodes with a CPU-less node in the table.
    s.numa_distance = Some(vec![vec![10, 20, 30], vec![21, 10, 30], vec![30, 30, 10]]);
    let m = s.build().expect("accepted");
    let sd = build_sched_domains(&m, &BuildConfig::new(Release::new(6, 8))).expect("builds");
    assert!(format::dmesg(&sd, None).starts_with(
        "ERROR: Node-distance not symmetric\n\n   10   20  (30) \n   21   10  (30) \n  (30) (30) (10) \n\n"
    ));
}

/// `lscpu -p` followed by `numactl -H` with memory-only nodes (QEMU `-numa node`
/// without cpus=, an Optane or CXL node): the nodes the distance table lists are kept,
/// with their distances, so that the releases that count them (before v5.18) can.
#[test]
fn import_keeps_memory_only_nodes_of_the_distance_table() {
    use schedlab_core::topology::{load_machine, ImportHint};
    let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
2,2,1,2,,2,2,2,1
3,3,1,2,,3,3,3,1
available: 4 nodes (0-3)
node 0 cpus: 0 1
node 0 size: 1000 MB
node 0 free: 900 MB
node 1 cpus:
node 1 size: 4000 MB
node 1 free: 4000 MB
node 2 cpus: 2 3
node 2 size: 1000 MB
node 2 free: 900 MB
node 3 cpus:
node 3 size: 4000 MB
node 3 free: 4000 MB
node distances:
node   0   1   2   3
  0:  10  17  21  28
  1:  17  10  28  28
  2:  21  28  10  17
  3:  28  28  17  10
";
    let m = load_machine(text, &ImportHint::NONE).expect("imports");
    assert_eq!(m.nr_nodes(), 4);
    assert_eq!(m.numa_distance[1], vec![17, 10, 28, 28]);
    let nodes: Vec<u16> = m.cpus.iter().map(|c| c.node.0).collect();
    assert_eq!(nodes, vec![0, 0, 2, 2]);
    let sd = build_sched_domains(&m, &BuildConfig::new(Release::new(5, 12))).expect("builds");
    let d: Vec<u8> = sd.levels.iter().filter_map(|l| l.numa_distance).collect();
    assert_eq!(d, vec![10, 17, 21, 28]);
}

/// The simulator and the wake-up path on a machine with CPU-less nodes and an
/// asymmetric SLIT: runs on every CPU and on a node with CPUs; a selection of a
/// CPU-less node alone is refused with a clear error.
#[test]
fn simulator_runs_with_cpu_less_nodes() {
    use schedlab_core::experiment::{self, CpuSelection, CpuSelectionError, RunSpec};
    use schedlab_core::workload::Workload;
    let mut s = optane(Arch::X86);
    s.numa_distance.as_mut().expect("slit")[0][1] = 22;
    let m = s.build().expect("builds");
    let e = CpuSelection::parse(&m, "node2-3").expect_err("memory-only");
    assert!(matches!(e, CpuSelectionError::NoCpusOnNodes { .. }), "{e}");
    assert!(e.to_string().contains("no CPUs"), "{e}");
    assert!(CpuSelection::parse(&m, "node1-2").is_ok());
    for (cpus, release) in [("all", "5.12"), ("all", "6.8"), ("node1", "6.8")] {
        for name in ["tbench", "netperf-udp-rr", "schbench"] {
            let w = Workload::with_defaults(name)
                .expect("workload")
                .with_threads(4);
            let sel = CpuSelection::parse(&m, cpus).expect("cpus");
            let spec = RunSpec {
                check_invariants: true,
                ..RunSpec::with_cpus(m.clone(), &sel, release.parse().expect("patches"), w, 20, 7)
                    .expect("spec")
            };
            let r = experiment::run(&spec).unwrap_or_else(|e| panic!("{name} {cpus}: {e}"));
            assert!(r.sim_ns > 0, "{name} {cpus}");
        }
    }
}

/// A distance of 255: `numa_set_distance()` takes any u8 off the diagonal
/// (arch/x86/mm/numa.c v6.8, drivers/base/arch_numa.c, mm/numa_memblks.c v6.12:
/// `(u8)distance != distance` is the only bound), ACPI's `slit_valid()` wants only
/// more than LOCAL_DISTANCE (drivers/acpi/numa/srat.c v6.8:181-195), and
/// `sched_init_numa()` refuses only `distance >= NR_DISTANCE_VALUES` (1 << 8:
/// topology.c v5.12.9:1653, v6.8:1861, v6.12.19:1876). 255 is a level like any other,
/// farther than `node_reclaim_distance` (sd_init(), v6.8:1658-1660).
#[test]
fn a_distance_of_255_is_a_numa_level_like_any_other() {
    use schedlab_core::sched_domain::SdFlags;
    use schedlab_core::topology::{load_machine, ImportHint};
    for arch in [Arch::X86, Arch::Arm64] {
        let mut s = MachineSpec::regular("far", "", arch, 3, 1, 1, 2, 1, 1, Numbering::Linear);
        s.numa_distance = Some(vec![
            vec![10, 20, 255],
            vec![20, 10, 255],
            vec![255, 255, 10],
        ]);
        let m = s.build().expect("255 is a distance the kernel takes");
        for r in [(5, 12), (6, 5), (6, 8), (6, 12)].map(|(a, b)| Release::new(a, b)) {
            let sd = build_sched_domains(&m, &BuildConfig::new(r)).expect("builds");
            let d: Vec<u8> = sd.levels.iter().filter_map(|l| l.numa_distance).collect();
            assert_eq!(d, vec![10, 20, 255], "{arch:?} {r}");
            let top = sd.cpus[0].as_ref().expect("online").domains.last().cloned();
            let top = top.expect("domains");
            assert_eq!((top.name, top.span.to_list()), ("NUMA", "0-5".into()));
            assert!(!top.flags.contains(SdFlags::WAKE_AFFINE), "{r}");
            let _ = format::dmesg(&sd, None);
            let _ = format::debugfs(&sd, None);
        }
    }
    // The same table through numactl -H and through a sysfs dump.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,1,1\n\n\
                available: 2 nodes (0-1)\nnode 0 cpus: 0\nnode 1 cpus: 1\n\
                node distances:\nnode   0   1\n  0:  10  255\n  1:  255  10\n";
    let m = load_machine(text, &ImportHint::NONE).expect("numactl -H with 255");
    assert_eq!(m.numa_distance, vec![vec![10, 255], vec![255, 10]]);
    let text = "# cpu physical_package_id core_id thread_siblings_list package_cpus_list\n\
                cpu0 0 0 0 0\ncpu1 1 0 1 1\n\
                node0 cpulist=0 distance=10 255\nnode1 cpulist=1 distance=255 10\n";
    let m = load_machine(text, &ImportHint::NONE).expect("sysfs dump with 255");
    assert_eq!(m.numa_distance, vec![vec![10, 255], vec![255, 10]]);
}

/// QEMU takes `-numa dist,src=0,dst=1,val=10` (only less than 10, or a local distance
/// other than 10, is refused); the kernel does not use such a table: ACPI's
/// `slit_valid()` refuses a distance of 10 or less between two nodes ("SLIT table looks
/// invalid. Not used.", drivers/acpi/numa/srat.c v6.8:181-195, 353-354), leaving
/// `__node_distance()`'s REMOTE_DISTANCE (arch/x86/mm/numa.c v6.8:444-449,
/// drivers/base/arch_numa.c v6.8:335-340), and a device tree's distance map is refused
/// ("Invalid distance", drivers/of/of_numa.c v6.8:107-112), so that arm64 falls back to
/// `dummy_numa_init()`'s single node (arch_numa.c v6.8:470-476). schedlab refuses the
/// table and says what the kernel would make of it.
#[test]
fn a_remote_distance_of_10_is_refused_with_what_the_kernel_makes_of_it() {
    let mut s = MachineSpec::regular("ten", "", Arch::X86, 2, 1, 1, 2, 1, 1, Numbering::Linear);
    s.numa_distance = Some(vec![vec![10, 10], vec![10, 10]]);
    let e = s.build().expect_err("a remote distance of 10").to_string();
    assert!(e.starts_with("node_distance(0, 1) is 10;"), "{e}");
    assert!(e.contains("ACPI: every remote distance 20"), "{e}");
    assert!(e.contains("device tree: a single node"), "{e}");
}
