//! A second, independent reading of the load balancer's decision, transcribed
//! statement by statement from kernel/sched/fair.c v6.8 (kernel.rs, queue.rs) and
//! compared with the model (`lb/mod.rs`, `lb/stats.rs`, `lb/busiest.rs`) on random
//! runqueue states: each state is one CPU balancing one of its domains, and both
//! sides give the local and picked groups' statistics and types, prefer_sibling,
//! rd->overload (top level), the busiest group with its migration type and
//! imbalance, the busiest runqueue, and should_we_balance()'s answer.
//!
//! Session 39 added what acts on that decision and what decides when a balance runs,
//! each file with its own header: detach_kernel.rs / detach.rs (`detach_tasks()`,
//! `can_migrate_task()`, `task_hot()`, `detach_one_task()`, `load_balance()`'s
//! `more_balance` loop); exit.rs (`load_balance()` after `find_busiest_queue()`:
//! the redo, the failure path, `need_active_balance()`, the interval); when.rs
//! (`rebalance_domains()`, `get_sd_balance_interval()`, `update_newidle_cost()`,
//! `nohz_balancer_kick()`'s flags, `newidle_balance()`'s gate); newidle.rs
//! (`newidle_balance()`'s walk over the domains).
//!
//! - should_we_balance() (11194-11258) with is_core_idle() (1308-1323);
//! - update_sd_lb_stats() (10557-10628) from init_sd_lb_stats() (9470-9489), with
//!   update_sg_lb_stats() (9876-9957), group_classify() (9704-9728) with
//!   group_has_capacity() (9662-9677) / group_is_overloaded() (9687-9702) /
//!   sg_imbalanced() (9645-9648), smt_balance() (9801-9818), update_sd_pick_busiest()
//!   (9972-10114) with smt_vs_nonsmt_groups() (9791-9799), prefer_sibling from the
//!   busiest group's flags, fbq_classify_group() / _rq() (10116-10133), rd->overload;
//! - find_busiest_group() (10838-10974) with every early out, sibling_imbalance()
//!   (9820-9853), calculate_imbalance() (10636-10804: migrate_task / util / load,
//!   adjust_numa_imbalance() 1328-1349 with sd->imb_numa_nr);
//! - find_busiest_queue() (10979-11119), cpu_load() / cpu_runnable() (6887, 6923),
//!   cpu_util() (7659-7717) for cpu_util_cfs() / cpu_util_cfs_boost(), idle_cpu()
//!   (core.c 7425-7441), check_cpu_capacity() (9597-9601), sched_reduced_capacity()
//!   (9855-9865); `env->cpus` as load_balance() sets it (11286: the domain's span and
//!   cpu_active_mask, less the CPUs a redo after LBF_ALL_PINNED excluded).
//!
//! Releases, by `diff` of the same functions:
//! - v6.5 (should_we_balance() 10764-10800: the first idle CPU of the balance mask,
//!   no preference for an idle core; update_sg_lb_stats() 9489-9566,
//!   update_sd_pick_busiest() 9581-9700, update_sd_lb_stats() 10141-10212,
//!   calculate_imbalance() 10220-10383,
//!   find_busiest_group() 10417-10544, find_busiest_queue() 10549-10689,
//!   group_classify() 9385-9406): no group_smt_balance (not set, not classified, no
//!   case in update_sd_pick_busiest() nor calculate_imbalance(), no force_balance for
//!   SMT vs non-SMT groups), no smt_vs_nonsmt_groups() in update_sd_pick_busiest()'s
//!   group_has_spare, and no sibling_imbalance(): find_busiest_group()'s prefer_sibling
//!   test is `busiest->sum_nr_running > local->sum_nr_running + 1` and
//!   calculate_imbalance() takes `nr_diff = busiest->sum_nr_running` less (with
//!   lsub_positive()) `local->sum_nr_running`. prefer_sibling is already the busiest
//!   group's flag in v6.5 (10189). Switch `Fair::V6_5`.
//! - v6.12.19 (update_sg_lb_stats() 10390-10469, update_sd_pick_busiest() 10484-10620,
//!   update_sd_lb_stats() 11061-11121, calculate_imbalance() 11129-11297,
//!   sched_balance_find_src_group() 11331-11464, sched_balance_find_src_rq()
//!   11469-11606): renames (SD_SHARE_LLC, the two sched_balance_* names), `!env->idle`
//!   for CPU_NOT_IDLE (`__CPU_NOT_IDLE = 0`), `return` for `break` in
//!   update_sd_pick_busiest(), rd->overloaded through set_rd_overloaded(): the same
//!   decisions. `Fair::V6_12` only labels the run.
//!
//! Inputs, read the way the model reads them so both sides take the same state:
//! the domains and groups are the model's built ones (`sim.env.domains`: spans,
//! `group_balance_mask`, `sgc->capacity`, `sg->flags`, `sg->cores`, `imb_numa_nr`,
//! which other tests check against the kernel's builder); every CPU is in the run and
//! active. A runqueue's `runnable_avg` is its `load_avg` (nice 0), or below it on a
//! quarter of them (v6.12's delayed tasks), `util_est` is already in `util_avg`,
//! `cfs.h_nr_running` is `nr_running` (CFS tasks only), `cpu_capacity` is
//! `arch_scale_cpu_capacity()` (no RT/IRQ pressure, so check_cpu_capacity() and
//! sched_reduced_capacity() are false and no group is misfit), no task has a NUMA
//! preference (fbq: every busy runqueue `regular`), and `sgc->imbalance` is drawn per
//! (level, `sgc` id).
//!
//! Left out, as the model leaves them out (docs/fidelity.md, "Simplified or left
//! out"): SD_ASYM_CPUCAPACITY (misfit, `migrate_misfit`, the capacity tests of
//! update_sd_pick_busiest() and find_busiest_queue(), energy-aware
//! `sched_energy_enabled()`): no preset compared has it (asserted); SD_ASYM_PACKING
//! (`group_asym_packing`, sched_asym(), the skip in find_busiest_queue()): Alder
//! Lake's MC level has it, and both sides ignore it. update_idle_cpu_scan()
//! (SIS_UTIL) and rd->overutilized are not compared; update_group_capacity()
//! recomputes the same capacities. NUMA groups that reach outside their domain's span
//! (`env->cpus` cuts them) do not occur in these presets. The model's misfit-free
//! group types are mapped one to one (its enum has no `group_asym_packing`).

mod detach;
mod detach_kernel;
mod exit;
mod kernel;
mod newidle;
mod queue;
mod when;

use kernel::{Env, Fair, IdleType, Rq, Sgs};

use super::super::DomainState;
use super::*;
use crate::rng::Rng;
use crate::sched_domain::SdFlags;
use lb::{GroupType, LbEnv, MigrationType, SgStats};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// The model's [`DomainState`]s for kernel `struct sched_domain`s, as the newidle and
/// rebalance walks start them (no balance has failed): `fields` gives each one's
/// `balance_interval`, `last_balance`, `max_newidle_lb_cost` and
/// `last_decay_max_lb_cost`.
fn domain_states<T>(sds: &[T], fields: impl Fn(&T) -> (u32, u64, u64, u64)) -> Vec<DomainState> {
    sds.iter()
        .map(|s| {
            let (interval, last_balance, max_newidle_lb_cost, last_decay_max_lb_cost) = fields(s);
            DomainState {
                balance_interval: u64::from(interval),
                nr_balance_failed: 0,
                last_balance,
                max_newidle_lb_cost,
                last_decay_max_lb_cost,
            }
        })
        .collect()
}

/// Kunpeng 920-4826 (clusters, four nodes of 24), Jacobsville (clusters, no SMT), an SMT
/// Xeon, two EPYC 9654 (SMT, CCXs, two nodes), Sapphire Rapids with SNC2 (four nodes),
/// Alder Lake (SMT P-cores beside E-core clusters; its SD_ASYM_PACKING left out),
/// Kunpeng 920-6426 (seed 01's machine), a flat 16-CPU LLC.
const PRESETS: [&str; 8] = [
    "kunpeng920-4826",
    "jacobsville",
    "xeon-smt-8",
    "epyc9654-2p",
    "spr-2s-snc2",
    "alderlake-8p8e",
    "kunpeng920-6426",
    "flat-16",
];
const RELEASES: [(&str, Fair); 3] = [
    ("6.5", Fair::V6_5),
    ("6.8", Fair::V6_8),
    ("6.12", Fair::V6_12),
];

/// States per release (spread over the presets); `LB_TRANSCRIPT_CASES` overrides.
fn cases() -> u64 {
    std::env::var("LB_TRANSCRIPT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

/// One random balance: the runqueues (written into `sim`), `sgc->imbalance` per
/// (level, id) as the model indexes it, the balancing CPU, its level, the idle type,
/// the CPUs a redo excluded.
struct Draw {
    rqs: Vec<Rq>,
    sgc_imbalance: Vec<bool>,
    dst: u32,
    li: usize,
    idle: IdleType,
    excluded: Vec<u32>,
}

/// Draws a state onto `sim`'s runqueues. A third of the states run hot (every CPU
/// near full util, so groups are fully busy or overloaded at any load); a quarter
/// take their loads and utils from a few values, so that groups tie.
fn draw(sim: &mut Simulator, r: &mut Rng) -> Draw {
    let n = sim.state.rqs.len();
    let mut d = |m: u64| r.below(m);
    let busy_pct = d(101);
    let hot = d(3) == 0;
    let few = d(4) == 0;
    let scale = 1 + d(1400);
    let mut rqs = Vec::with_capacity(n);
    for c in 0..n {
        let cap = sim.state.rqs[c].capacity;
        let mut nr = if d(100) < busy_pct { 1 } else { 0 };
        if nr > 0 && d(3) == 0 {
            nr += d(5) as u32;
        }
        let (load, util) = if few {
            let v = [0, 512, 1024, 2048];
            (
                v[d(4) as usize] * u64::from(nr.max(d(2) as u32)),
                v[d(3) as usize],
            )
        } else if nr > 0 {
            let util = if hot { 900 + d(125) } else { d(cap + 1) };
            (d(scale) * u64::from(nr), util)
        } else {
            let util = if hot { 900 + d(125) } else { d(2) * d(300) };
            (d(3) * d(200), util)
        };
        let curr_is_idle = match d(32) {
            0 => nr > 0,
            1 => false,
            _ => nr == 0,
        };
        let rq = Rq {
            curr_is_idle,
            nr_running: nr,
            h_nr_running: nr,
            ttwu_pending: d(16) == 0,
            load_avg: load,
            // v6.12's delayed tasks count in load_avg, not in runnable_avg: some
            // runqueues run below their load (before 6.12 the two are one signal).
            runnable_avg: if d(4) == 0 { load - d(load + 1) } else { load },
            util_avg: util.min(cap),
            util_est: 0,
            cpu_capacity: cap,
            arch_capacity: cap,
            misfit_task_load: 0,
        };
        let m = &mut sim.state.rqs[c];
        (m.curr_is_idle, m.nr_running, m.ttwu_pending) = (rq.curr_is_idle, nr, rq.ttwu_pending);
        (m.load_avg, m.runnable_avg, m.util_avg) = (rq.load_avg, rq.runnable_avg, rq.util_avg);
        rqs.push(rq);
    }
    sim.resync_rq_sums();
    let imb_odds = if d(4) == 0 { 8 } else { 0 };
    let sgc_imbalance: Vec<bool> = (0..sim.balance.sgc_imbalance.len())
        .map(|_| imb_odds > 0 && d(imb_odds) == 0)
        .collect();
    sim.balance.sgc_imbalance.clone_from(&sgc_imbalance);
    let dst = d(n as u64) as u32;
    let li = d(sim.balance.levels[dst as usize].len() as u64) as usize;
    let idle = [
        IdleType::CpuNotIdle,
        IdleType::CpuIdle,
        IdleType::CpuNewlyIdle,
    ][d(3) as usize];
    if idle != IdleType::CpuNotIdle && d(4) != 0 {
        // A CPU balancing as idle usually is.
        let m = &mut sim.state.rqs[dst as usize];
        (m.curr_is_idle, m.nr_running, m.load_avg, m.util_avg) = (true, 0, 0, 0);
        m.runnable_avg = 0;
        (rqs[dst as usize].curr_is_idle, rqs[dst as usize].nr_running) = (true, 0);
        (rqs[dst as usize].h_nr_running, rqs[dst as usize].load_avg) = (0, 0);
        (rqs[dst as usize].runnable_avg, rqs[dst as usize].util_avg) = (0, 0);
        sim.resync_rq_sums();
    }
    let span = &sim.env.domains.cpu(CpuId(dst)).domains[li].span;
    let mut excluded = Vec::new();
    if d(8) == 0 {
        for _ in 0..1 + d(2) {
            let c = d(n as u64) as u32;
            if c != dst && span.test_cpu(CpuId(c)) && !excluded.contains(&c) {
                excluded.push(c);
            }
        }
    }
    Draw {
        rqs,
        sgc_imbalance,
        dst,
        li,
        idle,
        excluded,
    }
}

/// What a balance decided, on either side, groups by their index in `sd->groups`.
#[derive(Debug, PartialEq)]
struct Verdict {
    local: Stats,
    /// update_sd_lb_stats()'s pick, whatever find_busiest_group() then decides.
    picked: Option<(usize, Stats)>,
    prefer_sibling: bool,
    /// find_busiest_group()'s busiest group, then its migration type, imbalance and
    /// find_busiest_queue()'s runqueue.
    busiest: Option<(usize, u8, i64, Option<u32>)>,
    rd_overload: Option<bool>,
    /// should_we_balance(): this CPU balances this domain.
    balances: bool,
}

/// The statistics both sides keep (the model has no `sum_h_nr_running`: CFS only).
#[derive(Debug, PartialEq)]
struct Stats {
    group_type: u8,
    load: u64,
    util: u64,
    runnable: u64,
    capacity: u64,
    nr: u32,
    idle_cpus: u32,
    weight: u32,
    avg_load: u64,
}

fn of_kernel(s: &Sgs) -> Stats {
    Stats {
        group_type: s.group_type,
        load: s.group_load,
        util: s.group_util,
        runnable: s.group_runnable,
        capacity: s.group_capacity,
        nr: s.sum_nr_running,
        idle_cpus: s.idle_cpus,
        weight: s.group_weight,
        avg_load: s.avg_load,
    }
}

fn of_model(s: &SgStats) -> Stats {
    let group_type = match s.group_type {
        GroupType::HasSpare => kernel::HAS_SPARE,
        GroupType::FullyBusy => kernel::FULLY_BUSY,
        GroupType::MisfitTask => kernel::MISFIT_TASK,
        GroupType::SmtBalance => kernel::SMT_BALANCE,
        GroupType::Imbalanced => kernel::IMBALANCED,
        GroupType::Overloaded => kernel::OVERLOADED,
    };
    Stats {
        group_type,
        load: s.group_load,
        util: s.group_util,
        runnable: s.group_runnable,
        capacity: s.group_capacity,
        nr: s.sum_nr_running,
        idle_cpus: s.idle_cpus,
        weight: s.group_weight,
        avg_load: s.avg_load,
    }
}

fn migration(m: MigrationType) -> u8 {
    match m {
        MigrationType::Load => kernel::MIGRATE_LOAD,
        MigrationType::Util => kernel::MIGRATE_UTIL,
        MigrationType::Task => kernel::MIGRATE_TASK,
    }
}

/// The transcription's verdict on the drawn state.
fn kernel_verdict(sim: &Simulator, fair: Fair, s: &Draw) -> Verdict {
    let cd = sim.env.domains.cpu(CpuId(s.dst));
    let sd = &cd.domains[s.li];
    let n = sim.state.rqs.len();
    let mut cpus = sd.span.clone();
    for &c in &s.excluded {
        cpus.clear_cpu(CpuId(c));
    }
    // sg->sgc: one per (topology level, group id), as the model indexes it.
    let imb = |g: &crate::sched_domain::SchedGroup| s.sgc_imbalance[sd.tl * n + g.id.idx()];
    // cpu_smt_mask(): the span of the CPU's SMT domain, else the CPU alone.
    let smt_mask = |c: u32| match sim.env.domains.cpu(CpuId(c)).domains.first() {
        Some(d) if d.flags.contains(SdFlags::SHARE_CPUCAPACITY) => d.span.clone(),
        _ => crate::cpumask::CpuMask::of(n as u32, CpuId(c)),
    };
    let mut env = Env {
        fair,
        sd,
        has_parent: s.li + 1 < cd.domains.len(),
        dst_cpu: s.dst,
        idle: s.idle,
        cpus,
        imbalance: 0,
        migration_type: kernel::MIGRATE_LOAD,
        fbq_type: 2,
        rqs: &s.rqs,
        sgc_imbalance: &imb,
        rd_overload: None,
        smt_mask: &smt_mask,
    };
    let balances = env.should_we_balance();
    let (busiest, sds) = env.find_busiest_group();
    let busiest = busiest.map(|g| {
        (
            g,
            env.migration_type,
            env.imbalance,
            env.find_busiest_queue(g),
        )
    });
    Verdict {
        local: of_kernel(&sds.local_stat),
        picked: sds.busiest.map(|g| (g, of_kernel(&sds.busiest_stat))),
        prefer_sibling: sds.prefer_sibling != 0,
        busiest,
        rd_overload: env.rd_overload,
        balances,
    }
}

/// The model's verdict on the same state; its group indices mapped to `sd->groups`'.
fn model_verdict(sim: &mut Simulator, s: &Draw) -> Verdict {
    let idle = match s.idle {
        IdleType::CpuNotIdle => CpuIdle::NotIdle,
        IdleType::CpuIdle => CpuIdle::Idle,
        IdleType::CpuNewlyIdle => CpuIdle::NewlyIdle,
    };
    let sd = &sim.env.domains.cpu(CpuId(s.dst)).domains[s.li];
    let lv = &sim.balance.levels[s.dst as usize][s.li];
    assert_eq!(lv.groups.len(), sd.groups.len(), "every CPU is online");
    let index: Vec<usize> = lv
        .groups
        .iter()
        .map(|g| {
            sd.groups
                .iter()
                .position(|k| k.span.iter().map(|c| c.0).eq(g.cpus.iter().copied()))
                .expect("the model's group is one of the domain's")
        })
        .collect();
    let top = lv.parent_sgc.is_none();
    let mut env = LbEnv::new(s.dst, s.dst, s.li, idle);
    env.excluded.clone_from(&s.excluded);
    let balances = sim.should_we_balance(&env);
    let sds = sim.update_sd_lb_stats(&env);
    sim.balance.overload = !sim.balance.overload;
    let gi = sim.find_busiest_group(&mut env);
    let busiest = gi.map(|g| {
        let q = sim.find_busiest_queue(&env, g);
        (index[g], migration(env.migration_type), env.imbalance, q)
    });
    Verdict {
        local: of_model(&sds.local),
        picked: sds.busiest.map(|g| (index[g], of_model(&sds.busiest_stat))),
        prefer_sibling: sds.prefer_sibling,
        busiest,
        rd_overload: top.then_some(sim.balance.overload),
        balances,
    }
}

/// The simulator of each preset and release, every CPU in the run.
fn sims() -> Vec<Vec<Simulator>> {
    PRESETS
        .iter()
        .map(|p| {
            let n = presets::machine(p).unwrap().nr_cpus();
            RELEASES
                .iter()
                .map(|(rel, _)| {
                    let sim = hogs(p, rel, 0..n, 1, 10);
                    for cd in (0..n).map(|c| sim.env.domains.cpu(CpuId(c))) {
                        for sd in &cd.domains {
                            let asym = SdFlags::ASYM_CPUCAPACITY;
                            assert!(!sd.flags.contains(asym), "{p}: misfit is left out");
                        }
                    }
                    sim
                })
                .collect()
        })
        .collect()
}

/// How often the transcription's verdicts fell each way: balanced, then busiest
/// found per migration type (load, util, task); update_sd_lb_stats()'s pick by
/// group type (`enum group_type`); prefer_sibling with a pick; a NUMA domain
/// unbalanced; should_we_balance() true.
#[derive(Debug, Default)]
struct Tally {
    outcome: [u64; 4],
    picked: [u64; 7],
    prefer_sibling: u64,
    numa_unbalanced: u64,
    balances: u64,
}

/// Runs `cases()` states per release, spread over the presets; returns the first
/// disagreements and the tallies.
fn compare(sims: &mut [Vec<Simulator>], seed: u64) -> (Vec<String>, Tally) {
    let mut bad = Vec::new();
    let mut tally = Tally::default();
    for (ri, &(rel, fair)) in RELEASES.iter().enumerate() {
        for case in 0..cases() {
            let pi = (case % PRESETS.len() as u64) as usize;
            let sim = &mut sims[pi][ri];
            let mut r = Rng::new(seed ^ (case << 8) ^ ri as u64);
            let s = draw(sim, &mut r);
            let want = kernel_verdict(sim, fair, &s);
            let got = model_verdict(sim, &s);
            match &want.busiest {
                Some((_, m, _, _)) => tally.outcome[1 + *m as usize] += 1,
                None => tally.outcome[0] += 1,
            }
            if let Some((_, st)) = &want.picked {
                tally.picked[st.group_type as usize] += 1;
                tally.prefer_sibling += u64::from(want.prefer_sibling);
            }
            let sd = &sim.env.domains.cpu(CpuId(s.dst)).domains[s.li];
            tally.balances += u64::from(want.balances);
            if sd.flags.contains(SdFlags::NUMA) && want.busiest.is_some() {
                tally.numa_unbalanced += 1;
            }
            if want != got && bad.len() < 5 {
                bad.push(format!(
                    "{rel} {} case {case} dst {} level {} {:?} excluded {:?}\n kernel {want:?}\n model  {got:?}",
                    PRESETS[pi], s.dst, s.li, s.idle, s.excluded
                ));
            }
        }
    }
    (bad, tally)
}

/// The model's find_busiest_group(), find_busiest_queue() and the statistics under
/// them agree with the transcription on every drawn state, in each release.
#[test]
fn the_balancer_agrees_with_a_transcription_of_fair_c() {
    let mut sims = sims();
    let (bad, tally) = compare(&mut sims, 0x5eed_0038);
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
    // The states reach every outcome: balanced, and each migration type.
    // The states reach every outcome: balanced, each migration type; every group
    // type but misfit and asym packing picked; prefer_sibling; NUMA imbalances.
    let t = &tally;
    assert!(t.outcome.iter().all(|&n| n > 50), "{t:?}");
    let picked = [kernel::HAS_SPARE, kernel::FULLY_BUSY, kernel::SMT_BALANCE];
    let picked = picked
        .into_iter()
        .chain([kernel::IMBALANCED, kernel::OVERLOADED]);
    assert!(
        picked.map(|g| t.picked[g as usize]).all(|n| n > 50),
        "{t:?}"
    );
    assert!(t.prefer_sibling > 50 && t.numa_unbalanced > 50, "{t:?}");
    let states = t.outcome.iter().sum::<u64>();
    assert!(t.balances > 50 && t.balances + 50 < states, "{t:?}");
    eprintln!("{t:?}");
}
