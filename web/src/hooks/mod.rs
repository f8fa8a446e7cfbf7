//! Hooks that own what outlives a render: a simulation run and its workers.

pub mod use_record;
pub mod use_run;
