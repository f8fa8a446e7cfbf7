//! The simulator's event record, its Chrome/Perfetto trace and captured wake-ups:
//! recording only observes (same digests), the records and the trace count what the
//! metrics count, and a captured wake-up replayed through `schedlab wake`'s path
//! decides exactly as the simulation did.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use schedlab_core::experiment::{self, LiveRun, RunSpec};
use schedlab_core::sim::record::{RecordKind, Recording, RECORD_BYTES};
use schedlab_core::sim::{RecordConfig, SimTime};
use schedlab_core::wakeup::scenario::WakeScenario;
use schedlab_core::wakeup::{wake_up, Trace};
use schedlab_core::workload::{Dist, Noise, Workload};

fn spec(m: &str, cpus: &str, w: Workload, patches: &str, ms: u64, noise: Noise) -> RunSpec {
    RunSpec {
        noise,
        ..RunSpec::on_preset(m, cpus, patches.parse().unwrap(), w, ms, 3).unwrap()
    }
}

fn recorded(s: &RunSpec, rc: RecordConfig) -> LiveRun {
    let mut live = LiveRun::with_recorder(s, rc).unwrap();
    live.finish().unwrap();
    live
}

fn all() -> RecordConfig {
    RecordConfig {
        cap: 1 << 22,
        ..RecordConfig::default()
    }
}

/// A spread of machines, kernels and workloads: clusters, SMT with cookies, NUMA,
/// asymmetric capacity, SIS_PROP (before and after its aging) and SIS_UTIL kernels,
/// overloaded LLCs (scans that find nothing) and idle ones.
fn specs() -> Vec<RunSpec> {
    let cookie = |threads| Workload::CookiePairs {
        threads,
        iterations: 40,
        work: Dist::Uniform { lo: 0, hi: 400_000 },
        sleep: Dist::Uniform { lo: 0, hi: 800_000 },
        cookies: true,
    };
    vec![
        spec(
            "kunpeng920-6426",
            "node0-1",
            Workload::NetperfTcpRr { instances: 32 },
            "6.8",
            8,
            Noise::Default,
        ),
        spec(
            "kunpeng920-6426",
            "node0",
            Workload::Tbench { clients: 48 },
            "6.6+cluster",
            8,
            Noise::Default,
        ),
        spec(
            "kunpeng920-6426",
            "node0",
            Workload::Tbench { clients: 24 },
            "5.15",
            8,
            Noise::Default,
        ),
        spec(
            "xeon-smt-8",
            "0-7",
            cookie(12),
            "6.8",
            20_000,
            Noise::Default,
        ),
        spec(
            "spr-2s",
            "all",
            Workload::Hackbench {
                groups: 4,
                fds: 10,
                loops: 20,
                pipe: false,
                threads: false,
                msg_bytes: 100,
            },
            "5.12",
            20_000,
            Noise::Default,
        ),
        spec(
            "alderlake-8p8e",
            "all",
            Workload::Tbench { clients: 10 },
            "6.12",
            8,
            Noise::Default,
        ),
        spec(
            "jacobsville",
            "all",
            Workload::Schbench {
                message_threads: 2,
                workers: 16,
                cputime: Dist::fixed(200_000),
                sleep: Dist::fixed(100_000),
            },
            "6.1",
            8,
            Noise::Default,
        ),
    ]
}

#[test]
fn recording_does_not_change_the_run() {
    for s in specs() {
        let plain = experiment::run(&s).unwrap();
        let live = recorded(
            &s,
            RecordConfig {
                capture_wake: vec![1, 7, 100, 1000],
                ..all()
            },
        );
        let r = live.report();
        assert_eq!(plain.digest, r.digest, "{} {}", s.machine.name, s.patches);
        assert_eq!(plain.events, r.events);
        assert!(live.recording().unwrap().records.len() > 100);
    }
}

/// The records count exactly what the metrics count.
fn check_counts(live: &LiveRun) {
    let rec = live.recording().unwrap();
    let m = &live.report().metrics;
    assert!(!rec.truncated);
    let measured = rec.measured();
    let mut wakeups = 0;
    let mut migr_wake = 0;
    let mut switches = 0;
    let mut migr_lb = 0;
    for r in measured {
        match r.kind {
            RecordKind::Wake(w) if !rec.background(w.wakee) => {
                wakeups += 1;
                migr_wake += (w.cpu != w.prev_cpu) as u64;
            }
            RecordKind::Switch { switch: true, .. } => switches += 1,
            RecordKind::Migrate { .. } => migr_lb += 1,
            _ => {}
        }
    }
    assert_eq!(
        wakeups,
        m.wakeups,
        "wake-ups {} {} from {} first measured at {:?}, warm-up {:?}",
        live.report().machine,
        live.report().patches,
        rec.measured_from,
        measured.first(),
        live.warmup_ns()
    );
    assert_eq!(migr_wake, m.migrations_wakeup, "migrations at wake-up");
    assert_eq!(switches, m.context_switches, "context switches");
    assert_eq!(migr_lb, m.migrations_balance, "migrations by load balance");
    // Wake-ups are numbered 1, 2, … in order.
    let seqs: Vec<u32> = rec.wakes().map(|w| w.seq).collect();
    assert_eq!(seqs.len() as u32, rec.wakeups);
    assert!(seqs.iter().enumerate().all(|(i, &s)| s == i as u32 + 1));
    // Time never goes backwards.
    assert!(rec.records.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
}

#[test]
fn the_records_count_what_the_metrics_count() {
    for s in specs() {
        check_counts(&recorded(&s, all()));
    }
}

#[test]
fn records_go_through_bytes_and_back() {
    let s = &specs()[3];
    let live = recorded(s, all());
    let rec = live.recording().unwrap();
    let bytes = rec.to_bytes();
    assert_eq!(bytes.len(), rec.records.len() * RECORD_BYTES);
    assert_eq!(Recording::records_from_bytes(&bytes).unwrap(), rec.records);
    // Posted in pieces (as the page's worker streams it), the bytes are the same.
    let cut = rec.records.len() / 3;
    let mut pieces = Recording::records_to_bytes(&rec.records[..cut]);
    pieces.extend(Recording::records_to_bytes(&rec.records[cut..]));
    assert_eq!(pieces, bytes);
    assert_eq!(
        Recording::records_from_bytes(&pieces[cut * RECORD_BYTES..]).unwrap(),
        rec.records[cut..]
    );
    // Every kind the cookie run makes is in there, force idle, idle exits and
    // wake-list arrivals (kind 6) too.
    for want in [
        "switch",
        "wake",
        "idle-enter",
        "idle-exit",
        "force-idle",
        "arrive",
    ] {
        assert!(
            rec.records
                .iter()
                .any(|r| serde_json::to_value(r.kind).unwrap()["kind"] == want),
            "{want}"
        );
    }
    // Bad bytes are errors.
    assert!(Recording::records_from_bytes(&bytes[..RECORD_BYTES + 3]).is_err());
    let mut bad = bytes[..RECORD_BYTES].to_vec();
    bad[8] = 9;
    assert!(Recording::records_from_bytes(&bad).is_err());
}

#[test]
fn the_cap_and_the_window_bound_the_recording() {
    let s = &specs()[0];
    let full = recorded(s, all());
    let n = full.recording().unwrap().records.len();
    let capped = recorded(s, RecordConfig { cap: 1000, ..all() });
    let c = capped.recording().unwrap();
    assert!(c.truncated && c.records.len() == 1000);
    assert_eq!(c.dropped as usize, n - 1000);
    assert_eq!(c.records[..], full.recording().unwrap().records[..1000]);
    // The wake-ups are still counted to the end.
    assert_eq!(c.wakeups, full.recording().unwrap().wakeups);
    let (a, b) = (SimTime::from_ms(3), SimTime::from_ms(4));
    let w = recorded(
        s,
        RecordConfig {
            window: Some((a, b)),
            ..all()
        },
    );
    let w = w.recording().unwrap();
    assert!(!w.truncated && !w.records.is_empty());
    let inside: Vec<_> = full
        .recording()
        .unwrap()
        .records
        .iter()
        .filter(|r| r.at_ns >= a.ns() && r.at_ns < b.ns())
        .copied()
        .collect();
    assert_eq!(w.records, inside);
}

/// The trace parses as JSON, follows the format's shape, and its events count what
/// the run counts.
#[test]
fn the_chrome_trace_parses_and_counts_match() {
    for s in specs() {
        let live = recorded(&s, all());
        let text = live.chrome_trace().unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let m = &live.report().metrics;
        let rec = live.recording().unwrap();
        let arg = |e: &serde_json::Value, k: &str| e["args"][k].as_bool() == Some(true);
        let is_wake = |e: &serde_json::Value| {
            e["cat"] == "wake" && e["ph"] == "X" && e["name"].as_str().unwrap().starts_with("wake ")
        };
        let count =
            |f: &dyn Fn(&serde_json::Value) -> bool| ev.iter().filter(|e| f(e)).count() as u64;
        let wakes = count(&|e| is_wake(e));
        assert_eq!(wakes, rec.wakeups as u64);
        assert_eq!(
            count(&|e| e["cat"] == "wake"
                && e["ph"] == "X"
                && arg(e, "measured")
                && !arg(e, "background")),
            m.wakeups
        );
        assert_eq!(
            count(&|e| e["cat"] == "wake"
                && e["ph"] == "X"
                && arg(e, "measured")
                && !arg(e, "background")
                && arg(e, "migrated")),
            m.migrations_wakeup
        );
        assert_eq!(
            count(&|e| e["cat"] == "switch" && arg(e, "measured") && arg(e, "switch")),
            m.context_switches
        );
        assert_eq!(
            count(&|e| e["cat"] == "migrate" && arg(e, "measured")),
            m.migrations_balance
        );
        // A flow start per wake-up; a flow end for each whose wakee ran later, bound to
        // a slice.
        let starts = count(&|e| e["ph"] == "s");
        let ends = count(&|e| e["ph"] == "f");
        assert_eq!(starts, wakes);
        let woken = count(&|e| e["name"].as_str().is_some_and(|n| n.starts_with("woken ")));
        assert_eq!(woken, ends);
        assert!(ends <= starts && ends + 64 + 2 * s.machine.nr_cpus() as u64 >= starts);
        for e in ev {
            let ph = e["ph"].as_str().unwrap();
            assert!(["X", "s", "f", "C", "M"].contains(&ph), "{e}");
            assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
            if ph != "M" {
                assert!(e["ts"].is_number(), "{e}");
            }
            if ph == "X" {
                assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
            }
        }
        // One named track per CPU of the run.
        let threads = count(&|e| e["name"] == "thread_name");
        assert_eq!(threads, s.cpus.weight() as u64);
        assert_eq!(v["otherData"]["truncated"], false);
    }
}

/// Every captured wake-up, resolved from its state file as `schedlab wake --state`
/// does, decides as the simulation did: the same CPU, queue path, costs, effects, and
/// the same trace (the probed CPUs in scan order). Under another kernel (the A/B
/// comparison) the file resolves and decides too.
#[test]
fn captured_wake_ups_replay_exactly() {
    let mut tested = 0;
    for s in specs() {
        let total = recorded(&s, RecordConfig { cap: 0, ..all() })
            .recording()
            .unwrap()
            .wakeups;
        // 60 wake-ups spread over the run, the first and the last.
        let mut want: Vec<u32> = (0..60).map(|k| 1 + k * (total - 1) / 59).collect();
        want.dedup();
        let live = recorded(
            &s,
            RecordConfig {
                cap: 0,
                capture_wake: want.clone(),
                ..RecordConfig::default()
            },
        );
        let caps = live.captured_wakes();
        assert_eq!(caps.len(), want.len());
        for c in caps {
            let what = format!("{} {} wake-up {}", s.machine.name, s.patches, c.seq);
            assert!(c.traced_agrees, "{what}: traced and untraced differ");
            let text = serde_json::to_string(&c.scenario).unwrap();
            let file = WakeScenario::from_json(&text).unwrap();
            let r = file.resolve(None).unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut t = Trace::default();
            let d = wake_up(&r.env, &r.state, &r.wakee, &r.waker, r.flags, &mut t);
            assert_eq!(d, c.decision, "{what}");
            assert_eq!(t, c.trace, "{what}");
            // A/B: the same state under another kernel decides (no error, an allowed CPU).
            for other in ["6.5", "6.6+cluster", "6.8"] {
                let r = file.resolve(Some(other)).unwrap();
                let d = wake_up(
                    &r.env,
                    &r.state,
                    &r.wakee,
                    &r.waker,
                    r.flags,
                    &mut Trace::default(),
                );
                assert!(
                    r.wakee.allowed.test_cpu(d.cpu) || d.cpu == r.wakee.prev_cpu,
                    "{what} {other}"
                );
            }
            tested += 1;
        }
    }
    assert!(tested >= 300, "{tested}");
}
