//! The runqueue locks the balancer takes (session 34), priced by `cost::RqLock` as a
//! remote waker's (`ttwu_queue()` → `rq_lock()`) and the owner's `schedule()` are: in
//! one FIFO per runqueue, so that a balancer waits behind the wakers holding a lock
//! and they wait behind it, each holder pulling the rq lines from the last.
//!
//! ```text
//!  who (fair.c v6.5 / v6.8)                lock taken (by the balancing CPU)   work held
//!  update_blocked_averages(cpu)            rq_lock_irqsave(cpu_rq(cpu))         rq_lock_hold_ns
//!    (run_rebalance_domains(), newidle_balance(), update_nohz_stats())
//!  _nohz_idle_balance(): a CPU whose       rq_lock_irqsave(rq) for              0
//!    rq->next_balance is due                 update_rq_clock()
//!  load_balance(), busiest->nr_running > 1
//!    more_balance: detach_tasks()          rq_lock_irqsave(busiest)             rq_lock_hold_ns
//!    attach_tasks(), something detached    rq_lock(env->dst_rq)                 rq_lock_hold_ns × moved
//!    need_active_balance()                 raw_spin_rq_lock_irqsave(busiest)    0
//!    stop_one_cpu_nowait(), busiest in     rq_lock(busiest) in ttwu_queue()     rq_lock_hold_ns
//!      this LLC (ttwu_queue_cond(): no)
//!  newidle_balance(): after the domains    raw_spin_rq_lock(this_rq)            0
//!  active_load_balance_cpu_stop() on src   rq_lock_irq(busiest_rq)              rq_lock_hold_ns
//!    attach_one_task(), a task detached    rq_lock(target_rq)                   rq_lock_hold_ns
//! ```
//!
//! (v6.8 lines: `update_blocked_averages()` 9410-9427, `attach_one_task()` 9193-9201,
//! `attach_tasks()` 9207-9224, `load_balance()` 11327-11346 and 11442-11470,
//! `active_load_balance_cpu_stop()` 11575-11651, `_nohz_idle_balance()` 12163-12172,
//! `newidle_balance()` 12346-12385; v6.5 has the same at 9090, 8873, 8887, 10870,
//! 10984, 11115, 11705, 11874-11913.) `newidle_balance()` drops `this_rq`'s lock
//! for its domains (`raw_spin_rq_unlock(this_rq)`): wakers do not wait behind the
//! pass, and the pass takes it again at its end.
//!
//! A pass keeps a clock ([`LbClock`]): each lock is taken where the pass has got to
//! (a newidle pass's scan of the domain comes first), and the wait and the hold,
//! line transfers included, are the balancing CPU's time, charged once: a newidle
//! pass's run time (its domain costs, as `sched_clock_cpu()` measures them; the
//! pulled task's debt), the task of a CPU balancing from its tick or running the
//! stopper (`stolen_ns`, before the stopper's `schedule()`); the CPU's next
//! `schedule()` takes its own lock after the charged time (`busy_until_ns`), not
//! behind the pass's own holds again. An idle CPU's (the ilb's) lock time is not
//! charged, as the rest of its pass is not.
//!
//! Simplifications: the tasks move at the pass's start (as before), only the locks'
//! timeline is spread over the pass; a lock booked at a later instant of a pass
//! leaves the lock free before it (`cost::RqLock`'s gap: an earlier taker whose hold
//! fits takes it without waiting), else takers queue in the order the model takes
//! them (FIFO by call, as the wake list's own-lock enqueue is); a cut newidle pass
//! still books its retake at its planned end (a zero hold books nothing; a retake
//! that pulls the lines back from a waker books them); the stopper's time charged
//! to an `src` that then goes idle waits in `stolen_ns` for its next task; the work
//! under a lock reuses the wake-up's enqueue hold,
//! `rq_lock_hold_ns` (an **assumption**, docs/calibration.md). With the `rq-lock`
//! cost term off, the balancer's locks cost nothing, their holds included (the
//! balancing took no time there before).

use crate::cpumask::CpuId;

use super::super::Mode;
use super::Simulator;

/// Where a balancing pass has got to, and the lock time it has spent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::sim) struct LbClock {
    /// The instant the pass takes its next lock, ns of simulated time.
    pub(in crate::sim) at_ns: u64,
    /// The pass's lock waits and holds so far (the line transfers included), ns.
    pub(in crate::sim) lock_ns: u64,
}

impl Simulator {
    /// A balancing pass starts now; returns the clock it replaces, for
    /// [`Simulator::lb_pass_end`].
    pub(in crate::sim) fn lb_pass_begin(&mut self) -> LbClock {
        // Passes do not start inside a pass's detach loop: no outer pass's task-group
        // time is pending, for the inner pass's end to take (tg_load.rs).
        debug_assert!(
            !self.tg_hold_pending(),
            "a balancing pass starts with task-group time pending"
        );
        let now = LbClock {
            at_ns: self.now.ns(),
            lock_ns: 0,
        };
        std::mem::replace(&mut self.lb_clock, now)
    }

    /// The pass that [`Simulator::lb_pass_begin`] started ends: returns its lock
    /// time, and puts back `outer`.
    pub(in crate::sim) fn lb_pass_end(&mut self, outer: LbClock) -> u64 {
        let left = self.tg_take_any_pending_hold();
        std::mem::replace(&mut self.lb_clock, outer).lock_ns + left
    }

    /// The pass's lock time `ns`, run on `runs_on` from its tick's softirq or as its
    /// stopper: taken from its task when it runs one (as the `sd_llc_shared` write
    /// of `update_idle_cpu_scan()` is, lb/stats.rs).
    pub(in crate::sim) fn lb_charge(&mut self, runs_on: u32, ns: u64) {
        if self.cpus[runs_on as usize].mode == Mode::Running {
            self.lb_charge_cpu(runs_on, ns);
        }
    }

    /// `cpu` spent `ns` from now balancing (its tick's pass, the stopper): taken from
    /// the task it runs next (`stolen_ns`), and its next `schedule()` takes its own
    /// lock after it (`busy_until_ns`), not behind the pass's own holds again.
    pub(in crate::sim) fn lb_charge_cpu(&mut self, cpu: u32, ns: u64) {
        let end = self.now.ns() + ns;
        let c = &mut self.cpus[cpu as usize];
        c.stolen_ns += ns;
        c.busy_until_ns = c.busy_until_ns.max(end);
    }

    /// `runs_on` takes `cpu`'s rq lock where its pass has got to and holds it for
    /// `work_ns` (`cost::RqLock::acquire()`: after the holders queued before it, then
    /// the rq lines from the last): the pass's clock moves past the wait and the hold.
    /// With the `rq-lock` term off, only the lock's last holder changes.
    pub(in crate::sim) fn lb_rq_lock(&mut self, runs_on: u32, cpu: u32, work_ns: u64) {
        debug_assert!(
            self.lb_clock.at_ns >= self.now.ns(),
            "an rq lock taken outside a balancing pass (lb_pass_begin())"
        );
        let at = self.lb_clock.at_ns.max(self.now.ns());
        // The task group's line, accessed by the attach done under this lock
        // (tg_load.rs).
        let tg_ns = self.tg_take_pending_hold(cpu);
        let (wait, hold) =
            self.cpus[cpu as usize]
                .lock
                .acquire(&self.cost, CpuId(runs_on), at, work_ns + tg_ns);
        if !self.cost.params.terms.rq_lock {
            self.lb_clock.at_ns = at + tg_ns;
            self.lb_clock.lock_ns += tg_ns;
            return;
        }
        self.lb_clock.at_ns = at + wait + hold;
        self.lb_clock.lock_ns += wait + hold;
        if self.measuring {
            self.metrics.lb_lock_takes += 1;
            self.metrics.lb_lock_wait_ns += wait;
        }
    }

    /// Work done under `cpu`'s lock, priced after the pass took it (the task group's
    /// line, tg_load.rs): the hold and the pass grow by `ns`.
    pub(in crate::sim) fn lb_hold_extend(&mut self, cpu: u32, ns: u64) {
        if ns == 0 {
            return;
        }
        if self.cost.params.terms.rq_lock {
            self.cpus[cpu as usize].lock.extend_last(ns);
        }
        self.lb_clock.at_ns = self.lb_clock.at_ns.max(self.now.ns()) + ns;
        self.lb_clock.lock_ns += ns;
    }

    /// The work under a balancer's lock: the wake-up's enqueue hold, `n` times.
    pub(in crate::sim) fn lb_hold_ns(&self, n: usize) -> u64 {
        self.cost.params.rq_lock_hold_ns * n as u64
    }
}
