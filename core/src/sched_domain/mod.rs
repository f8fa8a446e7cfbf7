//! Sched domains as `build_sched_domains()` (kernel/sched/topology.c) builds them.
//!
//! ```text
//!  CPU0 (kunpeng920-6426, 6.8, after degeneration; SLIT 10/16/32/33 from node 0)
//!   domain-4  NUMA  0-127      groups {0-95} {32-127}    overlapping NUMA groups
//!   domain-3  NUMA  0-95       groups {0-63} {64-95}
//!   domain-2  NUMA  0-63       groups {0-31} {32-63}
//!   domain-1  MC    0-31       groups {0-3} {4-7} ... {28-31}     <- sd_llc
//!   domain-0  CLS   0-3        groups {0} {1} {2} {3}             <- SD_CLUSTER: sd_share_id
//! ```
//!
//! The build runs in the kernel's phases: topology levels for the arch
//! (`levels.rs`), per-CPU domains bottom-up (`build_sched_domain()` / `sd_init()`),
//! groups (`build_sched_groups()` / `build_overlap_sched_groups()`), group capacity
//! (`init_sched_groups_capacity()`, CPUs in descending order), then
//! `cpu_attach_domain()` per CPU (degeneration) and `update_top_cache_domain()`.
//! Shared kernel objects (sched_group, sched_group_capacity) live in arenas so that
//! their sharing between CPUs, and the side effects of degeneration on them, are the
//! kernel's. The result shares them too: a domain's [`Groups`] is a ring stored once
//! and the place where this domain enters it (`sd->groups`), so a 4096-CPU machine
//! holds one copy of each group rather than one per CPU.

mod build;
mod firmware;
mod flags;
pub mod format;
mod levels;

use std::sync::Arc;

use serde::{Serialize, Serializer};
use thiserror::Error;

use crate::cpumask::{CpuId, CpuMask};
use crate::release::Release;
use crate::topology::Machine;

pub use build::build_sched_domains;
pub use firmware::as_the_kernel_reads_it;
pub use flags::SdFlags;

/// What `build_sched_domains()` is asked to build.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildConfig {
    pub release: Release,
    /// The `relax_domain_level=` boot parameter; `None` = -1. Any value is taken, as
    /// `setup_relax_domain_level()` takes any `kstrtoint()` (topology.c v6.8:1447-1457):
    /// a negative one is no request, a level past the highest domain's changes nothing.
    /// (A cpuset's `sched_relax_domain_level` refuses values past the domains' levels.)
    pub relax_domain_level: Option<i32>,
    /// CPUs that are offline (hotplugged out). They are left out of `cpu_map` and of
    /// every topology mask, as the arch code clears them on offline.
    pub offline: Option<CpuMask>,
    /// Seed 01 1/3 is applied: SD_CLUSTER, `sd_share_id`, `sched_cluster_active`.
    /// Defaults to whether the release merged it (6.7).
    pub sd_cluster: bool,
}

impl BuildConfig {
    pub fn new(release: Release) -> Self {
        BuildConfig {
            release,
            relax_domain_level: None,
            offline: None,
            sd_cluster: release.has_sd_cluster(),
        }
    }

    /// The domains a patch set's kernel builds.
    pub fn for_patches(patches: &crate::patch::PatchSet) -> Self {
        BuildConfig {
            sd_cluster: patches.has_cluster_topology(),
            ..BuildConfig::new(patches.release)
        }
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DomainError {
    /// `topology_span_sane()` failed: the kernel refuses to build domains.
    #[error("sched domain topology is broken at level {level}: CPU {a}'s span {span_a} and CPU {b}'s span {span_b} overlap without being equal (topology_span_sane() fails, the kernel attaches no domains)")]
    SpanInsane {
        level: String,
        a: u32,
        b: u32,
        span_a: String,
        span_b: String,
    },
    #[error("every CPU is offline: at least one CPU must stay online")]
    NoOnlineCpus,
    #[error("offline mask is for a {mask}-CPU machine but this one has {machine} CPUs")]
    OfflineMaskSize { mask: u32, machine: u32 },
}

/// A `struct sched_group` as one CPU's domain sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedGroup {
    /// `sg->sgc->id`: the CPU whose per-CPU sched_group_capacity the group uses.
    pub id: CpuId,
    #[serde(serialize_with = "ser_mask")]
    pub span: CpuMask,
    /// `group_balance_mask()`; equal to the span except for overlapping NUMA groups.
    #[serde(serialize_with = "ser_mask")]
    pub balance_mask: CpuMask,
    /// `sgc->capacity` after `init_sched_groups_capacity()`.
    pub capacity: u64,
    /// `sg->flags`: the child domain's flags (after degeneration side effects).
    pub flags: SdFlags,
    /// `sg->cores`: distinct SMT cores in the span.
    pub cores: u32,
    /// `sg->asym_prefer_cpu` on SD_ASYM_PACKING domains.
    pub asym_prefer_cpu: Option<CpuId>,
}

/// `sd->groups`: the circular list of a domain's groups, entered at the group that
/// holds the domain's CPU. The ring is stored once and shared by every domain that
/// walks it (`sg->ref` in the kernel), so iterating, indexing and comparing see the
/// domain's own order while memory stays O(groups) rather than O(CPUs × groups).
#[derive(Clone, Debug)]
pub struct Groups {
    ring: Arc<[SchedGroup]>,
    /// Index in `ring` of `sd->groups` (the group holding the domain's CPU).
    first: usize,
    /// `sd->groups` when it is this domain's own: an overlapping (NUMA) group, which
    /// the kernel allocates per domain, whose flags `cpu_attach_domain()` changed.
    /// The rest of the ring is still shared.
    own_first: Option<Arc<SchedGroup>>,
}

impl Groups {
    /// A domain entering `ring` at `first` (0 for a ring already in the domain's order).
    pub fn new(ring: Arc<[SchedGroup]>, first: usize) -> Self {
        assert!(
            first < ring.len().max(1),
            "a domain enters its ring at a group"
        );
        Groups {
            ring,
            first,
            own_first: None,
        }
    }

    /// A domain entering `ring` at `first`, whose first group is its own `own` (the
    /// ring's group there with other flags).
    pub fn with_own_first(ring: Arc<[SchedGroup]>, first: usize, own: Arc<SchedGroup>) -> Self {
        Groups {
            own_first: Some(own),
            ..Groups::new(ring, first)
        }
    }

    /// The number of groups round the ring (`sd->groups` back to itself).
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// `sd->groups`: the group holding the domain's CPU.
    pub fn first(&self) -> Option<&SchedGroup> {
        self.get(0)
    }

    /// The `i`th group from `sd->groups` along `sg->next`.
    pub fn get(&self, i: usize) -> Option<&SchedGroup> {
        match (&self.own_first, i) {
            (Some(own), 0) => Some(own),
            _ => (i < self.ring.len()).then(|| &self.ring[(self.first + i) % self.ring.len()]),
        }
    }

    /// The groups from `sd->groups` once round the ring (`do { … } while (sg != sd->groups)`).
    pub fn iter(&self) -> GroupsIter<'_> {
        self.into_iter()
    }

    /// The shared ring in its stored order and where this domain enters it: readers
    /// that derive something per group can do so once per ring and rotate. The
    /// domain's first group is [`Groups::own_first`] where that is set.
    pub fn ring(&self) -> (&[SchedGroup], usize) {
        (&self.ring, self.first)
    }

    /// The domain's own first group, which replaces `ring()[first]` for this domain.
    pub fn own_first(&self) -> Option<&SchedGroup> {
        self.own_first.as_deref()
    }

    /// Whether two domains share one ring (the kernel's same `sched_group` objects).
    pub fn shares_ring_with(&self, other: &Groups) -> bool {
        Arc::ptr_eq(&self.ring, &other.ring)
            && match (&self.own_first, &other.own_first) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

/// [`Groups::iter`]: once round the ring from `sd->groups`.
pub type GroupsIter<'a> = std::iter::Chain<
    std::option::IntoIter<&'a SchedGroup>,
    std::iter::Chain<std::slice::Iter<'a, SchedGroup>, std::slice::Iter<'a, SchedGroup>>,
>;

impl std::ops::Index<usize> for Groups {
    type Output = SchedGroup;
    fn index(&self, i: usize) -> &SchedGroup {
        self.get(i).expect("group index within the ring")
    }
}

impl<'a> IntoIterator for &'a Groups {
    type Item = &'a SchedGroup;
    type IntoIter = GroupsIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        let (head, tail) = self.ring.split_at(self.first.min(self.ring.len()));
        let mut rest = tail.iter().chain(head.iter());
        let own = self.own_first.as_deref();
        if own.is_some() {
            rest.next();
        }
        own.into_iter().chain(rest)
    }
}

impl PartialEq for Groups {
    fn eq(&self, other: &Groups) -> bool {
        self.len() == other.len() && self.into_iter().eq(other)
    }
}

impl Serialize for Groups {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self)
    }
}

/// A `struct sched_domain` of one CPU, after `cpu_attach_domain()`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedDomain {
    /// `sd->name`: SMT, CLS, MC, DIE/PKG, NODE, NUMA.
    pub name: &'static str,
    /// `sd->level`: the level as built, before degenerate levels were removed.
    pub level: u32,
    #[serde(serialize_with = "ser_mask")]
    pub span: CpuMask,
    pub span_weight: u32,
    pub flags: SdFlags,
    /// Groups in the kernel's circular-list order; the first holds this CPU.
    pub groups: Groups,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub min_interval: u32,
    pub max_interval: u32,
    pub busy_factor: u32,
    /// `sd->imb_numa_nr` (v5.18+, 0 before): how many tasks a NUMA domain lets run
    /// on the local node before load balancing evens nodes out (see
    /// `Builder::imb_numa_nr`).
    pub imb_numa_nr: u32,
    /// Index of the topology level (into [`SchedDomains::levels`]).
    pub tl: usize,
}

/// Identifies a `struct sched_domain_shared`: the per-CPU object of the first CPU of
/// the span at the level that published it (`sdd->sds` of `sd_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SharedId {
    pub tl: usize,
    pub cpu: CpuId,
}

/// One CPU's attached hierarchy and the per-CPU pointers `update_top_cache_domain()`
/// publishes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuDomains {
    pub cpu: CpuId,
    /// Bottom-up, after degeneration (`rq->sd` and its parents). Empty when the
    /// kernel attaches a NULL domain (single-CPU machine).
    pub domains: Vec<SchedDomain>,
    /// Index into `domains` of `sd_llc`.
    pub sd_llc: Option<usize>,
    pub sd_llc_id: CpuId,
    pub sd_llc_size: u32,
    pub sd_llc_shared: Option<SharedId>,
    /// `sd_share_id` (v6.7+): cluster id on cluster machines, else the LLC id. On older
    /// releases it is reported equal to `sd_llc_id`, which is what
    /// `cpus_share_resources()` would have meant.
    pub sd_share_id: CpuId,
    /// `sd_l2c_id` / `sd_l2c_size` from seed 03 (RFC, not merged): first CPU and weight
    /// of `topology_cluster_cpumask()`.
    pub sd_l2c_id: CpuId,
    pub sd_l2c_size: u32,
    /// Index of `sd_numa` (lowest SD_NUMA domain).
    pub sd_numa: Option<usize>,
    pub sd_asym_packing: Option<usize>,
    pub sd_asym_cpucapacity: Option<usize>,
}

impl CpuDomains {
    /// `per_cpu(sd_llc, cpu)`.
    pub fn llc(&self) -> Option<&SchedDomain> {
        self.sd_llc.map(|i| &self.domains[i])
    }

    /// `lowest_flag_domain(cpu, flag)`.
    pub fn lowest_flag_domain(&self, flag: SdFlags) -> Option<usize> {
        self.domains.iter().position(|d| d.flags.contains(flag))
    }
}

/// A topology level (`struct sched_domain_topology_level`) as built.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelInfo {
    pub name: &'static str,
    /// SDTL_OVERLAP (NUMA levels above NODE).
    pub overlap: bool,
    /// `tl->numa_level` for NODE/NUMA levels.
    pub numa_level: Option<usize>,
    /// `sched_domains_numa_distance[numa_level]`.
    pub numa_distance: Option<u8>,
}

/// The result of `build_sched_domains()` for the whole machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedDomains {
    pub machine: String,
    pub release: Release,
    #[serde(serialize_with = "ser_mask")]
    pub cpu_map: CpuMask,
    pub levels: Vec<LevelInfo>,
    /// Indexed by CPU; `None` for offline CPUs.
    pub cpus: Vec<Option<CpuDomains>>,
    /// `sched_smt_present`.
    pub sched_smt_present: bool,
    /// `sched_cluster_active` (v6.7+; always false before).
    pub sched_cluster_active: bool,
    /// `sched_asym_cpucapacity`.
    pub sched_asym_cpucapacity: bool,
    /// Lines the kernel prints while building (e.g. "BUG: arch topology borken").
    pub build_messages: Vec<String>,
    /// `rd->max_cpu_capacity` (before v6.10): the largest `arch_scale_cpu_capacity()`
    /// in `cpu_map`, which the "root domain span" line prints.
    pub max_cpu_capacity: u32,
}

impl SchedDomains {
    /// The CPU's domains; panics on an offline CPU (callers iterate `cpu_map`).
    pub fn cpu(&self, cpu: CpuId) -> &CpuDomains {
        self.cpus[cpu.idx()]
            .as_ref()
            .expect("domains are only asked of online CPUs")
    }

    pub fn try_cpu(&self, cpu: CpuId) -> Option<&CpuDomains> {
        self.cpus.get(cpu.idx()).and_then(|c| c.as_ref())
    }

    /// `cpus_share_cache(a, b)`.
    pub fn cpus_share_cache(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.cpu(a).sd_llc_id == self.cpu(b).sd_llc_id
    }

    /// `cpus_share_resources(a, b)` (v6.7+, seed 01 1/3).
    pub fn cpus_share_resources(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.cpu(a).sd_share_id == self.cpu(b).sd_share_id
    }

    /// `cpus_share_l2c(a, b)` (seed 03, RFC).
    pub fn cpus_share_l2c(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.cpu(a).sd_l2c_id == self.cpu(b).sd_l2c_id
    }

    /// Builds the domains of a machine with the given config (convenience).
    pub fn build(machine: &Machine, config: &BuildConfig) -> Result<SchedDomains, DomainError> {
        build_sched_domains(machine, config)
    }
}

fn ser_mask<S: Serializer>(m: &CpuMask, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&m.to_list())
}
