//! Load balancing (simplified `sched_balance_rq()` / `load_balance()`), newidle
//! balancing and fork placement, over the domains `build_sched_domains()` built.
//!
//! ```text
//!   tick ─▶ periodic_balance(cpu): for each domain of cpu, bottom-up, when due:
//!            should_we_balance()  first idle CPU of the local group (else its first CPU)
//!            group stats          nr_running, util, idle CPUs per group
//!            LLC level            sum_util ─▶ wakeup::update_idle_cpu_scan() (SIS_UTIL)
//!            busiest group        pull one queued task to cpu
//!   idle ─▶ newidle_balance(cpu): avg_idle >= migration cost: pull from the busiest CPU
//!   forced idle ─▶ core_balance(cpu) (core_sched.rs) walks the spans kept here
//!   fork ─▶ find_idlest_cpu_fork(): group with most idle CPUs per level, then an idle CPU
//! ```
//!
//! What is left out: group types and the imbalance calculation (we move one task at a
//! time), `nr_balance_failed` and active balancing, NUMA imbalance allowances, misfit
//! and asymmetric packing. Spans are restricted to the run's CPUs, which changes nothing
//! for the decisions: other CPUs never hold a task.

use crate::cpumask::{CpuId, CpuMask};
use crate::sched_domain::SdFlags;
use crate::wakeup::{self, WakeEnv};

use super::{Loc, Mode, SimTime, Simulator, MIGRATION_COST_NS};

#[derive(Clone, Debug)]
pub(super) struct Level {
    /// Groups (run CPUs only, empty groups dropped); the first holds the CPU.
    groups: Vec<Vec<u32>>,
    interval_ns: u64,
    busy_factor: u64,
    imbalance_pct: u64,
    /// This is the CPU's sd_llc: periodic balancing here feeds SIS_UTIL.
    is_llc: bool,
    balance_fork: bool,
    span_weight: u32,
    /// The span's run CPUs, in CPU order (`sched_core_balance()` walks it).
    span: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct BalanceInfo {
    /// Per CPU (empty for CPUs outside the run), bottom-up.
    levels: Vec<Vec<Level>>,
    next: Vec<Vec<SimTime>>,
}

impl BalanceInfo {
    /// The domains of every run CPU, restricted to the run's CPUs.
    pub(super) fn new(env: &WakeEnv, active: &[u32]) -> BalanceInfo {
        let n = env.nr_cpus() as usize;
        let mut act = CpuMask::new(n as u32);
        for &c in active {
            act.set_cpu(CpuId(c));
        }
        let mut levels = vec![Vec::new(); n];
        let mut next = vec![Vec::new(); n];
        for &c in active {
            let Some(cd) = env.domains.try_cpu(CpuId(c)) else {
                continue;
            };
            for (i, sd) in cd.domains.iter().enumerate() {
                let groups: Vec<Vec<u32>> = sd
                    .groups
                    .iter()
                    .map(|g| g.span.and(&act).iter().map(|x| x.0).collect::<Vec<u32>>())
                    .filter(|g: &Vec<u32>| !g.is_empty())
                    .collect();
                levels[c as usize].push(Level {
                    groups,
                    interval_ns: sd.min_interval.max(1) as u64 * 1_000_000,
                    busy_factor: sd.busy_factor.max(1) as u64,
                    imbalance_pct: sd.imbalance_pct as u64,
                    is_llc: cd.sd_llc == Some(i),
                    balance_fork: sd.flags.contains(SdFlags::BALANCE_FORK),
                    span_weight: sd.span_weight,
                    span: sd.span.and(&act).iter().map(|x| x.0).collect(),
                });
                next[c as usize].push(SimTime(sd.min_interval.max(1) as u64 * 1_000_000));
            }
        }
        BalanceInfo { levels, next }
    }

    /// The number of domains of `cpu` (bottom-up), for walking their spans.
    pub(super) fn n_levels(&self, cpu: u32) -> usize {
        self.levels[cpu as usize].len()
    }

    /// The run CPUs of `cpu`'s domain at level `li`, in CPU order.
    pub(super) fn span(&self, cpu: u32, li: usize) -> &[u32] {
        &self.levels[cpu as usize][li].span
    }
}

impl Simulator {
    #[inline]
    fn cpu_idle(&self, c: u32) -> bool {
        self.state.rqs[c as usize].idle_cpu()
    }

    /// `cpumask_test_cpu(cpu, p->cpus_ptr)`.
    pub(super) fn allowed_on(&self, t: u32, cpu: u32) -> bool {
        self.views[t as usize]
            .task
            .as_ref()
            .is_some_and(|v| v.allowed.test_cpu(CpuId(cpu)))
    }

    /// A queued (not running) task of `src` that may move to `dst`: cache-cold first
    /// (`task_hot()`: ran within the migration cost), a hot one only if `allow_hot`.
    fn pick_migratable(&self, src: u32, dst: u32, allow_hot: bool) -> Option<u32> {
        let q = &self.cpus[src as usize].queue;
        let mut hot = None;
        // can_migrate_task(): p's CPUs allow dst, and (core scheduling)
        // sched_core_cookie_match(dst, p): dst's core is idle or runs p's cookie.
        let core_cookie = self.sibling_cookie(dst);
        for &t in q {
            if !self.allowed_on(t, dst) || core_cookie.is_some_and(|k| self.cookie(t) != k) {
                continue;
            }
            if self.now.since(self.tasks[t as usize].last_ran) >= MIGRATION_COST_NS {
                return Some(t);
            }
            if hot.is_none() {
                hot = Some(t);
            }
        }
        if allow_hot {
            hot
        } else {
            None
        }
    }

    /// `detach_task()` + `attach_task()`: moves queued task `t` from `src` to `dst`.
    pub(super) fn migrate_queued(&mut self, t: u32, src: u32, dst: u32) {
        self.update_cpu_pelt(src);
        let avg = self.avg_vruntime(src);
        let lim = self.lag_limit();
        let q = &mut self.cpus[src as usize].queue;
        let i = q
            .iter()
            .position(|&x| x == t)
            .expect("migrating a queued task");
        q.swap_remove(i);
        let v = self.tasks[t as usize].vruntime;
        self.cpus[src as usize].v_sum -= v;
        self.state.update_rq(CpuId(src), |rq| rq.nr_running -= 1);
        let task = &mut self.tasks[t as usize];
        task.vlag = (avg - task.vruntime).clamp(-lim, lim);
        task.loc = Loc::Blocked; // transient, enqueue() relocates it
        self.enqueue(t, dst);
        if self.measuring {
            self.metrics.migrations_balance += 1;
        }
        // Kick an idle (or force-idle) destination: it may run the task now.
        let c = &mut self.cpus[dst as usize];
        if matches!(c.mode, Mode::Idle | Mode::ForceIdle) {
            if c.mode == Mode::Idle {
                c.mode = Mode::Waking;
            }
            let g = c.switch_gen;
            self.queue
                .push(self.now, super::Event::Resched { cpu: dst, gen: g });
        }
    }

    /// Periodic balancing of `cpu` at the tick (`sched_balance_domains()`).
    pub(super) fn periodic_balance(&mut self, cpu: u32) {
        let n_levels = self.balance.levels[cpu as usize].len();
        for li in 0..n_levels {
            if self.now < self.balance.next[cpu as usize][li] {
                continue;
            }
            let busy = self.cpus[cpu as usize].mode == Mode::Running;
            let (interval, factor) = {
                let lv = &self.balance.levels[cpu as usize][li];
                (lv.interval_ns, if busy { lv.busy_factor } else { 1 })
            };
            self.balance.next[cpu as usize][li] = self.now + interval * factor;
            // should_we_balance(): the first idle CPU of the local group, else its first.
            let balancer = {
                let local = &self.balance.levels[cpu as usize][li].groups[0];
                local
                    .iter()
                    .copied()
                    .find(|&c| self.cpu_idle(c))
                    .unwrap_or(local[0])
            };
            if balancer != cpu {
                continue;
            }
            self.balance_level(cpu, li);
        }
    }

    /// `sched_balance_rq()` at one level, once `should_we_balance()` chose `cpu`:
    /// `update_sd_lb_stats()`, SIS_UTIL at the LLC, then one task pulled from the
    /// busiest CPU of the busiest group.
    fn balance_level(&mut self, cpu: u32, li: usize) {
        let lv = self.balance.levels[cpu as usize][li].clone();
        // update_sd_lb_stats(): per-group numbers.
        let mut local = (0u64, 0u64, 0u64); // nr, weight, idle
        let mut busiest: Option<(u64, usize)> = None; // (avg load ×1024, group)
        let mut sum_util = 0u64;
        for (gi, g) in lv.groups.iter().enumerate() {
            let mut nr = 0u64;
            let mut idle = 0u64;
            let mut movable = false;
            for &c in g {
                let rq = &self.state.rqs[c as usize];
                nr += rq.nr_running as u64;
                sum_util += rq.util_avg;
                if self.cpu_idle(c) {
                    idle += 1;
                }
                if rq.nr_running >= 2 {
                    movable = true;
                }
            }
            let w = g.len() as u64;
            if gi == 0 {
                local = (nr, w, idle);
            } else if movable {
                let avg = nr * 1024 / w;
                if busiest.is_none_or(|(a, _)| avg > a) {
                    busiest = Some((avg, gi));
                }
            }
        }
        if lv.is_llc && self.env.patches.features.sis_util {
            // update_idle_cpu_scan(), only at the LLC level and never from newidle.
            let llc_id = self.llc_id_of[cpu as usize];
            let nr = wakeup::update_idle_cpu_scan(&self.env, CpuId(llc_id), sum_util);
            self.state.llc_shared[llc_id as usize].nr_idle_scan = nr;
        }
        let Some((b_avg, bg)) = busiest else {
            return;
        };
        let local_avg = local.0 * 1024 / local.1.max(1);
        let go = if local.2 > 0 {
            true
        } else {
            b_avg * 100 > local_avg * lv.imbalance_pct && b_avg >= local_avg + 1024
        };
        if !go {
            return;
        }
        // find_busiest_queue(): the CPU with the most tasks.
        let src = lv.groups[bg]
            .iter()
            .copied()
            .max_by_key(|&c| (self.state.rqs[c as usize].nr_running, u32::MAX - c))
            .expect("groups are non-empty");
        let src_nr = self.state.rqs[src as usize].nr_running;
        let dst_nr = self.state.rqs[cpu as usize].nr_running;
        if src_nr < 2 || src_nr < dst_nr + 2 {
            return;
        }
        let dst_idle = self.cpu_idle(cpu);
        if let Some(t) = self.pick_migratable(src, cpu, dst_idle) {
            self.migrate_queued(t, src, cpu);
        }
    }

    /// `sched_balance_newidle()`: `cpu` is about to go idle.
    pub(super) fn newidle_balance(&mut self, cpu: u32) -> Option<u32> {
        if self.cpus[cpu as usize].avg_idle_ns < MIGRATION_COST_NS {
            return None;
        }
        let n_levels = self.balance.levels[cpu as usize].len();
        let mut scanned = 0u64;
        for li in 0..n_levels {
            let mut best: Option<(u32, u32)> = None;
            for g in &self.balance.levels[cpu as usize][li].groups {
                for &c in g {
                    if c == cpu {
                        continue;
                    }
                    scanned += 1;
                    let nr = self.state.rqs[c as usize].nr_running;
                    if nr >= 2 && best.is_none_or(|(b, _)| nr > b) {
                        best = Some((nr, c));
                    }
                }
            }
            if let Some((_, src)) = best {
                if let Some(t) = self.pick_migratable(src, cpu, true) {
                    self.migrate_queued(t, src, cpu);
                    // The scan took time before the pulled task can run.
                    self.tasks[t as usize].debt_ns += scanned * self.cost.probe_ns(CpuId(cpu));
                    return Some(t);
                }
            }
        }
        None
    }

    /// `sched_balance_find_dst_cpu()` for a new task forked on `parent`.
    pub(super) fn find_idlest_cpu_fork(&self, parent: u32, mask: &CpuMask) -> u32 {
        if mask.weight() == 1 {
            return mask.first().expect("non-empty").0;
        }
        let mut cpu = parent;
        let levels = &self.balance.levels[parent as usize];
        let Some(mut li) = levels.iter().rposition(|l| l.balance_fork) else {
            return self.idlest_in(mask.iter().map(|c| c.0), parent);
        };
        let mut weight = u32::MAX;
        loop {
            let lv = &self.balance.levels[cpu as usize][li];
            if lv.span_weight >= weight {
                break;
            }
            weight = lv.span_weight;
            // find_idlest_group(): most idle CPUs, then fewest tasks; the local group on ties.
            let stats = |g: &Vec<u32>| {
                let mut idle = 0u32;
                let mut nr = 0u32;
                let mut any = false;
                for &c in g {
                    if !mask.test_cpu(CpuId(c)) {
                        continue;
                    }
                    any = true;
                    nr += self.state.rqs[c as usize].nr_running;
                    if self.cpu_idle(c) {
                        idle += 1;
                    }
                }
                any.then_some((idle, nr))
            };
            let local = stats(&lv.groups[0]);
            let mut best: Option<((u32, u32), usize)> = None;
            for (gi, g) in lv.groups.iter().enumerate().skip(1) {
                if let Some(s) = stats(g) {
                    let better = match best {
                        None => true,
                        Some(((bi, bn), _)) => s.0 > bi || (s.0 == bi && s.1 < bn),
                    };
                    if better {
                        best = Some((s, gi));
                    }
                }
            }
            let go_remote = match (local, best) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some((li_, ln)), Some(((bi, bn), _))) => {
                    bi > li_ || (bi == li_ && bn < ln && li_ == 0)
                }
            };
            if go_remote {
                let (_, gi) = best.expect("checked");
                let g = &lv.groups[gi];
                cpu = self.idlest_in(g.iter().copied().filter(|&c| mask.test_cpu(CpuId(c))), cpu);
            }
            if li == 0 {
                break;
            }
            li -= 1;
            if self.balance.levels[cpu as usize].len() <= li {
                break;
            }
        }
        if mask.test_cpu(CpuId(cpu)) && (self.cpu_idle(cpu) || cpu != parent) {
            return cpu;
        }
        self.idlest_in(mask.iter().map(|c| c.0), cpu)
    }

    /// `find_idlest_group_cpu()`: an idle CPU (shallowest state, then lowest number),
    /// else the one with the fewest tasks.
    fn idlest_in(&self, cpus: impl Iterator<Item = u32>, fallback: u32) -> u32 {
        let mut best: Option<(u64, u32, u32)> = None; // (exit latency or MAX, nr, cpu)
        for c in cpus {
            let key = if self.cpu_idle(c) {
                let st = self.cpus[c as usize].cstate as usize;
                (self.cost.params.idle_states[st].exit_latency_ns, 0)
            } else {
                (u64::MAX, self.state.rqs[c as usize].nr_running)
            };
            if best.is_none_or(|(e, n, _)| (key.0, key.1) < (e, n)) {
                best = Some((key.0, key.1, c));
            }
        }
        best.map_or(fallback, |(_, _, c)| c)
    }
}
