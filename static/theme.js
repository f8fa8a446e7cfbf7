// Applies the colour theme saved by the header's switch (web/src/components/
// theme_switch.rs) before the first paint: a classic script in <head>, not a module,
// so it runs before <body> is drawn. A file, not inline, for the page's CSP.
// "auto" (or nothing saved) follows the system's prefers-color-scheme.
try {
  const saved = localStorage.getItem("schedlab-theme");
  document.documentElement.dataset.theme =
    saved === "light" || saved === "dark" ? saved : "auto";
} catch (e) {
  // Storage refused (a privacy setting): follow the system.
  document.documentElement.dataset.theme = "auto";
}
