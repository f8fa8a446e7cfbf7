//! The idle class and cpuidle (kernel/sched/idle.c, drivers/cpuidle, nohz): idle
//! entry with the menu governor (`menu.rs`), idle ticks and kicks, idle exit's
//! accounting.
//!
//! ```text
//!   enter_idle(): menu_select() (menu.rs) with tick_nohz_get_sleep_length(): the
//!                 earliest sleeper's hrtimer on this CPU, else the watchdog's
//!                 first do_idle()'s nohz_run_idle_balance(): NOHZ_NEWILB_KICK's
//!                 stats pass over the idle CPUs (balance/nohz.rs)
//!                 stop: tick_nohz_idle_stop_tick() → nohz_balance_enter_idle():
//!                 blocked load to decay (nohz.has_blocked); the first since a
//!                 busy tick does nr_busy_cpus-- (a line write)
//!   idle tick / sleeper's hrtimer / ilb kick that leaves the CPU idle:
//!                 do_idle()'s loop goes round, menu_update() (a tick:
//!                 tick_nohz_idle_got_tick()), menu_select()
//!   leave_idle_accounting(): menu_update(), avg_idle (newidle, SIS_PROP),
//!                 restart the tick (tick_nohz_idle_exit())
//!   first busy tick: nohz_balancer_kick() → nohz_balance_exit_idle():
//!                 nr_busy_cpus++ (a line write; balance/nohz.rs)
//! ```
//!
//! A machine with one idle state (Kunpeng's WFI) keeps no timers and runs no
//! governor arithmetic: `menu_select()` returns state 0 and stops the tick whatever
//! it computed, and nothing else reads the governor's data.

use super::event::Event;
use super::{menu, Block, IdleExit, Mode, SimTime, Simulator};

impl Simulator {
    /// Leaving idle or force idle: the force-idle time; the stay in the C-state into
    /// the governor (`menu_update()`); the tick restarts (`tick_nohz_idle_exit()`; the CPU counts
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
            // NewidlePass as Waking: not met here, schedule() ends the pass (the CPU
            // Waking again) before it accounts the stay.
            Mode::Idle | Mode::Waking | Mode::NewidlePass => {
                // menu_reflect(): tick_nohz_idle_got_tick().
                let tick_wakeup = std::mem::take(&mut c.got_idle_tick);
                if c.idle_since != SimTime::MAX {
                    if self.cost.params.idle_states.len() > 1 {
                        let d = now.since(c.cstate_since);
                        let states = &self.cost.params.idle_states;
                        let tick = self.cost.params.tick_ns;
                        let how = (tick_wakeup, false);
                        c.menu.update(states, c.cstate as usize, d, how, tick);
                    }
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

    /// The idle governor (`menu_select()` v6.8, `menu.rs`) and idle entry
    /// (`cpuidle_idle_call()`, `tick_nohz_idle_stop_tick()`).
    pub(super) fn enter_idle(&mut self, cpu: u32) {
        let now = self.now;
        let c = &mut self.cpus[cpu as usize];
        c.idle_since = now;
        c.idle_entry = now;
        let (idx, stop) = self.menu_select(cpu);
        self.enter_cstate(cpu, idx, now);
        let c = &mut self.cpus[cpu as usize];
        let polling = self.cost.params.idle_states[idx].polling;
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

    /// `cpuidle_idle_call()`'s `menu_select()` for `cpu`: (state, stop the tick).
    /// `tick_nohz_get_sleep_length()` is asked only when `menu_select()` asks it: a
    /// typical interval over `RESIDENCY_THRESHOLD_NS` (menu.c v6.8 281-286). The
    /// fired timers a look would have dropped stay until the next look, which drops
    /// them (a fired timer never becomes pending again), so every answer is the
    /// same.
    fn menu_select(&mut self, cpu: u32) -> (usize, bool) {
        let states = &self.cost.params.idle_states;
        if states.len() <= 1 {
            return (0, !states[0].polling);
        }
        let tick = self.cost.params.tick_ns;
        let (now, tasks) = (self.now.ns(), &self.tasks[..]);
        let c = &mut self.cpus[cpu as usize];
        let (entry, stopped) = (c.idle_entry.ns(), c.tick_stopped);
        let timers = &mut c.timers;
        c.menu.select(states, tick, stopped, || {
            tick_nohz_get_sleep_length(timers, tasks, now, tick, entry, stopped)
        })
    }

    /// Arms the per-CPU record of `t`'s sleep timer, expiring at `at` on the CPU
    /// it sleeps on, for the governor (nothing on a one-state machine).
    pub(super) fn note_timer(&mut self, t: u32, at: SimTime) {
        if self.cost.params.idle_states.len() <= 1 {
            return;
        }
        let task = &self.tasks[t as usize];
        let (cpu, gen) = (task.last_cpu, task.timer_gen);
        // Fired timers leave from the top, here as well as when the governor looks,
        // so a CPU that stays busy keeps only its pending ones (and the few later
        // than one of them).
        let now = self.now.ns();
        let tasks = &self.tasks;
        let timers = &mut self.cpus[cpu as usize].timers;
        while let Some(&std::cmp::Reverse((exp, u, g))) = timers.peek() {
            let k = &tasks[u as usize];
            if exp >= now && k.timer_gen == g && k.block == Block::Sleep && k.asleep() {
                break;
            }
            timers.pop();
        }
        timers.push(std::cmp::Reverse((at.ns(), t, gen)));
    }

    /// `cpuidle_enter()` of state `idx` on `cpu`: the stay starts; POLL's ends at
    /// its time limit unless something ends it first (`Event::PollLimit`).
    /// The stay starts at `now`, after the previous state's exit when the tick ended
    /// that one.
    fn enter_cstate(&mut self, cpu: u32, idx: usize, now: SimTime) {
        let c = &mut self.cpus[cpu as usize];
        c.cstate = idx as u8;
        c.cstate_since = now;
        c.cstate_gen = c.cstate_gen.wrapping_add(1);
        let states = &self.cost.params.idle_states;
        if states[idx].polling && states.len() > 1 {
            let gen = c.cstate_gen;
            let limit = menu::cpuidle_poll_time(states, self.cost.params.tick_ns);
            self.queue.push(now + limit, Event::PollLimit { cpu, gen });
        }
    }

    /// `poll_idle()` ran out of time (`dev->poll_time_limit`): still idle in the
    /// same POLL stay, `cpu` goes round `do_idle()`'s loop.
    pub(super) fn poll_time_limit(&mut self, cpu: u32, gen: u32) {
        let c = &self.cpus[cpu as usize];
        if c.mode == Mode::Idle && c.cstate_gen == gen {
            self.idle_reselect(cpu, IdleExit::PollLimit);
        }
    }

    /// An idle `cpu` left its C-state with nothing to run (`why`: its tick, a
    /// sleeper's hrtimer that woke its task elsewhere, an ilb kick, POLL's time
    /// limit): `do_idle()`'s loop goes round, `cpuidle_idle_call()` again. The
    /// governor learns the stay (`menu_update()`; a stay during which the tick ran is
    /// `tick_nohz_idle_got_tick()`'s) and chooses again; a stop of the tick now is
    /// `tick_nohz_idle_stop_tick()`'s, with its `nohz_balance_enter_idle()`.
    pub(super) fn idle_reselect(&mut self, cpu: u32, why: IdleExit) {
        let states = &self.cost.params.idle_states;
        if states.len() <= 1 {
            return;
        }
        let tick_ns = self.cost.params.tick_ns;
        let c = &mut self.cpus[cpu as usize];
        debug_assert_eq!(c.mode, Mode::Idle);
        // The stay ended when the CPU was out of the state (cpuidle_enter_state()'s
        // time_end, drivers/cpuidle/cpuidle.c v6.8 246, 279-302): the kick's event comes
        // after the exit latency, the tick's and a sleeper's hrtimer's at the expiry,
        // so their exit is added here (`idle_entry`, set by their handlers). The
        // interrupt's exit is the new idle entry time; POLL's limit is no interrupt
        // and keeps the old one.
        let now = match why {
            IdleExit::Tick | IdleExit::Timer | IdleExit::ReschedIpi => c.idle_entry,
            IdleExit::Interrupt => {
                c.idle_entry = self.now;
                self.now
            }
            IdleExit::PollLimit => self.now,
        };
        let d = now.since(c.cstate_since);
        // menu_reflect(): tick_nohz_idle_got_tick(), and poll_idle()'s
        // dev->poll_time_limit.
        let how = (
            std::mem::take(&mut c.got_idle_tick),
            why == IdleExit::PollLimit,
        );
        c.menu.update(states, c.cstate as usize, d, how, tick_ns);
        let was = c.cstate;
        let (idx, stop) = self.menu_select(cpu);
        let polling = self.cost.params.idle_states[idx].polling;
        if self.rec.is_some() && idx as u8 != was {
            self.record_idle_exit(cpu);
        }
        self.enter_cstate(cpu, idx, now);
        if idx as u8 != was {
            self.update_rq(cpu, |rq| rq.polling = polling);
            if self.rec.is_some() {
                self.record_idle_enter(cpu);
            }
        }
        let c = &self.cpus[cpu as usize];
        if stop && !c.tick_stopped {
            self.cpus[cpu as usize].tick_stopped = true;
            self.nohz_balance_enter_idle(cpu);
        }
    }

    /// The switch to the idle task that idle and force idle share.
    pub(super) fn switch_to_idle_task(&mut self, cpu: u32, mode: Mode, polling: bool) {
        let c = &mut self.cpus[cpu as usize];
        c.mode = mode;
        c.curr = u32::MAX;
        c.switch_gen = c.switch_gen.wrapping_add(1);
        c.resched_ipi = false;
        c.last_task = u32::MAX;
        c.descheduling.0 = u32::MAX;
        self.update_rq(cpu, |rq| {
            rq.curr_is_idle = true;
            rq.polling = polling;
        });
    }
}

/// `tick_nohz_get_sleep_length()` (kernel/time/tick-sched.c v6.8 1245-1276) for
/// an idle CPU: (time to the next timer event were the tick stopped, time to the
/// next clock event, `dev->next_event`). The model has no timer-wheel timers, so
/// `tick_nohz_next_event()` finds none (its "timer in the next period" bail-out
/// reads only the wheel when high-resolution timers are on) and the answer is
/// `hrtimer_next_event_without(&ts->sched_timer)`: the earliest hrtimer of a task
/// sleeping on the CPU (its `Cpu::timers`), else the watchdog's
/// (`menu::WATCHDOG_PERIOD_NS`). The clock event is that hrtimer or, with the tick
/// running (`!tick_stopped`), the next tick on the jiffy grid if sooner. Both are
/// measured from `ts->idle_entrytime` (`entry`, `Cpu::idle_entry`; tick-sched.c
/// 1254), and are 0 if the next event is before it (menu.c 287-290).
fn tick_nohz_get_sleep_length(
    timers: &mut std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32, u32)>>,
    tasks: &[super::Task],
    now: u64,
    tick: u64,
    entry: u64,
    tick_stopped: bool,
) -> (u64, u64) {
    let wd = menu::WATCHDOG_PERIOD_NS;
    let mut next = (now / wd + 1) * wd;
    while let Some(&std::cmp::Reverse((at, t, gen))) = timers.peek() {
        let task = &tasks[t as usize];
        let pending =
            at >= now && task.timer_gen == gen && task.block == Block::Sleep && task.asleep();
        if pending {
            next = next.min(at);
            break;
        }
        timers.pop();
    }
    if next < entry {
        return (0, 0);
    }
    let delta = next - entry;
    if tick_stopped {
        return (delta, delta);
    }
    let next_tick = (now / tick + 1) * tick;
    (delta, delta.min(next_tick.saturating_sub(entry)))
}
