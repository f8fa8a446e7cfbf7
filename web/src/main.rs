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
mod state;
mod worker;

fn main() {
    // One module, two entries: the simulation workers load it too (static/worker.js).
    if worker::in_worker() {
        worker::register();
    } else {
        yew::Renderer::<app::App>::new().render();
    }
}
