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

// ---- mutations ----

/// Numbers that have broken parsers before: the integer types' edges, negative,
/// fractional and exponent forms, and the model's own limits.
const NUMBERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "2147483647",
    "65535",
    "65536",
    "4095",
    "4096",
    "4097",
    "1024",
    "1025",
    "-1",
    "0",
    "-0",
    "1e400",
    "1.5",
    "0x10",
    "99999999999999999999999999999999",
];

/// Whole CPU lists and tokens a list may become.
const LISTS: &[&str] = &[
    "0-4095",
    "0-4096",
    "0-18446744073709551615",
    "4294967295",
    "0-3:1/2",
    "0-4095:1/4096",
    "0-7:0/1",
    "5-2",
    ",",
    "-",
    "0--1",
    "all",
    "node0-65535",
    "node18446744073709551615",
];

fn pick<'a, T>(rng: &mut Rng, xs: &'a [T]) -> &'a T {
    &xs[rng.below(xs.len() as u64) as usize]
}

fn word(rng: &mut Rng, xs: &[&'static str]) -> &'static str {
    xs[rng.below(xs.len() as u64) as usize]
}

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One byte-level (well, char-boundary-level: every reader takes `&str`) mutation.
fn mutate_text(rng: &mut Rng, s: &str, corpus: &[String]) -> String {
    let len = s.len();
    let at = char_floor(s, rng.below(len as u64 + 1) as usize);
    let end = char_floor(s, at + rng.below(64) as usize);
    let mut out = String::with_capacity(len + 64);
    match rng.below(10) {
        // Truncate.
        0 => out.push_str(&s[..at]),
        // Delete a span.
        1 => {
            out.push_str(&s[..at]);
            out.push_str(&s[end..]);
        }
        // Replace a char with a random printable ASCII or a structural one.
        2 => {
            out.push_str(&s[..at]);
            let c = if rng.below(2) == 0 {
                (b' ' + rng.below(95) as u8) as char
            } else {
                *pick(
                    rng,
                    &[
                        '{', '}', '[', ']', '"', ',', ':', '-', '\n', '\0', 'é', '\u{202e}',
                    ],
                )
            };
            out.push(c);
            out.extend(s[at..].chars().skip(1));
        }
        // Duplicate a span (sometimes many times).
        3 => {
            out.push_str(&s[..end]);
            let times = if rng.below(8) == 0 {
                rng.below(2000)
            } else {
                1
            };
            for _ in 0..times {
                out.push_str(&s[at..end]);
            }
            out.push_str(&s[end..]);
        }
        // Splice with another corpus input.
        4 => {
            let o = if corpus.is_empty() {
                s
            } else {
                pick(rng, corpus)
            };
            let oat = char_floor(o, rng.below(o.len() as u64 + 1) as usize);
            out.push_str(&s[..at]);
            out.push_str(&o[oat..]);
        }
        // Swap a run of digits for an extreme number.
        5 | 6 => {
            let digits: Vec<usize> = s
                .char_indices()
                .filter(|(i, c)| {
                    c.is_ascii_digit() && (*i == 0 || !s.as_bytes()[i - 1].is_ascii_digit())
                })
                .map(|(i, _)| i)
                .collect();
            if digits.is_empty() {
                out.push_str(s);
                out.push_str(word(rng, NUMBERS));
            } else {
                let d = *pick(rng, &digits);
                let e = s[d..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(s.len(), |k| d + k);
                out.push_str(&s[..d]);
                out.push_str(word(rng, NUMBERS));
                out.push_str(&s[e..]);
            }
        }
        // Insert a list or number token.
        7 => {
            out.push_str(&s[..at]);
            out.push_str(if rng.below(2) == 0 {
                word(rng, LISTS)
            } else {
                word(rng, NUMBERS)
            });
            out.push_str(&s[at..]);
        }
        // Flip a bit of an ASCII byte (staying ASCII so the text stays UTF-8).
        8 => {
            let mut b = s.as_bytes().to_vec();
            if let Some(i) = (0..b.len())
                .map(|_| rng.below(b.len().max(1) as u64) as usize)
                .take(4)
                .find(|&i| i < b.len() && b[i].is_ascii())
            {
                b[i] ^= 1 << rng.below(7);
            }
            out = String::from_utf8(b).unwrap_or_else(|_| s.to_string());
        }
        // Insert random bytes as text.
        _ => {
            out.push_str(&s[..at]);
            for _ in 0..rng.below(16) {
                out.push((b' ' + rng.below(95) as u8) as char);
            }
            out.push_str(&s[at..]);
        }
    }
    out
}

/// A value that breaks assumptions: extremes, wrong types, huge arrays and strings.
fn odd_value(rng: &mut Rng) -> serde_json::Value {
    use serde_json::{json, Value};
    match rng.below(12) {
        0 => json!(u64::MAX),
        1 => json!(-1),
        2 => json!(65535),
        3 => json!(4096),
        4 => json!(1.5e300),
        5 => Value::Null,
        6 => json!(true),
        7 => json!(word(rng, LISTS)),
        8 => json!(word(rng, NUMBERS)),
        9 => Value::Array(vec![json!(rng.below(5000)); rng.below(5000) as usize]),
        10 => json!("x".repeat(rng.below(100_000) as usize)),
        _ => json!({}),
    }
}

/// Mutates a JSON tree: a random node replaced, a key dropped or added, an array
/// element repeated many times.
fn mutate_json(rng: &mut Rng, v: &mut serde_json::Value, depth: u32) {
    use serde_json::{json, Value};
    // Go down a random path first, most of the time.
    if depth < 8 && rng.below(4) != 0 {
        match v {
            Value::Object(m) if !m.is_empty() => {
                let k = m
                    .keys()
                    .nth(rng.below(m.len() as u64) as usize)
                    .cloned()
                    .unwrap();
                return mutate_json(rng, m.get_mut(&k).unwrap(), depth + 1);
            }
            Value::Array(a) if !a.is_empty() => {
                let i = rng.below(a.len() as u64) as usize;
                return mutate_json(rng, &mut a[i], depth + 1);
            }
            _ => {}
        }
    }
    // Mostly keep the node's type (so the reader gets past its schema and meets the
    // value), sometimes break it.
    if rng.below(4) == 0 {
        *v = odd_value(rng);
        return;
    }
    match v {
        Value::Number(n) => {
            let x = n.as_u64().unwrap_or(1);
            *v = match rng.below(3) {
                0 => json!(rng.below(x.saturating_mul(2).saturating_add(3))),
                1 => json!(*pick(
                    rng,
                    &[
                        0u64,
                        1,
                        2,
                        63,
                        64,
                        65,
                        1023,
                        1024,
                        1025,
                        4095,
                        4096,
                        65535,
                        65536,
                        u32::MAX as u64,
                        u32::MAX as u64 + 1,
                        i64::MAX as u64,
                        u64::MAX
                    ]
                )),
                _ => json!(-(rng.below(3) as i64) - 1),
            };
        }
        Value::String(t) => {
            *t = if rng.below(3) == 0 {
                word(rng, LISTS).to_string()
            } else {
                mutate_text(rng, t, &[])
            };
        }
        Value::Bool(b) => *b = !*b,
        Value::Array(a) if !a.is_empty() => {
            let i = rng.below(a.len() as u64) as usize;
            match rng.below(3) {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let e = a[i].clone();
                    let n = if rng.below(4) == 0 {
                        rng.below(3000)
                    } else {
                        1
                    } as usize;
                    a.extend(std::iter::repeat_n(e, n));
                }
                _ => {
                    let j = rng.below(a.len() as u64) as usize;
                    a.swap(i, j)
                }
            }
        }
        Value::Object(m) if !m.is_empty() && rng.below(2) == 0 => {
            let k = m
                .keys()
                .nth(rng.below(m.len() as u64) as usize)
                .cloned()
                .unwrap();
            m.remove(&k);
        }
        Value::Object(m) => {
            let k = if rng.below(2) == 0 {
                "unknown"
            } else {
                word(
                    rng,
                    &[
                        "cpus",
                        "nr_running",
                        "sweep",
                        "packages",
                        "threads_per_core",
                        "cores_per_llc",
                        "numa_distance",
                        "allowed",
                        "busy",
                        "workload",
                        "recent",
                        "vcpu_preempted",
                        "cpu",
                    ],
                )
            };
            m.insert(k.to_string(), odd_value(rng));
        }
        n => *n = odd_value(rng),
    }
}

/// A JSON input mutated either as a tree or as text.
fn mutate_json_text(rng: &mut Rng, corpus: &[String]) -> String {
    let s = pick(rng, corpus);
    let mut out = s.clone();
    let rounds = if rng.below(2) == 0 {
        1
    } else {
        2 + rng.below(3)
    };
    for _ in 0..rounds {
        out = match (
            rng.below(5),
            serde_json::from_str::<serde_json::Value>(&out),
        ) {
            (1.., Ok(mut v)) => {
                mutate_json(rng, &mut v, 0);
                serde_json::to_string(&v).unwrap()
            }
            _ => mutate_text(rng, &out, corpus),
        };
    }
    out
}

// ---- corpora ----

fn read_dir(dir: &str, ext: &str) -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(ext)))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// The links of tests/fixtures/links.txt: every form the page has written.
fn links() -> Vec<String> {
    include_str!("fixtures/links.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("# "))
        .map(str::to_string)
        .collect()
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
                 "wakee": { "id": 1, "prev_cpu": 3 }, "waker": { "cpu": 30, "task": null }, "wake_flags": ["fork", "exec"] }"#,
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

// ---- base64url, as links write it (the test should not trust the code it tests) ----

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64_encode(b: &[u8]) -> String {
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..=c.len() {
            out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
        }
    }
    out
}

fn base64_decode(s: &str) -> String {
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for ch in s.bytes() {
        let Some(v) = B64.iter().position(|&b| b == ch) else {
            continue;
        };
        bits = bits << 6 | v as u32;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_tests_base64_matches_links() {
    for l in links() {
        let body = l.trim_start_matches('#').strip_prefix("v1:").unwrap();
        let json = base64_decode(body.trim_end_matches('='));
        assert!(json.starts_with('{'), "{json}");
        assert_eq!(
            base64_encode(json.as_bytes()),
            body.trim_end_matches('='),
            "{l}"
        );
    }
}
