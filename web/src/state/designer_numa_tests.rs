//! The designer's NUMA distances past the regular ones: memory-only (CPU-less) nodes
//! and a SLIT that is not symmetric, which machine files and the importers take
//! (core/tests/numa_input.rs). Typed, they build; loaded from a link or an import,
//! they show in the form and come back unchanged.

use schedlab_core::topology::{MachineSpec, Numbering};

use super::designer::{Count, Designer, Field};
use super::designer_tests::{apply, designed, draft, edit, levels};
use super::*;

/// Two sockets of 4 CPUs (nodes 0, 1) and two memory-only nodes (2, 3): the SLIT of
/// 0fb3978b0aac's commit message, as core/tests/numa_input.rs has it.
fn optane() -> MachineSpec {
    let mut s = MachineSpec::regular(
        "optane",
        "",
        schedlab_core::topology::Arch::X86,
        2,
        1,
        1,
        4,
        1,
        1,
        Numbering::Linear,
    );
    s.numa_distance = Some(vec![
        vec![10, 21, 17, 28],
        vec![21, 10, 28, 17],
        vec![17, 28, 10, 28],
        vec![28, 17, 28, 10],
    ]);
    s
}

/// Two nodes of 4 CPUs whose distances differ by direction.
fn lopsided() -> MachineSpec {
    let mut s = optane();
    s.name = "lopsided".into();
    s.numa_distance = Some(vec![vec![10, 20], vec![30, 10]]);
    s
}

/// `spec` loaded as a pasted machine, then opened from its link in a fresh page with
/// the designer open.
fn opened_from_link(spec: MachineSpec) -> Rc<AppState> {
    let s = apply(
        Rc::new(AppState::default()),
        vec![Action::CustomRead(Ok(Box::new(spec)))],
    );
    let back = Rc::new(AppState::from_fragment(&s.fragment()));
    assert_eq!(
        **back.machine(),
        **s.machine(),
        "the link carries the machine"
    );
    back.reduce(Action::OpenDesigner(true))
}

#[test]
fn memory_only_nodes_from_a_link_stay_through_an_edit() {
    let s = opened_from_link(optane());
    let m = s.machine().clone();
    assert_eq!(m.nr_nodes(), 4);
    // The form as opened builds the same machine.
    let d = draft(&s);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    let spec = d.spec().expect("the form builds");
    assert_eq!(spec.build().unwrap().numa_distance, m.numa_distance);
    // An edit of the CPUs keeps the memory-only nodes and their distances.
    let t = s.reduce(edit(Field::Count(Count::ThreadsPerCore), "2"));
    assert!(draft(&t).errors.is_empty(), "{:?}", draft(&t).errors);
    assert_eq!(t.machine().nr_cpus(), 16);
    assert_eq!(t.machine().numa_distance, m.numa_distance);
    // The form shows them: a count and the grid's last rows.
    let d = draft(&t);
    assert_eq!(d.memory_nodes, "2");
    assert_eq!((d.slit.cpu_nodes(), d.slit.len()), (2, 4));
    assert!(d.slit.symmetric());
}

#[test]
fn an_asymmetric_slit_from_a_link_is_edited_cell_by_cell() {
    let s = opened_from_link(lopsided());
    let m = s.machine().clone();
    assert_eq!(m.numa_distance, vec![vec![10, 20], vec![30, 10]]);
    let d = draft(&s);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert!(
        !d.slit.symmetric(),
        "an asymmetric table opens with symmetric off"
    );
    assert_eq!(d.slit.asymmetric_pairs(), [(0, 1)]);
    assert_eq!(
        d.spec().unwrap().build().unwrap().numa_distance,
        m.numa_distance
    );
    // The table came in asymmetric: an edit changes its own cell only.
    let t = s.reduce(edit(Field::Distance(0, 1), "25"));
    assert!(draft(&t).errors.is_empty(), "{:?}", draft(&t).errors);
    assert_eq!(t.machine().numa_distance, vec![vec![10, 25], vec![30, 10]]);
    // And the designed machine's link opens it again.
    let u = AppState::from_fragment(&t.fragment());
    assert_eq!(**u.machine(), **t.machine());
}

#[test]
fn memory_only_nodes_are_typed_as_a_count_and_extend_the_grid() {
    let s = designed();
    let before = levels(&s);
    let t = s.clone().reduce(edit(Field::MemoryNodes, "1"));
    let d = draft(&t);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!((d.slit.cpu_nodes(), d.slit.len()), (4, 5));
    let m = t.machine();
    assert_eq!((m.nr_cpus(), m.nr_nodes()), (128, 5));
    assert!(m.cpus.iter().all(|c| c.node.0 < 4), "node 4 has no CPUs");
    assert_eq!(m.numa_distance[4], [20, 20, 20, 20, 10], "the default: 20");
    assert_eq!(
        levels(&t),
        before,
        "20 is a distance the CPUs' nodes have already"
    );
    // A distance only the memory-only node has: a NUMA level before 5.18, none after
    // (sched_init_numa(), 0fb3978b0aac).
    let t = t.reduce(edit(Field::Distance(0, 4), "15"));
    assert_eq!(t.machine().numa_distance[4][0], 15, "mirrored");
    assert_eq!(levels(&t), before, "6.8 counts the nodes with CPUs only");
    let old = t.clone().reduce(Action::SelectRelease(Release::new(5, 15)));
    let old_before = levels(&s.reduce(Action::SelectRelease(Release::new(5, 15))));
    assert_eq!(
        levels(&old).len(),
        old_before.len(),
        "the extra level degenerates"
    );
    assert_eq!(
        top_level(&old),
        top_level(&designed().reduce(Action::SelectRelease(Release::new(5, 15)))) + 1,
        "but sd->level shifts"
    );
    // Two more nodes with CPUs: the memory-only node keeps its distances, now node 6.
    let u = t.reduce(edit(Field::Count(Count::Sockets), "3"));
    let d = draft(&u);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!((d.slit.cpu_nodes(), d.slit.len()), (6, 7));
    assert_eq!(u.machine().numa_distance[0][6], 15);
    assert_eq!(u.machine().numa_distance[0][4], 20, "node 4 has CPUs now");
    // The link carries them, and the designer opens on them again.
    let v = AppState::from_fragment(&u.fragment());
    assert_eq!(**v.machine(), **u.machine());
    let v = Rc::new(v).reduce(Action::OpenDesigner(true));
    assert_eq!(draft(&v).memory_nodes, "1");
    assert_eq!(draft(&v).slit.rows(), d.slit.rows());
    // None again: the grid shrinks to the nodes with CPUs.
    let w = u.reduce(edit(Field::MemoryNodes, "0"));
    assert_eq!(w.machine().nr_nodes(), 6);
}

/// CPU 0's top domain's `sd->level`.
fn top_level(s: &AppState) -> u32 {
    let sd = s.domains().expect("domains");
    sd.try_cpu(CpuId(0))
        .expect("cpu 0")
        .domains
        .last()
        .expect("domains")
        .level
}

#[test]
fn a_bad_memory_only_count_says_why_there_and_keeps_the_machine() {
    let s = designed();
    for bad in ["x", "-1", "33", ""] {
        let t = s.clone().reduce(edit(Field::MemoryNodes, bad));
        let e = &draft(&t).errors[&Field::MemoryNodes];
        assert!(e.contains("memory-only nodes from 0 to 32"), "{bad}: {e}");
        assert_eq!(t.machine(), s.machine(), "{bad}");
        assert_eq!(draft(&t).memory_nodes, bad, "the text stays");
        assert_eq!(draft(&t).slit.len(), 4, "the grid stays");
    }
    // 4 nodes with CPUs and 29 memory-only: past the grid's 32.
    let t = s.clone().reduce(edit(Field::MemoryNodes, "29"));
    let e = &draft(&t).errors[&Field::MemoryNodes];
    assert!(
        e.contains("33 NUMA nodes (4 with CPUs, 29 memory-only)"),
        "{e}"
    );
    assert_eq!(t.machine(), s.machine());
    let t = t.reduce(edit(Field::MemoryNodes, "28"));
    assert!(draft(&t).errors.is_empty(), "{:?}", draft(&t).errors);
    assert_eq!(t.machine().nr_nodes(), 32);
    // With 28 memory-only nodes, more sockets are refused at the sockets.
    let u = t.clone().reduce(edit(Field::Count(Count::Sockets), "3"));
    let e = &draft(&u).errors[&Field::Count(Count::Sockets)];
    assert!(e.contains("34 NUMA nodes"), "{e}");
    assert_eq!(u.machine(), t.machine());
    // A bad distance to a memory-only node: on its cell.
    let v = t.reduce(edit(Field::Distance(31, 2), "300"));
    assert!(draft(&v).errors.contains_key(&Field::Distance(31, 2)));
}

#[test]
fn symmetric_off_edits_one_direction_and_the_kernel_warns() {
    let s = designed().reduce(edit(Field::Symmetric, "n"));
    assert!(!draft(&s).slit.symmetric());
    let t = s.reduce(edit(Field::Distance(2, 0), "15"));
    let d = draft(&t);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    let m = t.machine();
    assert_eq!((m.numa_distance[2][0], m.numa_distance[0][2]), (15, 20));
    assert_eq!(d.slit.asymmetric_pairs(), [(0, 2)]);
    let sd = t.domains().expect("an asymmetric SLIT builds");
    assert!(
        sd.build_messages
            .iter()
            .any(|l| l.contains("ERROR: Node-distance not symmetric")),
        "{:?}",
        sd.build_messages
    );
    // The link carries the table as typed; opened again, symmetric is off.
    let u = Rc::new(AppState::from_fragment(&t.fragment())).reduce(Action::OpenDesigner(true));
    assert_eq!(u.machine().numa_distance, m.numa_distance);
    assert!(!draft(&u).slit.symmetric());
    // Checking "symmetric" mirrors the upper triangle; unchecking gives it back.
    let v = t.clone().reduce(edit(Field::Symmetric, "y"));
    assert_eq!(v.machine().numa_distance[2][0], 20);
    let w = v.reduce(edit(Field::Symmetric, "n"));
    assert_eq!(w.machine().numa_distance, m.numa_distance);
}

#[test]
fn a_cpu_less_node_among_the_cpus_nodes_is_irregular_and_says_so() {
    let text = r#"{"name":"gap","arch":"x86","cpus":[
        {"cpu":0,"node":0},{"cpu":1,"node":0},{"cpu":2,"node":2},{"cpu":3,"node":2}]}"#;
    let spec: MachineSpec = serde_json::from_str(text).expect("a spec");
    let s = apply(
        Rc::new(AppState::default()),
        vec![
            Action::CustomRead(Ok(Box::new(spec))),
            Action::OpenDesigner(true),
        ],
    );
    assert_eq!(s.machine().nr_nodes(), 3);
    let Some(Designer::Irregular { reason, .. }) = &s.designer else {
        panic!("{:?}", s.designer)
    };
    assert!(reason.contains("node 1 has no CPUs"), "{reason}");
}

#[test]
fn an_import_with_memory_only_nodes_opens_as_counts_and_applies_back_unchanged() {
    // lscpu -p and numactl -H of two sockets and two memory-only nodes (2, 3).
    let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
2,2,1,1,,2,2,2,1
3,3,1,1,,3,3,3,1
available: 4 nodes (0-3)
node 0 cpus: 0 1
node 0 size: 1000 MB
node 0 free: 900 MB
node 1 cpus: 2 3
node 1 size: 1000 MB
node 1 free: 900 MB
node 2 cpus:
node 2 size: 4000 MB
node 2 free: 4000 MB
node 3 cpus:
node 3 size: 4000 MB
node 3 free: 4000 MB
node distances:
node   0   1   2   3
  0:  10  21  17  28
  1:  21  10  28  17
  2:  17  28  10  28
  3:  28  17  28  10
";
    let s = apply(
        Rc::new(AppState::default()),
        vec![
            super::tests::custom_read(text, Some(schedlab_core::topology::Arch::X86)),
            Action::OpenDesigner(true),
        ],
    );
    assert_eq!(s.custom_error, None);
    let m = s.machine().clone();
    assert_eq!(m.nr_nodes(), 4);
    let d = draft(&s);
    assert_eq!(d.memory_nodes, "2");
    assert_eq!(d.count(Count::Sockets), "2");
    // Applied back (an edit of the name only): the same machine, but for the
    // description the designer writes.
    let shape = |s: &AppState| {
        let mut m = (**s.machine()).clone();
        m.description.clear();
        m
    };
    let t = s.clone().reduce(edit(Field::Name, "imported, designed"));
    let mut want = (*m).clone();
    want.description.clear();
    want.name = "imported, designed".into();
    assert_eq!(shape(&t), want);
    let u = t.clone().reduce(edit(Field::Symmetric, "n"));
    assert_eq!(shape(&u), want, "unchecking changes no cell");
}
