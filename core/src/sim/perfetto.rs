//! A [`Recording`] as a Chrome trace (the Trace Event Format's JSON object form,
//! which Perfetto's UI and `chrome://tracing` open).
//!
//! ```text
//!   {"traceEvents": [ … ], "displayTimeUnit": "ns", "otherData": { run, counts, cap } }
//!
//!   process (pid)  = one LLC: "node N · LLC L (CPUs a-b)"      M process_name / _sort_index
//!     thread (tid) = one CPU: "CPU c · cluster k"              M thread_name / _sort_index
//!       X  "task 3" / "bg task 70"      a run of a task, Switch to the next Switch or idle
//!       X  "idle C2" / "forced idle"    idle with its C-state; core scheduling's force idle
//!       X  "wake task 3"                the wake-up on the waker's CPU (zero length), args:
//!                                       seq, path, distance, queue, probed, chosen CPU
//!       X  "arrive task 3"              a wake-list wakee's arrival on its rq (zero length,
//!                                       on its CPU, when sched_ttwu_pending() activates
//!                                       it: the kernel's sched_wakeup), args: seq
//!       X  "woken task 3"               zero length, at the start of the wakee's next run
//!                                       (wherever it ran)
//!       s / f  id = seq                 the wake-up's flow between the two markers (same
//!                                       category, time and track as its slice, "bp":"e")
//!       X  "migrate task 3"             a load-balance move on the source CPU (zero length)
//!   pid 0, "run": C "throughput"        the run's series; C "wake-ups per ms"
//! ```
//!
//! Only the format's documented fields are written (`name`, `cat`, `ph`, `ts`, `dur`,
//! `pid`, `tid`, `id`, `bp`, `args`). Times are microseconds with three decimals
//! (the simulator's nanoseconds, exact, formatted from integers). Slices open at the
//! end of the recording are closed at its end; with a window, a CPU's first slice
//! starts at its first record in the window.
//!
//! Every wake-up, switch and migration event carries `args.measured` (made after the
//! warm-up) and `args.background` (a background task's): the ones with
//! `measured && !background` are exactly the wake-ups and wake-up migrations the
//! run's metrics count, and the measured switch events with `args.switch` its
//! context switches (`core/tests/trace.rs` checks it).

use std::fmt::Write;

use crate::cpumask::CpuId;
use crate::topology::Machine;

use super::record::{Record, RecordKind, Recording, WakeRecord, NO_TASK};

/// What to write besides the records.
pub struct TraceInput<'a> {
    pub machine: &'a Machine,
    /// The run's CPUs, one track each.
    pub cpus: &'a [CpuId],
    pub recording: &'a Recording,
    /// Where open slices end: the run's end (simulated ns).
    pub end_ns: u64,
    /// One line describing the run (machine, kernel, workload, seed).
    pub title: &'a str,
    /// The throughput series: values, the interval in ns, when it starts (the end
    /// of the warm-up), and its unit.
    pub series: Option<(&'a [f64], u64, u64, &'a str)>,
}

/// Microseconds with three decimals, from integer nanoseconds.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn task_name(rec: &Recording, t: u32) -> String {
    if rec.background(t) {
        format!("bg task {t}")
    } else {
        format!("task {t}")
    }
}

/// JSON string escaping for the few free texts (the title).
fn esc(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// What a CPU's track has open.
#[derive(Clone, Copy)]
enum Open {
    None,
    Task(u32, u64),
    Idle(u8, u64),
    Forced(u64),
}

/// The trace as JSON text: the tracks' metadata, an event or two per record, then
/// the slices still open, the counters and the run's summary.
pub fn chrome_trace_json(input: &TraceInput) -> String {
    let rec = input.recording;
    let n = input.machine.nr_cpus() as usize;
    let mut w = Writer {
        rec,
        out: String::with_capacity(64 + rec.records.len() * 140),
        first: true,
        pid_of: vec![0u32; n],
        open: vec![Open::None; n],
        pending: Vec::new(),
        per_ms: Vec::new(),
    };
    w.out.push_str("{\"traceEvents\":[\n");
    w.tracks(input);
    for (i, r) in rec.records.iter().enumerate() {
        w.record(i >= rec.measured_from, *r);
    }
    w.finish(input)
}

/// A trace being written: the JSON text so far and what the records leave open.
struct Writer<'a> {
    rec: &'a Recording,
    out: String,
    /// No event written yet (the next one needs no comma).
    first: bool,
    /// Each CPU's process: its LLC's number, from 1 (0: not one of the run's CPUs).
    pid_of: Vec<u32>,
    /// What each CPU's track has open.
    open: Vec<Open>,
    /// Per task: the wake-up whose flow ends at its next run, as (task, seq).
    pending: Vec<(u32, u32)>,
    /// Wake-ups per millisecond (a counter), in order, as (ms, count).
    per_ms: Vec<(u64, u64)>,
}

impl Writer<'_> {
    /// Writes one event, `body` being its fields.
    fn ev(&mut self, body: &str) {
        if !self.first {
            self.out.push_str(",\n");
        }
        self.first = false;
        self.out.push('{');
        self.out.push_str(body);
        self.out.push('}');
    }

    /// CPU `cpu`'s track: (pid, tid).
    fn track(&self, cpu: u16) -> (u32, u32) {
        let c = cpu as usize;
        (self.pid_of.get(c).copied().unwrap_or(0), cpu as u32 + 1)
    }

    /// The tracks' metadata: the run's process, then a process per LLC (in order of
    /// first CPU) and a thread per CPU, with their names and sort order.
    fn tracks(&mut self, input: &TraceInput) {
        let m = input.machine;
        let mut llcs: Vec<(u32, u32)> = Vec::new(); // (node, llc id)
        for &c in input.cpus {
            let t = &m.cpus[c.idx()];
            let key = (t.node.0 as u32, t.llc);
            let i = match llcs.iter().position(|&k| k == key) {
                Some(i) => i,
                None => {
                    llcs.push(key);
                    llcs.len() - 1
                }
            };
            self.pid_of[c.idx()] = i as u32 + 1;
        }
        self.ev(&format!(
            "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{{\"name\":{}}}",
            esc(&format!("run: {}", input.title))
        ));
        for (i, &(node, llc)) in llcs.iter().enumerate() {
            let pid = i as u32 + 1;
            let span: Vec<CpuId> = input
                .cpus
                .iter()
                .copied()
                .filter(|c| self.pid_of[c.idx()] == pid)
                .collect();
            let list =
                crate::cpumask::CpuMask::from_cpus(m.nr_cpus(), span.iter().copied()).to_list();
            self.ev(&format!(
                "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":\"node {node} \u{b7} LLC {llc} (CPUs {list})\"}}"
            ));
            self.ev(&format!(
                "\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}"
            ));
        }
        for &c in input.cpus {
            let (pid, tid) = (self.pid_of[c.idx()], c.0 + 1);
            let cl = m.cpus[c.idx()].cluster;
            self.ev(&format!(
                "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":\"CPU {} \u{b7} cluster {cl}\"}}",
                c.0
            ));
            self.ev(&format!(
                "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{}}}",
                c.0
            ));
        }
    }

    /// Writes the slice `o` open on `cpu`'s track, ending at `at` (nothing if none).
    fn close(&mut self, cpu: u16, o: Open, at: u64) {
        let (pid, tid) = self.track(cpu);
        let (name, start, args) = match o {
            Open::None => return,
            Open::Task(t, s) => (task_name(self.rec, t), s, format!("{{\"task\":{t}}}")),
            Open::Idle(cs, s) => (format!("idle C{cs}"), s, "{}".to_string()),
            Open::Forced(s) => ("forced idle".to_string(), s, "{}".to_string()),
        };
        self.ev(&format!(
            "\"name\":\"{name}\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{args}",
            us(start),
            us(at.saturating_sub(start))
        ));
    }

    /// Closes `cpu`'s open slice at `at` and opens `o` there (a CPU outside the
    /// machine is passed over).
    fn reopen(&mut self, cpu: u16, o: Open, at: u64) {
        let c = cpu as usize;
        if c < self.open.len() {
            self.close(cpu, self.open[c], at);
            self.open[c] = o;
        }
    }

    /// The events of one record; `measured`: made after the warm-up.
    fn record(&mut self, measured: bool, r: Record) {
        let Record { at_ns, kind } = r;
        match kind {
            RecordKind::Switch {
                cpu,
                switch,
                prev,
                next,
            } => self.switch(at_ns, measured, cpu, switch, prev, next),
            RecordKind::Wake(w) => self.wake(at_ns, measured, w),
            RecordKind::Migrate {
                task,
                from,
                to,
                reason,
            } => {
                let (pid, tid) = self.track(from);
                self.ev(&format!(
                    "\"name\":\"migrate {}\",\"cat\":\"migrate\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"task\":{task},\"from\":{from},\"to\":{to},\"reason\":\"{}\",\"measured\":{measured},\"background\":{}}}",
                    task_name(self.rec, task),
                    us(at_ns),
                    reason.as_str(),
                    self.rec.background(task)
                ));
            }
            RecordKind::IdleEnter { cpu, cstate } => {
                self.reopen(cpu, Open::Idle(cstate, at_ns), at_ns)
            }
            RecordKind::ForceIdle { cpu } => self.reopen(cpu, Open::Forced(at_ns), at_ns),
            RecordKind::IdleExit { cpu, .. } => {
                let c = cpu as usize;
                if c < self.open.len() {
                    if let Open::Idle(..) | Open::Forced(..) = self.open[c] {
                        self.reopen(cpu, Open::None, at_ns);
                    }
                }
            }
            RecordKind::Arrive { cpu, task, seq } => {
                let (pid, tid) = self.track(cpu);
                self.ev(&format!(
                    "\"name\":\"arrive {}\",\"cat\":\"arrive\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"seq\":{seq}}}",
                    task_name(self.rec, task),
                    us(at_ns)
                ));
            }
        }
    }

    /// A switch on `cpu` from `prev` to `next`: the slice before it closed, `next`'s
    /// opened, the switch's own zero-length slice, and the end of the flow of the
    /// wake-up that made `next` runnable, if one is pending.
    fn switch(&mut self, at_ns: u64, measured: bool, cpu: u16, switch: bool, prev: u32, next: u32) {
        if cpu as usize >= self.open.len() {
            return;
        }
        self.reopen(cpu, Open::Task(next, at_ns), at_ns);
        let (pid, tid) = self.track(cpu);
        // The switch itself, as an instant-like zero-length slice carrying the
        // counts' flags (a context switch only when `switch`).
        self.ev(&format!(
            "\"name\":\"switch\",\"cat\":\"switch\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"prev\":{},\"next\":{next},\"switch\":{switch},\"measured\":{measured}}}",
            us(at_ns),
            if prev == NO_TASK { -1 } else { prev as i64 },
        ));
        if let Some(k) = self.pending.iter().position(|&(t, _)| t == next) {
            let (_, seq) = self.pending.swap_remove(k);
            // The flow's end binds to a slice of its own category at its time
            // and track (as DevTools binds flows), enclosed by the run.
            self.ev(&format!(
                "\"name\":\"woken {}\",\"cat\":\"wake\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"seq\":{seq}}}",
                task_name(self.rec, next),
                us(at_ns)
            ));
            self.ev(&format!(
                "\"name\":\"wake-up\",\"cat\":\"wake\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{seq},\"ts\":{},\"pid\":{pid},\"tid\":{tid}",
                us(at_ns)
            ));
        }
    }

    /// A wake-up: its zero-length slice on the waker's CPU with the decision's
    /// args, the start of its flow (ended at the wakee's next run), and its count.
    fn wake(&mut self, at_ns: u64, measured: bool, w: WakeRecord) {
        let (pid, tid) = self.track(w.waker_cpu);
        let background = self.rec.background(w.wakee);
        self.ev(&format!(
            "\"name\":\"wake {}\",\"cat\":\"wake\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"seq\":{},\"wakee\":{},\"waker\":{},\"prev_cpu\":{},\"cpu\":{},\"path\":\"{}\",\"distance\":\"{}\",\"queue\":\"{}\",\"probed\":{},\"migrated\":{},\"measured\":{measured},\"background\":{background}}}",
            task_name(self.rec, w.wakee),
            us(at_ns),
            w.seq,
            w.wakee,
            if w.waker == NO_TASK { -1 } else { w.waker as i64 },
            w.prev_cpu,
            w.cpu,
            w.path.as_str(),
            w.dist.name(),
            w.queue.as_str(),
            w.probed,
            w.cpu != w.prev_cpu,
        ));
        self.ev(&format!(
            "\"name\":\"wake-up\",\"cat\":\"wake\",\"ph\":\"s\",\"id\":{},\"ts\":{},\"pid\":{pid},\"tid\":{tid}",
            w.seq,
            us(at_ns)
        ));
        match self.pending.iter_mut().find(|(t, _)| *t == w.wakee) {
            Some(p) => p.1 = w.seq,
            None => self.pending.push((w.wakee, w.seq)),
        }
        let ms = at_ns / 1_000_000;
        match self.per_ms.last_mut() {
            Some((k, v)) if *k == ms => *v += 1,
            _ => self.per_ms.push((ms, 1)),
        }
    }

    /// The end: every slice still open closed at the run's end, the counters
    /// (wake-ups per ms, the throughput series), and the run's summary.
    fn finish(mut self, input: &TraceInput) -> String {
        let end = input.end_ns;
        for c in 0..self.open.len() {
            self.close(c as u16, self.open[c], end);
        }
        for i in 0..self.per_ms.len() {
            let (ms, v) = self.per_ms[i];
            self.ev(&format!(
                "\"name\":\"wake-ups per ms\",\"ph\":\"C\",\"ts\":{},\"pid\":0,\"tid\":0,\"args\":{{\"wake-ups\":{v}}}",
                us(ms * 1_000_000)
            ));
        }
        if let Some((vals, iv, start, unit)) = input.series {
            for (i, v) in vals.iter().enumerate() {
                // Finite values only (JSON has no NaN); the series' own numbers.
                let v = if v.is_finite() { *v } else { 0.0 };
                self.ev(&format!(
                    "\"name\":\"throughput\",\"ph\":\"C\",\"ts\":{},\"pid\":0,\"tid\":0,\"args\":{{{}:{v}}}",
                    us(start + i as u64 * iv),
                    esc(unit)
                ));
            }
        }
        let rec = self.rec;
        let mut out = self.out;
        let _ = write!(
            out,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"title\":{},\"records\":{},\"cap\":{},\"truncated\":{},\"dropped\":{},\"wakeups_in_run\":{},\"window_ns\":{}}}}}\n",
            esc(input.title),
            rec.records.len(),
            rec.cap,
            rec.truncated,
            rec.dropped,
            rec.wakeups,
            match rec.window_ns {
                Some((a, b)) => format!("[{a},{b}]"),
                None => "null".into(),
            }
        );
        out
    }
}
