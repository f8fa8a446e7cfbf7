//! kernel/sched/core.c's part of the wake-up: `try_to_wake_up()`'s placement (the
//! on_cpu wakelist shortcut, `select_task_rq()`, `ttwu_queue()`'s choice of queue),
//! `is_cpu_allowed()`, `select_fallback_rq()`, `ttwu_queue_cond()` and
//! `ttwu_queue_wakelist()`.

use crate::cpumask::CpuId;
use crate::patch::Patch;
use crate::release::Release;
use crate::wakeup::code::Site;
use crate::wakeup::trace::{Step, Tracer};
use crate::wakeup::{
    Decision, NoTrace, QueuePath, SchedState, TaskState, WakeEnv, WakeFlags, WakePath, Waker,
};

use super::Ctx;

/// `try_to_wake_up()`'s placement part: the on_cpu wakelist shortcut, then
/// `select_task_rq()` and `ttwu_queue()`. Pure: returns the decision and the writes.
///
/// `WF_FORK` or `WF_EXEC` in `wake_flags` is not a wake-up: `wake_up_new_task()` and
/// `sched_exec()` call `select_task_rq()` with that flag alone, no `WF_TTWU`. Such a
/// request is handed to [`select_task_rq_new`] with `WF_TTWU` removed (a wake state
/// file's `fork`/`exec`).
pub fn wake_up<T: Tracer>(
    env: &WakeEnv,
    s: &SchedState,
    p: &TaskState,
    waker: &Waker,
    wake_flags: WakeFlags,
    t: &mut T,
) -> Decision {
    if wake_flags.intersects(WakeFlags::FORK.union(WakeFlags::EXEC)) {
        return select_task_rq_new(env, s, p, waker, wake_flags.without(WakeFlags::TTWU), t);
    }
    let mut c = Ctx::new(env, s, p, waker, t);
    // "If the owning (remote) CPU is still in the middle of schedule() with this task
    // as prev, ... queue the wakeup on its wakelist."
    if p.on_cpu {
        if let Some(path) = c.ttwu_queue_wakelist(p.prev_cpu, true) {
            c.t.step(Site::OnCpuWakelist, || Step::Queue {
                path,
                why: "p is still on_cpu: queued to its old CPU without selecting".into(),
            });
            c.path = WakePath::OnCpu;
            return c.finish(p.prev_cpu, path);
        }
    }
    let cpu = c.select_task_rq(waker, wake_flags.union(WakeFlags::TTWU));
    // Before 6.0 only the on_cpu call above passes WF_ON_CPU ("wake_flags |
    // WF_ON_CPU", core.c v5.12-v5.19 try_to_wake_up()); ttwu_queue() gets the plain
    // wake_flags.
    let path = match c.ttwu_queue_wakelist(cpu, false) {
        Some(path) => path,
        None if cpu == c.this => {
            c.t.step(Site::QueueLocal, || Step::Queue {
                path: QueuePath::Local,
                why: "target is the waker's CPU: lock own rq".into(),
            });
            QueuePath::Local
        }
        None => {
            c.t.step(Site::QueueRemote, || Step::Queue {
                path: QueuePath::RemoteLock,
                why: "ttwu_queue_cond() said no (or TTWU_QUEUE off): lock the remote rq".into(),
            });
            QueuePath::RemoteLock
        }
    };
    c.finish(cpu, path)
}

/// The placement of a new or exec'ing task, without `WF_TTWU`: `wake_up_new_task()`'s
/// `select_task_rq(p, task_cpu(p), WF_FORK)` (core.c v6.8 line 4917, with
/// `select_task_rq()`'s single-CPU and `is_cpu_allowed()` fallback) for
/// `WakeFlags::FORK`, `sched_exec()`'s `p->sched_class->select_task_rq(p, task_cpu(p),
/// WF_EXEC)` (line 5553, the class hook alone) for `WakeFlags::EXEC`. With no
/// `WF_TTWU`, `select_task_rq_fair()` neither records a wakee nor wakes affine: it
/// walks the unbroken `SD_BALANCE_FORK` / `SD_BALANCE_EXEC` chain and takes the slow
/// path (`find_idlest_cpu()`), or keeps `prev_cpu`. `waker` is the CPU it runs on
/// and `current` (the parent on fork; on exec p itself, on `p.prev_cpu`). The
/// decision's queue is the local rq when the CPU is `waker.cpu`, else the remote rq's
/// lock (`wake_up_new_task()` locks p's new rq and activates it there). On exec the
/// caller applies what `sched_exec()` does with the answer: nothing when it is the
/// current CPU or not `cpu_active()`, else `stop_one_cpu(migration_cpu_stop)`.
///
/// A wake state file's `fork`/`exec` flag comes here through [`wake_up`], without
/// `WF_TTWU`.
pub fn select_task_rq_new<T: Tracer>(
    env: &WakeEnv,
    s: &SchedState,
    p: &TaskState,
    waker: &Waker,
    wake_flags: WakeFlags,
    t: &mut T,
) -> Decision {
    let mut c = Ctx::new(env, s, p, waker, t);
    let cpu = if wake_flags.contains(WakeFlags::EXEC) && !wake_flags.contains(WakeFlags::FORK) {
        c.select_task_rq_fair(waker, p.prev_cpu, wake_flags)
    } else {
        c.select_task_rq(waker, wake_flags)
    };
    let queue = if cpu == waker.cpu {
        QueuePath::Local
    } else {
        QueuePath::RemoteLock
    };
    c.finish(cpu, queue)
}

/// `ttwu_queue_cond(p, cpu)` as evaluated on `this_cpu`.
pub fn ttwu_queue_cond(
    env: &WakeEnv,
    s: &SchedState,
    p: &TaskState,
    this_cpu: CpuId,
    cpu: CpuId,
) -> bool {
    let mut t = NoTrace;
    let waker = Waker {
        cpu: this_cpu,
        task: None,
        in_task: false,
    };
    let c = Ctx::new(env, s, p, &waker, &mut t);
    c.ttwu_queue_cond(cpu, false).0
}

impl<'a, T: Tracer> Ctx<'a, T> {
    /// `cpu_active(cpu)`: active implies online (core.c's notes above
    /// select_fallback_rq()), so an offline CPU is never active whatever its rq says.
    #[inline]
    fn cpu_active(&self, cpu: CpuId) -> bool {
        self.env.cpu_online(cpu) && self.s.rq(cpu).active
    }

    /// `is_cpu_allowed(p, cpu)` (kernel/sched/core.c v6.8, lines 2479-2502):
    ///
    /// ```c
    /// if (!cpumask_test_cpu(cpu, p->cpus_ptr)) return false;
    /// if (is_migration_disabled(p)) return cpu_online(cpu);
    /// if (!(p->flags & PF_KTHREAD)) return cpu_active(cpu) && task_cpu_possible(cpu, p);
    /// if (kthread_is_per_cpu(p)) return cpu_online(cpu);
    /// if (cpu_dying(cpu)) return false;
    /// return cpu_online(cpu);
    /// ```
    ///
    /// The model has no migrate_disable(), no asymmetric 32-bit tasks
    /// (`task_cpu_possible()` holds) and no CPU half-way through going down
    /// (`cpu_dying()` is false): a user task needs an active CPU, a kernel thread
    /// (`per_cpu_kthread`, the only PF_KTHREAD tasks the model has) an online one.
    fn is_cpu_allowed(&self, cpu: CpuId) -> bool {
        if !self.p.allowed.test_cpu(cpu) {
            return false;
        }
        if !self.p.per_cpu_kthread {
            return self.cpu_active(cpu);
        }
        self.env.cpu_online(cpu)
    }

    /// `select_task_rq()` (kernel/sched/core.c v6.8, lines 3635-3659).
    fn select_task_rq(&mut self, waker: &Waker, wake_flags: WakeFlags) -> CpuId {
        let p = self.p;
        let nr_allowed = p.allowed.weight();
        let cpu = if nr_allowed > 1 {
            self.select_task_rq_fair(waker, p.prev_cpu, wake_flags)
        } else {
            let c = p.allowed.first().unwrap_or(p.prev_cpu);
            self.set_path(WakePath::SingleCpu);
            self.t.step(Site::SingleCpu, || Step::Check {
                func: "select_task_rq",
                condition: format!("p->nr_cpus_allowed == {nr_allowed}: cpumask_any()"),
                outcome: true,
                cpu: Some(c),
            });
            c
        };
        // core.c v6.8 3661-3662: "if (unlikely(!is_cpu_allowed(p, cpu)))
        // cpu = select_fallback_rq(task_cpu(p), p);"
        if !self.is_cpu_allowed(cpu) {
            let (fb, why, widened) = self.select_fallback_rq(p.prev_cpu);
            self.affinity_widened = widened;
            self.set_path(WakePath::Fallback);
            self.t.step(Site::Fallback, || Step::Return {
                func: "select_fallback_rq",
                cpu: Some(fb),
                why: format!("CPU{} is not allowed or not active: {why}", cpu.0),
            });
            return fb;
        }
        cpu
    }

    /// `select_fallback_rq(cpu, p)` (kernel/sched/core.c v6.8, lines 3561-3630), with
    /// `cpu` = `task_cpu(p)`, the CPU p last ran on. In the kernel's order:
    ///
    /// 1. lines 3573-3581: the CPUs of `cpu`'s node (`cpumask_of_node(cpu_to_node(cpu))`),
    ///    lowest number first, the first for which `is_cpu_allowed()` holds (before
    ///    5.15: the first active one in `p->cpus_ptr`). Not the
    ///    LLC: on a node of several LLCs (EPYC NPS1, Kunpeng's CCLs) the answer can be
    ///    in another LLC than `cpu`'s. (`nid == -1`, a node offlined under its CPU,
    ///    does not happen in the model.)
    /// 2. lines 3583-3590: any CPU of `p->cpus_ptr`, lowest first, that
    ///    `is_cpu_allowed()`.
    /// 3. lines 3592-3613, "No more Mr. Nice Guy": `cpuset_cpus_allowed_fallback()`
    ///    widens `p->cpus_ptr` to its cpuset's CPUs (cgroup v2; the model has no
    ///    cpusets, so the root's: every CPU), else `do_set_cpus_allowed(p,
    ///    task_cpu_possible_mask(p))` widens it to every possible CPU; either way the
    ///    loop of step 2 then takes the first CPU `is_cpu_allowed()` accepts under the
    ///    widened mask. The model does not write the widened mask back to the task,
    ///    but says it widened (the third value): `ttwu_queue_cond()` then reads the
    ///    widened `p->cpus_ptr`.
    fn select_fallback_rq(&self, cpu: CpuId) -> (CpuId, &'static str, bool) {
        // 1. "Look for allowed, online CPU in same node." Before 5.15 (97c0054dbe2c)
        // "if (!cpu_active(dest_cpu)) continue; if (cpumask_test_cpu(dest_cpu,
        // p->cpus_ptr)) return dest_cpu;" (core.c v5.12.9): an active CPU even for a
        // per-CPU kthread, which is_cpu_allowed() lets onto any online one.
        let v5_15 = self.release >= Release::new(5, 15);
        if let Some(c) = self.env.node_mask(cpu).iter().find(|&c| {
            if v5_15 {
                self.is_cpu_allowed(c)
            } else {
                self.cpu_active(c) && self.p.allowed.test_cpu(c)
            }
        }) {
            return (c, "first allowed CPU of prev's node", false);
        }
        // 2. "Any allowed, online CPU?"
        if let Some(c) = self.p.allowed.iter().find(|&c| self.is_cpu_allowed(c)) {
            return (c, "first allowed CPU outside prev's node", false);
        }
        // 3. p->cpus_ptr widened to every CPU (the root cpuset / cpu_possible_mask):
        // is_cpu_allowed() then only asks for an active (kthread: online) CPU.
        let widened = (0..self.env.nr_cpus()).map(CpuId).find(|&c| {
            if self.p.per_cpu_kthread {
                self.env.cpu_online(c)
            } else {
                self.cpu_active(c)
            }
        });
        match widened {
            Some(c) => (
                c,
                "no allowed CPU is usable: affinity widened to every CPU",
                true,
            ),
            // No active CPU at all: the kernel would BUG() (line 3611).
            None => (cpu, "no active CPU anywhere (the kernel would BUG())", true),
        }
    }
    /// `ttwu_queue_cond(p, cpu)`; the second value says why. `wf_on_cpu`: the caller
    /// passed WF_ON_CPU (before 6.0, only the on_cpu call of try_to_wake_up() does).
    ///
    /// v6.0 to v6.12 (kernel/sched/core.c v6.8 as in the vivo50kff/linux-6.8 mirror,
    /// lines 3986-4024):
    ///
    /// ```c
    /// if (!cpu_active(cpu)) return false;
    /// if (!cpumask_test_cpu(cpu, p->cpus_ptr)) return false;
    /// if (!cpus_share_cache(smp_processor_id(), cpu)) return true;
    /// if (cpu == smp_processor_id()) return false;
    /// if (!cpu_rq(cpu)->nr_running) return true;
    /// return false;
    /// ```
    ///
    /// The `p->cpus_ptr` test (751d4cbc4387) and the idle-target rule (28156108fecb,
    /// replacing WF_ON_CPU) both arrived in v6.0; v5.12 to v5.19 read
    /// `ttwu_queue_cond(cpu, wake_flags)`:
    ///
    /// ```c
    /// if (!cpu_active(cpu)) return false;
    /// if (!cpus_share_cache(smp_processor_id(), cpu)) return true;
    /// if ((wake_flags & WF_ON_CPU) && cpu_rq(cpu)->nr_running <= 1) return true;
    /// return false;
    /// ```
    ///
    /// with `if (WARN_ON_ONCE(cpu == smp_processor_id())) return false;` in
    /// ttwu_queue_wakelist() after it (the `cpu == this` test below). After
    /// `select_fallback_rq()` widened the affinity, `p->cpus_ptr` holds the chosen CPU.
    fn ttwu_queue_cond(&self, cpu: CpuId, wf_on_cpu: bool) -> (bool, &'static str) {
        let rq = self.s.rq(cpu);
        let v6_0 = self.release >= Release::new(6, 0);
        if !self.cpu_active(cpu) {
            return (false, "target CPU not active");
        }
        if v6_0 && !self.affinity_widened && !self.p.allowed.test_cpu(cpu) {
            return (false, "target not in p's allowed CPUs");
        }
        let share = if self.has(Patch::TtwuL2c) {
            self.env.cpus_share_l2c(self.this, cpu)
        } else {
            self.share_cache(self.this, cpu)
        };
        if !share {
            return (
                true,
                if self.has(Patch::TtwuL2c) {
                    "waker and target do not share an L2 (seed 03): queue remotely"
                } else {
                    "waker and target do not share the LLC: queue remotely"
                },
            );
        }
        if cpu == self.this {
            return (false, "target is the waker's CPU");
        }
        // cpu_rq(cpu)->nr_running: the wakees already on cpu's wake list are not on
        // its rq yet (sched_ttwu_pending(), core.c v6.8 3885-3918, activates them), so a
        // second wake-up before the target ran it finds an idle target again and joins
        // the list (no IPI: rq->ttwu_pending is set).
        let nr_running = rq.nr_running;
        if v6_0 {
            // 28156108fecb: an idle target does its own enqueue.
            if nr_running == 0 {
                return (
                    true,
                    "target shares cache but is idle: let it enqueue itself",
                );
            }
        } else if wf_on_cpu && nr_running <= 1 {
            // Before 6.0: WF_ON_CPU and the target about to go idle.
            return (true, "p still on_cpu and target nearly idle");
        }
        (false, "target shares cache and is busy: take its rq lock")
    }

    /// `ttwu_queue_wakelist(p, cpu, wake_flags)`: `Some(path)` when the wake-up goes on
    /// the wakelist; `wf_on_cpu` as for [`Ctx::ttwu_queue_cond`].
    fn ttwu_queue_wakelist(&mut self, cpu: CpuId, wf_on_cpu: bool) -> Option<QueuePath> {
        if !self.env.patches.features.ttwu_queue {
            return None;
        }
        let (cond, why) = self.ttwu_queue_cond(cpu, wf_on_cpu);
        self.t.step(Site::QueueCond, || Step::Check {
            func: "ttwu_queue_cond",
            condition: format!("queue on CPU{}'s wakelist: {why}", cpu.0),
            outcome: cond,
            cpu: Some(cpu),
        });
        if !cond {
            return None;
        }
        let rq = self.s.rq(cpu);
        // An IPI only for the first entry of an empty list, and not when the idle task
        // polls (set_nr_if_polling()).
        let ipi = !(rq.ttwu_pending || (rq.curr_is_idle && rq.polling));
        let path = QueuePath::Wakelist { ipi };
        self.t.step(Site::QueueWakelist, || Step::Queue {
            path,
            why: if ipi {
                "send_call_function_single_ipi()".into()
            } else if rq.ttwu_pending {
                "wakelist already pending: no new IPI".into()
            } else {
                "target idle and polling: no IPI".into()
            },
        });
        Some(path)
    }
}
