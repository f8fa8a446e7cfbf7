//! A recording on the wire: [`Recording::to_bytes`] writes each record as
//! [`RECORD_BYTES`] little-endian bytes (what the worker posts to the page),
//! [`Recording::records_from_bytes`] reads them back, refusing bad bytes with a
//! [`RecordError`], never a panic.

use crate::cost::Distance;
use crate::wakeup::WakePath;

use super::{
    MigrateReason, QueueKind, Record, RecordError, RecordKind, Recording, WakeRecord, RECORD_BYTES,
};

impl Recording {
    /// The records as [`RECORD_BYTES`] each, little endian: `at_ns` (8 bytes), a
    /// kind byte (switch 0, wake 1, migrate 2, idle enter 3, idle exit 4, force idle
    /// 5, arrive 6), then the kind's fields in their declaration order, zero-padded. The
    /// worker posts these bytes; [`Recording::records_from_bytes`] reads them back.
    pub fn to_bytes(&self) -> Vec<u8> {
        Recording::records_to_bytes(&self.records)
    }

    /// [`Recording::to_bytes`] of any run of records, e.g. the ones a worker has not
    /// posted yet (the page's live view streams a recording in pieces).
    pub fn records_to_bytes(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::with_capacity(records.len() * RECORD_BYTES);
        for r in records {
            let mut w = Wire([0; RECORD_BYTES], 0);
            w.u64(r.at_ns);
            match r.kind {
                RecordKind::Switch {
                    cpu,
                    switch,
                    prev,
                    next,
                } => {
                    w.u8(0);
                    w.u8(switch as u8);
                    w.u16(cpu);
                    w.u32(prev);
                    w.u32(next);
                }
                RecordKind::Wake(k) => {
                    w.u8(1);
                    w.u8(k.path as u8);
                    w.u32(k.seq);
                    w.u32(k.wakee);
                    w.u32(k.waker);
                    w.u16(k.waker_cpu);
                    w.u16(k.prev_cpu);
                    w.u16(k.cpu);
                    w.u16(k.probed);
                    w.u8(k.dist as u8);
                    w.u8(k.queue as u8);
                }
                RecordKind::Migrate {
                    task,
                    from,
                    to,
                    reason,
                } => {
                    w.u8(2);
                    w.u8(reason as u8);
                    w.u32(task);
                    w.u16(from);
                    w.u16(to);
                }
                RecordKind::IdleEnter { cpu, cstate } => {
                    w.u8(3);
                    w.u8(cstate);
                    w.u16(cpu);
                }
                RecordKind::IdleExit { cpu, cstate } => {
                    w.u8(4);
                    w.u8(cstate);
                    w.u16(cpu);
                }
                RecordKind::ForceIdle { cpu } => {
                    w.u8(5);
                    w.u8(0);
                    w.u16(cpu);
                }
                RecordKind::Arrive { cpu, task, seq } => {
                    w.u8(6);
                    w.u8(0);
                    w.u16(cpu);
                    w.u32(task);
                    w.u32(seq);
                }
            }
            out.extend_from_slice(&w.0);
        }
        out
    }

    /// Reads [`Recording::to_bytes`]' records back. Bad bytes are an error, never a
    /// panic.
    pub fn records_from_bytes(bytes: &[u8]) -> Result<Vec<Record>, RecordError> {
        if !bytes.len().is_multiple_of(RECORD_BYTES) {
            return Err(RecordError::Length(bytes.len()));
        }
        let mut out = Vec::with_capacity(bytes.len() / RECORD_BYTES);
        for (index, chunk) in bytes.chunks_exact(RECORD_BYTES).enumerate() {
            let mut r = Read(chunk, 0);
            let at_ns = r.u64();
            let bad = |what: &'static str, value: u8| RecordError::Bad { index, what, value };
            let kind = match r.u8() {
                0 => {
                    let switch = r.u8() != 0;
                    RecordKind::Switch {
                        switch,
                        cpu: r.u16(),
                        prev: r.u32(),
                        next: r.u32(),
                    }
                }
                1 => {
                    let p = r.u8();
                    let path = WakePath::from_u8(p).ok_or(bad("wake path", p))?;
                    let (seq, wakee, waker) = (r.u32(), r.u32(), r.u32());
                    let (waker_cpu, prev_cpu, cpu, probed) = (r.u16(), r.u16(), r.u16(), r.u16());
                    let d = r.u8();
                    let dist = *Distance::ALL.get(d as usize).ok_or(bad("distance", d))?;
                    let q = r.u8();
                    let queue = QueueKind::from_u8(q).ok_or(bad("queue path", q))?;
                    RecordKind::Wake(WakeRecord {
                        seq,
                        wakee,
                        waker,
                        waker_cpu,
                        prev_cpu,
                        cpu,
                        probed,
                        path,
                        dist,
                        queue,
                    })
                }
                2 => {
                    let m = r.u8();
                    let reason = MigrateReason::from_u8(m).ok_or(bad("migration reason", m))?;
                    RecordKind::Migrate {
                        reason,
                        task: r.u32(),
                        from: r.u16(),
                        to: r.u16(),
                    }
                }
                k @ (3 | 4) => {
                    let cstate = r.u8();
                    let cpu = r.u16();
                    if k == 3 {
                        RecordKind::IdleEnter { cpu, cstate }
                    } else {
                        RecordKind::IdleExit { cpu, cstate }
                    }
                }
                5 => {
                    r.u8();
                    RecordKind::ForceIdle { cpu: r.u16() }
                }
                6 => {
                    r.u8();
                    RecordKind::Arrive {
                        cpu: r.u16(),
                        task: r.u32(),
                        seq: r.u32(),
                    }
                }
                k => return Err(bad("record kind", k)),
            };
            out.push(Record { at_ns, kind });
        }
        Ok(out)
    }
}

/// A record being written, and the next byte.
struct Wire([u8; RECORD_BYTES], usize);

impl Wire {
    fn put(&mut self, b: &[u8]) {
        self.0[self.1..self.1 + b.len()].copy_from_slice(b);
        self.1 += b.len();
    }
    fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }
    fn u16(&mut self, v: u16) {
        self.put(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }
}

/// A record being read (always [`RECORD_BYTES`] long, so every read is in bounds).
struct Read<'a>(&'a [u8], usize);

impl Read<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        b.copy_from_slice(&self.0[self.1..self.1 + N]);
        self.1 += N;
        b
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}
