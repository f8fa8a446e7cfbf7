//! The timeline's model: a recorded window of core's event record (`sim::record`) as
//! tracks, slices and wake-up arrows, laid out in rows grouped as the machine is, and
//! the time axis' arithmetic. Pure functions: the host tests feed them a natively
//! made `Recording`; `components/timeline/` draws them on a canvas.
//!
//! ```text
//!  records (one side's window) ──build()──▶ Track per CPU: Slice { start, end, Task | Idle(C) | Forced }
//!                                           Arrow per wake-up: waker CPU ─▶ chosen CPU, from
//!                                           its call to its wakee's arrival (a wake list's)
//!  machine + CPUs + collapsed ──rows()───▶ ▾ node 0
//!                                            ▾ LLC 0 (CPUs 0-31)
//!                                              ▾ cluster 0 (CPUs 0-3)
//!                                                  CPU 0  ███▒▒▒░░░███
//! ```
//!
//! Slices are made as `sim/perfetto.rs` makes the Chrome trace's (the same rules: a
//! switch opens a task's run, idle entry opens idle with its C-state, force idle opens
//! forced idle, idle exit closes either; what is open at the end closes there), so
//! the timeline and the downloaded trace show the same slices.

use std::collections::BTreeSet;

use schedlab_core::sim::record::{Record, RecordKind, WakeRecord, NO_TASK};
use schedlab_core::topology::Machine;

/// What a CPU does over a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    Task(u32),
    /// Idle in this C-state (an index into the machine's states).
    Idle(u8),
    /// Core scheduling's forced idle.
    Forced,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    pub start_ns: u64,
    pub end_ns: u64,
    pub span: Span,
}

/// One side's window, as tracks and arrows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Built {
    /// Per CPU of the machine (index = CPU id), its slices in time order.
    pub tracks: Vec<Vec<Slice>>,
    /// The wake-ups, in time order.
    pub arrows: Vec<(u64, WakeRecord)>,
    /// Per arrow (same index), when its wakee arrived on the chosen CPU's rq: the
    /// wake-up's time, or for a wakee queued on the wake list its later
    /// `RecordKind::Arrive` (the kernel's `sched_wakeup`), if inside the window.
    pub arrivals: Vec<u64>,
    /// Context switches and migrations seen (for the counts line).
    pub switches: u32,
    pub migrations: u32,
}

/// Builds the tracks of `records` on a machine of `n_cpus` CPUs; slices still open
/// at `end_ns` end there. Bounded by the records: one slice per record at most.
pub fn build(records: &[Record], n_cpus: usize, end_ns: u64) -> Built {
    let mut b = Built {
        tracks: vec![Vec::new(); n_cpus],
        ..Built::default()
    };
    let mut open: Vec<Option<(Span, u64)>> = vec![None; n_cpus];
    let close = |tracks: &mut Vec<Vec<Slice>>, c: usize, o: Option<(Span, u64)>, at: u64| {
        if let Some((span, start)) = o {
            if span != Span::Task(NO_TASK) {
                tracks[c].push(Slice {
                    start_ns: start,
                    end_ns: at.max(start),
                    span,
                });
            }
        }
    };
    for r in records {
        let at = r.at_ns;
        match r.kind {
            RecordKind::Switch {
                cpu, next, switch, ..
            } => {
                let c = usize::from(cpu);
                if c < n_cpus {
                    close(&mut b.tracks, c, open[c], at);
                    open[c] = Some((Span::Task(next), at));
                    b.switches += u32::from(switch);
                }
            }
            RecordKind::Wake(w) => {
                b.arrows.push((at, w));
                b.arrivals.push(at);
            }
            RecordKind::Arrive { seq, .. } => {
                // Its wake-up is a few µs back at most: search from the newest.
                if let Some(k) = b.arrows.iter().rposition(|(_, w)| w.seq == seq) {
                    b.arrivals[k] = at;
                }
            }
            RecordKind::Migrate { .. } => b.migrations += 1,
            RecordKind::IdleEnter { cpu, cstate } => {
                let c = usize::from(cpu);
                if c < n_cpus {
                    close(&mut b.tracks, c, open[c], at);
                    open[c] = Some((Span::Idle(cstate), at));
                }
            }
            RecordKind::ForceIdle { cpu } => {
                let c = usize::from(cpu);
                if c < n_cpus {
                    close(&mut b.tracks, c, open[c], at);
                    open[c] = Some((Span::Forced, at));
                }
            }
            RecordKind::IdleExit { cpu, .. } => {
                let c = usize::from(cpu);
                if c < n_cpus {
                    if let Some((Span::Idle(_) | Span::Forced, _)) = open[c] {
                        close(&mut b.tracks, c, open[c], at);
                        open[c] = None;
                    }
                }
            }
        }
    }
    for (c, o) in open.into_iter().enumerate() {
        close(&mut b.tracks, c, o, end_ns);
    }
    b
}

/// The levels rows group by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Node,
    Llc,
    Cluster,
}

/// A group: its level and the id at that level (node id, LLC id, cluster id).
pub type GroupKey = (Level, u32);

/// A row of the timeline, top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    /// A group's header: when collapsed, it stands for its CPUs (drawn overlaid).
    Group {
        key: GroupKey,
        depth: u8,
        label: String,
        cpus: Vec<u32>,
        collapsed: bool,
    },
    Cpu {
        cpu: u32,
        depth: u8,
    },
}

/// Whether the machine's clusters are a level of their own among `cpus`: some
/// cluster holds more than one core and fewer CPUs than its LLC.
fn clusters_matter(m: &Machine, cpus: &[u32]) -> bool {
    cpus.iter().any(|&c| {
        let t = &m.cpus[c as usize];
        let same = |f: &dyn Fn(&schedlab_core::topology::CpuTopo) -> bool| {
            cpus.iter().filter(|&&o| f(&m.cpus[o as usize])).count()
        };
        let in_cluster =
            |o: &schedlab_core::topology::CpuTopo| o.llc == t.llc && o.cluster == t.cluster;
        let cores: BTreeSet<u32> = cpus
            .iter()
            .map(|&o| &m.cpus[o as usize])
            .filter(|o| in_cluster(o))
            .map(|o| o.core)
            .collect();
        cores.len() > 1 && same(&in_cluster) < same(&|o| o.llc == t.llc)
    })
}

/// The rows for `cpus` (sorted CPU ids of the machine): node, LLC and (where they
/// matter) cluster groups, each with its CPUs below unless collapsed.
pub fn rows(m: &Machine, cpus: &[u32], collapsed: &BTreeSet<GroupKey>) -> Vec<Row> {
    let clusters = clusters_matter(m, cpus);
    let mut out = Vec::new();
    let mut order: Vec<u32> = cpus
        .iter()
        .copied()
        .filter(|&c| (c as usize) < m.cpus.len())
        .collect();
    order.sort_by_key(|&c| {
        let t = &m.cpus[c as usize];
        (t.node.0, t.llc, t.cluster, c)
    });
    let key_of = |c: u32, l: Level| {
        let t = &m.cpus[c as usize];
        match l {
            Level::Node => (l, u32::from(t.node.0)),
            Level::Llc => (l, t.llc),
            Level::Cluster => (l, t.cluster),
        }
    };
    let members = |k: GroupKey| -> Vec<u32> {
        order
            .iter()
            .copied()
            .filter(|&c| key_of(c, k.0) == k)
            .collect()
    };
    let mut levels = vec![Level::Node, Level::Llc];
    if clusters {
        levels.push(Level::Cluster);
    }
    // Walk CPUs in order; open a header whenever a level's key changes. A level
    // whose group is its parent's CPUs exactly (Kunpeng 920's node is its LLC) joins
    // the parent's header rather than nesting an identical one.
    let n = levels.len();
    let mut current: Vec<Option<GroupKey>> = vec![None; n];
    let mut header: Vec<Option<usize>> = vec![None; n];
    let mut depth_of: Vec<u8> = vec![0; n];
    let mut members_of: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut hidden_below: Option<usize> = None;
    for &c in &order {
        for (d, &l) in levels.iter().enumerate() {
            let k = key_of(c, l);
            if current[d] == Some(k) {
                continue;
            }
            current[d] = Some(k);
            for below in current.iter_mut().skip(d + 1) {
                *below = None;
            }
            if hidden_below.is_some_and(|h| d > h) {
                continue;
            }
            hidden_below = None;
            let cpus = members(k);
            let list = schedlab_core::cpumask::CpuMask::from_cpus(
                m.nr_cpus(),
                cpus.iter().map(|&c| schedlab_core::cpumask::CpuId(c)),
            )
            .to_list();
            let name = match l {
                Level::Node => format!("node {}", k.1),
                Level::Llc => format!("LLC {}", k.1),
                Level::Cluster => format!("cluster {}", k.1),
            };
            if d > 0 && members_of[d - 1] == cpus {
                if let Some(Row::Group { label, .. }) = header[d - 1].and_then(|i| out.get_mut(i)) {
                    if let Some(at) = label.find(" (CPUs") {
                        label.insert_str(at, &format!(" \u{b7} {name}"));
                    }
                }
                header[d] = header[d - 1];
                depth_of[d] = depth_of[d - 1];
                members_of[d] = cpus;
                continue;
            }
            let depth = if d == 0 { 0 } else { depth_of[d - 1] + 1 };
            let is_collapsed = collapsed.contains(&k);
            header[d] = Some(out.len());
            depth_of[d] = depth;
            members_of[d] = cpus.clone();
            out.push(Row::Group {
                key: k,
                depth,
                label: format!("{name} (CPUs {list})"),
                cpus,
                collapsed: is_collapsed,
            });
            if is_collapsed {
                hidden_below = Some(d);
            }
        }
        if hidden_below.is_none() {
            out.push(Row::Cpu {
                cpu: c,
                depth: depth_of[n - 1] + 1,
            });
        }
    }
    out
}

/// The visible time range, ns (floats: a drawing, not a result).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub t0: f64,
    pub t1: f64,
}

/// The narrowest view: 200 ns across.
pub const MIN_SPAN_NS: f64 = 200.0;

impl View {
    pub fn span(&self) -> f64 {
        (self.t1 - self.t0).max(1.0)
    }

    /// Zoomed by `factor` (< 1 zooms in) about time `at`, kept inside `[lo, hi]` and
    /// no narrower than [`MIN_SPAN_NS`].
    pub fn zoom(&self, factor: f64, at: f64, lo: f64, hi: f64) -> View {
        let span = (self.span() * factor).clamp(MIN_SPAN_NS.min(hi - lo), (hi - lo).max(1.0));
        let f = ((at - self.t0) / self.span()).clamp(0.0, 1.0);
        let t0 = at - f * span;
        View { t0, t1: t0 + span }.clamped(lo, hi)
    }

    /// Moved by `dt` ns, kept inside `[lo, hi]`.
    pub fn pan(&self, dt: f64, lo: f64, hi: f64) -> View {
        View {
            t0: self.t0 + dt,
            t1: self.t1 + dt,
        }
        .clamped(lo, hi)
    }

    fn clamped(self, lo: f64, hi: f64) -> View {
        let span = self.span().min(hi - lo);
        let t0 = self.t0.clamp(lo, (hi - span).max(lo));
        View { t0, t1: t0 + span }
    }

    /// Time at x of a plot `w` pixels wide.
    pub fn time_at(&self, x: f64, w: f64) -> f64 {
        self.t0 + x / w.max(1.0) * self.span()
    }

    pub fn x_of(&self, t: f64, w: f64) -> f64 {
        (t - self.t0) / self.span() * w
    }
}

/// "1.234 ms" / "12.5 µs" for a time, at a precision fitting `span` ns.
pub fn fmt_time(t_ns: f64, span_ns: f64) -> String {
    if span_ns >= 2e6 {
        format!("{:.2} ms", t_ns / 1e6)
    } else if span_ns >= 2e4 {
        format!("{:.3} ms", t_ns / 1e6)
    } else {
        format!("{:.4} ms", t_ns / 1e6)
    }
}

/// A tick's label: its time in ms with as many decimals as the step needs ("113 ms"
/// a ms apart, "112.5 ms" half a ms apart, "112.25 ms" a quarter), short enough that a
/// phone's narrow axis holds two.
pub fn fmt_tick(t_ns: f64, step_ns: f64) -> String {
    let step_ms = step_ns / 1e6;
    let decimals = (0..6usize).find(|&d| {
        let k = step_ms * 10f64.powi(d as i32);
        (k - k.round()).abs() < 1e-6
    });
    format!("{:.*} ms", decimals.unwrap_or(6), t_ns / 1e6)
}

/// The fewest CSS px between two ticks of the time axis: a label ("112.5 ms" is about
/// 48 px at 11 px, `fmt_tick`) and a gap.
pub const TICK_PX: f64 = 60.0;

/// Tick step for a span drawn `plot_px` wide (1, 2 or 5 × a power of ten ns): about 8
/// ticks across, fewer where they would come closer than [`TICK_PX`] (on a phone's
/// 140 px of plot, 8 labels ran into one another).
pub fn tick_step(span_ns: f64, plot_px: f64) -> f64 {
    let raw = (span_ns / 8.0).max(span_ns * TICK_PX / plot_px.max(1.0));
    let p = 10f64.powf(raw.max(1.0).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|k| k * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// A task's colour: a hue from its id (golden-angle steps), so neighbours differ;
/// background tasks grey.
pub fn task_colour(t: u32, background: bool) -> String {
    if background {
        return "hsl(0, 0%, 62%)".to_string();
    }
    let hue = (u64::from(t) * 137 + 20) % 360;
    format!("hsl({hue}, 62%, 52%)")
}

/// The slice at time `t` on a track (binary search; tracks are in time order).
pub fn slice_at(track: &[Slice], t: f64) -> Option<&Slice> {
    let i = track.partition_point(|s| (s.start_ns as f64) <= t);
    let s = track.get(i.checked_sub(1)?)?;
    (t < s.end_ns as f64 || s.start_ns == s.end_ns).then_some(s)
}

#[cfg(test)]
mod tests {
    use schedlab_core::experiment::{LiveRun, RunSpec};
    use schedlab_core::sim::record::{QueueKind, RecordConfig, Recording};
    use schedlab_core::sim::SimTime;
    use schedlab_core::workload::Workload;

    use super::*;

    /// `preset`'s tbench run recorded over `window_ms` after its clients' start
    /// (dbench's release); the window in absolute ns with it.
    fn recorded(
        preset: &str,
        cpus: &str,
        window_ms: (u64, u64),
    ) -> (LiveRun, Recording, (u64, u64)) {
        let spec = RunSpec::on_preset(
            preset,
            cpus,
            "6.6+cluster".parse().unwrap(),
            Workload::Tbench { clients: 8 },
            5,
            1,
        )
        .unwrap();
        let at = crate::worker::tests::clients_start_ns(&spec);
        let w = (
            at + SimTime::from_ms(window_ms.0).ns(),
            at + SimTime::from_ms(window_ms.1).ns(),
        );
        let mut live = LiveRun::with_recorder(
            &spec,
            RecordConfig {
                cap: 1 << 20,
                window: Some((SimTime(w.0), SimTime(w.1))),
                capture_wake: Vec::new(),
            },
        )
        .unwrap();
        live.finish().unwrap();
        let rec = live.recording().unwrap().clone();
        (live, rec, w)
    }

    /// The tracks hold what the record says: one arrow per wake-up record, every
    /// slice inside the window and in order without overlap on its CPU, and the
    /// Chrome trace (the download) has one `X` slice per timeline slice.
    #[test]
    fn a_recorded_window_builds_tracks_and_arrows() {
        let (live, rec, (w0, w1)) = recorded("kunpeng920-6426", "node0", (1, 3));
        let n = 128;
        let b = build(&rec.records, n, w1);
        let wakes = rec
            .records
            .iter()
            .filter(|r| matches!(r.kind, RecordKind::Wake(_)))
            .count();
        assert!(wakes > 100, "{wakes}");
        assert_eq!(b.arrows.len(), wakes);
        // A wake-list wakee's arrow ends at its arrival (`RecordKind::Arrive`, once
        // its IPI is in), the others where they start.
        assert_eq!(b.arrivals.len(), wakes);
        let mut late = 0;
        for ((at, w), &arrived) in b.arrows.iter().zip(&b.arrivals) {
            assert!(arrived >= *at, "wake-up {} arrives before its call", w.seq);
            let wakelist = matches!(w.queue, QueueKind::WakelistIpi | QueueKind::WakelistNoIpi);
            assert!(wakelist || arrived == *at, "wake-up {}", w.seq);
            late += usize::from(arrived > *at);
        }
        assert!(
            late > wakes / 10,
            "{late} of {wakes} wake-ups arrive after their call"
        );
        let mut slices = 0;
        for t in &b.tracks {
            for w in t.windows(2) {
                assert!(w[0].end_ns <= w[1].start_ns, "{w:?}");
            }
            for s in t {
                assert!(s.start_ns >= w0 && s.end_ns <= w1, "{s:?}");
                assert!(s.start_ns <= s.end_ns);
            }
            slices += t.len();
        }
        assert!(slices > wakes, "{slices}");
        assert!(
            b.tracks[32..].iter().all(Vec::is_empty),
            "node 1 is not in the run"
        );
        // The trace's sched slices (tasks, idle, forced idle) are these.
        let json: serde_json::Value = serde_json::from_str(&live.chrome_trace().unwrap()).unwrap();
        let x_sched = json["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == "sched")
            .count();
        let end = live.now_ns();
        let b_end = build(&rec.records, n, end);
        assert_eq!(
            x_sched,
            b_end.tracks.iter().map(Vec::len).sum::<usize>(),
            "the trace's slices"
        );
        // A slice is found at its own middle.
        let s = b
            .tracks
            .iter()
            .flatten()
            .find(|s| s.end_ns > s.start_ns + 10)
            .unwrap();
        let mid = (s.start_ns + s.end_ns) as f64 / 2.0;
        let t = b.tracks.iter().find(|t| t.contains(s)).unwrap();
        assert_eq!(slice_at(t, mid), Some(s));
    }

    /// Kunpeng 920's CPUs 0-63: two nodes, each one LLC (one header: "node 0 ·
    /// LLC 0"), their 4-CPU clusters, each CPU once; collapsing a node hides its
    /// clusters and CPUs.
    #[test]
    fn rows_group_by_node_llc_and_cluster_and_collapse() {
        let m = schedlab_core::topology::presets::machine("kunpeng920-6426").unwrap();
        let cpus: Vec<u32> = (0..64).collect();
        let r = rows(&m, &cpus, &BTreeSet::new());
        let cpu_rows: Vec<u32> = r
            .iter()
            .filter_map(|r| match r {
                Row::Cpu { cpu, .. } => Some(*cpu),
                _ => None,
            })
            .collect();
        assert_eq!(cpu_rows, cpus, "each CPU once, in order");
        let groups = |l: Level| {
            r.iter()
                .filter(|r| matches!(r, Row::Group { key: (lv, _), .. } if *lv == l))
                .count()
        };
        assert_eq!(groups(Level::Node), 2);
        assert_eq!(groups(Level::Llc), 0, "each LLC is its node");
        assert_eq!(groups(Level::Cluster), 16, "4 CPUs per cluster");
        let Some(Row::Group {
            key,
            cpus: first_llc,
            label,
            ..
        }) = r.first()
        else {
            panic!("a node row")
        };
        assert_eq!(label, "node 0 \u{b7} LLC 0 (CPUs 0-31)");
        assert_eq!(first_llc.len(), 32);
        let collapsed: BTreeSet<GroupKey> = [*key].into();
        let r2 = rows(&m, &cpus, &collapsed);
        let n_cpu = r2.iter().filter(|r| matches!(r, Row::Cpu { .. })).count();
        assert_eq!(n_cpu, 32);
        assert_eq!(
            r2.len(),
            r.len() - 32 - 8,
            "its 32 CPUs and 8 clusters hidden"
        );
        // x86 without clusters: node and LLC only.
        let e = schedlab_core::topology::presets::machine("epyc9654-2p").unwrap();
        let ecpus: Vec<u32> = (0..16).collect();
        let er = rows(&e, &ecpus, &BTreeSet::new());
        assert!(er.iter().all(|r| !matches!(
            r,
            Row::Group {
                key: (Level::Cluster, _),
                ..
            }
        )));
    }

    #[test]
    fn zoom_and_pan_stay_inside_the_window() {
        let v = View { t0: 0.0, t1: 1e6 };
        let z = v.zoom(0.5, 5e5, 0.0, 1e6);
        assert_eq!((z.t0, z.t1), (2.5e5, 7.5e5));
        let p = z.pan(1e6, 0.0, 1e6);
        assert_eq!((p.t0, p.t1), (5e5, 1e6));
        let out = z.zoom(10.0, 0.0, 0.0, 1e6);
        assert_eq!((out.t0, out.t1), (0.0, 1e6));
        let tight = (0..40).fold(v, |v, _| v.zoom(0.5, 3e5, 0.0, 1e6));
        assert!((tight.span() - MIN_SPAN_NS).abs() < 1e-6);
        assert_eq!(tick_step(1e6, 1000.0), 2e5);
        assert_eq!(tick_step(7e3, 1000.0), 1e3);
        // A 2 ms window in a phone's 140 px: a tick a ms (was 8 ticks, 0.25 ms apart).
        assert_eq!(tick_step(2e6, 140.0), 1e6);
        assert_eq!(tick_step(2e6, 421.0), 5e5);
        assert_eq!(fmt_tick(113e6, 1e6), "113 ms");
        assert_eq!(fmt_tick(112.5e6, 5e5), "112.5 ms");
        assert_eq!(fmt_tick(112.4e6, 2e5), "112.4 ms");
        assert_eq!(fmt_tick(112.25e6, 5e4), "112.25 ms");
        assert_eq!(fmt_tick(2000.0, 1e3), "0.002 ms");
    }
}
