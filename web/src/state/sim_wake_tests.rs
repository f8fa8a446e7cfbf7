//! The Wake-up tab holding a simulated wake-up: opened, captured (by the worker's own
//! code, natively), decided on both sides, carried by the link, closed.

use schedlab_core::scenario::SimSetup;
use schedlab_core::workload::Workload;

use super::*;
use crate::hooks::use_record::{captured_action, RecordRequest};
use crate::worker::{record_now, RecordJob};

/// Kunpeng 920, tbench 8 clients on node 0, 20 ms, 6.6 against 6.6+cluster.
fn page() -> Rc<AppState> {
    let st = Rc::new(AppState::new("kunpeng920-6426", Release::new(6, 6)).unwrap());
    let st = st.reduce(Action::SetCompare(true));
    let sim = SimSetup {
        warmup: Default::default(),
        workload: Workload::Tbench { clients: 8 },
        cpus: CpuSelection::parse(st.machine(), "node0").unwrap(),
        duration_ms: 20,
        seed: 5,
        seeds: 1,
        sweep: Vec::new(),
    };
    st.reduce(Action::SetSim(sim))
}

/// What the tool worker answers for `at` (the worker's code, run natively).
fn capture(st: &AppState, at: SimWakeRef) -> Action {
    let job = RecordJob {
        cap: 0,
        window_ns: None,
        capture_wake: Some(at.wake),
        trace: false,
    };
    let req = RecordRequest::wake(st, &at, job);
    let r = record_now(&req.machine, &req.patches, &req.sim, &req.job);
    captured_action(at, req.patches, r)
}

#[test]
fn a_simulated_wake_up_opens_decides_rides_the_link_and_closes() {
    let st = page();
    assert_eq!(st.patches().to_string(), "6.6");
    assert_eq!(
        st.wake().compare.map(|p| p.to_string()).as_deref(),
        Some("6.6+cluster")
    );
    let at = SimWakeRef {
        side: Side::B,
        seed: 5,
        wake: 400,
        scale: None,
    };
    let st = st.reduce(Action::OpenSimWake(at));
    assert_eq!(st.tab(), View::Wakeup);
    assert_eq!(st.sim_wake, Some(SimWakeStatus::Capturing(at)));
    // The link carries the reference and the simulation it names; opening it
    // captures again.
    let linked = AppState::from_fragment(&st.fragment());
    assert_eq!(linked.scenario.wake.sim, Some(at));
    assert_eq!(linked.sim(), st.sim());
    assert_eq!(linked.sim_wake, Some(SimWakeStatus::Capturing(at)));

    // The capture: B's decision on it is the simulated CPU; A decides the same inputs.
    let got = capture(&st, at);
    let st = st.reduce(got);
    let Some(SimWakeStatus::Ready(w)) = &st.sim_wake else {
        panic!("captured: {:?}", st.sim_wake)
    };
    assert!(
        w.origin()
            .starts_with("wake-up #400 of side B, seed 5, t = "),
        "{}",
        w.origin()
    );
    assert_eq!(w.patches, "6.6+cluster");
    let b = st.wake_b.clone().unwrap().unwrap();
    assert_eq!(b.decision.cpu, w.simulated_cpu);
    assert_eq!(b.patches.to_string(), "6.6+cluster");
    let a = st.wake_a.clone().unwrap().unwrap();
    assert_eq!(a.patches.to_string(), "6.6");
    let marks = st.wake_marks().unwrap();
    assert_eq!(marks.chosen_b, Some(w.simulated_cpu));
    assert_eq!(marks.waker.0, w.scenario.waker.cpu);
    // The hand-set inputs are not edited meanwhile.
    assert!(Rc::ptr_eq(
        &st,
        &st.clone().reduce(Action::ClickCpu(CpuId(3)))
    ));
    // A capture for another reference is not this one's.
    let other = SimWakeRef { wake: 401, ..at };
    let got = capture(&st, other);
    assert!(Rc::ptr_eq(&st, &st.clone().reduce(got)));

    // Back: the hand-set wake-up again, and the link forgets the reference.
    let back = st.clone().reduce(Action::CloseSimWake);
    assert_eq!(
        (back.sim_wake.clone(), back.scenario.wake.sim),
        (None, None)
    );
    assert_ne!(back.wake_b.clone().unwrap().unwrap().trace, b.trace);

    // B's patch set changing names another run: closed. A's does not matter to it.
    let a_changed = st
        .clone()
        .reduce(Action::TogglePatch(Side::A, Patch::Cluster, true));
    assert_eq!(a_changed.scenario.wake.sim, Some(at));
    let b_changed = st
        .clone()
        .reduce(Action::TogglePatch(Side::B, Patch::Cluster, false));
    assert_eq!(
        (b_changed.sim_wake.clone(), b_changed.scenario.wake.sim),
        (None, None)
    );
    let sim_changed = st.clone().reduce(Action::SetSim(SimSetup {
        seed: 6,
        ..st.sim().clone()
    }));
    assert_eq!(sim_changed.scenario.wake.sim, None);

    // Past the run's wake-ups: an error the tab shows, not a panic.
    let far = SimWakeRef {
        side: Side::A,
        seed: 5,
        wake: 50_000_000,
        scale: None,
    };
    let st = st.reduce(Action::OpenSimWake(far));
    let got = capture(&st, far);
    let st = st.reduce(got);
    let Some(SimWakeStatus::Failed(_, e)) = &st.sim_wake else {
        panic!("{:?}", st.sim_wake)
    };
    assert!(e.contains("only"), "{e}");
}

/// Side B's wake-ups (time, record) in the run at scale `threads`, as the timeline
/// draws them from a re-run.
fn wakes_at(st: &AppState, threads: u32) -> Vec<(u64, schedlab_core::sim::record::WakeRecord)> {
    use schedlab_core::sim::record::{RecordKind, Recording};
    let job = RecordJob {
        cap: 1 << 20,
        window_ns: None,
        capture_wake: None,
        trace: false,
    };
    let req = RecordRequest::side_at(st, Side::B, 5, threads, job);
    let r = record_now(&req.machine, &req.patches, &req.sim, &req.job);
    assert_eq!(r.error, None);
    Recording::records_from_bytes(&r.records.0)
        .unwrap()
        .into_iter()
        .filter_map(|r| match r.kind {
            RecordKind::Wake(w) => Some((r.at_ns, w)),
            _ => None,
        })
        .collect()
}

/// A wake-up of a sweep point other than the watched one (the timeline's menu):
/// the reference names the point, the link carries it, and the capture re-runs at
/// that point, so the simulated CPU and time are that point's record's, and the
/// decision on the captured state chooses that CPU.
#[test]
fn a_wake_up_at_another_sweep_point_is_captured_there() {
    let st = page();
    let sim = SimSetup {
        sweep: vec![2, 8],
        ..st.sim().clone()
    };
    let st = st.reduce(Action::SetSim(sim));
    assert_eq!(crate::hooks::use_run::watched_scale(st.sim()), 8);
    assert_eq!(crate::hooks::use_run::scale_ref(st.sim(), 8), None);
    assert_eq!(crate::hooks::use_run::scale_ref(st.sim(), 2), Some(2));
    let (at2, at8) = (wakes_at(&st, 2), wakes_at(&st, 8));
    // A wake-up that left its prev CPU at 2 clients, and that the watched run's
    // wake-up of the same number does not match (else the test could not tell).
    let &(at_ns, w) = at2
        .iter()
        .find(|(t, w)| {
            w.cpu != w.prev_cpu
                && at8
                    .iter()
                    .find(|(_, v)| v.seq == w.seq)
                    .is_none_or(|(t8, v)| (t8, v.cpu) != (t, w.cpu))
        })
        .expect("a wake-up that tells the points apart");
    let at = SimWakeRef {
        side: Side::B,
        seed: 5,
        wake: w.seq,
        scale: Some(2),
    };
    let st = st.reduce(Action::OpenSimWake(at));
    let linked = AppState::from_fragment(&st.fragment());
    assert_eq!(linked.scenario.wake.sim, Some(at));
    assert_eq!(linked.sim_wake, Some(SimWakeStatus::Capturing(at)));
    let got = capture(&st, at);
    let st = st.reduce(got);
    let Some(SimWakeStatus::Ready(got)) = &st.sim_wake else {
        panic!("captured: {:?}", st.sim_wake)
    };
    assert_eq!(
        (got.at_ns, got.simulated_cpu),
        (at_ns, CpuId(u32::from(w.cpu))),
        "wake-up #{} at 2 clients",
        w.seq
    );
    let b = st.wake_b.clone().unwrap().unwrap();
    assert_eq!(b.decision.cpu, got.simulated_cpu);
}
