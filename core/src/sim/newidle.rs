//! A `newidle_balance()` pass that pulled nothing takes its run time inside
//! `__schedule()` (fair.c v6.8 12295-12409): the CPU is not idle to wakers until the
//! pass ends, a task queued meanwhile cuts it short, and its end is the switch to idle
//! (or to the task queued meanwhile) with interrupts back on. The pass's run time is
//! its domains' scans and the rq locks it took (balance/locks.rs, session 34), and
//! the retake of its own lock at the end.
//!
//! ```text
//!   schedule() ─ newidle_balance() pulled nothing ─▶ newidle_run_time():
//!                Mode::NewidlePass, Resched at the pass's end
//!   wake-up / balancer's move / stopper onto it ─▶ newidle_interrupted(): Resched
//!                at the end of the domain in progress (or when the wakee is there)
//!   Resched ─▶ schedule() ─▶ newidle_pass_over():
//!                newidle_pass_switch(): "out:", the stopper (then a new pass), the
//!                  switch, busy time
//!                newidle_held_interrupts(): the ilb kick, timers and tick the pass
//!                  held back
//! ```

use crate::wakeup::WakeFlags;

use super::event::Event;
use super::{Block, Mode, NewidleHeld, SimTime, Simulator};

impl NewidleHeld {
    /// Nothing held (always so outside a pass: the invariants check it).
    pub(super) fn is_empty(&self) -> bool {
        let NewidleHeld {
            timers,
            tick,
            kick,
            stopper,
            ipi,
        } = self;
        timers.is_empty() && !(*tick || *kick || *stopper || *ipi)
    }
}

impl Simulator {
    /// `newidle_balance()` pulled nothing after balancing for `cost` ns (fair.c v6.8
    /// 12349-12384, the domains' `load_balance()` between `t0` and `t1`): the CPU is
    /// still in `__schedule()` until then, `rq->curr` the task that blocked (so
    /// `idle_cpu()` is false to wakers; it is true only for a CPU that was already
    /// idle) and `nr_running` 0, so a wake-up meanwhile joins its wake list. The
    /// `Resched` at the end picks again: the wakee if one came, else idle. A task
    /// queued meanwhile cuts the pass short ([`Simulator::newidle_interrupted`]).
    pub(super) fn newidle_run_time(&mut self, cpu: u32, cost: u64) {
        if self.measuring {
            self.metrics.newidle_empty += 1;
        }
        let c = &mut self.cpus[cpu as usize];
        c.mode = Mode::NewidlePass;
        c.newidle_resched_at = self.now + cost;
        let g = c.switch_gen;
        self.queue
            .push(self.now + cost, Event::Resched { cpu, gen: g });
        // The idle task polls only inside do_idle(): a wake list's IPI is sent.
        self.update_rq(cpu, |rq| rq.polling = false);
    }

    /// `cpu`'s newidle pass is over (its `Resched`, at its end or cut short):
    /// `__schedule()` picks again ([`Simulator::newidle_pass_switch`]), then takes
    /// what the pass held back as interrupts come on
    /// ([`Simulator::newidle_held_interrupts`]). Returns whether a stopper ran, after
    /// which `schedule()` picks with a new `newidle_balance()`.
    pub(super) fn newidle_pass_over(&mut self, cpu: u32) -> bool {
        let c = &mut self.cpus[cpu as usize];
        debug_assert_eq!(c.mode, Mode::NewidlePass);
        // Out of the pass, back in __schedule()'s pick.
        c.mode = Mode::Waking;
        c.newidle_curr_stopper = false;
        let held = std::mem::take(&mut c.newidle_held);
        let stopper = held.stopper;
        let to_idle = self.newidle_pass_switch(cpu, stopper, held.ipi);
        self.newidle_held_interrupts(cpu, held, to_idle);
        stopper
    }

    /// The pass's end in `__schedule()`, interrupts still off: `newidle_balance()`'s
    /// "out:" (fair.c v6.8 12389-12410, [`Simulator::newidle_balance_out`]), then the
    /// pick. A stopper woken in the pass runs first (`__pick_next_task()`: the stop
    /// class before the fair one; its own run time is not modelled, as elsewhere)
    /// and, when it is done, `schedule()` picks with a new `newidle_balance()` (the
    /// stopper's switch out: `put_prev_task_balance()`, core.c v6.8 6025-6028, →
    /// `balance_fair()`, fair.c 8245-8251). With nothing on the rq but wakees on the
    /// wake list (not on it until the list's IPI), `pick_next_task_fair()` returns
    /// NULL and `__schedule()` switches to the idle task (`finish_task()` clears
    /// `p->on_cpu`), else to the task queued meanwhile (core.c v6.8 6722, 6758).
    /// Returns whether it switches to the idle task.
    fn newidle_pass_switch(&mut self, cpu: u32, stopper: bool, ipi: bool) -> bool {
        self.newidle_balance_out(cpu, stopper);
        if stopper {
            // __schedule() switches to the stopper (core.c v6.8 6758): the pass's
            // Resched for an end it did not reach is not the next pass's.
            // The switch clears the blocked task's `p->on_cpu`.
            let c = &mut self.cpus[cpu as usize];
            c.switch_gen = c.switch_gen.wrapping_add(1);
            c.descheduling.0 = u32::MAX;
            self.active_load_balance_cpu_stop(cpu);
        }
        let to_idle = self.state.rqs[cpu as usize].nr_running == 0;
        // resched_curr()'s IPI of the pass (idle_resched_needs_ipi()) is received in
        // the task switched to, or in idle.
        if ipi && !to_idle {
            self.cpus[cpu as usize].stolen_ns += self.cost.params.ipi_recv_ns;
        }
        if to_idle {
            // Whatever runs next, the task that blocked too, comes from idle (the
            // wake list's IPI activates it and the idle task schedules): a context
            // switch.
            let c = &mut self.cpus[cpu as usize];
            c.last_task = u32::MAX;
            c.descheduling.0 = u32::MAX;
        }
        if self.measuring {
            // The pass ran on the CPU, not in idle (as a pass that pulls a task does,
            // in the task's debt).
            let ran = self.now.since(self.cpus[cpu as usize].newidle_start);
            self.metrics.busy_ns[cpu as usize] += ran;
            self.metrics.newidle_empty_ns += ran;
        }
        to_idle
    }

    /// `finish_task_switch()` enables interrupts after the pass's switch (core.c v6.8
    /// 5301-5302, 5185): the ilb kick's IPI, the wake list's, the sleep timers and
    /// the tick that came in the pass (`held`, core.c 6656 `local_irq_disable()`) are taken now, in the
    /// task switched to (or the stopper), or in the idle task (`to_idle`).
    fn newidle_held_interrupts(&mut self, cpu: u32, held: NewidleHeld, to_idle: bool) {
        let NewidleHeld {
            timers,
            tick,
            mut kick,
            stopper,
            ipi: _,
        } = held;
        if kick && stopper {
            // The kick's IPI is taken with the stopper current, or on the wake list
            // (`rq->ttwu_pending`): not idle, the flags are dropped.
            self.nohz_csd_func_after_newidle(cpu, false);
            kick = false;
        }
        // The wake list's IPI, if it landed in the pass: the same call-function
        // IPI as the kick, whose callback `__flush_smp_call_function_queue()` runs
        // first, then `sched_ttwu_pending()` (smp.c v6.8 510-559), before the timers.
        let c = &self.cpus[cpu as usize];
        let wakelist = !c.wake_list.is_empty() && c.wakelist_ipi_at <= self.now;
        if timers.is_empty() && !tick && !kick && !wakelist {
            return;
        }
        if !to_idle || stopper {
            // They interrupt the task this CPU switches to: `nohz_csd_func()` finds
            // it busy. After a stopper, `rq->curr` is the stopper, not the idle task
            // (`idle_cpu()` false); the interrupts the kernel takes while it runs come
            // here after the second pass its switch starts (simplified).
            if kick {
                self.queue.push(self.now, Event::NohzKick { cpu });
            }
            if wakelist {
                // Its handler's wakeup_preempt() is against the task switched to.
                self.cpus[cpu as usize].wakelist_ipi_at = self.now;
                self.queue.push(self.now, Event::WakelistIpi { cpu });
            }
            for (task, gen) in timers {
                self.queue.push(self.now, Event::Timer { task, gen });
            }
            if tick {
                self.queue.push(self.now, Event::Tick { cpu });
            }
            return;
        }
        // In the idle task: idle_cpu() holds for the wake-ups and the tick
        // (rq->idle_balance), and the idle task schedules what they queue here.
        self.update_rq(cpu, |rq| rq.curr_is_idle = true);
        if kick {
            self.nohz_csd_func_after_newidle(cpu, true);
        }
        if wakelist {
            self.sched_ttwu_pending(cpu);
        }
        for (task, gen) in timers {
            let t = &self.tasks[task as usize];
            if t.timer_gen == gen && t.block == Block::Sleep && t.asleep() {
                self.wake(task, None, cpu, WakeFlags::NONE);
            }
        }
        if tick {
            self.on_tick(cpu);
        }
    }

    /// A task was queued on `cpu` during its newidle pass's run time (a wakee on its
    /// wake list, or a balancer's move): the pass stops after the domain it is in
    /// ("if (pulled_task || this_rq->nr_running > 0 || this_rq->ttwu_pending)
    /// break;", fair.c v6.8 12378-12380) and the CPU picks again then, or when the
    /// task is there (`ready`: a remote waker's lock hold) if later. A wakee on the
    /// wake list is not there until its IPI: the CPU switches to idle at the domain's
    /// end if the IPI has not landed by then (`schedule()`,
    /// `take_landed_wakelist_ipi()`).
    pub(super) fn newidle_interrupted(&mut self, cpu: u32, ready: SimTime) {
        let c = &self.cpus[cpu as usize];
        let ran = self.now.since(c.newidle_start);
        let Some(&end) = c.newidle_ends.iter().find(|&&e| e >= ran) else {
            return;
        };
        let at = (c.newidle_start + end).max(ready);
        // Only a Resched earlier than the one already on its way ends the pass
        // sooner; the first such one cuts it short.
        if at < c.newidle_resched_at {
            let last = c.newidle_ends.last().copied().unwrap_or(0);
            let first_cut = c.newidle_resched_at == c.newidle_start + last;
            let g = c.switch_gen;
            self.cpus[cpu as usize].newidle_resched_at = at;
            self.queue.push(at, Event::Resched { cpu, gen: g });
            if self.measuring && first_cut {
                self.metrics.newidle_cut += 1;
            }
        }
    }
}
