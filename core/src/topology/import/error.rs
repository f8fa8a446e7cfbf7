//! [`ImportError`]: why a pasted text is not a machine, with the line (or JSON path)
//! to look at.

use thiserror::Error;

use super::MAX_INPUT_BYTES;
use crate::cpumask::MAX_CPUS;
use crate::topology::TopologyError;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ImportError {
    #[error("the text is empty: paste the output of `lscpu -p` or `lscpu -e` (optionally followed by `numactl -H`), or a JSON machine file")]
    Empty,
    #[error("the text is {bytes} bytes; machine descriptions are at most {MAX_INPUT_BYTES} bytes")]
    TooLarge { bytes: usize },
    #[error("line {line}: cannot tell what this is ({first:?}); paste the output of `lscpu -p`, `lscpu -e` or `numactl -H`, a sysfs topology dump, or a JSON machine file")]
    UnknownFormat { line: usize, first: String },
    /// A JSON machine file that does not read as one: `msg` says what is wrong and
    /// where, in the words a link's wrong field is told in ("the field `cpus[3].node`
    /// must be a whole number from 0 to 65535, found -1").
    #[error("line {line}, column {column}: {msg}")]
    Json {
        line: usize,
        column: usize,
        /// Where in the document, like `cpus[3].node`; empty at the top level.
        path: String,
        msg: String,
    },
    #[error("{format} needs its header line ({example}); it was not found")]
    NoHeader {
        format: &'static str,
        example: &'static str,
    },
    #[error("{format}: the header has no {column} column")]
    MissingColumn {
        format: &'static str,
        column: &'static str,
    },
    #[error(
        "line {line}: expected {expected} {sep}-separated fields like the header, found {found}"
    )]
    FieldCount {
        line: usize,
        expected: usize,
        found: usize,
        sep: &'static str,
    },
    #[error("line {line}: {column} is {value:?}; expected {expected}")]
    BadField {
        line: usize,
        column: String,
        value: String,
        expected: &'static str,
    },
    #[error("line {line}: {what}")]
    BadLine { line: usize, what: String },
    #[error("line {line}: CPU {cpu} {what}")]
    Impossible { line: usize, cpu: u32, what: String },
    #[error("line {line}: CPU {cpu} appears twice")]
    DuplicateCpu { line: usize, cpu: u32 },
    #[error("CPU {missing} is not listed; CPU numbers must run from 0 without gaps")]
    CpuGap { missing: u32 },
    #[error("CPU {cpu} is offline but CPU {above} is online; schedlab numbers CPUs 0..n-1 without gaps, so bring CPU {cpu} online (echo 1 > /sys/devices/system/cpu/cpu{cpu}/online) and capture again")]
    OfflineGap { cpu: u32, above: u32 },
    #[error("no online CPU is listed")]
    NoOnlineCpus,
    #[error("the machine has {cpus} CPUs; schedlab models at most {MAX_CPUS}")]
    TooManyCpus { cpus: u64 },
    /// A CPU number past the limit: the line, not the count it would make, is the
    /// problem (one stray CPU 99999 is not a 100000-CPU machine).
    #[error("line {line}: CPU {cpu} is past schedlab's limit: CPUs are numbered 0 to {} (at most {MAX_CPUS} CPUs)", MAX_CPUS - 1)]
    CpuNumberTooLarge { line: usize, cpu: String },
    #[error("this is plain `lscpu` output, which {why}; paste `lscpu -p` or `lscpu -e` instead")]
    SummaryNotEnough { why: String },
    #[error("the import hint does not fit the text: {what}")]
    BadHint { what: String },
    #[error("`numactl -H` gives nodes and distances but no cores or caches: paste `lscpu -p` or `lscpu -e` first, then `numactl -H` after a blank line")]
    NumactlOnly,
    #[error("node {node}: lscpu lists CPUs {lscpu:?} but numactl lists {numactl:?}; paste both from the same boot")]
    NodeMismatch {
        node: u32,
        lscpu: String,
        numactl: String,
    },
    #[error("node {node} has CPUs but no row in the `node distances:` table")]
    NoDistanceRow { node: u32 },
    /// Another schedlab file (a wake-up state file, the page's scenario): what it
    /// is and what reads it.
    #[error("{0}")]
    OtherFile(String),
    #[error("the machine description is inconsistent: {0}")]
    Topology(#[from] TopologyError),
    /// A JSON machine file's inconsistency, at the line of the entry it names.
    #[error("line {line}: the machine description is inconsistent: {source}")]
    TopologyAt {
        line: usize,
        #[source]
        source: TopologyError,
    },
}
