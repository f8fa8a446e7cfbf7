//! Reading a pasted machine ("Custom…": `lscpu -p`/`-e`, plain `lscpu` with `numactl
//! -H`, a sysfs dump, a JSON spec) lives in its own wasm module, fetched the first time
//! a visitor presses Load, not in the page's (docs/web.md, "Three modules"): core's
//! parsers, their error texts and the JSON reader's path tracking
//! (`serde_path_to_error`, with its own family of `MachineSpec`'s deserialisers) are
//! about 20 KB brotli that most visitors never use.
//!
//! ```text
//!  page: Load ─▶ load(text, arch) ─▶ static/boot.js schedlabImportMachine()
//!                                      import("../pkg-HASH/schedlab-import.js")  (once)
//!        import module (src/bin/schedlab-import.rs): import_machine = reply(text, arch)
//!                                      read(): core's load_machine + machine_to_spec
//!  page: ◀─ the spec's JSON, or core's reason thrown as a string ─▶ Action::CustomRead
//! ```
//!
//! A link never needs the module: it carries the machine as its spec, which the page
//! reads itself. The answer crosses as JSON text written and read by serde_json
//! (`float_roundtrip`), so the page gets the very spec the parsers built, bit for bit;
//! host tests call [`read`] directly.

use schedlab_core::topology::import::machine_to_spec;
use schedlab_core::topology::{load_machine, Arch, ImportHint, MachineSpec};

/// Reads a pasted machine into its spec, or says why not (core's error, verbatim).
pub fn read(text: &str, arch: Option<Arch>) -> Result<MachineSpec, String> {
    let hint = ImportHint {
        arch,
        ..ImportHint::NONE
    };
    load_machine(text, &hint)
        .map(|m| machine_to_spec(&m))
        .map_err(|e| e.to_string())
}

/// The import module's answer to one Load: the spec as JSON, or why not (which the
/// module throws as a string). `arch` is the form's choice, `""` for "from the text".
pub fn reply(text: &str, arch: &str) -> Result<String, String> {
    let arch = match arch {
        "arm64" => Some(Arch::Arm64),
        "x86" => Some(Arch::X86),
        _ => None,
    };
    let spec = read(text, arch)?;
    serde_json::to_string(&spec)
        .map_err(|e| format!("the machine's spec could not be written: {e}"))
}

/// The page's side of [`reply`]'s JSON: the page reads a spec as it reads a link's
/// (the same deserialisers).
pub fn from_reply(json: &str) -> Result<MachineSpec, String> {
    serde_json::from_str(json)
        .map_err(|e| format!("the machine reader's answer could not be read: {e}"))
}

/// What the form says when the reader's module could not be fetched or started.
pub fn load_failed(why: &str) -> String {
    format!(
        "The machine reader (a separate download, fetched the first time you press Load) \
         could not be loaded, so the page keeps its current machine: {why}. \
         Press Load to try again."
    )
}

/// Reads a pasted machine in the import module, fetching it the first time.
#[cfg(target_arch = "wasm32")]
pub async fn load(text: String, arch: Option<Arch>) -> Result<MachineSpec, String> {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        /// static/boot.js: imports and starts the module once, then calls it.
        #[wasm_bindgen(js_namespace = globalThis, js_name = schedlabImportMachine, catch)]
        fn import_machine(text: &str, arch: &str) -> Result<js_sys::Promise, JsValue>;
    }

    let arch = arch.map_or("", Arch::as_str);
    let answer = match import_machine(&text, arch) {
        Ok(promise) => wasm_bindgen_futures::JsFuture::from(promise).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(json) => from_reply(&json.as_string().unwrap_or_default()),
        // The module threw core's reason (a string); anything else is the fetch or
        // the start of the module failing (an Error).
        Err(e) => match e.as_string() {
            Some(why) => Err(why),
            None => Err(load_failed(&js_error_text(&e))),
        },
    }
}

/// A thrown JS value as text: an Error's message, else its string form.
#[cfg(target_arch = "wasm32")]
fn js_error_text(e: &wasm_bindgen::JsValue) -> String {
    use wasm_bindgen::JsCast;
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// Off the browser (host tests) the reader is right here.
#[cfg(not(target_arch = "wasm32"))]
pub async fn load(text: String, arch: Option<Arch>) -> Result<MachineSpec, String> {
    read(&text, arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LSCPU: &str = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n\
                         0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,0,0\n2,2,0,0,,2,2,1,0\n3,3,0,0,,3,3,1,0\n";

    #[test]
    fn the_reply_carries_the_very_spec_read_builds() {
        let want = read(LSCPU, Some(Arch::Arm64)).unwrap();
        assert_eq!(
            from_reply(&reply(LSCPU, "arm64").unwrap()),
            Ok(want.clone())
        );
        // The arch choice crosses: the same paste read as x86 is another spec.
        let x86 = from_reply(&reply(LSCPU, "x86").unwrap()).unwrap();
        assert_ne!(x86, want);
        assert_eq!(x86, read(LSCPU, Some(Arch::X86)).unwrap());
    }

    #[test]
    fn a_bad_paste_crosses_as_cores_error() {
        let want = read("this is not lscpu", None).unwrap_err();
        assert_eq!(reply("this is not lscpu", ""), Err(want));
    }

    #[test]
    fn a_garbled_answer_is_an_error_not_a_panic() {
        assert!(from_reply("{\"name\":")
            .unwrap_err()
            .contains("could not be read"));
        assert!(from_reply("").is_err());
    }
}
