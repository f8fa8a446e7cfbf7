//! One function component per file.

pub mod controls;
pub mod domain_tree;
pub mod machine_view;
