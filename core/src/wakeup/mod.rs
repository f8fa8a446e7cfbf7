//! Wake-up CPU selection, function by function as kernel/sched/fair.c and core.c have
//! it, for a chosen release and seed patches.
//!
//! ```text
//!  try_to_wake_up()
//!   └─ select_task_rq()                         core.c: allowed/fallback wrapper
//!       └─ select_task_rq_fair()                record_wakee, wake_wide, affine walk
//!           ├─ wake_affine()                    WA_IDLE, WA_WEIGHT, WA_BIAS
//!           └─ select_idle_sibling()            target/prev/recent fast paths
//!               ├─ select_idle_capacity()       asymmetric machines
//!               ├─ select_idle_smt()            SMT siblings of prev
//!               └─ select_idle_cpu()            SIS_UTIL/SIS_PROP budget, cluster first
//!                   └─ select_idle_core()       whole idle core (has_idle_cores)
//!   └─ ttwu_queue() / ttwu_queue_cond()         wakelist + IPI, or remote rq lock
//! ```
//!
//! Every function reads [`SchedState`] and returns a [`Decision`]: the CPU, the
//! effects the kernel would write, what the scan cost, and (with a tracer) a step-by-step
//! explanation. Nothing here mutates scheduler state, so one decision
//! (`schedlab wake`) and millions (the simulator) run the same code.

pub mod code;
pub(crate) mod lb_stats;
pub mod scenario;
mod select;
mod state;
mod trace;

pub use select::{select_task_rq_new, ttwu_queue_cond, update_idle_cpu_scan, wake_up};
pub use state::{
    LlcShared, RqState, SchedState, SisPropState, TaskId, TaskState, WakeFlags, Waker,
};
pub use trace::{NoTrace, PathOnly, Reject, Step, Trace, Tracer};

use serde::{Deserialize, Serialize};

use crate::byte_enum::byte_enum;
use crate::cpumask::{CpuId, CpuMask, PerCpu};
use crate::patch::PatchSet;
use crate::sched_domain::{BuildConfig, DomainError, SchedDomains, SdFlags};
use crate::topology::Machine;

/// The read-only topology a wake-up consults: the machine, its domains for the patch
/// set's kernel, and per-CPU copies of what the hot path reads, packed as the kernel
/// packs them (see `TopCache` and `SdHot`).
///
/// `domains` is the source of truth and never changes after [`WakeEnv::new`]; the
/// packed copies are derived from it there, once.
#[derive(Clone, Debug)]
pub struct WakeEnv {
    pub patches: PatchSet,
    pub domains: SchedDomains,
    /// `cpu_smt_mask(cpu)` restricted to online CPUs.
    smt: Vec<CpuMask>,
    /// `cpu_smt_mask(cpu)` as a list, for the tight loops.
    smt_list: Vec<Vec<CpuId>>,
    /// `cpumask_of_node(cpu_to_node(cpu))`, by index into `node_masks` (CONFIG_NUMA=n:
    /// one node holding every CPU).
    cpu_node: Vec<u16>,
    node_masks: Vec<CpuMask>,
    /// Per CPU (offline ones too).
    top: PerCpu<TopCache>,
    /// Every online CPU's `rq->sd` chain bottom-up, then its LLC's first group; a
    /// CPU's entries are contiguous (see [`TopCache::sd`]).
    sd_hot: Vec<SdHot>,
}

/// What the wake-up path reads of one `struct sched_domain` (or, for the LLC's first
/// group, of its `struct sched_group`), in one cache line: the domain walk of
/// `select_task_rq_fair()` tests a level's flags and span, and the full
/// [`crate::sched_domain::SchedDomain`] keeps them a line apart from each other.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct SdHot {
    pub flags: SdFlags,
    pub span_weight: u32,
    pub imbalance_pct: u32,
    pub span: CpuMask,
}

const NONE: u32 = u32::MAX;

/// The per-CPU variables `update_top_cache_domain()` publishes (`sd_llc`,
/// `sd_llc_size`, `sd_llc_id`, `sd_share_id`, `sd_llc_shared`), next to each other as
/// the kernel's per-CPU area keeps them, plus where the CPU's [`SdHot`] entries are.
/// A CPU without domains (offline, or alone) has `update_top_cache_domain(cpu, NULL)`'s
/// values: its own id, size 1, no LLC.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TopCache {
    /// Index into `sd_hot` of `rq->sd`, the lowest domain.
    sd: u32,
    /// Levels in the chain.
    nr_sd: u16,
    /// `sd_llc` as a level of the chain (`u16::MAX`: none).
    sd_llc: u16,
    pub sd_llc_id: CpuId,
    pub sd_llc_size: u32,
    pub sd_share_id: CpuId,
    pub sd_l2c_id: CpuId,
    /// `sd_llc_shared`, as the id of its LLC (`NONE`: none).
    llc_shared: u32,
}

impl WakeEnv {
    /// Builds the domains the patch set's kernel would build for `machine`.
    pub fn new(machine: &Machine, patches: PatchSet) -> Result<WakeEnv, DomainError> {
        let domains = SchedDomains::build(machine, &BuildConfig::for_patches(&patches))?;
        // cpu_smt_mask() as the release read the firmware (a device tree before v6.0).
        let kernel_view = crate::sched_domain::as_the_kernel_reads_it(machine, patches.release);
        let machine: &Machine = &kernel_view;
        let online = domains.cpu_map.clone();
        let smt: Vec<CpuMask> = machine.smt_masks().iter().map(|m| m.and(&online)).collect();
        let smt_list = smt.iter().map(|m| m.iter().collect()).collect();
        // Each node's mask once (not one per CPU: O(CPUs²) on 4096 CPUs), indexed in
        // the order the CPUs first name them.
        let mut node_masks: Vec<CpuMask> = Vec::new();
        let mut index_of_node: Vec<Option<u16>> = vec![None; machine.nr_nodes()];
        let mut cpu_node = Vec::with_capacity(machine.nr_cpus() as usize);
        for c in 0..machine.nr_cpus() {
            let node = if machine.config.numa {
                machine.topo(CpuId(c)).node.0 as usize
            } else {
                0
            };
            let i = *index_of_node[node].get_or_insert_with(|| {
                node_masks.push(machine.node_mask(CpuId(c)));
                (node_masks.len() - 1) as u16
            });
            cpu_node.push(i);
        }
        let (top, sd_hot) = pack_hot(&domains);
        Ok(WakeEnv {
            patches,
            domains,
            smt,
            smt_list,
            cpu_node,
            node_masks,
            top,
            sd_hot,
        })
    }

    pub fn nr_cpus(&self) -> u32 {
        self.domains.cpu_map.nr_cpu_ids()
    }

    /// `cpu_smt_mask(cpu)`.
    pub fn smt_mask(&self, cpu: CpuId) -> &CpuMask {
        &self.smt[cpu.idx()]
    }

    pub(crate) fn smt_siblings(&self, cpu: CpuId) -> &[CpuId] {
        &self.smt_list[cpu.idx()]
    }

    /// `cpumask_of_node(cpu_to_node(cpu))`: every CPU of the CPU's NUMA node (every
    /// CPU with CONFIG_NUMA=n).
    pub fn node_mask(&self, cpu: CpuId) -> &CpuMask {
        &self.node_masks[self.cpu_node[cpu.idx()] as usize]
    }

    /// `cpu_online(cpu)`: the CPU is in the domains' `cpu_map`.
    #[inline]
    pub fn cpu_online(&self, cpu: CpuId) -> bool {
        self.domains.cpu_map.test_cpu(cpu)
    }

    /// `sched_smt_active()`.
    pub fn sched_smt_active(&self) -> bool {
        self.domains.sched_smt_present
    }

    /// `static_branch_unlikely(&sched_cluster_active)`.
    pub fn sched_cluster_active(&self) -> bool {
        self.domains.sched_cluster_active
    }

    /// The CPU's per-CPU cache-domain variables.
    #[inline]
    pub(crate) fn top(&self, cpu: CpuId) -> &TopCache {
        &self.top[cpu.idx()]
    }

    /// `for_each_domain(cpu, sd)`: the CPU's chain bottom-up, as the wake-up path
    /// reads it (level `i` is `domains.cpu(cpu).domains[i]`).
    #[inline]
    pub(crate) fn sd_walk(&self, cpu: CpuId) -> &[SdHot] {
        let t = self.top(cpu);
        &self.sd_hot[t.sd as usize..t.sd as usize + t.nr_sd as usize]
    }

    /// `per_cpu(sd_llc, cpu)`, if the CPU has one.
    #[inline]
    pub(crate) fn sd_llc(&self, cpu: CpuId) -> Option<&SdHot> {
        let t = self.top(cpu);
        (t.sd_llc != u16::MAX).then(|| &self.sd_hot[t.sd as usize + t.sd_llc as usize])
    }

    /// `sd_llc->groups`, the LLC's first group (the one holding the CPU): its flags and
    /// span.
    #[inline]
    pub(crate) fn sd_llc_first_group(&self, cpu: CpuId) -> Option<&SdHot> {
        let t = self.top(cpu);
        (t.sd_llc != u16::MAX).then(|| &self.sd_hot[t.sd as usize + t.nr_sd as usize])
    }

    /// `cpus_share_cache(a, b)`.
    #[inline]
    pub fn cpus_share_cache(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.top(a).sd_llc_id == self.top(b).sd_llc_id
    }

    /// `cpus_share_resources(a, b)` (v6.7+, seed 01 1/3).
    #[inline]
    pub fn cpus_share_resources(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.top(a).sd_share_id == self.top(b).sd_share_id
    }

    /// `cpus_share_l2c(a, b)` (seed 03, RFC).
    #[inline]
    pub fn cpus_share_l2c(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.top(a).sd_l2c_id == self.top(b).sd_l2c_id
    }

    /// The LLC id whose `sched_domain_shared` serves `cpu`, if any.
    #[inline]
    pub fn llc_shared_of(&self, cpu: CpuId) -> Option<CpuId> {
        let id = self.top(cpu).llc_shared;
        (id != NONE).then_some(CpuId(id))
    }
}

/// Packs the per-CPU variables and the hot part of each CPU's domains.
fn pack_hot(domains: &SchedDomains) -> (PerCpu<TopCache>, Vec<SdHot>) {
    let n = domains.cpu_map.nr_cpu_ids() as usize;
    let mut top = Vec::with_capacity(n);
    let mut hot = Vec::new();
    for c in 0..n {
        let cpu = CpuId(c as u32);
        let Some(cd) = domains.try_cpu(cpu) else {
            top.push(TopCache {
                sd: hot.len() as u32,
                nr_sd: 0,
                sd_llc: u16::MAX,
                sd_llc_id: cpu,
                sd_llc_size: 1,
                sd_share_id: cpu,
                sd_l2c_id: cpu,
                llc_shared: NONE,
            });
            continue;
        };
        let sd = hot.len() as u32;
        for d in &cd.domains {
            hot.push(SdHot {
                flags: d.flags,
                span_weight: d.span_weight,
                imbalance_pct: d.imbalance_pct,
                span: d.span.clone(),
            });
        }
        if let Some(llc) = cd.llc() {
            let g = &llc.groups[0];
            hot.push(SdHot {
                flags: g.flags,
                span_weight: g.span.weight(),
                imbalance_pct: 0,
                span: g.span.clone(),
            });
        }
        top.push(TopCache {
            sd,
            nr_sd: cd.domains.len() as u16,
            sd_llc: cd.sd_llc.map_or(u16::MAX, |i| i as u16),
            sd_llc_id: cd.sd_llc_id,
            sd_llc_size: cd.sd_llc_size,
            sd_share_id: cd.sd_share_id,
            sd_l2c_id: cd.sd_l2c_id,
            llc_shared: cd.sd_llc_shared.map_or(NONE, |s| s.cpu.0),
        });
    }
    // The spare slots past the machine's CPUs (never read): CPUs without domains.
    let spare = TopCache {
        sd: 0,
        nr_sd: 0,
        sd_llc: u16::MAX,
        sd_llc_id: CpuId(0),
        sd_llc_size: 1,
        sd_share_id: CpuId(0),
        sd_l2c_id: CpuId(0),
        llc_shared: NONE,
    };
    (PerCpu::new(top, spare), hot)
}

/// How the woken task reaches its CPU's runqueue (`ttwu_queue()`).
///
/// In JSON always one shape, `{ "path": "local" | "wakelist" | "remote-lock", "ipi":
/// bool }`: `ipi` is the wakelist's `send_call_function_single_ipi()`, so it is false
/// for `local` and `remote-lock` (a remote enqueue's own resched IPI to an idle target,
/// which the simulator charges, is not part of the decision).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueuePath {
    /// The waker's own runqueue: no remote access.
    Local,
    /// `ttwu_queue_wakelist()`: queued on the target's wake list; `ipi` is false when
    /// the target's idle task was polling (`set_nr_if_polling()`).
    Wakelist { ipi: bool },
    /// The waker takes the target's rq lock and enqueues remotely.
    RemoteLock,
}

impl QueuePath {
    /// The `path` word of the JSON form.
    pub fn name(self) -> &'static str {
        match self {
            QueuePath::Local => "local",
            QueuePath::Wakelist { .. } => "wakelist",
            QueuePath::RemoteLock => "remote-lock",
        }
    }

    /// Whether the wakelist sends an IPI (false off the wakelist).
    pub fn ipi(self) -> bool {
        matches!(self, QueuePath::Wakelist { ipi: true })
    }
}

impl Serialize for QueuePath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("QueuePath", 2)?;
        st.serialize_field("path", self.name())?;
        st.serialize_field("ipi", &self.ipi())?;
        st.end()
    }
}

/// What a wake-up costs, counted as the simulator charges it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Costs {
    /// CPUs whose idle state the select_idle_* scans read: select_idle_cpu()'s loop
    /// (select_idle_core() counting each SMT sibling it reads), select_idle_smt()'s
    /// siblings of prev, select_idle_capacity()'s loop. The scans only, as the
    /// kernel's SIS accounting counts them: the target / prev / recent_used_cpu checks
    /// of select_idle_sibling() are [`Costs::fast_path_checks`]. What the simulator's
    /// "CPUs probed per wake-up" records.
    pub cpus_probed: u32,
    /// The fast-path idle checks of select_idle_sibling() before any scan: target,
    /// prev (when it shares the LLC with target) and recent_used_cpu (when it differs
    /// from both and shares the LLC), 0 to 3. Not in [`Costs::cpus_probed`]; each is
    /// also a [`Costs::remote_rq_reads`] unless it is the waker's CPU.
    pub fast_path_checks: u32,
    /// Runqueue cache lines of other CPUs read while deciding (fast-path checks and
    /// scans), each one a line that may be remote.
    pub remote_rq_reads: u32,
    /// Reads of the LLC's `sched_domain_shared` line (`has_idle_cores`,
    /// `nr_idle_scan`): it shares a line with `nr_busy_cpus`, written on idle entry
    /// and exit.
    pub llc_shared_reads: u32,
}

/// What the kernel writes while deciding, for the caller to apply.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// New `p->recent_used_cpu` (select_idle_sibling() sets it to prev).
    pub recent_used_cpu: Option<CpuId>,
    /// New `current->recent_used_cpu` of the waker: before 5.15 select_task_rq_fair()'s
    /// fast path ends with "if (want_affine) current->recent_used_cpu = cpu;" (fair.c
    /// v5.12-v5.14; 89aafd67f28c removed it in 5.15).
    pub waker_recent_used_cpu: Option<CpuId>,
    /// New (wakee_flips, wakee_flip_decay_ts, last_wakee) of the waker (`record_wakee`).
    pub waker_wakee: Option<(u32, u64, TaskId)>,
    /// `set_idle_cores(target, false)`: clear has_idle_cores of this LLC.
    pub clear_idle_cores: Option<CpuId>,
    /// SIS_PROP's scan accounting ran (select_idle_cpu() left its loop by `break` or
    /// by exhausting the LLC, not by `return -1` on a spent budget nor by a return
    /// from the cluster loop): the caller measures the scan time, charges it to
    /// `avg_scan_cost` (`update_avg()`) and, from v5.14, takes it off the waker CPU's
    /// `wake_avg_idle`.
    pub sis_prop_scan: bool,
    /// SIS_PROP's aging of the waker CPU's `(wake_avg_idle, wake_stamp)` (v5.14 to
    /// v6.6): the values after `while (wake_stamp < jiffies && wake_avg_idle)
    /// { wake_stamp++; wake_avg_idle >>= 1; }`, when that loop ran at least once.
    pub sis_prop_aged: Option<(u64, u64)>,
}

byte_enum! {
    /// Which return of the selection chose the CPU: the fast paths of
    /// `select_idle_sibling()` in the kernel's order, its scans, and the exits before it
    /// (`select_task_rq()`'s single CPU and fallback, `WF_CURRENT_CPU`, the slow path).
    /// One byte, so the simulator's event record carries it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum WakePath {
        /// `try_to_wake_up()`: p still `on_cpu`, queued on prev's wakelist unselected.
        OnCpu = 0 => "on_cpu wakelist",
        /// `select_task_rq()`: one allowed CPU (`cpumask_any()`).
        SingleCpu = 1 => "single allowed CPU",
        /// `select_fallback_rq()`: the chosen CPU was not allowed or not active.
        Fallback = 2 => "select_fallback_rq",
        /// `select_task_rq_fair()`: `WF_CURRENT_CPU`.
        CurrentCpu = 3 => "WF_CURRENT_CPU",
        /// `find_idlest_cpu()`: an SD_BALANCE_* domain and no affine one.
        SlowPath = 4 => "slow path (find_idlest_cpu)",
        /// Not a TTWU wake-up: `new_cpu` as the affine walk left it.
        Affine = 5 => "affine (no TTWU)",
        /// `select_idle_sibling()`: target is idle.
        Target = 6 => "fast path: target idle",
        /// prev is idle and shares the cache (and, with clusters, the cluster).
        Prev = 7 => "fast path: prev idle",
        /// Stacking on the per-CPU kthread waker's CPU.
        KthreadStack = 8 => "fast path: kthread stacking",
        /// `recent_used_cpu` is idle and shares the cache.
        Recent = 9 => "fast path: recent_used_cpu idle",
        /// `select_idle_capacity()` (asymmetric capacity).
        Capacity = 10 => "select_idle_capacity",
        /// No `sd_llc`: target.
        NoLlc = 11 => "no LLC: target",
        /// `select_idle_smt()`: an idle SMT sibling of prev.
        IdleSmt = 12 => "idle SMT sibling of prev",
        /// `select_idle_cpu()` (and `select_idle_core()`) found an idle CPU in the LLC.
        IdleScan = 13 => "idle scan (select_idle_cpu)",
        /// Seed 01 3/3: the scan found nothing, prev outside the cluster.
        PrevOutsideCluster = 14 => "scan failed: prev outside cluster",
        /// Seed 01 3/3: the scan found nothing, `recent_used_cpu` outside the cluster.
        RecentOutsideCluster = 15 => "scan failed: recent outside cluster",
        /// Nothing idle: stay on target.
        NothingIdle = 16 => "nothing idle: target",
        /// `try_to_wake_up()` → `ttwu_runnable()` (v6.12, core.c v6.12.19 3737-3761):
        /// p is still queued, delayed (`sim/delayed.rs`), and requeued on its rq in
        /// place, unselected. Only the simulator's record has it.
        Requeue = 17 => "requeued in place (delayed)",
    }
}

/// The outcome of one wake-up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub cpu: CpuId,
    pub queue: QueuePath,
    /// Which return of the selection chose `cpu`: known when the tracer asks for it
    /// (`Tracer::PATH`: [`Trace`] and [`PathOnly`] do, [`NoTrace`] does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<WakePath>,
    pub costs: Costs,
    pub effects: Effects,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets::PRESETS;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The packed copies say what the domains say, level by level, on every preset
    /// and for releases with and without the cluster patch.
    #[test]
    fn the_packed_hot_copies_match_the_domains() {
        for preset in PRESETS {
            let machine = preset.machine();
            for set in ["6.5", "6.6+cluster", "6.8", "6.12"] {
                let env = WakeEnv::new(&machine, set.parse().unwrap()).unwrap();
                let d = &env.domains;
                for c in 0..env.nr_cpus() {
                    let cpu = CpuId(c);
                    let what = format!("{} {set} CPU{c}", preset.name);
                    let t = env.top(cpu);
                    let Some(cd) = d.try_cpu(cpu) else {
                        assert_eq!(t.sd_llc_id, cpu, "{what}");
                        assert!(env.sd_walk(cpu).is_empty(), "{what}");
                        assert!(env.sd_llc(cpu).is_none(), "{what}");
                        continue;
                    };
                    let walk = env.sd_walk(cpu);
                    assert_eq!(walk.len(), cd.domains.len(), "{what}");
                    for (h, sd) in walk.iter().zip(&cd.domains) {
                        assert_eq!(h.flags, sd.flags, "{what}");
                        assert_eq!(h.span, sd.span, "{what}");
                        assert_eq!(h.span_weight, sd.span_weight, "{what}");
                        assert_eq!(h.imbalance_pct, sd.imbalance_pct, "{what}");
                    }
                    assert_eq!(env.sd_llc(cpu).map(|h| &h.span), cd.llc().map(|s| &s.span));
                    let g = env.sd_llc_first_group(cpu);
                    let sg = cd.llc().map(|s| &s.groups[0]);
                    assert_eq!(g.map(|h| &h.span), sg.map(|g| &g.span), "{what}");
                    assert_eq!(g.map(|h| h.flags), sg.map(|g| g.flags), "{what}");
                    assert_eq!(
                        (t.sd_llc_id, t.sd_llc_size, t.sd_share_id, t.sd_l2c_id),
                        (cd.sd_llc_id, cd.sd_llc_size, cd.sd_share_id, cd.sd_l2c_id),
                        "{what}"
                    );
                    assert_eq!(
                        env.llc_shared_of(cpu),
                        cd.sd_llc_shared.map(|s| s.cpu),
                        "{what}"
                    );
                    for o in d.cpu_map.iter() {
                        assert_eq!(env.cpus_share_cache(cpu, o), d.cpus_share_cache(cpu, o));
                        assert_eq!(
                            env.cpus_share_resources(cpu, o),
                            d.cpus_share_resources(cpu, o)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_hot_domain_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<SdHot>(), 64);
        assert_eq!(std::mem::align_of::<SdHot>(), 64);
    }
}
