//! PELT-like load tracking (kernel/sched/pelt.c), in integers.
//!
//! A signal that is 0 or 1 over time is averaged with geometric decay: a contribution
//! loses half its weight every 32 periods of 1024 us (`y^32 = 1/2`). The kernel sums in
//! 1024-us periods with a carried remainder; here the decay over an interval of `d`
//! ns is `y^(d / 1.024 ms)` computed from the kernel's own `runnable_avg_yN_inv` table
//! for the whole periods and a linear interpolation within the last period, and the
//! interval's input is taken as constant (which it is: we update at every change).
//!
//! ```text
//!   avg' = avg * y^n + max * (1 - y^n)     (signal on for the whole interval)
//!   avg' = avg * y^n                       (signal off)
//! ```

/// `runnable_avg_yN_inv[]` (kernel/sched/sched-pelt.h): y^n * 2^32, n = 0..31.
const Y_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f3efe5, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// One PELT period in ns (1024 us, as the kernel's `delta >>= 10` on ns makes it).
pub const PERIOD_NS: u64 = 1 << 20;

/// y^(ns / PERIOD_NS) as a 32-bit fraction: the kernel's `runnable_avg_yN_inv` for the
/// whole periods (halving every 32), linear within the last partial period.
#[inline]
pub fn decay_factor(ns: u64) -> u64 {
    let n = ns / PERIOD_NS;
    let f = if n == 0 {
        // Most intervals between a CPU's events are shorter than one period.
        Y_INV[0] as u64
    } else if n >= 32 * 32 {
        return 0;
    } else {
        (Y_INV[(n % 32) as usize] as u64) >> (n / 32)
    };
    // Within the last partial period: y^f ~ 1 - f(1 - y), with 1 - y = 0.021428 = 2809 / 2^17.
    // f < 2^32, frac < 2^20 and 2809 < 2^12: the product fits in 64 bits.
    let frac = ns % PERIOD_NS; // 0..2^20
    f - ((f * frac * 2809) >> (20 + 17))
}

/// `decay_load(val, n)` extended to fractional periods: val * y^(ns / PERIOD_NS).
#[cfg(test)]
pub fn decay(val: u64, ns: u64) -> u64 {
    ((val as u128 * decay_factor(ns) as u128) >> 32) as u64
}

/// Fractional bits kept below the average (the kernel keeps `*_sum` at a finer
/// resolution than `*_avg` for the same reason: updates every few microseconds add
/// less than one unit each, and flooring would bias the average down).
const FRAC: u32 = 16;

/// A PELT average of a 0/1 signal scaled to `max` (1024 for util, the weight for load).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pelt {
    /// The average with [`FRAC`] more bits.
    fine: u64,
    pub last_ns: u64,
}

impl Pelt {
    /// The average, 0..=level.
    #[inline]
    pub fn avg(&self) -> u64 {
        self.fine >> FRAC
    }

    /// Advances to `now_ns` with the signal at `level` (0..=max, e.g. 1024 when running
    /// or `1024 * nr_running` for a runnable count) over the whole interval.
    #[inline]
    pub fn update(&mut self, now_ns: u64, level: u64) {
        let d = now_ns.saturating_sub(self.last_ns);
        if d == 0 {
            return;
        }
        self.last_ns = now_ns;
        self.blend(decay_factor(d), level);
    }

    /// Updates two signals that were last updated together (a CPU's util and load)
    /// with one decay computation.
    #[inline]
    pub fn update_pair(a: &mut Pelt, b: &mut Pelt, now_ns: u64, level_a: u64, level_b: u64) {
        let d = now_ns.saturating_sub(a.last_ns);
        if d == 0 || a.last_ns != b.last_ns {
            a.update(now_ns, level_a);
            b.update(now_ns, level_b);
            return;
        }
        let f = decay_factor(d);
        for (p, level) in [(a, level_a), (b, level_b)] {
            p.last_ns = now_ns;
            p.blend(f, level);
        }
    }

    /// `fine' = fine × f + level × (1 − f)`, f a 32-bit fraction; each product is one
    /// 64 × 64 → 128-bit multiply.
    #[inline]
    fn blend(&mut self, f: u64, level: u64) {
        let lvl = level << FRAC;
        let keep = self.fine as u128 * f as u128;
        let add = lvl as u128 * ((1u64 << 32) - f) as u128;
        self.fine = ((keep + add) >> 32) as u64;
    }

    /// Sets the average to `avg` as of `now_ns`: a new entity's initial value
    /// (`init_entity_runnable_average()`, `post_init_entity_util_avg()`).
    #[inline]
    pub fn set(&mut self, now_ns: u64, avg: u64) {
        self.fine = avg << FRAC;
        self.last_ns = now_ns;
    }

    /// `cfs_rq->avg.X_avg += se->avg.X_avg` (`attach_entity_load_avg()`); the
    /// average's time is unchanged.
    #[inline]
    pub fn add(&mut self, avg: u64) {
        self.fine = self.fine.saturating_add(avg << FRAC);
    }

    /// `sub_positive(&cfs_rq->avg.X_avg, se->avg.X_avg)` (`detach_entity_load_avg()`,
    /// the `removed` sums in `update_cfs_rq_load_avg()`): never below 0.
    #[inline]
    pub fn sub_positive(&mut self, avg: u64) {
        self.fine = self.fine.saturating_sub(avg << FRAC);
    }

    /// The value as of `now_ns` if the signal has been at `level` since the last update
    /// (does not store).
    #[inline]
    pub fn peek(&self, now_ns: u64, level: u64) -> u64 {
        let mut p = *self;
        p.update(now_ns, level);
        p.avg()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn half_life_is_32_periods() {
        let v = decay(1 << 20, 32 * PERIOD_NS);
        assert!((v as i64 - (1 << 19)).abs() < 64, "{v}");
        assert_eq!(decay(12345, 0), 12344); // 0xffffffff / 2^32
        assert_eq!(decay(1 << 40, 40 * 32 * PERIOD_NS), 0);
        let v = decay(1000, 64 * PERIOD_NS);
        assert!((245..=255).contains(&v), "{v}");
    }

    #[test]
    fn partial_period_is_between_whole_ones() {
        let a = decay(1 << 20, 3 * PERIOD_NS);
        let b = decay(1 << 20, 3 * PERIOD_NS + PERIOD_NS / 2);
        let c = decay(1 << 20, 4 * PERIOD_NS);
        assert!(a > b && b > c, "{a} {b} {c}");
    }

    #[test]
    fn always_on_converges_to_max_and_off_to_zero() {
        let mut p = Pelt::default();
        p.update(400 * PERIOD_NS, 1024);
        assert!(p.avg() > 1000 && p.avg() <= 1024, "{}", p.avg());
        p.update(2000 * PERIOD_NS, 0);
        assert!(p.avg() < 5, "{}", p.avg());
    }

    #[test]
    fn half_duty_cycle_settles_near_half() {
        let mut p = Pelt::default();
        let mut t = 0;
        for _ in 0..2000 {
            t += 500_000;
            p.update(t, 1024);
            t += 500_000;
            p.update(t, 0);
        }
        assert!((480..=540).contains(&p.avg()), "{}", p.avg());
    }
}
