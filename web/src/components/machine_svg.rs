//! The machine drawing as a standalone SVG file, rendered from the machine model (the
//! drawing on screen is HTML buttons, so it cannot be serialised as a figure), in
//! the nesting `machine_view.rs` draws and lstopo prints:
//!
//! ```text
//!  package ▸ node ▸ LLC ▸ cluster ▸ core (SMT threads) ▸ CPU
//! ```
//!
//! A box whose only child is another box takes its label ("node 0 · LLC 0"), as on
//! screen; clusters are drawn where an LLC has several. Children
//! are laid out in rows of about √n, so boxes stay near square for 4 or 4096 CPUs.
//! Colours are written into the file (light theme): it renders anywhere, alone. The
//! CPUs of `shade` (the highlighted domain level's span, or the workload's CPUs) are
//! shaded, the selected CPU outlined.

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::topology::Machine;

const CPU_W: f64 = 30.0;
const CPU_H: f64 = 20.0;
const GAP: f64 = 4.0;
const PAD: f64 = 5.0;
const LABEL_H: f64 = 15.0;

/// A box of the drawing: a label over children, or a CPU.
enum Node {
    Cpu(CpuId),
    Group {
        label: String,
        class: &'static str,
        children: Vec<Node>,
    },
}

impl Node {
    /// Width and height laid out.
    fn size(&self) -> (f64, f64) {
        match self {
            Node::Cpu(_) => (CPU_W, CPU_H),
            Node::Group { children, .. } => {
                let (w, h) = grid(children);
                let label = if self.label_w() > 0.0 { LABEL_H } else { 0.0 };
                ((w + 2.0 * PAD).max(self.label_w()), h + 2.0 * PAD + label)
            }
        }
    }

    fn label_w(&self) -> f64 {
        match self {
            Node::Group { label, .. } if !label.is_empty() => label.len() as f64 * 6.2 + 2.0 * PAD,
            _ => 0.0,
        }
    }
}

/// Children per row: about √n, at least 1.
fn per_row(n: usize) -> usize {
    ((n as f64).sqrt().ceil() as usize).max(1)
}

/// The grid's width and height for `children` in rows of [`per_row`].
fn grid(children: &[Node]) -> (f64, f64) {
    let k = per_row(children.len());
    let (mut w, mut h) = (0.0f64, 0.0);
    for row in children.chunks(k) {
        let rw: f64 = row.iter().map(|c| c.size().0).sum::<f64>() + GAP * (row.len() - 1) as f64;
        let rh = row.iter().map(|c| c.size().1).fold(0.0, f64::max);
        w = w.max(rw);
        h += rh + GAP;
    }
    (w, (h - GAP).max(0.0))
}

/// Children grouped by id, in order of first appearance.
fn group_by<T: Copy>(items: &[T], key: impl Fn(T) -> u32) -> Vec<(u32, Vec<T>)> {
    let mut out: Vec<(u32, Vec<T>)> = Vec::new();
    for &x in items {
        let k = key(x);
        match out.iter_mut().find(|(id, _)| *id == k) {
            Some((_, v)) => v.push(x),
            None => out.push((k, vec![x])),
        }
    }
    out
}

/// A box per group of `groups`, labelled `NAME ID`; a box whose only child is another
/// labelled box takes that box's label and children ("node 0 · LLC 0").
fn level(
    name: &str,
    class: &'static str,
    groups: Vec<(u32, Vec<CpuId>)>,
    inner: &dyn Fn(&[CpuId]) -> Vec<Node>,
) -> Vec<Node> {
    groups
        .into_iter()
        .map(|(id, cpus)| {
            let label = format!("{name} {id}");
            let mut children = inner(&cpus);
            if let [Node::Group { label: l, .. }] = &children[..] {
                if !l.is_empty() {
                    if let Some(Node::Group {
                        label: inner_label,
                        class,
                        children,
                    }) = children.pop()
                    {
                        return Node::Group {
                            label: format!("{label} · {inner_label}"),
                            class,
                            children,
                        };
                    }
                }
            }
            Node::Group {
                label,
                class,
                children,
            }
        })
        .collect()
}

/// The tree of boxes for `m`: packages of nodes of LLCs of clusters (drawn only where
/// an LLC has several) of cores (a box only with SMT siblings) of CPUs.
fn tree(m: &Machine) -> Vec<Node> {
    let cpus: Vec<CpuId> = (0..m.nr_cpus()).map(CpuId).collect();
    let t = |c: CpuId| m.topo(c);
    let cores = |cpus: &[CpuId]| -> Vec<Node> {
        group_by(cpus, |c| t(c).core)
            .into_iter()
            .map(|(_, threads)| {
                if threads.len() == 1 {
                    Node::Cpu(threads[0])
                } else {
                    Node::Group {
                        label: String::new(),
                        class: "core",
                        children: threads.into_iter().map(Node::Cpu).collect(),
                    }
                }
            })
            .collect()
    };
    let clusters = |cpus: &[CpuId]| -> Vec<Node> {
        let g = group_by(cpus, |c| t(c).cluster);
        if g.len() == 1 {
            cores(cpus)
        } else {
            level("cluster", "cluster", g, &cores)
        }
    };
    let llcs = |cpus: &[CpuId]| level("LLC", "llc", group_by(cpus, |c| t(c).llc), &clusters);
    let nodes = |cpus: &[CpuId]| {
        level(
            "node",
            "node",
            group_by(cpus, |c| u32::from(t(c).node.0)),
            &llcs,
        )
    };
    level(
        "package",
        "package",
        group_by(&cpus, |c| t(c).package),
        &nodes,
    )
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn draw(n: &Node, x: f64, y: f64, shade: Option<&CpuMask>, selected: CpuId, out: &mut String) {
    let (w, h) = n.size();
    match n {
        Node::Cpu(c) => {
            let shaded = shade.is_some_and(|s| s.test_cpu(*c));
            let (fill, stroke, sw) = match (shaded, *c == selected) {
                (_, true) => ("#1f5fbf", "#0b2e66", 2.0),
                (true, false) => ("#cfe0fa", "#5b7fb8", 1.0),
                (false, false) => ("#ffffff", "#8a94a6", 1.0),
            };
            let text = if *c == selected { "#ffffff" } else { "#1d2430" };
            out.push_str(&format!(
                "<g class=\"cpu\" data-cpu=\"{}\"><rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"3\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{sw}\"/>\
<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"{text}\">{}</text></g>\n",
                c.0,
                x + w / 2.0,
                y + h / 2.0 + 3.5,
                c.0
            ));
        }
        Node::Group {
            label,
            class,
            children,
        } => {
            let fill = match *class {
                "package" => "#f4f6fa",
                "node" => "#eef2f8",
                "llc" => "#e8eef7",
                "cluster" => "#fdf6e3",
                _ => "#f7f7f7",
            };
            out.push_str(&format!(
                "<g class=\"{class}\"><rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"4\" fill=\"{fill}\" stroke=\"#9aa5b8\"/>\n"
            ));
            let mut cy = y + PAD;
            if !label.is_empty() {
                out.push_str(&format!(
                    "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#3a4456\">{}</text>\n",
                    x + PAD,
                    cy + 9.0,
                    esc(label)
                ));
                cy += LABEL_H;
            }
            for row in children.chunks(per_row(children.len())) {
                let mut cx = x + PAD;
                let rh = row.iter().map(|c| c.size().1).fold(0.0, f64::max);
                for c in row {
                    draw(c, cx, cy, shade, selected, out);
                    cx += c.size().0 + GAP;
                }
                cy += rh + GAP;
            }
            out.push_str("</g>\n");
        }
    }
}

/// `m` as an SVG file: a title line (machine, kernel, CPUs), then the boxes.
pub fn machine_svg(m: &Machine, kernel: &str, shade: Option<&CpuMask>, selected: CpuId) -> String {
    let root = Node::Group {
        label: String::new(),
        class: "machine",
        children: tree(m),
    };
    let (w, h) = root.size();
    let title_h = 22.0;
    let (width, height) = (w.max(320.0).ceil(), (h + title_h).ceil());
    let mut body = String::new();
    draw(&root, 0.0, title_h, shade, selected, &mut body);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\">\n\
<title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
<text x=\"4\" y=\"15\" font-size=\"12\" font-weight=\"bold\" fill=\"#1d2430\">{}</text>\n{body}</svg>\n",
        esc(&format!("{}, Linux {kernel}, {} CPUs", m.name, m.nr_cpus())),
        esc(&format!(
            "{} · Linux {kernel} · {} CPUs · {} NUMA nodes",
            m.name,
            m.nr_cpus(),
            m.nr_nodes()
        )),
    )
}

/// A box of the laid-out drawing, in the SVG's units.
#[derive(Clone, Debug, PartialEq)]
pub struct LaidBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
    /// "package", "node", "llc", "cluster", "core" (SMT threads), or "machine".
    pub class: &'static str,
    pub label: String,
}

/// The machine drawing's layout, for another renderer (the live view's canvas):
/// the group boxes outermost first, and each CPU's box by CPU number. The same
/// nesting and positions as [`machine_svg`], without the title line.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub w: f64,
    pub h: f64,
    pub groups: Vec<LaidBox>,
    /// `cpus[c]` is CPU c's box (x, y, w, h).
    pub cpus: Vec<[f64; 4]>,
}

/// Lays `m` out as [`machine_svg`] draws it (the tests compare the two).
#[cfg(test)]
pub fn layout(m: &Machine) -> Layout {
    layout_with(m, None)
}

/// [`layout`], but with the outermost boxes that sit side by side (packages, or the
/// nodes of a single package) in as many columns as bring the drawing's width over
/// height nearest `aspect`: a 2-socket machine is two packages in a row, 5 to 1,
/// which a canvas half a page wide would shrink to dots; stacked it is about 1 to 1.
pub fn layout_fit(m: &Machine, aspect: f64) -> Layout {
    let root = root(m);
    let n = top(&root).map_or(1, |c| c.len());
    let best = (1..=n)
        .min_by(|&a, &b| {
            let off = |k: usize| {
                let (w, h) = size_with(&root, Some(k));
                ((w / h.max(1.0)) / aspect).ln().abs()
            };
            off(a).total_cmp(&off(b))
        })
        .unwrap_or(1);
    layout_with(m, Some(best))
}

/// The layout whose drawing, scaled to fit `w` × `h` px, has the biggest CPUs, of the
/// flowed ones: each group's children (but a group of CPUs alone, which keeps its
/// rows of about √n) side by side while they fit a width, then on the next row, as
/// CSS's flex-wrap; the width tried in 10-unit steps up to the square layout's.
/// With its scale (px per unit). The live view's on a phone, whose canvas is tall
/// and narrow: Kunpeng 920's 128 CPUs in 331 × 590 px are 24 px wide this way, 20
/// in [`layout_fit`]'s, too narrow to number. `named_clusters` false: the clusters'
/// boxes without their names ("cluster 0") and the line each takes over its CPUs
/// (15 units a row of clusters), for a canvas where that line is what keeps the CPUs
/// too small to number.
pub fn layout_flow_fit(m: &Machine, w: f64, h: f64, named_clusters: bool) -> (Layout, f64) {
    let mut root = root(m);
    if !named_clusters {
        unname(&mut root, "cluster");
    }
    let widest = root.size().0.max(CPU_W + 2.0 * PAD);
    let scale = |(lw, lh): (f64, f64)| (w / lw.max(1.0)).min(h / lh.max(1.0));
    let mut best = (widest, scale(flow_size(&root, widest)));
    let mut max_w = CPU_W + 2.0 * PAD;
    while max_w < widest {
        let s = scale(flow_size(&root, max_w));
        if s > best.1 {
            best = (max_w, s);
        }
        max_w += 10.0;
    }
    let (lw, lh) = flow_size(&root, best.0);
    let mut out = Layout {
        w: lw,
        h: lh,
        groups: Vec::new(),
        cpus: vec![[0.0; 4]; m.nr_cpus() as usize],
    };
    flow_place(&root, 0.0, 0.0, best.0, &mut out);
    (out, best.1)
}

/// The layout for a canvas `w` px wide and up to `max_h` tall, taller than its box
/// (the box scrolls), at `scale` px per unit or more: flowed, without the clusters'
/// names, a cluster of one core drawn as one box (EPYC's L2s, a cluster box 5 units
/// round its core's), at the flowed width whose drawing is least tall for its width;
/// with its scale (`w` over its width, `scale` or more). `None` where no flowed width
/// is narrow enough or short enough (at once where the CPUs alone would be too tall:
/// 4096 of them). The live view's for EPYC 9654 (192 CPUs) on a phone and at
/// 1280 × 720, whose CPUs were 12-14 px wide in every layout that fits the box.
pub fn layout_scroll_fit(m: &Machine, w: f64, scale: f64, max_h: f64) -> Option<(Layout, f64)> {
    let cpus = (CPU_W + GAP) * (CPU_H + GAP) * f64::from(m.nr_cpus());
    if cpus * scale * scale > w * max_h {
        return None;
    }
    let mut root = root(m);
    unname(&mut root, "cluster");
    merge_lone_cores(&mut root);
    let widest = (w / scale).min(root.size().0.max(CPU_W + 2.0 * PAD));
    let mut best: Option<(f64, f64, f64)> = None;
    let mut max_w = CPU_W + 2.0 * PAD;
    while max_w <= widest {
        let (lw, lh) = flow_size(&root, max_w);
        let tall = lh / lw.max(1.0);
        if lw * scale <= w && best.is_none_or(|b| tall < b.1) {
            best = Some((max_w, tall, lw));
        }
        max_w += 10.0;
    }
    let (max_w, _, lw) = best?;
    let lh = flow_size(&root, max_w).1;
    if lh * w / lw > max_h {
        return None;
    }
    let mut out = Layout {
        w: lw,
        h: lh,
        groups: Vec::new(),
        cpus: vec![[0.0; 4]; m.nr_cpus() as usize],
    };
    flow_place(&root, 0.0, 0.0, max_w, &mut out);
    Some((out, w / lw))
}

/// A cluster whose only child is a core (SMT threads) takes the core's CPUs: one
/// box for both.
fn merge_lone_cores(n: &mut Node) {
    if let Node::Group {
        class, children, ..
    } = n
    {
        if *class == "cluster" {
            if let [Node::Group {
                class: "core",
                children: threads,
                ..
            }] = &mut children[..]
            {
                *children = std::mem::take(threads);
                return;
            }
        }
        children.iter_mut().for_each(merge_lone_cores);
    }
}

/// Clears the labels of `n`'s groups of `class` (their boxes stay).
fn unname(n: &mut Node, which: &str) {
    if let Node::Group {
        label,
        class,
        children,
    } = n
    {
        if *class == which {
            label.clear();
        }
        children.iter_mut().for_each(|c| unname(c, which));
    }
}

/// Whether `n`'s children are CPUs only (a core, or a cluster without SMT).
fn of_cpus(children: &[Node]) -> bool {
    children.iter().all(|c| matches!(c, Node::Cpu(_)))
}

/// The rows `children` take in `inner` units of width, flowed: per row, its
/// children's index range, width and height (children laid out in `inner` too).
fn flow_rows(children: &[Node], inner: f64) -> Vec<(std::ops::Range<usize>, f64, f64)> {
    let mut rows = Vec::new();
    let (mut start, mut w, mut h) = (0, 0.0f64, 0.0f64);
    for (i, c) in children.iter().enumerate() {
        let (cw, ch) = flow_size(c, inner);
        if i > start && w + GAP + cw > inner {
            rows.push((start..i, w, h));
            (start, w, h) = (i, cw, ch);
        } else {
            w = if i == start { cw } else { w + GAP + cw };
            h = h.max(ch);
        }
    }
    if start < children.len() {
        rows.push((start..children.len(), w, h));
    }
    rows
}

/// `n`'s size flowed in `max_w` units (a group of CPUs alone: its own size).
fn flow_size(n: &Node, max_w: f64) -> (f64, f64) {
    match n {
        Node::Group {
            children, label, ..
        } if !of_cpus(children) => {
            let rows = flow_rows(children, max_w - 2.0 * PAD);
            let w = rows.iter().map(|r| r.1).fold(0.0, f64::max);
            let h =
                rows.iter().map(|r| r.2).sum::<f64>() + GAP * rows.len().saturating_sub(1) as f64;
            let lh = if label.is_empty() { 0.0 } else { LABEL_H };
            ((w + 2.0 * PAD).max(n.label_w()), h + 2.0 * PAD + lh)
        }
        _ => n.size(),
    }
}

/// [`place`] for the flowed layout of [`flow_size`].
fn flow_place(n: &Node, x: f64, y: f64, max_w: f64, out: &mut Layout) {
    match n {
        Node::Group {
            children,
            label,
            class,
        } if !of_cpus(children) => {
            let (w, h) = flow_size(n, max_w);
            out.groups.push(LaidBox {
                x,
                y,
                w,
                h,
                class,
                label: label.clone(),
            });
            let inner = max_w - 2.0 * PAD;
            let mut cy = y + PAD + if label.is_empty() { 0.0 } else { LABEL_H };
            for (range, _, rh) in flow_rows(children, inner) {
                let mut cx = x + PAD;
                for c in &children[range] {
                    flow_place(c, cx, cy, inner, out);
                    cx += flow_size(c, inner).0 + GAP;
                }
                cy += rh + GAP;
            }
        }
        _ => place(n, x, y, None, out),
    }
}

fn root(m: &Machine) -> Node {
    Node::Group {
        label: String::new(),
        class: "machine",
        children: tree(m),
    }
}

/// The children of the outermost group with more than one.
fn top(n: &Node) -> Option<&[Node]> {
    match n {
        Node::Group { children, .. } if children.len() == 1 => top(&children[0]),
        Node::Group { children, .. } => Some(children),
        Node::Cpu(_) => None,
    }
}

/// The size of `n` with `cols` columns at its outermost group of several (`None`: as
/// everywhere else, about √n).
fn size_with(n: &Node, cols: Option<usize>) -> (f64, f64) {
    let Some(k) = cols else {
        return n.size();
    };
    match n {
        Node::Group {
            children, label, ..
        } => {
            let (w, h) = if children.len() == 1 {
                size_with(&children[0], cols)
            } else {
                let (mut w, mut h) = (0.0f64, 0.0);
                for row in children.chunks(k.max(1)) {
                    let rw: f64 =
                        row.iter().map(|c| c.size().0).sum::<f64>() + GAP * (row.len() - 1) as f64;
                    let rh = row.iter().map(|c| c.size().1).fold(0.0, f64::max);
                    w = w.max(rw);
                    h += rh + GAP;
                }
                (w, (h - GAP).max(0.0))
            };
            let lh = if label.is_empty() { 0.0 } else { LABEL_H };
            ((w + 2.0 * PAD).max(n.label_w()), h + 2.0 * PAD + lh)
        }
        Node::Cpu(_) => n.size(),
    }
}

fn layout_with(m: &Machine, cols: Option<usize>) -> Layout {
    let root = root(m);
    let (w, h) = size_with(&root, cols);
    let mut out = Layout {
        w,
        h,
        groups: Vec::new(),
        cpus: vec![[0.0; 4]; m.nr_cpus() as usize],
    };
    place(&root, 0.0, 0.0, cols, &mut out);
    out
}

/// [`draw`]'s walk, keeping the boxes instead of writing them (with `cols` columns
/// at the outermost group of several, as [`size_with`]).
fn place(n: &Node, x: f64, y: f64, cols: Option<usize>, out: &mut Layout) {
    let (w, h) = size_with(n, cols);
    match n {
        Node::Cpu(c) => {
            if let Some(b) = out.cpus.get_mut(c.0 as usize) {
                *b = [x, y, w, h];
            }
        }
        Node::Group {
            label,
            class,
            children,
        } => {
            out.groups.push(LaidBox {
                x,
                y,
                w,
                h,
                class,
                label: label.clone(),
            });
            let mut cy = y + PAD + if label.is_empty() { 0.0 } else { LABEL_H };
            // Only the outermost group of several takes `cols`.
            let (k, inner) = match (cols, children.len()) {
                (Some(_), 1) => (1, cols),
                (Some(k), _) => (k.max(1), None),
                (None, n) => (per_row(n), None),
            };
            for row in children.chunks(k) {
                let mut cx = x + PAD;
                let rh = row
                    .iter()
                    .map(|c| size_with(c, inner).1)
                    .fold(0.0, f64::max);
                for c in row {
                    place(c, cx, cy, inner, out);
                    cx += size_with(c, inner).0 + GAP;
                }
                cy += rh + GAP;
            }
        }
    }
}

#[cfg(test)]
#[path = "machine_svg_tests.rs"]
mod tests;
