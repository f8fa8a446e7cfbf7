//! The wake-up path where a release's kernel code differs from v6.8's (session 15's
//! audit against the v5.12.9, v5.14, v5.15, v5.17, v5.19, v6.0.1, v6.2.1, v6.3.8,
//! v6.4.6, v6.5, v6.6, v6.8 and v6.12.19 sources): each test states the kernel lines
//! it follows and a state on which the releases decide differently.

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::topology::presets;
use schedlab_core::topology::{Arch, CpuSpec, MachineSpec, Numbering};
use schedlab_core::wakeup::{
    self, wake_up, NoTrace, QueuePath, RqState, SchedState, TaskId, TaskState, WakeEnv, WakeFlags,
    WakePath, Waker,
};
use schedlab_core::Machine;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn env(m: &Machine, set: &str) -> WakeEnv {
    WakeEnv::new(m, set.parse().unwrap()).unwrap()
}

fn task(id: u32, prev: u32, allowed: CpuMask) -> TaskState {
    TaskState::new(TaskId(id), CpuId(prev), allowed)
}

fn waker_task(cpu: u32, n: u32) -> Waker {
    Waker {
        cpu: CpuId(cpu),
        task: Some(task(2, cpu, CpuMask::full(n))),
        in_task: true,
    }
}

/// flat-16 with every CPU busy (one task each) but those in `idle`.
fn flat_busy_but(idle: &[u32]) -> (Machine, SchedState) {
    let m = presets::machine("flat-16").unwrap();
    let mut s = SchedState::all_idle(16, |_| 16);
    for c in 0..16 {
        if !idle.contains(&c) {
            s.rqs[c as usize] = RqState::busy(1);
        }
    }
    (m, s)
}

// ---- ttwu_queue_cond() ----

/// v5.12-v5.19 `ttwu_queue_cond(cpu, wake_flags)` (core.c v5.19): "if
/// (!cpus_share_cache(smp_processor_id(), cpu)) return true; if ((wake_flags &
/// WF_ON_CPU) && cpu_rq(cpu)->nr_running <= 1) return true; return false;". The idle-
/// target rule "if (!cpu_rq(cpu)->nr_running) return true;" (core.c v6.8 mirror line 4020,
/// 28156108fecb) and the `p->cpus_ptr` test (line 3996) came in v6.0.
#[test]
fn ttwu_queue_cond_idle_target_and_affinity_tests_arrive_in_6_0() {
    let m = presets::machine("epyc9654-2p").unwrap();
    let n = m.nr_cpus();
    let mut s = SchedState::all_idle(n, |_| 16);
    s.rqs[0] = RqState::busy(1);
    let p = task(1, 1, CpuMask::full(n));
    // CPU2 idle, same CCX as the waker on CPU0.
    assert!(!wakeup::ttwu_queue_cond(
        &env(&m, "5.19"),
        &s,
        &p,
        CpuId(0),
        CpuId(2)
    ));
    assert!(wakeup::ttwu_queue_cond(
        &env(&m, "6.0"),
        &s,
        &p,
        CpuId(0),
        CpuId(2)
    ));
    // CPU8 (another CCX) outside p's affinity: 5.19 does not look at p->cpus_ptr.
    let mut allowed = CpuMask::full(n);
    allowed.clear_cpu(CpuId(8));
    let p = task(1, 1, allowed);
    assert!(wakeup::ttwu_queue_cond(
        &env(&m, "5.19"),
        &s,
        &p,
        CpuId(0),
        CpuId(8)
    ));
    assert!(!wakeup::ttwu_queue_cond(
        &env(&m, "6.0"),
        &s,
        &p,
        CpuId(0),
        CpuId(8)
    ));
}

/// Before 6.0 only try_to_wake_up()'s on_cpu call passes WF_ON_CPU: "if
/// (smp_load_acquire(&p->on_cpu) && ttwu_queue_wakelist(p, task_cpu(p), wake_flags |
/// WF_ON_CPU)) goto unlock;" ... "ttwu_queue(p, cpu, wake_flags);" (core.c v5.15
/// try_to_wake_up()). p on_cpu on a busy CPU1 is not queued there; the selected idle
/// CPU2 of the same LLC then gets a plain remote-lock wake-up, not the wakelist.
#[test]
fn wf_on_cpu_only_on_the_on_cpu_call_before_6_0() {
    let (m, mut s) = flat_busy_but(&[2]);
    s.rqs[1] = RqState::busy(3);
    let mut p = task(1, 1, CpuMask::full(16));
    p.on_cpu = true;
    let w = waker_task(0, 16);
    let d = wake_up(&env(&m, "5.15"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(2));
    assert_eq!(d.queue, QueuePath::RemoteLock);
    // 6.0: the idle target takes the wakelist.
    let d = wake_up(&env(&m, "6.0"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(2));
    assert!(matches!(d.queue, QueuePath::Wakelist { .. }));
}

/// select_fallback_rq()'s last resort widens `p->cpus_ptr` ("do_set_cpus_allowed(p,
/// task_cpu_possible_mask(p))", core.c v6.8 mirror line 3613, after
/// cpuset_cpus_allowed_fallback()); ttwu_queue_cond() then tests the widened mask
/// ("if (!cpumask_test_cpu(cpu, p->cpus_ptr)) return false;", line 3996). p may run
/// only on CPU9, which is not active: it lands on CPU0, another CCX than the waker's
/// CPU16, so on the wakelist.
#[test]
fn a_widened_affinity_passes_ttwu_queue_conds_affinity_test() {
    let m = presets::machine("epyc9654-2p").unwrap();
    let n = m.nr_cpus();
    let mut s = SchedState::all_idle(n, |_| 16);
    s.rqs[9].active = false;
    s.rqs[16] = RqState::busy(1);
    let mut only9 = CpuMask::new(n);
    only9.set_cpu(CpuId(9));
    let p = task(1, 9, only9);
    let d = wake_up(
        &env(&m, "6.8"),
        &s,
        &p,
        &waker_task(16, n),
        WakeFlags::NONE,
        &mut NoTrace,
    );
    assert_eq!(d.cpu, CpuId(0));
    assert!(
        matches!(d.queue, QueuePath::Wakelist { .. }),
        "{:?}",
        d.queue
    );
}

// ---- select_idle_sibling() ----

/// The per-CPU kthread test before 5.16 has neither in_task() nor the capacity test:
/// "if (is_per_cpu_kthread(current) && prev == smp_processor_id() &&
/// this_rq()->nr_running <= 1) return prev;" (fair.c v5.15); v6.8 (lines 7540-7545)
/// adds "in_task() &&". A kworker's CPU3 woken from an interrupt: 5.15 stacks the
/// wakee on CPU3, 6.8 finds the idle CPU4.
#[test]
fn per_cpu_kthread_stacking_ignores_interrupt_context_before_5_16() {
    let (m, s) = flat_busy_but(&[4]);
    let mut kworker = task(2, 3, CpuMask::new(16));
    kworker.allowed.set_cpu(CpuId(3));
    kworker.per_cpu_kthread = true;
    let w = Waker {
        cpu: CpuId(3),
        task: Some(kworker),
        in_task: false,
    };
    let p = task(1, 3, CpuMask::full(16));
    let d = wake_up(&env(&m, "5.15"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(3));
    let d = wake_up(&env(&m, "6.8"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(4));
}

/// Before 5.15 p->recent_used_cpu becomes prev only when it is returned ("p->recent_used_cpu
/// = prev; return recent_used_cpu;" inside the test, fair.c v5.14), and the affine
/// fast path ends with "if (want_affine) current->recent_used_cpu = cpu;". From 5.15
/// "p->recent_used_cpu = prev;" runs before the test (v6.8 line 7550).
#[test]
fn recent_used_cpu_writes_before_5_15() {
    let (m, s) = flat_busy_but(&[]);
    let mut p = task(1, 2, CpuMask::full(16));
    p.recent_used_cpu = CpuId(5);
    let w = waker_task(0, 16);
    let d = wake_up(&env(&m, "5.14"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.effects.recent_used_cpu, None);
    assert_eq!(d.effects.waker_recent_used_cpu, Some(CpuId(0)));
    let d = wake_up(&env(&m, "5.15"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.effects.recent_used_cpu, Some(CpuId(2)));
    assert_eq!(d.effects.waker_recent_used_cpu, None);
    // 5.14, recent_used_cpu idle and returned: then it is written.
    let (_, s) = flat_busy_but(&[5]);
    let d = wake_up(&env(&m, "5.14"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(5));
    assert_eq!(d.effects.recent_used_cpu, Some(CpuId(2)));
}

/// 5.15 to 6.4 test the affinity of `p->recent_used_cpu` after setting it to prev:
/// "recent_used_cpu = p->recent_used_cpu; p->recent_used_cpu = prev; if (... &&
/// cpumask_test_cpu(p->recent_used_cpu, p->cpus_ptr) && ...)" (fair.c v5.15, v6.4.6),
/// so prev's affinity decides; 6.5 tests recent_used_cpu (v6.8 line 7555). p may not
/// run on its prev CPU2 (the waker's); recent CPU5 is idle; the SIS_UTIL budget (one
/// probe) does not reach it.
#[test]
fn recent_used_cpu_affinity_is_prevs_from_5_15_to_6_4() {
    let (m, mut s) = flat_busy_but(&[5]);
    s.llc_shared[0].nr_idle_scan = 1;
    let mut allowed = CpuMask::full(16);
    allowed.clear_cpu(CpuId(2));
    let mut p = task(1, 2, allowed);
    p.recent_used_cpu = CpuId(5);
    let w = waker_task(2, 16);
    let d = wake_up(&env(&m, "6.5"), &s, &p, &w, WakeFlags::NONE, &mut NoTrace);
    assert_eq!(d.cpu, CpuId(5));
    // 6.4: recent rejected, nothing found, target CPU2 is not allowed: the fallback.
    let mut t = wakeup::PathOnly;
    let d = wake_up(&env(&m, "6.4"), &s, &p, &w, WakeFlags::NONE, &mut t);
    assert_eq!(d.path, Some(WakePath::Fallback));
    assert_eq!(d.cpu, CpuId(0));
}

// ---- select_idle_capacity() ----

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

// ---- select_idle_cpu() ----

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

// ---- select_task_rq_fair() ----

/// WF_CURRENT_CPU (0x40) exists from 6.6 (ab83f455f04d); in 5.12-5.19 the bit is
/// WF_ON_CPU and select_task_rq_fair() does not look at it.
#[test]
fn wf_current_cpu_is_only_honoured_from_6_6() {
    let (m, s) = flat_busy_but(&[5]);
    let p = task(1, 5, CpuMask::full(16));
    let w = waker_task(0, 16);
    let d = wake_up(
        &env(&m, "6.6"),
        &s,
        &p,
        &w,
        WakeFlags::CURRENT_CPU,
        &mut NoTrace,
    );
    assert_eq!(d.cpu, CpuId(0));
    let d = wake_up(
        &env(&m, "6.5"),
        &s,
        &p,
        &w,
        WakeFlags::CURRENT_CPU,
        &mut NoTrace,
    );
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

/// select_fallback_rq()'s first loop, over prev's node, is "if (!cpu_active(dest_cpu))
/// continue; if (cpumask_test_cpu(dest_cpu, p->cpus_ptr)) return dest_cpu;" until 5.14
/// (core.c v5.12.9 lines 2742-2748); 97c0054dbe2c ("sched: Introduce
/// task_cpu_possible_mask() to limit fallback rq selection", v5.15) made it "if
/// (is_cpu_allowed(p, dest_cpu)) return dest_cpu;" (core.c v6.8 lines 3582-3586),
/// which lets a per-CPU kthread onto an online CPU that is not active. p (a per-CPU
/// kthread allowed CPUs 1 and 2, last on CPU5) comes back from select_task_rq_fair()
/// with CPU5; CPU1 is online but not active.
#[test]
fn fallback_node_loop_wants_an_active_cpu_before_5_15() {
    let (m, mut s) = flat_busy_but(&[]);
    s.rqs[1].active = false;
    let mut allowed = CpuMask::new(16);
    allowed.set_cpu(CpuId(1));
    allowed.set_cpu(CpuId(2));
    let mut p = task(1, 5, allowed);
    p.per_cpu_kthread = true;
    let w = waker_task(0, 16);
    for (set, want) in [("5.12", 2), ("5.14", 2), ("5.15", 1), ("6.8", 1)] {
        let mut t = wakeup::PathOnly;
        let d = wake_up(&env(&m, set), &s, &p, &w, WakeFlags::NONE, &mut t);
        assert_eq!(
            (d.cpu, d.path),
            (CpuId(want), Some(WakePath::Fallback)),
            "{set}"
        );
    }
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
