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
//!
//! ```text
//!  mod.rs      which lines say lscpu (the format sniffer asks), the content lines
//!  rows.rs     the `-p` / `-e` columns by name and each row read into a CPU
//!  table.rs    `lscpu -p` and `lscpu -e`: their headers and rows
//!  summary.rs  the plain summary: a regular machine rebuilt from counts
//! ```

use super::Line;

mod rows;
mod summary;
mod table;

pub(crate) use summary::parse_summary;
pub(crate) use table::{parse_e, parse_p};

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

pub(super) fn content<'a, 'b>(lines: &'b [Line<'a>]) -> impl Iterator<Item = Line<'a>> + 'b
where
    'a: 'b,
{
    lines
        .iter()
        .copied()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
}
