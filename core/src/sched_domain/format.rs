//! The kernel's own renderings of sched domains, byte for byte, so a user can diff
//! them against their machine:
//!
//! - [`dmesg`]: `sched_domain_debug()` with `sched_verbose` (kernel/sched/topology.c);
//! - [`debugfs`]: `grep . /sys/kernel/debug/sched/domains/cpuN/domain*/{name,flags,level}`
//!   (kernel/sched/debug.c register_sd()/sd_flags_show()); before v5.13 the files were
//!   /proc/sys/kernel/sched_domain/cpuN/domainM/{name,flags};
//! - [`schedstat`]: the `cpuN` / `domainN <mask>` lines of /proc/schedstat
//!   (kernel/sched/stats.c, SCHEDSTAT_VERSION 15), counters zero.

use std::fmt::Write;

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
    let mut out = String::new();
    for line in &sd.build_messages {
        out.push_str(line);
        out.push('\n');
    }
    for cd in selected(sd, cpu) {
        sched_domain_debug(sd, cd, &mut out);
    }
    out
}

fn sched_domain_debug(sds: &SchedDomains, cd: &CpuDomains, out: &mut String) {
    let cpu = cd.cpu.0;
    if cd.domains.is_empty() {
        let _ = writeln!(out, "CPU{cpu} attaching NULL sched-domain.");
        return;
    }
    let _ = writeln!(out, "CPU{cpu} attaching sched-domain(s):");
    for (level, sd) in cd.domains.iter().enumerate() {
        let child = level.checked_sub(1).map(|i| &cd.domains[i]);
        let parent = cd.domains.get(level + 1);
        sched_domain_debug_one(sds, sd, child, parent, cd.cpu, level, out);
    }
}

/// `sched_domain_debug_one()`.
fn sched_domain_debug_one(
    sds: &SchedDomains,
    sd: &SchedDomain,
    child: Option<&SchedDomain>,
    parent: Option<&SchedDomain>,
    cpu: CpuId,
    level: usize,
    out: &mut String,
) {
    let release = sds.release;
    let _ = writeln!(
        out,
        "{:level$} domain-{level}: span={} level={}",
        "",
        sd.span.to_list(),
        sd.name
    );
    if !sd.span.test_cpu(cpu) {
        let _ = writeln!(out, "ERROR: domain->span does not contain CPU{}", cpu.0);
    }
    if let Some(g) = sd.groups.first() {
        if !g.span.test_cpu(cpu) {
            let _ = writeln!(out, "ERROR: domain->groups does not contain CPU{}", cpu.0);
        }
    }
    for (flag, shared_child, shared_parent, bit) in sd.flags.each_with_meta() {
        if shared_child && child.is_some_and(|c| !c.flags.contains(flag)) {
            let _ = writeln!(
                out,
                "ERROR: flag {} set here but not in child",
                SdFlags::bit_name(bit, release)
            );
        }
        if shared_parent && parent.is_some_and(|p| !p.flags.contains(flag)) {
            let _ = writeln!(
                out,
                "ERROR: flag {} set here but not in parent",
                SdFlags::bit_name(bit, release)
            );
        }
    }
    let _ = write!(out, "{:w$} groups:", "", w = level + 1);
    let mut groupmask = CpuMask::new(sd.span.nr_cpu_ids());
    let mut pending_errors = Vec::new();
    for (i, g) in sd.groups.iter().enumerate() {
        if g.span.is_empty() {
            out.push('\n');
            out.push_str("ERROR: empty group\n");
            break;
        }
        // Overlapping (NUMA) groups may share CPUs by design.
        if !sd.flags.contains(SdFlags::OVERLAP) && groupmask.intersects(&g.span) {
            out.push('\n');
            out.push_str("ERROR: repeated CPUs\n");
            break;
        }
        groupmask.or_assign(&g.span);
        let _ = write!(out, " {}:{{ span={}", g.id.0, g.span.to_list());
        if sd.flags.contains(SdFlags::OVERLAP) && g.balance_mask != g.span {
            let _ = write!(out, " mask={}", g.balance_mask.to_list());
        }
        if g.capacity != 1024 {
            let _ = write!(out, " cap={}", g.capacity);
        }
        if i == 0 && child.is_some_and(|c| c.span != g.span) {
            // printk(KERN_ERR ...) mid-line: the kernel starts a new line for it.
            pending_errors.push("ERROR: domain->groups does not match domain->child");
        }
        out.push_str(" }");
        if i + 1 < sd.groups.len() {
            out.push(',');
        }
    }
    out.push('\n');
    for e in pending_errors {
        out.push_str(e);
        out.push('\n');
    }
    if sd.span != groupmask {
        out.push_str("ERROR: groups don't span domain->span\n");
    }
    if parent.is_some_and(|p| !groupmask.is_subset(&p.span)) {
        out.push_str("ERROR: parent span is not a superset of domain->span\n");
    }
}

/// What `grep . /sys/kernel/debug/sched/domains/cpuN/domain*/{name,flags,level}` prints
/// for each selected CPU (before v5.13: the /proc/sys/kernel/sched_domain files, which
/// had no `level`). Shell globbing sorts `domain10` before `domain2`, and so do we.
pub fn debugfs(sd: &SchedDomains, cpu: Option<CpuId>) -> String {
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
    let mut out = String::new();
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
                let _ = writeln!(out, "{root}/cpu{}/{dir}/{file}:{value}", cd.cpu.0);
            }
        }
    }
    out
}

/// The /proc/schedstat header and, per selected CPU, its `cpuN` line and a
/// `domainN <hex span>` line per domain. Counters are zero: nothing has run.
pub fn schedstat(sd: &SchedDomains, cpu: Option<CpuId>) -> String {
    let mut out = format!("version {}\ntimestamp 0\n", sd.release.schedstat_version());
    for cd in selected(sd, cpu) {
        let _ = writeln!(out, "cpu{} 0 0 0 0 0 0 0 0 0", cd.cpu.0);
        for (i, d) in cd.domains.iter().enumerate() {
            let _ = write!(out, "domain{i} {}", d.span.to_hex());
            // 3 idle types x 8 load-balance counters, then 12 more.
            for _ in 0..36 {
                out.push_str(" 0");
            }
            out.push('\n');
        }
    }
    out
}

/// The domains as JSON (one object for the machine, or the selected CPU's).
pub fn json(sd: &SchedDomains, cpu: Option<CpuId>) -> String {
    let r = match cpu {
        Some(c) => serde_json::to_string_pretty(&sd.try_cpu(c)),
        None => serde_json::to_string_pretty(sd),
    };
    r.unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
