//! The simulator's event record: what happened on each CPU, in order, compact.
//!
//! ```text
//!   Simulator::with_recorder(cfg, RecordConfig)      off by default: the hooks test
//!        │                                           one Option and return
//!        ▼
//!   Recording { records: Vec<Record> (≤ cap), truncated, measured_from, … }
//!        │  Record = at_ns + one of:
//!        │    Switch      cpu, prev task, next task, a context switch or not   schedule()
//!        │    Wake        waker CPU/task, wakee, prev CPU, chosen CPU, path,
//!        │                distance, queue path, CPUs probed, its number       try_to_wake_up()
//!        │                (v6.12: a delayed task's requeue in place, path     ttwu_runnable()
//!        │                `Requeue`, nothing probed)
//!        │    Arrive      cpu, task, its wake-up's number: a wake list's      sched_ttwu_pending()
//!        │                wakee on its rq (the kernel's sched_wakeup)
//!        │    Migrate     task, from, to, reason                              load_balance(), …
//!        │    IdleEnter   cpu, C-state            IdleExit cpu, C-state       do_idle(), cpuidle
//!        │    ForceIdle   cpu                                                 core scheduling
//!        ▼
//!   to_bytes() / from_bytes(): RECORD_BYTES per record, little endian (the worker
//!   posts the bytes); perfetto.rs turns a recording into a Chrome trace
//! ```
//!
//! A record is fixed-size ([`RECORD_BYTES`] = 32 bytes, in memory and on the wire), so
//! a recording's memory is its cap times that. The cap bounds the recording: past it
//! the recorder stops keeping records and sets `truncated`, but keeps counting
//! wake-ups, so wake-up numbers stay those of the whole run. A window keeps only the
//! records whose time lies in it (and counts nothing it left out as truncation).
//!
//! Recording only observes: no record is made from state the run would not have
//! computed anyway, no random number is drawn, and the run's digest is the same with
//! or without a recorder (tested in `sim/tests.rs`).
//!
//! | file       | what                                                            |
//! |------------|-----------------------------------------------------------------|
//! | `mod.rs`   | the record types, the recording and its cap, the recorder       |
//! | `wire.rs`  | a recording as bytes and back: `to_bytes`, `records_from_bytes` |
//! | `hooks.rs` | the simulator's `record_*` hooks, cold and out of line          |

use serde::Serialize;
use thiserror::Error;

use crate::byte_enum::byte_enum;
use crate::cost::Distance;
use crate::wakeup::{QueuePath, WakePath};

use super::SimTime;

mod hooks;
mod wire;

/// "No task" in a task field: the idle task (a switch from or to idle), or a wake-up
/// from interrupt context (no waker task).
pub const NO_TASK: u32 = u32::MAX;

/// Bytes per record in [`Recording::to_bytes`].
pub const RECORD_BYTES: usize = 32;

/// The default cap: 1 M records, 32 MiB. A 1.2 s reference run makes tens of
/// millions (a wake-up, a switch, an idle entry and an idle exit per transaction
/// side), so the default holds a few tens of milliseconds of it; take a window for
/// later stretches.
pub const DEFAULT_RECORD_CAP: usize = 1 << 20;

/// The most wake-ups one run captures (each capture is a state file, a few KiB to
/// a few hundred KiB on big machines).
pub const MAX_CAPTURES: usize = 4096;

/// The largest cap a caller may ask for: 16 M records (512 MiB in memory).
pub const MAX_RECORD_CAP: usize = 1 << 24;

byte_enum! {
    /// Why a queued task moved between runqueues outside a wake-up.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum MigrateReason {
        /// `load_balance()` from the tick of a busy CPU (`CPU_NOT_IDLE`).
        Periodic = 0 => "periodic load balance",
        /// `load_balance()` for an idle CPU: its own tick, or nohz idle balancing by
        /// another CPU (`CPU_IDLE`).
        Idle = 1 => "idle load balance",
        /// `newidle_balance()` (`CPU_NEWLY_IDLE`), before the CPU goes idle.
        NewIdle = 2 => "newidle balance",
        /// `active_load_balance_cpu_stop()`: a running task pushed by the stopper.
        Active = 3 => "active balance",
        /// `sched_core_balance()`: a forced-idle CPU stole a task of its core's cookie.
        CoreSteal = 4 => "core-scheduling steal",
    }
}

byte_enum! {
    /// How the woken task reached the chosen CPU's runqueue (`ttwu_queue()`), one byte.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum QueueKind {
        Local = 0 => "local",
        /// The wakelist with an IPI.
        WakelistIpi = 1 => "wakelist + IPI",
        /// The wakelist of a polling (or already pending) CPU: no IPI.
        WakelistNoIpi = 2 => "wakelist, no IPI",
        RemoteLock = 3 => "remote rq lock",
    }
}

impl QueueKind {
    pub fn of(q: QueuePath) -> QueueKind {
        match q {
            QueuePath::Local => QueueKind::Local,
            QueuePath::Wakelist { ipi: true } => QueueKind::WakelistIpi,
            QueuePath::Wakelist { ipi: false } => QueueKind::WakelistNoIpi,
            QueuePath::RemoteLock => QueueKind::RemoteLock,
        }
    }
}

/// One simulated wake-up (`try_to_wake_up()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WakeRecord {
    /// Its number in the run, from 1, counting every wake-up (background tasks'
    /// too): what `--capture-wake N` takes.
    pub seq: u32,
    pub wakee: u32,
    /// The waking task, or [`NO_TASK`] from interrupt context (a timer).
    pub waker: u32,
    /// The CPU the wake-up ran on.
    pub waker_cpu: u16,
    /// Where the wakee last ran.
    pub prev_cpu: u16,
    /// The CPU `select_task_rq()` chose.
    pub cpu: u16,
    /// CPUs the select_idle_* scans probed (`Costs::cpus_probed`, saturated).
    pub probed: u16,
    pub path: WakePath,
    /// How far the chosen CPU is from the wakee's data: the waker's CPU, or prev
    /// for a wake-up from interrupt context (the distance the metrics count).
    pub dist: Distance,
    pub queue: QueueKind,
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RecordKind {
    /// `cpu` starts running `next` (a slice begins). `prev` is the task that ran on
    /// it last ([`NO_TASK`]: idle before); `switch` is false when `next` is the task
    /// that ran last (no context switch, as the metrics count them).
    Switch {
        cpu: u16,
        switch: bool,
        prev: u32,
        next: u32,
    },
    Wake(WakeRecord),
    /// A queued task moved from `from` to `to`.
    Migrate {
        task: u32,
        from: u16,
        to: u16,
        reason: MigrateReason,
    },
    /// `cpu` enters idle in C-state `cstate` (an index into the machine's states).
    IdleEnter {
        cpu: u16,
        cstate: u8,
    },
    /// `cpu` leaves the idle (or forced-idle) task to schedule.
    IdleExit {
        cpu: u16,
        cstate: u8,
    },
    /// Core scheduling keeps `cpu` idle with tasks queued.
    ForceIdle {
        cpu: u16,
    },
    /// `task`, queued on `cpu`'s wake list by wake-up `seq`, arrives on its rq:
    /// `sched_ttwu_pending()` → `ttwu_do_activate()`, where the kernel's
    /// `sched_wakeup` tracepoint fires (core.c v6.8 3776-3812). The wake-up's own
    /// [`RecordKind::Wake`] is the call (`sched_waking`, core.c v6.8 4266) and its
    /// decision; a wakee queued any other way arrives then, and has no `Arrive`.
    Arrive {
        cpu: u16,
        task: u32,
        seq: u32,
    },
}

/// One event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Record {
    pub at_ns: u64,
    pub kind: RecordKind,
}

const _: () = assert!(std::mem::size_of::<Record>() == 32);

/// What to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordConfig {
    /// The most records kept (at most [`MAX_RECORD_CAP`]).
    pub cap: usize,
    /// Keep only the records at `start <= at < end` (simulated time).
    pub window: Option<(SimTime, SimTime)>,
    /// Capture the wake-path state of these wake-ups (numbered from 1; at most
    /// [`MAX_CAPTURES`]).
    pub capture_wake: Vec<u32>,
}

impl Default for RecordConfig {
    fn default() -> Self {
        RecordConfig {
            cap: DEFAULT_RECORD_CAP,
            window: None,
            capture_wake: Vec::new(),
        }
    }
}

/// A run's records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Recording {
    pub records: Vec<Record>,
    pub cap: usize,
    /// Records past the cap were dropped.
    pub truncated: bool,
    /// Records left out by the cap (inside the window).
    pub dropped: u64,
    /// The index of the first record made after the warm-up (when the metrics
    /// started counting); `usize::MAX` while still warming up.
    pub measured_from: usize,
    /// Wake-ups so far (every one, recorded or not).
    pub wakeups: u32,
    /// Tasks `0..workload_tasks` are the workload's; the rest are background tasks.
    pub workload_tasks: u32,
    pub window_ns: Option<(u64, u64)>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RecordError {
    #[error("the record bytes are {0} long, not a multiple of {RECORD_BYTES}")]
    Length(usize),
    #[error("record {index}: unknown {what} {value}")]
    Bad {
        index: usize,
        what: &'static str,
        value: u8,
    },
}

impl Recording {
    pub(super) fn new(cfg: &RecordConfig, workload_tasks: u32) -> Recording {
        let cap = cfg.cap.min(MAX_RECORD_CAP);
        Recording {
            records: Vec::with_capacity(cap.min(1 << 16)),
            cap,
            truncated: false,
            dropped: 0,
            measured_from: usize::MAX,
            wakeups: 0,
            workload_tasks,
            window_ns: cfg.window.map(|(a, b)| (a.ns(), b.ns())),
        }
    }

    /// Keeps `kind` at `at` if it is inside the window and under the cap.
    #[inline]
    pub(super) fn push(&mut self, at: SimTime, kind: RecordKind) {
        if let Some((a, b)) = self.window_ns {
            if at.ns() < a || at.ns() >= b {
                return;
            }
        }
        if self.records.len() >= self.cap {
            self.truncated = true;
            self.dropped += 1;
            return;
        }
        self.records.push(Record {
            at_ns: at.ns(),
            kind,
        });
    }

    /// The records made after the warm-up.
    pub fn measured(&self) -> &[Record] {
        &self.records[self.measured_from.min(self.records.len())..]
    }

    /// The wake-ups among the records, in the order they were made.
    pub fn wakes(&self) -> impl Iterator<Item = &WakeRecord> {
        self.records.iter().filter_map(|r| match &r.kind {
            RecordKind::Wake(w) => Some(w),
            _ => None,
        })
    }

    /// Whether task `t` is a background task (outside the workload's metrics).
    pub fn background(&self, t: u32) -> bool {
        t != NO_TASK && t >= self.workload_tasks
    }
}

/// The recorder a simulator carries when recording: the records, the wake-up to
/// capture and, once it has happened, its capture.
pub(super) struct Recorder {
    pub(super) rec: Recording,
    /// Sorted, no repeats.
    pub(super) capture: Vec<u32>,
    pub(super) captured: Vec<super::CapturedWake>,
    /// The wakees now on a wake list and their wake-ups' numbers, for their
    /// [`RecordKind::Arrive`] (a task is on one list at most: bounded by the tasks).
    wakelist: Vec<(u32, u32)>,
    /// The wake-ups to capture that requeued a delayed task ([`WakePath::Requeue`]):
    /// no selection, nothing to capture (at most [`MAX_CAPTURES`]).
    pub(super) requeued: Vec<u32>,
}

impl Recorder {
    pub(super) fn new(cfg: &RecordConfig, workload_tasks: u32) -> Recorder {
        let mut capture = cfg.capture_wake.clone();
        capture.sort_unstable();
        capture.dedup();
        capture.truncate(MAX_CAPTURES);
        Recorder {
            rec: Recording::new(cfg, workload_tasks),
            capture,
            captured: Vec::new(),
            wakelist: Vec::new(),
            requeued: Vec::new(),
        }
    }

    /// Counts a wake-up and returns its number (from 1; saturates at `u32::MAX`).
    #[inline]
    pub(super) fn next_wake(&mut self) -> u32 {
        self.rec.wakeups = self.rec.wakeups.saturating_add(1);
        self.rec.wakeups
    }

    /// Whether wake-up `seq` is one to capture.
    #[inline]
    pub(super) fn captures(&self, seq: u32) -> bool {
        self.capture.binary_search(&seq).is_ok()
    }
}

/// A CPU or task index as the record's narrow field (CPUs are below
/// `cpumask::MAX_CPUS` = 4096, so always fit).
#[inline]
fn cpu16(c: u32) -> u16 {
    c as u16
}

const _: () = assert!(crate::cpumask::MAX_CPUS as usize <= u16::MAX as usize);
