//! When balancing runs, fair.c v6.8: `trigger_load_balance()` (`sched_balance_trigger()`
//! from 6.10) at the tick, `rebalance_domains()` (`sched_balance_domains()`) with
//! `get_sd_balance_interval()`, nohz idle balancing (`nohz_balancer_kick()`,
//! `kick_ilb()`, `find_new_ilb()`, `_nohz_idle_balance()`, `update_nohz_stats()`),
//! and `newidle_balance()` (`sched_balance_newidle()`) with `update_newidle_cost()`
//! and `nohz_newidle_balance()`.
//!
//! A CPU whose tick is stopped (idle.rs stops it when the governor predicts an idle
//! period of at least a tick) takes no tick and does not balance itself, nor update
//! its blocked averages: a busy CPU's tick kicks an idle load balancer, which
//! balances on its behalf (`NOHZ_BALANCE_KICK`) or only decays the idle CPUs'
//! averages (`NOHZ_STATS_KICK`, every `LOAD_AVG_PERIOD` while `nohz.has_blocked`);
//! a CPU going newly idle may run that stats pass itself (`NOHZ_NEWILB_KICK`).
//!
//! Each pass (the tick's, the ilb's, newidle's) takes the rq locks the kernel's does
//! (locks.rs): `update_blocked_averages()` the updated CPU's, `_nohz_idle_balance()`
//! each due CPU's, `newidle_balance()` its own again after dropping it for the
//! domains, whose costs include the locks `load_balance()` took.

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::SdFlags;

use super::super::{Mode, MIGRATION_COST_NS};
use super::{CpuIdle, NohzFlags, Simulator};

/// `LOAD_AVG_PERIOD` (sched-pelt.h), in ms: how often a stats kick decays the idle
/// CPUs' blocked averages.
const LOAD_AVG_PERIOD_MS: u64 = 32;

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

    /// `cpumask_test_cpu(c, nohz.idle_cpus_mask)` (`rq->nohz_tick_stopped`): set when
    /// the tick stops, cleared at the first busy tick (`nohz_balance_exit_idle()`),
    /// whatever `c` does in between; the callers that need `c` idle test
    /// `idle_cpu()` as well (`find_new_ilb()`, `_nohz_idle_balance()`, fair.c v6.8
    /// 11792-11809, 12135-12138).
    pub(super) fn nohz_idle(&self, c: u32) -> bool {
        self.cpus[c as usize].nohz_tick_stopped
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

    /// `nohz_balance_enter_idle()`, fair.c v6.8 12019-12074, as `cpu`'s tick stops
    /// (`!was_stopped && ts->tick_stopped`): it may have blocked load
    /// (`rq->has_blocked_load`, `nohz.has_blocked`); the first stop since a busy tick
    /// also joins `nohz.idle_cpus_mask` (`rq->nohz_tick_stopped`), does
    /// `set_cpu_sd_state_idle()` (`nr_busy_cpus--`, a line write) and asks for
    /// `nohz.next_balance` to be collated (`nohz.needs_update`, 5.16+).
    pub(in crate::sim) fn nohz_balance_enter_idle(&mut self, cpu: u32) {
        self.balance.has_blocked_load[cpu as usize] = true;
        // on_null_domain(), which keeps an isolated CPU out, is left out: every run
        // CPU has a domain on the presets.
        if !self.cpus[cpu as usize].nohz_tick_stopped {
            self.cpus[cpu as usize].nohz_tick_stopped = true;
            let llc = self.llc_id_of[cpu as usize] as usize;
            let ls = &mut self.state.llc_shared[llc];
            ls.nr_busy_cpus = ls.nr_busy_cpus.saturating_sub(1);
            self.llc_line_write(cpu);
            if self.balance.release >= Release::new(5, 16) {
                self.balance.nohz_needs_update = true;
            }
        }
        // "Each time a cpu enter idle, we assume that it has blocked load and enable
        // the periodic update of the load of idle cpus".
        self.balance.nohz_has_blocked = true;
    }

    /// `nohz_balancer_kick()`, fair.c v6.8 11852-11967, from a busy CPU's tick: first
    /// `nohz_balance_exit_idle()`; then, with some CPU tick-stopped, a stats kick
    /// when `nohz.has_blocked` and `nohz.next_blocked` has passed (whether or not a
    /// balance is due), a balance kick (stats too) when `nohz.next_balance` has
    /// passed and this CPU runs two tasks or its LLC has more than one busy CPU
    /// (`nr_busy_cpus`), and `NOHZ_NEXT_KICK` while `nohz.needs_update`.
    fn nohz_balancer_kick(&mut self, cpu: u32) {
        // "At the first busy tick after returning from idle, we will update the busy
        // stats."
        self.nohz_balance_exit_idle(cpu);
        if !self.active_cpus.iter().any(|&c| self.nohz_idle(c)) {
            return;
        }
        let j = self.jiffies();
        let b = &self.balance;
        let mut flags = NohzFlags::EMPTY;
        // time_after(now, nohz.next_blocked), before the next_balance exit: the
        // blocked averages are refreshed every LOAD_AVG_PERIOD even when no
        // balance is due.
        if b.nohz_has_blocked && j > b.nohz_next_blocked {
            flags = NohzFlags::STATS;
        }
        if j >= b.nohz_next_balance && self.nohz_balance_wanted(cpu) {
            flags = NohzFlags::STATS | NohzFlags::BALANCE;
        }
        if self.balance.nohz_needs_update {
            flags |= NohzFlags::NEXT;
        }
        if !flags.is_empty() {
            self.kick_ilb(cpu, flags);
        }
    }

    /// `nohz_balancer_kick()`'s reasons for a balance kick that the modelled machines
    /// can have: `cpu` runs two tasks, or its LLC has more than one busy CPU.
    fn nohz_balance_wanted(&self, cpu: u32) -> bool {
        // "if (rq->nr_running >= 2)" (fair.c v6.8 11883): not the wakees still on
        // its wake list.
        if self.state.rqs[cpu as usize].nr_running >= 2 {
            return true;
        }
        let has_llc = self
            .env
            .domains
            .try_cpu(CpuId(cpu))
            .is_some_and(|d| d.sd_llc.is_some());
        has_llc && {
            let llc = self.llc_id_of[cpu as usize] as usize;
            self.state.llc_shared[llc].nr_busy_cpus > 1
        }
    }

    /// `kick_ilb(flags)` from `cpu`'s tick, fair.c v6.8 11817-11846: a balance kick
    /// pushes `nohz.next_balance` a jiffy on (a stats kick does not); find the idle
    /// load balancer and OR `flags` into its `nohz_flags`. If a kick was already on
    /// its way to it (`NOHZ_KICK_MASK`), that kick's pass does the OR'ed flags; else
    /// send one (`smp_call_function_single_async()`): an IPI unless it polls
    /// (`send_call_function_single_ipi()` → `set_nr_if_polling()`), whose send time
    /// the kicking CPU's task loses; the ilb runs `nohz_csd_func()` once the IPI has
    /// arrived and it has left its C-state (`Event::NohzKick`). (6.10 on first
    /// returns when the ilb has every flag already, which the OR then finds too.)
    pub(super) fn kick_ilb(&mut self, cpu: u32, flags: NohzFlags) {
        if flags.contains(NohzFlags::BALANCE) {
            self.balance.nohz_next_balance = self.jiffies() + 1;
        }
        let Some(ilb) = self.find_new_ilb(cpu) else {
            return;
        };
        let f = &mut self.balance.nohz_flags[ilb as usize];
        let old = *f;
        *f |= flags;
        if old.intersects(NohzFlags::KICK_MASK) {
            return;
        }
        let params = &self.cost.params;
        let c = &self.cpus[ilb as usize];
        let exit = params.idle_states[c.cstate as usize].exit_latency_ns;
        let mut delay = exit;
        let polling = self.state.rqs[ilb as usize].polling;
        if !polling {
            delay += params.ipi_ns();
            self.cpus[cpu as usize].stolen_ns += params.ipi_send_ns;
        }
        self.balance.nohz_kick_polled[ilb as usize] = polling;
        self.queue
            .push(self.now + delay, super::super::Event::NohzKick { cpu: ilb });
    }

    /// `nohz_csd_func()`, core.c v6.8 1198-1215, on the kicked idle load balancer
    /// `ilb`: take the kick's flags (and `NOHZ_NEWILB_KICK`: the stats pass below
    /// covers it), and if `ilb` is still idle with nothing on its way
    /// (`idle_cpu() && !need_resched()`) run `_nohz_idle_balance(flags)` from its
    /// softirq (`run_rebalance_domains()` → `nohz_idle_balance()`).
    ///
    /// A kick that found `ilb` polling came without an IPI: `set_nr_if_polling()`
    /// (core.c 922-935, from `call_function_single_prep_ipi()` 3925-3936) set its
    /// need-resched flag, so `do_idle()` leaves its loop and runs this from
    /// `flush_smp_call_function_queue()` (idle.c 339) with `need_resched()` true: no
    /// softirq, the flags are dropped, and `schedule_idle()` (idle.c 340) picks,
    /// which on an empty runqueue is `newidle_balance()` for `ilb` alone and a new
    /// idle entry. (Every modelled release has this; the `need_resched()` test was
    /// removed in 6.13.) A kick that reaches a busy `ilb` by IPI costs its task the
    /// receive. One that reaches `ilb` inside its newidle pass, in `__schedule()` with
    /// interrupts off (core.c v6.8 6656), is pending until the pass's end
    /// (`NewidleHeld::kick`, [`Simulator::nohz_csd_func_after_newidle`]); its flags
    /// stay set meanwhile, so a further `kick_ilb()` sends no IPI.
    pub(in crate::sim) fn nohz_csd_func(&mut self, ilb: u32) {
        if self.cpus[ilb as usize].mode == Mode::NewidlePass {
            self.cpus[ilb as usize].newidle_held.kick = true;
            return;
        }
        let flags = self.take_kick_flags(ilb);
        let polled = std::mem::take(&mut self.balance.nohz_kick_polled[ilb as usize]);
        match self.cpus[ilb as usize].mode {
            Mode::Idle if polled => {
                let c = &mut self.cpus[ilb as usize];
                c.mode = Mode::Waking;
                let g = c.switch_gen;
                self.queue
                    .push(self.now, super::super::Event::Resched { cpu: ilb, gen: g });
            }
            Mode::Idle if self.cpu_idle(ilb) => {
                self.nohz_idle_balance(ilb, flags);
                // Nothing pulled: the kicked CPU goes round do_idle()'s loop.
                if self.cpus[ilb as usize].mode == Mode::Idle {
                    self.idle_reselect(ilb, super::super::IdleExit::Interrupt);
                }
            }
            Mode::Running if !polled => {
                self.cpus[ilb as usize].stolen_ns += self.cost.params.ipi_recv_ns;
            }
            // Not idle_cpu(), or already on its way to schedule(): the flags are
            // dropped, no pass (and a polled kick brought no IPI to receive). A CPU
            // in its newidle pass held the kick above.
            Mode::Idle | Mode::Running | Mode::Waking | Mode::NewidlePass | Mode::ForceIdle => {}
        }
    }

    /// `nohz_csd_func()`, core.c v6.8 1198-1215, for the kick held in `ilb`'s newidle
    /// pass, as `finish_task_switch()` turns interrupts back on after the switch to
    /// the idle task (core.c 5185, 5301-5302; `newidle_pass_over()`): before the
    /// timers and the tick the pass held (the IPI's vector is above the local
    /// timer's on x86, the GIC's SGIs come first on arm64), and before `do_idle()`
    /// (idle.c v6.8 244 on). The flags are taken; with `ilb` idle (`idle_cpu()`: no
    /// wakee on its wake list either, whose `sched_ttwu_pending()` comes after this
    /// callback, smp.c v6.8 523-560) and `need_resched()` clear (a `resched_curr()`
    /// in the pass set it on the task that blocked, not on the idle task), the
    /// softirq at the IPI's exit runs `_nohz_idle_balance(flags)`. (A pass that ends
    /// in a switch to a task takes the kick there instead, `Event::NohzKick`: busy,
    /// flags dropped; and a pass that a stopper cut, `idle` false: the stopper is
    /// current when the IPI is taken, or on the wake list.)
    pub(in crate::sim) fn nohz_csd_func_after_newidle(&mut self, ilb: u32, idle: bool) {
        let flags = self.take_kick_flags(ilb);
        // The kick came by IPI: the CPU was not polling in its pass.
        self.balance.nohz_kick_polled[ilb as usize] = false;
        if !idle || !self.cpu_idle(ilb) {
            return;
        }
        // The idle task runs the softirq: to `_nohz_idle_balance()` `ilb` is an idle
        // CPU as the others are (in nohz.idle_cpus_mask while rq->nohz_tick_stopped,
        // `idle_cpu()`), though not in a C-state yet: the pass is over and `ilb` is
        // in schedule() again (Waking). A task it pulls for itself is on its rq for
        // the pick that follows (attach_wakeup_preempt()).
        self.nohz_idle_balance(ilb, flags);
    }

    /// `nohz_csd_func()`'s "flags = atomic_fetch_andnot(NOHZ_KICK_MASK | NOHZ_NEWILB_KICK,
    /// nohz_flags(cpu))" (core.c v6.8 1206): the kick's flags, cleared.
    fn take_kick_flags(&mut self, ilb: u32) -> NohzFlags {
        let f = &mut self.balance.nohz_flags[ilb as usize];
        let flags = *f;
        *f = f.without(NohzFlags::KICK_MASK | NohzFlags::NEWILB);
        debug_assert!(flags.intersects(NohzFlags::KICK_MASK));
        flags
    }

    /// `find_new_ilb()`, fair.c v6.8 11792-11809: the first tick-stopped idle CPU
    /// other than `this` (every CPU is a housekeeping CPU here).
    fn find_new_ilb(&self, this: u32) -> Option<u32> {
        self.active_cpus
            .iter()
            .copied()
            .find(|&c| c != this && self.nohz_idle(c) && self.cpu_idle(c))
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

    /// `update_nohz_stats()`, fair.c v6.8 12076-12092: decays tick-stopped idle CPU
    /// `c`'s blocked averages unless it has none or they were updated this jiffy;
    /// returns whether it may still have some. Run on `ilb`.
    fn update_nohz_stats(&mut self, ilb: u32, c: u32) -> bool {
        if !self.balance.has_blocked_load[c as usize] || !self.nohz_idle(c) {
            return false;
        }
        if self.jiffies() <= self.balance.last_blocked_load_update_tick[c as usize] {
            return true;
        }
        self.update_blocked_averages(ilb, c);
        self.balance.has_blocked_load[c as usize]
    }

    /// `_nohz_idle_balance(flags)` on `ilb`, fair.c v6.8 12099-12196: for each
    /// tick-stopped idle CPU, from the one after `ilb` round to `ilb`, stopping once
    /// `ilb` has work: with `NOHZ_STATS_KICK` its blocked averages decay
    /// (`update_nohz_stats()`), with `NOHZ_BALANCE_KICK` `rebalance_domains(CPU_IDLE)`
    /// if its balance is due; whatever the flags, `nohz.next_balance` becomes the
    /// earliest `rq->next_balance`. A stats pass clears `nohz.has_blocked` first and
    /// sets it again if a CPU still has blocked load or the pass stopped early, and
    /// puts `nohz.next_blocked` `LOAD_AVG_PERIOD` on. A task pulled to another CPU
    /// reaches it by `resched_curr()` from `ilb` (`attach_wakeup_preempt()`).
    fn nohz_idle_balance(&mut self, ilb: u32, flags: NohzFlags) {
        // The pass's rq locks (locks.rs): taken in turn; an idle ilb's time is not
        // charged, as the rest of the pass is not.
        let outer = self.lb_pass_begin();
        self.nohz_idle_balance_cpus(ilb, flags);
        let ns = self.lb_pass_end(outer);
        self.lb_charge(ilb, ns);
    }

    /// [`Simulator::nohz_idle_balance`]'s pass.
    fn nohz_idle_balance_cpus(&mut self, ilb: u32, flags: NohzFlags) {
        let j = self.jiffies();
        let stats = flags.contains(NohzFlags::STATS);
        let next_kick = flags.contains(NohzFlags::NEXT);
        debug_assert!(stats || !flags.contains(NohzFlags::BALANCE));
        if stats {
            self.balance.nohz_has_blocked = false;
        }
        if next_kick {
            self.balance.nohz_needs_update = false;
        }
        let mut has_blocked_load = false;
        let n = self.active_cpus.len();
        let start = self.active_cpus.partition_point(|&c| c <= ilb);
        let mut next = j + 60 * self.state.hz;
        let mut update = false;
        let mut aborted = false;
        for k in 0..n {
            let bc = self.active_cpus[(start + k) % n];
            if !self.nohz_idle(bc) || !self.cpu_idle(bc) {
                continue;
            }
            if !self.cpu_idle(ilb) {
                // need_resched() on the ilb: the next owner picks up the rest.
                has_blocked_load |= stats;
                if next_kick {
                    self.balance.nohz_needs_update = true;
                }
                aborted = true;
                break;
            }
            if stats {
                has_blocked_load |= self.update_nohz_stats(ilb, bc);
            }
            if j >= self.balance.next_balance[bc as usize] {
                // rq_lock_irqsave(rq) for update_rq_clock(), whatever the flags.
                self.lb_rq_lock(ilb, bc, 0);
                if flags.contains(NohzFlags::BALANCE) {
                    self.rebalance_domains(bc, CpuIdle::Idle, ilb);
                }
            }
            let nb = self.balance.next_balance[bc as usize];
            if next > nb {
                next = nb;
                update = true;
            }
        }
        if !aborted {
            if update {
                self.balance.nohz_next_balance = next;
            }
            if stats {
                self.balance.nohz_next_blocked = j + self.load_avg_period_jiffies();
            }
        }
        // "There is still blocked load, enable periodic update".
        if has_blocked_load {
            self.balance.nohz_has_blocked = true;
        }
    }

    /// `msecs_to_jiffies(LOAD_AVG_PERIOD)`, rounding up as `msecs_to_jiffies()` does.
    fn load_avg_period_jiffies(&self) -> u64 {
        (LOAD_AVG_PERIOD_MS * 1_000_000).div_ceil(self.cost.params.tick_ns)
    }

    /// `nohz_newidle_balance()`, fair.c v6.8 12248-12273, at the end of a
    /// `newidle_balance()` of `cpu` that pulled nothing: unless it expects to wake
    /// soon (`rq->avg_idle` under `sysctl_sched_migration_cost`), when idle CPUs may
    /// have blocked load and `nohz.next_blocked` has come, it will update their
    /// averages itself before it enters its idle state (`NOHZ_NEWILB_KICK`, run by
    /// [`Simulator::nohz_run_idle_balance`]). Every CPU is a housekeeping CPU here.
    fn nohz_newidle_balance(&mut self, cpu: u32) {
        if self.cpus[cpu as usize].avg_idle_ns < MIGRATION_COST_NS {
            return;
        }
        let j = self.jiffies();
        let b = &mut self.balance;
        if !b.nohz_has_blocked || j < b.nohz_next_blocked {
            return;
        }
        b.nohz_flags[cpu as usize] |= NohzFlags::NEWILB;
    }

    /// `nohz_run_idle_balance()`, fair.c v6.8 12234-12246, from `do_idle()` (idle.c
    /// v6.8 244) on `cpu` before it picks its C-state and stops its tick: take
    /// `NOHZ_NEWILB_KICK` and, if that was the only flag (no kick on its way, whose
    /// pass would do the same) and nothing is to run (`!need_resched()`), run
    /// `_nohz_idle_balance(NOHZ_STATS_KICK)` here: no IPI, no other CPU woken.
    pub(in crate::sim) fn nohz_run_idle_balance(&mut self, cpu: u32) {
        let f = &mut self.balance.nohz_flags[cpu as usize];
        let flags = *f;
        *f = f.without(NohzFlags::NEWILB);
        if flags == NohzFlags::NEWILB && self.cpu_idle(cpu) {
            self.nohz_idle_balance(cpu, NohzFlags::STATS);
        }
    }

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
        // The pass's run time: its domains' costs, and any lock time outside them.
        let mut pass_ns = 0u64;
        self.cpus[cpu as usize].newidle_ends.clear();
        if !self.balance.overload || avg_idle < gate {
            next_balance = next_balance.min(
                self.balance.dom[cpu as usize][0].last_balance
                    + self.sd_balance_interval(cpu, 0, false),
            );
        } else {
            // raw_spin_rq_unlock(this_rq); t0 = sched_clock_cpu(): the domains'
            // costs are the pass's clock (locks.rs), the scans and the locks.
            let outer = self.lb_pass_begin();
            let mut t0 = self.now.ns();
            self.update_blocked_averages(cpu, cpu);
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
                    if rel < Release::new(5, 16) {
                        // 5.12-5.15: t0 = sched_clock_cpu() per domain, just before
                        // load_balance() (fair.c v5.15 10825, v5.12 10680):
                        // update_blocked_averages() is in no domain's cost (8ea9183db4ad,
                        // v5.16, moved t0 before it: v6.8 12348-12349).
                        t0 = self.lb_clock.at_ns;
                    }
                    // The scan (update_sd_lb_stats()) comes before the locks.
                    let lv = &self.balance.levels[cpu as usize][li];
                    self.lb_clock.at_ns += (lv.weight as u64).saturating_sub(1) * probe;
                    let (moved, _) = self.load_balance(cpu, li, CpuIdle::NewlyIdle, cpu);
                    let t1 = self.lb_clock.at_ns;
                    let cost = t1 - t0;
                    t0 = t1;
                    self.update_newidle_cost(cpu, li, cost);
                    curr_cost += cost;
                    let end = t1 - self.now.ns();
                    self.cpus[cpu as usize].newidle_ends.push(end);
                    pulled = moved.first().copied();
                }
                // fair.c v6.8 12378-12380; v5.12 10699-10700 without ttwu_pending.
                let rq = &self.state.rqs[cpu as usize];
                if pulled.is_some() || rq.nr_running > 0 || (v5_13 && rq.ttwu_pending) {
                    break;
                }
            }
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
