//! The layers of schedlab-core point one way:
//!
//! ```text
//!  rng, stats                      0   the one seeded PRNG; means and t-intervals
//!  byte_enum                      0   the one-byte enums' macro
//!  fxhash                         0   the deterministic hasher of the builders' maps
//!  json_words                     0   serde_json's refusals in words (links, machine files)
//!  cpumask                         1   the CPU bitset
//!  topology, release               2   machines; mainline releases
//!  patch                           3   seed patches, sched features, `6.6+cluster`
//!  sched_domain                    4   build_sched_domains() and its output formats
//!  wakeup                          5   select_task_rq_fair() … ttwu_queue_cond()
//!  cost                            6   the cost model and its per-machine parameters
//!  metrics, workload               7   what a run measures; what it runs (beside sim)
//!  sim                             8   the discrete-event simulator
//!  experiment                      9   runs and sweeps
//!  scenario                       10   the page's typed state and its links
//!  reproduce                      11   the seeds' tables (and the page's examples)
//! ```
//!
//! A module may use only modules of a lower layer (tests inside it too). This test
//! reads every source file of the library and fails, naming the file and line, when
//! one reaches up or sideways. The CLI (`src/bin/`) sits above everything.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

const LAYERS: &[(&str, u32)] = &[
    ("rng", 0),
    ("stats", 0),
    ("byte_enum", 0),
    ("fxhash", 0),
    ("json_words", 1),
    ("near", 0),
    ("cpumask", 1),
    ("topology", 2),
    ("release", 2),
    ("patch", 3),
    ("sched_domain", 4),
    ("wakeup", 5),
    ("cost", 6),
    ("metrics", 7),
    ("workload", 7),
    ("sim", 8),
    ("experiment", 9),
    ("scenario", 10),
    ("reproduce", 11),
    ("lesson", 12),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules named by `crate::…` paths in one line: `crate::a::b` gives
/// `a`, `crate::{a::x, b}` gives `a` and `b`.
fn crate_paths(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        // `schedlab_core::` and `$crate::` are not this crate's internal paths.
        let before = &rest[..i];
        let tail = &rest[i + "crate::".len()..];
        rest = tail;
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = tail.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_alphanumeric() || c == '_') => {
                        let ident: String = group[j..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        found.push(ident);
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let ident: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(ident);
        }
    }
    found
}

#[test]
fn lower_layers_never_use_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a component");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if module == "bin" || module == "lib" {
            continue;
        }
        let own = layer(&module)
            .unwrap_or_else(|| panic!("{}: module {module} has no layer in LAYERS", rel.display()));
        let text = std::fs::read_to_string(path).expect("readable");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for used in crate_paths(code) {
                if used == module {
                    continue;
                }
                checked += 1;
                match layer(&used) {
                    Some(l) if l < own => {}
                    Some(l) => wrong.push(format!(
                        "{}:{}: {module} (layer {own}) uses crate::{used} (layer {l})",
                        rel.display(),
                        n + 1
                    )),
                    None => wrong.push(format!(
                        "{}:{}: crate::{used} is not a module in LAYERS",
                        rel.display(),
                        n + 1
                    )),
                }
            }
        }
    }
    assert!(checked > 100, "the scan found only {checked} crate paths");
    assert!(
        wrong.is_empty(),
        "dependencies that point up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_path_reader_sees_groups_and_ignores_other_crates() {
    assert_eq!(crate_paths("use crate::sim::rng::Rng;"), ["sim"]);
    assert_eq!(
        crate_paths("use crate::{cpumask::{CpuId, CpuMask}, topology::Machine};"),
        ["cpumask", "topology"]
    );
    assert!(crate_paths("use schedlab_core::sim::Simulator;").is_empty());
    assert!(crate_paths("$crate::foo!()").is_empty());
}
