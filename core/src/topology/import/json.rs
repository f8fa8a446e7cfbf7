//! JSON machine files ([`MachineSpec`]), with errors that say where and what.

use serde_json::error::Category;

use super::not_machine::other_schedlab_file;
use super::{ImportError, MAX_INPUT_BYTES};
use crate::json_words::{
    char_before, data_error, expected_text, offset, value_not_a_name, DataError, VARIANT,
};
use crate::topology::spec::CpuSpec;
use crate::topology::{Machine, MachineSpec, Numbering, TopologyError};

/// Parses and builds a JSON machine file. Errors carry the line, column and path
/// (`cpus[3].node`) of the offending value; an inconsistent machine's error carries
/// the line of the entry it names (the CPU's `cpus[i]`, the distance table's row) or
/// else of the top-level key it concerns.
pub fn load_json(text: &str) -> Result<Machine, ImportError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ImportError::TooLarge { bytes: text.len() });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let spec: MachineSpec = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        if let Some(what) = other_schedlab_file(text) {
            return ImportError::OtherFile(what);
        }
        let path = e.path().to_string();
        json_error(text, e.into_inner(), path)
    })?;
    de.end().map_err(|e| json_error(text, e, String::new()))?;
    spec.build().map_err(|e| match error_line(text, &spec, &e) {
        Some(line) => ImportError::TopologyAt { line, source: e },
        None => ImportError::Topology(e),
    })
}

/// The line of `text` an inconsistency of `spec` is about: the `cpus` entry of the
/// CPU it names (the second entry when a CPU is listed twice), the distance table's
/// row, or the top-level key of the count it names.
fn error_line(text: &str, spec: &MachineSpec, e: &TopologyError) -> Option<usize> {
    let lines = Lines::scan(text);
    let entry_of_cpu = |cpu: u32| {
        let list = spec.cpus.as_ref()?;
        let mut at = list.iter().enumerate().filter(|(_, c)| c.cpu == cpu);
        let first = at.next().map(|(i, _)| i);
        let i = at.next().map(|(i, _)| i).or(first)?;
        lines.element("cpus", i)
    };
    let key = |k: &str| lines.key(k);
    match e {
        TopologyError::Inconsistent { cpu, .. } => entry_of_cpu(*cpu).or_else(|| key("cpus")),
        TopologyError::TooLarge { field, .. } if field.starts_with("cpus[") => {
            let i: usize = field["cpus[".len()..].split(']').next()?.parse().ok()?;
            lines.element("cpus", i)
        }
        TopologyError::SlitNotSquare { row, .. } => lines.element("numa_distance", *row),
        TopologyError::SlitDiagonal { node, .. } => lines.element("numa_distance", *node),
        TopologyError::SlitRemoteTooSmall { a, .. } => lines.element("numa_distance", *a),
        TopologyError::SlitWrongSize { .. } => key("numa_distance"),
        TopologyError::NoCpus | TopologyError::TooManyCpus { .. } => key("cpus"),
        TopologyError::ClusterDoesNotDivide { .. } => key("cores_per_cluster"),
        TopologyError::DeviceTreeOnX86(_) => key("firmware"),
        TopologyError::ZeroCount { what } | TopologyError::DoesNotDivide { inner: what, .. } => {
            key(what.split([' ', '(']).next()?)
        }
        TopologyError::TooLarge { field, .. } => key(field.split([' ', '(']).next()?),
        _ => None,
    }
}

/// Where the top-level keys of a JSON object, and the elements of its top-level
/// arrays, start (1-based lines): a scan of the text, which has already parsed.
struct Lines {
    /// (key, line of the key, lines of the elements if its value is an array).
    keys: Vec<(String, usize, Vec<usize>)>,
}

impl Lines {
    fn scan(text: &str) -> Lines {
        let mut keys: Vec<(String, usize, Vec<usize>)> = Vec::new();
        let (mut depth, mut line) = (0u32, 1usize);
        // At depth 1 a string is a key when it follows `{` or `,`.
        let mut expect_key = false;
        // At depth 2 inside a top-level array, a value starts an element.
        let mut in_array = false;
        let mut expect_element = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let element_start = depth == 2 && in_array && expect_element && !c.is_whitespace();
            if element_start && c != ']' {
                if let Some(k) = keys.last_mut() {
                    k.2.push(line);
                }
                expect_element = false;
            }
            match c {
                '\n' => line += 1,
                '"' => {
                    let start_line = line;
                    let mut s = String::new();
                    while let Some(d) = chars.next() {
                        match d {
                            '\\' => {
                                chars.next();
                            }
                            '"' => break,
                            '\n' => line += 1,
                            d => s.push(d),
                        }
                    }
                    if depth == 1 && expect_key {
                        keys.push((s, start_line, Vec::new()));
                        expect_key = false;
                    }
                }
                '{' | '[' => {
                    depth += 1;
                    if depth == 1 {
                        expect_key = c == '{';
                    } else if depth == 2 {
                        in_array = c == '[';
                        expect_element = in_array;
                    }
                }
                '}' | ']' => depth = depth.saturating_sub(1),
                ',' if depth == 1 => expect_key = true,
                ',' if depth == 2 && in_array => expect_element = true,
                _ => {}
            }
        }
        Lines { keys }
    }

    fn key(&self, key: &str) -> Option<usize> {
        self.keys.iter().rev().find(|k| k.0 == key).map(|k| k.1)
    }

    fn element(&self, key: &str, i: usize) -> Option<usize> {
        let k = self.keys.iter().rev().find(|k| k.0 == key)?;
        k.2.get(i).copied()
    }
}

/// serde_json's error `e` at `path` (`serde_path_to_error`'s, `?` where it had no key
/// yet) in words: what is wrong, at which field, what it must hold.
fn json_error(text: &str, e: serde_json::Error, path: String) -> ImportError {
    let said = e.to_string();
    // serde_json appends " at line L column C", which the variant says itself.
    let msg = match said.rfind(" at line ") {
        Some(i) => &said[..i],
        None => &said[..],
    };
    // `cpus[0].?`: inside `cpus[0]`, before its next key was read.
    let path = path.trim_end_matches(".?").trim_end_matches('?');
    let path = if path == "." { "" } else { path };
    let in_path = |words: &str| match path {
        "" => words.to_string(),
        p => format!("{words} in `{p}`"),
    };
    let words = match e.classify() {
        Category::Eof => format!(
            "{} (is the end of the file missing?)",
            in_path("the text ends early")
        ),
        Category::Syntax | Category::Io if msg == "trailing characters" => {
            "there is more text after the machine's closing `}`".to_string()
        }
        Category::Syntax | Category::Io if msg == "recursion limit exceeded" => {
            in_path("lists and objects are nested too deep to read")
        }
        Category::Syntax | Category::Io => {
            // serde_json's enums take only a string or an object and call any other
            // value "expected value": where a valid JSON value stands, it is of the
            // wrong kind.
            let before = char_before(text, offset(text, e.line(), e.column()));
            match value_not_a_name(msg, &text[before..]) {
                Some(found) if !path.is_empty() => format!(
                    "the field `{path}` must be {}, found {found}",
                    expected_text(VARIANT)
                ),
                _ => in_path(&format!("it is not valid JSON: {msg}")),
            }
        }
        Category::Data => data_words(msg, path),
    };
    ImportError::Json {
        line: e.line(),
        column: e.column(),
        path: path.to_string(),
        msg: words,
    }
}

/// A value serde refused at `path`, as a link's field is told (`json_words`).
fn data_words(msg: &str, path: &str) -> String {
    let join = |name: &str| match path {
        "" => name.to_string(),
        p => format!("{p}.{name}"),
    };
    match data_error(msg) {
        Some(DataError::Missing(name)) => {
            format!("the field `{}` is missing (it is required)", join(name))
        }
        Some(DataError::Duplicate(name)) => {
            // Told at the object's end, or at the key itself.
            let path = if path == name || path.ends_with(&format!(".{name}")) {
                path.to_string()
            } else {
                join(name)
            };
            format!("the field `{path}` is given twice")
        }
        // serde_path_to_error's path ends at the unknown key itself.
        Some(DataError::Unknown { name, known }) => {
            let parent = path.strip_suffix(name).unwrap_or(path);
            let parent = parent.trim_end_matches('.');
            let whose = match parent {
                "" => "a machine file".to_string(),
                p => format!("`{p}`"),
            };
            format!("the field `{path}` is not one schedlab knows; {whose} has {known}")
        }
        Some(DataError::Wrong(problem)) if !path.is_empty() => {
            format!("the field `{path}` {problem}")
        }
        Some(DataError::Wrong(problem)) => format!("a machine file {problem}"),
        None if path.is_empty() => msg.to_string(),
        None => format!("the field `{path}` is not valid: {msg}"),
    }
}

/// The explicit-`cpus` description of a machine, so an imported machine can be saved
/// as a JSON machine file and loaded back unchanged.
pub fn machine_to_spec(m: &Machine) -> MachineSpec {
    // regular() then fill in, so fields added to MachineSpec later keep defaults.
    let mut spec = MachineSpec::regular(
        &m.name,
        &m.description,
        m.arch,
        1,
        1,
        1,
        1,
        1,
        1,
        Numbering::Linear,
    );
    spec.hybrid = m.hybrid;
    spec.config = Some(m.config);
    spec.packages = None;
    spec.cores_per_llc = None;
    spec.numa_distance = Some(m.numa_distance.clone());
    spec.node_reclaim_distance = Some(m.node_reclaim_distance);
    spec.no_shared_cache = m.no_shared_cache;
    spec.firmware = m.firmware;
    spec.cpus = Some(
        m.cpus
            .iter()
            .enumerate()
            .map(|(i, t)| CpuSpec {
                cpu: i as u32,
                package: t.package,
                node: t.node.0,
                llc: t.llc,
                cluster: Some(t.cluster),
                core: Some(t.core),
                capacity: t.capacity,
                asym_prio: t.asym_prio,
            })
            .collect(),
    );
    spec
}
