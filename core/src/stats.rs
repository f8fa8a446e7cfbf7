//! Means and 95% confidence intervals over a handful of seeds.
//!
//! ```text
//!  per-seed numbers x₁ … xₙ (in seed order) ──▶ mean x̄, sample sd s
//!                                          ──▶ x̄ ± t₀.₉₇₅(n−1) · s / √n   (Student's t)
//! ```
//!
//! A result that depends on one seed is one sample of a noisy process: the seed picks
//! every random draw of the simulator and the workload (start placement, work and
//! sleep draws, tie breaks). Runs with seeds `base, base + 1, …` are independent
//! samples of the same experiment, so their mean and its t-interval say how far the
//! number is from what more seeds would give. Only arithmetic lives here; the runs and
//! their pairing are `experiment`'s.
//!
//! Simplifications: the interval assumes the per-seed numbers are roughly normal (the
//! t-interval is robust to mild skew at these sizes, not to heavy tails), and the
//! quantile table stops at 30 degrees of freedom, above which the normal value 1.96 is
//! used (at df 30 the two differ by 4%).
//!
//! Deterministic: sums run in the order given (callers give seed order), so the same
//! samples give bit-identical results on every target.

use serde::Serialize;

/// Student's t, two-sided 95% (the 0.975 quantile), for 1 … 30 degrees of freedom
/// (standard tables, e.g. NIST/SEMATECH e-Handbook §1.3.6.7.2, to three decimals).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The normal 0.975 quantile, used past the table.
const Z_975: f64 = 1.960;

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (`None` for
/// 0: one sample has no spread).
pub fn t_975(df: u32) -> Option<f64> {
    match df {
        0 => None,
        1..=30 => Some(T_975[df as usize - 1]),
        _ => Some(Z_975),
    }
}

/// A mean over seeds and, from two seeds on, its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// How many samples (seeds).
    pub n: u32,
    pub mean: f64,
    /// The interval's ends; `None` with one sample (no spread to measure) or when a
    /// sample is not finite.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Estimate {
    /// The mean and t-interval of `samples`, in the order given; `None` when empty.
    pub fn of(samples: &[f64]) -> Option<Estimate> {
        let n = u32::try_from(samples.len()).ok().filter(|&n| n > 0)?;
        let mean = samples.iter().sum::<f64>() / f64::from(n);
        let half = t_975(n - 1).filter(|_| mean.is_finite()).map(|t| {
            let ss: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
            let sd = (ss / f64::from(n - 1)).sqrt();
            t * sd / f64::from(n).sqrt()
        });
        Some(Estimate {
            n,
            mean,
            lo: half.map(|h| mean - h),
            hi: half.map(|h| mean + h),
        })
    }

    /// The interval, when there is one.
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.lo.zip(self.hi)
    }

    /// The interval excludes 0: the sign of the mean is significant at 95%. `None` with
    /// no interval (one seed), where nothing can be said.
    pub fn significant(&self) -> Option<bool> {
        self.interval().map(|(lo, hi)| lo > 0.0 || hi < 0.0)
    }

    /// `+x.x % [lo, hi]`, or `+x.x %` without an interval: how a change reads.
    pub fn fmt_pct(&self) -> String {
        match self.interval() {
            Some((lo, hi)) => format!("{:+.1} % [{lo:+.1}, {hi:+.1}]", self.mean),
            None => format!("{:+.1} %", self.mean),
        }
    }
}

/// Fieller's 95% interval of the ratio of two means, `mean(num) / mean(den)`, from
/// paired samples (`num[i]` and `den[i]` from the same seed): the values of ρ for which
/// `mean(num) − ρ·mean(den)` is within Student's t of 0, that is the roots of
///
/// ```text
///  ρ²(D̄² − t²·v_dd) − 2ρ(D̄·N̄ − t²·v_nd) + (N̄² − t²·v_nn) = 0
/// ```
///
/// with `v` the variances and covariance of the two means (sample ones ÷ n), `t` =
/// [`t_975`]`(n − 1)` (Fieller 1954, "Some problems in interval estimation", JRSS B
/// 16(2)). `None` for fewer than two pairs, unequal lengths, a sample that is not
/// finite, or a denominator whose mean is not significantly away from 0 (then the
/// set is unbounded: no interval can be said).
pub fn ratio_interval(num: &[f64], den: &[f64]) -> Option<(f64, f64)> {
    if num.len() != den.len() || num.iter().chain(den).any(|x| !x.is_finite()) {
        return None;
    }
    let n = u32::try_from(num.len()).ok()?;
    let t = t_975(n.checked_sub(1)?)?;
    let nf = f64::from(n);
    let (mn, md) = (num.iter().sum::<f64>() / nf, den.iter().sum::<f64>() / nf);
    let (mut snn, mut sdd, mut snd) = (0.0, 0.0, 0.0);
    for (x, y) in num.iter().zip(den) {
        snn += (x - mn) * (x - mn);
        sdd += (y - md) * (y - md);
        snd += (x - mn) * (y - md);
    }
    // The variances and covariance of the two means: the sample ones ÷ n.
    let k = 1.0 / (nf * (nf - 1.0));
    fieller(
        (mn, md),
        Moments {
            nn: snn * k,
            dd: sdd * k,
            nd: snd * k,
        },
        t,
    )
}

/// The variances of two estimates and their covariance (`nn`: the numerator's, `dd`:
/// the denominator's, `nd`: between them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    pub nn: f64,
    pub dd: f64,
    pub nd: f64,
}

/// Fieller's interval of `num / den` for two estimates `(num, den)` with the variances
/// and covariance `v` and the quantile `t`: the roots of
/// `ρ²(den² − t²·v.dd) − 2ρ(den·num − t²·v.nd) + (num² − t²·v.nn) = 0`. `None` when
/// the denominator is not significantly away from 0 (the set of ratios is unbounded).
pub fn fieller((num, den): (f64, f64), v: Moments, t: f64) -> Option<(f64, f64)> {
    let t2 = t * t;
    let qa = den * den - t2 * v.dd;
    let qb = den * num - t2 * v.nd;
    let qc = num * num - t2 * v.nn;
    // qa <= 0: the denominator's interval reaches 0, and the set of ratios is unbounded.
    if qa <= 0.0 || qa.is_nan() {
        return None;
    }
    let disc = qb * qb - qa * qc;
    // With qa > 0 the discriminant is >= 0 by Cauchy-Schwarz; rounding may make it a
    // hair negative when both samples have no spread.
    let root = disc.max(0.0).sqrt();
    Some(((qb - root) / qa, (qb + root) / qa))
}

/// Runs of one benchmark under several configurations, as a source lists them (seed
/// 04's "Test Results": 3 runs of each): the means, and the variance of each mean from
/// the variance pooled over every configuration, `s² = ΣΣ(x − x̄ᵢ)² / Σ(nᵢ − 1)`, with
/// its degrees of freedom. Pooling assumes the configurations scatter alike (the same
/// test on the same machine); with 3 runs each it gives the quantile 6 degrees of
/// freedom where each configuration alone would have 2 (t = 2.447 against 4.303).
#[derive(Clone, Debug, PartialEq)]
pub struct PooledRuns {
    pub means: Vec<f64>,
    /// `s² / nᵢ` for each configuration.
    pub var_of_mean: Vec<f64>,
    pub df: u32,
}

impl PooledRuns {
    /// `None` when a configuration has no run, a run is not finite, or no
    /// configuration has two runs (no spread to pool).
    pub fn of(configs: &[&[f64]]) -> Option<PooledRuns> {
        if configs.iter().any(|c| c.is_empty())
            || configs
                .iter()
                .flat_map(|c| c.iter())
                .any(|x| !x.is_finite())
        {
            return None;
        }
        let means: Vec<f64> = configs
            .iter()
            .map(|c| c.iter().sum::<f64>() / c.len() as f64)
            .collect();
        let ss: f64 = configs
            .iter()
            .zip(&means)
            .map(|(c, m)| c.iter().map(|x| (x - m) * (x - m)).sum::<f64>())
            .sum();
        let df: usize = configs.iter().map(|c| c.len() - 1).sum();
        let df = u32::try_from(df).ok().filter(|&d| d > 0)?;
        let s2 = ss / f64::from(df);
        let var_of_mean = configs.iter().map(|c| s2 / c.len() as f64).collect();
        Some(PooledRuns {
            means,
            var_of_mean,
            df,
        })
    }

    /// Fieller's 95% interval of `(x̄[a] − x̄[base]) / (x̄[b] − x̄[base])` with `base`
    /// `None`, of `x̄[a] / x̄[b]`: the configurations' means are independent, so the
    /// only covariance is the shared base's variance.
    pub fn ratio_interval(&self, a: usize, b: usize, base: Option<usize>) -> Option<(f64, f64)> {
        let (m, v) = (&self.means, &self.var_of_mean);
        let (mb, vb) = base.map_or((0.0, 0.0), |i| (m[i], v[i]));
        let t = t_975(self.df)?;
        fieller(
            (m[a] - mb, m[b] - mb),
            Moments {
                nn: v[a] + vb,
                dd: v[b] + vb,
                nd: vb,
            },
            t,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// By hand: 2, 4, 6, 8, 10 has mean 6, squared deviations 16+4+0+4+16 = 40, sample
    /// variance 40/4 = 10, sd √10, standard error √10/√5 = √2 = 1.41421356; t(4) =
    /// 2.776, half-width 2.776·√2 = 3.92586; interval [2.07414, 9.92586].
    #[test]
    fn the_t_interval_of_a_small_sample_is_the_hand_computed_one() {
        let e = Estimate::of(&[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert_eq!(e.n, 5);
        assert!(close(e.mean, 6.0));
        let (lo, hi) = e.interval().unwrap();
        let half = 2.776 * 2f64.sqrt();
        assert!(close(lo, 6.0 - half) && close(hi, 6.0 + half), "{lo} {hi}");
        assert!((lo - 2.07414).abs() < 1e-4 && (hi - 9.92586).abs() < 1e-4);
        assert_eq!(e.significant(), Some(true));
        assert_eq!(e.fmt_pct(), "+6.0 % [+2.1, +9.9]");
        // Two samples: 1 and 3, mean 2, sd √2, se 1, t(1) = 12.706.
        let e = Estimate::of(&[1.0, 3.0]).unwrap();
        assert!(close(e.lo.unwrap(), 2.0 - 12.706) && close(e.hi.unwrap(), 2.0 + 12.706));
    }

    #[test]
    fn an_interval_that_straddles_zero_is_no_significant_change() {
        let e = Estimate::of(&[1.5, -0.5, 2.0, -1.0]).unwrap();
        assert!(e.mean > 0.0);
        let (lo, hi) = e.interval().unwrap();
        assert!(lo < 0.0 && hi > 0.0);
        assert_eq!(e.significant(), Some(false));
        // Negative and tight: significant.
        let e = Estimate::of(&[-3.0, -3.1, -2.9]).unwrap();
        assert_eq!(e.significant(), Some(true));
        assert!(e.hi.unwrap() < 0.0);
    }

    #[test]
    fn one_sample_has_no_interval_and_none_has_no_estimate() {
        let e = Estimate::of(&[4.31]).unwrap();
        assert_eq!((e.n, e.mean, e.interval()), (1, 4.31, None));
        assert_eq!(e.significant(), None);
        assert_eq!(e.fmt_pct(), "+4.3 %");
        assert_eq!(Estimate::of(&[]), None);
        let e = Estimate::of(&[1.0, f64::INFINITY]).unwrap();
        assert_eq!(e.interval(), None);
    }

    #[test]
    fn the_quantile_table_ends_in_the_normal_value() {
        assert_eq!(t_975(0), None);
        assert_eq!(t_975(1), Some(12.706));
        assert_eq!(t_975(4), Some(2.776));
        assert_eq!(t_975(30), Some(2.042));
        assert_eq!(t_975(31), Some(1.960));
        assert_eq!(t_975(u32::MAX), Some(1.960));
        // Decreasing towards the normal value.
        for df in 1..31 {
            assert!(t_975(df) > t_975(df + 1), "{df}");
        }
    }

    /// By hand (python): den 1..5 (mean 3), num 0.3, 0.5, 1.1, 1.0, 1.6 (mean 0.9),
    /// ratio 0.3; t(4) = 2.776 gives Fieller's [0.205668, 0.379360]. The interval is
    /// not symmetric about the ratio, as a ratio's is not.
    #[test]
    fn fiellers_interval_of_a_ratio_is_the_hand_computed_one() {
        let den = [1.0, 2.0, 3.0, 4.0, 5.0];
        let num = [0.3, 0.5, 1.1, 1.0, 1.6];
        let (lo, hi) = ratio_interval(&num, &den).unwrap();
        assert!(
            (lo - 0.205_668).abs() < 1e-6 && (hi - 0.379_360).abs() < 1e-6,
            "{lo} {hi}"
        );
        assert!(lo < 0.3 && 0.3 < hi && (0.3 - lo - (hi - 0.3)).abs() > 1e-3);
        // No spread: the interval is the ratio itself.
        let (lo, hi) = ratio_interval(&[2.0, 2.0, 2.0], &[4.0, 4.0, 4.0]).unwrap();
        assert!(close(lo, 0.5) && close(hi, 0.5), "{lo} {hi}");
    }

    /// Seed 04's "Test Results" (3 runs each: no cookie, cookie, cookie + patch), by
    /// hand (python): pooled s² = (0.020505 + 0.071073 + 0.069521) / 6 = 0.026850, each
    /// mean's variance s²/3 = 0.0089499, t(6) = 2.447. The cut 1 − (P̄ − N̄)/(C̄ − N̄) =
    /// 1 − 0.56733/1.47933 = 0.61649 has the ratio's interval [0.179117, 0.575897]
    /// (N̄ shared: covariance 0.0089499), and C̄/N̄ = 1.060223 has [1.046581, 1.074053].
    #[test]
    fn pooled_runs_give_fiellers_interval_of_a_ratio_of_differences() {
        let no = [24.653, 24.454, 24.586];
        let ck = [25.896, 26.256, 25.979];
        let ckp = [25.346, 25.007, 25.042];
        let p = PooledRuns::of(&[&no, &ck, &ckp]).unwrap();
        assert_eq!(p.df, 6);
        assert!((p.var_of_mean[0] - 0.008_949_9).abs() < 1e-7, "{p:?}");
        let (lo, hi) = p.ratio_interval(2, 1, Some(0)).unwrap();
        assert!(
            (lo - 0.179_117).abs() < 1e-6 && (hi - 0.575_897).abs() < 1e-6,
            "{lo} {hi}"
        );
        let (lo, hi) = p.ratio_interval(1, 0, None).unwrap();
        assert!(
            (lo - 1.046_581).abs() < 1e-6 && (hi - 1.074_053).abs() < 1e-6,
            "{lo} {hi}"
        );
        // No spread anywhere: the ratio itself.
        let p = PooledRuns::of(&[&[2.0, 2.0], &[3.0, 3.0]]).unwrap();
        let (lo, hi) = p.ratio_interval(1, 0, None).unwrap();
        assert!(close(lo, 1.5) && close(hi, 1.5), "{lo} {hi}");
        // One run each: nothing to pool; an empty or non-finite configuration.
        assert_eq!(PooledRuns::of(&[&[1.0], &[2.0]]), None);
        assert_eq!(PooledRuns::of(&[&[1.0, 2.0], &[]]), None);
        assert_eq!(PooledRuns::of(&[&[1.0, f64::NAN], &[2.0, 2.1]]), None);
        // A difference that is not significantly away from 0: no interval.
        let p = PooledRuns::of(&[&[10.0, 11.0], &[10.2, 10.9], &[12.0, 12.5]]).unwrap();
        assert_eq!(p.ratio_interval(2, 1, Some(0)), None);
    }

    #[test]
    fn a_ratio_over_a_mean_near_zero_or_too_few_pairs_has_no_interval() {
        // The denominator's own interval straddles 0: every ratio is possible.
        assert_eq!(ratio_interval(&[1.0, 1.2, 0.9], &[-1.0, 1.5, 0.2]), None);
        assert_eq!(ratio_interval(&[1.0], &[2.0]), None);
        assert_eq!(ratio_interval(&[1.0, 2.0], &[2.0]), None);
        assert_eq!(ratio_interval(&[1.0, f64::NAN], &[2.0, 2.0]), None);
    }
}
