//! schedlab-core: the Linux scheduler's sched-domain building and wake-up CPU
//! selection, mirrored function by function, for machines you may not have.
//!
//! Pure Rust: no clocks, no OS randomness, no threads; builds for the host and wasm32.
//!
//! ```text
//!  rng, byte_enum, json_words → cpumask → topology, release → patch → sched_domain → wakeup
//!      → cost → metrics, workload → sim → experiment → scenario → reproduce
//! ```
//!
//! Each module uses only those before it (`tests/layering.rs` checks). The types most
//! callers need are re-exported here; docs/architecture.md maps every kernel function
//! to the file that mirrors it.

mod byte_enum;
pub mod cost;
pub mod cpumask;
pub mod experiment;
mod fxhash;
mod json_words;
pub mod lesson;
pub mod metrics;
pub mod near;
pub mod patch;
pub mod release;
pub mod reproduce;
pub mod rng;
pub mod scenario;
pub mod sched_domain;
pub mod sim;
pub mod stats;
pub mod topology;
pub mod wakeup;
pub mod workload;

pub use cpumask::{CpuId, CpuMask};
pub use experiment::{CpuSelection, LiveRun, RunReport, RunSpec, SweepSpec};
pub use patch::{Patch, PatchSet};
pub use release::Release;
pub use scenario::{Scenario, SimSetup, View};
pub use sched_domain::{build_sched_domains, BuildConfig, SchedDomains};
pub use topology::{load_machine, Machine, MachineSpec};
pub use wakeup::{wake_up, Decision, Trace};
pub use workload::Workload;
