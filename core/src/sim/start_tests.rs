//! Tests of dbench's start barrier and the start clock (`start.rs`): no client runs
//! its loop before the release, the release wakes every client in queue order and
//! without `WF_SYNC`, and a throughput workload's warm-up starts at the release.

use super::program::Ins;
use super::record::WakeRecord;
use super::start::START_CLOCK_WAIT;
use super::test_support::{test_config, tiny};
use super::*;
use crate::cost::CostParams;
use crate::topology::presets;
use crate::workload::{self, Dist, MetricKind, Noise, Op, Workload};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const CLIENTS: u32 = 8;

/// tbench, 8 clients, on Kunpeng 920's node 0 (seed 01's setting), default noise.
fn tbench_config(duration_ms: u64, warmup_ms: u64) -> SimConfig {
    let machine = presets::machine("kunpeng920-4826").unwrap();
    let n = machine.nr_cpus();
    let w = Workload::Tbench { clients: CLIENTS };
    let plan = workload::build(&w, &CostParams::for_machine(&machine), n).unwrap();
    let allowed = CpuMask::parse_list(n, "0-31").unwrap();
    SimConfig {
        seed: 2,
        warmup: SimTime::from_ms(warmup_ms),
        noise: Noise::Default,
        ..test_config(machine, allowed, "6.6", plan, SimTime::from_ms(duration_ms))
    }
}

/// The tbench parent (the launcher: the last workload task).
fn parent() -> u32 {
    2 * CLIENTS + 1
}

/// Steps `sim` until the parent has released its barrier; returns the release time
/// and the clients in the order they waited at the barrier just before it. Checks,
/// before every step, that no client has run an op of its request loop.
fn run_to_release(sim: &mut Simulator, loop_start: &[u32]) -> (SimTime, Vec<u32>) {
    let mut queue = Vec::new();
    while !sim.start.released.contains(&parent()) {
        for c in 0..CLIENTS {
            let pc = sim.tasks[(2 * c) as usize].pc;
            assert!(
                pc <= loop_start[c as usize],
                "client {} at op {} before the release (its loop starts at {})",
                2 * c,
                pc,
                loop_start[c as usize]
            );
        }
        queue = sim.start.waiters.iter().map(|&(_, c)| c).collect();
        assert!(sim.step(), "the run ended before the release");
    }
    (sim.now, queue)
}

/// Each client's first op of its request loop: the op after its `WaitBarrier`.
fn loop_starts(sim: &Simulator) -> Vec<u32> {
    (0..CLIENTS)
        .map(|c| {
            let mut pc = sim.tasks[(2 * c) as usize].pc;
            while !matches!(sim.code.ins[pc as usize], Ins::WaitBarrier) {
                pc += 1;
            }
            pc + 1
        })
        .collect()
}

#[test]
fn no_client_runs_its_loop_before_the_release_and_all_do_after() {
    let mut sim = Simulator::new(tbench_config(10, 2)).unwrap();
    let starts = loop_starts(&sim);
    let (at, queue) = run_to_release(&mut sim, &starts);
    // Every client had connected and waited; the first GETZCNT (right after the
    // forks) cannot see them all, so the release follows at least one 100 ms sleep.
    assert_eq!(queue.len(), CLIENTS as usize);
    assert!(
        at >= SimTime(workload::DBENCH_BARRIER_POLL_NS),
        "released at {at:?}"
    );
    assert!(
        at < SimTime(2 * workload::DBENCH_BARRIER_POLL_NS),
        "released at {at:?}"
    );
    sim.run().unwrap();
    for c in 0..CLIENTS {
        let pc = sim.tasks[(2 * c) as usize].pc;
        assert!(
            pc >= starts[c as usize],
            "client {} never left the barrier",
            2 * c
        );
    }
    assert!(sim.metrics().units > 0);
}

#[test]
fn the_warm_up_and_the_measured_window_start_at_the_release() {
    let (duration, warmup) = (10, 2);
    let mut sim = Simulator::new(tbench_config(duration, warmup)).unwrap();
    let starts = loop_starts(&sim);
    let (at, _) = run_to_release(&mut sim, &starts);
    assert_eq!(sim.warmup_time(), at + SimTime::from_ms(warmup).ns());
    assert_eq!(sim.end_time(), at + SimTime::from_ms(duration).ns());
    while sim.now < sim.warmup_time() {
        assert!(!sim.measuring(), "measuring at {:?}", sim.now);
        assert!(sim.step());
    }
    sim.run().unwrap();
    assert!(sim.measuring());
    assert_eq!(sim.now, at + SimTime::from_ms(duration).ns());
    let r = sim.metrics().report(sim.now.ns(), &[0]);
    assert_eq!(r.window_ns, SimTime::from_ms(duration - warmup).ns());
}

#[test]
fn the_release_wakes_every_client_in_queue_order_without_wf_sync() {
    // First run: the release's wake-ups, numbered, and the order of the queue.
    let rc = RecordConfig::default();
    let mut sim = Simulator::with_recorder(tbench_config(10, 2), rc.clone()).unwrap();
    let starts = loop_starts(&sim);
    let (_, queue) = run_to_release(&mut sim, &starts);
    let wakes: Vec<WakeRecord> = sim.recording().unwrap().wakes().copied().collect();
    let release: Vec<&WakeRecord> = wakes.iter().filter(|w| w.waker == parent()).collect();
    let order: Vec<u32> = release.iter().map(|w| w.wakee).collect();
    assert_eq!(order, queue, "woken in queue order");
    // A wake-up of a pair's task by the other (a socket write) for comparison: WF_SYNC.
    let sync = wakes
        .iter()
        .find(|w| w.waker < 2 * CLIENTS && w.wakee < 2 * CLIENTS)
        .expect("a setup exchange woke a client or a server");
    // Second run, the same seed: capture those wake-ups' inputs.
    let mut capture: Vec<u32> = release.iter().map(|w| w.seq).collect();
    capture.push(sync.seq);
    let rc = RecordConfig {
        capture_wake: capture.clone(),
        ..rc
    };
    let mut sim = Simulator::with_recorder(tbench_config(10, 2), rc).unwrap();
    run_to_release(&mut sim, &starts);
    let got = sim.captured_wakes();
    assert_eq!(got.len(), capture.len());
    for c in got {
        let is_sync = c.scenario.wake_flags.iter().any(|f| f == "sync");
        assert_eq!(
            is_sync,
            c.seq == sync.seq,
            "wake-up {}: {:?}",
            c.seq,
            c.scenario.wake_flags
        );
    }
}

#[test]
fn a_barrier_needs_a_parent_and_children() {
    let machine = presets::machine("kunpeng920-4826").unwrap();
    let w = Workload::Tbench { clients: 2 };
    let mut plan =
        workload::build(&w, &CostParams::for_machine(&machine), machine.nr_cpus()).unwrap();
    // A client without a parent cannot wait at its barrier.
    plan.tasks[0].parent = None;
    let mut cfg = tbench_config(10, 2);
    cfg.plan = plan;
    let Err(e) = Simulator::new(cfg) else {
        panic!("a client without a parent waits at a barrier");
    };
    let err = e.to_string();
    assert!(err.contains("barrier"), "{err}");
}

#[test]
fn a_start_clock_never_read_ends_the_run_with_an_error_after_30_s() {
    let t = tiny;
    // The child never reaches the barrier: the parent polls it for ever.
    let parent = t(
        None,
        vec![
            Op::Run(Dist::fixed(1_000)),
            Op::Fork,
            Op::PollBarrier(Dist::fixed(workload::DBENCH_BARRIER_POLL_NS)),
            Op::StartClock,
            Op::ReleaseBarrier,
            Op::Wait,
            Op::Jump { to: 5 },
        ],
    );
    let child = t(Some(1), vec![Op::Wait, Op::Jump { to: 0 }]);
    let mut cfg = tbench_config(10, 2);
    cfg.plan = Plan::for_duration(
        vec![child, parent],
        MetricKind::Throughput {
            unit: "x",
            scale: 1,
            divisor: 1,
        },
    );
    cfg.noise = Noise::Quiet;
    let mut sim = Simulator::new(cfg).unwrap();
    let Err(e) = sim.run() else {
        panic!("a run whose benchmark never started succeeded");
    };
    assert!(e.to_string().contains("did not start within 30 s"), "{e}");
    assert_eq!(sim.now, SimTime::from_ms(10) + START_CLOCK_WAIT.ns());
}
