//! Per-CPU storage with room for every CPU schedlab models ([`MAX_CPUS`]), so that
//! indexing by a CPU number needs no bounds check: the index is taken modulo the
//! fixed size (one AND), which is the identity for every valid CPU. A CPU number at
//! or past the machine's count is a bug the debug builds (the tests) catch; a
//! release build would read a spare slot instead of panicking.

use std::ops::{Deref, DerefMut, Index, IndexMut};

use super::MAX_CPUS;

const SLOTS: usize = MAX_CPUS as usize;

#[derive(Clone, Debug)]
pub(crate) struct PerCpu<T> {
    slots: Box<[T; SLOTS]>,
    n: usize,
}

impl<T: Clone> PerCpu<T> {
    /// The machine's CPUs' `items` (at most [`MAX_CPUS`]); the slots past them hold
    /// clones of `spare`, never read.
    pub(crate) fn new(mut items: Vec<T>, spare: T) -> Self {
        let n = items.len();
        assert!(n <= SLOTS, "{n} CPUs: at most {SLOTS}");
        items.resize(SLOTS, spare);
        let slots = items
            .into_boxed_slice()
            .try_into()
            .ok()
            .expect("resized to the slots");
        PerCpu { slots, n }
    }

    /// `n` CPUs' copies of `value`.
    pub(crate) fn filled(n: usize, value: T) -> Self {
        PerCpu::new(vec![value.clone(); n], value)
    }
}

impl<T> Deref for PerCpu<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        &self.slots[..self.n]
    }
}

impl<T> DerefMut for PerCpu<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.slots[..self.n]
    }
}

impl<T> Index<usize> for PerCpu<T> {
    type Output = T;
    #[inline]
    fn index(&self, cpu: usize) -> &T {
        debug_assert!(cpu < self.n, "CPU {cpu} of {}", self.n);
        &self.slots[cpu % SLOTS]
    }
}

impl<T> IndexMut<usize> for PerCpu<T> {
    #[inline]
    fn index_mut(&mut self, cpu: usize) -> &mut T {
        debug_assert!(cpu < self.n, "CPU {cpu} of {}", self.n);
        &mut self.slots[cpu % SLOTS]
    }
}
