//! The runqueue sums `update_sg_lb_stats()` adds up, kept per block of CPUs: a cache,
//! not state (the kernel adds the group's CPUs one by one; so does [`super::lb`] when
//! `env->cpus` has lost a CPU).
//!
//! ```text
//!   cells:  CPU 0 .. CPU n-1                 each CPU's own part ([`Part`])
//!           block 0 (CPUs 0-7) .. block n/8  the sum of 8 CPUs' parts
//!           block 0 (CPUs 0-63) ..           the sum of 64, … while a block is
//!                                            smaller than the machine
//!   a group: its CPUs cut into the largest aligned whole blocks (0-95: 0-63 + 64-71
//!            + … + 88-95, 5 cells instead of 96 runqueues)
//!   a runqueue write: marks its CPU dirty (one bit); update_sd_lb_stats() first
//!            folds each dirty CPU's change into its blocks (one per level)
//! ```
//!
//! Every field is an integer sum (wrapping arithmetic on the differences gives the
//! exact sum, which fits), so a group's statistics are bit for bit the ones the
//! CPU-by-CPU loop computes, whatever the order. The top-level balance of a newly
//! idle Kunpeng CPU reads 10 cells instead of 192 runqueues.

use crate::cpumask::MAX_CPUS;
use crate::wakeup::RqState;

/// Blocks of a level hold `FANOUT` blocks (or CPUs) of the level below.
const FANOUT_LOG2: u32 = 3;

/// One CPU's part in the group sums, or the sum of a block's parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::sim) struct Part {
    /// `cpu_load()`.
    pub load: u64,
    /// `cpu_runnable()`: `load` before 6.12.
    pub runnable: u64,
    /// `cpu_util_cfs()`.
    pub util: u64,
    /// `rq->nr_running` (a wakee on the wake list is not on the rq yet: `Loc::WakeList`).
    pub nr_running: u32,
    /// CPUs running more than one task (`SG_OVERLOAD` when non-zero).
    pub overloaded: u32,
    /// CPUs for which `idle_cpu()` holds.
    pub idle: u32,
}

impl Part {
    #[inline]
    fn of(rq: &RqState) -> Part {
        let nr_running = rq.nr_running;
        Part {
            load: rq.load_avg,
            runnable: rq.runnable_avg,
            util: rq.util_avg,
            nr_running,
            overloaded: (nr_running > 1) as u32,
            idle: rq.idle_cpu() as u32,
        }
    }

    #[inline]
    fn add(&mut self, o: &Part) {
        self.load = self.load.wrapping_add(o.load);
        self.runnable = self.runnable.wrapping_add(o.runnable);
        self.util = self.util.wrapping_add(o.util);
        self.nr_running = self.nr_running.wrapping_add(o.nr_running);
        self.overloaded = self.overloaded.wrapping_add(o.overloaded);
        self.idle = self.idle.wrapping_add(o.idle);
    }

    #[inline]
    fn minus(&self, o: &Part) -> Part {
        Part {
            load: self.load.wrapping_sub(o.load),
            runnable: self.runnable.wrapping_sub(o.runnable),
            util: self.util.wrapping_sub(o.util),
            nr_running: self.nr_running.wrapping_sub(o.nr_running),
            overloaded: self.overloaded.wrapping_sub(o.overloaded),
            idle: self.idle.wrapping_sub(o.idle),
        }
    }
}

/// The per-CPU parts and the block sums above them, in one flat array, and the CPUs
/// whose runqueue changed since their part was last folded in.
#[derive(Clone, Debug)]
pub(in crate::sim) struct RqSums {
    /// Level `k` (CPUs at 0) starts at `start[k]`; its blocks hold `8^k` CPUs.
    cells: Vec<Part>,
    start: Vec<usize>,
    n_cpus: usize,
    /// One bit per CPU: its runqueue was written after its part was taken. A fixed
    /// array for [`MAX_CPUS`], so a mark indexes it without a bounds check.
    dirty: [u64; DIRTY_WORDS],
    /// One bit per word of `dirty` that has a bit set, so a flush visits only those:
    /// on a 4096-CPU machine a balance used to test all 64 words to find the few CPUs
    /// written since the last one (7% of smt-cls-4096's instructions).
    dirty_words: u64,
}

/// Words of [`RqSums::dirty`]: one bit per CPU the simulator can have.
const DIRTY_WORDS: usize = (MAX_CPUS / 64) as usize;

// `dirty_words` has a bit for each word of `dirty`.
const _: () = assert!(DIRTY_WORDS <= 64 && MAX_CPUS.is_multiple_of(64));

impl RqSums {
    /// The sums of `rqs` as they are.
    pub(in crate::sim) fn new(rqs: &[RqState]) -> RqSums {
        let n = rqs.len();
        let mut start = vec![0];
        let mut len = n;
        let mut k = 1usize;
        // A level exists while its blocks are smaller than the machine.
        while (1usize << (FANOUT_LOG2 * k as u32)) < n {
            start.push(start[k - 1] + len);
            len = n.div_ceil(1 << (FANOUT_LOG2 * k as u32));
            k += 1;
        }
        let total = start[start.len() - 1] + len;
        let mut sums = RqSums {
            cells: vec![Part::default(); total],
            start,
            n_cpus: n,
            dirty: [0; DIRTY_WORDS],
            dirty_words: 0,
        };
        for (c, rq) in rqs.iter().enumerate() {
            sums.fold(c as u32, rq);
        }
        sums
    }

    /// `cpu`'s runqueue was written: its part is folded in before the next sum.
    #[inline]
    pub(in crate::sim) fn mark(&mut self, cpu: u32) {
        debug_assert!(cpu < MAX_CPUS);
        let w = (cpu >> 6) as usize % DIRTY_WORDS;
        self.dirty[w] |= 1 << (cpu & 63);
        self.dirty_words |= 1 << w;
    }

    /// Folds every marked CPU's runqueue into the sums (before [`RqSums::sum`]), in
    /// ascending CPU order.
    pub(in crate::sim) fn flush(&mut self, rqs: &[RqState]) {
        let mut words = std::mem::take(&mut self.dirty_words);
        while words != 0 {
            let w = words.trailing_zeros() as usize;
            words &= words - 1;
            let mut bits = std::mem::take(&mut self.dirty[w]);
            while bits != 0 {
                let cpu = (w as u32) * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                self.fold(cpu, &rqs[cpu as usize]);
            }
        }
    }

    /// Brings `cpu`'s part (and its blocks) in step with its runqueue `rq`.
    #[inline]
    fn fold(&mut self, cpu: u32, rq: &RqState) {
        let new = Part::of(rq);
        let cell = &mut self.cells[cpu as usize];
        if *cell == new {
            return;
        }
        let delta = new.minus(cell);
        *cell = new;
        for (k, &s) in self.start.iter().enumerate().skip(1) {
            let i = cpu as usize >> (FANOUT_LOG2 * k as u32);
            self.cells[s + i].add(&delta);
        }
    }

    /// The cells whose sum is the parts of `cpus` (sorted, distinct): the largest
    /// aligned whole blocks, then single CPUs.
    pub(in crate::sim) fn pieces(&self, cpus: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut j = 0;
        while j < cpus.len() {
            let c = cpus[j] as usize;
            let mut taken = false;
            for k in (1..self.start.len()).rev() {
                let size = 1usize << (FANOUT_LOG2 * k as u32);
                // A whole block: aligned, inside the machine, and all its CPUs listed
                // (sorted and distinct, so its last CPU in place means all are).
                if c.is_multiple_of(size)
                    && c + size <= self.n_cpus
                    && cpus.get(j + size - 1) == Some(&((c + size - 1) as u32))
                {
                    out.push((self.start[k] + (c >> (FANOUT_LOG2 * k as u32))) as u32);
                    j += size;
                    taken = true;
                    break;
                }
            }
            if !taken {
                out.push(c as u32);
                j += 1;
            }
        }
        out
    }

    /// The sum of the parts of `pieces` (from [`RqSums::pieces`]), after
    /// [`RqSums::flush`].
    #[inline]
    pub(in crate::sim) fn sum(&self, pieces: &[u32]) -> Part {
        debug_assert!(self.dirty.iter().all(|&w| w == 0), "sums read unflushed");
        let mut s = Part::default();
        for &i in pieces {
            s.add(&self.cells[i as usize]);
        }
        s
    }

    /// Whether the sums, once the marked CPUs are folded in, match `rqs` (the
    /// invariant checks): a write that was not marked shows.
    pub(in crate::sim) fn matches(&self, rqs: &[RqState]) -> bool {
        let mut flushed = self.clone();
        flushed.flush(rqs);
        RqSums::new(rqs).cells == flushed.cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rqs(n: usize) -> Vec<RqState> {
        (0..n)
            .map(|c| RqState {
                nr_running: (c % 3) as u32,
                load_avg: 7 * c as u64,
                util_avg: 1000 - c as u64,
                curr_is_idle: c % 3 == 0,
                ttwu_pending: c % 5 == 0,
                ..RqState::idle()
            })
            .collect()
    }

    fn by_hand(rqs: &[RqState], cpus: &[u32]) -> Part {
        let mut p = Part::default();
        for &c in cpus {
            p.add(&Part::of(&rqs[c as usize]));
        }
        p
    }

    /// Whole blocks are used where they fit, and any CPU list sums as CPU by CPU,
    /// before and after runqueue writes; a write not marked is caught.
    #[test]
    fn group_sums_equal_the_cpu_by_cpu_sums() {
        let mut r = rqs(130);
        let mut sums = RqSums::new(&r);
        let lists: Vec<Vec<u32>> = vec![
            (0..96).collect(),
            (32..128).collect(),
            (0..130).collect(),
            (3..70).collect(),
            vec![1, 9, 64, 129],
            (0..130).step_by(2).collect(),
        ];
        assert_eq!(sums.pieces(&lists[0]).len(), 1 + 4);
        assert_eq!(sums.pieces(&lists[1]).len(), 4 + 1);
        for step in 0..3 {
            for l in &lists {
                assert_eq!(sums.sum(&sums.pieces(l)), by_hand(&r, l), "step {step}");
            }
            for c in (step..130).step_by(7) {
                r[c].nr_running = (r[c].nr_running + 2) % 4;
                r[c].load_avg = r[c].load_avg.wrapping_mul(3) % 5000;
                r[c].util_avg /= 2;
                r[c].curr_is_idle = !r[c].curr_is_idle;
                sums.mark(c as u32);
            }
            sums.flush(&r);
        }
        assert!(sums.matches(&r));
        r[5].load_avg += 1;
        assert!(!sums.matches(&r), "a write the sums missed is seen");
    }
}
