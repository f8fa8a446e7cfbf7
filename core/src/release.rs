//! Mainline kernel releases schedlab models, and what changed in each that the
//! sched-domain code can see.
//!
//! ```text
//!  5.12 ── 5.13 ── ... ── 5.16 ── ... ── 6.0 ── ... ── 6.6 ── 6.7 ── ... ── 6.9 ── ... ── 6.12
//!          │              │              │             │      │              │
//!          │              │              │             │      │              └ SD_SHARE_PKG_RESOURCES → SD_SHARE_LLC
//!          │              │              │             │      └ SD_CLUSTER, DIE → PKG, sched_cluster_active (seed 01)
//!          │              │              │             └ group flags aligned on degeneration; CLS on hybrid x86
//!          │              │              └ arm64 cpu_clustergroup_mask limited to the coregroup;
//!          │              │                device-tree cpu-map sockets and cluster ids
//!          │              │                (arm64 MC widened to the cluster: already 5.18)
//!          │              └ CLS level (CONFIG_SCHED_CLUSTER); SD_ASYM_CPUCAPACITY_FULL from 5.14
//!          └ NUMA diameter > 2 group fix, sched/ debugfs, sched_verbose, !SMT idle-core gate (seed 02)
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A mainline release `major.minor`: its `.0` tag, not a stable tree (5.12.9, for
/// one, has fixes backported from 5.13, such as `set_idle_cores(target, false)` in
/// `select_idle_cpu()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Release {
    pub major: u8,
    pub minor: u8,
}

impl Release {
    pub const fn new(major: u8, minor: u8) -> Self {
        Release { major, minor }
    }

    pub const OLDEST: Release = Release::new(5, 12);
    pub const NEWEST: Release = Release::new(6, 12);
    /// The release the pseudocode spec describes.
    pub const DEFAULT: Release = Release::new(6, 8);

    /// Every modelled release, oldest first.
    pub fn all() -> Vec<Release> {
        let mut v: Vec<Release> = (12..=19).map(|m| Release::new(5, m)).collect();
        v.extend((0..=12).map(|m| Release::new(6, m)));
        v
    }

    /// 585b6d2723dc "sched/topology: fix the issue groups don't span domain->span for
    /// NUMA diameter > 2" (v5.13).
    pub fn has_numa_diameter_fix(self) -> bool {
        self >= Release::new(5, 13)
    }

    /// 0fb3978b0aac "sched/numa: Fix NUMA topology for systems with CPU-less nodes"
    /// (Huang Ying, v5.18): `sched_init_numa()` collects the distances, builds the node
    /// masks and checks symmetry over the nodes with CPUs only (`for_each_cpu_node_but()`
    /// over N_CPU, topology.c v6.8:1775-1779, 1857-1858, 1921-1930), and is run again
    /// when a node's first CPU comes online or its last goes (`sched_update_numa()`).
    /// Before, every node id (`for (i = 0; i < nr_node_ids; i++)`, v5.12.9:1649-1650):
    /// a memory-only node's distances are levels too.
    pub fn numa_levels_over_cpu_nodes(self) -> bool {
        self >= Release::new(5, 18)
    }

    /// Sched-domain tunables moved from /proc/sys/kernel/sched_domain to
    /// /sys/kernel/debug/sched/domains in v5.13.
    pub fn has_debugfs_domains(self) -> bool {
        self >= Release::new(5, 13)
    }

    /// Since v5.13 sched_domain_debug() prints only with the `sched_verbose` boot
    /// parameter (before: `sched_debug`).
    pub fn has_sched_verbose(self) -> bool {
        self >= Release::new(5, 13)
    }

    /// The CLS level (CONFIG_SCHED_CLUSTER), v5.16.
    pub fn has_cls_level(self) -> bool {
        self >= Release::new(5, 16)
    }

    /// SD_ASYM_CPUCAPACITY_FULL, v5.14 (c744dc4ab58d, "sched/topology: Rework CPU
    /// capacity asymmetry detection").
    pub fn has_asym_cpucapacity_full(self) -> bool {
        self >= Release::new(5, 14)
    }

    /// "arch_topology: Limit span of cpu_clustergroup_mask()" (v6.0): CLS shrinks to the
    /// SMT mask when the coregroup lies within the cluster.
    pub fn has_arm64_cluster_limit(self) -> bool {
        self >= Release::new(6, 0)
    }

    /// "topology: make core_mask include at least cluster_siblings" (Darren Hart,
    /// driver-core-5.18-rc5, so v5.18; Cc stable 5.16.x): with CONFIG_SCHED_CLUSTER, an
    /// arm64 `cpu_coregroup_mask()` that lies within the cluster widens to it
    /// (arch_topology.c v6.8:742-750).
    pub fn arm64_coregroup_covers_cluster(self) -> bool {
        self >= Release::new(5, 18)
    }

    /// A device tree's `/cpus/cpu-map` as Sudeep Holla's series (driver-core-6.0-rc1)
    /// reads it: `parse_socket()` for `socketN` nodes ("arch_topology: Add support for
    /// parsing sockets in /cpu-map"), each core with its cluster's id ("… Set cluster
    /// identifier in each core/thread from /cpu-map"), package 0 for a map without
    /// sockets ("… Don't set cluster identifier as physical package identifier");
    /// arch_topology.c v6.8:583-675. Before: `parse_cluster(map, 0)` alone, each leaf
    /// cluster a package (v5.12.9:376-442). See `sched_domain::as_the_kernel_reads_it()`.
    pub fn reads_dt_cpu_map_sockets(self) -> bool {
        self >= Release::new(6, 0)
    }

    /// arm64 `cpu_coregroup_mask()` narrows to the LLC when `last_level_cache_is_valid()`
    /// (v6.0, "arch_topology: Use the last level cache information from the
    /// cacheinfo"); before, only when `llc_id != -1`, which only a PPTT cache entry
    /// sets (ACPI), so a firmware without cache information leaves MC at the package.
    pub fn arm64_llc_from_cacheinfo(self) -> bool {
        self >= Release::new(6, 0)
    }

    /// x86 skips the CLS level on hybrid parts until "sched/x86: Add cluster topology to
    /// hybrid CPU" (v6.6).
    pub fn x86_cls_on_hybrid(self) -> bool {
        self >= Release::new(6, 6)
    }

    /// 4efcc8bc7e08 "sched/topology: Align group flags when removing degenerate domain"
    /// (v6.6). Before it, only SD_SHARE_CPUCAPACITY was OR-ed into the first group.
    pub fn aligns_group_flags(self) -> bool {
        self >= Release::new(6, 6)
    }

    /// 995998ebdebd "x86/sched: Remove SD_ASYM_PACKING from the SMT domain flags" (v6.5).
    pub fn x86_smt_has_asym_packing(self) -> bool {
        self < Release::new(6, 5)
    }

    /// SD_CLUSTER, sched_cluster_active, sd_share_id and the DIE → PKG rename (v6.7,
    /// seed 01 1/3).
    pub fn has_sd_cluster(self) -> bool {
        self >= Release::new(6, 7)
    }

    /// WF_CURRENT_CPU: ab83f455f04d "sched: add WF_CURRENT_CPU and externise ttwu"
    /// (v6.6, for seccomp's synchronous user notifications); v6.5 has no such flag.
    pub fn has_wf_current_cpu(self) -> bool {
        self >= Release::new(6, 6)
    }

    /// /proc/schedstat's `SCHEDSTAT_VERSION` (kernel/sched/stats.c): 16 from v6.10
    /// ("sched/debug: Increase SCHEDSTAT_VERSION to 16", Ingo Molnar, March 2024,
    /// merged for v6.10: `enum cpu_idle_type` reordered, so the per-domain columns
    /// swap CPU_IDLE and __CPU_NOT_IDLE; the line layout is unchanged), 15 before.
    /// Version 17 (the split `lb_imbalance_*` fields) came after the modelled releases.
    pub fn schedstat_version(self) -> u32 {
        if self >= Release::new(6, 10) {
            16
        } else {
            15
        }
    }

    /// SD_SHARE_PKG_RESOURCES was renamed SD_SHARE_LLC in v6.9.
    pub fn has_sd_share_llc_name(self) -> bool {
        self >= Release::new(6, 9)
    }

    /// debugfs `level` file: "sched/debug: Dump domains' level" (Vitalii Bursov, with
    /// the relax_domain_level `>=` change, v6.9). v6.8's register_sd()
    /// (kernel/sched/debug.c v6.8:411-428) has no `level`; v6.12's has (debug.c
    /// v6.12.19:587). (`groups_flags`, which schedlab does not print, is in v6.8 and
    /// not in v6.5.)
    pub fn has_debugfs_level(self) -> bool {
        self >= Release::new(6, 9)
    }

    /// build_sched_domains()'s "root domain span: …" line ends with "(max
    /// cpu_capacity = N)" until "sched/topology: Remove max_cpu_capacity from
    /// root_domain" (Qais Yousef; posted after the 6.9 merge window, v6.10): v6.8
    /// topology.c:2532-2535 has it, v6.12.19 topology.c:2538-2539 has the span alone.
    pub fn has_rd_max_cpu_capacity(self) -> bool {
        self < Release::new(6, 10)
    }

    /// DELAY_DEQUEUE and DELAY_ZERO, on by default (kernel/sched/features.h v6.12.19
    /// 58-59): 152e11f6df29 "sched/fair: Implement delayed dequeue" (v6.12-rc1). A
    /// task that blocks while not eligible stays queued until its pick or its wake-up
    /// (fair.c v6.12.19 5534-5560, 5676-5690, 6983-7008; core.c 3737-3761).
    pub fn has_delay_dequeue(self) -> bool {
        self >= Release::new(6, 12)
    }

    /// PLACE_REL_DEADLINE, on by default (kernel/sched/features.h v6.12.19 15):
    /// 82e9d0456e06 "sched/fair: Avoid re-setting virtual deadline on 'migrations'"
    /// (v6.12-rc1). A dequeue that is not a sleep (the balancer's `detach_task()`,
    /// core scheduling's steal) keeps the deadline relative to the vruntime, and the
    /// next `place_entity()` restores it instead of starting a fresh slice (fair.c
    /// v6.12.19 5581-5584, 5368-5372).
    pub fn has_rel_deadline(self) -> bool {
        self >= Release::new(6, 12)
    }

    /// The top non-NUMA level's name: DIE until v6.6, PKG from v6.7.
    pub fn name_of_top_level(self) -> &'static str {
        if self.has_sd_cluster() {
            "PKG"
        } else {
            "DIE"
        }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl From<Release> for String {
    fn from(r: Release) -> String {
        r.to_string()
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ReleaseError {
    #[error("cannot read kernel release {0:?}: write it as MAJOR.MINOR, e.g. 6.8")]
    Syntax(String),
    #[error("kernel {0} is not modelled: schedlab covers {oldest} to {newest}", oldest = Release::OLDEST, newest = Release::NEWEST)]
    OutOfRange(Release),
}

impl FromStr for Release {
    type Err = ReleaseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().trim_start_matches('v');
        let mut parts = t.split('.');
        let major = parts.next().and_then(|p| p.parse::<u8>().ok());
        let minor = parts.next().and_then(|p| p.parse::<u8>().ok());
        // A stable suffix (6.8.12) is accepted and ignored: domain code does not change
        // within a stable series in ways schedlab models.
        let rest_ok = parts.all(|p| p.parse::<u16>().is_ok());
        match (major, minor, rest_ok) {
            (Some(major), Some(minor), true) => {
                let r = Release { major, minor };
                if r < Release::OLDEST || r > Release::NEWEST || (major == 5 && minor > 19) {
                    return Err(ReleaseError::OutOfRange(r));
                }
                Ok(r)
            }
            _ => Err(ReleaseError::Syntax(s.to_string())),
        }
    }
}

impl TryFrom<String> for Release {
    type Error = ReleaseError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn parses_and_rejects() {
        assert_eq!("6.8".parse::<Release>().unwrap(), Release::new(6, 8));
        assert_eq!("v5.13.4".parse::<Release>().unwrap(), Release::new(5, 13));
        assert!(matches!(
            "6.13".parse::<Release>(),
            Err(ReleaseError::OutOfRange(_))
        ));
        assert!(matches!(
            "5.11".parse::<Release>(),
            Err(ReleaseError::OutOfRange(_))
        ));
        assert!(matches!(
            "5.20".parse::<Release>(),
            Err(ReleaseError::OutOfRange(_))
        ));
        assert!(matches!(
            "six".parse::<Release>(),
            Err(ReleaseError::Syntax(_))
        ));
        assert_eq!(Release::all().len(), 21);
    }
}
