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

// The custom-machine form's reader (web/src/machine_import.rs): its own module, fetched
// and started the first time a pasted machine is loaded, then kept. A failed fetch is
// not kept: the next Load asks again, under a new URL (a browser may remember a failed
// module import by its URL). Resolves to the spec as JSON; rejects with core's reason (a
// string) or the fetch's Error.
let importer;
let importTries = 0;
globalThis.schedlabImportMachine = (text, arch) => {
  if (!importer) {
    importTries += 1;
    const retry = importTries > 1 ? `?retry=${importTries}` : "";
    importer = import("../pkg/schedlab-import.js" + retry).then(async (m) => {
      await m.default();
      return m;
    });
    importer.catch(() => {
      importer = undefined;
    });
  }
  return importer.then((m) => m.import_machine(text, arch));
};
