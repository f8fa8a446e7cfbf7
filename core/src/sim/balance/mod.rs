//! Load balancing as fair.c does it (v6.8, with the release differences that matter):
//! periodic balancing from the tick, nohz idle balancing on behalf of tick-stopped
//! CPUs, newidle balancing, active balancing, and fork placement, over the domains
//! `build_sched_domains()` built.
//!
//! ```text
//!   tick ─▶ trigger_load_balance(cpu)            (rebalance.rs)
//!            ├─ nohz_balancer_kick(): STATS when nohz.has_blocked and  (nohz.rs)
//!            │     next_blocked passed; STATS|BALANCE when next_balance
//!            │     passed and rq->nr_running >= 2 or nr_busy_cpus > 1;
//!            │     NEXT while nohz.needs_update ─▶ kick_ilb(flags):
//!            │     OR into find_new_ilb()'s nohz_flags, IPI unless a
//!            │     kick is pending ─▶ nohz_csd_func() (NohzKick) ─▶
//!            │     _nohz_idle_balance(flags), each tick-stopped idle
//!            │        CPU: STATS update_nohz_stats() (blocked averages
//!            │        decay), BALANCE rebalance_domains() if due
//!            └─ due? (SCHED_SOFTIRQ, after the tick has kicked)
//!                  rebalance_domains(cpu, idle?)  per domain, bottom-up:
//!                  get_sd_balance_interval(): balance_interval × busy_factor when busy
//!                  load_balance() ─────────────────────────────────────┐
//!   idle ─▶ newidle_balance(cpu): rd->overload, avg_idle >=            │
//!            max_newidle_lb_cost per domain ─▶ load_balance(NEWLY_IDLE)│
//!            nothing pulled: nohz_newidle_balance() ─▶ NEWILB ─▶       │
//!            do_idle()'s nohz_run_idle_balance(): the STATS pass here  │
//!                                                                      ▼
//!   load_balance() (lb/): should_we_balance() ─▶ find_busiest_group():
//!            update_sd_lb_stats() / update_sg_lb_stats() / group_classify() /
//!            update_sd_pick_busiest(), the early outs, calculate_imbalance()
//!            (migrate_task / util / load, NUMA allowance) ─▶ find_busiest_queue()
//!            ─▶ detach_tasks() (can_migrate_task(), task_hot()) ─▶ attach
//!            nothing moved: nr_balance_failed++, need_active_balance() ─▶ busiest's
//!            stopper, an IPI later, pushes a task (active_load_balance_cpu_stop())
//!   fork ─▶ find_idlest_cpu_fork() (fork.rs): find_idlest_group() /
//!            update_sg_wakeup_stats() / find_idlest_group_cpu(), walking down
//!            (the walk: wakeup::lb_stats::find_idlest_cpu_walk(), the slow path's)
//!   forced idle ─▶ core_balance(cpu) (core_sched.rs) walks the spans kept here
//! ```
//!
//! By file (each twin names its kernel function in its doc comment):
//!
//! ```text
//!  mod.rs        the state: groups, domains, BalanceInfo, jiffies
//!  domains.rs    BalanceInfo::new(): each run CPU's domains and shared groups, as boot left them
//!  rebalance.rs  trigger_load_balance(), rebalance_domains(), update_blocked_averages()
//!  nohz.rs       nohz idle balancing: the kick, nohz_flags, _nohz_idle_balance()
//!  newidle.rs    newidle_balance()
//!  lb/mod.rs     load_balance(), should_we_balance(), struct lb_env / sd_lb_stats
//!  lb/stats.rs   update_sd_lb_stats(), update_sg_lb_stats(), update_sd_pick_busiest()
//!  lb/busiest.rs find_busiest_group(), calculate_imbalance(), find_busiest_queue()
//!  lb/exit.rs    load_balance()'s exits: redo, need_active_balance(), the interval
//!  detach.rs     detach_tasks(), can_migrate_task(), task_hot(), detach_one_task()
//!  migrate.rs    the simulator's side of detach.rs, active balancing's stopper
//!  attach.rs     detach_task() + attach_task() -> wakeup_preempt()
//!  fork.rs       find_idlest_cpu() for fork
//!  locks.rs      the rq locks a pass takes, and its clock
//!  sums.rs       the runqueue sums update_sg_lb_stats() reads
//!  ring.rs       a domain's groups as a shared ring
//! ```
//!
//! Simplifications (each also listed in docs/fidelity.md, "Load balancing"):
//! - Only the run's CPUs balance (periodic, nohz and newidle): a CPU outside the run
//!   would find the tasks pinned away from it and pull through `LBF_DST_PINNED` onto
//!   a run CPU of its own group, which `should_we_balance()` restricted to the run's
//!   CPUs picks directly. The statistics cover every online CPU of the groups (an
//!   outside CPU counts as idle).
//! - `cpu_load()` and `cpu_runnable()` are both the CPU's `cfs_rq->avg.load_avg`
//!   (all tasks are nice 0; from 6.12 `cpu_runnable()` leaves out the delayed tasks,
//!   `delayed.rs`), blocked load included (`load_avg.rs`: a sleeping task's
//!   averages stay on its CPU until it wakes elsewhere), as last updated;
//!   `cpu_util_cfs()` is the larger of its `util_avg` and `util_est`, as last updated
//!   (a CPU's averages are brought up to date at its events, and a tick-stopped idle
//!   CPU's only by `update_blocked_averages()` / `update_nohz_stats()`: a nohz pass
//!   with `NOHZ_STATS_KICK`, kicked at least every `LOAD_AVG_PERIOD` while
//!   `nohz.has_blocked`, or run by a newly idle CPU itself);
//!   `task_util_est()` is the larger of the task's util and its `util_est` EWMA.
//!   Capacity never shrinks (no RT/IRQ pressure), so
//!   `check_cpu_capacity()` is always false.
//! - No asymmetric capacity or asymmetric packing: `group_misfit_task`,
//!   `group_asym_packing`, `migrate_misfit` and `asym_active_balance()` never arise on
//!   the modelled machines' domains and are left out. No NUMA balancing (`fbq_type`
//!   is `all`), no `LBF_DST_PINNED` retry with another destination CPU, no
//!   CACHE_HOT_BUDDY (the simulator keeps no next buddy).
//! - `cfs_tasks`' most-recently-used order is approximated by the time each task last
//!   ran (`detach_tasks()` walks from the least recently run).
//! - The balancing itself takes no simulated time except newidle's scan (`probe_ns`
//!   per CPU looked at) and the rq locks it takes (locks.rs, session 34). The ilb
//!   kick, for a balance or only for the stats, is
//!   an IPI (unless the ilb polls) and the ilb's C-state exit (`Event::NohzKick`,
//!   nohz.rs); a newly idle CPU's own stats pass sends none. An active balance
//!   queues the busiest CPU's stopper (`rq->active_balance`, `push_cpu`), which runs
//!   one IPI later (`Event::Stopper`, migrate.rs): it preempts the running task and
//!   moves one CFS task if any is still there; its own run time is not charged.
//! - Every move ends in `attach_task()` → `wakeup_preempt()`
//!   ([`Simulator::migrate_queued`]): a busy destination is preempted only if the
//!   task should run first, at once on the balancing CPU itself, by IPI from another
//!   (the ilb, the stopper); an idle destination other than the balancing CPU gets an
//!   IPI unless it polls, and leaves its C-state.
//! - The nohz flags follow v6.8 for every release, but for `NOHZ_NEXT_KICK` and
//!   `nohz.needs_update`, from 5.16 only. Before 5.13 (no `NOHZ_NEWILB_KICK`)
//!   `newidle_balance()` ran the stats pass itself, and only when it did not balance;
//!   the model runs the 5.13 path on 5.12 too (neither takes simulated time).
//! - A migrated task pays the cache-distance refill of its data (`wake_data_ns` from
//!   the CPU it leaves to the one it joins) on its next run.

mod attach;
mod detach;
mod domains;
mod fork;
mod lb;
pub(super) mod locks;
mod migrate;
mod newidle;
mod nohz;
mod rebalance;
mod ring;
mod sums;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::cpumask::{CpuId, PerCpu};
use crate::release::Release;
use crate::sched_domain::SdFlags;
use crate::wakeup::RqState;

use super::{SimTime, Simulator};

pub(super) use lb::CpuIdle;
use nohz::NohzFlags;

/// How long the machine has been up when the run starts, in seconds (at least
/// `max_load_balance_interval`, the longest a balance interval can be): longer than
/// any domain's interval, so every `last_balance` set at boot is due.
const UPTIME_S: u64 = 600;

/// One sched group of a domain, restricted to the run's CPUs. Its CPU lists are
/// shared by every CPU whose domain has the group, as the kernel's CPUs share one
/// `struct sched_group` (`get_group()`, `build_overlap_sched_groups()`): on a
/// 4096-CPU machine a list per CPU per group would take hundreds of MB.
#[derive(Clone, Debug)]
pub(super) struct Group {
    /// The online CPUs of the group, in CPU order (never empty).
    cpus: Arc<[u32]>,
    /// `group_balance_mask()` restricted to the run's CPUs (who balances).
    balance: Arc<[u32]>,
    /// `sgc->capacity`.
    capacity: u64,
    /// `sg->flags`: the child domain's flags.
    flags: SdFlags,
    /// `sg->cores`.
    cores: u32,
    /// Index into [`BalanceInfo::sgc_imbalance`] (`sg->sgc->imbalance`).
    sgc: usize,
    /// The cells of [`BalanceInfo::sums`] that add up to `cpus`.
    pieces: Arc<[u32]>,
}

/// One `struct sched_domain` of a CPU: its constant part.
#[derive(Clone, Debug)]
pub(super) struct Level {
    /// Groups (empty groups dropped), from the one holding the CPU.
    groups: ring::GroupRing,
    flags: SdFlags,
    imbalance_pct: u64,
    cache_nice_tries: u32,
    min_interval: u64,
    max_interval: u64,
    busy_factor: u64,
    imb_numa_nr: u32,
    /// `sd->child->flags`, if the domain has a child.
    child_flags: Option<SdFlags>,
    /// `sd->parent`: its local group's `sgc->imbalance`, if there is a parent.
    parent_sgc: Option<usize>,
    /// This is the CPU's sd_llc: periodic balancing here feeds SIS_UTIL.
    is_llc: bool,
    span_weight: u32,
    /// The span's run CPUs, in CPU order (`sched_core_balance()` walks it); shared
    /// by the CPUs of the span.
    span: Arc<[u32]>,
    /// The online CPUs of all groups (the runqueues a balance reads).
    weight: u32,
}

/// One `struct sched_domain` of a CPU: what balancing changes.
#[derive(Clone, Debug)]
pub(super) struct DomainState {
    /// `sd->balance_interval` (ms).
    balance_interval: u64,
    nr_balance_failed: u32,
    /// `sd->last_balance` (jiffies).
    last_balance: u64,
    /// `sd->max_newidle_lb_cost` (ns) and `sd->last_decay_max_lb_cost` (jiffies).
    max_newidle_lb_cost: u64,
    last_decay_max_lb_cost: u64,
}

/// Its per-CPU tables are [`PerCpu`]: indexed by CPU number without a bounds check.
#[derive(Clone, Debug)]
pub(super) struct BalanceInfo {
    /// Per CPU (empty for CPUs outside the run), bottom-up.
    levels: PerCpu<Vec<Level>>,
    dom: PerCpu<Vec<DomainState>>,
    /// `rq->next_balance` per CPU (jiffies).
    next_balance: PerCpu<u64>,
    /// `rq->max_idle_balance_cost` per CPU (ns).
    max_idle_balance_cost: PerCpu<u64>,
    /// `sgc->imbalance`, one per (level, sgc id).
    pub(in crate::sim) sgc_imbalance: Vec<bool>,
    /// `rd->overload` (`rd->overloaded` in 6.9+).
    overload: bool,
    /// `nohz.next_balance` (jiffies).
    nohz_next_balance: u64,
    /// `max_load_balance_interval` (jiffies): HZ × online CPUs / 10.
    max_lb_interval: u64,
    /// `jiffies` when the run starts ([`UPTIME_S`]; see [`Simulator::jiffies`]).
    uptime: u64,
    release: Release,
    /// The runqueue sums of every CPU and block (sums.rs), marked by
    /// [`Simulator::update_rq`] and `update_cpu_pelt()`.
    sums: sums::RqSums,
    /// `rq->active_balance` with `rq->push_cpu` per CPU: the CPU an active balance
    /// queued this CPU's stopper for, until the stopper has run.
    push_cpu: PerCpu<Option<u32>>,
    /// Per CPU: the stopper an active balance woke here went on this CPU's wake
    /// list (`ttwu_queue_cond()`: the balancing CPU in another LLC), not on its
    /// runqueue with `resched_curr()`'s IPI (`active_load_balance_cpu_stop()`).
    stopper_wakelist: PerCpu<bool>,
    /// `nohz_flags(cpu)` per CPU: the kicks asked of it. While one of
    /// [`NohzFlags::KICK_MASK`] is set a kick is on its way to it, which owns its
    /// `nohz_csd` until `nohz_csd_func()` runs.
    nohz_flags: PerCpu<NohzFlags>,
    /// Per CPU: the kick on its way found it polling, so `set_nr_if_polling()` set
    /// its need-resched flag instead of sending an IPI.
    nohz_kick_polled: PerCpu<bool>,
    /// `nohz.has_blocked`: a tick-stopped idle CPU may have blocked averages left to
    /// decay (set at each nohz idle entry, cleared by a stats pass that finds none).
    nohz_has_blocked: bool,
    /// `nohz.next_blocked` (jiffies): when the next stats kick is due.
    nohz_next_blocked: u64,
    /// `nohz.needs_update` (5.16+): a CPU entered nohz idle since `nohz.next_balance`
    /// was last collated.
    nohz_needs_update: bool,
    /// `rq->has_blocked_load` per CPU.
    has_blocked_load: PerCpu<bool>,
    /// `rq->last_blocked_load_update_tick` per CPU (jiffies).
    last_blocked_load_update_tick: PerCpu<u64>,
}

impl BalanceInfo {
    /// `get_sd_balance_interval()`'s arithmetic (jiffies): `ms`, × `busy_factor` and
    /// less one jiffy when busy (`Some`), clamped to `[1, max_load_balance_interval]`.
    fn interval_jiffies(&self, ms: u64, busy_factor: Option<u64>, tick_ns: u64) -> u64 {
        interval_jiffies(ms, busy_factor, tick_ns, self.max_lb_interval)
    }

    /// The longest time a busy run CPU can go between two periodic balances of its LLC
    /// domain, in jiffies: `get_sd_balance_interval(sd, 1)` with `sd->balance_interval`
    /// at its `max_interval` (`load_balance()` doubles it up to there while the domain
    /// is balanced). Within this of a CPU's first busy balance of its LLC, the LLC's
    /// SIS_UTIL scan depth (`update_idle_cpu_scan()`, written only there) has been
    /// written again with every CPU's state since the benchmark started. 0 when no
    /// run CPU has an LLC domain.
    pub(super) fn llc_busy_round(&self, tick_ns: u64) -> u64 {
        self.levels
            .iter()
            .flatten()
            .filter(|lv| lv.is_llc)
            .map(|lv| self.interval_jiffies(lv.max_interval, Some(lv.busy_factor), tick_ns))
            .max()
            .unwrap_or(0)
    }

    /// How long a throughput run's warm-up lasts at least, from the benchmark's start,
    /// with `SimConfig::settle`: [`BalanceInfo::llc_busy_round`] and two ticks. A CPU
    /// busy from the start balances its LLC at its first tick (every domain is due:
    /// [`Simulator::jiffies`]) and again at most a round later (0.26-1 s on the
    /// presets), by when the tasks' PELT averages, of 32 ms half-life, have grown to
    /// the benchmark's: the scan depth the
    /// wake-ups then read is the running benchmark's, not the one the LLC had when it
    /// started. The published runs measure long after this (dbench: 600 s after a
    /// 120 s warm-up); a shorter warm-up measures the start-up instead.
    pub(super) fn settle_time(&self, tick_ns: u64) -> SimTime {
        match self.llc_busy_round(tick_ns) {
            0 => SimTime::ZERO,
            j => SimTime((j + 2) * tick_ns),
        }
    }

    /// The number of domains of `cpu` (bottom-up), for walking their spans.
    pub(super) fn n_levels(&self, cpu: u32) -> usize {
        self.levels[cpu as usize].len()
    }

    /// The run CPUs of `cpu`'s domain at level `li`, in CPU order.
    pub(super) fn span(&self, cpu: u32, li: usize) -> &[u32] {
        &self.levels[cpu as usize][li].span
    }

    /// `add_nr_running()`: a runqueue reaching two tasks sets `rd->overload`.
    #[inline]
    pub(super) fn note_nr_running(&mut self, nr: u32) {
        if nr == 2 {
            self.overload = true;
        }
    }

    /// `rq->max_idle_balance_cost` of `cpu`: `rq->avg_idle` is capped at twice it.
    pub(super) fn max_idle_balance_cost(&self, cpu: u32) -> u64 {
        self.max_idle_balance_cost[cpu as usize]
    }
}

impl Simulator {
    /// Writes `cpu`'s runqueue through `f` ([`crate::wakeup::SchedState::update_rq`],
    /// which keeps the idle hint) and marks it for the balance sums: the one way the
    /// simulator writes the fields `update_sg_lb_stats()` reads, besides
    /// `update_cpu_pelt()`'s averages (which marks them itself).
    #[inline]
    pub(super) fn update_rq(&mut self, cpu: u32, f: impl FnOnce(&mut RqState)) {
        self.state.update_rq(CpuId(cpu), f);
        self.mark_rq_sums(cpu);
    }

    /// `cpu`'s runqueue changed: the balance sums fold it in before their next use.
    #[inline]
    pub(super) fn mark_rq_sums(&mut self, cpu: u32) {
        self.balance.sums.mark(cpu);
    }

    /// Whether the balance sums match the runqueues (the invariant checks).
    pub(super) fn rq_sums_in_step(&self) -> bool {
        self.balance.sums.matches(&self.state.rqs)
    }

    /// Recomputes the balance sums after a test wrote runqueues directly.
    #[cfg(test)]
    pub(super) fn resync_rq_sums(&mut self) {
        self.balance.sums = sums::RqSums::new(&self.state.rqs);
    }

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

    /// `sched_core_cookie_match(rq, p)`: without core scheduling always; else the
    /// CPU's core is idle or runs `t`'s cookie.
    fn cookie_match(&self, cpu: u32, t: u32) -> bool {
        self.sibling_cookie(cpu).is_none_or(|k| self.cookie(t) == k)
    }

    /// `jiffies`: the run starts [`BalanceInfo::uptime`] jiffies after boot. The
    /// domains were built at boot, jiffy 0 here (`sd_init()` sets `sd->last_balance =
    /// jiffies`, `sched_init()` `rq->next_balance`, `init_sched_fair_class()`
    /// `nohz.next_balance`), and the machine has been idle since with every tick
    /// stopped, so nothing balanced: each domain is due at its CPU's first tick, as on
    /// a machine that has been up, not one whose domains were built as the benchmark
    /// starts (which put every CPU's first busy balance of a level at the same jiffy).
    fn jiffies(&self) -> u64 {
        self.balance.uptime + self.now.ns() / self.cost.params.tick_ns
    }
}

/// `get_sd_balance_interval()`'s arithmetic, fair.c v6.8 11533-11554 (jiffies of
/// `tick_ns`): `ms`, × `busy_factor` and less one jiffy when busy (`Some`), clamped
/// to `[1, max_lb_interval]` (`max_load_balance_interval`).
pub(super) fn interval_jiffies(
    ms: u64,
    busy_factor: Option<u64>,
    tick_ns: u64,
    max_lb_interval: u64,
) -> u64 {
    let ms = ms * busy_factor.unwrap_or(1);
    // msecs_to_jiffies() rounds up.
    let mut j = (ms * 1_000_000).div_ceil(tick_ns);
    if busy_factor.is_some() {
        j = j.saturating_sub(1);
    }
    j.clamp(1, max_lb_interval)
}
