//! The CPUs a run may use: [`CpuSelection`], as `--cpus` and the page's CPU field
//! write them.

use thiserror::Error;

use crate::cpumask::{CpuMask, CpuMaskError};
use crate::topology::{Machine, NodeId};

/// The CPUs a workload may use, as the page's CPU field and `--cpus` take them:
/// `all`, a kernel CPU list (`0-31,64`), `nodeN` or `nodeA-B`.
///
/// Parsed against a machine, so a selection is always one that machine has; it keeps
/// its form (`node0` stays `node0`), which is what links and command lines print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuSelection {
    /// Every CPU of the machine.
    All,
    /// The CPUs of nodes `first..=last`.
    Nodes { first: NodeId, last: NodeId },
    /// An explicit, non-empty CPU list, sized to the machine.
    Cpus(CpuMask),
}

/// A machine's nodes in words: `only node 0` (not `nodes 0-0`), `nodes 0-3`.
fn nodes_phrase(last: usize) -> String {
    if last == 0 {
        "only node 0".to_string()
    } else {
        format!("nodes 0-{last}")
    }
}

/// Why a CPU selection does not fit a machine.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CpuSelectionError {
    #[error("{text:?}: write all, a CPU list (0-31,64), nodeN or nodeA-B, e.g. node0 or node0-1")]
    NodeSyntax { text: String },
    #[error("{text:?}: {machine} has {}", nodes_phrase(*last))]
    NoSuchNode {
        text: String,
        machine: String,
        last: usize,
    },
    #[error("{0}")]
    List(#[from] CpuMaskError),
    #[error("the CPU list is empty")]
    Empty,
    /// Every node selected is CPU-less (memory-only): nothing could run there.
    #[error("{text:?}: node {first}-{last} of {machine} has no CPUs (memory-only), so nothing can run there; pick nodes with CPUs")]
    NoCpusOnNodes {
        text: String,
        machine: String,
        first: u16,
        last: u16,
    },
    #[error("the CPU list {list} is for a machine of {list_cpus} CPUs, not {machine_cpus}")]
    OtherMachine {
        list: String,
        list_cpus: u32,
        machine_cpus: u32,
    },
}

impl CpuSelection {
    /// Reads a selection of `machine`'s CPUs.
    pub fn parse(machine: &Machine, text: &str) -> Result<CpuSelection, CpuSelectionError> {
        let t = text.trim();
        if t == "all" {
            return Ok(CpuSelection::All);
        }
        if let Some(rest) = t.strip_prefix("node") {
            let (a, b) = rest.split_once('-').unwrap_or((rest, rest));
            let parse = |s: &str| {
                s.parse::<usize>()
                    .map_err(|_| CpuSelectionError::NodeSyntax {
                        text: t.to_string(),
                    })
            };
            let (a, b) = (parse(a)?, parse(b)?);
            let no_such = || CpuSelectionError::NoSuchNode {
                text: t.to_string(),
                machine: machine.name.clone(),
                last: machine.nr_nodes().saturating_sub(1),
            };
            if a > b || b >= machine.nr_nodes() {
                return Err(no_such());
            }
            let node = |n: usize| NodeId::try_from(n).map_err(|_| no_such());
            let sel = CpuSelection::Nodes {
                first: node(a)?,
                last: node(b)?,
            };
            // Said at parse time: a CPU-less node's selection is refused here, not by
            // an empty run later.
            sel.mask(machine)?;
            return Ok(sel);
        }
        let m = CpuMask::parse_list(machine.nr_cpus(), t)?;
        if m.is_empty() {
            return Err(CpuSelectionError::Empty);
        }
        Ok(CpuSelection::Cpus(m))
    }

    /// The selected CPUs of `machine` (the machine it was parsed for).
    pub fn mask(&self, machine: &Machine) -> Result<CpuMask, CpuSelectionError> {
        match self {
            CpuSelection::All => Ok(machine.all_cpus()),
            CpuSelection::Nodes { first, last } => {
                if usize::from(last.0) >= machine.nr_nodes() || first > last {
                    return Err(CpuSelectionError::NoSuchNode {
                        text: self.to_string(),
                        machine: machine.name.clone(),
                        last: machine.nr_nodes().saturating_sub(1),
                    });
                }
                let mut m = CpuMask::new(machine.nr_cpus());
                for node in first.0..=last.0 {
                    m.or_assign(&machine.node_cpus(NodeId(node)));
                }
                if m.is_empty() {
                    return Err(CpuSelectionError::NoCpusOnNodes {
                        text: self.to_string(),
                        machine: machine.name.clone(),
                        first: first.0,
                        last: last.0,
                    });
                }
                Ok(m)
            }
            CpuSelection::Cpus(m) if m.nr_cpu_ids() == machine.nr_cpus() => Ok(m.clone()),
            CpuSelection::Cpus(m) => Err(CpuSelectionError::OtherMachine {
                list: m.to_list(),
                list_cpus: m.nr_cpu_ids(),
                machine_cpus: machine.nr_cpus(),
            }),
        }
    }
}

impl std::fmt::Display for CpuSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuSelection::All => f.write_str("all"),
            CpuSelection::Nodes { first, last } if first == last => write!(f, "node{}", first.0),
            CpuSelection::Nodes { first, last } => write!(f, "node{}-{}", first.0, last.0),
            CpuSelection::Cpus(m) => f.write_str(&m.to_list()),
        }
    }
}

/// The CPUs of a [`CpuSelection`] written as text (`0-31,64`, `nodeN`, `nodeA-B`, `all`).
pub fn parse_cpus(machine: &Machine, text: &str) -> Result<CpuMask, CpuSelectionError> {
    CpuSelection::parse(machine, text)?.mask(machine)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node that does not exist is refused naming the nodes there are, in words a
    /// one-node machine reads naturally.
    #[test]
    fn a_missing_node_names_the_nodes_there_are() {
        let one = CpuSelectionError::NoSuchNode {
            text: "node1".into(),
            machine: "jacobsville".into(),
            last: 0,
        };
        assert_eq!(one.to_string(), "\"node1\": jacobsville has only node 0");
        let four = CpuSelectionError::NoSuchNode {
            text: "node4".into(),
            machine: "kunpeng920-6426".into(),
            last: 3,
        };
        assert_eq!(four.to_string(), "\"node4\": kunpeng920-6426 has nodes 0-3");
    }
}
