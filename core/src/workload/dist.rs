//! Duration distributions of workload ops: what a `Run` or `Sleep` samples, how
//! the command line and scenarios write one (`fixed:N`, `uniform:A-B`, `exp:MEAN`).

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// A duration distribution, in nanoseconds. Every value (a fixed time, both ends of a
/// uniform range, an exponential mean) is at most [`Dist::MAX_NS`]: [`Dist::parse`]
/// and deserialisation refuse larger ones, and the simulator refuses a workload
/// built with one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", try_from = "DistRepr")]
pub enum Dist {
    Fixed {
        ns: u64,
    },
    /// Uniform over `lo..=hi`.
    Uniform {
        lo: u64,
        hi: u64,
    },
    Exp {
        mean: u64,
    },
}

/// [`Dist`]'s wire form, read as is and then checked by [`Dist::check`].
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum DistRepr {
    Fixed { ns: u64 },
    Uniform { lo: u64, hi: u64 },
    Exp { mean: u64 },
}

impl TryFrom<DistRepr> for Dist {
    type Error = String;
    fn try_from(r: DistRepr) -> Result<Dist, String> {
        let d = match r {
            DistRepr::Fixed { ns } => Dist::Fixed { ns },
            DistRepr::Uniform { lo, hi } => Dist::Uniform { lo, hi },
            DistRepr::Exp { mean } => Dist::Exp { mean },
        };
        d.check().map(|()| d)
    }
}

impl Dist {
    /// The longest value a distribution may hold: 4 hours (14 400 s), the longest run
    /// the simulator accepts (`sim::event::MAX_RUN`, which asserts the two agree). A
    /// burst or sleep that long outlasts any run; an exponential sample is at most
    /// 36.7 × its mean (see `Rng::exp`), under 2^49 ns, so adding one to the clock can
    /// never come near `u64::MAX` (issue 16: `fixed:18446744073709551615ns` wrapped).
    pub const MAX_NS: u64 = 4 * 3600 * 1_000_000_000;

    /// Whether every value is at most [`Dist::MAX_NS`] and a range runs forwards.
    pub fn check(&self) -> Result<(), String> {
        let (what, v) = match *self {
            Dist::Fixed { ns } => ("the duration", ns),
            Dist::Uniform { lo, hi } if hi < lo => {
                return Err(format!("uniform:{lo}-{hi}: LO must not exceed HI"))
            }
            Dist::Uniform { hi, .. } => ("a uniform range's HI", hi),
            Dist::Exp { mean } => ("the exponential mean", mean),
        };
        if v > Self::MAX_NS {
            return Err(format!(
                "{what} is {v} ns; a duration may be at most {} ns ({} s, the longest run)",
                Self::MAX_NS,
                Self::MAX_NS / 1_000_000_000
            ));
        }
        Ok(())
    }

    pub const fn fixed(ns: u64) -> Dist {
        Dist::Fixed { ns }
    }

    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match *self {
            Dist::Fixed { ns } => ns,
            Dist::Uniform { lo, hi } => rng.range_inclusive(lo, hi),
            Dist::Exp { mean } => rng.exp(mean),
        }
    }

    pub fn mean_ns(&self) -> u64 {
        match *self {
            Dist::Fixed { ns } => ns,
            Dist::Uniform { lo, hi } => lo / 2 + hi / 2,
            Dist::Exp { mean } => mean,
        }
    }

    /// Parses `N`, `fixed:N`, `uniform:A-B` or `exp:MEAN`, each number with an optional
    /// `ns`/`us`/`ms`/`s` suffix (default ns), each value at most [`Dist::MAX_NS`]. In
    /// `uniform:A-B` a unit written only on `B` applies to `A` too (`uniform:5-10ms` is
    /// 5 ms to 10 ms); `uniform:5us-10ms` keeps both.
    pub fn parse(text: &str) -> Result<Dist, String> {
        let d = Self::parse_unchecked(text)?;
        d.check().map_err(|e| format!("{text:?}: {e}"))?;
        Ok(d)
    }

    fn parse_unchecked(text: &str) -> Result<Dist, String> {
        let t = text.trim();
        let (kind, rest) = t.split_once(':').unwrap_or(("fixed", t));
        match kind {
            "fixed" => Ok(Dist::Fixed {
                ns: parse_ns(rest)?,
            }),
            "exp" => Ok(Dist::Exp {
                mean: parse_ns(rest)?,
            }),
            "uniform" => {
                let (a, b) = rest
                    .split_once('-')
                    .ok_or_else(|| format!("{text:?}: write uniform:LO-HI, e.g. uniform:0-10ms"))?;
                // `5-10ms` is 5 ms to 10 ms: a unit on HI alone applies to LO too;
                // `5us-10ms` keeps each end's own.
                let ((a_num, a_unit), (b_num, b_unit)) = (split_unit(a), split_unit(b));
                let lo = to_ns(a, a_num, a_unit.or(b_unit).unwrap_or(1))?;
                let hi = to_ns(b, b_num, b_unit.unwrap_or(1))?;
                if hi < lo {
                    return Err(format!("{text:?}: LO must not exceed HI"));
                }
                Ok(Dist::Uniform { lo, hi })
            }
            _ => Err(format!(
                "{text:?}: unknown distribution {kind:?}; use fixed:N, uniform:A-B or exp:MEAN"
            )),
        }
    }
}

/// What [`Dist::parse`] reads back: `fixed:N`, `uniform:A-B`, `exp:MEAN`, in ns.
impl std::fmt::Display for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Dist::Fixed { ns } => write!(f, "fixed:{ns}"),
            Dist::Uniform { lo, hi } => write!(f, "uniform:{lo}-{hi}"),
            Dist::Exp { mean } => write!(f, "exp:{mean}"),
        }
    }
}

/// `250`, `250ns`, `3us`, `10ms`, `1s` → ns.
fn parse_ns(text: &str) -> Result<u64, String> {
    let (num, unit) = split_unit(text);
    to_ns(text, num, unit.unwrap_or(1))
}

/// A duration's number and its unit's multiple to ns, if it has a unit.
fn split_unit(text: &str) -> (&str, Option<u64>) {
    let t = text.trim();
    if let Some(n) = t.strip_suffix("ns") {
        (n, Some(1))
    } else if let Some(n) = t.strip_suffix("us") {
        (n, Some(1_000))
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, Some(1_000_000))
    } else if let Some(n) = t.strip_suffix('s') {
        (n, Some(1_000_000_000))
    } else {
        (t, None)
    }
}

/// `num` × `mul` ns; `text` is the whole duration, for the messages.
fn to_ns(text: &str, num: &str, mul: u64) -> Result<u64, String> {
    let too_long = || {
        format!(
            "{text:?} is too long: a duration may be at most {} ns ({} s, the longest run)",
            Dist::MAX_NS,
            Dist::MAX_NS / 1_000_000_000
        )
    };
    let v: u64 = num.trim().parse().map_err(|e: std::num::ParseIntError| {
        if *e.kind() == std::num::IntErrorKind::PosOverflow {
            too_long()
        } else {
            format!("{text:?} is not a duration (e.g. 500ns, 3us, 10ms)")
        }
    })?;
    v.checked_mul(mul).ok_or_else(too_long)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn dist_parse() {
        assert_eq!(Dist::parse("3us").unwrap(), Dist::Fixed { ns: 3000 });
        assert_eq!(
            Dist::parse("uniform:0-10ms").unwrap(),
            Dist::Uniform {
                lo: 0,
                hi: 10_000_000
            }
        );
        assert_eq!(Dist::parse("exp:5us").unwrap(), Dist::Exp { mean: 5000 });
        assert!(Dist::parse("gauss:1").is_err());
        assert!(Dist::parse("uniform:5-1").is_err());
    }

    #[test]
    fn a_uniform_range_s_last_unit_applies_to_both_ends() {
        // Issue 16: `uniform:5-10ms` meant 5 ns to 10 ms.
        let u = |lo, hi| Dist::Uniform { lo, hi };
        assert_eq!(
            Dist::parse("uniform:5-10ms").unwrap(),
            u(5_000_000, 10_000_000)
        );
        assert_eq!(
            Dist::parse("uniform:1-2s").unwrap(),
            u(1_000_000_000, 2_000_000_000)
        );
        assert_eq!(
            Dist::parse("uniform:5us-10ms").unwrap(),
            u(5_000, 10_000_000)
        );
        assert_eq!(Dist::parse("uniform:5ns-10ms").unwrap(), u(5, 10_000_000));
        assert_eq!(
            Dist::parse("uniform: 5 - 10 ms").unwrap(),
            u(5_000_000, 10_000_000)
        );
        assert_eq!(Dist::parse("uniform:5-10").unwrap(), u(5, 10));
        assert_eq!(Dist::parse("uniform:0-10ms").unwrap(), u(0, 10_000_000));
        // Display writes ns on both ends, which reads back the same.
        let d = u(5, 10_000_000);
        assert_eq!(Dist::parse(&d.to_string()).unwrap(), d);
    }

    #[test]
    fn dist_values_are_bounded_by_the_run_cap() {
        // Issue 16: fixed:u64::MAX wrapped the clock; uniform:0-u64::MAX sampled 0.
        let max = Dist::MAX_NS;
        assert_eq!(max, 4 * 3600 * 1_000_000_000);
        assert_eq!(
            Dist::parse(&format!("fixed:{max}")).unwrap(),
            Dist::Fixed { ns: max }
        );
        assert_eq!(Dist::parse("4h").ok(), None::<Dist>);
        assert_eq!(Dist::parse("14400s").unwrap(), Dist::Fixed { ns: max });
        for text in [
            format!("fixed:{}", max + 1),
            "fixed:18446744073709551615ns".to_string(),
            "uniform:0-18446744073709551615ns".to_string(),
            "exp:14401s".to_string(),
            "99999999999999999999s".to_string(),
        ] {
            let err = Dist::parse(&text).unwrap_err();
            assert!(
                err.contains("14400 s") && err.contains("at most"),
                "{text}: {err}"
            );
        }
        // Deserialised values (workload JSON, links) are held to the same bound.
        let json = format!(r#"{{"kind":"fixed","ns":{}}}"#, max + 1);
        let err = serde_json::from_str::<Dist>(&json).unwrap_err().to_string();
        assert!(err.contains("at most"), "{err}");
        let ok: Dist = serde_json::from_str(r#"{"kind":"uniform","lo":1,"hi":2}"#).unwrap();
        assert_eq!(ok, Dist::Uniform { lo: 1, hi: 2 });
        let err = serde_json::from_str::<Dist>(r#"{"kind":"uniform","lo":3,"hi":2}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("LO"), "{err}");
    }
}
