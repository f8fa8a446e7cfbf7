//! The workload's task group and its `tg->load_avg` line (fair.c, CONFIG_FAIR_GROUP_SCHED).
//!
//! A benchmark started from a distro shell runs in a task group that is not the root
//! one (an autogroup, `CONFIG_SCHED_AUTOGROUP=y`, or a systemd scope / container
//! cgroup). Then every enqueue and dequeue of one of its tasks reads
//! `tg->load_avg`, and updates of the group's per-CPU `cfs_rq` write it: one
//! `atomic_long_t ... ____cacheline_aligned` (sched.h v6.5 382) shared by every CPU.
//!
//! ```text
//!  enqueue_task_fair() / dequeue_task_fair()     update_cfs_group(group se)
//!    → calc_group_shares(): atomic_long_read(&tg->load_avg)       READ  (v6.8 3929)
//!    v6.12: no read when the group's cfs_rq there is empty (a dequeue of its
//!    last task: `!gcfs_rq->load.weight`, v6.12.19 4068-4073)
//!  entity_tick(): update_cfs_group(curr)                          READ  (5501-5502)
//!  update_load_avg(gcfs_rq, se, flags)                                 (4729-4770)
//!    DO_ATTACH of a migrated task (enqueue on a new CPU)         update_tg_load_avg()
//!    DO_DETACH (the balancer's detach_task(), v6.1+)             update_tg_load_avg()
//!    before v6.1: the dequeue's decayed write, then set_task_cpu() →
//!    migrate_task_rq_fair() → detach_entity_cfs_rq()             update_tg_load_avg()
//!    decayed (a PELT period crossed, or `removed` applied) and UPDATE_TG
//!                                                                update_tg_load_avg()
//!  __update_blocked_fair(): the group cfs_rq decayed              update_tg_load_avg()
//!  update_tg_load_avg() (v6.5 3665-3679, v6.8 4092-4121):
//!    v6.7+: return if now - last_update_tg_load_avg < 1 ms (the whole function:
//!           attach and detach included)
//!    |load_avg - tg_load_avg_contrib| > contrib / 64 → atomic_long_add()  WRITE
//! ```
//!
//! Where: `enqueue()` (the read, the attach or decayed write), `dequeue_curr()`,
//! `detach_entity_load_avg()`, the tick, `set_next_entity()` (the pick's UPDATE_TG
//! update), `put_prev_entity()` (an update without UPDATE_TG: it consumes the decay
//! without a write), `update_blocked_averages()`. Each access is the performing
//! CPU's time: the running CPU's (`stolen_ns`), or, inside a capture
//! ([`Simulator::tg_capture`]), the caller's, which puts it in a lock hold: a remote
//! waker's or a forking parent's under the target's rq lock (`ttwu_do_activate()` /
//! `activate_task()` under `rq_lock()`), the balancer's under `src`'s and `dst`'s.
//! A stale read that a CPU of the reader's LLC can serve (it holds the current
//! version) is one intra-LLC c2c, not queued; else it is a transfer from the last
//! writer, queued behind those in flight (`ReadCopies::PerLlc`, `cost/lines.rs`).
//!
//! Simplifications (docs/calibration.md, term `tg-line`): the whole workload is one
//! task group, every background/noise task is in the root group (it never touches
//! the line); only the line's cost is modelled, not the group's shares, its
//! `h_load` or the hierarchy's weights (all tasks still weigh as nice-0 tasks of
//! the root group); the group's per-CPU `cfs_rq->avg.load_avg` that the 1/64 test
//! reads is the CPU's whole load average (`Cpu::load`, background tasks included),
//! its `decayed` is the group `cfs_rq`'s own (its last update, PELT periods at
//! absolute multiples of 1024 us, and its `removed` flag); the wake list's
//! activation pays the line on the target but does not lengthen the own-lock hold
//! booked when the wakee was queued; once a group task has been on a CPU, the
//! group's `cfs_rq` there stays on the leaf list for good, where the kernel takes a
//! fully decayed one off (`cfs_rq_is_decayed()` → `list_del_leaf_cfs_rq()`, fair.c
//! v6.8 9334-9335), so, its load being the CPU's, background load changes on a CPU
//! that has had no group task for long still make `__update_blocked_fair()` write.

use crate::cost::{Distance, LineTerm, ReadCopies, SharedLines};
use crate::cpumask::CpuId;
use crate::release::Release;

use super::pelt::PERIOD_NS;
use super::{Mode, Simulator};

/// `NSEC_PER_MSEC`: the v6.7+ rate limit on `update_tg_load_avg()`.
const RATE_LIMIT_NS: u64 = 1_000_000;
/// `last_update_tg_load_avg` before any write: far enough back for any rate limit.
const NEVER: u64 = u64::MAX;

/// The task group's line; its per-CPU `cfs_rq` fields are each CPU's [`TgCpu`].
#[derive(Clone, Debug)]
pub(super) struct TgLoad {
    /// `tg->load_avg`: one line.
    pub(super) line: SharedLines,
    /// v6.7 on: the 1-ms rate limit (1528c661c24b, "sched/fair: Ratelimit update to
    /// tg->load_avg").
    rate_limit: bool,
    /// v6.1 on: the balancer's detach is dequeue_entity()'s `DO_DETACH` (e1f078f50478,
    /// "sched/fair: Combine detach into dequeue when migrating task"): one
    /// `update_tg_load_avg()`. Before, the dequeue's UPDATE_TG update writes if it
    /// decayed, then `migrate_task_rq_fair()` → `detach_entity_cfs_rq()` writes again
    /// (fair.c v5.12.9 4338, 6867-6873, 10940-10949; v6.0.1 4527, 7102-7108,
    /// 11551-11560; v6.1.0 4200-4206, 4691).
    pub(super) detach_in_dequeue: bool,
    /// v6.12 (66951e4860d3, "sched/fair: Fix update_cfs_group() vs DELAY_DEQUEUE",
    /// v6.13, in 6.12.y from 6.12.11): `update_cfs_group()` returns before
    /// `calc_group_shares()` when the group's cfs_rq on that CPU is empty
    /// (`!gcfs_rq->load.weight`, fair.c v6.12.19 4068-4073): a dequeue that empties it
    /// does not read the line.
    empty_group_skips_read: bool,
    /// A capture in progress ([`Simulator::tg_capture`]).
    capture: Option<Capture>,
    /// A balancer's attach time for `dst`'s lock, not taken yet (cpu, ns).
    pending_hold: Option<(u32, u64)>,
}

/// The group `cfs_rq` of one CPU: the fields the line's accesses read and write,
/// kept in the CPU's `Cpu` beside its load average, which the 1/64 test reads.
#[derive(Clone, Copy, Debug)]
pub(super) struct TgCpu {
    /// `cfs_rq->tg_load_avg_contrib`.
    pub(super) contrib: u64,
    /// `cfs_rq->last_update_tg_load_avg` (v6.7+), [`NEVER`] before a write.
    last_write_ns: u64,
    /// The group `cfs_rq`'s last PELT update, ns.
    pub(super) last_update_ns: u64,
    /// A group task's averages wait in the group `cfs_rq`'s `removed`.
    pub(super) removed: bool,
    /// The task a preemption put back whose `put_prev_entity()` waits for the pick
    /// ([`Simulator::put_prev_for_pick`]), `u32::MAX` for none.
    pub(super) put_back: u32,
}

impl TgCpu {
    /// A CPU no group task has been on.
    pub(super) const NEW: TgCpu = TgCpu {
        contrib: 0,
        last_write_ns: NEVER,
        last_update_ns: 0,
        removed: false,
        put_back: u32::MAX,
    };
}

/// Accesses made for a caller that puts their time in a lock hold.
#[derive(Clone, Copy, Debug)]
struct Capture {
    /// The CPU that performs them.
    by: u32,
    /// When, ns of simulated time.
    at_ns: u64,
    /// Accesses on behalf of this runqueue go to `ns_on_rq`, others to `ns_other`.
    rq: u32,
    ns_on_rq: u64,
    ns_other: u64,
}

impl TgLoad {
    /// The line of a machine whose CPU `c` is in LLC `llc_of[c]` (dense indexes),
    /// under `release`.
    pub(super) fn new(llc_of: &[u16], release: Release) -> TgLoad {
        let n_cpus = llc_of.len();
        TgLoad {
            // Stale reads served by a current copy in the reader's LLC (cost/lines.rs).
            line: SharedLines::new(n_cpus, 1, LineTerm::TgLine, ReadCopies::per_llc(llc_of, 1)),
            rate_limit: release >= Release::new(6, 7),
            detach_in_dequeue: release >= Release::new(6, 1),
            empty_group_skips_read: release >= Release::new(6, 12),
            capture: None,
            pending_hold: None,
        }
    }
}

impl Simulator {
    /// Whether task `t` is in the workload's task group (background tasks are not).
    #[inline]
    pub(super) fn in_tg(&self, t: u32) -> bool {
        !self.tasks[t as usize].background
    }

    /// The accesses made until [`Simulator::tg_captured`] are `by`'s, at `at_ns`, and
    /// their time is the caller's to place (a lock hold), not `by`'s `stolen_ns`;
    /// those on behalf of runqueue `rq` are counted apart from the others.
    pub(super) fn tg_capture(&mut self, by: u32, at_ns: u64, rq: u32) {
        debug_assert!(self.tg.capture.is_none(), "nested tg-line captures");
        self.tg.capture = Some(Capture {
            by,
            at_ns,
            rq,
            ns_on_rq: 0,
            ns_other: 0,
        });
    }

    /// Ends the capture: the time of the accesses on behalf of its `rq`, and of the
    /// others.
    pub(super) fn tg_captured(&mut self) -> (u64, u64) {
        self.tg
            .capture
            .take()
            .map_or((0, 0), |c| (c.ns_on_rq, c.ns_other))
    }

    /// Who performs an access on behalf of `rq`, and when: the capture's CPU, else
    /// `rq`'s own, now.
    fn tg_who(&self, rq: u32) -> (u32, u64) {
        match self.tg.capture {
            Some(c) => (c.by, c.at_ns),
            None => (rq, self.now.ns()),
        }
    }

    /// Charges an access's `ns` made on behalf of `rq`: to the capture, else to
    /// `rq`'s CPU, ahead of its task (`stolen_ns`), unless it is idle (an idle CPU's
    /// balancing time is not charged, `balance/locks.rs`).
    fn tg_charge(&mut self, rq: u32, ns: u64) {
        if self.measuring {
            self.metrics.tg_line_ns += ns;
        }
        if ns == 0 {
            return;
        }
        if let Some(c) = self.tg.capture.as_mut() {
            if c.rq == rq {
                c.ns_on_rq += ns;
            } else {
                c.ns_other += ns;
            }
            return;
        }
        let cpu = &mut self.cpus[rq as usize];
        if matches!(cpu.mode, Mode::Running | Mode::Waking | Mode::NewidlePass) {
            cpu.stolen_ns += ns;
        }
    }

    /// `calc_group_shares()`'s `atomic_long_read(&tg->load_avg)` (fair.c v6.8 3929,
    /// v6.5 3499) for an enqueue, dequeue or tick on `rq` of a task of the group
    /// (the caller has checked). The hit (the performing CPU's copy is current:
    /// free) inlines into the caller; the stale read is [`Simulator::tg_read_stale`].
    #[inline]
    fn tg_group_read(&mut self, rq: u32) {
        let by = self.tg.capture.map_or(rq, |c| c.by);
        if self.tg.line.is_current(CpuId(by), 0) {
            if self.measuring {
                self.metrics.tg_line_reads += 1;
            }
            return;
        }
        self.tg_read_stale(rq);
    }

    /// [`Simulator::tg_group_read`] when the performing CPU's copy is stale: the line's
    /// transfer, charged.
    #[inline(never)]
    fn tg_read_stale(&mut self, rq: u32) {
        let (by, at) = self.tg_who(rq);
        let miss = self.tg.line.read(&self.cost, CpuId(by), 0, at);
        if self.measuring {
            self.metrics.tg_line_reads += 1;
            if miss.is_some() {
                self.metrics.tg_line_misses += 1;
            }
        }
        self.tg_charge(rq, miss.unwrap_or(0));
    }

    /// The dequeue's `update_cfs_group()` of the group entity once task `t` has left
    /// `rq`: from v6.12 no read when no other group task is queued or running there
    /// (the group's cfs_rq is empty, fair.c v6.12.19 4068-4073); else the read
    /// ([`Simulator::tg_group_read`]).
    pub(super) fn tg_read_dequeued(&mut self, t: u32, rq: u32) {
        if self.in_tg(t) {
            self.tg_group_read_dequeued(t, rq);
        }
    }

    /// [`Simulator::tg_read_dequeued`] for a task known to be in the group.
    fn tg_group_read_dequeued(&mut self, t: u32, rq: u32) {
        if self.tg.empty_group_skips_read && !self.tg_group_left_on(rq, t) {
            return;
        }
        self.tg_group_read(rq);
    }

    /// Whether a group task other than `t` is on `rq`'s runqueue (queued or its
    /// current task): the group cfs_rq there has weight.
    fn tg_group_left_on(&self, rq: u32, t: u32) -> bool {
        let c = &self.cpus[rq as usize];
        let other = |x: u32| x != t && x != u32::MAX && self.in_tg(x);
        other(c.curr) || c.queue.iter().any(|&x| other(x))
    }

    /// `update_cfs_rq_load_avg()` of the group `cfs_rq` on `rq` for task `t`:
    /// returns `decayed`, a PELT period boundary crossed since its last update or
    /// `removed` load applied (fair.c v6.8 4569-4615). False for a root-group task.
    pub(super) fn tg_cfs_rq_update(&mut self, t: u32, rq: u32) -> bool {
        self.in_tg(t) && self.tg_group_cfs_rq_update(rq)
    }

    /// [`Simulator::tg_cfs_rq_update`] for a task known to be in the group.
    #[inline]
    fn tg_group_cfs_rq_update(&mut self, rq: u32) -> bool {
        let now = self.now.ns();
        let g = &mut self.cpus[rq as usize].tg;
        let last = std::mem::replace(&mut g.last_update_ns, now);
        let removed = std::mem::take(&mut g.removed);
        removed || now / PERIOD_NS != last / PERIOD_NS
    }

    /// `update_load_avg(gcfs_rq, se, UPDATE_TG)` of task `t` on `rq` (the tick, the
    /// dequeue, `set_next_entity()`, `__update_blocked_fair()`): the group `cfs_rq`'s
    /// update, and `update_tg_load_avg()` if it decayed.
    pub(super) fn tg_update_load_avg(&mut self, t: u32, rq: u32) {
        if self.tg_cfs_rq_update(t, rq) {
            self.update_tg_load_avg(rq);
        }
    }

    /// `enqueue_entity()` of task `t` on `rq`, the group's part: `update_load_avg(UPDATE_TG
    /// | DO_ATTACH)` of the group `cfs_rq` (its update; `update_tg_load_avg()` if it
    /// decayed or the task was attached here, `attached`), then `update_cfs_group()`'s
    /// read. Nothing for a root-group task.
    /// `in_tg`: the task is in the group ([`Simulator::in_tg`]; the caller holds it).
    pub(super) fn tg_enqueue(&mut self, in_tg: bool, rq: u32, attached: bool) {
        if !in_tg {
            return;
        }
        if self.tg_group_cfs_rq_update(rq) || attached {
            self.update_tg_load_avg(rq);
        }
        self.tg_group_read(rq);
    }

    /// `dequeue_entity()` of task `t` from `rq`, the group's part:
    /// `update_load_avg(UPDATE_TG)`, then `update_cfs_group()`'s read
    /// ([`Simulator::tg_read_dequeued`]). Nothing for a root-group task.
    pub(super) fn tg_dequeue(&mut self, t: u32, rq: u32) {
        if !self.in_tg(t) {
            return;
        }
        if self.tg_group_cfs_rq_update(rq) {
            self.update_tg_load_avg(rq);
        }
        self.tg_group_read_dequeued(t, rq);
    }

    /// `entity_tick()` of `rq`'s current task `t`, the group's part:
    /// `update_load_avg(UPDATE_TG)`, then `update_cfs_group()`'s read. Nothing for a
    /// root-group task.
    pub(super) fn tg_tick(&mut self, t: u32, rq: u32) {
        if !self.in_tg(t) {
            return;
        }
        if self.tg_group_cfs_rq_update(rq) {
            self.update_tg_load_avg(rq);
        }
        self.tg_group_read(rq);
    }

    /// `update_tg_load_avg()` of `rq`'s group `cfs_rq` (fair.c v6.5 3665-3679, v6.8
    /// 4092-4121): from v6.7 nothing within 1 ms of its last write; a write when
    /// the group's load moved more than 1/64 of what it last contributed.
    pub(super) fn update_tg_load_avg(&mut self, rq: u32) {
        let now = self.now.ns();
        let rate_limit = self.tg.rate_limit;
        let c = &mut self.cpus[rq as usize];
        let last = c.tg.last_write_ns;
        if rate_limit && last != NEVER && now.saturating_sub(last) < RATE_LIMIT_NS {
            return;
        }
        let load = c.load.avg();
        let contrib = c.tg.contrib;
        if load.abs_diff(contrib) <= contrib / 64 {
            return;
        }
        c.tg.contrib = load;
        c.tg.last_write_ns = now;
        let (by, at) = self.tg_who(rq);
        let ns = self.tg.line.write(&self.cost, CpuId(by), 0, at);
        if self.measuring {
            self.metrics.tg_line_writes += 1;
            if ns > 0 {
                self.metrics.tg_line_misses += 1;
            }
        }
        self.tg_charge(rq, ns);
    }

    /// `update_blocked_averages()`'s `__update_blocked_fair()` (fair.c v6.8
    /// 9302-9340) for `cpu`, run on `runs_on` under `cpu`'s lock (booked just
    /// before): the group `cfs_rq` is on the leaf list while it holds load; its
    /// update writes the line if it decayed. The time lengthens that hold and the
    /// pass.
    pub(super) fn tg_update_blocked(&mut self, runs_on: u32, cpu: u32) {
        let g = &self.cpus[cpu as usize].tg;
        if g.last_update_ns == 0 && g.contrib == 0 {
            // No group task has ever been here: the group cfs_rq is not on the list.
            return;
        }
        let at = self.lb_clock.at_ns.max(self.now.ns());
        self.tg_capture(runs_on, at, cpu);
        if self.tg_group_cfs_rq_update(cpu) {
            self.update_tg_load_avg(cpu);
        }
        let (ns, _) = self.tg_captured();
        self.lb_hold_extend(cpu, ns);
    }
}

impl Simulator {
    /// `ttwu_do_activate()` of `p` on `target` by the waker on `cpu`, the task
    /// group's accesses of the enqueue captured: the waker's time (`charge_waker()`)
    /// and, until the wakee is on the target's queue, the delay; under the target's
    /// rq lock (`ttwu_queue()` → `rq_lock()`, core.c v6.8 4054-4057) they
    /// lengthen the hold, the wakers queued behind it wait longer. The wake list's
    /// activation happens later, on the target (`sched_ttwu_pending()`): nothing here.
    ///
    /// `dist` is `distance(src, target)`, as the caller classified it. A wake-list
    /// queueing (no enqueue here) and a root-group wakee (no access) skip the capture.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ttwu_do_activate_tg(
        &mut self,
        p: u32,
        waker: Option<u32>,
        cpu: u32,
        src: u32,
        target: u32,
        dist: Distance,
        q: &mut super::ttwu::Queued,
    ) {
        if q.wakelist || !self.in_tg(p) {
            self.ttwu_do_activate(p, src, target, dist, q.wakelist);
            return;
        }
        // Neither the wake list nor the waker's own queue: the remote rq lock.
        let remote = target != cpu;
        self.tg_capture(cpu, self.now.ns() + q.lock_wait_ns, target);
        self.ttwu_do_activate(p, src, target, dist, q.wakelist);
        let (on_target, other) = self.tg_captured();
        let ns = on_target + other;
        if ns > 0 {
            self.charge_waker(waker, cpu, ns);
            q.delay_ns += ns;
            if remote {
                self.cpus[target as usize].lock.extend_last(ns);
            }
        }
    }

    /// `migrate_queued()` of `t` from `src` to `dst` by a balancing pass running on
    /// `runs_on`, the task group's accesses captured: the detach's are done under
    /// `src`'s lock (booked before: it lengthens that hold), the attach's under
    /// `dst`'s (taken next: [`Simulator::lb_rq_lock`] adds them to its work); both
    /// are the pass's time.
    pub(super) fn tg_migrate_queued(
        &mut self,
        t: u32,
        src: u32,
        dst: u32,
        runs_on: u32,
        reason: super::record::MigrateReason,
    ) {
        let at = self.lb_clock.at_ns.max(self.now.ns());
        self.tg_capture(runs_on, at, src);
        self.migrate_queued(t, src, dst, runs_on, reason);
        let (on_src, on_dst) = self.tg_captured();
        self.lb_hold_extend(src, on_src);
        if on_dst > 0 {
            // One dst per detach loop (detach_tasks(), the stopper's push): the pending
            // time is never another CPU's.
            debug_assert!(
                self.tg.pending_hold.is_none_or(|(c, _)| c == dst),
                "tg-line time pending for CPU {:?}, a move to {dst}",
                self.tg.pending_hold
            );
            let p = &mut self.tg.pending_hold;
            *p = match *p {
                Some((c, ns)) if c == dst => Some((c, ns + on_dst)),
                _ => Some((dst, on_dst)),
            };
        }
    }

    /// The task group's time done under `cpu`'s lock that its next balancer take
    /// ([`Simulator::lb_rq_lock`]) holds it for.
    pub(super) fn tg_take_pending_hold(&mut self, cpu: u32) -> u64 {
        match self.tg.pending_hold {
            Some((c, ns)) if c == cpu => {
                self.tg.pending_hold = None;
                ns
            }
            _ => 0,
        }
    }

    /// Whether task-group time waits for a balancer's take of some lock.
    pub(super) fn tg_hold_pending(&self) -> bool {
        self.tg.pending_hold.is_some()
    }

    /// A balancing pass ends: task-group time left for a lock it did not take.
    pub(super) fn tg_take_any_pending_hold(&mut self) -> u64 {
        self.tg.pending_hold.take().map_or(0, |(_, ns)| ns)
    }
}
