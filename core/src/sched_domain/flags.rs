//! Sched-domain flags (include/linux/sched/sd_flags.h).
//!
//! Bits are kept in v6.8 order. Older releases lacked some flags (SD_CLUSTER before
//! 6.7, SD_ASYM_CPUCAPACITY_FULL before 5.14) but only ever inserted new ones, so the
//! printing order of the names is the same in every modelled release.

use serde::{Serialize, Serializer};

use crate::release::Release;

/// A set of `SD_*` flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SdFlags(pub u32);

/// `SDF_SHARED_CHILD`: if set on a domain, set on all its children.
const META_SHARED_CHILD: u8 = 1;
/// `SDF_SHARED_PARENT`: if set on a domain, set on all its parents.
const META_SHARED_PARENT: u8 = 2;
/// `SDF_NEEDS_GROUPS`: only meaningful with at least two groups.
const META_NEEDS_GROUPS: u8 = 4;

struct FlagInfo {
    name: &'static str,
    meta: u8,
}

const FLAGS: [FlagInfo; 15] = [
    FlagInfo {
        name: "SD_BALANCE_NEWIDLE",
        meta: META_SHARED_CHILD | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_BALANCE_EXEC",
        meta: META_SHARED_CHILD | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_BALANCE_FORK",
        meta: META_SHARED_CHILD | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_BALANCE_WAKE",
        meta: META_SHARED_CHILD | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_WAKE_AFFINE",
        meta: META_SHARED_CHILD,
    },
    FlagInfo {
        name: "SD_ASYM_CPUCAPACITY",
        meta: META_SHARED_PARENT | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_ASYM_CPUCAPACITY_FULL",
        meta: META_SHARED_PARENT | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_SHARE_CPUCAPACITY",
        meta: META_SHARED_CHILD | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_CLUSTER",
        meta: META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_SHARE_PKG_RESOURCES",
        meta: META_SHARED_CHILD | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_SERIALIZE",
        meta: META_SHARED_PARENT | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_ASYM_PACKING",
        meta: META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_PREFER_SIBLING",
        meta: META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_OVERLAP",
        meta: META_SHARED_PARENT | META_NEEDS_GROUPS,
    },
    FlagInfo {
        name: "SD_NUMA",
        meta: META_SHARED_PARENT | META_NEEDS_GROUPS,
    },
];

impl SdFlags {
    pub const BALANCE_NEWIDLE: SdFlags = SdFlags(1 << 0);
    pub const BALANCE_EXEC: SdFlags = SdFlags(1 << 1);
    pub const BALANCE_FORK: SdFlags = SdFlags(1 << 2);
    pub const BALANCE_WAKE: SdFlags = SdFlags(1 << 3);
    pub const WAKE_AFFINE: SdFlags = SdFlags(1 << 4);
    pub const ASYM_CPUCAPACITY: SdFlags = SdFlags(1 << 5);
    pub const ASYM_CPUCAPACITY_FULL: SdFlags = SdFlags(1 << 6);
    pub const SHARE_CPUCAPACITY: SdFlags = SdFlags(1 << 7);
    pub const CLUSTER: SdFlags = SdFlags(1 << 8);
    /// SD_SHARE_PKG_RESOURCES, renamed SD_SHARE_LLC in v6.9.
    pub const SHARE_LLC: SdFlags = SdFlags(1 << 9);
    pub const SERIALIZE: SdFlags = SdFlags(1 << 10);
    pub const ASYM_PACKING: SdFlags = SdFlags(1 << 11);
    pub const PREFER_SIBLING: SdFlags = SdFlags(1 << 12);
    pub const OVERLAP: SdFlags = SdFlags(1 << 13);
    pub const NUMA: SdFlags = SdFlags(1 << 14);

    pub const EMPTY: SdFlags = SdFlags(0);

    /// `SD_DEGENERATE_GROUPS_MASK`: every flag with SDF_NEEDS_GROUPS.
    pub fn degenerate_groups_mask() -> SdFlags {
        Self::with_meta(META_NEEDS_GROUPS)
    }

    /// `SD_SHARED_CHILD` flags.
    pub fn shared_child_mask() -> SdFlags {
        Self::with_meta(META_SHARED_CHILD)
    }

    fn with_meta(meta: u8) -> SdFlags {
        SdFlags(
            FLAGS
                .iter()
                .enumerate()
                .filter(|(_, f)| f.meta & meta != 0)
                .fold(0, |acc, (i, _)| acc | (1 << i)),
        )
    }

    #[inline]
    pub fn contains(self, other: SdFlags) -> bool {
        self.0 & other.0 == other.0
    }

    #[inline]
    pub fn intersects(self, other: SdFlags) -> bool {
        self.0 & other.0 != 0
    }

    #[inline]
    pub fn insert(&mut self, other: SdFlags) {
        self.0 |= other.0;
    }

    #[inline]
    pub fn remove(&mut self, other: SdFlags) {
        self.0 &= !other.0;
    }

    #[inline]
    pub fn union(self, other: SdFlags) -> SdFlags {
        SdFlags(self.0 | other.0)
    }

    #[inline]
    pub fn without(self, other: SdFlags) -> SdFlags {
        SdFlags(self.0 & !other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The name the given release uses for a single-bit flag.
    fn name_of(bit: usize, release: Release) -> &'static str {
        if bit == 9 && release.has_sd_share_llc_name() {
            return "SD_SHARE_LLC";
        }
        FLAGS[bit].name
    }

    /// The set flags' names in bit order, as the release prints them.
    pub fn names(self, release: Release) -> Vec<&'static str> {
        (0..FLAGS.len())
            .filter(|&i| self.0 & (1 << i) != 0)
            .map(|i| Self::name_of(i, release))
            .collect()
    }

    /// Single flags set here, with whether they are SHARED_CHILD / SHARED_PARENT, for
    /// sched_domain_debug_one()'s consistency checks.
    pub(crate) fn each_with_meta(self) -> impl Iterator<Item = (SdFlags, bool, bool, usize)> {
        (0..FLAGS.len())
            .filter(move |&i| self.0 & (1 << i) != 0)
            .map(|i| {
                (
                    SdFlags(1 << i),
                    FLAGS[i].meta & META_SHARED_CHILD != 0,
                    FLAGS[i].meta & META_SHARED_PARENT != 0,
                    i,
                )
            })
    }

    pub(crate) fn bit_name(bit: usize, release: Release) -> &'static str {
        Self::name_of(bit, release)
    }
}

impl Serialize for SdFlags {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Serialised with v6.8 names; a release-specific rendering is in `format`.
        s.collect_seq(self.names(Release::DEFAULT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn degenerate_mask_is_everything_but_wake_affine() {
        let all = SdFlags((1 << FLAGS.len()) - 1);
        assert_eq!(
            SdFlags::degenerate_groups_mask(),
            all.without(SdFlags::WAKE_AFFINE)
        );
    }

    #[test]
    fn share_llc_renamed_in_6_9() {
        let f = SdFlags::SHARE_LLC;
        assert_eq!(f.names(Release::new(6, 8)), vec!["SD_SHARE_PKG_RESOURCES"]);
        assert_eq!(f.names(Release::new(6, 9)), vec!["SD_SHARE_LLC"]);
    }
}
