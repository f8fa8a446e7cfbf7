//! The simulation workers' wasm module: core's simulator behind the page's messages
//! (`schedlab_web::worker`), without the Yew app. `static/worker.js` loads it in each
//! worker of the pool; scripts/dist builds it beside the page's module.

fn main() {
    schedlab_web::run_worker();
}
