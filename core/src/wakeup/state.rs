//! The scheduler state a wake-up decision reads.
//!
//! ```text
//!  SchedState ─┬─ rqs[cpu]: RqState        (rq->curr == idle?, nr_running, ttwu_pending, load, util, cookie, polling)
//!              ├─ llc_shared[sd_llc_id]    (sched_domain_shared: has_idle_cores, nr_idle_scan, nr_busy_cpus)
//!              └─ sis_prop                 (wake_avg_idle per rq, avg_scan_cost per CPU; kernels <= 6.6)
//!  TaskState   (the wakee p, and the waker `current`)
//! ```
//!
//! The wake-up code only reads this; what the kernel writes while deciding
//! (`record_wakee`, `p->recent_used_cpu`, `set_idle_cores`, SIS_PROP averages) comes back
//! as [`super::Effects`] for the caller to apply.

use serde::{Deserialize, Serialize};

use crate::cpumask::{CpuId, CpuMask, PerCpu};

/// A task id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(pub u32);

impl TryFrom<usize> for TaskId {
    type Error = std::num::TryFromIntError;
    fn try_from(v: usize) -> Result<Self, Self::Error> {
        u32::try_from(v).map(TaskId)
    }
}

/// One CPU's runqueue as the wake-up path sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RqState {
    /// `rq->curr == rq->idle`.
    pub curr_is_idle: bool,
    /// `rq->nr_running` (the running task counts).
    pub nr_running: u32,
    /// `rq->cfs.idle_h_nr_running`: queued SCHED_IDLE tasks.
    #[serde(default)]
    pub idle_h_nr_running: u32,
    /// `rq->ttwu_pending`: a wake-up is queued on this CPU's wakelist.
    #[serde(default)]
    pub ttwu_pending: bool,
    /// `cpu_load(rq)`: the CFS runqueue's PELT load_avg.
    #[serde(default)]
    pub load_avg: u64,
    /// `cpu_runnable(rq)`: the CFS runqueue's PELT runnable_avg as the simulator
    /// publishes it (the load balancer's and fork placement's `group_runnable`): its
    /// `load_avg` until 6.11, without v6.12's delayed tasks from 6.12 (`sim/delayed.rs`).
    /// Not part of a scenario: the wake-up module's `find_idlest_group()` reads
    /// `load_avg` for it.
    #[serde(skip)]
    pub runnable_avg: u64,
    /// `cpu_util_cfs(cpu)`: PELT util_avg, 0..=capacity.
    #[serde(default)]
    pub util_avg: u64,
    /// `capacity_of(cpu)`.
    #[serde(default = "default_capacity")]
    pub capacity: u64,
    /// `rq->core->core_cookie`: the cookie the core is running (0 = none).
    #[serde(default)]
    pub core_cookie: u64,
    /// The idle task is polling (TIF_POLLING_NRFLAG): a wakelist entry needs no IPI.
    #[serde(default)]
    pub polling: bool,
    /// `vcpu_is_preempted(cpu)`.
    #[serde(default)]
    pub vcpu_preempted: bool,
    /// `cpu_active(cpu)`.
    #[serde(default = "yes")]
    pub active: bool,
    /// `idle_get_state(rq)->exit_latency` (`struct cpuidle_state`, µs, `unsigned int`)
    /// of the idle state the CPU sits in; `None` when `idle_get_state()` is NULL (no
    /// cpuidle driver, or the CPU not in a cpuidle state). Only an idle CPU's value is
    /// read, by the slow path's `find_idlest_group_cpu()`. Default `Some(0)`: every
    /// idle CPU in one state of exit latency 0, so that with the default
    /// [`RqState::idle_stamp`] the first allowed idle CPU in the group's span order
    /// wins (what wake state files written before these keys existed meant).
    #[serde(default = "zero_exit_latency")]
    pub exit_latency_us: Option<u32>,
    /// `rq->idle_stamp`, ns: when the CPU last went idle (set by
    /// `update_idle_stamp()` in the newidle balance). `find_idlest_group_cpu()` prefers
    /// the most recent among idle CPUs of equal exit latency. Default 0.
    #[serde(default)]
    pub idle_stamp: u64,
}

fn zero_exit_latency() -> Option<u32> {
    Some(0)
}

fn default_capacity() -> u64 {
    1024
}

fn yes() -> bool {
    true
}

/// An idle CPU ([`RqState::idle`]).
impl Default for RqState {
    fn default() -> Self {
        RqState::idle()
    }
}

impl RqState {
    /// `idle_cpu()` (core.c): the idle task runs, nothing is queued or on the way.
    #[inline]
    pub fn idle_cpu(&self) -> bool {
        self.curr_is_idle && self.nr_running == 0 && !self.ttwu_pending
    }

    /// `available_idle_cpu()`: idle, and (in a guest) its vCPU is not preempted.
    #[inline]
    pub fn available_idle_cpu(&self) -> bool {
        self.idle_cpu() && !self.vcpu_preempted
    }

    /// `sched_idle_cpu()` (fair.c): only SCHED_IDLE tasks queued.
    #[inline]
    pub fn sched_idle_cpu(&self) -> bool {
        self.nr_running > 0 && self.nr_running == self.idle_h_nr_running
    }

    /// An idle CPU.
    pub fn idle() -> Self {
        RqState {
            curr_is_idle: true,
            nr_running: 0,
            idle_h_nr_running: 0,
            ttwu_pending: false,
            load_avg: 0,
            runnable_avg: 0,
            util_avg: 0,
            capacity: 1024,
            core_cookie: 0,
            polling: false,
            vcpu_preempted: false,
            active: true,
            exit_latency_us: zero_exit_latency(),
            idle_stamp: 0,
        }
    }

    /// A CPU running `nr` CFS tasks.
    pub fn busy(nr: u32) -> Self {
        RqState {
            curr_is_idle: false,
            nr_running: nr.max(1),
            load_avg: 1024 * nr.max(1) as u64,
            runnable_avg: 1024 * nr.max(1) as u64,
            util_avg: 1024,
            ..RqState::idle()
        }
    }
}

/// `struct sched_domain_shared` of one LLC.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlcShared {
    #[serde(default)]
    pub has_idle_cores: bool,
    /// Written by `update_idle_cpu_scan()`; 0 until the first LLC-level balance.
    #[serde(default)]
    pub nr_idle_scan: u32,
    #[serde(default)]
    pub nr_busy_cpus: u32,
}

/// SIS_PROP inputs (kernels up to 6.6, default on before 6.0).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SisPropState {
    /// `rq->avg_idle` per CPU, ns: what SIS_PROP reads before v5.14
    /// (`this_rq()->avg_idle / 512`). Absent in state files written before it
    /// existed: read as 0 (the smallest budget, 4).
    #[serde(default)]
    pub avg_idle_ns: Vec<u64>,
    /// `this_rq->wake_avg_idle` per CPU, ns (v5.14 to v6.6).
    pub wake_avg_idle_ns: Vec<u64>,
    /// `this_rq->wake_stamp` per CPU, jiffies.
    pub wake_stamp: Vec<u64>,
    /// `this_sd->avg_scan_cost` per CPU, ns: a field of `struct sched_domain`, not of
    /// `sched_domain_shared` (include/linux/sched/topology.h v5.12.9:103), and each CPU
    /// has its own LLC domain (`*per_cpu_ptr(sdd->sd, j) = sd`, topology.c
    /// v5.12.9:1857): select_idle_cpu() reads and updates the waker CPU's.
    pub avg_scan_cost_ns: Vec<u64>,
}

/// Everything the wake-up path reads that is not topology.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchedState {
    /// Per CPU ([`PerCpu`]: indexed by CPU number without a bounds check).
    pub rqs: PerCpu<RqState>,
    /// Indexed by `sd_llc_id` (a CPU number); entries for non-first CPUs are unused.
    pub llc_shared: Vec<LlcShared>,
    pub jiffies: u64,
    /// CONFIG_HZ: jiffies per second (record_wakee() decays flips once per HZ).
    #[serde(default = "default_hz")]
    pub hz: u64,
    /// `sched_core_enabled()`: some task carries a core-scheduling cookie.
    #[serde(default)]
    pub core_sched_enabled: bool,
    #[serde(default)]
    pub sis_prop: SisPropState,
    /// A cache, not state: when `Some`, exactly the CPUs for which
    /// `available_idle_cpu() || sched_idle_cpu()` holds. The owner keeps it in step
    /// by writing `rqs` through [`SchedState::update_rq`]; the untraced `select_idle_cpu()`
    /// scan then finds its answer with word operations instead of probing CPU by CPU,
    /// with the same result and the same probe counts. State files never carry it.
    #[serde(skip)]
    pub idle_hint: Option<CpuMask>,
}

fn default_hz() -> u64 {
    250
}

impl SchedState {
    /// Every CPU idle, `nr_idle_scan` as after an idle balance (full LLC weight).
    pub fn all_idle(nr_cpus: u32, llc_size_of: impl Fn(CpuId) -> u32) -> Self {
        let n = nr_cpus as usize;
        SchedState {
            rqs: PerCpu::filled(n, RqState::idle()),
            llc_shared: (0..nr_cpus)
                .map(|c| LlcShared {
                    has_idle_cores: false,
                    nr_idle_scan: llc_size_of(CpuId(c)),
                    nr_busy_cpus: 0,
                })
                .collect(),
            jiffies: 0,
            hz: default_hz(),
            core_sched_enabled: false,
            sis_prop: SisPropState {
                avg_idle_ns: vec![0; n],
                wake_avg_idle_ns: vec![0; n],
                wake_stamp: vec![0; n],
                avg_scan_cost_ns: vec![0; n],
            },
            idle_hint: None,
        }
    }

    pub fn rq(&self, cpu: CpuId) -> &RqState {
        &self.rqs[cpu.idx()]
    }

    /// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`, the test every scan probe makes.
    #[inline]
    pub fn idle_ish(&self, cpu: CpuId) -> bool {
        let rq = self.rq(cpu);
        rq.available_idle_cpu() || rq.sched_idle_cpu()
    }

    /// Starts keeping [`SchedState::idle_hint`].
    pub fn enable_idle_hint(&mut self) {
        let n = self.rqs.len() as u32;
        let mut m = CpuMask::new(n);
        for c in 0..n {
            if self.idle_ish(CpuId(c)) {
                m.set_cpu(CpuId(c));
            }
        }
        self.idle_hint = Some(m);
    }

    /// Changes `cpu`'s runqueue state through `f` and keeps the idle hint in step:
    /// the one way the simulator writes the fields `idle_ish()` reads.
    #[inline]
    pub fn update_rq(&mut self, cpu: CpuId, f: impl FnOnce(&mut RqState)) {
        f(&mut self.rqs[cpu.idx()]);
        self.sync_idle_hint(cpu);
    }

    /// Refreshes the hint's bit for `cpu` after its runqueue changed.
    #[inline]
    fn sync_idle_hint(&mut self, cpu: CpuId) {
        let idle = self.idle_ish(cpu);
        if let Some(m) = &mut self.idle_hint {
            m.assign_cpu(cpu, idle);
        }
    }
}

/// A task as the wake-up path sees it (the wakee `p`, or the waker `current`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskState {
    pub id: TaskId,
    /// `task_cpu(p)` / `p->wake_cpu`: where it last ran.
    pub prev_cpu: CpuId,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: CpuId,
    /// `p->cpus_ptr`.
    pub allowed: CpuMask,
    pub wakee_flips: u32,
    /// `p->wakee_flip_decay_ts`, jiffies.
    pub wakee_flip_decay_ts: u64,
    pub last_wakee: Option<TaskId>,
    /// `task_h_load(p)`.
    pub load: u64,
    /// `task_util_est(p)`.
    pub util: u64,
    /// `p->core_cookie` (0 = none).
    pub cookie: u64,
    /// `is_per_cpu_kthread(p)`.
    pub per_cpu_kthread: bool,
    /// `p->on_cpu`: still descheduling on `prev_cpu` when woken.
    pub on_cpu: bool,
    /// PF_EXITING: a sync wake-up from an exiting task is not treated as sync.
    pub exiting: bool,
}

impl TaskState {
    /// A plain CFS task that last ran on `prev` and may run anywhere in `allowed`.
    pub fn new(id: TaskId, prev: CpuId, allowed: CpuMask) -> Self {
        TaskState {
            id,
            prev_cpu: prev,
            recent_used_cpu: prev,
            allowed,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: None,
            load: 1024,
            util: 0,
            cookie: 0,
            per_cpu_kthread: false,
            on_cpu: false,
            exiting: false,
        }
    }
}

/// Who wakes: the CPU the wake-up runs on and its `current`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Waker {
    /// `smp_processor_id()`.
    pub cpu: CpuId,
    /// `current`; `None` for a wake-up from interrupt context (no task).
    pub task: Option<TaskState>,
    /// `in_task()`: false in hard/soft interrupt context.
    #[serde(default = "yes")]
    pub in_task: bool,
}

/// Wake flags (kernel/sched/sched.h, v6.8 values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WakeFlags(pub u32);

impl WakeFlags {
    /// No flag: `wake_up_process()`'s `try_to_wake_up(p, TASK_NORMAL, 0)`.
    pub const NONE: WakeFlags = WakeFlags(0);
    pub const EXEC: WakeFlags = WakeFlags(0x02);
    pub const FORK: WakeFlags = WakeFlags(0x04);
    pub const TTWU: WakeFlags = WakeFlags(0x08);
    pub const SYNC: WakeFlags = WakeFlags(0x10);
    pub const MIGRATED: WakeFlags = WakeFlags(0x20);
    pub const CURRENT_CPU: WakeFlags = WakeFlags(0x40);

    pub fn contains(self, f: WakeFlags) -> bool {
        self.0 & f.0 == f.0
    }

    pub fn union(self, f: WakeFlags) -> WakeFlags {
        WakeFlags(self.0 | f.0)
    }

    /// Any of `f`'s flags set.
    pub fn intersects(self, f: WakeFlags) -> bool {
        self.0 & f.0 != 0
    }

    /// These flags without `f`'s.
    pub fn without(self, f: WakeFlags) -> WakeFlags {
        WakeFlags(self.0 & !f.0)
    }
}
