//! schedlab-web: the browser playground, a thin Yew shell over `schedlab-core`.
//!
//! Two wasm modules are built from this library, so that each carries only its side:
//! the page (`src/main.rs`, [`run_page`]: the Yew app, core's machine, sched domains and
//! wake-up decisions) and the simulation worker (`src/bin/schedlab-worker.rs`,
//! [`run_worker`]: core's simulator behind [`worker`]'s messages). The linker keeps in
//! each what its entry reaches, so the page module has no simulator and the worker
//! module no UI (docs/web.md, "Two modules"). Both sides name the same [`worker::Msg`]
//! and [`worker::Progress`] types, so they agree on the messages by construction. A
//! third module (`src/bin/schedlab-import.rs`) reads pasted machines, fetched the first
//! time one is loaded ([`machine_import`]).
//!
//! ```text
//!  main ─▶ App ─ ContextProvider<AppContext> ─┬─ Controls      (preset, release, CPU)
//!                                             ├─ MachineView   (packages → … → threads)
//!                                             └─ TabPanel ─ DomainTree / dmesg / debugfs
//!                                                           Wake-up / Simulate
//!  worker::SimWorker  (the worker module, in a Web Worker: one point of a simulation)
//! ```
//!
//! The UI never computes scheduling: `state/` asks core for the machine and its
//! sched domains and the components draw what comes back.

mod app;
mod components;
mod dom;
mod export;
mod format;
mod hooks;
mod line_diff;
mod live;
pub mod machine_import;
mod state;
mod timeline;
pub mod worker;

/// The page's entry: draws the app into the document's body.
pub fn run_page() {
    yew::Renderer::<app::App>::new().render();
}

/// A simulation worker's entry: answers the page's [`worker::Msg`]s.
pub fn run_worker() {
    worker::register();
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
