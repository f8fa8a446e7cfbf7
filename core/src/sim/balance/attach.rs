//! Moving one queued task, fair.c v6.8: `detach_task()` + `attach_task()`, and
//! `attach_task()`'s `wakeup_preempt()` with `resched_curr()` (core.c v6.8). Every
//! move of the balancer (`detach_tasks()`, the stopper's `detach_one_task()`) and
//! core scheduling's steal ends here.

use crate::cpumask::CpuId;

use super::super::record::{MigrateReason, RecordKind};
use super::super::{Loc, Mode};
use super::Simulator;

impl Simulator {
    /// `detach_task()` + `attach_task()`: moves queued task `t` from `src` to `dst`,
    /// the balance running on `runs_on` (`smp_processor_id()`: `dst` itself, the idle
    /// load balancer on `dst`'s behalf, or `src`'s stopper pushing). The task owes the
    /// cache-distance refill of its data, left on `src`, on its next run
    /// (`wake_data_ns`, the cost a wake-up across the same distance pays).
    pub(in crate::sim) fn migrate_queued(
        &mut self,
        t: u32,
        src: u32,
        dst: u32,
        runs_on: u32,
        reason: MigrateReason,
    ) {
        if self.rec.is_some() {
            self.record(RecordKind::Migrate {
                task: t,
                from: src as u16,
                to: dst as u16,
                reason,
            });
        }
        // detach_task() → dequeue_entity(): update_curr() (fair.c v6.8 5361) before
        // update_entity_lag() (5379).
        self.update_curr(src);
        self.update_cpu_pelt(src);
        let avg = self.avg_vruntime(src);
        let lim = self.lag_limit();
        let q = &mut self.cpus[src as usize].queue;
        let i = q
            .iter()
            .position(|&x| x == t)
            .expect("migrating a queued task");
        q.swap_remove(i);
        // A delayed task (v6.12) moves delayed: detach_task()'s dequeue is a full one
        // (no DEQUEUE_SLEEP) that keeps `sched_delayed`, and its util_est is neither
        // taken off nor added (dequeue_task_fair() / enqueue_task_fair(), fair.c
        // v6.12.19 7259, 7032); its pick on `dst` finishes the dequeue (delayed.rs).
        let delayed = matches!(self.tasks[t as usize].loc, Loc::Delayed(_));
        // util_est_dequeue(); the detach publishes the CPU's averages.
        if !delayed {
            self.util_est_dequeue(t, src);
        } else {
            // dequeue_entities() / enqueue_task_fair(): h_nr_delayed moves with
            // h_nr_running (fair.c v6.12.19 7169, 7187; 7049, 7073).
            self.cpus[src as usize].nr_delayed -= 1;
        }
        self.detach_entity_load_avg(t, src);
        let v = self.tasks[t as usize].vruntime;
        self.cpus[src as usize].v_sum -= v;
        self.update_rq(src, |rq| rq.nr_running -= 1);
        let refill = self.cost.wake_data_ns(CpuId(src), CpuId(dst));
        let task = &mut self.tasks[t as usize];
        task.vlag = (avg - task.vruntime).clamp(-lim, lim);
        // PLACE_REL_DEADLINE (v6.12): dequeue_entity() without DEQUEUE_SLEEP keeps
        // the deadline relative to the vruntime (fair.c v6.12.19 5581-5584), which
        // the destination's place_entity() restores (5368-5372).
        let rel = self.rel_deadline.then_some(task.deadline - task.vruntime);
        task.loc = Loc::Blocked; // transient, enqueue() relocates it
        task.debt_ns += refill;
        self.enqueue_with(t, dst, !delayed, rel);
        if delayed {
            // set_task_cpu(): its CPU is `dst` now, where its dequeue finishes and
            // from where its next wake-up starts (`prev_cpu`).
            let task = &mut self.tasks[t as usize];
            task.loc = Loc::Delayed(dst);
            task.last_cpu = dst;
            self.cpus[dst as usize].nr_delayed += 1;
        }
        if self.measuring {
            self.metrics.migrations_balance += 1;
        }
        self.attach_wakeup_preempt(t, runs_on, dst);
    }

    /// `attach_task()`'s `wakeup_preempt(rq, p, 0)` with `resched_curr()`, core.c
    /// v6.8, run on `runs_on` for task `t` just enqueued on `dst`:
    /// - on `dst` itself (periodic balance from its tick, newidle, core scheduling's
    ///   steal): a running task is preempted if `t` should run first, at the return
    ///   from the interrupt (`set_tsk_need_resched()`); an idle CPU, awake to run the
    ///   balance, schedules when that interrupt returns (its tick's: after its
    ///   C-state's exit latency); one already in `schedule()` picks for itself.
    /// - on another CPU (the idle load balancer on a tick-stopped CPU's behalf, the
    ///   stopper pushing): a running task is preempted only if `t` should run first,
    ///   by `smp_send_reschedule()`; an idle CPU is sent an IPI unless it polls
    ///   (`set_nr_and_not_polling()`) and leaves its C-state, as for a wake-up
    ///   (`kick_target()`). A CPU whose need_resched is set already does nothing.
    fn attach_wakeup_preempt(&mut self, t: u32, runs_on: u32, dst: u32) {
        let mode = self.cpus[dst as usize].mode;
        if runs_on != dst {
            let q = super::super::ttwu::Queued {
                need_ipi: self.idle_resched_needs_ipi(dst, mode),
                ..Default::default()
            };
            self.kick_target(t, None, runs_on, dst, mode, q);
            return;
        }
        let resched = match mode {
            Mode::Running => self.should_preempt(dst, t),
            Mode::Idle | Mode::ForceIdle => true,
            Mode::Waking => false,
            Mode::NewidlePass => {
                self.newidle_interrupted(dst, self.now);
                false
            }
        };
        if resched {
            let c = &mut self.cpus[dst as usize];
            let mut at = self.now;
            if c.mode == Mode::Idle {
                c.mode = Mode::Waking;
                // resched_curr() of the idle task sets need_resched; do_idle() sees it
                // when the interrupt that balanced returns (idle.c v6.8 258,
                // cpuidle.c 279-302): for the tick, which the model handles at its
                // expiry, once the CPU is out of its C-state, at the handler's exit
                // (`idle_entry`, which `on_tick` set). An ilb kick's event already
                // comes after the exit, and its `idle_entry` is earlier.
                at = at.max(c.idle_entry);
            }
            let g = c.switch_gen;
            self.queue
                .push(at, super::super::Event::Resched { cpu: dst, gen: g });
        }
    }
}
