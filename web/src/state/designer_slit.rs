//! The designer's NUMA distance grid, `node_distance(row, column)` as typed:
//!
//! ```text
//!            node 0  node 1 │ node 2  node 3     nodes with CPUs first (sockets ×
//!   node 0     10      21   │   17      28       nodes per socket), then the
//!   node 1     21      10   │   28      17       memory-only ones: SLIT rows past
//!   ────────────────────────┼──────────────      the CPUs' nodes, as machine files
//!   node 2     17      28   │   10      28       write them (core's MachineSpec)
//!   node 3     28      17   │   28      10
//! ```
//!
//! While "symmetric" is on an edit of (a, b) sets (b, a) too; off, each cell is its own,
//! as the kernel reads them: `sched_init_numa()` builds node j's masks from
//! `node_distance(j, k)` as given and prints "ERROR: Node-distance not symmetric"
//! (topology.c v6.8:1726-1749, 1930-1937). Resizing keeps what was typed for the nodes
//! that stay, the memory-only ones included.

/// The default entry: `MachineSpec`'s (10 local, 12 within a socket, 20 across; a
/// memory-only node is 20 from every other, as core's default SLIT has it).
fn default_distance(a: usize, b: usize, nodes_per_socket: usize, cpu_nodes: usize) -> u8 {
    let per = nodes_per_socket.max(1);
    if a == b {
        10
    } else if a >= cpu_nodes || b >= cpu_nodes {
        20
    } else if a / per == b / per {
        12
    } else {
        20
    }
}

/// A cell that does not read: (a, b, why).
pub type CellError = (usize, usize, String);

/// The grid's layout: nodes per socket, nodes with CPUs, memory-only nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub nodes_per_socket: usize,
    pub cpu_nodes: usize,
    pub memory_nodes: usize,
}

impl Layout {
    pub fn nodes(self) -> usize {
        self.cpu_nodes + self.memory_nodes
    }
}

/// The grid as typed, and how edits apply to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Slit {
    /// nodes × nodes, the nodes with CPUs first.
    cells: Vec<Vec<String>>,
    /// How many of the nodes have CPUs; the rest are memory-only.
    cpu_nodes: usize,
    /// An edit of (a, b) sets (b, a) too.
    symmetric: bool,
    /// Whether the distances are the user's (or the machine's own SLIT) rather than
    /// the default table, which follows the layout.
    edited: bool,
    /// The table as it was before checking "symmetric" mirrored it; unchecking gives it
    /// back while nothing else changed the grid in between.
    before_mirror: Option<Vec<Vec<String>>>,
}

impl Slit {
    /// A machine's SLIT, of which the first `cpu_nodes` nodes have CPUs. `own`: the
    /// machine gave its table (rather than the default one). "symmetric" starts as the
    /// table is.
    pub fn from_table(table: &[Vec<u8>], cpu_nodes: usize, own: bool) -> Slit {
        let symmetric = table
            .iter()
            .enumerate()
            .all(|(a, row)| row.iter().enumerate().all(|(b, &d)| table[b][a] == d));
        Slit {
            cells: table
                .iter()
                .map(|row| row.iter().map(u8::to_string).collect())
                .collect(),
            cpu_nodes: cpu_nodes.min(table.len()),
            symmetric,
            edited: own,
            before_mirror: None,
        }
    }

    /// All nodes, memory-only ones included.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn rows(&self) -> &[Vec<String>] {
        &self.cells
    }

    pub fn cpu_nodes(&self) -> usize {
        self.cpu_nodes
    }

    pub fn memory_nodes(&self) -> usize {
        self.len() - self.cpu_nodes
    }

    /// Node `n` has no CPUs.
    pub fn is_memory_only(&self, n: usize) -> bool {
        n >= self.cpu_nodes
    }

    pub fn symmetric(&self) -> bool {
        self.symmetric
    }

    /// Resizes the grid to `to`. Until a distance is typed the grid is the default
    /// table of the new layout; after that, the typed cells of nodes that stay are
    /// kept (a memory-only node stays memory-only, the first ones first) and new ones
    /// get the default.
    pub fn fit(&mut self, to: Layout) {
        let n = to.nodes();
        let default = |a, b| default_distance(a, b, to.nodes_per_socket, to.cpu_nodes).to_string();
        if !self.edited {
            self.cells = (0..n)
                .map(|a| (0..n).map(|b| default(a, b)).collect())
                .collect();
            self.cpu_nodes = to.cpu_nodes;
            return;
        }
        if n == self.len() && to.cpu_nodes == self.cpu_nodes {
            return;
        }
        let (old_cpu, old_mem) = (self.cpu_nodes, self.memory_nodes());
        let old_of = |i: usize| {
            if i < to.cpu_nodes {
                (i < old_cpu).then_some(i)
            } else {
                let j = i - to.cpu_nodes;
                (j < old_mem).then_some(old_cpu + j)
            }
        };
        let cells = (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| match (old_of(a), old_of(b)) {
                        (Some(x), Some(y)) if a != b => self.cells[x][y].clone(),
                        _ => default(a, b),
                    })
                    .collect()
            })
            .collect();
        self.cells = cells;
        self.cpu_nodes = to.cpu_nodes;
        self.before_mirror = None;
    }

    /// Types `value` into (a, b), and into (b, a) while "symmetric" is on. The diagonal
    /// is LOCAL_DISTANCE, not editable.
    pub fn set(&mut self, a: usize, b: usize, value: &str) {
        let n = self.len();
        if a == b || a >= n || b >= n {
            return;
        }
        self.cells[a][b] = value.to_string();
        if self.symmetric {
            self.cells[b][a] = value.to_string();
        }
        self.edited = true;
        self.before_mirror = None;
    }

    /// Turns "symmetric" on or off. On over a table that is not symmetric, each cell
    /// above the diagonal is copied to its mirror (node_distance(a, b) for a < b wins,
    /// as one reads a table row by row); off right after gives the table back.
    pub fn set_symmetric(&mut self, on: bool) {
        if on == self.symmetric {
            return;
        }
        self.symmetric = on;
        if !on {
            if let Some(cells) = self.before_mirror.take() {
                self.cells = cells;
            }
            return;
        }
        let n = self.len();
        let mirrored = (0..n).any(|a| (a + 1..n).any(|b| self.cells[a][b] != self.cells[b][a]));
        if mirrored {
            self.before_mirror = Some(self.cells.clone());
            for a in 0..n {
                for b in a + 1..n {
                    self.cells[b][a] = self.cells[a][b].clone();
                }
            }
            self.edited = true;
        }
    }

    /// The pairs (a < b) whose two directions read as different distances.
    pub fn asymmetric_pairs(&self) -> Vec<(usize, usize)> {
        let read = |a: usize, b: usize| self.cells[a][b].trim().parse::<u8>().ok();
        let n = self.len();
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| matches!((read(a, b), read(b, a)), (Some(x), Some(y)) if x != y))
            .collect()
    }

    /// The table as numbers, or each cell's error.
    pub fn read(&self) -> Result<Vec<Vec<u8>>, Vec<CellError>> {
        let mut errors = Vec::new();
        let table = self
            .cells
            .iter()
            .enumerate()
            .map(|(a, row)| {
                row.iter()
                    .enumerate()
                    .map(|(b, cell)| {
                        cell.trim().parse::<u8>().unwrap_or_else(|_| {
                            errors.push((
                                a,
                                b,
                                format!(
                                    "node_distance({a}, {b}): {:?} is not a distance (11-255)",
                                    cell.trim()
                                ),
                            ));
                            0
                        })
                    })
                    .collect()
            })
            .collect();
        if errors.is_empty() {
            Ok(table)
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(cpu_nodes: usize, memory_nodes: usize) -> Layout {
        Layout {
            nodes_per_socket: 2,
            cpu_nodes,
            memory_nodes,
        }
    }

    fn text(s: &Slit) -> Vec<Vec<&str>> {
        s.rows()
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect()
    }

    #[test]
    fn the_default_table_puts_memory_only_nodes_at_20() {
        let mut s = Slit::from_table(&[vec![10]], 1, false);
        s.fit(layout(2, 1));
        assert_eq!(
            text(&s),
            [["10", "12", "20"], ["12", "10", "20"], ["20", "20", "10"]]
        );
        assert_eq!((s.cpu_nodes(), s.memory_nodes()), (2, 1));
        assert!(s.is_memory_only(2) && !s.is_memory_only(1));
    }

    #[test]
    fn a_memory_only_nodes_typed_distances_follow_it_when_the_cpu_nodes_change() {
        let mut s = Slit::from_table(&[vec![10]], 1, false);
        s.fit(layout(2, 1));
        s.set(0, 2, "17");
        // Two more nodes with CPUs: the memory-only node moves from 2 to 4.
        s.fit(layout(4, 1));
        assert_eq!(s.rows()[0][4], "17");
        assert_eq!(s.rows()[4][0], "17");
        assert_eq!(s.rows()[2][3], "12", "new nodes with CPUs get the default");
        // A second memory-only node: the first keeps its distances.
        s.fit(layout(4, 2));
        assert_eq!(
            (s.rows()[0][4].as_str(), s.rows()[0][5].as_str()),
            ("17", "20")
        );
        s.fit(layout(4, 0));
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn symmetric_off_edits_one_cell_and_on_mirrors_until_unchecked() {
        let mut s = Slit::from_table(&[vec![10, 20], vec![20, 10]], 2, false);
        assert!(s.symmetric());
        s.set(0, 1, "15");
        assert_eq!(text(&s), [["10", "15"], ["15", "10"]]);
        s.set_symmetric(false);
        s.set(1, 0, "25");
        assert_eq!(text(&s), [["10", "15"], ["25", "10"]]);
        assert_eq!(s.asymmetric_pairs(), [(0, 1)]);
        s.set_symmetric(true);
        assert_eq!(text(&s), [["10", "15"], ["15", "10"]]);
        assert!(s.asymmetric_pairs().is_empty());
        s.set_symmetric(false);
        assert_eq!(text(&s), [["10", "15"], ["25", "10"]], "given back");
        // After an edit in between, unchecking keeps the symmetric table.
        s.set_symmetric(true);
        s.set(0, 1, "16");
        s.set_symmetric(false);
        assert_eq!(text(&s), [["10", "16"], ["16", "10"]]);
        let t = Slit::from_table(&[vec![10, 20], vec![30, 10]], 2, true);
        assert!(!t.symmetric(), "an asymmetric machine opens unchecked");
    }

    #[test]
    fn cells_that_do_not_read_say_which() {
        let mut s = Slit::from_table(&[vec![10, 20], vec![20, 10]], 2, true);
        s.set_symmetric(false);
        s.set(1, 0, " x ");
        assert!(
            s.asymmetric_pairs().is_empty(),
            "an unreadable cell is no pair"
        );
        let e = s.read().unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].0, e[0].1), (1, 0));
        assert!(e[0].2.contains("\"x\" is not a distance"), "{}", e[0].2);
    }
}
