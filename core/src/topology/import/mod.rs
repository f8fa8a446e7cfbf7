//! Importers: turn text a user pastes (the output of `lscpu -p`, `lscpu -e`, plain
//! `lscpu`, a sysfs topology dump, optionally followed by `numactl -H`, or a JSON
//! machine file) into a validated [`Machine`].
//!
//! ```text
//!  pasted text ─ sniff ─┬─ JSON machine file ──────────────── MachineSpec::build ──┐
//!                       ├─ lscpu -p ──────┐                                        │
//!                       ├─ lscpu -e ──────┼─ RawCpu per CPU ─┐                     ├─> Machine
//!                       ├─ lscpu summary ─┤                  ├─ assemble ─ build ──┘
//!                       └─ sysfs dump ────┘                  │
//!        numactl -H lines (anywhere) ─ node CPU lists + SLIT ┘
//! ```
//!
//! Every importer reduces its input to one `RawCpu` per online CPU carrying dense
//! ids (package, LLC, cluster, core) that are already unique machine-wide, plus the
//! node id the tool printed. `assemble()` then cross-checks the node lists against
//! `numactl -H`, renumbers nodes densely, picks the SLIT and hands an explicit
//! [`MachineSpec`](super::MachineSpec) to `build()`, so imported machines pass the same validation as
//! JSON files and presets. The formats and the assumptions are documented for users
//! in docs/machine-files.md.
//!
//! Nothing here panics on any input: every count read from the text is checked
//! against [`MAX_CPUS`](crate::cpumask::MAX_CPUS) before anything is sized from it (a proptest feeds arbitrary
//! and mutated text to [`load_machine`]).
//!
//! ```text
//!  mod.rs       load_machine(), ImportHint, what importers hand on (RawCpu, Parsed)
//!  sniff.rs     Format: which format a text is
//!  error.rs     ImportError
//!  missing.rs   the notes of what a text lacked; Missing finds them again
//!  assemble.rs  assemble(): RawCpus + numactl into a validated machine
//!  json.rs, lscpu/, sysfs.rs, numactl.rs   the formats' parsers
//! ```

mod assemble;
mod error;
mod json;
mod lscpu;
mod missing;
mod not_machine;
mod numactl;
mod sniff;
mod sysfs;

use std::collections::HashMap;
use std::hash::Hash;

use super::{Arch, KernelConfig, Machine};

pub(crate) use assemble::assemble;
pub use error::ImportError;
pub use json::{load_json, machine_to_spec};
pub use missing::Missing;
pub(crate) use missing::{
    NOTE_NO_CACHE_IDS, NOTE_NO_CLUSTERS_ARM64, NOTE_NO_DISTANCES, NOTE_NO_L2_COUNT,
    NOTE_NO_L3_COUNT, NOTE_SYSFS_CPUS_WITHOUT_CACHE, NOTE_SYSFS_LLC_SPANS_PACKAGES,
    NOTE_SYSFS_NO_CACHE_ROWS,
};
pub use numactl::NumaInfo;
use sniff::sniff_lines;
pub use sniff::{sniff, Format};

/// The largest text [`load_machine`] reads. `lscpu -p` of a 4096-CPU machine is about
/// 200 KiB and a sysfs dump under 1 MiB; the bound keeps a runaway paste from
/// freezing the web UI.
pub const MAX_INPUT_BYTES: usize = 4 << 20;

/// What the caller knows that the pasted text may not say. Every field is optional:
/// `None` means "read it from the text, or use the documented default".
///
/// There is deliberately no `Default` impl: use [`ImportHint::NONE`] to say "guess".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportHint {
    /// The topology code to model. `lscpu -p`/`-e` and sysfs dumps do not say which
    /// architecture they came from (a `Cluster` column exists on x86 too), so without
    /// a hint they are taken as x86; the plain `lscpu` summary has an `Architecture:`
    /// line, which is used unless this is set. Ignored for JSON (the file says).
    pub arch: Option<Arch>,
    /// The machine's name; defaults to the model name or the format.
    pub name: Option<String>,
    /// Kconfig; defaults to [`KernelConfig::SERVER`]. Ignored for JSON.
    pub config: Option<KernelConfig>,
    /// Plain `lscpu` only: how many cores share an LLC, when the summary does not
    /// count LLC instances (older lscpu prints one instance's size, not the count).
    pub cores_per_llc: Option<u32>,
    /// Plain `lscpu` only: how many cores share a cluster (arm64 PPTT cluster, x86
    /// L2), which the summary cannot show for arm64 at all.
    pub cores_per_cluster: Option<u32>,
}

impl ImportHint {
    /// Read everything from the text.
    pub const NONE: ImportHint = ImportHint {
        arch: None,
        name: None,
        config: None,
        cores_per_llc: None,
        cores_per_cluster: None,
    };

    /// Only the architecture is known.
    pub fn arch(arch: Arch) -> Self {
        ImportHint {
            arch: Some(arch),
            ..ImportHint::NONE
        }
    }
}

/// A numbered line: 1-based line number in the whole pasted text, and its text.
pub(crate) type Line<'a> = (usize, &'a str);

/// One online CPU as an importer read it. Ids are dense and machine-wide (each
/// importer folds the package into the LLC/cluster/core keys before interning, so
/// `lscpu --physical` ids that restart per socket stay distinct).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawCpu {
    pub cpu: u32,
    /// Where the CPU was read, for error messages.
    pub line: usize,
    pub package: u32,
    /// The node id as printed (may be sparse); `None` when the text has no node.
    pub node: Option<u32>,
    pub llc: u32,
    pub cluster: u32,
    pub core: u32,
}

/// What an importer of a per-CPU format read.
pub(crate) struct Parsed {
    pub cpus: Vec<RawCpu>,
    /// CPUs listed as offline (dropped, but remembered to explain numbering gaps).
    pub offline: Vec<u32>,
    pub arch: Arch,
    /// Node CPU lists and distances carried by the format itself (sysfs dumps).
    pub numa: Option<NumaInfo>,
    /// Assumptions made, for the machine's description.
    pub notes: Vec<String>,
    pub source: &'static str,
    pub model: Option<String>,
    /// `node_reclaim_distance` when the text shows the vendor sets it (AMD Zen: 32).
    pub node_reclaim_distance: Option<u8>,
    /// arm64 sysfs dumps whose last cache level is private to each CPU
    /// ([`crate::topology::Machine::no_shared_cache`]).
    pub no_shared_cache: bool,
}

/// Dense ids in first-seen order, so the same text always gives the same ids.
pub(crate) struct Interner<K> {
    map: HashMap<K, u32>,
}

impl<K: Hash + Eq> Interner<K> {
    pub fn new() -> Self {
        Interner {
            map: HashMap::new(),
        }
    }

    pub fn id(&mut self, key: K) -> u32 {
        let next = self.map.len() as u32;
        *self.map.entry(key).or_insert(next)
    }
}

pub(crate) fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Reads a pasted machine description in any supported format (see [`Format`]).
///
/// `numactl -H` lines may come before or after the `lscpu` text (a blank line between
/// them is customary but not needed); its node CPU lists are cross-checked against
/// lscpu's and its distance table becomes the SLIT.
pub fn load_machine(text: &str, hint: &ImportHint) -> Result<Machine, ImportError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ImportError::TooLarge { bytes: text.len() });
    }
    if text.trim().is_empty() {
        return Err(ImportError::Empty);
    }
    if text.trim_start().starts_with('{') {
        return load_json(text);
    }
    let lines: Vec<Line> = text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    let (rest, numa_lines) = numactl::split(&lines);
    let numa = if numa_lines.is_empty() {
        None
    } else {
        Some(numactl::parse(&numa_lines)?)
    };
    let parsed = match sniff_lines(&rest) {
        Some(Format::LscpuParse) => lscpu::parse_p(&rest, hint)?,
        Some(Format::LscpuExtended) => lscpu::parse_e(&rest, hint)?,
        Some(Format::LscpuSummary) => lscpu::parse_summary(&rest, hint, numa.as_ref())?,
        Some(Format::SysfsDump) => sysfs::parse(&rest, hint)?,
        Some(Format::Json | Format::Numactl) | None => {
            if numa.is_some()
                && rest
                    .iter()
                    .all(|(_, l)| l.trim().is_empty() || l.trim_start().starts_with('#'))
            {
                return Err(ImportError::NumactlOnly);
            }
            let (line, first) = rest
                .iter()
                .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                .copied()
                .unwrap_or((1, ""));
            return Err(ImportError::UnknownFormat {
                line,
                first: first.trim().chars().take(60).collect(),
            });
        }
    };
    assemble(parsed, numa, hint)
}

/// The architecture to use for formats that do not say, and a note when guessed.
pub(crate) fn arch_or_default(hint: &ImportHint, notes: &mut Vec<String>) -> Arch {
    match hint.arch {
        Some(a) => a,
        None => {
            notes.push("the text does not say the architecture: assumed x86".to_string());
            Arch::X86
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::assemble::list_of;
    use super::*;

    #[test]
    fn list_of_folds_ranges() {
        let s: BTreeSet<u32> = [0, 1, 2, 5, 7, 8].into_iter().collect();
        assert_eq!(list_of(&s), "0-2,5,7-8");
    }

    #[test]
    fn sniffs_each_format() {
        assert_eq!(sniff("{\"name\": 1}"), Some(Format::Json));
        assert_eq!(
            sniff("# CPU,Core,Socket,Node,,L1d,L1i,L2\n0,0,0,0,,0,0,0\n"),
            Some(Format::LscpuParse)
        );
        assert_eq!(
            sniff("CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE\n  0    0      0    0 0:0:0:0 yes\n"),
            Some(Format::LscpuExtended)
        );
        assert_eq!(
            sniff("Architecture: x86_64\nCPU(s): 4\n"),
            Some(Format::LscpuSummary)
        );
        assert_eq!(
            sniff("available: 1 nodes (0)\nnode 0 cpus: 0 1\n"),
            Some(Format::Numactl)
        );
        assert_eq!(sniff("hello"), None);
    }
}
