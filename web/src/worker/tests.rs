//! The worker's host tests: its runs are the native runs, its messages survive
//! serde, and a watched run streams its record within the caps.

use schedlab_core::experiment::{self, RunSpec};
use schedlab_core::sim::record::{RecordKind, RECORD_BYTES};
use schedlab_core::workload::Workload;

use schedlab_core::experiment::LiveRun;
use schedlab_core::scenario::v1::SimSetupV1;
use schedlab_core::scenario::MachineChoice;
use schedlab_core::sim::{RecordConfig, Recording, SimTime};

use super::*;

/// What a worker reports after running to the end is the native run: the same
/// digest and value, and it survives serde (the codec itself needs a browser).
#[test]
fn a_worker_run_reports_the_native_digest() {
    let sim = SimSetupV1 {
        warmup: Default::default(),
        workload: Workload::NetperfTcpRr { instances: 2 },
        cpus: "node0".to_string(),
        duration_ms: 20,
        seed: 4,
        seeds: 1,
        sweep: Vec::new(),
    };
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    let mut run = start(&machine, "6.6+cluster", &sim).expect("starts");
    let mut batches = 0;
    while !run.advance(SLICE_NS).expect("runs") {
        batches += 1;
    }
    let p = progress(9, &run, 1.0, None);
    let back: Progress = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
    let native = experiment::run(
        &RunSpec::on_preset(
            "kunpeng920-6426",
            "node0",
            "6.6+cluster".parse().unwrap(),
            sim.workload.clone(),
            20,
            4,
        )
        .unwrap(),
    )
    .unwrap();
    let r = back.report.expect("done");
    assert!(back.done && batches > 10);
    assert_eq!((&r.digest, r.value), (&native.digest, native.value));
    // The whole report crosses, so the page's exports are the CLI's.
    assert_eq!(r, native);
    assert_eq!(back.series.len(), 2, "two 10 ms samples");
}

/// Where `spec`'s benchmark starts its clients (dbench's release after its start
/// barrier, about 100 ms in), ns: the tests' windows on tbench lie after it, where
/// the clients run.
pub(crate) fn clients_start_ns(spec: &RunSpec) -> u64 {
    let mut run = LiveRun::new(spec).unwrap();
    while run.start_ns().is_none() {
        assert!(
            !run.advance(1_000_000).unwrap(),
            "the run ended before its start"
        );
    }
    let t = run.start_ns().unwrap();
    assert!(t > 50_000_000, "dbench polls its barrier every 100 ms: {t}");
    t
}

fn tbench_setup(ms: u64, seed: u64) -> SimSetupV1 {
    SimSetupV1 {
        warmup: Default::default(),
        workload: Workload::Tbench { clients: 8 },
        cpus: "node0".to_string(),
        duration_ms: ms,
        seed,
        seeds: 1,
        sweep: Vec::new(),
    }
}

/// A captured wake-up is the one the record shows: the worker's capture of
/// wake-up N says the CPU the record chose, and the page, deciding the captured
/// state in its own env for that side, chooses it too. The capture stops right
/// after the wake-up, long before the run's end.
#[test]
fn a_captured_wake_up_decides_as_the_record_says() {
    use schedlab_core::sim::record::{RecordKind, Recording};
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    let sim = tbench_setup(20, 3);
    let all = record_now(
        &machine,
        "6.6",
        &sim,
        &RecordJob {
            cap: 1 << 20,
            window_ns: None,
            capture_wake: None,
            trace: false,
        },
    );
    assert_eq!(all.error, None);
    let records = Recording::records_from_bytes(&all.records.0).unwrap();
    let wakes: Vec<_> = records
        .iter()
        .filter_map(|r| match r.kind {
            RecordKind::Wake(w) => Some((r.at_ns, w)),
            _ => None,
        })
        .collect();
    assert!(wakes.len() > 1000, "{}", wakes.len());
    let m = machine.build().unwrap();
    let env = schedlab_core::wakeup::WakeEnv::new(&m, "6.6".parse().unwrap()).unwrap();
    let mut moved = 0;
    // Some plain ones and the first that left their prev CPU.
    let mut picks = vec![0usize, wakes.len() / 2, wakes.len() - 1];
    picks.extend(
        (0..wakes.len())
            .filter(|&k| wakes[k].1.cpu != wakes[k].1.prev_cpu)
            .take(3),
    );
    for &k in &picks {
        let (at_ns, w) = wakes[k];
        let job = RecordJob {
            cap: 0,
            window_ns: None,
            capture_wake: Some(w.seq),
            trace: false,
        };
        let got = record_now(&machine, "6.6", &sim, &job);
        assert_eq!(got.error, None);
        let c = got.captured.clone().expect("captured");
        assert_eq!((c.seq, c.at_ns, c.cpu), (w.seq, at_ns, u32::from(w.cpu)));
        assert!(c.traced_agrees);
        assert!(got.records.0.is_empty(), "a capture alone keeps no records");
        // Stopped within a slice (1 ms) of the capture.
        assert!(
            got.end_ns <= (at_ns / SLICE_NS + 1) * SLICE_NS,
            "stopped after the capture"
        );
        let back: Recorded = serde_json::from_str(&serde_json::to_string(&got).unwrap()).unwrap();
        assert_eq!(back, got);
        let at = crate::state::SimWakeRef {
            side: crate::state::Side::A,
            seed: 3,
            wake: w.seq,
            scale: None,
        };
        let sw = crate::state::SimWake::parse(at, c.at_ns, c.cpu, "6.6".into(), &c.state).unwrap();
        let o = sw.decide(&env).unwrap();
        assert_eq!(o.decision.cpu, sw.simulated_cpu, "wake-up {}", w.seq);
        moved += usize::from(w.cpu != w.prev_cpu);
    }
    assert!(moved >= 3, "three checked wake-ups left prev");
    // Past the run's wake-ups: an error, not a panic.
    let job = RecordJob {
        cap: 0,
        window_ns: None,
        capture_wake: Some(all.wakeups + 1_000_000),
        trace: false,
    };
    let e = record_now(&machine, "6.6", &sim, &job).error.unwrap();
    assert!(e.contains("only"), "{e}");
}

/// v6.12: a click on a delayed task's requeue (`WakePath::Requeue`, no selection)
/// asks to capture what has nothing to capture: the worker stops right after it
/// with an error that says so, not at the run's end with "only N wake-ups".
#[test]
fn a_requeue_capture_stops_at_once_with_its_reason() {
    use schedlab_core::sim::record::{RecordKind, Recording};
    use schedlab_core::wakeup::WakePath;
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    // 64 clients on 24 CPUs: blocks while not eligible are common.
    let sim = SimSetupV1 {
        workload: Workload::Tbench { clients: 64 },
        ..tbench_setup(5, 1)
    };
    let job = |capture_wake: Option<u32>| RecordJob {
        cap: if capture_wake.is_some() { 0 } else { 1 << 20 },
        window_ns: None,
        capture_wake,
        trace: false,
    };
    let all = record_now(&machine, "6.12", &sim, &job(None));
    assert_eq!(all.error, None);
    let records = Recording::records_from_bytes(&all.records.0).unwrap();
    let (at_ns, w) = records
        .iter()
        .find_map(|r| match r.kind {
            RecordKind::Wake(w) if w.path == WakePath::Requeue => Some((r.at_ns, w)),
            _ => None,
        })
        .expect("a requeue in a 6.12 tbench of 64 clients");
    assert_eq!((w.cpu, w.probed), (w.prev_cpu, 0));
    let got = record_now(&machine, "6.12", &sim, &job(Some(w.seq)));
    assert_eq!(got.captured, None);
    let e = got.error.unwrap();
    assert!(e.contains("requeued a delayed task"), "{e}");
    assert!(
        got.end_ns <= (at_ns / SLICE_NS + 1) * SLICE_NS,
        "stopped after it"
    );
}

/// The page's trace download is `schedlab run --trace`'s bytes: the CLI builds
/// the run with `RunSpec::on_preset` and records it with `LiveRun::with_recorder`
/// to the end (`core/src/bin/schedlab/sim.rs`, `run_recorded`).
#[test]
fn the_trace_download_is_the_clis_bytes() {
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    let sim = tbench_setup(6, 2);
    let spec = RunSpec::on_preset(
        "kunpeng920-6426",
        "node0",
        "6.6+cluster".parse().unwrap(),
        Workload::Tbench { clients: 8 },
        6,
        2,
    )
    .unwrap();
    // 1 to 4 ms after the clients' start.
    let at = clients_start_ns(&spec);
    let window = (at + 1_000_000, at + 4_000_000);
    let job = RecordJob {
        cap: 500_000,
        window_ns: Some(window),
        capture_wake: None,
        trace: true,
    };
    let page = record_now(&machine, "6.6+cluster", &sim, &job);
    let mut live = LiveRun::with_recorder(
        &spec,
        RecordConfig {
            cap: 500_000,
            window: Some((SimTime(window.0), SimTime(window.1))),
            capture_wake: Vec::new(),
        },
    )
    .unwrap();
    live.finish().unwrap();
    let cli = live.chrome_trace().unwrap();
    assert_eq!(page.trace.as_deref(), Some(cli.as_str()));
    assert!(cli.len() > 10_000);
    // A window without the trace stops at the window's end.
    let early = record_now(
        &machine,
        "6.6+cluster",
        &sim,
        &RecordJob {
            trace: false,
            ..job
        },
    );
    assert!(early.end_ns < page.end_ns && early.end_ns >= window.1);
    assert!(early.trace.is_none() && !early.records.0.is_empty());
}

/// The posts of a watched run, as the worker makes them: a batch of `ns`, then
/// [`next_progress`], each crossing the wire's JSON, until one says done. Returns
/// them and the bytes of their chunks, checked to follow each other with no gap and
/// each within [`LIVE_BATCH_RECORDS`].
fn posts(run: &mut LiveRun, ns: u64) -> (Vec<Progress>, Vec<u8>) {
    let (mut sent, mut bytes, mut out) = (0, Vec::new(), Vec::new());
    loop {
        run.advance(ns).unwrap();
        let p = next_progress(1, run, &mut sent, 0.0, None);
        let back: Progress = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        let c = back.record.as_ref().expect("a recorded run streams");
        assert_eq!(c.from as usize * RECORD_BYTES, bytes.len(), "no gap");
        assert!(c.bytes.0.len() <= LIVE_BATCH_RECORDS * RECORD_BYTES);
        bytes.extend_from_slice(&c.bytes.0);
        // Only the last says done, and only it has the report.
        assert_eq!(back.report.is_some(), back.done);
        let done = back.done;
        out.push(back);
        if done {
            return (out, bytes);
        }
        assert!(out.len() < 10_000, "a run that never ends");
    }
}

/// Recording only observes: a watched run reports what the unwatched one does,
/// and its chunks, each within the batch cap and crossing serde, add up to the
/// whole recording with every wake-up in it.
#[test]
fn a_recorded_run_streams_its_record_and_reports_the_same() {
    let sim = SimSetupV1 {
        warmup: Default::default(),
        workload: Workload::Tbench { clients: 8 },
        cpus: "node0".to_string(),
        duration_ms: 10,
        seed: 2,
        seeds: 1,
        sweep: Vec::new(),
    };
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    let mut plain = start(&machine, "6.6", &sim).unwrap();
    plain.finish().unwrap();
    let rc = live_record_config();
    let mut rec = start_with(&machine, "6.6", &sim, Some(rc)).unwrap();
    let (ps, bytes) = posts(&mut rec, 100_000);
    let last = ps.last().unwrap().record.clone().unwrap();
    assert_eq!(rec.report(), plain.report(), "the same run");
    assert_eq!(ps.last().unwrap().report.as_ref(), Some(&plain.report()));
    let whole = rec.recording().unwrap();
    assert!(ps.len() > 10 && !whole.truncated);
    assert_eq!((last.pending, last.left_out, last.truncated), (0, 0, false));
    assert_eq!(
        Recording::records_from_bytes(&bytes).unwrap(),
        whole.records
    );
    let wakes = whole
        .records
        .iter()
        .filter(|r| matches!(r.kind, RecordKind::Wake(_)))
        .count();
    assert_eq!(wakes as u32, last.wakeups);
    assert!(wakes > 100, "{wakes}");
    // An unrecorded run streams nothing.
    assert_eq!(record_chunk(&plain, &mut 0), None);
}

/// Past the batch cap records queue in the worker; when the run ends, the queued
/// tail follows in messages of its own, each within the batch cap, so the page gets
/// min(records made, the run's cap): here the run makes more than its cap, and the
/// page gets the whole cap, with what the recorder dropped counted as left out.
#[test]
fn the_page_gets_every_record_up_to_the_run_cap() {
    let sim = SimSetupV1 {
        warmup: Default::default(),
        workload: Workload::Tbench { clients: 32 },
        cpus: "all".to_string(),
        duration_ms: 20,
        seed: 1,
        seeds: 1,
        sweep: Vec::new(),
    };
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    let cap = 3 * LIVE_BATCH_RECORDS;
    let rc = RecordConfig {
        cap,
        ..live_record_config()
    };
    // One post part-way (5 ms after the clients' start): the rest of what was made
    // is pending.
    let mut run = start_with(&machine, "6.6", &sim, Some(rc.clone())).unwrap();
    while run.start_ns().is_none() {
        run.advance(1_000_000).unwrap();
    }
    run.advance(5_000_000).unwrap();
    let p = next_progress(1, &run, &mut 0, 0.0, None);
    let c = p.record.unwrap();
    let made = run.recording().unwrap().records.len();
    assert!(made > LIVE_BATCH_RECORDS, "{made}");
    assert_eq!(c.bytes.0.len(), LIVE_BATCH_RECORDS * RECORD_BYTES);
    assert_eq!(c.pending as usize, made - LIVE_BATCH_RECORDS);
    assert!(!p.done);
    // Batches of the whole run: it ends with more than two batches' records queued
    // (the old worker dropped them), and they all arrive.
    let mut run = start_with(&machine, "6.6", &sim, Some(rc)).unwrap();
    let (ps, bytes) = posts(&mut run, 1 << 40);
    let r = run.recording().unwrap();
    assert!(r.truncated && r.dropped > 0);
    assert_eq!(r.records.len(), cap);
    assert_eq!(
        bytes.len(),
        cap * RECORD_BYTES,
        "every record up to the cap"
    );
    assert_eq!(Recording::records_from_bytes(&bytes).unwrap(), r.records);
    assert_eq!(ps.len(), 3, "one message per batch cap");
    assert!(ps[..2]
        .iter()
        .all(|p| !p.done && p.record.as_ref().unwrap().pending > 0));
    let last = ps.last().unwrap().record.clone().unwrap();
    assert_eq!((last.pending, last.left_out), (0, r.dropped));
    assert!(last.truncated);
}

/// A record's bytes cross as base64 in the JSON, and come back the same; text that
/// is not base64 is refused, not a panic.
#[test]
fn record_bytes_cross_as_base64() {
    use super::wire::{base64_decode, base64_encode};
    for n in 0..70usize {
        let b: Vec<u8> = (0..n).map(|i| (i * 37 + n) as u8).collect();
        let text = base64_encode(&b);
        assert_eq!(text.len(), n.div_ceil(3) * 4);
        assert_eq!(base64_decode(&text).as_deref(), Some(&b[..]), "{n}");
    }
    assert_eq!(base64_encode(b"schedlab"), "c2NoZWRsYWI=");
    assert_eq!(base64_encode(&[0xfb, 0xff]), "+/8=");
    for bad in ["abc", "a=bc", "ab=c", "a===", "ab*d", "ab==abcd"] {
        assert_eq!(base64_decode(bad), None, "{bad}");
    }
    let json = serde_json::to_string(&RecordBytes(vec![1, 2, 3, 250])).unwrap();
    assert_eq!(json, "\"AQID+g==\"");
    assert_eq!(
        serde_json::from_str::<RecordBytes>(&json).unwrap(),
        RecordBytes(vec![1, 2, 3, 250])
    );
    assert!(serde_json::from_str::<RecordBytes>("\"A*==\"").is_err());
}

/// The messages' floats come back exactly from the wire's JSON (the workspace's
/// serde_json reads floats with `float_roundtrip`): 17-digit values that a
/// best-effort parse reads one ulp off among them.
#[test]
fn floats_cross_the_wire_exactly() {
    let mut p = failed(1, "x".into());
    p.series = (1..2000u64)
        .map(|i| f64::from_bits(0x3ff0_0000_0000_0000 + i * 0x9e37_79b9_7f4a))
        .chain([0.1 + 0.2, 1e300 / 3.0, 5e-324, 2.2250738585072014e-308])
        .collect();
    p.busy_ms = 123.456_789_012_345_67;
    let back: Reply = serde_json::from_str(
        &serde_json::to_string(&Reply::Progress(Box::new(p.clone()))).unwrap(),
    )
    .unwrap();
    let Reply::Progress(back) = back else {
        panic!("a progress")
    };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back.series), bits(&p.series));
    assert_eq!(back.busy_ms.to_bits(), p.busy_ms.to_bits());
}

#[test]
fn a_run_that_cannot_start_says_why() {
    let sim = SimSetupV1 {
        cpus: "node5".to_string(),
        ..SimSetupV1::from(&schedlab_core::SimSetup::default())
    };
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    let e = start(&machine, "6.6", &sim).err().expect("refused");
    assert!(e.contains("nodes 0-3"), "{e}");
    let e = start(&MachineChoice::Preset("vax".into()), "6.6", &sim)
        .err()
        .expect("refused");
    assert!(e.contains("vax"), "{e}");
    let msg = Msg::Run {
        id: 3,
        machine,
        patches: "6.6".into(),
        sim,
        record: true,
    };
    let text = serde_json::to_string(&msg).unwrap();
    assert_eq!(serde_json::from_str::<Msg>(&text).unwrap(), msg);
}

/// dbench's start, as the page sees it: before the release the run says its start is
/// pending and gives no warm-up end (the page then offers no default timeline window
/// and the live view plays the start-up quickly); after it, the release and the
/// warm-up's end counted from there (a fifth of the 20 ms), as the native report says.
#[test]
fn the_page_learns_the_clients_start_and_the_warm_up_from_it() {
    let machine = MachineChoice::Preset("kunpeng920-6426".to_string());
    let sim = tbench_setup(20, 1);
    let mut run = start(&machine, "6.6", &sim).expect("starts");
    run.advance(10_000_000).unwrap();
    let early = progress(1, &run, 0.0, None);
    assert!(early.start_pending && early.start_ns.is_none() && early.warmup_ns.is_none());
    assert!(early.warming);
    while !run.advance(SLICE_NS).unwrap() {}
    let end = progress(1, &run, 0.0, None);
    let at = end.start_ns.expect("the clients started");
    assert!(
        !end.start_pending && at > 100_000_000,
        "one 100 ms poll: {at}"
    );
    assert_eq!(end.warmup_ns, Some(at + 4_000_000));
    assert_eq!(end.report.as_ref().unwrap().start_ns, Some(at));
    assert_eq!(end.now_ns, at + 24_000_000);
    // A benchmark without such a start: known from time 0.
    let netperf = SimSetupV1 {
        workload: Workload::NetperfTcpRr { instances: 2 },
        ..tbench_setup(20, 1)
    };
    let run = start(&machine, "6.6", &netperf).expect("starts");
    let p = progress(1, &run, 0.0, None);
    assert!(!p.start_pending && p.start_ns.is_none());
    assert_eq!(p.warmup_ns, Some(4_000_000));
}
