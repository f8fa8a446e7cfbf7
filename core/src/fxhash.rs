//! A fast, deterministic hasher for the maps that build domains and the simulator's
//! tables: rustc's FxHash (the `rustc-hash` crate's `FxHasher`, 64-bit), written out
//! here to keep `core` free of another dependency.
//!
//! std's default SipHash is keyed per process and costs ~15 instructions a byte; the
//! domain builder hashes 512-byte `CpuMask`s of a 4096-CPU machine tens of thousands
//! of times (docs/performance.md, "Session 26"). Fx takes one multiply per word and
//! is the same in every run. Not DoS-resistant, which no map here needs: every key is
//! derived from the machine. No output may depend on a map's iteration order; the
//! maps using it are only looked up.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` hashed with [`FxHasher`]; make one with `FxHashMap::default()`.
pub(crate) type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// `rustc_hash::FxHasher` (1.x): rotate, xor in a word, multiply.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add_to_hash(&mut self, i: u64) {
        self.hash = (self.hash.rotate_left(5) ^ i).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add_to_hash(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut rest = chunks.remainder();
        if rest.len() >= 4 {
            self.add_to_hash(u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as u64);
            rest = &rest[4..];
        }
        for &b in rest {
            self.add_to_hash(b as u64);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add_to_hash(i as u64);
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add_to_hash(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add_to_hash(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add_to_hash(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add_to_hash(i as u64);
    }

    /// Rotated as `rustc-hash` 2.x does: hashbrown takes the bucket from the low
    /// bits, which a multiply leaves zero for keys with zero low bits (addresses of
    /// 8-byte-aligned groups would all start their probe on every eighth bucket).
    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    /// The same key hashes the same in every map and every run (no per-process key).
    #[test]
    fn deterministic() {
        let b = BuildHasherDefault::<FxHasher>::default();
        let h = |k: &(usize, [u64; 3])| b.hash_one(k);
        assert_eq!(h(&(1, [1, 2, 3])), h(&(1, [1, 2, 3])));
        assert_ne!(h(&(1, [1, 2, 3])), h(&(1, [1, 2, 4])));
        let mut m: FxHashMap<u32, u32> = FxHashMap::default();
        m.insert(7, 1);
        assert_eq!(m.get(&7), Some(&1));
        let mut x = FxHasher::default();
        [0u8; 13].hash(&mut x);
        assert_ne!(x.finish(), 0);
    }

    /// Keys that are multiples of 8 (aligned addresses) still spread over the low
    /// bits hashbrown takes the bucket from.
    #[test]
    fn aligned_keys_reach_every_low_bucket() {
        let b = BuildHasherDefault::<FxHasher>::default();
        let low: std::collections::BTreeSet<u64> =
            (1..=256usize).map(|a| b.hash_one(a * 8) & 7).collect();
        assert_eq!(low.len(), 8, "{low:?}");
    }
}
