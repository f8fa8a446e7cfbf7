// A simulation worker for the Simulate tab: loads the page's wasm module and hands
// it the messages (see web/src/worker.rs). Messages that arrive while the module
// loads are kept and passed on, so the page may post as soon as it creates us.
const early = [];
self.onmessage = (e) => early.push(e.data);
import("../pkg/schedlab-web.js")
  .then(async (m) => {
    await m.default();
    m.worker_main(early);
  })
  .catch((e) => {
    self.postMessage(JSON.stringify({ load_error: String(e) }));
  });
