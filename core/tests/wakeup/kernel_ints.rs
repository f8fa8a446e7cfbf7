//! The kernel's integer widths where they decide: `unsigned int` products and
//! counters that wrap (wake_wide(), record_wakee()), select_idle_cpu()'s `int` budget,
//! wake_affine_weight()'s `s64` loads.

use schedlab_core::wakeup::{wake_up, Step, TaskId, Trace};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{cpu, decide, resolve};

/// kernel/sched/fair.c (v6.8), wake_wide() lines 6985-6996: `master` and `slave`
/// are `unsigned int` and `factor` (sd_llc_size, 16 on an EPYC 9654 CCX) converts to
/// `unsigned int`, so `slave * factor` = 2^28 * 16 wraps to 0: `master < 0` is false
/// and the wake-up goes wide. want_affine is then false, the domain walk breaks at
/// the first level, and select_idle_sibling(p, prev, prev) finds nothing idle: prev
/// (CPU 8, another CCX) it is. Without the wrap (a saturating product) wake_wide()
/// says no and the sync wake_affine_idle() pulls p to the waker's CPU 0.
#[test]
fn wake_wide_multiplies_flips_as_unsigned_int_and_wraps() {
    let s = r#"{ "machine": "epyc9654-2p", "patches": "6.8",
                 "cpus": [ { "cpus": "0-383", "state": "busy" } ],
                 "wakee": { "id": 1, "prev_cpu": 8, "wakee_flips": 268435456 },
                 "waker": { "cpu": 0, "task": { "id": 2, "wakee_flips": 268435456, "last_wakee": 1 } },
                 "wake_flags": ["sync"] }"#;
    let (d, t) = decide(s, "6.8");
    assert_eq!(d.cpu.0, 8, "{}", t.render(&d));
    assert!(t.steps.iter().any(|s| matches!(
        s,
        Step::Check {
            func: "wake_wide",
            outcome: true,
            ..
        }
    )));
    // record_wakee() left the waker's flips alone (same last_wakee, no decay).
    assert_eq!(d.effects.waker_wakee.map(|w| w.0), Some(268435456));
    // One flip less on each side: 2^28 - 1 times 16 does not wrap, and 2^28 - 1 <
    // 2^32 - 16: wake_wide() says no, the sync wake-up pulls to the waker.
    let s = s.replace("268435456", "268435455");
    assert_eq!(cpu(&s, "6.8"), 0);
}

/// kernel/sched/fair.c (v6.8), record_wakee() lines 6951-6966: `wakee_flips` is
/// `unsigned int`, so `current->wakee_flips++` wraps to 0; `time_after(jiffies,
/// decay_ts + HZ)` is a signed difference of `unsigned long`s.
#[test]
fn record_wakee_wraps_the_flip_count_and_uses_time_after() {
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" } ],
                 "wakee": { "id": 1, "prev_cpu": 5 },
                 "waker": { "cpu": 0, "task": { "id": 2, "wakee_flips": 4294967295, "last_wakee": 3 } } }"#;
    let (d, _) = decide(s, "6.8");
    assert_eq!(d.effects.waker_wakee, Some((0, 0, TaskId(1))));
    // decay_ts far ahead of jiffies (0): decay_ts + HZ wraps past 2^64, and
    // time_after() still says jiffies is before it: no decay.
    let s = s.replace(
        r#""last_wakee": 3"#,
        r#""last_wakee": 1, "wakee_flip_decay_ts": 18446744073709551615"#,
    );
    let (d, _) = decide(&s, "6.8");
    assert_eq!(
        d.effects.waker_wakee,
        Some((4294967295, u64::MAX, TaskId(1)))
    );
}

/// kernel/sched/fair.c (v6.8), select_idle_cpu() line 7368: `nr =
/// READ_ONCE(sd_share->nr_idle_scan) + 1` in `int`. An nr_idle_scan whose bits read
/// as -1 gives nr = 0, not 1: no early return, but the first `--nr <= 0` (line 7406)
/// ends the scan before any probe.
#[test]
fn sis_util_budget_is_an_int() {
    // A state file may not hold such a value (nr_idle_scan is at most the LLC's
    // size there), so the state is set directly: the decision path still mirrors the
    // kernel's int arithmetic for whatever the state holds.
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "9", "state": "idle" } ],
                 "wakee": { "id": 1, "prev_cpu": 5 }, "waker": { "cpu": 0, "task": { "id": 2 } },
                 "wake_flags": ["sync"] }"#;
    let mut r = resolve(s, "6.8");
    for sh in &mut r.state.llc_shared {
        sh.nr_idle_scan = u32::MAX;
    }
    let mut t = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    assert_eq!(d.costs.cpus_probed, 0, "{}", t.render(&d));
    assert_eq!(d.cpu.0, 0);
}

/// kernel/sched/fair.c (v6.8), wake_affine_weight() lines 7037-7078: the effective
/// loads are `s64` and every step wraps (-fno-strict-overflow; the `unsigned long`
/// operands make some steps `u64`, with the same bits). this_eff_load = (2^55 + 1024)
/// × 100 × 1024 = 25 × 2^67 + 104857600 ≡ 104857600 (mod 2^64); prev_eff_load =
/// (2048 - 1024) × 108 × 1024 = 113246208 (imbalance_pct 117: 100 + 17 / 2). The
/// wrapped product is the smaller: the kernel pulls p to the waker.
#[test]
fn wake_affine_weight_wraps_like_the_kernels_s64() {
    // Past what a state file accepts (a CPU's load is bounded there), so set directly.
    let s = r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" },
                   { "cpus": "5", "load": 2048 } ],
                 "wakee": { "id": 1, "prev_cpu": 5 }, "waker": { "cpu": 0, "task": { "id": 2 } } }"#;
    let mut r = resolve(s, "6.8");
    r.state.rqs[0].load_avg = 1 << 55;
    let mut t = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    assert!(
        t.render(&d)
            .contains("this_eff_load 104857600 < prev_eff_load 113246208"),
        "{}",
        t.render(&d)
    );
    assert_eq!(d.cpu.0, 0);
}
