//! schedlab-web: the browser playground, a thin Yew shell over `schedlab-core`.
//!
//! ```text
//!  main ─▶ App ─ ContextProvider<AppContext> ─┬─ Controls      (preset, release, CPU)
//!                                             ├─ MachineView   (packages → … → threads)
//!                                             └─ DomainTree / dmesg text for the chosen CPU
//! ```
//!
//! The UI never computes scheduling: `state.rs` asks core for the machine and its
//! sched domains and the components draw what comes back.

mod app;
mod components;
mod state;

fn main() {
    yew::Renderer::<app::App>::new().render();
}
