//! Which format a pasted text is: [`Format`], judged from its first meaningful lines
//! ([`sniff`] for the page, `sniff_lines` for [`load_machine`](super::load_machine)).

use super::{is_number, lscpu, numactl, sysfs, Line};

/// The formats [`load_machine`](super::load_machine) recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// A JSON machine file ([`MachineSpec`](crate::topology::MachineSpec)).
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

pub(super) fn sniff_lines(lines: &[Line]) -> Option<Format> {
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
