//! A reproduced table as text: model and published side by side.

use super::{ReproRow, ReproTable};

/// Four significant digits, so seconds-long and millisecond-long runs both read.
fn sig4(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let digits = x.abs().log10().floor() as i32;
    let prec = (3 - digits).clamp(0, 9) as usize;
    format!("{x:.prec$}")
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("-".to_string(), sig4)
}

/// A change and its 95% interval: `+12.80 [+12.1, +13.5]`, or the mean alone.
pub(super) fn change_text(mean: f64, interval: Option<(f64, f64)>) -> String {
    let m = format!("{mean:+.2}");
    match interval {
        Some((lo, hi)) => format!("{m} [{lo:+.1}, {hi:+.1}]"),
        None => m,
    }
}

fn mark(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "ok",
        Some(false) => "MISS",
        None => "-",
    }
}

impl ReproRow {
    /// The model's change interval, when it has one.
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.model_change_lo.zip(self.model_change_hi)
    }

    /// The sign check failed because the interval includes 0: no significant change.
    pub fn not_significant(&self) -> bool {
        self.sign_ok == Some(false)
            && self
                .interval()
                .is_some_and(|(lo, hi)| lo <= 0.0 && hi >= 0.0)
    }

    /// `+12.80 [+12.1, +13.5]`, or the mean alone without an interval.
    pub(super) fn model_change_text(&self) -> String {
        change_text(self.model_change_pct, self.interval())
    }

    /// The published change, with its interval where the source lists each run.
    fn published_change_text(&self) -> String {
        self.published_change_pct.map_or("-".into(), |c| {
            change_text(c, self.published_change_lo.zip(self.published_change_hi))
        })
    }
}

impl ReproTable {
    /// Model and published side by side, one line per row.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{} [{}]\n  {}\n  source: {}\n  baseline {} vs patched {}; unit {}; change > 0 = patch better\n",
            self.name,
            self.scale.name(),
            self.title,
            self.source,
            self.baseline,
            self.patched,
            self.unit
        );
        // The published column widens when a row has an interval (seed 04).
        let pw = self
            .rows
            .iter()
            .map(|r| r.published_change_text().chars().count())
            .max()
            .unwrap_or(0)
            .max(9);
        out.push_str(&format!(
            "  {:<32} {:>12} {:>12} {:>pw$} | {:>12} {:>12} {:>24} {:>3} | sign size mag\n",
            "row",
            "pub base",
            "pub patch",
            if pw > 9 {
                "pub % [95% interval]"
            } else {
                "pub %"
            },
            "model base",
            "model patch",
            "model % [95% interval]",
            "n"
        ));
        for r in &self.rows {
            out.push_str(&format!(
                "  {:<32} {:>12} {:>12} {:>pw$} | {:>12} {:>12} {:>24} {:>3} | {:<4} {:<4} {:<4}\n",
                r.key,
                fmt_opt(r.published_baseline),
                fmt_opt(r.published_patched),
                r.published_change_text(),
                sig4(r.model_baseline),
                sig4(r.model_patched),
                r.model_change_text(),
                r.seeds,
                if r.not_significant() {
                    "n.s."
                } else {
                    mark(r.sign_ok)
                },
                mark(r.size_ok),
                mark(r.magnitude_ok)
            ));
        }
        if let Some(n) = &self.note {
            out.push_str(&format!("  note: {n}\n"));
        }
        if self.rows.iter().any(|r| r.published_change_lo.is_some()) {
            out.push_str("  published intervals: 95%, Fieller's over the runs the source lists, their variance pooled over the configurations (the checks read the published mean)\n");
        }
        if let Some(w) = &self.window {
            out.push_str(&format!("  model runs: {w}\n"));
        }
        if let Some(s) = &self.seeding {
            out.push_str(&format!("  model seeds: {s}\n"));
        }
        if let Some(r) = self.rows.first() {
            out.push_str(&format!(
                "  model: means over n seeds per side (from seed {}), change = mean of the per-seed changes; n.s. = the interval includes 0\n",
                r.per_seed.first().map_or(1, |s| s.seed)
            ));
        }
        out
    }
}
