//! Topologies a tester boots in QEMU that no preset or capture has: nodes whose CPUs
//! are not contiguous, a single CPU, an arm64 cluster wider than its node, CPUs
//! offline on arm64, and `relax_domain_level=` past 5. Each expectation is derived
//! from the kernel source named beside it (kernel/sched/topology.c,
//! drivers/base/arch_topology.c, arch/x86/kernel/smpboot.c).

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::release::Release;
use schedlab_core::sched_domain::{build_sched_domains, format, BuildConfig, SchedDomains};
use schedlab_core::topology::{Arch, CpuSpec, Machine, MachineSpec, Numbering};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

mod common;
use common::cluster_cpu as cpu;

fn build(m: &Machine, cfg: &BuildConfig) -> SchedDomains {
    build_sched_domains(m, cfg).expect("builds")
}

fn cpu0(sd: &SchedDomains) -> Vec<(String, &'static str)> {
    let cd = sd.cpus[0].as_ref().expect("CPU0 online");
    cd.domains
        .iter()
        .map(|d| (d.span.to_list(), d.name))
        .collect()
}

/// QEMU `-smp 4,sockets=2,cores=2 -numa node,cpus=0,cpus=2 -numa node,cpus=1,cpus=3`:
/// each node takes one CPU of each package.
fn interleaved(arch: Arch) -> Machine {
    let cpus = (0..4).map(|c| cpu(c, c / 2, (c % 2) as u16, c)).collect();
    let mut s = MachineSpec::explicit("interleaved", "", arch, cpus);
    s.numa_distance = Some(vec![vec![10, 20], vec![20, 10]]);
    s.build().expect("builds")
}

/// x86: a package holds CPUs of two nodes, so `x86_has_numa_in_package` drops PKG
/// (smpboot.c v6.8:657-661); `match_llc()` keeps the LLC inside the node (v6.8:566-589),
/// so MC is the CPU alone and degenerates; NODE is the node's CPUs, 0 and 2.
/// arm64: `cpu_coregroup_mask()` keeps the node, the package not being inside it
/// (arch_topology.c v6.8:727-752), so MC is 0,2 and DIE/PKG and NODE degenerate into it.
#[test]
fn a_node_of_cpus_from_both_packages() {
    for (arch, first) in [(Arch::X86, "NODE"), (Arch::Arm64, "MC")] {
        let m = interleaved(arch);
        let sd = build(&m, &BuildConfig::new(Release::new(6, 8)));
        let want = format!(
            "CPU0 attaching sched-domain(s):\n domain-0: span=0,2 level={first}\n  groups: 0:{{ span=0 }}, 2:{{ span=2 }}\n  domain-1: span=0-3 level=NUMA\n   groups: 0:{{ span=0,2 cap=2048 }}, 1:{{ span=1,3 cap=2048 }}\n"
        );
        assert_eq!(format::dmesg(&sd, Some(CpuId(0))), want, "{arch:?}");
        // debugfs `level` (v6.9+) counts the levels as built: SMT, CLS, MC, then NODE
        // on x86 (no PKG); SMT, CLS, MC, PKG, NODE, NUMA on arm64.
        let levels = format::debugfs(
            &build(&m, &BuildConfig::new(Release::new(6, 12))),
            Some(CpuId(0)),
        );
        let (l0, l1) = if arch == Arch::X86 { (3, 4) } else { (2, 5) };
        assert!(
            levels.contains(&format!("cpu0/domain0/level:{l0}\n")),
            "{levels}"
        );
        assert!(
            levels.contains(&format!("cpu0/domain1/level:{l1}\n")),
            "{levels}"
        );
    }
}

/// One CPU: every level spans it alone, `sd_degenerate()` drops the lot
/// (topology.c v6.8:171-186, 733-758) and `sched_domain_debug()` says so.
#[test]
fn a_single_cpu_attaches_null() {
    for arch in [Arch::X86, Arch::Arm64] {
        let m = MachineSpec::regular("one", "", arch, 1, 1, 1, 1, 1, 1, Numbering::Linear)
            .build()
            .expect("builds");
        let sd = build(&m, &BuildConfig::new(Release::new(6, 12)));
        assert_eq!(
            format::dmesg(&sd, None),
            "CPU0 attaching NULL sched-domain.\nroot domain span: 0\n"
        );
    }
}

/// arm64 virt with a device tree, one cluster per socket (no `clusters=`), two nodes
/// per socket: with CONFIG_SCHED_CLUSTER the coregroup widens from the CPU's own
/// cache to the cluster, past the node (arch_topology.c v6.8:742-750), so MC is the
/// socket and `build_sched_domain()` widens PKG (the node) and NODE to it, each with
/// "BUG: arch topology borken" (topology.c v6.8:2318-2331). NUMA(12) then equals MC
/// with a single group and degenerates; NUMA(20) stays.
#[test]
fn a_cluster_wider_than_its_node_widens_pkg_and_node() {
    let cpus = (0..8)
        .map(|c| cpu(c, c / 4, (c / 2) as u16, c / 4))
        .collect();
    let mut s = MachineSpec::explicit("split-cluster", "", Arch::Arm64, cpus);
    s.no_shared_cache = true;
    s.numa_distance = Some(vec![
        vec![10, 12, 20, 20],
        vec![12, 10, 20, 20],
        vec![20, 20, 10, 12],
        vec![20, 20, 12, 10],
    ]);
    let m = s.build().expect("builds");
    let sd = build(&m, &BuildConfig::new(Release::new(6, 8)));
    assert_eq!(
        sd.build_messages[..4],
        [
            "BUG: arch topology borken",
            "     the MC domain not a subset of the PKG domain",
            "BUG: arch topology borken",
            "     the PKG domain not a subset of the NODE domain",
        ]
    );
    assert_eq!(sd.build_messages.len(), 8 * 4, "two pairs per CPU");
    assert_eq!(
        cpu0(&sd),
        [("0-3".to_string(), "MC"), ("0-7".to_string(), "NUMA")]
    );
}

/// Kunpeng-like arm64: one LLC of 8 cores, clusters of 4. With CPUs 4-7 offline the
/// kernel's sibling masks hold CPUs 0-3 only (`remove_cpu_topology()`, arch_topology.c
/// v6.8:839-853, from `__cpu_disable()`), so `cpu_coregroup_mask()` is the LLC 0-3,
/// which now lies inside the cluster and widens to it (v6.8:742-750), and
/// `cpu_clustergroup_mask()` falls back to the SMT mask (v6.8:754-765): CLS is the CPU
/// alone and degenerates, MC stays, without SD_CLUSTER. Choosing on the whole
/// machine's masks and removing the offline CPUs afterwards gave CLS 0-3 instead.
#[test]
fn arm64_masks_are_chosen_among_the_online_cpus() {
    let m = MachineSpec::regular("kp", "", Arch::Arm64, 1, 1, 1, 8, 4, 1, Numbering::Linear)
        .build()
        .expect("builds");
    let r = Release::new(6, 8);
    let all = build(&m, &BuildConfig::new(r));
    assert_eq!(
        cpu0(&all),
        [("0-3".to_string(), "CLS"), ("0-7".to_string(), "MC")]
    );
    let mut cfg = BuildConfig::new(r);
    cfg.offline = Some(CpuMask::parse_list(8, "4-7").expect("list"));
    let sd = build(&m, &cfg);
    assert_eq!(cpu0(&sd), [("0-3".to_string(), "MC")]);
    assert!(!sd.sched_cluster_active);
    let flags = format::debugfs(&sd, Some(CpuId(0)));
    assert!(!flags.contains("SD_CLUSTER"), "{flags}");
}

/// 8 sockets of 2 cores on a cube's corners (16 / 22 / 28 for 1 / 2 / 3 hops, as
/// core/tests/fixtures/qemu/x86-cube8-*): SMT, CLS, MC, PKG, NODE and three NUMA
/// levels, `sd->level` 0-7.
fn cube8() -> Machine {
    let mut s = MachineSpec::regular("cube8", "", Arch::X86, 8, 1, 1, 2, 1, 1, Numbering::Linear);
    let hops = |a: usize, b: usize| (a ^ b).count_ones();
    s.numa_distance = Some(
        (0..8)
            .map(|a| {
                (0..8)
                    .map(|b| [10, 16, 22, 28][hops(a, b) as usize])
                    .collect()
            })
            .collect(),
    );
    s.build().expect("builds")
}

/// `relax_domain_level=` is read with `kstrtoint()` and taken as it is
/// (topology.c v6.8:1447-1457): a negative value is no request, and any level may be
/// asked for, `set_domain_attribute()` clearing SD_BALANCE_NEWIDLE (and _WAKE) above it
/// (v6.8:1459-1475; from v6.9 at it and above). On the cube, level 6 leaves only the
/// level-7 domain (NUMA at 28) without newidle balancing.
#[test]
fn relax_domain_level_takes_any_level() {
    let m = cube8();
    let newidle = |release: (u8, u8), relax: i32| -> Vec<bool> {
        let mut cfg = BuildConfig::new(Release::new(release.0, release.1));
        cfg.relax_domain_level = Some(relax);
        let sd = build(&m, &cfg);
        let cd = sd.cpus[0].as_ref().expect("online");
        cd.domains
            .iter()
            .map(|d| {
                d.flags
                    .contains(schedlab_core::sched_domain::SdFlags::BALANCE_NEWIDLE)
            })
            .collect()
    };
    // CPU0 keeps MC (level 2), NUMA 16, 22 and 28 (levels 5, 6, 7).
    assert_eq!(newidle((6, 8), -1), [true, true, true, true]);
    assert_eq!(newidle((6, 8), -7), [true, true, true, true]);
    assert_eq!(newidle((6, 8), 6), [true, true, true, false]);
    assert_eq!(newidle((6, 12), 6), [true, true, false, false]);
    assert_eq!(newidle((6, 8), 7), [true, true, true, true]);
    assert_eq!(newidle((6, 12), 1000), [true, true, true, true]);
}

/// An offline CPU leaves its node's NUMA masks holding the node's online CPUs
/// (`sched_domains_numa_masks_clear()`, topology.c v6.8:2059-2069), not nothing: x86,
/// one package of two nodes (NUMA in package), CPU 7 offline.
#[test]
fn an_offline_cpu_leaves_its_node_in_the_numa_masks() {
    let mut s = MachineSpec::regular("snc", "", Arch::X86, 1, 2, 1, 4, 1, 1, Numbering::Linear);
    s.numa_distance = Some(vec![vec![10, 11], vec![11, 10]]);
    let m = s.build().expect("builds");
    let mut cfg = BuildConfig::new(Release::new(6, 8));
    cfg.offline = Some(CpuMask::parse_list(8, "7").expect("list"));
    let sd = build(&m, &cfg);
    assert_eq!(
        cpu0(&sd),
        [("0-3".to_string(), "MC"), ("0-6".to_string(), "NUMA")]
    );
}

/// QEMU `-smp 4,sockets=1,cores=2,threads=2` with each core's thread 0 on node 0 and
/// thread 1 on node 1 (`-numa cpu,node-id=N,socket-id=0,core-id=C,thread-id=T`, as
/// QEMU's own numa-test places them). x86's `match_smt()` refuses SMT siblings on
/// different nodes (`topology_sane()`, smpboot.c v6.8:468-505): no CPU has an SMT
/// sibling, the L2 and the LLC are cut at the node too (`match_l2c()`, `match_llc()`),
/// the package holds two nodes so there is no PKG level, and MC is the node's CPUs
/// 0 and 2. The wake-up path's `cpu_smt_mask()` follows. An arm64 machine of the same
/// shape is still refused (its kernel keeps the siblings across the nodes).
#[test]
fn x86_threads_of_one_core_on_two_nodes_are_two_cores() {
    let cpus = (0..4)
        .map(|c| CpuSpec {
            core: Some(c / 2),
            ..cpu(c, 0, (c % 2) as u16, c / 2)
        })
        .collect::<Vec<_>>();
    let mut s = MachineSpec::explicit("split-core", "", Arch::X86, cpus.clone());
    s.numa_distance = Some(vec![vec![10, 20], vec![20, 10]]);
    let m = s
        .build()
        .expect("QEMU boots it; the kernel splits the cores");
    assert!(m.has_smt(), "the machine file still says SMT");
    for minor in [(5, 12), (6, 8), (6, 12)] {
        let sd = build(&m, &BuildConfig::new(Release::new(minor.0, minor.1)));
        assert_eq!(
            format::dmesg(&sd, Some(CpuId(0))),
            "CPU0 attaching sched-domain(s):\n domain-0: span=0,2 level=MC\n  groups: 0:{ span=0 }, 2:{ span=2 }\n  domain-1: span=0-3 level=NUMA\n   groups: 0:{ span=0,2 cap=2048 }, 1:{ span=1,3 cap=2048 }\n",
            "{minor:?}"
        );
        assert!(!sd.sched_smt_present);
    }
    let p = schedlab_core::patch::PatchSet::release(Release::new(6, 8));
    let env = schedlab_core::wakeup::WakeEnv::new(&m, p).expect("env");
    assert_eq!(env.smt_mask(CpuId(0)).to_list(), "0");
    let mut a = MachineSpec::explicit("split-core", "", Arch::Arm64, cpus);
    a.numa_distance = Some(vec![vec![10, 20], vec![20, 10]]);
    let e = a
        .build()
        .expect_err("arm64 keeps them siblings")
        .to_string();
    assert!(e.contains("SMT siblings on different nodes"), "{e}");
}
