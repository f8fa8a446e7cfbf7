//! The simulator's recording hooks: each keeps one record when a recorder is on
//! (the callers test `self.rec.is_some()` first, so a run without one pays that
//! test), all cold and out of line so that the event handlers stay small.

use crate::cost::Distance;
use crate::wakeup::WakePath;

use super::super::{Mode, Simulator};
use super::{cpu16, QueueKind, RecordKind, WakeRecord, NO_TASK};

impl Simulator {
    /// Keeps `kind` now, when recording. The hooks call it behind
    /// `if self.rec.is_some()`, so a run without a recorder pays one test.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record(&mut self, kind: RecordKind) {
        let now = self.now;
        if let Some(r) = self.rec.as_deref_mut() {
            r.rec.push(now, kind);
        }
    }

    /// `cpu` starts running `next` after `prev` (`u32::MAX`: idle).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_switch(&mut self, cpu: u32, prev: u32, next: u32) {
        self.record(RecordKind::Switch {
            cpu: cpu16(cpu),
            switch: prev != next,
            prev,
            next,
        });
    }

    /// The wake-up numbered `seq`: `waker` (a task, or interrupt context) on `cpu`
    /// woke `p`, last on `prev`, and `d` placed it `dist` from its data.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_wake(
        &mut self,
        seq: u32,
        p: u32,
        waker: Option<u32>,
        cpu: u32,
        prev: u32,
        d: &crate::wakeup::Decision,
        dist: Distance,
    ) {
        self.record(RecordKind::Wake(WakeRecord {
            seq,
            wakee: p,
            waker: waker.unwrap_or(NO_TASK),
            waker_cpu: cpu16(cpu),
            prev_cpu: cpu16(prev),
            cpu: cpu16(d.cpu.0),
            probed: d.costs.cpus_probed.min(u16::MAX as u32) as u16,
            // Decided with `PathOnly` while recording, so always known.
            path: d.path.unwrap_or(WakePath::NothingIdle),
            dist,
            queue: QueueKind::of(d.queue),
        }));
        if matches!(d.queue, crate::wakeup::QueuePath::Wakelist { .. }) {
            if let Some(r) = self.rec.as_deref_mut() {
                r.wakelist.retain(|&(t, _)| t != p);
                r.wakelist.push((p, seq));
            }
        }
    }

    /// The requeue in place of delayed task `p` on `rq` (`ttwu_runnable()`, v6.12):
    /// numbered as every wake-up is, recorded with [`WakePath::Requeue`], nothing
    /// probed, queued under `rq`'s lock (the waker's own on `cpu == rq`), `dist`
    /// from the wakee's data. A capture asked for it has nothing to capture.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_requeue(
        &mut self,
        p: u32,
        waker: Option<u32>,
        cpu: u32,
        rq: u32,
        dist: Distance,
    ) {
        let Some(r) = self.rec.as_deref_mut() else {
            return;
        };
        let seq = r.next_wake();
        if r.captures(seq) {
            r.requeued.push(seq);
        }
        self.record(RecordKind::Wake(WakeRecord {
            seq,
            wakee: p,
            waker: waker.unwrap_or(NO_TASK),
            waker_cpu: cpu16(cpu),
            prev_cpu: cpu16(rq),
            cpu: cpu16(rq),
            probed: 0,
            path: WakePath::Requeue,
            dist,
            queue: if rq == cpu {
                QueueKind::Local
            } else {
                QueueKind::RemoteLock
            },
        }));
    }

    /// `sched_ttwu_pending()` on `cpu` activated `p`, queued on its wake list.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_wakelist_arrival(&mut self, p: u32, cpu: u32) {
        let Some(r) = self.rec.as_deref_mut() else {
            return;
        };
        if let Some(i) = r.wakelist.iter().position(|&(t, _)| t == p) {
            let (_, seq) = r.wakelist.swap_remove(i);
            self.record(RecordKind::Arrive {
                cpu: cpu16(cpu),
                task: p,
                seq,
            });
        }
    }

    /// `cpu` entered idle in its C-state.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_idle_enter(&mut self, cpu: u32) {
        let cstate = self.cpus[cpu as usize].cstate;
        self.record(RecordKind::IdleEnter {
            cpu: cpu16(cpu),
            cstate,
        });
    }

    /// `cpu` leaves idle or force idle (nothing when it was running).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_idle_exit(&mut self, cpu: u32) {
        let c = &self.cpus[cpu as usize];
        if c.mode != Mode::Running {
            let cstate = if c.mode == Mode::ForceIdle {
                0
            } else {
                c.cstate
            };
            self.record(RecordKind::IdleExit {
                cpu: cpu16(cpu),
                cstate,
            });
        }
    }

    /// Numbers a wake-up (decided as `d`, nothing of it applied yet) and captures it
    /// if asked to; returns its number.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_wake_begin(
        &mut self,
        p: u32,
        waker: Option<u32>,
        cpu: u32,
        flags: crate::wakeup::WakeFlags,
        d: &crate::wakeup::Decision,
    ) -> u32 {
        let Some(r) = self.rec.as_deref_mut() else {
            return 0;
        };
        let seq = r.next_wake();
        if r.captures(seq) {
            self.capture_wake(seq, p, waker, cpu, flags, d);
        }
        seq
    }

    /// The metrics start counting now: later records are the measured ones.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn record_measuring(&mut self) {
        if let Some(r) = self.rec.as_deref_mut() {
            r.rec.measured_from = r.rec.records.len();
        }
    }
}
