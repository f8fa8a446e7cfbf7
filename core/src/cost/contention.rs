//! Contended state the simulator owns and this module prices: runqueue locks
//! ([`RqLock`]), the shared cache lines (`SharedLines`, in `lines.rs`), and the cache
//! footprint tasks displace from each other on a shared CPU ([`CacheShare`]). Each is one
//! switchable term of [`CostTerms`], so that its contribution can be measured by
//! turning it off.
//!
//! ```text
//!  RqLock       FIFO holders; each holder first pulls the rq lines (lock word, rq,
//!               cfs_rq) from the previous holder's cache: rq_lines × c2c(prev, me)
//!  SharedLines  (lines.rs) the sd_llc_shared and tg->load_avg lines; a stale read or
//!               a non-owner write moves a line, one transfer at a time
//!  CacheShare   tasks whose last CPU is c share c's caches; a task resuming after
//!               others ran refills what they displaced, level by level
//! ```
//!
//! Simplifications: the lock is FIFO (a qspinlock's MCS queue is; its pending-bit
//! fast path is not modelled); a lock's lines move as one group; the cache share
//! assumes random replacement over the resident tasks' footprints (the fraction of a
//! task's data still cached is the level's capacity over their sum), does not age with
//! time, and charges nothing on a migration (the wake-up's cache-distance cost,
//! `wake_data_ns`, prices the data a migrated wakee finds remote).

use serde::Serialize;

use super::CostModel;
use crate::cpumask::CpuId;

/// The switchable cost terms. All on by default; a term switched off costs nothing
/// (the mechanism's bookkeeping still runs, so only its price changes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CostTerms {
    /// `sd_llc_shared` line transfers (`SharedLines`).
    pub llc_line: bool,
    /// Runqueue-lock queueing and the rq lines each holder pulls over (`RqLock`).
    pub rq_lock: bool,
    /// Cache refill after other tasks displaced a task's data (`CacheShare`).
    pub cache_refill: bool,
    /// The workload's task group's `tg->load_avg` line (`SharedLines`, one line;
    /// `sim/tg_load.rs`).
    pub tg_line: bool,
}

impl Default for CostTerms {
    fn default() -> Self {
        CostTerms::ALL
    }
}

impl CostTerms {
    pub const ALL: CostTerms = CostTerms {
        llc_line: true,
        rq_lock: true,
        cache_refill: true,
        tg_line: true,
    };
    /// The names `--cost-off` takes.
    pub const NAMES: [&'static str; 4] = ["llc-line", "rq-lock", "cache-refill", "tg-line"];

    /// Every term on except those named in `off` (comma-separated [`CostTerms::NAMES`];
    /// empty: none off).
    pub fn all_but(off: &str) -> Result<CostTerms, String> {
        let mut t = CostTerms::ALL;
        for name in off.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "llc-line" => t.llc_line = false,
                "rq-lock" => t.rq_lock = false,
                "cache-refill" => t.cache_refill = false,
                "tg-line" => t.tg_line = false,
                _ => {
                    return Err(format!(
                        "unknown cost term {name:?}; known: {}",
                        CostTerms::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(t)
    }
}

/// A runqueue lock (`rq->__lock`) as the model sees it: taken in FIFO order; a holder
/// keeps it for its work plus the time to pull the rq's hot lines (the lock word, `rq`,
/// `rq->cfs`) from the cache of whoever held it last. Uncontended, the owner CPU holds
/// them and pays nothing; a remote waker pays `rq_lines` transfers, and so does the
/// owner's next `schedule()` to pull them back. Under contention (several remote
/// wakers in a row, `ttwu_queue()` → `rq_lock()` when `ttwu_queue_cond()` says no), each
/// pulls them from the previous waker, and all of it lengthens the hold the queue
/// waits behind. The wakelist path (`sched_ttwu_pending()`) has the owner take its
/// own lock: the lines stay put.
///
/// Takers come in the simulator's call order, but a balancing pass books its locks
/// where its clock has got to, ahead of `now` (`sim/balance/locks.rs`). Such a
/// booking leaves the lock free before it: the lock keeps the last free interval
/// (the gap before the latest booking that started after the queue had drained), and
/// a taker whose hold fits in it takes the lock there, without waiting behind the
/// booking or moving it; any other queues after the last holder, as before. A zero
/// hold (the owner's retake of its own lock, its lines local) books nothing: it
/// waits for a holder, if any, and leaves the lock free.
///
/// ```text
///   ...holder][      gap      ][booking]        free_at
///             gap_from   gap_to          ^
///   a taker at `at`: [at, at+hold) fits in the gap → no wait, the gap shrinks;
///                    else → after free_at (FIFO)
/// ```
///
/// Simplifications: one gap (an earlier one is forgotten when a later booking opens a
/// new one); a taker in the gap pulls the lines from the holder before the gap and
/// the booking's hold, priced when it was booked, is not repriced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RqLock {
    /// When the last queued holder lets go, ns of simulated time.
    free_at_ns: u64,
    /// The CPU whose cache holds the rq lines: the last holder.
    last_holder: CpuId,
    /// The free interval before the latest future booking, [gap_from, gap_to) ns
    /// (empty when gap_from >= gap_to).
    gap_from_ns: u64,
    gap_to_ns: u64,
    /// The holder whose cache has the rq lines at `gap_from_ns`.
    gap_holder: CpuId,
    /// Where the latest `acquire()` booked its hold ([`RqLock::extend_last`]).
    booked: Booked,
}

/// Where [`RqLock::acquire`] booked the latest hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Booked {
    /// Nothing (a zero hold, or the `rq_lock` term off).
    Nothing,
    /// At the end of the queue: it ends at `free_at_ns`.
    Queue,
    /// In the gap before a future booking: it ends at `gap_from_ns`.
    Gap,
}

impl RqLock {
    /// The lock of `owner`'s runqueue, its lines in `owner`'s cache.
    pub fn new(owner: CpuId) -> RqLock {
        RqLock {
            free_at_ns: 0,
            last_holder: owner,
            gap_from_ns: 0,
            gap_to_ns: 0,
            gap_holder: owner,
            booked: Booked::Nothing,
        }
    }

    /// `cpu` takes the lock at `at_ns` for `work_ns`: in the gap before a future
    /// booking if its hold fits there, else behind whoever holds or waits for it;
    /// then it pulls the rq lines from the last holder. Returns (wait, hold); the
    /// hold includes the line transfers. With [`CostTerms::rq_lock`] off, no wait
    /// and no transfers: the hold is `work_ns`.
    #[inline]
    pub fn acquire(
        &mut self,
        cost: &CostModel,
        cpu: CpuId,
        at_ns: u64,
        work_ns: u64,
    ) -> (u64, u64) {
        self.booked = Booked::Nothing;
        if !cost.params.terms.rq_lock {
            self.last_holder = cpu;
            return (0, work_ns);
        }
        let lines = |prev: CpuId| {
            if prev == cpu {
                0
            } else {
                cost.params.rq_lines * cost.c2c_ns(prev, cpu)
            }
        };
        // In the gap before the latest booking, if the hold fits there.
        let start = at_ns.max(self.gap_from_ns);
        if start < self.gap_to_ns {
            let hold = work_ns + lines(self.gap_holder);
            if start + hold <= self.gap_to_ns {
                if hold > 0 {
                    self.gap_holder = cpu;
                    self.gap_from_ns = start + hold;
                    self.booked = Booked::Gap;
                }
                return (start - at_ns, hold);
            }
        }
        let hold = work_ns + lines(self.last_holder);
        if hold == 0 {
            // Own lines, no work: wait for the holders, book nothing.
            return (self.free_at_ns.saturating_sub(at_ns), 0);
        }
        if at_ns > self.free_at_ns {
            // A booking ahead of the queue: the lock is free until then.
            self.gap_from_ns = self.free_at_ns;
            self.gap_to_ns = at_ns;
            self.gap_holder = self.last_holder;
        }
        self.last_holder = cpu;
        let start = self.free_at_ns.max(at_ns);
        self.free_at_ns = start.saturating_add(hold);
        self.booked = Booked::Queue;
        (start - at_ns, hold)
    }

    /// Lengthens the hold the latest [`RqLock::acquire`] booked by `extra_ns`: work
    /// its taker did under the lock that is priced only once it is done (the task
    /// group's `load_avg` line of the enqueue, `sim/tg_load.rs`). The takers queued
    /// after it wait that much longer. A hold in the gap before a future booking that
    /// now runs past the gap pushes the queue back by the overrun. Nothing after a
    /// zero hold (none was booked) or with [`CostTerms::rq_lock`] off.
    pub fn extend_last(&mut self, extra_ns: u64) {
        match self.booked {
            Booked::Nothing => {}
            Booked::Queue => self.free_at_ns = self.free_at_ns.saturating_add(extra_ns),
            Booked::Gap => {
                self.gap_from_ns = self.gap_from_ns.saturating_add(extra_ns);
                let overrun = self.gap_from_ns.saturating_sub(self.gap_to_ns);
                self.free_at_ns = self.free_at_ns.saturating_add(overrun);
            }
        }
    }
}

/// The data of the tasks that share each CPU's caches: per CPU the summed footprint
/// of its resident tasks (those that last ran there) and the task that ran last; per
/// task its footprint and the CPU it is resident on.
#[derive(Clone, Debug)]
pub(crate) struct CacheShare {
    resident_bytes: Vec<u64>,
    /// Per CPU: the last task that ran there (`u32::MAX`: none yet); idle does not
    /// count, as the idle task displaces nothing worth pricing.
    last_task: Vec<u32>,
    /// Per task: its footprint, bytes.
    footprint: Vec<u64>,
    /// Per task: the CPU it is resident on (`u32::MAX`: it has not run yet).
    home: Vec<u32>,
}

impl CacheShare {
    /// `n_cpus` empty CPUs; tasks of the given footprints, none resident yet.
    pub fn new(n_cpus: usize, footprint: Vec<u64>) -> CacheShare {
        CacheShare {
            resident_bytes: vec![0; n_cpus],
            last_task: vec![u32::MAX; n_cpus],
            home: vec![u32::MAX; footprint.len()],
            footprint,
        }
    }

    /// `task` starts running on `cpu` (a context switch to it): returns the time it
    /// spends refilling the data that the tasks which ran on `cpu` since its last run
    /// there displaced ([`CacheShare::refill_ns`]), 0 if none ran in between or it
    /// comes from another CPU (it moves its residence here).
    #[inline]
    pub fn switch_in(&mut self, cost: &CostModel, cpu: CpuId, task: u32) -> u64 {
        let t = task as usize;
        let (bytes, home) = (self.footprint[t], self.home[t]);
        let last = std::mem::replace(&mut self.last_task[cpu.idx()], task);
        if home == cpu.0 {
            return if last == task {
                0
            } else {
                self.refill_ns(cost, cpu, bytes)
            };
        }
        if home != u32::MAX {
            let r = &mut self.resident_bytes[home as usize];
            *r = r.saturating_sub(bytes);
        }
        self.resident_bytes[cpu.idx()] += bytes;
        self.home[t] = cpu.0;
        0
    }

    /// What a task of `bytes` footprint, resident on `cpu`, pays to refill its data
    /// when it runs again there after other tasks ran: at each level (L1d, L2, the
    /// CPU's share of the LLC) the fraction of its data still cached is the level's
    /// per-CPU capacity over the residents' summed footprint (random replacement);
    /// the lines missing at one level come from the next (L2, LLC, DRAM), at that
    /// level's latency over the refill's memory-level parallelism.
    pub fn refill_ns(&self, cost: &CostModel, cpu: CpuId, bytes: u64) -> u64 {
        let p = &cost.params;
        if !p.terms.cache_refill || bytes == 0 {
            return 0;
        }
        refill_ns(
            &p.cache_bytes,
            &p.refill_ns,
            p.refill_mlp,
            self.resident_bytes[cpu.idx()].max(bytes),
            bytes,
        )
    }
}

/// [`CacheShare::refill_ns`] from its inputs: `total` the residents' summed
/// footprint (at least `bytes`).
fn refill_ns(cache: &[u64; 3], lat: &[u64; 3], mlp: u64, total: u64, bytes: u64) -> u64 {
    const LINE: u64 = 64;
    // Bytes of the task's data missing from each level: bytes × (1 - cap/total)+.
    let missing = |cap: u64| -> u64 {
        if total <= cap {
            0
        } else {
            // u128: footprints are at most a few MiB, but stay exact for any input.
            (bytes as u128 * (total - cap) as u128 / total as u128) as u64
        }
    };
    let m = [missing(cache[0]), missing(cache[1]), missing(cache[2])];
    // Missing from L1 but in L2: from L2; missing from L2 but in the LLC: from the
    // LLC; missing from the LLC: from DRAM.
    let lines = [
        m[0].saturating_sub(m[1]) / LINE,
        m[1].saturating_sub(m[2]) / LINE,
        m[2] / LINE,
    ];
    let ns: u64 = lines.iter().zip(lat).map(|(n, l)| n * l).sum();
    ns / mlp.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use crate::cost::test_support::kunpeng;

    /// FIFO takers; each pulls the rq lines (3 × c2c) from the last holder, nothing
    /// when it held the lock last. Off: no wait, no lines.
    #[test]
    fn rq_lock_queues_and_moves_its_lines_with_the_holder() {
        let c = kunpeng(CostTerms::ALL);
        let (owner, w1, w2) = (CpuId(0), CpuId(4), CpuId(8));
        let x = c.c2c_ns(owner, w1);
        assert_eq!(c.params.rq_lines, 3);
        let mut lock = RqLock::new(owner);
        // The owner's own take: its lines are local.
        assert_eq!(lock.acquire(&c, owner, 100, 50), (0, 50));
        // A remote waker 20 ns later waits 30 ns, then pulls 3 lines from the owner.
        assert_eq!(lock.acquire(&c, w1, 120, 250), (30, 250 + 3 * x));
        // A second waker queued behind it pulls them from the first waker.
        let free = 150 + 250 + 3 * x;
        assert_eq!(
            lock.acquire(&c, w2, 200, 250),
            (free - 200, 250 + 3 * c.c2c_ns(w1, w2))
        );
        // The owner's next schedule() pulls them back.
        let (_, hold) = lock.acquire(&c, owner, 10_000, 300);
        assert_eq!(hold, 300 + 3 * c.c2c_ns(w2, owner));
        let off = kunpeng(CostTerms::all_but("rq-lock").unwrap());
        let mut lock = RqLock::new(owner);
        assert_eq!(lock.acquire(&off, w1, 100, 250), (0, 250));
        assert_eq!(lock.acquire(&off, w2, 100, 250), (0, 250));
    }

    /// A booking ahead of `now` (a balancing pass's clock) leaves the lock free
    /// before it: a taker that fits in the gap takes it at once and leaves the
    /// booking where it is; one that does not queues after it. A zero hold books
    /// nothing.
    #[test]
    fn rq_lock_takers_fit_in_the_gap_before_a_future_booking() {
        let c = kunpeng(CostTerms::ALL);
        let (owner, w1, w2) = (CpuId(0), CpuId(4), CpuId(8));
        let x3 = 3 * c.c2c_ns(owner, w1);
        let mut lock = RqLock::new(owner);
        // The owner books [10_000, 10_100).
        assert_eq!(lock.acquire(&c, owner, 10_000, 100), (0, 100));
        // A waker at 1_000 for 250 (and the lines) fits before it: no wait.
        assert_eq!(lock.acquire(&c, w1, 1_000, 250), (0, 250 + x3));
        // The owner's take at 2_000 pulls the lines back from the waker, in the gap.
        assert_eq!(lock.acquire(&c, owner, 2_000, 50), (0, 50 + x3));
        // A waker whose hold would run into the booking queues after it.
        let (wait, hold) = lock.acquire(&c, w2, 9_900, 250);
        assert_eq!(wait, 10_100 - 9_900);
        assert_eq!(hold, 250 + 3 * c.c2c_ns(owner, w2));
        // A taker inside the gap that waits for a gap holder: 5_000 from w1 at 4_990.
        let mut lock = RqLock::new(owner);
        lock.acquire(&c, owner, 10_000, 100);
        lock.acquire(&c, w1, 4_000, 1_000 - x3);
        assert_eq!(lock.acquire(&c, owner, 4_990, 50).0, 10);
        // Zero holds book nothing: the owner's retake at 10_000 with its lines local
        // leaves the lock free, a later take at 5_000 does not wait.
        let mut lock = RqLock::new(owner);
        assert_eq!(lock.acquire(&c, owner, 10_000, 0), (0, 0));
        assert_eq!(lock.acquire(&c, owner, 5_000, 50), (0, 50));
        // ... and a zero hold behind a holder waits for it.
        assert_eq!(lock.acquire(&c, owner, 5_020, 0), (30, 0));
    }

    /// `extend_last()` lengthens the latest booking: at the end of the queue, the next
    /// taker waits that much longer; in the gap before a future booking, the gap
    /// shrinks, and a hold that now runs past the gap pushes the queue back by the
    /// overrun. Nothing after a zero hold or with the rq-lock term off.
    #[test]
    fn rq_lock_extend_last_lengthens_the_latest_booking() {
        let c = kunpeng(CostTerms::ALL);
        let (owner, w1, w2) = (CpuId(0), CpuId(4), CpuId(8));
        let x3 = 3 * c.c2c_ns(owner, w1);
        // Queue: the owner holds [100, 150), then 30 more; a waker at 120 waits 60.
        let mut lock = RqLock::new(owner);
        lock.acquire(&c, owner, 100, 50);
        lock.extend_last(30);
        assert_eq!(lock.acquire(&c, w1, 120, 250).0, 60);
        // Gap: the owner books [10_000, 10_100); a waker at 1_000 fits before it and
        // holds 500 more: the owner's take at 1_300 waits for it, in the gap.
        let mut lock = RqLock::new(owner);
        lock.acquire(&c, owner, 10_000, 100);
        assert_eq!(lock.acquire(&c, w1, 1_000, 250), (0, 250 + x3));
        lock.extend_last(500);
        let gap_end = 1_000 + 250 + x3 + 500;
        assert_eq!(
            lock.acquire(&c, owner, 1_300, 50),
            (gap_end - 1_300, 50 + x3)
        );
        // Gap overrun: the waker's hold runs 9_000 more, 250 + x3 past the booking's
        // start; the booking and the queue behind it move back by that much.
        let mut lock = RqLock::new(owner);
        lock.acquire(&c, owner, 10_000, 100);
        lock.acquire(&c, w1, 1_000, 250);
        lock.extend_last(9_000);
        let free = 10_100 + (250 + x3);
        assert_eq!(lock.acquire(&c, w2, 10_050, 100).0, free - 10_050);
        // A zero hold booked nothing: nothing to lengthen.
        let mut lock = RqLock::new(owner);
        lock.acquire(&c, owner, 100, 50);
        lock.acquire(&c, owner, 150, 0);
        lock.extend_last(1_000);
        assert_eq!(lock.acquire(&c, owner, 150, 10), (0, 10));
        // Off: no booking, nothing to lengthen.
        let off = kunpeng(CostTerms::all_but("rq-lock").unwrap());
        let mut lock = RqLock::new(owner);
        lock.acquire(&off, owner, 100, 50);
        lock.extend_last(1_000);
        assert_eq!(lock, RqLock::new(owner));
    }

    /// Hand-set: 4 tasks of 64 KiB (256 KiB) on a CPU with 64 KiB L1d, 512 KiB L2,
    /// 1 MiB LLC: 3/4 of each task's data left L1 (768 lines from L2 at 14 ns), none
    /// left L2; at MLP 4 that is 768 × 14 / 4 = 2688 ns. Twelve tasks (768 KiB): 11/12
    /// left L1, 1/3 left L2, none left the LLC.
    #[test]
    fn cache_refill_is_the_displaced_share_at_each_level() {
        let k = 1024;
        let cache = [64 * k, 512 * k, 1024 * k];
        let lat = [14, 35, 120];
        assert_eq!(
            refill_ns(&cache, &lat, 4, 64 * k, 64 * k),
            0,
            "alone: all cached"
        );
        assert_eq!(refill_ns(&cache, &lat, 4, 256 * k, 64 * k), 768 * 14 / 4);
        // 768 KiB: missing from L1 64K × 704/768 = 60074 bytes, from L2 64K × 256/768
        // = 21845: 597 lines from L2 ((60074 - 21845) / 64), 341 from the LLC.
        let m1 = 64 * k * (768 - 64) / 768;
        let m2 = 64 * k * (768 - 512) / 768;
        let want = ((m1 - m2) / 64 * 14 + m2 / 64 * 35) / 4;
        assert_eq!(refill_ns(&cache, &lat, 4, 768 * k, 64 * k), want);
        // Through the model: four 64 KiB tasks take turns on CPU 0 of a Kunpeng. The
        // first run of each only moves it in; from the second round each pays the
        // 4-resident refill; running twice in a row pays nothing.
        let c = kunpeng(CostTerms::ALL);
        let p = &c.params;
        let four = refill_ns(&p.cache_bytes, &p.refill_ns, p.refill_mlp, 256 * k, 64 * k);
        assert!(four > 0);
        let mut share = CacheShare::new(64, vec![64 * k; 4]);
        let cpu0 = CpuId(0);
        let round =
            |s: &mut CacheShare| (0..4).map(|t| s.switch_in(&c, cpu0, t)).collect::<Vec<_>>();
        assert_eq!(round(&mut share), vec![0; 4]);
        assert_eq!(round(&mut share), vec![four; 4]);
        assert_eq!(
            share.switch_in(&c, cpu0, 3),
            0,
            "ran last: nothing displaced"
        );
        // Three move to CPU 1: the one left on CPU 0 is alone there.
        for t in 0..3 {
            assert_eq!(
                share.switch_in(&c, CpuId(1), t),
                0,
                "a migration pays here nothing"
            );
        }
        assert_eq!(share.switch_in(&c, cpu0, 3), 0);
        assert_eq!(share.refill_ns(&c, cpu0, 64 * k), 0, "alone again");
        let off = kunpeng(CostTerms::all_but("cache-refill").unwrap());
        let mut share = CacheShare::new(64, vec![64 * k; 8]);
        for _ in 0..2 {
            for t in 0..8 {
                assert_eq!(share.switch_in(&off, cpu0, t), 0);
            }
        }
    }

    #[test]
    fn cost_terms_parse() {
        assert_eq!(CostTerms::all_but("").unwrap(), CostTerms::ALL);
        let t = CostTerms::all_but("rq-lock, cache-refill").unwrap();
        assert!(t.llc_line && !t.rq_lock && !t.cache_refill);
        assert!(CostTerms::all_but("rq-locks").is_err());
    }
}
