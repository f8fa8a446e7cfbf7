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

use super::record::{Record, RecordKind, Recording, NO_TASK};

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

/// The trace as JSON text.
pub fn chrome_trace_json(input: &TraceInput) -> String {
    let rec = input.recording;
    let m = input.machine;
    let n = m.nr_cpus() as usize;
    let mut out = String::with_capacity(64 + rec.records.len() * 140);
    out.push_str("{\"traceEvents\":[\n");
    let mut first = true;
    let mut ev = |out: &mut String, body: &str| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push('{');
        out.push_str(body);
        out.push('}');
    };

    // Tracks: a process per LLC (in order of first CPU), a thread per CPU.
    let mut llcs: Vec<(u32, u32)> = Vec::new(); // (node, llc id)
    let mut pid_of = vec![0u32; n];
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
        pid_of[c.idx()] = i as u32 + 1;
    }
    ev(
        &mut out,
        &format!(
            "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{{\"name\":{}}}",
            esc(&format!("run: {}", input.title))
        ),
    );
    for (i, &(node, llc)) in llcs.iter().enumerate() {
        let pid = i as u32 + 1;
        let span: Vec<CpuId> = input
            .cpus
            .iter()
            .copied()
            .filter(|c| pid_of[c.idx()] == pid)
            .collect();
        let list = crate::cpumask::CpuMask::from_cpus(m.nr_cpus(), span.iter().copied()).to_list();
        ev(
            &mut out,
            &format!(
                "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":\"node {node} \u{b7} LLC {llc} (CPUs {list})\"}}"
            ),
        );
        ev(
            &mut out,
            &format!(
                "\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}"
            ),
        );
    }
    for &c in input.cpus {
        let (pid, tid) = (pid_of[c.idx()], c.0 + 1);
        let cl = m.cpus[c.idx()].cluster;
        ev(
            &mut out,
            &format!(
                "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":\"CPU {} \u{b7} cluster {cl}\"}}",
                c.0
            ),
        );
        ev(
            &mut out,
            &format!(
                "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{}}}",
                c.0
            ),
        );
    }

    let track = |cpu: u16| -> (u32, u32) {
        let c = cpu as usize;
        (pid_of.get(c).copied().unwrap_or(0), cpu as u32 + 1)
    };
    let mut open = vec![Open::None; n];
    // Per task: the wake-up whose flow ends at its next run.
    let mut pending: Vec<(u32, u32)> = Vec::new(); // (task, seq)
    let close = |out: &mut String,
                 ev: &mut dyn FnMut(&mut String, &str),
                 cpu: u16,
                 o: Open,
                 at: u64| {
        let (pid, tid) = track(cpu);
        let (name, start, args) = match o {
            Open::None => return,
            Open::Task(t, s) => (task_name(rec, t), s, format!("{{\"task\":{t}}}")),
            Open::Idle(cs, s) => (format!("idle C{cs}"), s, "{}".to_string()),
            Open::Forced(s) => ("forced idle".to_string(), s, "{}".to_string()),
        };
        ev(
            out,
            &format!(
                "\"name\":\"{name}\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{args}",
                us(start),
                us(at.saturating_sub(start))
            ),
        );
    };
    // Wake-ups per millisecond (a counter), in order.
    let mut per_ms: Vec<(u64, u64)> = Vec::new();
    for (i, r) in rec.records.iter().enumerate() {
        let measured = i >= rec.measured_from;
        let Record { at_ns, kind } = *r;
        match kind {
            RecordKind::Switch {
                cpu,
                switch,
                prev,
                next,
            } => {
                let c = cpu as usize;
                if c >= n {
                    continue;
                }
                close(&mut out, &mut ev, cpu, open[c], at_ns);
                open[c] = Open::Task(next, at_ns);
                let (pid, tid) = track(cpu);
                // The switch itself, as an instant-like zero-length slice carrying the
                // counts' flags (a context switch only when `switch`).
                ev(
                    &mut out,
                    &format!(
                        "\"name\":\"switch\",\"cat\":\"switch\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"prev\":{},\"next\":{next},\"switch\":{switch},\"measured\":{measured}}}",
                        us(at_ns),
                        if prev == NO_TASK { -1 } else { prev as i64 },
                    ),
                );
                if let Some(k) = pending.iter().position(|&(t, _)| t == next) {
                    let (_, seq) = pending.swap_remove(k);
                    // The flow's end binds to a slice of its own category at its time
                    // and track (as DevTools binds flows), enclosed by the run.
                    ev(
                        &mut out,
                        &format!(
                            "\"name\":\"woken {}\",\"cat\":\"wake\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"seq\":{seq}}}",
                            task_name(rec, next),
                            us(at_ns)
                        ),
                    );
                    ev(
                        &mut out,
                        &format!(
                            "\"name\":\"wake-up\",\"cat\":\"wake\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{seq},\"ts\":{},\"pid\":{pid},\"tid\":{tid}",
                            us(at_ns)
                        ),
                    );
                }
            }
            RecordKind::Wake(w) => {
                let (pid, tid) = track(w.waker_cpu);
                let background = rec.background(w.wakee);
                ev(
                    &mut out,
                    &format!(
                        "\"name\":\"wake {}\",\"cat\":\"wake\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"seq\":{},\"wakee\":{},\"waker\":{},\"prev_cpu\":{},\"cpu\":{},\"path\":\"{}\",\"distance\":\"{}\",\"queue\":\"{}\",\"probed\":{},\"migrated\":{},\"measured\":{measured},\"background\":{background}}}",
                        task_name(rec, w.wakee),
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
                    ),
                );
                ev(
                    &mut out,
                    &format!(
                        "\"name\":\"wake-up\",\"cat\":\"wake\",\"ph\":\"s\",\"id\":{},\"ts\":{},\"pid\":{pid},\"tid\":{tid}",
                        w.seq,
                        us(at_ns)
                    ),
                );
                match pending.iter_mut().find(|(t, _)| *t == w.wakee) {
                    Some(p) => p.1 = w.seq,
                    None => pending.push((w.wakee, w.seq)),
                }
                let ms = at_ns / 1_000_000;
                match per_ms.last_mut() {
                    Some((k, v)) if *k == ms => *v += 1,
                    _ => per_ms.push((ms, 1)),
                }
            }
            RecordKind::Migrate {
                task,
                from,
                to,
                reason,
            } => {
                let (pid, tid) = track(from);
                ev(
                    &mut out,
                    &format!(
                        "\"name\":\"migrate {}\",\"cat\":\"migrate\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"task\":{task},\"from\":{from},\"to\":{to},\"reason\":\"{}\",\"measured\":{measured},\"background\":{}}}",
                        task_name(rec, task),
                        us(at_ns),
                        reason.as_str(),
                        rec.background(task)
                    ),
                );
            }
            RecordKind::IdleEnter { cpu, cstate } => {
                let c = cpu as usize;
                if c < n {
                    close(&mut out, &mut ev, cpu, open[c], at_ns);
                    open[c] = Open::Idle(cstate, at_ns);
                }
            }
            RecordKind::ForceIdle { cpu } => {
                let c = cpu as usize;
                if c < n {
                    close(&mut out, &mut ev, cpu, open[c], at_ns);
                    open[c] = Open::Forced(at_ns);
                }
            }
            RecordKind::IdleExit { cpu, .. } => {
                let c = cpu as usize;
                if c < n {
                    if let Open::Idle(..) | Open::Forced(..) = open[c] {
                        close(&mut out, &mut ev, cpu, open[c], at_ns);
                        open[c] = Open::None;
                    }
                }
            }
            RecordKind::Arrive { cpu, task, seq } => {
                let (pid, tid) = track(cpu);
                ev(
                    &mut out,
                    &format!(
                        "\"name\":\"arrive {}\",\"cat\":\"arrive\",\"ph\":\"X\",\"ts\":{},\"dur\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"seq\":{seq}}}",
                        task_name(rec, task),
                        us(at_ns)
                    ),
                );
            }
        }
    }
    let end = input.end_ns;
    for (c, &o) in open.iter().enumerate() {
        close(&mut out, &mut ev, c as u16, o, end);
    }
    for (ms, v) in &per_ms {
        ev(
            &mut out,
            &format!(
                "\"name\":\"wake-ups per ms\",\"ph\":\"C\",\"ts\":{},\"pid\":0,\"tid\":0,\"args\":{{\"wake-ups\":{v}}}",
                us(ms * 1_000_000)
            ),
        );
    }
    if let Some((vals, iv, start, unit)) = input.series {
        for (i, v) in vals.iter().enumerate() {
            // Finite values only (JSON has no NaN); the series' own numbers.
            let v = if v.is_finite() { *v } else { 0.0 };
            ev(
                &mut out,
                &format!(
                    "\"name\":\"throughput\",\"ph\":\"C\",\"ts\":{},\"pid\":0,\"tid\":0,\"args\":{{{}:{v}}}",
                    us(start + i as u64 * iv),
                    esc(unit)
                ),
            );
        }
    }
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
