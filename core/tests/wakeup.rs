//! Hand-built wake-ups for every branch of select_idle_sibling() under each patch,
//! and property tests of the wake-up path.
//!
//! ```text
//!  wakeup.rs                 the shared helpers, the random states, the property tests
//!  wakeup/idle_sibling.rs    select_idle_sibling(), select_idle_cpu() and their budgets
//!  wakeup/idlest.rs         the slow path: find_idlest_cpu(), find_idlest_group() and below
//!  wakeup/sis_prop.rs        SIS_PROP (before 6.7)
//!  wakeup/ttwu.rs            ttwu_queue_cond(), select_fallback_rq()
//!  wakeup/kernel_ints.rs     the kernel's integer widths where they decide
//!  wakeup/releases/          where a release's code differs from v6.8's
//!  wakeup/transcript_68.rs   v6.8's placement transcribed again, against the model
//!  wakeup/transcript_612.rs  v6.12's, with core.c's queueing decision (shared with 5.12)
//!  wakeup/transcript_512.rs  v5.12.0's placement and queueing
//!  wakeup/transcript_idlest.rs  the slow path of a fork and an exec (v6.8, v6.12, v5.12)
//!  wakeup/state_files.rs     `schedlab wake --state` files
//! ```

use proptest::prelude::*;
use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::topology::presets;
use schedlab_core::wakeup::scenario::{ResolvedWake, WakeScenario};
use schedlab_core::wakeup::{
    self, code, wake_up, Decision, NoTrace, PathOnly, RqState, SchedState, TaskId, TaskState,
    Trace, WakeEnv, WakeFlags, Waker,
};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

// The hand-built cases, by kernel function family, are in wakeup/; this file keeps
// the shared helpers and the property tests (so their regressions file,
// wakeup.proptest-regressions beside it, is still the one proptest reads).
#[path = "wakeup/idle_sibling.rs"]
mod idle_sibling;
#[path = "wakeup/idlest.rs"]
mod idlest;
#[path = "wakeup/kernel_ints.rs"]
mod kernel_ints;
#[path = "wakeup/releases/mod.rs"]
mod releases;
#[path = "wakeup/sis_prop.rs"]
mod sis_prop;
#[path = "wakeup/state_files.rs"]
mod state_files;
#[path = "wakeup/transcript_512.rs"]
mod transcript_512;
#[path = "wakeup/transcript_612.rs"]
mod transcript_612;
#[path = "wakeup/transcript_68.rs"]
mod transcript_68;
#[path = "wakeup/transcript_idlest.rs"]
mod transcript_idlest;
#[path = "wakeup/ttwu.rs"]
mod ttwu;

fn resolve(json: &str, patches: &str) -> ResolvedWake {
    WakeScenario::from_json(json)
        .unwrap()
        .resolve(Some(patches))
        .unwrap()
}

fn decide(json: &str, patches: &str) -> (Decision, Trace) {
    let r = resolve(json, patches);
    let mut t = Trace::default();
    let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
    (d, t)
}

fn cpu(json: &str, patches: &str) -> u32 {
    decide(json, patches).0.cpu.0
}

/// Kunpeng 920-6426 node 0 (8 clusters of 4). The waker runs on CPU0; the wakee last
/// ran on CPU12 (cluster 12-15) and CPU12 is idle.
fn prev_in_other_cluster(idle_in_target_cluster: bool, nr_idle_scan: Option<u32>) -> String {
    let extra = if idle_in_target_cluster {
        r#", { "cpus": "2", "state": "idle" }"#
    } else {
        ""
    };
    let llc = nr_idle_scan.map_or(String::new(), |n| {
        format!(r#", "llc": [ {{ "cpu": 0, "nr_idle_scan": {n} }} ]"#)
    });
    format!(
        r#"{{ "machine": "kunpeng920-6426",
             "cpus": [ {{ "cpus": "0-127", "state": "busy" }}, {{ "cpus": "12", "state": "idle" }}{extra} ]{llc},
             "wakee": {{ "id": 1, "prev_cpu": 12, "allowed": "0-31" }},
             "waker": {{ "cpu": 0, "task": {{ "id": 2 }} }},
             "wake_flags": ["sync"] }}"#
    )
}

// ---- properties ----

const PRESETS: [&str; 6] = [
    "kunpeng920-4826",
    "jacobsville",
    "xeon-smt-8",
    "flat-16",
    "epyc9654-1p",
    // SMT cores and clusters in one LLC: the cluster scan meets has_idle_cores.
    "alderlake-8p8e",
];
const SETS: [&str; 9] = [
    "6.6",
    "6.6+cluster",
    "6.6+cluster-scan",
    "6.8",
    "6.8+cookie-fastpath+ttwu-l2c",
    "6.12",
    "5.15",
    "6.6-no-smt-idle-cores",
    "6.6+cluster-no-smt-idle-cores",
];

prop_compose! {
    fn random_wakeup()(
        preset in 0usize..PRESETS.len(),
        set in 0usize..SETS.len(),
        seed in any::<u64>(),
        busy_pct in 0u64..=100,
        sync in any::<bool>(),
        restrict in any::<bool>(),
    ) -> (usize, usize, u64, u64, bool, bool) {
        (preset, set, seed, busy_pct, sync, restrict)
    }
}

/// Domains are built once per (preset, patch set): building them per case would
/// dominate the test's time.
fn env_for(preset: usize, set: usize) -> &'static WakeEnv {
    use std::sync::OnceLock;
    static ENVS: OnceLock<Vec<Vec<WakeEnv>>> = OnceLock::new();
    &ENVS.get_or_init(|| build_envs(&SETS))[preset][set]
}

/// The wake-up environment of every preset in `PRESETS` under each of `sets`
/// (indexed `[preset][set]`), for the property tests' caches.
fn build_envs(sets: &[&str]) -> Vec<Vec<WakeEnv>> {
    PRESETS
        .iter()
        .map(|name| {
            let m = presets::machine(name).unwrap();
            sets.iter()
                .map(|s| WakeEnv::new(&m, s.parse().unwrap()).unwrap())
                .collect()
        })
        .collect()
}

mod common;

/// `n` cases, or `PROPTEST_CASES` when set (an explicit `cases` in a config
/// otherwise overrides it): for one-off long runs of the transcriptions.
fn cases_or(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n)
}

/// The crate's PRNG with the name the random states below draw through.
struct Draws(schedlab_core::rng::Rng);
impl Draws {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
}

fn random_state(
    env: &WakeEnv,
    seed: u64,
    busy_pct: u64,
    restrict: bool,
) -> (SchedState, TaskState, Waker) {
    let n = env.nr_cpus();
    let mut r = Draws(common::rng(seed));
    let mut s = SchedState::all_idle(n, |_| 0);
    s.core_sched_enabled = r.next().is_multiple_of(4);
    for c in 0..n as usize {
        if r.next() % 100 < busy_pct {
            s.rqs[c] = RqState::busy(1 + (r.next() % 3) as u32);
        }
        if r.next().is_multiple_of(10) {
            s.rqs[c].ttwu_pending = true;
        }
        s.rqs[c].core_cookie = r.next() % 3;
    }
    for c in env.domains.cpu_map.iter() {
        if env.llc_shared_of(c) == Some(c) {
            let sum: u64 = env
                .domains
                .cpu(c)
                .llc()
                .unwrap()
                .span
                .iter()
                .map(|o| s.rqs[o.idx()].util_avg)
                .sum();
            s.llc_shared[c.idx()].nr_idle_scan = wakeup::update_idle_cpu_scan(env, c, sum);
            s.llc_shared[c.idx()].has_idle_cores = r.next().is_multiple_of(2);
        }
    }
    let allowed = if restrict {
        let a = CpuMask::from_cpus(n, (0..n).filter(|_| r.next().is_multiple_of(2)).map(CpuId));
        if a.is_empty() {
            CpuMask::of(n, CpuId((r.next() % n as u64) as u32))
        } else {
            a
        }
    } else {
        CpuMask::full(n)
    };
    let mut p = TaskState::new(TaskId(1), CpuId((r.next() % n as u64) as u32), allowed);
    p.recent_used_cpu = CpuId((r.next() % n as u64) as u32);
    p.wakee_flips = (r.next() % 64) as u32;
    p.cookie = r.next() % 3;
    let mut cur = TaskState::new(TaskId(2), CpuId(0), CpuMask::full(n));
    cur.wakee_flips = (r.next() % 64) as u32;
    let waker = Waker {
        cpu: CpuId((r.next() % n as u64) as u32),
        task: Some(cur),
        in_task: true,
    };
    (s, p, waker)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn wakeups_are_allowed_deterministic_and_bounded(w in random_wakeup()) {
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (s, p, waker) = random_state(env, seed, busy_pct, restrict);
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let mut t = Trace::default();
        let d = wake_up(env, &s, &p, &waker, flags, &mut t);
        prop_assert!(p.allowed.test_cpu(d.cpu), "seed {seed}: CPU{} not allowed ({})", d.cpu.0, p.allowed);
        // Deterministic, and tracing does not change the answer.
        let d2 = wake_up(env, &s, &p, &waker, flags, &mut PathOnly);
        prop_assert_eq!(&d, &d2);
        // Rendering never panics.
        let _ = t.render(&d);
        let _ = serde_json::to_string(&t).unwrap();
    }

    #[test]
    fn every_step_of_a_decision_has_its_line_in_the_listing(
        w in random_wakeup(), on_cpu in any::<bool>(), kthread in any::<bool>()
    ) {
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (s, mut p, mut waker) = random_state(env, seed, busy_pct, restrict);
        p.on_cpu = on_cpu && seed % 3 == 0;
        if kthread {
            // A per-CPU kthread waking on prev: select_idle_sibling()'s stacking case.
            waker.cpu = p.prev_cpu;
            if let Some(t) = &mut waker.task {
                t.per_cpu_kthread = true;
            }
        }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let mut t = Trace::default();
        let _ = wake_up(env, &s, &p, &waker, flags, &mut t);
        let hits = code::hits(&t);
        prop_assert!(hits.is_ok(), "{} on {}: {}", SETS[set], PRESETS[preset], hits.unwrap_err());
        let listing = code::listing(&env.patches);
        for (_, site) in hits.unwrap() {
            let line = code::line_site(site);
            prop_assert!(
                listing.iter().any(|l| l.site == Some(line)),
                "{} on {}: the listing has no line for {site:?}", SETS[set], PRESETS[preset]
            );
        }
    }

    #[test]
    fn with_nothing_idle_the_result_is_target_prev_or_fallback(
        preset in 0usize..PRESETS.len(), set in 0usize..SETS.len(), seed in any::<u64>(), sync in any::<bool>()
    ) {
        let env = env_for(preset, set);
        let (mut s, p, waker) = random_state(env, seed, 100, false);
        for rq in &mut s.rqs { *rq = RqState::busy(2); }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let mut t = Trace::default();
        let d = wake_up(env, &s, &p, &waker, flags, &mut t);
        // select_idle_sibling() was called with target = waker CPU or prev.
        prop_assert!(d.cpu == waker.cpu || d.cpu == p.prev_cpu, "seed {seed}: CPU{}", d.cpu.0);
    }

    #[test]
    fn sis_util_bounds_the_probes(seed in any::<u64>(), busy_pct in 50u64..=100, nr in 0u32..8) {
        // !SMT: no idle-core search, so at most nr CPUs are probed.
        let m = presets::machine("kunpeng920-6426").unwrap();
        let env = WakeEnv::new(&m, "6.8".parse().unwrap()).unwrap();
        let (mut s, p, waker) = random_state(&env, seed, busy_pct, false);
        for sh in &mut s.llc_shared { sh.nr_idle_scan = nr; }
        let d = wake_up(&env, &s, &p, &waker, WakeFlags::TTWU, &mut NoTrace);
        prop_assert!(d.costs.cpus_probed <= nr, "seed {seed}: probed {} > {nr}", d.costs.cpus_probed);
    }

}

proptest! {
    // Cheap per case, and the interesting corners (a small budget running out inside
    // the cluster, has_idle_cores set on a !SMT machine) are rare: many cases.
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn the_idle_hint_changes_nothing_but_speed(
        w in random_wakeup(), nr in 0u32..40, waker_in_llc in any::<bool>()
    ) {
        // The simulator's fast scan (idle hint, no trace) against the CPU-by-CPU walk
        // the trace forces: same CPU, same probes, same remote reads, same effects.
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (mut s, p, mut waker) = random_state(env, seed, busy_pct, restrict);
        s.core_sched_enabled = false;
        if nr < 32 {
            for sh in &mut s.llc_shared { sh.nr_idle_scan = nr; }
        }
        if waker_in_llc {
            // Let the waker sit inside the scanned LLC so it can be among the probes.
            waker.cpu = CpuId((p.prev_cpu.0 + 1) % env.nr_cpus());
        }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let slow = wake_up(env, &s, &p, &waker, flags, &mut Trace::default());
        let mut fast_state = s.clone();
        fast_state.enable_idle_hint();
        let fast = wake_up(env, &fast_state, &p, &waker, flags, &mut PathOnly);
        prop_assert_eq!(&slow, &fast, "seed {}", seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any state a file can describe survives --explain-defaults: the explicit file
    /// resolves to the same state and decision, and is a fixed point.
    #[test]
    fn explicit_state_files_are_a_fixed_point(w in random_wakeup(), preempt in any::<u64>()) {
        let (preset, set, seed, busy_pct, sync, restrict) = w;
        let env = env_for(preset, set);
        let (mut state, wakee, waker) = random_state(env, seed, busy_pct, restrict);
        for (i, rq) in state.rqs.iter_mut().enumerate() {
            rq.vcpu_preempted = (preempt >> (i % 64)) & 1 == 1;
        }
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let r0 = ResolvedWake { env: env.clone(), state, wakee, waker, flags };
        let machine = || schedlab_core::wakeup::scenario::MachineRef::Preset(PRESETS[preset].into());
        // r0's cookies are per CPU; a file's are per core (resolve() merges them), so
        // the fixed point is reached from the first resolved file on.
        let f0 = serde_json::to_string(&r0.to_scenario(machine())).unwrap();
        let r1 = WakeScenario::from_json(&f0).unwrap().resolve(None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}: {f0}"));
        let f1 = serde_json::to_string(&r1.to_scenario(machine())).unwrap();
        let r2 = WakeScenario::from_json(&f1).unwrap().resolve(None).unwrap();
        let f2 = serde_json::to_string(&r2.to_scenario(machine())).unwrap();
        prop_assert_eq!(&f1, &f2, "seed {}", seed);
        prop_assert_eq!(&r1.state, &r2.state, "seed {}", seed);
        let d1 = wake_up(&r1.env, &r1.state, &r1.wakee, &r1.waker, r1.flags, &mut NoTrace);
        let d2 = wake_up(&r2.env, &r2.state, &r2.wakee, &r2.waker, r2.flags, &mut NoTrace);
        prop_assert_eq!(d1, d2, "seed {}", seed);
    }
}
