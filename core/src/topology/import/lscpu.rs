//! util-linux `lscpu` in its three shapes.
//!
//! ```text
//! lscpu -p                          lscpu -e
//! # CPU,Core,Socket,Node,,L1d,L1i,L2,L3     CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE
//! 0,0,0,0,,0,0,0,0                    0    0      0    0 0:0:0:0          yes
//!
//! lscpu (summary)
//! Architecture:        x86_64
//! CPU(s):              80
//! Thread(s) per core:  2
//! Core(s) per socket:  20
//! Socket(s):           2
//! NUMA node0 CPU(s):   0-19,40-59
//! ```
//!
//! Mapping onto [`super::RawCpu`] for `-p` and `-e` (columns are found by name in the
//! header, in any order; missing columns fall back as listed):
//! - package = (Drawer, Book, Socket); missing Socket = 0.
//! - core = (package, Core); a missing Core column means no SMT (one core per CPU).
//! - LLC = (package, id of the highest-level cache column that has ids: L3, else L2);
//!   no cache ids at all: the package.
//! - cluster = (LLC, Cluster) when a Cluster column has ids; else on x86 (LLC, L2 id),
//!   which is what `cpu_l2c_shared_mask()` groups; else the core (no cluster).
//! - A CPU is offline when its Online column says N/no, or (without that column) its
//!   Core field is empty or `-`, as lscpu prints CPUs whose topology it cannot read.
//!   Offline CPUs above the last online one are dropped; a hole is an error.

use std::collections::HashMap;

use super::{arch_or_default, ImportError, ImportHint, Interner, Line, NumaInfo, Parsed, RawCpu};
use crate::cpumask::{CpuMask, MAX_CPUS};
use crate::topology::{Arch, MAX_NODES};

/// Whether the line is the `# CPU,Core,...` header of `lscpu -p`.
pub(crate) fn is_parse_header(line: &str) -> bool {
    line.trim_start()
        .strip_prefix('#')
        .and_then(|h| h.split(',').next())
        .is_some_and(|first| first.trim().eq_ignore_ascii_case("CPU"))
}

/// Whether the line is one only the plain `lscpu` summary prints.
pub(crate) fn is_summary_line(line: &str) -> bool {
    let Some((key, _)) = line.split_once(':') else {
        return false;
    };
    let key = key.trim();
    matches!(
        key,
        "Architecture" | "CPU(s)" | "Thread(s) per core" | "Core(s) per socket" | "Socket(s)"
    )
}

/// Column positions, by the names lscpu gives them.
struct Columns {
    cpu: usize,
    core: Option<usize>,
    socket: Option<usize>,
    book: Option<usize>,
    drawer: Option<usize>,
    node: Option<usize>,
    cluster: Option<usize>,
    online: Option<usize>,
    /// (level, column) of each cache column, e.g. (1, L1d), (1, L1i), (2, L2), (3, L3).
    caches: Vec<(u8, usize)>,
    names: Vec<String>,
}

impl Columns {
    fn from_names(names: Vec<String>, format: &'static str) -> Result<Self, ImportError> {
        let find = |want: &str| names.iter().position(|n| n.eq_ignore_ascii_case(want));
        let cpu = find("CPU").ok_or(ImportError::MissingColumn {
            format,
            column: "CPU",
        })?;
        let caches = names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                let b = n.as_bytes();
                // L1d, L1i, L2, L3, L4: 'L' then the level digit.
                (b.len() >= 2 && (b[0] == b'L' || b[0] == b'l') && b[1].is_ascii_digit())
                    .then(|| (b[1] - b'0', i))
            })
            .collect();
        Ok(Columns {
            cpu,
            core: find("CORE"),
            socket: find("SOCKET"),
            book: find("BOOK"),
            drawer: find("DRAWER"),
            node: find("NODE"),
            cluster: find("CLUSTER"),
            online: find("ONLINE"),
            caches,
            names,
        })
    }

    /// The highest index this importer reads: rows must reach it.
    fn last_used(&self) -> usize {
        [
            Some(self.cpu),
            self.core,
            self.socket,
            self.book,
            self.drawer,
            self.node,
            self.cluster,
            self.online,
        ]
        .into_iter()
        .flatten()
        .chain(self.caches.iter().map(|&(_, i)| i))
        .max()
        .unwrap_or(0)
    }
}

/// Turns rows of fields into CPUs, shared by `-p` and `-e`.
struct RowReader {
    cols: Columns,
    arch: Arch,
    /// The cache level used for the LLC, chosen from the whole table.
    llc_col: Option<usize>,
    l2_col: Option<usize>,
    packages: Interner<(u64, u64, u64)>,
    cores: Interner<(u32, u64, bool)>,
    llcs: Interner<(u32, u64, bool)>,
    clusters: Interner<(u32, u64, u8)>,
    cpus: Vec<RawCpu>,
    offline: Vec<u32>,
    no_core_column: bool,
    llc_fallback: bool,
}

fn field<'a>(fields: &[&'a str], i: Option<usize>) -> Option<&'a str> {
    // lscpu prints unknown ids as an empty field (-p) or `-` (-e).
    i.and_then(|i| fields.get(i))
        .map(|f| f.trim())
        .filter(|f| !f.is_empty() && *f != "-")
}

impl RowReader {
    fn new(cols: Columns, arch: Arch, rows: &[(usize, Vec<&str>)]) -> Self {
        // The last cache column with ids on some row: L3, or L2 on parts without one.
        let mut with_ids: Vec<(u8, usize)> = cols
            .caches
            .iter()
            .copied()
            .filter(|&(_, i)| rows.iter().any(|(_, f)| field(f, Some(i)).is_some()))
            .collect();
        with_ids.sort_by_key(|&(level, i)| (level, i));
        let llc_col = with_ids.last().map(|&(_, i)| i);
        let l2_col = with_ids.iter().find(|&&(l, _)| l == 2).map(|&(_, i)| i);
        RowReader {
            no_core_column: cols.core.is_none(),
            cols,
            arch,
            llc_col,
            l2_col,
            packages: Interner::new(),
            cores: Interner::new(),
            llcs: Interner::new(),
            clusters: Interner::new(),
            cpus: Vec::new(),
            offline: Vec::new(),
            llc_fallback: false,
        }
    }

    fn num(
        &self,
        line: usize,
        fields: &[&str],
        col: Option<usize>,
    ) -> Result<Option<u64>, ImportError> {
        match field(fields, col) {
            None => Ok(None),
            Some(v) => v
                .parse::<u64>()
                .map(Some)
                .map_err(|_| ImportError::BadField {
                    line,
                    column: col
                        .and_then(|c| self.cols.names.get(c))
                        .cloned()
                        .unwrap_or_default(),
                    value: v.to_string(),
                    expected: "a number, or empty",
                }),
        }
    }

    fn row(&mut self, line: usize, fields: &[&str]) -> Result<(), ImportError> {
        let cpu_text = field(fields, Some(self.cols.cpu)).unwrap_or("");
        let cpu = match cpu_text.parse::<u64>() {
            Ok(c) if c < MAX_CPUS as u64 => c as u32,
            Ok(c) => {
                return Err(ImportError::TooManyCpus {
                    cpus: c.saturating_add(1),
                })
            }
            Err(_) => {
                return Err(ImportError::BadField {
                    line,
                    column: "CPU".to_string(),
                    value: cpu_text.to_string(),
                    expected: "a CPU number",
                })
            }
        };
        let online = match field(fields, self.cols.online) {
            None => self.cols.core.is_none() || field(fields, self.cols.core).is_some(),
            Some(v) if v.eq_ignore_ascii_case("y") || v.eq_ignore_ascii_case("yes") => true,
            Some(v) if v.eq_ignore_ascii_case("n") || v.eq_ignore_ascii_case("no") => false,
            Some(v) => {
                return Err(ImportError::BadField {
                    line,
                    column: "ONLINE".to_string(),
                    value: v.to_string(),
                    expected: "Y/N or yes/no",
                })
            }
        };
        if !online {
            self.offline.push(cpu);
            return Ok(());
        }
        let socket = self.num(line, fields, self.cols.socket)?.unwrap_or(0);
        let book = self.num(line, fields, self.cols.book)?.unwrap_or(0);
        let drawer = self.num(line, fields, self.cols.drawer)?.unwrap_or(0);
        let package = self.packages.id((drawer, book, socket));
        let core = match self.num(line, fields, self.cols.core)? {
            Some(c) => self.cores.id((package, c, false)),
            None => self.cores.id((package, cpu as u64, true)),
        };
        let llc = match self.num(line, fields, self.llc_col)? {
            Some(id) => self.llcs.id((package, id, false)),
            None => {
                self.llc_fallback = true;
                self.llcs.id((package, 0, true))
            }
        };
        let cluster = if let Some(id) = self.num(line, fields, self.cols.cluster)? {
            self.clusters.id((llc, id, 0))
        } else if let (Arch::X86, Some(id)) = (self.arch, self.num(line, fields, self.l2_col)?) {
            self.clusters.id((llc, id, 1))
        } else {
            self.clusters.id((llc, core as u64, 2))
        };
        let node = match self.num(line, fields, self.cols.node)? {
            Some(n) if n < MAX_NODES as u64 => Some(n as u32),
            Some(n) => {
                return Err(ImportError::BadField {
                    line,
                    column: "NODE".to_string(),
                    value: n.to_string(),
                    expected: "a node number below 1024",
                })
            }
            None => None,
        };
        self.cpus.push(RawCpu {
            cpu,
            line,
            package,
            node,
            llc,
            cluster,
            core,
        });
        Ok(())
    }

    fn finish(self, source: &'static str, mut notes: Vec<String>) -> Parsed {
        if self.no_core_column {
            notes.push("no Core column: assumed one CPU per core (no SMT)".to_string());
        }
        if self.llc_fallback {
            notes.push(super::NOTE_NO_CACHE_IDS.to_string());
        }
        Parsed {
            cpus: self.cpus,
            offline: self.offline,
            arch: self.arch,
            numa: None,
            notes,
            source,
            model: None,
            node_reclaim_distance: None,
            no_shared_cache: false,
        }
    }
}

fn content<'a, 'b>(lines: &'b [Line<'a>]) -> impl Iterator<Item = Line<'a>> + 'b
where
    'a: 'b,
{
    lines
        .iter()
        .copied()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
}

fn check_row_count(n: usize) -> Result<(), ImportError> {
    if n > MAX_CPUS as usize {
        return Err(ImportError::TooManyCpus { cpus: n as u64 });
    }
    Ok(())
}

/// `lscpu -p` / `lscpu --parse=...`.
pub(crate) fn parse_p(lines: &[Line], hint: &ImportHint) -> Result<Parsed, ImportError> {
    const FORMAT: &str = "`lscpu -p`";
    // Several comment lines precede the header; the fixtures' `# SOURCE:` lines also
    // contain commas, so the header is the one whose first field is CPU.
    let header =
        lines
            .iter()
            .rev()
            .find(|(_, l)| is_parse_header(l))
            .ok_or(ImportError::NoHeader {
                format: FORMAT,
                example: "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3",
            })?;
    let names: Vec<String> = header
        .1
        .trim_start()
        .trim_start_matches('#')
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let cols = Columns::from_names(names, FORMAT)?;
    let expected = cols.names.len();
    let rows: Vec<(usize, Vec<&str>)> = content(lines)
        .filter(|&(n, _)| n > header.0)
        .map(|(n, l)| (n, l.split(',').collect()))
        .collect();
    check_row_count(rows.len())?;
    for (n, f) in &rows {
        if f.len() != expected {
            return Err(ImportError::FieldCount {
                line: *n,
                expected,
                found: f.len(),
                sep: "comma",
            });
        }
    }
    if let Some((n, _)) = content(lines).find(|&(n, _)| n < header.0) {
        return Err(ImportError::BadLine {
            line: n,
            what: "text before the `# CPU,...` header line".to_string(),
        });
    }
    let mut notes = Vec::new();
    let arch = arch_or_default(hint, &mut notes);
    let mut reader = RowReader::new(cols, arch, &rows);
    for (n, f) in &rows {
        reader.row(*n, f)?;
    }
    Ok(reader.finish("`lscpu -p`", notes))
}

/// `lscpu -e` / `lscpu --extended`.
pub(crate) fn parse_e(lines: &[Line], hint: &ImportHint) -> Result<Parsed, ImportError> {
    const FORMAT: &str = "`lscpu -e`";
    let mut content = content(lines);
    let Some((_, header)) = content.next() else {
        return Err(ImportError::NoHeader {
            format: FORMAT,
            example: "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE",
        });
    };
    // The cache column is one token (`L1d:L1i:L2:L3`, data `0:0:0:0`); spread it into
    // one column per cache so both -p and -e read the same way.
    let tokens: Vec<&str> = header.split_whitespace().collect();
    let cache_token = tokens.iter().position(|t| t.contains(':'));
    let mut names = Vec::new();
    for t in &tokens {
        names.extend(t.split(':').map(str::to_string));
    }
    let cache_parts = cache_token
        .map(|i| tokens[i].split(':').count())
        .unwrap_or(0);
    let cols = Columns::from_names(names, FORMAT)?;
    // Trailing columns (MAXMHZ, MINMHZ, MHZ) may be blank rather than `-`, so rows
    // must reach the columns read here but may stop before the header does.
    let last_used_token = {
        let last = cols.last_used();
        // Map a spread column index back to its token index.
        match cache_token {
            Some(ct) if last >= ct + cache_parts => last + 1 - cache_parts,
            Some(ct) if last >= ct => ct,
            _ => last,
        }
    };
    let mut rows = Vec::new();
    for (n, l) in content {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() <= last_used_token || toks.len() > tokens.len() {
            return Err(ImportError::FieldCount {
                line: n,
                expected: tokens.len(),
                found: toks.len(),
                sep: "whitespace",
            });
        }
        let mut fields = Vec::with_capacity(cols.names.len());
        for (i, t) in toks.iter().enumerate() {
            if Some(i) == cache_token {
                let parts: Vec<&str> = t.split(':').collect();
                if parts.len() == cache_parts {
                    fields.extend(parts);
                } else if *t == "-" {
                    fields.extend(std::iter::repeat_n("-", cache_parts));
                } else {
                    return Err(ImportError::BadField {
                        line: n,
                        column: tokens[i].to_string(),
                        value: t.to_string(),
                        expected: "one id per cache, separated by colons like the header",
                    });
                }
            } else {
                fields.push(*t);
            }
        }
        rows.push((n, fields));
        check_row_count(rows.len())?;
    }
    let mut notes = Vec::new();
    let arch = arch_or_default(hint, &mut notes);
    let mut reader = RowReader::new(cols, arch, &rows);
    for (n, f) in &rows {
        reader.row(*n, f)?;
    }
    Ok(reader.finish("`lscpu -e`", notes))
}

/// How CPU numbers map to cores on an SMT machine (see `spec::Numbering`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Smt {
    Linear,
    Split,
}

/// The plain `lscpu` summary. It has no per-CPU rows, so the machine is rebuilt from
/// counts; this works only for regular machines, and the LLC layout needs a count of
/// LLC instances (newer lscpu prints `L3 cache: 24 MiB (2 instances)`) or an
/// assumption, made only where it is safe:
/// - SMT numbering: the one the NUMA node lists allow; if both do, x86 lists all first
///   threads then the second (SmtSplit), arm64 keeps threads adjacent.
/// - packages: consecutive cores, `Core(s) per socket` each.
/// - LLC: the hint, else `(N instances)`; else one L3 per NUMA node, except on AMD
///   (Zen has one L3 per CCX, never per node) and when the LLC is the L2 (always
///   smaller than a node): those ask for `lscpu -p` or a cores-per-LLC hint.
/// - cluster: the hint; else on x86 the L2 `(N instances)` count when there is an L3;
///   else none (the summary cannot show arm64 PPTT clusters).
pub(crate) fn parse_summary(
    lines: &[Line],
    hint: &ImportHint,
    numactl: Option<&NumaInfo>,
) -> Result<Parsed, ImportError> {
    let mut kv: HashMap<&str, (usize, &str)> = HashMap::new();
    let mut repeated = Vec::new();
    let mut node_lists: Vec<(usize, u32, &str)> = Vec::new();
    for (n, l) in content(lines) {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if let Some(id) = k
            .strip_prefix("NUMA node")
            .and_then(|r| r.strip_suffix(" CPU(s)"))
        {
            let id = match id.parse::<u32>() {
                Ok(id) if (id as usize) < MAX_NODES => id,
                _ => {
                    return Err(ImportError::BadField {
                        line: n,
                        column: k.to_string(),
                        value: id.to_string(),
                        expected: "a node number below 1024",
                    })
                }
            };
            node_lists.push((n, id, v));
        } else if kv.insert(k, (n, v)).is_some() {
            repeated.push(k);
        }
    }
    let not_enough = |why: String| ImportError::SummaryNotEnough { why };
    if repeated.iter().any(|k| {
        matches!(
            *k,
            "Core(s) per socket" | "Core(s) per cluster" | "Thread(s) per core"
        )
    }) {
        return Err(not_enough(
            "describes several kinds of core (a big.LITTLE or hybrid part): it gives counts per kind but not which CPU is which".to_string(),
        ));
    }
    let count = |key: &'static str| -> Result<Option<u64>, ImportError> {
        match kv.get(key) {
            None => Ok(None),
            Some(&(_, "-")) => Ok(None),
            Some(&(line, v)) => v
                .parse::<u64>()
                .map(Some)
                .map_err(|_| ImportError::BadField {
                    line,
                    column: key.to_string(),
                    value: v.to_string(),
                    expected: "a number",
                }),
        }
    };
    let need = |key: &'static str, v: Option<u64>| {
        v.filter(|&v| v > 0)
            .ok_or_else(|| not_enough(format!("has no usable `{key}` line")))
    };
    let n_cpus = need("CPU(s)", count("CPU(s)")?)?;
    if n_cpus > MAX_CPUS as u64 {
        return Err(ImportError::TooManyCpus { cpus: n_cpus });
    }
    let n_cpus = n_cpus as u32;
    let threads = need("Thread(s) per core", count("Thread(s) per core")?)?;
    // arm64 lscpu says "Cluster(s)" / "Core(s) per cluster" for physical packages when
    // firmware does not name sockets.
    let (sockets, cores_per_socket) = match count("Socket(s)")? {
        Some(s) => (s, count("Core(s) per socket")?),
        None => (
            count("Cluster(s)")?.unwrap_or(0),
            count("Core(s) per cluster")?,
        ),
    };
    let sockets = need("Socket(s)", Some(sockets))?;
    let cores_per_socket = need("Core(s) per socket", cores_per_socket)?;
    let product = sockets
        .checked_mul(cores_per_socket)
        .and_then(|v| v.checked_mul(threads));
    if product != Some(n_cpus as u64) {
        return Err(not_enough(format!(
            "says {sockets} socket(s) × {cores_per_socket} cores × {threads} threads, which is not its {n_cpus} CPUs (a hybrid part, or CPUs offline)"
        )));
    }
    let (threads, cores_per_socket) = (threads as u32, cores_per_socket as u32);
    if let Some(&(_, off)) = kv.get("Off-line CPU(s) list") {
        if !off.is_empty() {
            return Err(not_enough(format!("has CPUs {off} offline")));
        }
    }
    let mut notes = Vec::new();
    let arch = match (hint.arch, kv.get("Architecture").map(|&(_, a)| a)) {
        (Some(a), _) => a,
        (None, Some("x86_64" | "i686" | "i586" | "i386")) => Arch::X86,
        (None, Some("aarch64" | "arm64")) => Arch::Arm64,
        (None, Some(other)) => {
            return Err(not_enough(format!(
                "is from a {other} machine; schedlab models the arm64 and x86 topology code, so pass the architecture to use"
            )))
        }
        (None, None) => arch_or_default(hint, &mut notes),
    };

    // Node of each CPU: from the summary's lists, else numactl's, else node 0.
    let mut node_of: Vec<Option<u32>> = vec![None; n_cpus as usize];
    let lists: Vec<(usize, u32, CpuMask)> = if node_lists.is_empty() {
        numactl
            .map(|n| {
                n.node_cpus
                    .iter()
                    .map(|(id, cpus)| {
                        let mut m = CpuMask::new(n_cpus);
                        for &c in cpus.iter().filter(|&&c| c < n_cpus) {
                            m.set_cpu(crate::cpumask::CpuId(c));
                        }
                        (0, *id, m)
                    })
                    .collect()
            })
            .unwrap_or_default()
    } else {
        node_lists
            .iter()
            .map(|&(line, id, v)| {
                CpuMask::parse_list(n_cpus, v)
                    .map(|m| (line, id, m))
                    .map_err(|e| ImportError::BadLine {
                        line,
                        what: e.to_string(),
                    })
            })
            .collect::<Result<_, _>>()?
    };
    for (line, id, mask) in &lists {
        for c in mask.iter() {
            if let Some(prev) = node_of[c.idx()].replace(*id) {
                return Err(ImportError::BadLine {
                    line: *line,
                    what: format!("CPU {} is in node {prev} and node {id}", c.0),
                });
            }
        }
    }
    if !lists.is_empty() {
        if let Some(c) = node_of.iter().position(Option::is_none) {
            return Err(not_enough(format!("puts CPU {c} in no NUMA node")));
        }
    }
    let node = |cpu: u32| node_of[cpu as usize].unwrap_or(0);

    let n_cores = n_cpus / threads;
    let smt_ok = |smt: Smt| {
        (0..n_cores).all(|core| {
            let first = cpu_of(smt, core, 0, threads, n_cores);
            (1..threads).all(|t| node(cpu_of(smt, core, t, threads, n_cores)) == node(first))
        })
    };
    let smt = match (threads, smt_ok(Smt::Linear), smt_ok(Smt::Split)) {
        (1, _, _) => Smt::Linear,
        (_, true, false) => Smt::Linear,
        (_, false, true) => Smt::Split,
        (_, true, true) => {
            let smt = if arch == Arch::X86 {
                Smt::Split
            } else {
                Smt::Linear
            };
            notes.push(format!(
                "assumed {} SMT numbering",
                if smt == Smt::Split {
                    "x86 (CPU n and n+N/2 are siblings)"
                } else {
                    "adjacent (siblings are consecutive CPUs)"
                }
            ));
            smt
        }
        (_, false, false) => {
            return Err(not_enough(
                "has NUMA node lists that split SMT siblings under any numbering".to_string(),
            ))
        }
    };

    let instances = |key: &str| -> Option<u32> {
        // "24 MiB (2 instances)" / "512 KiB (1 instance)"
        let v = kv.get(key)?.1;
        let inner = v.split_once('(')?.1;
        inner.split_whitespace().next()?.parse().ok()
    };
    let has_l3 = kv.contains_key("L3 cache");
    let vendor = kv.get("Vendor ID").map(|&(_, v)| v).unwrap_or("");
    let llc_key = if has_l3 { "L3 cache" } else { "L2 cache" };
    let per_count = |what: &str, count: u32| -> Result<u32, ImportError> {
        if count == 0 || !n_cores.is_multiple_of(count) {
            return Err(not_enough(format!(
                "counts {count} {what} instances, which do not divide its {n_cores} cores"
            )));
        }
        Ok(n_cores / count)
    };
    let cores_per_llc: Option<u32> = match (hint.cores_per_llc, instances(llc_key)) {
        (Some(c), _) => Some(c),
        (None, Some(n)) => Some(per_count(llc_key, n)?),
        (None, None) if !has_l3 && kv.contains_key("L2 cache") => {
            return Err(not_enough(
                "has no L3, so the LLC is the L2, and it does not count L2 instances (how many cores share one; or give that as the cores-per-LLC hint)".to_string(),
            ))
        }
        (None, None) if vendor == "AuthenticAMD" => {
            return Err(not_enough(
                "does not count L3 instances, and AMD Zen parts have one L3 per CCX, not per node (or give the CCX size as the cores-per-LLC hint)".to_string(),
            ))
        }
        (None, None) => {
            notes.push(super::NOTE_NO_L3_COUNT.to_string());
            None
        }
    };
    let cores_per_cluster = match (hint.cores_per_cluster, arch, has_l3) {
        (Some(c), _, _) => c,
        (None, Arch::X86, true) => match instances("L2 cache") {
            Some(n) => per_count("L2 cache", n)?,
            None => {
                notes.push(super::NOTE_NO_L2_COUNT.to_string());
                1
            }
        },
        // x86 without L3: the cluster (L2) is the LLC.
        (None, Arch::X86, false) => cores_per_llc.unwrap_or(1),
        (None, Arch::Arm64, _) => {
            // Plain lscpu prints no cluster count, and the kernel builds a CLS level
            // from cluster ids (Kunpeng 920: clusters of 4); say it is lost.
            notes.push(super::NOTE_NO_CLUSTERS_ARM64.to_string());
            1
        }
    };
    // Checked here because an LLC or cluster that straddles a socket would be split
    // silently by the package in its key.
    let bad_hint = |what: String| ImportError::BadHint { what };
    let outer_of_llc = cores_per_socket;
    if let Some(c) = cores_per_llc {
        if c == 0 || outer_of_llc % c != 0 {
            return Err(bad_hint(format!(
                "{c} cores per LLC does not divide {outer_of_llc} cores per socket"
            )));
        }
    }
    let outer_of_cluster = cores_per_llc.unwrap_or(cores_per_socket);
    if cores_per_cluster == 0 || !outer_of_cluster.is_multiple_of(cores_per_cluster) {
        return Err(bad_hint(format!(
            "{cores_per_cluster} cores per cluster does not divide {outer_of_cluster} cores per {}",
            if cores_per_llc.is_some() {
                "LLC"
            } else {
                "socket"
            }
        )));
    }

    let line_of = kv.get("CPU(s)").map(|&(l, _)| l).unwrap_or(0);
    let mut llcs = Interner::new();
    let mut cpus = Vec::with_capacity(n_cpus as usize);
    for cpu in 0..n_cpus {
        let core = match smt {
            Smt::Linear => cpu / threads,
            Smt::Split => cpu % n_cores,
        };
        let package = core / cores_per_socket;
        let llc = match cores_per_llc {
            Some(c) => llcs.id((package, core / c, 0)),
            None => llcs.id((package, node(cpu), 1)),
        };
        cpus.push(RawCpu {
            cpu,
            line: line_of,
            package,
            node: (!lists.is_empty()).then(|| node(cpu)),
            llc,
            cluster: core / cores_per_cluster,
            core,
        });
    }
    Ok(Parsed {
        cpus,
        offline: Vec::new(),
        arch,
        numa: None,
        notes,
        source: "the plain `lscpu` summary",
        model: kv
            .get("Model name")
            .map(|&(_, m)| m.to_string())
            .filter(|m| !m.is_empty()),
        // init_amd_zn() (arch/x86/kernel/cpu/amd.c, and hygon.c) sets node_reclaim_distance = 32
        // on every Zen part, family 0x17 and later.
        node_reclaim_distance: (matches!(vendor, "AuthenticAMD" | "HygonGenuine")
            && kv
                .get("CPU family")
                .and_then(|&(_, f)| f.parse::<u32>().ok())
                .is_some_and(|f| f >= 0x17))
        .then_some(32),
        no_shared_cache: false,
    })
}

fn cpu_of(smt: Smt, core: u32, thread: u32, threads: u32, n_cores: u32) -> u32 {
    match smt {
        Smt::Linear => core * threads + thread,
        Smt::Split => thread * n_cores + core,
    }
}
