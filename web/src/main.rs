//! schedlab-web: the browser playground, a thin Yew shell over `schedlab-core`.
//!
//! ```text
//!  main ─▶ App ─ ContextProvider<AppContext> ─┬─ Controls      (preset, release, CPU)
//!                                             ├─ MachineView   (packages → … → threads)
//!                                             └─ TabPanel ─ DomainTree / dmesg / debugfs
//!                                                           Wake-up / Simulate
//!  worker::worker_main  (the same module in a Web Worker: one side of a simulation)
//! ```
//!
//! The UI never computes scheduling: `state.rs` asks core for the machine and its
//! sched domains and the components draw what comes back.

mod app;
mod components;
mod dom;
mod state;
mod worker;

fn main() {
    // The simulation workers load this same module (static/worker.js): no page there.
    if web_sys::window().is_none() {
        return;
    }
    yew::Renderer::<app::App>::new().render();
}
