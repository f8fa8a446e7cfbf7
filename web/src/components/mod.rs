//! One function component per file.

pub mod controls;
pub mod custom_machine;
pub mod domain_tree;
pub mod machine_view;
pub mod sim_view;
pub mod tabs;
pub mod wakeup_view;
