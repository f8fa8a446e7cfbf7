//! When balancing runs, fair.c v6.8: `trigger_load_balance()` (`sched_balance_trigger()`
//! from 6.10) at the tick, `rebalance_domains()` (`sched_balance_domains()`) with
//! `get_sd_balance_interval()`, nohz idle balancing (`nohz_balancer_kick()`,
//! `find_new_ilb()`, `_nohz_idle_balance()`), and `newidle_balance()`
//! (`sched_balance_newidle()`) with `update_newidle_cost()`.
//!
//! A CPU whose tick is stopped (idle.rs stops it when the governor predicts an idle
//! period of at least a tick) takes no tick and does not balance itself: a busy CPU's
//! tick kicks an idle load balancer, which balances on its behalf.

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::SdFlags;

use super::super::{Mode, MIGRATION_COST_NS};
use super::{CpuIdle, Simulator};

impl Simulator {
    /// `get_sd_balance_interval()` (jiffies): `balance_interval` ms, × `busy_factor`
    /// and less one jiffy when busy, clamped to `[1, max_load_balance_interval]`.
    fn sd_balance_interval(&self, cpu: u32, li: usize, busy: bool) -> u64 {
        let b = &self.balance;
        let lv = &b.levels[cpu as usize][li];
        let ms = b.dom[cpu as usize][li].balance_interval;
        let busy_factor = busy.then_some(lv.busy_factor);
        b.interval_jiffies(ms, busy_factor, self.cost.params.tick_ns)
    }

    /// `update_newidle_cost()`: track the domain's most expensive newidle balance,
    /// decaying it by ~1% a second. Returns whether it decayed.
    fn update_newidle_cost(&mut self, cpu: u32, li: usize, cost: u64) -> bool {
        let (j, hz) = (self.jiffies(), self.state.hz);
        let d = &mut self.balance.dom[cpu as usize][li];
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

    /// `rebalance_domains()` (`sched_balance_domains()`), fair.c v6.8, run on
    /// `runs_on` (`cpu`, or the idle load balancer on its behalf): each domain of
    /// `cpu` bottom-up whose interval has passed, until `should_we_balance()` says
    /// another CPU of the group balances.
    pub(in crate::sim) fn rebalance_domains(&mut self, cpu: u32, mut idle: CpuIdle, runs_on: u32) {
        let j = self.jiffies();
        let mut busy = idle != CpuIdle::Idle;
        let mut next_balance = j + 60 * self.state.hz;
        let mut update_next = false;
        let mut cont = true;
        let mut need_decay = false;
        let mut max_cost = 0u64;
        for li in 0..self.balance.n_levels(cpu) {
            need_decay = self.update_newidle_cost(cpu, li, 0);
            max_cost += self.balance.dom[cpu as usize][li].max_newidle_lb_cost;
            if !cont {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval = self.sd_balance_interval(cpu, li, busy);
            // SD_SERIALIZE's trylock never fails: one balance runs at a time here.
            if j >= self.balance.dom[cpu as usize][li].last_balance + interval {
                let (moved, c) = self.load_balance(cpu, li, idle, runs_on);
                cont = c;
                if !moved.is_empty() {
                    idle = if self.cpu_idle(cpu) {
                        CpuIdle::Idle
                    } else {
                        CpuIdle::NotIdle
                    };
                    busy = idle != CpuIdle::Idle;
                }
                self.balance.dom[cpu as usize][li].last_balance = j;
                interval = self.sd_balance_interval(cpu, li, busy);
            }
            let at = self.balance.dom[cpu as usize][li].last_balance + interval;
            if next_balance > at {
                next_balance = at;
                update_next = true;
            }
        }
        if need_decay {
            self.balance.max_idle_balance_cost[cpu as usize] = MIGRATION_COST_NS.max(max_cost);
        }
        if update_next {
            self.balance.next_balance[cpu as usize] = next_balance;
        }
    }

    /// `trigger_load_balance()` (`sched_balance_trigger()`) from `cpu`'s tick:
    /// `rebalance_domains()` when `rq->next_balance` is due, then
    /// `nohz_balancer_kick()`. A tick-stopped idle CPU takes no tick.
    pub(in crate::sim) fn trigger_load_balance(&mut self, cpu: u32) {
        let c = &self.cpus[cpu as usize];
        if c.tick_stopped && c.mode == Mode::Idle {
            return;
        }
        // rq->idle_balance = idle_cpu(cpu) at the tick.
        let idle = if self.cpu_idle(cpu) {
            CpuIdle::Idle
        } else {
            CpuIdle::NotIdle
        };
        if self.jiffies() >= self.balance.next_balance[cpu as usize] {
            // run_rebalance_domains(): update_blocked_averages(cpu) first.
            self.update_cpu_pelt(cpu);
            self.rebalance_domains(cpu, idle, cpu);
        }
        if idle == CpuIdle::NotIdle {
            self.nohz_balancer_kick(cpu);
        }
    }

    /// `nohz.idle_cpus_mask` (`rq->nohz_tick_stopped`), of the run's CPUs still idle.
    pub(super) fn nohz_idle(&self, c: u32) -> bool {
        let cpu = &self.cpus[c as usize];
        cpu.nohz_tick_stopped && cpu.mode == Mode::Idle
    }

    /// `nohz_balance_exit_idle()` at the first busy tick after a nohz idle period:
    /// out of `nohz.idle_cpus_mask`, and `set_cpu_sd_state_busy()`: `nr_busy_cpus++`
    /// on the LLC's shared line (a write, its cost taken from the running task).
    pub(in crate::sim) fn nohz_balance_exit_idle(&mut self, cpu: u32) {
        if !self.cpus[cpu as usize].nohz_tick_stopped {
            return;
        }
        self.cpus[cpu as usize].nohz_tick_stopped = false;
        let llc = self.llc_id_of[cpu as usize] as usize;
        self.state.llc_shared[llc].nr_busy_cpus += 1;
        let cost = self.llc_line_write(cpu);
        self.cpus[cpu as usize].stolen_ns += cost;
    }

    /// `nohz_balancer_kick()`, fair.c v6.8, from a busy CPU's tick: kick the idle load
    /// balancer when some CPU is tick-stopped, `nohz.next_balance` has passed, and this
    /// CPU runs two tasks or its LLC has more than one busy CPU (`nr_busy_cpus`);
    /// first `nohz_balance_exit_idle()`.
    fn nohz_balancer_kick(&mut self, cpu: u32) {
        // "At the first busy tick after returning from idle, we will update the busy
        // stats."
        self.nohz_balance_exit_idle(cpu);
        let j = self.jiffies();
        if j < self.balance.nohz_next_balance {
            return;
        }
        if !self.active_cpus.iter().any(|&c| self.nohz_idle(c)) {
            return;
        }
        let mut kick = self.state.rqs[cpu as usize].nr_running >= 2;
        if !kick
            && self
                .env
                .domains
                .try_cpu(CpuId(cpu))
                .is_some_and(|d| d.sd_llc.is_some())
        {
            let llc = self.llc_id_of[cpu as usize] as usize;
            kick = self.state.llc_shared[llc].nr_busy_cpus > 1;
        }
        if !kick {
            return;
        }
        self.kick_ilb(cpu, j);
    }

    /// `kick_ilb(NOHZ_BALANCE_KICK)` from `cpu`'s tick, fair.c v6.8: push
    /// `nohz.next_balance` a jiffy on, find the idle load balancer and, unless a kick
    /// is already on its way to it (`NOHZ_KICK_MASK`), send it one
    /// (`smp_call_function_single_async()`): an IPI unless it polls
    /// (`send_call_function_single_ipi()` → `set_nr_if_polling()`), whose send time
    /// the kicking CPU's task loses; the ilb balances once the IPI has arrived and
    /// it has left its C-state (`Event::NohzKick`).
    pub(super) fn kick_ilb(&mut self, cpu: u32, j: u64) {
        self.balance.nohz_next_balance = j + 1;
        let Some(ilb) = self.find_new_ilb(cpu) else {
            return;
        };
        if std::mem::replace(&mut self.balance.nohz_kicked[ilb as usize], true) {
            return;
        }
        let params = &self.cost.params;
        let c = &self.cpus[ilb as usize];
        let exit = params.idle_states[c.cstate as usize].exit_latency_ns;
        let mut delay = exit;
        if !self.state.rqs[ilb as usize].polling {
            delay += params.ipi_ns();
            self.cpus[cpu as usize].stolen_ns += params.ipi_send_ns;
        }
        self.queue
            .push(self.now + delay, super::super::Event::NohzKick { cpu: ilb });
    }

    /// `nohz_csd_func()`, core.c v6.8, on the kicked idle load balancer `ilb`:
    /// release the kick, and if `ilb` is still idle with nothing on its way
    /// (`idle_cpu() && !need_resched()`) run `_nohz_idle_balance()` from its softirq.
    pub(in crate::sim) fn nohz_csd_func(&mut self, ilb: u32) {
        self.balance.nohz_kicked[ilb as usize] = false;
        if self.cpus[ilb as usize].mode == Mode::Idle && self.cpu_idle(ilb) {
            self.nohz_idle_balance(ilb);
        }
    }

    /// `find_new_ilb()`: the first tick-stopped idle CPU other than `this` (every CPU
    /// is a housekeeping CPU here).
    fn find_new_ilb(&self, this: u32) -> Option<u32> {
        self.active_cpus
            .iter()
            .copied()
            .find(|&c| c != this && self.nohz_idle(c) && self.cpu_idle(c))
    }

    /// `_nohz_idle_balance()` on `ilb`, fair.c v6.8: `rebalance_domains(CPU_IDLE)` for
    /// each tick-stopped idle CPU whose balance is due, from the one after `ilb`
    /// round to `ilb`, stopping once `ilb` has work. A task pulled to another CPU
    /// reaches it by `resched_curr()` from `ilb` (`attach_wakeup_preempt()`).
    fn nohz_idle_balance(&mut self, ilb: u32) {
        let j = self.jiffies();
        let n = self.active_cpus.len();
        let start = self.active_cpus.partition_point(|&c| c <= ilb);
        let mut next = j + 60 * self.state.hz;
        let mut update = false;
        for k in 0..n {
            let bc = self.active_cpus[(start + k) % n];
            if !self.nohz_idle(bc) || !self.cpu_idle(bc) {
                continue;
            }
            if !self.cpu_idle(ilb) {
                // need_resched() on the ilb: the next owner picks up the rest.
                return;
            }
            // update_nohz_stats(): the idle CPU's blocked averages decay.
            self.update_cpu_pelt(bc);
            if j >= self.balance.next_balance[bc as usize] {
                self.rebalance_domains(bc, CpuIdle::Idle, ilb);
            }
            let nb = self.balance.next_balance[bc as usize];
            if next > nb {
                next = nb;
                update = true;
            }
        }
        if update {
            self.balance.nohz_next_balance = next;
        }
    }

    /// `newidle_balance()` (`sched_balance_newidle()`), fair.c v6.8: `cpu` is about to
    /// go idle. Gated by `rd->overload` and `avg_idle` against the lowest domain's
    /// `max_newidle_lb_cost` (before 5.16 also, and in 5.12 only, against
    /// `sysctl_sched_migration_cost`), then
    /// each domain while `avg_idle` exceeds the cost so far plus its
    /// `max_newidle_lb_cost`. A balance's cost is the remote runqueues it read
    /// (`probe_ns` each, every online CPU of the domain's groups); the pulled task
    /// waits for it.
    pub(in crate::sim) fn newidle_balance(&mut self, cpu: u32) -> Option<u32> {
        if self.state.rqs[cpu as usize].ttwu_pending {
            return None;
        }
        // "We must set idle_stamp _before_ calling idle_balance()".
        self.cpus[cpu as usize].idle_stamp = Some(self.now);
        let n = self.balance.n_levels(cpu);
        if n == 0 {
            return None;
        }
        let j = self.jiffies();
        let mut next_balance = j + self.state.hz;
        let avg_idle = self.cpus[cpu as usize].avg_idle_ns;
        // 5.16 (Vincent Guittot's "sched/fair: Remove sysctl_sched_migration_cost
        // condition"): the lowest domain's max_newidle_lb_cost alone; 5.13-5.15 (Tim
        // Chen's limit on newidle balancing) either; 5.12 the migration cost alone.
        let lowest = self.balance.dom[cpu as usize][0].max_newidle_lb_cost;
        let rel = self.balance.release;
        let gate = if rel >= Release::new(5, 16) {
            lowest
        } else if rel >= Release::new(5, 13) {
            lowest.max(MIGRATION_COST_NS)
        } else {
            MIGRATION_COST_NS
        };
        let mut pulled = None;
        let mut curr_cost = 0u64;
        if !self.balance.overload || avg_idle < gate {
            next_balance = next_balance.min(
                self.balance.dom[cpu as usize][0].last_balance
                    + self.sd_balance_interval(cpu, 0, false),
            );
        } else {
            // update_blocked_averages(this_cpu).
            self.update_cpu_pelt(cpu);
            let probe = self.cost.probe_ns(CpuId(cpu));
            for li in 0..n {
                let at = self.balance.dom[cpu as usize][li].last_balance
                    + self.sd_balance_interval(cpu, li, false);
                next_balance = next_balance.min(at);
                if avg_idle < curr_cost + self.balance.dom[cpu as usize][li].max_newidle_lb_cost {
                    break;
                }
                if self.balance.levels[cpu as usize][li]
                    .flags
                    .contains(SdFlags::BALANCE_NEWIDLE)
                {
                    let (moved, _) = self.load_balance(cpu, li, CpuIdle::NewlyIdle, cpu);
                    let lv = &self.balance.levels[cpu as usize][li];
                    let cost = (lv.weight as u64).saturating_sub(1) * probe;
                    self.update_newidle_cost(cpu, li, cost);
                    curr_cost += cost;
                    pulled = moved.first().copied();
                }
                let rq = &self.state.rqs[cpu as usize];
                if pulled.is_some() || rq.nr_running > 0 || rq.ttwu_pending {
                    break;
                }
            }
            let m = &mut self.balance.max_idle_balance_cost[cpu as usize];
            *m = (*m).max(curr_cost);
        }
        let nb = &mut self.balance.next_balance[cpu as usize];
        if *nb > next_balance {
            *nb = next_balance;
        }
        if let Some(t) = pulled {
            // The scan took time before the pulled task can run.
            self.tasks[t as usize].debt_ns += curr_cost;
        }
        // "if (pulled_task) this_rq->idle_stamp = 0;" (a task here counts as pulled).
        if pulled.is_some() || self.state.rqs[cpu as usize].nr_running > 0 {
            self.cpus[cpu as usize].idle_stamp = None;
        }
        pulled
    }
}
