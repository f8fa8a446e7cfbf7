//! Duration distributions of workload ops: what a `Run` or `Sleep` samples, how
//! the command line and scenarios write one (`fixed:N`, `uniform:A-B`, `exp:MEAN`).

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// A duration distribution, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
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

impl Dist {
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
    /// `ns`/`us`/`ms`/`s` suffix (default ns).
    pub fn parse(text: &str) -> Result<Dist, String> {
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
                let (lo, hi) = (parse_ns(a)?, parse_ns(b)?);
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
    let t = text.trim();
    let (num, mul) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1_000)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1_000_000)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1_000_000_000)
    } else {
        (t, 1)
    };
    let v: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 500ns, 3us, 10ms)"))?;
    v.checked_mul(mul)
        .ok_or_else(|| format!("{text:?} is too long"))
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
}
