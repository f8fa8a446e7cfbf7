//! The regular machine spec's per-CPU `capacities` (issue 18, the topology designer:
//! asymmetric parts whose levels are regular), its checks, its compact form, and the
//! notes that say what a paste lacked (`Missing`).

use schedlab_core::patch::PatchSet;
use schedlab_core::scenario::{decode, encode, MachineChoice, Scenario, ScenarioMachine};
use schedlab_core::topology::import::machine_to_spec;
use schedlab_core::topology::{load_machine, Arch, ImportHint, MachineSpec, Missing, Numbering};

/// An arm64 phone-like part: one LLC, two clusters of four, big and LITTLE.
fn big_little() -> MachineSpec {
    let mut s = MachineSpec::regular(
        "dynamiq-4+4",
        "",
        Arch::Arm64,
        1,
        1,
        1,
        8,
        4,
        1,
        Numbering::Linear,
    );
    s.capacities = Some(vec![1024, 1024, 1024, 1024, 446, 446, 446, 446]);
    s
}

#[test]
fn capacities_reach_the_machine_and_its_domains() {
    let m = big_little().build().expect("builds");
    let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, [1024, 1024, 1024, 1024, 446, 446, 446, 446]);
    // Without the list, every CPU is 1024 as before.
    let mut plain = big_little();
    plain.capacities = None;
    assert!(plain
        .build()
        .unwrap()
        .cpus
        .iter()
        .all(|c| c.capacity == 1024));
}

#[test]
fn capacities_are_checked() {
    let mut s = big_little();
    s.capacities = Some(vec![1024; 7]);
    let e = s.build().unwrap_err().to_string();
    assert!(e.contains("7 entries") && e.contains("8 CPUs"), "{e}");
    s.capacities = Some(vec![1024, 1024, 1024, 1024, 0, 446, 446, 446]);
    let e = s.build().unwrap_err().to_string();
    assert!(e.contains("CPU 4") && e.contains("1-1024"), "{e}");
    s.capacities = Some(vec![2048; 8]);
    assert!(s.build().unwrap_err().to_string().contains("CPU 0"));
    // With an explicit list the capacity belongs to each CPU entry.
    let m = big_little().build().unwrap();
    let mut explicit = machine_to_spec(&m);
    explicit.capacities = Some(vec![1024; 8]);
    let e = explicit.build().unwrap_err().to_string();
    assert!(e.contains("explicit"), "{e}");
}

#[test]
fn specs_without_capacities_serialise_as_before() {
    let json = serde_json::to_string(&big_little()).unwrap();
    assert!(json.contains("\"capacities\":[1024,"), "{json}");
    let mut plain = big_little();
    plain.capacities = None;
    let json = serde_json::to_string(&plain).unwrap();
    assert!(!json.contains("capacities"), "{json}");
    // And a JSON file without the key reads as before.
    let back: MachineSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, plain);
}

#[test]
fn an_asymmetric_regular_machine_compacts_with_its_capacities() {
    let m = big_little().build().unwrap();
    let explicit = machine_to_spec(&m);
    assert!(explicit.cpus.is_some());
    let short = explicit.compact(&m).expect("regular");
    assert!(short.cpus.is_none());
    assert_eq!(short.build().unwrap(), m);
    assert!(short.capacities.is_some());
    // A symmetric machine's compact form has no list.
    let mut plain = big_little();
    plain.capacities = None;
    let m = plain.build().unwrap();
    let short = machine_to_spec(&m).compact(&m).unwrap();
    assert_eq!(short.capacities, None);
}

/// A 384-CPU machine built by hand (2 sockets × 2 nodes × 2 LLCs × 4 clusters × 6
/// cores × 2 threads, a hand-set SLIT and a big/LITTLE split): its link is under
/// issue 18's 2 KB and opens to the same machine.
#[test]
fn a_designed_384_cpu_machine_links_in_under_2_kb() {
    let mut s = MachineSpec::regular(
        "designed",
        "Built in the topology designer.",
        Arch::Arm64,
        2,
        2,
        2,
        24,
        6,
        2,
        Numbering::Linear,
    );
    let slit: Vec<Vec<u8>> = (0..4)
        .map(|a: u8| {
            (0..4u8)
                .map(|b| match (a, b) {
                    _ if a == b => 10,
                    _ if a / 2 == b / 2 => 16,
                    _ => 32 + a + b,
                })
                .collect()
        })
        .collect();
    s.numa_distance = Some(slit);
    s.capacities = Some(
        (0..384)
            .map(|c| if c % 48 < 24 { 1024 } else { 600 })
            .collect(),
    );
    let machine = ScenarioMachine::new(MachineChoice::Spec(Box::new(s.clone()))).unwrap();
    assert_eq!(machine.nr_cpus(), 384);
    let scenario = Scenario::on(machine, "6.8".parse::<PatchSet>().unwrap());
    let link = encode(&scenario);
    eprintln!(
        "a designed 384-CPU machine's link: {} characters",
        link.len()
    );
    assert!(link.len() < 2048, "{} characters", link.len());
    let back = decode(&link).unwrap();
    assert_eq!(back.machine.choice(), &MachineChoice::Spec(Box::new(s)));
    assert_eq!(**back.machine(), **scenario.machine());
}

#[test]
fn pastes_say_what_they_lack() {
    let load = |text: &str| load_machine(text, &ImportHint::NONE).unwrap();
    // Plain lscpu of a Kunpeng 920: no cluster ids, no distance table.
    let m = load(include_str!("fixtures/kunpeng920_96c_lscpu.txt"));
    let missing = Missing::in_description(&m.description);
    assert!(missing.contains(&Missing::Clusters), "{}", m.description);
    assert!(missing.contains(&Missing::Distances), "{}", m.description);
    // The sysfs dump carries clusters and distances (its cache rows cover only some
    // CPUs, which the importer says).
    let m = load(include_str!("fixtures/kunpeng920_128c_sysfs_topology.txt"));
    assert_eq!(
        Missing::in_description(&m.description),
        [Missing::Caches],
        "{}",
        m.description
    );
    // A preset's own words are not mistaken for a note.
    for p in schedlab_core::topology::presets::PRESETS {
        let m = p.spec().build().unwrap();
        assert_eq!(Missing::in_description(&m.description), [], "{}", p.name);
    }
}

/// `SD_ASYM_CPUCAPACITY_FULL` came with c744dc4ab58d ("sched/topology: Rework CPU
/// capacity asymmetry detection", June 2021, merged for v5.14): from 5.14 a domain
/// that sees every capacity of the machine has both flags, and 5.13 sets
/// SD_ASYM_CPUCAPACITY alone.
#[test]
fn asym_cpucapacity_full_is_set_from_5_14() {
    use schedlab_core::sched_domain::{build_sched_domains, BuildConfig, SdFlags};
    use schedlab_core::{CpuId, Release};
    let m = big_little().build().unwrap();
    let flags = |release: &str| {
        let release: Release = release.parse().unwrap();
        let d = build_sched_domains(&m, &BuildConfig::new(release)).unwrap();
        let top = d.cpu(CpuId(0)).domains.last().unwrap().flags;
        (
            top.contains(SdFlags::ASYM_CPUCAPACITY),
            top.contains(SdFlags::ASYM_CPUCAPACITY_FULL),
        )
    };
    assert_eq!(flags("5.13"), (true, false));
    assert_eq!(flags("5.14"), (true, true));
    assert_eq!(flags("6.8"), (true, true));
}

/// An arm64 machine on one node: `llc` gives each CPU's LLC (its MC span), `caps` its
/// capacity.
fn three_llc_mix(llc: [u32; 8], caps: [u32; 8]) -> schedlab_core::topology::Machine {
    let cpus = (0..8u32)
        .map(|cpu| schedlab_core::topology::CpuSpec {
            cpu,
            package: 0,
            node: 0,
            llc: llc[cpu as usize],
            cluster: None,
            core: None,
            capacity: caps[cpu as usize],
            asym_prio: 0,
        })
        .collect();
    MachineSpec::explicit("asym-mix", "", Arch::Arm64, cpus)
        .build()
        .unwrap()
}

/// Before c744dc4ab58d (v5.14) SD_ASYM_CPUCAPACITY is not a property of each span:
/// `asym_cpu_capacity_level()` (kernel/sched/topology.c v5.12.9:1997-2049) finds the
/// lowest topology level at which every CPU sees the highest capacity it will see,
/// and `build_sched_domains()` (v5.12.9:2078-2089) ORs the flag into `dflags` from
/// that level on (`if (tl == tl_asym) dflags |= SD_ASYM_CPUCAPACITY;`, `dflags` kept
/// across the levels of one CPU), which `sd_init()` applies (v5.12.9:1424,
/// `sd_flags |= dflags`). So a level below `tl_asym` has no flag even where its span
/// mixes capacities, and every level from `tl_asym` up has it even where its span is
/// symmetric. From 5.14 `asym_cpu_capacity_classify()` decides per span.
#[test]
fn asym_cpucapacity_before_5_14_is_set_from_one_level_up() {
    use schedlab_core::sched_domain::{build_sched_domains, BuildConfig, SdFlags};
    use schedlab_core::{CpuId, Release};
    let asym = |m: &schedlab_core::topology::Machine, release: &str, cpu: u32| {
        let release: Release = release.parse().unwrap();
        let d = build_sched_domains(m, &BuildConfig::new(release)).unwrap();
        let c = d.cpu(CpuId(cpu));
        let names: Vec<(&str, bool)> = c
            .domains
            .iter()
            .map(|s| (s.name, s.flags.contains(SdFlags::ASYM_CPUCAPACITY)))
            .collect();
        (names, c.sd_asym_cpucapacity.map(|i| c.domains[i].name))
    };
    // MC {0-5} mixes 512 and 768, but CPU0 sees 1024 only at DIE: tl_asym is DIE.
    let m = three_llc_mix(
        [0, 0, 0, 0, 0, 0, 1, 1],
        [512, 512, 512, 512, 768, 768, 1024, 1024],
    );
    for r in ["5.12", "5.13"] {
        assert_eq!(
            asym(&m, r, 0),
            (vec![("MC", false), ("DIE", true)], Some("DIE")),
            "{r}"
        );
    }
    // 5.14+: MC {0-5} sees two capacities (not all three: no _FULL).
    assert_eq!(
        asym(&m, "5.14", 0),
        (vec![("MC", true), ("DIE", true)], Some("DIE"))
    );
    // CPU0 sees 1024 at MC {0-5}: tl_asym is MC, so CPU6's MC {6,7}, all 1024, has
    // the flag too before 5.14.
    let m = three_llc_mix(
        [0, 0, 0, 0, 0, 0, 1, 1],
        [446, 446, 446, 446, 1024, 1024, 1024, 1024],
    );
    for r in ["5.12", "5.13"] {
        assert_eq!(
            asym(&m, r, 6),
            (vec![("MC", true), ("DIE", true)], Some("MC")),
            "{r}"
        );
    }
    assert_eq!(
        asym(&m, "5.14", 6),
        (vec![("MC", false), ("DIE", true)], Some("DIE"))
    );
}
