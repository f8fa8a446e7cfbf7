//! The menu cpuidle governor (drivers/cpuidle/governors/menu.c v6.8), per CPU.
//!
//! ```text
//!   menu_select():  predicted = get_typical_interval()      (last 8 periods, us:
//!                               the mean once the spread is small, dropping the
//!                               largest values down to 6 of 8; else "none")
//!                   predicted > 15 us: next_timer = tick_nohz_get_sleep_length()
//!                               predicted = min(predicted, next_timer × correction)
//!                   else        next_timer = KTIME_MAX, the tick half a period away
//!                   one state, or next_timer under state 1's residency: state 0
//!                   tick stopped: a prediction under a tick becomes next_timer
//!                   else:       exit latency limited to the prediction
//!                   the deepest state within the prediction (POLL only when a
//!                   timer is that close); the tick kept for POLL or a prediction
//!                   under a tick, and then a state within the next tick
//!   menu_update():  measured = 45 ms for a tick wake-up the timer did not foresee,
//!                   else the residency less the exit latency; the bucket's
//!                   correction factor decays by 1/8 towards measured / next_timer
//! ```
//!
//! POLL ends at its time limit ([`cpuidle_poll_time`]) and the governor runs
//! again. What the model does not have: I/O waiters (the second half of the buckets
//! and the performance multiplier are never used), PM QoS latency limits (none is set
//! on a default system), disabled states. The next timer event is the CPU's earliest sleeper's
//! hrtimer, else the softlockup watchdog's per-CPU hrtimer (see
//! [`WATCHDOG_PERIOD_NS`]); RCU's and irq_work's holds on the tick are left out.

use crate::cost::IdleState;

/// `BUCKETS`: six duration buckets, twice (with and without I/O waiters).
const BUCKETS: usize = 12;
/// `INTERVALS` (1 << `INTERVAL_SHIFT`).
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
/// `MAX_INTERESTING`: 50 ms.
const MAX_INTERESTING_NS: u64 = 50_000_000;
/// `RESIDENCY_THRESHOLD_NS` (drivers/cpuidle/governors/gov.h v6.8): 15 us.
const RESIDENCY_THRESHOLD_NS: u64 = 15_000;
/// `KTIME_MAX`.
const KTIME_MAX: u64 = i64::MAX as u64;

/// The softlockup watchdog's hrtimer (kernel/watchdog.c v6.8, `set_sample_period()`:
/// `sample_period = get_softlockup_thresh() * ((u64)NSEC_PER_SEC / 5)` with
/// `watchdog_thresh` = 10, so 2 × 10 / 5 = 4 s; `watchdog_enable()` starts it
/// `HRTIMER_MODE_REL_PINNED_HARD` on every CPU). It is the timer every idle CPU
/// has, so the next timer event is never further away than this. Its phase is taken
/// on the model's time grid (all CPUs at multiples of 4 s: the CPUs' online times
/// are not known), and its firing, one interrupt per CPU per 4 s, is not modelled.
pub(super) const WATCHDOG_PERIOD_NS: u64 = 4_000_000_000;

/// `struct menu_device`.
#[derive(Clone, Debug)]
pub(super) struct MenuDevice {
    /// `data->next_timer_ns`, of the last selection.
    next_timer_ns: u64,
    bucket: u8,
    /// `correction_factor[]`: measured / next_timer per bucket, × RESOLUTION × DECAY.
    correction_factor: [u32; BUCKETS],
    /// `intervals[]`, us.
    pub(super) intervals: [u32; INTERVALS],
    pub(super) interval_ptr: u8,
}

impl MenuDevice {
    /// `menu_enable_device()`: every correction factor at unity. The intervals are
    /// those of a machine that has been up and idle: `initial_us` each (the caller's
    /// assumption; the kernel starts from zeros at boot).
    pub(super) fn new(initial_us: u32) -> MenuDevice {
        MenuDevice {
            next_timer_ns: 0,
            bucket: 0,
            correction_factor: [(RESOLUTION * DECAY) as u32; BUCKETS],
            intervals: [initial_us; INTERVALS],
            interval_ptr: 0,
        }
    }

    /// `get_typical_interval()`, us (`u32::MAX`: no pattern).
    pub(super) fn get_typical_interval(&self) -> u32 {
        // "Discard outliers above this value".
        let mut thresh = i32::MAX as u32;
        loop {
            let (mut min, mut max, mut sum, mut divisor) = (u32::MAX, 0u32, 0u64, 0u64);
            for &value in &self.intervals {
                if value <= thresh {
                    sum += value as u64;
                    divisor += 1;
                    max = max.max(value);
                    min = min.min(value);
                }
            }
            let _ = min;
            if max == 0 {
                return u32::MAX;
            }
            let avg = (sum / divisor) as u32;
            let mut variance = 0u64;
            for &value in &self.intervals {
                if value <= thresh {
                    let diff = value as i64 - avg as i64;
                    variance = variance.wrapping_add((diff * diff) as u64);
                }
            }
            variance /= divisor;
            if variance <= u64::MAX / 36
                && ((avg as u64 * avg as u64 > variance * 36
                    && divisor * 4 >= INTERVALS as u64 * 3)
                    || variance <= 400)
            {
                return avg;
            }
            if divisor * 4 <= INTERVALS as u64 * 3 {
                return u32::MAX;
            }
            thresh = max - 1;
        }
    }

    /// `menu_select()`: the state to enter and whether to stop the tick.
    /// `sleep_length()` is `tick_nohz_get_sleep_length()`: (time to the next timer
    /// event, time to the next tick), called only when the kernel calls it;
    /// `tick_stopped` is `tick_nohz_tick_stopped()`.
    pub(super) fn select(
        &mut self,
        states: &[IdleState],
        tick_ns: u64,
        tick_stopped: bool,
        sleep_length: impl FnOnce() -> (u64, u64),
    ) -> (usize, bool) {
        // No PM QoS request: cpuidle_governor_latency_req() is the default, far above
        // any state's exit latency.
        let mut latency_req = u64::MAX;
        let mut stop_tick = true;
        let mut predicted_ns = self.get_typical_interval() as u64 * 1_000;
        let delta_tick;
        if predicted_ns > RESIDENCY_THRESHOLD_NS {
            let (delta, dt) = sleep_length();
            delta_tick = dt;
            self.next_timer_ns = delta;
            self.bucket = which_bucket(delta);
            // "Round up the result for half microseconds." (`timer_us` is an
            // `unsigned int`.)
            let timer_us = ((RESOLUTION * DECAY * 1_000 / 2
                + delta.wrapping_mul(self.correction_factor[self.bucket as usize] as u64))
                / (RESOLUTION * DECAY * 1_000)) as u32;
            predicted_ns = predicted_ns.min(timer_us as u64 * 1_000);
        } else {
            // "assume that without the tick the closest timer will be in distant
            // future and that the closest tick will occur after 1/2 of the tick
            // period."
            self.next_timer_ns = KTIME_MAX;
            delta_tick = tick_ns / 2;
            self.bucket = which_bucket(KTIME_MAX);
        }
        if states.len() <= 1 || self.next_timer_ns < states[1].target_residency_ns {
            // "state[0] will be used no matter what ... keep the tick running if
            // state[0] is a polling one."
            return (0, !states[0].polling);
        }
        if tick_stopped {
            if predicted_ns < tick_ns {
                predicted_ns = self.next_timer_ns;
            }
        } else {
            // interactivity_req = predicted_ns / performance_multiplier(0).
            latency_req = latency_req.min(predicted_ns);
        }
        let mut idx: Option<usize> = None;
        for (i, s) in states.iter().enumerate() {
            let cur = *idx.get_or_insert(i);
            if s.target_residency_ns > predicted_ns {
                // "Use a physical idle state, not busy polling, unless a timer is
                // going to trigger soon enough."
                if states[cur].polling
                    && s.exit_latency_ns <= latency_req
                    && s.target_residency_ns <= self.next_timer_ns
                {
                    predicted_ns = s.target_residency_ns;
                    idx = Some(i);
                    break;
                }
                if predicted_ns < tick_ns {
                    break;
                }
                if !tick_stopped {
                    predicted_ns = states[cur].target_residency_ns;
                    break;
                }
                if states[cur].target_residency_ns < tick_ns && s.target_residency_ns <= delta_tick
                {
                    return (i, stop_tick);
                }
                return (cur, stop_tick);
            }
            if s.exit_latency_ns > latency_req {
                break;
            }
            idx = Some(i);
        }
        let mut idx = idx.unwrap_or(0);
        // "Don't stop the tick if the selected state is a polling one or if the
        // expected idle duration is shorter than the tick period length."
        if (states[idx].polling || predicted_ns < tick_ns) && !tick_stopped {
            stop_tick = false;
            if idx > 0 && states[idx].target_residency_ns > delta_tick {
                for i in (0..idx).rev() {
                    idx = i;
                    if states[i].target_residency_ns <= delta_tick {
                        break;
                    }
                }
            }
        }
        (idx, stop_tick)
    }

    /// `menu_update()` after a stay of `residency_ns` in `states[last_idx]`;
    /// `tick_wakeup` is `tick_nohz_idle_got_tick()`: the tick ended it;
    /// `poll_time_limit`: POLL's time limit did.
    pub(super) fn update(
        &mut self,
        states: &[IdleState],
        last_idx: usize,
        residency_ns: u64,
        (tick_wakeup, poll_time_limit): (bool, bool),
        tick_ns: u64,
    ) {
        let mut measured_ns = if tick_wakeup && self.next_timer_ns > tick_ns {
            // "assume that the CPU could have been idle long (but not forever)".
            9 * MAX_INTERESTING_NS / 10
        } else if states[last_idx].polling && poll_time_limit {
            // "If a better prediction had been made, the CPU might have been woken
            // up from idle by the next timer."
            self.next_timer_ns
        } else {
            // "Deduct exit latency" (or "assume the state was never reached").
            let exit = states[last_idx].exit_latency_ns;
            if residency_ns > 2 * exit {
                residency_ns - exit
            } else {
                residency_ns / 2
            }
        };
        // "Make sure our coefficients do not exceed unity".
        measured_ns = measured_ns.min(self.next_timer_ns);
        let b = self.bucket as usize;
        let mut new_factor = self.correction_factor[b] as u64;
        new_factor -= new_factor / DECAY;
        if self.next_timer_ns > 0 && measured_ns < MAX_INTERESTING_NS {
            new_factor += RESOLUTION * measured_ns / self.next_timer_ns;
        } else {
            // "we were idle so long that we count it as a perfect prediction".
            new_factor += RESOLUTION;
        }
        self.correction_factor[b] = new_factor as u32;
        // ktime_to_us(); the kernel stores it in an unsigned int.
        let p = self.interval_ptr as usize;
        self.intervals[p] = (measured_ns / 1_000) as u32;
        self.interval_ptr = ((p + 1) % INTERVALS) as u8;
    }
}

/// `cpuidle_poll_time()` (drivers/cpuidle/cpuidle.c v6.8 418-457): POLL's time
/// limit, the target residency of the first state after it of at least
/// `CPUIDLE_POLL_MIN` (10 us), at most `CPUIDLE_POLL_MAX` (a sixteenth of a tick).
/// (`poll_idle()` reads the clock every 200 `cpu_relax()`; the model leaves at the
/// limit itself.)
pub(super) fn cpuidle_poll_time(states: &[IdleState], tick_ns: u64) -> u64 {
    let max = tick_ns / 16;
    states[1..]
        .iter()
        .map(|s| s.target_residency_ns)
        .find(|&r| r >= 10_000)
        .map_or(max, |r| r.min(max))
}

/// `which_bucket()` without I/O waiters.
fn which_bucket(duration_ns: u64) -> u8 {
    match duration_ns {
        d if d < 10_000 => 0,
        d if d < 100_000 => 1,
        d if d < 1_000_000 => 2,
        d if d < 10_000_000 => 3,
        d if d < 100_000_000 => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pollings_limit_is_the_first_state_of_at_least_10_us() {
        assert_eq!(cpuidle_poll_time(&snr(), TICK), 25_000);
        let spr = [
            st("POLL", 0, 0, true),
            st("C1", 1, 1, false),
            st("C1E", 2, 4, false),
            st("C6", 290, 800, false),
        ];
        assert_eq!(cpuidle_poll_time(&spr, TICK), TICK / 16);
    }

    use super::*;

    const TICK: u64 = 4_000_000;

    fn st(name: &'static str, exit_us: u64, res_us: u64, polling: bool) -> IdleState {
        IdleState {
            name,
            exit_latency_ns: exit_us * 1_000,
            target_residency_ns: res_us * 1_000,
            polling,
        }
    }

    /// Jacobsville's table (intel_idle snr_cstates, as cost/ has it).
    fn snr() -> Vec<IdleState> {
        vec![
            st("POLL", 0, 0, true),
            st("C1", 2, 2, false),
            st("C1E", 15, 25, false),
            st("C6", 130, 500, false),
        ]
    }

    fn with(intervals: [u32; 8]) -> MenuDevice {
        let mut m = MenuDevice::new(0);
        m.intervals = intervals;
        m
    }

    #[test]
    fn the_typical_interval_is_the_mean_of_a_tight_history() {
        assert_eq!(with([100; 8]).get_typical_interval(), 100);
        // stddev 3 us, well under 20: the mean.
        assert_eq!(
            with([97, 103, 97, 103, 97, 103, 97, 103]).get_typical_interval(),
            100
        );
        // All zeros (a fresh device): "if (!max) return UINT_MAX".
        assert_eq!(with([0; 8]).get_typical_interval(), u32::MAX);
    }

    #[test]
    fn the_typical_interval_drops_the_largest_values_down_to_six_of_eight() {
        // One 45 ms tick wake-up among short periods: the mean of 8 would be
        // ~5.7 ms; the kernel drops the outlier and keeps the 50 us pattern.
        let m = with([50, 50, 50, 45_000, 50, 50, 50, 50]);
        assert_eq!(m.get_typical_interval(), 50);
        // Two outliers: dropped one max at a time (divisor 7, then 6).
        let m = with([50, 45_000, 50, 45_000, 50, 50, 50, 50]);
        assert_eq!(m.get_typical_interval(), 50);
        // Spread everywhere: after dropping to 6 of 8 still no pattern.
        let m = with([10, 900, 3_000, 45_000, 200, 7_000, 60, 20_000]);
        assert_eq!(m.get_typical_interval(), u32::MAX);
    }

    #[test]
    fn a_short_prediction_keeps_the_tick_and_picks_a_shallow_physical_state() {
        // 10 us typical (≤ 15 us: no timer read), C1 (2 us) fits, C1E (25) does not.
        let mut m = with([10; 8]);
        let called = std::cell::Cell::new(false);
        let (idx, stop) = m.select(&snr(), TICK, false, || {
            called.set(true);
            (TICK, TICK)
        });
        assert!(!called.get(), "no tick_nohz_get_sleep_length() under 15 us");
        assert_eq!((snr()[idx].name, stop), ("C1", false));
    }

    #[test]
    fn a_long_history_and_a_far_timer_stop_the_tick_in_the_deepest_state() {
        let mut m = with([45_000; 8]);
        let (idx, stop) = m.select(&snr(), TICK, false, || (3_000_000_000, TICK));
        assert_eq!((snr()[idx].name, stop), ("C6", true));
    }

    #[test]
    fn a_close_timer_caps_the_prediction() {
        // Long history, but the next timer is 100 us away (a sleeper's hrtimer):
        // predicted = min(45 ms, 100 us × unity) = 100 us → C1E, the tick kept.
        let mut m = with([45_000; 8]);
        let (idx, stop) = m.select(&snr(), TICK, false, || (100_000, TICK));
        assert_eq!((snr()[idx].name, stop), ("C1E", false));
        // Under state 1's residency: state 0, the polling one, the tick kept.
        let (idx, stop) = m.select(&snr(), TICK, false, || (1_000, TICK));
        assert_eq!((snr()[idx].name, stop), ("POLL", false));
    }

    #[test]
    fn poll_is_left_for_a_physical_state_within_the_exit_latency_limit() {
        // Typical 1 us (≤ 15 us: no timer read, next_timer is KTIME_MAX); with the
        // tick running the exit latency is limited to the prediction. EPYC's C1
        // (exit 1 us, residency 2) is within it: taken instead of POLL, with
        // predicted = its residency.
        let amd = [
            st("POLL", 0, 0, true),
            st("C1", 1, 2, false),
            st("C2", 18, 36, false),
        ];
        let mut m = with([1; 8]);
        let (idx, stop) = m.select(&amd, TICK, false, || unreachable!());
        assert_eq!((amd[idx].name, stop), ("C1", false));
        // Jacobsville's C1 exits in 2 us, over the 1 us limit: POLL stays.
        let (idx, stop) = m.select(&snr(), TICK, false, || unreachable!());
        assert_eq!((snr()[idx].name, stop), ("POLL", false));
    }

    #[test]
    fn one_state_stops_the_tick_always() {
        let wfi = [st("WFI", 1, 1, false)];
        let mut m = with([10; 8]);
        assert_eq!(m.select(&wfi, TICK, false, || (TICK, TICK)), (0, true));
    }

    #[test]
    fn a_tick_wake_up_the_timer_did_not_foresee_counts_as_a_long_idle() {
        let mut m = with([50; 8]);
        let _ = m.select(&snr(), TICK, false, || (3_000_000_000, TICK));
        m.update(&snr(), 1, 3_000_000, (true, false), TICK);
        assert_eq!(m.intervals[0], 45_000);
        // Not a tick: the residency less C1's 2 us exit latency.
        m.update(&snr(), 1, 30_000, (false, false), TICK);
        assert_eq!(m.intervals[1], 28);
    }

    #[test]
    fn the_correction_factor_learns_how_early_wake_ups_come() {
        // Every period ends at a tenth of the timer's distance: the bucket's factor
        // decays towards 1/10 and the timer-based prediction follows it.
        let mut m = with([0; 8]);
        for _ in 0..100 {
            let _ = m.select(&snr(), TICK, true, || (1_000_000, TICK));
            // A fresh history returns UINT_MAX: predicted comes from the timer.
            m.intervals = [0; 8];
            m.update(&snr(), 0, 100_000, (false, false), TICK);
            m.intervals = [0; 8];
        }
        // 1 ms is bucket 3 (1-10 ms); the fixed point of f - f/8 + 1024/10.
        let f = m.correction_factor[3] as u64;
        assert!((810..830).contains(&f), "{f}");
    }
}
