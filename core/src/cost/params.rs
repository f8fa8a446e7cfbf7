//! The per-family parameters and where each number comes from: the measurements
//! (`lat_pipe` round trips, CAS core-to-core latencies, cache sizes, cpuidle tables)
//! and the assumptions, and [`CostParams::for_machine`], which picks a family's set.
//!
//! How the per-class wake-up cost is derived:
//! - Kunpeng 920: from lmbench `lat_pipe` pinned round trips (two wake-ups each):
//!   `wake_data_ns(class) = (RTT(class) - RTT(same cluster)) / 2`. The same-cluster round
//!   trip itself calibrates the pipe message work ([`CostParams::pipe_msg_ns`]). The
//!   CAS core-to-core numbers barely differ between clusters (33-38 ns), so the
//!   cluster gain is not one cache line: the README says the wake-up path carries it,
//!   and `lat_pipe` measures that path.
//! - Machines without a `lat_pipe` measurement: `LINES_PER_WAKE ×` the CAS core-to-core
//!   latency above the nearest (shared-L2) level, where `LINES_PER_WAKE` is what
//!   Kunpeng's cross-die `lat_pipe` penalty is in cross-die CAS latencies (≈30 lines).

use crate::cpumask::CpuId;
use crate::topology::Machine;

use super::{CostParams, CostTerms, IdleState};

/// Per-core cache sizes and refill latencies of a family.
struct Caches {
    l1d: u64,
    l2: u64,
    /// LLC bytes per core.
    llc_per_core: u64,
    /// ns: from L2, from the LLC, from DRAM.
    lat: [u64; 3],
}

const KIB: u64 = 1024;
/// Kunpeng 920 (TaiShan V110 cores): 64 KiB L1d and 512 KiB L2 per core, 1 MiB of L3
/// per core (HiSilicon's Kunpeng 920 specification; the 6426 has 64 cores and 64 MiB
/// L3). Latencies: L2 the 14 ns seed 03 quotes for Zen 4 (assumption: no Kunpeng
/// L2 figure in reference/); LLC the same-cluster CAS latency of kp920_6426_c2c.csv
/// (35 ns, a line through the shared L3); DRAM seed 03's 120 ns (assumption).
const KP_CACHES: Caches = Caches {
    l1d: 64 * KIB,
    l2: 512 * KIB,
    llc_per_core: 1024 * KIB,
    lat: [L2_NS, KP_C2C_CLUSTER, 120],
};
/// EPYC 9654 (Zen 4): 32 KiB L1d, 1 MiB L2 per core, 32 MiB L3 per 8-core CCX
/// (WikiChip zen_4, as seed 03 cites); latencies L2 >= 14 ns, L3 ~50 ns, DRAM ~120 ns
/// (seed 03 [RFC PATCH v3 2/3]; reference/latency/README.md).
const ZEN4_CACHES: Caches = Caches {
    l1d: 32 * KIB,
    l2: 1024 * KIB,
    llc_per_core: 4096 * KIB,
    lat: [L2_NS, 50, 120],
};
/// Xeon (Ice Lake-SP 8358: 48 KiB L1d, 1.25 MiB L2 per core, 48 MiB L3 for 32 cores;
/// Intel ARK). Latencies: L2 14 ns and DRAM 120 ns as Zen 4 (assumption), LLC the
/// same-socket CAS latency of xeon8358_dual_c2c.csv (51 ns). Used for every x86 family
/// but EPYC and Atom (assumption).
const ICX_CACHES: Caches = Caches {
    l1d: 48 * KIB,
    l2: 1280 * KIB,
    llc_per_core: 1536 * KIB,
    lat: [L2_NS, 51, 120],
};
/// Atom P5900 / C3000 (Jacobsville, Tremont): 32 KiB L1d, 4.5 MiB L2 per 4-core
/// module, no L3 (Intel ARK); the L2 is the LLC. Latencies as Xeon (assumption).
const ATOM_CACHES: Caches = Caches {
    l1d: 32 * KIB,
    l2: 1152 * KIB,
    llc_per_core: 0,
    lat: [L2_NS, 51, 120],
};
/// Misses a refill burst overlaps (assumption: a refill walks the task's stack, its
/// task_struct and its buffers, which the prefetchers and the out-of-order window
/// overlap; 4 is a guess between 1 (pointer chasing) and the ~10-16 line fill
/// buffers of these cores). A measurement would settle it: the time to re-touch a
/// known working set after a context switch, as Li, Ding and Shen, "Quantifying the
/// cost of context switch" (ExpCS 2007), measured it.
const REFILL_MLP: u64 = 4;

impl Caches {
    /// The cumulative per-CPU capacities for `smt` threads per core.
    fn per_cpu(&self, smt: u64) -> [u64; 3] {
        let smt = smt.max(1);
        let l1 = self.l1d / smt;
        let l2 = l1 + self.l2 / smt;
        [l1, l2, l2 + self.llc_per_core / smt]
    }
}

/// Kunpeng 920 `lat_pipe -W 1 -N 20` round trips on the 8-cluster (6426-class) board,
/// in ns. reference/latency/tools_kp920.2P.8CCL.type2_log.pipe.lock.0420.8ccl.filtered.txt
/// and tools_kp920.2P.8CCL.type4_log.pipe.lock.latency.0512.txt.
pub mod kp920_8ccl {
    /// CUSTOM_SPREAD 1 0 (cpu1<->cpu0): type2 lines 5, 29; type4 lines 4, 28.
    pub const RTT_SAME_CLUSTER_NS: [u64; 4] = [5807, 5787, 5678, 5676];
    /// CUSTOM_SPREAD 1 4..28: type2 lines 8-26, type4 lines 7-25 (every third line).
    pub const RTT_OTHER_CLUSTER_NS: [u64; 14] = [
        7317, 7477, 7443, 7440, 7369, 7341, 7457, 7640, 7307, 7613, 7638, 7897, 7767, 7811,
    ];
    /// CUSTOM_SPREAD 1 32 (other die, same socket, SLIT 16): type4 line 31. The type2 log
    /// (line 32) gives 12870, as slow as its cross-socket runs; we take type4's and list
    /// the discrepancy in docs/calibration.md.
    pub const RTT_OTHER_DIE_NS: u64 = 8507;
    /// CUSTOM_SPREAD 1 64 / 96 (other socket, SLIT 32-33): type2 lines 35, 38; type4 lines 34, 37.
    pub const RTT_OTHER_SOCKET_NS: [u64; 4] = [11944, 12690, 12754, 13743];
}

/// Kunpeng 920 `lat_pipe -W 1 -N 4` on the 6-cluster (4826-class) board, ns.
/// reference/latency/tools_kp920.2P.6CCL_log.pipe-latency.0404.filtered.txt.
pub mod kp920_6ccl {
    /// Pairs inside one cluster (1,0), (5,4), (9,8), (13,12), (17,16), (21,20): lines 3,
    /// 19, 35, 51, 67, 83.
    pub const RTT_SAME_CLUSTER_NS: [u64; 6] = [10359, 10252, 10142, 10291, 10085, 9952];
    /// All 30 pairs across clusters of one die, in file order (lines 5-87).
    pub const RTT_OTHER_CLUSTER_NS: [u64; 30] = [
        11757, 11721, 11773, 11744, 11731, 11655, 11548, 11402, 11691, 11701, 11699, 11642, 11720,
        11544, 11859, 11546, 11600, 11578, 11724, 11771, 11439, 11697, 11574, 11658, 11407, 11480,
        11737, 11838, 11666, 11513,
    ];
    /// CUSTOM_SPREAD 0 24 (other die, SLIT 12).
    pub const RTT_OTHER_DIE_NS: u64 = 15012;
    /// CUSTOM_SPREAD 0 64 / 72 (other socket, SLIT 20-22).
    pub const RTT_OTHER_SOCKET_NS: [u64; 2] = [17299, 17773];
}

fn mean(v: &[u64]) -> u64 {
    v.iter().sum::<u64>() / v.len() as u64
}

/// Skyloft (SOSP'24) on 2 × Xeon Gold 5418Y @ 2.0 GHz: IPI send ~437 cycles, receive
/// ~1582 cycles (reference/latency/README.md, "Other published figures"). Converted at
/// the machine's clock: cycles are assumed to carry over between cores.
const IPI_SEND_CYCLES: u64 = 437;
const IPI_RECV_CYCLES: u64 = 1582;

fn cycles_ns(cycles: u64, mhz: u64) -> u64 {
    cycles * 1000 / mhz
}

/// Assumptions shared by all families (no measurement in reference/latency):
/// a thread-to-thread context switch, the mm switch of process mode, rq lock holds.
const CTX_SWITCH_NS: u64 = 600;
const CTX_SWITCH_MM_NS: u64 = 400;
const RQ_LOCK_HOLD_NS: u64 = 250;
const SCHED_LOCK_HOLD_NS: u64 = 300;
const RQ_LINES: u64 = 3;
/// Loopback TCP send + receive processing of a small segment, one way (assumption).
const TCP_MSG_NS: u64 = 3000;
/// A loopback sender's work between waking the reader and sleeping (assumption: two
/// syscall crossings plus the socket lock and wait-queue work, ~0.8 µs at 2.6 GHz).
const TCP_TAIL_NS: u64 = 800;
/// memcpy at ~10 GB/s: 100 ns per KiB per copy (assumption).
const COPY_NS_PER_KIB: u64 = 100;
/// CONFIG_HZ=250 (assumption: the arm64 and most distribution x86 defaults).
const TICK_NS: u64 = 4_000_000;

/// ACPI LPI WFI state of arm64 servers: 1 us / 1 us (assumption: Kunpeng's firmware
/// tables are not in reference/latency; WFI is the only state assumed).
const ARM_WFI: IdleState = IdleState {
    name: "WFI",
    exit_latency_ns: 1_000,
    target_residency_ns: 1_000,
    polling: false,
};

/// cpuidle's poll_state (drivers/cpuidle/poll_state.c): x86 only.
const POLL: IdleState = IdleState {
    name: "POLL",
    exit_latency_ns: 0,
    target_residency_ns: 0,
    polling: true,
};

const fn st(name: &'static str, exit_us: u64, residency_us: u64) -> IdleState {
    IdleState {
        name,
        exit_latency_ns: exit_us * 1000,
        target_residency_ns: residency_us * 1000,
        polling: false,
    }
}

/// Kunpeng 920 CAS core-to-core medians (reference/latency/README.md summary of
/// kp920_6426_c2c.csv): same cluster 34.5, same die other cluster 35.7, cross die 80.5.
const KP_C2C_CLUSTER: u64 = 35; // 34.5 rounded up
const KP_C2C_DIE: u64 = 36; // 35.7
const KP_C2C_CROSS_DIE: u64 = 81; // 80.5 at SLIT 16
/// SMT siblings / shared L2 where CAS data have none: the L2 latency, >= 14 ns (seed 03).
const L2_NS: u64 = 14;

/// Cache lines per wake-up, from Kunpeng: the cross-die lat_pipe penalty per wake-up
/// divided by the cross-die CAS latency above the same-cluster one.
pub(super) fn lines_per_wake() -> u64 {
    let per_wake = (kp920_8ccl::RTT_OTHER_DIE_NS - mean(&kp920_8ccl::RTT_SAME_CLUSTER_NS)) / 2;
    per_wake / (KP_C2C_CROSS_DIE - KP_C2C_CLUSTER)
}

fn kunpeng(six_cluster: bool) -> CostParams {
    let mhz = 2600;
    let (same, other, die, socket, slit_die, slit_socket) = if six_cluster {
        (
            mean(&kp920_6ccl::RTT_SAME_CLUSTER_NS),
            mean(&kp920_6ccl::RTT_OTHER_CLUSTER_NS),
            kp920_6ccl::RTT_OTHER_DIE_NS,
            mean(&kp920_6ccl::RTT_OTHER_SOCKET_NS),
            12u64,
            21u64,
        )
    } else {
        (
            mean(&kp920_8ccl::RTT_SAME_CLUSTER_NS),
            mean(&kp920_8ccl::RTT_OTHER_CLUSTER_NS),
            kp920_8ccl::RTT_OTHER_DIE_NS,
            mean(&kp920_8ccl::RTT_OTHER_SOCKET_NS),
            16u64,
            32u64,
        )
    };
    let ipi_send_ns = cycles_ns(IPI_SEND_CYCLES, mhz);
    let ipi_recv_ns = cycles_ns(IPI_RECV_CYCLES, mhz);
    // One way of a pinned same-cluster lat_pipe round trip is: the message work, an IPI
    // sent and taken, the target's own enqueue under its rq lock, the WFI exit and a
    // context switch (the simulator's wake path).
    let overhead =
        ipi_send_ns + ipi_recv_ns + RQ_LOCK_HOLD_NS + ARM_WFI.exit_latency_ns + CTX_SWITCH_NS;
    let pipe_msg_ns = (same / 2).saturating_sub(overhead);
    let die_ns = (die - same) / 2;
    let socket_ns = (socket - same) / 2;
    CostParams {
        family: if six_cluster {
            "kunpeng920-6ccl"
        } else {
            "kunpeng920-8ccl"
        },
        ipi_send_ns,
        ipi_recv_ns,
        ctx_switch_ns: CTX_SWITCH_NS,
        ctx_switch_mm_ns: CTX_SWITCH_MM_NS,
        rq_lock_hold_ns: RQ_LOCK_HOLD_NS,
        sched_lock_hold_ns: SCHED_LOCK_HOLD_NS,
        rq_lines: RQ_LINES,
        pipe_msg_ns,
        tcp_msg_ns: TCP_MSG_NS,
        tcp_tail_ns: TCP_TAIL_NS,
        copy_ns_per_kib: COPY_NS_PER_KIB,
        tick_ns: TICK_NS,
        idle_states: vec![ARM_WFI],
        wake_data_ns: [0, 0, 0, (other - same) / 2, (other - same) / 2, die_ns],
        slit_ref: slit_die as u8,
        other_node_ns_per_slit: (socket_ns - die_ns) / (slit_socket - slit_die),
        c2c_ns: [
            0,
            L2_NS,
            KP_C2C_CLUSTER,
            KP_C2C_DIE,
            KP_C2C_DIE,
            KP_C2C_CROSS_DIE,
        ],
        // Cross-socket CAS is not in the CSV (one socket): scale cross-die by SLIT.
        c2c_ns_per_slit: (KP_C2C_CROSS_DIE - KP_C2C_CLUSTER) / (16 - 10),
        cache_bytes: KP_CACHES.per_cpu(1),
        refill_ns: KP_CACHES.lat,
        refill_mlp: REFILL_MLP,
        terms: CostTerms::ALL,
    }
}

/// `p` with the per-CPU cache shares of `c` for `smt` threads per core.
fn with_caches(mut p: CostParams, c: &Caches, smt: u64) -> CostParams {
    p.cache_bytes = c.per_cpu(smt);
    p.refill_ns = c.lat;
    p
}

/// Machines without lat_pipe data: wake-up costs from CAS latencies.
fn from_c2c(
    family: &'static str,
    mhz: u64,
    idle_states: Vec<IdleState>,
    c2c_llc: u64,
    c2c_other_llc: u64,
    c2c_node: u64,
    slit_ref: u8,
) -> CostParams {
    let lines = lines_per_wake();
    let k = |c: u64| lines * c.saturating_sub(L2_NS);
    let ipi_send_ns = cycles_ns(IPI_SEND_CYCLES, mhz);
    let ipi_recv_ns = cycles_ns(IPI_RECV_CYCLES, mhz);
    let kp = kunpeng(false);
    CostParams {
        family,
        ipi_send_ns,
        ipi_recv_ns,
        ctx_switch_ns: CTX_SWITCH_NS,
        ctx_switch_mm_ns: CTX_SWITCH_MM_NS,
        rq_lock_hold_ns: RQ_LOCK_HOLD_NS,
        sched_lock_hold_ns: SCHED_LOCK_HOLD_NS,
        rq_lines: RQ_LINES,
        // No x86 lat_pipe in reference/latency: Kunpeng's pipe work (assumption).
        pipe_msg_ns: kp.pipe_msg_ns,
        tcp_msg_ns: TCP_MSG_NS,
        tcp_tail_ns: TCP_TAIL_NS,
        copy_ns_per_kib: COPY_NS_PER_KIB,
        tick_ns: TICK_NS,
        idle_states,
        wake_data_ns: [0, 0, 0, k(c2c_llc), k(c2c_other_llc), k(c2c_node)],
        slit_ref,
        other_node_ns_per_slit: 0,
        c2c_ns: [0, L2_NS, c2c_llc, c2c_llc, c2c_other_llc, c2c_node],
        c2c_ns_per_slit: 0,
        // Set by the caller (with_caches()).
        cache_bytes: [0; 3],
        refill_ns: [0; 3],
        refill_mlp: REFILL_MLP,
        terms: CostTerms::ALL,
    }
}

impl CostParams {
    /// An IPI from the sender's `smp_send_reschedule()` to the target taking it: the
    /// delay before a remote CPU acts on a resched or a wakelist.
    #[inline]
    pub fn ipi_ns(&self) -> u64 {
        self.ipi_send_ns + self.ipi_recv_ns
    }

    /// The parameters for a machine, chosen by preset family (name prefix). Imported
    /// machines get the generic x86 set, said so in `family`.
    pub fn for_machine(m: &Machine) -> CostParams {
        let n = m.name.as_str();
        // Threads per core, from CPU 0's core.
        let smt = if m.nr_cpus() == 0 {
            1
        } else {
            let core0 = m.topo(CpuId(0)).core;
            (0..m.nr_cpus())
                .filter(|&c| m.topo(CpuId(c)).core == core0)
                .count() as u64
        };
        // intel_idle.c (v6.8) tables quoted in reference/latency/README.md.
        let spr = vec![POLL, st("C1", 1, 1), st("C1E", 2, 4), st("C6", 290, 800)];
        let snr = vec![POLL, st("C1", 2, 2), st("C1E", 15, 25), st("C6", 130, 500)];
        // Skylake-SP exits from the README; residencies 2/20/600 from skx_cstates (assumption).
        let skx = vec![POLL, st("C1", 2, 2), st("C1E", 10, 20), st("C6", 133, 600)];
        // Ice Lake-SP exits from the README; residencies 1/4/600 from icx_cstates (assumption).
        let icx = vec![POLL, st("C1", 1, 1), st("C1E", 4, 4), st("C6", 170, 600)];
        // acpi_idle on AMD: C1 ~1 us, C2 18 us (README); residencies assumed 2 and 36 us.
        let amd = vec![POLL, st("C1", 1, 2), st("C2", 18, 36)];
        if n.starts_with("kunpeng920-4826") {
            kunpeng(true)
        } else if n.starts_with("kunpeng920") {
            kunpeng(false)
        } else {
            // from_c2c()'s arguments and the caches, per x86 family.
            let (family, mhz, states, c2c_llc, c2c_other_llc, c2c_node, slit_ref, caches) =
                if n.starts_with("epyc9654") {
                    // Dual EPYC 9654 CAS medians: same CCX 27.1, other CCX 99.3, cross socket 191.6.
                    ("epyc9654", 2400, amd, 27, 99, 192, 32, &ZEN4_CACHES)
                } else if n.starts_with("jacobsville") {
                    // No CAS data for Atom: Xeon 8358's same-socket 51.1 ns for cross-L2 (assumption).
                    ("jacobsville", 2200, snr, 51, 51, 111, 21, &ATOM_CACHES)
                } else if n.starts_with("spr") {
                    // Dual Xeon 8358 CAS: same socket 51.1, cross socket 110.9 (closest measured Xeon).
                    ("sapphire-rapids", 2000, spr, 51, 51, 111, 21, &ICX_CACHES)
                } else if n.starts_with("xeon") {
                    ("xeon", 2600, icx, 51, 51, 111, 21, &ICX_CACHES)
                } else {
                    (
                        "generic-x86 (assumption)",
                        2600,
                        skx,
                        51,
                        51,
                        111,
                        21,
                        &ICX_CACHES,
                    )
                };
            with_caches(
                from_c2c(
                    family,
                    mhz,
                    states,
                    c2c_llc,
                    c2c_other_llc,
                    c2c_node,
                    slit_ref,
                ),
                caches,
                smt,
            )
        }
    }
}
