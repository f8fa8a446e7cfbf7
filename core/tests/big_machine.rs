//! A simulation on the largest machine schedlab models, 4096 CPUs in one LLC, builds
//! in bounded memory: the balancer's per-CPU domains share their groups as the
//! kernel's CPUs share one ring of `struct sched_group` (`sim/balance/ring.rs`). A
//! rotated copy per CPU took 1.2 GB and 4.5 s in release before session 32 (16.7
//! million groups), more than a browser gives a simulation worker.
//!
//! The bound is the process's peak resident memory, so this file holds one test: its
//! own process, nothing running beside it. Linux only (it reads /proc).

#![cfg(target_os = "linux")]

mod common;

use schedlab_core::experiment::{self, CpuSelection, RunSpec};
use schedlab_core::topology::MachineSpec;
use schedlab_core::workload::{Noise, Workload};

/// Measured after the fix: about 60 MiB in release (the machine, its domains and the
/// simulator), 1.2 GB before it.
const MAX_RESIDENT_BYTES: u64 = 300 << 20;

#[test]
fn a_4096_cpu_llc_simulates_in_bounded_memory() {
    let spec: MachineSpec = serde_json::from_str(
        r#"{"name":"flat-4096","arch":"x86","packages":1,"cores_per_llc":4096}"#,
    )
    .expect("json");
    let machine = spec.build().expect("a 4096-CPU machine");
    let run = RunSpec {
        noise: Noise::Quiet,
        ..RunSpec::with_cpus(
            machine,
            &CpuSelection::All,
            "6.8".parse().expect("patch set"),
            Workload::Tbench { clients: 1 },
            1,
            1,
        )
        .expect("run spec")
    };
    let report = experiment::run(&run).expect("the run");
    assert!(report.events > 0, "the run simulated nothing");
    let peak = common::peak_resident_bytes();
    assert!(
        peak < MAX_RESIDENT_BYTES,
        "a 4096-CPU run left the process's peak resident memory at {} MiB (bound {} MiB)",
        peak >> 20,
        MAX_RESIDENT_BYTES >> 20
    );
}
