//! What the simulator measures.
//!
//! Memory is bounded: histograms have fixed buckets, the throughput series has at most
//! `MAX_SERIES` points (the sampling interval widens for long runs), per-CPU arrays
//! are sized by the machine.

use serde::{Deserialize, Serialize};

use crate::cost::Distance;

/// Upper bound on throughput-series points.
pub(crate) const MAX_SERIES: usize = 2048;

/// A log-linear histogram of non-negative integers (16 linear sub-buckets per power
/// of two: relative error under 6.25%), fixed size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    max: u64,
}

const SUB: u32 = 16;
const N_BUCKETS: usize = (64 - 3) * SUB as usize;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; N_BUCKETS],
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl Histogram {
    #[inline]
    fn index(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros(); // >= 4
        let sub = (v >> (e - 4)) & (SUB as u64 - 1);
        ((e - 3) * SUB) as usize + sub as usize
    }

    /// The smallest value of bucket `i`.
    fn lower(i: usize) -> u64 {
        if i < SUB as usize {
            return i as u64;
        }
        let e = (i / SUB as usize) as u32 + 3;
        let sub = (i % SUB as usize) as u64;
        (1u64 << e) | (sub << (e - 4))
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.buckets[Self::index(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            (self.sum / self.count as u128) as u64
        }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` (0..=1), as the lower bound of its bucket.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &b) in self.buckets.iter().enumerate() {
            seen += b;
            if seen >= rank {
                return Self::lower(i).min(self.max);
            }
        }
        self.max
    }

    pub fn summary(&self) -> HistSummary {
        HistSummary {
            count: self.count,
            mean: self.mean(),
            p50: self.quantile(0.50),
            p90: self.quantile(0.90),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: self.max,
        }
    }

    pub fn fold_into(&self, h: &mut u64) {
        for &b in &self.buckets {
            *h = fnv(*h, b);
        }
        *h = fnv(*h, self.count);
        *h = fnv(*h, self.max);
    }
}

/// Percentiles of a histogram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistSummary {
    pub count: u64,
    pub mean: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// FNV-1a over a u64, for digests.
#[inline]
pub(crate) fn fnv(mut h: u64, v: u64) -> u64 {
    for b in v.to_le_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Counters of one run, reset at the end of the warm-up.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// Counted units (transactions, operations) in the measured window.
    pub units: u64,
    /// Units per sampling interval.
    pub series: Vec<u64>,
    pub series_interval_ns: u64,
    /// Wake-ups by distance between the waker's CPU (or, for timer wake-ups, the
    /// task's previous CPU) and the chosen CPU; index = [`Distance`].
    pub placement: [u64; 6],
    /// From the wake-up call to the wakee running, ns.
    pub wake_latency: Histogram,
    /// Same, restricted to the plan's latency tasks (schbench workers).
    pub task_wake_latency: Histogram,
    pub cpus_probed: Histogram,
    pub wakeups: u64,
    pub wake_local: u64,
    pub wake_ipi: u64,
    /// Wakelist wake-ups without IPI (target polling).
    pub wake_polling: u64,
    pub wake_remote_lock: u64,
    pub lock_wait: Histogram,
    /// Runqueue locks the balancer took (`sim/balance/locks.rs`) and their summed
    /// wait, ns.
    pub lb_lock_takes: u64,
    pub lb_lock_wait_ns: u64,
    /// sd_llc_shared line reads that missed.
    pub llc_line_misses: u64,
    pub llc_line_reads: u64,
    /// The workload task group's `tg->load_avg` line (`sim/tg_load.rs`): reads,
    /// writes, the accesses of either that moved the line, and their summed ns.
    pub tg_line_reads: u64,
    pub tg_line_writes: u64,
    pub tg_line_misses: u64,
    pub tg_line_ns: u64,
    pub force_idle_ns: u64,
    pub busy_ns: Vec<u64>,
    pub migrations_wakeup: u64,
    pub migrations_balance: u64,
    /// Of `migrations_balance`: tasks a forced-idle CPU stole (`sched_core_balance()`).
    pub core_steals: u64,
    /// Of `migrations_balance`: running tasks pushed by active balancing
    /// (`active_load_balance_cpu_stop()`).
    pub active_balances: u64,
    pub context_switches: u64,
    pub preemptions: u64,
    /// `newidle_balance()` passes that balanced and pulled nothing (the CPU spends
    /// their run time in `schedule()` before idle), their total run time (to their
    /// end, or where a task queued meanwhile cut them), and how many were cut short.
    pub newidle_empty: u64,
    pub newidle_empty_ns: u64,
    pub newidle_cut: u64,
    /// Wake-ups of a task still `p->on_cpu` (its CPU in that pass or in the switch
    /// away from it), queued back there without `select_task_rq()`.
    pub wake_on_cpu: u64,
    /// Wake-ups of a task still `p->on_cpu` that the wake list refused: the waker
    /// spun until the switch ended (`smp_cond_load_acquire()`), and the total spin.
    pub wake_on_cpu_spin: u64,
    pub wake_on_cpu_spin_ns: u64,
    /// v6.12's delayed dequeue (`sim/delayed.rs`): blocks that left the task queued
    /// (`set_delayed()`), and wake-ups that requeued such a task on its CPU
    /// (`ttwu_runnable()`, no CPU selection; counted in `wakeups` too).
    pub delayed_dequeues: u64,
    pub wake_delayed: u64,
    /// Start of the measured window.
    pub window_start_ns: u64,
}

impl Metrics {
    pub fn new(n_cpus: usize, series_interval_ns: u64) -> Metrics {
        Metrics {
            units: 0,
            series: Vec::new(),
            series_interval_ns,
            placement: [0; 6],
            wake_latency: Histogram::default(),
            task_wake_latency: Histogram::default(),
            cpus_probed: Histogram::default(),
            wakeups: 0,
            wake_local: 0,
            wake_ipi: 0,
            wake_polling: 0,
            wake_remote_lock: 0,
            lock_wait: Histogram::default(),
            lb_lock_takes: 0,
            lb_lock_wait_ns: 0,
            llc_line_misses: 0,
            llc_line_reads: 0,
            tg_line_reads: 0,
            tg_line_writes: 0,
            tg_line_misses: 0,
            tg_line_ns: 0,
            force_idle_ns: 0,
            busy_ns: vec![0; n_cpus],
            migrations_wakeup: 0,
            migrations_balance: 0,
            core_steals: 0,
            active_balances: 0,
            context_switches: 0,
            preemptions: 0,
            newidle_empty: 0,
            newidle_empty_ns: 0,
            newidle_cut: 0,
            wake_on_cpu: 0,
            wake_on_cpu_spin: 0,
            wake_on_cpu_spin_ns: 0,
            delayed_dequeues: 0,
            wake_delayed: 0,
            window_start_ns: 0,
        }
    }

    /// Starts the measured window at `now_ns`, forgetting the warm-up.
    pub fn reset(&mut self, now_ns: u64) {
        let n = self.busy_ns.len();
        let iv = self.series_interval_ns;
        *self = Metrics::new(n, iv);
        self.window_start_ns = now_ns;
    }

    pub fn digest(&self) -> u64 {
        let mut h = FNV_OFFSET;
        for v in [
            self.units,
            self.wakeups,
            self.wake_local,
            self.wake_ipi,
            self.wake_polling,
            self.wake_remote_lock,
            self.llc_line_misses,
            self.llc_line_reads,
            self.tg_line_reads,
            self.tg_line_writes,
            self.tg_line_misses,
            self.tg_line_ns,
            self.force_idle_ns,
            self.migrations_wakeup,
            self.migrations_balance,
            self.context_switches,
            self.preemptions,
        ] {
            h = fnv(h, v);
        }
        // Only core scheduling steals; runs without cookies keep their digests.
        if self.core_steals != 0 {
            h = fnv(h, self.core_steals);
        }
        if self.active_balances != 0 {
            h = fnv(h, self.active_balances);
        }
        for &v in self
            .placement
            .iter()
            .chain(&self.series)
            .chain(&self.busy_ns)
        {
            h = fnv(h, v);
        }
        self.wake_latency.fold_into(&mut h);
        self.cpus_probed.fold_into(&mut h);
        self.lock_wait.fold_into(&mut h);
        h
    }
}

/// A serialisable summary of [`Metrics`] (read back by the page, whose workers send it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsReport {
    pub window_ns: u64,
    pub units: u64,
    pub series_interval_ns: u64,
    /// Units per second in each interval.
    pub series_per_s: Vec<u64>,
    pub placement: Vec<(String, u64)>,
    pub wake_latency_ns: HistSummary,
    pub task_wake_latency_ns: HistSummary,
    pub cpus_probed: HistSummary,
    pub cpus_probed_mean_x100: u64,
    pub wakeups: u64,
    pub wake_local: u64,
    pub wake_ipi: u64,
    pub wake_polling: u64,
    pub wake_remote_lock: u64,
    pub lock_wait_ns: HistSummary,
    /// Runqueue locks the balancer took and their summed wait, ns.
    #[serde(default)]
    pub lb_lock_takes: u64,
    #[serde(default)]
    pub lb_lock_wait_ns: u64,
    pub llc_line_reads: u64,
    pub llc_line_misses: u64,
    /// The task group's `tg->load_avg` line: reads, writes, accesses that moved it,
    /// their summed ns (`sim/tg_load.rs`).
    #[serde(default)]
    pub tg_line_reads: u64,
    #[serde(default)]
    pub tg_line_writes: u64,
    #[serde(default)]
    pub tg_line_misses: u64,
    #[serde(default)]
    pub tg_line_ns: u64,
    pub force_idle_ns: u64,
    /// Per-CPU busy share of the window, in per mille; only CPUs of the run's mask.
    pub utilisation_permille: Vec<(u32, u64)>,
    pub migrations_wakeup: u64,
    pub migrations_balance: u64,
    /// Of `migrations_balance`: tasks a forced-idle CPU stole (`sched_core_balance()`).
    pub core_steals: u64,
    /// Of `migrations_balance`: running tasks pushed by active balancing.
    pub active_balances: u64,
    pub context_switches: u64,
    pub preemptions: u64,
    /// Newidle passes that pulled nothing, their run time, those cut short.
    #[serde(default)]
    pub newidle_empty: u64,
    #[serde(default)]
    pub newidle_empty_ns: u64,
    #[serde(default)]
    pub newidle_cut: u64,
    /// Wake-ups of a task still `on_cpu`, queued back on its CPU.
    #[serde(default)]
    pub wake_on_cpu: u64,
    /// Wake-ups of a task still `on_cpu` whose waker spun until its switch ended,
    /// and the total spin.
    #[serde(default)]
    pub wake_on_cpu_spin: u64,
    #[serde(default)]
    pub wake_on_cpu_spin_ns: u64,
    /// v6.12's delayed dequeues, and the wake-ups that requeued a delayed task.
    #[serde(default)]
    pub delayed_dequeues: u64,
    #[serde(default)]
    pub wake_delayed: u64,
}

impl Metrics {
    pub fn report(&self, now_ns: u64, cpus: &[u32]) -> MetricsReport {
        let window = now_ns.saturating_sub(self.window_start_ns).max(1);
        let probes_mean_x100 = if self.cpus_probed.count() == 0 {
            0
        } else {
            (self.cpus_probed.sum * 100 / self.cpus_probed.count() as u128) as u64
        };
        MetricsReport {
            window_ns: window,
            units: self.units,
            series_interval_ns: self.series_interval_ns,
            series_per_s: self
                .series
                .iter()
                .map(|&u| u * 1_000_000_000 / self.series_interval_ns.max(1))
                .collect(),
            placement: Distance::ALL
                .iter()
                .map(|d| (d.name().to_string(), self.placement[*d as usize]))
                .collect(),
            wake_latency_ns: self.wake_latency.summary(),
            task_wake_latency_ns: self.task_wake_latency.summary(),
            cpus_probed: self.cpus_probed.summary(),
            cpus_probed_mean_x100: probes_mean_x100,
            wakeups: self.wakeups,
            wake_local: self.wake_local,
            wake_ipi: self.wake_ipi,
            wake_polling: self.wake_polling,
            wake_remote_lock: self.wake_remote_lock,
            lock_wait_ns: self.lock_wait.summary(),
            lb_lock_takes: self.lb_lock_takes,
            lb_lock_wait_ns: self.lb_lock_wait_ns,
            llc_line_reads: self.llc_line_reads,
            llc_line_misses: self.llc_line_misses,
            tg_line_reads: self.tg_line_reads,
            tg_line_writes: self.tg_line_writes,
            tg_line_misses: self.tg_line_misses,
            tg_line_ns: self.tg_line_ns,
            force_idle_ns: self.force_idle_ns,
            utilisation_permille: cpus
                .iter()
                .map(|&c| (c, self.busy_ns[c as usize].min(window) * 1000 / window))
                .collect(),
            migrations_wakeup: self.migrations_wakeup,
            migrations_balance: self.migrations_balance,
            core_steals: self.core_steals,
            active_balances: self.active_balances,
            context_switches: self.context_switches,
            preemptions: self.preemptions,
            newidle_empty: self.newidle_empty,
            newidle_empty_ns: self.newidle_empty_ns,
            newidle_cut: self.newidle_cut,
            wake_on_cpu: self.wake_on_cpu,
            wake_on_cpu_spin: self.wake_on_cpu_spin,
            wake_on_cpu_spin_ns: self.wake_on_cpu_spin_ns,
            delayed_dequeues: self.delayed_dequeues,
            wake_delayed: self.wake_delayed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn histogram_quantiles_are_close() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let p50 = h.quantile(0.5);
        assert!((4700..=5000).contains(&p50), "{p50}");
        let p99 = h.quantile(0.99);
        assert!((9300..=9900).contains(&p99), "{p99}");
        assert_eq!(h.max(), 10_000);
        assert_eq!(
            h.quantile(1.0),
            Histogram::lower(Histogram::index(10_000)).min(10_000)
        );
    }

    #[test]
    fn bucket_bounds_are_consistent() {
        for v in [0u64, 1, 15, 16, 17, 31, 32, 1000, 1 << 40, u64::MAX] {
            let i = Histogram::index(v);
            assert!(Histogram::lower(i) <= v, "{v}");
            if i + 1 < N_BUCKETS {
                assert!(Histogram::lower(i + 1) > v, "{v}");
            }
        }
    }
}
