//! The plain `lscpu` summary: no per-CPU rows, so a regular machine is rebuilt from
//! its counts ([`parse_summary`] lists what it assumes and when).

use std::collections::HashMap;

use super::content;
use crate::cpumask::{CpuMask, MAX_CPUS};
use crate::topology::import::{
    arch_or_default, ImportError, ImportHint, Interner, Line, NumaInfo, Parsed, RawCpu,
};
use crate::topology::{Arch, MAX_NODES};

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
///
/// Errors, in order: the lines ([`Summary::read`]), the counts ([`Counts::of`]), the
/// architecture ([`summary_arch`]), the node lists ([`node_of_cpus`]), the SMT
/// numbering ([`smt_numbering`]), the cache layout ([`Caches::of`]).
pub(crate) fn parse_summary(
    lines: &[Line],
    hint: &ImportHint,
    numactl: Option<&NumaInfo>,
) -> Result<Parsed, ImportError> {
    let s = Summary::read(lines)?;
    let Counts {
        n_cpus,
        threads,
        cores_per_socket,
    } = Counts::of(&s)?;
    let mut notes = Vec::new();
    let arch = summary_arch(&s, hint, &mut notes)?;
    let (node_of, has_lists) = node_of_cpus(&s, numactl, n_cpus)?;
    let node = |cpu: u32| node_of[cpu as usize].unwrap_or(0);
    let n_cores = n_cpus / threads;
    let smt = smt_numbering(threads, n_cores, arch, &node, &mut notes)?;
    let Caches {
        cores_per_llc,
        cores_per_cluster,
    } = Caches::of(&s, hint, arch, n_cores, cores_per_socket, &mut notes)?;

    let line_of = s.kv.get("CPU(s)").map(|&(l, _)| l).unwrap_or(0);
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
            node: has_lists.then(|| node(cpu)),
            llc,
            cluster: core / cores_per_cluster,
            core,
        });
    }
    let vendor = s.value("Vendor ID").unwrap_or("");
    Ok(Parsed {
        cpus,
        offline: Vec::new(),
        arch,
        numa: None,
        notes,
        source: "the plain `lscpu` summary",
        model: s
            .value("Model name")
            .map(|m| m.to_string())
            .filter(|m| !m.is_empty()),
        // init_amd_zn() (arch/x86/kernel/cpu/amd.c, and hygon.c) sets node_reclaim_distance = 32
        // on every Zen part, family 0x17 and later.
        node_reclaim_distance: (matches!(vendor, "AuthenticAMD" | "HygonGenuine")
            && s.value("CPU family")
                .and_then(|f| f.parse::<u32>().ok())
                .is_some_and(|f| f >= 0x17))
        .then_some(32),
        no_shared_cache: false,
    })
}

/// The summary's `Key: value` lines (each key's line number and value), the
/// `NUMA nodeN CPU(s)` lists apart.
struct Summary<'a> {
    kv: HashMap<&'a str, (usize, &'a str)>,
    node_lists: Vec<(usize, u32, &'a str)>,
}

impl<'a> Summary<'a> {
    /// Reads the lines. Errors: a node number of 1024 or more
    /// (`ImportError::BadField`), then a per-kind count given twice, a hybrid part's
    /// (`ImportError::SummaryNotEnough`).
    fn read(lines: &[Line<'a>]) -> Result<Summary<'a>, ImportError> {
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
        Ok(Summary { kv, node_lists })
    }

    /// The value of `key`, if the summary has it.
    fn value(&self, key: &str) -> Option<&'a str> {
        self.kv.get(key).map(|&(_, v)| v)
    }

    /// The count `key` gives (`-` is none); a value that is no number is
    /// `ImportError::BadField`.
    fn count(&self, key: &'static str) -> Result<Option<u64>, ImportError> {
        match self.kv.get(key) {
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
    }

    /// The instance count of a cache line: "24 MiB (2 instances)" / "512 KiB (1
    /// instance)".
    fn instances(&self, key: &str) -> Option<u32> {
        let v = self.value(key)?;
        let inner = v.split_once('(')?.1;
        inner.split_whitespace().next()?.parse().ok()
    }
}

/// The summary cannot describe the machine: `why` says what it lacks.
fn not_enough(why: String) -> ImportError {
    ImportError::SummaryNotEnough { why }
}

/// `v`, the count of `key`, if it is there and not 0.
fn need(key: &'static str, v: Option<u64>) -> Result<u64, ImportError> {
    v.filter(|&v| v > 0)
        .ok_or_else(|| not_enough(format!("has no usable `{key}` line")))
}

/// The machine's counts.
struct Counts {
    n_cpus: u32,
    threads: u32,
    cores_per_socket: u32,
}

impl Counts {
    /// CPUs, threads per core and cores per socket (arm64's "Cluster(s)" and "Core(s)
    /// per cluster" where firmware names no sockets). Errors, in order: no CPU count,
    /// more than the model holds, no thread count, no socket count, no core count,
    /// counts whose product is not the CPUs, CPUs offline.
    fn of(s: &Summary) -> Result<Counts, ImportError> {
        let n_cpus = need("CPU(s)", s.count("CPU(s)")?)?;
        if n_cpus > MAX_CPUS as u64 {
            return Err(ImportError::TooManyCpus { cpus: n_cpus });
        }
        let n_cpus = n_cpus as u32;
        let threads = need("Thread(s) per core", s.count("Thread(s) per core")?)?;
        // arm64 lscpu says "Cluster(s)" / "Core(s) per cluster" for physical packages
        // when firmware does not name sockets.
        let (sockets, cores_per_socket) = match s.count("Socket(s)")? {
            Some(n) => (n, s.count("Core(s) per socket")?),
            None => (
                s.count("Cluster(s)")?.unwrap_or(0),
                s.count("Core(s) per cluster")?,
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
        if let Some(off) = s.value("Off-line CPU(s) list") {
            if !off.is_empty() {
                return Err(not_enough(format!("has CPUs {off} offline")));
            }
        }
        Ok(Counts {
            n_cpus,
            threads: threads as u32,
            cores_per_socket: cores_per_socket as u32,
        })
    }
}

/// The architecture: the hint's, else the summary's `Architecture` (x86 or arm64;
/// another is `ImportError::SummaryNotEnough`), else the default (noted).
fn summary_arch(
    s: &Summary,
    hint: &ImportHint,
    notes: &mut Vec<String>,
) -> Result<Arch, ImportError> {
    Ok(match (hint.arch, s.value("Architecture")) {
        (Some(a), _) => a,
        (None, Some("x86_64" | "i686" | "i586" | "i386")) => Arch::X86,
        (None, Some("aarch64" | "arm64")) => Arch::Arm64,
        (None, Some(other)) => {
            return Err(not_enough(format!(
                "is from a {other} machine; schedlab models the arm64 and x86 topology code, so pass the architecture to use"
            )))
        }
        (None, None) => arch_or_default(hint, notes),
    })
}

/// Each CPU's node: from the summary's lists, else numactl's, else none (node 0);
/// and whether there were lists. Errors: a list that does not parse, a CPU in two
/// nodes, a CPU in none.
fn node_of_cpus(
    s: &Summary,
    numactl: Option<&NumaInfo>,
    n_cpus: u32,
) -> Result<(Vec<Option<u32>>, bool), ImportError> {
    let mut node_of: Vec<Option<u32>> = vec![None; n_cpus as usize];
    let lists: Vec<(usize, u32, CpuMask)> = if s.node_lists.is_empty() {
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
        s.node_lists
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
    Ok((node_of, !lists.is_empty()))
}

/// The SMT numbering the node lists allow (siblings in one node); when both do,
/// x86's split numbering or arm64's adjacent one, noted. Neither is
/// `ImportError::SummaryNotEnough`.
fn smt_numbering(
    threads: u32,
    n_cores: u32,
    arch: Arch,
    node: &dyn Fn(u32) -> u32,
    notes: &mut Vec<String>,
) -> Result<Smt, ImportError> {
    let smt_ok = |smt: Smt| {
        (0..n_cores).all(|core| {
            let first = cpu_of(smt, core, 0, threads, n_cores);
            (1..threads).all(|t| node(cpu_of(smt, core, t, threads, n_cores)) == node(first))
        })
    };
    Ok(match (threads, smt_ok(Smt::Linear), smt_ok(Smt::Split)) {
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
    })
}

/// The cache layout in cores.
struct Caches {
    /// `None`: one LLC per node (an assumption, noted).
    cores_per_llc: Option<u32>,
    cores_per_cluster: u32,
}

impl Caches {
    /// Cores per LLC and per cluster: the hints, else the `(N instances)` counts,
    /// else the assumptions [`parse_summary`] lists. Errors, in order: an instance
    /// count that does not divide the cores, an LLC that is an uncounted L2, an AMD
    /// part with uncounted L3s (`ImportError::SummaryNotEnough`), then an LLC that
    /// does not divide a socket or a cluster that does not divide its LLC or socket
    /// (`ImportError::BadHint`: an LLC or cluster that straddles a socket would be
    /// split silently by the package in its key).
    fn of(
        s: &Summary,
        hint: &ImportHint,
        arch: Arch,
        n_cores: u32,
        cores_per_socket: u32,
        notes: &mut Vec<String>,
    ) -> Result<Caches, ImportError> {
        let has_l3 = s.kv.contains_key("L3 cache");
        let vendor = s.value("Vendor ID").unwrap_or("");
        let llc_key = if has_l3 { "L3 cache" } else { "L2 cache" };
        let per_count = |what: &str, count: u32| -> Result<u32, ImportError> {
            if count == 0 || !n_cores.is_multiple_of(count) {
                return Err(not_enough(format!(
                    "counts {count} {what} instances, which do not divide its {n_cores} cores"
                )));
            }
            Ok(n_cores / count)
        };
        let cores_per_llc: Option<u32> = match (hint.cores_per_llc, s.instances(llc_key)) {
            (Some(c), _) => Some(c),
            (None, Some(n)) => Some(per_count(llc_key, n)?),
            (None, None) if !has_l3 && s.kv.contains_key("L2 cache") => {
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
                notes.push(crate::topology::import::NOTE_NO_L3_COUNT.to_string());
                None
            }
        };
        let cores_per_cluster = match (hint.cores_per_cluster, arch, has_l3) {
            (Some(c), _, _) => c,
            (None, Arch::X86, true) => match s.instances("L2 cache") {
                Some(n) => per_count("L2 cache", n)?,
                None => {
                    notes.push(crate::topology::import::NOTE_NO_L2_COUNT.to_string());
                    1
                }
            },
            // x86 without L3: the cluster (L2) is the LLC.
            (None, Arch::X86, false) => cores_per_llc.unwrap_or(1),
            (None, Arch::Arm64, _) => {
                // Plain lscpu prints no cluster count, and the kernel builds a CLS level
                // from cluster ids (Kunpeng 920: clusters of 4); say it is lost.
                notes.push(crate::topology::import::NOTE_NO_CLUSTERS_ARM64.to_string());
                1
            }
        };
        // Checked here because an LLC or cluster that straddles a socket would be
        // split silently by the package in its key.
        let bad_hint = |what: String| ImportError::BadHint { what };
        let outer_of_llc = cores_per_socket;
        if let Some(c) = cores_per_llc {
            if c == 0 || !outer_of_llc.is_multiple_of(c) {
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
        Ok(Caches {
            cores_per_llc,
            cores_per_cluster,
        })
    }
}

fn cpu_of(smt: Smt, core: u32, thread: u32, threads: u32, n_cores: u32) -> u32 {
    match smt {
        Smt::Linear => core * threads + thread,
        Smt::Split => thread * n_cores + core,
    }
}
