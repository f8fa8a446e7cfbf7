//! The one PRNG: xoshiro256** seeded through splitmix64. The lowest layer: the
//! simulator owns one, workloads sample their distributions from it, tests draw
//! from it.
//!
//! Written out here (no `rand`) so that native and wasm32 builds produce the same
//! stream bit for bit. Only integer operations and IEEE-754 `+ - * /` (which are
//! exactly rounded everywhere) are used; the exponential distribution computes its
//! logarithm with `ln()` below instead of the platform's libm, whose last bit differs
//! between glibc and the wasm32 soft implementation.

/// xoshiro256** 1.0 (Blackman and Vigna, 2018).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (Lemire's multiply-shift with rejection; unbiased; the
    /// division for the rejection threshold only runs when the low word is small).
    /// `n == 0` returns 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `lo..=hi`, over the whole `u64` range too: `0..=u64::MAX` has
    /// 2^64 values, one more than `below()` can name, and is a raw draw.
    #[inline]
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(n) => lo + self.below(n),
            None => self.next_u64(),
        }
    }

    /// Uniform in (0, 1], 53 bits.
    #[inline]
    fn unit_open0(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Exponentially distributed with the given mean, rounded to ns.
    pub fn exp(&mut self, mean_ns: u64) -> u64 {
        let u = self.unit_open0();
        let x = -ln(u) * mean_ns as f64;
        // Bounded: -ln(2^-53) * mean = 36.7 * mean.
        x as u64
    }
}

/// Natural logarithm of a positive normal f64 from basic IEEE operations only:
/// x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m by the atanh series
/// 2(s + s^3/3 + s^5/5 + ...), s = (m-1)/(m+1), |s| < 0.172, 12 terms (error < 1e-16).
pub(crate) fn ln(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    let mut k = 1.0;
    for _ in 0..12 {
        sum += term / k;
        term *= s2;
        k += 2.0;
    }
    2.0 * sum + e as f64 * std::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn stream_is_fixed() {
        // Pins the generator: a change here changes every simulation digest.
        let mut r = Rng::new(42);
        let v: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut r2 = Rng::new(42);
        let v2: Vec<u64> = (0..3).map(|_| r2.next_u64()).collect();
        assert_eq!(v, v2);
        assert_ne!(v[0], v[1]);
        let mut r3 = Rng::new(43);
        assert_ne!(r3.next_u64(), v[0]);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let x = r.below(7);
            assert!(x < 7);
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn range_inclusive_covers_the_full_u64_range() {
        // Issue 16: `hi - lo + 1` wrapped to 0 at 0..=u64::MAX, so every draw was 0.
        let mut r = Rng::new(3);
        let draws: Vec<u64> = (0..64).map(|_| r.range_inclusive(0, u64::MAX)).collect();
        assert!(draws.iter().any(|&x| x > u64::MAX / 2), "{draws:?}");
        assert!(draws.iter().any(|&x| x != 0), "{draws:?}");
        for _ in 0..64 {
            let x = r.range_inclusive(u64::MAX - 1, u64::MAX);
            assert!(x >= u64::MAX - 1);
            let y = r.range_inclusive(1, u64::MAX);
            assert!(y >= 1);
        }
        // A narrower range draws exactly as before: below(hi - lo + 1).
        let (mut a, mut b) = (Rng::new(9), Rng::new(9));
        assert_eq!(a.range_inclusive(5, 20), 5 + b.below(16));
    }

    #[test]
    fn ln_matches_known_values() {
        for (x, want) in [
            (1.0, 0.0),
            (std::f64::consts::E, 1.0),
            (0.5, -std::f64::consts::LN_2),
            (1e-9, -20.723_265_836_946_41),
            (3.0, 1.098_612_288_668_109_8),
        ] {
            assert!(
                (ln(x) - want).abs() < 1e-12,
                "ln({x}) = {} want {want}",
                ln(x)
            );
        }
    }

    #[test]
    fn exp_mean_is_close() {
        let mut r = Rng::new(7);
        let n = 20_000;
        let sum: u64 = (0..n).map(|_| r.exp(1000)).sum();
        let mean = sum / n;
        assert!((950..1050).contains(&mean), "mean {mean}");
    }
}
