//! A sysfs topology dump: one row per CPU holding the files of
//! `/sys/devices/system/cpu/cpuN/topology/`, plus optional node and cache rows.
//!
//! ```text
//! # cpu physical_package_id die_id cluster_id core_id thread_siblings_list cluster_cpus_list core_siblings_list die_cpus_list package_cpus_list
//! cpu0 36 -1 138 0 0 0-3 0-63 0 0-63
//! node0 cpulist=0-31 distance=10 16 32 33
//! cpu0 index3 level=3 type=Unified size=32768K shared_cpu_list=0-31
//! ```
//!
//! A dump like this comes out of a shell loop such as
//! `for c in /sys/devices/system/cpu/cpu[0-9]*; do echo $(basename $c) $(cat $c/topology/{physical_package_id,...}); done`.
//! The `# cpu ...` comment names the columns (any order, any subset); without it the
//! order above is assumed.
//!
//! Grouping uses the sibling lists, not the ids: firmware ids (`cluster_id` 65535 on
//! x86, PPTT offsets like 138 on arm64) say nothing the lists do not.
//! - core = `thread_siblings_list` (or `core_cpus_list`), else the CPU alone;
//! - cluster = `cluster_cpus_list`, else the core;
//! - package = `package_cpus_list` / `core_siblings_list` / `physical_package_id`;
//! - LLC = `shared_cpu_list` of the highest cache level among the cache rows. CPUs no
//!   cache row covers get their package ∩ node, which is what arm64's
//!   `cpu_coregroup_mask()` falls back to without cache information; so do all CPUs on
//!   arm64 when a cache list spans packages (an ACPI PPTT without cache entries). An
//!   LLC narrower than the SMT core (a device tree without cache nodes, as QEMU's) is
//!   refused, saying the firmware describes no shared cache.
//!
//! The lists are checked as the kernel builds its masks: each holds its CPU, is the
//! same for every CPU it names, and core ⊆ cluster ⊆ package.

use std::collections::HashMap;

use super::{
    arch_or_default, is_number, ImportError, ImportHint, Interner, Line, NumaInfo, Parsed, RawCpu,
};
use crate::cpumask::{CpuId, CpuMask, MAX_CPUS};
use crate::json_words::shorten;
use crate::topology::{Arch, MAX_NODES};

const DEFAULT_COLUMNS: [&str; 10] = [
    "cpu",
    "physical_package_id",
    "die_id",
    "cluster_id",
    "core_id",
    "thread_siblings_list",
    "cluster_cpus_list",
    "core_siblings_list",
    "die_cpus_list",
    "package_cpus_list",
];

/// `cpu12 ...`
pub(crate) fn is_cpu_row(line: &str) -> bool {
    cpu_number(line.split_whitespace().next().unwrap_or("")).is_some()
}

fn cpu_number(word: &str) -> Option<&str> {
    word.strip_prefix("cpu").filter(|n| is_number(n))
}

fn bad(line: usize, what: impl Into<String>) -> ImportError {
    ImportError::BadLine {
        line,
        what: what.into(),
    }
}

/// A CPU list normalised to the kernel's own spelling, so `0-3` and `0,1,2,3` match.
fn list_key(line: usize, column: &str, text: &str) -> Result<String, ImportError> {
    CpuMask::parse_list(MAX_CPUS, text)
        .map(|m| m.to_list())
        .map_err(|e| ImportError::BadField {
            line,
            column: column.to_string(),
            value: format!("{text} ({e})"),
            expected: "a CPU list like 0-3,8",
        })
}

fn parse_mask(line: usize, column: &str, text: &str) -> Result<CpuMask, ImportError> {
    CpuMask::parse_list(MAX_CPUS, text).map_err(|e| ImportError::BadField {
        line,
        column: column.to_string(),
        value: format!("{text} ({e})"),
        expected: "a CPU list like 0-3,8",
    })
}

fn leaves_out(line: usize, cpu: u32, column: &str, mask: &CpuMask) -> ImportError {
    bad(
        line,
        format!(
            "CPU {cpu}'s {column} is {}, which leaves out CPU {cpu} itself; the kernel's sibling masks always hold their CPU",
            list_or_empty(mask)
        ),
    )
}

fn list_or_empty(mask: &CpuMask) -> String {
    if mask.is_empty() {
        "empty".to_string()
    } else {
        mask.to_list()
    }
}

/// What the kernel's sibling masks always are, checked on the dump's lists: each holds
/// its own CPU; a list is the same for every CPU it names (the masks are built
/// symmetrically, `cpumask_set_cpu(cpu, sibling(other))` and the converse); and the
/// levels nest, SMT core ⊆ cluster ⊆ package (`update_siblings_masks()` only links
/// CPUs of one package; `topology_span_sane()` refuses masks that partially overlap).
/// `levels` are the core, cluster and package columns in that order.
fn check_sibling_lists(
    columns: &[String],
    rows: &[(usize, u32, Vec<&str>)],
    levels: [Option<usize>; 3],
) -> Result<RowMasks, ImportError> {
    let mut row_of: HashMap<u32, usize> = HashMap::new();
    for (i, (n, cpu, _)) in rows.iter().enumerate() {
        if row_of.insert(*cpu, i).is_some() {
            return Err(ImportError::DuplicateCpu {
                line: *n,
                cpu: *cpu,
            });
        }
    }
    let list_cols: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].ends_with("_list"))
        .collect();
    // masks[row][k] is the list in column list_cols[k].
    let mut masks: Vec<Vec<CpuMask>> = Vec::with_capacity(rows.len());
    for (n, cpu, words) in rows {
        let mut row = Vec::with_capacity(list_cols.len());
        for &c in &list_cols {
            let m = parse_mask(*n, &columns[c], words[c])?;
            if !m.test_cpu(CpuId(*cpu)) {
                return Err(leaves_out(*n, *cpu, &columns[c], &m));
            }
            row.push(m);
        }
        masks.push(row);
    }
    for (k, &c) in list_cols.iter().enumerate() {
        // One check per distinct list: n rows, at most n² membership tests in all.
        let mut seen: HashMap<&str, ()> = HashMap::new();
        for (i, (n, cpu, words)) in rows.iter().enumerate() {
            if seen.insert(words[c], ()).is_some() {
                continue;
            }
            let mine = &masks[i][k];
            for other in mine.iter() {
                let Some(&j) = row_of.get(&other.0) else {
                    continue; // not in the dump: the numbering check reports it
                };
                if masks[j][k] != *mine {
                    let (m, _, _) = &rows[j];
                    return Err(bad(
                        *n,
                        format!(
                            "CPU {cpu}'s {col} is {}, which includes CPU {}, but CPU {}'s {col} (line {m}) is {}; sibling lists must be the same for every CPU they list",
                            mine.to_list(),
                            other.0,
                            other.0,
                            masks[j][k].to_list(),
                            col = columns[c],
                        ),
                    ));
                }
            }
        }
    }
    let k_of = |col: Option<usize>| col.and_then(|c| list_cols.iter().position(|&l| l == c));
    let [core, cluster, package] = levels.map(k_of);
    for (inner, outer) in [(core, cluster), (cluster, package), (core, package)] {
        let (Some(inner), Some(outer)) = (inner, outer) else {
            continue;
        };
        for (i, (n, cpu, _)) in rows.iter().enumerate() {
            if !masks[i][inner].is_subset(&masks[i][outer]) {
                return Err(bad(
                    *n,
                    format!(
                        "CPU {cpu}'s {} ({}) is not within its {} ({}); each level must nest inside the next",
                        columns[list_cols[inner]],
                        masks[i][inner].to_list(),
                        columns[list_cols[outer]],
                        masks[i][outer].to_list(),
                    ),
                ));
            }
        }
    }
    // The package of each row: its list, or the rows with the same id.
    let package = match (package, levels[2]) {
        (Some(k), _) => masks.iter().map(|m| m[k].clone()).collect(),
        (None, Some(c)) => {
            let mut by_id: HashMap<&str, CpuMask> = HashMap::new();
            for (_, cpu, words) in rows {
                by_id
                    .entry(words[c])
                    .or_insert_with(|| CpuMask::new(MAX_CPUS))
                    .set_cpu(CpuId(*cpu));
            }
            rows.iter().map(|(_, _, w)| by_id[w[c]].clone()).collect()
        }
        (None, None) => vec![CpuMask::full(MAX_CPUS); rows.len()],
    };
    let core = rows
        .iter()
        .enumerate()
        .map(|(i, (_, cpu, _))| match core {
            Some(k) => masks[i][k].clone(),
            None => CpuMask::of(MAX_CPUS, CpuId(*cpu)),
        })
        .collect();
    Ok(RowMasks { core, package })
}

/// The SMT core and the package of each topology row, as CPU masks.
struct RowMasks {
    core: Vec<CpuMask>,
    package: Vec<CpuMask>,
}

/// A sysfs dump's rows as read, before any is checked against another.
struct Dump<'a> {
    /// The topology rows' columns: the `# cpu ...` comment's, else the defaults.
    columns: Vec<String>,
    /// (line, CPU, words) of each topology row.
    topo_rows: Vec<(usize, u32, Vec<&'a str>)>,
    /// (line, CPU, level, list) of each data or unified cache row.
    llc_lists: Vec<(usize, u32, u32, &'a str)>,
    /// Each node row's CPUs.
    node_cpus: Vec<(u32, Vec<u32>)>,
    /// CPU -> (node, line).
    node_of: HashMap<u32, (u32, usize)>,
    /// (line, node, distances) of each node row that has them.
    dist_rows: Vec<(usize, u32, Vec<u8>)>,
}

impl<'a> Dump<'a> {
    /// Reads every row. Errors, line by line: a CPU number too large, a bad cache,
    /// topology or node row, too many CPUs, a line of no known kind.
    fn read(lines: &[Line<'a>]) -> Result<Dump<'a>, ImportError> {
        let mut d = Dump {
            columns: DEFAULT_COLUMNS.iter().map(|s| s.to_string()).collect(),
            topo_rows: Vec::new(),
            llc_lists: Vec::new(),
            node_cpus: Vec::new(),
            node_of: HashMap::new(),
            dist_rows: Vec::new(),
        };
        for &(n, l) in lines {
            let t = l.trim();
            if t.is_empty() {
                continue;
            }
            if let Some(c) = t.strip_prefix('#') {
                let words: Vec<&str> = c.split_whitespace().collect();
                if words.first() == Some(&"cpu") && words.len() > 1 {
                    d.columns = words.iter().map(|s| s.to_string()).collect();
                }
                continue;
            }
            let words: Vec<&str> = t.split_whitespace().collect();
            let first = words.first().copied().unwrap_or("");
            if let Some(num) = cpu_number(first) {
                d.read_cpu_row(n, num, words)?;
            } else if let Some(id) = first.strip_prefix("node").filter(|n| is_number(n)) {
                d.read_node_row(n, id, t[first.len()..].trim())?;
            } else {
                return Err(bad(
                    n,
                    "expected a `cpuN ...` or `nodeN cpulist=...` row of the sysfs dump",
                ));
            }
        }
        Ok(d)
    }

    /// A `cpuN ...` row on line `n`: a cache row (`cpuN indexK level=L ...`; an
    /// instruction cache is passed over) or a topology row of one word per column.
    /// Errors, in order: the CPU number, a cache row without its level or list, a
    /// topology row of the wrong width, more rows than CPUs the model holds.
    fn read_cpu_row(
        &mut self,
        n: usize,
        num: &str,
        words: Vec<&'a str>,
    ) -> Result<(), ImportError> {
        let cpu = match num.parse::<u32>() {
            Ok(c) if c < MAX_CPUS => c,
            _ => {
                return Err(ImportError::CpuNumberTooLarge {
                    line: n,
                    cpu: shorten(num),
                })
            }
        };
        if words.get(1).is_some_and(|w| w.starts_with("index")) {
            let get = |key: &str| {
                words
                    .iter()
                    .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
            };
            if get("type") == Some("Instruction") {
                return Ok(());
            }
            let level = get("level")
                .and_then(|v| v.parse::<u32>().ok())
                .ok_or_else(|| bad(n, "a cache row needs level=N"))?;
            let list = get("shared_cpu_list")
                .ok_or_else(|| bad(n, "a cache row needs shared_cpu_list=LIST"))?;
            self.llc_lists.push((n, cpu, level, list));
            return Ok(());
        }
        if words.len() != self.columns.len() {
            return Err(ImportError::FieldCount {
                line: n,
                expected: self.columns.len(),
                found: words.len(),
                sep: "whitespace",
            });
        }
        self.topo_rows.push((n, cpu, words));
        if self.topo_rows.len() > MAX_CPUS as usize {
            return Err(ImportError::TooManyCpus {
                cpus: self.topo_rows.len() as u64,
            });
        }
        Ok(())
    }

    /// A `nodeN cpulist=LIST distance=D D ...` row on line `n` (`rest` after the
    /// node word). Errors, in order: the node number, no `cpulist=`, a bad list, a
    /// CPU already in another node, a distance that is no number up to 255.
    fn read_node_row(&mut self, n: usize, id: &str, rest: &str) -> Result<(), ImportError> {
        let id = match id.parse::<u32>() {
            Ok(id) if (id as usize) < MAX_NODES => id,
            _ => return Err(bad(n, format!("node {id} is beyond the 1024-node limit"))),
        };
        let (list_part, dist_part) = match rest.split_once("distance=") {
            Some((a, b)) => (a.trim(), Some(b)),
            None => (rest, None),
        };
        let list = list_part
            .strip_prefix("cpulist=")
            .ok_or_else(|| bad(n, "a node row reads `nodeN cpulist=LIST distance=D D ...`"))?;
        let mask = CpuMask::parse_list(MAX_CPUS, list).map_err(|e| bad(n, e.to_string()))?;
        for c in mask.iter() {
            if let Some(&(other, l)) = self.node_of.get(&c.0) {
                if other != id {
                    return Err(bad(
                        n,
                        format!("CPU {} is in node {id} but also in node {other} (line {l}); a CPU is on one node", c.0),
                    ));
                }
            }
            self.node_of.insert(c.0, (id, n));
        }
        self.node_cpus
            .push((id, mask.iter().map(|c| c.0).collect()));
        if let Some(d) = dist_part {
            let row = d
                .split_whitespace()
                .map(|v| {
                    v.parse::<u8>().map_err(|_| ImportError::BadField {
                        line: n,
                        column: format!("node{id} distance"),
                        value: v.to_string(),
                        expected: "a number from 10 to 255",
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            self.dist_rows.push((n, id, row));
        }
        Ok(())
    }
}

/// A sysfs dump as a machine's CPUs (see the module docs for how each level is
/// grouped). Errors, in order: the rows ([`Dump::read`]), the sibling lists
/// ([`check_sibling_lists`]), the cache lists ([`llc_of_cpus`],
/// [`llcs_the_kernel_takes`]), a list column's text ([`raw_cpus`]), the node
/// distances ([`distance_table`]).
pub(crate) fn parse(lines: &[Line], hint: &ImportHint) -> Result<Parsed, ImportError> {
    let Dump {
        columns,
        topo_rows,
        llc_lists,
        node_cpus,
        node_of,
        dist_rows,
    } = Dump::read(lines)?;
    let col = |name: &str| columns.iter().position(|c| c == name);
    let core_col = col("thread_siblings_list").or(col("core_cpus_list"));
    let cluster_col = col("cluster_cpus_list");
    let pkg_col = col("package_cpus_list")
        .or(col("core_siblings_list"))
        .or(col("physical_package_id"));
    let mut notes = Vec::new();
    let arch = match (hint.arch, detect_arch(&columns, &topo_rows)) {
        (None, Some((arch, why))) => {
            notes.push(why);
            arch
        }
        _ => arch_or_default(hint, &mut notes),
    };
    let row_masks = check_sibling_lists(&columns, &topo_rows, [core_col, cluster_col, pkg_col])?;
    let mut llc_of = llc_of_cpus(&llc_lists)?;

    // arm64 with no cache shared between CPUs (QEMU's device tree has no cache nodes,
    // so cacheinfo knows only each CPU's L1): llc_sibling is the CPU alone, which the
    // machine carries as `no_shared_cache`; the `llc` ids fall back below.
    let no_shared_cache = arch == Arch::Arm64
        && topo_rows.len() > 1
        && !llc_of.is_empty()
        && llc_of.iter().all(|(cpu, (key, _))| *key == cpu.to_string());
    if no_shared_cache {
        llc_of.clear();
    }
    let no_valid_llc = !llcs_the_kernel_takes(arch, &topo_rows, &row_masks, &llc_of)?;
    if no_valid_llc {
        llc_of.clear();
    }

    let (cpus, fallback_llc) = raw_cpus(
        &columns,
        &topo_rows,
        [pkg_col, core_col, cluster_col],
        &node_of,
        &llc_of,
    )?;
    if fallback_llc {
        notes.push(if no_shared_cache {
            "no cache is shared between CPUs (the last cache level is private to each CPU, as with a device tree without cache nodes): arm64's llc_sibling is each CPU alone; the LLC assumed for the simulator is package ∩ node".to_string()
        } else {
            if no_valid_llc {
                super::NOTE_SYSFS_LLC_SPANS_PACKAGES
            } else if llc_lists.is_empty() {
                super::NOTE_SYSFS_NO_CACHE_ROWS
            } else {
                super::NOTE_SYSFS_CPUS_WITHOUT_CACHE
            }
            .to_string()
        });
    }
    let distances = distance_table(dist_rows)?;
    let numa = (!node_cpus.is_empty()).then_some(NumaInfo {
        node_cpus,
        distances,
    });
    Ok(Parsed {
        cpus,
        offline: Vec::new(),
        arch,
        numa,
        notes,
        source: "a sysfs topology dump",
        model: None,
        node_reclaim_distance: None,
        no_shared_cache,
    })
}

/// Each CPU's LLC from the highest cache level present: CPU -> (its list, the line).
/// Errors: a list that does not parse or leaves out its own CPU, two lists of that
/// level that overlap but differ.
fn llc_of_cpus(
    llc_lists: &[(usize, u32, u32, &str)],
) -> Result<HashMap<u32, (String, usize)>, ImportError> {
    let top = llc_lists.iter().map(|&(_, _, l, _)| l).max();
    let mut llc_of: HashMap<u32, (String, usize)> = HashMap::new(); // cpu -> (list, line)
    for &(n, cpu, level, list) in llc_lists {
        let mask = parse_mask(n, "shared_cpu_list", list)?;
        if !mask.test_cpu(CpuId(cpu)) {
            return Err(leaves_out(n, cpu, "cache index shared_cpu_list", &mask));
        }
        if Some(level) != top {
            continue;
        }
        let key = mask.to_list();
        for c in mask.iter() {
            match llc_of.get(&c.0) {
                Some((other, l)) if *other != key => {
                    return Err(bad(
                        n,
                        format!(
                            "CPU {cpu}'s level-{level} shared_cpu_list is {key}, which includes CPU {}, but line {l} gives CPU {} the shared_cpu_list {other}; CPUs sharing a cache must list the same CPUs",
                            c.0, c.0
                        ),
                    ))
                }
                Some(_) => {}
                None => {
                    llc_of.insert(c.0, (key.clone(), n));
                }
            }
        }
    }
    Ok(llc_of)
}

/// Whether the kernel would take the cache lists for LLCs. An ACPI PPTT without
/// cache entries makes every cache claim every CPU, across packages: arm64 then has
/// no valid LLC (cpu_topology[].llc_id stays -1) and cpu_coregroup_mask() falls back
/// to the package ∩ node, which is what CPUs without a cache row get (`false` here).
/// x86 reads its LLC from CPUID, which never spans packages: such a list is an
/// error there, as is an LLC narrower than its SMT core on any architecture.
fn llcs_the_kernel_takes(
    arch: Arch,
    topo_rows: &[(usize, u32, Vec<&str>)],
    row_masks: &RowMasks,
    llc_of: &HashMap<u32, (String, usize)>,
) -> Result<bool, ImportError> {
    for (i, (_, cpu, _)) in topo_rows.iter().enumerate() {
        let Some((key, line)) = llc_of.get(cpu) else {
            continue;
        };
        let llc = parse_mask(*line, "shared_cpu_list", key)?;
        let package = &row_masks.package[i];
        if !llc.is_subset(package) {
            if arch == Arch::X86 {
                return Err(bad(
                    *line,
                    format!(
                        "CPU {cpu}'s LLC ({key}) reaches beyond its package ({}); x86 takes the LLC from CPUID, which never spans packages",
                        package.to_list()
                    ),
                ));
            }
            return Ok(false);
        }
        let core = &row_masks.core[i];
        if llc.is_subset(core) && llc != *core {
            // A device tree without cache nodes (QEMU's): every cache private to
            // one CPU, so the "LLC" is narrower than the SMT core.
            return Err(bad(
                *line,
                format!(
                    "the LLC of CPU {cpu} ({key}) is narrower than its SMT core ({}): the firmware describes no shared cache; add the cache rows of a machine that has them, or write a JSON machine file with the LLC you mean",
                    core.to_list()
                ),
            ));
        }
    }
    Ok(true)
}

/// The CPUs of the topology rows: package, core and cluster from the columns
/// `[package, core, cluster]` (a list column by its list, an id column by its id),
/// the node from the node rows, the LLC from `llc_of`, else package ∩ node (then the
/// second value is true). Errors: a list column whose text does not parse.
fn raw_cpus(
    columns: &[String],
    topo_rows: &[(usize, u32, Vec<&str>)],
    [pkg_col, core_col, cluster_col]: [Option<usize>; 3],
    node_of: &HashMap<u32, (u32, usize)>,
    llc_of: &HashMap<u32, (String, usize)>,
) -> Result<(Vec<RawCpu>, bool), ImportError> {
    let mut packages = Interner::new();
    let mut cores = Interner::new();
    let mut clusters = Interner::new();
    let mut llcs = Interner::new();
    let mut fallback_llc = false;
    let mut cpus = Vec::with_capacity(topo_rows.len());
    for (n, cpu, words) in topo_rows {
        let (n, cpu) = (*n, *cpu);
        let key = |c: Option<usize>| -> Result<Option<String>, ImportError> {
            match c {
                Some(i) if columns[i].ends_with("_list") => {
                    list_key(n, &columns[i], words[i]).map(Some)
                }
                Some(i) => Ok(Some(words[i].to_string())),
                None => Ok(None),
            }
        };
        let package = packages.id(key(pkg_col)?.unwrap_or_default());
        let core_key = key(core_col)?.unwrap_or_else(|| cpu.to_string());
        let core = cores.id(core_key.clone());
        let cluster_key = key(cluster_col)?.unwrap_or(core_key);
        let node = node_of.get(&cpu).map(|&(id, _)| id);
        let llc = match llc_of.get(&cpu) {
            Some((k, _)) => llcs.id((k.clone(), 0, 0)),
            None => {
                fallback_llc = true;
                llcs.id((String::new(), package, node.unwrap_or(0)))
            }
        };
        let cluster = clusters.id((llc, cluster_key));
        cpus.push(RawCpu {
            cpu,
            line: n,
            package,
            // assemble() takes nodes from the node rows (or numactl) and cross-checks.
            node: None,
            llc,
            cluster,
            core,
        });
    }
    Ok((cpus, fallback_llc))
}

/// The node distance table, nodes in ascending id order as each node's distance
/// file lists them; `None` without distance rows. Error: a row whose length is not
/// the number of rows.
#[allow(clippy::type_complexity)]
fn distance_table(
    mut dist_rows: Vec<(usize, u32, Vec<u8>)>,
) -> Result<Option<(Vec<u32>, Vec<Vec<u8>>)>, ImportError> {
    dist_rows.sort_by_key(|&(_, id, _)| id);
    if dist_rows.is_empty() {
        return Ok(None);
    }
    let ids: Vec<u32> = dist_rows.iter().map(|&(_, id, _)| id).collect();
    let mut table = Vec::with_capacity(ids.len());
    for (n, id, row) in &dist_rows {
        if row.len() != ids.len() {
            return Err(bad(
                *n,
                format!(
                    "node{id} has {} distances but {} nodes have distance rows",
                    row.len(),
                    ids.len()
                ),
            ));
        }
        table.push(row.clone());
    }
    Ok(Some((ids, table)))
}

/// The architecture a dump's own files show, when `--arch` does not say, and why.
/// - `die_id` -1: older arm64 kernels printed it (the generic `topology_die_id()` was
///   -1; the Kunpeng 920 dump of v5.15 has it); x86 numbers dies from 0.
/// - cluster files without die files: drivers/base/topology.c creates `die_id` and
///   `die_cpus_list` only under TOPOLOGY_DIE_SYSFS (include/linux/topology.h: an arch
///   that defines `topology_die_id`, i.e. x86 and s390), and x86 has had them since
///   v5.2, before the cluster files (v5.16). Debian's arm64 6.1 and 6.12 show cluster
///   files and no die files (core/tests/fixtures/qemu/arm64-*). A dump written by a
///   loop over the files that exist (scripts/qemu-fixtures) shows which.
fn detect_arch(columns: &[String], rows: &[(usize, u32, Vec<&str>)]) -> Option<(Arch, String)> {
    let col = |name: &str| columns.iter().position(|c| c == name);
    if let Some(d) = col("die_id") {
        if let Some((n, cpu, _)) = rows.iter().find(|(_, _, w)| w[d] == "-1") {
            return Some((
                Arch::Arm64,
                format!("CPU {cpu}'s die_id is -1 (line {n}), which x86 never prints: read as arm64 (set the architecture to override)"),
            ));
        }
        return None;
    }
    let has_cluster = col("cluster_cpus_list").is_some() || col("cluster_id").is_some();
    (has_cluster && col("die_cpus_list").is_none()).then(|| {
        (
            Arch::Arm64,
            "the dump has cluster files but no die files, which x86 kernels have had since v5.2: read as arm64 (set the architecture to override)".to_string(),
        )
    })
}
