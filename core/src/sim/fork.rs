//! New tasks (kernel/sched/core.c `sched_fork()`, `wake_up_new_task()`) and the
//! workload's process tree they follow.
//!
//! ```text
//!   parent runs Op::Fork on cpu ─▶ wake_up_new_task(child)
//!       p->recent_used_cpu = cpu (sched_fork() set task_cpu(p) = the parent's CPU)
//!       select_task_rq(p, cpu, WF_FORK) → select_task_rq_fair(SD_BALANCE_FORK)
//!                                        → sched_balance_find_dst_cpu()
//!       __task_rq_lock(target): the parent takes the target's rq lock (and sends the
//!                               IPI an idle, non-polling target needs)
//!       activate_task() → place_entity(): vlag 0; EEVDF deadline after half a
//!                               slice from 6.12 (ENQUEUE_INITIAL), a whole one on
//!                               6.6-6.11 (ENQUEUE_NOCLOCK only); CFS START_DEBIT
//!       wakeup_preempt(rq, p, WF_FORK)
//! ```
//!
//! `sysctl_sched_child_runs_first` is 0 (its default, and the only behaviour after
//! 6.10 removed it): the child never swaps vruntime with the parent
//! (`task_fork_fair()`); whether it runs first is `wakeup_preempt()`'s call.

use crate::cpumask::CpuId;
use crate::workload::{Op, TaskSpec};

use super::ttwu::Queued;
use super::{Block, SimError, Simulator};

/// The process tree must be one: every parent exists, no task is its own ancestor,
/// a task with children forks and one that forks has children, and background tasks
/// stand alone.
pub(super) fn validate_tree(specs: &[&TaskSpec]) -> Result<(), SimError> {
    let n = specs.len();
    let bad = |m: String| Err(SimError::Workload(m));
    let mut has_children = vec![false; n];
    for (i, s) in specs.iter().enumerate() {
        if let Some(p) = s.parent {
            if p as usize >= n {
                return bad(format!("task {i}'s parent, task {p}, does not exist"));
            }
            if s.background || specs[p as usize].background {
                return bad(format!(
                    "task {i}: background tasks neither fork nor are forked"
                ));
            }
            has_children[p as usize] = true;
        }
    }
    // Each chain of parents must reach a task without one within n steps.
    // depth: 0 = unknown, 1 = on the chain being followed, 2 = reaches a root.
    let mut state = vec![0u8; n];
    let mut chain = Vec::new();
    for i in 0..n {
        let mut t = i;
        while state[t] == 0 {
            state[t] = 1;
            chain.push(t);
            match specs[t].parent {
                Some(p) => t = p as usize,
                None => break,
            }
        }
        if state[t] == 1 && specs[t].parent.is_some() {
            return bad(format!(
                "the process tree has a cycle: task {t} is its own ancestor"
            ));
        }
        for &c in &chain {
            state[c] = 2;
        }
        chain.clear();
    }
    for (i, s) in specs.iter().enumerate() {
        let forks = s.program.iter().any(|op| matches!(op, Op::Fork));
        let wakes_all = s.program.iter().any(|op| {
            matches!(
                op,
                Op::SendChildren | Op::PollBarrier(_) | Op::ReleaseBarrier
            )
        });
        if s.parent.is_none() && s.program.contains(&Op::WaitBarrier) {
            return bad(format!(
                "task {i} waits at its parent's barrier but has no parent"
            ));
        }
        if has_children[i] && !forks {
            return bad(format!("task {i} has children but never forks"));
        }
        if (forks || wakes_all) && !has_children[i] {
            return bad(format!(
                "task {i} forks, wakes or holds a barrier for its children but has none"
            ));
        }
    }
    Ok(())
}

impl Simulator {
    /// `Op::Fork` of task `parent` running on `cpu`: its next child is created.
    /// Returns false (and ends the run with an error) if it has none left.
    pub(super) fn fork_next(&mut self, parent: u32, cpu: u32) -> bool {
        let k = self.forked[parent as usize] as usize;
        let Some(&child) = self.children[parent as usize].get(k) else {
            self.error = Some(SimError::Workload(format!(
                "task {parent} forks more often than it has children ({k})"
            )));
            return false;
        };
        self.forked[parent as usize] += 1;
        self.wake_up_new_task(child, parent, cpu);
        true
    }

    /// `wake_up_new_task()` (core.c, v6.8) of `child`, forked by `parent` on `cpu`.
    pub(super) fn wake_up_new_task(&mut self, child: u32, parent: u32, cpu: u32) {
        debug_assert_eq!(self.tasks[child as usize].block, Block::Unborn);
        let mask = self.views[child as usize]
            .task
            .as_ref()
            .expect("views hold tasks")
            .allowed
            .clone();
        // select_task_rq(p, task_cpu(p) = the parent's CPU, WF_FORK).
        let target = self.find_idlest_cpu_fork(cpu, &mask);
        self.place_new(child, target, CpuId(cpu));
        self.post_init_entity_util_avg(child, target);
        // __task_rq_lock(): the parent takes the target's rq lock; resched_curr() of an
        // idle, non-polling remote CPU sends it an IPI.
        let target_mode = self.cpus[target as usize].mode;
        let mut q = Queued::default();
        if target != cpu {
            let (wait, hold) = self.take_remote_lock(cpu, target);
            q.waker_ns += wait + hold;
            q.delay_ns += wait + hold;
            q.lock_wait_ns = wait;
            if self.idle_resched_needs_ipi(target, target_mode) {
                q.waker_ns += self.cost.params.ipi_send_ns;
                q.need_ipi = true;
            }
        }
        // activate_task(rq, p, ENQUEUE_NOCLOCK, from 6.12 | ENQUEUE_INITIAL):
        // place_entity() of a new task; the task group's line under the lock
        // (tg_load.rs) lengthens its hold.
        self.tg_capture(cpu, self.now.ns() + q.lock_wait_ns, target);
        self.enqueue(child, target);
        let (a, b) = self.tg_captured();
        q.waker_ns += a + b;
        q.delay_ns += a + b;
        if target != cpu {
            self.cpus[target as usize].lock.extend_last(a + b);
        }
        self.tasks[parent as usize].debt_ns += q.waker_ns;
        // wakeup_preempt(rq, p, WF_FORK).
        self.kick_target(child, Some(parent), cpu, target, target_mode, q);
    }

    /// The new task's CPU and the wake-up path's view of it: `task_cpu(p)` = `cpu`,
    /// `p->recent_used_cpu` = `recent` (the CPU it was forked on; `sched_fork()`).
    pub(super) fn place_new(&mut self, t: u32, cpu: u32, recent: CpuId) {
        let task = &mut self.tasks[t as usize];
        task.block = Block::None;
        task.last_cpu = cpu;
        self.start_cpu[t as usize] = cpu;
        let v = self.views[t as usize]
            .task
            .as_mut()
            .expect("views hold tasks");
        v.prev_cpu = CpuId(cpu);
        v.recent_used_cpu = recent;
    }
}
