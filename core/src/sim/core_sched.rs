//! Core scheduling (the core-scheduling parts of kernel/sched/core.c and fair.c):
//! SMT siblings only run tasks of one cookie.
//!
//! ```text
//!   schedule(cpu) ─▶ core_pick(): each thread's best task (a running sibling's by
//!                    running_pick(): its fair pick over its current task and queue),
//!                    the most important by cfs_prio_less() (vruntime -
//!                    min_vruntime_fi), its cookie for all
//!                 ─▶ core_sync(): siblings follow (IPI + preempt when a running
//!                    sibling's pick is not its current task, or run a task of the
//!                    cookie); min_vruntime_fi updated unless still forced idle
//!   nothing of the cookie here ─▶ enter_force_idle() ─▶ core_balance(): steal one
//!   tick ─▶ core_tick_hands_over() (task_tick_core())
//! ```
//!
//! `sched_core_balance()` lives here as it does in core.c; the domain spans it walks
//! come from `balance/`.

use crate::cpumask::CpuId;

use super::event::Event;
use super::{Loc, Mode, Simulator};

/// `MIN_NR_TASKS_DURING_FORCEIDLE` (fair.c): a task alone on a CPU whose sibling is
/// forced idle yields after a slice shared by this many.
const MIN_NR_TASKS_DURING_FORCEIDLE: u64 = 2;

/// What a core-wide pick leaves for the siblings to follow.
#[derive(Clone, Copy, Debug)]
pub(super) struct CoreSync {
    /// The cookie of the core's most important task (`None`: nothing runnable).
    cookie: Option<u64>,
    /// The core was in force idle before the pick.
    fi_before: bool,
}

impl Simulator {
    /// `p->core_cookie` (0: none), as the wake-up path reads it from the task's view.
    pub(super) fn cookie(&self, t: u32) -> u64 {
        self.views[t as usize].task.as_ref().map_or(0, |v| v.cookie)
    }

    /// The cookie the CPU's SMT siblings are running, if any (core scheduling).
    #[inline]
    pub(super) fn sibling_cookie(&self, cpu: u32) -> Option<u64> {
        if self.core_sched {
            self.sibling_cookie_sched(cpu)
        } else {
            None
        }
    }

    /// [`Simulator::sibling_cookie`] with core scheduling on.
    fn sibling_cookie_sched(&self, cpu: u32) -> Option<u64> {
        self.siblings[cpu as usize].iter().find_map(|&s| {
            let sc = &self.cpus[s as usize];
            (sc.mode == Mode::Running).then(|| self.cookie(sc.curr))
        })
    }

    /// The core-wide selection of `pick_next_task()` (core.c) with core scheduling:
    /// each thread's own best task (`rq_i->core_pick = p = pick_task(rq_i)`, core.c
    /// v6.12.19 6165, v6.5 6195: a running sibling's fair pick over its current task
    /// and its queue, [`Simulator::running_pick`], kept in `Cpu::core_pick` for
    /// [`Simulator::core_sync`]; the best queued on an idle or forced-idle sibling),
    /// the most important of them by `cfs_prio_less()` (vruntime less the CPU's
    /// `min_vruntime_fi`; a sibling wins only when strictly ahead), and for this CPU
    /// its best task of that task's cookie. Returns the pick and, for
    /// [`Simulator::core_sync`], the core's new cookie and whether the core was in
    /// force idle before.
    ///
    /// Simplified: a sibling still on its way to schedule() (an IPI or C-state exit in
    /// flight) is left out, and picks for itself when it gets there.
    #[inline(never)]
    pub(super) fn core_pick(&mut self, cpu: u32) -> (Option<usize>, Option<CoreSync>) {
        let fi_before = self.core_in_force_idle(cpu);
        let local = self.pick_undelayed(cpu);
        let norm = |sim: &Simulator, c: u32, t: u32| {
            sim.tasks[t as usize].vruntime - sim.cpus[c as usize].fi_base
        };
        let mut max = local.map(|i| {
            let t = self.cpus[cpu as usize].queue[i];
            (norm(self, cpu, t), t)
        });
        for k in 0..self.siblings[cpu as usize].len() {
            let s = self.siblings[cpu as usize][k];
            let cand = match self.cpus[s as usize].mode {
                Mode::Running => {
                    self.update_curr(s);
                    let t = self.running_pick(s);
                    self.cpus[s as usize].core_pick = t;
                    Some(t)
                }
                // On its way to schedule(), or in it (a newidle pass): left out, it
                // picks for itself there (simplified, above).
                Mode::Waking | Mode::NewidlePass => None,
                Mode::Idle | Mode::ForceIdle => self
                    .pick_undelayed(s)
                    .map(|i| self.cpus[s as usize].queue[i]),
            };
            if let Some(t) = cand {
                let n = norm(self, s, t);
                // prio_less(max, p): max's normalized vruntime is larger.
                if max.is_none_or(|(m, _)| m - n > 0) {
                    max = Some((n, t));
                }
            }
        }
        let cookie = max.map(|(_, t)| self.cookie(t));
        let pick = match (local, max) {
            (Some(i), Some((_, t))) if self.cpus[cpu as usize].queue[i] == t => Some(i),
            (_, Some(_)) => self.pick_next_with(cpu, cookie),
            _ => None,
        };
        (pick, Some(CoreSync { cookie, fi_before }))
    }

    /// After a core-wide pick on `cpu`: each sibling follows it, then
    /// `min_vruntime_fi` is brought up to date on every thread unless the core was
    /// and still is in force idle. A running sibling is rescheduled (`resched_curr()`,
    /// an IPI) when its core pick is not its current task (`rq_i->curr ==
    /// rq_i->core_pick` or not, core.c v6.12.19 6259-6265, v6.5 6285-6290): its own
    /// pick ([`Simulator::running_pick`]) when that is of the core's cookie (6181-6190),
    /// and then its `schedule()` takes that task (the `core_pick_seq` fast path,
    /// 6084-6093: [`Simulator::forced_pick`]); else a task of the cookie, taken to be
    /// the current task when it has the cookie (`sched_core_find()`'s order, the core
    /// tree's, is not kept) or the sibling's best of the cookie when it has not. A
    /// forced-idle or idle sibling with a task of the core's cookie runs it.
    #[inline]
    pub(super) fn core_sync(&mut self, cpu: u32, core: Option<CoreSync>) {
        if let Some(core) = core {
            self.core_sync_with(cpu, core);
        }
    }

    #[inline(never)]
    fn core_sync_with(&mut self, cpu: u32, core: CoreSync) {
        let CoreSync { cookie, fi_before } = core;
        if let Some(k) = cookie {
            for i in 0..self.siblings[cpu as usize].len() {
                let s = self.siblings[cpu as usize][i];
                let own = std::mem::replace(&mut self.cpus[s as usize].core_pick, u32::MAX);
                let sc = &self.cpus[s as usize];
                let mut take = u32::MAX;
                let follow = match sc.mode {
                    Mode::Running => {
                        // Its own pick, still queued there, of the core's cookie.
                        let queued = own != u32::MAX
                            && self.tasks[own as usize].loc == Loc::Queued(s)
                            && self.cookie(own) == k;
                        if queued {
                            take = own;
                        }
                        queued || self.cookie(sc.curr) != k
                    }
                    Mode::Idle | Mode::ForceIdle => sc.queue.iter().any(|&t| self.cookie(t) == k),
                    // It picks for itself at its Resched (a pass's end).
                    Mode::Waking | Mode::NewidlePass => false,
                };
                if !follow {
                    continue;
                }
                if self.cpus[s as usize].mode == Mode::Running {
                    let p = &self.cost.params;
                    let (send, recv) = (p.ipi_send_ns, p.ipi_recv_ns);
                    if self.cpus[cpu as usize].mode == Mode::Running {
                        self.cpus[cpu as usize].stolen_ns += send;
                    }
                    self.put_prev(s);
                    self.cpus[s as usize].stolen_ns += recv;
                    if self.measuring {
                        self.metrics.preemptions += 1;
                    }
                }
                self.cpus[s as usize].core_forced = true;
                self.cpus[s as usize].core_pick = take;
                self.schedule(s);
            }
        }
        self.record_core_occupation(cpu);
        if !(fi_before && self.core_in_force_idle(cpu)) {
            self.update_fi_base(cpu);
            for i in 0..self.siblings[cpu as usize].len() {
                self.update_fi_base(self.siblings[cpu as usize][i]);
            }
        }
    }

    /// `pick_task()` → `pick_task_fair()` on a sibling running a task, as the
    /// core-wide pick calls it (core.c v6.12.19 6165, v6.5 6195): its task is still
    /// `cfs_rq->curr`, not put back, so the pick weighs it beside the queue (the
    /// caller has charged it, `update_curr()`). Returns the task picked.
    ///
    /// From 6.6, `pick_eevdf()` (fair.c v6.12.19 907-970): the current task alone
    /// (`nr_running == 1`, 918-919); else it counts only if eligible (921-922), keeps
    /// the CPU if its slice is protected (RUN_TO_PARITY, 928-929: `curr->vlag ==
    /// curr->deadline`, stashed by `set_next_entity()` at its pick, 5633, and lost
    /// when `update_curr()` → `update_deadline()` gives it a new deadline, 1007-1027,
    /// 1229, which this pick's charge does once the deadline is reached), and wins
    /// over the queue's earliest eligible deadline only with an earlier one
    /// (`entity_before()`, 544-551; 966-967). A delayed task picked from the queue is
    /// dequeued and the pick runs again (`pick_next_entity()` 5681-5687,
    /// `pick_task_fair()` 8938-8940). Before 6.6, `pick_next_entity(cfs_rq, curr)`
    /// (fair.c v6.5 5084-5130, from `pick_task_fair()` 8028-8056): the leftmost of
    /// the queue, or the current task when its vruntime is strictly less.
    ///
    /// Simplified, as elsewhere in the model: the protection is "eligible and short
    /// of its deadline" (a deadline renewed at the tick counts as a new pick's), the
    /// reschedule that `update_deadline()` asks for when the current task stays the
    /// pick (a re-pick of the same task) is left out, and there are no buddies
    /// (PICK_BUDDY's `next`, 6.5's `next`, `last` and `skip`).
    fn running_pick(&mut self, s: u32) -> u32 {
        let curr = self.cpus[s as usize].curr;
        if !self.eevdf {
            let Some(i) = self.pick_next_with(s, None) else {
                return curr;
            };
            let left = self.cpus[s as usize].queue[i];
            let (cv, lv) = (
                self.tasks[curr as usize].vruntime,
                self.tasks[left as usize].vruntime,
            );
            return if cv < lv { curr } else { left };
        }
        // update_deadline() from update_curr(): a new slice once this one is used up.
        let task = &mut self.tasks[curr as usize];
        let renewed = task.vruntime >= task.deadline;
        if renewed {
            task.deadline = task.vruntime + self.slice_ns;
        }
        loop {
            let Some(i) = self.pick_next_with(s, None) else {
                return curr;
            };
            let (cv, cd) = {
                let c = &self.tasks[curr as usize];
                (c.vruntime, c.deadline)
            };
            let curr_eligible = self.vruntime_eligible(s, cv);
            if curr_eligible && !renewed {
                return curr;
            }
            let t = self.cpus[s as usize].queue[i];
            let (tv, td) = {
                let q = &self.tasks[t as usize];
                (q.vruntime, q.deadline)
            };
            // `best` is the queue's earliest eligible deadline; pick_next_with()'s
            // least-vruntime fallback (none eligible) is no `best`.
            if curr_eligible && (!self.vruntime_eligible(s, tv) || cd < td) {
                return curr;
            }
            if !matches!(self.tasks[t as usize].loc, Loc::Delayed(_)) {
                return t;
            }
            self.finish_delayed_dequeue(s, i);
        }
    }

    /// The pick of a sibling the core-wide pick has rescheduled (`core_forced`): the
    /// task it chose for it (`rq->core_pick`, the `core_pick_seq` fast path of
    /// `pick_next_task()`, core.c v6.12.19 6084-6093) if set and still queued here,
    /// else its best task of the core's cookie.
    pub(super) fn forced_pick(&mut self, cpu: u32) -> Option<usize> {
        let t = std::mem::replace(&mut self.cpus[cpu as usize].core_pick, u32::MAX);
        if t != u32::MAX {
            if let Some(i) = self.cpus[cpu as usize].queue.iter().position(|&x| x == t) {
                return Some(i);
            }
        }
        self.pick_next(cpu)
    }

    /// `core_occupation` as a core-wide pick sets it (`occ`, the threads given a task
    /// rather than idle) on every thread's pick: here counted once the siblings have
    /// followed the pick, on the running tasks and on the forced-idle CPUs' idle tasks.
    fn record_core_occupation(&mut self, cpu: u32) {
        let occ = std::iter::once(&cpu)
            .chain(&self.siblings[cpu as usize])
            .filter(|&&c| self.cpus[c as usize].mode == Mode::Running)
            .count() as u8;
        self.set_core_occupation(cpu, occ);
        for i in 0..self.siblings[cpu as usize].len() {
            self.set_core_occupation(self.siblings[cpu as usize][i], occ);
        }
    }

    /// `core_occupation = occ` on what `cpu` runs: its task, or its idle task when
    /// forced idle.
    fn set_core_occupation(&mut self, cpu: u32, occ: u8) {
        let c = &mut self.cpus[cpu as usize];
        match c.mode {
            Mode::Running => self.core_occ[c.curr as usize] = occ,
            Mode::ForceIdle => c.idle_occ = occ,
            // Nothing runs here, and the idle task is not forced idle.
            Mode::Idle | Mode::Waking | Mode::NewidlePass => {}
        }
    }

    /// Some thread of the CPU's core is forced idle (`core_forceidle_count`).
    fn core_in_force_idle(&self, cpu: u32) -> bool {
        std::iter::once(&cpu)
            .chain(&self.siblings[cpu as usize])
            .any(|&c| self.cpus[c as usize].mode == Mode::ForceIdle)
    }

    /// `se_fi_update()`: `min_vruntime_fi = min_vruntime`, with `min_vruntime` raised
    /// to the least vruntime of the running and queued tasks first.
    fn update_fi_base(&mut self, cpu: u32) {
        let c = &self.cpus[cpu as usize];
        let running = (c.mode == Mode::Running).then_some(c.curr);
        let least = running
            .into_iter()
            .chain(c.queue.iter().copied())
            .map(|t| self.tasks[t as usize].vruntime)
            .min();
        let c = &mut self.cpus[cpu as usize];
        if let Some(v) = least {
            c.min_v = c.min_v.max(v);
        }
        if c.min_v != i64::MIN {
            c.fi_base = c.min_v;
        }
    }

    /// The CPU runs its idle task while tasks are queued (`rq->core->core_forceidle_count`,
    /// `pick_next_task()` returning the idle task for a cookie mismatch).
    pub(super) fn enter_force_idle(&mut self, cpu: u32) {
        self.cpus[cpu as usize].force_idle_since = self.now;
        self.switch_to_idle_task(cpu, Mode::ForceIdle, false);
        if self.rec.is_some() {
            self.record(super::record::RecordKind::ForceIdle { cpu: cpu as u16 });
        }
        self.update_cpu_pelt(cpu);
        self.publish_core_cookie(cpu);
    }

    /// `rq->core->core_cookie` for the CPU's core: the cookie of a running thread.
    #[inline]
    pub(super) fn publish_core_cookie(&mut self, cpu: u32) {
        if self.core_sched {
            self.publish_core_cookie_sched(cpu);
        }
    }

    /// [`Simulator::publish_core_cookie`] with core scheduling on.
    fn publish_core_cookie_sched(&mut self, cpu: u32) {
        let mut cookie = 0;
        for &c in std::iter::once(&cpu).chain(self.siblings[cpu as usize].iter()) {
            let cc = &self.cpus[c as usize];
            if cc.mode == Mode::Running {
                cookie = self.cookie(cc.curr);
            }
        }
        self.state.rqs[cpu as usize].core_cookie = cookie;
        for i in 0..self.siblings[cpu as usize].len() {
            let s = self.siblings[cpu as usize][i];
            self.state.rqs[s as usize].core_cookie = cookie;
        }
    }

    /// A sibling stopped running a cookie: force-idle siblings may pick again.
    #[inline]
    pub(super) fn kick_force_idle_siblings(&mut self, cpu: u32) {
        if self.core_sched {
            self.kick_force_idle_siblings_sched(cpu);
        }
    }

    /// [`Simulator::kick_force_idle_siblings`] with core scheduling on.
    fn kick_force_idle_siblings_sched(&mut self, cpu: u32) {
        for i in 0..self.siblings[cpu as usize].len() {
            let s = self.siblings[cpu as usize][i];
            let sc = &mut self.cpus[s as usize];
            if sc.mode == Mode::ForceIdle {
                let g = sc.switch_gen;
                self.queue.push(self.now, Event::Resched { cpu: s, gen: g });
            }
        }
    }

    /// `task_tick_core()`'s test on a running CPU: a sibling is forced idle
    /// (`core_forceidle_count`), the current task is the only one here
    /// (`cfs.nr_running == 1`), and it has run more than half its slice since it was
    /// picked (`__entity_slice_used(curr, 2)`: `se->slice` under EEVDF, `sched_slice()`
    /// of a lone task, `sysctl_sched_latency`, before).
    pub(super) fn core_tick_hands_over(&self, cpu: u32) -> bool {
        // This CPU runs, so a forced-idle thread of its core is a sibling.
        if !self.core_in_force_idle(cpu) || self.state.rqs[cpu as usize].nr_running != 1 {
            return false;
        }
        let slice = if self.eevdf {
            self.slice_ns as u64
        } else {
            24_000_000
        };
        let rtime = self.now.since(self.cpus[cpu as usize].slice_start);
        rtime * MIN_NR_TASKS_DURING_FORCEIDLE > slice
    }

    /// `sched_core_balance()` (core.c), which `queue_core_balance()` queues when `cpu`
    /// is forced idle (tasks queued, none of the cookie its core runs): for each of the
    /// CPU's domains, bottom-up, `steal_cookie_task()` tries the other CPUs of the span
    /// from `cpu` on (`for_each_cpu_wrap()`), and the first `try_steal_cookie()` that
    /// finds a queued task of the core's cookie moves it here and ends the walk.
    ///
    /// Each CPU tried costs one remote rq lock line (`double_rq_lock()`), the moved task
    /// its rq lines and the task group's line (`tg_load.rs`); the stolen task pays them
    /// before it runs, as a pulled task pays newidle's scan. Simplified: the scan is instantaneous (nothing can wake this CPU
    /// during it, so `need_resched()` never cuts it short), and a sibling's pick still
    /// in flight (`src->core_pick`) is not known, so it is not protected.
    pub(super) fn core_balance(&mut self, cpu: u32) {
        // queue_core_balance(): only with a core cookie, only when forced idle.
        let Some(cookie) = self.sibling_cookie(cpu) else {
            return;
        };
        if cookie == 0 || self.cpus[cpu as usize].mode != Mode::ForceIdle {
            return;
        }
        let mut debt = 0;
        for li in 0..self.balance.n_levels(cpu) {
            // for_each_cpu_wrap(i, sched_domain_span(sd), cpu)
            let span = self.balance.span(cpu, li);
            let (n, start) = (span.len(), span.partition_point(|&c| c < cpu));
            for k in 0..n {
                let src = self.balance.span(cpu, li)[(start + k) % n];
                if src == cpu {
                    continue;
                }
                debt += self.cost.c2c_ns(CpuId(cpu), CpuId(src));
                if let Some(t) = self.steal_candidate(cpu, src, cookie) {
                    let p = &self.cost.params;
                    debt += p.rq_lines * self.cost.c2c_ns(CpuId(cpu), CpuId(src));
                    // try_steal_cookie() runs on `cpu` under double_rq_lock(): the task
                    // group's line accesses of the detach and the attach are `cpu`'s,
                    // paid by the stolen task as the rq lines are (tg_load.rs).
                    self.tg_capture(cpu, self.now.ns(), src);
                    self.migrate_queued(t, src, cpu, cpu, super::record::MigrateReason::CoreSteal);
                    let (on_src, on_cpu) = self.tg_captured();
                    debt += on_src + on_cpu;
                    self.tasks[t as usize].debt_ns += debt;
                    if self.measuring {
                        self.metrics.core_steals += 1;
                    }
                    return;
                }
            }
        }
    }

    /// `try_steal_cookie(cpu, src)`: the first queued task of `src` with `cookie`, by
    /// `sched_core_find()`'s order (least vruntime first), that may run on `cpu` and
    /// did not last run with more of its core busy than `cpu`'s core is now
    /// (`p->core_occupation > dst->idle->core_occupation`).
    fn steal_candidate(&self, cpu: u32, src: u32, cookie: u64) -> Option<u32> {
        let idle_occ = self.cpus[cpu as usize].idle_occ;
        self.cpus[src as usize]
            .queue
            .iter()
            .copied()
            .filter(|&t| {
                self.cookie(t) == cookie
                    && self.allowed_on(t, cpu)
                    && self.core_occ[t as usize] <= idle_occ
            })
            .min_by_key(|&t| self.tasks[t as usize].vruntime)
    }
}
