// A simulation worker for the Simulate tab. wasm-bindgen's `--target web` output is an
// ES module that must be initialised by hand, so this loader does it; the module's
// main() then finds itself in a worker and registers gloo-worker's SimWorker (see
// web/src/worker.rs). gloo-worker holds the page's messages until that handshake.
import("../pkg/schedlab-web.js").then((m) => m.default());
