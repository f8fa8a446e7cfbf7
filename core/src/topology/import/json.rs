//! JSON machine files ([`MachineSpec`]), with errors that say where and what.

use super::{ImportError, MAX_INPUT_BYTES};
use crate::topology::spec::CpuSpec;
use crate::topology::{Machine, MachineSpec, Numbering};

/// Parses and builds a JSON machine file. Errors carry the line, column and path
/// (`cpus[3].node`) of the offending value.
pub fn load_json(text: &str) -> Result<Machine, ImportError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ImportError::TooLarge { bytes: text.len() });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let spec: MachineSpec = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        json_error(e.into_inner(), path)
    })?;
    de.end().map_err(|e| json_error(e, String::new()))?;
    Ok(spec.build()?)
}

fn json_error(e: serde_json::Error, path: String) -> ImportError {
    let text = e.to_string();
    // serde_json appends " at line L column C", which the variant says itself.
    let msg = match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    ImportError::Json {
        line: e.line(),
        column: e.column(),
        path: if path == "." { String::new() } else { path },
        msg,
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
