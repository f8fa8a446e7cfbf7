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
            notes.push(crate::topology::import::NOTE_NO_L3_COUNT.to_string());
            None
        }
    };
    let cores_per_cluster = match (hint.cores_per_cluster, arch, has_l3) {
        (Some(c), _, _) => c,
        (None, Arch::X86, true) => match instances("L2 cache") {
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
