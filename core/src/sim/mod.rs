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
//!        the simulator applies Decision.effects and charges Decision.costs (cost.rs)
//! ```
//!
//! Time is integer nanoseconds; the only randomness is [`Rng`], seeded from the
//! scenario; no clock, thread or OS randomness is touched, so one scenario gives the
//! same digest natively and in wasm32.
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
//!   [`Simulator::llc_line_access`]), an IPI or the remote rq lock (queueing on the
//!   lock), then the wakee's C-state exit and IPI receive, and on its first run the
//!   cache-distance cost of the data the waker left.
//! - **Idle.** Per-machine cpuidle states; a menu-like governor picks the deepest
//!   state whose target residency is below the mean of the CPU's last 8 idle periods.
//!   Idle CPUs take no ticks; the tick is "stopped" (nr_busy_cpus written) when the
//!   prediction exceeds a tick.
//! - **PELT.** Per task and per CPU, integer, 32 ms half-life. A CPU's load is the
//!   average of its runnable count (so blocked tasks' load is not kept on the CPU they
//!   left, unlike the kernel's blocked-load tracking).
//! - **Load balancing.** Periodic (per domain, `min_interval` × `busy_factor` when busy,
//!   by the first idle CPU of the local group as `should_we_balance()` picks it): pull one
//!   queued task from the busiest CPU of the busiest group when the local group has an
//!   idle CPU or the busiest group is above `imbalance_pct`; LLC-level balancing
//!   produces SIS_UTIL's `nr_idle_scan` through `wakeup::update_idle_cpu_scan()`. Newidle:
//!   when `avg_idle` >= 500 us, pull one queued task from the busiest CPU, lowest domain
//!   first. No group types, no misfit/asym packing, no NUMA imbalance allowances.
//! - **Fork.** Tasks start through a mirror of `sched_balance_find_dst_cpu()`: at each
//!   level the group with the most idle CPUs (local group on ties), then its first
//!   idle CPU.
//! - **Core scheduling.** SMT siblings only run tasks of one cookie. Every schedule()
//!   picks for the whole core (`pick_next_task()`'s core-wide selection): each
//!   thread's best task, the most important of them by vruntime less the thread's
//!   `min_vruntime_fi` (`cfs_prio_less()`), and its cookie for every thread; a
//!   sibling running another cookie is preempted (an IPI), a thread with nothing of
//!   that cookie is forced idle (accounted). `min_vruntime_fi` follows
//!   `min_vruntime` except while the core stays in force idle, and `min_vruntime` is
//!   kept lazily (raised at each core-wide pick). At a tick, a task alone on its CPU
//!   that has used half its slice while a sibling is forced idle reschedules
//!   (`task_tick_core()`). A CPU forced idle steals a queued task of its core's
//!   cookie from the CPUs of its domains (`sched_core_balance()`, in `balance.rs`).
//!   Not modelled: the sibling still on its way to schedule() (IPI or C-state exit in
//!   flight) is left out of a pick and picks for itself when it gets there; the
//!   sibling's switch is immediate (its IPI is charged as time); the steal's scan is
//!   instantaneous.

pub mod balance;
pub mod event;
pub mod pelt;
pub mod time;

use thiserror::Error;

use crate::cost::CostModel;
use crate::cpumask::{CpuId, CpuMask};
use crate::metrics::{fnv, Metrics, FNV_OFFSET, MAX_SERIES};
use crate::patch::PatchSet;
use crate::release::Release;
use crate::rng::Rng;
use crate::sched_domain::DomainError;
use crate::topology::Machine;
use crate::wakeup::{
    self, NoTrace, QueuePath, SchedState, TaskId, TaskState, WakeEnv, WakeFlags, Waker,
};
use crate::workload::{Dist, Op, Plan, MAX_REPEAT, MAX_TASKS};

use event::{Event, EventQueue};
use pelt::Pelt;
pub use time::SimTime;

/// `sysctl_sched_migration_cost`: tasks that ran this recently are cache hot, and
/// newidle balance needs this much average idle time.
pub const MIGRATION_COST_NS: u64 = 500_000;
/// `MIN_NR_TASKS_DURING_FORCEIDLE` (fair.c): a task alone on a CPU whose sibling is
/// forced idle yields after a slice shared by this many.
const MIN_NR_TASKS_DURING_FORCEIDLE: u64 = 2;
/// Upper bound on ops interpreted for one task without consuming time.
const MAX_OPS_PER_STEP: u32 = 10_000;
// The workload's task limit keeps the pending events (one timer per task at most, a
// few per CPU) well inside the event queue's bound.
const _: () = assert!(MAX_TASKS + 4 * crate::cpumask::MAX_CPUS as usize + 16 < event::MAX_PENDING);
const _: () = assert!(std::mem::size_of::<Task>() == 128);

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SimError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("the CPU set is empty or has no online CPU")]
    EmptyCpus,
    #[error("workload: {0}")]
    Workload(String),
    #[error("task {task} sends to task {to}, which does not exist")]
    BadTarget { task: u32, to: u32 },
    #[error(
        "the workload did not finish within {cap_ms} ms of simulated time; raise --duration-ms"
    )]
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
    /// Throughput workloads: metrics start after this.
    pub warmup: SimTime,
    /// Check the conservation invariants after every event (tests).
    pub check_invariants: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    Running(u32),
    Queued(u32),
    Blocked,
    Exited,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    None,
    Wait,
    SendFull,
    Sleep,
}

/// A program op as the simulator runs it ([`Op`] compiled): 12 bytes instead of 32,
/// with distributions and repeat counts in side tables and jump targets absolute in
/// the one code array all tasks share, so a task's next op is one load from a short,
/// dense array (the interpreter's op fetch was the run's most frequent L1 miss).
#[derive(Clone, Copy, Debug)]
enum Ins {
    /// Index into [`Code::dists`].
    Run(u32),
    Send(u32),
    Wait,
    /// Index into [`Code::dists`].
    Sleep(u32),
    Count(u32),
    /// `times`: index into [`Code::times`].
    Repeat {
        to: u32,
        times: u32,
    },
    Jump(u32),
    Exit,
}

/// Every task's program, compiled into [`Ins`].
#[derive(Debug, Default)]
struct Code {
    ins: Vec<Ins>,
    /// The distinct distributions (workloads give every task the same few).
    dists: Vec<Dist>,
    times: Vec<u64>,
}

impl Code {
    /// Appends `prog`; returns the index of its first op.
    fn add(&mut self, prog: &[Op]) -> u32 {
        let base = self.ins.len() as u32;
        for &op in prog {
            let ins = match op {
                Op::Run(d) => Ins::Run(self.dist(d)),
                Op::Send { to } => Ins::Send(to),
                Op::Wait => Ins::Wait,
                Op::Sleep(d) => Ins::Sleep(self.dist(d)),
                Op::Count(n) => Ins::Count(n),
                Op::Repeat { to, times } => {
                    self.times.push(times);
                    Ins::Repeat {
                        to: base + to as u32,
                        times: (self.times.len() - 1) as u32,
                    }
                }
                Op::Jump { to } => Ins::Jump(base + to as u32),
                Op::Exit => Ins::Exit,
            };
            self.ins.push(ins);
        }
        base
    }

    fn dist(&mut self, d: Dist) -> u32 {
        match self.dists.iter().position(|&x| x == d) {
            Some(i) => i as u32,
            None => {
                self.dists.push(d);
                (self.dists.len() - 1) as u32
            }
        }
    }
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
    timer_gen: u32,
    wakes_in_task: bool,
    own_mm: bool,
    latency_tracked: bool,
    new_task: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Running the idle task in a C-state.
    Idle,
    /// Leaving idle: a `Resched` is pending (IPI in flight, C-state exit).
    Waking,
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
    need_resched: bool,
    idle_since: SimTime,
    cstate: u8,
    tick_stopped: bool,
    idle_hist: [u64; 8],
    idle_hist_pos: u8,
    avg_idle_ns: u64,
    util: Pelt,
    load: Pelt,
    lock_free_at: SimTime,
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
    /// Core scheduling: `rq->idle->core_occupation`, the threads of the core that ran
    /// a task after the last core-wide pick that left this CPU idle.
    idle_occ: u8,
}

/// State of one LLC's `sched_domain_shared` cache line.
#[derive(Clone, Debug, Default)]
struct LlcLine {
    version: u32,
    last_writer: u32,
    busy_until: SimTime,
}

/// The simulator. Build with [`Simulator::new`], then [`Simulator::run`].
pub struct Simulator {
    env: WakeEnv,
    machine: Machine,
    cost: CostModel,
    state: SchedState,
    /// Per task: the wake-up path's view of it (as waker and as wakee).
    views: Vec<Waker>,
    tasks: Vec<Task>,
    /// Per task: the senders blocked on its full mailbox (bounded by the number of
    /// tasks). Kept out of `Task`: only pipe workloads with small mailboxes use it.
    writers: Vec<Vec<u32>>,
    code: Code,
    cpus: Vec<Cpu>,
    /// Per CPU: its LLC's index into `llc_lines`.
    llc_of: Vec<u16>,
    /// Per CPU: sd_llc_id.
    llc_id_of: Vec<u32>,
    llc_lines: Vec<LlcLine>,
    /// Per (cpu, llc index): the line version this CPU last read.
    seen: Vec<u32>,
    n_llcs: usize,
    /// Per CPU: its SMT siblings, itself excluded.
    siblings: Vec<Vec<u32>>,
    /// Core scheduling, per task: `p->core_occupation`, the threads of its core that
    /// ran a task after the last core-wide pick that ran it (empty without cookies).
    core_occ: Vec<u8>,
    balance: balance::BalanceInfo,
    queue: EventQueue,
    rng: Rng,
    now: SimTime,
    pub metrics: Metrics,
    events: u64,
    live: u32,
    end: SimTime,
    warmup: SimTime,
    until_exit: bool,
    measuring: bool,
    last_units: u64,
    check: bool,
    eevdf: bool,
    slice_ns: i64,
    smt: bool,
    core_sched: bool,
    active_cpus: Vec<u32>,
    error: Option<SimError>,
}

/// What a core-wide pick leaves for the siblings to follow.
#[derive(Clone, Copy, Debug)]
struct CoreSync {
    /// The cookie of the core's most important task (`None`: nothing runnable).
    cookie: Option<u64>,
    /// The core was in force idle before the pick.
    fi_before: bool,
}

/// What a task does after interpreting its program.
enum Next {
    Run(u64),
    Block,
    Exit,
}

impl Simulator {
    pub fn new(cfg: SimConfig) -> Result<Simulator, SimError> {
        let env = WakeEnv::new(&cfg.machine, cfg.patches)?;
        let machine = cfg.machine;
        let n = machine.nr_cpus() as usize;
        let online = env.domains.cpu_map.clone();
        let allowed = cfg.allowed.and(&online);
        if allowed.is_empty() {
            return Err(SimError::EmptyCpus);
        }
        let cost = CostModel::new(&machine);
        let tick_ns = cost.params.tick_ns;
        let mut state = SchedState::all_idle(n as u32, |c| {
            env.domains.try_cpu(c).map_or(1, |d| d.sd_llc_size)
        });
        state.hz = 1_000_000_000 / tick_ns;
        for (c, rq) in state.rqs.iter_mut().enumerate() {
            rq.capacity = machine.cpus[c].capacity as u64;
            rq.active = online.test_cpu(CpuId(c as u32));
        }
        // LLC bookkeeping.
        let mut llc_ids: Vec<u32> = Vec::new();
        let mut llc_of = vec![0u16; n];
        let mut llc_id_of = vec![0u32; n];
        for c in 0..n {
            let id = env
                .domains
                .try_cpu(CpuId(c as u32))
                .map_or(c as u32, |d| d.sd_llc_id.0);
            llc_id_of[c] = id;
            let idx = match llc_ids.iter().position(|&x| x == id) {
                Some(i) => i,
                None => {
                    llc_ids.push(id);
                    llc_ids.len() - 1
                }
            };
            llc_of[c] = idx as u16;
        }
        let n_llcs = llc_ids.len();
        let siblings: Vec<Vec<u32>> = (0..n)
            .map(|c| {
                env.smt_mask(CpuId(c as u32))
                    .iter()
                    .map(|x| x.0)
                    .filter(|&x| x != c as u32)
                    .collect()
            })
            .collect();
        let smt = env.sched_smt_active();

        // Tasks.
        let plan = cfg.plan;
        let nt = plan.tasks.len();
        if nt == 0 {
            return Err(SimError::Workload("the workload has no tasks".into()));
        }
        if nt > MAX_TASKS {
            return Err(SimError::Workload(format!(
                "{nt} tasks: the simulator runs at most {MAX_TASKS}"
            )));
        }
        if cfg.duration > event::MAX_RUN {
            return Err(SimError::TooLong {
                max_s: event::MAX_RUN.ns() / 1_000_000_000,
            });
        }
        let mut tasks = Vec::with_capacity(nt);
        let mut code = Code::default();
        let mut views = Vec::with_capacity(nt);
        let mut active_mask = CpuMask::new(n as u32);
        for (i, spec) in plan.tasks.iter().enumerate() {
            validate_program(i as u32, &spec.program, nt as u32)?;
            let mask = match &spec.allowed {
                Some(m) => m.and(&online),
                None => allowed.clone(),
            };
            if mask.is_empty() {
                return Err(SimError::EmptyCpus);
            }
            active_mask.or_assign(&mask);
            let first = mask.first().expect("checked non-empty");
            tasks.push(Task {
                pc: code.add(&spec.program),
                iters: 0,
                loc: Loc::Blocked,
                block: Block::None,
                tokens: 0,
                cap: spec.mailbox_cap.max(1),
                drop_when_full: spec.drop_when_full,
                remaining_ns: 0,
                debt_ns: 0,
                vruntime: 0,
                deadline: 0,
                vlag: 0,
                load: Pelt::default(),
                util: Pelt::default(),
                wake_at: SimTime::MAX,
                last_cpu: first.0,
                last_ran: SimTime::ZERO,
                timer_gen: 0,
                wakes_in_task: spec.wakes_in_task,
                own_mm: spec.own_mm,
                latency_tracked: plan.latency_tasks.is_empty()
                    || plan.latency_tasks.contains(&(i as u32)),
                new_task: true,
            });
            let mut ts = TaskState::new(TaskId(i as u32), first, mask);
            ts.load = 0;
            ts.cookie = spec.cookie;
            views.push(Waker {
                cpu: first,
                task: Some(ts),
                in_task: spec.wakes_in_task,
            });
        }
        let core_sched = plan.tasks.iter().any(|spec| spec.cookie != 0);
        state.core_sched_enabled = core_sched;
        state.enable_idle_hint();
        let active_cpus: Vec<u32> = active_mask.iter().map(|c| c.0).collect();
        let cpus = (0..n)
            .map(|_| Cpu {
                mode: Mode::Idle,
                curr: u32::MAX,
                queue: Vec::new(),
                burst_gen: 0,
                switch_gen: 0,
                burst_end: SimTime::ZERO,
                last_update: SimTime::ZERO,
                stolen_ns: 0,
                need_resched: false,
                idle_since: SimTime::ZERO,
                cstate: 0,
                tick_stopped: true,
                idle_hist: [tick_ns; 8],
                idle_hist_pos: 0,
                avg_idle_ns: 2 * MIGRATION_COST_NS,
                util: Pelt::default(),
                load: Pelt::default(),
                lock_free_at: SimTime::ZERO,
                base_v: 0,
                v_sum: 0,
                last_task: u32::MAX,
                last_mm: u32::MAX,
                force_idle_since: SimTime::ZERO,
                slice_start: SimTime::ZERO,
                min_v: i64::MIN,
                fi_base: 0,
                core_forced: false,
                idle_occ: 0,
            })
            .collect();
        let release = cfg.patches.release;
        let eevdf = release >= Release::new(6, 6);
        // sysctl_sched_base_slice 0.75 ms × (1 + ilog2(min(ncpus, 8))).
        let factor = 1 + online.weight().clamp(1, 8).ilog2() as i64;
        let slice_ns = 750_000 * factor;
        let balance = balance::BalanceInfo::new(&env, &active_cpus);
        let series_interval = (cfg.duration.ns() / MAX_SERIES as u64).max(10_000_000);
        let mut sim = Simulator {
            env,
            machine,
            cost,
            state,
            views,
            writers: vec![Vec::new(); tasks.len()],
            tasks,
            code,
            cpus,
            llc_of,
            llc_id_of,
            llc_lines: vec![LlcLine::default(); n_llcs],
            seen: vec![0; n * n_llcs],
            n_llcs,
            siblings,
            core_occ: if core_sched { vec![0; nt] } else { Vec::new() },
            balance,
            queue: EventQueue::new(),
            rng: Rng::new(cfg.seed),
            now: SimTime::ZERO,
            metrics: Metrics::new(n, series_interval),
            events: 0,
            live: nt as u32,
            end: cfg.duration,
            warmup: if plan.until_exit {
                SimTime::ZERO
            } else {
                cfg.warmup
            },
            until_exit: plan.until_exit,
            measuring: false,
            last_units: 0,
            check: cfg.check_invariants,
            eevdf,
            slice_ns,
            smt,
            core_sched,
            active_cpus,
            error: None,
        };
        sim.start();
        Ok(sim)
    }

    /// Places every task as `wake_up_new_task()` would, from the first CPU of the set,
    /// and starts ticks and sampling.
    fn start(&mut self) {
        let parent = self.active_cpus[0];
        for t in 0..self.tasks.len() as u32 {
            let mask = self.views[t as usize]
                .task
                .as_ref()
                .expect("views hold tasks")
                .allowed
                .clone();
            let cpu = self.find_idlest_cpu_fork(parent, &mask);
            self.tasks[t as usize].last_cpu = cpu;
            {
                let v = self.views[t as usize]
                    .task
                    .as_mut()
                    .expect("views hold tasks");
                v.prev_cpu = CpuId(cpu);
                v.recent_used_cpu = CpuId(cpu);
            }
            self.enqueue(t, cpu);
        }
        let tick = self.cost.params.tick_ns;
        let n_active = self.active_cpus.len() as u64;
        // Stagger ticks across CPUs as the kernel's tick offsets do.
        let ticks = self
            .active_cpus
            .iter()
            .enumerate()
            .map(|(i, &c)| (tick * (i as u64 + 1) / (n_active + 1), c))
            .collect();
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
        } else {
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
                Ok(())
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

    pub fn finished(&self) -> bool {
        self.error.is_some() || (self.until_exit && self.live == 0) || self.now >= self.end
    }

    /// Processes one event; false when the run is over.
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

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    pub fn cost_model(&self) -> &CostModel {
        &self.cost
    }

    pub fn active_cpus(&self) -> &[u32] {
        &self.active_cpus
    }

    /// Tasks that have not exited.
    pub fn live_tasks(&self) -> u32 {
        self.live
    }

    /// The end of the run: the duration (warm-up included), or the cap of a
    /// completion workload.
    pub fn end_time(&self) -> SimTime {
        self.end
    }

    /// When the metrics start (zero for completion workloads).
    pub fn warmup_time(&self) -> SimTime {
        if self.until_exit {
            SimTime::ZERO
        } else {
            self.warmup
        }
    }

    /// Past the warm-up: the metrics count.
    pub fn measuring(&self) -> bool {
        self.measuring
    }

    /// Pending events (bounded: a few per CPU plus one timer per sleeping task).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// A digest of the run's outcome: time, event count, metrics and the RNG state.
    pub fn digest(&self) -> u64 {
        let mut h = fnv(FNV_OFFSET, self.now.ns());
        h = fnv(h, self.events);
        h = fnv(h, self.metrics.digest());
        h = fnv(h, self.rng.clone().next_u64());
        for t in &self.tasks {
            h = fnv(h, t.vruntime as u64);
            h = fnv(h, t.last_cpu as u64);
        }
        h
    }

    // ---------------------------------------------------------------- accounting

    /// `update_curr()`: charges the running task for the time since the last update.
    #[inline]
    fn update_curr(&mut self, cpu: u32) {
        let now = self.now;
        let c = &mut self.cpus[cpu as usize];
        if c.mode != Mode::Running {
            return;
        }
        let d = now.since(c.last_update);
        c.last_update = now;
        if d == 0 {
            return;
        }
        let t = c.curr as usize;
        c.v_sum += d as i64;
        self.tasks[t].vruntime += d as i64;
        if self.measuring {
            self.metrics.busy_ns[cpu as usize] += d;
        }
    }

    /// Updates the CPU's PELT signals to now with the level it had so far, and
    /// publishes them into the wake-up state.
    #[inline]
    fn update_cpu_pelt(&mut self, cpu: u32) {
        let now = self.now.ns();
        let c = &mut self.cpus[cpu as usize];
        if c.util.last_ns == now && c.load.last_ns == now {
            // Already updated at this instant (and published): nothing decays.
            return;
        }
        let running = if c.mode == Mode::Running { 1024 } else { 0 };
        let nr = self.state.rqs[cpu as usize].nr_running as u64;
        Pelt::update_pair(&mut c.util, &mut c.load, now, running, 1024 * nr);
        let rq = &mut self.state.rqs[cpu as usize];
        rq.util_avg = c.util.avg().min(rq.capacity);
        rq.load_avg = c.load.avg();
    }

    fn flush_accounting(&mut self) {
        for c in 0..self.cpus.len() as u32 {
            self.update_curr(c);
            let cpu = &mut self.cpus[c as usize];
            if cpu.mode == Mode::ForceIdle && self.measuring {
                self.metrics.force_idle_ns += self.now.since(cpu.force_idle_since);
                cpu.force_idle_since = self.now;
            }
        }
    }

    // ---------------------------------------------------------------- fair class

    /// `avg_vruntime()`: the mean vruntime of the queued tasks and the current one.
    #[inline]
    fn avg_vruntime(&self, cpu: u32) -> i64 {
        let c = &self.cpus[cpu as usize];
        match self.state.rqs[cpu as usize].nr_running {
            0 => c.base_v,
            n => c.v_sum.div_euclid(n as i64),
        }
    }

    /// `vruntime_eligible()`: `v <= avg_vruntime()` tested as the kernel does, by
    /// multiplying instead of dividing (for integers, floor(sum / n) >= v exactly when
    /// sum >= v × n).
    #[inline]
    fn vruntime_eligible(&self, cpu: u32, v: i64) -> bool {
        let c = &self.cpus[cpu as usize];
        match self.state.rqs[cpu as usize].nr_running {
            0 => v <= c.base_v,
            n => (v as i128) * (n as i128) <= c.v_sum as i128,
        }
    }

    /// Lag limit (`update_entity_lag()`): max(2 × slice, a tick).
    fn lag_limit(&self) -> i64 {
        (2 * self.slice_ns).max(self.cost.params.tick_ns as i64)
    }

    /// `enqueue_task_fair()` + `place_entity()`.
    fn enqueue(&mut self, t: u32, cpu: u32) {
        self.update_cpu_pelt(cpu);
        let avg = self.avg_vruntime(cpu);
        let now = self.now.ns();
        let slice = self.slice_ns;
        let eevdf = self.eevdf;
        let task = &mut self.tasks[t as usize];
        if eevdf {
            task.vruntime = avg - task.vlag;
            // PLACE_DEADLINE_INITIAL: new tasks start with half a slice.
            let s = if task.new_task { slice / 2 } else { slice };
            task.deadline = task.vruntime + s;
        } else {
            // CFS place_entity(): sleeper credit of half sched_latency (GENTLE_FAIR_SLEEPERS).
            let thresh = 4 * 6_000_000 / 2;
            task.vruntime = (avg - task.vlag).max(avg - thresh);
            task.deadline = task.vruntime + slice;
        }
        task.new_task = false;
        task.load.update(now, 0);
        task.loc = Loc::Queued(cpu);
        let v = task.vruntime;
        let c = &mut self.cpus[cpu as usize];
        c.queue.push(t);
        c.v_sum += v;
        self.state.update_rq(CpuId(cpu), |rq| rq.nr_running += 1);
        if self.state.rqs[cpu as usize].nr_running == 1 {
            self.cpus[cpu as usize].base_v = avg;
        }
    }

    /// Removes the running task from its CPU as it blocks or exits (`dequeue_task_fair()`).
    fn dequeue_curr(&mut self, cpu: u32, loc: Loc) {
        self.update_curr(cpu);
        self.update_cpu_pelt(cpu);
        let avg = self.avg_vruntime(cpu);
        let lim = self.lag_limit();
        let now = self.now;
        let t = self.cpus[cpu as usize].curr;
        let task = &mut self.tasks[t as usize];
        task.vlag = (avg - task.vruntime).clamp(-lim, lim);
        task.load.update(now.ns(), 1024);
        task.util.update(now.ns(), 1024);
        task.loc = loc;
        task.last_ran = now;
        task.remaining_ns = 0;
        let v = task.vruntime;
        let c = &mut self.cpus[cpu as usize];
        c.v_sum -= v;
        c.curr = u32::MAX;
        c.mode = Mode::Waking; // transient: schedule() follows
        c.base_v = avg;
        c.burst_gen = c.burst_gen.wrapping_add(1);
        self.state.update_rq(CpuId(cpu), |rq| rq.nr_running -= 1);
        if loc == Loc::Exited {
            self.live -= 1;
        }
    }

    /// Puts the running task back on its queue (preemption).
    fn put_prev(&mut self, cpu: u32) {
        self.update_curr(cpu);
        self.update_cpu_pelt(cpu);
        let now = self.now;
        let c = &mut self.cpus[cpu as usize];
        let t = c.curr;
        let rem = c.burst_end.since(now) + c.stolen_ns;
        c.stolen_ns = 0;
        c.curr = u32::MAX;
        c.mode = Mode::Waking;
        c.burst_gen = c.burst_gen.wrapping_add(1);
        c.queue.push(t);
        let task = &mut self.tasks[t as usize];
        task.remaining_ns = rem;
        task.util.update(now.ns(), 1024);
        task.loc = Loc::Queued(cpu);
        task.last_ran = now;
    }

    /// `p->core_cookie` (0: none), as the wake-up path reads it from the task's view.
    fn cookie(&self, t: u32) -> u64 {
        self.views[t as usize].task.as_ref().map_or(0, |v| v.cookie)
    }

    /// The cookie the CPU's SMT siblings are running, if any (core scheduling).
    #[inline]
    fn sibling_cookie(&self, cpu: u32) -> Option<u64> {
        if self.core_sched {
            self.sibling_cookie_sched(cpu)
        } else {
            None
        }
    }

    fn sibling_cookie_sched(&self, cpu: u32) -> Option<u64> {
        self.siblings[cpu as usize].iter().find_map(|&s| {
            let sc = &self.cpus[s as usize];
            (sc.mode == Mode::Running).then(|| self.cookie(sc.curr))
        })
    }

    /// `pick_next_task_fair()`: EEVDF's earliest eligible deadline, or CFS's smallest
    /// vruntime; under core scheduling only tasks of the cookie the core runs.
    #[inline]
    fn pick_next(&self, cpu: u32) -> Option<usize> {
        self.pick_next_with(cpu, self.sibling_cookie(cpu))
    }

    /// [`Simulator::pick_next`] among the tasks of cookie `want` (all with `None`).
    /// Always inlined: out of line it costs the reference run 2% more instructions.
    #[inline(always)]
    fn pick_next_with(&self, cpu: u32, want: Option<u64>) -> Option<usize> {
        let c = &self.cpus[cpu as usize];
        if c.queue.is_empty() {
            return None;
        }
        let ok = |t: u32| want.is_none_or(|k| self.cookie(t) == k);
        if self.eevdf {
            // The earliest deadline among eligible tasks, else the least vruntime; the
            // first in queue order on ties. (A deadline or vruntime never reaches
            // i64::MAX: both are nanoseconds of a run capped at hours.)
            let (mut best_d, mut best) = (i64::MAX, usize::MAX);
            let (mut least_v, mut fallback) = (i64::MAX, usize::MAX);
            for (i, &t) in c.queue.iter().enumerate() {
                if !ok(t) {
                    continue;
                }
                let task = &self.tasks[t as usize];
                if task.deadline < best_d && self.vruntime_eligible(cpu, task.vruntime) {
                    (best_d, best) = (task.deadline, i);
                }
                if task.vruntime < least_v {
                    (least_v, fallback) = (task.vruntime, i);
                }
            }
            [best, fallback].into_iter().find(|&i| i != usize::MAX)
        } else {
            c.queue
                .iter()
                .enumerate()
                .filter(|(_, &t)| ok(t))
                .min_by_key(|(_, &t)| self.tasks[t as usize].vruntime)
                .map(|(i, _)| i)
        }
    }

    /// `check_preempt_wakeup_fair()` for task `w` newly queued on a CPU running `curr`.
    fn should_preempt(&mut self, cpu: u32, w: u32) -> bool {
        self.update_curr(cpu);
        let c = &self.cpus[cpu as usize];
        if c.mode != Mode::Running {
            return false;
        }
        // No cookie test here (there is none in the kernel): under core scheduling the
        // schedule() that follows picks for the whole core.
        let curr = &self.tasks[c.curr as usize];
        let wt = &self.tasks[w as usize];
        if self.eevdf {
            let curr_eligible = self.vruntime_eligible(cpu, curr.vruntime);
            // RUN_TO_PARITY: an eligible current keeps its slice.
            if curr_eligible && curr.vruntime < curr.deadline {
                return false;
            }
            wt.deadline < curr.deadline && self.vruntime_eligible(cpu, wt.vruntime)
        } else {
            // wakeup_gran(): 1 ms × (1 + ilog2(ncpus)), 4 ms on 8+ CPUs.
            curr.vruntime - wt.vruntime > 4_000_000
        }
    }

    // ---------------------------------------------------------------- schedule

    /// `schedule()` on `cpu` whose current task has already been put back, blocked or
    /// exited (or which was idle).
    fn schedule(&mut self, cpu: u32) {
        let forced = self.core_sched && std::mem::take(&mut self.cpus[cpu as usize].core_forced);
        // Bounded: each iteration removes a task from this CPU's queue.
        loop {
            let leaving_idle = {
                let c = &self.cpus[cpu as usize];
                matches!(c.mode, Mode::Idle | Mode::Waking | Mode::ForceIdle) && c.curr == u32::MAX
            };
            if leaving_idle {
                self.leave_idle_accounting(cpu);
            }
            self.state
                .update_rq(CpuId(cpu), |rq| rq.ttwu_pending = false);
            let (pick, core) = if self.core_sched && !forced {
                self.core_pick(cpu)
            } else {
                (self.pick_next(cpu), None)
            };
            let Some(i) = pick else {
                if !self.cpus[cpu as usize].queue.is_empty() {
                    self.enter_force_idle(cpu);
                    self.core_sync(cpu, core);
                    // queue_core_balance(): a forced-idle CPU looks for work of the
                    // core's cookie elsewhere once it is in the idle task.
                    self.core_balance(cpu);
                    return;
                }
                if let Some(t) = self.newidle_balance(cpu) {
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
                self.enter_idle(cpu);
                self.core_sync(cpu, core);
                return;
            };
            if self.run_task(cpu, i) {
                self.core_sync(cpu, core);
                return;
            }
        }
    }

    /// The core-wide selection of `pick_next_task()` (core.c) with core scheduling:
    /// each thread's own best task (`pick_task()`: the sibling's running task, or the
    /// best queued on an idle or forced-idle sibling), the most important of them by
    /// `cfs_prio_less()` (vruntime less the CPU's `min_vruntime_fi`; a sibling wins
    /// only when strictly ahead), and for this CPU its best task of that task's cookie.
    /// Returns the pick and, for [`Simulator::core_sync`], the core's new cookie and
    /// whether the core was in force idle before.
    ///
    /// Simplified: a sibling still on its way to schedule() (an IPI or C-state exit in
    /// flight) is left out, and picks for itself when it gets there.
    #[inline(never)]
    fn core_pick(&mut self, cpu: u32) -> (Option<usize>, Option<CoreSync>) {
        let fi_before = self.core_in_force_idle(cpu);
        let local = self.pick_next_with(cpu, None);
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
                    Some(self.cpus[s as usize].curr)
                }
                Mode::Waking => None,
                Mode::Idle | Mode::ForceIdle => self
                    .pick_next_with(s, None)
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

    /// After a core-wide pick on `cpu`: each sibling follows it (`resched_curr()` of a
    /// sibling running another cookie, an IPI; a forced-idle or idle sibling with a
    /// task of the core's cookie runs it), then `min_vruntime_fi` is brought up to
    /// date on every thread unless the core was and still is in force idle.
    #[inline]
    fn core_sync(&mut self, cpu: u32, core: Option<CoreSync>) {
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
                let sc = &self.cpus[s as usize];
                let follow = match sc.mode {
                    Mode::Running => self.cookie(sc.curr) != k,
                    Mode::Idle | Mode::ForceIdle => sc.queue.iter().any(|&t| self.cookie(t) == k),
                    Mode::Waking => false,
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
            Mode::Idle | Mode::Waking => {}
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

    fn leave_idle_accounting(&mut self, cpu: u32) {
        let now = self.now;
        let measuring = self.measuring;
        let c = &mut self.cpus[cpu as usize];
        match c.mode {
            Mode::ForceIdle => {
                if measuring {
                    self.metrics.force_idle_ns += now.since(c.force_idle_since);
                }
                c.force_idle_since = now;
            }
            Mode::Idle | Mode::Waking => {
                if c.idle_since != SimTime::MAX {
                    let d = now.since(c.idle_since);
                    let pos = c.idle_hist_pos as usize;
                    c.idle_hist[pos] = d;
                    c.idle_hist_pos = ((pos + 1) % 8) as u8;
                    // update_avg(&rq->avg_idle, delta), capped at 2 × max_idle_balance_cost.
                    let avg = c.avg_idle_ns as i64 + (d as i64 - c.avg_idle_ns as i64) / 8;
                    c.avg_idle_ns = (avg.max(0) as u64).min(2 * MIGRATION_COST_NS);
                    c.idle_since = SimTime::MAX;
                    // SIS_PROP's wake_avg_idle follows avg_idle (ttwu_do_wakeup()).
                    let ai = c.avg_idle_ns;
                    let jiffies = now.ns() / self.cost.params.tick_ns;
                    let sp = &mut self.state.sis_prop;
                    if let Some(x) = sp.wake_avg_idle_ns.get_mut(cpu as usize) {
                        *x = ai / 2;
                    }
                    if let Some(x) = sp.wake_stamp.get_mut(cpu as usize) {
                        *x = jiffies;
                    }
                }
                if c.tick_stopped {
                    // nohz: set_cpu_sd_state_busy() at the first tick back.
                    c.tick_stopped = false;
                    let llc = self.llc_id_of[cpu as usize] as usize;
                    self.state.llc_shared[llc].nr_busy_cpus += 1;
                    let cost = self.llc_line_access(cpu, true);
                    self.cpus[cpu as usize].stolen_ns += cost;
                }
            }
            Mode::Running => {}
        }
    }

    /// Switches `cpu` to the task at `queue[i]`. Returns false if the task blocked or
    /// exited at once (its program found nothing to run), in which case the caller
    /// picks again.
    fn run_task(&mut self, cpu: u32, i: usize) -> bool {
        let now = self.now;
        let t = self.cpus[cpu as usize].queue.swap_remove(i);
        let p = &self.cost.params;
        let (ctx_ns, mm_ns, hold) = (p.ctx_switch_ns, p.ctx_switch_mm_ns, p.sched_lock_hold_ns);
        let c = &mut self.cpus[cpu as usize];
        let mut switch_ns = 0;
        if c.last_task != t {
            switch_ns = ctx_ns;
            let task = &self.tasks[t as usize];
            if task.own_mm && c.last_mm != t {
                switch_ns += mm_ns;
            }
            // schedule() takes the own rq lock: wait behind remote wakers holding it.
            let start = c.lock_free_at.max(now);
            switch_ns += start.since(now);
            c.lock_free_at = start + hold;
            if self.measuring {
                self.metrics.context_switches += 1;
            }
        }
        c.last_task = t;
        if self.tasks[t as usize].own_mm {
            c.last_mm = t;
        }
        c.mode = Mode::Running;
        c.curr = t;
        c.switch_gen = c.switch_gen.wrapping_add(1);
        c.burst_gen = c.burst_gen.wrapping_add(1);
        c.last_update = now;
        c.slice_start = now;
        c.need_resched = false;
        {
            let task = &mut self.tasks[t as usize];
            task.loc = Loc::Running(cpu);
            task.util.update(now.ns(), 0);
            task.last_cpu = cpu;
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
        self.state.update_rq(CpuId(cpu), |rq| {
            rq.curr_is_idle = false;
            rq.polling = false;
        });
        self.update_cpu_pelt(cpu);
        self.publish_core_cookie(cpu);
        // The time of the switch is spent before the task's own work.
        let mut burst = self.tasks[t as usize].remaining_ns;
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
        self.tasks[t as usize].remaining_ns = 0;
        let c = &mut self.cpus[cpu as usize];
        let total = switch_ns + burst + std::mem::take(&mut c.stolen_ns);
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

    /// The idle governor (menu-like) and idle entry.
    fn enter_idle(&mut self, cpu: u32) {
        let now = self.now;
        let tick = self.cost.params.tick_ns;
        let c = &mut self.cpus[cpu as usize];
        c.idle_since = now;
        let predicted = c.idle_hist.iter().sum::<u64>() / 8;
        let states = &self.cost.params.idle_states;
        let mut idx = 0;
        for (i, s) in states.iter().enumerate() {
            if s.target_residency_ns <= predicted {
                idx = i;
            }
        }
        c.cstate = idx as u8;
        let polling = states[idx].polling;
        let stop_tick = predicted >= tick && !c.tick_stopped;
        if stop_tick {
            c.tick_stopped = true;
        }
        self.switch_to_idle_task(cpu, Mode::Idle, polling);
        if stop_tick {
            // nohz_balance_enter_idle() → set_cpu_sd_state_idle(): nr_busy_cpus--.
            let llc = self.llc_id_of[cpu as usize] as usize;
            let ls = &mut self.state.llc_shared[llc];
            ls.nr_busy_cpus = ls.nr_busy_cpus.saturating_sub(1);
            self.llc_line_access(cpu, true);
        }
        self.update_cpu_pelt(cpu);
        // __update_idle_core(): with SMT, a core whose threads are all idle.
        if self.smt {
            let all_idle = self.siblings[cpu as usize]
                .iter()
                .all(|&s| self.state.rqs[s as usize].idle_cpu());
            if all_idle {
                let llc = self.llc_id_of[cpu as usize] as usize;
                self.state.llc_shared[llc].has_idle_cores = true;
            }
        }
        self.publish_core_cookie(cpu);
        self.kick_force_idle_siblings(cpu);
    }

    fn enter_force_idle(&mut self, cpu: u32) {
        self.cpus[cpu as usize].force_idle_since = self.now;
        self.switch_to_idle_task(cpu, Mode::ForceIdle, false);
        self.update_cpu_pelt(cpu);
        self.publish_core_cookie(cpu);
    }

    /// The switch to the idle task that idle and force idle share.
    fn switch_to_idle_task(&mut self, cpu: u32, mode: Mode, polling: bool) {
        let c = &mut self.cpus[cpu as usize];
        c.mode = mode;
        c.curr = u32::MAX;
        c.switch_gen = c.switch_gen.wrapping_add(1);
        c.last_task = u32::MAX;
        self.state.update_rq(CpuId(cpu), |rq| {
            rq.curr_is_idle = true;
            rq.polling = polling;
        });
    }

    /// `rq->core->core_cookie` for the CPU's core: the cookie of a running thread.
    #[inline]
    fn publish_core_cookie(&mut self, cpu: u32) {
        if self.core_sched {
            self.publish_core_cookie_sched(cpu);
        }
    }

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
    fn kick_force_idle_siblings(&mut self, cpu: u32) {
        if self.core_sched {
            self.kick_force_idle_siblings_sched(cpu);
        }
    }

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

    // ---------------------------------------------------------------- events

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
                    self.put_prev(cpu);
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

    fn on_resched(&mut self, cpu: u32, gen: u32) {
        let c = &self.cpus[cpu as usize];
        if c.switch_gen != gen {
            return;
        }
        match c.mode {
            Mode::Running => {
                // A preemption request: switch if the pick differs.
                self.put_prev(cpu);
                if self.measuring {
                    self.metrics.preemptions += 1;
                }
                self.kick_force_idle_siblings(cpu);
                self.schedule(cpu);
            }
            Mode::Idle | Mode::Waking | Mode::ForceIdle => self.schedule(cpu),
        }
    }

    fn on_timer(&mut self, task: u32, gen: u32) {
        let t = &self.tasks[task as usize];
        if t.timer_gen != gen || t.block != Block::Sleep || t.loc != Loc::Blocked {
            return;
        }
        // The hrtimer fires on the CPU the task slept on; the wake-up runs in its
        // interrupt context.
        let cpu = t.last_cpu;
        self.wake(task, None, cpu);
    }

    fn on_tick(&mut self, cpu: u32) {
        let tick = self.cost.params.tick_ns;
        self.state.jiffies = self.now.ns() / tick;
        if self.cpus[cpu as usize].mode == Mode::Running {
            self.update_curr(cpu);
            self.update_cpu_pelt(cpu);
            let c = &self.cpus[cpu as usize];
            let t = c.curr as usize;
            let mut resched = false;
            if self.eevdf {
                // update_deadline(): a new slice once the deadline is reached.
                let task = &mut self.tasks[t];
                if task.vruntime >= task.deadline {
                    task.deadline = task.vruntime + self.slice_ns;
                    resched = !self.cpus[cpu as usize].queue.is_empty();
                }
            } else {
                // check_preempt_tick(): ideal slice sched_latency / nr_running.
                let nr = self.state.rqs[cpu as usize].nr_running.max(1) as u64;
                let ideal = (24_000_000 / nr).max(3_000_000);
                resched = self.now.since(c.slice_start) >= ideal && !c.queue.is_empty();
            }
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
                self.periodic_balance(cpu);
                return;
            }
            if resched {
                let g = self.cpus[cpu as usize].switch_gen;
                self.queue.push(self.now, Event::Resched { cpu, gen: g });
            }
        }
        self.periodic_balance(cpu);
    }

    /// `task_tick_core()`'s test on a running CPU: a sibling is forced idle
    /// (`core_forceidle_count`), the current task is the only one here
    /// (`cfs.nr_running == 1`), and it has run more than half its slice since it was
    /// picked (`__entity_slice_used(curr, 2)`: `se->slice` under EEVDF, `sched_slice()`
    /// of a lone task, `sysctl_sched_latency`, before).
    fn core_tick_hands_over(&self, cpu: u32) -> bool {
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

    fn on_sample(&mut self) {
        if !self.measuring {
            // End of the warm-up: forget it.
            self.flush_accounting();
            self.metrics.reset(self.now.ns());
            self.measuring = true;
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

    // ---------------------------------------------------------------- programs

    /// Interprets task `t`'s program on `cpu` until it has CPU work, blocks or exits.
    fn advance(&mut self, t: u32, cpu: u32) -> Next {
        for _ in 0..MAX_OPS_PER_STEP {
            let task = &mut self.tasks[t as usize];
            let op = self.code.ins[task.pc as usize];
            match op {
                Ins::Run(d) => {
                    let ns = self.code.dists[d as usize].sample(&mut self.rng)
                        + std::mem::take(&mut self.tasks[t as usize].debt_ns);
                    self.tasks[t as usize].pc += 1;
                    if ns > 0 {
                        return Next::Run(ns);
                    }
                }
                Ins::Send(to) => {
                    let r = &self.tasks[to as usize];
                    if r.tokens >= r.cap {
                        if r.drop_when_full {
                            self.tasks[t as usize].pc += 1;
                            continue;
                        }
                        if let Some(ns) = self.take_debt(t) {
                            return Next::Run(ns);
                        }
                        self.writers[to as usize].push(t);
                        self.tasks[t as usize].block = Block::SendFull;
                        return Next::Block;
                    }
                    self.tasks[to as usize].tokens += 1;
                    self.tasks[t as usize].pc += 1;
                    let r = &self.tasks[to as usize];
                    if r.loc == Loc::Blocked && r.block == Block::Wait {
                        self.wake(to, Some(t), cpu);
                    }
                }
                Ins::Wait => {
                    if task.tokens > 0 {
                        let was_full = task.tokens >= task.cap;
                        task.tokens -= 1;
                        task.pc += 1;
                        if was_full && !self.writers[t as usize].is_empty() {
                            // pipe_read(): wake the writers waiting for room.
                            let ws = std::mem::take(&mut self.writers[t as usize]);
                            for w in ws {
                                if self.tasks[w as usize].loc == Loc::Blocked
                                    && self.tasks[w as usize].block == Block::SendFull
                                {
                                    self.wake(w, Some(t), cpu);
                                }
                            }
                        }
                    } else {
                        if let Some(ns) = self.take_debt(t) {
                            return Next::Run(ns);
                        }
                        self.tasks[t as usize].block = Block::Wait;
                        return Next::Block;
                    }
                }
                Ins::Sleep(d) => {
                    if let Some(ns) = self.take_debt(t) {
                        return Next::Run(ns);
                    }
                    let dur = self.code.dists[d as usize].sample(&mut self.rng);
                    let task = &mut self.tasks[t as usize];
                    task.pc += 1;
                    task.timer_gen = task.timer_gen.wrapping_add(1);
                    task.block = Block::Sleep;
                    let g = task.timer_gen;
                    self.queue
                        .push(self.now + dur, Event::Timer { task: t, gen: g });
                    return Next::Block;
                }
                Ins::Count(n) => {
                    task.pc += 1;
                    if self.measuring {
                        self.metrics.units += n as u64;
                    }
                }
                Ins::Repeat { to, times } => {
                    task.iters += 1;
                    if (task.iters as u64) < self.code.times[times as usize] {
                        task.pc = to;
                    } else {
                        task.iters = 0;
                        task.pc += 1;
                    }
                }
                Ins::Jump(to) => task.pc = to,
                Ins::Exit => {
                    if let Some(ns) = self.take_debt(t) {
                        return Next::Run(ns);
                    }
                    return Next::Exit;
                }
            }
        }
        // Unreachable for validated programs (every loop holds a Run, Wait or Sleep);
        // let time advance rather than spin.
        Next::Run(1_000)
    }

    fn take_debt(&mut self, t: u32) -> Option<u64> {
        let d = std::mem::take(&mut self.tasks[t as usize].debt_ns);
        (d > 0).then_some(d)
    }

    // ---------------------------------------------------------------- wake-up

    /// `try_to_wake_up()` of blocked task `p` by `waker` (a task running on `cpu`) or,
    /// with `waker == None`, from interrupt context on `cpu` (a timer).
    fn wake(&mut self, p: u32, waker: Option<u32>, cpu: u32) {
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
    pub(crate) fn llc_line_access(&mut self, cpu: u32, _write: bool) -> u64 {
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

    // ---------------------------------------------------------------- invariants

    /// Conservation: every task is in exactly one place (running on one CPU, queued on
    /// one CPU, blocked or exited), every CPU is either running one task or idle, the
    /// wake-up state matches, and SMT siblings never run different cookies.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![0u8; self.tasks.len()];
        for (ci, c) in self.cpus.iter().enumerate() {
            let rq = &self.state.rqs[ci];
            let running = c.mode == Mode::Running;
            if running {
                let t = c.curr as usize;
                if t >= self.tasks.len() {
                    return Err(format!("CPU {ci} runs no valid task"));
                }
                if self.tasks[t].loc != Loc::Running(ci as u32) {
                    return Err(format!(
                        "CPU {ci} runs task {t} whose location is {:?}",
                        self.tasks[t].loc
                    ));
                }
                seen[t] += 1;
            } else if c.curr != u32::MAX {
                return Err(format!("CPU {ci} is {:?} but has a current task", c.mode));
            }
            if rq.curr_is_idle == running {
                return Err(format!(
                    "CPU {ci}: curr_is_idle={} but mode {:?}",
                    rq.curr_is_idle, c.mode
                ));
            }
            for &t in &c.queue {
                if self.tasks[t as usize].loc != Loc::Queued(ci as u32) {
                    return Err(format!(
                        "task {t} queued on CPU {ci} but located {:?}",
                        self.tasks[t as usize].loc
                    ));
                }
                seen[t as usize] += 1;
            }
            let nr = c.queue.len() as u32 + running as u32;
            let members = c.queue.iter().copied().chain(running.then_some(c.curr));
            let v_sum: i64 = members.map(|t| self.tasks[t as usize].vruntime).sum();
            if c.v_sum != v_sum {
                return Err(format!(
                    "CPU {ci}: vruntime sum {}, but its {nr} tasks sum to {v_sum}",
                    c.v_sum
                ));
            }
            if let Some(hint) = &self.state.idle_hint {
                if hint.test_cpu(CpuId(ci as u32)) != self.state.idle_ish(CpuId(ci as u32)) {
                    return Err(format!("CPU {ci}: the idle hint is stale"));
                }
            }
            if rq.nr_running != nr {
                return Err(format!(
                    "CPU {ci}: nr_running {} but {} tasks",
                    rq.nr_running, nr
                ));
            }
            if c.mode == Mode::Idle && !c.queue.is_empty() {
                return Err(format!(
                    "CPU {ci} idle with {} queued tasks and no wake-up pending",
                    c.queue.len()
                ));
            }
            if running && self.core_sched {
                let k = self.cookie(c.curr);
                for &s in &self.siblings[ci] {
                    let sc = &self.cpus[s as usize];
                    if sc.mode == Mode::Running && self.cookie(sc.curr) != k {
                        return Err(format!("SMT siblings {ci} and {s} run different cookies"));
                    }
                }
            }
        }
        let mut live = 0;
        for (i, t) in self.tasks.iter().enumerate() {
            match t.loc {
                Loc::Running(_) | Loc::Queued(_) => {
                    if seen[i] != 1 {
                        return Err(format!("task {i} found {} times on CPUs", seen[i]));
                    }
                    live += 1;
                }
                Loc::Blocked => {
                    if seen[i] != 0 {
                        return Err(format!("blocked task {i} is on a CPU"));
                    }
                    live += 1;
                }
                Loc::Exited => {
                    if seen[i] != 0 {
                        return Err(format!("exited task {i} is on a CPU"));
                    }
                }
            }
        }
        if live != self.live {
            return Err(format!(
                "{live} live tasks but the count says {}",
                self.live
            ));
        }
        Ok(())
    }
}

/// Every task program must make progress: targets exist, loops hold an op that takes
/// time or blocks, and the program ends in a jump or exit.
fn validate_program(task: u32, prog: &[Op], n_tasks: u32) -> Result<(), SimError> {
    if prog.is_empty() {
        return Err(SimError::Workload(format!(
            "task {task} has an empty program"
        )));
    }
    if prog.len() > u16::MAX as usize {
        return Err(SimError::Workload(format!(
            "task {task}'s program is too long"
        )));
    }
    for (i, op) in prog.iter().enumerate() {
        match *op {
            Op::Send { to } if to >= n_tasks => return Err(SimError::BadTarget { task, to }),
            Op::Repeat { times, .. } if times > MAX_REPEAT as u64 => {
                return Err(SimError::Workload(format!(
                    "task {task}: the loop at op {i} repeats {times} times; a loop may repeat at \
                     most {MAX_REPEAT} times"
                )));
            }
            Op::Repeat { to, .. } | Op::Jump { to }
                if to as usize > i
                    || !prog[to as usize..i]
                        .iter()
                        .any(|o| matches!(o, Op::Run(_) | Op::Wait | Op::Sleep(_))) =>
            {
                return Err(SimError::Workload(format!(
                    "task {task}: the loop at op {i} has no run, wait or sleep"
                )));
            }
            _ => {}
        }
    }
    if !matches!(prog.last(), Some(Op::Exit | Op::Jump { .. })) {
        return Err(SimError::Workload(format!(
            "task {task}'s program must end with exit or a jump"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::CostParams;
    use crate::topology::presets;
    use crate::workload::{self, TaskSpec, Workload};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// A cookie-pairs plan on a preset, and a 10 ms run of it on all its CPUs.
    fn cookie_pairs(preset: &str, threads: u32, work: Dist, cookies: bool) -> SimConfig {
        let machine = presets::machine(preset).unwrap();
        let n = machine.nr_cpus();
        let w = Workload::CookiePairs {
            threads,
            iterations: 2,
            work,
            sleep: work,
            cookies,
        };
        let plan = workload::build(&w, &CostParams::for_machine(&machine), n).unwrap();
        SimConfig {
            allowed: CpuMask::full(n),
            machine,
            patches: "6.8".parse().unwrap(),
            plan,
            seed: 1,
            duration: SimTime::from_ms(10),
            warmup: SimTime::ZERO,
            check_invariants: false,
        }
    }

    /// The wake-up path reads `p->core_cookie` from the task's view: the simulator
    /// must put each task's cookie there (it once kept its own copy and left the
    /// view's at 0, so every wakee looked cookie-less to select_idle_sibling()).
    #[test]
    fn the_wake_up_view_carries_the_task_cookie() {
        let work = Dist::Uniform { lo: 0, hi: 1_000 };
        let cfg = cookie_pairs("xeon-smt-8", 10, work, true);
        let want: Vec<u64> = cfg.plan.tasks.iter().map(|t| t.cookie).collect();
        assert!(want.iter().any(|&c| c != 0));
        let sim = Simulator::new(cfg).unwrap();
        for (t, &c) in want.iter().enumerate() {
            assert_eq!(sim.views[t].task.as_ref().map(|v| v.cookie), Some(c));
        }
    }

    /// A loop longer than a task can count is refused up front with the op named,
    /// and one at the limit is accepted.
    #[test]
    fn a_loop_past_the_repeat_limit_is_refused() {
        let cfg = |times: u64| {
            let mut cfg = cookie_pairs("flat-16", 2, Dist::Fixed { ns: 1_000 }, false);
            for t in &mut cfg.plan.tasks {
                for op in &mut t.program {
                    if let Op::Repeat { times: x, .. } = op {
                        *x = times;
                    }
                }
            }
            cfg
        };
        match Simulator::new(cfg(MAX_REPEAT as u64 + 1)) {
            Err(SimError::Workload(msg)) => {
                assert!(
                    msg.contains("the loop at op 2 repeats 4294967296 times"),
                    "{msg}"
                )
            }
            other => panic!("expected a workload error, got {:?}", other.err()),
        }
        assert!(Simulator::new(cfg(MAX_REPEAT as u64)).is_ok());
    }

    /// `task_tick_core()`: a lone task yields to a forced-idle sibling once it has run
    /// more than half its slice, and not before, nor with company on its own CPU.
    #[test]
    fn a_lone_task_yields_the_core_after_half_a_slice() {
        let cfg = cookie_pairs("xeon-smt-8", 10, Dist::Fixed { ns: 1_000 }, true);
        let mut sim = Simulator::new(cfg).unwrap();
        let cpu = 0;
        let sib = sim.siblings[0][0];
        sim.now = SimTime::from_ms(100);
        let half = sim.slice_ns as u64 / 2;
        let set = |sim: &mut Simulator, ran: u64, nr: u32, sib_mode: Mode| {
            let c = &mut sim.cpus[cpu];
            c.mode = Mode::Running;
            c.curr = 0;
            c.slice_start = SimTime(sim.now.ns() - ran);
            sim.state.rqs[cpu].nr_running = nr;
            sim.cpus[sib as usize].mode = sib_mode;
        };
        set(&mut sim, half, 1, Mode::ForceIdle);
        assert!(
            !sim.core_tick_hands_over(0),
            "exactly half a slice is not more"
        );
        set(&mut sim, half + 1, 1, Mode::ForceIdle);
        assert!(sim.core_tick_hands_over(0));
        set(&mut sim, half + 1, 2, Mode::ForceIdle);
        assert!(!sim.core_tick_hands_over(0), "another task queued here");
        set(&mut sim, half + 1, 1, Mode::Idle);
        assert!(!sim.core_tick_hands_over(0), "no sibling forced idle");
    }

    /// Two pinned tasks of different cookies on the two threads of one core: the one
    /// running since the last core-wide pick (its vruntime ahead of its base), the
    /// other just woken. The core-wide pick prefers the wakee (`cfs_prio_less()`):
    /// the running sibling is preempted and forced idle, not the wakee.
    fn core_pick_run() -> (Simulator, u32) {
        let sib = smt8_sibling_of_0();
        let ms = |n: u64| Dist::Fixed { ns: n * 1_000_000 };
        let tasks = vec![
            smt8_task(&[sib], 1, vec![Op::Run(ms(10)), Op::Exit]),
            smt8_task(&[0], 2, vec![Op::Sleep(ms(1)), Op::Run(ms(1)), Op::Exit]),
        ];
        (smt8_run(tasks), sib)
    }

    /// CPU 0's SMT sibling on xeon-smt-8.
    fn smt8_sibling_of_0() -> u32 {
        let machine = presets::machine("xeon-smt-8").unwrap();
        let env = WakeEnv::new(&machine, "6.12".parse().unwrap()).unwrap();
        let sib = env.smt_mask(CpuId(0)).iter().find(|c| c.0 != 0).unwrap();
        sib.0
    }

    /// A task of `cookie` that may run on `allowed` (CPUs of xeon-smt-8).
    fn smt8_task(allowed: &[u32], cookie: u64, program: Vec<Op>) -> TaskSpec {
        TaskSpec {
            role: "t",
            program,
            cookie,
            mailbox_cap: 1,
            wakes_in_task: true,
            own_mm: false,
            allowed: Some(CpuMask::from_cpus(8, allowed.iter().map(|&c| CpuId(c)))),
            drop_when_full: false,
        }
    }

    /// `tasks` on xeon-smt-8 under 6.12, to completion, invariants checked.
    fn smt8_run(tasks: Vec<TaskSpec>) -> Simulator {
        Simulator::new(SimConfig {
            allowed: CpuMask::full(8),
            machine: presets::machine("xeon-smt-8").unwrap(),
            patches: "6.12".parse().unwrap(),
            plan: Plan::to_completion(tasks),
            seed: 1,
            duration: SimTime::from_ms(100),
            warmup: SimTime::ZERO,
            check_invariants: true,
        })
        .unwrap()
    }

    #[test]
    fn the_core_wide_pick_prefers_the_wakee_over_the_running_sibling() {
        let (mut sim, sib) = core_pick_run();
        assert!(sim.run_until(SimTime::from_us(900)));
        assert_eq!(sim.cpus[sib as usize].mode, Mode::Running);
        assert_eq!(sim.cpus[0].mode, Mode::Idle);
        // The wakee runs from about 1 ms (timer, C-state exit) to about 2 ms.
        assert!(sim.run_until(SimTime::from_us(1_600)));
        assert_eq!((sim.cpus[0].mode, sim.cpus[0].curr), (Mode::Running, 1));
        assert_eq!(sim.cpus[sib as usize].mode, Mode::ForceIdle);
        // Then the preempted task gets its core back and finishes.
        sim.run().unwrap();
        assert_eq!(sim.live_tasks(), 0);
        assert!(
            sim.metrics.force_idle_ns > 900_000,
            "{}",
            sim.metrics.force_idle_ns
        );
    }

    /// One core (CPU 0 and its sibling) and a CPU `x` of another core: D (cookie 2)
    /// pinned to `x`; B and B' (cookie 2) pinned to CPU 0; A (cookie 1) pinned to the
    /// sibling; E (cookie 1) may run on CPU 0 or `x`, and forks onto `x` (CPU 0 has
    /// two tasks already), behind D. At time 0 CPU 0 picks B for the core, then the
    /// sibling's pick prefers A (ties go to the picking CPU) and forces CPU 0 idle.
    fn core_steal_run() -> (Simulator, u32, u32) {
        let sib = smt8_sibling_of_0();
        let x = (1..8).find(|&c| c != sib).unwrap();
        let run = || vec![Op::Run(Dist::Fixed { ns: 10_000_000 }), Op::Exit];
        let tasks = vec![
            smt8_task(&[x], 2, run()),
            smt8_task(&[0], 2, run()),
            smt8_task(&[0], 2, run()),
            smt8_task(&[sib], 1, run()),
            smt8_task(&[0, x], 1, run()),
        ];
        (smt8_run(tasks), sib, x)
    }

    /// `sched_core_balance()`: CPU 0, forced idle when the core-wide pick gives its
    /// core A's cookie, steals E (A's cookie) from behind D on another core; it
    /// leaves E there when E last ran with its whole core busy
    /// (`p->core_occupation > dst->idle->core_occupation`).
    #[test]
    fn a_forced_idle_cpu_steals_a_task_of_the_core_cookie() {
        let (a, e) = (3, 4);
        for (occupation, stolen) in [(0, true), (2, false)] {
            let (mut sim, sib, x) = core_steal_run();
            assert_eq!(sim.tasks[e].loc, Loc::Queued(x));
            sim.core_occ[e] = occupation;
            while sim.cpus[0].mode != Mode::ForceIdle {
                assert!(sim.step());
            }
            assert_eq!(sim.cpus[sib as usize].curr, a as u32);
            let want = if stolen {
                Loc::Queued(0)
            } else {
                Loc::Queued(x)
            };
            assert_eq!(sim.tasks[e].loc, want, "occupation {occupation}");
            assert_eq!(sim.metrics.core_steals, stolen as u64);
            sim.run().unwrap();
            assert_eq!(sim.live_tasks(), 0);
        }
    }
}
