//! A pipe's ring of pages, kept as fs/pipe.c keeps it (v5.12 to v6.12 alike here),
//! in whole messages:
//!
//! ```text
//!   tail                                   head
//!   [40, 12 read] [40] [40] ... [40] [7]        at most `slots` pages in use
//! ```
//!
//! A write merges into the head page while the message fits, else takes a new page if
//! fewer than `slots` are in use, else waits; a read frees its page only when it has
//! read the whole of it. "Full" counts pages, not messages: a read of a full pipe that
//! does not finish its page leaves it full.
//!
//! A read or a write is a syscall with work inside it, and the kernel's order within
//! it is kept: the check (is there a message, is there room), the work (the `Run`
//! that follows the program's `Wait` or `Send`: the copy), then the ring update and
//! the wake-ups at its end:
//!
//! ```text
//!   pipe_read():  lock, was_full ─ copy ─ tail++ if the page is read ─ unlock ─ wake a writer
//!   pipe_write(): lock, room? ─┬─ copy ─ unlock ─ wake the reader (─ wake the next writer)
//!                              └─ full: unlock, sleep ─ (woken) lock, room? ─ copy ─ ...
//! ```

use std::collections::VecDeque;

use crate::wakeup::WakeFlags;
use crate::workload::PipeRing;

use super::program::Ins;
use super::{Block, Simulator};

/// One pipe (a receiver's mailbox).
#[derive(Clone, Debug)]
pub(super) struct Pipe {
    ring: PipeRing,
    /// Messages written into each page in use, tail first; at most `ring.slots`
    /// entries (`pipe->bufs[tail..head]`), one more while a read that ends the tail
    /// page copies and a writer has taken the slot that read frees.
    pages: VecDeque<u32>,
    /// Messages read from the tail page (its `buf->offset`), the one being read
    /// included.
    tail_read: u32,
    /// A read in its copy ends the tail page: the page goes at the read's end
    /// (`tail++`, fs/pipe.c v6.5 lines 323-331).
    freeing: bool,
    /// Pages taken during that read by writers that saw it over ([`View::Locked`]):
    /// in the kernel they wait for the mutex and take them after it.
    early: u32,
    /// Per page in `pages`, the messages whose write has its room there and is still
    /// copying (at most one per task). In the kernel a write copies under the mutex,
    /// so messages become readable in ring order; the model's writes overlap and can
    /// end out of order, so a message is readable only once every write into it and
    /// the pages before it has ended ([`Pipe::len`]): a read never takes, nor a page
    /// is released with, a slot still being copied.
    in_flight: VecDeque<u32>,
    /// Pages released since the pipe was made (wrapping): `released + i` names
    /// `pages[i]` to a write that ends later ([`Pipe::write`]).
    released: u32,
    /// Reads begun since the pipe was made (wrapping): a write notes it at its start
    /// to tell, at its end, whether the read in progress began after it.
    pub(super) reads: u32,
}

/// The two views a writer has of the ring while the reader copies. Written before the
/// pipe's mutex was modelled (session 33, `sim/pipe_mutex.rs`): under the mutex a read
/// and a write no longer overlap, so the two views agree whenever a check is made
/// under it; `Lockless` remains the view of a waiting writer's `pipe_writable()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum View {
    /// `pipe->head` and `pipe->tail` as stored (`pipe_writable()`'s READ_ONCE()s,
    /// fs/pipe.c v6.5 lines 406-414, the condition a waiting writer checks without
    /// the lock): a read that ends the tail page frees it only after its copy, and
    /// no writer has taken a page since the read began (they wait for the mutex).
    Lockless,
    /// What a writer finds once it holds the mutex (lines 431, 490): any read in
    /// progress is over, its page freed. The kernel's writer waits for the lock;
    /// the model's sees that state at once.
    Locked,
}

impl Pipe {
    pub(super) fn new(ring: PipeRing) -> Pipe {
        Pipe {
            ring: PipeRing {
                slots: ring.slots.max(1),
                msgs_per_page: ring.msgs_per_page.max(1),
            },
            pages: VecDeque::with_capacity(ring.slots.max(1) as usize + 1),
            tail_read: 0,
            freeing: false,
            early: 0,
            in_flight: VecDeque::with_capacity(ring.slots.max(1) as usize + 1),
            released: 0,
            reads: 0,
        }
    }

    /// Messages readable: written, not read, and in ring order before any message
    /// still being copied (a page's copying messages count as its last ones).
    pub(super) fn len(&self) -> u32 {
        let mut n = 0;
        for (&msgs, &copying) in self.pages.iter().zip(&self.in_flight) {
            n += msgs - copying;
            if copying > 0 {
                break;
            }
        }
        n - self.tail_read
    }

    /// Pages in use (`pipe->head - pipe->tail`, with a page freed by the read in
    /// progress and the one taken early meanwhile both counted).
    pub(super) fn pages_in_use(&self) -> u32 {
        self.pages.len() as u32
    }

    /// `ring.slots`: the most pages the ring holds.
    pub(super) fn slots(&self) -> u32 {
        self.ring.slots
    }

    /// Writes that have taken their room and are still copying.
    pub(super) fn writes_in_flight(&self) -> u32 {
        self.in_flight.iter().sum()
    }

    /// Pages in use as `view` sees them.
    fn used(&self, view: View) -> u32 {
        let n = self.pages.len() as u32;
        match view {
            View::Lockless => n - self.early,
            View::Locked => n - self.freeing as u32,
        }
    }

    /// `pipe_full(head, tail, max_usage)` (include/linux/pipe_fs_i.h v6.5 lines
    /// 153-157): every page in use, however much of the tail page has been read.
    pub(super) fn full(&self, view: View) -> bool {
        self.used(view) >= self.ring.slots
    }

    /// pipe_write()'s merge (fs/pipe.c v6.5 lines 455-477, under the mutex): a
    /// non-empty pipe whose head page has room for the message (`offset + chars <=
    /// PAGE_SIZE`, `offset` counting what was read from the page too). Whether the
    /// ring is full does not matter.
    pub(super) fn can_merge(&self) -> bool {
        self.used(View::Locked) > 0
            && self
                .pages
                .back()
                .is_some_and(|&n| n < self.ring.msgs_per_page)
    }

    /// Takes room for one message: in the head page if `merge`, else a new page
    /// (fs/pipe.c v6.5 lines 490-532: `pipe->head = head + 1`, then the copy). The
    /// message is readable once [`Pipe::end_write`] says its copy is done. The
    /// caller has checked [`Pipe::can_merge`] or `!full(View::Locked)`. Returns the
    /// page's name for [`Pipe::end_write`].
    pub(super) fn write(&mut self, merge: bool) -> u32 {
        match (self.pages.back_mut(), self.in_flight.back_mut()) {
            (Some(n), Some(copying)) if merge => {
                *n += 1;
                *copying += 1;
            }
            _ => {
                debug_assert!(!self.full(View::Locked), "a new page in a full pipe");
                self.pages.push_back(1);
                self.in_flight.push_back(1);
                self.early += self.freeing as u32;
            }
        }
        self.released
            .wrapping_add(self.pages.len() as u32)
            .wrapping_sub(1)
    }

    /// The copy of a message [`Pipe::write`] took room for in `page` is done:
    /// `buf->len +=` (fs/pipe.c v6.5 lines 475, 541). Returns how many messages
    /// became readable: none if a write into an earlier page still copies, more
    /// than one if this was that earlier write.
    pub(super) fn end_write(&mut self, page: u32) -> u32 {
        let before = self.len();
        let i = page.wrapping_sub(self.released) as usize;
        match self.in_flight.get_mut(i) {
            Some(copying) if *copying > 0 => *copying -= 1,
            _ => debug_assert!(false, "a write ended that never began, or in a freed page"),
        }
        self.len() - before
    }

    /// pipe_read() of one message begins (fs/pipe.c v6.5 lines 286-334): the
    /// message is the reader's; whether its page is now read to its end (`buf->len
    /// -= chars`, `if (!buf->len)`) is known, the page is freed by
    /// [`Pipe::end_read`]. The caller has checked the pipe holds a message
    /// (`len() > 0`): the tail page's next message, whose copy has ended, so a page
    /// this read ends has no write in flight.
    pub(super) fn begin_read(&mut self) {
        debug_assert!(!self.freeing, "two reads at once");
        debug_assert!(self.len() > 0, "a read of an empty pipe");
        let Some(&n) = self.pages.front() else {
            return;
        };
        self.tail_read += 1;
        self.reads = self.reads.wrapping_add(1);
        self.freeing = self.tail_read >= n;
    }

    /// The read's copy is done: a page read to its end is released and frees its
    /// slot (`pipe_buf_release()`, `tail++`, fs/pipe.c v6.5 lines 323-331).
    pub(super) fn end_read(&mut self) {
        if std::mem::take(&mut self.freeing) {
            self.pages.pop_front();
            let copying = self.in_flight.pop_front();
            debug_assert_eq!(copying, Some(0), "a page released mid-copy");
            self.released = self.released.wrapping_add(1);
            self.tail_read = 0;
        }
        self.early = 0;
    }
}

/// A pipe syscall past its check, in its work (the `Run` after the program's `Wait`
/// or `Send`): what is left to do at its end. Per task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum PipeOp {
    #[default]
    None,
    /// pipe_read() of the task's own pipe; `was_full`: the ring was full at its start
    /// (fs/pipe.c v6.5 line 254).
    Read { was_full: bool },
    /// pipe_write() to task `to`'s pipe, its room taken in `page` ([`Pipe::write`]);
    /// `waited`: it slept in `wr_wait` first (line 576, `wake_next_writer`); `reads`:
    /// the pipe's [`Pipe::reads`] at its start.
    Write {
        to: u32,
        waited: bool,
        page: u32,
        reads: u32,
    },
}

impl Simulator {
    /// pipe_read() from its copy on (fs/pipe.c v6.5 lines 307-331, 388-391), once
    /// the copy is paid: the page is released if this read ended it (`if
    /// (!buf->len) ... tail++`), the lock dropped, and a read that found the ring
    /// full wakes one writer (`if (was_full) wake_up_interruptible_sync_poll(
    /// &pipe->wr_wait, ..)`), whether or not a page was freed.
    fn pipe_read_end(&mut self, t: u32, was_full: bool, cpu: u32) {
        if let Some(p) = self.pipes[t as usize].as_mut() {
            p.end_read();
        }
        self.pipe_mutex_unlock(t, t, cpu);
        if was_full {
            self.wake_first_writer(t, t, cpu);
        }
    }

    /// pipe_write() from the copy on (fs/pipe.c v6.5 lines 469-475 or 533-541, then
    /// 578-599), once the copy is paid: the message is in (`buf->len`), the lock
    /// dropped, the reader woken if it sleeps (`if (was_empty ..)
    /// wake_up_interruptible_sync_poll(&pipe->rd_wait, ..)`, line 596: it sleeps
    /// only on an empty pipe), then, if this writer waited and left the ring not
    /// full (`wake_next_writer`, lines 576, 579-580, 598-599), the next waiting
    /// writer.
    ///
    /// The ring at line 579 is the one this writer holds the mutex over: a read that
    /// began before the write is over, its page freed ([`View::Locked`]); a read that
    /// began after it waits for this writer's mutex, so its page still counts
    /// ([`View::Lockless`]: that read, at its end, wakes a writer itself, lines
    /// 390-391). A write whose message is not yet readable (one into an earlier page
    /// still copies: the model's writes overlap) adds nothing for the reader to take.
    fn pipe_write_end(&mut self, t: u32, op: (u32, bool, u32, u32), cpu: u32) {
        let (to, waited, page, reads) = op;
        let Some(p) = self.pipes[to as usize].as_mut() else {
            return;
        };
        let readable = p.end_write(page);
        let read_after = p.freeing && p.reads != reads;
        let view = if read_after {
            View::Lockless
        } else {
            View::Locked
        };
        let pass_on = waited && !p.full(view);
        self.tasks[to as usize].tokens += readable;
        self.write_waited[t as usize] = false;
        // The unlock (line 581), before the pipe's wake-ups.
        self.pipe_mutex_unlock(t, to, cpu);
        let r = &self.tasks[to as usize];
        if readable > 0 && r.asleep() && r.block == Block::Wait {
            self.wake(to, Some(t), cpu, WakeFlags::SYNC);
        }
        if pass_on {
            self.wake_first_writer(to, t, cpu);
        }
    }

    /// Ends task `t`'s pipe syscall if one is in its work: its `Run` is over (or
    /// took no time).
    #[inline(always)]
    pub(super) fn end_pipe_op(&mut self, t: u32, cpu: u32) {
        match std::mem::take(&mut self.pipe_ops[t as usize]) {
            PipeOp::None => {}
            PipeOp::Read { was_full } => self.pipe_read_end(t, was_full, cpu),
            PipeOp::Write {
                to,
                waited,
                page,
                reads,
            } => self.pipe_write_end(t, (to, waited, page, reads), cpu),
        }
    }

    /// Task `t`'s pipe syscall has passed its check: its work is the `Run` it is
    /// about to interpret, and `op` is done when that ends ([`Simulator::end_pipe_op`]).
    /// A syscall with no `Run` next (a program that gives it no work) ends at once.
    pub(super) fn begin_pipe_op(&mut self, t: u32, op: PipeOp, cpu: u32) {
        self.pipe_ops[t as usize] = op;
        let pc = self.tasks[t as usize].pc as usize;
        if !matches!(self.code.ins.get(pc), Some(Ins::Run(_))) {
            self.end_pipe_op(t, cpu);
        }
    }

    /// `wake_up_interruptible_sync_poll(&pipe->wr_wait, ..)` from `waker` on `cpu`:
    /// `__wake_up_sync_key()` → `__wake_up_common()` with `nr_exclusive` 1
    /// (kernel/sched/wait.c v6.5 lines 80-121, 202-208) wakes the first writer queued
    /// on `reader`'s pipe, whose `autoremove_wake_function()` takes it off the queue;
    /// it retries its write and queues again at the tail if the pipe is still full.
    /// A waiter that does not sleep (`try_to_wake_up()` returns 0) does not count
    /// against `nr_exclusive`: the wake-up goes on to the next (wait.c lines 104-112).
    /// The model queues only sleeping writers, so that is a bug (debug builds stop);
    /// release builds drop the stale entry and wake the next, as the kernel would.
    pub(super) fn wake_first_writer(&mut self, reader: u32, waker: u32, cpu: u32) {
        // FIFO, at most one entry per task: at most one pass per task.
        while !self.writers[reader as usize].is_empty() {
            let w = self.writers[reader as usize].remove(0);
            let task = &self.tasks[w as usize];
            if task.asleep() && task.block == Block::SendFull {
                self.wake(w, Some(waker), cpu, WakeFlags::SYNC);
                return;
            }
            debug_assert!(
                false,
                "writer {w} queued on {reader}'s pipe but not waiting"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn hackbench_pipe() -> Pipe {
        // 100-byte messages: 40 to a 4 KiB page, 16 pages.
        Pipe::new(PipeRing {
            slots: 16,
            msgs_per_page: 40,
        })
    }

    #[test]
    fn a_pipe_of_16_pages_is_full_at_640_messages_written_in_turn() {
        let mut p = hackbench_pipe();
        let mut n = 0;
        while p.can_merge() || !p.full(View::Locked) {
            let merge = p.can_merge();
            let page = p.write(merge);
            p.end_write(page);
            n += 1;
        }
        assert_eq!(n, 640);
        // 39 reads leave the tail page in use: still full; the 40th frees it.
        for _ in 0..39 {
            p.begin_read();
            p.end_read();
        }
        assert!(p.full(View::Locked) && !p.can_merge());
        p.begin_read();
        p.end_read();
        assert!(!p.full(View::Locked));
    }

    #[test]
    fn a_message_is_readable_once_its_copy_is_done() {
        let mut p = hackbench_pipe();
        // The room is taken (pipe_write() fs/pipe.c v6.5 line 518) ...
        let page = p.write(false);
        assert!(p.can_merge(), "the page is in the ring");
        assert_eq!(p.len(), 0, "not readable while it copies");
        // ... the copy ends (`buf->len = copied`, line 541).
        assert_eq!(p.end_write(page), 1);
        assert_eq!(p.len(), 1);
    }

    /// While the read that ends a page copies, `pipe->tail` still counts the page
    /// (freed at `tail++`, fs/pipe.c v6.5 line 330): a waiting writer's lockless
    /// `pipe_writable()` sees the ring full; a writer that waits for the mutex finds
    /// the page freed.
    #[test]
    fn the_page_a_read_ends_is_freed_after_its_copy() {
        let mut p = Pipe::new(PipeRing {
            slots: 2,
            msgs_per_page: 1,
        });
        for _ in 0..2 {
            let page = p.write(false);
            p.end_write(page);
        }
        p.begin_read();
        assert!(p.full(View::Lockless) && !p.full(View::Locked));
        // A writer that went ahead of the mutex takes the freed slot: not yet seen
        // by the lockless check, which still sees the read's page.
        let page = p.write(false);
        p.end_write(page);
        assert!(p.full(View::Lockless) && p.full(View::Locked));
        p.end_read();
        assert!(
            p.full(View::Lockless),
            "the read's page for the early writer's"
        );
        p.begin_read();
        p.end_read();
        assert!(!p.full(View::Lockless));
    }

    /// Writes that end out of order (a woken writer pays its switch before its copy;
    /// a writer is preempted mid-copy): in the kernel the first holds the mutex
    /// through its copy, so the second cannot even begin. A message behind one still
    /// being copied is not readable, so no read ends a page whose last write copies.
    /// Before the review the second write's end let a read take the first's page and
    /// free it mid-copy; the first write then ended in a freed page.
    #[test]
    fn no_read_takes_a_page_whose_last_write_still_copies() {
        let mut p = Pipe::new(PipeRing {
            slots: 4,
            msgs_per_page: 1,
        });
        let first = p.write(false);
        let second = p.write(false);
        assert_eq!(p.end_write(second), 0, "behind the first, still copying");
        assert_eq!(p.len(), 0, "nothing a read may take");
        assert_eq!(p.end_write(first), 2, "both readable at the first's end");
        p.begin_read();
        assert!(p.freeing, "the read ends the first page");
        p.end_read();
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn a_write_after_a_wait_takes_a_new_page_and_leaves_the_head_page_short() {
        let mut p = hackbench_pipe();
        let page = p.write(false);
        p.end_write(page);
        // A writer that waited does not merge (pipe_write() retries from its loop,
        // fs/pipe.c v6.5 lines 479-490): two pages of one message each.
        let page = p.write(false);
        p.end_write(page);
        assert!(p.can_merge());
        for _ in 0..2 {
            p.begin_read();
            p.end_read();
        }
        assert!(!p.can_merge() && p.len() == 0, "both pages freed: empty");
    }
}
