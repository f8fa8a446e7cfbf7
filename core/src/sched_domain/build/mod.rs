//! `build_sched_domains()` and the functions it calls, phase by phase.
//!
//! The files follow kernel/sched/topology.c's own families; each names the kernel
//! functions it mirrors:
//!
//! | file | phase | kernel functions |
//! |------|-------|------------------|
//! | `mod.rs` | entry, builder state | `build_sched_domains()` (checks, `sdd` arrays), `struct sched_domain` / `sched_group` / `sched_group_capacity` while building |
//! | `domains.rs` | step 2: per-CPU domains | the `build_sched_domain()` loop, `topology_span_sane()`, `sd_init()`, `set_domain_attribute()`, `asym_cpu_capacity_classify()`, `sd->imb_numa_nr` |
//! | `groups.rs` | step 3: groups | `get_group()`, `build_sched_groups()` |
//! | `overlap.rs` | step 3, NUMA levels | `build_overlap_sched_groups()`, `find_descended_sibling()`, `build_group_from_child_sched_domain()`, `init_overlap_sched_group()`, `build_balance_mask()` |
//! | `capacity.rs` | step 5: capacity | `init_sched_groups_capacity()`, `update_group_capacity()` (fair.c) |
//! | `attach.rs` | step 6: attach | `cpu_attach_domain()`, `sd_degenerate()`, `sd_parent_degenerate()`, `update_top_cache_domain()`, the static keys |

mod attach;
mod capacity;
mod domains;
mod groups;
mod overlap;

use crate::cpumask::{CpuId, CpuMask};
use crate::fxhash::FxHashMap;
use crate::topology::Machine;

use super::levels::{numa_distances, numa_warnings, topology_levels, Level, TopoMasks};
use super::{BuildConfig, DomainError, SchedDomains, SdFlags};

/// No group, ring or span id.
const NONE: u32 = u32::MAX;

/// SCHED_CAPACITY_SCALE.
const SCHED_CAPACITY_SCALE: u64 = 1024;

/// A `struct sched_domain` while building: `sdd->sd[cpu]` of one level.
#[derive(Clone, Debug)]
struct BuildSd {
    span: CpuMask,
    flags: SdFlags,
    level: u32,
    imbalance_pct: u32,
    cache_nice_tries: u32,
    min_interval: u32,
    max_interval: u32,
    busy_factor: u32,
    /// Id of `span` among this level's distinct spans (equal ids, equal spans).
    span_id: u32,
    /// `sd->groups`: a ring of `Builder::rings` and where this domain enters it.
    groups: GroupList,
}

/// `sd->groups` while building: ring `ring` of `Builder::rings`, entered at `first`.
/// Domains whose circular lists are rotations of one another share a ring, as the
/// kernel's CPUs share one `sg->next` ring of `get_group()` objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GroupList {
    ring: u32,
    first: u32,
}

impl GroupList {
    const UNBUILT: GroupList = GroupList {
        ring: NONE,
        first: 0,
    };
}

/// A `struct sched_group`. Non-overlapping groups are per-CPU objects shared by every
/// CPU whose domain includes them; overlapping (NUMA) ones are allocated per domain in
/// the kernel and stored once per content here (`overlap.rs`).
#[derive(Clone, Debug)]
struct Sg {
    span: CpuMask,
    flags: SdFlags,
    /// Key of the `struct sched_group_capacity`.
    sgc: (usize, u32),
    cores: u32,
    asym_prefer_cpu: Option<CpuId>,
}

/// A `struct sched_group_capacity` (`sdd->sgc[cpu]`); holds the balance mask. Its
/// `ref` is not kept: nothing here frees domains.
#[derive(Clone, Debug)]
struct Sgc {
    id: u32,
    capacity: u64,
    balance_mask: CpuMask,
}

struct Builder<'a> {
    m: &'a Machine,
    cfg: &'a BuildConfig,
    cpu_map: CpuMask,
    levels: Vec<Level>,
    numa_distance: Vec<u8>,
    /// `sdd[tl].sd[cpu]`; `None` where the CPU's hierarchy stopped below `tl`.
    sd: Vec<Vec<Option<BuildSd>>>,
    /// Per level, the distinct domain spans (`BuildSd::span_id`).
    span_ids: Vec<FxHashMap<CpuMask, u32>>,
    groups: Vec<Sg>,
    /// Non-overlapping sched_group per level and anchor CPU (`sdd->sg[cpu]`).
    sg_of: Vec<Vec<u32>>,
    /// Per level, each online CPU's `get_group()` anchor, once the domains are built.
    anchors: Vec<Vec<u32>>,
    /// The circular group lists (indices into `groups`), each stored once.
    rings: Vec<Vec<u32>>,
    /// Rings by content, first group the lowest index.
    ring_of: FxHashMap<Vec<u32>, u32>,
    /// Overlapping groups by what builds them (`build_overlap_sched_groups()`): level,
    /// whether from the sibling's child, that domain's `span_id` and flags.
    overlap_sg: FxHashMap<(u32, bool, u32, SdFlags), u32>,
    /// Per ring: `init_sched_groups_capacity()` has set its groups' cores (bit 0) and
    /// asym_prefer_cpu (bit 1); both depend on the group's span only.
    ring_init: Vec<u8>,
    /// `sg->cores` by group span.
    cores_of: FxHashMap<CpuMask, u32>,
    sgc: FxHashMap<(usize, u32), Sgc>,
    /// build_balance_mask() results, per level by group span.
    balance_masks: Vec<FxHashMap<CpuMask, CpuMask>>,
    messages: Vec<String>,
    /// The machine's sibling masks; `topo.smt` is `cpu_smt_mask()`.
    topo: TopoMasks,
    /// The distinct `arch_scale_cpu_capacity()` values of `cpu_map`.
    nr_capacities: usize,
}

/// Mirrors `build_sched_domains(cpu_map, attr)` followed by the attach of every CPU.
pub fn build_sched_domains(m: &Machine, cfg: &BuildConfig) -> Result<SchedDomains, DomainError> {
    // cpu_topology[] as the release reads the firmware (a device tree's cpu-map before
    // v6.0), and what it printed doing so, before sched_init_smp().
    let kernel_view = super::firmware::as_the_kernel_reads_it(m, cfg.release);
    let m: &Machine = &kernel_view;
    let n = m.nr_cpus();
    let mut cpu_map = CpuMask::full(n);
    if let Some(off) = &cfg.offline {
        if off.nr_cpu_ids() != n {
            return Err(DomainError::OfflineMaskSize {
                mask: off.nr_cpu_ids(),
                machine: n,
            });
        }
        cpu_map.andnot_assign(off);
    }
    if cpu_map.is_empty() {
        return Err(DomainError::NoOnlineCpus);
    }
    let topo = TopoMasks::new(m, &cpu_map);
    let levels = topology_levels(m, &topo, cfg, &cpu_map);
    let mut messages = super::firmware::firmware_messages(m, cfg.release);
    let numa_distance = if m.config.numa {
        // sched_init_numa() runs (sched_init_smp()) before the domains are built: its
        // warning comes first.
        messages.extend(numa_warnings(m, &cpu_map, cfg.release));
        numa_distances(m, &cpu_map, cfg.release)
    } else {
        Vec::new()
    };
    let n_levels = levels.len();
    let mut capacities: Vec<u32> = cpu_map.iter().map(|c| m.topo(c).capacity).collect();
    capacities.sort();
    capacities.dedup();
    let mut b = Builder {
        m,
        cfg,
        cpu_map,
        levels,
        numa_distance,
        sd: vec![vec![None; n as usize]; n_levels],
        span_ids: vec![FxHashMap::default(); n_levels],
        groups: Vec::new(),
        sg_of: vec![vec![NONE; n as usize]; n_levels],
        anchors: Vec::new(),
        rings: Vec::new(),
        ring_of: FxHashMap::default(),
        overlap_sg: FxHashMap::default(),
        ring_init: Vec::new(),
        cores_of: FxHashMap::default(),
        sgc: FxHashMap::default(),
        balance_masks: vec![FxHashMap::default(); n_levels],
        messages,
        topo,
        nr_capacities: capacities.len(),
    };
    b.build_domains()?;
    b.build_groups();
    b.init_capacity();
    Ok(b.attach_all())
}

impl Builder<'_> {
    fn online(&self) -> Vec<CpuId> {
        self.cpu_map.iter().collect()
    }

    fn sd_ref(&self, tl: usize, cpu: CpuId) -> Option<&BuildSd> {
        self.sd[tl][cpu.idx()].as_ref()
    }

    /// The child of `sdd[tl][cpu]` as built (before any degeneration): the same CPU's
    /// domain one level down.
    fn child_span(&self, tl: usize, cpu: CpuId) -> Option<&CpuMask> {
        if tl == 0 {
            return None;
        }
        self.sd_ref(tl - 1, cpu).map(|c| &c.span)
    }

    /// `sd->groups`: the group a domain's list enters its ring at.
    fn first_group(&self, list: GroupList) -> usize {
        self.rings[list.ring as usize][list.first as usize] as usize
    }
}
