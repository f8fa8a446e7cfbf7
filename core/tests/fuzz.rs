//! Fuzzing as ordinary tests (issue 16, deliverable 6): every reader of outside text —
//! the page's links (`scenario::decode`), the machine importers
//! (`topology::load_machine`), the wake-up state files (`WakeScenario::from_json` and
//! `resolve`), CPU lists (`CpuMask::parse_list`) and distributions (`Dist::parse`) — is
//! fed mutations of a seed corpus of valid inputs (examples/, tests/fixtures/, the
//! links in tests/fixtures/links.txt): bytes flipped, inserted, deleted, truncated,
//! spliced with another input, numbers swapped for extremes (2^64-1, 65535, -1, …),
//! lists blown up, and for JSON the same done to the parsed tree (a value replaced,
//! a key dropped or added, an array repeated).
//!
//! Each input must be answered (`Ok` or `Err`) without a panic, within
//! [`MAX_CASE_MS`], and with the process's peak resident memory under
//! [`MAX_RESIDENT_BYTES`]: input that claims a huge size is refused before anything
//! that size is built.
//!
//! Deterministic: every case draws from `schedlab_core::rng::Rng` seeded from
//! `FUZZ_SEED` (default below), the target and the case number; a failure prints them
//! and the input. By default each target runs a fixed number of cases (the whole file
//! takes well under a minute in the dev profile); `FUZZ_SECONDS=N` runs each target for
//! N seconds instead (`scripts/fuzz` does, in release).

// Host only: it reads its corpora at run time, catches panics to report the input,
// and reads /proc for the memory bound; wasm32 runs the same readers in the other
// test files.
#![cfg(not(target_arch = "wasm32"))]

use std::panic::{catch_unwind, AssertUnwindSafe};

use schedlab_core::cpumask::{CpuMask, MAX_CPUS};
use schedlab_core::release::Release;
use schedlab_core::rng::Rng;
use schedlab_core::scenario;
use schedlab_core::sched_domain::{build_sched_domains, BuildConfig};
use schedlab_core::topology::{load_machine, Arch, ImportHint};
use schedlab_core::wakeup::scenario::WakeScenario;
use schedlab_core::wakeup::{wake_up, Trace};
use schedlab_core::workload::Dist;

// The mutations and the corpora are in fuzz/; this file keeps the harness and the
// targets (as wakeup.rs and import.rs keep theirs, beside their topic files).
#[path = "fuzz/corpus.rs"]
mod corpus;
#[path = "fuzz/mutate.rs"]
mod mutate;

use corpus::{base64_decode, base64_encode, links, read_dir};
use mutate::{mutate_json_text, mutate_text, pick};

/// The most memory the test process may ever have resident (its high-water mark,
/// `VmHWM` in /proc/self/status, read after every case on Linux): every target and
/// the test harness together. A 4096-CPU machine's domains take a few tens of MiB; an
/// input that made a reader allocate what it claims (2^32 CPUs, a 2^64-entry list)
/// would pass this at once. (A per-case count would need a counting global
/// allocator, which the workspace's `unsafe_code = "forbid"` rules out.)
const MAX_RESIDENT_BYTES: u64 = 1 << 30;

/// The process's peak resident memory so far, if the platform says.
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The longest one input may take, in the dev profile.
const MAX_CASE_MS: u128 = 10_000;

/// The cases each target runs by default: together about 25 s of `cargo test` in the
/// dev profile on 2 cores (measured; the budget is 2 minutes). Mutants are cheap to
/// refuse, so most of the time goes to the accepted ones, which build machines and
/// domains.
fn default_cases(target: &str) -> u64 {
    match target {
        "links" => 30_000,
        "machines" => 12_000,
        "wake_states" => 30_000,
        _ => 100_000,
    }
}

#[allow(clippy::disallowed_methods)]
fn now() -> std::time::Instant {
    std::time::Instant::now()
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_f022)
}

fn seconds() -> Option<u64> {
    std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
}

/// Runs `target` over mutations of `corpus` (the corpus itself first): the case
/// budget, the per-case checks, and the report.
fn fuzz(
    name: &str,
    corpus: &[String],
    mutate: impl Fn(&mut Rng, &[String]) -> String,
    check: impl Fn(&str) -> bool,
) {
    assert!(!corpus.is_empty(), "{name}: empty corpus");
    let base = seed();
    let deadline = seconds().map(|s| (now(), s as u128 * 1000));
    let cases = default_cases(name);
    let t0 = now();
    let mut slowest = (0u128, String::new());
    let mut peak_max = 0u64;
    let mut accepted = 0u64;
    let mut i = 0u64;
    loop {
        match deadline {
            Some((t, ms)) if t.elapsed().as_millis() >= ms => break,
            None if i >= cases => break,
            _ => {}
        }
        let case_seed = base ^ (i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) ^ hash(name);
        let input = if (i as usize) < corpus.len() {
            corpus[i as usize].clone()
        } else {
            mutate(&mut Rng::new(case_seed), corpus)
        };
        let t = now();
        let r = catch_unwind(AssertUnwindSafe(|| check(&input)));
        let ms = t.elapsed().as_millis();
        let peak = peak_resident_bytes().unwrap_or(0);
        let show = || {
            let s: String = input.chars().take(2000).collect();
            format!(
                "fuzz target {name}: FUZZ_SEED={base} case {i} (case seed {case_seed:#x}), input of {} bytes: {s:?}",
                input.len()
            )
        };
        match r {
            Ok(ok) => accepted += ok as u64,
            Err(e) => {
                eprintln!("{} panicked", show());
                std::panic::resume_unwind(e);
            }
        }
        assert!(ms <= MAX_CASE_MS, "{} took {ms} ms", show());
        assert!(
            peak <= MAX_RESIDENT_BYTES,
            "{} left the process's peak resident memory at {peak} bytes",
            show()
        );
        if ms > slowest.0 {
            slowest = (ms, input.chars().take(80).collect());
        }
        peak_max = peak_max.max(peak);
        i += 1;
    }
    eprintln!(
        "fuzz target {name}: {i} cases ({accepted} accepted) in {} ms (FUZZ_SEED={base}); slowest {} ms ({:?}…), process peak resident {} MiB",
        t0.elapsed().as_millis(),
        slowest.0,
        slowest.1,
        peak_max >> 20
    );
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

// ---- the targets ----

/// Every link the page has ever written keeps decoding, to a scenario that encodes
/// and decodes to itself.
#[test]
fn old_links_keep_decoding() {
    let links = links();
    assert!(links.len() >= 10, "{}", links.len());
    for l in &links {
        let s = scenario::decode(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        let again = scenario::decode(&scenario::encode(&s)).unwrap();
        assert_eq!(s, again, "{l}");
    }
}

#[test]
fn fuzz_links() {
    let corpus = links();
    fuzz(
        "links",
        &corpus,
        |rng, corpus| {
            let l = pick(rng, corpus);
            let l = l.trim_start_matches('#');
            if rng.below(3) == 0 {
                return mutate_text(rng, l, corpus);
            }
            // Structure-aware: mutate the JSON inside and encode it again.
            let body = l.strip_prefix("v1:").unwrap_or(l).trim_end_matches('=');
            let json = base64_decode(body);
            let json = mutate_json_text(rng, &[json]);
            format!("v1:{}", base64_encode(json.as_bytes()))
        },
        |l| {
            let Ok(s) = scenario::decode(l) else {
                return false;
            };
            let again = scenario::decode(&scenario::encode(&s))
                .unwrap_or_else(|e| panic!("decoded but its encoding does not: {e}"));
            assert_eq!(s, again);
            assert!(s.machine().nr_cpus() <= MAX_CPUS);
            true
        },
    );
}

#[test]
fn fuzz_machines() {
    let mut corpus = read_dir("core/tests/fixtures", ".txt");
    corpus.retain(|t| !t.starts_with("v1:") && !t.contains("\nv1:"));
    corpus.extend(read_dir("examples/machines", ".json"));
    fuzz(
        "machines",
        &corpus,
        |rng, corpus| {
            if rng.below(2) == 0 {
                mutate_json_text(rng, corpus)
            } else {
                let s = pick(rng, corpus).clone();
                let mut out = s;
                for _ in 0..1 + rng.below(4) {
                    out = mutate_text(rng, &out, corpus);
                }
                out
            }
        },
        |text| {
            let mut ok = false;
            for hint in [ImportHint::NONE, ImportHint::arch(Arch::Arm64)] {
                if let Ok(m) = load_machine(text, &hint) {
                    assert!(m.nr_cpus() <= MAX_CPUS);
                    m.validate().unwrap();
                    // What every reader does next: build its domains (small machines
                    // only, to keep the budget for inputs).
                    if m.nr_cpus() <= 512 {
                        let cfg = BuildConfig::new(Release::new(6, 8));
                        let _ = build_sched_domains(&m, &cfg);
                    }
                    ok = true;
                }
            }
            ok
        },
    );
}

#[test]
fn fuzz_wake_states() {
    let mut corpus = read_dir("examples/wake", ".json");
    corpus.extend(
        [
            r#"{ "machine": "flat-16", "cpus": [ { "cpus": "0-15", "state": "busy" }, { "cpus": "9", "state": "idle", "polling": true, "vcpu_preempted": true } ],
                 "llc": [ { "cpu": 0, "nr_idle_scan": 4, "has_idle_cores": true } ], "jiffies": 1000,
                 "wakee": { "id": 1, "prev_cpu": 5, "recent_used_cpu": 9, "allowed": "0-7,9", "wakee_flips": 3, "util": 100, "cookie": 2, "on_cpu": true },
                 "waker": { "cpu": 0, "task": { "id": 2, "wakee_flips": 40, "wakee_flip_decay_ts": 900, "last_wakee": 1, "per_cpu_kthread": true, "exiting": true }, "in_task": false },
                 "wake_flags": ["sync", "current-cpu"], "features": ["NO_SIS_UTIL", "WA_BIAS"], "patches": "6.6+cluster" }"#,
            r#"{ "machine": { "name": "m", "arch": "arm64", "packages": 2, "cores_per_llc": 8, "cores_per_cluster": 4, "threads_per_core": 2 },
                 "cpus": [ { "cpus": "0-31:2/4", "state": "sched-idle", "nr_running": 2, "load": 3, "util": 10, "capacity": 512, "active": false, "ttwu_pending": true } ],
                 "wakee": { "id": 1, "prev_cpu": 3 }, "waker": { "cpu": 30, "task": null }, "wake_flags": ["exec"] }"#,
            r#"{ "machine": "alderlake-8p8e", "patches": "5.15", "features": ["SIS_PROP"], "wakee": { "id": 1, "prev_cpu": 20, "util": 1024 }, "waker": { "cpu": 0 } }"#,
        ]
        .map(str::to_string),
    );
    fuzz("wake_states", &corpus, mutate_json_text, |text| {
        let Ok(s) = WakeScenario::from_json(text) else {
            return false;
        };
        let Ok(r) = s.resolve(None) else {
            return false;
        };
        let mut t = Trace::default();
        let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
        assert!(d.cpu.0 < r.env.nr_cpus());
        let _ = t.render(&d);
        serde_json::to_string(&t).unwrap();
        // What --explain-defaults prints reads back.
        let e = serde_json::to_string(&s.explicit(None).unwrap()).unwrap();
        WakeScenario::from_json(&e).unwrap().resolve(None).unwrap();
        true
    });
}

#[test]
fn fuzz_cpu_lists_and_dists() {
    let corpus: Vec<String> = [
        "0-3,8",
        "0-4095",
        "1,3,5-7",
        "",
        " 0 ",
        "0-15:2/4",
        "0-127",
        "4095",
        "fixed:10",
        "uniform:5-10ms",
        "uniform:5us-10ms",
        "exp:20us",
        "14400s",
        "3us",
        "uniform: 5 - 10 ms",
        "node0",
        "node0-1",
    ]
    .map(str::to_string)
    .to_vec();
    fuzz(
        "cpu_lists_and_dists",
        &corpus,
        |rng, corpus| {
            let mut s = pick(rng, corpus).clone();
            for _ in 0..1 + rng.below(3) {
                s = mutate_text(rng, &s, corpus);
            }
            s
        },
        |text| {
            let mut ok = false;
            for n in [1, 2, 63, 64, 65, 128, 4095, MAX_CPUS] {
                if let Ok(m) = CpuMask::parse_list(n, text) {
                    assert_eq!(CpuMask::parse_list(n, &m.to_list()).unwrap(), m, "{n}");
                    assert!(m.iter().all(|c| c.0 < n));
                    ok = true;
                }
            }
            if let Ok(d) = Dist::parse(text) {
                assert_eq!(Dist::parse(&d.to_string()).unwrap(), d);
                ok = true;
            }
            ok
        },
    );
}
