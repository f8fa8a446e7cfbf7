//! The cost model: what each scheduling mechanism costs in simulated time.
//!
//! ```text
//!  waker CPU                                   wakee's CPU
//!  ─────────                                   ───────────
//!  select_task_rq: rq lines read ─ probe_ns ×   (idle)  C-state exit ─ exit_latency_ns
//!  sd_llc_shared line read ─ c2c + queueing       │     IPI receive  ─ ipi_recv_ns
//!  wakelist: IPI send ─ ipi_send_ns               ▼
//!  remote rq lock: wait + hold + lines ─ c2c    context switch ─ ctx_switch_ns
//!                                               first run: cache-distance cost of the
//!                                               data the waker left (same core ... other
//!                                               node, by SLIT) ─ wake_data_ns[class]
//! ```
//!
//! Contended state, owned by the simulator, priced in `contention.rs` and `lines.rs`:
//! `RqLock` (a runqueue lock taken FIFO, its lines moving with the holder),
//! `SharedLines` (the `sd_llc_shared` lines and the task group's `tg->load_avg` line,
//! each moved between CPUs one transfer at a time) and
//! `CacheShare` (the cache footprint tasks sharing a CPU displace from each other).
//! Each is a switchable [`CostTerms`] term.
//!
//! The parameters and their derivation stay together in params.rs, so that a number
//! and where it comes from read together (their calibration tests are in tests.rs);
//! this file holds the types and the arithmetic the simulator charges through.
//!
//! Every number is per machine family and never per experiment: the same parameters
//! serve every workload and thread count. `docs/calibration.md` lists each parameter
//! with its value and its source (a file and line under reference/latency/ or a seed),
//! or says that it is an assumption.

use serde::Serialize;

use crate::cpumask::{CpuId, PerCpu};
use crate::fxhash::FxHashMap;

mod contention;
mod lines;
mod params;

use crate::topology::{Machine, NodeId};
pub use contention::CostTerms;
pub(crate) use contention::{CacheShare, RqLock};
pub(crate) use lines::{LineTerm, ReadCopies, SharedLines};
pub use params::{kp920_6ccl, kp920_8ccl};

/// How far apart two CPUs are, nearest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Distance {
    SameCpu = 0,
    /// SMT siblings.
    SameCore = 1,
    /// Same cluster (arm64 cluster, x86 L2 group).
    SameCluster = 2,
    /// Same LLC, other cluster.
    SameLlc = 3,
    /// Other LLC on the same NUMA node.
    OtherLlc = 4,
    OtherNode = 5,
}

impl Distance {
    pub const ALL: [Distance; 6] = [
        Distance::SameCpu,
        Distance::SameCore,
        Distance::SameCluster,
        Distance::SameLlc,
        Distance::OtherLlc,
        Distance::OtherNode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Distance::SameCpu => "same-cpu",
            Distance::SameCore => "same-core",
            Distance::SameCluster => "same-cluster",
            Distance::SameLlc => "same-llc",
            Distance::OtherLlc => "other-llc",
            Distance::OtherNode => "other-node",
        }
    }

    /// Classifies two CPUs of `m`.
    pub fn between(m: &Machine, a: CpuId, b: CpuId) -> Distance {
        Distance::of_ids(a, b, &CpuIds::of(m, a), &CpuIds::of(m, b))
    }

    /// The classification, from the two CPUs' topology ids.
    #[inline]
    fn of_ids(a: CpuId, b: CpuId, x: &CpuIds, y: &CpuIds) -> Distance {
        if a == b {
            Distance::SameCpu
        } else if x.core == y.core {
            Distance::SameCore
        } else if x.node != y.node {
            Distance::OtherNode
        } else if x.llc != y.llc {
            Distance::OtherLlc
        } else if x.cluster == y.cluster {
            Distance::SameCluster
        } else {
            Distance::SameLlc
        }
    }
}

/// One cpuidle state (`struct cpuidle_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct IdleState {
    pub name: &'static str,
    pub exit_latency_ns: u64,
    pub target_residency_ns: u64,
    /// `CPUIDLE_FLAG_POLLING`: the idle task polls need_resched, so a wake-up needs no IPI.
    pub polling: bool,
}

/// The per-machine-family parameters. Units are in the names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostParams {
    pub family: &'static str,
    /// Sending an IPI (waker side, `ttwu_queue_wakelist()` / `smp_send_reschedule()`).
    pub ipi_send_ns: u64,
    /// Taking an IPI on the target (interrupt entry, `sched_ttwu_pending()`, exit).
    pub ipi_recv_ns: u64,
    /// `schedule()` + `context_switch()` between two threads of one process.
    pub ctx_switch_ns: u64,
    /// Extra for switching address spaces (hackbench process mode).
    pub ctx_switch_mm_ns: u64,
    /// Hold time of a remote rq lock in `ttwu_do_activate()` (enqueue + preemption check).
    pub rq_lock_hold_ns: u64,
    /// Hold time of the own rq lock inside `schedule()`.
    pub sched_lock_hold_ns: u64,
    /// rq cache lines moved by a remote-lock wake-up (lock word, rq, cfs_rq).
    pub rq_lines: u64,
    /// CPU work of one pipe write + read of a small message (both sides together).
    pub pipe_msg_ns: u64,
    /// CPU work of one loopback TCP send + receive of a small message, one way.
    pub tcp_msg_ns: u64,
    /// CPU work a loopback sender still does after its receive softirq woke the
    /// reader and before it sleeps: the rest of `tcp_sendmsg()` and its syscall's
    /// return, then the next `recv()` up to `schedule()` in `sk_wait_data()`.
    pub tcp_tail_ns: u64,
    /// Copy cost per KiB of payload, per copy.
    pub copy_ns_per_kib: u64,
    /// CONFIG_HZ tick period.
    pub tick_ns: u64,
    pub idle_states: Vec<IdleState>,
    /// Per-wake-up cache-distance cost by [`Distance`] (index), ns; `OtherNode` is the
    /// value at `slit_ref` and grows by `other_node_ns_per_slit` per SLIT unit.
    pub wake_data_ns: [u64; 6],
    pub slit_ref: u8,
    pub other_node_ns_per_slit: u64,
    /// Core-to-core cache-line latency by [`Distance`] (index), ns, at `slit_ref` for
    /// other nodes; grows by `c2c_ns_per_slit` per SLIT unit.
    pub c2c_ns: [u64; 6],
    pub c2c_ns_per_slit: u64,
    /// Per-CPU cache capacity a task's data can stay in, cumulative by level, bytes:
    /// L1d, L1d + L2, L2 + the CPU's share of the LLC (per-core sizes over the
    /// threads per core). See `CacheShare` (contention.rs).
    pub cache_bytes: [u64; 3],
    /// Latency of a line refilled from L2, from the LLC and from DRAM, ns.
    pub refill_ns: [u64; 3],
    /// Misses a refill burst overlaps (memory-level parallelism).
    pub refill_mlp: u64,
    /// Which contention and cache terms are priced (all by default).
    pub terms: CostTerms,
}

/// The parameters in the form the hot path reads: a CPU pair's distance class comes
/// from four small per-CPU ids (as [`Distance::between`] classifies), the costs of a
/// class from the parameters, and only the other-node costs (scaled by SLIT) from a
/// node × node table. No CPU × CPU matrix: those were 7 bytes per pair (1 MB on a
/// 384-CPU EPYC) and a cache miss per lookup.
#[derive(Clone, Debug)]
pub struct CostModel {
    pub params: CostParams,
    /// Per CPU: core, node, LLC and cluster ids.
    ids: PerCpu<CpuIds>,
    n_nodes: usize,
    /// Row-major node × node: wake-up data cost and line latency across nodes, ns.
    node_wake_ns: Vec<u64>,
    node_c2c_ns: Vec<u64>,
    /// Per CPU: mean c2c to the other CPUs of its LLC (cost of one remote rq read).
    probe_ns: PerCpu<u32>,
}

/// The topology ids a CPU pair's [`Distance`] depends on.
#[derive(Clone, Copy, Debug)]
struct CpuIds {
    core: u32,
    node: u32,
    llc: u32,
    cluster: u32,
}

impl CpuIds {
    fn of(m: &Machine, c: CpuId) -> CpuIds {
        let t = m.topo(c);
        CpuIds {
            core: t.core,
            node: t.node.0 as u32,
            llc: t.llc,
            cluster: t.cluster,
        }
    }
}

impl CostModel {
    pub fn new(m: &Machine) -> CostModel {
        let params = CostParams::for_machine(m);
        let n = m.nr_cpus() as usize;
        let ids: Vec<CpuIds> = (0..n).map(|c| CpuIds::of(m, CpuId(c as u32))).collect();
        let spare = CpuIds::of(m, CpuId(0));
        let ids = PerCpu::new(ids, spare);
        let n_nodes = ids.iter().map(|i| i.node as usize + 1).max().unwrap_or(1);
        let mut node_wake_ns = vec![0; n_nodes * n_nodes];
        let mut node_c2c_ns = vec![0; n_nodes * n_nodes];
        let d = Distance::OtherNode as usize;
        for a in 0..n_nodes {
            for b in 0..n_nodes {
                let slit = m.node_distance(NodeId(a as _), NodeId(b as _)) as i64;
                let extra = slit - params.slit_ref as i64;
                let w =
                    params.wake_data_ns[d] as i64 + extra * params.other_node_ns_per_slit as i64;
                let c = params.c2c_ns[d] as i64 + extra * params.c2c_ns_per_slit as i64;
                node_wake_ns[a * n_nodes + b] = w.max(0) as u64;
                node_c2c_ns[a * n_nodes + b] = c.max(0) as u64;
            }
        }
        let mut cm = CostModel {
            params,
            ids,
            n_nodes,
            node_wake_ns,
            node_c2c_ns,
            probe_ns: PerCpu::filled(0, 0),
        };
        // The CPUs of each LLC, in CPU order, found once: a walk over every CPU for
        // each CPU is 16.8 M steps on a 4096-CPU machine.
        let mut llc_cpus: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        for (c, i) in cm.ids.iter().enumerate() {
            llc_cpus.entry(i.llc).or_default().push(c);
        }
        let probe_ns = (0..n)
            .map(|a| {
                let (sum, cnt) = llc_cpus[&cm.ids[a].llc]
                    .iter()
                    .copied()
                    .filter(|&b| b != a)
                    .fold((0u64, 0u64), |(s, k), b| {
                        (s + cm.c2c_ns(CpuId(a as u32), CpuId(b as u32)), k + 1)
                    });
                sum.checked_div(cnt).unwrap_or(0) as u32
            })
            .collect();
        cm.probe_ns = PerCpu::new(probe_ns, 0);
        cm
    }

    /// [`Distance::between`] from the per-CPU ids.
    #[inline]
    pub fn distance(&self, a: CpuId, b: CpuId) -> Distance {
        Distance::of_ids(a, b, &self.ids[a.idx()], &self.ids[b.idx()])
    }

    #[inline]
    fn node_pair(&self, a: CpuId, b: CpuId) -> usize {
        self.ids[a.idx()].node as usize * self.n_nodes + self.ids[b.idx()].node as usize
    }

    /// The cache-distance cost the wakee pays on its next run when the data it needs
    /// was last written on `from` and it runs on `to`.
    #[inline]
    pub fn wake_data_ns(&self, from: CpuId, to: CpuId) -> u64 {
        self.wake_data_ns_at(from, to, self.distance(from, to))
    }

    /// [`CostModel::wake_data_ns`] when the caller has classified the pair already
    /// (`d` must be `distance(from, to)`).
    #[inline]
    pub fn wake_data_ns_at(&self, from: CpuId, to: CpuId, d: Distance) -> u64 {
        debug_assert_eq!(d, self.distance(from, to));
        match d {
            Distance::OtherNode => self.node_wake_ns[self.node_pair(from, to)],
            d => self.params.wake_data_ns[d as usize],
        }
    }

    /// One cache line moved from `a` to `b` (CAS core-to-core latency).
    #[inline]
    pub fn c2c_ns(&self, a: CpuId, b: CpuId) -> u64 {
        match self.distance(a, b) {
            Distance::OtherNode => self.node_c2c_ns[self.node_pair(a, b)],
            d => self.params.c2c_ns[d as usize],
        }
    }

    /// One remote runqueue line read by `cpu` in the wake-up path.
    #[inline]
    pub fn probe_ns(&self, cpu: CpuId) -> u64 {
        self.probe_ns[cpu.idx()] as u64
    }
}

#[cfg(test)]
mod tests;

/// Helpers shared by the cost module's test modules.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{CostModel, CostTerms};
    use crate::topology::presets;

    /// Kunpeng 920-6426's cost model with `terms` switched on.
    pub(crate) fn kunpeng(terms: CostTerms) -> CostModel {
        let m = presets::machine("kunpeng920-6426").unwrap();
        let mut c = CostModel::new(&m);
        c.params.terms = terms;
        c
    }
}
