//! The seed patches, sched features, and the `RELEASE[+PATCH...][-PATCH...]` syntax.
//!
//! | patch | seed | what it changes |
//! |---|---|---|
//! | `cluster` | 01 v10 1/3-3/3 (merged v6.7) | SD_CLUSTER, `cpus_share_resources()`, cluster-first scan, prev/recent fallback |
//! | `cluster-scan` | 01 v10 1/3-2/3 | as `cluster` without 3/3's fallback (prev/recent outside the cluster are forgotten) |
//! | `no-smt-idle-cores` | 02, c8987ae5af79 (merged v5.13) | `test_idle_cores()` only on SMT machines |
//! | `ttwu-l2c` | 03 RFC v3 (not merged) | `ttwu_queue_cond()` tests `cpus_share_l2c()` |
//! | `cookie-fastpath` | 04 (not merged) | core-cookie checks in the fast paths of `select_idle_sibling()` |

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::release::{Release, ReleaseError};

/// One seed patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Patch {
    /// Seed 01 in full.
    Cluster,
    /// Seed 01 1/3 and 2/3 only.
    ClusterScan,
    /// Seed 02.
    NoSmtIdleCores,
    /// Seed 03.
    TtwuL2c,
    /// Seed 04.
    CookieFastpath,
}

impl Patch {
    pub const ALL: [Patch; 5] = [
        Patch::Cluster,
        Patch::ClusterScan,
        Patch::NoSmtIdleCores,
        Patch::TtwuL2c,
        Patch::CookieFastpath,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Patch::Cluster => "cluster",
            Patch::ClusterScan => "cluster-scan",
            Patch::NoSmtIdleCores => "no-smt-idle-cores",
            Patch::TtwuL2c => "ttwu-l2c",
            Patch::CookieFastpath => "cookie-fastpath",
        }
    }

    pub fn summary(self) -> &'static str {
        match self {
            Patch::Cluster => "seed 01 v10: scan the cluster before the LLC, prev/recent as fallback (merged in 6.7)",
            Patch::ClusterScan => "seed 01 v10 1/3+2/3: cluster-first scan without 3/3's prev/recent fallback",
            Patch::NoSmtIdleCores => "seed 02: read has_idle_cores only on SMT machines (merged in 5.13)",
            Patch::TtwuL2c => "seed 03 RFC: queue remote wake-ups by IPI unless waker and target share an L2",
            Patch::CookieFastpath => "seed 04: core-scheduling cookie checks in select_idle_sibling()'s fast paths",
        }
    }

    /// The release that merged it, if any.
    pub fn merged_in(self) -> Option<Release> {
        match self {
            Patch::Cluster => Some(Release::new(6, 7)),
            Patch::NoSmtIdleCores => Some(Release::new(5, 13)),
            _ => None,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl FromStr for Patch {
    type Err = PatchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Patch::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| PatchError::UnknownPatch(s.to_string()))
    }
}

/// Sched features (kernel/sched/features.h) that the wake-up path reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SchedFeatures {
    pub sis_util: bool,
    pub sis_prop: bool,
    pub ttwu_queue: bool,
    pub wa_idle: bool,
    pub wa_weight: bool,
    pub wa_bias: bool,
}

impl SchedFeatures {
    /// The defaults of a release: SIS_UTIL from 6.0 (SIS_PROP off from then, removed in
    /// 6.7); before 6.0 SIS_PROP on and no SIS_UTIL.
    pub fn defaults(release: Release) -> Self {
        let util = release >= Release::new(6, 0);
        SchedFeatures {
            sis_util: util,
            sis_prop: !util,
            ttwu_queue: true,
            wa_idle: true,
            wa_weight: true,
            wa_bias: true,
        }
    }

    const NAMES: [&'static str; 6] = [
        "SIS_UTIL",
        "SIS_PROP",
        "TTWU_QUEUE",
        "WA_IDLE",
        "WA_WEIGHT",
        "WA_BIAS",
    ];

    fn slot(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "SIS_UTIL" => &mut self.sis_util,
            "SIS_PROP" => &mut self.sis_prop,
            "TTWU_QUEUE" => &mut self.ttwu_queue,
            "WA_IDLE" => &mut self.wa_idle,
            "WA_WEIGHT" => &mut self.wa_weight,
            "WA_BIAS" => &mut self.wa_bias,
            _ => return None,
        })
    }

    /// Applies `NAME` / `NO_NAME` as written to /sys/kernel/debug/sched/features.
    pub fn set(&mut self, release: Release, word: &str) -> Result<(), PatchError> {
        let (name, on) = match word.strip_prefix("NO_") {
            Some(n) => (n, false),
            None => (word, true),
        };
        if name == "SIS_UTIL" && release < Release::new(6, 0) {
            return Err(PatchError::FeatureAbsent {
                feature: name.to_string(),
                release,
                why: "SIS_UTIL arrived in 6.0",
            });
        }
        if name == "SIS_PROP" && release >= Release::new(6, 7) {
            return Err(PatchError::FeatureAbsent {
                feature: name.to_string(),
                release,
                why: "SIS_PROP was removed in 6.7 (984ffb6a4366)",
            });
        }
        match self.slot(name) {
            Some(s) => {
                *s = on;
                Ok(())
            }
            None => Err(PatchError::UnknownFeature {
                name: word.to_string(),
                known: Self::NAMES.join(", "),
            }),
        }
    }
}

/// A kernel release plus patches applied or reverted, plus sched features.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PatchSet {
    pub release: Release,
    patches: u8,
    pub features: SchedFeatures,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PatchError {
    #[error(transparent)]
    Release(#[from] ReleaseError),
    #[error("unknown patch {0:?}; known patches: cluster, cluster-scan, no-smt-idle-cores, ttwu-l2c, cookie-fastpath{hint}", hint = crate::near::did_you_mean(.0, Patch::ALL.map(Patch::name)))]
    UnknownPatch(String),
    #[error("cannot read patch set {0:?}: write RELEASE[+PATCH...][-PATCH...], e.g. 6.6+cluster or 6.8-cluster")]
    Syntax(String),
    #[error("`cluster` and `cluster-scan` are two versions of the same series; pick one")]
    ClusterConflict,
    #[error("unknown sched feature {name:?}; known: {known}{}", crate::near::did_you_mean(name, known.split(", ")))]
    UnknownFeature { name: String, known: String },
    #[error("sched feature {feature} does not exist in {release}: {why}")]
    FeatureAbsent {
        feature: String,
        release: Release,
        why: &'static str,
    },
}

impl PatchSet {
    /// A release with the patches merged by then, and its default features.
    pub fn release(release: Release) -> Self {
        let patches = Patch::ALL
            .into_iter()
            .filter(|p| p.merged_in().is_some_and(|r| r <= release))
            .fold(0, |acc, p| acc | p.bit());
        PatchSet {
            release,
            patches,
            features: SchedFeatures::defaults(release),
        }
    }

    pub fn has(&self, p: Patch) -> bool {
        self.patches & p.bit() != 0
    }

    pub fn with(mut self, p: Patch) -> Result<Self, PatchError> {
        let other = match p {
            Patch::Cluster => Some(Patch::ClusterScan),
            Patch::ClusterScan => Some(Patch::Cluster),
            _ => None,
        };
        if let Some(o) = other {
            // `6.8+cluster-scan` means: take merged seed 01 out and put 1/3+2/3 in.
            if self.has(o) && o.merged_in().is_none_or(|r| r > self.release) {
                return Err(PatchError::ClusterConflict);
            }
            self.patches &= !o.bit();
        }
        self.patches |= p.bit();
        Ok(self)
    }

    pub fn without(mut self, p: Patch) -> Self {
        self.patches &= !p.bit();
        self
    }

    pub fn patches(&self) -> impl Iterator<Item = Patch> + '_ {
        Patch::ALL.into_iter().filter(|p| self.has(*p))
    }

    /// Seed 01 1/3 is in: SD_CLUSTER, sd_share_id, sched_cluster_active.
    pub fn has_cluster_topology(&self) -> bool {
        self.has(Patch::Cluster) || self.has(Patch::ClusterScan)
    }
}

impl fmt::Display for PatchSet {
    /// The shortest spelling relative to the release's merged patches.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.release)?;
        let base = PatchSet::release(self.release);
        for p in Patch::ALL {
            match (base.has(p), self.has(p)) {
                (false, true) => write!(f, "+{}", p.name())?,
                (true, false) => write!(f, "-{}", p.name())?,
                _ => {}
            }
        }
        Ok(())
    }
}

impl FromStr for PatchSet {
    type Err = PatchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let end = s.find(['+', '-']).unwrap_or(s.len());
        let release: Release = s[..end].parse()?;
        let mut set = PatchSet::release(release);
        let mut rest = &s[end..];
        while !rest.is_empty() {
            let sign = rest.as_bytes()[0];
            rest = &rest[1..];
            // Patch names contain '-', so the next op starts at "+x" or "-x" where x
            // begins a known name; split greedily on the longest known name.
            let name = Patch::ALL
                .into_iter()
                .map(|p| p.name())
                .filter(|n| {
                    rest.starts_with(n)
                        && (rest.len() == n.len()
                            || matches!(rest.as_bytes()[n.len()], b'+' | b'-'))
                })
                .max_by_key(|n| n.len())
                .ok_or_else(|| {
                    let word: String = rest.chars().take_while(|c| *c != '+').collect();
                    if word.is_empty() {
                        PatchError::Syntax(s.to_string())
                    } else {
                        PatchError::UnknownPatch(word)
                    }
                })?;
            let p: Patch = name.parse()?;
            set = match sign {
                b'+' => set.with(p)?,
                _ => set.without(p),
            };
            rest = &rest[name.len()..];
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn releases_include_merged_patches() {
        let p: PatchSet = "6.6".parse().unwrap();
        assert!(!p.has(Patch::Cluster));
        assert!(p.has(Patch::NoSmtIdleCores));
        let p: PatchSet = "6.8".parse().unwrap();
        assert!(p.has(Patch::Cluster));
        let p: PatchSet = "5.12".parse().unwrap();
        assert!(!p.has(Patch::NoSmtIdleCores));
        assert!(p.features.sis_prop && !p.features.sis_util);
    }

    #[test]
    fn plus_and_minus_parse() {
        let p: PatchSet = "6.6+cluster".parse().unwrap();
        assert!(p.has(Patch::Cluster));
        let p: PatchSet = "6.8-cluster".parse().unwrap();
        assert!(!p.has(Patch::Cluster) && !p.has_cluster_topology());
        let p: PatchSet = "6.8+ttwu-l2c+cookie-fastpath".parse().unwrap();
        assert!(p.has(Patch::TtwuL2c) && p.has(Patch::CookieFastpath) && p.has(Patch::Cluster));
        let p: PatchSet = "6.6+cluster-scan".parse().unwrap();
        assert!(p.has(Patch::ClusterScan) && !p.has(Patch::Cluster));
        let p: PatchSet = "6.8+cluster-scan".parse().unwrap();
        assert!(p.has(Patch::ClusterScan) && !p.has(Patch::Cluster));
        let p: PatchSet = "6.6-no-smt-idle-cores".parse().unwrap();
        assert!(!p.has(Patch::NoSmtIdleCores));
        assert_eq!(p.to_string(), "6.6-no-smt-idle-cores");
        assert_eq!(
            "6.6+cluster".parse::<PatchSet>().unwrap().to_string(),
            "6.6+cluster"
        );
    }

    #[test]
    fn bad_sets_are_explained() {
        assert!(matches!(
            "6.6+clusters".parse::<PatchSet>(),
            Err(PatchError::UnknownPatch(_))
        ));
        let e = "6.6+clutser".parse::<PatchSet>().unwrap_err().to_string();
        assert!(e.ends_with("cookie-fastpath; did you mean cluster?"), "{e}");
        let e = "6.6+fio".parse::<PatchSet>().unwrap_err().to_string();
        assert!(e.ends_with("cookie-fastpath"), "{e}");

        assert!(matches!(
            "6.6+".parse::<PatchSet>(),
            Err(PatchError::Syntax(_))
        ));
        assert!(matches!(
            "6.6+cluster+cluster-scan".parse::<PatchSet>(),
            Err(PatchError::ClusterConflict)
        ));
        assert!(matches!(
            "7.0".parse::<PatchSet>(),
            Err(PatchError::Release(_))
        ));
        let mut f = SchedFeatures::defaults(Release::new(6, 8));
        assert!(f.set(Release::new(6, 8), "SIS_PROP").is_err());
        f.set(Release::new(6, 8), "NO_SIS_UTIL").unwrap();
        assert!(!f.sis_util);
        assert!(f.set(Release::new(6, 8), "FOO").is_err());
        let e = f
            .set(Release::new(6, 8), "SIS_UTL")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("; did you mean SIS_UTIL?"), "{e}");
    }
}
