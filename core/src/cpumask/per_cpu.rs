//! Per-CPU storage with room for every CPU schedlab models ([`MAX_CPUS`]), so that
//! indexing by a CPU number needs no bounds check: the index is taken modulo the
//! fixed size (one AND), which is the identity for every valid CPU. A CPU number at
//! or past the machine's count is a bug the debug builds (the tests) catch; a
//! release build would read a spare slot instead of panicking.
//!
//! Read and written whole, it is the slice of the machine's CPUs (`Deref`, and as a
//! JSON array in serde).

use std::ops::{Deref, DerefMut, Index, IndexMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::MAX_CPUS;

const SLOTS: usize = MAX_CPUS as usize;

#[derive(Debug)]
pub struct PerCpu<T> {
    slots: Box<[T; SLOTS]>,
    n: usize,
}

impl<T: Clone> PerCpu<T> {
    /// The machine's CPUs' `items` (at most [`MAX_CPUS`]); the slots past them hold
    /// clones of `spare`, never read.
    pub fn new(mut items: Vec<T>, spare: T) -> Self {
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
    pub fn filled(n: usize, value: T) -> Self {
        PerCpu::new(vec![value.clone(); n], value)
    }
}

/// Cloned through the heap: a derived `Clone` of `Box<[T; SLOTS]>` builds the array on
/// the stack first (2.3 MB for the simulator's CPUs), past wasm32's 1 MB stack.
impl<T: Clone> Clone for PerCpu<T> {
    fn clone(&self) -> Self {
        let items: Vec<T> = self.slots.to_vec();
        let slots = items
            .into_boxed_slice()
            .try_into()
            .ok()
            .expect("as many as the slots");
        PerCpu { slots, n: self.n }
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

impl<T: PartialEq> PartialEq for PerCpu<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<'a, T> IntoIterator for &'a PerCpu<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut PerCpu<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T: Serialize> Serialize for PerCpu<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// An array of at most [`MAX_CPUS`] entries (more is an error, not a panic); the
/// spare slots hold `T::default()`.
impl<'de, T: Deserialize<'de> + Clone + Default> Deserialize<'de> for PerCpu<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(d)?;
        if items.len() > SLOTS {
            return Err(serde::de::Error::custom(format!(
                "{} CPUs: at most {SLOTS}",
                items.len()
            )));
        }
        Ok(PerCpu::new(items, T::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn reads_and_writes_as_the_array_of_its_cpus() {
        let mut p = PerCpu::new(vec![3u32, 1, 4], 0);
        p[1] = 5;
        assert_eq!((p.len(), &*p), (3, &[3, 5, 4][..]));
        let json = serde_json::to_string(&p).expect("serialize");
        assert_eq!(json, "[3,5,4]");
        let back: PerCpu<u32> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, p);
    }

    /// 4096 slots of 1 KiB that are not `Copy` (as the simulator's `Cpu` is not): a
    /// clone that built them on the stack (a derived `Clone` of the boxed array)
    /// overflows a test thread's 2 MiB stack and wasm32's 1 MiB.
    #[test]
    fn a_clone_of_large_slots_stays_off_the_stack() {
        #[derive(Clone)]
        struct Big {
            bytes: [u8; 1024],
            name: String,
        }
        let big = Big {
            bytes: [7; 1024],
            name: "cpu".into(),
        };
        let p = PerCpu::filled(2, big);
        let q = p.clone();
        assert_eq!(
            (q.len(), q[1].bytes[1023], q[1].name.as_str()),
            (2, 7, "cpu")
        );
    }

    #[test]
    fn more_cpus_than_the_slots_are_an_error_not_a_panic() {
        let all = serde_json::to_string(&vec![7u8; SLOTS]).expect("serialize");
        let p: PerCpu<u8> = serde_json::from_str(&all).expect("MAX_CPUS CPUs");
        assert_eq!((p.len(), p[SLOTS - 1]), (SLOTS, 7));
        let more = serde_json::to_string(&vec![7u8; SLOTS + 1]).expect("serialize");
        let err = serde_json::from_str::<PerCpu<u8>>(&more).expect_err("too many CPUs");
        assert!(err.to_string().contains("at most 4096"), "{err}");
    }
}
