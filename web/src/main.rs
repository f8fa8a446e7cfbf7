//! schedlab-web: the browser playground, a thin Yew shell over `schedlab-core`.
//!
//! ```text
//!  main ─▶ App ─ ContextProvider<AppContext> ─┬─ Controls      (preset, release, CPU)
//!                                             ├─ MachineView   (packages → … → threads)
//!                                             └─ TabPanel ─ DomainTree / dmesg / debugfs
//!                                                           Wake-up / Simulate
//!  worker::SimWorker  (the same module in a Web Worker: one side of a simulation)
//! ```
//!
//! The UI never computes scheduling: `state.rs` asks core for the machine and its
//! sched domains and the components draw what comes back.

mod app;
mod components;
mod dom;
mod export;
mod format;
mod hooks;
mod line_diff;
mod live;
mod state;
mod timeline;
mod worker;

fn main() {
    // One module, two entries: the simulation workers load it too (static/worker.js).
    if worker::in_worker() {
        worker::register();
    } else {
        yew::Renderer::<app::App>::new().render();
    }
}

#[cfg(test)]
mod dependency_tests {
    /// Issue 16: the page builds only the gloo crates it or yew uses. yew's own
    /// `gloo = "0.11"` pulled all eleven; vendor/gloo (the root Cargo.toml's
    /// [patch.crates-io]) re-exports the three yew and tokise use.
    #[test]
    fn unused_gloo_crates_are_not_in_the_build() {
        let lock = include_str!("../../Cargo.lock");
        for unused in [
            "gloo-net",
            "gloo-dialogs",
            "gloo-file",
            "gloo-history",
            "gloo-storage",
            "gloo-render",
        ] {
            assert!(
                !lock.contains(&format!("name = \"{unused}\"")),
                "{unused} is in Cargo.lock"
            );
        }
        // The ones in use are still there.
        for used in [
            "gloo-console",
            "gloo-timers",
            "gloo-utils",
            "gloo-events",
            "gloo-worker",
        ] {
            assert!(lock.contains(&format!("name = \"{used}\"")), "{used}");
        }
    }
}
