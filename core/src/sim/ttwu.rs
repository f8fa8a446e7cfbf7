//! The wake-up (`try_to_wake_up()`, kernel/sched/core.c) and its effects.
//!
//! ```text
//!   wake(p, waker, cpu)
//!     sync_wake_view()   the wake-up path's view of p and the waker, brought to now
//!     decide             wakeup::wake_up(): select_task_rq() and the queue path
//!     apply_effects()    what the kernel writes while deciding
//!     charge_select()    the waker pays remote rq reads and the sd_llc_shared line
//!     ttwu_queue()       wakelist (IPI or polling) or the remote rq lock
//!     ttwu_do_activate() metrics, the wakee's cache-distance debt, enqueue
//!     kick_target()      wakeup_preempt() on a running target, wake an idle one
//! ```

use crate::cpumask::CpuId;
use crate::wakeup::{self, NoTrace, QueuePath, WakeFlags, Waker};

use super::event::Event;
use super::{Block, Loc, Mode, Simulator};

impl Simulator {
    /// `try_to_wake_up()` of blocked task `p` by `waker` (a task running on `cpu`) or,
    /// with `waker == None`, from interrupt context on `cpu` (a timer).
    pub(super) fn wake(&mut self, p: u32, waker: Option<u32>, cpu: u32) {
        let now = self.now;
        let pi = p as usize;
        debug_assert_eq!(self.tasks[pi].loc, Loc::Blocked);
        self.tasks[pi].block = Block::None;
        let prev = self.tasks[pi].last_cpu;
        {
            let (load, util) = {
                let t = &self.tasks[pi];
                (t.load.peek(now.ns(), 0), t.util.peek(now.ns(), 0))
            };
            let v = self.views[pi].task.as_mut().expect("views hold tasks");
            v.load = load;
            v.util = util;
            v.prev_cpu = CpuId(prev);
        }
        if let Some(k) = waker {
            let ki = k as usize;
            let load = self.tasks[ki].load.peek(now.ns(), 1024);
            let in_task = self.tasks[ki].wakes_in_task;
            let w = &mut self.views[ki];
            w.cpu = CpuId(cpu);
            w.in_task = in_task;
            w.task.as_mut().expect("views hold tasks").load = load;
        }
        self.state.jiffies = now.ns() / self.cost.params.tick_ns;
        let flags = if waker.is_some() {
            WakeFlags::TTWU.union(WakeFlags::SYNC)
        } else {
            WakeFlags::TTWU
        };
        let irq = Waker {
            cpu: CpuId(cpu),
            task: None,
            in_task: false,
        };
        let d = {
            let pv = self.views[pi].task.as_ref().expect("views hold tasks");
            let wv = match waker {
                Some(k) => &self.views[k as usize],
                None => &irq,
            };
            wakeup::wake_up(&self.env, &self.state, pv, wv, flags, &mut NoTrace)
        };
        // Apply what the kernel wrote while deciding.
        if let Some(r) = d.effects.recent_used_cpu {
            self.views[pi]
                .task
                .as_mut()
                .expect("views hold tasks")
                .recent_used_cpu = r;
        }
        if let (Some(k), Some((flips, ts, last))) = (waker, d.effects.waker_wakee) {
            let w = self.views[k as usize]
                .task
                .as_mut()
                .expect("views hold tasks");
            w.wakee_flips = flips;
            w.wakee_flip_decay_ts = ts;
            w.last_wakee = Some(last);
        }
        if let Some(llc) = d.effects.clear_idle_cores {
            if let Some(ls) = self.state.llc_shared.get_mut(llc.idx()) {
                ls.has_idle_cores = false;
            }
        }
        let target = d.cpu.0;
        // Charge the waker's side of the path.
        let p_ = &self.cost.params;
        let (ipi_send, ipi_recv) = (p_.ipi_send_ns, p_.ipi_recv_ns);
        let mut waker_ns = d.costs.remote_rq_reads as u64 * self.cost.probe_ns(CpuId(cpu));
        if d.costs.llc_shared_reads > 0 {
            waker_ns += self.llc_line_read(cpu, target);
        }
        if d.effects.sis_prop_scan {
            let scan = waker_ns;
            let llc = self.llc_id_of[cpu as usize] as usize;
            let sp = &mut self.state.sis_prop;
            if let Some(x) = sp.wake_avg_idle_ns.get_mut(cpu as usize) {
                *x -= scan.min(*x);
            }
            if let Some(x) = sp.avg_scan_cost_ns.get_mut(llc) {
                // update_avg(): 1/8 EWMA.
                let a = *x as i64 + (scan as i64 - *x as i64) / 8;
                *x = a.max(0) as u64;
            }
        }
        let target_mode = self.cpus[target as usize].mode;
        let target_idle = target_mode != Mode::Running;
        let mut need_ipi = false;
        let mut wake_delay_ns = 0;
        match d.queue {
            QueuePath::Local => {
                if self.measuring {
                    self.metrics.wake_local += 1;
                }
            }
            QueuePath::Wakelist { ipi } => {
                self.state
                    .update_rq(CpuId(target), |rq| rq.ttwu_pending = true);
                if ipi {
                    waker_ns += ipi_send;
                    need_ipi = true;
                    if self.measuring {
                        self.metrics.wake_ipi += 1;
                    }
                } else if self.measuring {
                    self.metrics.wake_polling += 1;
                }
                // sched_ttwu_pending(): the target enqueues under its own lock.
                let hold = self.cost.params.rq_lock_hold_ns;
                let c = &mut self.cpus[target as usize];
                c.lock_free_at = c.lock_free_at.max(now + ipi_recv) + hold;
                wake_delay_ns += hold;
            }
            QueuePath::RemoteLock => {
                let (wait, hold) = self.take_remote_lock(cpu, target);
                waker_ns += wait + hold;
                wake_delay_ns += wait + hold;
                if self.measuring {
                    self.metrics.wake_remote_lock += 1;
                    self.metrics.lock_wait.record(wait);
                }
                if target_idle && !self.state.rqs[target as usize].polling {
                    // resched_curr() on an idle, non-polling CPU: smp_send_reschedule().
                    waker_ns += ipi_send;
                    need_ipi = true;
                }
            }
        }
        match waker {
            Some(k) => self.tasks[k as usize].debt_ns += waker_ns,
            None => {
                if self.cpus[cpu as usize].mode == Mode::Running {
                    self.cpus[cpu as usize].stolen_ns += waker_ns;
                }
            }
        }
        // The wakee: placement metrics, cache-distance cost, enqueue.
        let src = if waker.is_some() { cpu } else { prev };
        let dist = self.cost.distance(CpuId(src), CpuId(target));
        if self.measuring {
            let m = &mut self.metrics;
            m.wakeups += 1;
            m.placement[dist as usize] += 1;
            m.cpus_probed.record(d.costs.cpus_probed as u64);
            if target != prev {
                m.migrations_wakeup += 1;
            }
        }
        let data_ns = self.cost.wake_data_ns_at(CpuId(src), CpuId(target), dist);
        self.tasks[pi].debt_ns += data_ns;
        self.tasks[pi].wake_at = now;
        self.enqueue(p, target);
        // Get the target CPU to schedule.
        match target_mode {
            Mode::Running => {
                if need_ipi && target != cpu {
                    self.cpus[target as usize].stolen_ns += ipi_recv;
                }
                if self.should_preempt(target, p) {
                    if waker.is_some() && target == cpu {
                        self.cpus[cpu as usize].need_resched = true;
                    } else {
                        let delay = if target == cpu {
                            0
                        } else {
                            ipi_send + ipi_recv
                        };
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
                    self.cost.params.idle_states[c.cstate as usize].exit_latency_ns
                } else {
                    0
                };
                let ipi = if need_ipi { ipi_send + ipi_recv } else { 0 };
                let delay = wake_delay_ns + ipi + exit;
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
            Mode::Waking => {}
        }
    }

    /// The waker takes `target`'s rq lock (`ttwu_queue()` → `rq_lock()`): FIFO queueing
    /// behind the current holder, then the hold time plus the rq lines brought over.
    fn take_remote_lock(&mut self, cpu: u32, target: u32) -> (u64, u64) {
        let now = self.now;
        let p = &self.cost.params;
        let hold = p.rq_lock_hold_ns + p.rq_lines * self.cost.c2c_ns(CpuId(cpu), CpuId(target));
        let c = &mut self.cpus[target as usize];
        let start = c.lock_free_at.max(now);
        c.lock_free_at = start + hold;
        (start.since(now), hold)
    }

    /// A read of the `sd_llc_shared` line of `target`'s LLC by `cpu`.
    fn llc_line_read(&mut self, cpu: u32, target: u32) -> u64 {
        let llc = self.llc_of[target as usize] as usize;
        let key = cpu as usize * self.n_llcs + llc;
        if self.measuring {
            self.metrics.llc_line_reads += 1;
        }
        let line = &self.llc_lines[llc];
        if self.seen[key] == line.version {
            return 0; // still in this CPU's cache
        }
        let cost = self.line_transfer(cpu, llc);
        self.seen[key] = self.llc_lines[llc].version;
        if self.measuring {
            self.metrics.llc_line_misses += 1;
        }
        cost
    }

    /// A write of the own LLC's `sd_llc_shared` line (nr_busy_cpus on nohz idle entry
    /// and exit). Returns the writer's cost.
    pub(super) fn llc_line_access(&mut self, cpu: u32, _write: bool) -> u64 {
        let llc = self.llc_of[cpu as usize] as usize;
        let cost = if self.llc_lines[llc].last_writer == cpu
            && self.seen[cpu as usize * self.n_llcs + llc] == self.llc_lines[llc].version
        {
            0
        } else {
            self.line_transfer(cpu, llc)
        };
        let line = &mut self.llc_lines[llc];
        line.version = line.version.wrapping_add(1);
        line.last_writer = cpu;
        self.seen[cpu as usize * self.n_llcs + llc] = line.version;
        cost
    }

    /// Moves the line to `cpu`: one core-to-core transfer from its last writer, queued
    /// behind transfers in flight (a contended line serialises its owners).
    fn line_transfer(&mut self, cpu: u32, llc: usize) -> u64 {
        let now = self.now;
        let from = self.llc_lines[llc].last_writer;
        let xfer = self.cost.c2c_ns(CpuId(from), CpuId(cpu));
        let line = &mut self.llc_lines[llc];
        let start = line.busy_until.max(now);
        line.busy_until = start + xfer;
        start.since(now) + xfer
    }
}
