//! `for_each_cpu_wrap()` (include/linux/cpumask.h): the walk from a start CPU round
//! the mask, as `select_idle_cpu()` scans, and where a CPU falls in it, computed a
//! word at a time rather than CPU by CPU.

use super::{CpuId, CpuMask, Iter};

/// How many CPUs of `m` (a mask of up to 128 CPUs) `for_each_cpu_wrap(.., start)` visits
/// before CPU `k`: those from `start` up, then, once the walk has wrapped, those below `k`.
#[inline]
fn wrap_before128(m: u128, start: u32, k: u32) -> u32 {
    let upper = m & (!0u128 << start);
    let below_k = (1u128 << k) - 1;
    let before = if k >= start {
        upper & below_k
    } else {
        upper | (m & below_k)
    };
    before.count_ones()
}

/// How [`CpuMask::wrap_walk`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrapWalk {
    /// The walk reached `cpu` of `hit` after visiting `pos` other CPUs.
    Hit { pos: u64, cpu: CpuId },
    /// The walk reached position `limit` first.
    Limit,
    /// The walk visited all `len` CPUs (`len <= limit`) and none is in `hit`.
    End { len: u64 },
}

impl CpuMask {
    /// The position of `cpu` in `for_each_cpu_wrap(.., self, start)` order: how many
    /// CPUs of the mask that walk visits before it.
    #[inline]
    pub fn wrap_position(&self, start: u32, cpu: CpuId) -> u32 {
        let start = if start >= self.nr_cpu_ids { 0 } else { start };
        if let Some(m) = self.bits128().filter(|_| cpu.0 < self.nr_cpu_ids) {
            return wrap_before128(m, start, cpu.0);
        }
        if cpu.0 >= start {
            self.weight_range(start, cpu.0)
        } else {
            self.weight_range(start, self.nr_cpu_ids) + self.weight_range(0, cpu.0)
        }
    }

    /// The walk `for_each_cpu_wrap(cpu, self, start)` that stops at the first CPU of
    /// `hit`, or before the CPU at position `limit` (0-based), in one pass over the
    /// words: what a budgeted scan loop visits, without visiting CPU by CPU.
    #[inline]
    pub fn wrap_walk(&self, hit: &CpuMask, start: u32, limit: u64) -> WrapWalk {
        let start = if start >= self.nr_cpu_ids { 0 } else { start };
        if let (Some(m), Some(h)) = (self.bits128(), hit.bits128()) {
            // The walk visits m's bits >= start, low first, then its bits < start.
            let hits = m & h;
            let upper_hits = hits & (!0u128 << start);
            let first = if upper_hits != 0 { upper_hits } else { hits };
            if first != 0 {
                let k = first.trailing_zeros();
                let pos = wrap_before128(m, start, k) as u64;
                if pos >= limit {
                    return WrapWalk::Limit;
                }
                return WrapWalk::Hit { pos, cpu: CpuId(k) };
            }
            let len = m.count_ones() as u64;
            return if len > limit {
                WrapWalk::Limit
            } else {
                WrapWalk::End { len }
            };
        }
        let (a, b) = (self.words(), hit.words());
        let n = a.len().min(b.len());
        let sw = (start / 64) as usize;
        let high = !0u64 << (start % 64);
        let mut seen: u64 = 0;
        // Wrap order: start's word from start up, the words after it, the words
        // before it, then start's word below start.
        let mut i = sw;
        for k in 0..=n {
            let seg = if k == 0 {
                high
            } else if k == n {
                !high
            } else {
                !0u64
            };
            let wi = i;
            i = if i + 1 == n { 0 } else { i + 1 };
            let w = a[wi] & seg;
            if w == 0 {
                continue;
            }
            if seen >= limit {
                return WrapWalk::Limit;
            }
            let h = w & b[wi];
            if h != 0 {
                let below = w & ((h & h.wrapping_neg()) - 1);
                let pos = seen + below.count_ones() as u64;
                if pos >= limit {
                    return WrapWalk::Limit;
                }
                let cpu = CpuId(wi as u32 * 64 + h.trailing_zeros());
                return WrapWalk::Hit { pos, cpu };
            }
            seen += w.count_ones() as u64;
        }
        if seen > limit {
            WrapWalk::Limit
        } else {
            WrapWalk::End { len: seen }
        }
    }

    /// `for_each_cpu_wrap(cpu, mask, start)`: the CPUs `>= start` in order, then those
    /// below `start`. The kernel's select_idle_cpu() passes `target + 1`, so `target`
    /// itself comes last.
    pub fn iter_wrap(&self, start: u32) -> impl Iterator<Item = CpuId> + '_ {
        let start = if start >= self.nr_cpu_ids { 0 } else { start };
        Iter::new(self.words(), start, self.nr_cpu_ids).chain(Iter::new(self.words(), 0, start))
    }
}
