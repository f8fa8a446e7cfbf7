//! What the pipe's mutex costs (`pipe_mutex.rs`): the lines an acquisition pulls,
//! priced where they are and not where `pipe_msg_ns` or the wake-up's refill
//! already holds them, and the spin, counted as done and never losing the
//! interrupt time its CPU owes.

use super::pipe_mutex::{PipeMutex, NONE, PIPE_MUTEX_LINES};
use super::pipe_mutex_tests::{idle, reader, sim_of, two_writers};
use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Session 34: an acquisition, contended or not, pulls the lock's and the pipe's
/// lines from the last owner's CPU at what the transfer costs above a same-cluster
/// one (`pipe_msg_ns` holds that); after a wake-up, less what its refill
/// (`wake_data_ns`) paid for lines from the waker's CPU. Kunpeng 920-4826: CPU 0
/// takes the lock; 1 shares its cluster, 12 its die, 24 is the other die. Before,
/// an uncontended acquisition paid nothing wherever the lines were.
#[test]
fn an_acquisition_pays_for_the_lines_by_where_they_are() {
    let mut sim = sim_of(vec![reader(1), idle(1)], 2);
    let mut lines = |last: u32, woken_from: u32| {
        sim.mutexes[0] = PipeMutex::new();
        sim.mutexes[0].last_cpu = last;
        sim.tasks[1].debt_ns = 0;
        sim.mutex_wait[1].woken_from = woken_from;
        assert!(
            sim.pipe_mutex_lock(1, 0, 0).is_none(),
            "a free lock is taken"
        );
        assert_eq!(
            sim.mutex_wait[1].woken_from, NONE,
            "the refill's credit is used"
        );
        std::mem::take(&mut sim.tasks[1].debt_ns)
    };
    let (cluster, die, other_die) = (lines(1, NONE), lines(12, NONE), lines(24, NONE));
    let (same_cpu, never) = (lines(0, NONE), lines(NONE, NONE));
    let (from_waker, from_near_waker) = (lines(24, 24), lines(24, 1));
    let from_die_waker = lines(24, 12);
    let c2c = |a: u32| sim.cost.c2c_ns(CpuId(a), CpuId(0));
    let above = |a: u32| c2c(a) - c2c(1);
    assert!(above(24) > 0, "the other die's lines cost more");
    assert_eq!(
        (same_cpu, never, cluster),
        (0, 0, 0),
        "local lines cost nothing"
    );
    assert_eq!(die, PIPE_MUTEX_LINES * above(12));
    assert_eq!(other_die, PIPE_MUTEX_LINES * above(24));
    assert_eq!(from_waker, 0, "the refill from the waker's CPU priced them");
    assert_eq!(
        from_near_waker, other_die,
        "a waker in the cluster priced nothing"
    );
    assert_eq!(from_die_waker, PIPE_MUTEX_LINES * (above(24) - above(12)));
}

/// The two-writer scene (`two_writers()`, 10 µs sections on CPUs 1 and 2) run
/// until one writer spins on the other: the spinner and its CPU.
fn spinning() -> (Simulator, u32, u32) {
    let mut sim = two_writers(reader(2), [1, 2], 10_000);
    loop {
        assert!(sim.step(), "a writer spins before the run ends");
        if let Some(w) = (1..3u32).find(|&w| sim.mutex_wait[w as usize].spinning_on == 0) {
            let Loc::Running(c) = sim.tasks[w as usize].loc else {
                panic!("a spinner runs");
            };
            return (sim, w, c);
        }
    }
}

/// A spinner preempted (`put_prev()`) drops its spin but not the interrupt time
/// its CPU took meanwhile (`stolen_ns`): it pays that when it runs again, before
/// it tries its op again, as any preempted task does. Before session 34 it was
/// lost.
#[test]
fn a_preempted_spinner_keeps_the_interrupt_time_it_owes() {
    let (mut sim, w, c) = spinning();
    sim.cpus[c as usize].stolen_ns += 777;
    let owed = sim.cpus[c as usize].stolen_ns;
    sim.put_prev(c);
    assert_eq!(
        sim.mutex_wait[w as usize].spinning_on, NONE,
        "the spin dropped"
    );
    assert_eq!(sim.tasks[w as usize].remaining_ns, owed);
    assert_eq!(sim.cpus[c as usize].stolen_ns, 0);
}

/// The spin statistic counts the spin done: a spin preempted after 1 µs counts
/// 1 µs; one cut short by its owner leaving its CPU counts up to that instant, not
/// the interrupt its CPU takes before the spinner runs its op again. Before
/// session 34 each counted the whole planned spin, the owner's burst's end.
#[test]
fn the_spin_statistic_counts_only_the_spin_done() {
    let (mut sim, _, c) = spinning();
    let planned = sim.cpus[c as usize].burst_end.since(sim.now);
    assert!(planned > 5_000, "the spin would last the owner's section");
    sim.now += 1_000;
    sim.put_prev(c);
    assert_eq!(sim.pipe_mutex_stats().spin_ns, 1_000, "preempted");

    let (mut sim, w, c) = spinning();
    let owner = sim.mutexes[0].owner().expect("a spin has an owner");
    sim.now += 2_000;
    sim.mutex_owner_or_spinner_leaves(owner);
    let Loc::Running(oc) = sim.tasks[owner as usize].loc else {
        panic!("the owner ran");
    };
    sim.tasks[owner as usize].loc = Loc::Queued(oc);
    assert_eq!(sim.cpus[c as usize].burst_end, sim.now, "the spin ends now");
    sim.now += 500;
    sim.pipe_mutex_lock(w, 0, c);
    assert_eq!(sim.pipe_mutex_stats().spin_ns, 2_000, "cut short");
}
