//! The idle class and cpuidle (kernel/sched/idle.c, drivers/cpuidle, nohz): idle
//! entry with a menu-like governor, idle exit's accounting.
//!
//! ```text
//!   enter_idle(): predicted = mean of the last 8 idle periods
//!                 C-state = deepest with target residency <= predicted
//!                 menu_select()'s stop_tick: one non-polling state only, always;
//!                 else the state is not polling and predicted >= a tick
//!                 first do_idle()'s nohz_run_idle_balance(): NOHZ_NEWILB_KICK's
//!                 stats pass over the idle CPUs (balance/rebalance.rs)
//!                 stop: tick_nohz_idle_stop_tick() → nohz_balance_enter_idle():
//!                 blocked load to decay (nohz.has_blocked); the first since a
//!                 busy tick does nr_busy_cpus-- (a line write)
//!   leave_idle_accounting(): idle history, avg_idle (newidle, SIS_PROP),
//!                 restart the tick (tick_nohz_idle_exit())
//!   first busy tick: nohz_balancer_kick() → nohz_balance_exit_idle():
//!                 nr_busy_cpus++ (a line write; balance/rebalance.rs)
//! ```
//!
//! Simplified: menu's other early return (`next_timer_ns` below state 1's target
//! residency keeps a polling state 0's tick) is left out, the model keeping no
//! per-CPU timer list; it matters only on machines with a polling state 0 (x86),
//! where the next timer is rarely that close.

use super::{Mode, SimTime, Simulator};

impl Simulator {
    /// Leaving idle or force idle: the force-idle time; the idle period, less the
    /// state's exit latency as `menu_update()` measures it, into the governor's history; the tick restarts (`tick_nohz_idle_exit()`; the CPU counts
    /// as busy again only at its first busy tick, `nohz_balance_exit_idle()`).
    /// `rq->avg_idle` is not the governor's: a wake-up updates it
    /// ([`Simulator::update_avg_idle`]).
    pub(super) fn leave_idle_accounting(&mut self, cpu: u32) {
        let now = self.now;
        let measuring = self.measuring;
        if self.rec.is_some() {
            self.record_idle_exit(cpu);
        }
        let c = &mut self.cpus[cpu as usize];
        match c.mode {
            Mode::ForceIdle => {
                if measuring {
                    self.metrics.force_idle_ns += now.since(c.force_idle_since);
                }
                c.force_idle_since = now;
            }
            Mode::Idle | Mode::Waking => {
                if c.idle_since != SimTime::MAX {
                    // menu_update() (drivers/cpuidle/governors/menu.c v6.8 505-514):
                    // the residency measured up to the end of the state's exit
                    // includes the exit latency; "we are interested in when the wakeup
                    // begun", so it comes off, or, for a residency within twice the
                    // exit latency, half of it is kept ("assume the state was never
                    // reached").
                    let d = now.since(c.idle_since);
                    let exit = self.cost.params.idle_states[c.cstate as usize].exit_latency_ns;
                    let d = if d > 2 * exit { d - exit } else { d / 2 };
                    let pos = c.idle_hist_pos as usize;
                    c.idle_hist[pos] = d;
                    c.idle_hist_pos = ((pos + 1) % 8) as u8;
                    c.idle_since = SimTime::MAX;
                }
                c.tick_stopped = false;
            }
            Mode::Running => {}
        }
    }

    /// `ttwu_do_activate()`'s tail (core.c v6.8 3819-3829; v5.14-v6.6 also
    /// "rq->wake_stamp = jiffies; rq->wake_avg_idle = rq->avg_idle / 2;"; up to 6.2 the
    /// block is in `ttwu_do_wakeup()`, which `ttwu_runnable()` also runs, a path the
    /// model does not have: a task woken before it has blocked): a task
    /// woken onto `cpu` while its `idle_stamp` is set feeds the time since into
    /// `update_avg(&rq->avg_idle, delta)`, capped at 2 × `max_idle_balance_cost`, and
    /// clears the stamp. SIS_PROP's inputs follow (`avg_idle` itself for v5.12/v5.13).
    pub(super) fn update_avg_idle(&mut self, cpu: u32) {
        let Some(stamp) = self.cpus[cpu as usize].idle_stamp.take() else {
            return;
        };
        let now = self.now;
        let d = now.since(stamp);
        let cap = 2 * self.balance.max_idle_balance_cost(cpu);
        let c = &mut self.cpus[cpu as usize];
        let avg = c.avg_idle_ns as i64 + (d as i64 - c.avg_idle_ns as i64) / 8;
        c.avg_idle_ns = (avg.max(0) as u64).min(cap);
        let ai = c.avg_idle_ns;
        let jiffies = now.ns() / self.cost.params.tick_ns;
        let sp = &mut self.state.sis_prop;
        if let Some(x) = sp.avg_idle_ns.get_mut(cpu as usize) {
            *x = ai;
        }
        if let Some(x) = sp.wake_avg_idle_ns.get_mut(cpu as usize) {
            *x = ai / 2;
        }
        if let Some(x) = sp.wake_stamp.get_mut(cpu as usize) {
            *x = jiffies;
        }
    }

    /// The idle governor (menu-like, `menu_select()` v6.8) and idle entry
    /// (`cpuidle_idle_call()`, `tick_nohz_idle_stop_tick()`).
    pub(super) fn enter_idle(&mut self, cpu: u32) {
        let now = self.now;
        let tick = self.cost.params.tick_ns;
        let c = &mut self.cpus[cpu as usize];
        c.idle_since = now;
        let predicted = c.idle_hist.iter().sum::<u64>() / 8;
        let states = &self.cost.params.idle_states;
        let mut idx = 0;
        for (i, s) in states.iter().enumerate() {
            if s.target_residency_ns <= predicted {
                idx = i;
            }
        }
        c.cstate = idx as u8;
        let polling = states[idx].polling;
        // menu_select(): "if (unlikely(drv->state_count <= 1 || ...)) { *stop_tick =
        // !(drv->states[0].flags & CPUIDLE_FLAG_POLLING); return 0; }"; otherwise the
        // tick keeps running for a polling state or an idle predicted under a tick
        // (menu.c v6.8 lines 314-325 and the end of menu_select()).
        let stop = if states.len() <= 1 {
            !states[0].polling
        } else {
            !polling && predicted >= tick
        };
        let stop_tick = stop && !c.tick_stopped;
        self.switch_to_idle_task(cpu, Mode::Idle, polling);
        // do_idle(): nohz_run_idle_balance() first, before cpuidle_idle_call()
        // stops the tick.
        self.nohz_run_idle_balance(cpu);
        if self.rec.is_some() {
            self.record_idle_enter(cpu);
        }
        if stop_tick {
            self.cpus[cpu as usize].tick_stopped = true;
            // __tick_nohz_idle_stop_tick(): "if (!was_stopped && ts->tick_stopped)
            // nohz_balance_enter_idle(cpu)".
            self.nohz_balance_enter_idle(cpu);
        }
        self.update_cpu_pelt(cpu);
        // __update_idle_core(): with SMT, a core whose threads are all idle.
        if self.smt {
            let all_idle = self.siblings[cpu as usize]
                .iter()
                .all(|&s| self.state.rqs[s as usize].idle_cpu());
            if all_idle {
                let llc = self.llc_id_of[cpu as usize] as usize;
                self.state.llc_shared[llc].has_idle_cores = true;
            }
        }
        self.publish_core_cookie(cpu);
        self.kick_force_idle_siblings(cpu);
    }

    /// The switch to the idle task that idle and force idle share.
    pub(super) fn switch_to_idle_task(&mut self, cpu: u32, mode: Mode, polling: bool) {
        let c = &mut self.cpus[cpu as usize];
        c.mode = mode;
        c.curr = u32::MAX;
        c.switch_gen = c.switch_gen.wrapping_add(1);
        c.resched_ipi = false;
        c.last_task = u32::MAX;
        self.update_rq(cpu, |rq| {
            rq.curr_is_idle = true;
            rq.polling = polling;
        });
    }
}
