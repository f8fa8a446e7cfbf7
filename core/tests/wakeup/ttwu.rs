//! kernel/sched/core.c's side of a wake-up: ttwu_queue_cond() (LLC or L2 sharing, the
//! wakelist and its IPI), and select_task_rq()'s select_fallback_rq() when the chosen
//! CPU is not allowed.

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::patch::PatchSet;
use schedlab_core::topology::presets;
use schedlab_core::wakeup::{self, QueuePath, RqState, SchedState, TaskId, TaskState, WakeEnv};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::decide;

#[test]
fn ttwu_queue_cond_llc_versus_l2_sharing() {
    // EPYC: CPUs 0 and 1 share the CCX L3 but not an L2 (L2 per core).
    let m = presets::machine("epyc9654-2p").unwrap();
    let base: PatchSet = "6.8".parse().unwrap();
    let l2c: PatchSet = "6.8+ttwu-l2c".parse().unwrap();
    let env = WakeEnv::new(&m, base).unwrap();
    let env_l2c = WakeEnv::new(&m, l2c).unwrap();
    let mut s = SchedState::all_idle(m.nr_cpus(), |_| 16);
    s.rqs[1] = RqState::busy(1);
    let p = TaskState::new(TaskId(1), CpuId(1), CpuMask::full(m.nr_cpus()));
    // Busy target in the same LLC: the waker locks the remote rq...
    assert!(!wakeup::ttwu_queue_cond(&env, &s, &p, CpuId(0), CpuId(1)));
    // ...unless they must share an L2 (seed 03): then the wakelist and an IPI.
    assert!(wakeup::ttwu_queue_cond(
        &env_l2c,
        &s,
        &p,
        CpuId(0),
        CpuId(1)
    ));
    // SMT siblings share the L2: no IPI either way.
    s.rqs[192] = RqState::busy(1);
    assert!(!wakeup::ttwu_queue_cond(
        &env_l2c,
        &s,
        &p,
        CpuId(0),
        CpuId(192)
    ));
    // Another CCX: always the wakelist.
    s.rqs[8] = RqState::busy(1);
    assert!(wakeup::ttwu_queue_cond(&env, &s, &p, CpuId(0), CpuId(8)));
    // Idle target in the same LLC: wakelist (v5.19+).
    assert!(wakeup::ttwu_queue_cond(&env, &s, &p, CpuId(0), CpuId(2)));
}

#[test]
fn wakelist_without_ipi_when_the_target_polls() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "5", "state": "idle", "polling": true } ],
                 "wakee": { "id": 1, "prev_cpu": 5 }, "waker": { "cpu": 0, "task": { "id": 2 } } }"#;
    let (d, _) = decide(s, "6.8");
    assert_eq!(d.cpu.0, 5);
    assert_eq!(d.queue, QueuePath::Wakelist { ipi: false });
    let (d, _) = decide(&s.replace("\"polling\": true", "\"polling\": false"), "6.8");
    assert_eq!(d.queue, QueuePath::Wakelist { ipi: true });
}

/// EPYC 9654 NPS1: one node per socket holds 12 LLCs (CCX 40-47 holds prev 43 and
/// CPU 40). Every CPU busy; p may run on CPUs 0 and 40 only; the waker runs on prev.
fn fallback_case(machine: &str, allowed: &str, extra: &str) -> String {
    format!(
        r#"{{ "machine": "{machine}", "patches": "6.8",
             "cpus": [ {{ "cpus": "0-{last}", "state": "busy" }}{extra} ],
             "wakee": {{ "id": 1, "prev_cpu": 43, "allowed": "{allowed}" }},
             "waker": {{ "cpu": 43, "task": {{ "id": 2 }} }} }}"#,
        last = if machine == "epyc9654-1p" { 191 } else { 383 },
    )
}

/// kernel/sched/core.c (v6.8), select_task_rq() lines 3655-3656 and
/// select_fallback_rq() lines 3561-3630. select_task_rq_fair() cannot pull to the
/// waker's CPU 43 (not allowed), select_idle_sibling(p, 43, 43) finds nothing idle
/// (nr_idle_scan is 0) and returns 43, which is_cpu_allowed() rejects; then
/// select_fallback_rq(43, p) walks `cpumask_of_node(cpu_to_node(43))` (lines
/// 3573-3581) from CPU 0, not prev's LLC, and CPU 0 is allowed and active: it wins over
/// CPU 40 although 40 shares prev's L3. CPU 0 shares no cache with the waker, so
/// ttwu_queue_cond() (line 3997: "!cpus_share_cache(smp_processor_id(), cpu)")
/// queues it on CPU 0's wakelist with an IPI; CPU 40 would have taken the remote rq
/// lock.
#[test]
fn select_fallback_rq_tries_prevs_node_before_its_llc() {
    for machine in ["epyc9654-2p", "epyc9654-1p"] {
        let (d, t) = decide(&fallback_case(machine, "0,40", ""), "6.8");
        assert_eq!(d.cpu.0, 0, "{machine}: {}", t.render(&d));
        assert_eq!(d.queue, QueuePath::Wakelist { ipi: true }, "{machine}");
        assert!(
            t.render(&d).contains("first allowed CPU of prev's node"),
            "{}",
            t.render(&d)
        );
    }
}

/// select_fallback_rq() (kernel/sched/core.c v6.8): past prev's node, lines 3583-3590
/// take the first allowed CPU that is_cpu_allowed() (line 2479: a user task needs
/// cpu_active()); with none, lines 3592-3613 widen p's mask (cpuset, then
/// cpu_possible_mask) and take the first active CPU.
#[test]
fn select_fallback_rq_then_any_allowed_cpu_then_any_active_cpu() {
    // Node 1 of the 2P (CPUs 96-191, 288-383): nothing allowed on prev's node 0.
    let (d, _) = decide(&fallback_case("epyc9654-2p", "100,300", ""), "6.8");
    assert_eq!(d.cpu.0, 100);
    // CPU 0 is going down (not active): the node walk passes it for CPU 40.
    let inactive0 = r#", { "cpus": "0", "active": false }"#;
    let (d, _) = decide(&fallback_case("epyc9654-2p", "0,40", inactive0), "6.8");
    assert_eq!(d.cpu.0, 40);
    // Neither allowed CPU active: affinity is broken, the first active CPU takes it.
    let both = r#", { "cpus": "0,40", "active": false }"#;
    let (d, t) = decide(&fallback_case("epyc9654-2p", "0,40", both), "6.8");
    assert_eq!(d.cpu.0, 1);
    assert!(
        t.render(&d).contains("affinity widened"),
        "{}",
        t.render(&d)
    );
}

/// `__smp_call_single_queue()` sends no IPI when the call-single list was not empty
/// ("if (llist_add(node, &per_cpu(call_single_queue, cpu))) send_call_function_single_ipi(cpu);",
/// kernel/smp.c), which `rq->ttwu_pending` stands for; only an empty list and a
/// polling idle task skip it by `set_nr_if_polling()` (core.c). The explanation says
/// which: a busy CPU8 of another CCX with a wake-up already pending is not "idle
/// polling".
#[test]
fn a_pending_wakelist_is_not_explained_as_idle_polling() {
    let s = r#"{ "machine": "epyc9654-1p",
                 "cpus": [ { "cpus": "0-191", "state": "busy" },
                           { "cpus": "8", "ttwu_pending": true } ],
                 "wakee": { "id": 1, "prev_cpu": 8, "allowed": "8" },
                 "waker": { "cpu": 0 } }"#;
    let (d, t) = decide(s, "6.8");
    assert_eq!(
        (d.cpu, d.queue),
        (CpuId(8), QueuePath::Wakelist { ipi: false })
    );
    let text = t.render(&d);
    assert!(!text.contains("idle polling"), "{text}");
    assert!(text.contains("wakelist already pending"), "{text}");
}
