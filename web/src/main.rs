//! The page's wasm module: the Yew app (`schedlab_web::run_page`). The simulation
//! workers load the other module, `src/bin/schedlab-worker.rs`; scripts/dist builds
//! both.

fn main() {
    schedlab_web::run_page();
}
