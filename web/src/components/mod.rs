//! One function component per file.

pub mod chart;
pub mod code_view;
pub mod controls;
pub mod custom_machine;
pub mod designer;
pub mod designer_numa;
pub mod domain_diff;
pub mod domain_tree;
pub mod export_bar;
pub mod glossary;
pub mod lessons;
pub mod live_view;
pub mod machine_svg;
pub mod machine_view;
pub mod present;
pub mod share;
pub mod side_switch;
pub mod sim_results;
pub mod sim_setup;
pub mod sim_view;
pub mod tabs;
pub mod theme_switch;
pub mod timeline;
pub mod timeline_panel;
pub mod wake_setup;
pub mod wakeup_view;
