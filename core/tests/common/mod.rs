//! Scaffolding the integration tests share: each test binary includes it with
//! `mod common;` and uses what it needs (so some helpers are unused in some binaries).
//!
//! Test files still carry their own one-line
//! `#[cfg(target_arch = "wasm32")] use wasm_bindgen_test::wasm_bindgen_test as test;`:
//! an attribute named `test` cannot be re-exported from here without shadowing the
//! built-in one on the host.
#![allow(dead_code)]

use schedlab_core::rng::Rng;
use schedlab_core::sched_domain::{build_sched_domains, BuildConfig, SchedDomains};
use schedlab_core::topology::{presets, CpuSpec, Machine};

/// A preset machine by name (the tests' names are known presets).
pub fn preset(name: &str) -> Machine {
    presets::machine(name).unwrap_or_else(|e| panic!("preset {name}: {e}"))
}

/// The sched domains `release` (`"6.8"`, `"5.6"` …) builds on `m`, as its defaults.
pub fn domains(m: &Machine, release: &str) -> SchedDomains {
    let release = release
        .parse()
        .unwrap_or_else(|e| panic!("release {release}: {e}"));
    build_sched_domains(m, &BuildConfig::new(release)).unwrap_or_else(|e| panic!("{}: {e}", m.name))
}

/// CPU `cpu` of a machine without SMT whose LLC is its package, in `cluster`: the
/// arm64-style CPUs the QEMU and device-tree topology tests build by hand.
pub fn cluster_cpu(cpu: u32, package: u32, node: u16, cluster: u32) -> CpuSpec {
    CpuSpec {
        cpu,
        package,
        node,
        llc: package,
        cluster: Some(cluster),
        core: None,
        capacity: 1024,
        asym_prio: 0,
    }
}

/// The crate's one PRNG, for random test states: a failing case is reproduced from
/// the seed it prints.
pub fn rng(seed: u64) -> Rng {
    Rng::new(seed)
}

/// The process's peak resident memory so far (`VmHWM` in /proc/self/status), in bytes:
/// the bound of the big-machine tests, each alone in its own test binary. Linux only.
#[cfg(target_os = "linux")]
pub fn peak_resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|k| k.parse().ok())
        .expect("VmHWM in kB");
    kib * 1024
}
