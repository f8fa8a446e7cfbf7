// A simulation worker for the Simulate tab. wasm-bindgen's `--target web` output is an
// ES module that must be initialised by hand, so this loader does it. The workers have
// their own module (web/src/bin/schedlab-worker.rs: the simulator, no UI), whose main()
// registers gloo-worker's SimWorker (see web/src/worker.rs). gloo-worker holds the
// page's messages until that handshake.
import("../pkg/schedlab-worker.js").then((m) => m.default());
