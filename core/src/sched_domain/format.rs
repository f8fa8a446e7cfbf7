//! The kernel's own renderings of sched domains, byte for byte, so a user can diff
//! them against their machine:
//!
//! - [`dmesg`]: `sched_domain_debug()` with `sched_verbose` (kernel/sched/topology.c),
//!   then, for the whole machine, build_sched_domains()'s "root domain span" line;
//! - [`debugfs`]: `grep . /sys/kernel/debug/sched/domains/cpuN/domain*/{name,flags,level}`
//!   (kernel/sched/debug.c register_sd()/sd_flags_show()); before v5.13 the files were
//!   /proc/sys/kernel/sched_domain/cpuN/domainM/{name,flags};
//! - [`schedstat`]: the `cpuN` / `domainN <mask>` lines of /proc/schedstat
//!   (kernel/sched/stats.c, SCHEDSTAT_VERSION 15), counters zero.
//!
//! Each format is written CPU by CPU to an [`io::Write`] (`write_dmesg()`, …), so a
//! 4096-CPU machine's output (4096 × 4096 groups: 250 MB as dmesg, 4 GB as JSON)
//! streams with memory bounded by the domains themselves; the `String` functions
//! (the page's) collect the same bytes.

use std::io::{self, Write};

use crate::cpumask::{CpuId, CpuMask};

use super::{CpuDomains, SchedDomain, SchedDomains, SdFlags};

/// Selects CPUs: one, or all online ones.
fn selected(sd: &SchedDomains, cpu: Option<CpuId>) -> Vec<&CpuDomains> {
    match cpu {
        Some(c) => sd.try_cpu(c).into_iter().collect(),
        None => sd.cpus.iter().flatten().collect(),
    }
}

/// `sched_domain_debug(sd, cpu)` for the selected CPUs, preceded by the lines printed
/// while building (e.g. "BUG: arch topology borken"). No timestamps.
pub fn dmesg(sd: &SchedDomains, cpu: Option<CpuId>) -> String {
    collect(|out| write_dmesg(out, sd, cpu))
}

/// [`dmesg`], written to `out` CPU by CPU.
pub fn write_dmesg(out: &mut impl Write, sd: &SchedDomains, cpu: Option<CpuId>) -> io::Result<()> {
    for line in &sd.build_messages {
        writeln!(out, "{line}")?;
    }
    for cd in selected(sd, cpu) {
        sched_domain_debug(sd, cd, out)?;
    }
    // build_sched_domains() after the attach loop, once per build (topology.c
    // v6.8:2532-2535): only with the whole machine's blocks.
    if cpu.is_none() {
        if sd.release.has_rd_max_cpu_capacity() {
            writeln!(
                out,
                "root domain span: {} (max cpu_capacity = {})",
                sd.cpu_map.to_list(),
                sd.max_cpu_capacity
            )?;
        } else {
            writeln!(out, "root domain span: {}", sd.cpu_map.to_list())?;
        }
    }
    Ok(())
}

/// The bytes `write` writes, as a string (every writer here writes UTF-8).
fn collect(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(&mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn sched_domain_debug(sds: &SchedDomains, cd: &CpuDomains, out: &mut impl Write) -> io::Result<()> {
    let cpu = cd.cpu.0;
    if cd.domains.is_empty() {
        return writeln!(out, "CPU{cpu} attaching NULL sched-domain.");
    }
    writeln!(out, "CPU{cpu} attaching sched-domain(s):")?;
    for (level, sd) in cd.domains.iter().enumerate() {
        let child = level.checked_sub(1).map(|i| &cd.domains[i]);
        let parent = cd.domains.get(level + 1);
        sched_domain_debug_one(sds, sd, child, parent, cd.cpu, level, out)?;
    }
    Ok(())
}

/// `sched_domain_debug_one()`.
fn sched_domain_debug_one(
    sds: &SchedDomains,
    sd: &SchedDomain,
    child: Option<&SchedDomain>,
    parent: Option<&SchedDomain>,
    cpu: CpuId,
    level: usize,
    out: &mut impl Write,
) -> io::Result<()> {
    let release = sds.release;
    writeln!(
        out,
        "{:level$} domain-{level}: span={} level={}",
        "",
        sd.span.to_list(),
        sd.name
    )?;
    if !sd.span.test_cpu(cpu) {
        writeln!(out, "ERROR: domain->span does not contain CPU{}", cpu.0)?;
    }
    if let Some(g) = sd.groups.first() {
        if !g.span.test_cpu(cpu) {
            writeln!(out, "ERROR: domain->groups does not contain CPU{}", cpu.0)?;
        }
    }
    for (flag, shared_child, shared_parent, bit) in sd.flags.each_with_meta() {
        if shared_child && child.is_some_and(|c| !c.flags.contains(flag)) {
            writeln!(
                out,
                "ERROR: flag {} set here but not in child",
                SdFlags::bit_name(bit, release)
            )?;
        }
        if shared_parent && parent.is_some_and(|p| !p.flags.contains(flag)) {
            writeln!(
                out,
                "ERROR: flag {} set here but not in parent",
                SdFlags::bit_name(bit, release)
            )?;
        }
    }
    write!(out, "{:w$} groups:", "", w = level + 1)?;
    let mut groupmask = CpuMask::new(sd.span.nr_cpu_ids());
    let mut pending_errors = Vec::new();
    for (i, g) in sd.groups.iter().enumerate() {
        if g.span.is_empty() {
            out.write_all(b"\nERROR: empty group\n")?;
            break;
        }
        // Overlapping (NUMA) groups may share CPUs by design.
        if !sd.flags.contains(SdFlags::OVERLAP) && groupmask.intersects(&g.span) {
            out.write_all(b"\nERROR: repeated CPUs\n")?;
            break;
        }
        groupmask.or_assign(&g.span);
        write!(out, " {}:{{ span={}", g.id.0, g.span.to_list())?;
        if sd.flags.contains(SdFlags::OVERLAP) && g.balance_mask != g.span {
            write!(out, " mask={}", g.balance_mask.to_list())?;
        }
        if g.capacity != 1024 {
            write!(out, " cap={}", g.capacity)?;
        }
        if i == 0 && child.is_some_and(|c| c.span != g.span) {
            // printk(KERN_ERR ...) mid-line: the kernel starts a new line for it.
            pending_errors.push("ERROR: domain->groups does not match domain->child");
        }
        out.write_all(b" }")?;
        if i + 1 < sd.groups.len() {
            out.write_all(b",")?;
        }
    }
    out.write_all(b"\n")?;
    for e in pending_errors {
        writeln!(out, "{e}")?;
    }
    if sd.span != groupmask {
        out.write_all(b"ERROR: groups don't span domain->span\n")?;
    }
    if parent.is_some_and(|p| !groupmask.is_subset(&p.span)) {
        out.write_all(b"ERROR: parent span is not a superset of domain->span\n")?;
    }
    Ok(())
}

/// What `grep . /sys/kernel/debug/sched/domains/cpuN/domain*/{name,flags,level}` prints
/// for each selected CPU (before v5.13: the /proc/sys/kernel/sched_domain files, which
/// had no `level`). Shell globbing sorts `domain10` before `domain2`, and so do we.
pub fn debugfs(sd: &SchedDomains, cpu: Option<CpuId>) -> String {
    collect(|out| write_debugfs(out, sd, cpu))
}

/// [`debugfs`], written to `out` CPU by CPU.
pub fn write_debugfs(
    out: &mut impl Write,
    sd: &SchedDomains,
    cpu: Option<CpuId>,
) -> io::Result<()> {
    let release = sd.release;
    let root = if release.has_debugfs_domains() {
        "/sys/kernel/debug/sched/domains"
    } else {
        "/proc/sys/kernel/sched_domain"
    };
    let mut files: Vec<&str> = vec!["name", "flags"];
    if release.has_debugfs_level() {
        files.push("level");
    }
    for cd in selected(sd, cpu) {
        let mut dirs: Vec<(String, &SchedDomain)> = cd
            .domains
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("domain{i}"), d))
            .collect();
        dirs.sort_by(|a, b| a.0.cmp(&b.0));
        for file in &files {
            for (dir, d) in &dirs {
                let value = match *file {
                    "name" => d.name.to_string(),
                    // sd_flags_show(): each name followed by a space.
                    "flags" => d
                        .flags
                        .names(release)
                        .iter()
                        .map(|n| format!("{n} "))
                        .collect(),
                    _ => d.level.to_string(),
                };
                writeln!(out, "{root}/cpu{}/{dir}/{file}:{value}", cd.cpu.0)?;
            }
        }
    }
    Ok(())
}

/// A domain line's counters: 3 idle types × 8 load-balance counters, then 12 more.
const ZERO_COUNTERS: &str = concat!(
    " 0 0 0 0 0 0 0 0 0 0 0 0",
    " 0 0 0 0 0 0 0 0 0 0 0 0",
    " 0 0 0 0 0 0 0 0 0 0 0 0\n"
);

/// The /proc/schedstat header and, per selected CPU, its `cpuN` line and a
/// `domainN <hex span>` line per domain. Counters are zero: nothing has run.
pub fn schedstat(sd: &SchedDomains, cpu: Option<CpuId>) -> String {
    collect(|out| write_schedstat(out, sd, cpu))
}

/// [`schedstat`], written to `out` CPU by CPU.
pub fn write_schedstat(
    out: &mut impl Write,
    sd: &SchedDomains,
    cpu: Option<CpuId>,
) -> io::Result<()> {
    write!(
        out,
        "version {}\ntimestamp 0\n",
        sd.release.schedstat_version()
    )?;
    for cd in selected(sd, cpu) {
        writeln!(out, "cpu{} 0 0 0 0 0 0 0 0 0", cd.cpu.0)?;
        for (i, d) in cd.domains.iter().enumerate() {
            write!(out, "domain{i} {}", d.span.to_hex())?;
            out.write_all(ZERO_COUNTERS.as_bytes())?;
        }
    }
    Ok(())
}

/// The domains as JSON (one object for the machine, or the selected CPU's).
pub fn json(sd: &SchedDomains, cpu: Option<CpuId>) -> String {
    let mut out = Vec::new();
    match write_json(&mut out, sd, cpu) {
        Ok(()) => String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        Err(e) => format!("{{\"error\": \"{e}\"}}"),
    }
}

/// [`json`], serialised straight to `out` (serde walks the CPUs in order).
pub fn write_json(out: &mut impl Write, sd: &SchedDomains, cpu: Option<CpuId>) -> io::Result<()> {
    match cpu {
        Some(c) => serde_json::to_writer_pretty(out, &sd.try_cpu(c)),
        None => serde_json::to_writer_pretty(out, sd),
    }
    .map_err(io::Error::other)
}
