//! sysfs topology dumps.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::*;

#[test]
fn kunpeng920_128c_sysfs_is_the_preset() {
    // MACHINE: 128 cores, 2 packages x 2 NUMA nodes x 8 clusters x 4 cores, no SMT.
    assert_eq!(sniff(KP128_SYSFS), Some(Format::SysfsDump));
    let m = load_with(KP128_SYSFS, &ImportHint::arch(Arch::Arm64));
    assert_eq!(m.nr_cpus(), 128);
    assert!(!m.has_smt());
    assert_eq!(groups(&m, Machine::cluster_mask).len(), 32);
    assert_eq!(m.cluster_mask(CpuId(126)).to_list(), "124-127");
    assert_eq!(nodes(&m), ["0-31", "32-63", "64-95", "96-127"]);
    // L3 from the cache rows of CPUs 0, 32, 64; 96-127 fall back to package ∩ node.
    assert_eq!(groups(&m, Machine::llc_mask), nodes(&m));
    assert_eq!(
        m.numa_distance,
        [
            [10, 16, 32, 33],
            [16, 10, 25, 32],
            [32, 25, 10, 16],
            [33, 32, 16, 10]
        ]
    );
    assert_same_shape(&m, &presets::machine("kunpeng920-6426").unwrap());
}

#[test]
fn epyc9654_partial_snapshot_is_not_a_machine() {
    // Three CPUs of 384 with `[file]`/`[test]` prose: nothing to import.
    let err = load_machine(EPYC9654_PARTIAL, &ImportHint::NONE).unwrap_err();
    assert!(matches!(err, ImportError::UnknownFormat { .. }), "{err}");
}
