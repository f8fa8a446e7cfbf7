//! A pipe's writers wait exclusively: `pipe_write()` blocks in
//! `wait_event_interruptible_exclusive(pipe->wr_wait, pipe_writable(pipe))` (fs/pipe.c
//! v6.5 line 573), `pipe_read()` of a full pipe wakes them with
//! `wake_up_interruptible_sync_poll()` (lines 254, 390-391), which is
//! `__wake_up_sync_key()` → `__wake_up_common()` with `nr_exclusive` 1
//! (kernel/sched/wait.c v6.5 lines 80-121, 202-208): one writer per read, the first
//! queued; a woken writer that leaves room wakes the next (`wake_next_writer`,
//! fs/pipe.c lines 576-599).

use super::pipe::PipeOp;
use super::record::RecordConfig;
use super::tests::quiet_sim;
use super::tests::task_on;
use super::*;
use crate::workload::{Dist, Op, PipeRing, Plan, TaskSpec};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const PER_WRITER: u64 = 20;

/// A slow reader (task 0, CPU 0) of a pipe holding `cap` messages, reading `burst`
/// at a time, and three writers (tasks 1-3, CPUs 1-3) sending it 20 messages each:
/// the pipe is full whenever the reader reads. Returns the wake-ups, (waker, wakee).
fn slow_reader_of_three_writers(exclusive: bool, cap: u32, burst: u16) -> Vec<(u32, u32)> {
    let mut program = vec![Op::Wait; burst as usize];
    program.extend([
        Op::Run(Dist::Fixed { ns: 20_000 }),
        Op::Repeat {
            to: 0,
            times: 3 * PER_WRITER / burst as u64,
        },
        Op::Exit,
    ]);
    let reader = TaskSpec {
        // One message a page: `cap` pages hold `cap` messages.
        pipe: exclusive.then_some(PipeRing {
            slots: cap,
            msgs_per_page: 1,
        }),
        mailbox_cap: cap,
        ..task_on(96, &[0], 0, program)
    };
    let writer = |cpu| writer_of_task_0(cpu, PER_WRITER);
    let tasks = vec![reader, writer(1), writer(2), writer(3)];
    let machine = crate::topology::presets::machine("kunpeng920-4826").unwrap();
    let allowed = CpuMask::from_cpus(96, (0..4).map(CpuId));
    let cfg = test_support::test_config(
        machine,
        allowed,
        "6.8",
        Plan::to_completion(tasks),
        SimTime::from_ms(100),
    );
    let rc = RecordConfig {
        cap: 1 << 16,
        window: None,
        capture_wake: vec![],
    };
    let mut sim = Simulator::with_recorder(cfg, rc).unwrap();
    sim.run().unwrap();
    assert_eq!(sim.live_tasks(), 0, "every task finished");
    let rec = sim.recording().unwrap();
    assert!(!rec.truncated);
    rec.wakes().map(|w| (w.waker, w.wakee)).collect()
}

/// Wake-ups of a writer (tasks 1-3) by `waker` in `wakes`.
fn writers_woken_by(wakes: &[(u32, u32)], waker: impl Fn(u32) -> bool) -> u64 {
    wakes
        .iter()
        .filter(|&&(w, e)| waker(w) && (1..=3).contains(&e))
        .count() as u64
}

/// Before session 31 a read of a full pipe woke every blocked writer: here 174
/// writer wake-ups for 60 reads, and up to 20 per read in seed 03's hackbench (20
/// senders), all but one of them for nothing. The kernel wakes one.
#[test]
fn a_read_of_a_full_pipe_wakes_one_writer() {
    let reads = 3 * PER_WRITER;
    let writer_wakeups = writers_woken_by(&slow_reader_of_three_writers(true, 1, 1), |w| w == 0);
    assert!(
        writer_wakeups <= reads,
        "{writer_wakeups} writer wake-ups for {reads} reads: at most one per read"
    );
    assert!(
        writer_wakeups >= reads / 2,
        "{writer_wakeups} writer wake-ups for {reads} reads: the writers are woken"
    );
}

/// A unix socket's senders wait non-exclusively (`sock_wait_for_wmem()`): the model
/// wakes them all, as before.
#[test]
fn a_read_of_a_full_socket_wakes_every_writer() {
    let reads = 3 * PER_WRITER;
    let writer_wakeups = writers_woken_by(&slow_reader_of_three_writers(false, 1, 1), |w| w == 0);
    assert!(
        writer_wakeups > reads,
        "{writer_wakeups} writer wake-ups for {reads} reads: more than one per read"
    );
}

/// A reader that reads two messages of a full two-message pipe wakes one writer (the
/// first read finds it full, the second not); that writer, having waited, finds room
/// left after its write and wakes the next (`wake_next_writer`, fs/pipe.c v6.5 lines
/// 576, 584-599). Before session 31 no writer woke another.
#[test]
fn a_woken_writer_that_leaves_room_wakes_the_next() {
    let wakes = slow_reader_of_three_writers(true, 2, 2);
    let by_reader = writers_woken_by(&wakes, |w| w == 0);
    let by_writers = writers_woken_by(&wakes, |w| (1..=3).contains(&w));
    assert!(by_reader > 0, "the reader wakes writers");
    assert!(
        by_writers > 0,
        "{by_writers} writers woken by a writer ({by_reader} by the reader)"
    );
}

/// The reader of a pipe (task 0, on CPU 0): from 1 ms on it waits for a message and
/// then runs `work_ns` (its copy first), `reads` times over.
fn reader_of(ring: PipeRing, mailbox_cap: u32, work_ns: &[u64], reads: u64) -> TaskSpec {
    let mut ops = vec![Op::Run(Dist::Fixed { ns: 1_000_000 }), Op::Wait];
    ops.extend(work_ns.iter().map(|&ns| Op::Run(Dist::Fixed { ns })));
    ops.extend([
        Op::Repeat {
            to: 1,
            times: reads,
        },
        Op::Exit,
    ]);
    TaskSpec {
        pipe: Some(ring),
        mailbox_cap,
        ..task_on(96, &[0], 0, ops)
    }
}

/// A reader (task 0, CPU 0) that starts after 1 ms and then reads a message every
/// 20 µs, of a pipe of `ring`, and `n_writers` writers (tasks 1.., CPUs 1..) sending
/// it 800 messages each as fast as they can: the ring is full when the reader starts.
fn full_pipe(ring: PipeRing, n_writers: u32) -> Simulator {
    let reader = reader_of(
        ring,
        ring.slots * ring.msgs_per_page,
        &[20_000],
        800 * n_writers as u64,
    );
    let writer = |cpu| writer_of_task_0(cpu, 800);
    let mut tasks = vec![reader];
    tasks.extend((1..=n_writers).map(writer));
    let allowed = CpuMask::from_cpus(96, (0..=n_writers).map(CpuId));
    quiet_sim("kunpeng920-4826", "6.8", allowed, 1_000, tasks)
}

fn waits_to_write(sim: &Simulator, w: u32) -> bool {
    let t = &sim.tasks[w as usize];
    t.loc == Loc::Blocked && t.block == Block::SendFull
}

/// A read of a full pipe that does not end its tail page leaves the ring full, yet
/// wakes a writer (`was_full`, fs/pipe.c v6.5 lines 254, 390-391); the writer runs,
/// finds `pipe_writable()` false and waits again at the tail of `wr_wait` without
/// writing (`___wait_event()`, include/linux/wait.h v6.5 lines 300-322). Before
/// session 31 the mailbox counted messages: the read made room and the woken writer
/// wrote (tokens back to 8). Since session 32 the wake-up comes at the end of the
/// first read's copy (lines 388-391); since session 33 the reader pays for that
/// wake-up before its second read begins (7 left), not inside it (6 left).
#[test]
fn a_read_that_ends_no_page_wakes_a_writer_who_waits_again_without_writing() {
    let ring = PipeRing {
        slots: 2,
        msgs_per_page: 4,
    };
    let mut sim = full_pipe(ring, 1);
    while !waits_to_write(&sim, 1) {
        assert!(sim.step(), "the writer fills the pipe");
    }
    assert_eq!(sim.tasks[0].tokens, 8, "two pages of four messages");
    let pc = sim.tasks[1].pc;
    while waits_to_write(&sim, 1) {
        assert!(
            sim.step(),
            "the reader's read of the full pipe wakes the writer"
        );
    }
    assert_eq!(
        sim.tasks[0].tokens, 7,
        "woken by the first read's end, before the second read"
    );
    while !waits_to_write(&sim, 1) {
        assert!(sim.step(), "the woken writer waits again");
    }
    assert_eq!(sim.tasks[0].tokens, 6, "the woken writer wrote nothing");
    assert_eq!(sim.tasks[1].pc, pc, "the writer is still in its send");
    assert_eq!(sim.futile_writer_wakeups(), 1);
}

/// hackbench's pipe (100-byte messages: 40 to a page, 16 pages) with two writers
/// waiting: reads 1-39 of the tail page free nothing and each wakes a writer for
/// nothing; the 40th frees the page (`if (!buf->len) ... tail++`, fs/pipe.c v6.5
/// lines 323-331) and the writer it wakes writes. Before session 31 the first read
/// let a writer write (640 messages, the mailbox's capacity, back after 639). The
/// wake-up follows the read's copy (since session 32), when the reader has begun
/// its 41st read.
#[test]
fn the_read_that_ends_a_page_lets_the_writers_write() {
    let ring = PipeRing {
        slots: 16,
        msgs_per_page: 40,
    };
    let mut sim = full_pipe(ring, 2);
    while !(waits_to_write(&sim, 1) && waits_to_write(&sim, 2)) {
        assert!(sim.step(), "the writers fill the pipe");
    }
    let full = sim.tasks[0].tokens;
    assert_eq!(full, 640);
    let mut low = full;
    while sim.tasks[0].tokens <= low {
        low = sim.tasks[0].tokens;
        assert!(sim.step(), "the writers write again");
    }
    assert_eq!(
        full - low,
        41,
        "the first write after the fill follows the 40th read's end"
    );
    assert_eq!(
        sim.futile_writer_wakeups(),
        39,
        "one per read that freed no page"
    );
}

/// A pipe of one page of one message: the writer (task 1) fills it and waits; the
/// reader (task 0) reads after 1 ms, its copy taking 20 µs.
fn one_message_pipe(writer: TaskSpec) -> Simulator {
    let ring = PipeRing {
        slots: 1,
        msgs_per_page: 1,
    };
    let reader = reader_of(ring, 1, &[20_000], 4);
    let allowed = CpuMask::from_cpus(96, (0..2).map(CpuId));
    quiet_sim("kunpeng920-4826", "6.8", allowed, 100, vec![reader, writer])
}

/// pipe_read() copies the message (fs/pipe.c v6.5 line 307) and only then, the lock
/// dropped, wakes a writer of the pipe that was full (lines 388-391). Before session
/// 32 the writer was woken when the read began, 20 µs (its copy) early; the review
/// made the bound exact, so a wake-up at a later wrong point fails too.
#[test]
fn a_read_wakes_the_writer_after_its_copy() {
    let mut sim = one_message_pipe(writer_of_task_0(1, 4));
    while !waits_to_write(&sim, 1) {
        assert!(sim.step(), "the writer fills the pipe");
    }
    while sim.tasks[0].tokens > 0 {
        assert!(sim.step(), "the reader reads");
    }
    let read_start = sim.now;
    while waits_to_write(&sim, 1) {
        assert!(sim.step(), "the read wakes the writer");
    }
    // At the end of the read's burst, not before (its copy) nor later.
    let after_ns = sim.now.since(read_start);
    assert_eq!(
        after_ns, 20_000,
        "the writer woken {after_ns} ns after the read began, not at its 20 µs copy's end"
    );
}

/// A writer that finds the pipe full waits without copying (fs/pipe.c v6.5 lines
/// 490, 569-573); woken, it takes the freed page and copies (518-541), and its
/// message is readable only then. Before session 32 the program's copy came before
/// the send, so a woken writer's message landed the moment it ran.
#[test]
fn a_writer_that_waited_for_room_copies_after_it_wakes() {
    // Each message: the send, then its 5 µs copy.
    let writer = task_on(
        96,
        &[1],
        0,
        vec![
            Op::Send { to: 0 },
            Op::Run(Dist::Fixed { ns: 5_000 }),
            Op::Repeat { to: 0, times: 4 },
            Op::Exit,
        ],
    );
    let mut sim = one_message_pipe(writer);
    while !waits_to_write(&sim, 1) {
        assert!(sim.step(), "the writer fills the pipe");
    }
    while !matches!(sim.tasks[1].loc, Loc::Running(_)) {
        assert!(sim.step(), "the read wakes the writer, which runs");
    }
    let runs_at = sim.now;
    while sim.tasks[0].tokens == 0 {
        assert!(sim.step(), "the woken writer writes");
    }
    // The switch to the writer (`ctx_switch_ns`; its data was not displaced),
    // then its copy: the message is readable at the copy's end, not before nor later.
    let after_ns = sim.now.since(runs_at);
    let copy_end_ns = sim.cost.params.ctx_switch_ns + 5_000;
    assert_eq!(
        after_ns, copy_end_ns,
        "the message readable {after_ns} ns after the woken writer ran, not at the end of its switch and 5 µs copy"
    );
}

/// pipe_write() wakes the reader after its copy and before it returns (fs/pipe.c
/// v6.5 lines 580-599): the wake-up's cost is the writer's, paid before its next
/// write takes the mutex and checks the ring (lines 455-490). Before session 33 the
/// cost was added to the next write's copy, so that write's check came the wake-up's
/// cost early, on the ring as it was before the wake-up had been paid for.
#[test]
fn a_writer_pays_for_its_wake_up_before_its_next_write() {
    let ring = PipeRing {
        slots: 16,
        msgs_per_page: 1,
    };
    // The reader waits on the empty pipe from 1 ms on.
    let reader = reader_of(ring, 16, &[1_000], 2);
    // The writer sends from 2 ms on: the send, its 5 µs copy, twice.
    let writer = task_on(
        96,
        &[1],
        0,
        vec![
            Op::Run(Dist::Fixed { ns: 2_000_000 }),
            Op::Send { to: 0 },
            Op::Run(Dist::Fixed { ns: 5_000 }),
            Op::Send { to: 0 },
            Op::Run(Dist::Fixed { ns: 5_000 }),
            Op::Exit,
        ],
    );
    let allowed = CpuMask::from_cpus(96, (0..2).map(CpuId));
    let mut sim = quiet_sim("kunpeng920-4826", "6.8", allowed, 100, vec![reader, writer]);
    while sim.tasks[0].tokens == 0 {
        assert!(sim.step(), "the first write ends");
    }
    let first_end = sim.now;
    assert!(
        sim.pipe_ops[1] == PipeOp::None,
        "the second write checked the ring as the first ended, before its wake-up was paid"
    );
    while sim.pipe_ops[1] == PipeOp::None {
        assert!(sim.step(), "the second write takes its room");
    }
    let checked_after_ns = sim.now.since(first_end);
    assert!(checked_after_ns > 0, "the wake-up cost the writer nothing");
    while sim.pipe_ops[1] != PipeOp::None {
        assert!(sim.step(), "the second write copies");
    }
    let copy_ns = sim.now.since(first_end) - checked_after_ns;
    assert_eq!(
        copy_ns, 5_000,
        "the second write's copy is its 5 µs, no more"
    );
}

/// A writer on `cpu` sending task 0 `times` messages as fast as it can (500 ns of work
/// before each).
fn writer_of_task_0(cpu: u32, times: u64) -> TaskSpec {
    task_on(
        96,
        &[cpu],
        0,
        vec![
            Op::Run(Dist::Fixed { ns: 500 }),
            Op::Send { to: 0 },
            Op::Repeat { to: 0, times },
            Op::Exit,
        ],
    )
}

/// A pipe of two one-message pages and two writers (tasks 1, 2) that copy for
/// `copy_ns` after taking their room; the reader (task 0) reads from 1 ms on, a
/// 50 µs copy then 20 µs of other work per message: a woken writer takes its page
/// (within the 20 µs) before the reader's next read begins, and ends its copy
/// during that read.
fn two_writers_and_a_gap(copy_ns: u64) -> Simulator {
    let ring = PipeRing {
        slots: 2,
        msgs_per_page: 1,
    };
    let reader = reader_of(ring, 2, &[50_000, 20_000], 40);
    let writer = |cpu| {
        task_on(
            96,
            &[cpu],
            0,
            vec![
                Op::Send { to: 0 },
                Op::Run(Dist::Fixed { ns: copy_ns }),
                Op::Run(Dist::Fixed { ns: 100_000 }),
                Op::Repeat { to: 0, times: 20 },
                Op::Exit,
            ],
        )
    };
    let allowed = CpuMask::from_cpus(96, (0..3).map(CpuId));
    quiet_sim(
        "kunpeng920-4826",
        "6.8",
        allowed,
        100,
        vec![reader, writer(1), writer(2)],
    )
}

/// A woken writer that ends its copy while a read that began after its write copies
/// holds the mutex in the kernel: that read waits, the ring is still full at
/// fs/pipe.c v6.5 line 579, `wake_next_writer` is false, and only the read wakes
/// the next writer (lines 390-391), which finds the page it freed. Before the
/// review the writer saw the read's page as freed and woke the next writer too,
/// which found the ring full: a futile wake-up per read here.
#[test]
fn a_writer_does_not_pass_on_a_page_a_later_read_frees() {
    let mut sim = two_writers_and_a_gap(30_000);
    sim.run().unwrap();
    assert_eq!(sim.live_tasks(), 0, "every task finished");
    assert_eq!(sim.futile_writer_wakeups(), 0);
}
