//! The simulator's public face: building a run, and what a caller reads of it
//! (time, events, metrics, the recorder, the digest).

use super::capture::CapturedWake;
use super::record::{RecordConfig, Recording};
use super::{SimConfig, SimError, SimTime, Simulator};
use crate::cost::CostModel;
use crate::cpumask::CpuId;
use crate::metrics::{fnv, Metrics, FNV_OFFSET};
use crate::topology::Machine;
use crate::wakeup::TaskId;

impl Simulator {
    pub fn new(cfg: SimConfig) -> Result<Simulator, SimError> {
        Simulator::build(cfg, None)
    }

    /// [`Simulator::new`] with the event recorder on (see [`super::record`]): the same run,
    /// the same digest, and its events kept in a [`Recording`].
    pub fn with_recorder(cfg: SimConfig, rc: RecordConfig) -> Result<Simulator, SimError> {
        Simulator::build(cfg, Some(rc))
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

    /// The CPUs the run's tasks may use, in CPU order.
    pub fn active_cpus(&self) -> impl ExactSizeIterator<Item = CpuId> + '_ {
        self.active_cpus.iter().map(|&c| CpuId(c))
    }

    /// What the run has measured so far (since the warm-up).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Writers woken from a full pipe that found it still full (no page freed, or
    /// taken by another writer first) and waited again.
    pub fn futile_writer_wakeups(&self) -> u64 {
        self.futile_writer_wakeups
    }

    /// The workload's tasks that have not exited (background tasks not counted).
    pub fn live_tasks(&self) -> u32 {
        self.live
    }

    /// Tasks in all: the workload's, then the background ones.
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// The CPU task `t` was first placed on: at the start, or when its parent forked
    /// it; `None` before that (or for no such task).
    pub fn start_cpu(&self, t: TaskId) -> Option<CpuId> {
        match self.start_cpu.get(t.0 as usize) {
            Some(&c) if c != u32::MAX => Some(CpuId(c)),
            _ => None,
        }
    }

    /// The end of the run: the duration (warm-up included), or the cap of a
    /// completion workload.
    pub fn end_time(&self) -> SimTime {
        self.end
    }

    /// When the metrics start (zero for completion workloads). For a throughput
    /// workload whose warm-up waits for its start clock ([`Simulator::start_pending`]:
    /// dbench's clients still at their barrier) this is, until the clock is read, only
    /// the warm-up's length: the end is then the read plus it.
    pub fn warmup_time(&self) -> SimTime {
        if self.until_exit {
            SimTime::ZERO
        } else {
            self.warmup
        }
    }

    /// How much of a throughput run's measured window comes before every LLC has had
    /// its first busy balance round from the benchmark's start (zero with a settled
    /// warm-up, or for a completion workload): until then the SIS_UTIL scan depth the
    /// wake-ups read is the one the LLC had when it was idle, so that part measures the
    /// benchmark's start-up rather than its steady state.
    pub fn unsettled_time(&self) -> SimTime {
        self.unsettled
    }

    /// When the benchmark read its start clock ([`crate::workload::Op::StartClock`]:
    /// dbench's `tv_start`, just before it releases its clients); `None` before that,
    /// or for a workload that reads none.
    pub fn start_time(&self) -> Option<SimTime> {
        self.start.clock
    }

    /// The warm-up waits for a start clock not yet read: [`Simulator::warmup_time`] and
    /// [`Simulator::end_time`] are not known yet.
    pub fn start_pending(&self) -> bool {
        self.start.deferred && self.start.clock.is_none()
    }

    /// Past the warm-up: the metrics count.
    pub fn measuring(&self) -> bool {
        self.measuring
    }

    /// Pending events (bounded: a few per CPU plus one timer per sleeping task).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// What the recorder has kept (`None` without one).
    pub fn recording(&self) -> Option<&Recording> {
        self.rec.as_ref().map(|r| &r.rec)
    }

    /// The wake-ups `RecordConfig::capture_wake` asked for that have happened, in
    /// order.
    pub fn captured_wakes(&self) -> &[CapturedWake] {
        self.rec.as_ref().map_or(&[], |r| &r.captured)
    }

    /// The wake-ups `RecordConfig::capture_wake` asked for that have happened as a
    /// delayed task's requeue in place (v6.12, `WakePath::Requeue`): no CPU
    /// selection, so no capture.
    pub fn requeued_captures(&self) -> &[u32] {
        self.rec.as_ref().map_or(&[], |r| &r.requeued)
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
}
