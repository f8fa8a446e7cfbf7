//! schedlab-core: the Linux scheduler's sched-domain building and wake-up CPU
//! selection, mirrored function by function, for machines you may not have.
//!
//! Pure Rust: no clocks, no OS randomness, no threads; builds for the host and wasm32.

pub mod cost;
pub mod cpumask;
pub mod experiment;
pub mod metrics;
pub mod patch;
pub mod release;
pub mod reproduce;
pub mod rng;
pub mod scenario;
pub mod sched_domain;
pub mod sim;
pub mod topology;
pub mod wakeup;
pub mod workload;
