//! The wake-up path itself. Each function names its kernel twin; differences between
//! releases and the seed patches are gated where the kernel's code differs.

use crate::cpumask::{CpuId, CpuMask, WrapWalk};
use crate::patch::Patch;
use crate::release::Release;
use crate::sched_domain::SdFlags;

use super::trace::{Reject, Step, Tracer};
use super::{
    Costs, Decision, Effects, QueuePath, SchedState, TaskState, WakeEnv, WakeFlags, WakePath, Waker,
};

/// Everything one wake-up decision carries along.
struct Ctx<'a, T: Tracer> {
    env: &'a WakeEnv,
    s: &'a SchedState,
    p: &'a TaskState,
    this: CpuId,
    /// `task_h_load(current)`.
    waker_load: u64,
    /// `is_per_cpu_kthread(current) && in_task()`.
    waker_kthread: bool,
    release: Release,
    costs: Costs,
    effects: Effects,
    /// Which return of the selection chose the CPU (set at each return that decides).
    path: WakePath,
    t: &'a mut T,
}

/// `try_to_wake_up()`'s placement part: the on_cpu wakelist shortcut, then
/// `select_task_rq()` and `ttwu_queue()`. Pure: returns the decision and the writes.
pub fn wake_up<T: Tracer>(
    env: &WakeEnv,
    s: &SchedState,
    p: &TaskState,
    waker: &Waker,
    wake_flags: WakeFlags,
    t: &mut T,
) -> Decision {
    let mut c = Ctx::new(env, s, p, waker, t);
    // "If the owning (remote) CPU is still in the middle of schedule() with this task
    // as prev, ... queue the wakeup on its wakelist."
    if p.on_cpu {
        if let Some(path) = c.ttwu_queue_wakelist(p.prev_cpu) {
            c.t.step(|| Step::Queue {
                path,
                why: "p is still on_cpu: queued to its old CPU without selecting".into(),
            });
            c.path = WakePath::OnCpu;
            return c.finish(p.prev_cpu, path);
        }
    }
    let cpu = c.select_task_rq(waker, wake_flags.union(WakeFlags::TTWU));
    let path = match c.ttwu_queue_wakelist(cpu) {
        Some(path) => path,
        None if cpu == c.this => {
            c.t.step(|| Step::Queue {
                path: QueuePath::Local,
                why: "target is the waker's CPU: lock own rq".into(),
            });
            QueuePath::Local
        }
        None => {
            c.t.step(|| Step::Queue {
                path: QueuePath::RemoteLock,
                why: "ttwu_queue_cond() said no (or TTWU_QUEUE off): lock the remote rq".into(),
            });
            QueuePath::RemoteLock
        }
    };
    c.finish(cpu, path)
}

/// `ttwu_queue_cond(p, cpu)` as evaluated on `this_cpu`.
pub fn ttwu_queue_cond(
    env: &WakeEnv,
    s: &SchedState,
    p: &TaskState,
    this_cpu: CpuId,
    cpu: CpuId,
) -> bool {
    let mut t = super::NoTrace;
    let waker = Waker {
        cpu: this_cpu,
        task: None,
        in_task: false,
    };
    let c = Ctx::new(env, s, p, &waker, &mut t);
    c.ttwu_queue_cond(cpu, false).0
}

/// `update_idle_cpu_scan()` (kernel/sched/fair.c v6.8, lines 10480-10549): the new
/// `nr_idle_scan` of the LLC whose first CPU is `llc_id`, given the sum of its CPUs'
/// CFS util. Called from periodic and idle balancing at the LLC level only (never
/// newidle), with SIS_UTIL on.
///
/// C types: `llc_weight` and `pct` are `int`, `x`, `y`, `tmp` are `u64`; `x * x * pct *
/// pct` is a `u64` product (wrapping), `min_t(long, tmp, 1024)` compares as `long`,
/// and the result is stored truncated to `int` (`(int)y`): returned here as that
/// `int`'s bits, which `LlcShared::nr_idle_scan` holds.
pub fn update_idle_cpu_scan(env: &WakeEnv, llc_id: CpuId, sum_util: u64) -> u32 {
    let cd = env.domains.cpu(llc_id);
    let Some(llc) = cd.llc() else {
        return 0;
    };
    let llc_weight = cd.sd_llc_size as u64;
    let pct = llc.imbalance_pct as i32 as i64 as u64;
    // x = sum_util / llc_weight; tmp = x^2 * pct^2 / (10000 * 1024), capped at 1024;
    // y = (1024 - tmp) * llc_weight / 1024 — integer division at each step as in C.
    let x = sum_util / llc_weight;
    let tmp = x.wrapping_mul(x).wrapping_mul(pct).wrapping_mul(pct) / (10000 * 1024);
    let tmp = (tmp as i64).min(1024) as u64;
    let y = 1024u64.wrapping_sub(tmp).wrapping_mul(llc_weight) / 1024;
    y as i32 as u32
}

impl<'a, T: Tracer> Ctx<'a, T> {
    fn new(
        env: &'a WakeEnv,
        s: &'a SchedState,
        p: &'a TaskState,
        waker: &Waker,
        t: &'a mut T,
    ) -> Self {
        Ctx {
            env,
            s,
            p,
            this: waker.cpu,
            waker_load: waker.task.as_ref().map_or(0, |t| t.load),
            waker_kthread: waker.in_task && waker.task.as_ref().is_some_and(|t| t.per_cpu_kthread),
            release: env.patches.release,
            costs: Costs::default(),
            effects: Effects::default(),
            path: WakePath::NothingIdle,
            t,
        }
    }

    fn finish(self, cpu: CpuId, queue: QueuePath) -> Decision {
        Decision {
            cpu,
            queue,
            path: T::PATH.then_some(self.path),
            costs: self.costs,
            effects: self.effects,
        }
    }

    /// Notes which return chose the CPU, when the tracer wants it (`Tracer::PATH`):
    /// the simulator's untraced hot path does not pay for it.
    #[inline(always)]
    fn set_path(&mut self, p: WakePath) {
        if T::PATH {
            self.path = p;
        }
    }

    fn has(&self, patch: Patch) -> bool {
        self.env.patches.has(patch)
    }

    /// Counts a read of another CPU's runqueue line.
    #[inline]
    fn touch(&mut self, cpu: CpuId) {
        if cpu != self.this {
            self.costs.remote_rq_reads += 1;
        }
    }

    /// `available_idle_cpu()`.
    #[inline]
    fn available_idle_cpu(&self, cpu: CpuId) -> bool {
        self.s.rq(cpu).available_idle_cpu()
    }

    /// `sched_idle_cpu()`: only SCHED_IDLE tasks queued.
    #[inline]
    fn sched_idle_cpu(&self, cpu: CpuId) -> bool {
        self.s.rq(cpu).sched_idle_cpu()
    }

    #[inline]
    fn idle_ish(&mut self, cpu: CpuId) -> bool {
        self.touch(cpu);
        self.available_idle_cpu(cpu) || self.sched_idle_cpu(cpu)
    }

    /// `sched_cpu_cookie_match()`: the core runs p's cookie (or core scheduling is off).
    fn sched_cpu_cookie_match(&self, cpu: CpuId) -> bool {
        !self.s.core_sched_enabled || self.s.rq(cpu).core_cookie == self.p.cookie
    }

    /// `sched_core_cookie_match()`: as above, or the whole core is idle.
    fn sched_core_cookie_match(&self, cpu: CpuId) -> bool {
        if !self.s.core_sched_enabled {
            return true;
        }
        let idle_core = self
            .env
            .smt_siblings(cpu)
            .iter()
            .all(|&c| self.available_idle_cpu(c));
        idle_core || self.s.rq(cpu).core_cookie == self.p.cookie
    }

    /// `__select_idle_cpu(cpu, p)`.
    fn select_idle_cpu_one(&mut self, func: &'static str, cpu: CpuId) -> Option<CpuId> {
        self.costs.cpus_probed += 1;
        let idle = self.idle_ish(cpu);
        let verdict = if !idle {
            Some(Reject::Busy)
        } else if !self.sched_cpu_cookie_match(cpu) {
            Some(Reject::CookieMismatch)
        } else {
            None
        };
        self.probe(func, cpu, verdict);
        verdict.is_none().then_some(cpu)
    }

    /// `sched_asym_cpucap_active()`.
    fn asym_active(&self) -> bool {
        self.env.domains.sched_asym_cpucapacity
    }

    /// `util_fits_cpu()` without uclamp (kernel/sched/fair.c v6.8, lines 4962-4977):
    /// `fits_capacity(util, capacity)`, the macro of line 108, `(cap) * 1280 < (max) *
    /// 1024` on two `unsigned long`s: both products wrap modulo 2^64.
    fn util_fits_cpu(&self, cpu: CpuId) -> bool {
        self.p.util.wrapping_mul(1280) < self.s.rq(cpu).capacity.wrapping_mul(1024)
    }

    /// `asym_fits_cpu()`.
    fn asym_fits_cpu(&self, cpu: CpuId) -> bool {
        !self.asym_active() || self.util_fits_cpu(cpu)
    }

    fn share_cache(&self, a: CpuId, b: CpuId) -> bool {
        self.env.cpus_share_cache(a, b)
    }

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
            self.t.step(|| Step::Check {
                func: "select_task_rq",
                condition: format!("p->nr_cpus_allowed == {nr_allowed}: cpumask_any()"),
                outcome: true,
                cpu: Some(c),
            });
            c
        };
        // core.c:3655-3656: "if (unlikely(!is_cpu_allowed(p, cpu)))
        // cpu = select_fallback_rq(task_cpu(p), p);"
        if !self.is_cpu_allowed(cpu) {
            let (fb, why) = self.select_fallback_rq(p.prev_cpu);
            self.set_path(WakePath::Fallback);
            self.t.step(|| Step::Return {
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
    ///    lowest number first, the first for which `is_cpu_allowed()` holds. Not the
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
    ///    widened mask. The model does not write the widened mask back to the task.
    fn select_fallback_rq(&self, cpu: CpuId) -> (CpuId, &'static str) {
        // 1. "Look for allowed, online CPU in same node."
        if let Some(c) = self
            .env
            .node_mask(cpu)
            .iter()
            .find(|&c| self.is_cpu_allowed(c))
        {
            return (c, "first allowed CPU of prev's node");
        }
        // 2. "Any allowed, online CPU?"
        if let Some(c) = self.p.allowed.iter().find(|&c| self.is_cpu_allowed(c)) {
            return (c, "first allowed CPU outside prev's node");
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
            Some(c) => (c, "no allowed CPU is usable: affinity widened to every CPU"),
            // No active CPU at all: the kernel would BUG() (line 3611).
            None => (cpu, "no active CPU anywhere (the kernel would BUG())"),
        }
    }

    /// `record_wakee(p)` (kernel/sched/fair.c v6.8, lines 6951-6966), run in the
    /// waker; returns the waker's updated flips. C types: `jiffies` and
    /// `wakee_flip_decay_ts` are `unsigned long`, compared with `time_after()` (a
    /// signed difference, so it survives jiffies wrapping); `wakee_flips` is
    /// `unsigned int` and `wakee_flips++` wraps.
    fn record_wakee(&mut self, waker: &Waker) -> u32 {
        let Some(cur) = &waker.task else {
            return 0;
        };
        let mut flips = cur.wakee_flips;
        let mut decay_ts = cur.wakee_flip_decay_ts;
        // "Only decay a single time": time_after(jiffies, decay_ts + HZ), i.e.
        // (long)((decay_ts + HZ) - jiffies) < 0.
        let until_decay = decay_ts
            .wrapping_add(self.s.hz)
            .wrapping_sub(self.s.jiffies);
        if (until_decay as i64) < 0 {
            flips >>= 1;
            decay_ts = self.s.jiffies;
        }
        if cur.last_wakee != Some(self.p.id) {
            flips = flips.wrapping_add(1);
        }
        self.effects.waker_wakee = Some((flips, decay_ts, self.p.id));
        flips
    }

    /// `wake_wide(p)` (kernel/sched/fair.c v6.8, lines 6985-6996): many-to-one wakers
    /// spread instead of pulling.
    ///
    /// ```c
    /// unsigned int master = current->wakee_flips;
    /// unsigned int slave = p->wakee_flips;
    /// int factor = __this_cpu_read(sd_llc_size);
    /// if (master < slave) swap(master, slave);
    /// if (slave < factor || master < slave * factor) return 0;
    /// return 1;
    /// ```
    ///
    /// `factor` is converted to `unsigned int` in both comparisons, and
    /// `slave * factor` is an `unsigned int` product that wraps modulo 2^32: with
    /// both flips at 2^28 and an LLC of 16 it is 0, and the wake-up goes wide.
    fn wake_wide(&mut self, waker_flips: u32) -> bool {
        let factor = self.env.top(self.this).sd_llc_size;
        let (mut master, mut slave) = (waker_flips, self.p.wakee_flips);
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        let wide = !(slave < factor || master < slave.wrapping_mul(factor));
        self.t.step(|| Step::Check {
            func: "wake_wide",
            condition: format!(
                "wakee_flips {waker_flips} (waker) / {} (wakee) against sd_llc_size {factor}: wake wide",
                self.p.wakee_flips
            ),
            outcome: wide,
            cpu: None,
        });
        wide
    }

    /// `select_task_rq_fair(p, prev_cpu, wake_flags)`.
    fn select_task_rq_fair(&mut self, waker: &Waker, prev: CpuId, wake_flags: WakeFlags) -> CpuId {
        let sync =
            wake_flags.contains(WakeFlags::SYNC) && !waker.task.as_ref().is_some_and(|t| t.exiting);
        let cpu = self.this;
        let mut new_cpu = prev;
        let mut want_affine = false;
        let sd_flag = SdFlags(wake_flags.0 & 0xF);
        self.t.step(|| Step::Enter {
            func: "select_task_rq_fair",
            detail: format!(
                "p={}, prev_cpu={}, this_cpu={}, sync={}",
                self.p.id.0, prev.0, cpu.0, sync
            ),
        });
        if wake_flags.contains(WakeFlags::TTWU) {
            let flips = self.record_wakee(waker);
            if wake_flags.contains(WakeFlags::CURRENT_CPU) && self.p.allowed.test_cpu(cpu) {
                self.set_path(WakePath::CurrentCpu);
                self.t.step(|| Step::Return {
                    func: "select_task_rq_fair",
                    cpu: Some(cpu),
                    why: "WF_CURRENT_CPU".into(),
                });
                return cpu;
            }
            // EAS (find_energy_efficient_cpu) needs an energy model: not modelled.
            want_affine = !self.wake_wide(flips) && self.p.allowed.test_cpu(cpu);
        }
        let mut slow_sd: Option<usize> = None;
        for (i, tmp) in self.env.sd_walk(cpu).iter().enumerate() {
            if want_affine && tmp.flags.contains(SdFlags::WAKE_AFFINE) && tmp.span.test_cpu(prev) {
                self.t.step(|| Step::Check {
                    func: "select_task_rq_fair",
                    condition: format!(
                        "domain {} ({}) has SD_WAKE_AFFINE and spans prev_cpu {}",
                        self.env.domains.cpu(cpu).domains[i].name,
                        tmp.span,
                        prev.0
                    ),
                    outcome: true,
                    cpu: Some(prev),
                });
                if cpu != prev {
                    new_cpu = self.wake_affine(i, cpu, prev, sync);
                }
                slow_sd = None;
                break;
            }
            if tmp.flags.intersects(sd_flag) {
                slow_sd = Some(i);
            } else if !want_affine {
                break;
            }
        }
        let target = if let Some(i) = slow_sd {
            self.set_path(WakePath::SlowPath);
            self.find_idlest_cpu(i, cpu, prev)
        } else if wake_flags.contains(WakeFlags::TTWU) {
            self.select_idle_sibling(prev, new_cpu)
        } else {
            self.set_path(WakePath::Affine);
            new_cpu
        };
        self.t.step(|| Step::Return {
            func: "select_task_rq_fair",
            cpu: Some(target),
            why: if slow_sd.is_some() {
                "slow path".into()
            } else {
                "fast path".into()
            },
        });
        target
    }

    /// The slow path (`find_idlest_cpu()`, renamed `sched_balance_find_dst_cpu()` in
    /// 6.10) for fork/exec or SD_BALANCE_WAKE: simplified to "the least-loaded group,
    /// then its idle CPU of lowest number, else its least-loaded CPU", at the widest
    /// domain found. The kernel's group statistics (group_type, idle_cpus,
    /// avg_load with imbalance margins) are not modelled.
    fn find_idlest_cpu(&mut self, sd_idx: usize, cpu: CpuId, prev: CpuId) -> CpuId {
        let sd = &self.env.domains.cpu(cpu).domains[sd_idx];
        let mut best: Option<(u64, &crate::sched_domain::SchedGroup)> = None;
        for g in &sd.groups {
            if !g.span.intersects(&self.p.allowed) {
                continue;
            }
            let load: u64 = g
                .span
                .iter()
                .map(|c| self.s.rq(c).load_avg * 1024 / g.capacity.max(1))
                .sum();
            if best.is_none_or(|(l, _)| load < l) {
                best = Some((load, g));
            }
        }
        let Some((_, g)) = best else {
            return prev;
        };
        let cands: Vec<CpuId> = g.span.and(&self.p.allowed).iter().collect();
        for &c in &cands {
            self.touch(c);
        }
        let pick = cands
            .iter()
            .copied()
            .find(|&c| self.available_idle_cpu(c))
            .or_else(|| cands.iter().copied().min_by_key(|&c| self.s.rq(c).load_avg))
            .unwrap_or(prev);
        self.t.step(|| Step::Return {
            func: "find_idlest_cpu",
            cpu: Some(pick),
            why: format!("least-loaded group {} of {}", g.span, sd.name),
        });
        pick
    }

    /// `wake_affine(sd, p, this_cpu, prev_cpu, sync)`.
    fn wake_affine(&mut self, sd_idx: usize, this: CpuId, prev: CpuId, sync: bool) -> CpuId {
        let f = self.env.patches.features;
        let mut target = None;
        if f.wa_idle {
            target = self.wake_affine_idle(this, prev, sync);
        }
        if f.wa_weight && target.is_none() {
            target = self.wake_affine_weight(sd_idx, this, prev, sync);
        }
        let res = if target == Some(this) { this } else { prev };
        self.t.step(|| Step::Return {
            func: "wake_affine",
            cpu: Some(res),
            why: if res == this {
                "pull towards the waker".into()
            } else {
                "stay near prev".into()
            },
        });
        res
    }

    /// `wake_affine_idle(this_cpu, prev_cpu, sync)`.
    fn wake_affine_idle(&mut self, this: CpuId, prev: CpuId, sync: bool) -> Option<CpuId> {
        self.touch(prev);
        // "If this_cpu is idle, it implies the wakeup is from interrupt context. Only
        // allow the move if cache is shared."
        if self.available_idle_cpu(this) && self.share_cache(this, prev) {
            let r = if self.available_idle_cpu(prev) {
                prev
            } else {
                this
            };
            self.t.step(|| Step::Check {
                func: "wake_affine_idle",
                condition: format!("this CPU{} idle and shares cache with prev", this.0),
                outcome: true,
                cpu: Some(this),
            });
            return Some(r);
        }
        if sync && self.s.rq(this).nr_running == 1 {
            self.t.step(|| Step::Check {
                func: "wake_affine_idle",
                condition: "sync wake-up and the waker is alone on this CPU".into(),
                outcome: true,
                cpu: Some(this),
            });
            return Some(this);
        }
        if self.available_idle_cpu(prev) {
            self.t.step(|| Step::Check {
                func: "wake_affine_idle",
                condition: format!("prev CPU{} idle", prev.0),
                outcome: true,
                cpu: Some(prev),
            });
            return Some(prev);
        }
        None
    }

    /// `wake_affine_weight(sd, p, this_cpu, prev_cpu, sync)` (kernel/sched/fair.c
    /// v6.8, lines 7037-7078), with C's integer types: the effective loads are `s64`,
    /// `cpu_load()`, `task_h_load()` and `capacity_of()` are `unsigned long` (so
    /// `current_load > this_eff_load` compares unsigned, and the mixed `+=`, `-=`,
    /// `*=` are done in `u64` and converted back), `sd->imbalance_pct` is
    /// `unsigned int` (so `(imbalance_pct - 100) / 2` is unsigned). The kernel builds
    /// with -fno-strict-overflow, so every step wraps in two's complement; the
    /// comparison at the end is signed.
    fn wake_affine_weight(
        &mut self,
        sd_idx: usize,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> Option<CpuId> {
        let f = self.env.patches.features;
        let sd = &self.env.sd_walk(this)[sd_idx];
        // this_eff_load = cpu_load(cpu_rq(this_cpu));
        let mut this_eff = self.s.rq(this).load_avg as i64;
        if sync {
            // unsigned long current_load = task_h_load(current);
            let cur = self.waker_load;
            // if (current_load > this_eff_load): this_eff_load converted to unsigned long.
            if cur > this_eff as u64 {
                return Some(this);
            }
            this_eff = this_eff.wrapping_sub(cur as i64);
        }
        // unsigned long task_load = task_h_load(p);
        let task_load = self.p.load as i64;
        this_eff = this_eff.wrapping_add(task_load);
        if f.wa_bias {
            this_eff = this_eff.wrapping_mul(100);
        }
        this_eff = this_eff.wrapping_mul(self.s.rq(prev).capacity as i64);
        let mut prev_eff = (self.s.rq(prev).load_avg as i64).wrapping_sub(task_load);
        if f.wa_bias {
            // 100 + (sd->imbalance_pct - 100) / 2, all unsigned int.
            let bias = 100u32.wrapping_add(sd.imbalance_pct.wrapping_sub(100) / 2);
            prev_eff = prev_eff.wrapping_mul(bias as i64);
        }
        prev_eff = prev_eff.wrapping_mul(self.s.rq(this).capacity as i64);
        if sync {
            prev_eff = prev_eff.wrapping_add(1);
        }
        let pull = this_eff < prev_eff;
        self.t.step(|| Step::Check {
            func: "wake_affine_weight",
            condition: format!("this_eff_load {this_eff} < prev_eff_load {prev_eff}"),
            outcome: pull,
            cpu: None,
        });
        pull.then_some(this)
    }

    /// `select_idle_sibling(p, prev, target)`.
    fn select_idle_sibling(&mut self, prev: CpuId, target: CpuId) -> CpuId {
        const F: &str = "select_idle_sibling";
        self.t.step(|| Step::Enter {
            func: F,
            detail: format!("prev={}, target={}", prev.0, target.0),
        });
        let fastpath_cookie = self.has(Patch::CookieFastpath);
        let cluster_active = self.env.sched_cluster_active();
        let full_cluster = self.has(Patch::Cluster);

        // 1. target itself.
        self.costs.fast_path_checks += 1;
        let target_ok = self.idle_ish(target)
            && (!fastpath_cookie || self.sched_core_cookie_match(target))
            && self.asym_fits_cpu(target);
        self.t.step(|| Step::Check {
            func: F,
            condition: format!(
                "target CPU{} idle{}",
                target.0,
                if fastpath_cookie {
                    " and cookie matches"
                } else {
                    ""
                }
            ),
            outcome: target_ok,
            cpu: Some(target),
        });
        if target_ok {
            self.set_path(WakePath::Target);
            return self.ret(F, target, "target is idle");
        }

        // 2. prev, if cache affine and idle ("don't be stupid").
        let mut prev_aff: Option<CpuId> = None;
        if prev != target && self.share_cache(prev, target) {
            self.costs.fast_path_checks += 1;
            let ok = self.idle_ish(prev)
                && (!fastpath_cookie || self.sched_core_cookie_match(prev))
                && self.asym_fits_cpu(prev);
            self.t.step(|| Step::Check {
                func: F,
                condition: format!("prev CPU{} shares the LLC with target and is idle", prev.0),
                outcome: ok,
                cpu: Some(prev),
            });
            if ok {
                let share_res = self.env.cpus_share_resources(prev, target);
                if !cluster_active || share_res {
                    self.set_path(WakePath::Prev);
                    return self.ret(F, prev, "prev is idle and cache affine");
                }
                self.t.step(|| Step::Check {
                    func: F,
                    condition: format!("prev CPU{} shares the cluster with target", prev.0),
                    outcome: false,
                    cpu: Some(prev),
                });
                if full_cluster {
                    prev_aff = Some(prev);
                }
            }
        }

        // 3. per-CPU kthread stacking (e.g. IO completion).
        if self.waker_kthread
            && prev == self.this
            && self.s.rq(self.this).nr_running <= 1
            && self.asym_fits_cpu(prev)
        {
            self.t.step(|| Step::Check {
                func: F,
                condition: "waker is a per-CPU kthread on prev with nr_running <= 1".into(),
                outcome: true,
                cpu: Some(prev),
            });
            self.set_path(WakePath::KthreadStack);
            return self.ret(F, prev, "stack with the per-CPU kthread");
        }

        // 4. recent_used_cpu.
        let recent = self.p.recent_used_cpu;
        self.effects.recent_used_cpu = Some(prev);
        let mut recent_fallback: Option<CpuId> = None;
        if recent != prev && recent != target && self.share_cache(recent, target) {
            self.costs.fast_path_checks += 1;
            let ok = self.idle_ish(recent)
                && (!fastpath_cookie || self.sched_core_cookie_match(recent))
                && self.p.allowed.test_cpu(recent)
                && self.asym_fits_cpu(recent);
            self.t.step(|| Step::Check {
                func: F,
                condition: format!(
                    "recent_used_cpu CPU{} shares the LLC with target and is idle",
                    recent.0
                ),
                outcome: ok,
                cpu: Some(recent),
            });
            if ok {
                if !cluster_active || self.env.cpus_share_resources(recent, target) {
                    self.set_path(WakePath::Recent);
                    return self.ret(F, recent, "recent_used_cpu is idle and cache affine");
                }
                if full_cluster {
                    recent_fallback = Some(recent);
                }
            }
        }

        // 5. asymmetric capacity.
        if self.asym_active() {
            if let Some(i) = self.env.domains.cpu(target).sd_asym_cpucapacity {
                let r = self.select_idle_capacity(i, target);
                self.set_path(WakePath::Capacity);
                return self.ret(F, r.unwrap_or(target), "select_idle_capacity()");
            }
        }

        // 6. the LLC.
        if self.env.sd_llc(target).is_none() {
            self.set_path(WakePath::NoLlc);
            return self.ret(F, target, "no LLC domain");
        }

        // 7. idle cores and SMT siblings of prev.
        let mut has_idle_core = false;
        let smt = self.env.sched_smt_active();
        if smt || !self.has(Patch::NoSmtIdleCores) {
            // Without seed 02 the shared line is read on !SMT machines too (its
            // value stays false: only __update_idle_core() sets it, on SMT).
            has_idle_core = self.test_idle_cores(target);
            self.t.step(|| Step::Check {
                func: F,
                condition: format!(
                    "test_idle_cores(target): sd_llc_shared read{}",
                    if smt {
                        ""
                    } else {
                        " on a !SMT machine (seed 02 absent)"
                    }
                ),
                outcome: has_idle_core,
                cpu: None,
            });
        }
        if smt
            && self.release >= Release::new(5, 13)
            && !has_idle_core
            && self.share_cache(prev, target)
        {
            if let Some(i) = self.select_idle_smt(prev, target) {
                self.set_path(WakePath::IdleSmt);
                return self.ret(F, i, "idle SMT sibling of prev");
            }
        }

        // 8. scan the LLC.
        if let Some(i) = self.select_idle_cpu(has_idle_core, target) {
            self.set_path(WakePath::IdleScan);
            return self.ret(F, i, "select_idle_cpu() found an idle CPU");
        }

        // 9. seed 01 3/3: prev or recent outside the cluster.
        if let Some(p) = prev_aff {
            self.set_path(WakePath::PrevOutsideCluster);
            return self.ret(F, p, "cluster scan found nothing: fall back to prev");
        }
        if let Some(r) = recent_fallback {
            self.set_path(WakePath::RecentOutsideCluster);
            return self.ret(
                F,
                r,
                "cluster scan found nothing: fall back to recent_used_cpu",
            );
        }
        self.set_path(WakePath::NothingIdle);
        self.ret(F, target, "nothing idle: stay on target")
    }

    /// Records one probed CPU and its verdict in the trace.
    #[inline]
    fn probe(&mut self, func: &'static str, cpu: CpuId, reject: Option<Reject>) {
        self.t.step(|| Step::Probe { func, cpu, reject });
    }

    fn ret(&mut self, func: &'static str, cpu: CpuId, why: &str) -> CpuId {
        self.t.step(|| Step::Return {
            func,
            cpu: Some(cpu),
            why: why.to_string(),
        });
        cpu
    }

    /// `test_idle_cores(cpu)`: reads the LLC's shared line.
    fn test_idle_cores(&mut self, cpu: CpuId) -> bool {
        match self.env.llc_shared_of(cpu) {
            Some(id) => {
                self.costs.llc_shared_reads += 1;
                self.s.llc_shared[id.idx()].has_idle_cores
            }
            None => false,
        }
    }

    /// `select_idle_capacity(p, sd, target)`.
    fn select_idle_capacity(&mut self, sd_idx: usize, target: CpuId) -> Option<CpuId> {
        const F: &str = "select_idle_capacity";
        let sd = &self.env.domains.cpu(target).domains[sd_idx];
        let cpus = sd.span.and(&self.p.allowed);
        let mut best: Option<(CpuId, u64)> = None;
        for c in cpus.iter_wrap(target.0) {
            self.costs.cpus_probed += 1;
            if !self.idle_ish(c) {
                self.probe(F, c, Some(Reject::Busy));
                continue;
            }
            let fits = self.util_fits_cpu(c);
            if fits {
                self.probe(F, c, None);
                return Some(c);
            }
            self.probe(F, c, Some(Reject::DoesNotFit));
            let cap = self.s.rq(c).capacity;
            if best.is_none_or(|(_, bc)| cap > bc) {
                best = Some((c, cap));
            }
        }
        best.map(|(c, _)| c)
    }

    /// `select_idle_smt(p, [sd,] target)`: an idle sibling of prev.
    fn select_idle_smt(&mut self, target: CpuId, llc_of: CpuId) -> Option<CpuId> {
        const F: &str = "select_idle_smt";
        let llc_span = self.env.sd_llc(llc_of).map(|d| &d.span);
        for &c in self.env.smt_siblings(target) {
            if c == target || !self.p.allowed.test_cpu(c) {
                continue;
            }
            // v6.9+: skip siblings outside the LLC domain (isolcpus).
            if self.release >= Release::new(6, 9)
                && llc_span.as_ref().is_some_and(|s| !s.test_cpu(c))
            {
                continue;
            }
            let found = if self.has(Patch::CookieFastpath) {
                self.select_idle_cpu_one(F, c).is_some()
            } else {
                self.costs.cpus_probed += 1;
                let idle = self.idle_ish(c);
                self.probe(F, c, (!idle).then_some(Reject::Busy));
                idle
            };
            if found {
                return Some(c);
            }
        }
        None
    }

    /// `select_idle_core(p, core, cpus, &idle_cpu)`: the whole core idle, else remember
    /// an idle thread and drop the core's siblings from `cpus`.
    fn select_idle_core(
        &mut self,
        core: CpuId,
        cpus: &mut CpuMask,
        idle_cpu: &mut Option<CpuId>,
    ) -> Option<CpuId> {
        const F: &str = "select_idle_core";
        if !self.env.sched_smt_active() {
            // !CONFIG_SCHED_SMT build path: __select_idle_cpu(core, p).
            return self.select_idle_cpu_one(F, core);
        }
        let new_check = self.release >= Release::new(6, 9);
        let mut idle = true;
        for &c in self.env.smt_siblings(core) {
            self.costs.cpus_probed += 1;
            self.touch(c);
            let allowed_here = if new_check {
                cpus.test_cpu(c)
            } else {
                self.p.allowed.test_cpu(c)
            };
            if !self.available_idle_cpu(c) {
                idle = false;
                if idle_cpu.is_none() {
                    if self.sched_idle_cpu(c) && allowed_here {
                        *idle_cpu = Some(c);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && allowed_here {
                *idle_cpu = Some(c);
            }
        }
        if idle {
            self.probe(F, core, None);
            return Some(core);
        }
        self.probe(F, core, Some(Reject::NotIdleCore));
        cpus.andnot_assign(self.env.smt_mask(core));
        None
    }

    /// `select_idle_cpu(p, sd_llc, has_idle_core, target)`.
    fn select_idle_cpu(&mut self, has_idle_core: bool, target: CpuId) -> Option<CpuId> {
        const F: &str = "select_idle_cpu";
        let env = self.env;
        let llc = env.sd_llc(target).expect("checked by caller");
        let mut cpus = llc.span.and(&self.p.allowed);
        let mut idle_cpu: Option<CpuId> = None;
        // `int nr = INT_MAX` (fair.c v6.8 line 7359).
        let mut nr: i64 = i32::MAX as i64;
        self.t.step(|| Step::Enter {
            func: F,
            detail: format!(
                "LLC {} ∩ allowed = {}, has_idle_core={}",
                llc.span, cpus, has_idle_core
            ),
        });
        let f = env.patches.features;
        // SIS_PROP (removed in 6.7): budget from this CPU's recent idle time. Its scan
        // accounting runs only where the kernel's does: after the loop (see the end).
        let sis_prop = f.sis_prop && self.release < Release::new(6, 7) && !has_idle_core;
        if sis_prop {
            nr = self.sis_prop_budget(llc.span_weight);
        }
        if f.sis_util {
            if let Some(id) = env.llc_shared_of(target) {
                self.costs.llc_shared_reads += 1;
                // fair.c v6.8 line 7368: "nr = READ_ONCE(sd_share->nr_idle_scan) + 1;",
                // `int` (as nr_idle_scan is) plus one, wrapping under
                // -fno-strict-overflow.
                let scan = self.s.llc_shared[id.idx()].nr_idle_scan as i32;
                nr = scan.wrapping_add(1) as i64;
                let scan = scan as i64;
                self.t.step(|| Step::Budget {
                    func: F,
                    nr: scan,
                    why: "SIS_UTIL: sd_llc_shared->nr_idle_scan".into(),
                });
                if nr == 1 {
                    return self.ret_none(F, "nr_idle_scan is 0: the LLC is overloaded, no scan");
                }
            }
        }
        // Wrap start: target + 1 since 56498cfb045d (v5.14), target before.
        let start = if self.release >= Release::new(5, 14) {
            target.0 + 1
        } else {
            target.0
        };

        // Seed 01 2/3: the cluster first.
        // `sg = sd->groups; if (sg->flags & SD_CLUSTER)`
        let cluster = env
            .sd_llc_first_group(target)
            .filter(|sg| env.sched_cluster_active() && sg.flags.contains(SdFlags::CLUSTER));
        if let Some(sg) = cluster {
            let sg_span = &sg.span;
            self.t.step(|| Step::Enter {
                func: "select_idle_cpu/cluster",
                detail: format!("target's cluster {sg_span} first"),
            });
            // The hint answers the budgeted !has_idle_core loop only; the idle-core
            // search below spends no budget and probes whole cores.
            let hint = self.fast_scan_hint().filter(|_| !has_idle_core);
            if let Some(hint) = hint {
                let m = sg_span.and(&cpus);
                match self.scan_with_hint(hint, &m, start, &mut nr) {
                    Scan::Found(i) => return Some(i),
                    Scan::Spent => return None,
                    Scan::Exhausted => {}
                }
            } else {
                // sg_span is the group's own span, which nothing writes here: a plain
                // for_each_cpu_wrap().
                for c in sg_span.iter_wrap(start) {
                    if !cpus.test_cpu(c) {
                        continue;
                    }
                    if has_idle_core {
                        if let Some(i) = self.select_idle_core(c, &mut cpus, &mut idle_cpu) {
                            return self.ret_some(F, i, "idle core in the cluster");
                        }
                    } else {
                        nr -= 1;
                        if nr <= 0 {
                            self.probe(F, c, Some(Reject::BudgetSpent));
                            return self.ret_none(F, "scan budget spent in the cluster");
                        }
                        if let Some(i) = self.select_idle_cpu_one(F, c) {
                            return self.ret_some(F, i, "idle CPU in the cluster");
                        }
                    }
                }
                self.t.step(|| Step::Return {
                    func: "select_idle_cpu/cluster",
                    cpu: None,
                    why: "nothing idle in the cluster; scan the rest of the LLC".into(),
                });
            }
            cpus.andnot_assign(sg_span);
        }

        if has_idle_core {
            // select_idle_core() drops a core's siblings from cpus as it goes: each
            // step reads the live mask.
            let mut cur = WrapCursor::new(start, cpus.nr_cpu_ids());
            while let Some(c) = cur.next(&cpus) {
                if let Some(i) = self.select_idle_core(c, &mut cpus, &mut idle_cpu) {
                    return self.ret_some(F, i, "idle core");
                }
            }
        } else if let Some(hint) = self.fast_scan_hint() {
            let (out, accounted) = match self.scan_with_hint(hint, &cpus, start, &mut nr) {
                Scan::Found(i) => (Some(i), true),
                Scan::Exhausted => (None, true),
                Scan::Spent => (None, false),
            };
            // As the traced loop below: accounted after a break or the end, not after
            // `return -1`.
            self.effects.sis_prop_scan = sis_prop && accounted;
            return out;
        } else {
            // Nothing writes cpus on this branch: a plain for_each_cpu_wrap().
            for c in cpus.iter_wrap(start) {
                nr -= 1;
                if nr <= 0 {
                    self.probe(F, c, Some(Reject::BudgetSpent));
                    return self.ret_none(F, "scan budget spent");
                }
                idle_cpu = self.select_idle_cpu_one(F, c);
                if idle_cpu.is_some() {
                    break;
                }
            }
        }
        if has_idle_core {
            // "looked for an idle core and found none"
            self.effects.clear_idle_cores = env.llc_shared_of(target);
        }
        // "if (sched_feat(SIS_PROP) && !has_idle_core) { time = cpu_clock(this) - time;
        // ... update_avg(&this_sd->avg_scan_cost, time); }" (fair.c v5.12 and on; from
        // v5.14 also "this_rq->wake_avg_idle -= min(this_rq->wake_avg_idle, time);"):
        // reached after a `break` or an exhausted loop, never after `return -1`.
        self.effects.sis_prop_scan = sis_prop;
        match idle_cpu {
            Some(c) => self.ret_some(
                F,
                c,
                if has_idle_core {
                    "an idle thread (no idle core)"
                } else {
                    "idle CPU"
                },
            ),
            None => self.ret_none(F, "no idle CPU in the LLC"),
        }
    }

    /// The idle hint, when the untraced scan may use it: no trace to write, and no
    /// core-scheduling cookie to match per CPU.
    #[inline]
    fn fast_scan_hint(&self) -> Option<&'a CpuMask> {
        if T::ON || self.s.core_sched_enabled {
            return None;
        }
        self.s.idle_hint.as_ref()
    }

    /// The `!has_idle_core` scan loop of select_idle_cpu() over `m` from `start`,
    /// computed from the idle hint: the loop decrements `nr` before each probe, gives
    /// up when it reaches 0, and stops at the first CPU for which
    /// `__select_idle_cpu()` holds. The same CPUs are counted as probed (and as
    /// remote runqueue reads) as the CPU-by-CPU loop counts.
    fn scan_with_hint(&mut self, hint: &CpuMask, m: &CpuMask, start: u32, nr: &mut i64) -> Scan {
        // Loop positions 0, 1, ...: position i is the (i+1)-th CPU of m in wrap order;
        // nr reaches 0 at position nr - 1.
        let spend_at = (*nr - 1).max(0) as u64;
        let (probes, out) = match m.wrap_walk(hint, start, spend_at) {
            WrapWalk::Hit { pos, cpu } => (pos + 1, Scan::Found(cpu)),
            WrapWalk::Limit => (spend_at, Scan::Spent),
            WrapWalk::End { len } => (len, Scan::Exhausted),
        };
        *nr -= probes as i64 + matches!(out, Scan::Spent) as i64;
        let this_probed = probes > 0
            && m.test_cpu(self.this)
            && (m.wrap_position(start, self.this) as u64) < probes;
        self.costs.cpus_probed += probes as u32;
        self.costs.remote_rq_reads += probes as u32 - this_probed as u32;
        out
    }

    fn ret_some(&mut self, func: &'static str, cpu: CpuId, why: &str) -> Option<CpuId> {
        self.t.step(|| Step::Return {
            func,
            cpu: Some(cpu),
            why: why.to_string(),
        });
        Some(cpu)
    }

    fn ret_none(&mut self, func: &'static str, why: &str) -> Option<CpuId> {
        self.t.step(|| Step::Return {
            func,
            cpu: None,
            why: why.to_string(),
        });
        None
    }

    /// The SIS_PROP block of `select_idle_cpu()` (v6.6 and before): the idle time it
    /// budgets from is, before v5.14, "avg_idle = this_rq()->avg_idle / 512;" (fair.c
    /// v5.12/v5.13), and from v5.14 (94aafc3ee31d, "sched/fair: Age the average idle
    /// time") `this_rq->wake_avg_idle`, first aged by one halving per jiffy since
    /// `wake_stamp` while it is non-zero:
    /// "if (unlikely(this_rq->wake_stamp < now)) { while (this_rq->wake_stamp < now &&
    /// this_rq->wake_avg_idle) { this_rq->wake_stamp++; this_rq->wake_avg_idle >>= 1; } }"
    /// (fair.c v6.5 select_idle_cpu()). The aged pair is a write, returned in
    /// [`super::Effects::sis_prop_aged`].
    fn sis_prop_budget(&mut self, span_weight: u32) -> i64 {
        let sp = &self.s.sis_prop;
        let this = self.this.idx();
        let avg_idle = if self.release >= Release::new(5, 14) {
            let mut avg = sp.wake_avg_idle_ns.get(this).copied().unwrap_or(0);
            let mut stamp = sp.wake_stamp.get(this).copied().unwrap_or(0);
            let now = self.s.jiffies;
            if stamp < now {
                let before = (avg, stamp);
                // At most 64 rounds: each halves a u64 that ends the loop at 0.
                while stamp < now && avg != 0 {
                    stamp += 1;
                    avg >>= 1;
                }
                if (avg, stamp) != before {
                    self.effects.sis_prop_aged = Some((avg, stamp));
                }
            }
            avg
        } else {
            sp.avg_idle_ns.get(this).copied().unwrap_or(0) / 512
        };
        let llc_id = self.env.top(self.this).sd_llc_id;
        // C types (v6.6 fair.c, select_idle_cpu()'s SIS_PROP block): avg_cost, avg_idle
        // and span_avg are u64, span_weight unsigned int, nr an int:
        // "avg_cost = this_sd->avg_scan_cost + 1; span_avg = sd->span_weight *
        // avg_idle; if (span_avg > 4*avg_cost) nr = div_u64(span_avg, avg_cost); else
        // nr = 4;" — u64 products wrap, and the quotient is truncated to int.
        let stored_cost = sp.avg_scan_cost_ns.get(llc_id.idx()).copied().unwrap_or(0);
        let avg_cost = stored_cost.wrapping_add(1);
        let span_avg = (span_weight as u64).wrapping_mul(avg_idle);
        let nr: i32 = if span_avg > avg_cost.wrapping_mul(4) {
            // avg_cost is 0 only if avg_scan_cost is u64::MAX; div_u64() would trap.
            (span_avg / avg_cost.max(1)) as i32
        } else {
            4
        };
        self.t.step(|| Step::Budget {
            func: "select_idle_cpu",
            nr: nr as i64,
            why: if self.release >= Release::new(5, 14) {
                format!("SIS_PROP: span {span_weight} × wake_avg_idle {avg_idle} ns / avg_scan_cost {avg_cost} ns")
            } else {
                format!("SIS_PROP: span {span_weight} × avg_idle/512 {avg_idle} ns / avg_scan_cost {avg_cost} ns")
            },
        });
        nr as i64
    }

    /// `ttwu_queue_cond(p, cpu)`; the second value says why.
    fn ttwu_queue_cond(&self, cpu: CpuId, on_cpu_path: bool) -> (bool, &'static str) {
        let rq = self.s.rq(cpu);
        if !self.cpu_active(cpu) {
            return (false, "target CPU not active");
        }
        if !self.p.allowed.test_cpu(cpu) {
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
        if self.release >= Release::new(5, 19) {
            // 28156108fecb: an idle target does its own enqueue.
            if rq.nr_running == 0 {
                return (
                    true,
                    "target shares cache but is idle: let it enqueue itself",
                );
            }
        } else if on_cpu_path && rq.nr_running <= 1 {
            // Before 5.19: WF_ON_CPU and the target about to go idle.
            return (true, "p still on_cpu and target nearly idle");
        }
        (false, "target shares cache and is busy: take its rq lock")
    }

    /// `ttwu_queue_wakelist(p, cpu)`: `Some(path)` when the wake-up goes on the wakelist.
    fn ttwu_queue_wakelist(&mut self, cpu: CpuId) -> Option<QueuePath> {
        if !self.env.patches.features.ttwu_queue {
            return None;
        }
        let (cond, why) = self.ttwu_queue_cond(cpu, self.p.on_cpu);
        self.t.step(|| Step::Check {
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
        self.t.step(|| Step::Queue {
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

/// How a budgeted scan ended.
enum Scan {
    Found(CpuId),
    /// `nr` reached 0: select_idle_cpu() returns -1.
    Spent,
    /// Every CPU probed, none idle.
    Exhausted,
}

/// `for_each_cpu_wrap(cpu, mask, start)` over a mask that may shrink while iterating:
/// like the kernel's macro, each step reads the live mask.
struct WrapCursor {
    start: u32,
    pos: u32,
    wrapped: bool,
}

impl WrapCursor {
    fn new(start: u32, nr: u32) -> Self {
        let start = if start >= nr { 0 } else { start };
        WrapCursor {
            start,
            pos: start,
            wrapped: false,
        }
    }

    fn next(&mut self, mask: &CpuMask) -> Option<CpuId> {
        if !self.wrapped {
            if let Some(c) = mask.next_from(self.pos) {
                self.pos = c.0 + 1;
                return Some(c);
            }
            self.wrapped = true;
            self.pos = 0;
        }
        match mask.next_from(self.pos) {
            Some(c) if c.0 < self.start => {
                self.pos = c.0 + 1;
                Some(c)
            }
            _ => None,
        }
    }
}
