//! The checks of a reproduced row against its published one (the module doc of
//! `reproduce` says which and why) and their counts over tables.

use serde::Serialize;

use crate::stats::Estimate;

use super::{ReproRow, ReproTable};

/// Below this size a model change is noise, not a direction.
const MODEL_NOISE_PCT: f64 = 1.0;

/// The sign is checked where the published change is at least this big (%).
pub(super) const SIGN_FROM_PCT: f64 = 3.0;

/// The size check's tolerance: percentage points between the two changes.
const SIZE_PP: f64 = 4.0;

/// A row's change is settled when its 95% interval's half-width is at most this
/// (percentage points): half the size check's tolerance, so the interval is no wider
/// than the band the mean is checked against. Full-scale rows above it take more
/// seeds (`run::more`).
pub const SETTLED_PP: f64 = SIZE_PP / 2.0;

/// The change's interval is at most ±[`SETTLED_PP`] wide. No interval (one seed, or a
/// sample that is not finite) is not settled.
pub(super) fn settled(change: &Estimate) -> bool {
    change
        .interval()
        .is_some_and(|(lo, hi)| (hi - lo) / 2.0 <= SETTLED_PP)
}

/// The sign check: applies where the published change is at least 3% in size. With
/// an interval, it must exclude 0 on the published side (one that includes 0 is no
/// significant change: a miss); without one (one seed), the mean must move the same
/// way by at least [`MODEL_NOISE_PCT`].
pub(super) fn sign_check(published: Option<f64>, model: &Estimate) -> Option<bool> {
    published
        .filter(|c| c.abs() >= SIGN_FROM_PCT)
        .map(|c| match model.interval() {
            Some((lo, _)) if c > 0.0 => lo > 0.0,
            Some((_, hi)) => hi < 0.0,
            None => c.signum() == model.mean.signum() && model.mean.abs() >= MODEL_NOISE_PCT,
        })
}

/// The sign check of a row derived from means (no interval, whatever the seeds): the
/// model's change must be non-zero and point the published way.
pub(super) fn sign_check_of_means(published: Option<f64>, model: f64) -> Option<bool> {
    published
        .filter(|c| c.abs() >= SIGN_FROM_PCT)
        .map(|c| c.signum() == model.signum() && model != 0.0)
}

/// The size check: the model's change within [`SIZE_PP`] points of the published one.
pub(super) fn size_check(published: Option<f64>, model: f64) -> Option<bool> {
    published.map(|c| (c - model).abs() <= SIZE_PP)
}

/// The magnitude check (the Kunpeng throughput tables): the model's baseline within
/// 10x of the published one, either way.
pub(super) fn magnitude_check(published: Option<f64>, model: f64) -> Option<bool> {
    published.map(|pb| {
        let r = model / pb;
        r.is_finite() && (0.1..=10.0).contains(&r)
    })
}

impl ReproRow {
    /// Every applicable check passes.
    pub fn matches(&self) -> bool {
        self.sign_ok != Some(false)
            && self.size_ok != Some(false)
            && self.magnitude_ok != Some(false)
    }
}

/// The checks' counts over several tables: how many of each applied, and passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub sign_ok: usize,
    pub sign_checked: usize,
    pub size_ok: usize,
    pub size_checked: usize,
    pub magnitude_ok: usize,
    pub magnitude_checked: usize,
}

impl Summary {
    /// `11/15, 15/25, 14/14`: sign, size, magnitude passed of applied.
    pub fn counts_text(&self) -> String {
        format!(
            "{}/{}, {}/{}, {}/{}",
            self.sign_ok,
            self.sign_checked,
            self.size_ok,
            self.size_checked,
            self.magnitude_ok,
            self.magnitude_checked
        )
    }
}

/// The checks' counts over several tables.
pub fn summary(tables: &[ReproTable]) -> Summary {
    let mut s = Summary::default();
    for r in tables.iter().flat_map(|t| &t.rows) {
        for (ok, checked, c) in [
            (&mut s.sign_ok, &mut s.sign_checked, r.sign_ok),
            (&mut s.size_ok, &mut s.size_checked, r.size_ok),
            (
                &mut s.magnitude_ok,
                &mut s.magnitude_checked,
                r.magnitude_ok,
            ),
        ] {
            if let Some(pass) = c {
                *checked += 1;
                *ok += usize::from(pass);
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn est(samples: &[f64]) -> Estimate {
        Estimate::of(samples).expect("samples")
    }

    #[test]
    fn the_sign_check_asks_the_interval_to_exclude_zero_on_the_published_side() {
        let up = est(&[5.0, 6.0, 7.0]); // [3.5, 8.5]
        let down = est(&[-5.0, -6.0, -7.0]);
        let straddles = est(&[-1.0, 4.0, 6.0]); // mean +3, interval includes 0
        assert!(straddles.lo.unwrap() < 0.0 && straddles.hi.unwrap() > 0.0);
        assert_eq!(sign_check(Some(10.0), &up), Some(true));
        assert_eq!(sign_check(Some(-10.0), &up), Some(false));
        assert_eq!(sign_check(Some(-3.0), &down), Some(true));
        assert_eq!(sign_check(Some(10.0), &down), Some(false));
        // The mean points the right way, but the interval includes 0: a miss.
        assert_eq!(sign_check(Some(10.0), &straddles), Some(false));
        // Under 3% published: not checked, interval or not.
        assert_eq!(sign_check(Some(2.9), &down), None);
        assert_eq!(sign_check(None, &up), None);
        // One seed: today's rule, the mean must move 1% the same way.
        assert_eq!(sign_check(Some(5.0), &est(&[1.5])), Some(true));
        assert_eq!(sign_check(Some(5.0), &est(&[0.5])), Some(false));
        assert_eq!(sign_check(Some(5.0), &est(&[-1.5])), Some(false));
    }

    #[test]
    fn a_miss_whose_interval_includes_zero_reads_n_s() {
        let row = |c: &[f64], published: f64| {
            let e = est(c);
            ReproRow {
                key: "k".into(),
                published_baseline: None,
                published_patched: None,
                published_change_pct: Some(published),
                published_change_lo: None,
                published_change_hi: None,
                model_baseline: 1.0,
                model_patched: 1.0,
                model_change_pct: e.mean,
                model_change_lo: e.lo,
                model_change_hi: e.hi,
                seeds: e.n,
                per_seed: Vec::new(),
                sign_ok: sign_check(Some(published), &e),
                size_ok: None,
                magnitude_ok: None,
                events: 0,
            }
        };
        let ns = row(&[-1.0, 4.0, 6.0], 8.0);
        assert!(ns.not_significant() && !ns.matches());
        assert!(
            ns.model_change_text().starts_with("+3.00 ["),
            "{}",
            ns.model_change_text()
        );
        let wrong = row(&[-5.0, -6.0, -7.0], 8.0);
        assert!(!wrong.not_significant() && !wrong.matches());
        let right = row(&[5.0, 6.0, 7.0], 8.0);
        assert!(!right.not_significant() && right.matches());
    }

    #[test]
    fn size_magnitude_and_derived_sign_checks_keep_their_bounds() {
        assert_eq!(size_check(Some(10.0), 6.0), Some(true));
        assert_eq!(size_check(Some(10.0), 5.9), Some(false));
        assert_eq!(size_check(None, 5.9), None);
        assert_eq!(magnitude_check(Some(100.0), 10.0), Some(true));
        assert_eq!(magnitude_check(Some(100.0), 1000.0), Some(true));
        assert_eq!(magnitude_check(Some(100.0), 9.9), Some(false));
        assert_eq!(magnitude_check(Some(0.0), 1.0), Some(false));
        assert_eq!(magnitude_check(None, 1.0), None);
        assert_eq!(sign_check_of_means(Some(5.0), 0.1), Some(true));
        assert_eq!(sign_check_of_means(Some(5.0), 0.0), Some(false));
        assert_eq!(sign_check_of_means(Some(-5.0), 0.1), Some(false));
        assert_eq!(sign_check_of_means(Some(2.0), -9.0), None);
    }
}
