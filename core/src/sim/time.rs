//! Simulated time: integer nanoseconds, never a float, never a clock.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Serialize};

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Saturates at [`SimTime::MAX`] (which every run limit rejects).
    pub const fn from_us(us: u64) -> SimTime {
        SimTime(us.saturating_mul(1_000))
    }

    /// Saturates at [`SimTime::MAX`] (which every run limit rejects).
    pub const fn from_ms(ms: u64) -> SimTime {
        SimTime(ms.saturating_mul(1_000_000))
    }

    #[inline]
    pub fn ns(self) -> u64 {
        self.0
    }

    /// `self - earlier`, or 0 when `earlier` is later.
    #[inline]
    pub fn since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<u64> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, ns: u64) -> SimTime {
        SimTime(self.0.saturating_add(ns))
    }
}

impl AddAssign<u64> for SimTime {
    #[inline]
    fn add_assign(&mut self, ns: u64) {
        self.0 = self.0.saturating_add(ns);
    }
}

impl Sub for SimTime {
    type Output = u64;
    /// Saturating difference in nanoseconds.
    #[inline]
    fn sub(self, rhs: SimTime) -> u64 {
        self.since(rhs)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns >= 1_000_000_000 {
            write!(
                f,
                "{}.{:06} s",
                ns / 1_000_000_000,
                (ns / 1_000) % 1_000_000
            )
        } else if ns >= 1_000_000 {
            write!(f, "{}.{:03} ms", ns / 1_000_000, (ns / 1_000) % 1_000)
        } else if ns >= 1_000 {
            write!(f, "{}.{:03} us", ns / 1_000, ns % 1_000)
        } else {
            write!(f, "{ns} ns")
        }
    }
}
