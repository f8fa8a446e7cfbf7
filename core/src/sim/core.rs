//! The core of the scheduler (kernel/sched/core.c): the event loop, `schedule()` and
//! the context switch, the tick, and the placement of new tasks.
//!
//! ```text
//!   step(): pop (time, seq) ─▶ BurstEnd ─▶ advance() the program ─▶ run on / block / exit
//!                              Resched  ─▶ schedule(): pick (fair.rs, core_sched.rs),
//!                                          run_task() (context switch) or idle (idle.rs)
//!                              Timer    ─▶ wake() (ttwu.rs)
//!                              Tick     ─▶ task_tick_fair(), task_tick_core(), balance
//!                              Sample   ─▶ throughput series
//! ```

use crate::cpumask::CpuId;
use crate::metrics::MAX_SERIES;
use crate::wakeup::WakeFlags;

use super::event::Event;
use super::program::Ins;
use super::program::Next;
use super::{Block, Loc, Mode, SimError, SimTime, Simulator};

impl Simulator {
    /// Places the tasks already running when the run starts (those without a parent:
    /// daemons, launchers), one after the other as `wake_up_new_task()` would from the
    /// first CPU of the set (a long-running process's `recent_used_cpu` is its own
    /// CPU); starts the background tasks asleep; starts ticks and sampling. The other
    /// tasks wait for their parent's `Op::Fork`.
    pub(super) fn start(&mut self) {
        let parent = self.active_cpus[0];
        for t in 0..self.tasks.len() as u32 {
            if self.tasks[t as usize].block == Block::Unborn {
                continue;
            }
            let mask = self.views[t as usize]
                .task
                .as_ref()
                .expect("views hold tasks")
                .allowed
                .clone();
            let cpu = self.find_idlest_cpu_fork(parent, &mask);
            self.place_new(t, cpu, CpuId(cpu));
            if self.tasks[t as usize].background {
                self.sleep_first(t);
            } else {
                // Forked before the run as any task is: wake_up_new_task()'s averages.
                self.post_init_entity_util_avg(t, cpu);
                self.enqueue(t, cpu);
            }
        }
        let tick = self.cost.params.tick_ns;
        // tick_setup_sched_timer() (kernel/time/tick-sched.c v6.8 lines 1549-1571):
        // every CPU's tick expires on the jiffy grid, `tick_init_jiffy_update()` +
        // k × TICK_NSEC, the same instant on all CPUs; only the `skew_tick=1` boot
        // option (off by default) offsets CPU i by i × (TICK_NSEC / 2) / nr_cpus. A
        // restarted tick keeps the grid (`tick_nohz_restart()` forwards from
        // `ts->last_tick`). So busy CPUs take their ticks together, and the later ones
        // see the earlier ones' `nohz_balance_exit_idle()` in `nr_busy_cpus`.
        let ticks = self.active_cpus.iter().map(|&c| (0, c)).collect();
        self.queue.set_ticks(tick, ticks);
        for c in self.active_cpus.clone() {
            if !self.cpus[c as usize].queue.is_empty() {
                self.cpus[c as usize].mode = Mode::Waking;
                let g = self.cpus[c as usize].switch_gen;
                self.queue
                    .push(SimTime::ZERO, Event::Resched { cpu: c, gen: g });
            }
        }
        if self.until_exit {
            self.measuring = true;
            if self.rec.is_some() {
                self.record_measuring();
            }
        } else if !self.start.deferred {
            // Else the benchmark's start clock starts the warm-up (`start.rs`).
            self.queue.push(self.warmup, Event::Sample);
        }
    }

    /// Runs until the end (duration, or every task exited for completion workloads).
    pub fn run(&mut self) -> Result<(), SimError> {
        while self.step() {}
        match self.error.take() {
            Some(e) => Err(e),
            None => {
                if self.until_exit && self.live > 0 {
                    return Err(SimError::DidNotFinish {
                        cap_ms: self.end.ns() / 1_000_000,
                    });
                }
                self.start.check_started()
            }
        }
    }

    /// Runs until simulated time `t` at most (for stepping a UI in batches).
    /// Returns false when the run is over.
    pub fn run_until(&mut self, t: SimTime) -> bool {
        while self.queue.peek_time().is_some_and(|x| x <= t) {
            if !self.step() {
                return false;
            }
        }
        !self.finished()
    }

    /// The run is over: an error, every task of a completion workload exited, or the
    /// end reached.
    pub fn finished(&self) -> bool {
        self.error.is_some() || (self.until_exit && self.live == 0) || self.now >= self.end
    }

    /// Processes one event; false when the run is over. Inlined, with its two most
    /// frequent handlers, into the loops of [`Simulator::run`] and
    /// [`Simulator::run_until`]: the hot path of every run, kept in one piece whatever
    /// the callers' inlining budgets (measured: 3% fewer instructions per event than
    /// leaving it to the inliner).
    #[inline(always)]
    pub fn step(&mut self) -> bool {
        if self.error.is_some() || (self.until_exit && self.live == 0) {
            return false;
        }
        let Some((t, ev)) = self.queue.pop() else {
            return false;
        };
        if t > self.end {
            self.now = self.end;
            self.flush_accounting();
            return false;
        }
        debug_assert!(t >= self.now, "time went backwards");
        self.now = t;
        self.events += 1;
        match ev {
            Event::BurstEnd { cpu, gen } => self.on_burst_end(cpu, gen),
            Event::Resched { cpu, gen } => self.on_resched(cpu, gen),
            Event::Timer { task, gen } => self.on_timer(task, gen),
            Event::Tick { cpu } => self.on_tick(cpu),
            Event::Sample => self.on_sample(),
            Event::Stopper { cpu } => self.active_load_balance_cpu_stop(cpu),
            Event::NohzKick { cpu } => self.nohz_csd_func(cpu),
            Event::PollLimit { cpu, gen } => self.poll_time_limit(cpu, gen),
            Event::WakelistIpi { cpu } => self.wakelist_ipi_lands(cpu, t),
        }
        if self.check || (cfg!(debug_assertions) && self.events.is_multiple_of(4096)) {
            if let Err(what) = self.check_invariants() {
                self.error = Some(SimError::Invariant { at: self.now, what });
                return false;
            }
        }
        if self.until_exit && self.live == 0 {
            self.flush_accounting();
            return false;
        }
        true
    }

    /// `update_curr()` on every CPU and the force-idle time so far, so the metrics are
    /// complete at the end of the run or of the warm-up.
    pub(super) fn flush_accounting(&mut self) {
        for c in 0..self.cpus.len() as u32 {
            self.update_curr(c);
            let cpu = &mut self.cpus[c as usize];
            if cpu.mode == Mode::ForceIdle && self.measuring {
                self.metrics.force_idle_ns += self.now.since(cpu.force_idle_since);
                cpu.force_idle_since = self.now;
            }
        }
    }

    /// `schedule()` on `cpu` whose current task has already been put back, blocked or
    /// exited (or which was idle).
    pub(super) fn schedule(&mut self, cpu: u32) {
        let forced = self.core_sched && std::mem::take(&mut self.cpus[cpu as usize].core_forced);
        // Back from a newidle pass's run time: pick again, and go idle without a
        // second pass.
        let from_pass = self.cpus[cpu as usize].mode == Mode::NewidlePass;
        let mut newidle_done = from_pass;
        let mut after_stopper = newidle_done && self.newidle_pass_over(cpu);
        if after_stopper {
            // A stopper ran at the pass's end: the pick after it balances anew.
            newidle_done = false;
        }
        // The idle task leaving do_idle()'s loop flushes the wake list before
        // schedule_idle() (idle.c v6.8 339-340); __schedule() from a task does not.
        let mut idle_loop_flush = !from_pass && self.state.rqs[cpu as usize].curr_is_idle;
        // Bounded: each iteration removes a task from this CPU's queue or empties
        // its wake list.
        loop {
            let leaving_idle = {
                let c = &self.cpus[cpu as usize];
                // (Not in a pass any more: newidle_pass_over() made it Waking.)
                let not_running = match c.mode {
                    Mode::Idle | Mode::Waking | Mode::NewidlePass | Mode::ForceIdle => true,
                    Mode::Running => false,
                };
                not_running && c.curr == u32::MAX
            };
            if leaving_idle {
                self.leave_idle_accounting(cpu);
            }
            if std::mem::take(&mut idle_loop_flush) {
                self.sched_ttwu_pending(cpu);
            }
            let (pick, core) = if self.core_sched && !forced {
                self.core_pick(cpu)
            } else if forced {
                (self.forced_pick(cpu), None)
            } else {
                (self.pick_next(cpu), None)
            };
            let Some(i) = pick else {
                if !self.cpus[cpu as usize].queue.is_empty() {
                    if self.take_landed_wakelist_ipi(cpu) {
                        continue;
                    }
                    self.enter_force_idle(cpu);
                    self.core_sync(cpu, core);
                    // queue_core_balance(): a forced-idle CPU looks for work of the
                    // core's cookie elsewhere once it is in the idle task.
                    self.core_balance(cpu);
                    return;
                }
                if newidle_done {
                    if self.take_landed_wakelist_ipi(cpu) {
                        continue;
                    }
                    self.enter_idle(cpu);
                    self.core_sync(cpu, core);
                    return;
                }
                newidle_done = true;
                // From v5.13 this returns at once while the wake list is pending
                // (rq->ttwu_pending): the CPU goes idle (below) and the list's IPI
                // activates its wakees.
                if let Some(t) = self.newidle_balance(cpu) {
                    if self.core_sched {
                        // The core-wide pick decides (the pulled task's cookie may
                        // differ from the core's: task_hot() only delays that).
                        continue;
                    }
                    if matches!(self.tasks[t as usize].loc, Loc::Delayed(_)) {
                        // It pulled a delayed task (v6.12): `goto again`, whose pick
                        // dequeues it, and with nothing left a pass again
                        // (pick_next_task_fair()'s `idle:`, fair.c v6.12.19
                        // 8957-8960, 9011-9026).
                        newidle_done = false;
                        continue;
                    }
                    let i = self.cpus[cpu as usize]
                        .queue
                        .iter()
                        .position(|&x| x == t)
                        .expect("pulled task is queued here");
                    if self.run_task(cpu, i) {
                        self.core_sync(cpu, core);
                        return;
                    }
                    continue;
                }
                let cost = std::mem::take(&mut self.cpus[cpu as usize].newidle_cost_ns);
                if cost > 0 {
                    self.newidle_run_time(cpu, cost);
                    // That pass's rq->curr is the stopper, not a task that blocked.
                    self.cpus[cpu as usize].newidle_curr_stopper = after_stopper;
                } else {
                    if self.take_landed_wakelist_ipi(cpu) {
                        continue;
                    }
                    self.enter_idle(cpu);
                }
                self.core_sync(cpu, core);
                return;
            };
            let picked = self.cpus[cpu as usize].queue[i];
            if matches!(self.tasks[picked as usize].loc, Loc::Delayed(_)) {
                // pick_next_entity() picked a delayed task (v6.12): it is dequeued
                // and the pick runs again (fair.c v6.12.19 5681-5687, 8938-8940).
                self.finish_delayed_dequeue(cpu, i);
                continue;
            }
            if self.run_task(cpu, i) {
                self.core_sync(cpu, core);
                return;
            }
            // A task that blocked at once is rq->curr of any pass that follows.
            after_stopper = false;
        }
    }

    /// Switches `cpu` to the task at `queue[i]`. Returns false if the task blocked or
    /// exited at once (its program found nothing to run), in which case the caller
    /// picks again.
    pub(super) fn run_task(&mut self, cpu: u32, i: usize) -> bool {
        let now = self.now;
        let t = self.cpus[cpu as usize].queue.swap_remove(i);
        // pick_next_task_fair(): `prev != p` → put_prev_entity(cfs_rq, pse), then
        // set_next_entity(); a re-picked `prev` has neither (fair.c v6.5 8126-8145).
        let put_back = std::mem::replace(&mut self.cpus[cpu as usize].tg.put_back, u32::MAX);
        let repicked = put_back == t;
        if put_back != u32::MAX && !repicked {
            self.tg_cfs_rq_update(put_back, cpu);
        }
        if self.rec.is_some() {
            self.record_switch(cpu, self.cpus[cpu as usize].last_task, t);
        }
        let p = &self.cost.params;
        let (ctx_ns, mm_ns, hold) = (p.ctx_switch_ns, p.ctx_switch_mm_ns, p.sched_lock_hold_ns);
        let c = &mut self.cpus[cpu as usize];
        // One look-up of the task for the whole switch (the other fields it borrows
        // beside it are the simulator's own).
        let task = &mut self.tasks[t as usize];
        let mut switch_ns = 0;
        // Until finish_task_switch(): the time the blocked task stays `on_cpu`.
        let mut to_finish_ns = 0;
        if c.last_task != t {
            switch_ns = ctx_ns;
            if task.own_mm && c.last_mm != t {
                switch_ns += mm_ns;
            }
            // schedule() takes the own rq lock: wait behind remote wakers holding it,
            // and pull back the rq lines the last of them took (cost::RqLock). After
            // balancing charged elsewhere (busy_until_ns): its own holds are not
            // waited for twice.
            let at = now.ns().max(c.busy_until_ns);
            let (wait, held) = c.lock.acquire(&self.cost, CpuId(cpu), at, hold);
            switch_ns += wait + (held - hold);
            to_finish_ns = (at - now.ns()) + switch_ns;
            // The task's data that others displaced since it last ran here
            // (cost::CacheShare).
            switch_ns += self.cache.switch_in(&self.cost, CpuId(cpu), t);
            if self.measuring {
                self.metrics.context_switches += 1;
            }
        }
        // The blocked task's `p->on_cpu` clears at the end of the switch
        // (finish_task_switch()), before the next task's data comes back; a wakee
        // queued here meanwhile and picked runs on with no switch.
        if c.descheduling.0 == t || to_finish_ns == 0 {
            c.descheduling.0 = u32::MAX;
        } else {
            c.descheduling.1 = now + to_finish_ns;
        }
        c.last_task = t;
        if task.own_mm {
            c.last_mm = t;
        }
        c.mode = Mode::Running;
        c.curr = t;
        c.switch_gen = c.switch_gen.wrapping_add(1);
        c.burst_gen = c.burst_gen.wrapping_add(1);
        c.last_update = now;
        c.slice_start = now;
        c.need_resched = false;
        c.resched_ipi = false;
        // What is left of the burst it was preempted in, if any (0 from here on, as a
        // burst runs until its end event).
        let mut burst = std::mem::take(&mut task.remaining_ns);
        {
            task.loc = Loc::Running(cpu);
            task.util.update(now.ns(), 0);
            task.last_cpu = cpu;
            // set_next_entity(): se->exec_start = rq_clock_task().
            task.exec_start_zero = false;
            // pick_next_task_fair(): list_move() to the head of rq->cfs_tasks.
            self.mru_seq += 1;
            self.cfs_mru[t as usize] = self.mru_seq;
            let w = std::mem::replace(&mut task.wake_at, SimTime::MAX);
            if w != SimTime::MAX && self.measuring {
                let lat = (now + switch_ns).since(w);
                self.metrics.wake_latency.record(lat);
                if task.latency_tracked {
                    self.metrics.task_wake_latency.record(lat);
                }
            }
        }
        self.views[t as usize]
            .task
            .as_mut()
            .expect("views hold tasks")
            .prev_cpu = CpuId(cpu);
        self.update_rq(cpu, |rq| {
            rq.curr_is_idle = false;
            rq.polling = false;
        });
        self.update_cpu_pelt(cpu);
        // set_next_entity(): update_load_avg(UPDATE_TG) (tg_load.rs).
        if !repicked {
            self.tg_update_load_avg(t, cpu);
        }
        self.publish_core_cookie(cpu);
        // The time of the switch is spent before the task's own work.
        if burst == 0 {
            match self.advance(t, cpu) {
                Next::Run(ns) => burst = ns,
                Next::Block => {
                    self.dequeue_curr(cpu, Loc::Blocked);
                    self.kick_force_idle_siblings(cpu);
                    return false;
                }
                Next::Exit => {
                    self.dequeue_curr(cpu, Loc::Exited);
                    self.kick_force_idle_siblings(cpu);
                    return false;
                }
            }
        }
        let c = &mut self.cpus[cpu as usize];
        // Saturating, as `SimTime + ns` is: `burst` comes from a user-given `Dist`
        // (bounded by Dist::MAX_NS, so in practice far from u64::MAX); a saturated end
        // lies past every run's end and never fires.
        let total = switch_ns
            .saturating_add(burst)
            .saturating_add(std::mem::take(&mut c.stolen_ns));
        c.burst_end = now + total;
        let gen = c.burst_gen;
        self.queue.push(now + total, Event::BurstEnd { cpu, gen });
        if c.need_resched {
            // A wake-up during advance() asked to preempt at once.
            c.need_resched = false;
            let g = c.switch_gen;
            self.queue.push(now, Event::Resched { cpu, gen: g });
        }
        true
    }

    /// The running task's CPU burst is over: its program goes on (the task's own code,
    /// then `schedule()` if it blocks or exits, or a preemption `set_tsk_need_resched()`
    /// asked for while it ran).
    #[inline(always)]
    fn on_burst_end(&mut self, cpu: u32, gen: u32) {
        let c = &mut self.cpus[cpu as usize];
        if c.burst_gen != gen || c.mode != Mode::Running {
            return;
        }
        if c.stolen_ns > 0 {
            // Interrupt time (IPIs taken) pushes the end of the burst out.
            let s = std::mem::take(&mut c.stolen_ns);
            c.burst_end = self.now + s;
            self.queue.push(self.now + s, Event::BurstEnd { cpu, gen });
            return;
        }
        self.update_curr(cpu);
        let t = self.cpus[cpu as usize].curr;
        match self.advance(t, cpu) {
            Next::Run(ns) => {
                let c = &mut self.cpus[cpu as usize];
                if c.need_resched {
                    c.need_resched = false;
                    c.burst_end = self.now + ns;
                    self.put_prev_for_pick(cpu);
                    if self.measuring {
                        self.metrics.preemptions += 1;
                    }
                    self.schedule(cpu);
                } else {
                    c.burst_gen = c.burst_gen.wrapping_add(1);
                    c.burst_end = self.now + ns;
                    let g = c.burst_gen;
                    self.queue
                        .push(self.now + ns, Event::BurstEnd { cpu, gen: g });
                }
            }
            Next::Block => {
                self.cpus[cpu as usize].need_resched = false;
                self.dequeue_curr(cpu, Loc::Blocked);
                self.kick_force_idle_siblings(cpu);
                self.schedule(cpu);
            }
            Next::Exit => {
                self.cpus[cpu as usize].need_resched = false;
                self.dequeue_curr(cpu, Loc::Exited);
                self.kick_force_idle_siblings(cpu);
                self.schedule(cpu);
            }
        }
    }

    /// `scheduler_ipi()` / `resched_curr()` arriving: a running CPU is preempted
    /// (`put_prev_task()`, then `schedule()`), an idle one leaves idle and schedules.
    #[inline(always)]
    fn on_resched(&mut self, cpu: u32, gen: u32) {
        let c = &mut self.cpus[cpu as usize];
        if c.switch_gen != gen {
            return;
        }
        // __schedule() clears TIF_NEED_RESCHED, whatever it picks.
        c.resched_ipi = false;
        match c.mode {
            Mode::Running => {
                // A preemption request: switch if the pick differs.
                self.put_prev_for_pick(cpu);
                if self.measuring {
                    self.metrics.preemptions += 1;
                }
                self.kick_force_idle_siblings(cpu);
                self.schedule(cpu);
            }
            // A pass's Resched (its end, or a cut) ends it: schedule() picks again.
            Mode::Idle | Mode::Waking | Mode::NewidlePass | Mode::ForceIdle => self.schedule(cpu),
        }
    }

    /// `hrtimer_wakeup()`: a sleeper's timer fires.
    fn on_timer(&mut self, task: u32, gen: u32) {
        let t = &self.tasks[task as usize];
        if t.timer_gen != gen || t.block != Block::Sleep || !t.asleep() {
            return;
        }
        // The hrtimer fires on the CPU the task slept on; the wake-up runs in its
        // interrupt context: `wake_up_process()`, no wake flags.
        let cpu = t.last_cpu;
        if self.cpus[cpu as usize].mode == Mode::NewidlePass {
            // That CPU is in __schedule()'s newidle pass, interrupts off: the
            // interrupt waits for the switch at the pass's end (schedule()).
            self.cpus[cpu as usize]
                .newidle_held
                .timers
                .push((task, gen));
            return;
        }
        // On an idle CPU the interrupt is handled, as the tick is here, at its
        // expiry, the CPU out of its C-state after the exit latency: the exit of
        // the handler is tick_nohz_irq_exit()'s new idle entry time (tick-sched.c
        // v6.8 1199-1207, 684-691).
        let c = &mut self.cpus[cpu as usize];
        let was_idle = c.mode == Mode::Idle;
        if was_idle {
            let exit = self.cost.params.idle_states[c.cstate as usize].exit_latency_ns;
            c.idle_entry = self.now + exit;
        }
        self.wake(task, None, cpu, WakeFlags::NONE);
        // A wakee placed on another CPU leaves this one idle, need_resched clear:
        // cpuidle_enter_state() returns (its time_end after the exit, cpuidle.c
        // v6.8 279-302), cpuidle_reflect() → menu_reflect(), and do_idle()'s loop
        // goes round to cpuidle_idle_call() → menu_select() (idle.c v6.8 258-315).
        // POLL takes the interrupt and polls on (poll_state.c v6.8 22-38).
        let c = &self.cpus[cpu as usize];
        if was_idle
            && c.mode == Mode::Idle
            && !self.cost.params.idle_states[c.cstate as usize].polling
        {
            self.idle_reselect(cpu, super::IdleExit::Timer);
        }
    }

    /// `sched_tick()` on `cpu`: the fair class's tick, `task_tick_core()`, then
    /// load balancing (`trigger_load_balance()`, `sched_balance_trigger()` from 6.10).
    pub(super) fn on_tick(&mut self, cpu: u32) {
        let tick = self.cost.params.tick_ns;
        self.state.jiffies = self.now.ns() / tick;
        if self.cpus[cpu as usize].mode == Mode::NewidlePass {
            // __schedule()'s newidle pass runs with interrupts off: the tick's is
            // taken after the switch at the pass's end (newidle_pass_over()).
            self.cpus[cpu as usize].newidle_held.tick = true;
            return;
        }
        let c = &self.cpus[cpu as usize];
        if c.tick_stopped && matches!(c.mode, Mode::Idle | Mode::Waking) {
            // No tick: tick_nohz_stop_tick() cancelled ts->sched_timer (no timer-wheel
            // timer here, so `expires == KTIME_MAX`; tick-sched.c v6.8 947-951), and
            // only tick_nohz_idle_exit() restarts it (1362-1387, on the jiffy grid
            // from ts->last_tick, 775-781), which do_idle() calls once it has left
            // its loop (idle.c v6.8 325): a CPU already woken but not yet there
            // (Mode::Waking: the IPI, the C-state exit) has no tick either.
            return;
        }
        if c.mode == Mode::Running {
            // Noise: the timer interrupt itself, and now and then softirq work
            // (run_timer_softirq(), rcu_core()) on its way out, taken from the task.
            let mut irq = self.tick_irq_ns;
            if self.softirq_ppm > 0 && self.noise_rng.below(1_000_000) < self.softirq_ppm {
                irq += self.softirq_ns;
            }
            self.cpus[cpu as usize].stolen_ns += irq;
            let resched = self.task_tick_fair(cpu);
            // task_tick_core(): with a sibling forced idle, the only task here gives
            // up the CPU once it has used half its slice
            // (__entity_slice_used(curr, MIN_NR_TASKS_DURING_FORCEIDLE = 2)).
            // resched_curr(): the core-wide pick in schedule() decides who runs.
            if self.core_sched && self.core_tick_hands_over(cpu) {
                self.put_prev(cpu);
                if self.measuring {
                    self.metrics.preemptions += 1;
                }
                self.schedule(cpu);
                self.trigger_load_balance(cpu);
                return;
            }
            if resched {
                let g = self.cpus[cpu as usize].switch_gen;
                self.queue.push(self.now, Event::Resched { cpu, gen: g });
            }
        }
        // tick_sched_do_timer(): "if (ts->inidle) ts->got_idle_tick = 1"
        // (tick-sched.c v6.8 228-229), which menu_update() reads when the stay ends,
        // also when the tick's own balance pulls a task here and ends it, and on a
        // CPU already woken (Mode::Waking): ts->inidle holds from
        // tick_nohz_idle_enter() to tick_nohz_idle_exit(), until it leaves
        // do_idle()'s loop.
        // The handler runs once the CPU is out of its C-state; its exit is
        // tick_nohz_irq_exit()'s new idle entry time.
        let c = &mut self.cpus[cpu as usize];
        match c.mode {
            Mode::Idle => {
                c.got_idle_tick = true;
                let exit = self.cost.params.idle_states[c.cstate as usize].exit_latency_ns;
                c.idle_entry = self.now + exit;
            }
            Mode::Waking => c.got_idle_tick = true,
            // A CPU in its newidle pass (held above, not here) is in schedule(), out
            // of do_idle().
            Mode::NewidlePass | Mode::Running | Mode::ForceIdle => {}
        }
        self.trigger_load_balance(cpu);
        // The tick woke an idle CPU that kept it: back in do_idle()'s loop, the
        // governor chooses again (idle.rs). Not from POLL: poll_idle() takes
        // interrupts with IRQs on and polls on until need_resched() or its time
        // limit (drivers/cpuidle/poll_state.c v6.8 22-38).
        let c = &self.cpus[cpu as usize];
        if c.mode == Mode::Idle
            && !c.tick_stopped
            && !self.cost.params.idle_states[c.cstate as usize].polling
        {
            self.idle_reselect(cpu, super::IdleExit::Tick);
        }
    }

    /// The end of the warm-up (metrics reset), then one point of the throughput
    /// series per interval. (No kernel twin: the benchmark's own reporting.)
    fn on_sample(&mut self) {
        if !self.measuring {
            // End of the warm-up: forget it.
            self.flush_accounting();
            self.metrics.reset(self.now.ns());
            self.measuring = true;
            if self.rec.is_some() {
                self.record_measuring();
            }
            self.last_units = 0;
        } else {
            let d = self.metrics.units - self.last_units;
            self.last_units = self.metrics.units;
            let m = &mut self.metrics;
            if m.series.len() >= MAX_SERIES {
                // Halve the resolution to stay bounded.
                let merged: Vec<u64> = m.series.chunks(2).map(|c| c.iter().sum()).collect();
                m.series = merged;
                m.series_interval_ns *= 2;
            }
            m.series.push(d);
        }
        let iv = self.metrics.series_interval_ns;
        self.queue.push(self.now + iv, Event::Sample);
    }

    /// A background task starts in its first op, a sleep: its timer armed at once,
    /// without a run to get there (the thread was asleep before the run began).
    fn sleep_first(&mut self, t: u32) {
        let pc = self.tasks[t as usize].pc as usize;
        let Ins::Sleep(d) = self.code.ins[pc] else {
            // Not a sleeper: it runs like any task.
            let cpu = self.tasks[t as usize].last_cpu;
            self.enqueue(t, cpu);
            return;
        };
        let dur = self.code.dists[d as usize].sample(&mut self.noise_rng);
        let task = &mut self.tasks[t as usize];
        task.pc += 1;
        task.block = Block::Sleep;
        task.timer_gen = task.timer_gen.wrapping_add(1);
        let g = task.timer_gen;
        self.queue
            .push_timer(SimTime::ZERO + dur, Event::Timer { task: t, gen: g });
        self.note_timer(t, SimTime::ZERO + dur);
    }
}
