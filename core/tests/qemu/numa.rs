//! The captures of several nodes and their distance tables (SLIT): NUMA levels whose
//! spans differ per node, overlapping groups, the diameter-three fix, nodes inside a
//! package, an asymmetric table and a node without CPUs.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{block, check, for_both};

/// Four nodes in a ring (neighbours 20, opposite 30), on 6.1 and 6.12: two NUMA
/// levels whose spans differ per node (`sched_domains_numa_masks[level][node]`), and
/// at the second the overlapping groups of `build_overlap_sched_groups()` with their
/// balance masks (`mask=`).
#[test]
fn x86_ring_of_four_nodes() {
    for_both("x86-ring4", |c| {
        let b = block(c, 0);
        assert!(
            b.contains(&"   domain-2: span=0-7,12-15 level=NUMA".to_string()),
            "{b:#?}"
        );
        assert!(b[7].contains("0:{ span=0-7,12-15 mask=0-3 "), "{}", b[7]);
        assert!(b[7].contains("8:{ span=4-15 mask=8-11 "), "{}", b[7]);
        assert!(block(c, 4).contains(&"   domain-2: span=0-11 level=NUMA".to_string()));
    });
}

/// The table of the "NUMA diameter > 2" fix (585b6d2723dc): distances 12/20/22/24.
/// CPU0's NUMA(20) domain spans nodes 0-2 (0-11); CPU8's sibling domain there spans
/// nodes 0, 2 and 3 and its child 8-15 is not inside 0-11, so
/// `find_descended_sibling()` goes one level down and the group is 8-11. Node 2's own
/// NUMA(20) is 0-3,8-15 (its row is 20 22 10 12).
#[test]
fn x86_numa_diameter_three() {
    for_both("x86-diam3", |c| {
        let b = block(c, 0);
        assert_eq!(b[4], "   domain-2: span=0-11 level=NUMA", "{b:#?}");
        assert!(b[5].contains(", 8:{ span=8-11 cap="), "{}", b[5]);
        assert_eq!(b[6], "    domain-3: span=0-15 level=NUMA");
        let b = block(c, 8);
        assert_eq!(b[4], "   domain-2: span=0-3,8-15 level=NUMA", "{b:#?}");
    });
}

/// Eight nodes on a cube's corners (16 / 22 / 28 for 1 / 2 / 3 hops): three NUMA
/// levels, each node's masks its own. At NUMA(22) CPU0's span is every node but the
/// opposite corner (0-13), and the siblings of nodes 3, 5 and 6 (two hops away) have
/// children that reach node 7, outside it: their groups come from one level further
/// down, the node alone (6-7, 10-11, 12-13).
#[test]
fn x86_cube_of_eight_nodes() {
    for_both("x86-cube8", |c| {
        let b = block(c, 0);
        assert_eq!(b[2], "  domain-1: span=0-5,8-9 level=NUMA", "{b:#?}");
        assert_eq!(b[4], "   domain-2: span=0-13 level=NUMA");
        assert!(b[5].contains(", 6:{ span=6-7 cap="), "{}", b[5]);
        assert!(
            b[7].contains(", 14:{ span=2-15 mask=14-15 cap="),
            "{}",
            b[7]
        );
    });
}

/// Two nodes per package (an Intel vendor: match_llc()'s silent SNC split): MC is the
/// node, no PKG level (x86_has_numa_in_package), NUMA(12) the package, NUMA(20) all;
/// and 8 nodes of 2 CPUs, 4 per package, the same shape one level finer.
#[test]
fn x86_nodes_within_packages() {
    for_both("x86-2s4n", |c| {
        let b = block(c, 0);
        assert_eq!(b[0], " domain-0: span=0-3 level=MC");
        assert_eq!(b[2], "  domain-1: span=0-7 level=NUMA");
    });
    check("x86-8n-6.12", |c| {
        let b = block(c, 0);
        assert_eq!(b[0], " domain-0: span=0-1 level=MC");
        assert_eq!(b[2], "  domain-1: span=0-7 level=NUMA");
    });
}

/// An asymmetric SLIT (d(0,1) = 20, d(1,0) = 30): sched_init_numa() prints the table
/// once, each node's masks follow its own row, so node 1 gets a third level whose only
/// group (CPU2's sibling's child, 2-7) does not cover 0-1: "ERROR: groups don't span
/// domain->span" from sched_domain_debug_one(), as schedlab prints it.
#[test]
fn x86_asymmetric_slit() {
    check("x86-asym-6.12", |c| {
        let k = c.kernel_dmesg();
        assert_eq!(k[0], "ERROR: Node-distance not symmetric");
        assert_eq!(k[3], "   30   10   20   20  ");
        assert_eq!(
            block(c, 2).last().unwrap(),
            "ERROR: groups don't span domain->span"
        );
        assert_eq!(block(c, 0).len(), 4, "nodes 0, 2, 3: one NUMA level");
    });
}

/// A memory-only node: QEMU's node 1 (no CPUs) is the guest's node 2 (x86 numbers
/// nodes in SRAT order, the CPU entries first), 12 from both others, which are 20
/// apart. sched_init_numa() walks only N_CPU nodes (0fb3978b0aac, v5.18): one NUMA
/// level at 20, none at 12.
#[test]
fn x86_memory_only_node() {
    for_both("x86-memless", |c| {
        assert!(c.sysfs.contains("node2 cpulist= distance=12 12 10"));
        let b = block(c, 0);
        assert_eq!(b.len(), 4, "{b:#?}");
        assert_eq!(b[2], "  domain-1: span=0-11 level=NUMA");
    });
}
