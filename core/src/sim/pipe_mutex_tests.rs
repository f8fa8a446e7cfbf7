//! The pipe's mutex (`pipe_mutex.rs`, kernel/locking/mutex.c v6.5): writers to one
//! pipe serialise on it, spin while its owner runs, sleep when it does not, are
//! woken by the unlock without WF_SYNC, and a first waiter that lost the lock to a
//! newcomer gets it handed over.

use super::tests::{quiet_sim, task_on};
use super::*;
use crate::wakeup::WakeFlags;
use crate::workload::{Dist, Op, PipeRing, TaskSpec};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Task 0 on CPU 0: after 1 ms, reads `reads` messages of its pipe (16 pages of 40).
pub(super) fn reader(reads: u64) -> TaskSpec {
    let ops = vec![
        Op::Run(Dist::Fixed { ns: 1_000_000 }),
        Op::Wait,
        Op::Run(Dist::Fixed { ns: 1_000 }),
        Op::Repeat {
            to: 1,
            times: reads,
        },
        Op::Exit,
    ];
    TaskSpec {
        pipe: Some(PipeRing {
            slots: 16,
            msgs_per_page: 40,
        }),
        mailbox_cap: 640,
        ..task_on(96, &[0], 0, ops)
    }
}

/// A writer on `cpu`: `before_ns` of work, then `times` writes to task 0 of
/// `copy_ns` each (the section), `gap_ns` of work after each.
fn writer(cpu: u32, before_ns: u64, copy_ns: u64, gap_ns: u64, times: u64) -> TaskSpec {
    task_on(
        96,
        &[cpu],
        0,
        vec![
            Op::Run(Dist::Fixed { ns: before_ns }),
            Op::Send { to: 0 },
            Op::Run(Dist::Fixed { ns: copy_ns }),
            Op::Run(Dist::Fixed { ns: gap_ns }),
            Op::Repeat { to: 1, times },
            Op::Exit,
        ],
    )
}

/// [`reader`] with a one-page ring of one message: a second write waits for room.
fn one_slot_reader(reads: u64) -> TaskSpec {
    TaskSpec {
        pipe: Some(PipeRing {
            slots: 1,
            msgs_per_page: 1,
        }),
        mailbox_cap: 1,
        ..reader(reads)
    }
}

/// A task on `cpu` that does nothing to speak of: a body for hand-set scenes.
pub(super) fn idle(cpu: u32) -> TaskSpec {
    task_on(
        96,
        &[cpu],
        0,
        vec![Op::Run(Dist::Fixed { ns: 1 }), Op::Exit],
    )
}

pub(super) fn sim_of(tasks: Vec<TaskSpec>, cpus: u32) -> Simulator {
    let allowed = CpuMask::from_cpus(96, (0..cpus).map(CpuId));
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 200, tasks);
    sim.wake_log = Some(Vec::new());
    sim
}

/// The two-writer scene: `r` (task 0, CPU 0) and writers 1 and 2 on `cpus`, each
/// writing once to it after 1 ns, a `copy_ns` section (Kunpeng 920-4826).
pub(super) fn two_writers(r: TaskSpec, cpus: [u32; 2], copy_ns: u64) -> Simulator {
    let allowed = CpuMask::from_cpus(96, [0, cpus[0], cpus[1]].into_iter().map(CpuId));
    let tasks = vec![
        r,
        writer(cpus[0], 1, copy_ns, 1, 1),
        writer(cpus[1], 1, copy_ns, 1, 1),
    ];
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 200, tasks);
    sim.wake_log = Some(Vec::new());
    sim
}

/// Two writers reach the pipe at the same instant: the second finds the mutex held
/// (`__mutex_trylock_fast()` fails, mutex.c v6.5 lines 166-175), its owner on a CPU,
/// and spins (`mutex_optimistic_spin()`, 441-514): running, not blocked, until the
/// first's section ends; its copy follows (fs/pipe.c v6.5 lines 432, 581). Before
/// session 33 both copied at once and both messages landed together.
/// Task `t` owns pipe 0's mutex and runs its section on `cpu` until `until`.
fn owns_until(sim: &mut Simulator, t: u32, cpu: u32, until: SimTime) {
    sim.mutexes[0].owner = t;
    sim.tasks[t as usize].loc = Loc::Running(cpu);
    sim.cpus[cpu as usize].burst_end = until;
}

/// Task `t`, running on `cpu`, calls `mutex_lock()` on pipe 0's mutex and spins.
fn starts_spinning(sim: &mut Simulator, t: u32, cpu: u32) {
    sim.tasks[t as usize].loc = Loc::Running(cpu);
    assert!(matches!(
        sim.pipe_mutex_lock(t, 0, cpu),
        Some(program::Next::Run(_))
    ));
}

#[test]
fn a_second_writer_spins_through_the_first_ones_section() {
    let copy = 10_000;
    let mut sim = two_writers(reader(2), [1, 2], copy);
    let mut landed = Vec::new();
    let mut spun = false;
    while landed.len() < 2 {
        assert!(sim.step(), "both writes land");
        if sim.queue.peek_time().is_some_and(|t| t == sim.now) {
            continue;
        }
        for w in [1, 2] {
            if sim.mutex_wait[w].spinning_on == 0 {
                spun = true;
                let o = sim.mutexes[0].owner().expect("a spin has an owner");
                assert!(
                    matches!(sim.tasks[w].loc, Loc::Running(_))
                        && matches!(sim.tasks[o as usize].loc, Loc::Running(_)),
                    "a spinner runs, and so does the owner it spins on"
                );
            }
        }
        while landed.len() < sim.tasks[0].tokens as usize {
            landed.push(sim.now);
        }
    }
    assert!(spun, "the second writer spun");
    let apart = landed[1].since(landed[0]);
    assert!(
        apart >= copy,
        "the second message landed {apart} ns after the first: its copy waits for the first's"
    );
    let s = sim.pipe_mutex_stats();
    assert_eq!((s.contended, s.spun, s.slept), (1, 1, 0));
    // Both on one Kunpeng cluster: the lines move within it, which the
    // same-cluster lat_pipe residual `pipe_msg_ns` holds.
    assert_eq!(s.lines_ns, 0);
}

/// Writer 1 holds the mutex through a 20 ms section on CPU 1, which it shares with
/// a CPU hog; writer 2 on CPU 2 writes every 200 µs. When the tick preempts writer
/// 1 mid-section, `owner_on_cpu()` is false and writer 2's spin ends
/// (`mutex_spin_on_owner()`, mutex.c v6.5 lines 373-375): it sleeps on the wait
/// list, `TASK_UNINTERRUPTIBLE` (637, 648, 679), and writer 1's unlock wakes it
/// through `wake_up_q()` → `try_to_wake_up(p, TASK_NORMAL, 0)` (943, 951): no
/// WF_SYNC. Before session 33 writer 2 never waited for writer 1.
fn preempted_owner() -> Simulator {
    let hog = task_on(
        96,
        &[1],
        0,
        vec![Op::Run(Dist::Fixed { ns: 60_000_000 }), Op::Exit],
    );
    let mut sim = sim_of(
        vec![
            reader(4 + 200),
            writer(1, 1, 20_000_000, 1_000, 4),
            writer(2, 1, 1_000, 200_000, 200),
            hog,
        ],
        3,
    );
    let mut saw = false;
    while sim.step() {
        // Once the instant's events are done: nobody spins on an owner off its CPU.
        if sim.queue.peek_time().is_some_and(|t| t == sim.now) {
            continue;
        }
        let owner = sim.mutexes[0].owner();
        if sim.mutex_wait[2].spinning_on == 0 {
            let o = owner.expect("a spin has an owner");
            // (A spin whose owner left ends now, or after an interrupt taken at this
            // instant: the tick's time, not the rest of the owner's section.)
            let left_ns = sim.cpus[2].burst_end.since(sim.now);
            assert!(
                matches!(sim.tasks[o as usize].loc, Loc::Running(_)) || left_ns < 50_000,
                "writer 2 spins {left_ns} ns more on task {o}, which is off its CPU"
            );
        }
        if owner == Some(1) && matches!(sim.tasks[1].loc, Loc::Queued(_)) {
            let t = &sim.tasks[2];
            if (t.loc, t.block) == (Loc::Blocked, Block::Mutex) {
                saw = true;
            }
        }
    }
    assert_eq!(sim.error, None, "the run stopped");
    assert!(
        saw,
        "writer 2 slept on the mutex while its preempted owner held it"
    );
    assert_eq!(sim.live_tasks(), 0, "every task finished");
    sim
}

#[test]
fn a_spin_ends_when_the_owner_is_preempted_and_the_spinner_sleeps() {
    let sim = preempted_owner();
    let s = sim.pipe_mutex_stats();
    assert!(s.slept > 0 && s.spun > 0, "{s:?}");
}

#[test]
fn the_unlock_wakes_the_sleeping_waiter_without_wf_sync() {
    let sim = preempted_owner();
    let log = sim.wake_log.as_ref().unwrap();
    let by_unlock: Vec<_> = log
        .iter()
        .filter(|&&(p, w, _)| p == 2 && w == Some(1))
        .collect();
    assert!(!by_unlock.is_empty(), "writer 1's unlock woke writer 2");
    for &&(_, _, flags) in &by_unlock {
        assert!(
            !flags.contains(WakeFlags::SYNC),
            "wake_up_q() has no WF_SYNC"
        );
    }
    // The pipe's own wake-ups keep theirs (fs/pipe.c v6.5 line 596).
    assert!(log
        .iter()
        .any(|&(p, _, f)| p == 0 && f.contains(WakeFlags::SYNC)));
}

/// HANDOFF (mutex.c v6.5): the first waiter, woken, finds the lock taken by a
/// newcomer and sets `MUTEX_FLAG_HANDOFF` (`__mutex_trylock_or_handoff(lock,
/// first)`, lines 689, 117-120); the owner's unlock hands it the lock
/// (`__mutex_unlock_slowpath()` 921, 946-947, `__mutex_handoff()` 231-249, PICKUP),
/// and a spinner that comes meanwhile cannot take it (113-115): it sleeps behind.
#[test]
fn a_first_waiter_that_lost_the_lock_gets_it_handed_over() {
    let mut sim = sim_of(vec![reader(1), idle(1), idle(2), idle(3), idle(1)], 4);
    let (waiter, newcomer, spinner) = (1u32, 2u32, 3u32);
    // The newcomer owns the lock and runs its section on CPU 2 until 5 µs.
    owns_until(&mut sim, newcomer, 2, SimTime::from_us(5));
    // The waiter sat on the wait list and was woken (queued, not yet run).
    sim.mutexes[0].wait_list.push_back(waiter);
    sim.tasks[waiter as usize].loc = Loc::Queued(1);
    sim.mutex_wait[waiter as usize].since = SimTime::ZERO;
    // It runs, is first, fails its trylock: HANDOFF, then it spins (694).
    assert!(matches!(
        sim.pipe_mutex_lock(waiter, 0, 1),
        Some(program::Next::Run(_))
    ));
    assert!(sim.mutexes[0].handoff, "the first waiter set HANDOFF");
    // The owner unlocks: the waiter is the owner, to pick up.
    sim.pipe_mutex_unlock(newcomer, 0, 2);
    assert_eq!(sim.mutexes[0].owner(), Some(waiter));
    assert!(sim.mutexes[0].pickup && !sim.mutexes[0].handoff);
    // A spinner arriving now cannot take it; the waiter, off its CPU for the
    // test, is not an owner to spin on: the spinner sleeps behind it.
    sim.tasks[waiter as usize].loc = Loc::Queued(1);
    sim.tasks[spinner as usize].loc = Loc::Running(3);
    assert!(matches!(
        sim.pipe_mutex_lock(spinner, 0, 3),
        Some(program::Next::Block)
    ));
    assert_eq!(sim.mutexes[0].owner(), Some(waiter));
    // The waiter picks it up.
    assert!(sim.pipe_mutex_lock(waiter, 0, 1).is_none());
    assert_eq!(sim.mutexes[0].owner(), Some(waiter));
    assert_eq!(
        sim.mutexes[0].wait_list.iter().copied().collect::<Vec<_>>(),
        vec![spinner]
    );
}

/// A writer woken from `wr_wait` whose lockless `pipe_writable()` holds re-takes the
/// mutex (fs/pipe.c v6.5 lines 573-574) and re-checks under it. Here the mutex was
/// handed (PICKUP) to a writer that has not run yet: the woken writer sleeps on it;
/// the other writes into the free slot; the woken writer, given the lock, finds the
/// ring full, drops the lock and waits again (569-573): a futile wake-up through
/// the mutex. Before session 33 the woken writer wrote at once.
#[test]
fn a_woken_writer_retakes_the_mutex_and_may_find_the_ring_full_again() {
    let mut sim = two_writers(one_slot_reader(1), [1, 2], 1_000);
    let (woken, other) = (1u32, 2u32);
    // The woken writer runs its send (op 1) again, having waited; the other
    // writer was handed the mutex and has not run.
    sim.tasks[woken as usize].pc += 1;
    let send_pc = sim.tasks[woken as usize].pc;
    sim.tasks[woken as usize].loc = Loc::Running(1);
    sim.write_waited[woken as usize] = true;
    sim.mutexes[0].owner = other;
    sim.mutexes[0].pickup = true;
    sim.tasks[other as usize].loc = Loc::Queued(2);
    assert!(!sim.pipes[0].as_ref().unwrap().full(pipe::View::Lockless));
    assert!(matches!(sim.advance(woken, 1), program::Next::Block));
    assert_eq!(sim.tasks[woken as usize].block, Block::Mutex);
    assert_eq!(sim.tasks[0].tokens, 0, "nothing written yet");
    // The other picks the mutex up and takes the slot; its unlock finds the
    // woken writer first on the wait list (queued here: no wake-up to do).
    assert!(sim.pipe_mutex_lock(other, 0, 2).is_none());
    let page = sim.pipes[0].as_mut().unwrap().write(false);
    sim.pipes[0].as_mut().unwrap().end_write(page);
    sim.tasks[woken as usize].loc = Loc::Queued(1);
    sim.pipe_mutex_unlock(other, 0, 2);
    // The woken writer runs: no lockless check now (it is inside mutex_lock()),
    // the lock, the ring full under it, the unlock, the wait.
    sim.tasks[woken as usize].loc = Loc::Running(1);
    let futile = sim.futile_writer_wakeups();
    let mut next = sim.advance(woken, 1);
    // It pays the lines it pulled over before it sleeps (a burst), then waits.
    while let program::Next::Run(_) = next {
        next = sim.advance(woken, 1);
    }
    assert!(matches!(next, program::Next::Block));
    assert_eq!(sim.tasks[woken as usize].block, Block::SendFull);
    assert_eq!(sim.tasks[woken as usize].pc, send_pc, "still in its send");
    assert_eq!(sim.futile_writer_wakeups(), futile + 1);
    assert_eq!(sim.mutexes[0].owner(), None, "dropped before the wait");
    assert_eq!(sim.writers[0], vec![woken]);
    let s = sim.pipe_mutex_stats();
    assert_eq!((s.contended, s.slept), (1, 1), "{s:?}");
}

/// The section is the op's own work (docs/calibration.md, "pipe mutex hold"): a
/// writer woken from another cluster pays its data's refill after the wake-up
/// (`ttwu_do_activate()`'s cache distance) on its way back from `schedule()`,
/// before `__pipe_lock()` (fs/pipe.c v6.5 lines 573-574), so it holds the mutex for
/// its 5 µs copy only. Before the fix the refill was the first part of the section.
#[test]
fn a_woken_writer_pays_its_refill_before_it_takes_the_mutex() {
    let r = one_slot_reader(4);
    // CPU 0 and CPU 8: two clusters of the 4826.
    let w = writer(8, 1, 5_000, 1, 4);
    let allowed = CpuMask::from_cpus(96, [0, 8].into_iter().map(CpuId));
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 100, vec![r, w]);
    let mut held = Vec::new();
    let mut since = None;
    while sim.step() {
        let owner = sim.mutexes[0].owner();
        match (owner == Some(1), since) {
            (true, None) => since = Some(sim.now),
            (false, Some(t0)) => {
                held.push(sim.now.since(t0));
                since = None;
            }
            _ => {}
        }
    }
    assert_eq!(sim.live_tasks(), 0, "every task finished");
    let d = sim
        .cost
        .wake_data_ns_at(CpuId(0), CpuId(8), sim.cost.distance(CpuId(0), CpuId(8)));
    assert!(d > 0, "the wake-up across clusters leaves a refill to pay");
    assert!(held.len() >= 4, "{held:?}");
    assert!(
        held.iter().all(|&h| h == 5_000),
        "the mutex held for the copy alone: {held:?}"
    );
}

/// A sleeper woken by the unlock (`wake_up_q()`, mutex.c v6.5 line 951) pays its
/// data's refill after the wake-up on its way back from `schedule()` (679), before
/// its trylock (689): woken from another cluster, it holds the mutex for its copy
/// and the lock's lines only. Before the fix the refill was part of its section.
#[test]
fn a_sleeper_woken_by_the_unlock_pays_its_refill_before_it_takes_the_mutex() {
    let copy = 1_000;
    // CPU 1 and CPU 8: two clusters of the 4826.
    let mut sim = two_writers(reader(1), [1, 8], copy);
    let (owner, sleeper) = (1u32, 2u32);
    // The owner runs its section on CPU 1; the sleeper sleeps on the wait list,
    // in its send (op 1).
    sim.mutexes[0].owner = owner;
    sim.tasks[owner as usize].loc = Loc::Running(1);
    sim.mutexes[0].wait_list.push_back(sleeper);
    sim.tasks[sleeper as usize].pc += 1;
    sim.tasks[sleeper as usize].loc = Loc::Blocked;
    sim.tasks[sleeper as usize].block = Block::Mutex;
    sim.mutex_wait[sleeper as usize].since = SimTime::ZERO;
    sim.mutex_wait[sleeper as usize].slept = true;
    // The unlock frees the lock (no HANDOFF) and wakes the sleeper across clusters.
    sim.pipe_mutex_unlock(owner, 0, 1);
    assert_eq!(sim.mutexes[0].owner(), None);
    let refill = sim.tasks[sleeper as usize].debt_ns;
    assert!(
        refill > 0,
        "the wake-up across clusters leaves a refill to pay"
    );
    // The sleeper runs on CPU 8: its bursts until it holds the lock, then its section.
    sim.tasks[sleeper as usize].loc = Loc::Running(8);
    let mut before = 0;
    let section = loop {
        let program::Next::Run(ns) = sim.advance(sleeper, 8) else {
            panic!("the sleeper takes the free lock");
        };
        if sim.mutexes[0].owner() == Some(sleeper) {
            break ns;
        }
        before += ns;
    };
    assert_eq!(before, refill, "the refill is paid before the lock");
    // The lock's lines were on the unlocker's CPU, the waker's: the refill priced
    // them (`wake_data_ns`, pipe_mutex.rs's module doc); nothing more in the section.
    // Before session 34 the section was the copy and 3 lines at the c2c latency.
    assert_eq!(section, copy, "the section is the copy alone");
}

/// A spinner takes the lock the unlock frees as a plain owner (its trylock,
/// `__mutex_trylock_or_owner()`, mutex.c v6.5 line 468): no PICKUP, which only
/// `__mutex_handoff()` sets (231-249). So the first waiter, woken and failing its
/// trylock, sets HANDOFF (689, 117-120). Before the fix the spinner was given
/// PICKUP and the waiter's failure set nothing.
#[test]
fn a_spinner_given_the_lock_at_the_unlock_is_a_plain_owner() {
    let mut sim = sim_of(vec![reader(1), idle(1), idle(2), idle(3)], 4);
    let (owner, spinner, waiter) = (1u32, 2u32, 3u32);
    // The owner runs its section on CPU 1 until 5 µs; the spinner spins on it.
    owns_until(&mut sim, owner, 1, SimTime::from_us(5));
    starts_spinning(&mut sim, spinner, 2);
    assert_eq!(sim.mutexes[0].spinners, vec![spinner]);
    // The waiter sleeps on the wait list, first.
    sim.mutexes[0].wait_list.push_back(waiter);
    sim.tasks[waiter as usize].loc = Loc::Blocked;
    sim.tasks[waiter as usize].block = Block::Mutex;
    sim.mutex_wait[waiter as usize].since = SimTime::ZERO;
    // The unlock (no HANDOFF): the spinner owns it, plainly; the waiter is woken.
    sim.pipe_mutex_unlock(owner, 0, 1);
    assert_eq!(sim.mutexes[0].owner(), Some(spinner));
    assert!(!sim.mutexes[0].pickup, "a spinner's trylock sets no PICKUP");
    // The woken waiter runs (its refill paid) and fails: HANDOFF.
    sim.tasks[waiter as usize].debt_ns = 0;
    sim.tasks[waiter as usize].loc = Loc::Running(3);
    assert!(sim.pipe_mutex_lock(waiter, 0, 3).is_some());
    assert!(
        sim.mutexes[0].handoff,
        "the first waiter that failed set HANDOFF"
    );
    // The spinner takes up its lock.
    assert!(sim.pipe_mutex_lock(spinner, 0, 2).is_none());
    assert_eq!(sim.mutexes[0].owner(), Some(spinner));
    assert!(!sim.mutexes[0].spinners.contains(&spinner));
}

/// `check_invariants()`'s mutex rules: a pipe op in its section holds its pipe's
/// mutex (fs/pipe.c v6.5 lines 244-388, 432-581); a task asleep on a mutex is on
/// exactly one wait list (mutex.c v6.5 637-679); the owner is neither asleep on the
/// mutex nor exited. Each broken state is caught (by `check_pipes()`: the broken
/// locations would trip the runqueue rules first).
#[test]
fn the_invariants_catch_a_broken_pipe_mutex() {
    let fresh = || sim_of(vec![reader(1), writer(1, 1, 1_000, 1, 1)], 2);
    assert_eq!(fresh().check_invariants(), Ok(()));
    // A write in its copy whose mutex nobody holds.
    let mut sim = fresh();
    sim.pipe_ops[1] = pipe::PipeOp::Write {
        to: 0,
        waited: false,
        page: 0,
        reads: 0,
    };
    sim.pipes[0].as_mut().unwrap().write(false);
    let err = sim.check_pipes().unwrap_err();
    assert!(err.contains("mutex's owner is None"), "{err}");
    // Asleep on the mutex, on no wait list; then on two.
    let mut sim = fresh();
    sim.mutexes[0].owner = 0;
    sim.tasks[1].loc = Loc::Blocked;
    sim.tasks[1].block = Block::Mutex;
    let err = sim.check_pipes().unwrap_err();
    assert!(err.contains("on 0 wait lists"), "{err}");
    sim.mutex_wait[1].since = SimTime::ZERO;
    sim.mutexes[0].wait_list.push_back(1);
    sim.mutexes[1].wait_list.push_back(1);
    let err = sim.check_pipes().unwrap_err();
    assert!(err.contains("on 2 wait lists"), "{err}");
    // The owner asleep on the mutex; the owner exited.
    let mut sim = fresh();
    sim.mutexes[0].owner = 1;
    sim.mutexes[0].wait_list.push_back(1);
    sim.mutex_wait[1].since = SimTime::ZERO;
    sim.tasks[1].loc = Loc::Blocked;
    sim.tasks[1].block = Block::Mutex;
    let err = sim.check_pipes().unwrap_err();
    assert!(err.contains("owns task 0's pipe mutex"), "{err}");
    sim.tasks[1].loc = Loc::Exited;
    let err = sim.check_pipes().unwrap_err();
    assert!(err.contains("owns task 0's pipe mutex"), "{err}");
    // A waiter that left mutex_lock() without the lock (session 34).
    let mut sim = fresh();
    sim.mutexes[0].owner = 0;
    sim.mutexes[0].wait_list.push_back(1);
    let err = sim.check_pipes().unwrap_err();
    assert!(err.contains("wait list outside mutex_lock()"), "{err}");
}

/// The unlock with a spinner and no HANDOFF: the spinner sees the owner word
/// cleared (`__mutex_unlock_slowpath()`'s release, mutex.c v6.5 line 924), leaves
/// `mutex_spin_on_owner()` (359) and takes the lock with its trylock (468) a line
/// transfer later, long before the unlocker's next `__pipe_lock()` (fs/pipe.c v6.5
/// line 244) after its wake-ups and the syscall's exit and entry. The model's
/// reader, whose section is its whole op, re-locks its pipe at the unlock's very
/// instant: it finds the writer owning the lock, and spins on it.
#[test]
fn a_spinning_writer_wins_the_lock_over_the_reader_relocking_at_once() {
    let mut sim = sim_of(vec![reader(2), idle(1)], 2);
    let (rd, wr) = (0u32, 1u32);
    // The reader holds its pipe's mutex for its read on CPU 0, until 5 µs.
    owns_until(&mut sim, rd, 0, SimTime::from_us(5));
    // The writer on CPU 1 spins on it.
    starts_spinning(&mut sim, wr, 1);
    // The read's unlock, then the reader's next read locks again at once.
    sim.pipe_mutex_unlock(rd, 0, 0);
    assert_eq!(sim.mutexes[0].owner(), Some(wr), "the spinner took it");
    assert!(matches!(
        sim.pipe_mutex_lock(rd, 0, 0),
        Some(program::Next::Run(_))
    ));
    assert_eq!(
        sim.mutex_wait[rd as usize].spinning_on, 0,
        "the reader spins"
    );
    assert_eq!(sim.mutexes[0].owner(), Some(wr));
    // The writer's retry picks up the lock it was given.
    assert!(sim.pipe_mutex_lock(wr, 0, 1).is_none());
    assert_eq!(sim.mutexes[0].owner(), Some(wr));
}

/// A reader asleep on its own pipe's mutex whose mailbox gets its start signal (a
/// token beyond the pipe's messages: another fd in the kernel) finishes its
/// `mutex_lock()` when woken, finds no message under the lock and drops it
/// (fs/pipe.c v6.5 line 350), then takes the signal. Before session 34 it took the
/// signal without the lock and left its entry on the wait list (unreachable with
/// the built-in workloads, whose readers lock only after their start).
#[test]
fn a_reader_inside_mutex_lock_finishes_it_before_taking_its_start_signal() {
    let mut sim = sim_of(vec![reader(1), idle(1)], 2);
    let (rd, owner) = (0u32, 1u32);
    // The reader sleeps on its own mutex in its Wait (op 1); the start token came.
    sim.tasks[rd as usize].pc = 1;
    sim.tasks[rd as usize].tokens = 1;
    sim.mutexes[0].owner = owner;
    sim.tasks[owner as usize].loc = Loc::Running(1);
    sim.mutexes[0].wait_list.push_back(rd);
    sim.mutex_wait[rd as usize].since = SimTime::ZERO;
    sim.mutex_wait[rd as usize].slept = true;
    // Woken by the unlock (queued already here: no wake-up to do), it runs.
    sim.tasks[rd as usize].loc = Loc::Queued(0);
    sim.pipe_mutex_unlock(owner, 0, 1);
    sim.tasks[rd as usize].loc = Loc::Running(0);
    assert!(matches!(sim.advance(rd, 0), program::Next::Run(_)));
    assert_eq!(sim.tasks[rd as usize].tokens, 0, "the start signal taken");
    assert!(sim.mutexes[0].wait_list.is_empty(), "off the wait list");
    assert_eq!(sim.mutexes[0].owner(), None, "the lock dropped");
    assert!(!sim.in_mutex_lock(rd, 0));
    assert_eq!(sim.check_pipes(), Ok(()));
}
