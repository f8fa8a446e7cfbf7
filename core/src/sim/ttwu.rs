//! The wake-up (`try_to_wake_up()`, kernel/sched/core.c), its effects and its costs.
//!
//! ```text
//!   wake(p, waker, cpu)                          try_to_wake_up()
//!     sync_wake_view()       the wake-up path's view of p and the waker, at now
//!     decide_wake()          wakeup::wake_up(): select_task_rq() and the queue path
//!     apply_wake_effects()   what the kernel wrote while deciding
//!     select_cost_ns()       remote rq reads and the sd_llc_shared line (cost/)
//!     update_sis_prop_scan() SIS_PROP's scan cost averages, from that cost
//!     ttwu_queue()           wakelist (IPI or polling) or the remote rq lock (cost/)
//!     charge_waker()         the waker pays: debt of its task, or interrupt time
//!     record_wake_metrics()  placement, probes, migrations
//!     ttwu_do_activate()     the wakee's cache-distance debt, enqueue
//!     kick_target()          wakeup_preempt() on a running target, wake an idle one
//! ```

use crate::cost::Distance;
use crate::cpumask::CpuId;
use crate::release::Release;
use crate::wakeup::{
    self, Costs, Decision, Effects, NoTrace, PathOnly, QueuePath, TaskState, Tracer, WakeFlags,
    Waker,
};

use super::event::Event;
use super::{Block, Loc, Mode, SimTime, Simulator};

/// What queueing the wakee (`ttwu_queue()`) cost and left to do.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Queued {
    /// Time the waker spends: IPI send, remote lock wait and hold.
    pub(super) waker_ns: u64,
    /// The target needs an IPI to notice (it receives it).
    pub(super) need_ipi: bool,
    /// Until the wakee is on the target's queue: the lock hold on either side.
    pub(super) delay_ns: u64,
    /// Queued on the target's wake list: its own IPI handler (`sched_ttwu_pending()`)
    /// activates the wakee and reschedules locally; the waker sends no
    /// `smp_send_reschedule()`.
    pub(super) wakelist: bool,
    /// The waker's wait for the target's rq lock, before its hold starts.
    pub(super) lock_wait_ns: u64,
}

impl Simulator {
    /// `try_to_wake_up(p, state, wake_flags)` of blocked task `p` by `waker` (a task
    /// running on `cpu`) or, with `waker == None`, from interrupt context on `cpu` (a
    /// timer). `wake_flags` is the caller's: [`WakeFlags::SYNC`] from the pipe and
    /// socket wake-ups (`wake_up_interruptible_sync_poll()`), none from
    /// `wake_up_process()` (`hrtimer_wakeup()`, `wake_up_q()`); like the kernel's
    /// `select_task_rq(p, p->wake_cpu, wake_flags | WF_TTWU)`, this adds `WF_TTWU`.
    pub(super) fn wake(&mut self, p: u32, waker: Option<u32>, cpu: u32, wake_flags: WakeFlags) {
        let flags = wake_flags.union(WakeFlags::TTWU);
        #[cfg(test)]
        if let Some(log) = self.wake_log.as_mut() {
            log.push((p, waker, wake_flags));
        }
        if matches!(self.tasks[p as usize].loc, Loc::Delayed(_)) {
            // Still queued (v6.12's delayed dequeue): ttwu_runnable() (core.c
            // v6.12.19 4197, 3737-3761), before any CPU selection.
            self.wake_delayed(p, waker, cpu);
            return;
        }
        let (prev, background) = self.sync_wake_view(p, waker, cpu);
        // Recording, the decision also says which path chose the CPU (`PathOnly`: the
        // same decision, no steps).
        let d = if self.rec.is_some() {
            self.decide_wake(p, waker, cpu, flags, &mut PathOnly)
        } else {
            self.decide_wake(p, waker, cpu, flags, &mut NoTrace)
        };
        let seq = if self.rec.is_some() {
            self.record_wake_begin(p, waker, cpu, flags, &d)
        } else {
            0
        };
        self.apply_wake_effects(p, waker, cpu, &d.effects);
        let target = d.cpu.0;
        // try_to_wake_up()'s on_cpu branch: its condition is the wake list's, so a
        // wake list on prev means the branch was taken.
        let on_cpu = self.views[p as usize]
            .task
            .as_ref()
            .is_some_and(|v| v.on_cpu);
        let shortcut = target == prev && matches!(d.queue, QueuePath::Wakelist { .. });
        let spin_ns = if on_cpu && !shortcut {
            self.on_cpu_spin_ns(prev, cpu)
        } else {
            0
        };
        // The path counters count what `wakeups` counts: the workload's wake-ups, not
        // the background noise's (`record_wake_metrics()`).
        let counted = self.measuring && !background;
        if on_cpu && counted {
            if shortcut {
                self.metrics.wake_on_cpu += 1;
            } else {
                self.metrics.wake_on_cpu_spin += 1;
                self.metrics.wake_on_cpu_spin_ns += spin_ns;
            }
        }
        // What the target was doing before this wake-up changes it.
        let target_mode = self.cpus[target as usize].mode;
        let select_ns = self.select_cost_ns(cpu, target, &d.costs);
        if let Some((avg, stamp)) = d.effects.sis_prop_aged {
            let sp = &mut self.state.sis_prop;
            sp.wake_avg_idle_ns[cpu as usize] = avg;
            sp.wake_stamp[cpu as usize] = stamp;
        }
        if d.effects.sis_prop_scan {
            self.update_sis_prop_scan(cpu, select_ns);
        }
        let mut q = self.ttwu_queue(cpu, target, d.queue, target_mode, counted);
        q.delay_ns += spin_ns;
        self.charge_waker(waker, cpu, spin_ns + select_ns + q.waker_ns);
        // The wakee's data was last written by the waker, or by itself on prev.
        let src = if waker.is_some() { cpu } else { prev };
        // The refill prices the lines the waker left, a pipe's lock among them
        // (`pipe_mutex.rs`); a timer's wake-up, the task's own data only. (Read only
        // by a pipe mutex's acquisition: a run without pipes has none.)
        if self.any_pipe {
            self.mutex_wait[p as usize].woken_from = if waker.is_some() {
                cpu
            } else {
                super::pipe_mutex::NONE
            };
        }
        let dist = self.cost.distance(CpuId(src), CpuId(target));
        if counted {
            self.record_wake_metrics(prev, target, dist, d.costs.cpus_probed);
        }
        if seq != 0 {
            self.record_wake(seq, p, waker, cpu, prev, &d, dist);
        }
        if self.attached[p as usize] != target {
            // set_task_cpu() → migrate_task_rq_fair(): the averages leave prev.
            self.remove_entity_load_avg(p);
        }
        self.ttwu_do_activate_tg(p, waker, cpu, src, target, dist, &mut q);
        self.kick_target(p, waker, cpu, target, target_mode, q);
    }

    /// `smp_cond_load_acquire(&p->on_cpu, !VAL)` (core.c v6.8 4360): `p` is still
    /// `on_cpu` on `prev` and the wake list refused it (`ttwu_queue_cond()` as the
    /// release has it: in v6.8, `prev` in the waker's LLC with a task to run), so the
    /// waker on `cpu` spins until `prev`'s switch away from `p` ends (`finish_task()`,
    /// 5041-5055, `Cpu::descheduling`). Simplified:
    /// the selection that follows reads the state as it is at the spin's start. A
    /// newidle pass's end is not known in advance (its wake list is never refused
    /// but for an inactive or disallowed CPU): no spin is charged there, nor to an
    /// interrupt on `prev` itself, which the kernel takes after the switch (interrupts
    /// are off in `__schedule()`).
    fn on_cpu_spin_ns(&self, prev: u32, cpu: u32) -> u64 {
        let until = self.cpus[prev as usize].descheduling.1;
        if cpu == prev || until == SimTime::MAX {
            0
        } else {
            until.since(self.now)
        }
    }

    /// Brings the wake-up path's view of `p` (load, util, prev CPU) and of the waker
    /// (its CPU, context, load) up to now, as the kernel reads them in
    /// `select_task_rq_fair()`, and `jiffies`. `p`, blocked, is no longer (its
    /// `Block` cleared). Returns `p`'s last CPU and whether it is background.
    fn sync_wake_view(&mut self, p: u32, waker: Option<u32>, cpu: u32) -> (u32, bool) {
        let now = self.now;
        let pi = p as usize;
        let t = &mut self.tasks[pi];
        debug_assert_eq!(t.loc, Loc::Blocked);
        t.block = Block::None;
        let (prev, background) = (t.last_cpu, t.background);
        {
            let (load, util) = (t.load.peek(now.ns(), 0), t.util.peek(now.ns(), 0));
            // `p->on_cpu`: its CPU is still in the schedule() that took it off
            // (`Cpu::descheduling`).
            let (d, until) = self.cpus[prev as usize].descheduling;
            let on_cpu = d == p && now < until;
            let v = self.views[pi].task.as_mut().expect("views hold tasks");
            v.load = load;
            v.util = util;
            v.prev_cpu = CpuId(prev);
            v.on_cpu = on_cpu;
        }
        // From interrupt context the interrupted task is `current`, outside task
        // context; its next wake-up as a task sets `in_task` back.
        let current = match waker {
            Some(k) => Some((k, true)),
            None => self.irq_current(cpu).map(|k| (k, false)),
        };
        if let Some((k, waker_task)) = current {
            let ki = k as usize;
            let kt = &self.tasks[ki];
            let in_task = waker_task && kt.wakes_in_task;
            let load = kt.load.peek(now.ns(), 1024);
            let w = &mut self.views[ki];
            w.cpu = CpuId(cpu);
            w.in_task = in_task;
            w.task.as_mut().expect("views hold tasks").load = load;
        }
        self.state.jiffies = now.ns() / self.cost.params.tick_ns;
        (prev, background)
    }

    /// `select_task_rq()` and the queue path, decided by [`wakeup::wake_up`] on the
    /// views, with the wake-up's `flags` (`WF_TTWU` and the caller's).
    #[inline(always)]
    fn decide_wake<T: Tracer>(
        &self,
        p: u32,
        waker: Option<u32>,
        cpu: u32,
        flags: WakeFlags,
        t: &mut T,
    ) -> Decision {
        let (pv, wv) = self.wake_inputs(p, waker, cpu);
        wakeup::wake_up(&self.env, &self.state, pv, wv, flags, t)
    }

    /// `current` of a wake-up from interrupt context on `cpu` (a timer's
    /// `hrtimer_wakeup()`): the task the interrupt stopped, or `None` for the CPU's
    /// idle task. The wake-up path reads and writes `current` in any context:
    /// `record_wakee()` and `wake_wide()` (fair.c v6.8 6951-6996, called from
    /// `select_task_rq_fair()` 8154), and before 5.15 "if (want_affine)
    /// current->recent_used_cpu = cpu;" (89aafd67f28c removed it).
    fn irq_current(&self, cpu: u32) -> Option<u32> {
        let c = &self.cpus[cpu as usize];
        (c.mode == Mode::Running).then_some(c.curr)
    }

    /// The view of the wake-up's `current`: the waking task, or for a wake-up from
    /// interrupt context on `cpu` the task it interrupted or the idle task.
    fn current_view(&self, waker: Option<u32>, cpu: u32) -> &Waker {
        match waker.or_else(|| self.irq_current(cpu)) {
            Some(k) => &self.views[k as usize],
            None => &self.idle_views[cpu as usize],
        }
    }

    /// The wake-up path's inputs besides the state: the wakee's view and
    /// `current`'s ([`Simulator::current_view`]).
    pub(super) fn wake_inputs(&self, p: u32, waker: Option<u32>, cpu: u32) -> (&TaskState, &Waker) {
        let pv = self.views[p as usize]
            .task
            .as_ref()
            .expect("views hold tasks");
        (pv, self.current_view(waker, cpu))
    }

    /// What the kernel wrote while deciding: `p->recent_used_cpu`, the waker's
    /// `recent_used_cpu` (before 5.15) and `record_wakee()` state,
    /// `set_idle_cores(target, false)`.
    fn apply_wake_effects(&mut self, p: u32, waker: Option<u32>, cpu: u32, effects: &Effects) {
        if let Some(r) = effects.recent_used_cpu {
            self.views[p as usize]
                .task
                .as_mut()
                .expect("views hold tasks")
                .recent_used_cpu = r;
        }
        if effects.waker_recent_used_cpu.is_some() || effects.waker_wakee.is_some() {
            let cur = match waker.or_else(|| self.irq_current(cpu)) {
                Some(k) => &mut self.views[k as usize],
                None => &mut self.idle_views[cpu as usize],
            };
            let w = cur.task.as_mut().expect("views hold tasks");
            if let Some(r) = effects.waker_recent_used_cpu {
                w.recent_used_cpu = r;
            }
            if let Some((flips, ts, last)) = effects.waker_wakee {
                w.wakee_flips = flips;
                w.wakee_flip_decay_ts = ts;
                w.last_wakee = Some(last);
            }
        }
        if let Some(llc) = effects.clear_idle_cores {
            if let Some(ls) = self.state.llc_shared.get_mut(llc.idx()) {
                ls.has_idle_cores = false;
            }
        }
    }

    /// The time `select_task_rq()` took on `cpu`: the other runqueues' lines it read,
    /// and the `sd_llc_shared` line of `target`'s LLC if it read that.
    fn select_cost_ns(&mut self, cpu: u32, target: u32, costs: &Costs) -> u64 {
        let mut ns = costs.remote_rq_reads as u64 * self.cost.probe_ns(CpuId(cpu));
        if costs.llc_shared_reads > 0 {
            ns += self.llc_line_read(cpu, target);
        }
        ns
    }

    /// SIS_PROP's accounting at the end of `select_idle_cpu()`: the scan's cost feeds
    /// `this_sd->avg_scan_cost` (`update_avg()`, 1/8) and, from v5.14, comes off
    /// `this_rq->wake_avg_idle` ("this_rq->wake_avg_idle -= min(this_rq->wake_avg_idle,
    /// time);", fair.c v5.14-v6.6). Simplified: the kernel's `time` is the
    /// `cpu_clock()` difference over the scan; here it is the modelled cost of the
    /// whole selection (the remote rq lines read and the `sd_llc_shared` line).
    pub(super) fn update_sis_prop_scan(&mut self, cpu: u32, scan_ns: u64) {
        let ages = self.env.patches.release >= Release::new(5, 14);
        let sp = &mut self.state.sis_prop;
        if ages {
            if let Some(x) = sp.wake_avg_idle_ns.get_mut(cpu as usize) {
                *x -= scan_ns.min(*x);
            }
        }
        // update_avg(&this_sd->avg_scan_cost, time): the waker CPU's own sd_llc.
        if let Some(x) = sp.avg_scan_cost_ns.get_mut(cpu as usize) {
            // update_avg(): 1/8 EWMA.
            let a = *x as i64 + (scan_ns as i64 - *x as i64) / 8;
            *x = a.max(0) as u64;
        }
    }

    /// `ttwu_queue()`: the wakee goes on the target's wake list (`ttwu_queue_wakelist()`,
    /// an IPI unless the target polls; the target enqueues under its own lock once the
    /// IPI is in) or the waker takes the target's rq lock and enqueues itself, with an
    /// IPI if that leaves an idle, non-polling CPU to wake (`resched_curr()`).
    /// `counted`: the wake-up is one `Metrics::wakeups` counts (measuring, not
    /// background noise), so its path is counted too.
    pub(super) fn ttwu_queue(
        &mut self,
        cpu: u32,
        target: u32,
        path: QueuePath,
        target_mode: Mode,
        counted: bool,
    ) -> Queued {
        let p = &self.cost.params;
        let (ipi_send, ipi_recv, hold) = (p.ipi_send_ns, p.ipi_recv_ns, p.rq_lock_hold_ns);
        let mut q = Queued::default();
        match path {
            QueuePath::Local => {
                if counted {
                    self.metrics.wake_local += 1;
                }
            }
            QueuePath::Wakelist { ipi } => {
                self.update_rq(target, |rq| rq.ttwu_pending = true);
                q.wakelist = true;
                if ipi {
                    q.waker_ns += ipi_send;
                    q.need_ipi = true;
                    // A busy target runs sched_ttwu_pending() from the IPI, which
                    // clears rq->ttwu_pending (core.c v6.8 3890-3918): until then a
                    // further wake-up joins the list without an IPI of its own. (An
                    // idle one clears it when it schedules, kick_target()'s
                    // Resched.) A target in its newidle pass takes the IPI at the
                    // pass's end, or in idle if the pass ends first (on 5.12, whose
                    // pass the wake list does not cut short).
                    let at = self.now + self.cost.params.ipi_ns();
                    self.cpus[target as usize].wakelist_ipi_at = at;
                    if matches!(target_mode, Mode::Running | Mode::NewidlePass) {
                        self.queue.push(at, Event::WakelistIpi { cpu: target });
                    }
                    if counted {
                        self.metrics.wake_ipi += 1;
                    }
                } else if counted {
                    self.metrics.wake_polling += 1;
                }
                // sched_ttwu_pending(): the target enqueues under its own lock.
                let at = self.now.ns().saturating_add(ipi_recv);
                let (_, held) =
                    self.cpus[target as usize]
                        .lock
                        .acquire(&self.cost, CpuId(target), at, hold);
                q.delay_ns += held;
            }
            QueuePath::RemoteLock => {
                let (wait, hold) = self.take_remote_lock(cpu, target);
                q.waker_ns += wait + hold;
                q.delay_ns += wait + hold;
                q.lock_wait_ns = wait;
                if counted {
                    self.metrics.wake_remote_lock += 1;
                    self.metrics.lock_wait.record(wait);
                }
                if self.idle_resched_needs_ipi(target, target_mode) {
                    q.waker_ns += ipi_send;
                    q.need_ipi = true;
                }
            }
        }
        q
    }

    /// Whether `resched_curr()` of remote CPU `cpu`, in `mode` with no task running,
    /// sends `smp_send_reschedule()` (core.c v6.8 1045-1067): an idle or force-idled
    /// CPU does unless it polls (`set_nr_and_not_polling()`); one already leaving
    /// idle has its idle task's need-resched flag set, and `resched_curr()` returns
    /// early (1052). A CPU inside its newidle pass has `rq->curr` the task that
    /// blocked, which does not poll: the first `resched_curr()` sets its flag and
    /// sends the IPI (`check_preempt_wakeup_fair()` preempts: that task is off the
    /// tree, fair.c v6.8 8268-8343, 892), later ones return early, as does one for a task
    /// that blocked with the flag set (`Cpu::resched_ipi`, `need_resched`). The IPI
    /// changes no pick, the pass ends in `__schedule()`'s anyway, which clears the
    /// flag (core.c 6723) so that `scheduler_ipi()` folds nothing; it costs the
    /// sender its send and the task switched to its receive. A pass of the idle task
    /// (`curr_is_idle`), which left `do_idle()`'s loop on its own `TIF_NEED_RESCHED`
    /// (idle.c v6.8 258-340), gets none: `resched_curr()` returns early. Nor does
    /// one that follows a stopper's run (`Cpu::newidle_curr_stopper`): a fair wakee
    /// does not preempt the stop class (core.c 2247-2252).
    pub(super) fn idle_resched_needs_ipi(&self, cpu: u32, mode: Mode) -> bool {
        let c = &self.cpus[cpu as usize];
        let rq = &self.state.rqs[cpu as usize];
        match mode {
            Mode::Idle | Mode::ForceIdle => !rq.polling,
            Mode::Waking => false,
            Mode::NewidlePass => {
                !rq.curr_is_idle
                    && !c.newidle_curr_stopper
                    && !c.newidle_held.ipi
                    && !c.resched_ipi
                    && !c.need_resched
            }
            Mode::Running => false,
        }
    }

    /// The waker's side of the path is its time: a task pays it as debt before its
    /// next block or exit; interrupt context (a timer) steals it from the CPU's
    /// running task.
    pub(super) fn charge_waker(&mut self, waker: Option<u32>, cpu: u32, ns: u64) {
        match waker {
            Some(k) => self.tasks[k as usize].debt_ns += ns,
            None => {
                if self.cpus[cpu as usize].mode == Mode::Running {
                    self.cpus[cpu as usize].stolen_ns += ns;
                }
            }
        }
    }

    /// Where the wake-up placed the wakee, how far from its data, how many CPUs it
    /// probed, whether it moved.
    fn record_wake_metrics(&mut self, prev: u32, target: u32, dist: Distance, probed: u32) {
        if self.measuring {
            let m = &mut self.metrics;
            m.wakeups += 1;
            m.placement[dist as usize] += 1;
            m.cpus_probed.record(probed as u64);
            if target != prev {
                m.migrations_wakeup += 1;
            }
        }
    }

    /// `ttwu_do_activate()`: the wakee owes the cache-distance cost of its data (last
    /// written on `src`, `dist` from `target`) on its next run, and is enqueued.
    /// `wakelist`: `ttwu_queue_wakelist()` → `__ttwu_queue_wakelist()` (core.c v6.8
    /// 4026-4035, 3944-3952) only sets `rq->ttwu_pending` and puts the wakee on
    /// `target`'s wake list, off the rq: no `place_entity()`, no
    /// `update_load_avg(DO_ATTACH)`, no `rq->nr_running` until the target's
    /// `sched_ttwu_pending()` (3885-3918) runs `ttwu_do_activate()` (3782-3831)
    /// ([`Simulator::sched_ttwu_pending`]).
    #[inline(always)]
    pub(super) fn ttwu_do_activate(
        &mut self,
        p: u32,
        src: u32,
        target: u32,
        dist: Distance,
        wakelist: bool,
    ) {
        let data_ns = self.cost.wake_data_ns_at(CpuId(src), CpuId(target), dist);
        let task = &mut self.tasks[p as usize];
        task.debt_ns += data_ns;
        if !task.background {
            task.wake_at = self.now;
        }
        if wakelist {
            task.loc = Loc::WakeList(target);
            self.cpus[target as usize].wake_list.push(p);
            return;
        }
        self.enqueue(p, target);
        self.update_avg_idle(target);
    }

    /// Gets the target to schedule: on a running target `wakeup_preempt()` and, if the
    /// wakee should preempt, `resched_curr()` (at once for a waker on that CPU, else
    /// after an IPI that this CPU sends and the target receives; nothing while the
    /// target's need-resched flag is already set); an idle target leaves its C-state
    /// (after the IPI, if one was needed, and the wake-list lock hold); a target
    /// already on its way does nothing.
    pub(super) fn kick_target(
        &mut self,
        p: u32,
        waker: Option<u32>,
        cpu: u32,
        target: u32,
        target_mode: Mode,
        q: Queued,
    ) {
        let now = self.now;
        let params = &self.cost.params;
        let (ipi, ipi_recv, ipi_send) = (params.ipi_ns(), params.ipi_recv_ns, params.ipi_send_ns);
        match target_mode {
            Mode::Running => {
                if q.need_ipi && target != cpu {
                    self.cpus[target as usize].stolen_ns += ipi_recv;
                }
                if q.wakelist {
                    // The wakee is not on the rq yet: the IPI's handler,
                    // sched_ttwu_pending() → ttwu_do_activate() → wakeup_preempt()
                    // (core.c v6.8 3804), decides the preemption as it lands
                    // (Event::WakelistIpi, in flight: check_invariants()).
                    return;
                }
                // check_preempt_wakeup_fair() and resched_curr() return early while
                // the current task's TIF_NEED_RESCHED is set (fair.c v6.8 8301, core.c
                // 1052): one resched, one IPI, until the target schedules.
                let c = &self.cpus[target as usize];
                if c.need_resched || c.resched_ipi {
                    return;
                }
                if self.should_preempt(target, p) {
                    if waker.is_some() && target == cpu {
                        self.cpus[cpu as usize].need_resched = true;
                    } else {
                        let delay = if target == cpu { 0 } else { ipi };
                        if target != cpu {
                            // resched_curr() of a remote running CPU (core.c v6.8
                            // 1063-1065): set_nr_and_not_polling() sets the flag at
                            // once, and this CPU sends smp_send_reschedule(), whose
                            // handler the target runs.
                            self.cpus[target as usize].resched_ipi = true;
                            self.cpus[target as usize].stolen_ns += ipi_recv;
                            self.charge_waker(waker, cpu, ipi_send);
                        }
                        let g = self.cpus[target as usize].switch_gen;
                        self.queue.push(
                            now + delay,
                            Event::Resched {
                                cpu: target,
                                gen: g,
                            },
                        );
                    }
                }
            }
            Mode::Idle | Mode::ForceIdle => {
                let c = &self.cpus[target as usize];
                let exit = if c.mode == Mode::Idle {
                    params.idle_states[c.cstate as usize].exit_latency_ns
                } else {
                    0
                };
                let delay = q.delay_ns + if q.need_ipi { ipi } else { 0 } + exit;
                let c = &mut self.cpus[target as usize];
                if c.mode == Mode::Idle {
                    c.mode = Mode::Waking;
                }
                let g = c.switch_gen;
                self.queue.push(
                    now + delay,
                    Event::Resched {
                        cpu: target,
                        gen: g,
                    },
                );
            }
            // Already on its way to schedule(): it picks the wakee there.
            Mode::Waking => {}
            // Before v5.13 the pass's loop has no `ttwu_pending` test ("if
            // (pulled_task || this_rq->nr_running > 0) break;", fair.c v5.12
            // 10699-10700; e5e678e4fea2 added it): a wakee on the wake list does not
            // cut it short, and the IPI is taken at its end or after it.
            Mode::NewidlePass if q.wakelist && self.env.patches.release < Release::new(5, 13) => {}
            Mode::NewidlePass => {
                let ready = if q.wakelist {
                    // rq->ttwu_pending is read after the domain in progress (fair.c
                    // v6.8 12378-12380): the pass stops there whether or not the IPI
                    // is in. The switch at its end takes the IPI if it has landed,
                    // else the CPU goes idle and the IPI wakes it (wakelist.rs).
                    now
                } else {
                    // On the rq at once; resched_curr()'s IPI, if it sent one, is
                    // taken after the pass (newidle_pass_over()).
                    if q.need_ipi {
                        self.cpus[target as usize].newidle_held.ipi = true;
                    }
                    now + q.delay_ns
                };
                self.newidle_interrupted(target, ready);
            }
        }
    }

    /// The waker takes `target`'s rq lock (`ttwu_queue()` → `rq_lock()`): FIFO queueing
    /// behind the current holder, then the hold time plus the rq lines brought over
    /// from the last holder (`cost::RqLock`). Returns (wait, hold).
    pub(super) fn take_remote_lock(&mut self, cpu: u32, target: u32) -> (u64, u64) {
        let work = self.cost.params.rq_lock_hold_ns;
        let now = self.now.ns();
        self.cpus[target as usize]
            .lock
            .acquire(&self.cost, CpuId(cpu), now, work)
    }

    /// A read of the `sd_llc_shared` line of `target`'s LLC by `cpu`
    /// (`test_idle_cores()`, `nr_idle_scan`): free while `cpu`'s copy is current.
    pub(super) fn llc_line_read(&mut self, cpu: u32, target: u32) -> u64 {
        let llc = self.llc_of[target as usize] as usize;
        if self.measuring {
            self.metrics.llc_line_reads += 1;
        }
        let now = self.now.ns();
        match self.llc_lines.read(&self.cost, CpuId(cpu), llc, now) {
            None => 0, // still in this CPU's cache
            Some(ns) => {
                if self.measuring {
                    self.metrics.llc_line_misses += 1;
                }
                ns
            }
        }
    }

    /// A write of the own LLC's `sd_llc_shared` line by `cpu` (`nr_busy_cpus` on nohz
    /// idle entry and exit). Returns the writer's cost. Reads go through
    /// [`Simulator::llc_line_read`]: [`crate::cost::SharedLines`] prices the two
    /// differently (a current copy reads free; only the line's exclusive owner
    /// writes free).
    pub(super) fn llc_line_write(&mut self, cpu: u32) -> u64 {
        self.llc_line_write_of(cpu, cpu)
    }

    /// A write by `cpu` of the `sd_llc_shared` line of `of`'s LLC (the idle load
    /// balancer writes it on an idle CPU's behalf, which may sit in another LLC).
    pub(super) fn llc_line_write_of(&mut self, cpu: u32, of: u32) -> u64 {
        let llc = self.llc_of[of as usize] as usize;
        let now = self.now.ns();
        self.llc_lines.write(&self.cost, CpuId(cpu), llc, now)
    }
}
