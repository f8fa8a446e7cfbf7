// Starts the page: wasm-bindgen's `--target web` module, initialised by hand. A file,
// not an inline script, so the Content-Security-Policy in index.html can say
// script-src 'self' (plus 'wasm-unsafe-eval' for compiling the module).
import init from "../pkg/schedlab-web.js";

// index.html shows #loading until the module has started (the app then draws itself).
const loading = document.getElementById("loading");
init()
  .then(() => {
    // scripts/page-figures.py reads this mark: the moment the app is running.
    performance.mark("schedlab-started");
    loading?.remove();
  })
  .catch((e) => {
    const p = document.createElement("p");
    p.className = "error";
    p.textContent = "schedlab could not start: " + e;
    if (loading) loading.replaceWith(p);
    else document.body.append(p);
  });
