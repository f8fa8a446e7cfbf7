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

use std::collections::VecDeque;

use crate::workload::PipeRing;

/// One pipe (a receiver's mailbox).
#[derive(Clone, Debug)]
pub(super) struct Pipe {
    ring: PipeRing,
    /// Messages written into each page in use, tail first; at most `ring.slots`
    /// entries (`pipe->bufs[tail..head]`).
    pages: VecDeque<u32>,
    /// Messages read from the tail page (its `buf->offset`).
    tail_read: u32,
}

impl Pipe {
    pub(super) fn new(ring: PipeRing) -> Pipe {
        Pipe {
            ring: PipeRing {
                slots: ring.slots.max(1),
                msgs_per_page: ring.msgs_per_page.max(1),
            },
            pages: VecDeque::with_capacity(ring.slots.max(1) as usize),
            tail_read: 0,
        }
    }

    /// Messages written and not read.
    pub(super) fn len(&self) -> u32 {
        self.pages.iter().sum::<u32>() - self.tail_read
    }

    /// `pipe_full(head, tail, max_usage)` (include/linux/pipe_fs_i.h v6.5 lines
    /// 153-157): every page in use, however much of the tail page has been read.
    pub(super) fn full(&self) -> bool {
        self.pages.len() as u32 >= self.ring.slots
    }

    /// pipe_write()'s merge (fs/pipe.c v6.5 lines 455-477): a non-empty pipe whose
    /// head page has room for the message (`offset + chars <= PAGE_SIZE`, `offset`
    /// counting what was read from the page too). Whether the ring is full does not
    /// matter.
    pub(super) fn can_merge(&self) -> bool {
        self.pages
            .back()
            .is_some_and(|&n| n < self.ring.msgs_per_page)
    }

    /// Writes one message: into the head page if `merge`, else into a new page
    /// (fs/pipe.c v6.5 lines 490-532: `pipe->head = head + 1`, then the copy). The
    /// caller has checked [`Pipe::can_merge`] or `!`[`Pipe::full`].
    pub(super) fn write(&mut self, merge: bool) {
        match self.pages.back_mut() {
            Some(n) if merge => *n += 1,
            _ => {
                debug_assert!(!self.full(), "a new page in a full pipe");
                self.pages.push_back(1);
            }
        }
    }

    /// pipe_read() of one message (fs/pipe.c v6.5 lines 286-334): `buf->len -=
    /// chars`, and only a page read to its end is released and frees its slot
    /// (`if (!buf->len) ... tail++`). The caller has checked the pipe holds a message.
    pub(super) fn read(&mut self) {
        let Some(&n) = self.pages.front() else {
            debug_assert!(false, "a read of an empty pipe");
            return;
        };
        self.tail_read += 1;
        if self.tail_read >= n {
            self.pages.pop_front();
            self.tail_read = 0;
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
        while p.can_merge() || !p.full() {
            let merge = p.can_merge();
            p.write(merge);
            n += 1;
        }
        assert_eq!(n, 640);
        // 39 reads leave the tail page in use: still full; the 40th frees it.
        for _ in 0..39 {
            p.read();
        }
        assert!(p.full() && !p.can_merge());
        p.read();
        assert!(!p.full());
    }

    #[test]
    fn a_write_after_a_wait_takes_a_new_page_and_leaves_the_head_page_short() {
        let mut p = hackbench_pipe();
        p.write(false);
        // A writer that waited does not merge (pipe_write() retries from its loop,
        // fs/pipe.c v6.5 lines 479-490): two pages of one message each.
        p.write(false);
        assert!(p.can_merge());
        p.read();
        p.read();
        assert!(!p.can_merge() && !p.full(), "both pages freed: empty");
    }
}
