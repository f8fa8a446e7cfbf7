//! The designer's reducer steps (`Action::OpenDesigner`, `EditDesign`, `EditAsJson`)
//! and its form logic, on the host.

use schedlab_core::topology::{presets, Missing};
use schedlab_core::workload::Workload;

use super::designer::{format_capacities, parse_capacities, Count, Designer, Draft, Field, Kopt};
use super::*;

pub(super) fn apply(state: Rc<AppState>, actions: Vec<Action>) -> Rc<AppState> {
    actions.into_iter().fold(state, |s, a| s.reduce(a))
}

pub(super) fn edit(f: Field, v: &str) -> Action {
    Action::EditDesign(f, v.to_string())
}

pub(super) fn draft(s: &AppState) -> &Draft {
    s.designer
        .as_ref()
        .and_then(Designer::draft)
        .expect("a form")
}

pub(super) fn levels(s: &AppState) -> Vec<&'static str> {
    let d = s.domains().expect("domains");
    d.try_cpu(CpuId(0))
        .expect("cpu 0")
        .domains
        .iter()
        .map(|d| d.name)
        .collect()
}

/// 2 sockets × 2 nodes × 2 LLCs × 2 clusters × 4 cores × 2 threads, as e2e types it.
pub(super) fn designed() -> Rc<AppState> {
    let counts = [
        (Count::Sockets, "2"),
        (Count::NodesPerSocket, "2"),
        (Count::LlcsPerNode, "2"),
        (Count::ClustersPerLlc, "2"),
        (Count::CoresPerCluster, "4"),
        (Count::ThreadsPerCore, "2"),
    ];
    // flat-16 has the default SLIT, so the grid starts from the default table.
    let mut actions = vec![
        Action::SelectPreset("flat-16".into()),
        Action::OpenDesigner(true),
    ];
    actions.extend(counts.iter().map(|(c, v)| edit(Field::Count(*c), v)));
    apply(Rc::new(AppState::default()), actions)
}

#[test]
fn the_default_preset_opens_as_its_counts() {
    let s = apply(
        Rc::new(AppState::default()),
        vec![Action::OpenDesigner(true)],
    );
    let d = draft(&s);
    // kunpeng920-6426: 2 sockets × 2 dies, 1 LLC each, clusters of 4, no SMT.
    let counts: Vec<&str> = Count::ALL.iter().map(|c| d.count(*c)).collect();
    assert_eq!(counts, ["2", "2", "1", "8", "4", "1"]);
    assert_eq!(d.slit.len(), 4);
    // Opening changes nothing: still the preset.
    assert_eq!(s.preset(), DEFAULT_PRESET);
    assert!(d.errors.is_empty());
}

#[test]
fn counts_build_the_machine_as_typed() {
    let s = designed();
    assert_eq!(s.machine().nr_cpus(), 128);
    assert_eq!(s.preset(), CUSTOM);
    assert_eq!(levels(&s), ["SMT", "CLS", "MC", "NODE", "NUMA", "NUMA"]);
    assert!(draft(&s).errors.is_empty());
    // The link carries the spec and opens to the same machine.
    let f = s.fragment();
    assert!(f.len() < 400, "{} characters", f.len());
    let back = AppState::from_fragment(&f);
    assert_eq!(**back.machine(), **s.machine());
}

#[test]
fn a_bad_field_keeps_the_last_machine_and_says_why_there() {
    let s = designed();
    for bad in ["0", "x", "-1", "99999999999"] {
        let t = s
            .clone()
            .reduce(edit(Field::Count(Count::CoresPerCluster), bad));
        assert_eq!(t.machine(), s.machine(), "{bad}");
        let e = &draft(&t).errors;
        assert!(
            e.contains_key(&Field::Count(Count::CoresPerCluster)),
            "{bad}: {e:?}"
        );
        assert_eq!(
            draft(&t).count(Count::CoresPerCluster),
            bad,
            "the text stays"
        );
        // Fixing it clears the error and builds.
        let u = t.reduce(edit(Field::Count(Count::CoresPerCluster), "2"));
        assert!(draft(&u).errors.is_empty());
        assert_eq!(u.machine().nr_cpus(), 64);
    }
}

#[test]
fn a_machine_past_the_designers_limits_is_refused_at_the_field_edited() {
    let s = designed();
    let t = s
        .clone()
        .reduce(edit(Field::Count(Count::CoresPerCluster), "64"));
    let e = &draft(&t).errors[&Field::Count(Count::CoresPerCluster)];
    assert!(e.contains("2048 CPUs") && e.contains("1024"), "{e}");
    assert_eq!(t.machine(), s.machine());
    let small = apply(
        s.clone(),
        [
            Count::LlcsPerNode,
            Count::ClustersPerLlc,
            Count::CoresPerCluster,
        ]
        .into_iter()
        .map(|c| edit(Field::Count(c), "1"))
        .collect(),
    );
    let t = small.reduce(edit(Field::Count(Count::Sockets), "20"));
    let e = &draft(&t).errors[&Field::Count(Count::Sockets)];
    assert!(e.contains("40 NUMA nodes"), "{e}");
    // The grid was not resized to 40 × 40.
    assert_eq!(draft(&t).slit.len(), 4);
}

#[test]
fn distances_edit_the_numa_levels() {
    let s = designed();
    assert_eq!(s.machine().numa_distance[0][2], 20);
    // Node 0 near node 2: mirrored, a third distance, a NUMA level more.
    let t = s.clone().reduce(edit(Field::Distance(0, 2), "15"));
    assert!(draft(&t).errors.is_empty(), "{:?}", draft(&t).errors);
    let m = t.machine();
    assert_eq!((m.numa_distance[0][2], m.numa_distance[2][0]), (15, 15));
    assert_ne!(levels(&t), levels(&s));
    assert_eq!(
        levels(&t),
        ["SMT", "CLS", "MC", "NODE", "NUMA", "NUMA", "NUMA"]
    );
    // 10 is not a remote distance: build()'s message, on the cell.
    let u = t.clone().reduce(edit(Field::Distance(0, 2), "10"));
    let e = &draft(&u).errors[&Field::Distance(0, 2)];
    assert!(e.contains("node_distance(0, 2) is 10"), "{e}");
    assert_eq!(u.machine(), t.machine());
    let u = t.clone().reduce(edit(Field::Distance(1, 3), "abc"));
    assert!(draft(&u).errors.contains_key(&Field::Distance(1, 3)));
    // Typed distances survive a change of counts that keeps the nodes.
    let v = t.reduce(edit(Field::Count(Count::ThreadsPerCore), "1"));
    assert_eq!(v.machine().numa_distance[0][2], 15);
}

/// 255 is a distance the kernel takes (`numa_set_distance()` keeps any u8,
/// `sched_init_numa()` refuses only 256 and up): a level like any other.
#[test]
fn a_distance_of_255_is_accepted() {
    let t = designed().reduce(edit(Field::Distance(0, 2), "255"));
    assert!(draft(&t).errors.is_empty(), "{:?}", draft(&t).errors);
    assert_eq!(t.machine().numa_distance[2][0], 255);
    let u = t.reduce(edit(Field::Distance(0, 2), "256"));
    let e = &draft(&u).errors[&Field::Distance(0, 2)];
    assert!(e.contains("11-255"), "{e}");
}

#[test]
fn the_grid_follows_the_node_count_with_defaults() {
    let s = designed().reduce(edit(Field::Count(Count::NodesPerSocket), "1"));
    assert_eq!(draft(&s).slit.len(), 2);
    assert_eq!(s.machine().numa_distance, vec![vec![10, 20], vec![20, 10]]);
    let s = s.reduce(edit(Field::Count(Count::NodesPerSocket), "3"));
    assert_eq!(s.machine().nr_nodes(), 6);
    assert_eq!(s.machine().numa_distance[0][1], 12, "same socket");
    assert_eq!(s.machine().numa_distance[0][3], 20, "across");
}

#[test]
fn arch_and_kconfig_choose_the_levels() {
    let s = designed();
    let t = s.clone().reduce(edit(Field::Config(Kopt::Smt), "n"));
    assert_eq!(levels(&t), ["CLS", "MC", "NODE", "NUMA", "NUMA"]);
    let t = t.reduce(edit(Field::Config(Kopt::Cluster), "n"));
    assert_eq!(levels(&t), ["MC", "NODE", "NUMA", "NUMA"]);
    let json = schedlab_core::scenario::wire_json(&t.scenario);
    assert!(json.contains("\"sched_smt\":false"), "{json}");
    let t = s.reduce(edit(Field::Arch, "arm64"));
    assert_eq!(t.machine().arch, schedlab_core::topology::Arch::Arm64);
}

#[test]
fn capacities_are_per_cpu_with_a_short_form() {
    assert_eq!(format_capacities(&[1024, 1024, 512, 7]), "1024×2, 512, 7");
    assert_eq!(
        parse_capacities("1024×2, 512 7", 8).unwrap(),
        Some(vec![1024, 1024, 512, 7])
    );
    assert_eq!(parse_capacities("1024x3", 8).unwrap(), None, "all 1024");
    assert!(parse_capacities("1024*99999999999", 4096).is_err());
    let s = designed();
    let t = s.clone().reduce(edit(Field::Capacities, "1024×64, 446×64"));
    assert!(draft(&t).errors.is_empty(), "{:?}", draft(&t).errors);
    assert_eq!(t.machine().cpus[100].capacity, 446);
    // Wrong length and out of range: build()'s messages on the field.
    for bad in ["446×100", "1024×64, 0×64", "big"] {
        let u = t.clone().reduce(edit(Field::Capacities, bad));
        assert!(draft(&u).errors.contains_key(&Field::Capacities), "{bad}");
        assert_eq!(u.machine(), t.machine());
    }
}

#[test]
fn irregular_machines_say_why_and_offer_the_json() {
    let s = apply(
        Rc::new(AppState::default()),
        vec![
            Action::SelectPreset("alderlake-8p8e".into()),
            Action::OpenDesigner(true),
        ],
    );
    let Some(Designer::Irregular { reason, json }) = &s.designer else {
        panic!("{:?}", s.designer)
    };
    assert!(reason.contains("hybrid"), "{reason}");
    assert!(json.contains("\"cpus\""));
    // Its kernel can still be chosen: the explicit spec takes the option.
    let k = s.clone().reduce(edit(Field::Config(Kopt::Smt), "n"));
    assert!(!k.machine().config.sched_smt);
    assert_eq!(k.machine().nr_cpus(), 24);
    assert!(matches!(k.designer, Some(Designer::Irregular { .. })));
    assert!(!levels(&k).contains(&"SMT"), "{:?}", levels(&k));
    let t = s.reduce(Action::EditAsJson);
    assert!(t.custom_open && t.designer.is_none());
    assert!(t.custom_prefill.1.contains("asym_prio"));
    // Every preset opens one way or the other, without panicking.
    for p in presets::PRESETS {
        let s = apply(
            Rc::new(AppState::default()),
            vec![
                Action::SelectPreset(p.name.into()),
                Action::OpenDesigner(true),
            ],
        );
        if let Some(Designer::Form(d)) = &s.designer {
            // A preset opened as counts builds the same machine.
            let mut spec = d.spec().expect(p.name);
            spec.name = s.machine().name.clone();
            spec.description = s.machine().description.clone();
            assert_eq!(spec.build().unwrap(), **s.machine(), "{}", p.name);
        }
    }
}

#[test]
fn the_designer_follows_back_and_forward() {
    let before = designed();
    let after = before
        .clone()
        .reduce(edit(Field::Count(Count::Sockets), "1"));
    assert_eq!(after.machine().nr_cpus(), 64);
    // Back: the older link comes in through hashchange.
    let back = after.reduce(Action::LoadFragment(before.fragment()));
    assert_eq!(back.machine().nr_cpus(), 128);
    assert_eq!(draft(&back).count(Count::Sockets), "2");
}

#[test]
fn the_custom_workloads_distributions() {
    let s = designed();
    let t = s.reduce(edit(Field::ClientWork, "uniform:5-10us"));
    match &t.sim().workload {
        Workload::Custom { client_work, .. } => {
            assert_eq!(client_work.to_string(), "uniform:5000-10000")
        }
        w => panic!("{w:?}"),
    }
    let json = schedlab_core::scenario::wire_json(&t.link_scenario());
    assert!(json.contains("custom"), "{json}");
    // Core's own message for a bad one; the workload stays.
    let u = t.clone().reduce(edit(Field::Sleep, "sometimes"));
    let e = &draft(&u).errors[&Field::Sleep];
    assert!(e.contains("\"sometimes\" is not a duration"), "{e}");
    assert_eq!(u.sim(), t.sim());
    // Written back with units, as typed; they read back to the same values.
    for d in [
        "fixed:5us",
        "uniform:5us-10ms",
        "exp:250ns",
        "fixed:2s",
        "fixed:0",
    ] {
        let dist = schedlab_core::workload::Dist::parse(d).unwrap();
        let text = super::designer::dist_text(dist);
        assert_eq!(text, d);
        assert_eq!(schedlab_core::workload::Dist::parse(&text).unwrap(), dist);
    }
}

#[test]
fn a_paste_without_clusters_says_so_and_the_designer_adds_them() {
    let text = include_str!("../../../core/tests/fixtures/kunpeng920_96c_lscpu.txt");
    let s = apply(
        Rc::new(AppState::default()),
        vec![super::tests::custom_read(text, None)],
    );
    assert!(
        s.missing().contains(&Missing::Clusters),
        "{:?}",
        s.missing()
    );
    let t = apply(
        s,
        vec![
            Action::OpenDesigner(true),
            // 24 cores per LLC as 6 clusters of 4.
            edit(Field::Count(Count::ClustersPerLlc), "6"),
            edit(Field::Count(Count::CoresPerCluster), "4"),
        ],
    );
    assert_eq!(t.machine().nr_cpus(), 96);
    let d = draft(&t);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert!(levels(&t).contains(&"CLS"), "{:?}", levels(&t));
    assert!(
        t.missing().is_empty(),
        "the designer's machine lacks nothing"
    );
}
