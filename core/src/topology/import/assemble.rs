//! [`assemble`]: per-CPU records into a validated machine, after the levels' nesting
//! is checked ([`check_nesting`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{ImportError, ImportHint, NumaInfo, Parsed, RawCpu, NOTE_NO_DISTANCES};
use crate::cpumask::MAX_CPUS;
use crate::topology::spec::CpuSpec;
use crate::topology::{Machine, MachineSpec, Numbering};

/// Turns per-CPU records into a validated machine: checks the numbering, takes nodes
/// from `numactl -H` where lscpu has none, cross-checks them where it has, renumbers
/// nodes densely and picks the SLIT. Memory-only nodes the distance table lists are
/// kept, CPU-less: before v5.18 `sched_init_numa()` makes levels of their distances
/// (see `Release::numa_levels_over_cpu_nodes`). Without a distance table they are
/// dropped: nothing says how far they are.
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
    let distances = numa.as_ref().and_then(|n| n.distances.as_ref());
    // The CPUs' nodes and the distance table's, in id order.
    let all_nodes: BTreeSet<u32> = by_node
        .keys()
        .copied()
        .chain(
            distances
                .iter()
                .flat_map(|(header, _)| header.iter().copied()),
        )
        .collect();
    let dense: HashMap<u32, u16> = all_nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, i as u16))
        .collect();
    let numa_distance = match distances {
        Some((header, table)) => {
            let idx = |node: u32| {
                header
                    .iter()
                    .position(|&h| h == node)
                    .ok_or(ImportError::NoDistanceRow { node })
            };
            let picks: Vec<usize> = all_nodes
                .iter()
                .map(|&n| idx(n))
                .collect::<Result<_, _>>()?;
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

pub(super) fn list_of(set: &BTreeSet<u32>) -> String {
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
