//! The contended cache lines the simulator prices: the `sd_llc_shared` lines (term
//! `llc-line`, one per LLC) and the task group's `tg->load_avg` line (term `tg-line`,
//! `sim/tg_load.rs`). [`SharedLines`] holds their versions, who wrote them last, and
//! when the transfers in flight end; its [`ReadCopies`] mode says where a stale read
//! finds the line.
//!
//! ```text
//!  write by c        free if c wrote last and nobody since (exclusive), else an RFO:
//!                    one transfer from the last writer, queued behind those in flight
//!  read by c, copy current                                          free
//!  read by c, stale  PerCpu (llc-line): one transfer from the last writer, queued
//!                    PerLlc (tg-line): a CPU of c's LLC holds the current version
//!                      → c2c(holder, c) within the LLC, not queued, the line stays free;
//!                      else the PerCpu transfer, and c's LLC now holds it (holder c)
//! ```
//!
//! Why the tg-line is `PerLlc`: it is one line that every CPU of the machine reads
//! (384 on a dual EPYC 9654). Once one CPU of an LLC (a CCX's L3 on EPYC, a die on
//! Kunpeng) has fetched the current version, another CPU of that LLC that misses is
//! served from within the LLC (an intra-LLC transfer from the CPU that holds it), not
//! by the remote writer, and does not wait for the transfers between LLCs.
//! **Assumed** (docs/calibration.md, term `tg-line`): the intra-LLC forward costs one
//! c2c between the holder and the reader and does not queue; the first fetch into an
//! LLC queues like every transfer from the writer. The `sd_llc_shared` lines keep `PerCpu`, their pricing since
//! session 11.

use super::CostModel;
use crate::cpumask::CpuId;

/// One contended cache line: its version (bumped by every write), its last writer,
/// and when the transfers in flight end.
#[derive(Clone, Copy, Debug)]
struct ContendedLine {
    version: u32,
    last_writer: CpuId,
    busy_until_ns: u64,
}

/// Shared cache lines (one `sd_llc_shared` per LLC, or the one `tg->load_avg`) and
/// the version of each that every CPU last saw. Reads and writes differ: a read is free while the CPU's copy
/// is current (any number of CPUs may share it); a write is free only to the CPU
/// that wrote last with nobody writing since (it holds the line exclusive), and
/// every write invalidates the other copies. Whatever is not free moves the line:
/// one core-to-core transfer from its last writer, queued behind the transfers in
/// flight (a contended line serialises its owners: k requests within one transfer
/// time cost the k-th k transfers), except a stale read that the reader's LLC serves
/// ([`ReadCopies::PerLlc`]). With the lines' term ([`LineTerm`]) off, every access
/// is free (versions still advance).
#[derive(Clone, Debug)]
pub(crate) struct SharedLines {
    /// The cost term that prices these lines.
    term: LineTerm,
    /// Where a stale read finds the line.
    copies: ReadCopies,
    lines: Vec<ContendedLine>,
    /// Per (line, cpu), line-major: the version the CPU last read or wrote (line 0's
    /// are the first `n_cpus`, indexed by the CPU alone).
    seen: Vec<u32>,
    n_cpus: usize,
}

/// Which cost term prices a [`SharedLines`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineTerm {
    /// [`CostTerms::llc_line`]: the `sd_llc_shared` lines.
    LlcLine,
    /// [`CostTerms::tg_line`]: the task group's `tg->load_avg` line.
    TgLine,
}

/// Where a stale read of a [`SharedLines`] line finds it (the module doc's picture).
#[derive(Clone, Debug)]
pub(crate) enum ReadCopies {
    /// Only in the last writer's cache: every stale read is a transfer from it,
    /// queued behind those in flight (the `sd_llc_shared` lines, term `llc-line`).
    PerCpu,
    /// Also in the reader's LLC, once a CPU of it has fetched the current version:
    /// then the read is one intra-LLC transfer from that CPU, not queued (the task
    /// group's `tg->load_avg` line, term `tg-line`).
    PerLlc {
        /// Per CPU: its LLC's index.
        llc_of: Vec<u16>,
        /// Per (LLC, line): the newest version a CPU of the LLC holds, and which CPU
        /// (the last to fetch or write it: the one that forwards it next).
        held: Vec<LlcCopy>,
    },
}

/// The copy of a line an LLC holds ([`ReadCopies::PerLlc`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LlcCopy {
    version: u32,
    holder: CpuId,
}

impl ReadCopies {
    /// [`ReadCopies::PerLlc`] for `n_lines` lines, each CPU in the LLC `llc_of`
    /// gives (dense indexes); every LLC holds version 0 (its first CPU does).
    pub fn per_llc(llc_of: &[u16], n_lines: usize) -> ReadCopies {
        let n_llcs = llc_of.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
        let mut first = vec![CpuId(0); n_llcs];
        for (c, &l) in llc_of.iter().enumerate().rev() {
            first[l as usize] = CpuId(c as u32);
        }
        let held = first
            .iter()
            .flat_map(|&holder| std::iter::repeat_n(LlcCopy { version: 0, holder }, n_lines))
            .collect();
        ReadCopies::PerLlc {
            llc_of: llc_of.to_vec(),
            held,
        }
    }

    /// A stale read of `line` (of `n_lines`) by `cpu`, the line at `version`: the CPU
    /// of `cpu`'s LLC that forwards the current version, which `cpu` now holds too;
    /// `None` when the LLC has not fetched it ([`ReadCopies::PerCpu`]: never).
    #[inline]
    fn forward(&mut self, cpu: CpuId, line: usize, n_lines: usize, version: u32) -> Option<CpuId> {
        match self {
            ReadCopies::PerCpu => None,
            ReadCopies::PerLlc { llc_of, held } => {
                let h = &mut held[llc_of[cpu.idx()] as usize * n_lines + line];
                if h.version != version {
                    return None;
                }
                debug_assert_ne!(h.holder, cpu, "the holder's own copy is current");
                Some(std::mem::replace(&mut h.holder, cpu))
            }
        }
    }

    /// `cpu` fetched or wrote `version` of `line`: its LLC holds it, `cpu` forwards it.
    #[inline]
    fn hold(&mut self, cpu: CpuId, line: usize, n_lines: usize, version: u32) {
        if let ReadCopies::PerLlc { llc_of, held } = self {
            held[llc_of[cpu.idx()] as usize * n_lines + line] = LlcCopy {
                version,
                holder: cpu,
            };
        }
    }
}

impl SharedLines {
    /// `n_lines` lines priced by `term`, their stale reads served as `copies` says,
    /// never written, whose first owner is CPU 0 and whose version 0 every CPU holds.
    pub fn new(n_cpus: usize, n_lines: usize, term: LineTerm, copies: ReadCopies) -> SharedLines {
        let line = ContendedLine {
            version: 0,
            last_writer: CpuId(0),
            busy_until_ns: 0,
        };
        SharedLines {
            term,
            copies,
            lines: vec![line; n_lines],
            seen: vec![0; n_cpus * n_lines],
            n_cpus,
        }
    }

    #[inline]
    fn key(&self, cpu: CpuId, line: usize) -> usize {
        line * self.n_cpus + cpu.idx()
    }

    /// A read of `line` by `cpu` at `now_ns`: `None` when the CPU's copy is current
    /// (a hit, free), else the cost of bringing the line over: from a CPU of its own
    /// LLC if that holds the current version ([`ReadCopies::PerLlc`]), one c2c, not
    /// queued; else from the last writer, queued.
    #[inline]
    pub fn read(&mut self, cost: &CostModel, cpu: CpuId, line: usize, now_ns: u64) -> Option<u64> {
        let key = self.key(cpu, line);
        let version = self.lines[line].version;
        if self.seen[key] == version {
            return None;
        }
        Some(self.read_stale(cost, cpu, line, now_ns, key, version))
    }

    /// Whether `cpu`'s copy of `line` is current: a [`SharedLines::read`] by it would
    /// be a free hit (and change nothing).
    #[inline]
    pub fn is_current(&self, cpu: CpuId, line: usize) -> bool {
        self.seen[self.key(cpu, line)] == self.lines[line].version
    }

    /// [`SharedLines::read`] of a stale copy (`seen[key]` is not `version`): out of
    /// line, so that the hit, the common case, inlines into the caller.
    #[inline(never)]
    fn read_stale(
        &mut self,
        cost: &CostModel,
        cpu: CpuId,
        line: usize,
        now_ns: u64,
        key: usize,
        version: u32,
    ) -> u64 {
        self.seen[key] = version;
        let n_lines = self.lines.len();
        if let Some(from) = self.copies.forward(cpu, line, n_lines, version) {
            return if self.on(cost) {
                cost.c2c_ns(from, cpu)
            } else {
                0
            };
        }
        let ns = self.transfer(cost, cpu, line, now_ns);
        self.copies.hold(cpu, line, n_lines, version);
        ns
    }

    /// A write of `line` by `cpu` at `now_ns`; returns the writer's cost.
    #[inline]
    pub fn write(&mut self, cost: &CostModel, cpu: CpuId, line: usize, now_ns: u64) -> u64 {
        let key = self.key(cpu, line);
        let l = &self.lines[line];
        let ns = if l.last_writer == cpu && self.seen[key] == l.version {
            0
        } else {
            self.transfer(cost, cpu, line, now_ns)
        };
        let l = &mut self.lines[line];
        l.version = l.version.wrapping_add(1);
        l.last_writer = cpu;
        let version = l.version;
        self.seen[key] = version;
        let n_lines = self.lines.len();
        self.copies.hold(cpu, line, n_lines, version);
        ns
    }

    /// Whether the lines' cost term is on.
    #[inline]
    fn on(&self, cost: &CostModel) -> bool {
        match self.term {
            LineTerm::LlcLine => cost.params.terms.llc_line,
            LineTerm::TgLine => cost.params.terms.tg_line,
        }
    }

    /// Moves `line` to `cpu`: one transfer from its last writer, after those in flight.
    fn transfer(&mut self, cost: &CostModel, cpu: CpuId, line: usize, now_ns: u64) -> u64 {
        if !self.on(cost) {
            return 0;
        }
        let l = &mut self.lines[line];
        let xfer = cost.c2c_ns(l.last_writer, cpu);
        let start = l.busy_until_ns.max(now_ns);
        l.busy_until_ns = start.saturating_add(xfer);
        (start - now_ns) + xfer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::CostTerms;
    use crate::topology::presets;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use crate::cost::test_support::kunpeng;

    /// A current copy reads free; a write is free only to the exclusive owner; what
    /// is not free moves the line, queued behind the transfer in flight.
    #[test]
    fn contended_lines_queue() {
        let c = kunpeng(CostTerms::ALL);
        let (a, b) = (CpuId(0), CpuId(4));
        let x = c.c2c_ns(a, b);
        let mut l = SharedLines::new(64, 1, LineTerm::LlcLine, ReadCopies::PerCpu);
        assert_eq!(l.read(&c, b, 0, 0), None, "every CPU starts with version 0");
        assert_eq!(l.write(&c, a, 0, 0), 0, "CPU 0 starts as the owner");
        assert_eq!(l.write(&c, a, 0, 0), 0);
        assert_eq!(l.read(&c, b, 0, 0), Some(x));
        assert_eq!(l.read(&c, b, 0, 0), None);
        // b holds a shared copy, not the line: its write moves it, behind b's read.
        assert_eq!(l.write(&c, b, 0, 0), 2 * x);
        assert_eq!(l.read(&c, a, 0, 10 * x), Some(x));
    }

    /// Eight writers in the eight clusters of one Kunpeng die (CPUs 0, 4, ..., 28),
    /// all within one transfer time, the line last written in a ninth place (CPU 31,
    /// cluster 7): each RFO waits for the one before, so the k-th pays k transfers of
    /// 36 ns (KP_C2C_DIE) and together they pay 36 transfers; spaced a transfer
    /// apart, each pays one. Switched off, nothing.
    #[test]
    fn eight_writers_within_one_transfer_pay_k_transfers_each() {
        let c = kunpeng(CostTerms::ALL);
        let x = c.c2c_ns(CpuId(0), CpuId(4));
        assert_eq!(x, 36);
        let writers = (0..8).map(|k| CpuId(4 * k));
        let at = 10_000;
        let fresh = |c: &CostModel| {
            let mut l = SharedLines::new(64, 1, LineTerm::LlcLine, ReadCopies::PerCpu);
            l.write(c, CpuId(31), 0, 0);
            l
        };
        let mut l = fresh(&c);
        let costs: Vec<u64> = writers.clone().map(|w| l.write(&c, w, 0, at)).collect();
        assert_eq!(costs, (1..=8).map(|k| k * x).collect::<Vec<_>>());
        assert_eq!(costs.iter().sum::<u64>(), 36 * x);
        let mut l = fresh(&c);
        let spaced: Vec<u64> = writers
            .clone()
            .enumerate()
            .map(|(i, w)| l.write(&c, w, 0, at + 1000 * i as u64))
            .collect();
        assert_eq!(spaced, vec![x; 8]);
        let off = kunpeng(CostTerms::all_but("llc-line").unwrap());
        let mut l = fresh(&off);
        assert!(writers.map(|w| l.write(&off, w, 0, at)).all(|ns| ns == 0));
    }

    /// The per-CPU LLC index of a machine, dense, as the simulator builds it.
    fn llc_of(m: &crate::topology::Machine) -> Vec<u16> {
        let mut ids: Vec<u32> = Vec::new();
        (0..m.nr_cpus())
            .map(|c| {
                let id = m.topo(CpuId(c)).llc;
                let i = ids.iter().position(|&x| x == id).unwrap_or_else(|| {
                    ids.push(id);
                    ids.len() - 1
                });
                i as u16
            })
            .collect()
    }

    /// Dual EPYC 9654 (CCX = CPUs 0-7,192-199; socket 1 = 96-191,288-383): CPU 0
    /// writes the tg line; at one instant CPU 8 (another CCX) fetches it (99 ns), then
    /// CPUs 96 and 97 of a CCX of the other socket, then CPU 104 (a fourth CCX).
    /// `PerLlc`: 96 is the first of its CCX, a cross-socket transfer (192 ns) queued
    /// behind 8's; 97 is served by 96 within the CCX, one c2c (27 ns), not queued and
    /// not occupying the line, so 104 queues behind 8 and 96 only. `PerCpu` (the
    /// llc-line's pricing): 97 pays the cross-socket transfer queued behind 96's. A
    /// write by 97 leaves its CCX holding the new version (96 reads it from 97) and
    /// every other copy stale (CPU 1, in the writer's old CCX, pays the transfer).
    #[test]
    fn per_llc_reads_are_served_within_the_llc_once_it_holds_the_version() {
        let m = presets::machine("epyc9654-2p").unwrap();
        let mut c = CostModel::new(&m);
        let (w, b, r1, r2, d) = (CpuId(0), CpuId(8), CpuId(96), CpuId(97), CpuId(104));
        let (ccx, other_ccx, socket) = (c.c2c_ns(r1, r2), c.c2c_ns(w, b), c.c2c_ns(w, r1));
        assert_eq!((ccx, other_ccx, socket), (27, 99, 192));
        assert_eq!(c.c2c_ns(w, d), socket);
        let llc_of = llc_of(&m);
        assert_eq!(llc_of[96], llc_of[97]);
        assert!(llc_of[0] != llc_of[8] && llc_of[8] != llc_of[96] && llc_of[96] != llc_of[104]);
        let at = 10_000;
        let run = |c: &CostModel, copies: ReadCopies| {
            let mut l = SharedLines::new(384, 1, LineTerm::TgLine, copies);
            assert_eq!(l.write(c, w, 0, 0), 0, "CPU 0 starts as the owner");
            [b, r1, r2, d].map(|r| l.read(c, r, 0, at))
        };
        let per_llc = || ReadCopies::per_llc(&llc_of, 1);
        let q1 = other_ccx + socket;
        assert_eq!(
            run(&c, per_llc()),
            [Some(other_ccx), Some(q1), Some(ccx), Some(q1 + socket)]
        );
        assert_eq!(
            run(&c, ReadCopies::PerCpu),
            [
                Some(other_ccx),
                Some(q1),
                Some(q1 + socket),
                Some(q1 + 2 * socket)
            ]
        );
        // A write by 97: an RFO from the last writer (CPU 0); then 96 reads it from
        // 97 within the CCX, CPU 1 (the old writer's CCX) across the sockets, CPU 0
        // from CPU 1, and 104 from 97 (another CCX of 97's socket).
        let mut l = SharedLines::new(384, 1, LineTerm::TgLine, per_llc());
        l.write(&c, w, 0, 0);
        assert_eq!(l.read(&c, CpuId(1), 0, 100), Some(c.c2c_ns(w, CpuId(1))));
        assert_eq!(l.read(&c, r1, 0, 1_000), Some(socket));
        assert_eq!(l.read(&c, r2, 0, 2_000), Some(ccx));
        assert_eq!(l.write(&c, r2, 0, 3_000), socket, "shared, not exclusive");
        assert_eq!(l.write(&c, r2, 0, 3_500), 0, "now exclusive");
        assert_eq!(l.read(&c, r1, 0, 4_000), Some(ccx));
        assert_eq!(l.read(&c, CpuId(1), 0, 5_000), Some(socket));
        assert_eq!(l.read(&c, w, 0, 5_000), Some(ccx), "from CPU 1, in its CCX");
        assert_eq!(l.read(&c, d, 0, 6_000), Some(other_ccx));
        // Term off: everything free, the bookkeeping the same.
        c.params.terms = CostTerms::all_but("tg-line").unwrap();
        assert_eq!(run(&c, per_llc()), [Some(0); 4]);
    }
}
