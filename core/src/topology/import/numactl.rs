//! `numactl -H` (`numactl --hardware`): node CPU lists and the SLIT.
//!
//! ```text
//! available: 2 nodes (0-1)
//! node 0 cpus: 0 1 2 3
//! node 0 size: 64000 MB
//! node 0 free: 60000 MB
//! node 1 cpus: 4 5 6 7
//! ...
//! node distances:
//! node   0   1
//!   0:  10  21
//!   1:  21  10
//! ```
//!
//! Its lines are recognised one by one, so they may come before or after the lscpu
//! text they complement.

use super::{is_number, ImportError, Line};
use crate::cpumask::MAX_CPUS;

use crate::topology::MAX_NODES;

/// What `numactl -H` (or a sysfs dump's node rows) says about nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaInfo {
    /// Every node listed with its CPUs; memory-only nodes have an empty list.
    pub node_cpus: Vec<(u32, Vec<u32>)>,
    /// The distance table: the node ids of its columns, and the square table
    /// in that order.
    pub distances: Option<(Vec<u32>, Vec<Vec<u8>>)>,
}

/// Whether a line belongs to `numactl -H` output.
fn is_numactl_line(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with("available:")
        || t == "node distances:"
        || t.starts_with("No distance information")
    {
        return true;
    }
    let mut words = t.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    if first == "node" {
        // `node 0 cpus: ...`, `node 0 size: ...`, or the table header `node 0 1 2`.
        let rest: Vec<&str> = words.collect();
        return match rest.as_slice() {
            [id, what, ..] if is_number(id) && what.ends_with(':') => true,
            ids => !ids.is_empty() && ids.iter().all(|w| is_number(w)),
        };
    }
    // A table row: `  0:  10  21`.
    first
        .strip_suffix(':')
        .is_some_and(|id| is_number(id) && words.all(is_number))
}

/// Splits numbered lines into (everything else, numactl lines).
pub(crate) fn split<'a>(lines: &[Line<'a>]) -> (Vec<Line<'a>>, Vec<Line<'a>>) {
    lines.iter().partition(|(_, l)| !is_numactl_line(l))
}

fn bad(line: usize, what: impl Into<String>) -> ImportError {
    ImportError::BadLine {
        line,
        what: what.into(),
    }
}

fn node_id(line: usize, s: &str) -> Result<u32, ImportError> {
    match s.parse::<u32>() {
        Ok(n) if (n as usize) < MAX_NODES => Ok(n),
        _ => Err(ImportError::BadField {
            line,
            column: "node".to_string(),
            value: s.to_string(),
            expected: "a node number below 1024",
        }),
    }
}

/// Parses `numactl -H` lines (as picked out by [`split`]).
pub(crate) fn parse(lines: &[Line]) -> Result<NumaInfo, ImportError> {
    let mut node_cpus: Vec<(u32, Vec<u32>)> = Vec::new();
    let mut header: Option<(usize, Vec<u32>)> = None;
    let mut rows: Vec<(usize, u32, Vec<u8>)> = Vec::new();
    for &(n, line) in lines {
        let t = line.trim();
        let words: Vec<&str> = t.split_whitespace().collect();
        match words.as_slice() {
            ["node", id, "cpus:", cpus @ ..] => {
                let id = node_id(n, id)?;
                if node_cpus.iter().any(|(k, _)| *k == id) {
                    return Err(bad(n, format!("node {id} cpus are listed twice")));
                }
                let mut list = Vec::with_capacity(cpus.len().min(MAX_CPUS as usize));
                for c in cpus {
                    match c.parse::<u32>() {
                        Ok(c) if c < MAX_CPUS => list.push(c),
                        _ => {
                            return Err(ImportError::BadField {
                                line: n,
                                column: format!("node {id} cpus"),
                                value: c.to_string(),
                                expected: "CPU numbers below 4096, separated by spaces",
                            })
                        }
                    }
                }
                node_cpus.push((id, list));
            }
            ["node", ids @ ..] if !ids.is_empty() && ids.iter().all(|w| is_number(w)) => {
                if ids.len() > MAX_NODES {
                    return Err(bad(n, format!("{} nodes is more than 1024", ids.len())));
                }
                let ids = ids
                    .iter()
                    .map(|w| node_id(n, w))
                    .collect::<Result<Vec<_>, _>>()?;
                header = Some((n, ids));
            }
            [first, values @ ..]
                if first.ends_with(':') && is_number(&first[..first.len() - 1]) =>
            {
                let id = node_id(n, &first[..first.len() - 1])?;
                let values = values
                    .iter()
                    .map(|v| {
                        v.parse::<u8>().map_err(|_| ImportError::BadField {
                            line: n,
                            column: format!("distance from node {id}"),
                            value: v.to_string(),
                            expected: "a number from 10 to 255",
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                rows.push((n, id, values));
            }
            // available:, node N size/free:, node distances:, No distance information.
            _ => {}
        }
    }
    let distances = match header {
        None if rows.is_empty() => None,
        None => {
            return Err(bad(
                rows[0].0,
                "a distance row without the `node 0 1 ...` header line above it",
            ))
        }
        Some((hline, ids)) => {
            let mut table = Vec::with_capacity(ids.len());
            for id in &ids {
                let Some((rline, _, values)) = rows.iter().find(|(_, r, _)| r == id) else {
                    return Err(bad(
                        hline,
                        format!("the distance table has a column for node {id} but no row"),
                    ));
                };
                if values.len() != ids.len() {
                    return Err(bad(
                        *rline,
                        format!(
                            "node {id}'s distance row has {} entries but the header names {} nodes",
                            values.len(),
                            ids.len()
                        ),
                    ));
                }
                table.push(values.clone());
            }
            if rows.len() != ids.len() {
                return Err(bad(
                    hline,
                    format!(
                        "the distance table has {} rows for {} nodes",
                        rows.len(),
                        ids.len()
                    ),
                ));
            }
            Some((ids, table))
        }
    };
    Ok(NumaInfo {
        node_cpus,
        distances,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line<'_>> {
        text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect()
    }

    #[test]
    fn parses_a_two_node_table() {
        let text = "available: 2 nodes (0-1)\nnode 0 cpus: 0 1\nnode 0 size: 100 MB\nnode 0 free: 5 MB\nnode 1 cpus: 2 3\nnode distances:\nnode   0   1 \n  0:  10  21 \n  1:  21  10 \n";
        let l = lines(text);
        let (rest, numa) = split(&l);
        assert!(rest.is_empty(), "{rest:?}");
        let info = parse(&numa).unwrap();
        assert_eq!(info.node_cpus, vec![(0, vec![0, 1]), (1, vec![2, 3])]);
        assert_eq!(
            info.distances,
            Some((vec![0, 1], vec![vec![10, 21], vec![21, 10]]))
        );
    }

    #[test]
    fn lscpu_rows_are_not_numactl() {
        for l in [
            "  0    0      0    0 0:0:0:0          yes",
            "0,0,0,0,,0,0,0,0",
            "NUMA node0 CPU(s):   0-63",
            "node0 cpulist=0-31 distance=10 16 32 33",
            "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE",
        ] {
            assert!(!is_numactl_line(l), "{l}");
        }
    }

    #[test]
    fn short_row_is_an_error() {
        let l = lines("node distances:\nnode 0 1\n 0: 10 20\n 1: 20\n");
        let (_, numa) = split(&l);
        assert!(matches!(
            parse(&numa),
            Err(ImportError::BadLine { line: 4, .. })
        ));
    }
}
