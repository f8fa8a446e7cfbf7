//! A line diff for the Domains tab's "compare with" view: two kernels' dmesg, debugfs
//! or schedstat text side by side, as Compiler Explorer diffs two compilers' output.
//!
//! Myers' O((N+M)·D) algorithm (the shortest edit script, as `diff` and git use) on
//! whole lines, after the common head and tail are cut off. The texts are one CPU's
//! (the chosen CPU's), a few dozen to a few hundred lines even on 4096-CPU machines,
//! so D stays small; past [`MAX_EDITS`] edits the diff gives up on alignment and
//! pairs the remaining lines in order, and says so ([`Diff::capped`]).

/// Edits past which [`diff`] stops aligning (Myers keeps O(D²) numbers for the
/// backtrack: 2000² × 8 bytes would be 32 MB).
pub const MAX_EDITS: usize = 1000;

/// One row of the side-by-side view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    /// The same line on both sides.
    Same(String),
    /// A line of the left text replaced by one of the right's.
    Changed(String, String),
    /// A line of the left text only.
    Removed(String),
    /// A line of the right text only.
    Added(String),
}

impl Row {
    /// The row's class and its non-colour marker: `-`, `+`, `~` or a space.
    pub fn kind(&self) -> (&'static str, &'static str) {
        match self {
            Row::Same(_) => ("same", " "),
            Row::Changed(..) => ("changed", "~"),
            Row::Removed(_) => ("removed", "-"),
            Row::Added(_) => ("added", "+"),
        }
    }
}

/// Two texts' rows, and counts of each kind.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Diff {
    pub rows: Vec<Row>,
    pub changed: usize,
    pub removed: usize,
    pub added: usize,
    /// More than [`MAX_EDITS`] edits: the middle is paired in order, not aligned.
    pub capped: bool,
}

impl Diff {
    /// Whether the two texts are equal.
    pub fn identical(&self) -> bool {
        self.changed + self.removed + self.added == 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Ins,
}

/// The shortest edit script from `a` to `b` (Myers 1986, the greedy forward pass
/// with a per-D snapshot of the furthest-reaching x on each diagonal), or `None`
/// past `max_d` edits.
fn myers(a: &[&str], b: &[&str], max_d: usize) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let off = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    // trace[d]: v[-(d+1) ..= d+1] as it was before round d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut reached = false;
    for d in 0..=max.min(max_d) as isize {
        trace.push(v[(off - d - 1) as usize..=(off + d + 1) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let i = (off + k) as usize;
            let mut x = if k == -d || (k != d && v[i - 1] < v[i + 1]) {
                v[i + 1]
            } else {
                v[i - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[i] = x;
            if x >= n && y >= m {
                reached = true;
                break;
            }
            k += 2;
        }
        if reached {
            break;
        }
    }
    if !reached {
        return None;
    }
    let mut ops = Vec::with_capacity((n + m) as usize);
    let (mut x, mut y) = (n, m);
    for d in (0..trace.len() as isize).rev() {
        let snap = &trace[d as usize];
        let at = |k: isize| snap[(k + d + 1) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = if d == 0 { 0 } else { at(prev_k) };
        let prev_y = if d == 0 { 0 } else { prev_x - prev_k };
        while x > prev_x && y > prev_y {
            ops.push(Op::Same);
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            ops.push(if x == prev_x { Op::Ins } else { Op::Del });
        }
        x = prev_x;
        y = prev_y;
    }
    ops.reverse();
    Some(ops)
}

/// The side-by-side rows of `left` against `right`: equal lines as [`Row::Same`],
/// and in each run of edits between them, removed and added lines paired in order as
/// [`Row::Changed`], the surplus as [`Row::Removed`] or [`Row::Added`].
pub fn diff(left: &str, right: &str) -> Diff {
    let a: Vec<&str> = left.lines().collect();
    let b: Vec<&str> = right.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out = Diff::default();
    out.rows
        .extend(a[..head].iter().map(|l| Row::Same(l.to_string())));
    let ops = myers(ma, mb, MAX_EDITS).unwrap_or_else(|| {
        out.capped = true;
        // Unaligned: every line of the middle is an edit, paired in order.
        let mut ops = vec![Op::Del; ma.len()];
        ops.extend(vec![Op::Ins; mb.len()]);
        ops
    });
    let (mut i, mut j) = (0, 0);
    let (mut dels, mut inss): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let flush = |out: &mut Diff, dels: &mut Vec<&str>, inss: &mut Vec<&str>| {
        let paired = dels.len().min(inss.len());
        for k in 0..paired {
            out.rows
                .push(Row::Changed(dels[k].to_string(), inss[k].to_string()));
        }
        out.changed += paired;
        out.removed += dels.len() - paired;
        out.added += inss.len() - paired;
        out.rows
            .extend(dels[paired..].iter().map(|l| Row::Removed(l.to_string())));
        out.rows
            .extend(inss[paired..].iter().map(|l| Row::Added(l.to_string())));
        dels.clear();
        inss.clear();
    };
    for op in ops {
        match op {
            Op::Same => {
                flush(&mut out, &mut dels, &mut inss);
                out.rows.push(Row::Same(ma[i].to_string()));
                i += 1;
                j += 1;
            }
            Op::Del => {
                dels.push(ma[i]);
                i += 1;
            }
            Op::Ins => {
                inss.push(mb[j]);
                j += 1;
            }
        }
    }
    flush(&mut out, &mut dels, &mut inss);
    out.rows
        .extend(a[a.len() - tail..].iter().map(|l| Row::Same(l.to_string())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows rebuild both texts: the left from Same/Changed/Removed, the right
    /// from Same/Changed/Added.
    fn sides(d: &Diff) -> (String, String) {
        let (mut l, mut r) = (String::new(), String::new());
        for row in &d.rows {
            match row {
                Row::Same(s) => {
                    l += s;
                    l += "\n";
                    r += s;
                    r += "\n";
                }
                Row::Changed(x, y) => {
                    l += x;
                    l += "\n";
                    r += y;
                    r += "\n";
                }
                Row::Removed(x) => {
                    l += x;
                    l += "\n";
                }
                Row::Added(y) => {
                    r += y;
                    r += "\n";
                }
            }
        }
        (l, r)
    }

    #[test]
    fn equal_texts_have_no_edits() {
        let d = diff("a\nb\nc\n", "a\nb\nc\n");
        assert!(d.identical());
        assert_eq!(d.rows.len(), 3);
        assert!(diff("", "").identical());
    }

    #[test]
    fn an_inserted_level_is_added_and_a_renamed_flag_changed() {
        let left = "domain-0: SMT\n  flags SD_SHARE_PKG_RESOURCES\ndomain-1: MC\ndomain-2: NUMA\n";
        let right =
            "domain-0: SMT\n  flags SD_SHARE_LLC\ndomain-1: CLS\ndomain-2: MC\ndomain-3: NUMA\n";
        let d = diff(left, right);
        assert_eq!(sides(&d), (left.to_string(), right.to_string()));
        assert!(!d.identical());
        assert_eq!(d.rows[0], Row::Same("domain-0: SMT".into()));
        assert!(matches!(&d.rows[1], Row::Changed(a, b) if a.contains("PKG") && b.contains("LLC")));
        // The levels renumber, so nothing after the head is shared: three lines
        // changed, one added.
        assert_eq!((d.changed, d.added, d.removed), (3, 1, 0), "{d:?}");
        assert_eq!(d.rows.iter().filter(|r| r.kind().1 == "+").count(), d.added);
    }

    #[test]
    fn the_script_is_the_shortest() {
        // "abcabba" → "cbabac", Myers' own example: 5 edits (D = 5).
        let a = "a\nb\nc\na\nb\nb\na";
        let b = "c\nb\na\nb\na\nc";
        let la: Vec<&str> = a.lines().collect();
        let lb: Vec<&str> = b.lines().collect();
        let ops = myers(&la, &lb, MAX_EDITS).unwrap();
        assert_eq!(ops.iter().filter(|o| **o != Op::Same).count(), 5);
        let d = diff(a, b);
        assert_eq!(sides(&d), (format!("{a}\n"), format!("{b}\n")));
        assert!(myers(&la, &lb, 4).is_none());
    }

    #[test]
    fn past_the_cap_lines_are_paired_in_order_and_it_says_so() {
        let left: String = (0..3000).map(|i| format!("l{i}\n")).collect();
        let right: String = (0..3000).map(|i| format!("r{i}\n")).collect();
        let d = diff(&left, &right);
        assert!(d.capped);
        assert_eq!(d.changed, 3000);
        assert_eq!(sides(&d), (left, right));
    }

    /// A 4096-CPU-sized text with a few edits diffs quickly (D small, N large).
    #[test]
    fn long_texts_with_few_edits_are_cheap() {
        let left: String = (0..40_000).map(|i| format!("line {i}\n")).collect();
        let right = left.replace("line 20000\n", "line 20000 changed\nline new\n");
        let d = diff(&left, &right);
        assert!(!d.capped);
        assert_eq!((d.changed, d.added, d.removed), (1, 1, 0));
    }
}
