//! The wake-up path where a release's kernel code differs from v6.8's (session 15's
//! audit against the v5.12.9, v5.14, v5.15, v5.17, v5.19, v6.0.1, v6.2.1, v6.3.8,
//! v6.4.6, v6.5, v6.6, v6.8 and v6.12.19 sources): each test states the kernel lines
//! it follows and a state on which the releases decide differently.
//!
//! By kernel function: this file the helpers, `ttwu_queue_cond()` and
//! `select_fallback_rq()` (core.c), `select_idle_sibling()`'s fast paths and
//! `select_task_rq_fair()`; idle_cpu.rs `select_idle_cpu()` and `select_idle_core()`;
//! capacity.rs asymmetric capacity (`select_idle_capacity()`, `asym_fits_cpu()`, the
//! slow path's misfit groups).

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

mod capacity;
mod idle_cpu;

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

// ---- ttwu_queue_cond(), select_fallback_rq() ----

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
