//! Where a release's wake-up code differs on machines of asymmetric capacity:
//! `select_idle_capacity()`, `asym_fits_cpu()` (`asym_fits_capacity()` before 5.17),
//! `sd_asym_cpucapacity` before `SD_ASYM_CPUCAPACITY_FULL`, and the slow path's
//! misfit groups.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// An arm64 DynamIQ part: CPUs 0-3 of capacity 512, 4-7 of 1024, one LLC.
fn big_little() -> Machine {
    let mut spec = MachineSpec::regular(
        "dynamiq-4-4",
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
    spec.capacities = Some(vec![512, 512, 512, 512, 1024, 1024, 1024, 1024]);
    spec.build().unwrap()
}

/// [`big_little`]'s state: every CPU idle but `busy` (one task each), the little
/// CPUs 0-3 at capacity 512 and the big ones at 1024.
fn big_little_state(busy: &[usize]) -> SchedState {
    let mut s = SchedState::all_idle(8, |_| 8);
    for &c in busy {
        s.rqs[c] = RqState::busy(1);
    }
    for c in 0..4 {
        s.rqs[c].capacity = 512;
    }
    s
}

/// select_idle_capacity() walks "for_each_cpu_wrap(cpu, cpus, target)" (fair.c v6.8
/// line 7440, and v6.2.1, v6.6) but "for_each_cpu_wrap(cpu, cpus, target + 1)" in
/// v6.3.8, v6.4.6 and v6.5. A task that fits nowhere takes the first idle CPU of the
/// largest capacity in walk order: target CPU4 itself, or CPU6 when the walk starts
/// after it.
#[test]
fn select_idle_capacity_starts_after_target_in_6_3_to_6_5() {
    let m = big_little();
    let mut s = SchedState::all_idle(8, |_| 8);
    for c in [0, 1, 2, 3, 5, 7] {
        s.rqs[c] = RqState::busy(1);
    }
    let mut p = task(1, 4, CpuMask::full(8));
    p.util = 1000;
    // Woken from an interrupt on the idle CPU4.
    let w = Waker {
        cpu: CpuId(4),
        task: None,
        in_task: false,
    };
    for (set, want) in [("6.2", 4), ("6.3", 6), ("6.5", 6), ("6.6", 4), ("6.8", 4)] {
        let d = wake_up(&env(&m, set), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
        assert_eq!(d.cpu, CpuId(want), "{set}");
    }
}

/// "unsigned long best_cap = 0; ... if ((fits < best_fits) || ((fits == best_fits) &&
/// (cpu_cap > best_cap)))" (fair.c v6.8 lines 7428, 7462-7463): an idle CPU whose
/// capacity_of() is 0 never becomes the best, and with no other idle CPU the function
/// returns -1, so select_idle_sibling() returns target.
#[test]
fn select_idle_capacity_never_picks_a_cpu_of_capacity_zero() {
    let m = big_little();
    let mut s = SchedState::all_idle(8, |_| 8);
    for c in [0, 1, 2, 3, 4, 5, 7] {
        s.rqs[c] = RqState::busy(1);
    }
    s.rqs[6].capacity = 0;
    let mut p = task(1, 4, CpuMask::full(8));
    p.util = 1000;
    let d = wake_up(
        &env(&m, "6.8"),
        &s,
        &p,
        &waker_task(4, 8),
        WakeFlags::NONE,
        &mut NoTrace,
    );
    assert_eq!(d.cpu, CpuId(4));
}

/// Before SD_ASYM_CPUCAPACITY_FULL, `update_top_cache_domain()` sets
/// "sd = lowest_flag_domain(cpu, SD_ASYM_CPUCAPACITY); rcu_assign_pointer(
/// per_cpu(sd_asym_cpucapacity, cpu), sd);" (topology.c v5.12.9; c744dc4ab58d made it
/// `SD_ASYM_CPUCAPACITY_FULL`), so on an asymmetric machine select_idle_sibling()
/// takes select_idle_capacity() in every release ("if (sd) { i =
/// select_idle_capacity(p, sd, target); return ...; }", fair.c v5.12.9 and v6.8 lines
/// 7567-7580). p (util 600) fits only the big CPUs: the capacity walk from target CPU0
/// skips the idle little CPU1 for the idle big CPU5, where an LLC scan would stop at
/// CPU1.
#[test]
fn asymmetric_machines_take_select_idle_capacity_before_asym_full() {
    let m = big_little();
    let s = big_little_state(&[0, 2, 3, 4, 6, 7]);
    let mut p = task(1, 0, CpuMask::full(8));
    p.util = 600;
    for set in ["5.12", "5.13", "5.14", "5.15", "5.16", "6.8"] {
        let e = env(&m, set);
        assert_eq!(
            e.domains.cpu(CpuId(0)).sd_asym_cpucapacity,
            Some(0),
            "{set}"
        );
        let mut t = wakeup::PathOnly;
        let d = wake_up(&e, &s, &p, &waker_task(0, 8), WakeFlags::NONE, &mut t);
        assert_eq!(
            (d.cpu, d.path),
            (CpuId(5), Some(WakePath::Capacity)),
            "{set}"
        );
    }
}

/// The slow path on an asymmetric machine: update_sg_wakeup_stats() marks a group
/// "group_misfit_task_load = 1" under SD_ASYM_CPUCAPACITY unless some CPU of it fits
/// p ("if (sd->flags & SD_ASYM_CPUCAPACITY && sgs->group_misfit_task_load &&
/// task_fits_cpu(p, i)) sgs->group_misfit_task_load = 0;", fair.c v6.8 lines
/// 10211-10238), and group_classify() makes it group_misfit_task, busier than
/// group_has_spare (lines 9768-9772, enum group_type lines 9189-9230). On exec p
/// (util 600) runs on the little CPU0; the little idle CPU1's group is misfit too, so
/// the idle big CPU5 is the idlest group, and the local group, of a busier type, gives
/// way to it ("if (local_sgs.group_type > idlest_sgs.group_type) return idlest;").
/// Every release from 5.12 (the rework of find_idlest_group() in 5.5 has it).
#[test]
fn exec_on_an_asymmetric_machine_leaves_groups_p_does_not_fit() {
    let m = big_little();
    let s = big_little_state(&[0, 2, 3, 4, 6, 7]);
    let mut p = task(1, 0, CpuMask::full(8));
    p.util = 600;
    let w = Waker {
        cpu: CpuId(0),
        task: Some(p.clone()),
        in_task: true,
    };
    for set in ["5.12", "6.5", "6.8", "6.12"] {
        let d = wake_up(&env(&m, set), &s, &p, &w, WakeFlags::EXEC, &mut NoTrace);
        assert_eq!(d.cpu, CpuId(5), "{set}");
    }
    // p fits the little CPUs: every group has spare capacity, and the local group,
    // idle without p, stays.
    p.util = 300;
    let d = wake_up(&env(&m, "6.8"), &s, &p, &w, WakeFlags::EXEC, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(0));
}

/// The explanation of select_idle_sibling()'s fast paths names asym_fits_cpu() ("if
/// ((available_idle_cpu(target) || sched_idle_cpu(target)) && asym_fits_cpu(task_util,
/// util_min, util_max, target)) return target;", fair.c v6.8 lines 7514-7516): the
/// idle little CPU0 is passed over because p (util 600) does not fit it, not because
/// it is busy.
#[test]
fn the_explanation_says_an_idle_target_did_not_fit() {
    let m = big_little();
    let s = big_little_state(&[2, 3, 4, 6, 7]);
    let mut p = task(1, 0, CpuMask::full(8));
    p.util = 600;
    let w = Waker {
        cpu: CpuId(0),
        task: None,
        in_task: false,
    };
    let mut t = wakeup::Trace::default();
    let d = wake_up(&env(&m, "6.8"), &s, &p, &w, WakeFlags::NONE, &mut t);
    assert_eq!(d.cpu, CpuId(5));
    let text = t.render(&d);
    assert!(
        text.contains("target CPU0 idle and p fits its capacity: no"),
        "{text}"
    );
}

/// Until ef8df9798d46 ("sched/fair: Cleanup task_util and capacity type", v5.17) the
/// fast paths' capacity test is "static inline bool asym_fits_capacity(int task_util,
/// int cpu) { ... return fits_capacity(task_util, capacity_of(cpu)); }" (fair.c
/// v5.12.9 line 6259): the unsigned long util is passed as an `int` and "(cap) * 1280"
/// (line 114) is an `int` product. p's util 2^32 + 100 reads as 100 there, which fits
/// the idle little target CPU0; from 5.17 it fits nowhere, and select_idle_capacity()
/// takes the idle CPU of the largest capacity, CPU5.
#[test]
fn asym_fits_capacity_takes_util_as_an_int_before_5_17() {
    let m = big_little();
    let s = big_little_state(&[1, 2, 3, 4, 6, 7]);
    let mut p = task(1, 0, CpuMask::full(8));
    p.util = (1 << 32) + 100;
    let w = Waker {
        cpu: CpuId(0),
        task: None,
        in_task: false,
    };
    for (set, want) in [("5.12", 0), ("5.16", 0), ("5.17", 5), ("6.8", 5)] {
        let d = wake_up(&env(&m, set), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
        assert_eq!(d.cpu, CpuId(want), "{set}");
    }
}
