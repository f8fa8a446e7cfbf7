//! When balancing runs from the tick, fair.c v6.8: `trigger_load_balance()`
//! (`sched_balance_trigger()` from 6.10) and `rebalance_domains()`
//! (`sched_balance_domains()`) with `get_sd_balance_interval()` and
//! `update_newidle_cost()`; and `update_blocked_averages()`, which the tick's, the
//! idle load balancer's and newidle's passes all run. Nohz idle balancing is in
//! nohz.rs, newidle balancing in newidle.rs.
//!
//! Each pass (the tick's, the ilb's, newidle's) takes the rq locks the kernel's does
//! (locks.rs): `update_blocked_averages()` the updated CPU's, `_nohz_idle_balance()`
//! each due CPU's, `newidle_balance()` its own again after dropping it for the
//! domains, whose costs include the locks `load_balance()` took.

use super::super::MIGRATION_COST_NS;
use super::{CpuIdle, DomainState, Simulator};

impl Simulator {
    /// `get_sd_balance_interval()` (jiffies): `balance_interval` ms, × `busy_factor`
    /// and less one jiffy when busy, clamped to `[1, max_load_balance_interval]`.
    pub(super) fn sd_balance_interval(&self, cpu: u32, li: usize, busy: bool) -> u64 {
        let b = &self.balance;
        let lv = &b.levels[cpu as usize][li];
        let ms = b.dom[cpu as usize][li].balance_interval;
        let busy_factor = busy.then_some(lv.busy_factor);
        b.interval_jiffies(ms, busy_factor, self.cost.params.tick_ns)
    }

    /// `update_newidle_cost()`, fair.c v6.8 11664-11686, on `cpu`'s domain `li`
    /// ([`update_newidle_cost`]). Returns whether it decayed.
    pub(super) fn update_newidle_cost(&mut self, cpu: u32, li: usize, cost: u64) -> bool {
        let (j, hz) = (self.jiffies(), self.state.hz);
        update_newidle_cost(&mut self.balance.dom[cpu as usize][li], cost, j, hz)
    }

    /// `rebalance_domains()` (`sched_balance_domains()`), fair.c v6.8 11694-11774, run
    /// on `runs_on` (`cpu`, or the idle load balancer on its behalf): each domain of
    /// `cpu` bottom-up whose interval has passed, until `should_we_balance()` says
    /// another CPU of the group balances ([`rebalance_walk`]).
    pub(in crate::sim) fn rebalance_domains(&mut self, cpu: u32, idle: CpuIdle, runs_on: u32) {
        let (j, hz) = (self.jiffies(), self.state.hz);
        let mut r = SimRebalance {
            sim: self,
            cpu,
            runs_on,
        };
        let (next, max_idle) = rebalance_walk(&mut r, j, hz, idle);
        if let Some(m) = max_idle {
            self.balance.max_idle_balance_cost[cpu as usize] = m;
        }
        if let Some(nb) = next {
            self.balance.next_balance[cpu as usize] = nb;
        }
    }

    /// `trigger_load_balance()` (`sched_balance_trigger()`, fair.c v6.8 12436-12447)
    /// from `cpu`'s tick: `raise_softirq(SCHED_SOFTIRQ)` when `rq->next_balance` is
    /// due, then `nohz_balancer_kick()`, in the tick itself. The softirq's
    /// `run_rebalance_domains()` runs at the interrupt's exit, after the kick has read
    /// this runqueue, so it comes second here. (A tick-stopped idle or waking CPU
    /// takes no tick: `Simulator::on_tick`.)
    pub(in crate::sim) fn trigger_load_balance(&mut self, cpu: u32) {
        // rq->idle_balance = idle_cpu(cpu) at the tick.
        let idle = if self.cpu_idle(cpu) {
            CpuIdle::Idle
        } else {
            CpuIdle::NotIdle
        };
        let due = self.jiffies() >= self.balance.next_balance[cpu as usize];
        // nohz_balancer_kick() returns at once when rq->idle_balance.
        if idle == CpuIdle::NotIdle {
            self.nohz_balancer_kick(cpu);
        }
        if due {
            // run_rebalance_domains(): update_blocked_averages(cpu), then the
            // domains. (A kicked ilb's nohz_idle_balance() runs from its kick,
            // Event::NohzKick.) The pass's rq locks are the softirq's time.
            let outer = self.lb_pass_begin();
            self.update_blocked_averages(cpu, cpu);
            self.rebalance_domains(cpu, idle, cpu);
            let ns = self.lb_pass_end(outer);
            self.lb_charge(cpu, ns);
        }
    }

    /// `update_blocked_averages()`, fair.c v6.8 9410-9427: `cpu`'s averages brought
    /// to now (`update_cpu_pelt()`, `rq->last_blocked_load_update_tick` stamped), and
    /// `rq->has_blocked_load` cleared once they have decayed to nothing
    /// (`update_blocked_load_status()`: `cfs_rq_has_blocked()`, `load_avg` and
    /// `util_avg` both 0; no RT, DL, IRQ or thermal averages here, so
    /// `others_have_blocked()` is false). The model's averages reach exactly 0: a
    /// decay floors, and past 1024 periods (about 1 s) it is to 0.
    /// Run on `runs_on`, under `cpu`'s rq lock (`rq_lock_irqsave()`, locks.rs).
    pub(in crate::sim) fn update_blocked_averages(&mut self, runs_on: u32, cpu: u32) {
        self.lb_rq_lock(runs_on, cpu, self.lb_hold_ns(1));
        self.balance.last_blocked_load_update_tick[cpu as usize] = self.jiffies();
        self.update_cpu_pelt(cpu);
        self.tg_update_blocked(runs_on, cpu);
        let c = &self.cpus[cpu as usize];
        if c.load.avg() == 0 && c.util.avg() == 0 {
            self.balance.has_blocked_load[cpu as usize] = false;
        }
    }
}

/// `update_newidle_cost()`, fair.c v6.8 11664-11686: track the domain's most
/// expensive newidle balance (`cost`, ns), decaying it by ~1% a second (jiffies
/// `j`, `hz` a second). Returns whether it decayed.
pub(super) fn update_newidle_cost(d: &mut DomainState, cost: u64, j: u64, hz: u64) -> bool {
    if cost > d.max_newidle_lb_cost {
        d.max_newidle_lb_cost = cost;
        d.last_decay_max_lb_cost = j;
    } else if j > d.last_decay_max_lb_cost + hz {
        d.max_newidle_lb_cost = d.max_newidle_lb_cost * 253 / 256;
        d.last_decay_max_lb_cost = j;
        return true;
    }
    false
}

/// What `rebalance_domains()` reads and does to one CPU's domains, bottom-up.
pub(super) trait Rebalance {
    fn n_levels(&self) -> usize;
    /// `update_newidle_cost(sd, 0)`: whether the domain's cost decayed.
    fn decay(&mut self, li: usize) -> bool;
    fn max_newidle_lb_cost(&self, li: usize) -> u64;
    /// `get_sd_balance_interval(sd, busy)` (jiffies).
    fn interval(&self, li: usize, busy: bool) -> u64;
    fn last_balance(&self, li: usize) -> u64;
    fn set_last_balance(&mut self, li: usize, j: u64);
    /// `load_balance()`: whether tasks moved, and `continue_balancing`.
    fn load_balance(&mut self, li: usize, idle: CpuIdle) -> (bool, bool);
    /// `idle_cpu(cpu)` now.
    fn idle_cpu(&self) -> bool;
}

/// `rebalance_domains()`'s walk, fair.c v6.8 11694-11774, at jiffy `j`: returns
/// `rq->next_balance` if any domain set it, and `rq->max_idle_balance_cost` if the
/// last domain visited decayed. SD_SERIALIZE's trylock never fails: one balance runs
/// at a time here. No SCHED_IDLE tasks (`sched_idle_cpu()` is false).
pub(super) fn rebalance_walk<R: Rebalance>(
    r: &mut R,
    j: u64,
    hz: u64,
    mut idle: CpuIdle,
) -> (Option<u64>, Option<u64>) {
    let mut busy = idle != CpuIdle::Idle;
    let mut next_balance = j + 60 * hz;
    let mut update_next = false;
    let mut cont = true;
    let mut need_decay = false;
    let mut max_cost = 0u64;
    for li in 0..r.n_levels() {
        need_decay = r.decay(li);
        max_cost += r.max_newidle_lb_cost(li);
        if !cont {
            if need_decay {
                continue;
            }
            break;
        }
        let mut interval = r.interval(li, busy);
        if j >= r.last_balance(li) + interval {
            let (moved, c) = r.load_balance(li, idle);
            cont = c;
            if moved {
                idle = if r.idle_cpu() {
                    CpuIdle::Idle
                } else {
                    CpuIdle::NotIdle
                };
                busy = idle != CpuIdle::Idle;
            }
            r.set_last_balance(li, j);
            interval = r.interval(li, busy);
        }
        let at = r.last_balance(li) + interval;
        if next_balance > at {
            next_balance = at;
            update_next = true;
        }
    }
    let max_idle = need_decay.then(|| MIGRATION_COST_NS.max(max_cost));
    (update_next.then_some(next_balance), max_idle)
}

/// The simulator's side of [`rebalance_walk`]: `cpu`'s domains, balanced from
/// `runs_on`.
struct SimRebalance<'a> {
    sim: &'a mut Simulator,
    cpu: u32,
    runs_on: u32,
}

impl Rebalance for SimRebalance<'_> {
    fn n_levels(&self) -> usize {
        self.sim.balance.n_levels(self.cpu)
    }
    fn decay(&mut self, li: usize) -> bool {
        self.sim.update_newidle_cost(self.cpu, li, 0)
    }
    fn max_newidle_lb_cost(&self, li: usize) -> u64 {
        self.sim.balance.dom[self.cpu as usize][li].max_newidle_lb_cost
    }
    fn interval(&self, li: usize, busy: bool) -> u64 {
        self.sim.sd_balance_interval(self.cpu, li, busy)
    }
    fn last_balance(&self, li: usize) -> u64 {
        self.sim.balance.dom[self.cpu as usize][li].last_balance
    }
    fn set_last_balance(&mut self, li: usize, j: u64) {
        self.sim.balance.dom[self.cpu as usize][li].last_balance = j;
    }
    fn load_balance(&mut self, li: usize, idle: CpuIdle) -> (bool, bool) {
        let (moved, cont) = self.sim.load_balance(self.cpu, li, idle, self.runs_on);
        (!moved.is_empty(), cont)
    }
    fn idle_cpu(&self) -> bool {
        self.sim.cpu_idle(self.cpu)
    }
}
