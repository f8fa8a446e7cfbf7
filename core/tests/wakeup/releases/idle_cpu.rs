//! Where a release's `select_idle_cpu()` and `select_idle_core()` differ: where the
//! walk starts, the budget's test and its `int`, the `sd_llc` test, the cookie test
//! (5.14), the non-SMT core walk (6.1), and which LLC's `has_idle_cores` 5.12 clears.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// 56498cfb045d ("for_each_cpu_wrap(cpu, cpus, target + 1)") is in v5.15; v5.14's
/// select_idle_cpu() still walks "for_each_cpu_wrap(cpu, cpus, target)". SIS_PROP's
/// smallest budget (nr = 4: three probes) from target CPU3: 5.14 probes 3, 4, 5 and
/// gives up; 5.15 probes 4, 5, 6 and finds CPU6.
#[test]
fn select_idle_cpu_starts_after_target_from_5_15() {
    let (m, s) = flat_busy_but(&[6]);
    let p = task(1, 3, CpuMask::full(16));
    let w = waker_task(3, 16);
    let d = wake_up(&env(&m, "5.14"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(3));
    let d = wake_up(&env(&m, "5.15"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(6));
}

/// The budget's test is "if (!--nr) return -1;" until seed 01 2/3 made it "if (--nr <=
/// 0) return -1;" (fair.c v6.8 line 7406; v6.6 still "!--nr"). SIS_UTIL's "nr =
/// READ_ONCE(sd_share->nr_idle_scan) + 1;" is an int: nr_idle_scan -1 makes nr 0, which
/// is not the "nr == 1" early exit; "!--nr" then never stops the scan, "--nr <= 0"
/// stops it at once. Both the CPU-by-CPU loop and the idle-hint scan.
#[test]
fn a_budget_of_zero_or_less_never_stops_the_scan_before_seed_01() {
    let (m, mut s) = flat_busy_but(&[9]);
    s.llc_shared[0].nr_idle_scan = u32::MAX;
    let p = task(1, 0, CpuMask::full(16));
    let w = waker_task(0, 16);
    for hint in [false, true] {
        if hint {
            s.enable_idle_hint();
        }
        let d = wake_up(&env(&m, "6.6"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
        assert_eq!(d.cpu, CpuId(9), "hint {hint}");
        assert_eq!(d.costs.cpus_probed, 9, "hint {hint}");
        let d = wake_up(
            &env(&m, "6.6+cluster"),
            &s,
            &p,
            &w,
            WakeFlags::NONE,
            &mut NoTrace,
        );
        assert_eq!(d.cpu, CpuId(0), "hint {hint}");
        assert_eq!(d.costs.cpus_probed, 0, "hint {hint}");
    }
}

/// "this_sd = rcu_dereference(*this_cpu_ptr(&sd_llc)); if (!this_sd) return -1;" opens
/// select_idle_cpu() until 6.0 (fair.c v5.15, v6.0.1); 6.1 to 6.6 test it only in the
/// SIS_PROP block, and 6.7 dropped it. CPU7 shares no cache with CPUs 0-6, so it has
/// no sd_llc; it wakes p (prev CPU1) towards prev's LLC, where CPU5 is idle.
#[test]
fn a_waker_without_an_llc_domain_scans_nothing_before_6_1() {
    let cpus: Vec<CpuSpec> = (0..8)
        .map(|c| CpuSpec {
            cpu: c,
            package: 0,
            node: 0,
            llc: u32::from(c == 7),
            cluster: None,
            core: None,
            capacity: 1024,
            asym_prio: 0,
        })
        .collect();
    let mut spec = MachineSpec::regular(
        "llc-7-1",
        "",
        Arch::Arm64,
        1,
        1,
        1,
        8,
        1,
        1,
        Numbering::Linear,
    );
    spec.packages = None;
    spec.cores_per_llc = None;
    spec.cpus = Some(cpus);
    let m = spec.build().unwrap();
    let mut s = SchedState::all_idle(8, |_| 7);
    for c in [0, 1, 2, 3, 4, 6, 7] {
        s.rqs[c] = RqState::busy(1);
    }
    // Prev's CPU1 lightly loaded, the waker's CPU7 heavily: wake_affine() keeps prev.
    s.rqs[7].load_avg = 8192;
    let p = task(1, 1, CpuMask::full(8));
    let w = waker_task(7, 8);
    let e = env(&m, "6.0");
    assert!(wakeup::ttwu_queue_cond(&e, &s, &p, CpuId(7), CpuId(1)));
    let d = wake_up(&e, &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(1));
    let d = wake_up(&env(&m, "6.1"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(5));
}

/// Core scheduling (CONFIG_SCHED_CORE) arrived in 5.14: 5.12's "__select_idle_cpu(int
/// cpu)" is "if (available_idle_cpu(cpu) || sched_idle_cpu(cpu)) return cpu;" with no
/// sched_cpu_cookie_match() (fair.c v5.12.9; v5.14 adds "&& sched_cpu_cookie_match(
/// cpu_rq(cpu), p)"). CPU1 is idle but its core runs another cookie than p's.
#[test]
fn no_cookie_test_before_5_14() {
    let m = presets::machine("xeon-smt-8").unwrap();
    let mut s = SchedState::all_idle(8, |_| 8);
    for c in [0, 2, 3, 4, 5, 6, 7] {
        s.rqs[c] = RqState::busy(1);
    }
    s.core_sched_enabled = true;
    s.rqs[1].core_cookie = 3;
    s.rqs[5].core_cookie = 3;
    let mut p = task(1, 0, CpuMask::full(8));
    p.cookie = 7;
    let w = waker_task(0, 8);
    let d = wake_up(&env(&m, "5.13"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(1));
    let d = wake_up(&env(&m, "5.14"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(0));
}

/// select_idle_core() on a machine without SMT, reached when has_idle_cores is read
/// there (a patch set without seed 02). Until 6.0 the SMT build starts "if
/// (!static_branch_likely(&sched_smt_present)) return __select_idle_cpu(core, p);"
/// (fair.c v5.15, v6.0.1); from 6.1 it walks cpu_smt_mask(core) = {core} (fair.c v6.8
/// lines 7283-7312): a SCHED_IDLE-only CPU is remembered in idle_cpu and the scan goes
/// on to an idle CPU.
#[test]
fn select_idle_core_without_smt_walks_the_core_from_6_1() {
    let (m, mut s) = flat_busy_but(&[9]);
    s.rqs[5].idle_h_nr_running = s.rqs[5].nr_running;
    s.llc_shared[0].has_idle_cores = true;
    let p = task(1, 2, CpuMask::full(16));
    let w = waker_task(2, 16);
    let d = wake_up(
        &env(&m, "6.0-no-smt-idle-cores"),
        &s,
        &p,
        &w,
        WakeFlags::NONE,
        &mut NoTrace,
    );
    assert_eq!(d.cpu, CpuId(5));
    let d = wake_up(
        &env(&m, "6.6-no-smt-idle-cores"),
        &s,
        &p,
        &w,
        WakeFlags::NONE,
        &mut NoTrace,
    );
    assert_eq!(d.cpu, CpuId(9));
}

/// v5.12's select_idle_cpu() ends "if (smt) set_idle_cores(this, false);" with "int
/// this = smp_processor_id();" (9fe1f127b913, "sched/fair: Merge
/// select_idle_core/cpu()", v5.12-rc1): it clears has_idle_cores of the waker's LLC,
/// not of the LLC it scanned. 02dbb7246c5b ("sched/fair: Fix clearing of
/// has_idle_cores flag in select_idle_cpu()", v5.13-rc2, backported to 5.12.y) made it
/// "set_idle_cores(target, false);" (fair.c v5.12.9 line 6215, v6.8 line 7415). The
/// waker on CPU0 (LLC 0-7) wakes p to its prev CPU9 (LLC 8-15), whose flag says an
/// idle core exists where none does.
#[test]
fn v5_12_clears_has_idle_cores_of_the_wakers_llc() {
    let mut spec = MachineSpec::regular(
        "smt-2llc",
        "",
        Arch::X86,
        1,
        1,
        2,
        4,
        1,
        2,
        Numbering::Linear,
    );
    spec.cores_per_cluster = 1;
    let m = spec.build().unwrap();
    let mut s = SchedState::all_idle(16, |_| 8);
    for c in 0..16 {
        s.rqs[c] = RqState::busy(1);
    }
    s.llc_shared[0].has_idle_cores = true;
    s.llc_shared[8].has_idle_cores = true;
    let p = task(1, 9, CpuMask::full(16));
    let w = waker_task(0, 16);
    for (set, llc) in [("5.12", 0), ("5.13", 8), ("6.8", 8)] {
        let d = wake_up(&env(&m, set), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
        assert_eq!(d.cpu, CpuId(9), "{set}");
        assert_eq!(d.effects.clear_idle_cores, Some(CpuId(llc)), "{set}");
    }
}

/// select_idle_cpu()'s budget is an `int` (fair.c v6.8 line 7359) and the kernel builds
/// with -fno-strict-overflow, so it wraps: nr_idle_scan INT_MAX makes "nr =
/// READ_ONCE(sd_share->nr_idle_scan) + 1;" (line 7368) INT_MIN, which is not the "nr
/// == 1" early exit, and the first "if (--nr <= 0) return -1;" (line 7406) makes it
/// INT_MAX: the scan goes on through the LLC to the idle CPU9. Both the CPU-by-CPU
/// loop and the idle-hint scan.
#[test]
fn the_scan_budget_wraps_as_an_int() {
    let (m, mut s) = flat_busy_but(&[9]);
    s.llc_shared[0].nr_idle_scan = i32::MAX as u32;
    let p = task(1, 0, CpuMask::full(16));
    let w = waker_task(0, 16);
    for hint in [false, true] {
        if hint {
            s.enable_idle_hint();
        }
        for set in ["6.6", "6.8"] {
            let d = wake_up(&env(&m, set), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
            assert_eq!(
                (d.cpu, d.costs.cpus_probed),
                (CpuId(9), 9),
                "{set} hint {hint}"
            );
        }
    }
}
