//! The wake list's emptying: `sched_ttwu_pending()` (kernel/sched/core.c), called
//! from the list's IPI (`generic_smp_call_function_single_interrupt()`, smp.c) or from
//! the idle loop's `flush_smp_call_function_queue()` (`do_idle()`, idle.c), never by
//! `__schedule()` itself.
//!
//! ```text
//!   ttwu_queue() ─ wake list + IPI ─▶ Event::WakelistIpi at the landing
//!     running CPU ──────────────▶ wakelist_ipi_lands(): sched_ttwu_pending() now
//!     in a newidle pass ────────▶ held: the pass's end takes it (newidle.rs)
//!     idle (went idle pending) ─▶ wakelist_ipi_lands(): out of the C-state, Resched
//!   schedule() from the idle task ─▶ do_idle()'s flush, then the pick
//!   schedule() of a task, empty pick ─▶ newidle_balance() returns at once (v5.13+)
//!     ─▶ take_landed_wakelist_ipi(): the IPI is in? activate, pick again; else idle
//! ```

use super::event::Event;
use super::{Loc, Mode, SimTime, Simulator};

impl Simulator {
    /// The wake list's IPI lands on `cpu` at `t`:
    /// `generic_smp_call_function_single_interrupt()` →
    /// `__flush_smp_call_function_queue()` → `sched_ttwu_pending()` (smp.c v6.8
    /// 426-429, 445-560). Only the latest IPI's landing counts: one sent after the
    /// list was emptied (which cleared `rq->ttwu_pending`) keeps its own. A running
    /// CPU takes it at once. A CPU in its newidle pass has interrupts off
    /// (`__schedule()`, core.c v6.8 6656): it takes the IPI as the pass ends
    /// (`schedule()`, [`Simulator::take_landed_wakelist_ipi`], or
    /// `newidle_pass_over()` for a switch to a task). A CPU already leaving idle
    /// (`Mode::Waking`) flushes the list in `do_idle()` before it schedules. An idle
    /// CPU (its list queued while it ran, then it went idle: `newidle_balance()`
    /// returned at once on `rq->ttwu_pending`) takes the IPI once out of its C-state:
    /// the handler activates the wakees and `wakeup_preempt()` → `resched_curr()` of
    /// the idle task, so `do_idle()` leaves its loop (idle.c v6.8 258) and
    /// `schedule_idle()` picks (340); here the activation is that `schedule()`'s
    /// flush, at the same instant. (A stale IPI, its list emptied by the idle loop
    /// and a new list begun with its own IPI, is not modelled: the kernel's would
    /// empty the new list early, or wake an idle CPU for nothing.)
    pub(super) fn wakelist_ipi_lands(&mut self, cpu: u32, t: SimTime) {
        let c = &self.cpus[cpu as usize];
        if c.wakelist_ipi_at != t {
            return;
        }
        match c.mode {
            Mode::Running => self.sched_ttwu_pending(cpu),
            Mode::NewidlePass | Mode::Waking => {}
            Mode::Idle | Mode::ForceIdle => {
                if c.wake_list.is_empty() {
                    return;
                }
                let exit = if c.mode == Mode::Idle {
                    self.cost.params.idle_states[c.cstate as usize].exit_latency_ns
                } else {
                    0
                };
                let c = &mut self.cpus[cpu as usize];
                if c.mode == Mode::Idle {
                    c.mode = Mode::Waking;
                }
                let g = c.switch_gen;
                self.queue
                    .push(self.now + exit, Event::Resched { cpu, gen: g });
            }
        }
    }

    /// `__schedule()` on `cpu` found nothing to run and switches to the idle task:
    /// `finish_task_switch()` turns interrupts on (core.c v6.8 5185, 5301-5302) and a
    /// wake list IPI that has landed meanwhile (in a newidle pass, or at this very
    /// instant) is taken: `sched_ttwu_pending()` activates the wakees,
    /// `resched_curr()` of the idle task, and `schedule_idle()` (idle.c v6.8 340)
    /// picks again. Returns whether it did (the caller picks again); else the CPU
    /// goes idle and the IPI wakes it when it lands
    /// ([`Simulator::wakelist_ipi_lands`]).
    pub(super) fn take_landed_wakelist_ipi(&mut self, cpu: u32) -> bool {
        let c = &mut self.cpus[cpu as usize];
        if c.wake_list.is_empty() || c.wakelist_ipi_at > self.now {
            return false;
        }
        // The switch to the idle task: what runs next comes from idle, and the task
        // that blocked is off the CPU (`finish_task()` clears `p->on_cpu`).
        c.last_task = u32::MAX;
        c.descheduling.0 = u32::MAX;
        self.update_rq(cpu, |rq| rq.curr_is_idle = true);
        self.sched_ttwu_pending(cpu);
        true
    }

    /// `sched_ttwu_pending()` (core.c v6.8 3885-3918) on `cpu`, from the wake list's
    /// IPI ([`Simulator::wakelist_ipi_lands`], [`Simulator::take_landed_wakelist_ipi`])
    /// or, for a CPU leaving idle, the idle loop's `flush_smp_call_function_queue()`
    /// (do_idle(), idle.c v6.8 339; v5.12 `flush_smp_call_function_from_idle()`,
    /// idle.c 327) before it schedules; never from `__schedule()` itself, which
    /// picks from the rq alone. (The other callers, `migration_cpu_stop()`'s flush,
    /// core.c v6.8 2612, and CPU hot-unplug's `smpcfd_dying_cpu()`, smp.c 96, are
    /// not modelled: the model's affinity is fixed and its CPUs stay online.) Each
    /// wakee on the list, in the
    /// order it was queued (`flush_smp_call_function_queue()` reverses the llist), is
    /// activated by `ttwu_do_activate()` (core.c v6.8 3782-3831): `activate_task()` →
    /// `enqueue_task_fair()` places its vruntime and attaches its load only now, then
    /// `wakeup_preempt()` (on a running CPU, `resched_curr()` of itself: the flag is set
    /// and `__schedule()` runs on the way out of the interrupt; nothing while the flag
    /// is already set, fair.c v6.8 8301) and the `rq->idle_stamp` update of
    /// `avg_idle`. Then `rq->ttwu_pending` is cleared.
    #[inline]
    pub(super) fn sched_ttwu_pending(&mut self, cpu: u32) {
        let mut list = std::mem::take(&mut self.cpus[cpu as usize].wake_list);
        for &t in &list {
            self.tasks[t as usize].loc = Loc::Blocked; // transient, enqueue() places it
            self.enqueue(t, cpu);
            if self.rec.is_some() {
                // ttwu_do_activate() → ttwu_do_wakeup(): trace_sched_wakeup() (core.c
                // v6.8 3776-3780, 3812): the wakee arrives on its rq now.
                self.record_wakelist_arrival(t, cpu);
            }
            let c = &self.cpus[cpu as usize];
            if c.mode == Mode::Running
                && c.curr != u32::MAX
                && !c.need_resched
                && !c.resched_ipi
                && self.should_preempt(cpu, t)
            {
                let c = &mut self.cpus[cpu as usize];
                c.resched_ipi = true;
                let g = c.switch_gen;
                self.queue.push(self.now, Event::Resched { cpu, gen: g });
            }
            self.update_avg_idle(cpu);
        }
        list.clear();
        self.cpus[cpu as usize].wake_list = list; // keeps its allocation
        if self.state.rqs[cpu as usize].ttwu_pending {
            self.update_rq(cpu, |rq| rq.ttwu_pending = false);
        }
    }
}
