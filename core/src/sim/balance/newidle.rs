//! Newidle balancing, fair.c v6.8: `newidle_balance()` (`sched_balance_newidle()`
//! from 6.10), run by a CPU about to go idle, and its tail for a pass that pulled
//! nothing (`newidle_balance_out()`). The pass's run time, and its end as
//! `__schedule()`'s switch, are the simulator's newidle.rs.

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::SdFlags;

use super::super::MIGRATION_COST_NS;
use super::{CpuIdle, NohzFlags, Simulator};

impl Simulator {
    /// `newidle_balance()` (`sched_balance_newidle()`), fair.c v6.8: `cpu` is about to
    /// go idle. Gated by `rd->overload` and `avg_idle` against the lowest domain's
    /// `max_newidle_lb_cost` (before 5.16 also, and in 5.12 only, against
    /// `sysctl_sched_migration_cost`), then
    /// each domain while `avg_idle` exceeds the cost so far plus its
    /// `max_newidle_lb_cost`. A balance's cost is the remote runqueues it read
    /// (`probe_ns` each, every online CPU of the domain's groups) and the rq locks it
    /// took (the first also `update_blocked_averages()`'s); the pulled task waits
    /// for the pass, the retake of the own lock at its end included. Nothing
    /// pulled: `nohz_newidle_balance()` (fair.c v6.8 12410).
    pub(in crate::sim) fn newidle_balance(&mut self, cpu: u32) -> Option<u32> {
        // "There is a task waiting to run. No need to search for one. Return 0; the
        // task will be enqueued when switching to idle." (fair.c v6.8 12305-12310;
        // from v5.13, Rik van Riel's e5e678e4fea2: v5.12's newidle_balance(),
        // fair.c 10623-10640, has no such test and balances as for any empty rq.)
        let v5_13 = self.balance.release >= Release::new(5, 13);
        if v5_13 && self.state.rqs[cpu as usize].ttwu_pending {
            return None;
        }
        // "We must set idle_stamp _before_ calling idle_balance()".
        self.cpus[cpu as usize].idle_stamp = Some(self.now);
        let n = self.balance.n_levels(cpu);
        if n == 0 {
            // No domain: straight to "out", nothing pulled.
            self.nohz_newidle_balance(cpu);
            return None;
        }
        let j = self.jiffies();
        let mut next_balance = j + self.state.hz;
        let avg_idle = self.cpus[cpu as usize].avg_idle_ns;
        let lowest = self.balance.dom[cpu as usize][0].max_newidle_lb_cost;
        let rel = self.balance.release;
        let mut pulled = None;
        // The pass's run time: its domains' costs, and any lock time outside them.
        let mut pass_ns = 0u64;
        self.cpus[cpu as usize].newidle_ends.clear();
        if newidle_skips(rel, self.balance.overload, avg_idle, lowest) {
            next_balance = next_balance.min(
                self.balance.dom[cpu as usize][0].last_balance
                    + self.sd_balance_interval(cpu, 0, false),
            );
        } else {
            // raw_spin_rq_unlock(this_rq); t0 = sched_clock_cpu(): the domains'
            // costs are the pass's clock (locks.rs), the scans and the locks.
            let outer = self.lb_pass_begin();
            let t0 = self.now.ns();
            self.update_blocked_averages(cpu, cpu);
            let probe = self.cost.probe_ns(CpuId(cpu));
            let mut w = SimNewidle {
                sim: self,
                cpu,
                t0,
                probe,
            };
            let (p, curr_cost, nb) = newidle_walk(&mut w, rel, avg_idle, next_balance);
            (pulled, next_balance) = (p, nb);
            // raw_spin_rq_lock(this_rq): back from the last holder, if a waker.
            self.lb_rq_lock(cpu, cpu, 0);
            let run = self.lb_clock.at_ns - self.now.ns();
            self.lb_pass_end(outer);
            // The pass's run time (newidle_run_time()) ends with its last domain.
            let ends = &mut self.cpus[cpu as usize].newidle_ends;
            match ends.last_mut() {
                Some(last) => *last = run,
                None if run > 0 => ends.push(run),
                None => {}
            }
            pass_ns = run;
            let m = &mut self.balance.max_idle_balance_cost[cpu as usize];
            *m = (*m).max(curr_cost);
        }
        let nb = &mut self.balance.next_balance[cpu as usize];
        if *nb > next_balance {
            *nb = next_balance;
        }
        if let Some(t) = pulled {
            // The scan took time before the pulled task can run; schedule() takes
            // the own lock after it (the pass's retake is its own).
            self.tasks[t as usize].debt_ns += pass_ns;
            let c = &mut self.cpus[cpu as usize];
            c.busy_until_ns = c.busy_until_ns.max(self.now.ns() + pass_ns);
        } else {
            // Nothing pulled: the pass still ran, with `rq->curr` not yet the idle
            // task (schedule() spends it before the CPU goes idle).
            let c = &mut self.cpus[cpu as usize];
            c.newidle_cost_ns = pass_ns;
            c.newidle_start = self.now;
        }
        // "if (pulled_task) this_rq->idle_stamp = 0; else nohz_newidle_balance()" (a
        // task here counts as pulled). A pass with a run time reaches "out:" at its
        // end, where a task queued meanwhile counts too: newidle_balance_out().
        self.cpus[cpu as usize].newidle_newilb = false;
        if pulled.is_some() || self.state.rqs[cpu as usize].nr_running > 0 {
            self.cpus[cpu as usize].idle_stamp = None;
        } else {
            let before = self.balance.nohz_flags[cpu as usize];
            self.nohz_newidle_balance(cpu);
            let after = self.balance.nohz_flags[cpu as usize];
            self.cpus[cpu as usize].newidle_newilb =
                !before.contains(NohzFlags::NEWILB) && after.contains(NohzFlags::NEWILB);
        }
        pulled
    }

    /// `newidle_balance()`'s tail (fair.c v6.8 12389-12410) for a pass that pulled
    /// nothing, at the end of its run time (`cpu`'s newidle_pass_over()): a task put
    /// on the rq meanwhile, by a balancer's move ("if (this_rq->cfs.h_nr_running &&
    /// !pulled_task) pulled_task = 1;") or the stopper woken under the rq lock
    /// ("if (this_rq->nr_running != this_rq->cfs.h_nr_running) pulled_task = -1;"),
    /// makes it a pass that pulled: `rq->idle_stamp = 0` and no
    /// `nohz_newidle_balance()`, so the `NOHZ_NEWILB_KICK` that the model set at the
    /// pass's start is taken back (if it set it: the flag is an `atomic_or()`).
    /// Wakees on the wake list are not on the rq (`rq->ttwu_pending`): the kernel
    /// sets the flag, and the idle task switches to them from `schedule_idle()`'s
    /// loop (core.c v6.8 6873-6875, called at idle.c 340) without passing
    /// `do_idle()`'s `nohz_run_idle_balance()` (idle.c 244): the flag waits for the
    /// next idle entry there too. (`nohz_newidle_balance()`'s inputs are read at the
    /// pass's start here; a wake-up's `update_avg_idle()`, which the kernel does
    /// after the pass, comes before it in the model.)
    pub(in crate::sim) fn newidle_balance_out(&mut self, cpu: u32, stopper: bool) {
        let set = std::mem::take(&mut self.cpus[cpu as usize].newidle_newilb);
        let stopper_on_rq = stopper && !self.balance.stopper_wakelist[cpu as usize];
        if self.state.rqs[cpu as usize].nr_running == 0 && !stopper_on_rq {
            return;
        }
        self.cpus[cpu as usize].idle_stamp = None;
        if set {
            let f = &mut self.balance.nohz_flags[cpu as usize];
            *f = f.without(NohzFlags::NEWILB);
        }
    }
}

/// `newidle_balance()`'s gate, fair.c v6.8 12335-12336: no balance when
/// `!READ_ONCE(this_rq->rd->overload)` or `this_rq->avg_idle <
/// sd->max_newidle_lb_cost` of the lowest domain (`lowest`, ns). 5.16 (Vincent
/// Guittot's "sched/fair: Remove sysctl_sched_migration_cost condition"): that
/// alone; 5.13-5.15 (Tim Chen's limit on newidle balancing) also `avg_idle <
/// sysctl_sched_migration_cost`; 5.12 the migration cost alone.
pub(super) fn newidle_skips(rel: Release, overload: bool, avg_idle: u64, lowest: u64) -> bool {
    let gate = if rel >= Release::new(5, 16) {
        lowest
    } else if rel >= Release::new(5, 13) {
        lowest.max(MIGRATION_COST_NS)
    } else {
        MIGRATION_COST_NS
    };
    !overload || avg_idle < gate
}

/// What `newidle_balance()`'s walk over a CPU's domains reads and does.
pub(super) trait NewidleWalk {
    fn n_levels(&self) -> usize;
    /// `sd->last_balance + get_sd_balance_interval(sd, 0)` (`update_next_balance()`).
    fn next_at(&self, li: usize) -> u64;
    fn max_newidle_lb_cost(&self, li: usize) -> u64;
    /// `sd->flags & SD_BALANCE_NEWIDLE`.
    fn balances_newidle(&self, li: usize) -> bool;
    /// `load_balance(CPU_NEWLY_IDLE)` of the domain: the task pulled, the domain's
    /// cost (`t1 - t0`, ns) and `continue_balancing` (cleared when
    /// `should_we_balance()` found work already there).
    fn balance(&mut self, li: usize) -> (Option<u32>, u64, bool);
    /// `update_newidle_cost(sd, domain_cost)`.
    fn update_newidle_cost(&mut self, li: usize, cost: u64);
    /// `this_rq->nr_running > 0 || this_rq->ttwu_pending` (the latter from 5.13).
    fn has_work(&self) -> bool;
}

/// `newidle_balance()`'s walk, fair.c v6.8 12352-12382: each domain bottom-up moves
/// `next_balance` on, stops once `avg_idle` is below the cost so far plus the
/// domain's `max_newidle_lb_cost`, balances if the domain has SD_BALANCE_NEWIDLE
/// (its cost feeding `update_newidle_cost()` and `curr_cost`), and stops once a task
/// was pulled or work arrived. From 6.10 (c829d6818b60, "sched/fair: Simplify the
/// continue_balancing logic in sched_balance_newidle()"; v6.12.19 12886-12887) the
/// stop is `pulled_task || !continue_balancing`: work that arrived during a domain's
/// balance is seen by the next domain's `should_we_balance()`, one domain later.
/// Returns the task pulled, `curr_cost` and `next_balance`.
pub(super) fn newidle_walk<W: NewidleWalk>(
    w: &mut W,
    release: Release,
    avg_idle: u64,
    mut next_balance: u64,
) -> (Option<u32>, u64, u64) {
    let mut pulled = None;
    let mut curr_cost = 0u64;
    let mut cont = true;
    let v6_10 = release >= Release::new(6, 10);
    for li in 0..w.n_levels() {
        next_balance = next_balance.min(w.next_at(li));
        if avg_idle < curr_cost + w.max_newidle_lb_cost(li) {
            break;
        }
        if w.balances_newidle(li) {
            let (p, cost, c) = w.balance(li);
            w.update_newidle_cost(li, cost);
            curr_cost += cost;
            pulled = p;
            cont &= c;
        }
        // fair.c v6.8 12378-12380; v5.12 10699-10700 without ttwu_pending.
        let stop = if v6_10 { !cont } else { w.has_work() };
        if pulled.is_some() || stop {
            break;
        }
    }
    (pulled, curr_cost, next_balance)
}

/// The simulator's side of [`newidle_walk`]: `cpu`'s domains; each domain's cost is
/// the pass's clock (locks.rs) from `t0`, the scan of its runqueues (`probe` ns
/// each) and the locks `load_balance()` takes.
struct SimNewidle<'a> {
    sim: &'a mut Simulator,
    cpu: u32,
    t0: u64,
    probe: u64,
}

impl NewidleWalk for SimNewidle<'_> {
    fn n_levels(&self) -> usize {
        self.sim.balance.n_levels(self.cpu)
    }
    fn next_at(&self, li: usize) -> u64 {
        self.sim.balance.dom[self.cpu as usize][li].last_balance
            + self.sim.sd_balance_interval(self.cpu, li, false)
    }
    fn max_newidle_lb_cost(&self, li: usize) -> u64 {
        self.sim.balance.dom[self.cpu as usize][li].max_newidle_lb_cost
    }
    fn balances_newidle(&self, li: usize) -> bool {
        self.sim.balance.levels[self.cpu as usize][li]
            .flags
            .contains(SdFlags::BALANCE_NEWIDLE)
    }
    fn balance(&mut self, li: usize) -> (Option<u32>, u64, bool) {
        let (sim, cpu) = (&mut *self.sim, self.cpu);
        if sim.balance.release < Release::new(5, 16) {
            // 5.12-5.15: t0 = sched_clock_cpu() per domain, just before
            // load_balance() (fair.c v5.15 10825, v5.12 10680):
            // update_blocked_averages() is in no domain's cost (8ea9183db4ad, v5.16,
            // moved t0 before it: v6.8 12348-12349).
            self.t0 = sim.lb_clock.at_ns;
        }
        // The scan (update_sd_lb_stats()) comes before the locks.
        let lv = &sim.balance.levels[cpu as usize][li];
        sim.lb_clock.at_ns += (lv.weight as u64).saturating_sub(1) * self.probe;
        let (moved, cont) = sim.load_balance(cpu, li, CpuIdle::NewlyIdle, cpu);
        let t1 = sim.lb_clock.at_ns;
        let cost = t1 - self.t0;
        self.t0 = t1;
        let end = t1 - sim.now.ns();
        sim.cpus[cpu as usize].newidle_ends.push(end);
        (moved.first().copied(), cost, cont)
    }
    fn update_newidle_cost(&mut self, li: usize, cost: u64) {
        self.sim.update_newidle_cost(self.cpu, li, cost);
    }
    fn has_work(&self) -> bool {
        let rq = &self.sim.state.rqs[self.cpu as usize];
        let v5_13 = self.sim.balance.release >= Release::new(5, 13);
        rq.nr_running > 0 || (v5_13 && rq.ttwu_pending)
    }
}
