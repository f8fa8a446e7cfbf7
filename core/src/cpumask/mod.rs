//! `CpuMask`: the kernel's `struct cpumask`, sized from the machine.
//!
//! ```text
//!   bit:   0 1 2 3 4 5 6 7 ...           nr_cpu_ids-1
//!          1 1 1 1 0 0 0 0 ...            0      list "0-3"   hex "0000000f"
//! ```
//!
//! Verbs follow `include/linux/cpumask.h` (`cpumask_test_cpu`, `cpumask_weight`,
//! `cpumask_first`, `for_each_cpu_wrap`, ...). Formatting follows lib/vsprintf.c:
//! `%*pbl` ([`CpuMask::to_list`]) and `%*pb` ([`CpuMask::to_hex`]), both taking the
//! width from `nr_cpu_ids` as `cpumask_pr_args()` does.
//!
//! By file: this one the mask, its words and the set verbs; wrap.rs
//! `for_each_cpu_wrap()`'s walk; format.rs the `%*pbl` / `%*pb` formats and the list
//! parser.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

mod format;
mod per_cpu;
mod wrap;

pub use per_cpu::PerCpu;
pub use wrap::WrapWalk;

/// The largest machine schedlab models (the kernel's default `NR_CPUS` on x86 is 8192;
/// we keep memory and drawing bounded).
pub const MAX_CPUS: u32 = 4096;

/// A logical CPU number, as Linux enumerates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CpuId(pub u32);

impl CpuId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

impl TryFrom<usize> for CpuId {
    type Error = CpuMaskError;
    fn try_from(value: usize) -> Result<Self, Self::Error> {
        if value >= MAX_CPUS as usize {
            return Err(CpuMaskError::TooLarge { cpu: value as u64 });
        }
        Ok(CpuId(value as u32))
    }
}

impl fmt::Display for CpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CpuMaskError {
    #[error("CPU {cpu} is out of range: this machine has CPUs 0-{last}")]
    OutOfRange { cpu: u64, last: u32 },
    #[error("CPU {cpu} is beyond the {MAX_CPUS}-CPU limit")]
    TooLarge { cpu: u64 },
    #[error("cannot read CPU list {text:?}: {why}")]
    BadList { text: String, why: String },
}

/// Words kept inline: masks of machines of up to 256 CPUs (every preset but the
/// 384-CPU EPYC 9654 2P) never allocate, so the wake-up path can copy and intersect
/// them freely (`cpumask_and()` into a fresh mask is one 32-byte copy, as a
/// `struct cpumask` on the kernel's stack is). Four words rather than eight keep a
/// mask at 48 bytes: the sched domains, groups and task views the wake-up path reads
/// are mostly masks, and the smaller ones cut its L1 misses by a fifth on the
/// 128-CPU Kunpeng (docs/performance.md). Two words would cut them further but
/// allocate on the 192- and 224-CPU presets (5% more instructions there).
const INLINE_WORDS: usize = 4;

/// The bits: inline up to [`INLINE_WORDS`] words, on the heap beyond (bounded by
/// [`MAX_CPUS`]). Inline words past the mask's length stay zero.
#[derive(Clone)]
enum Words {
    Inline([u64; INLINE_WORDS]),
    Heap(Box<[u64]>),
}

/// A set of CPUs of one machine (`nr_cpu_ids` bits).
#[derive(Clone)]
pub struct CpuMask {
    nr_cpu_ids: u32,
    n_words: u32,
    words: Words,
}

impl PartialEq for CpuMask {
    fn eq(&self, other: &Self) -> bool {
        self.nr_cpu_ids == other.nr_cpu_ids && self.words() == other.words()
    }
}

impl Eq for CpuMask {}

impl std::hash::Hash for CpuMask {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.nr_cpu_ids.hash(state);
        self.words().hash(state);
    }
}

impl CpuMask {
    /// The whole mask as one `u128`, on machines of up to 128 CPUs: the wake-up
    /// path's scans then take a handful of instructions instead of a loop over words.
    #[inline]
    fn bits128(&self) -> Option<u128> {
        match &self.words {
            Words::Inline(w) if self.nr_cpu_ids <= 128 => Some(w[0] as u128 | (w[1] as u128) << 64),
            _ => None,
        }
    }

    /// An empty mask for a machine of `nr_cpu_ids` CPUs (`cpumask_clear`).
    pub fn new(nr_cpu_ids: u32) -> Self {
        let n_words = (nr_cpu_ids as usize).div_ceil(64);
        let words = if n_words <= INLINE_WORDS {
            Words::Inline([0; INLINE_WORDS])
        } else {
            Words::Heap(vec![0; n_words].into_boxed_slice())
        };
        CpuMask {
            nr_cpu_ids,
            n_words: n_words as u32,
            words,
        }
    }

    #[inline]
    fn words(&self) -> &[u64] {
        match &self.words {
            Words::Inline(w) => &w[..self.n_words as usize],
            Words::Heap(w) => w,
        }
    }

    #[inline]
    fn words_mut(&mut self) -> &mut [u64] {
        match &mut self.words {
            Words::Inline(w) => &mut w[..self.n_words as usize],
            Words::Heap(w) => w,
        }
    }

    /// Every CPU of the machine (`cpumask_setall`).
    pub fn full(nr_cpu_ids: u32) -> Self {
        let mut m = Self::new(nr_cpu_ids);
        for c in 0..nr_cpu_ids {
            m.set_cpu(CpuId(c));
        }
        m
    }

    /// `cpumask_of(cpu)`.
    pub fn of(nr_cpu_ids: u32, cpu: CpuId) -> Self {
        let mut m = Self::new(nr_cpu_ids);
        m.set_cpu(cpu);
        m
    }

    pub fn from_cpus(nr_cpu_ids: u32, cpus: impl IntoIterator<Item = CpuId>) -> Self {
        let mut m = Self::new(nr_cpu_ids);
        for c in cpus {
            m.set_cpu(c);
        }
        m
    }

    #[inline]
    pub fn nr_cpu_ids(&self) -> u32 {
        self.nr_cpu_ids
    }

    /// `cpumask_test_cpu()`. CPUs beyond the mask read as clear.
    #[inline]
    pub fn test_cpu(&self, cpu: CpuId) -> bool {
        let i = cpu.idx();
        i < self.nr_cpu_ids as usize && self.word(i / 64) & (1u64 << (i % 64)) != 0
    }

    /// Word `wi` (`wi < n_words`) without building the word slice: the single-bit
    /// verbs run on every wake-up and runqueue change.
    #[inline]
    fn word(&self, wi: usize) -> u64 {
        match &self.words {
            Words::Inline(w) => w[wi % INLINE_WORDS],
            Words::Heap(w) => w[wi],
        }
    }

    #[inline]
    fn word_mut(&mut self, wi: usize) -> &mut u64 {
        match &mut self.words {
            Words::Inline(w) => &mut w[wi % INLINE_WORDS],
            Words::Heap(w) => &mut w[wi],
        }
    }

    /// `cpumask_set_cpu()`. Panics on a CPU beyond the mask: callers hold validated ids.
    #[inline]
    pub fn set_cpu(&mut self, cpu: CpuId) {
        let i = cpu.idx();
        assert!(i < self.nr_cpu_ids as usize, "cpu {i} beyond cpumask");
        *self.word_mut(i / 64) |= 1u64 << (i % 64);
    }

    /// `cpumask_clear_cpu()`.
    #[inline]
    pub fn clear_cpu(&mut self, cpu: CpuId) {
        let i = cpu.idx();
        if i < self.nr_cpu_ids as usize {
            *self.word_mut(i / 64) &= !(1u64 << (i % 64));
        }
    }

    /// `cpumask_assign_cpu()`: sets or clears `cpu` without a branch. Panics on a CPU
    /// beyond the mask, as [`CpuMask::set_cpu`] does.
    #[inline]
    pub fn assign_cpu(&mut self, cpu: CpuId, value: bool) {
        let i = cpu.idx();
        assert!(i < self.nr_cpu_ids as usize, "cpu {i} beyond cpumask");
        let bit = 1u64 << (i % 64);
        let w = self.word_mut(i / 64);
        *w = (*w & !bit) | (value as u64 * bit);
    }

    /// `cpumask_weight()`.
    #[inline]
    pub fn weight(&self) -> u32 {
        self.words().iter().map(|w| w.count_ones()).sum()
    }

    /// The number of CPUs of the mask in `lo..hi` (`bitmap_weight_from()`-like).
    #[inline]
    pub fn weight_range(&self, lo: u32, hi: u32) -> u32 {
        let hi = hi.min(self.nr_cpu_ids);
        if lo >= hi {
            return 0;
        }
        let words = self.words();
        let (wl, wh) = ((lo / 64) as usize, ((hi - 1) / 64) as usize);
        let low_mask = !0u64 << (lo % 64);
        let high_mask = !0u64 >> (63 - (hi - 1) % 64);
        if wl == wh {
            return (words[wl] & low_mask & high_mask).count_ones();
        }
        let mut n = (words[wl] & low_mask).count_ones() + (words[wh] & high_mask).count_ones();
        for w in &words[wl + 1..wh] {
            n += w.count_ones();
        }
        n
    }

    /// `cpumask_empty()`.
    pub fn is_empty(&self) -> bool {
        self.words().iter().all(|&w| w == 0)
    }

    /// `cpumask_first()`, `None` where the kernel returns `nr_cpu_ids`.
    pub fn first(&self) -> Option<CpuId> {
        self.next_from(0)
    }

    /// The first set CPU `>= from` (`cpumask_next(from - 1)`).
    #[inline]
    pub fn next_from(&self, from: u32) -> Option<CpuId> {
        if from >= self.nr_cpu_ids {
            return None;
        }
        let words = self.words();
        let mut wi = (from / 64) as usize;
        let mut w = words[wi] & (!0u64 << (from % 64));
        loop {
            if w != 0 {
                let c = wi as u32 * 64 + w.trailing_zeros();
                return (c < self.nr_cpu_ids).then_some(CpuId(c));
            }
            wi += 1;
            if wi >= words.len() {
                return None;
            }
            w = words[wi];
        }
    }

    /// `cpumask_and()` into a new mask.
    #[inline]
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        if let (Words::Inline(a), Words::Inline(b)) = (&self.words, &other.words) {
            // Whole inline arrays: the words past the length are zero in both.
            return CpuMask {
                nr_cpu_ids: self.nr_cpu_ids,
                n_words: self.n_words,
                words: Words::Inline(std::array::from_fn(|i| a[i] & b[i])),
            };
        }
        let mut m = self.clone();
        m.and_assign(other);
        m
    }

    #[inline]
    pub fn and_assign(&mut self, other: &CpuMask) {
        if let (Words::Inline(a), Words::Inline(b)) = (&mut self.words, &other.words) {
            for i in 0..INLINE_WORDS {
                a[i] &= b[i];
            }
            return;
        }
        for (a, b) in self.words_mut().iter_mut().zip(other.words()) {
            *a &= *b;
        }
    }

    /// `cpumask_or()` into a new mask.
    pub fn or(&self, other: &CpuMask) -> CpuMask {
        let mut m = self.clone();
        m.or_assign(other);
        m
    }

    pub fn or_assign(&mut self, other: &CpuMask) {
        for (a, b) in self.words_mut().iter_mut().zip(other.words()) {
            *a |= *b;
        }
    }

    /// `cpumask_andnot()`: self \ other.
    pub fn andnot(&self, other: &CpuMask) -> CpuMask {
        let mut m = self.clone();
        m.andnot_assign(other);
        m
    }

    #[inline]
    pub fn andnot_assign(&mut self, other: &CpuMask) {
        if let (Words::Inline(a), Words::Inline(b)) = (&mut self.words, &other.words) {
            for i in 0..INLINE_WORDS {
                a[i] &= !b[i];
            }
            return;
        }
        for (a, b) in self.words_mut().iter_mut().zip(other.words()) {
            *a &= !*b;
        }
    }

    /// `cpumask_subset(self, other)`: every CPU of self is in other.
    pub fn is_subset(&self, other: &CpuMask) -> bool {
        self.words()
            .iter()
            .zip(other.words())
            .all(|(a, b)| a & !b == 0)
    }

    /// `cpumask_intersects()`.
    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.words()
            .iter()
            .zip(other.words())
            .any(|(a, b)| a & b != 0)
    }

    /// `for_each_cpu()`.
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(self.words(), 0, self.nr_cpu_ids)
    }
}

/// Iterator over the set CPUs of a mask in `[from, end)`, `end <= nr_cpu_ids`. The
/// mask is borrowed, so it cannot change underneath: the iterator keeps the bits of
/// the current word still to visit.
pub struct Iter<'a> {
    words: &'a [u64],
    /// Index of the word `bits` came from.
    wi: usize,
    /// The current word's set bits not yet returned.
    bits: u64,
    end: u32,
}

impl<'a> Iter<'a> {
    #[inline]
    fn new(words: &'a [u64], from: u32, end: u32) -> Self {
        if from >= end {
            return Iter {
                words,
                wi: words.len(),
                bits: 0,
                end,
            };
        }
        let wi = (from / 64) as usize;
        Iter {
            words,
            wi,
            bits: words[wi] & (!0u64 << (from % 64)),
            end,
        }
    }
}

impl Iterator for Iter<'_> {
    type Item = CpuId;
    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        loop {
            if self.bits != 0 {
                let c = self.wi as u32 * 64 + self.bits.trailing_zeros();
                if c >= self.end {
                    self.bits = 0;
                    self.wi = self.words.len();
                    return None;
                }
                self.bits &= self.bits - 1;
                return Some(CpuId(c));
            }
            self.wi += 1;
            if self.wi >= self.words.len() {
                return None;
            }
            self.bits = self.words[self.wi];
        }
    }
}

#[cfg(test)]
mod tests;
