//! Where the timeline's rows go: the gutter and axis sizes, one line per side and per
//! group or CPU row (`crate::timeline::rows` says which rows there are), and the height
//! at which each CPU's track is drawn (a collapsed group's CPUs share its row). Both the
//! drawing (`draw.rs`) and the hit test (`hit.rs`) read this layout.

use std::collections::BTreeSet;
use std::rc::Rc;

use schedlab_core::topology::Machine;

use super::SideWindow;
use crate::timeline::{rows, GroupKey, Row};

/// The label column's widest, and its narrowest.
const GUTTER_MAX: f64 = 190.0;
pub(super) const GUTTER_MIN: f64 = 100.0;

/// The label column's width for a canvas `w` CSS px wide: a third of it, from
/// [`GUTTER_MIN`] to [`GUTTER_MAX`] px. It was 190 px at every width: on a phone (a
/// 314 px canvas) that left 124 px of plot; now 104, leaving 210. The labels that do
/// not fit are shortened (`draw.rs`).
pub(super) fn gutter(w: f64) -> f64 {
    (w / 3.0).clamp(GUTTER_MIN, GUTTER_MAX).floor()
}
pub(super) const AXIS_H: f64 = 22.0;
const SIDE_H: f64 = 20.0;
const GROUP_H: f64 = 15.0;
const CPU_H: f64 = 11.0;

/// A laid-out row: which side, what, where.
#[derive(Clone, Debug)]
pub(super) enum Line {
    Side(usize),
    Row(usize, Row),
}

pub(super) fn layout(
    sides: &[Rc<SideWindow>],
    m: &Machine,
    cpus: &[u32],
    collapsed: &BTreeSet<GroupKey>,
) -> Vec<(Line, f64, f64)> {
    let mut out = Vec::new();
    let mut y = AXIS_H;
    for (i, _) in sides.iter().enumerate() {
        out.push((Line::Side(i), y, SIDE_H));
        y += SIDE_H;
        for r in rows(m, cpus, collapsed) {
            let h = match r {
                Row::Group { .. } => GROUP_H,
                Row::Cpu { .. } => CPU_H,
            };
            out.push((Line::Row(i, r), y, h));
            y += h;
        }
    }
    out
}

/// Where each CPU of side `i` is drawn: its row's middle, or its collapsed group's.
pub(super) fn cpu_y(lines: &[(Line, f64, f64)], i: usize, n: usize) -> Vec<Option<f64>> {
    let mut ys = vec![None; n];
    for (l, y, h) in lines {
        match l {
            Line::Row(s, Row::Cpu { cpu, .. }) if *s == i => {
                if let Some(v) = ys.get_mut(*cpu as usize) {
                    *v = Some(y + h / 2.0);
                }
            }
            Line::Row(
                s,
                Row::Group {
                    cpus,
                    collapsed: true,
                    ..
                },
            ) if *s == i => {
                for &c in cpus {
                    if let Some(v) = ys.get_mut(c as usize) {
                        *v = Some(y + h / 2.0);
                    }
                }
            }
            _ => {}
        }
    }
    ys
}

#[cfg(test)]
mod tests {
    use super::gutter;

    #[test]
    fn the_label_column_is_a_third_of_the_canvas_within_its_bounds() {
        // A 390 px phone's canvas, 314 px: 104 px of labels (it was 190).
        assert_eq!(gutter(314.4), 104.0);
        assert_eq!(gutter(596.0), 190.0);
        assert_eq!(gutter(220.0), 100.0);
    }
}
