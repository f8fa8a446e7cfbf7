//! The topology designer's form: a machine as counts per level, an architecture, the
//! Kconfig options that change the domains, per-CPU capacities and the NUMA distance
//! table (with memory-only nodes after the CPUs' ones, symmetric or not:
//! [`Slit`]), kept as the text the user typed. [`Draft::spec`] turns it into core's
//! [`MachineSpec`] (the regular form) and checks it with `MachineSpec::build()`; each
//! error is tied to the field that caused it ([`Field`]), so the form shows it there
//! while the page keeps the last machine that built. The custom workload's work and
//! sleep distributions are edited here too, read by core's `Dist::parse`.
//!
//! Only a regular machine can be drawn as counts: [`Designer::for_machine`] starts from
//! a preset's spec or a custom machine's compact form (`MachineSpec::compact`) and says
//! why when there is none (hybrid parts, uneven levels, a numbering neither linear nor
//! SMT-split).

use std::collections::BTreeMap;

use schedlab_core::topology::{
    Arch, Firmware, KernelConfig, Machine, MachineSpec, Numbering, TopologyError,
};
use schedlab_core::workload::{defaults, Dist, Workload};

pub use super::designer_slit::{Layout, Slit};

/// The most CPUs the designer builds: each keystroke rebuilds the machine, its
/// domains and the drawing, which takes about 1 s at this size in the page (measured
/// in docs/web.md). Larger machines open from a JSON file or a link.
pub const MAX_DESIGN_CPUS: u64 = 1024;

/// The most NUMA nodes the designer builds, memory-only ones included: the distance
/// grid is nodes² fields.
pub const MAX_DESIGN_NODES: u64 = 32;

/// The longest machine name the designer takes.
pub const MAX_NAME_CHARS: usize = 80;

/// The designer's count fields, outermost first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Count {
    Sockets,
    NodesPerSocket,
    LlcsPerNode,
    ClustersPerLlc,
    CoresPerCluster,
    ThreadsPerCore,
}

impl Count {
    pub const ALL: [Count; 6] = [
        Count::Sockets,
        Count::NodesPerSocket,
        Count::LlcsPerNode,
        Count::ClustersPerLlc,
        Count::CoresPerCluster,
        Count::ThreadsPerCore,
    ];

    /// The field's label.
    pub fn label(self) -> &'static str {
        match self {
            Count::Sockets => "sockets",
            Count::NodesPerSocket => "nodes per socket",
            Count::LlcsPerNode => "LLCs per node",
            Count::ClustersPerLlc => "clusters per LLC",
            Count::CoresPerCluster => "cores per cluster",
            Count::ThreadsPerCore => "threads per core",
        }
    }

    /// Its DOM id's tail.
    pub fn id(self) -> &'static str {
        match self {
            Count::Sockets => "sockets",
            Count::NodesPerSocket => "nodes",
            Count::LlcsPerNode => "llcs",
            Count::ClustersPerLlc => "clusters",
            Count::CoresPerCluster => "cores",
            Count::ThreadsPerCore => "threads",
        }
    }
}

/// The Kconfig options that change the domains (`KernelConfig`'s fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kopt {
    Smt,
    Cluster,
    Mc,
    Numa,
}

impl Kopt {
    pub const ALL: [Kopt; 4] = [Kopt::Smt, Kopt::Cluster, Kopt::Mc, Kopt::Numa];

    /// As a distribution's /boot/config-* spells it (and `--kconfig` reads it).
    pub fn name(self) -> &'static str {
        match self {
            Kopt::Smt => "CONFIG_SCHED_SMT",
            Kopt::Cluster => "CONFIG_SCHED_CLUSTER",
            Kopt::Mc => "CONFIG_SCHED_MC",
            Kopt::Numa => "CONFIG_NUMA",
        }
    }

    pub fn get(self, c: &KernelConfig) -> bool {
        match self {
            Kopt::Smt => c.sched_smt,
            Kopt::Cluster => c.sched_cluster,
            Kopt::Mc => c.sched_mc,
            Kopt::Numa => c.numa,
        }
    }

    pub fn set(self, c: &mut KernelConfig, on: bool) {
        match self {
            Kopt::Smt => c.sched_smt = on,
            Kopt::Cluster => c.sched_cluster = on,
            Kopt::Mc => c.sched_mc = on,
            Kopt::Numa => c.numa = on,
        }
    }
}

/// A field of the designer, where an edit lands and where its error shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    Name,
    Arch,
    /// arm64: where the kernel reads the topology from (`acpi`, `dt`, `dt-clusters`).
    Firmware,
    /// arm64: the firmware describes no shared cache (`y` / `n`).
    NoSharedCache,
    Numbering,
    Count(Count),
    /// Memory-only (CPU-less) NUMA nodes, after the nodes with CPUs.
    MemoryNodes,
    Config(Kopt),
    /// The CPU total under the counts (the product's errors when no count is to blame).
    Total,
    Capacities,
    ReclaimDistance,
    /// Whether an edit of a distance sets its mirror too (`y` / `n`).
    Symmetric,
    /// `node_distance(a, b)`; while [`Field::Symmetric`] is on, an edit sets `(b, a)` too.
    Distance(usize, usize),
    ClientWork,
    ServerWork,
    Sleep,
}

impl Field {
    /// The DOM id of the field's input; its error's id is this plus `-error`.
    pub fn id(self) -> String {
        match self {
            Field::Name => "designer-name".into(),
            Field::Arch => "designer-arch".into(),
            Field::Firmware => "designer-firmware".into(),
            Field::NoSharedCache => "designer-no-shared-cache".into(),
            Field::Numbering => "designer-numbering".into(),
            Field::Count(c) => format!("designer-{}", c.id()),
            Field::MemoryNodes => "designer-memory-nodes".into(),
            Field::Config(k) => format!("designer-{}", k.name().to_ascii_lowercase()),
            Field::Total => "designer-total".into(),
            Field::Capacities => "designer-capacities".into(),
            Field::ReclaimDistance => "designer-reclaim".into(),
            Field::Symmetric => "designer-symmetric".into(),
            Field::Distance(a, b) => format!("designer-d-{a}-{b}"),
            Field::ClientWork => "designer-client-work".into(),
            Field::ServerWork => "designer-server-work".into(),
            Field::Sleep => "designer-sleep".into(),
        }
    }

    pub fn error_id(self) -> String {
        format!("{}-error", self.id())
    }

    pub fn is_workload(self) -> bool {
        matches!(self, Field::ClientWork | Field::ServerWork | Field::Sleep)
    }
}

/// The form as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    pub name: String,
    pub arch: Arch,
    /// arm64's firmware and whether it describes a shared cache: kept while the
    /// architecture is x86 (which reads neither), so switching back restores them.
    pub firmware: Firmware,
    pub no_shared_cache: bool,
    pub config: KernelConfig,
    pub numbering: Numbering,
    /// Indexed by [`Count`] order.
    pub counts: [String; 6],
    /// Per-CPU capacities, `1024×4, 446×4` (empty: 1024 everywhere).
    pub capacities: String,
    pub reclaim: String,
    /// Memory-only nodes as typed (a whole number; the grid has them after the
    /// nodes with CPUs).
    pub memory_nodes: String,
    /// The SLIT as typed, nodes × nodes (resized when a node count changes).
    pub slit: Slit,
    /// The custom workload's client work, server work and sleep.
    pub work: [String; 3],
    pub errors: BTreeMap<Field, String>,
    /// The count (or the memory-only nodes) edited last, blamed for a product past
    /// the limits.
    last_count: Option<Field>,
}

/// What the designer panel shows: the form, or why this machine has none.
#[derive(Clone, Debug, PartialEq)]
pub enum Designer {
    Form(Box<Draft>),
    /// The machine cannot be written as counts; the reason, and its per-CPU JSON
    /// for the JSON editor.
    Irregular {
        reason: String,
        json: String,
    },
}

/// A duration in the largest unit that writes it exactly (`5us`, `10ms`, `250`).
fn ns_text(ns: u64) -> String {
    match ns {
        0 => "0".to_string(),
        n if n.is_multiple_of(1_000_000_000) => format!("{}s", n / 1_000_000_000),
        n if n.is_multiple_of(1_000_000) => format!("{}ms", n / 1_000_000),
        n if n.is_multiple_of(1_000) => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// A distribution as the CLI's flags write it, with units (`Dist::parse` reads it
/// back to the same value).
pub fn dist_text(d: Dist) -> String {
    match d {
        Dist::Fixed { ns } => format!("fixed:{}", ns_text(ns)),
        Dist::Uniform { lo, hi } => format!("uniform:{}-{}", ns_text(lo), ns_text(hi)),
        Dist::Exp { mean } => format!("exp:{}", ns_text(mean)),
    }
}

/// Run-length text of per-CPU capacities: `1024×4, 446×4`.
pub fn format_capacities(caps: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < caps.len() {
        let mut j = i;
        while j < caps.len() && caps[j] == caps[i] {
            j += 1;
        }
        out.push(if j - i == 1 {
            caps[i].to_string()
        } else {
            format!("{}×{}", caps[i], j - i)
        });
        i = j;
    }
    out.join(", ")
}

/// Reads [`format_capacities`]' text: items `V` or `V×N` (also `VxN`, `V*N`),
/// separated by commas or spaces. At most `limit` CPUs are expanded, so a huge `N`
/// is refused before anything is sized from it.
pub fn parse_capacities(text: &str, limit: u64) -> Result<Option<Vec<u32>>, String> {
    let mut caps = Vec::new();
    for item in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
    {
        let (v, n) = match item.split_once(['×', 'x', '*']) {
            Some((v, n)) => (v, n),
            None => (item, "1"),
        };
        let v: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("{item:?}: write a capacity (1-1024), or CAPACITY×CPUS"))?;
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("{item:?}: the count after × is a whole number of CPUs"))?;
        if caps.len() as u64 + n > limit {
            return Err(format!("more than {limit} capacities: give one per CPU"));
        }
        caps.extend(std::iter::repeat_n(v, n as usize));
    }
    Ok((!caps.is_empty() && caps.iter().any(|&c| c != 1024)).then_some(caps))
}

impl Draft {
    /// The form for a regular spec (`cpus` absent) and the machine it builds.
    pub fn from_spec(spec: &MachineSpec, m: &Machine) -> Draft {
        let cores_per_llc = spec.cores_per_llc.unwrap_or(1);
        let cluster = spec.cores_per_cluster.max(1);
        let counts = [
            spec.packages.unwrap_or(1),
            spec.nodes_per_package,
            spec.llcs_per_node,
            cores_per_llc / cluster,
            cluster,
            spec.threads_per_core,
        ]
        .map(|v| v.to_string());
        let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
        // Nodes past the CPUs' highest are memory-only (the regular form's SLIT rows
        // past sockets × nodes per socket).
        let cpu_nodes = m
            .cpus
            .iter()
            .map(|c| usize::from(c.node.0) + 1)
            .max()
            .unwrap_or(1);
        let slit = Slit::from_table(&m.numa_distance, cpu_nodes, spec.numa_distance.is_some());
        Draft {
            name: spec.name.clone(),
            arch: spec.arch,
            firmware: spec.firmware,
            no_shared_cache: spec.no_shared_cache,
            config: m.config,
            numbering: spec.numbering,
            counts,
            capacities: if caps.iter().all(|&c| c == 1024) {
                String::new()
            } else {
                format_capacities(&caps)
            },
            reclaim: m.node_reclaim_distance.to_string(),
            memory_nodes: slit.memory_nodes().to_string(),
            slit,
            work: Self::work_of(None),
            errors: BTreeMap::new(),
            last_count: None,
        }
    }

    /// The three distribution fields for a workload: its own if it is the custom
    /// one, else the custom workload's defaults.
    pub(super) fn work_of(w: Option<&Workload>) -> [String; 3] {
        match w {
            Some(Workload::Custom {
                client_work,
                server_work,
                sleep,
                ..
            }) => [client_work, server_work, sleep].map(|d| dist_text(*d)),
            _ => [
                defaults::CUSTOM_WORK.to_string(),
                defaults::CUSTOM_WORK.to_string(),
                dist_text(Dist::fixed(0)),
            ],
        }
    }

    pub fn count(&self, c: Count) -> &str {
        &self.counts[c as usize]
    }

    /// Reads the counts: each a whole number from 1, their product within the
    /// designer's limits, and the memory-only nodes. Errors go to the count's field
    /// (the product's to the count edited last, else the total).
    fn read_counts(&self, errors: &mut BTreeMap<Field, String>) -> Option<[u32; 6]> {
        let mut out = [0u32; 6];
        let mut ok = true;
        for c in Count::ALL {
            match self.count(c).trim().parse::<u32>() {
                Ok(v) if v >= 1 && u64::from(v) <= MAX_DESIGN_CPUS => out[c as usize] = v,
                Ok(0) => {
                    errors.insert(Field::Count(c), format!("{} must be at least 1", c.label()));
                    ok = false;
                }
                _ => {
                    errors.insert(
                        Field::Count(c),
                        format!(
                            "{:?} is not a count from 1 to {MAX_DESIGN_CPUS}",
                            self.count(c).trim()
                        ),
                    );
                    ok = false;
                }
            }
        }
        let memory = self.memory_nodes.trim().parse::<u64>();
        match memory {
            Ok(v) if v <= MAX_DESIGN_NODES => {}
            _ => {
                errors.insert(
                    Field::MemoryNodes,
                    format!(
                        "{:?} is not a count of memory-only nodes from 0 to {MAX_DESIGN_NODES}",
                        self.memory_nodes.trim()
                    ),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        let memory = memory.unwrap_or(0);
        let cpus: u64 = out.iter().map(|&v| u64::from(v)).product();
        let cpu_nodes = u64::from(out[0]) * u64::from(out[1]);
        let nodes = cpu_nodes + memory;
        let blame = self.last_count.unwrap_or(Field::Total);
        let blame_cpus = self
            .last_count
            .filter(|f| matches!(f, Field::Count(_)))
            .unwrap_or(Field::Total);
        if cpus > MAX_DESIGN_CPUS {
            errors.insert(
                blame_cpus,
                format!(
                    "{} CPUs: the designer builds up to {MAX_DESIGN_CPUS} (each edit rebuilds the \
                     machine, its domains and the drawing); open a larger machine from a JSON file",
                    cpus
                ),
            );
            return None;
        }
        if nodes > MAX_DESIGN_NODES {
            let which = if memory > 0 {
                format!(" ({cpu_nodes} with CPUs, {memory} memory-only)")
            } else {
                String::new()
            };
            errors.insert(
                blame,
                format!(
                    "{nodes} NUMA nodes{which}: the designer's distance grid takes up to \
                     {MAX_DESIGN_NODES}"
                ),
            );
            return None;
        }
        Some(out)
    }

    /// The grid's layout, if the node counts read and fit the grid.
    fn layout(&self) -> Option<Layout> {
        let s: u64 = self.count(Count::Sockets).trim().parse().ok()?;
        let n: u64 = self.count(Count::NodesPerSocket).trim().parse().ok()?;
        let m: u64 = self.memory_nodes.trim().parse().ok()?;
        let cpu_nodes = s.checked_mul(n)?;
        (s >= 1 && n >= 1 && cpu_nodes + m.min(MAX_DESIGN_NODES) <= MAX_DESIGN_NODES).then_some(
            Layout {
                nodes_per_socket: n as usize,
                cpu_nodes: cpu_nodes as usize,
                memory_nodes: m as usize,
            },
        )
    }

    /// Resizes the grid to the node counts (a count that does not read leaves it).
    fn fit_slit(&mut self) {
        if let Some(l) = self.layout() {
            self.slit.fit(l);
        }
    }

    /// Applies one edit. Distances are mirrored while "symmetric" is on (see
    /// [`Slit::set`]); the diagonal is LOCAL_DISTANCE, not editable.
    pub fn set(&mut self, field: Field, value: &str) {
        match field {
            Field::Name => self.name = value.to_string(),
            Field::Arch => {
                if let Ok(a) = value.parse() {
                    self.arch = a;
                }
            }
            Field::Firmware => {
                if let Ok(f) = value.parse() {
                    self.firmware = f;
                }
            }
            Field::NoSharedCache => self.no_shared_cache = value == "y",
            Field::Numbering => {
                self.numbering = match value {
                    "smt-split" => Numbering::SmtSplit,
                    _ => Numbering::Linear,
                }
            }
            Field::Count(c) => {
                self.counts[c as usize] = value.to_string();
                self.last_count = Some(field);
                self.fit_slit();
            }
            Field::MemoryNodes => {
                self.memory_nodes = value.to_string();
                self.last_count = Some(field);
                self.fit_slit();
            }
            Field::Symmetric => self.slit.set_symmetric(value == "y"),
            Field::Config(k) => k.set(&mut self.config, value == "y"),
            Field::Total => {}
            Field::Capacities => self.capacities = value.to_string(),
            Field::ReclaimDistance => self.reclaim = value.to_string(),
            Field::Distance(a, b) => self.slit.set(a, b, value),
            Field::ClientWork => self.work[0] = value.to_string(),
            Field::ServerWork => self.work[1] = value.to_string(),
            Field::Sleep => self.work[2] = value.to_string(),
        }
    }

    /// The machine the form describes, or each field's error. Counts, name,
    /// capacities and distances are read here; everything else is
    /// `MachineSpec::build()`'s verdict, mapped to its field.
    pub fn spec(&self) -> Result<MachineSpec, BTreeMap<Field, String>> {
        let mut errors = BTreeMap::new();
        let name = self.name.trim();
        if name.is_empty() {
            errors.insert(Field::Name, "give the machine a name".to_string());
        } else if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
            errors.insert(
                Field::Name,
                format!("a name is one line of at most {MAX_NAME_CHARS} characters"),
            );
        }
        let counts = self.read_counts(&mut errors);
        let cpus = counts.map_or(MAX_DESIGN_CPUS, |c| {
            c.iter().map(|&v| u64::from(v)).product()
        });
        let caps = match parse_capacities(&self.capacities, cpus) {
            Ok(c) => c,
            Err(e) => {
                errors.insert(Field::Capacities, e);
                None
            }
        };
        let reclaim = match self.reclaim.trim().parse::<u8>() {
            Ok(v) if v >= 10 => Some(v),
            _ => {
                errors.insert(
                    Field::ReclaimDistance,
                    format!("{:?} is not a distance from 10 to 255", self.reclaim.trim()),
                );
                None
            }
        };
        let slit = self.slit.read().unwrap_or_else(|cells| {
            for (a, b, e) in cells {
                errors.insert(Field::Distance(a, b), e);
            }
            Vec::new()
        });
        let Some(c) = counts else {
            return Err(errors);
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let [sockets, nodes, llcs, clusters, cores, threads] = c;
        let mut spec = MachineSpec::regular(
            name,
            "Built in the topology designer.",
            self.arch,
            sockets,
            nodes,
            llcs,
            clusters * cores,
            cores,
            threads,
            self.numbering,
        );
        spec.config = (self.config != KernelConfig::SERVER).then_some(self.config);
        if self.arch == Arch::Arm64 {
            spec.firmware = self.firmware;
            spec.no_shared_cache = self.no_shared_cache;
        }
        spec.capacities = caps;
        spec.node_reclaim_distance = reclaim.filter(|&r| r != 30);
        // The default SLIT is left out of the spec, so links stay short.
        match spec.build() {
            Ok(m) if m.numa_distance == slit => return Ok(spec),
            Ok(_) | Err(TopologyError::SlitWrongSize { .. }) => {}
            Err(e) => return Err(Self::blame(e)),
        }
        spec.numa_distance = Some(slit);
        spec.build().map(|_| spec).map_err(Self::blame)
    }

    /// The field a `build()` error belongs to.
    fn blame(e: TopologyError) -> BTreeMap<Field, String> {
        let field = match &e {
            TopologyError::SlitDiagonal { node, .. } => Field::Distance(*node, *node),
            TopologyError::SlitRemoteTooSmall { a, b, .. } => Field::Distance(*a, *b),
            TopologyError::CapacitiesWrongLength { .. } => Field::Capacities,
            TopologyError::Inconsistent { what, .. } if what.contains("capacity") => {
                Field::Capacities
            }
            TopologyError::ZeroCount { what } => match *what {
                "packages" => Field::Count(Count::Sockets),
                "nodes_per_package" => Field::Count(Count::NodesPerSocket),
                "llcs_per_node" => Field::Count(Count::LlcsPerNode),
                "cores_per_cluster" => Field::Count(Count::CoresPerCluster),
                "threads_per_core" => Field::Count(Count::ThreadsPerCore),
                _ => Field::Count(Count::ClustersPerLlc),
            },
            _ => Field::Total,
        };
        BTreeMap::from([(field, e.to_string())])
    }

    /// The custom workload the three distribution fields describe, with `pairs` pairs,
    /// or each field's error (core's `Dist::parse` messages).
    pub fn workload(&self, pairs: u32) -> Result<Workload, BTreeMap<Field, String>> {
        let mut errors = BTreeMap::new();
        let mut read = |f: Field, text: &str| match Dist::parse(text) {
            Ok(d) => Some(d),
            Err(e) => {
                errors.insert(f, e);
                None
            }
        };
        let c = read(Field::ClientWork, &self.work[0]);
        let s = read(Field::ServerWork, &self.work[1]);
        let z = read(Field::Sleep, &self.work[2]);
        match (c, s, z) {
            (Some(client_work), Some(server_work), Some(sleep)) => Ok(Workload::Custom {
                pairs,
                client_work,
                server_work,
                sleep,
            }),
            _ => Err(errors),
        }
    }

    /// Replaces the errors of the machine's fields (or the workload's) with `errs`.
    pub fn set_errors(&mut self, workload: bool, errs: BTreeMap<Field, String>) {
        self.errors.retain(|f, _| f.is_workload() != workload);
        self.errors.extend(errs);
    }

    /// The workload fields follow the scenario's workload when it is the custom one.
    pub fn sync_work(&mut self, w: &Workload) {
        if matches!(w, Workload::Custom { .. }) {
            self.work = Self::work_of(Some(w));
            self.errors.retain(|f, _| !f.is_workload());
        }
    }
}
