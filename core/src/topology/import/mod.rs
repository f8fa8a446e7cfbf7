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
//! [`MachineSpec`] to `build()`, so imported machines pass the same validation as
//! JSON files and presets. The formats and the assumptions are documented for users
//! in docs/machine-files.md.
//!
//! Nothing here panics on any input: every count read from the text is checked
//! against [`MAX_CPUS`] before anything is sized from it (a proptest feeds arbitrary
//! and mutated text to [`load_machine`]).

mod json;
mod lscpu;
mod numactl;
mod sysfs;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use thiserror::Error;

use super::spec::CpuSpec;
use super::{Arch, KernelConfig, Machine, MachineSpec, Numbering, TopologyError};
use crate::cpumask::MAX_CPUS;

pub use json::{load_json, machine_to_spec};
pub use numactl::NumaInfo;

/// The largest text [`load_machine`] reads. `lscpu -p` of a 4096-CPU machine is about
/// 200 KiB and a sysfs dump under 1 MiB; the bound keeps a runaway paste from
/// freezing the web UI.
pub const MAX_INPUT_BYTES: usize = 4 << 20;

/// The formats [`load_machine`] recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// A JSON machine file ([`MachineSpec`]).
    Json,
    /// `lscpu -p` / `lscpu --parse[=LIST]`: `# CPU,Core,Socket,Node,,L1d,L1i,L2,L3` header.
    LscpuParse,
    /// `lscpu -e` / `lscpu --extended`: `CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE ...`.
    LscpuExtended,
    /// Plain `lscpu`: `Architecture: ...`, `CPU(s): ...`, `NUMA node0 CPU(s): ...`.
    LscpuSummary,
    /// A sysfs topology dump: `cpuN <physical_package_id> <die_id> ...` rows, with
    /// optional `nodeN cpulist=... distance=...` and `cpuN indexI level=...` rows.
    SysfsDump,
    /// `numactl -H` on its own (nodes and distances but no cores: not enough).
    Numactl,
}

impl Format {
    pub fn describe(self) -> &'static str {
        match self {
            Format::Json => "a JSON machine file",
            Format::LscpuParse => "`lscpu -p` output",
            Format::LscpuExtended => "`lscpu -e` output",
            Format::LscpuSummary => "plain `lscpu` output",
            Format::SysfsDump => "a sysfs topology dump",
            Format::Numactl => "`numactl -H` output",
        }
    }
}

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

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ImportError {
    #[error("the text is empty: paste the output of `lscpu -p` or `lscpu -e` (optionally followed by `numactl -H`), or a JSON machine file")]
    Empty,
    #[error("the text is {bytes} bytes; machine descriptions are at most {MAX_INPUT_BYTES} bytes")]
    TooLarge { bytes: usize },
    #[error("line {line}: cannot tell what this is ({first:?}); paste the output of `lscpu -p`, `lscpu -e` or `numactl -H`, a sysfs topology dump, or a JSON machine file")]
    UnknownFormat { line: usize, first: String },
    #[error("line {line}, column {column}{}: {msg}", at_path(path))]
    Json {
        line: usize,
        column: usize,
        /// Where in the document, like `cpus[3].node`; empty at the top level.
        path: String,
        msg: String,
    },
    #[error("{format} needs its header line ({example}); it was not found")]
    NoHeader {
        format: &'static str,
        example: &'static str,
    },
    #[error("{format}: the header has no {column} column")]
    MissingColumn {
        format: &'static str,
        column: &'static str,
    },
    #[error(
        "line {line}: expected {expected} {sep}-separated fields like the header, found {found}"
    )]
    FieldCount {
        line: usize,
        expected: usize,
        found: usize,
        sep: &'static str,
    },
    #[error("line {line}: {column} is {value:?}; expected {expected}")]
    BadField {
        line: usize,
        column: String,
        value: String,
        expected: &'static str,
    },
    #[error("line {line}: {what}")]
    BadLine { line: usize, what: String },
    #[error("line {line}: CPU {cpu} {what}")]
    Impossible { line: usize, cpu: u32, what: String },
    #[error("line {line}: CPU {cpu} appears twice")]
    DuplicateCpu { line: usize, cpu: u32 },
    #[error("CPU {missing} is not listed; CPU numbers must run from 0 without gaps")]
    CpuGap { missing: u32 },
    #[error("CPU {cpu} is offline but CPU {above} is online; schedlab numbers CPUs 0..n-1 without gaps, so bring CPU {cpu} online (echo 1 > /sys/devices/system/cpu/cpu{cpu}/online) and capture again")]
    OfflineGap { cpu: u32, above: u32 },
    #[error("no online CPU is listed")]
    NoOnlineCpus,
    #[error("the machine has {cpus} CPUs; schedlab models at most {MAX_CPUS}")]
    TooManyCpus { cpus: u64 },
    #[error("this is plain `lscpu` output, which {why}; paste `lscpu -p` or `lscpu -e` instead")]
    SummaryNotEnough { why: String },
    #[error("the import hint does not fit the text: {what}")]
    BadHint { what: String },
    #[error("`numactl -H` gives nodes and distances but no cores or caches: paste `lscpu -p` or `lscpu -e` first, then `numactl -H` after a blank line")]
    NumactlOnly,
    #[error("node {node}: lscpu lists CPUs {lscpu:?} but numactl lists {numactl:?}; paste both from the same boot")]
    NodeMismatch {
        node: u32,
        lscpu: String,
        numactl: String,
    },
    #[error("node {node} has CPUs but no row in the `node distances:` table")]
    NoDistanceRow { node: u32 },
    #[error("the machine description is inconsistent: {0}")]
    Topology(#[from] TopologyError),
    /// A JSON machine file's inconsistency, at the line of the entry it names.
    #[error("line {line}: the machine description is inconsistent: {source}")]
    TopologyAt {
        line: usize,
        #[source]
        source: TopologyError,
    },
}

fn at_path(path: &str) -> String {
    if path.is_empty() || path == "." {
        String::new()
    } else {
        format!(" (at `{path}`)")
    }
}

// The notes an importer writes when the text lacks something the kernel uses; each
// ends up in the machine's description, which is how [`Missing::in_description`]
// finds them again (in a link, too).
pub(crate) const NOTE_NO_CLUSTERS_ARM64: &str =
    "plain lscpu does not show clusters: assumed none, so the kernel's CLS level \
     (e.g. Kunpeng 920's 4-CPU clusters) is missing; paste `lscpu -e` or `lscpu -p` \
     with a CLUSTER column, or the sysfs topology dump, to keep it";
pub(crate) const NOTE_NO_L2_COUNT: &str = "assumed a private L2 per core (no clusters)";
pub(crate) const NOTE_NO_CACHE_IDS: &str = "no cache ids: assumed the LLC spans the package";
pub(crate) const NOTE_NO_L3_COUNT: &str = "assumed one LLC per NUMA node";
pub(crate) const NOTE_SYSFS_LLC_SPANS_PACKAGES: &str = "the cache rows' shared_cpu_list spans packages (an ACPI PPTT without cache entries does that): no valid LLC, so the LLC is package ∩ node, as arm64's cpu_coregroup_mask() falls back to";
pub(crate) const NOTE_SYSFS_NO_CACHE_ROWS: &str =
    "no cache rows: assumed the LLC is package ∩ node";
pub(crate) const NOTE_SYSFS_CPUS_WITHOUT_CACHE: &str =
    "CPUs that no cache row covers: assumed their LLC is package ∩ node";
pub(crate) const NOTE_NO_DISTANCES: &str =
    "no `numactl -H` distance table: assumed SLIT 10 local, 12 within a package, 20 across";

/// Something the kernel uses that a pasted text did not carry, so the importer
/// assumed it and said so in the machine's description. The page offers the topology
/// designer to fill it in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Cluster ids (arm64's PPTT clusters, x86's L2 sharing): the CLS level.
    Clusters,
    /// The SLIT (`numactl -H`'s distance table): the NUMA levels.
    Distances,
    /// Cache sharing (the LLC): the MC level and `sd_llc`.
    Caches,
}

impl Missing {
    pub const ALL: [Missing; 3] = [Missing::Clusters, Missing::Distances, Missing::Caches];

    /// What is missing, for a sentence ("no cluster ids").
    pub fn what(self) -> &'static str {
        match self {
            Missing::Clusters => "cluster ids (the CLS level)",
            Missing::Distances => "NUMA distances (the NUMA levels)",
            Missing::Caches => "cache sharing (which CPUs share the LLC: the MC level)",
        }
    }

    fn notes(self) -> &'static [&'static str] {
        match self {
            Missing::Clusters => &[NOTE_NO_CLUSTERS_ARM64, NOTE_NO_L2_COUNT],
            Missing::Distances => &[NOTE_NO_DISTANCES],
            Missing::Caches => &[
                NOTE_NO_CACHE_IDS,
                NOTE_NO_L3_COUNT,
                NOTE_SYSFS_LLC_SPANS_PACKAGES,
                NOTE_SYSFS_NO_CACHE_ROWS,
                NOTE_SYSFS_CPUS_WITHOUT_CACHE,
            ],
        }
    }

    /// What an imported machine's description says was assumed. The description
    /// holds each note as a sentence (first letter capitalised), so the note is
    /// matched without its first character.
    pub fn in_description(description: &str) -> Vec<Missing> {
        Missing::ALL
            .into_iter()
            .filter(|m| {
                m.notes().iter().any(|note| {
                    let rest = note.get(1..).unwrap_or(note);
                    description.contains(rest)
                })
            })
            .collect()
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

/// Which format the text is, judged from its first meaningful lines.
pub fn sniff(text: &str) -> Option<Format> {
    if text.trim_start().starts_with('{') {
        return Some(Format::Json);
    }
    let lines: Vec<Line> = text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    let (rest, numa) = numactl::split(&lines);
    match sniff_lines(&rest) {
        Some(f) => Some(f),
        None if !numa.is_empty() => Some(Format::Numactl),
        None => None,
    }
}

fn sniff_lines(lines: &[Line]) -> Option<Format> {
    if lines.iter().any(|(_, l)| lscpu::is_parse_header(l)) {
        return Some(Format::LscpuParse);
    }
    if lines.iter().any(|(_, l)| lscpu::is_summary_line(l)) {
        return Some(Format::LscpuSummary);
    }
    let (_, first) = lines
        .iter()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    let first = first.trim();
    let mut words = first.split_whitespace();
    let head = words.next().unwrap_or("");
    if head == "CPU" && words.next().is_some() {
        return Some(Format::LscpuExtended);
    }
    if sysfs::is_cpu_row(first) {
        return Some(Format::SysfsDump);
    }
    // `lscpu -p` data without its header: recognised so the error can ask for it.
    if first.contains(',') && first.split(',').next().is_some_and(is_number) {
        return Some(Format::LscpuParse);
    }
    None
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

/// Turns per-CPU records into a validated machine: checks the numbering, takes nodes
/// from `numactl -H` where lscpu has none, cross-checks them where it has, renumbers
/// nodes densely (memory-only nodes are dropped: the scheduler never sees them) and
/// picks the SLIT.
pub(crate) fn assemble(
    mut parsed: Parsed,
    numactl: Option<NumaInfo>,
    hint: &ImportHint,
) -> Result<Machine, ImportError> {
    // numactl -H wins over a dump's own node rows: it is what the user pasted last.
    let numa = numactl.or(parsed.numa.take());
    let cpus = &mut parsed.cpus;
    if cpus.len() > MAX_CPUS as usize {
        return Err(ImportError::TooManyCpus {
            cpus: cpus.len() as u64,
        });
    }
    cpus.sort_by_key(|c| c.cpu);
    for w in cpus.windows(2) {
        if w[0].cpu == w[1].cpu {
            return Err(ImportError::DuplicateCpu {
                line: w[1].line,
                cpu: w[1].cpu,
            });
        }
    }
    if cpus.is_empty() {
        return Err(ImportError::NoOnlineCpus);
    }
    for (i, c) in cpus.iter().enumerate() {
        let i = i as u32;
        if c.cpu != i {
            // Offline CPUs at the top are dropped quietly (nosmt, maxcpus=); a hole
            // in the middle would renumber every CPU above it.
            return Err(if parsed.offline.contains(&i) {
                ImportError::OfflineGap {
                    cpu: i,
                    above: c.cpu,
                }
            } else {
                ImportError::CpuGap { missing: i }
            });
        }
    }
    if !parsed.offline.is_empty() {
        parsed.notes.push(format!(
            "{} offline CPU(s) above CPU {} were left out",
            parsed.offline.len(),
            cpus.len() - 1
        ));
    }

    let numa_nodes: Vec<(u32, BTreeSet<u32>)> = numa
        .as_ref()
        .map(|n| {
            n.node_cpus
                .iter()
                .filter(|(_, list)| !list.is_empty())
                .map(|(node, list)| (*node, list.iter().copied().collect()))
                .collect()
        })
        .unwrap_or_default();

    if cpus.iter().all(|c| c.node.is_none()) {
        if numa_nodes.is_empty() {
            for c in cpus.iter_mut() {
                c.node = Some(0);
            }
        } else {
            let mut node_of = HashMap::new();
            for (node, list) in &numa_nodes {
                for &cpu in list {
                    node_of.insert(cpu, *node);
                }
            }
            for c in cpus.iter_mut() {
                c.node = Some(*node_of.get(&c.cpu).ok_or(ImportError::NodeMismatch {
                    node: 0,
                    lscpu: format!("CPU {}", c.cpu),
                    numactl: "no node listing it".to_string(),
                })?);
            }
        }
    }
    let mut by_node: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for c in cpus.iter() {
        let node = c.node.ok_or_else(|| ImportError::BadLine {
            line: c.line,
            what: format!("CPU {} has no NUMA node but other CPUs do", c.cpu),
        })?;
        by_node.entry(node).or_default().insert(c.cpu);
    }
    if !numa_nodes.is_empty() {
        let theirs: BTreeMap<u32, &BTreeSet<u32>> =
            numa_nodes.iter().map(|(n, s)| (*n, s)).collect();
        let all: BTreeSet<u32> = by_node.keys().chain(theirs.keys()).copied().collect();
        for node in all {
            let ours = by_node.get(&node);
            let other = theirs.get(&node).copied();
            if ours != other {
                return Err(ImportError::NodeMismatch {
                    node,
                    lscpu: ours.map(list_of).unwrap_or_default(),
                    numactl: other.map(list_of).unwrap_or_default(),
                });
            }
        }
    }
    check_nesting(cpus)?;
    let dense: HashMap<u32, u16> = by_node
        .keys()
        .enumerate()
        .map(|(i, &n)| (n, i as u16))
        .collect();
    let numa_distance = match numa.as_ref().and_then(|n| n.distances.as_ref()) {
        Some((header, table)) => {
            let idx = |node: u32| {
                header
                    .iter()
                    .position(|&h| h == node)
                    .ok_or(ImportError::NoDistanceRow { node })
            };
            let picks: Vec<usize> = by_node.keys().map(|&n| idx(n)).collect::<Result<_, _>>()?;
            Some(
                picks
                    .iter()
                    .map(|&r| picks.iter().map(|&c| table[r][c]).collect())
                    .collect(),
            )
        }
        None => {
            if by_node.len() > 1 {
                parsed.notes.push(NOTE_NO_DISTANCES.to_string());
            }
            None
        }
    };

    let list: Vec<CpuSpec> = cpus
        .iter()
        .map(|c| CpuSpec {
            cpu: c.cpu,
            package: c.package,
            // by_node was built from these very nodes.
            node: c.node.and_then(|n| dense.get(&n).copied()).unwrap_or(0),
            llc: c.llc,
            cluster: Some(c.cluster),
            core: Some(c.core),
            capacity: 1024,
            asym_prio: 0,
        })
        .collect();
    let name = hint
        .name
        .clone()
        .or_else(|| parsed.model.clone())
        .unwrap_or_else(|| format!("imported ({})", parsed.source));
    let mut description = format!("Imported from {}", parsed.source);
    if let Some(model) = &parsed.model {
        description.push_str(&format!(" of {model}"));
    }
    description.push('.');
    for note in &parsed.notes {
        // Notes are clauses; the description reads as sentences.
        let mut chars = note.chars();
        if let Some(first) = chars.next() {
            description.push(' ');
            description.extend(first.to_uppercase());
            description.push_str(chars.as_str());
            description.push('.');
        }
    }
    // Start from regular() and fill in, rather than a struct literal, so fields added
    // to MachineSpec later keep their defaults here.
    let mut spec = MachineSpec::regular(
        &name,
        &description,
        parsed.arch,
        1,
        1,
        1,
        1,
        1,
        1,
        Numbering::Linear,
    );
    spec.packages = None;
    spec.cores_per_llc = None;
    spec.config = hint.config;
    spec.numa_distance = numa_distance;
    spec.cpus = Some(list);
    spec.node_reclaim_distance = parsed.node_reclaim_distance;
    spec.no_shared_cache = parsed.no_shared_cache;
    Ok(spec.build()?)
}

/// The levels nest as the kernel's topology code expects: SMT siblings share a
/// package, a node, an LLC and a cluster; cluster siblings share an LLC; LLC siblings
/// share a package (`topology_span_sane()`, x86's `topology_sane()` checks for SMT and
/// LLC siblings, arm64's `update_siblings_masks()` linking only CPUs of one package).
/// An LLC may span nodes (AMD NPS, Intel SNC without the LLC split), so that pair is
/// not checked. Said with the line of the offending CPU and of the CPU it disagrees
/// with; `MachineSpec::build()` checks the same on the ids afterwards.
fn check_nesting(cpus: &[RawCpu]) -> Result<(), ImportError> {
    type Key = fn(&RawCpu) -> u64;
    let core: Key = |c| c.core.into();
    let cluster: Key = |c| c.cluster.into();
    let llc: Key = |c| c.llc.into();
    let package: Key = |c| c.package.into();
    let node: Key = |c| c.node.map_or(u64::MAX, u64::from);
    let checks: [(&str, Key, &str, Key); 7] = [
        ("is an SMT sibling of", core, "package", package),
        ("is an SMT sibling of", core, "NUMA node", node),
        ("is an SMT sibling of", core, "LLC", llc),
        ("is an SMT sibling of", core, "cluster", cluster),
        ("shares a cluster with", cluster, "LLC", llc),
        ("shares a cluster with", cluster, "package", package),
        ("shares an LLC with", llc, "package", package),
    ];
    for (rel, inner, outer_name, outer) in checks {
        let mut first: HashMap<u64, &RawCpu> = HashMap::new();
        for c in cpus {
            let f = *first.entry(inner(c)).or_insert(c);
            if outer(f) != outer(c) {
                return Err(ImportError::Impossible {
                    line: c.line,
                    cpu: c.cpu,
                    what: format!(
                        "{rel} CPU {} (line {}) but is in a different {outer_name}",
                        f.cpu, f.line
                    ),
                });
            }
        }
    }
    Ok(())
}

fn list_of(set: &BTreeSet<u32>) -> String {
    let mut out = String::new();
    let mut iter = set.iter().copied().peekable();
    while let Some(lo) = iter.next() {
        let mut hi = lo;
        while iter.peek() == Some(&(hi + 1)) {
            hi += 1;
            iter.next();
        }
        if !out.is_empty() {
            out.push(',');
        }
        if hi == lo {
            out.push_str(&lo.to_string());
        } else {
            out.push_str(&format!("{lo}-{hi}"));
        }
    }
    out
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
