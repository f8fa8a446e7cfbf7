//! SIS_PROP (kernels before 6.7): select_idle_cpu()'s budget from the average idle
//! time, its ageing per jiffy and its `int` truncation.

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::patch::PatchSet;
use schedlab_core::topology::presets;
use schedlab_core::wakeup::{
    wake_up, NoTrace, RqState, SchedState, TaskId, TaskState, WakeEnv, WakeFlags, Waker,
};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn sis_prop_budget_on_kernels_before_6_0() {
    // 5.15: SIS_PROP on, no SIS_UTIL. nr = span_weight × wake_avg_idle / avg_scan_cost,
    // at least 4.
    let m = presets::machine("flat-16").unwrap();
    let ps: PatchSet = "5.15".parse().unwrap();
    assert!(ps.features.sis_prop && !ps.features.sis_util);
    let env = WakeEnv::new(&m, ps).unwrap();
    let mut s = SchedState::all_idle(16, |_| 16);
    for c in 0..15 {
        s.rqs[c] = RqState::busy(1);
    }
    s.sis_prop.avg_scan_cost_ns[0] = 999;
    let p = TaskState::new(TaskId(1), CpuId(0), CpuMask::full(16));
    let waker = Waker {
        cpu: CpuId(0),
        task: Some(TaskState::new(TaskId(2), CpuId(0), CpuMask::full(16))),
        in_task: true,
    };
    // Plenty of recent idle time: 16 × 1000 / 1000 = 16, the scan reaches CPU15.
    s.sis_prop.wake_avg_idle_ns[0] = 1000;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(15));
    assert!(d.effects.sis_prop_scan);
    // Little idle time: the floor of 4 leaves 3 probes, and the wakee stays on target.
    s.sis_prop.wake_avg_idle_ns[0] = 100;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(0));
    assert_eq!(d.costs.cpus_probed, 3);
    // One jiffy later the average is halved before use.
    s.sis_prop.wake_avg_idle_ns[0] = 1000;
    s.jiffies = 1;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(
        d.costs.cpus_probed, 7,
        "nr = 16 x 500 / 1000 = 8: !--nr stops at the 8th"
    );
}

/// The flat-16 case of `sis_prop_budget_on_kernels_before_6_0` on `release`: CPUs 0-14
/// busy, CPU15 idle, avg_scan_cost 999 ns, the waker on CPU0.
fn sis_prop_case(release: &str) -> (WakeEnv, SchedState, TaskState, Waker) {
    let m = presets::machine("flat-16").unwrap();
    let env = WakeEnv::new(&m, release.parse().unwrap()).unwrap();
    let mut s = SchedState::all_idle(16, |_| 16);
    for c in 0..15 {
        s.rqs[c] = RqState::busy(1);
    }
    s.sis_prop.avg_scan_cost_ns[0] = 999;
    let p = TaskState::new(TaskId(1), CpuId(0), CpuMask::full(16));
    let waker = Waker {
        cpu: CpuId(0),
        task: Some(TaskState::new(TaskId(2), CpuId(0), CpuMask::full(16))),
        in_task: true,
    };
    (env, s, p, waker)
}

/// v5.12/v5.13 select_idle_cpu(): "avg_idle = this_rq()->avg_idle / 512;" — not
/// wake_avg_idle (added in v5.14 by 94aafc3ee31d, "sched/fair: Age the average idle
/// time"), and nothing is aged.
#[test]
fn sis_prop_before_5_14_budgets_from_avg_idle_over_512() {
    let (env, mut s, p, waker) = sis_prop_case("5.12");
    // wake_avg_idle is not read: a large one changes nothing.
    s.sis_prop.wake_avg_idle_ns[0] = 1 << 30;
    s.sis_prop.avg_idle_ns[0] = 1_000_000; // 1 ms, the sched_init() value
    s.jiffies = 5;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    // 16 × (1_000_000 / 512 = 1953) = 31248 > 4 × 1000: nr = 31; CPU15 is found.
    assert_eq!(d.cpu, CpuId(15));
    assert!(d.effects.sis_prop_scan);
    assert_eq!(d.effects.sis_prop_aged, None);
    // 16 × (200_000 / 512 = 390) = 6240 > 4000: nr = 6, five probes, none idle.
    s.sis_prop.avg_idle_ns[0] = 200_000;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!((d.cpu, d.costs.cpus_probed), (CpuId(0), 5));
    // "if (!--nr) return -1;" skips the accounting at the end of the function.
    assert!(!d.effects.sis_prop_scan);
    // The same avg_idle on 5.14 is not read: wake_avg_idle (2^30) is.
    let (env, mut s, p, waker) = sis_prop_case("5.14");
    s.sis_prop.avg_idle_ns[0] = 200_000;
    s.sis_prop.wake_avg_idle_ns[0] = 1 << 30;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(15));
}

/// v5.14-v6.6 select_idle_cpu(): "while (this_rq->wake_stamp < now &&
/// this_rq->wake_avg_idle) { this_rq->wake_stamp++; this_rq->wake_avg_idle >>= 1; }" —
/// one halving per jiffy, stopping at 0 with wake_stamp left behind; the aged pair is
/// written back.
#[test]
fn sis_prop_ages_wake_avg_idle_per_jiffy_and_writes_it_back() {
    let (env, mut s, p, waker) = sis_prop_case("5.15");
    s.sis_prop.wake_avg_idle_ns[0] = 8000;
    s.sis_prop.wake_stamp[0] = 10;
    s.jiffies = 13;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    // 8000 >> 3 = 1000: nr = 16 × 1000 / 1000 = 16, CPU15 found, accounted.
    assert_eq!(d.effects.sis_prop_aged, Some((1000, 13)));
    assert_eq!(d.cpu, CpuId(15));
    assert!(d.effects.sis_prop_scan);
    // 5 ns halves to 0 after 3 jiffies of 100: the loop stops there, wake_stamp 13.
    s.sis_prop.wake_avg_idle_ns[0] = 5;
    s.jiffies = 110;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.effects.sis_prop_aged, Some((0, 13)));
    // nr = 4: three probes, budget spent, "if (!--nr) return -1": no accounting.
    assert_eq!(d.costs.cpus_probed, 3);
    assert!(!d.effects.sis_prop_scan);
    // wake_stamp current: nothing aged, nothing written.
    s.sis_prop.wake_stamp[0] = 110;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.effects.sis_prop_aged, None);
}

/// SIS_PROP (kernel/sched/fair.c v6.6, select_idle_cpu(); removed in 6.7): `nr =
/// div_u64(span_avg, avg_cost)` lands in an `int`. 16 × 2^40 ns / 1 ns = 2^44, whose
/// low 32 bits are 0: nr is 0. SIS_PROP's kernels stop the scan with "if (!--nr)
/// return -1;" (fair.c v5.15; "--nr <= 0" came with seed 01 in 6.7), which a budget of
/// 0 never meets: the scan goes on through the LLC to the idle CPU15.
#[test]
fn sis_prop_budget_is_truncated_to_int() {
    let m = presets::machine("flat-16").unwrap();
    let env = WakeEnv::new(&m, "5.15".parse().unwrap()).unwrap();
    let mut s = SchedState::all_idle(16, |_| 16);
    for c in 0..15 {
        s.rqs[c] = RqState::busy(1);
    }
    s.sis_prop.avg_scan_cost_ns[0] = 0;
    s.sis_prop.wake_avg_idle_ns[0] = 1 << 40;
    let p = TaskState::new(TaskId(1), CpuId(0), CpuMask::full(16));
    let waker = Waker {
        cpu: CpuId(0),
        task: Some(TaskState::new(TaskId(2), CpuId(0), CpuMask::full(16))),
        in_task: true,
    };
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.costs.cpus_probed, 15);
    assert_eq!(d.cpu, CpuId(15));
    // One ns less: the quotient is 2^44 - 16, whose low 32 bits read as the int -16.
    s.sis_prop.wake_avg_idle_ns[0] = (1 << 40) - 1;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!(d.costs.cpus_probed, 15);
    assert_eq!(d.cpu, CpuId(15));
}

/// SIS_PROP's quotient is "nr = div_u64(span_avg, avg_cost);" (fair.c v6.6,
/// select_idle_cpu()) and div_u64() takes a `u32` divisor ("static inline u64
/// div_u64(u64 dividend, u32 divisor)", include/linux/math64.h v6.8 line 127): the
/// `u64` avg_cost = avg_scan_cost + 1 is truncated to its low 32 bits, while the
/// "span_avg > 4*avg_cost" test before it compares full `u64`s. avg_scan_cost 2^32 + 1
/// makes avg_cost 2^32 + 2, divided by as 2; 16 × (2^30 + 2) = 2^34 + 32 passes the
/// test, and (2^34 + 32) / 2 = 2^33 + 16 reads as the int 16: fifteen probes reach the
/// idle CPU15. A full 64-bit division would give nr = 4.
#[test]
fn sis_prop_divides_by_avg_cost_truncated_to_u32() {
    let (env, mut s, p, waker) = sis_prop_case("5.15");
    s.sis_prop.avg_scan_cost_ns[0] = (1 << 32) + 1;
    s.sis_prop.wake_avg_idle_ns[0] = (1 << 30) + 2;
    let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
    assert_eq!((d.cpu, d.costs.cpus_probed), (CpuId(15), 15));
}

/// `avg_scan_cost` is a field of `struct sched_domain` (include/linux/sched/topology.h
/// v5.12.9:103), and every CPU has its own LLC domain (topology.c v5.12.9:1857):
/// select_idle_cpu()'s "avg_cost = this_sd->avg_scan_cost + 1" (fair.c v5.12.9:6188;
/// SIS_PROP is on by default until 6.0) reads the waker CPU's own, not the LLC's first CPU's, and
/// "update_avg(&this_sd->avg_scan_cost, time)" writes it. flat-16, one LLC: the waker
/// on CPU3 has a large cost of its own; CPU0's is small. Found by transcript_512.rs.
#[test]
fn sis_prop_reads_the_waker_cpus_own_avg_scan_cost() {
    for release in ["5.12", "5.15", "5.19"] {
        let (env, mut s, p, mut waker) = sis_prop_case(release);
        waker.cpu = CpuId(3);
        s.sis_prop.avg_idle_ns[3] = 1000 * 512;
        s.sis_prop.wake_avg_idle_ns[3] = 1000;
        // CPU0's cost would give nr = 16 × 1000 / 11 = 1454: the scan reaches CPU15.
        s.sis_prop.avg_scan_cost_ns[0] = 10;
        // CPU3's gives 16 × 1000 / 100001 < 4: the floor of 4, three probes.
        s.sis_prop.avg_scan_cost_ns[3] = 100_000;
        let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
        assert_eq!(d.costs.cpus_probed, 3, "{release}");
        assert_eq!(d.cpu, CpuId(0), "{release}: no idle CPU within the budget");
    }
}
