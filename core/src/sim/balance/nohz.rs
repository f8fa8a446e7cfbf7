//! Nohz idle balancing, fair.c v6.8: `nohz_balance_enter_idle()` /
//! `nohz_balance_exit_idle()`, `nohz_balancer_kick()`, `kick_ilb()`,
//! `find_new_ilb()`, `nohz_csd_func()` (core.c), `_nohz_idle_balance()` with
//! `update_nohz_stats()`, and a newly idle CPU's own stats pass
//! (`nohz_newidle_balance()`, `nohz_run_idle_balance()`); the flags a kick carries,
//! `nohz_flags(cpu)` (sched.h).
//!
//! A CPU whose tick is stopped (idle.rs stops it when the governor predicts an idle
//! period of at least a tick) takes no tick and does not balance itself, nor update
//! its blocked averages: a busy CPU's tick kicks an idle load balancer, which
//! balances on its behalf (`NOHZ_BALANCE_KICK`) or only decays the idle CPUs'
//! averages (`NOHZ_STATS_KICK`, every `LOAD_AVG_PERIOD` while `nohz.has_blocked`);
//! a CPU going newly idle may run that stats pass itself (`NOHZ_NEWILB_KICK`).

use crate::cpumask::CpuId;
use crate::release::Release;

use super::super::{Mode, MIGRATION_COST_NS};
use super::{CpuIdle, Simulator};

/// `LOAD_AVG_PERIOD` (sched-pelt.h), in ms: how often a stats kick decays the idle
/// CPUs' blocked averages.
const LOAD_AVG_PERIOD_MS: u64 = 32;

/// `nohz_flags(cpu)`, sched.h v6.8 2919-2933: what a kick asks of the CPU it goes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct NohzFlags(u8);

impl NohzFlags {
    /// `NOHZ_BALANCE_KICK`: `rebalance_domains()` for the idle CPUs whose balance is due.
    pub(super) const BALANCE: NohzFlags = NohzFlags(1 << 0);
    /// `NOHZ_STATS_KICK`: decay the idle CPUs' blocked averages (`update_nohz_stats()`).
    pub(super) const STATS: NohzFlags = NohzFlags(1 << 1);
    /// `NOHZ_NEWILB_KICK`: a newly idle CPU runs the stats pass itself before it
    /// enters its idle state (`nohz_run_idle_balance()`), no IPI.
    pub(super) const NEWILB: NohzFlags = NohzFlags(1 << 2);
    /// `NOHZ_NEXT_KICK`: collate `nohz.next_balance` (5.16+).
    pub(super) const NEXT: NohzFlags = NohzFlags(1 << 3);
    /// `NOHZ_KICK_MASK`: the flags that go with an IPI.
    pub(super) const KICK_MASK: NohzFlags = NohzFlags(1 << 0 | 1 << 1 | 1 << 3);
    pub(super) const EMPTY: NohzFlags = NohzFlags(0);

    /// Whether every flag of `other` is set.
    pub(super) fn contains(self, other: NohzFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any flag of `other` is set.
    pub(super) fn intersects(self, other: NohzFlags) -> bool {
        self.0 & other.0 != 0
    }

    pub(super) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `self & ~other`.
    pub(super) fn without(self, other: NohzFlags) -> NohzFlags {
        NohzFlags(self.0 & !other.0)
    }
}

impl std::ops::BitOr for NohzFlags {
    type Output = NohzFlags;
    fn bitor(self, o: NohzFlags) -> NohzFlags {
        NohzFlags(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for NohzFlags {
    fn bitor_assign(&mut self, o: NohzFlags) {
        self.0 |= o.0;
    }
}

impl Simulator {
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
    pub(super) fn nohz_balancer_kick(&mut self, cpu: u32) {
        // "At the first busy tick after returning from idle, we will update the busy
        // stats."
        self.nohz_balance_exit_idle(cpu);
        if !self.active_cpus.iter().any(|&c| self.nohz_idle(c)) {
            return;
        }
        let b = &self.balance;
        let k = KickIn {
            j: self.jiffies(),
            has_blocked: b.nohz_has_blocked,
            next_blocked: b.nohz_next_blocked,
            next_balance: b.nohz_next_balance,
            needs_update: b.nohz_needs_update,
        };
        let flags = nohz_kick_flags(k, || self.nohz_balance_wanted(cpu));
        if !flags.is_empty() {
            self.kick_ilb(cpu, flags);
        }
    }

    /// `nohz_balancer_kick()`'s reasons for a balance kick that the modelled machines
    /// can have: `cpu` runs two tasks, or its LLC has more than one busy CPU.
    pub(super) fn nohz_balance_wanted(&self, cpu: u32) -> bool {
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
    pub(super) fn nohz_newidle_balance(&mut self, cpu: u32) {
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
}

/// What `nohz_balancer_kick()` reads of the nohz state (jiffy `j`).
#[derive(Clone, Copy, Debug)]
pub(super) struct KickIn {
    pub j: u64,
    /// `nohz.has_blocked`, `nohz.next_blocked`, `nohz.next_balance`,
    /// `nohz.needs_update`.
    pub has_blocked: bool,
    pub next_blocked: u64,
    pub next_balance: u64,
    pub needs_update: bool,
}

/// `nohz_balancer_kick()`'s flags, fair.c v6.8 11876-11963, once some CPU is
/// tick-stopped (`nohz.nr_cpus`): a stats kick when `nohz.has_blocked` and
/// `nohz.next_blocked` has passed (whether or not a balance is due), a balance kick
/// (stats too) when `nohz.next_balance` has come and `wanted()` (the CPU's reasons,
/// [`Simulator::nohz_balance_wanted`]), `NOHZ_NEXT_KICK` while `nohz.needs_update`.
pub(super) fn nohz_kick_flags(k: KickIn, wanted: impl FnOnce() -> bool) -> NohzFlags {
    let mut flags = NohzFlags::EMPTY;
    // time_after(now, nohz.next_blocked), before the next_balance exit: the
    // blocked averages are refreshed every LOAD_AVG_PERIOD even when no balance
    // is due.
    if k.has_blocked && k.j > k.next_blocked {
        flags = NohzFlags::STATS;
    }
    if k.j >= k.next_balance && wanted() {
        flags = NohzFlags::STATS | NohzFlags::BALANCE;
    }
    if k.needs_update {
        flags |= NohzFlags::NEXT;
    }
    flags
}
