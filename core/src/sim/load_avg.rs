//! Where a task's load and utilisation live (fair.c v6.8's PELT glue): a task's
//! averages belong to the CFS runqueue it is attached to, sleeping or not, until it
//! migrates or dies.
//!
//! ```text
//!   enqueue on cpu ≠ attached   attach_entity_load_avg(): cpu's avg += the task's
//!   wake-up onto another CPU    migrate_task_rq_fair() → remove_entity_load_avg():
//!                               the old CPU's `removed` += the task's avg (synced to
//!                               that runqueue's last update), subtracted at its next
//!                               update_cfs_rq_load_avg()
//!   balancer moves a queued task  detach_entity_load_avg(): subtracted at once
//!   exit                        task_dead_fair() → remove_entity_load_avg()
//!   fork                        init_entity_runnable_average(): load = weight;
//!                               post_init_entity_util_avg(): util = half the spare
//!                               capacity, capped
//! ```
//!
//! A CPU's signals (`Cpu::load`, `Cpu::util`) are its own PELT averages of the
//! runnable weight and of "a task is running", as `__update_load_avg_cfs_rq()` keeps
//! `cfs_rq->avg`; with the attach and detach adjustments above they stay the sum of
//! the attached tasks' averages, sleeping tasks' decaying contributions included
//! (the kernel's blocked load). Readers (`cpu_load()`, `cpu_util_cfs()`, SIS_UTIL,
//! `wake_affine_weight()`, `find_idlest_group()`) see them as last updated, as the
//! kernel's do. `cpu_util_cfs()` (`cpu_util()` with UTIL_EST) is the larger of the
//! CPU's `util_avg` and `cfs_rq->avg.util_est`, the sum of its queued and running
//! tasks' `util_est` (`util_est_enqueue()` / `util_est_dequeue()`), each task's an
//! EWMA of its util at the end of an activation (`util_est_update()`, v6.8).
//!
//! Simplified: all tasks are nice 0, so `load_avg` and `runnable_avg` are one signal
//! (the kernel's differ only for a new task, whose runnable starts at its util and
//! its load at 1024); no task groups, so nothing propagates. `UTIL_AVG_UNCHANGED`
//! ("the PELT values haven't changed since enqueue time") is cleared when the task's
//! util crosses a PELT period boundary; here the boundaries are absolute multiples of
//! 1024 us, where the kernel's follow each entity's `period_contrib`.

use super::{Loc, Simulator};

/// `NICE_0_LOAD` scaled down: a nice-0 task's weight, and a new task's `load_avg`.
const NICE_0_LOAD: u64 = 1024;

/// `UTIL_AVG_UNCHANGED` (pelt.h): the flag bit of `p->se.avg.util_est`.
const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;
/// `UTIL_EST_WEIGHT_SHIFT` (sched.h): new samples weigh 1/4.
const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// `UTIL_EST_MARGIN` (fair.c): `SCHED_CAPACITY_SCALE / 100`.
const UTIL_EST_MARGIN: u32 = 1024 / 100;

/// `se->load.weight` of a nice-0 task on a 64-bit kernel: `scale_load(1024)`, with
/// `SCHED_FIXEDPOINT_SHIFT` = 10 more bits of resolution (sched.h, CONFIG_64BIT).
const NICE_0_WEIGHT_64BIT: u64 = 1024 << 10;

impl Simulator {
    /// Publishes `cpu`'s averages into the wake-up state and marks them for the
    /// balance sums: `cpu_util_cfs()` = `cpu_util(cpu, NULL, -1, 0)`, the larger of
    /// `util_avg` and `util_est`, at most the capacity.
    #[inline]
    pub(super) fn publish_cpu_pelt(&mut self, cpu: u32) {
        let c = &self.cpus[cpu as usize];
        let (util, load) = (c.util.avg().max(c.util_est), c.load.avg());
        let runnable = load.saturating_sub(c.delayed.avg());
        let rq = &mut self.state.rqs[cpu as usize];
        rq.util_avg = util.min(rq.capacity);
        rq.load_avg = load;
        rq.runnable_avg = runnable;
        self.mark_rq_sums(cpu);
    }

    /// The `cfs_rq->removed` part of `update_cfs_rq_load_avg()`: what tasks that left
    /// `cpu` took with them comes off its averages before they decay further.
    /// Returns whether there was any.
    #[inline]
    pub(super) fn apply_removed(&mut self, cpu: u32) -> bool {
        let c = &mut self.cpus[cpu as usize];
        if c.removed_load == 0 && c.removed_util == 0 {
            return false;
        }
        c.load.sub_positive(std::mem::take(&mut c.removed_load));
        c.util.sub_positive(std::mem::take(&mut c.removed_util));
        true
    }

    /// `attach_entity_load_avg()` (after the enqueue's `update_cfs_rq_load_avg()`):
    /// task `t`'s averages, as of now, join `cpu`'s. A no-op for a task already
    /// attached there (a wake-up on its own CPU). Returns whether it attached
    /// (`DO_ATTACH` did something: the group's `update_tg_load_avg()` follows).
    /// `(load, util)` are the task's averages (the caller holds the task).
    pub(super) fn attach_entity_load_avg(
        &mut self,
        t: u32,
        cpu: u32,
        (load, util): (u64, u64),
    ) -> bool {
        let at = &mut self.attached[t as usize];
        if *at == cpu {
            return false;
        }
        debug_assert_eq!(*at, u32::MAX, "attached twice");
        *at = cpu;
        let c = &mut self.cpus[cpu as usize];
        c.load.add(load);
        c.util.add(util);
        self.publish_cpu_pelt(cpu);
        true
    }

    /// `dequeue_entity(DO_DETACH)` → `detach_entity_load_avg()` of queued task `t`
    /// leaving `cpu` for another (load balancing; `cpu`'s averages are current): the
    /// task is brought to now (runnable, not running) and its averages come off at once.
    pub(super) fn detach_entity_load_avg(&mut self, t: u32, cpu: u32) {
        debug_assert_eq!(self.attached[t as usize], cpu);
        // v6.1+: update_load_avg(DO_DETACH) of the group cfs_rq (tg_load.rs): its
        // update, the detach, update_tg_load_avg(); then dequeue_entity()'s
        // update_cfs_group(). Before (tg_load.rs): dequeue_entity()'s
        // update_load_avg(UPDATE_TG) writes if decayed, update_cfs_group() reads, then
        // set_task_cpu() → migrate_task_rq_fair() → detach_entity_cfs_rq() detaches
        // and update_tg_load_avg() again.
        let decayed = self.tg_cfs_rq_update(t, cpu);
        let detach_in_dequeue = self.tg.detach_in_dequeue;
        if !detach_in_dequeue {
            if decayed {
                self.update_tg_load_avg(cpu);
            }
            self.tg_read_dequeued(t, cpu);
        }
        let now = self.now.ns();
        let task = &mut self.tasks[t as usize];
        debug_assert!(matches!(task.loc, Loc::Queued(_) | Loc::Delayed(_)));
        task.load.update(now, NICE_0_LOAD);
        task.util.update(now, 0);
        let (load, util) = (task.load.avg(), task.util.avg());
        self.attached[t as usize] = u32::MAX;
        let c = &mut self.cpus[cpu as usize];
        c.load.sub_positive(load);
        c.util.sub_positive(util);
        self.publish_cpu_pelt(cpu);
        if self.in_tg(t) {
            self.update_tg_load_avg(cpu);
        }
        if detach_in_dequeue {
            self.tg_read_dequeued(t, cpu);
        }
    }

    /// `remove_entity_load_avg()` of blocked task `t` (from `migrate_task_rq_fair()`
    /// on a wake-up elsewhere, or `task_dead_fair()`): `sync_entity_load_avg()` decays
    /// the task to its runqueue's last update, and that goes into the runqueue's
    /// `removed` sums, which its next update subtracts. The task itself is brought to
    /// now (`migrate_se_pelt_lag()` estimates that time; here it is exact).
    pub(super) fn remove_entity_load_avg(&mut self, t: u32) {
        let now = self.now.ns();
        let cpu = self.attached[t as usize];
        if cpu == u32::MAX {
            // Attached nowhere (a background task's first wake-up): only brought to now.
            let task = &mut self.tasks[t as usize];
            task.load.update(now, 0);
            task.util.update(now, 0);
            return;
        }
        self.attached[t as usize] = u32::MAX;
        if self.in_tg(t) {
            // The group cfs_rq's `removed` (tg_load.rs).
            self.cpus[cpu as usize].tg.removed = true;
        }
        let c = &mut self.cpus[cpu as usize];
        let at = c.load.last_ns;
        let task = &mut self.tasks[t as usize];
        c.removed_load += task.load.peek(at, 0);
        c.removed_util += task.util.peek(at, 0);
        task.load.update(now, 0);
        task.util.update(now, 0);
    }

    /// `_task_util_est(p)`: the task's EWMA without its flag.
    #[inline]
    pub(super) fn task_util_est_ewma(&self, t: u32) -> u64 {
        (self.util_est[t as usize].0 & !UTIL_AVG_UNCHANGED) as u64
    }

    /// `task_util_est(p)`: the larger of the task's util and its EWMA.
    pub(super) fn task_util_est(&self, t: u32) -> u64 {
        self.tasks[t as usize]
            .util
            .avg()
            .max(self.task_util_est_ewma(t))
    }

    /// `util_est_enqueue()`: the task's estimate joins `cpu`'s. Returns whether it
    /// changed; the caller publishes the CPU's averages after (one write for both).
    #[inline]
    pub(super) fn util_est_enqueue(&mut self, t: u32, cpu: u32) -> bool {
        let e = self.task_util_est_ewma(t);
        self.cpus[cpu as usize].util_est += e;
        e != 0
    }

    /// `util_est_dequeue()`: the task's estimate leaves `cpu`'s (never below 0).
    /// Returns whether it changed; the caller publishes the CPU's averages after.
    #[inline]
    pub(super) fn util_est_dequeue(&mut self, t: u32, cpu: u32) -> bool {
        let e = self.task_util_est_ewma(t);
        let c = &mut self.cpus[cpu as usize];
        c.util_est -= e.min(c.util_est);
        e != 0
    }

    /// [`Simulator::util_est_update_to`] with the task's own averages (tests).
    #[cfg(test)]
    pub(super) fn util_est_update(&mut self, t: u32, cpu: u32) {
        let task = &self.tasks[t as usize];
        self.util_est_update_to(t, cpu, task.util.avg(), task.load.avg());
    }

    /// `util_est_update(cfs_rq, p, task_sleep = true)`, fair.c v6.8, as task `t`
    /// (its util brought to now) goes to sleep on `cpu`: skipped while
    /// `UTIL_AVG_UNCHANGED` holds; the EWMA jumps up to the util at dequeue, stays
    /// within `UTIL_EST_MARGIN`, is left alone when the util exceeds the capacity (no
    /// idle time to trust) or when the task did not get the CPU time it wanted
    /// (`dequeued + margin < task_runnable(p)`), else moves a quarter of the way
    /// down; then the flag is set. `util` and `runnable` are the task's util and
    /// load averages (the caller holds the task).
    pub(super) fn util_est_update_to(&mut self, t: u32, cpu: u32, util: u64, runnable: u64) {
        let period = (self.now.ns() / super::pelt::PERIOD_NS) as u32;
        let (mut ewma, at) = self.util_est[t as usize];
        if ewma & UTIL_AVG_UNCHANGED != 0 {
            if at == period {
                return;
            }
            // The task's util_avg was recomputed since (cfs_se_util_change()).
            ewma &= !UTIL_AVG_UNCHANGED;
        }
        let dequeued = util.min(u32::MAX as u64 >> 1) as u32;
        if ewma > dequeued {
            let diff = ewma - dequeued;
            if diff >= UTIL_EST_MARGIN {
                if dequeued as u64 > self.state.rqs[cpu as usize].capacity {
                    return;
                }
                if (dequeued + UTIL_EST_MARGIN) as u64 >= runnable {
                    ewma = ((ewma << UTIL_EST_WEIGHT_SHIFT) - diff) >> UTIL_EST_WEIGHT_SHIFT;
                }
            }
        } else {
            ewma = dequeued;
        }
        self.util_est[t as usize] = (ewma | UTIL_AVG_UNCHANGED, period);
    }

    /// `init_entity_runnable_average()` and `post_init_entity_util_avg()` of new task
    /// `t` about to be enqueued on `cpu` (`wake_up_new_task()`): its load starts at
    /// its full weight ("to be seen as heavy tasks until they get a chance to
    /// stabilize"), its util at `cfs_rq->avg.util_avg × se->load.weight /
    /// (cfs_rq->avg.load_avg + 1)`, capped at half the CPU's spare capacity
    /// `(capacity − util_avg) / 2`, or that cap on a CPU with no util; 0 if the CPU has
    /// no spare capacity. As in the kernel, `se->load.weight` is the 64-bit scaled-up
    /// weight while `load_avg` is scaled down, so the cap is what almost always
    /// applies. The runqueue's averages are read as last updated (the enqueue updates
    /// them after).
    pub(super) fn post_init_entity_util_avg(&mut self, t: u32, cpu: u32) {
        let c = &self.cpus[cpu as usize];
        let cpu_scale = self.state.rqs[cpu as usize].capacity as i64;
        let (cfs_util, cfs_load) = (c.util.avg(), c.load.avg());
        let cap = (cpu_scale - cfs_util as i64) / 2;
        let util = if cap > 0 {
            if cfs_util != 0 {
                (cfs_util * NICE_0_WEIGHT_64BIT / (cfs_load + 1)).min(cap as u64)
            } else {
                cap as u64
            }
        } else {
            0
        };
        let now = self.now.ns();
        let task = &mut self.tasks[t as usize];
        task.load.set(now, NICE_0_LOAD);
        task.util.set(now, util);
    }
}

#[cfg(test)]
mod tests {
    use crate::cpumask::{CpuId, CpuMask};
    use crate::sim::test_support::{test_config, tiny};
    use crate::sim::{Loc, SimTime, Simulator};
    use crate::topology::presets;
    use crate::workload::{Dist, Op, Plan};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Two CPU-bound tasks on CPUs 0-3 of flat-16, as fork placed them at time 0.
    fn two_hogs() -> Simulator {
        on_flat16(5_000_000, 2, 4)
    }

    /// `copies` tasks that each run `run_ns` and exit, on CPUs 0..`cpus` of flat-16,
    /// 6.8, quiet, invariants checked, as fork placed them at time 0.
    pub(super) fn on_flat16(run_ns: u64, copies: usize, cpus: u32) -> Simulator {
        let machine = presets::machine("flat-16").unwrap();
        let n = machine.nr_cpus();
        let task = tiny(None, vec![Op::Run(Dist::Fixed { ns: run_ns }), Op::Exit]);
        Simulator::new(test_config(
            machine,
            CpuMask::from_cpus(n, (0..cpus).map(CpuId)),
            "6.8",
            Plan::to_completion(vec![task; copies]),
            SimTime::from_ms(50),
        ))
        .unwrap()
    }

    fn queued_on(sim: &Simulator, t: usize) -> u32 {
        match sim.tasks[t].loc {
            Loc::Queued(c) => c,
            l => panic!("task {t} is {l:?}"),
        }
    }

    /// A new task starts with its full weight as load and half the spare capacity of
    /// an empty CPU as util (`init_entity_runnable_average()`,
    /// `post_init_entity_util_avg()`), and both join its CPU at the enqueue.
    #[test]
    fn new_tasks_bring_full_load_and_half_the_spare_util() {
        let sim = two_hogs();
        let (a, b) = (queued_on(&sim, 0), queued_on(&sim, 1));
        assert_ne!(a, b, "fork spreads two tasks over idle CPUs");
        for c in [a, b] {
            assert_eq!(sim.state.rqs[c as usize].load_avg, 1024);
            assert_eq!(sim.state.rqs[c as usize].util_avg, 512);
        }
        assert_eq!(sim.tasks[0].util.avg(), 512);
        assert_eq!(sim.tasks[0].load.avg(), 1024);
    }

    /// The cap is half of what the CPU's util leaves, whatever its load: the 64-bit
    /// `se->load.weight` makes the extrapolation exceed it.
    #[test]
    fn post_init_caps_at_half_the_spare_capacity() {
        let mut sim = two_hogs();
        let c = queued_on(&sim, 0);
        sim.cpus[c as usize].util.set(0, 600);
        sim.cpus[c as usize].load.set(0, 100_000);
        sim.post_init_entity_util_avg(1, c);
        assert_eq!(sim.tasks[1].util.avg(), (1024 - 600) / 2);
        sim.cpus[c as usize].util.set(0, 1100);
        sim.post_init_entity_util_avg(1, c);
        assert_eq!(sim.tasks[1].util.avg(), 0, "no spare capacity, no util");
        assert_eq!(sim.tasks[1].load.avg(), 1024);
    }

    /// The balancer's move detaches the task's averages from its CPU at once and
    /// attaches them where it lands; a task removed (woken elsewhere, dead) leaves
    /// them in `removed` until its old CPU's next update.
    #[test]
    fn averages_move_with_the_task() {
        let mut sim = two_hogs();
        let (a, b) = (queued_on(&sim, 0), queued_on(&sim, 1));
        let dst = (0..4).find(|&c| c != a && c != b).unwrap();
        sim.migrate_queued(0, a, dst, dst, crate::sim::record::MigrateReason::Periodic);
        assert_eq!(sim.state.rqs[a as usize].load_avg, 0);
        assert_eq!(sim.state.rqs[a as usize].util_avg, 0);
        assert_eq!(sim.state.rqs[dst as usize].load_avg, 1024);
        assert_eq!(sim.state.rqs[dst as usize].util_avg, 512);
        assert_eq!(sim.attached[0], dst);
        sim.check_invariants().unwrap();

        sim.remove_entity_load_avg(1);
        assert_eq!(sim.cpus[b as usize].removed_load, 1024);
        assert_eq!(sim.cpus[b as usize].removed_util, 512);
        assert_eq!(
            sim.state.rqs[b as usize].load_avg, 1024,
            "not until an update"
        );
        sim.update_cpu_pelt(b);
        assert_eq!(sim.state.rqs[b as usize].load_avg, 0);
        assert_eq!(sim.state.rqs[b as usize].util_avg, 0);
        assert_eq!(sim.cpus[b as usize].removed_load, 0);
    }

    /// Over a whole run the invariant checks (the attached CPU follows the task) hold.
    #[test]
    fn a_run_keeps_every_task_attached_where_it_is() {
        let mut sim = two_hogs();
        sim.run().unwrap();
        assert!(
            sim.attached.iter().all(|&c| c == u32::MAX),
            "dead tasks are removed"
        );
    }
}

#[cfg(test)]
mod util_est_tests {
    use super::UTIL_AVG_UNCHANGED;
    use crate::sim::{SimTime, Simulator};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn one_task() -> Simulator {
        super::tests::on_flat16(1_000_000, 1, 2)
    }

    /// `util_est_update()`'s rules, v6.8: up at once to the util at dequeue, down by a
    /// quarter of the gap, not within the 1% margin, not while the PELT values are
    /// unchanged (same period), not when the task waited for the CPU.
    #[test]
    fn the_estimate_follows_the_kernel_rules() {
        let mut sim = one_task();
        let p = super::super::pelt::PERIOD_NS;
        let set = |sim: &mut Simulator, at_period: u64, util: u64, load: u64| {
            sim.now = SimTime(at_period * p);
            sim.tasks[0].util.set(at_period * p, util);
            sim.tasks[0].load.set(at_period * p, load);
        };
        set(&mut sim, 1, 400, 400);
        sim.util_est_update(0, 0);
        assert_eq!(sim.util_est[0].0, 400 | UTIL_AVG_UNCHANGED, "up at once");
        set(&mut sim, 1, 200, 200);
        sim.util_est_update(0, 0);
        assert_eq!(
            sim.task_util_est_ewma(0),
            400,
            "unchanged within the period"
        );
        set(&mut sim, 2, 200, 200);
        sim.util_est_update(0, 0);
        assert_eq!(sim.task_util_est_ewma(0), 350, "a quarter of the way down");
        set(&mut sim, 3, 345, 345);
        sim.util_est_update(0, 0);
        assert_eq!(sim.task_util_est_ewma(0), 350, "within UTIL_EST_MARGIN");
        set(&mut sim, 4, 100, 600);
        sim.util_est_update(0, 0);
        assert_eq!(sim.task_util_est_ewma(0), 350, "it waited: runnable > util");
        assert_eq!(sim.task_util_est(0), 350);
    }

    /// The CPU's estimate is its tasks' sum and `cpu_util_cfs()` reads the larger.
    #[test]
    fn cpu_util_is_the_larger_of_util_and_the_estimates() {
        let mut sim = one_task();
        let c = match sim.tasks[0].loc {
            crate::sim::Loc::Queued(c) => c,
            l => panic!("{l:?}"),
        };
        // Dequeue with the old estimate (0), give it one, enqueue again.
        sim.util_est_dequeue(0, c);
        sim.util_est[0] = (900 | UTIL_AVG_UNCHANGED, 0);
        assert!(sim.util_est_enqueue(0, c));
        sim.publish_cpu_pelt(c);
        assert_eq!(sim.cpus[c as usize].util_est, 900);
        assert_eq!(sim.state.rqs[c as usize].util_avg, 900, "max(512, 900)");
        sim.check_invariants().unwrap();
        sim.run().unwrap();
        assert!(
            sim.cpus.iter().all(|c| c.util_est == 0),
            "nothing left queued"
        );
    }
}
