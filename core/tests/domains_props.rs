//! Invariants of the sched-domain builder on random valid machines.

use proptest::prelude::*;
use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::release::Release;
use schedlab_core::sched_domain::{build_sched_domains, format, BuildConfig, SdFlags};
use schedlab_core::topology::{Arch, Firmware, KernelConfig, TopologyError};
use schedlab_core::topology::{MachineSpec, Numbering};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// A random symmetric SLIT with 10 on the diagonal (now and then 255, which the kernel
/// takes as a distance like any other).
fn slit(nodes: usize, values: &[u8]) -> Vec<Vec<u8>> {
    let mut d = vec![vec![10u8; nodes]; nodes];
    let pairs = (0..nodes).flat_map(|a| (a + 1..nodes).map(move |b| (a, b)));
    for (k, (a, b)) in pairs.enumerate() {
        let r = values[k % values.len()];
        let v = if r >= 248 { 255 } else { 11 + r % 40 };
        d[a][b] = v;
        d[b][a] = v;
    }
    d
}

prop_compose! {
    fn machine_spec()(
        arm in any::<bool>(),
        packages in 1u32..=2,
        nodes_per_package in 1u32..=2,
        llcs_per_node in 1u32..=3,
        cluster in prop::sample::select(vec![1u32, 2, 4]),
        clusters_per_llc in 1u32..=3,
        threads in 1u32..=2,
        smt_split in any::<bool>(),
        numa in any::<bool>(),
        cls in any::<bool>(),
        dist in prop::collection::vec(any::<u8>(), 6),
        firmware in prop::sample::select(vec![Firmware::Acpi, Firmware::Dt, Firmware::DtClusters]),
    ) -> MachineSpec {
        let mut s = MachineSpec::regular(
            "random", "",
            if arm { Arch::Arm64 } else { Arch::X86 },
            packages, nodes_per_package, llcs_per_node,
            cluster * clusters_per_llc, cluster, threads,
            if smt_split { Numbering::SmtSplit } else { Numbering::Linear },
        );
        let nodes = (packages * nodes_per_package) as usize;
        s.numa_distance = Some(slit(nodes, &dist));
        s.config = Some(KernelConfig { numa, sched_cluster: cls, ..KernelConfig::SERVER });
        // A device tree's cpu-map, read by release (arm64 only).
        if arm {
            s.firmware = firmware;
        }
        s
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn domains_nest_and_groups_partition(
        spec in machine_spec(),
        release_idx in 0usize..21,
        offline_bits in any::<u64>(),
    ) {
        let m = spec.build().expect("generated machines are valid");
        let release = Release::all()[release_idx];
        let n = m.nr_cpus();
        let mut offline = CpuMask::new(n);
        for c in 0..n.min(64) {
            if offline_bits & (1 << c) != 0 && c % 3 == 1 {
                offline.set_cpu(CpuId(c));
            }
        }
        let mut cfg = BuildConfig::new(release);
        cfg.offline = Some(offline.clone());
        let sd = match build_sched_domains(&m, &cfg) {
            Ok(sd) => sd,
            // Random SLITs can make a non-overlapping level's masks overlap; the kernel
            // refuses those too. Anything else is a bug.
            Err(e) => { prop_assert!(e.to_string().contains("topology is broken"), "{e}"); return Ok(()); }
        };
        let online = CpuMask::full(n).andnot(&offline);
        for cpu in online.iter() {
            let cd = sd.cpu(cpu);
            let mut prev: Option<&CpuMask> = None;
            for d in &cd.domains {
                prop_assert!(d.span.test_cpu(cpu), "{} span {} lacks cpu {}", d.name, d.span, cpu);
                prop_assert!(d.span.is_subset(&online));
                if let Some(p) = prev {
                    prop_assert!(p.is_subset(&d.span), "child {} not in {}", p, d.span);
                }
                prev = Some(&d.span);
                prop_assert!(d.groups[0].span.test_cpu(cpu), "first group of {} lacks cpu", d.name);
                let mut union = CpuMask::new(n);
                for g in &d.groups {
                    if !d.flags.contains(SdFlags::OVERLAP) {
                        prop_assert!(!union.intersects(&g.span), "groups overlap in {}", d.name);
                    }
                    prop_assert!(g.balance_mask.is_subset(&g.span));
                    union.or_assign(&g.span);
                }
                if !d.flags.contains(SdFlags::OVERLAP) || release.has_numa_diameter_fix() {
                    prop_assert_eq!(&union, &d.span, "groups of {} do not cover it", d.name);
                }
                if !d.flags.contains(SdFlags::OVERLAP) {
                    // build_sched_groups(): the list in the order the walk of the span
                    // from the CPU, with wrap-around, meets the groups (the builder
                    // rotates an earlier CPU's list where its groups are single CPUs).
                    let mut next = 0;
                    for x in d.span.iter_wrap(cpu.0) {
                        let gi = d.groups.iter().position(|g| g.span.test_cpu(x));
                        prop_assert!(gi.is_some_and(|gi| gi <= next), "{} cpu {}: {} met out of order", d.name, cpu, x);
                        if gi == Some(next) {
                            next += 1;
                        }
                    }
                    prop_assert_eq!(next, d.groups.len(), "{} cpu {}: groups not met", d.name, cpu);
                }
            }
            if let Some(top) = cd.domains.last() {
                prop_assert_eq!(&top.span, &online);
            }
            // sd_llc_id: the first CPU of the LLC span, shared by every CPU in it.
            match cd.llc() {
                Some(llc) => {
                    prop_assert_eq!(cd.sd_llc_id, llc.span.first().unwrap());
                    prop_assert_eq!(cd.sd_llc_size, llc.span.weight());
                    for o in llc.span.iter() {
                        prop_assert_eq!(sd.cpu(o).sd_llc_id, cd.sd_llc_id);
                        prop_assert!(sd.cpus_share_cache(cpu, o));
                    }
                }
                None => prop_assert_eq!(cd.sd_llc_id, cpu),
            }
            // sd_share_id: within the LLC, and shared by the cluster domain's span.
            let share_id = cd.sd_share_id;
            prop_assert_eq!(sd.cpu(share_id).sd_llc_id, cd.sd_llc_id);
            if let Some(i) = cd.lowest_flag_domain(SdFlags::CLUSTER) {
                for o in cd.domains[i].span.iter() {
                    prop_assert!(sd.cpus_share_resources(cpu, o));
                }
            }
        }
        // Every format renders without panicking.
        let _ = format::dmesg(&sd, None);
        let _ = format::debugfs(&sd, None);
        let _ = format::schedstat(&sd, None);
        let _ = format::json(&sd, None);
    }
}

#[test]
fn invalid_machines_get_actionable_errors() {
    let mut s = MachineSpec::regular("bad", "", Arch::Arm64, 1, 1, 1, 24, 5, 1, Numbering::Linear);
    let e = s.build().unwrap_err();
    assert_eq!(
        e,
        TopologyError::ClusterDoesNotDivide {
            cluster: 5,
            llc: 24
        }
    );
    assert_eq!(
        e.to_string(),
        "cluster size 5 does not divide 24 cores per LLC"
    );

    s = MachineSpec::regular(
        "big",
        "",
        Arch::X86,
        2,
        1,
        1,
        2048,
        1,
        2,
        Numbering::SmtSplit,
    );
    assert!(matches!(
        s.build(),
        Err(TopologyError::TooLarge {
            value: 8192,
            limit: 4096,
            ..
        })
    ));

    s = MachineSpec::regular("none", "", Arch::X86, 1, 1, 1, 0, 1, 1, Numbering::Linear);
    assert!(matches!(s.build(), Err(TopologyError::ZeroCount { .. })));

    s = MachineSpec::regular("slit", "", Arch::X86, 2, 1, 1, 4, 1, 1, Numbering::Linear);
    s.numa_distance = Some(vec![vec![10, 20], vec![20]]);
    assert!(matches!(
        s.build(),
        Err(TopologyError::SlitNotSquare { row: 1, .. })
    ));
    // Not symmetric: the kernel takes it as given (sched_init_numa(), topology.c
    // v6.8:1921-1939), and so does schedlab.
    s.numa_distance = Some(vec![vec![10, 20], vec![21, 10]]);
    assert!(s.build().is_ok());
    s.numa_distance = Some(vec![vec![11, 20], vec![20, 10]]);
    let e = s.build().unwrap_err();
    assert!(e.to_string().contains("must be 10"), "{e}");
    s.numa_distance = Some(vec![vec![10]]);
    assert!(matches!(
        s.build(),
        Err(TopologyError::SlitWrongSize { rows: 1, nodes: 2 })
    ));
}

#[test]
fn partially_overlapping_masks_are_refused_like_topology_span_sane() {
    // arm64: node0 = 0-3, node1 = 4-7, an LLC 2-5 straddling them. CPU0's coregroup is
    // its LLC {0,1}; CPU2's LLC is not inside its node, so its coregroup is the node
    // {0-3}: the MC masks overlap without being equal.
    let cpus = (0..8u32)
        .map(|cpu| schedlab_core::topology::CpuSpec {
            cpu,
            package: 0,
            node: (cpu / 4) as u16,
            llc: match cpu {
                0 | 1 => 0,
                2..=5 => 1,
                _ => 2,
            },
            cluster: None,
            core: None,
            capacity: 1024,
            asym_prio: 0,
        })
        .collect();
    let spec = MachineSpec::explicit("straddle", "", Arch::Arm64, cpus);
    let m = spec.build().unwrap();
    let e = build_sched_domains(&m, &BuildConfig::new(Release::DEFAULT)).unwrap_err();
    assert!(e.to_string().contains("level MC"), "{e}");
}

/// x86's CLS level has carried ITMT's SD_ASYM_PACKING since it was added: 66558b730f25
/// ("sched: Add cluster scheduler level for x86", v5.16) defined `x86_cluster_flags()`
/// as `cpu_cluster_flags() | x86_sched_itmt_flags()`, and v6.5 still has it
/// (arch/x86/kernel/smpboot.c v6.5:609-613, used at :640 on non-hybrid parts), as v6.8
/// does (smpboot.c v6.8:610-614, used at :644). Only the hybrid case changed in v6.6 (CLS back on
/// hybrid parts, and x86_die_flags()).
#[test]
fn x86_cls_has_itmt_asym_packing_from_5_16() {
    // Eight cores in four L2 clusters of two sharing one LLC; core 0-1 favoured (ITMT).
    let cpus = (0..8u32)
        .map(|cpu| schedlab_core::topology::CpuSpec {
            cpu,
            package: 0,
            node: 0,
            llc: 0,
            cluster: Some(cpu / 2),
            core: None,
            capacity: 1024,
            asym_prio: if cpu < 2 { 2 } else { 1 },
        })
        .collect();
    let m = MachineSpec::explicit("itmt-clusters", "", Arch::X86, cpus)
        .build()
        .unwrap();
    for r in ["5.16", "6.1", "6.5", "6.6", "6.8", "6.12"] {
        let release: Release = r.parse().unwrap();
        let d = build_sched_domains(&m, &BuildConfig::new(release)).unwrap();
        let cls = d
            .cpu(CpuId(2))
            .domains
            .iter()
            .find(|s| s.name == "CLS")
            .unwrap_or_else(|| panic!("{r}: a CLS domain"));
        assert!(cls.flags.contains(SdFlags::ASYM_PACKING), "{r}");
    }
}

/// arm64 without a shared cache in the firmware (QEMU's device tree, which has no
/// cache nodes): before v6.0 `cpu_coregroup_mask()` narrows to the LLC only when
/// `cpu_topology[cpu].llc_id != -1` (drivers/base/arch_topology.c v5.12.9:501-504),
/// and only ACPI sets `llc_id`, from a PPTT cache entry (arch/arm64/kernel/topology.c
/// v5.12.9:110-119; `reset_cpu_topology()` leaves -1, arch_topology.c v5.12.9:560):
/// MC is the package within the node, so it holds the machine's LLC and no "arch
/// topology borken". v6.0 made the test `last_level_cache_is_valid()` (arch_topology.c
/// v6.8:737-740), and the per-CPU cacheinfo LLC narrows MC to the CPU alone (as the
/// 6.1 and 6.12 QEMU captures in core/tests/fixtures/qemu/ show).
#[test]
fn arm64_without_cache_info_keeps_mc_at_the_package_before_6_0() {
    let mut s = MachineSpec::regular(
        "virt-dt",
        "",
        Arch::Arm64,
        1,
        1,
        1,
        4,
        1,
        2,
        Numbering::Linear,
    );
    s.no_shared_cache = true;
    // As Debian's arm64 kernels: no CONFIG_SCHED_CLUSTER (with it, v6.0+ widens MC to
    // the cluster instead).
    s.config = Some(KernelConfig {
        sched_cluster: false,
        ..KernelConfig::SERVER
    });
    let m = s.build().unwrap();
    let built = |r: &str| {
        let release: Release = r.parse().unwrap();
        build_sched_domains(&m, &BuildConfig::new(release)).unwrap()
    };
    for r in ["5.12", "5.15", "5.19"] {
        let d = built(r);
        let c = d.cpu(CpuId(0));
        let names: Vec<(&str, String)> = c
            .domains
            .iter()
            .map(|s| (s.name, s.span.to_list()))
            .collect();
        assert_eq!(
            names,
            [("SMT", "0-1".to_string()), ("MC", "0-7".to_string())],
            "{r}"
        );
        assert_eq!(c.sd_llc_size, 8, "{r}");
        assert!(d.build_messages.is_empty(), "{r}: {:?}", d.build_messages);
    }
    for r in ["6.0", "6.1", "6.8"] {
        let d = built(r);
        assert_eq!(
            d.build_messages.first().map(String::as_str),
            Some("BUG: arch topology borken"),
            "{r}"
        );
    }
}
