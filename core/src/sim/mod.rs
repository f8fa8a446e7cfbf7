//! A deterministic discrete-event simulator of the Linux fair scheduler around the
//! wake-up path.
//!
//! ```text
//!   EventQueue (time, seq) ──▶ BurstEnd ─▶ task program: run / send (wake-up) / wait / sleep
//!        ▲                    Resched  ─▶ schedule(): pick (EEVDF or CFS), context switch
//!        │                    Timer    ─▶ hrtimer wake-up of a sleeper
//!        │                    Tick     ─▶ slice expiry, periodic balance, SIS_UTIL
//!        │                    Sample   ─▶ throughput series
//!        │
//!   every wake-up: wakeup::wake_up(&env, &SchedState, p, waker) ─▶ Decision
//!        the simulator applies Decision.effects and charges Decision.costs (cost/)
//! ```
//!
//! The files follow kernel/sched:
//!
//! | file            | kernel                  | what                                           |
//! |-----------------|-------------------------|------------------------------------------------|
//! | `build.rs`      | (sched_init, the run's start) | the simulator built from a [`SimConfig`] |
//! | `core.rs`       | core.c                  | event loop, `schedule()`, context switch, tick |
//! | `fair.rs`       | fair.c                  | enqueue/dequeue, placement, pick, preemption   |
//! | `ttwu.rs`       | core.c `try_to_wake_up` | the wake-up, its effects and its costs         |
//! | `idle.rs`       | idle.c, cpuidle, nohz   | idle entry (governor) and exit                 |
//! | `core_sched.rs` | core.c (SCHED_CORE)     | core-wide pick, force idle, core balance       |
//! | `balance/`      | fair.c (load balance)   | periodic, nohz, newidle, active, fork balancing |
//! | `fork.rs`       | core.c `wake_up_new_task` | a forked task's placement; the process tree  |
//! | `pelt.rs`       | pelt.c                  | load and utilisation averages                  |
//! | `program.rs`    | (the tasks' own code)   | the workload's ops, compiled and interpreted   |
//! | `invariants.rs` |                         | conservation checks                            |
//! | `record/`       |                         | the opt-in event record (off: one test a hook) |
//! | `perfetto.rs`   |                         | a recording as a Chrome/Perfetto trace         |
//! | `capture.rs`    |                         | a wake-up's inputs as a wake state file        |
//! | `event.rs`      |                         | the event queue                                |
//!
//! Time is integer nanoseconds; the only randomness is [`Rng`], seeded from the
//! scenario; no clock, thread or OS randomness is touched, so one scenario gives the
//! same digest natively and in wasm32.
//!
//! The public API speaks [`CpuId`] and [`TaskId`]; inside the module CPUs and tasks
//! are `u32` indexes into the per-CPU and per-task tables (the wake-up path's views
//! are built with ids at the edge).
//!
//! What is modelled, and the simplifications (each a deliberate choice, listed so a
//! reader can judge the numbers):
//! - **Fair class.** All tasks are nice 0. From 6.6, EEVDF: lag-preserving placement
//!   (`place_entity()` without the lag inflation), eligibility against the average
//!   vruntime, earliest eligible deadline first, base slice 3 ms, RUN_TO_PARITY
//!   (a woken task preempts only an ineligible current or one past its deadline).
//!   Before 6.6, CFS: sleeper credit of half `sched_latency`, wake-up preemption when
//!   the vruntime lead exceeds `wakeup_granularity` (4 ms). Slices expire at ticks.
//! - **Wake-up.** `wakeup::wake_up()` decides; its effects (`recent_used_cpu`,
//!   `record_wakee`, `set_idle_cores(false)`, SIS_PROP averages) are applied; its costs are
//!   charged: remote rq reads, the `sd_llc_shared` line (a contended line, see
//!   `cost::SharedLines`), an IPI or the remote rq lock (queueing on the
//!   lock and the rq lines moving with its holder, `cost::RqLock`), then the wakee's
//!   C-state exit and IPI receive, and on its first run the cache-distance cost of the
//!   data the waker left.
//! - **Context switch.** `ctx_switch_ns` (+ the mm switch), the own rq lock (wait, and
//!   the rq lines pulled back from a remote waker), and the refill of the data other
//!   tasks on the CPU displaced since the task last ran there (`cost::CacheShare`).
//!   A task that blocked stays `p->on_cpu` until the switch (all but the refill) ends:
//!   a wake-up meanwhile takes the wake list back to it or spins (`ttwu.rs`).
//! - **Idle.** Per-machine cpuidle states chosen by the menu governor (`menu.rs`:
//!   `get_typical_interval()` over the last 8 periods, the next timer event with its
//!   correction factor, the tick kept for short predictions and then taken as a
//!   wake-up that makes the governor choose again). A machine with a single,
//!   non-polling idle state stops the tick at every idle entry (menu.c's
//!   `state_count <= 1` rule: Kunpeng's WFI); a tick-stopped idle CPU takes no tick.
//!   The first stop after a busy tick takes the CPU out of `nr_busy_cpus` (a line
//!   write), the first busy tick puts it back (`nohz_balance_exit_idle()`).
//! - **PELT.** Per task and per CPU, integer, 32 ms half-life (`pelt.rs`). A task's
//!   averages stay attached to its CPU while it sleeps, decaying there (blocked load),
//!   and move with it: removed from the old CPU when it wakes elsewhere or dies,
//!   detached when the balancer moves it, attached where it is enqueued; a new task
//!   starts with full load and half the CPU's spare util; `cpu_util_cfs()` is the
//!   larger of the CPU's util and its queued tasks' `util_est` (`load_avg.rs`).
//! - **Load balancing** (`balance/`, fair.c v6.8 function by function, see its module
//!   doc and docs/fidelity.md "Load balancing"). Periodic balancing from the tick per
//!   domain (`balance_interval` × `busy_factor` when busy, doubled when balanced),
//!   `should_we_balance()`, group statistics and types, `find_busiest_group()`,
//!   `calculate_imbalance()` (task / util / load), `find_busiest_queue()`,
//!   `detach_tasks()` with `task_hot()` and `nr_balance_failed`, active balancing of
//!   a running task, the NUMA allowance (`imb_numa_nr`). Tick-stopped idle CPUs are
//!   balanced by the idle load balancer a busy CPU's tick kicks (nohz). Newidle
//!   balancing is gated by `rd->overload` and `avg_idle` against each domain's
//!   `max_newidle_lb_cost` (its scan cost, `probe_ns` per CPU, delays the pulled
//!   task). LLC-level balancing produces SIS_UTIL's `nr_idle_scan`. A moved task pays
//!   the cache-distance refill of its data. Not modelled: asymmetric capacity and
//!   packing (misfit), NUMA balancing, the ilb IPI's cost and the stopper's run time
//!   (it runs one IPI after the active balance that queues it).
//! - **Fork.** The workload's process tree (`workload::TaskSpec::parent`): the tasks
//!   without a parent are placed at the start, one after the other from the first CPU
//!   of the run, as daemons and launchers started before it; every other task is
//!   created when its parent runs `Op::Fork` (`fork.rs`, `wake_up_new_task()`): placed
//!   by `find_idlest_cpu()` (`balance/fork.rs`: `find_idlest_group()` per
//!   SD_BALANCE_FORK level from the top with group types, idle CPUs and the NUMA
//!   `imb_numa_nr` rule, then `find_idlest_group_cpu()`) from the parent's CPU at
//!   that moment, its vruntime placed as `wake_up_new_task()` does (half a slice to
//!   its deadline with `ENQUEUE_INITIAL` from 6.12), the parent paying the
//!   remote rq lock and IPI; its averages from `post_init_entity_util_avg()`.
//! - **Noise** (`workload::Noise`): background tasks (per-CPU kthreads, unbound
//!   daemons) run as ordinary fair tasks woken by their timers, outside the metrics;
//!   the tick's interrupt and softirq time is taken from the running task.
//! - **Core scheduling.** SMT siblings only run tasks of one cookie. Every schedule()
//!   picks for the whole core (`pick_next_task()`'s core-wide selection): each
//!   thread's best task (a running thread's by its own fair pick over its task and
//!   queue, EEVDF with RUN_TO_PARITY or CFS's leftmost), the most important of them by
//!   vruntime less the thread's `min_vruntime_fi` (`cfs_prio_less()`), and its cookie
//!   for every thread; a running sibling whose pick for the core is not its task
//!   (another cookie, or its own pick a queued task of the core's cookie) is
//!   preempted (an IPI) and switches to it, a thread with nothing of that cookie is
//!   forced idle (accounted). `min_vruntime_fi` follows
//!   `min_vruntime` except while the core stays in force idle, and `min_vruntime` is
//!   kept lazily (raised at each core-wide pick). At a tick, a task alone on its CPU
//!   that has used half its slice while a sibling is forced idle reschedules
//!   (`task_tick_core()`). A CPU forced idle steals a queued task of its core's
//!   cookie from the CPUs of its domains (`sched_core_balance()`).
//!   Not modelled: the sibling still on its way to schedule() (IPI or C-state exit in
//!   flight) is left out of a pick and picks for itself when it gets there; the
//!   sibling's switch is immediate (its IPI is charged as time); the steal's scan is
//!   instantaneous; `sched_core_find()`'s order is not kept (a running sibling whose
//!   own pick has another cookie keeps its task when that has the core's cookie).

mod api;
mod balance;
mod build;
mod capture;
mod core;
mod core_sched;
mod delayed;
#[cfg(test)]
mod delayed_tests;
mod event;
mod fair;
mod fork;
#[cfg(test)]
mod fork_tests;
mod idle;
#[cfg(test)]
mod idle_tests;
mod invariants;
mod load_avg;
mod menu;
mod newidle;
#[cfg(test)]
mod on_cpu_tests;
mod pelt;
pub mod perfetto;
mod pipe;
mod pipe_mutex;
#[cfg(test)]
mod pipe_mutex_cost_tests;
#[cfg(test)]
mod pipe_mutex_tests;
#[cfg(test)]
mod pipe_tests;
mod program;
pub mod record;
mod start;
#[cfg(test)]
mod start_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
mod tg_load;
#[cfg(test)]
mod tg_load_tests;
pub mod time;
mod ttwu;
#[cfg(test)]
mod ttwu_queue_tests;
mod wakelist;
#[cfg(test)]
mod wakelist_tests;

use thiserror::Error;

use crate::cost::{CacheShare, CostModel, CostTerms, LineTerm, ReadCopies, RqLock, SharedLines};
use crate::cpumask::{CpuId, CpuMask, PerCpu};
use crate::metrics::{Metrics, MAX_SERIES};
use crate::patch::PatchSet;
use crate::release::Release;
use crate::rng::Rng;
use crate::sched_domain::DomainError;
use crate::topology::Machine;
use crate::wakeup::{SchedState, TaskId, TaskState, WakeEnv, Waker};
use crate::workload::{Noise, Plan, TaskSpec, MAX_TASKS};

pub use capture::CapturedWake;
use event::{Event, EventQueue};
use pelt::Pelt;
pub use pipe_mutex::PipeMutexStats;
use program::{validate_program, Code};
use record::Recorder;
pub use record::{RecordConfig, Recording};
pub use time::SimTime;

/// Mixed into the seed for the noise's own random stream (tick softirqs), so the
/// workload's samples do not depend on how many ticks drew.
const NOISE_SEED: u64 = 0x6e6f_6973_655f_7631;

/// `sysctl_sched_migration_cost`: tasks that ran this recently are cache hot, and
/// newidle balance needs this much average idle time.
pub(crate) const MIGRATION_COST_NS: u64 = 500_000;
// The workload's task limit and the background tasks (at most two per CPU) keep the
// pending events (one timer per task at most, a few per CPU) well inside the event
// queue's bound.
const _: () = assert!(MAX_TASKS + 6 * crate::cpumask::MAX_CPUS as usize + 16 < event::MAX_PENDING);
const _: () = assert!(std::mem::size_of::<Task>() == 128);

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SimError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("the CPU set is empty or has no online CPU")]
    EmptyCpus,
    #[error("workload: {0}")]
    Workload(String),
    #[error("task {} sends to task {}, which does not exist", .task.0, .to.0)]
    BadTarget { task: TaskId, to: TaskId },
    #[error("the workload did not finish within its cap of {cap_ms} ms of simulated time")]
    DidNotFinish { cap_ms: u64 },
    #[error("a run may last at most {max_s} s of simulated time")]
    TooLong { max_s: u64 },
    #[error("invariant broken at {at}: {what}")]
    Invariant { at: SimTime, what: String },
}

/// Everything a run needs.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub machine: Machine,
    pub patches: PatchSet,
    /// The CPUs the workload may use (`numactl -C`/`-N`).
    pub allowed: CpuMask,
    pub plan: Plan,
    pub seed: u64,
    /// Throughput workloads: total simulated time (warm-up included). Completion
    /// workloads: the cap.
    pub duration: SimTime,
    /// Throughput workloads: metrics start after this (counted from the benchmark's
    /// start clock where it has one).
    pub warmup: SimTime,
    /// Throughput workloads: make the warm-up at least the settling time (the LLC's
    /// longest busy balance round and two ticks, `balance::BalanceInfo::settle_time`),
    /// the run longer by as much.
    pub settle: bool,
    /// Check the conservation invariants after every event (tests).
    pub check_invariants: bool,
    /// The cost terms priced (all by default; switched off to measure one).
    pub cost_terms: CostTerms,
    /// The machine's background activity besides the workload.
    pub noise: Noise,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    Running(u32),
    Queued(u32),
    /// On the CPU's wake list (`__ttwu_queue_wakelist()`, core.c v6.8 3944-3952): woken
    /// (`TASK_WAKING`), not on its rq (`p->on_rq == 0`): not in `rq->nr_running`,
    /// `rq->cfs_tasks` or the core tree, its vruntime not placed and its load not
    /// attached until `sched_ttwu_pending()` activates it.
    WakeList(u32),
    /// Blocked for its program (its `block` says on what) but still queued for the
    /// scheduler: v6.12's delayed dequeue (`se->sched_delayed`, `set_delayed()`, fair.c
    /// v6.12.19 5483-5502; `delayed.rs`). In the CPU's `queue`, `nr_running`, `v_sum`
    /// and load, `p->on_rq` still 1, until its pick finishes the dequeue or a wake-up
    /// requeues it (`ttwu_runnable()`).
    Delayed(u32),
    Blocked,
    Exited,
}

impl Task {
    /// Blocked for its program: what a wake-up's caller tests (`Blocked`, or
    /// `Delayed`: still queued, woken by `ttwu_runnable()`).
    #[inline]
    fn asleep(&self) -> bool {
        matches!(self.loc, Loc::Blocked | Loc::Delayed(_))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    None,
    Wait,
    SendFull,
    Sleep,
    /// Not created yet: its parent has not forked it.
    Unborn,
    /// At its parent's start barrier (`start.rs`).
    Barrier,
    /// On a pipe mutex's wait list, `TASK_UNINTERRUPTIBLE` (`pipe_mutex.rs`): only
    /// the unlock wakes it.
    Mutex,
}

/// One task: 128 bytes, two cache lines (its hot fields are all of it; the cold ones
/// live in side tables, see [`Simulator::writers`]).
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Task {
    /// The next op, an index into [`Code::ins`].
    pc: u32,
    /// Passes through the current `Repeat` (at most [`MAX_REPEAT`]).
    iters: u32,
    loc: Loc,
    block: Block,
    tokens: u32,
    cap: u32,
    drop_when_full: bool,
    /// What is left of the current CPU burst.
    remaining_ns: u64,
    /// Costs to pay at the start of the next burst (wake-up path, cache distance).
    debt_ns: u64,
    vruntime: i64,
    deadline: i64,
    vlag: i64,
    load: Pelt,
    util: Pelt,
    /// When it was last woken, until it runs (`SimTime::MAX`: not waiting to run
    /// after a wake-up).
    wake_at: SimTime,
    last_cpu: u32,
    last_ran: SimTime,
    /// `se->exec_start == 0`: a new task (`__sched_fork()`), or one enqueued on a CPU
    /// other than the one it last ran on (`ENQUEUE_MIGRATED`, enqueue_entity(), fair.c
    /// v6.8 lines 5304-5306: "Entity has migrated, no longer consider this task
    /// hot"), not run since: `task_hot()` finds it cold whatever `last_ran` says.
    exec_start_zero: bool,
    timer_gen: u32,
    wakes_in_task: bool,
    own_mm: bool,
    latency_tracked: bool,
    new_task: bool,
    /// Background activity: not counted in `live`, kept out of the wake-up metrics.
    background: bool,
}

/// Why an idle CPU left its C-state without anything to run (`idle.rs`,
/// `Simulator::idle_reselect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IdleExit {
    /// Its own tick (a physical state; POLL takes the tick and polls on).
    Tick,
    /// A sleeper's hrtimer whose wakee went to another CPU: handled, as the tick
    /// is, at its expiry, the CPU out of its state at `Cpu::idle_entry`.
    Timer,
    /// The IPI of an active balance's `resched_curr()` for a task that has left
    /// since: handled, as the tick is, on its arrival, the CPU out of its state at
    /// `Cpu::idle_entry`.
    ReschedIpi,
    /// Another interrupt: an ilb kick.
    Interrupt,
    /// POLL's time limit (`dev->poll_time_limit`).
    PollLimit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Running the idle task in a C-state.
    Idle,
    /// Leaving idle: a `Resched` is pending (IPI in flight, C-state exit). Also,
    /// transiently, a CPU in `schedule()` whose task has just left (blocked, exited,
    /// put back) or whose newidle pass has just ended.
    Waking,
    /// Inside `newidle_balance()` after a pass that pulled nothing (fair.c v6.8
    /// 12349-12410, the domains' `load_balance()` to "out:"), for the pass's run time
    /// (`newidle.rs`): still in `__schedule()` with interrupts off (core.c v6.8 6656
    /// `local_irq_disable()` to `finish_task_switch()`), `rq->curr` the task that
    /// blocked (or the idle task, or a stopper that ran: `Cpu::newidle_curr_stopper`),
    /// `nr_running` 0, so `idle_cpu()` (core.c 7429-7445) holds only in a pass of the
    /// idle task (`RqState::curr_is_idle`). The `Resched` at the pass's end, or where a
    /// task queued meanwhile cuts it, picks again and goes idle without a second pass;
    /// what comes meanwhile is held (`Cpu::newidle_held`) until then.
    NewidlePass,
    /// Core scheduling keeps this CPU idle although tasks are queued.
    ForceIdle,
    Running,
}

#[derive(Clone, Debug)]
struct Cpu {
    mode: Mode,
    curr: u32,
    queue: Vec<u32>,
    /// Bumped on every new burst or preemption: invalidates `BurstEnd`.
    burst_gen: u32,
    /// Bumped on every switch (task, idle): invalidates `Resched`.
    switch_gen: u32,
    burst_end: SimTime,
    last_update: SimTime,
    stolen_ns: u64,
    /// The end of the balancing this CPU ran and was charged for (a newidle pass
    /// that pulled, in the task's debt; a tick's pass or the stopper, in
    /// `stolen_ns`), ns: its next `schedule()` takes the own rq lock from there, so
    /// that the pass's own lock holds are not waited for a second time.
    busy_until_ns: u64,
    need_resched: bool,
    /// `TIF_NEED_RESCHED` set on the running task by another CPU's `resched_curr()`
    /// (`set_nr_and_not_polling()`), whose IPI (`Event::Resched`) is on its way:
    /// until this CPU schedules, further `resched_curr()` and
    /// `check_preempt_wakeup_fair()` calls return early (core.c v6.8 1052, fair.c
    /// 8301) and send nothing.
    resched_ipi: bool,
    /// When the last wake-list IPI sent to this CPU while it ran lands
    /// (`Event::WakelistIpi`).
    wakelist_ipi_at: SimTime,
    /// The CPU's wake list (its `call_single_queue` entries of type `CSD_TYPE_TTWU`):
    /// the wakees `__ttwu_queue_wakelist()` queued (core.c v6.8 3944-3952), in the
    /// order `sched_ttwu_pending()` activates them.
    wake_list: Vec<u32>,
    idle_since: SimTime,
    cstate: u8,
    /// `ts->tick_stopped` (tick-sched): an idle CPU with its tick stopped takes no
    /// tick; restarted when it leaves idle.
    tick_stopped: bool,
    /// `rq->nohz_tick_stopped`: in `nohz.idle_cpus_mask` and counted out of the LLC's
    /// `nr_busy_cpus`, from `nohz_balance_enter_idle()` until the first busy tick's
    /// `nohz_balance_exit_idle()`.
    nohz_tick_stopped: bool,
    /// When the CPU entered its current C-state: `idle_since`, or the last idle
    /// tick or kick after which the governor chose again (the state's residency).
    cstate_since: SimTime,
    /// Bumped at each entry into a C-state: invalidates `PollLimit`.
    cstate_gen: u32,
    /// `ts->idle_entrytime`, from which `tick_nohz_get_sleep_length()` measures:
    /// set at idle entry (`tick_nohz_idle_enter()`) and at the exit of each
    /// interrupt taken while idle (`tick_nohz_irq_exit()`), not when POLL ends at
    /// its time limit (no interrupt).
    idle_entry: SimTime,
    /// `ts->got_idle_tick`: the CPU's tick ran while it was idle in a C-state
    /// (`tick_sched_do_timer()`, tick-sched.c v6.8 228-229); read and cleared when
    /// the stay ends (`menu_reflect()` → `tick_nohz_idle_got_tick()`, menu.c 453),
    /// whatever ended it: the tick itself, or POLL's time limit or a wake-up after a
    /// tick that POLL absorbed.
    got_idle_tick: bool,
    /// The menu governor's per-CPU data (`menu.rs`).
    menu: menu::MenuDevice,
    /// The hrtimers of the tasks sleeping here, `(expiry ns, task, timer_gen)`,
    /// earliest first; kept only on machines whose governor has a choice to make
    /// (more than one idle state), for `tick_nohz_get_sleep_length()`. Entries of
    /// timers that fired are dropped when met.
    timers: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32, u32)>>,
    /// `rq->avg_idle`, updated only by `ttwu_do_activate()` from `idle_stamp`.
    avg_idle_ns: u64,
    /// `rq->idle_stamp`: set when `newidle_balance()` starts, cleared when it finds a
    /// task or when a wake-up activates a task here (`ttwu_do_activate()`), which
    /// then feeds the time since into `avg_idle`. A CPU that leaves idle otherwise (a
    /// balancer's pull, a fork) keeps it until the next wake-up.
    idle_stamp: Option<SimTime>,
    util: Pelt,
    load: Pelt,
    /// v6.12: the PELT average of `1024 × nr_delayed`, what the CPU's runnable_avg
    /// (level `h_nr_running - h_nr_delayed`, pelt.c v6.12.19 320-324) lacks of its
    /// load_avg (level `load.weight`, delayed tasks included): `cpu_runnable()` is
    /// `load - delayed` (`sim/delayed.rs`). Stays 0 before 6.12.
    delayed: Pelt,
    /// `cfs_rq->h_nr_delayed` (fair.c v6.12.19 5498, 5520): the delayed tasks in
    /// `queue`.
    nr_delayed: u32,
    /// The workload's task group's `cfs_rq` here (`tg_load.rs`).
    tg: tg_load::TgCpu,
    /// `cfs_rq->removed`: the load and util of tasks that left this CPU asleep or
    /// died, taken off at its next PELT update (`update_cfs_rq_load_avg()`).
    removed_load: u64,
    removed_util: u64,
    /// `cfs_rq->avg.util_est`: the sum of the queued and running tasks' `util_est`.
    util_est: u64,
    /// The rq lock: `schedule()` and remote wakers queue on it.
    lock: RqLock,
    /// avg_vruntime of an empty runqueue.
    base_v: i64,
    /// Sum of the vruntimes of the queued tasks and the running one (the kernel's
    /// `avg_vruntime` running sum; all weights are equal, so `nr_running` is its
    /// `avg_load`).
    v_sum: i64,
    last_task: u32,
    last_mm: u32,
    force_idle_since: SimTime,
    slice_start: SimTime,
    /// Core scheduling: `cfs_rq->min_vruntime`, kept lazily (raised at each core-wide
    /// pick to the least vruntime here, never lowered).
    min_v: i64,
    /// Core scheduling: `cfs_rq->min_vruntime_fi`, the base `cfs_prio_less()`
    /// normalizes this CPU's vruntimes by.
    fi_base: i64,
    /// Core scheduling: a sibling's core-wide pick has chosen for this CPU, which
    /// re-picks from it instead of picking for the core again (`core_pick_seq`).
    core_forced: bool,
    /// Core scheduling: `rq->core_pick` (`u32::MAX`: none), this running CPU's own
    /// pick in a sibling's core-wide pick, then the task that pick chose for it to
    /// switch to.
    core_pick: u32,
    /// Core scheduling: `rq->idle->core_occupation`, the threads of the core that ran
    /// a task after the last core-wide pick that left this CPU idle.
    idle_occ: u8,
    /// The run time of the last `newidle_balance()` pass that pulled nothing (its
    /// `curr_cost`), for `schedule()` to spend before the CPU goes idle.
    newidle_cost_ns: u64,
    /// That pass: when it started, and where each domain it balanced ended (its
    /// running `curr_cost`), for a wake-up that interrupts it.
    newidle_start: SimTime,
    newidle_ends: Vec<u64>,
    /// When the earliest `Resched` on its way ends that pass (its end, or where a
    /// task queued meanwhile cuts it).
    newidle_resched_at: SimTime,
    /// What came during that pass, with interrupts off, and is taken at its end
    /// ([`Simulator::newidle_pass_over`]).
    newidle_held: NewidleHeld,
    /// That pass's `nohz_newidle_balance()` set `NOHZ_NEWILB_KICK` (clear before it):
    /// taken back if the pass ends with a task on the rq, for which the kernel's
    /// "out:" runs no `nohz_newidle_balance()` ([`Simulator::newidle_balance_out`]).
    newidle_newilb: bool,
    /// That pass follows a stopper's run (`newidle_pass_over()` ran one): its
    /// `rq->curr` is the stopper, which a fair wakee's `wakeup_preempt()` does not
    /// `resched_curr()` (core.c v6.8 2247-2252).
    newidle_curr_stopper: bool,
    /// The task this CPU's `__schedule()` took off when it blocked, whose
    /// `p->on_cpu` stays set until `finish_task_switch()` clears it (`finish_task()`,
    /// core.c v6.8 5041-5055): through the pick and a newidle pass (`SimTime::MAX`), then to
    /// the end of the switch to the next task. `u32::MAX`: none.
    descheduling: (u32, SimTime),
}

/// What reaches a CPU inside its newidle pass: `__schedule()` runs with interrupts
/// off (core.c v6.8 6656 `local_irq_disable()` to `finish_task_switch()`), so each is
/// taken after the pass's switch.
#[derive(Clone, Debug, Default)]
struct NewidleHeld {
    /// Sleep timers (task, `timer_gen`) that expired on this CPU.
    timers: Vec<(u32, u32)>,
    /// The tick expired on this CPU.
    tick: bool,
    /// An ilb kick's IPI: `nohz_csd_func()` runs after the pass (its flags stay set
    /// until then, so further kicks send no IPI).
    kick: bool,
    /// An active balance's stopper was woken on this CPU: it runs at the pass's end,
    /// first (the stop class), and the CPU then balances again.
    stopper: bool,
    /// A remote `resched_curr()` set `TIF_NEED_RESCHED` on `rq->curr`, the task that
    /// blocked, and sent an IPI (`set_nr_and_not_polling()`): further ones return
    /// early.
    ipi: bool,
}

/// The simulator. Build with [`Simulator::new`], then [`Simulator::run`].
pub struct Simulator {
    env: WakeEnv,
    machine: Machine,
    cost: CostModel,
    state: SchedState,
    /// Per task: the wake-up path's view of it (as waker and as wakee).
    views: Vec<Waker>,
    /// Per CPU: its idle task as `current` of a wake-up from interrupt context
    /// ([`Simulator::irq_current`]).
    idle_views: Vec<Waker>,
    tasks: Vec<Task>,
    /// Per task: the senders blocked on its full mailbox (bounded by the number of
    /// tasks). Kept out of `Task`: only pipe workloads with small mailboxes use it.
    writers: Vec<Vec<u32>>,
    /// Per task: its mailbox's pages if it is a pipe
    /// ([`crate::workload::TaskSpec::pipe`]), whose writers wait exclusively.
    pipes: Vec<Option<pipe::Pipe>>,
    /// Some task's mailbox is a pipe. Without one no pipe op or pipe mutex ever
    /// happens, and the interpreter and the wake-up skip the per-task pipe tables.
    any_pipe: bool,
    /// Writers woken from a full pipe that found it still full and waited again
    /// (`wait_event_interruptible_exclusive()`'s loop, fs/pipe.c v6.5 line 573).
    futile_writer_wakeups: u64,
    /// Per task: blocked in a send to a full mailbox since the send began
    /// (pipe_write()'s `wake_next_writer`, fs/pipe.c v6.5 line 576).
    write_waited: Vec<bool>,
    /// Per task: its pipe read or write in progress, ended when its work (the `Run`
    /// after the `Wait` or `Send`) is over (`sim/pipe.rs`).
    pipe_ops: Vec<pipe::PipeOp>,
    /// Per task: its pipe's mutex (used only where `pipes` has a pipe).
    mutexes: Vec<pipe_mutex::PipeMutex>,
    /// Per task: its `mutex_lock()` in progress (`pipe_mutex.rs`).
    mutex_wait: Vec<pipe_mutex::MutexWait>,
    /// What the pipes' mutexes did while measuring.
    mutex_stats: pipe_mutex::PipeMutexStats,
    /// Tests: every wake-up's (wakee, waker, the caller's flags), when `Some`.
    #[cfg(test)]
    wake_log: Option<Vec<(u32, Option<u32>, crate::wakeup::WakeFlags)>>,
    /// The process tree: per task, its children in the order its `Fork`s create them,
    /// and how many it has created.
    children: Vec<Vec<u32>>,
    forked: Vec<u32>,
    /// Start barriers and the start clock (`start.rs`).
    start: start::Start,
    /// Per task: the CPU it was first placed on (`u32::MAX` until created).
    start_cpu: Vec<u32>,
    /// Per task: the CPU whose averages hold its load and util (`cfs_rq_of(se)` while
    /// attached, see `load_avg.rs`); `u32::MAX` when attached nowhere (not created,
    /// migrating, dead).
    attached: Vec<u32>,
    /// Per task: `p->se.avg.util_est` (the EWMA, with `UTIL_AVG_UNCHANGED`), and the
    /// PELT period in which it was last written (`load_avg.rs`).
    util_est: Vec<(u32, u32)>,
    /// Noise: the timer interrupt's ns at each tick of a running CPU, the chance (ppm)
    /// of softirq work at a tick and its ns, and their own random stream.
    tick_irq_ns: u64,
    softirq_ppm: u64,
    softirq_ns: u64,
    noise_rng: Rng,
    code: Code,
    cpus: PerCpu<Cpu>,
    /// Per CPU: its LLC's index into `llc_lines`.
    llc_of: Vec<u16>,
    /// Per CPU: sd_llc_id.
    llc_id_of: Vec<u32>,
    /// Per LLC: its `sched_domain_shared` line, and which CPUs hold a current copy.
    llc_lines: SharedLines,
    /// The tasks' footprints in each CPU's caches.
    cache: CacheShare,
    /// The workload's task group: its `tg->load_avg` line (`tg_load.rs`).
    tg: tg_load::TgLoad,
    /// Per CPU: its SMT siblings, itself excluded.
    siblings: Vec<Vec<u32>>,
    /// Core scheduling, per task: `p->core_occupation`, the threads of its core that
    /// ran a task after the last core-wide pick that ran it (empty without cookies).
    core_occ: Vec<u8>,
    balance: balance::BalanceInfo,
    /// The balancing pass in progress: where it has got to, its lock time
    /// (`balance/locks.rs`).
    lb_clock: balance::locks::LbClock,
    queue: EventQueue,
    rng: Rng,
    now: SimTime,
    metrics: Metrics,
    events: u64,
    /// Per task, its place in its CPU's `rq->cfs_tasks` (larger: nearer the head):
    /// stamped from `mru_seq` when it is enqueued (`account_entity_enqueue()`'s
    /// `list_add()`, fair.c v6.8 line 3578), picked to run (`list_move()` to the head,
    /// line 8487) or passed over by `detach_tasks()` (`goto next: list_move()`, line
    /// 9164). A side table: `Task` stays 128 bytes.
    cfs_mru: Vec<u64>,
    /// The last stamp of `cfs_mru` handed out.
    mru_seq: u64,
    live: u32,
    end: SimTime,
    warmup: SimTime,
    /// How much of the measured window comes before every LLC's first busy balance
    /// round from the benchmark's start (`BalanceInfo::settle_time` less the warm-up,
    /// at most the window): zero for a settled warm-up or a completion workload.
    unsettled: SimTime,
    until_exit: bool,
    measuring: bool,
    last_units: u64,
    check: bool,
    eevdf: bool,
    /// DELAY_DEQUEUE and DELAY_ZERO (v6.12 on, [`Release::has_delay_dequeue`]).
    delay_dequeue: bool,
    /// PLACE_REL_DEADLINE (v6.12 on, [`Release::has_rel_deadline`]).
    rel_deadline: bool,
    slice_ns: i64,
    smt: bool,
    core_sched: bool,
    active_cpus: Vec<u32>,
    error: Option<SimError>,
    /// The event recorder (`None`: off, and every hook is one test of this).
    rec: Option<Box<Recorder>>,
}
