//! The machine reader's wasm module: core's parsers for a pasted `lscpu`, sysfs dump,
//! `numactl -H` or JSON spec, without the Yew app (`schedlab_web::machine_import`).
//! static/boot.js imports it the first time the custom-machine form's Load is pressed;
//! scripts/dist builds it beside the page's module.

use wasm_bindgen::prelude::*;

/// One Load: `machine_import::reply`'s JSON of the spec, or core's reason, thrown.
#[wasm_bindgen]
pub fn import_machine(text: &str, arch: &str) -> Result<String, String> {
    schedlab_web::machine_import::reply(text, arch)
}

fn main() {}
