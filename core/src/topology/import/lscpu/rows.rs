//! The rows of `lscpu -p` and `lscpu -e`: columns found by name in the header, and
//! each row's fields read into a [`RawCpu`] (the mapping is in the module doc of
//! [`lscpu`](super)).

use crate::cpumask::MAX_CPUS;
use crate::json_words::shorten;
use crate::topology::import::{ImportError, Interner, Parsed, RawCpu};
use crate::topology::{Arch, MAX_NODES};

/// Column positions, by the names lscpu gives them.
pub(super) struct Columns {
    cpu: usize,
    core: Option<usize>,
    socket: Option<usize>,
    book: Option<usize>,
    drawer: Option<usize>,
    node: Option<usize>,
    cluster: Option<usize>,
    online: Option<usize>,
    /// (level, column) of each cache column, e.g. (1, L1d), (1, L1i), (2, L2), (3, L3).
    caches: Vec<(u8, usize)>,
    pub(super) names: Vec<String>,
}

impl Columns {
    pub(super) fn from_names(
        names: Vec<String>,
        format: &'static str,
    ) -> Result<Self, ImportError> {
        let find = |want: &str| names.iter().position(|n| n.eq_ignore_ascii_case(want));
        let cpu = find("CPU").ok_or(ImportError::MissingColumn {
            format,
            column: "CPU",
        })?;
        let caches = names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                let b = n.as_bytes();
                // L1d, L1i, L2, L3, L4: 'L' then the level digit.
                (b.len() >= 2 && (b[0] == b'L' || b[0] == b'l') && b[1].is_ascii_digit())
                    .then(|| (b[1] - b'0', i))
            })
            .collect();
        Ok(Columns {
            cpu,
            core: find("CORE"),
            socket: find("SOCKET"),
            book: find("BOOK"),
            drawer: find("DRAWER"),
            node: find("NODE"),
            cluster: find("CLUSTER"),
            online: find("ONLINE"),
            caches,
            names,
        })
    }

    /// The highest index this importer reads: rows must reach it.
    pub(super) fn last_used(&self) -> usize {
        [
            Some(self.cpu),
            self.core,
            self.socket,
            self.book,
            self.drawer,
            self.node,
            self.cluster,
            self.online,
        ]
        .into_iter()
        .flatten()
        .chain(self.caches.iter().map(|&(_, i)| i))
        .max()
        .unwrap_or(0)
    }
}

/// Turns rows of fields into CPUs, shared by `-p` and `-e`.
pub(super) struct RowReader {
    cols: Columns,
    arch: Arch,
    /// The cache level used for the LLC, chosen from the whole table.
    llc_col: Option<usize>,
    l2_col: Option<usize>,
    packages: Interner<(u64, u64, u64)>,
    cores: Interner<(u32, u64, bool)>,
    llcs: Interner<(u32, u64, bool)>,
    clusters: Interner<(u32, u64, u8)>,
    cpus: Vec<RawCpu>,
    offline: Vec<u32>,
    no_core_column: bool,
    llc_fallback: bool,
}

fn field<'a>(fields: &[&'a str], i: Option<usize>) -> Option<&'a str> {
    // lscpu prints unknown ids as an empty field (-p) or `-` (-e).
    i.and_then(|i| fields.get(i))
        .map(|f| f.trim())
        .filter(|f| !f.is_empty() && *f != "-")
}

impl RowReader {
    pub(super) fn new(cols: Columns, arch: Arch, rows: &[(usize, Vec<&str>)]) -> Self {
        // The last cache column with ids on some row: L3, or L2 on parts without one.
        let mut with_ids: Vec<(u8, usize)> = cols
            .caches
            .iter()
            .copied()
            .filter(|&(_, i)| rows.iter().any(|(_, f)| field(f, Some(i)).is_some()))
            .collect();
        with_ids.sort_by_key(|&(level, i)| (level, i));
        let llc_col = with_ids.last().map(|&(_, i)| i);
        let l2_col = with_ids.iter().find(|&&(l, _)| l == 2).map(|&(_, i)| i);
        RowReader {
            no_core_column: cols.core.is_none(),
            cols,
            arch,
            llc_col,
            l2_col,
            packages: Interner::new(),
            cores: Interner::new(),
            llcs: Interner::new(),
            clusters: Interner::new(),
            cpus: Vec::new(),
            offline: Vec::new(),
            llc_fallback: false,
        }
    }

    fn num(
        &self,
        line: usize,
        fields: &[&str],
        col: Option<usize>,
    ) -> Result<Option<u64>, ImportError> {
        match field(fields, col) {
            None => Ok(None),
            Some(v) => v
                .parse::<u64>()
                .map(Some)
                .map_err(|_| ImportError::BadField {
                    line,
                    column: col
                        .and_then(|c| self.cols.names.get(c))
                        .cloned()
                        .unwrap_or_default(),
                    value: v.to_string(),
                    expected: "a number, or empty",
                }),
        }
    }

    pub(super) fn row(&mut self, line: usize, fields: &[&str]) -> Result<(), ImportError> {
        let cpu_text = field(fields, Some(self.cols.cpu)).unwrap_or("");
        let cpu = match cpu_text.parse::<u64>() {
            Ok(c) if c < MAX_CPUS as u64 => c as u32,
            // A number too large even for u64 is past the limit too, not "not a number".
            Ok(_) => return Err(too_large(line, cpu_text)),
            Err(_) if !cpu_text.is_empty() && cpu_text.bytes().all(|b| b.is_ascii_digit()) => {
                return Err(too_large(line, cpu_text))
            }
            Err(_) => {
                return Err(ImportError::BadField {
                    line,
                    column: "CPU".to_string(),
                    value: cpu_text.to_string(),
                    expected: "a CPU number",
                })
            }
        };
        let online = match field(fields, self.cols.online) {
            None => self.cols.core.is_none() || field(fields, self.cols.core).is_some(),
            Some(v) if v.eq_ignore_ascii_case("y") || v.eq_ignore_ascii_case("yes") => true,
            Some(v) if v.eq_ignore_ascii_case("n") || v.eq_ignore_ascii_case("no") => false,
            Some(v) => {
                return Err(ImportError::BadField {
                    line,
                    column: "ONLINE".to_string(),
                    value: v.to_string(),
                    expected: "Y/N or yes/no",
                })
            }
        };
        if !online {
            self.offline.push(cpu);
            return Ok(());
        }
        let socket = self.num(line, fields, self.cols.socket)?.unwrap_or(0);
        let book = self.num(line, fields, self.cols.book)?.unwrap_or(0);
        let drawer = self.num(line, fields, self.cols.drawer)?.unwrap_or(0);
        let package = self.packages.id((drawer, book, socket));
        let core = match self.num(line, fields, self.cols.core)? {
            Some(c) => self.cores.id((package, c, false)),
            None => self.cores.id((package, cpu as u64, true)),
        };
        let llc = match self.num(line, fields, self.llc_col)? {
            Some(id) => self.llcs.id((package, id, false)),
            None => {
                self.llc_fallback = true;
                self.llcs.id((package, 0, true))
            }
        };
        let cluster = if let Some(id) = self.num(line, fields, self.cols.cluster)? {
            self.clusters.id((llc, id, 0))
        } else if let (Arch::X86, Some(id)) = (self.arch, self.num(line, fields, self.l2_col)?) {
            self.clusters.id((llc, id, 1))
        } else {
            self.clusters.id((llc, core as u64, 2))
        };
        let node = match self.num(line, fields, self.cols.node)? {
            Some(n) if n < MAX_NODES as u64 => Some(n as u32),
            Some(n) => {
                return Err(ImportError::BadField {
                    line,
                    column: "NODE".to_string(),
                    value: n.to_string(),
                    expected: "a node number below 1024",
                })
            }
            None => None,
        };
        self.cpus.push(RawCpu {
            cpu,
            line,
            package,
            node,
            llc,
            cluster,
            core,
        });
        Ok(())
    }

    pub(super) fn finish(self, source: &'static str, mut notes: Vec<String>) -> Parsed {
        if self.no_core_column {
            notes.push("no Core column: assumed one CPU per core (no SMT)".to_string());
        }
        if self.llc_fallback {
            notes.push(crate::topology::import::NOTE_NO_CACHE_IDS.to_string());
        }
        Parsed {
            cpus: self.cpus,
            offline: self.offline,
            arch: self.arch,
            numa: None,
            notes,
            source,
            model: None,
            node_reclaim_distance: None,
            no_shared_cache: false,
        }
    }
}

/// CPU `cpu` (the text of line `line`'s CPU field) is past [`MAX_CPUS`].
fn too_large(line: usize, cpu: &str) -> ImportError {
    ImportError::CpuNumberTooLarge {
        line,
        cpu: shorten(cpu),
    }
}
