//! The contended cache lines the simulator prices: the `sd_llc_shared` lines (term
//! `llc-line`, one per LLC) and the task group's `tg->load_avg` line (term `tg-line`,
//! `sim/tg_load.rs`). [`SharedLines`] holds their versions, who wrote them last, and
//! when the transfers in flight end.

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

/// Shared cache lines (one `sd_llc_shared` per LLC) and the version of each that
/// every CPU last saw. Reads and writes differ: a read is free while the CPU's copy
/// is current (any number of CPUs may share it); a write is free only to the CPU
/// that wrote last with nobody writing since (it holds the line exclusive), and
/// every write invalidates the other copies. Whatever is not free moves the line:
/// one core-to-core transfer from its last writer, queued behind the transfers in
/// flight (a contended line serialises its owners: k requests within one transfer
/// time cost the k-th k transfers). With the lines' term ([`LineTerm`]) off, every
/// access is free (versions still advance).
#[derive(Clone, Debug)]
pub(crate) struct SharedLines {
    /// The cost term that prices these lines.
    term: LineTerm,
    lines: Vec<ContendedLine>,
    /// Per (cpu, line): the version the CPU last read or wrote.
    seen: Vec<u32>,
}

/// Which cost term prices a [`SharedLines`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineTerm {
    /// [`CostTerms::llc_line`]: the `sd_llc_shared` lines.
    LlcLine,
    /// [`CostTerms::tg_line`]: the task group's `tg->load_avg` line.
    TgLine,
}

impl SharedLines {
    /// `n_lines` lines priced by `term`, never written, whose first owner is CPU 0
    /// and whose version 0 every CPU holds.
    pub fn new(n_cpus: usize, n_lines: usize, term: LineTerm) -> SharedLines {
        let line = ContendedLine {
            version: 0,
            last_writer: CpuId(0),
            busy_until_ns: 0,
        };
        SharedLines {
            term,
            lines: vec![line; n_lines],
            seen: vec![0; n_cpus * n_lines],
        }
    }

    #[inline]
    fn key(&self, cpu: CpuId, line: usize) -> usize {
        cpu.idx() * self.lines.len() + line
    }

    /// A read of `line` by `cpu` at `now_ns`: `None` when the CPU's copy is current
    /// (a hit, free), else the cost of bringing the line over.
    #[inline]
    pub fn read(&mut self, cost: &CostModel, cpu: CpuId, line: usize, now_ns: u64) -> Option<u64> {
        let key = self.key(cpu, line);
        if self.seen[key] == self.lines[line].version {
            return None;
        }
        let ns = self.transfer(cost, cpu, line, now_ns);
        self.seen[key] = self.lines[line].version;
        Some(ns)
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
        self.seen[key] = l.version;
        ns
    }

    /// Moves `line` to `cpu`: one transfer from its last writer, after those in flight.
    fn transfer(&mut self, cost: &CostModel, cpu: CpuId, line: usize, now_ns: u64) -> u64 {
        let on = match self.term {
            LineTerm::LlcLine => cost.params.terms.llc_line,
            LineTerm::TgLine => cost.params.terms.tg_line,
        };
        if !on {
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

    fn kunpeng(terms: CostTerms) -> CostModel {
        let m = presets::machine("kunpeng920-6426").unwrap();
        let mut c = CostModel::new(&m);
        c.params.terms = terms;
        c
    }

    /// A current copy reads free; a write is free only to the exclusive owner; what
    /// is not free moves the line, queued behind the transfer in flight.
    #[test]
    fn contended_lines_queue() {
        let c = kunpeng(CostTerms::ALL);
        let (a, b) = (CpuId(0), CpuId(4));
        let x = c.c2c_ns(a, b);
        let mut l = SharedLines::new(64, 1, LineTerm::LlcLine);
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
            let mut l = SharedLines::new(64, 1, LineTerm::LlcLine);
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
}
