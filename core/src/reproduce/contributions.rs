//! What each mechanism contributes, measured: the same reproduction once with
//! everything on and once per switch (each cost term of [`CostTerms::NAMES`] off in
//! every run, then no background noise), each shown row's change side by side.
//! `schedlab reproduce --contributions` runs them and prints
//! [`Contributions::markdown`], docs/fidelity.md's "What each mechanism contributes —
//! measured now".
//!
//! ```text
//!  Switch::all(): all on │ llc-line off │ rq-lock off │ cache-refill off │ quiet
//!        │ the CLI: one Reproduction each (the same runner, seeds and rounds)
//!        ▼
//!  Contributions::new ──▶ rows shown (|published| ≥ 3%, overload), cells, bold
//!        │
//!        ▼
//!  markdown() │ JSON
//! ```

use serde::Serialize;

use crate::cost::CostTerms;
use crate::workload::Noise;

use super::checks::SIGN_FROM_PCT;
use super::points::points;
use super::render::change_text;
use super::{published, PublishedTable, ReproError, ReproRow, Reproduction, Scale};

/// One column: what every run of its reproduction changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Everything on: the plain `schedlab reproduce`.
    AllOn,
    /// One cost term off, a name of [`CostTerms::NAMES`] (`--cost-off NAME`).
    CostOff(&'static str),
    /// The machine's background activity (`--noise NAME`).
    Noise(Noise),
}

impl Switch {
    /// Everything on first, then each cost term off, then no background noise.
    pub fn all() -> Vec<Switch> {
        std::iter::once(Switch::AllOn)
            .chain(CostTerms::NAMES.iter().map(|&n| Switch::CostOff(n)))
            .chain(std::iter::once(Switch::Noise(Noise::Quiet)))
            .collect()
    }

    /// The cost terms its runs price.
    pub fn cost_terms(self) -> Result<CostTerms, ReproError> {
        match self {
            Switch::CostOff(name) => CostTerms::all_but(name).map_err(ReproError::Setup),
            Switch::AllOn | Switch::Noise(_) => Ok(CostTerms::ALL),
        }
    }

    /// The background activity its runs have.
    pub fn noise(self) -> Noise {
        match self {
            Switch::Noise(n) => n,
            Switch::AllOn | Switch::CostOff(_) => Noise::default(),
        }
    }

    /// The `schedlab reproduce` flag that runs this column alone (none: all on).
    pub fn flag(self) -> String {
        match self {
            Switch::AllOn => String::new(),
            Switch::CostOff(name) => format!("--cost-off {name}"),
            Switch::Noise(n) => format!("--noise {}", n.name()),
        }
    }

    /// The column's heading, in markdown.
    pub fn label(self) -> String {
        match self {
            Switch::AllOn => "all on".into(),
            Switch::CostOff(name) => format!("`{name}` off"),
            Switch::Noise(_) => format!("`{}`", self.flag()),
        }
    }
}

/// How far outside the all-on row's interval a mean must lie to be bold, pp: the
/// intervals print to 0.1 pp, so a mean nearer than half of that would read as inside.
pub const BOLD_MARGIN_PP: f64 = 0.05;

/// The bold rule: `mean` lies outside the all-on row's 95% interval by more than
/// [`BOLD_MARGIN_PP`]. A row without an interval (one seed, or a derived row whose
/// seeds are not paired) is never bold.
pub fn outside_all_on(all_on: Option<(f64, f64)>, mean: f64) -> bool {
    all_on.is_some_and(|(lo, hi)| mean < lo - BOLD_MARGIN_PP || mean > hi + BOLD_MARGIN_PP)
}

/// One column's reproduction.
#[derive(Clone, Debug, Serialize)]
pub struct Column {
    pub label: String,
    /// The flag that runs it alone (empty: all on).
    pub flag: String,
    #[serde(flatten)]
    pub reproduction: Reproduction,
}

/// One row's change in one column.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub change_pct: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub seeds: u32,
    /// [`outside_all_on`] (the bold rule); false in the all-on column.
    pub outside_all_on: bool,
}

/// A shown row, one cell per column.
#[derive(Clone, Debug, Serialize)]
pub struct ContributionRow {
    pub table: String,
    pub key: String,
    pub published_change_pct: Option<f64>,
    pub cells: Vec<Cell>,
}

/// An overload row's absolute number: the model's base kernel, one per column.
#[derive(Clone, Debug, Serialize)]
pub struct OverloadRow {
    pub table: String,
    pub key: String,
    pub published_baseline: Option<f64>,
    pub model_baseline: Vec<f64>,
}

/// Every column's reproduction and the rows the tables show.
#[derive(Clone, Debug, Serialize)]
pub struct Contributions {
    pub scale: Scale,
    /// Which rows are shown, in words.
    pub rows_shown: String,
    pub columns: Vec<Column>,
    pub rows: Vec<ContributionRow>,
    pub overload: Vec<OverloadRow>,
}

/// A table's overload rows: in a Kunpeng throughput table, the rows with at least as
/// many pairs (clients, instances) as the run has CPUs (seed 01's from 32 pairs on
/// node 0's 32 CPUs; docs/fidelity.md, "32-128 pairs: overload").
fn overload_keys(
    name: &str,
    scale: Scale,
    published: &[PublishedTable],
) -> Result<Vec<String>, ReproError> {
    let (t, pts) = points(name, scale, published)?;
    if !t.kunpeng_throughput() {
        return Ok(Vec::new());
    }
    Ok(pts
        .into_iter()
        .filter(|p| p.baseline.workload.threads() >= p.baseline.cpus.weight())
        .map(|p| p.key)
        .collect())
}

impl Contributions {
    /// The tables of `columns` (all on first, then one per switch, as [`Switch::all`]
    /// orders them): every row whose published change is at least 3% in size (the
    /// sign check's rows) and every overload row (a Kunpeng throughput table's rows
    /// with at least as many pairs as CPUs), matched across columns by table and row.
    pub fn new(columns: Vec<(Switch, Reproduction)>) -> Result<Contributions, ReproError> {
        let Some((Switch::AllOn, all_on)) = columns.first() else {
            return Err(ReproError::Setup(
                "the first column must be everything on, the one the others are read against"
                    .into(),
            ));
        };
        let published = published()?;
        let scale = all_on.tables.first().map_or(Scale::Full, |t| t.scale);
        let (mut rows, mut overload) = (Vec::new(), Vec::new());
        for t in &all_on.tables {
            let over = overload_keys(&t.name, t.scale, &published)?;
            for r in &t.rows {
                let is_over = over.contains(&r.key);
                let big = r
                    .published_change_pct
                    .is_some_and(|c| c.abs() >= SIGN_FROM_PCT);
                if !big && !is_over {
                    continue;
                }
                let same = columns
                    .iter()
                    .map(|(s, rep)| {
                        rep.tables
                            .iter()
                            .filter(|x| x.name == t.name)
                            .flat_map(|x| &x.rows)
                            .find(|x| x.key == r.key)
                            .ok_or_else(|| {
                                ReproError::Setup(format!(
                                    "{}: {} {} is missing",
                                    s.label(),
                                    t.name,
                                    r.key
                                ))
                            })
                    })
                    .collect::<Result<Vec<&ReproRow>, ReproError>>()?;
                rows.push(ContributionRow {
                    table: t.name.clone(),
                    key: r.key.clone(),
                    published_change_pct: r.published_change_pct,
                    cells: same
                        .iter()
                        .enumerate()
                        .map(|(i, x)| Cell {
                            change_pct: x.model_change_pct,
                            lo: x.model_change_lo,
                            hi: x.model_change_hi,
                            seeds: x.seeds,
                            outside_all_on: i > 0
                                && outside_all_on(r.interval(), x.model_change_pct),
                        })
                        .collect(),
                });
                if is_over {
                    overload.push(OverloadRow {
                        table: t.name.clone(),
                        key: r.key.clone(),
                        published_baseline: r.published_baseline,
                        model_baseline: same.iter().map(|x| x.model_baseline).collect(),
                    });
                }
            }
        }
        Ok(Contributions {
            scale,
            rows_shown: format!(
                "every row whose published change is at least {SIGN_FROM_PCT}% in size, and \
                 the overload rows (a Kunpeng throughput table's rows with at least as many \
                 pairs as the run has CPUs: seed 01's from 32)"
            ),
            columns: columns
                .into_iter()
                .map(|(s, reproduction)| Column {
                    label: s.label(),
                    flag: s.flag(),
                    reproduction,
                })
                .collect(),
            rows,
            overload,
        })
    }

    /// docs/fidelity.md's tables: each shown row's change per column, the overload
    /// rows' absolute numbers, and each column's check counts and wall time.
    pub fn markdown(&self) -> String {
        let labels = self.columns.iter().map(|c| c.label.clone());
        let flags: Vec<String> = self
            .columns
            .iter()
            .filter(|c| !c.flag.is_empty())
            .map(|c| format!("`{}`", c.flag))
            .collect();
        let mut o = format!(
            "`schedlab reproduce --contributions --scale {}`: the reproduction with everything \
             on, then once per switch with the switch in every run ({}). Rows: {}. Each cell is \
             the model's change with its 95% interval over its seeds; **bold** marks a mean \
             outside the all-on row's interval by more than {BOLD_MARGIN_PP} pp (a row \
             without an interval is never bold).\n\n",
            self.scale.name(),
            flags.join(", "),
            self.rows_shown
        );
        let head = ["table", "row", "published %"].map(String::from);
        o += &md_header(head.into_iter().chain(labels.clone()));
        for r in &self.rows {
            let cells = r.cells.iter().map(|c| {
                let t = minus(&change_text(c.change_pct, c.lo.zip(c.hi)));
                if c.outside_all_on {
                    format!("**{t}**")
                } else {
                    t
                }
            });
            let published = r
                .published_change_pct
                .map_or_else(|| "–".into(), |p| minus(&format!("{p:+.2}")));
            o += &md_line(
                [r.table.clone(), r.key.clone(), published]
                    .into_iter()
                    .chain(cells),
            );
        }
        if !self.overload.is_empty() {
            o += "\nAbsolute throughput of the overload rows (the model's base kernel, per column):\n\n";
            o += &md_header(std::iter::once("row (published baseline)".into()).chain(labels));
            for r in &self.overload {
                let published = r
                    .published_baseline
                    .map_or_else(|| "–".into(), |p| format!("{p:.0}"));
                let row = format!("{} {} ({published})", r.table, r.key);
                let cells = r.model_baseline.iter().map(|v| format!("{v:.0}"));
                o += &md_line(std::iter::once(row).chain(cells));
            }
        }
        let counts: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                let r = &c.reproduction;
                format!(
                    "{} {} ({} runs, {:.1} s wall)",
                    c.label,
                    r.summary.counts_text(),
                    r.runs,
                    r.wall_s
                )
            })
            .collect();
        o += &format!(
            "\nCounts per run (sign, size, magnitude): {}.\n",
            counts.join("; ")
        );
        o
    }
}

/// `−` (U+2212) for a number's minus sign, as docs/fidelity.md's tables print it.
fn minus(number: &str) -> String {
    number.replace('-', "\u{2212}")
}

/// `| a | b |` and its line break.
fn md_line(cells: impl IntoIterator<Item = String>) -> String {
    let cells: Vec<String> = cells.into_iter().collect();
    format!("| {} |\n", cells.join(" | "))
}

/// A table's heading line and the `|---|` line under it.
fn md_header(cells: impl IntoIterator<Item = String>) -> String {
    let cells: Vec<String> = cells.into_iter().collect();
    let n = cells.len();
    md_line(cells) + "|" + &"---|".repeat(n) + "\n"
}

#[cfg(test)]
mod tests {
    use super::super::{summary, ReproTable};
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Each switch is one flag's runs, and no two are the same runs: the cost terms
    /// come from [`CostTerms::NAMES`], each off alone.
    #[test]
    fn every_switch_runs_something_different() {
        let all = Switch::all();
        assert_eq!(all.len(), CostTerms::NAMES.len() + 2);
        assert_eq!(all[0], Switch::AllOn);
        let runs: Vec<(CostTerms, Noise)> = all
            .iter()
            .map(|s| (s.cost_terms().unwrap(), s.noise()))
            .collect();
        for (i, a) in runs.iter().enumerate() {
            for b in &runs[i + 1..] {
                assert_ne!(a, b);
            }
        }
        let labels: Vec<String> = all.iter().map(|s| s.label()).collect();
        assert_eq!(
            labels,
            [
                "all on",
                "`llc-line` off",
                "`rq-lock` off",
                "`cache-refill` off",
                "`tg-line` off",
                "`--noise quiet`"
            ]
        );
        assert!(Switch::CostOff("rq-locks").cost_terms().is_err());
    }

    #[test]
    fn a_mean_is_bold_only_past_the_all_on_interval_by_the_margin() {
        let iv = Some((-1.4, -0.4));
        assert!(!outside_all_on(iv, -0.9));
        assert!(!outside_all_on(iv, -0.4));
        // Past an edge by 0.04 pp: reads as inside at 0.1 pp; by 0.06 pp: bold.
        assert!(!outside_all_on(iv, -0.36));
        assert!(outside_all_on(iv, -0.34));
        assert!(!outside_all_on(iv, -1.44));
        assert!(outside_all_on(iv, -1.46));
        assert!(outside_all_on(iv, 0.20));
        // No interval (the derived row): never bold, however far.
        assert!(!outside_all_on(None, 1e6));
    }

    /// A hand-made row: `mean` and its interval, the published numbers of `key`.
    fn row(key: &str, published: f64, mean: f64, iv: Option<(f64, f64)>) -> ReproRow {
        ReproRow {
            key: key.into(),
            published_baseline: Some(1000.0),
            published_patched: None,
            published_change_pct: Some(published),
            published_change_lo: None,
            published_change_hi: None,
            model_baseline: 2000.0 + mean,
            model_patched: 0.0,
            model_change_pct: mean,
            model_change_lo: iv.map(|i| i.0),
            model_change_hi: iv.map(|i| i.1),
            seeds: 5,
            per_seed: Vec::new(),
            sign_ok: None,
            size_ok: None,
            magnitude_ok: None,
            events: 0,
        }
    }

    fn reproduction(tables: Vec<(&str, Vec<ReproRow>)>) -> Reproduction {
        let tables: Vec<ReproTable> = tables
            .into_iter()
            .map(|(name, rows)| ReproTable {
                name: name.into(),
                title: String::new(),
                source: String::new(),
                unit: String::new(),
                baseline: String::new(),
                patched: String::new(),
                scale: Scale::Full,
                rows,
                note: None,
                seeding: None,
                window: None,
            })
            .collect();
        Reproduction {
            summary: summary(&tables),
            tables,
            runs: 10,
            rounds: 1,
            wall_s: 2.5,
        }
    }

    /// A column whose rows have the changes `tbench` (threads=16, 32, 64), `g8`, `g2`
    /// (seed 02) and `cut` (seed 04's derived row, no interval).
    fn column(tbench: [f64; 3], g8: f64, g2: f64, cut: f64) -> Reproduction {
        let iv = |m: f64| Some((m - 0.5, m + 0.5));
        reproduction(vec![
            (
                "seed01-tbench",
                vec![
                    row("threads=16", 11.53, tbench[0], iv(tbench[0])),
                    row("threads=32", 0.68, tbench[1], iv(tbench[1])),
                    row("threads=64", 0.53, tbench[2], iv(tbench[2])),
                ],
            ),
            (
                "seed02-hackbench",
                vec![row("g=2", -1.53, g2, iv(g2)), row("g=8", 4.10, g8, iv(g8))],
            ),
            (
                "seed04-cookie",
                vec![row("overhead cut by the patch", 61.62, cut, None)],
            ),
        ])
    }

    #[test]
    fn the_tables_show_the_rule_s_rows_and_bold_what_moved() {
        let all_on = column([9.0, 0.0, -0.9], -0.1, 0.0, 63.0);
        // rq-lock off: threads=16 just inside the margin (+0.54 past +9.5), threads=64
        // and g=8 well outside, the derived cut far off (no interval: not bold).
        let off = column([9.54, 0.0, 0.2], -2.2, 5.0, 72.0);
        let c = Contributions::new(vec![
            (Switch::AllOn, all_on.clone()),
            (Switch::CostOff("rq-lock"), off),
        ])
        .unwrap();
        let md = c.markdown();
        let line = |start: &str| {
            md.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no line {start:?} in\n{md}"))
                .to_string()
        };
        assert_eq!(
            line("| seed01-tbench | threads=16 "),
            "| seed01-tbench | threads=16 | +11.53 | +9.00 [+8.5, +9.5] | +9.54 [+9.0, +10.0] |"
        );
        assert_eq!(
            line("| seed01-tbench | threads=64 "),
            "| seed01-tbench | threads=64 | +0.53 | −0.90 [−1.4, −0.4] | **+0.20 [−0.3, +0.7]** |"
        );
        assert_eq!(
            line("| seed02-hackbench | g=8 "),
            "| seed02-hackbench | g=8 | +4.10 | −0.10 [−0.6, +0.4] | **−2.20 [−2.7, −1.7]** |"
        );
        assert_eq!(
            line("| seed04-cookie "),
            "| seed04-cookie | overhead cut by the patch | +61.62 | +63.00 | +72.00 |"
        );
        // Under 3% published and no overload: not shown (g=2 moved 5 pp, threads=32
        // is shown as an overload row).
        assert!(!md.contains("g=2"), "{md}");
        assert_eq!(
            line("| seed01-tbench threads=32 "),
            "| seed01-tbench threads=32 (1000) | 2000 | 2000 |"
        );
        assert_eq!(
            line("| seed01-tbench threads=64 "),
            "| seed01-tbench threads=64 (1000) | 1999 | 2000 |"
        );
        assert!(!md.contains("threads=16 ("), "{md}");
        assert!(
            md.contains("all on 0/0, 0/0, 0/0 (10 runs, 2.5 s wall)"),
            "{md}"
        );
        assert!(md.contains("(`--cost-off rq-lock`)"), "{md}");
        // All on must come first: it is what the others are read against.
        assert!(Contributions::new(vec![(Switch::CostOff("rq-lock"), all_on.clone())]).is_err());
        // A row missing from a column is an error, not a blank cell.
        let short = reproduction(vec![("seed01-tbench", Vec::new())]);
        let e = Contributions::new(vec![
            (Switch::AllOn, all_on),
            (Switch::Noise(Noise::Quiet), short),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("`--noise quiet`: seed01-tbench threads=16 is missing"),
            "{e}"
        );
    }
}
