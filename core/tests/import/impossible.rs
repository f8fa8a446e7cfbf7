//! Machines that cannot exist (issue 16): sibling lists that disagree, levels that do
//! not nest, SLIT entries out of range; each error names the line.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::*;

fn refused(text: &str, arch: Arch) -> String {
    match load_machine(text, &ImportHint::arch(arch)) {
        Ok(m) => panic!("accepted {} CPUs: {text}", m.nr_cpus()),
        Err(e) => e.to_string(),
    }
}

fn says(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "{p:?} missing from: {msg}");
    }
}

#[test]
fn sysfs_sibling_lists_must_agree() {
    // CPU 0 says CPU 1 is its SMT sibling; CPU 1 says it has none.
    let text = "cpu0 0 0 0 0 0-1 0-1 0-1 0-1 0-1\ncpu1 0 0 0 1 1 0-1 0-1 0-1 0-1\n";
    says(
        &refused(text, Arch::X86),
        &[
            "line 1",
            "CPU 0",
            "thread_siblings_list",
            "0-1",
            "CPU 1",
            "line 2",
        ],
    );
}

#[test]
fn sysfs_sibling_lists_hold_the_cpu_itself() {
    let text = "cpu0 0 0 0 0 1 0-1 0-1 0-1 0-1\ncpu1 0 0 0 1 1 0-1 0-1 0-1 0-1\n";
    says(
        &refused(text, Arch::X86),
        &["line 1", "CPU 0", "thread_siblings_list", "leaves out"],
    );
    // A package list without the CPU.
    let text = "cpu0 0 0 0 0 0 0 0-1 0-1 1\ncpu1 0 0 1 1 1 1 0-1 0-1 1\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 1", "CPU 0", "package_cpus_list", "leaves out"],
    );
    // A cache row whose list leaves out its own CPU.
    let text = "cpu0 0 0 0 0 0 0 0-1 0-1 0-1\ncpu1 0 0 1 1 1 1 0-1 0-1 0-1\n\
                cpu0 index3 level=3 type=Unified shared_cpu_list=1\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 3", "CPU 0", "shared_cpu_list", "leaves out"],
    );
}

#[test]
fn sysfs_levels_must_nest() {
    // SMT core 2-3 is not inside CPU 2's cluster 0-2.
    let text = "cpu0 0 0 0 0 0-1 0-2 0-3 0-3 0-3\n\
                cpu1 0 0 0 0 0-1 0-2 0-3 0-3 0-3\n\
                cpu2 0 0 0 1 2-3 0-2 0-3 0-3 0-3\n\
                cpu3 0 0 1 1 2-3 3 0-3 0-3 0-3\n";
    says(
        &refused(text, Arch::Arm64),
        &[
            "line 3",
            "CPU 2",
            "thread_siblings_list",
            "2-3",
            "cluster_cpus_list",
            "0-2",
        ],
    );
    // A cluster wider than the package.
    let text = "cpu0 0 0 0 0 0 0-1 0-1 0 0\ncpu1 1 0 0 1 1 0-1 0-1 1 1\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 1", "CPU 0", "cluster_cpus_list", "package_cpus_list"],
    );
    // Two cache rows that disagree about CPU 1's LLC.
    let text = "cpu0 0 0 0 0 0 0 0-3 0-3 0-3\ncpu1 0 0 1 1 1 1 0-3 0-3 0-3\n\
                cpu2 0 0 2 2 2 2 0-3 0-3 0-3\ncpu3 0 0 3 3 3 3 0-3 0-3 0-3\n\
                cpu0 index3 level=3 type=Unified shared_cpu_list=0-1\n\
                cpu1 index3 level=3 type=Unified shared_cpu_list=1-3\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 6", "CPU 1", "line 5", "shared_cpu_list"],
    );
    // A CPU in two nodes.
    let text = "cpu0 0 0 0 0 0 0 0-1 0-1 0-1\ncpu1 0 0 1 1 1 1 0-1 0-1 0-1\n\
                node0 cpulist=0-1 distance=10 20\nnode1 cpulist=1 distance=20 10\n";
    says(
        &refused(text, Arch::Arm64),
        &["line 4", "CPU 1", "node 0", "node 1"],
    );
}

#[test]
fn sysfs_without_a_shared_cache_is_each_cpu_alone_on_arm64() {
    // QEMU's device tree: SMT threads, but every cache private to one CPU. Debian's
    // arm64 6.1 builds this (core/tests/qemu.rs, arm64-dt-clusters-6.1): llc_sibling
    // is the CPU alone, and MC narrower than SMT is "BUG: arch topology borken".
    let text = "cpu0 0 -1 0 0 0-1 0-1 0-1 0-1 0-1\n\
                cpu1 0 -1 0 0 0-1 0-1 0-1 0-1 0-1\n\
                cpu0 index0 level=1 type=Data shared_cpu_list=0\n\
                cpu0 index2 level=2 type=Unified shared_cpu_list=0\n\
                cpu1 index2 level=2 type=Unified shared_cpu_list=1\n";
    let m = load_with(text, &ImportHint::arch(Arch::Arm64));
    assert!(m.no_shared_cache);
    assert!(
        m.description.contains("No cache is shared between CPUs"),
        "{}",
        m.description
    );
    // The simulator's LLC is package ∩ node.
    assert_eq!(groups(&m, Machine::llc_mask), ["0-1"]);
    // x86 reads its caches from CPUID: such a dump is refused, saying what is missing.
    says(
        &refused(text, Arch::X86),
        &[
            "line 4",
            "the LLC of CPU 0 (0) is narrower than its SMT core (0-1)",
            "describes no shared cache",
        ],
    );
    // A cache shared by some threads of a core but not all: refused on arm64 too.
    let mut text = String::new();
    for c in 0..4 {
        text.push_str(&format!("cpu{c} 0 -1 0 0 0-3 0-3 0-3 0-3 0-3\n"));
    }
    for c in 0..4 {
        let l = if c < 2 { "0-1" } else { "2-3" };
        text.push_str(&format!(
            "cpu{c} index2 level=2 type=Unified shared_cpu_list={l}\n"
        ));
    }
    says(
        &refused(&text, Arch::Arm64),
        &["the LLC of CPU 0 (0-1) is narrower than its SMT core (0-3)"],
    );
}

#[test]
fn sysfs_cache_rows_claiming_every_cpu_are_no_llc() {
    // An ACPI PPTT without cache entries: every cache row claims all CPUs, across
    // packages. arm64 has no valid LLC then and cpu_coregroup_mask() falls back to
    // the package (∩ node).
    let mut text = String::from(
        "cpu0 0 -1 0 0 0 0 0-1 0-1 0-1\n\
         cpu1 0 -1 1 1 1 1 0-1 0-1 0-1\n\
         cpu2 1 -1 2 2 2 2 2-3 2-3 2-3\n\
         cpu3 1 -1 3 3 3 3 2-3 2-3 2-3\n\
         node0 cpulist=0-1 distance=10 20\n\
         node1 cpulist=2-3 distance=20 10\n",
    );
    for c in 0..4 {
        text.push_str(&format!(
            "cpu{c} index3 level=3 type=Unified shared_cpu_list=0-3\n"
        ));
    }
    let m = load_with(&text, &ImportHint::arch(Arch::Arm64));
    assert_eq!(groups(&m, Machine::llc_mask), ["0-1", "2-3"]);
    assert!(m.description.contains("no valid LLC"), "{}", m.description);
    // x86 takes its LLC from CPUID, never across packages: such a dump is refused.
    says(
        &refused(&text, Arch::X86),
        &["line 7", "CPU 0", "0-3", "beyond its package (0-1)"],
    );
}

#[test]
fn lscpu_levels_must_nest_and_errors_give_the_line() {
    // The two threads of core 0 report different L3s.
    let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,0,0,0,,0,0,0,1\n";
    says(
        &refused(text, Arch::X86),
        &["line 3", "CPU 1", "SMT sibling", "CPU 0", "LLC"],
    );
    // SMT siblings on two nodes.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n1,0,0,1\n";
    says(&refused(text, Arch::X86), &["line 3", "CPU 1", "node"]);
}

#[test]
fn slit_entries_fit_a_byte() {
    // The kernel keeps distances in a u8 (numa_set_distance(): `(u8)distance !=
    // distance` is refused); 255 is a distance like any other (core/tests/numa_input.rs).
    let text = "{\"name\":\"x\",\"arch\":\"x86\",\"packages\":2,\"cores_per_llc\":1,\
                \"numa_distance\":[[10,256],[256,10]]}";
    says(&refused(text, Arch::X86), &["256"]);
    // The same through numactl -H.
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,1,1\n\n\
                available: 2 nodes (0-1)\nnode 0 cpus: 0\nnode 1 cpus: 1\n\
                node distances:\nnode   0   1\n  0:  10  256\n  1:  256  10\n";
    says(&refused(text, Arch::X86), &["256", "10 to 255"]);
}
