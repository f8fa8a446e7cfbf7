//! A pipe's mutex (`pipe->mutex`, taken by `__pipe_lock()` = `mutex_lock_nested(
//! &pipe->mutex, I_MUTEX_PARENT)`, fs/pipe.c v6.5 lines 101-104, `mutex_lock()`
//! without lockdep), as kernel/locking/mutex.c v6.5 has it:
//!
//! ```text
//!   mutex_lock()        free ─▶ owner = me                      __mutex_trylock_fast() 166-175
//!     held, owner on a CPU ─▶ spin (CPU time) to its unlock      mutex_optimistic_spin() 441-514
//!     else             ─▶ wait_list tail, TASK_UNINTERRUPTIBLE   __mutex_lock_common() 637, 648-679
//!     woken: free ─▶ owner = me; held ─▶ the first waiter sets HANDOFF (689),
//!            spins if the owner runs (694), else sleeps again
//!   mutex_unlock()      HANDOFF ─▶ owner = first waiter (PICKUP) __mutex_unlock_slowpath() 901-952
//!                       else owner = 0 (a spinner or newcomer may take it)
//!                       then wake_up_q(): the first waiter, try_to_wake_up() with no WF_SYNC
//! ```
//!
//! The section is the pipe syscall's work in the model: taken before the check
//! (`pipe_read()` line 244, `pipe_write()` 432), dropped at the end of the `Run` that
//! follows it (388, 581), before the pipe's own wake-ups. Its length is the op's
//! burst (**assumption**, docs/calibration.md "pipe mutex hold"). A check that fails
//! (an empty pipe, a full one) drops the mutex at once (350, 569).
//!
//! Costs: an acquisition pulls the lock word's and the pipe's lines from where they
//! are, the CPU of the lock's last owner ([`PipeMutex::last_cpu`]), contended or not.
//! What is already priced elsewhere is not charged again:
//! - `pipe_msg_ns` is the residual of a *same-cluster* pinned `lat_pipe` round trip,
//!   whose every pipe op took the mutex last held on the other CPU of the cluster:
//!   it holds one same-cluster transfer of these lines per op. So a transfer costs
//!   only what it costs above that, [`PIPE_MUTEX_LINES`] × (c2c(last, cpu) − the
//!   same-cluster c2c): nothing for lines on this CPU, its core or its cluster.
//! - `wake_data_ns(waker CPU, wakee CPU)` is the rest of that round trip, measured
//!   across clusters, dies and sockets, `(RTT(class) − RTT(same cluster)) / 2` (on
//!   families without `lat_pipe`, 30 such lines at the c2c latency): the lines a
//!   woken task pulls from its waker, the pipe's among them (in `lat_pipe`
//!   the waker is the last owner of the pipe the wakee locks next). So the first
//!   acquisition after a wake-up pays only what its lines' transfer costs above one
//!   from the waker's CPU: nothing when the waker held the lock last (a pipe's
//!   wake-up, the unlock's `wake_up_q()`), the difference when a third task on a
//!   farther CPU held it since.
//!
//! The transfer is paid inside the section (the new owner's first access under the
//! lock, as `cost::RqLock` pays the rq lines). A spin is CPU time up to the owner's
//! unlock, whose time is its burst's end; a spin ends early if the owner leaves its
//! CPU (`owner_on_cpu()` false, line 373). The spin statistic counts the spin done.
//!
//! Simplified: the MCS queue (`osq_lock()`) is not kept: every spinner spins on the
//! owner and retries when its burst ends, in the order they began (the queue's
//! order); a spinner preempted (`need_resched()`, lines 373, 504-511) drops its spin
//! and tries again from the start when it runs again, after the interrupt time its
//! CPU took during the spin (`stolen_ns`, owed as any preempted task's). An unlock with spinners and no
//! HANDOFF gives the lock to the first spinner: the model's unlocker would otherwise
//! re-lock at the same instant (its section is its whole op), where the kernel's is
//! still in its wake-ups and syscall exit when the spinner's trylock lands.

use std::collections::VecDeque;

use crate::cost::Distance;
use crate::cpumask::CpuId;
use crate::wakeup::WakeFlags;

use super::program::Next;
use super::{Block, Loc, SimTime, Simulator};

/// No task (`lock->owner == 0`), no CPU.
pub(super) const NONE: u32 = u32::MAX;

/// The cache lines a contended acquisition pulls from the last owner's CPU: the
/// `struct pipe_inode_info` line holding `struct mutex` (owner, wait_lock, osq,
/// wait_list: bytes 0-31) and `rd_wait`; the line holding `wr_wait`'s end and
/// `head`/`tail` (bytes 64-95); the `pipe_buffer` the op reads or writes
/// (include/linux/pipe_fs_i.h v6.5 lines 26-32, 58-64; include/linux/mutex.h v6.5
/// lines 64-74). Counted from the layout, not fitted.
pub(super) const PIPE_MUTEX_LINES: u64 = 3;

/// One pipe's `struct mutex`.
#[derive(Clone, Debug, Default)]
pub(super) struct PipeMutex {
    /// `lock->owner`'s task bits ([`NONE`]: unlocked).
    pub(super) owner: u32,
    /// `MUTEX_FLAG_HANDOFF`: the first waiter failed its trylock after a wake-up
    /// (line 120); the next unlock hands the lock to it.
    pub(super) handoff: bool,
    /// `MUTEX_FLAG_PICKUP`: `owner` was handed the lock (`__mutex_handoff()`, lines
    /// 231-249) and has not picked it up; nobody else may take it (113-115).
    pub(super) pickup: bool,
    /// `lock->wait_list`, FIFO (`__mutex_add_waiter()`, 204-213); at most one entry
    /// per task. `MUTEX_FLAG_WAITERS` is its being non-empty.
    pub(super) wait_list: VecDeque<u32>,
    /// Tasks spinning on the owner (at most one entry per task).
    pub(super) spinners: Vec<u32>,
    /// The CPU whose cache holds the lock word and the pipe's lines: the last
    /// owner's ([`NONE`]: nobody has taken it yet).
    pub(super) last_cpu: u32,
}

impl PipeMutex {
    pub(super) fn new() -> PipeMutex {
        PipeMutex {
            owner: NONE,
            last_cpu: NONE,
            ..PipeMutex::default()
        }
    }

    /// The owner, if any.
    pub(super) fn owner(&self) -> Option<u32> {
        (self.owner != NONE).then_some(self.owner)
    }
}

/// Per task: its acquisition in progress.
#[derive(Clone, Copy, Debug)]
pub(super) struct MutexWait {
    /// When its first try failed (`SimTime::MAX`: not waiting).
    pub(super) since: SimTime,
    /// The pipe whose owner it spins on ([`NONE`]: not spinning).
    pub(super) spinning_on: u32,
    /// It has spun / slept during this acquisition (counted once each).
    pub(super) spun: bool,
    pub(super) slept: bool,
    /// The spin in progress began at `spin_from` and ends by `spin_until` (the
    /// owner's burst end, or the instant it was cut short).
    pub(super) spin_from: SimTime,
    pub(super) spin_until: SimTime,
    /// The CPU of the waker of its last wake-up since its last acquisition
    /// ([`NONE`]: none, or a timer's): its `wake_data_ns` refill priced the lines
    /// from there (module doc).
    pub(super) woken_from: u32,
}

impl Default for MutexWait {
    fn default() -> Self {
        MutexWait {
            since: SimTime::MAX,
            spinning_on: NONE,
            spun: false,
            slept: false,
            spin_from: SimTime::ZERO,
            spin_until: SimTime::ZERO,
            woken_from: NONE,
        }
    }
}

/// What the pipes' mutexes did (counted while measuring).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipeMutexStats {
    /// Acquisitions for a pipe op's section or check.
    pub acquisitions: u64,
    /// Of those, ones whose first try failed.
    pub contended: u64,
    /// Contended acquisitions that spun at least once, and the CPU time of the
    /// spins done (a spin cut short, or preempted, counts what ran of it).
    pub spun: u64,
    pub spin_ns: u64,
    /// Contended acquisitions that slept at least once (`TASK_UNINTERRUPTIBLE`).
    pub slept: u64,
    /// Unlocks that handed the lock to the first waiter (`__mutex_handoff()`).
    pub handoffs: u64,
    /// From the first failed try to the acquisition, summed over `contended`.
    pub wait_ns: u64,
    /// The line transfers charged to acquisitions (contended or not; module doc).
    pub lines_ns: u64,
}

impl Simulator {
    /// The pipe whose mutex task `t` holds for its pipe op in progress, if any.
    fn held_mutex(&self, t: u32) -> Option<u32> {
        match self.pipe_ops[t as usize] {
            super::pipe::PipeOp::None => None,
            super::pipe::PipeOp::Read { .. } => Some(t),
            super::pipe::PipeOp::Write { to, .. } => Some(to),
        }
        .filter(|&m| self.mutexes[m as usize].owner == t)
    }

    /// Task `t` is inside `mutex_lock()` of pipe `m`'s mutex: it waits for it, or was
    /// handed it and has not yet picked it up. Its pipe op's lockless checks
    /// (`wait_event()`'s condition) are behind it.
    pub(super) fn in_mutex_lock(&self, t: u32, m: u32) -> bool {
        self.mutex_wait[t as usize].since != SimTime::MAX || self.mutexes[m as usize].owner == t
    }

    /// Pipe `m`'s mutex is free and nobody waits for it.
    pub(super) fn mutex_idle(&self, m: u32) -> bool {
        let mx = &self.mutexes[m as usize];
        mx.owner == NONE && mx.wait_list.is_empty()
    }

    /// `mutex_lock(&pipe->mutex)` by task `t` on `cpu` for its op at its `pc`:
    /// `None` once it holds it; else what it does meanwhile, after which it runs
    /// its op again (and this again): spin (`Next::Run`, CPU time up to the owner's
    /// unlock) or sleep (`Next::Block`, on the wait list).
    pub(super) fn pipe_mutex_lock(&mut self, t: u32, m: u32, cpu: u32) -> Option<Next> {
        let ti = t as usize;
        // What the task still owes, a wakee its data's refill after the wake-up
        // (`ttwu_do_activate()`'s cache distance), it pays on its way back from
        // schedule() before it holds the lock: a newcomer through the syscall's
        // entry, before __pipe_lock(); a sleeper woken by the unlock before its
        // trylock (mutex.c v6.5 lines 679, 689), and a handed-over one before its
        // PICKUP (113-116). The section is the op's own work (docs/calibration.md,
        // "pipe mutex hold").
        let mx = &self.mutexes[m as usize];
        if mx.owner != t || mx.pickup {
            if let Some(ns) = self.take_debt(t) {
                return Some(Next::Run(ns));
            }
        }
        self.end_spin(t);
        let mx = &mut self.mutexes[m as usize];
        let pos = mx.wait_list.iter().position(|&w| w == t);
        let first = pos == Some(0);
        let got = if mx.owner == t {
            // The handoff's PICKUP (`__mutex_trylock_common()`, lines 113-116), or
            // a spinner's trylock done at the unlock (468).
            mx.pickup = false;
            true
        } else if mx.owner == NONE {
            // __mutex_trylock_fast(), or the slow path's __mutex_trylock() (lines
            // 166-175, 606, 621, 659, 689): a free lock is taken whatever waits.
            true
        } else {
            if first && !mx.pickup {
                // __mutex_trylock_or_handoff(lock, first) (689, 117-120).
                mx.handoff = true;
            }
            false
        };
        if got {
            mx.owner = t;
            if let Some(i) = pos {
                // __mutex_remove_waiter() (215-223): the last waiter clears the flags.
                mx.wait_list.remove(i);
                if mx.wait_list.is_empty() {
                    mx.handoff = false;
                }
            }
            let prev = std::mem::replace(&mut mx.last_cpu, cpu);
            let w = std::mem::take(&mut self.mutex_wait[ti]);
            let waited = w.since != SimTime::MAX;
            let lines_ns = self.pipe_lines_ns(prev, cpu, w.woken_from);
            self.tasks[ti].debt_ns += lines_ns;
            if self.measuring {
                let s = &mut self.mutex_stats;
                s.acquisitions += 1;
                s.lines_ns += lines_ns;
                if waited {
                    s.contended += 1;
                    s.spun += w.spun as u64;
                    s.slept += w.slept as u64;
                    s.wait_ns += self.now.since(w.since);
                }
            }
            return None;
        }
        let owner = mx.owner;
        let in_list = pos.is_some();
        let w = &mut self.mutex_wait[ti];
        if w.since == SimTime::MAX {
            w.since = self.now;
        }
        // mutex_can_spin_on_owner() (392-417) for a newcomer, the waiter-spinner
        // (694) for the first waiter: not need_resched(), the owner on a CPU.
        let c = &self.cpus[cpu as usize];
        let resched = c.need_resched || c.resched_ipi;
        if (!in_list || first) && !resched {
            if let Loc::Running(oc) = self.tasks[owner as usize].loc {
                // mutex_spin_on_owner() (351-387) until the owner's burst ends (its
                // unlock: the section is its burst) or it leaves its CPU.
                let spin_ns = self.cpus[oc as usize].burst_end.since(self.now).max(1);
                let w = &mut self.mutex_wait[ti];
                w.spinning_on = m;
                w.spun = true;
                w.spin_from = self.now;
                w.spin_until = self.now + spin_ns;
                self.mutexes[m as usize].spinners.push(t);
                return Some(Next::Run(spin_ns));
            }
        }
        if let Some(ns) = self.take_debt(t) {
            return Some(Next::Run(ns));
        }
        // The wait list's tail (637), TASK_UNINTERRUPTIBLE (648), schedule (679).
        let mx = &mut self.mutexes[m as usize];
        if !in_list {
            mx.wait_list.push_back(t);
        }
        self.mutex_wait[ti].slept = true;
        self.tasks[ti].block = Block::Mutex;
        Some(Next::Block)
    }

    /// `mutex_unlock(&pipe->mutex)` by owner `t` on `cpu` (`__mutex_unlock_slowpath()`,
    /// lines 901-952): with HANDOFF set the first waiter becomes the owner
    /// (`__mutex_handoff()`, PICKUP), else the lock is free; the first waiter, if it
    /// sleeps, is woken by `wake_up_q()` → `wake_up_process()` →
    /// `try_to_wake_up(p, TASK_NORMAL, 0)`: no WF_SYNC.
    pub(super) fn pipe_mutex_unlock(&mut self, t: u32, m: u32, cpu: u32) {
        let mx = &mut self.mutexes[m as usize];
        debug_assert_eq!(mx.owner, t, "unlock by a task that does not hold the mutex");
        mx.last_cpu = cpu;
        let first = mx.wait_list.front().copied();
        match first {
            Some(w) if mx.handoff => {
                mx.owner = w;
                mx.pickup = true;
                mx.handoff = false;
                if self.measuring {
                    self.mutex_stats.handoffs += 1;
                }
            }
            _ => {
                mx.owner = NONE;
                mx.handoff = false;
                // The spinner at the head of the queue sees the owner word change
                // and takes the lock (mutex_spin_on_owner() returns, the trylock
                // at line 468) within a line transfer, long before this task's own
                // next __pipe_lock() (its wake-ups, the syscall's exit and entry).
                // The model's section is the whole op, so that next lock would come
                // at this very instant: the lock goes to the spinner here, as a
                // plain owner (no PICKUP: only __mutex_handoff() sets it, 231-249),
                // so a woken first waiter that fails against it sets HANDOFF (117-120).
                if let Some(&s) = mx.spinners.first() {
                    mx.owner = s;
                    self.cut_spin(s);
                }
            }
        }
        if let Some(w) = first {
            let task = &self.tasks[w as usize];
            if task.asleep() && task.block == Block::Mutex {
                self.wake(w, Some(t), cpu, WakeFlags::NONE);
            }
        }
    }

    /// Task `t`, running on `cpu`, leaves it (preempted, `put_prev()`): a spin it was
    /// in is dropped (it tries again from its op when it runs); if it holds a
    /// pipe's mutex, the spins on it end now: `owner_on_cpu()` is false (line 373).
    pub(super) fn mutex_owner_or_spinner_leaves(&mut self, t: u32) -> bool {
        if self.end_spin(t) {
            return true;
        }
        if let Some(m) = self.held_mutex(t) {
            let spinners = std::mem::take(&mut self.mutexes[m as usize].spinners);
            for &s in &spinners {
                self.cut_spin(s);
            }
            self.mutexes[m as usize].spinners = spinners;
        }
        false
    }

    /// The line transfer of an acquisition on `cpu` of a lock last owned on `last`
    /// by a task last woken from `woken_from` (module doc): [`PIPE_MUTEX_LINES`] ×
    /// the c2c latency above the same-cluster one (`pipe_msg_ns` holds that), less
    /// what the wake-up's refill paid for lines from the waker's CPU.
    fn pipe_lines_ns(&self, last: u32, cpu: u32, woken_from: u32) -> u64 {
        if last == NONE {
            return 0;
        }
        let base = self.cost.params.c2c_ns[Distance::SameCluster as usize];
        let above = |from: u32| {
            self.cost
                .c2c_ns(CpuId(from), CpuId(cpu))
                .saturating_sub(base)
        };
        let paid = if woken_from == NONE {
            0
        } else {
            above(woken_from)
        };
        PIPE_MUTEX_LINES * above(last).saturating_sub(paid)
    }

    /// Task `t`'s spin, if it is in one, ends now (it runs its op again, or leaves
    /// its CPU): counted for what ran of it; `true` if it was spinning.
    fn end_spin(&mut self, t: u32) -> bool {
        let w = &mut self.mutex_wait[t as usize];
        let m = std::mem::replace(&mut w.spinning_on, NONE);
        if m == NONE {
            return false;
        }
        // An interrupt taken during the spin pushes its burst's end out: that time
        // is not spin (`spin_until` caps it).
        let done = self.now.min(w.spin_until).since(w.spin_from);
        self.mutexes[m as usize].spinners.retain(|&s| s != t);
        if self.measuring {
            self.mutex_stats.spin_ns += done;
        }
        true
    }

    /// Spinner `s`'s spin is cut short now (the owner left its CPU, or its unlock
    /// gave `s` the lock): its burst ends now, and only what ran counts.
    fn cut_spin(&mut self, s: u32) {
        let w = &mut self.mutex_wait[s as usize];
        w.spin_until = w.spin_until.min(self.now);
        if let Loc::Running(c) = self.tasks[s as usize].loc {
            self.end_burst_now(c);
        }
    }

    /// The burst running on `cpu` ends now (a spin whose owner left).
    fn end_burst_now(&mut self, cpu: u32) {
        let c = &mut self.cpus[cpu as usize];
        c.burst_gen = c.burst_gen.wrapping_add(1);
        c.burst_end = self.now;
        let gen = c.burst_gen;
        self.queue
            .push(self.now, super::event::Event::BurstEnd { cpu, gen });
    }

    /// What the pipes' mutexes did while measuring.
    pub fn pipe_mutex_stats(&self) -> PipeMutexStats {
        self.mutex_stats
    }
}
