//! `newidle_balance()`'s walk over the domains, fair.c v6.8 12352-12388 with
//! `update_next_balance()` (11556-11567), transcribed in C's types and held against
//! newidle.rs's `newidle_walk()` on drawn CPUs: each domain's `last_balance`,
//! `balance_interval`, `max_newidle_lb_cost` and its decay stamp, SD_BALANCE_NEWIDLE;
//! `avg_idle`, jiffies, HZ; what each `load_balance(CPU_NEWLY_IDLE)` pulls and costs,
//! and the domain during whose balance a task or a wake-up arrives. Both sides give
//! the domains balanced, each domain's newidle cost and stamp, `curr_cost` (which
//! `rq->max_idle_balance_cost` takes), `next_balance` and the task pulled.
//!
//! Releases: v6.5 (11863-11915) is the same text. v6.12.19
//! (`sched_balance_newidle()` 12853-12887) stops on `pulled_task ||
//! !continue_balancing` instead of `this_rq->nr_running > 0 ||
//! this_rq->ttwu_pending` (c829d6818b60, v6.10, "No change in functionality
//! intended"): work that arrives during a domain's balance is seen by the next
//! domain's `should_we_balance()` (which clears `continue_balancing` and returns),
//! so the walk stops one domain later, after that domain's `update_next_balance()`,
//! its `avg_idle` test and an `update_newidle_cost()` of the short call's cost. The
//! model's walk has both forms (by release); in the simulator the walk runs at the
//! pass's start, where only a pull stops it, and work arriving during the pass cuts
//! its run time at the end of the domain in progress (sim/newidle.rs) in every
//! release (docs/fidelity.md, session 39).

use super::super::super::interval_jiffies;
use super::super::super::newidle::{newidle_walk, NewidleWalk};
use super::super::super::rebalance as rb;
use super::kernel::Fair;
use super::*;
use crate::release::Release;

#[derive(Clone, Debug, PartialEq)]
struct KSd {
    last_balance: u64,
    balance_interval: u32,
    max_newidle_lb_cost: u64,
    last_decay_max_lb_cost: u64,
    balance_newidle: bool,
}
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[derive(Clone, Debug)]
struct Cpu {
    sds: Vec<KSd>,
    /// Per domain: `ld_moved` of its balance (0 or 1: newidle stops after one) and
    /// its cost (ns).
    script: Vec<(i32, u64)>,
    /// The domain during whose balance work arrives.
    arrives: Option<usize>,
    avg_idle: u64,
    jiffies: u64,
    hz: u64,
    max_load_balance_interval: u64,
}

#[derive(Debug, PartialEq)]
struct Walk {
    balanced: Vec<usize>,
    sds: Vec<KSd>,
    curr_cost: u64,
    next_balance: u64,
    pulled: bool,
}

fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}

/// get_sd_balance_interval(sd, 0), 11533-11554, HZ dividing 1000.
fn interval_idle(c: &Cpu, sd: &KSd) -> u64 {
    let per = 1000 / c.hz;
    let j = u64::from(sd.balance_interval).div_ceil(per);
    j.clamp(1, c.max_load_balance_interval)
}

/// 12297, 12352-12382 (v6.12: `continue_balancing` outside the loop, the stop on
/// it).
fn kernel_walk(fair: Fair, c: &Cpu) -> Walk {
    let mut c = c.clone();
    let jiffies = c.jiffies;
    let mut next_balance = jiffies + c.hz;
    let mut curr_cost: u64 = 0;
    let mut pulled_task = 0;
    let mut balanced = Vec::new();
    let mut work = false; // this_rq->nr_running > 0 || this_rq->ttwu_pending
    let mut continue_balancing = 1; // v6.12's, outside the loop
    for i in 0..c.sds.len() {
        // update_next_balance(sd, &next_balance), 11556-11567.
        let interval = interval_idle(&c, &c.sds[i]);
        let next = c.sds[i].last_balance + interval;
        if time_after(next_balance, next) {
            next_balance = next;
        }
        if c.avg_idle < curr_cost + c.sds[i].max_newidle_lb_cost {
            break;
        }
        if c.sds[i].balance_newidle {
            // load_balance(): should_we_balance() first (11212-11217).
            balanced.push(i);
            let (moved, cost) = c.script[i];
            if work {
                continue_balancing = 0;
                pulled_task = 0;
            } else {
                pulled_task = moved;
                if moved != 0 {
                    work = true;
                }
            }
            if c.arrives == Some(i) {
                work = true;
            }
            let domain_cost = cost;
            let sd = &mut c.sds[i];
            // update_newidle_cost(sd, domain_cost), 11664-11686.
            if domain_cost > sd.max_newidle_lb_cost {
                sd.max_newidle_lb_cost = domain_cost;
                sd.last_decay_max_lb_cost = jiffies;
            } else if time_after(jiffies, sd.last_decay_max_lb_cost + c.hz) {
                sd.max_newidle_lb_cost = (sd.max_newidle_lb_cost * 253) / 256;
                sd.last_decay_max_lb_cost = jiffies;
            }
            curr_cost += domain_cost;
        } else if c.arrives == Some(i) {
            work = true;
        }
        let stop = match fair {
            Fair::V6_12 => pulled_task != 0 || continue_balancing == 0,
            Fair::V6_5 | Fair::V6_8 => pulled_task != 0 || work,
        };
        if stop {
            break;
        }
    }
    Walk {
        balanced,
        sds: c.sds,
        curr_cost,
        next_balance,
        pulled: pulled_task != 0,
    }
}

struct Mock {
    c: Cpu,
    doms: Vec<DomainState>,
    balanced: Vec<usize>,
    /// A task pulled.
    work: bool,
    /// The domain the walk is at (`next_at()` is asked first for each).
    cur: std::cell::Cell<usize>,
}

impl Mock {
    /// Work arrived while the walk was at an earlier domain than `li`.
    fn arrived_before(&self, li: usize) -> bool {
        self.c.arrives.is_some_and(|a| a < li)
    }
}

impl NewidleWalk for Mock {
    fn n_levels(&self) -> usize {
        self.doms.len()
    }
    fn next_at(&self, li: usize) -> u64 {
        self.cur.set(li);
        let tick_ns = 1_000_000_000 / self.c.hz;
        let max = self.c.max_load_balance_interval;
        let d = &self.doms[li];
        d.last_balance + interval_jiffies(d.balance_interval, None, tick_ns, max)
    }
    fn max_newidle_lb_cost(&self, li: usize) -> u64 {
        self.doms[li].max_newidle_lb_cost
    }
    fn balances_newidle(&self, li: usize) -> bool {
        self.c.sds[li].balance_newidle
    }
    fn balance(&mut self, li: usize) -> (Option<u32>, u64, bool) {
        self.balanced.push(li);
        let (moved, cost) = self.c.script[li];
        // should_we_balance(): no pull, and continue_balancing cleared, once work
        // is there.
        let cont = !self.work && !self.arrived_before(li);
        let pulled = (moved != 0 && cont).then_some(li as u32);
        self.work |= pulled.is_some();
        (pulled, cost, cont)
    }
    fn update_newidle_cost(&mut self, li: usize, cost: u64) {
        rb::update_newidle_cost(&mut self.doms[li], cost, self.c.jiffies, self.c.hz);
    }
    fn has_work(&self) -> bool {
        self.work || self.arrived_before(self.cur.get() + 1)
    }
}

fn model_walk(release: Release, c: &Cpu) -> Walk {
    let doms = domain_states(&c.sds, |s| {
        (
            s.balance_interval,
            s.last_balance,
            s.max_newidle_lb_cost,
            s.last_decay_max_lb_cost,
        )
    });
    let mut m = Mock {
        c: c.clone(),
        doms,
        balanced: Vec::new(),
        work: false,
        cur: std::cell::Cell::new(0),
    };
    let (pulled, curr_cost, next_balance) =
        newidle_walk(&mut m, release, c.avg_idle, c.jiffies + c.hz);
    let sds = c
        .sds
        .iter()
        .zip(&m.doms)
        .map(|(k, d)| KSd {
            max_newidle_lb_cost: d.max_newidle_lb_cost,
            last_decay_max_lb_cost: d.last_decay_max_lb_cost,
            ..k.clone()
        })
        .collect();
    Walk {
        balanced: m.balanced,
        sds,
        curr_cost,
        next_balance,
        pulled: pulled.is_some(),
    }
}

fn draw_cpu(r: &mut Rng) -> Cpu {
    let mut d = |m: u64| r.below(m);
    let hz = [100, 250, 1000][d(3) as usize];
    let jiffies = 600 * hz + d(100_000);
    let n = 1 + d(5) as usize;
    let sds: Vec<KSd> = (0..n)
        .map(|_| {
            let interval = [1u32, 4, 8, 64, 512][d(5) as usize];
            KSd {
                last_balance: jiffies - d(2 * u64::from(interval) * hz / 100 + 2),
                balance_interval: interval,
                max_newidle_lb_cost: [0, 2_000, 30_000, 400_000][d(4) as usize],
                last_decay_max_lb_cost: jiffies - d(2 * hz + 2),
                balance_newidle: d(6) != 0,
            }
        })
        .collect();
    let script: Vec<(i32, u64)> = (0..n)
        .map(|_| (i32::from(d(4) == 0), [500, 5_000, 60_000][d(3) as usize]))
        .collect();
    let arrives = (d(3) == 0).then(|| d(n as u64) as usize);
    // Ties with the first domain's cost, and with the second's after the first.
    let tie = sds[0].max_newidle_lb_cost;
    let tie2 = match (sds.get(1), sds[0].balance_newidle) {
        (Some(s1), true) => script[0].1 + s1.max_newidle_lb_cost,
        (Some(s1), false) => s1.max_newidle_lb_cost,
        (None, _) => tie,
    };
    let avg_idle = [d(10_000), d(100_000), d(1_000_000), 5_000_000, tie, tie2][d(6) as usize];
    Cpu {
        sds,
        script,
        arrives,
        avg_idle,
        jiffies,
        hz,
        max_load_balance_interval: [hz / 10, hz * 96 / 10][d(2) as usize].max(1),
    }
}

/// `newidle_walk()` agrees with the transcription of `newidle_balance()`'s walk on
/// drawn CPUs, per release; every branch is reached.
#[test]
fn newidle_balances_walk_agrees_with_a_transcription_of_fair_c() {
    let mut bad = Vec::new();
    // stopped by avg_idle, a domain without SD_BALANCE_NEWIDLE, a pull, work
    // arrived, every domain walked, a cost decayed, a cost raised.
    let mut reach = [0u64; 7];
    for (ri, &(rel, fair)) in RELEASES.iter().enumerate() {
        for case in 0..10_000u64 {
            let mut r = Rng::new(0x5eed_1d1e ^ (case << 8) ^ ri as u64);
            let c = draw_cpu(&mut r);
            let want = kernel_walk(fair, &c);
            let got = model_walk(rel.parse().unwrap(), &c);
            if want != got && bad.len() < 5 {
                bad.push(format!(
                    "{rel} case {case}: {c:?}\n kernel {want:?}\n model  {got:?}"
                ));
            }
            let last = want.balanced.last().copied();
            let n = c.sds.len();
            let hit = [
                (0..n).any(|i| c.sds[i].balance_newidle && !want.balanced.contains(&i))
                    && c.avg_idle < 5_000_000,
                c.sds.iter().any(|s| !s.balance_newidle),
                want.pulled,
                c.arrives
                    .is_some_and(|a| last.is_some_and(|l| l > a) || last == Some(a)),
                last == Some(n - 1),
                want.sds
                    .iter()
                    .zip(&c.sds)
                    .any(|(a, b)| a.max_newidle_lb_cost < b.max_newidle_lb_cost),
                want.sds
                    .iter()
                    .zip(&c.sds)
                    .any(|(a, b)| a.max_newidle_lb_cost > b.max_newidle_lb_cost),
            ];
            for (k, h) in reach.iter_mut().zip(hit) {
                *k += u64::from(h);
            }
        }
    }
    assert!(bad.is_empty(), "disagreements:\n{}", bad.join("\n"));
    assert!(reach.iter().all(|&k| k > 50), "{reach:?}");
}
