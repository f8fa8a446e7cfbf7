//! When a balance runs, fair.c v6.8 transcribed in C's types and held against the
//! model: `rebalance_domains()` (11694-11774) with `get_sd_balance_interval()`
//! (11533-11554), `msecs_to_jiffies()` (jiffies.h, HZ dividing 1000),
//! `update_newidle_cost()` (11664-11686) and `time_after()` / `time_after_eq()`,
//! against rebalance.rs's `rebalance_walk()` over a drawn CPU's domains (each
//! domain's `balance_interval`, `busy_factor`, `last_balance`, newidle cost and its
//! decay stamp; jiffies, HZ, `max_load_balance_interval`, the idle type; what each
//! `load_balance()` returns and leaves in `sd->balance_interval`, and `idle_cpu()`
//! after a pull); `nohz_balancer_kick()`'s flags (11852-11967) against nohz.rs's
//! `nohz_kick_flags()` with `nohz_balance_wanted()` on the presets' real
//! runqueues; and `newidle_balance()`'s gate (12335-12336) against newidle.rs's
//! `newidle_skips()`.
//!
//! Releases: v6.5 (`rebalance_domains()` 11234-11314, `nohz_balancer_kick()`
//! 11390-11505, `newidle_balance()` 11823-11943) is the same text; v6.12.19
//! (`sched_balance_domains()` 12200-12280: an atomic `sched_balance_running` for
//! the `balancing` spinlock, `idle = idle_cpu(cpu)` with `__CPU_NOT_IDLE = 0`;
//! `nohz_balancer_kick()` 12365-12480: `sched_asym()`; `sched_balance_newidle()`
//! 12807-12940: `get_rd_overloaded()`) decides the same. One 6.12 difference is in
//! the newidle loop, not its gate: it stops on `!continue_balancing` (set by
//! `should_we_balance()` when a task or a wake-up arrived) instead of
//! `this_rq->nr_running > 0 || this_rq->ttwu_pending` after each domain, so a task
//! queued during a domain's balance stops the pass one domain later, after that
//! domain's `should_we_balance()` only (see docs/fidelity.md, session 39).
//!
//! Left out, as the model leaves them out: SD_SERIALIZE's trylock failing (one
//! balance at a time in the simulator: drawn uncontended), `sched_idle_cpu()` (no
//! SCHED_IDLE tasks), the reduced capacity kick (`check_cpu_capacity()` false), the
//! SD_ASYM_PACKING kick (Alder Lake's MC level has it; the model has no asym
//! packing) and SD_ASYM_CPUCAPACITY's (no preset has it); jiffies never wrap here.

use super::super::super::interval_jiffies;
use super::super::super::newidle::newidle_skips;
use super::super::super::nohz::{nohz_kick_flags, KickIn, NohzFlags};
use super::super::super::rebalance::{self as rb, Rebalance};
use super::kernel::IdleType;
use super::*;
use crate::release::Release;
use crate::sim::MIGRATION_COST_NS;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// One `struct sched_domain`, the fields `rebalance_domains()` reads and writes.
#[derive(Clone, Debug, PartialEq)]
struct KSd {
    balance_interval: u32,
    busy_factor: u32,
    last_balance: u64,
    max_newidle_lb_cost: u64,
    last_decay_max_lb_cost: u64,
}

/// What one `load_balance()` call does here: `ld_moved`, `*continue_balancing`,
/// the `sd->balance_interval` it leaves.
#[derive(Clone, Copy, Debug)]
struct Script {
    moved: i32,
    cont: bool,
    interval_after: u32,
}

/// A drawn CPU with its domains.
#[derive(Clone, Debug)]
struct Cpu {
    sds: Vec<KSd>,
    script: Vec<Script>,
    idle_after: bool,
    jiffies: u64,
    hz: u64,
    max_load_balance_interval: u64,
    idle: IdleType,
    next_balance: u64,
    max_idle_balance_cost: u64,
}

/// What a walk did: the domains balanced (with the idle type passed), each domain
/// after, `rq->next_balance` and `rq->max_idle_balance_cost`.
#[derive(Debug, PartialEq)]
struct Walk {
    balanced: Vec<(usize, IdleType)>,
    sds: Vec<KSd>,
    next_balance: u64,
    max_idle_balance_cost: u64,
}

/// `time_after(a, b)`, `time_after_eq(a, b)` (jiffies.h) on `unsigned long`.
fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}
fn time_after_eq(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) >= 0
}

/// `msecs_to_jiffies(const unsigned int m)` for HZ dividing 1000
/// (`_msecs_to_jiffies()`, jiffies.h).
// The kernel's text, not div_ceil().
#[allow(clippy::manual_div_ceil)]
fn msecs_to_jiffies(m: u32, hz: u64) -> u64 {
    let per = 1000 / hz;
    (u64::from(m) + per - 1) / per
}

/// get_sd_balance_interval(), 11533-11554.
fn get_sd_balance_interval(c: &Cpu, sd: &KSd, cpu_busy: bool) -> u64 {
    let mut interval = u64::from(sd.balance_interval);
    if cpu_busy {
        interval *= u64::from(sd.busy_factor);
    }
    // msecs_to_jiffies() takes an unsigned int.
    let mut interval = msecs_to_jiffies(interval as u32, c.hz);
    if cpu_busy {
        interval = interval.wrapping_sub(1);
    }
    interval.clamp(1, c.max_load_balance_interval)
}

/// update_newidle_cost(), 11664-11686.
fn update_newidle_cost(sd: &mut KSd, cost: u64, jiffies: u64, hz: u64) -> bool {
    if cost > sd.max_newidle_lb_cost {
        sd.max_newidle_lb_cost = cost;
        sd.last_decay_max_lb_cost = jiffies;
    } else if time_after(jiffies, sd.last_decay_max_lb_cost + hz) {
        sd.max_newidle_lb_cost = (sd.max_newidle_lb_cost * 253) / 256;
        sd.last_decay_max_lb_cost = jiffies;
        return true;
    }
    false
}

/// rebalance_domains(), 11694-11774.
fn kernel_rebalance(c: &Cpu) -> Walk {
    let mut c = c.clone();
    let mut balanced = Vec::new();
    let mut continue_balancing = 1;
    let mut idle = c.idle;
    // sched_idle_cpu(): no SCHED_IDLE task.
    let mut busy = idle != IdleType::CpuIdle;
    let jiffies = c.jiffies;
    let mut next_balance = jiffies + 60 * c.hz;
    let mut update_next_balance = 0;
    let mut need_decay = false;
    let mut max_cost: u64 = 0;
    for i in 0..c.sds.len() {
        need_decay = update_newidle_cost(&mut c.sds[i], 0, jiffies, c.hz);
        max_cost += c.sds[i].max_newidle_lb_cost;
        if continue_balancing == 0 {
            if need_decay {
                continue;
            }
            break;
        }
        let mut interval = get_sd_balance_interval(&c, &c.sds[i], busy);
        // need_serialize: spin_trylock(&balancing) succeeds.
        if time_after_eq(jiffies, c.sds[i].last_balance + interval) {
            // load_balance(cpu, rq, sd, idle, &continue_balancing)
            balanced.push((i, idle));
            let s = c.script[i];
            c.sds[i].balance_interval = s.interval_after;
            if !s.cont {
                continue_balancing = 0;
            }
            if s.moved != 0 {
                idle = if c.idle_after {
                    IdleType::CpuIdle
                } else {
                    IdleType::CpuNotIdle
                };
                busy = idle != IdleType::CpuIdle;
            }
            c.sds[i].last_balance = jiffies;
            interval = get_sd_balance_interval(&c, &c.sds[i], busy);
        }
        if time_after(next_balance, c.sds[i].last_balance + interval) {
            next_balance = c.sds[i].last_balance + interval;
            update_next_balance = 1;
        }
    }
    if need_decay {
        c.max_idle_balance_cost = MIGRATION_COST_NS.max(max_cost);
    }
    if update_next_balance != 0 {
        c.next_balance = next_balance;
    }
    Walk {
        balanced,
        sds: c.sds,
        next_balance: c.next_balance,
        max_idle_balance_cost: c.max_idle_balance_cost,
    }
}

/// The model's side: the domains as `DomainState`s.
struct Mock {
    c: Cpu,
    doms: Vec<DomainState>,
    balanced: Vec<(usize, IdleType)>,
}

impl Rebalance for Mock {
    fn n_levels(&self) -> usize {
        self.doms.len()
    }
    fn decay(&mut self, li: usize) -> bool {
        rb::update_newidle_cost(&mut self.doms[li], 0, self.c.jiffies, self.c.hz)
    }
    fn max_newidle_lb_cost(&self, li: usize) -> u64 {
        self.doms[li].max_newidle_lb_cost
    }
    fn interval(&self, li: usize, busy: bool) -> u64 {
        let bf = busy.then_some(u64::from(self.c.sds[li].busy_factor));
        let tick_ns = 1_000_000_000 / self.c.hz;
        let max = self.c.max_load_balance_interval;
        interval_jiffies(self.doms[li].balance_interval, bf, tick_ns, max)
    }
    fn last_balance(&self, li: usize) -> u64 {
        self.doms[li].last_balance
    }
    fn set_last_balance(&mut self, li: usize, j: u64) {
        self.doms[li].last_balance = j;
    }
    fn load_balance(&mut self, li: usize, idle: CpuIdle) -> (bool, bool) {
        let k = match idle {
            CpuIdle::NotIdle => IdleType::CpuNotIdle,
            CpuIdle::Idle => IdleType::CpuIdle,
            CpuIdle::NewlyIdle => IdleType::CpuNewlyIdle,
        };
        self.balanced.push((li, k));
        let s = self.c.script[li];
        self.doms[li].balance_interval = u64::from(s.interval_after);
        (s.moved != 0, s.cont)
    }
    fn idle_cpu(&self) -> bool {
        self.c.idle_after
    }
}

fn model_rebalance(c: &Cpu) -> Walk {
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
    };
    let idle = match c.idle {
        IdleType::CpuNotIdle => CpuIdle::NotIdle,
        IdleType::CpuIdle => CpuIdle::Idle,
        IdleType::CpuNewlyIdle => CpuIdle::NewlyIdle,
    };
    let (next, max_idle) = rb::rebalance_walk(&mut m, c.jiffies, c.hz, idle);
    let sds = c
        .sds
        .iter()
        .zip(&m.doms)
        .map(|(k, d)| KSd {
            balance_interval: d.balance_interval as u32,
            busy_factor: k.busy_factor,
            last_balance: d.last_balance,
            max_newidle_lb_cost: d.max_newidle_lb_cost,
            last_decay_max_lb_cost: d.last_decay_max_lb_cost,
        })
        .collect();
    Walk {
        balanced: m.balanced,
        sds,
        next_balance: next.unwrap_or(c.next_balance),
        max_idle_balance_cost: max_idle.unwrap_or(c.max_idle_balance_cost),
    }
}

fn draw_cpu(r: &mut Rng) -> Cpu {
    let mut d = |m: u64| r.below(m);
    let hz = [100, 250, 1000][d(3) as usize];
    let jiffies = 600 * hz + d(100_000);
    let n = 1 + d(5) as usize;
    let max_lb = [hz * 8 / 10, hz * 96 / 10, hz * 4096 / 10][d(3) as usize];
    let sds = (0..n)
        .map(|_| {
            let interval = [1u32, 2, 4, 8, 16, 24, 64, 128, 512, 4096][d(10) as usize];
            let cost = [0, 1_000, 40_000, 600_000][d(4) as usize];
            KSd {
                balance_interval: interval,
                busy_factor: [1, 16, 32][d(3) as usize],
                last_balance: jiffies - d(3 * u64::from(interval) * hz / 100 + 2),
                max_newidle_lb_cost: cost,
                last_decay_max_lb_cost: jiffies - d(2 * hz + 2),
            }
        })
        .collect();
    let script = (0..n)
        .map(|_| Script {
            moved: if d(3) == 0 { 1 + d(2) as i32 } else { 0 },
            cont: d(5) != 0,
            interval_after: [1u32, 8, 64, 512][d(4) as usize],
        })
        .collect();
    Cpu {
        sds,
        script,
        idle_after: d(2) == 0,
        jiffies,
        hz,
        max_load_balance_interval: max_lb,
        idle: [IdleType::CpuNotIdle, IdleType::CpuIdle][d(2) as usize],
        next_balance: jiffies + d(500),
        max_idle_balance_cost: d(1_000_000),
    }
}

/// `rebalance_walk()` agrees with the transcription of `rebalance_domains()` on drawn
/// CPUs; every branch is reached.
#[test]
fn rebalance_domains_agrees_with_a_transcription_of_fair_c() {
    let mut bad = Vec::new();
    // balanced, not due, stopped (!continue_balancing), gone on for a decay, idle
    // recomputed after a pull, next_balance set, max_idle_balance_cost set, the
    // interval clamped to max_load_balance_interval, a busy interval.
    let mut reach = [0u64; 9];
    for case in 0..20_000u64 {
        let mut r = Rng::new(0x5eed_4e11 ^ (case << 8));
        let c = draw_cpu(&mut r);
        let want = kernel_rebalance(&c);
        let got = model_rebalance(&c);
        if want != got && bad.len() < 5 {
            bad.push(format!(
                "case {case}: {c:?}\n kernel {want:?}\n model  {got:?}"
            ));
        }
        let due: Vec<bool> = (0..c.sds.len())
            .map(|i| want.balanced.iter().any(|&(l, _)| l == i))
            .collect();
        let stop = (0..c.sds.len()).any(|i| due[i] && !c.script[i].cont);
        let last = want.balanced.last().map(|&(l, _)| l);
        let hit = [
            !want.balanced.is_empty(),
            due.iter().any(|&b| !b),
            stop && last.is_some_and(|l| l + 1 < c.sds.len()),
            stop && want
                .sds
                .iter()
                .zip(&c.sds)
                .skip(last.unwrap_or(0) + 1)
                .any(|(a, b)| a != b),
            want.balanced.windows(2).any(|w| w[0].1 != w[1].1),
            want.next_balance != c.next_balance,
            want.max_idle_balance_cost != c.max_idle_balance_cost,
            c.sds.iter().any(|s| {
                u64::from(s.balance_interval * s.busy_factor) * c.hz / 1000
                    > c.max_load_balance_interval
            }),
            c.idle == IdleType::CpuNotIdle && !want.balanced.is_empty(),
        ];
        for (n, h) in reach.iter_mut().zip(hit) {
            *n += u64::from(h);
        }
    }
    assert!(bad.is_empty(), "disagreements:\n{}", bad.join("\n"));
    assert!(reach.iter().all(|&n| n > 50), "{reach:?}");
    eprintln!("{reach:?}");
}

/// `NOHZ_*_KICK` bits, sched.h v6.8 2919-2933.
const NOHZ_BALANCE_KICK: u32 = 1 << 0;
const NOHZ_STATS_KICK: u32 = 1 << 1;
const NOHZ_NEXT_KICK: u32 = 1 << 3;

/// nohz_balancer_kick(), 11852-11967, from `nohz.nr_cpus` on (the model tests it
/// and `rq->idle_balance` before), on `cpu`'s runqueue and LLC.
fn kernel_kick(sim: &Simulator, cpu: u32, k: KickIn) -> u32 {
    let now = k.j;
    let mut flags = 0;
    if k.has_blocked && time_after(now, k.next_blocked) {
        flags = NOHZ_STATS_KICK;
    }
    'out: {
        if time_after(k.next_balance, now) {
            // time_before(now, nohz.next_balance)
            break 'out;
        }
        let rq = &sim.state.rqs[cpu as usize];
        if rq.nr_running >= 2 {
            flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
            break 'out;
        }
        // rq->sd: check_cpu_capacity() is false. sd_asym_packing: left out;
        // sd_asym_cpucapacity: none.
        let cd = sim.env.domains.cpu(CpuId(cpu));
        if cd.sd_llc.is_some() {
            // sds = per_cpu(sd_llc_shared, cpu)
            let llc = sim.llc_id_of[cpu as usize] as usize;
            let nr_busy = sim.state.llc_shared[llc].nr_busy_cpus;
            if nr_busy > 1 {
                flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
                break 'out;
            }
        }
    }
    if k.needs_update {
        flags |= NOHZ_NEXT_KICK;
    }
    flags
}

/// `nohz_kick_flags()` with `nohz_balance_wanted()` agree with the transcription of
/// `nohz_balancer_kick()` on the presets' runqueues and LLCs.
#[test]
fn nohz_balancer_kick_agrees_with_a_transcription_of_fair_c() {
    let mut sims = sims();
    let mut bad = Vec::new();
    // stats only, balance, next, none.
    let mut reach = [0u64; 4];
    for case in 0..8_000u64 {
        let pi = (case % PRESETS.len() as u64) as usize;
        let sim = &mut sims[pi][1];
        let mut r = Rng::new(0x5eed_c1c4 ^ (case << 8));
        let n = sim.state.rqs.len() as u64;
        let cpu = r.below(n) as u32;
        sim.state.rqs[cpu as usize].nr_running = r.below(4) as u32;
        let llc = sim.llc_id_of[cpu as usize] as usize;
        sim.state.llc_shared[llc].nr_busy_cpus = r.below(4) as u32;
        let j = 600_000 + r.below(1000);
        let k = KickIn {
            j,
            has_blocked: r.below(2) == 0,
            next_blocked: j + 2 - r.below(5),
            next_balance: j + 2 - r.below(5),
            needs_update: r.below(4) == 0,
        };
        let want = kernel_kick(sim, cpu, k);
        let f = nohz_kick_flags(k, || sim.nohz_balance_wanted(cpu));
        let bits = [
            (NohzFlags::BALANCE, NOHZ_BALANCE_KICK),
            (NohzFlags::STATS, NOHZ_STATS_KICK),
            (NohzFlags::NEXT, NOHZ_NEXT_KICK),
        ];
        let got = bits
            .iter()
            .filter(|(m, _)| f.contains(*m))
            .fold(0, |a, (_, b)| a | b);
        if want != got && bad.len() < 5 {
            bad.push(format!(
                "{} cpu {cpu} {k:?}: kernel {want:#x}, model {got:#x}",
                PRESETS[pi]
            ));
        }
        let i = if want & NOHZ_BALANCE_KICK != 0 {
            1
        } else if want & NOHZ_STATS_KICK != 0 {
            0
        } else if want != 0 {
            2
        } else {
            3
        };
        reach[i] += 1;
    }
    assert!(bad.is_empty(), "disagreements:\n{}", bad.join("\n"));
    assert!(reach.iter().all(|&n| n > 100), "{reach:?}");
}

/// newidle_balance()'s gate, 12335-12336 (v6.5 11863-11864; v6.12.19 12849-12850
/// with get_rd_overloaded()): "if (!READ_ONCE(this_rq->rd->overload) || (sd &&
/// this_rq->avg_idle < sd->max_newidle_lb_cost))" goto out, against
/// `newidle_skips()` for 6.5, 6.8 and 6.12.
#[test]
fn newidle_balances_gate_agrees_with_fair_c() {
    let mut skipped = [0u64; 2];
    for case in 0..20_000u64 {
        let mut r = Rng::new(0x5eed_9a7e ^ case);
        let overload = r.below(4) != 0;
        let avg_idle = r.below(2_000_000);
        let max_newidle_lb_cost = [0, r.below(100_000), r.below(2_000_000)][r.below(3) as usize];
        let want = !overload || avg_idle < max_newidle_lb_cost;
        for rel in ["6.5", "6.8", "6.12"] {
            let rel: Release = rel.parse().unwrap();
            let got = newidle_skips(rel, overload, avg_idle, max_newidle_lb_cost);
            assert_eq!(
                got, want,
                "{rel:?} {overload} {avg_idle} {max_newidle_lb_cost}"
            );
        }
        skipped[usize::from(want)] += 1;
    }
    assert!(skipped.iter().all(|&n| n > 1000), "{skipped:?}");
}
