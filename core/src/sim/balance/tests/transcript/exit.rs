//! `load_balance()` after `find_busiest_queue()`, fair.c v6.8 11308-11529, transcribed
//! in C's types (`sd->balance_interval` and `nr_balance_failed` `unsigned int`,
//! `min_interval` / `max_interval` `unsigned long`), and held against the model's
//! lb/exit.rs (`lb_exit()`, `all_pinned_redo()`, `marks_parent_imbalance()`): the
//! parent's `sgc->imbalance` (11401-11406, 11494-11499), the redo after
//! `LBF_ALL_PINNED` (11409-11425) on every preset's real domains, the failure count
//! (11428-11437), `need_active_balance()` (11163-11190) with
//! `imbalanced_active_balance()` (11146-11161), the active balance's start
//! (11439-11476), and the interval: reset (11481-11484) or doubled up to
//! `max_interval`, or to `MAX_PINNED_INTERVAL` when all pinned (11511-11527,
//! `out_one_pinned` included). What `detach_tasks()` did is drawn (detach.rs holds
//! it against the kernel separately).
//!
//! Releases: v6.5 (`load_balance()` 10806-11070, `need_active_balance()` 10733-10760)
//! differs only in `preempt_disable()` around the stopper's start; v6.12.19
//! (`sched_balance_rq()` 11750-12023) adds `migrate_misfit` to the failure count's
//! and the interval's exceptions, and `asym_active_balance()` loses its
//! `SD_ASYM_PACKING` test: no misfit and no asym packing here, so the same
//! decisions.
//!
//! Left out, as the model leaves them out: `asym_active_balance()`, the reduced
//! capacity case (`check_cpu_capacity()` is false) and `migrate_misfit` of
//! `need_active_balance()`; the `LBF_DST_PINNED` retry (11380-11396); CPUs outside
//! the run (every CPU of these presets is in it). Found: the redo's test took the
//! local group's span for `dst_grpmask`, which is its balance mask; they differ on
//! Kunpeng 920-4826's NUMA levels (local group 0-47, balance mask 24-47).

use super::super::super::lb::exit::{self, Active, ExitSd, Found};
use super::super::super::DomainState;
use super::detach_kernel::{LBF_ALL_PINNED, LBF_SOME_PINNED};
use super::kernel::{IdleType, MIGRATE_LOAD, MIGRATE_TASK, MIGRATE_UTIL};
use super::*;
use crate::cpumask::CpuMask;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// `MAX_PINNED_INTERVAL`, fair.c v6.8 11261.
const MAX_PINNED_INTERVAL: u32 = 512;

/// The `struct sched_domain` fields the exits read and write, with the parent's
/// `sgc->imbalance` and busiest's `active_balance`.
#[derive(Clone, Debug, PartialEq)]
struct Sd {
    nr_balance_failed: u32,
    balance_interval: u32,
    cache_nice_tries: u32,
    min_interval: u64,
    max_interval: u64,
    /// `sd->parent` (and its `groups->sgc->imbalance`).
    parent_imbalance: Option<i32>,
    busiest_active_balance: i32,
}

/// How the search ended: `goto out_balanced`, or a busiest runqueue with what
/// `detach_tasks()` left (`busiest->nr_running`, `ld_moved`, `env.flags`,
/// `env.imbalance`), whether the redo is possible (`cpus` not within the
/// destination group), and whether busiest's current task may run here.
#[derive(Clone, Copy, Debug)]
enum Search {
    Balanced {
        /// `env.flags` from an earlier pass (a redo keeps LBF_ALL_PINNED).
        flags: u32,
    },
    Busiest {
        nr_running: u32,
        ld_moved: i32,
        flags: u32,
        imbalance: i64,
        redo: bool,
        curr_allowed: bool,
    },
}

/// What happened besides `Sd`: `goto redo`, the active balance started
/// (`stop_one_cpu_nowait()`), `ld_moved` returned.
#[derive(Debug, PartialEq)]
struct After {
    redo: bool,
    stopper: bool,
    /// `need_active_balance()` but busiest's current task may not run here.
    one_pinned: bool,
    ld_moved: i32,
}

/// The kernel's load_balance() from 11315, given the search's result.
fn kernel_exit(sd: &mut Sd, idle: IdleType, migration_type: u8, search: Search) -> After {
    let mut active_balance = 0;
    let mut after = After {
        redo: false,
        stopper: false,
        one_pinned: false,
        ld_moved: 0,
    };
    let mut flags;
    let ld_moved;
    let curr_allowed;
    match search {
        Search::Balanced { flags: f } => {
            flags = f;
            return out_balanced(sd, idle, flags, after);
        }
        Search::Busiest {
            nr_running,
            ld_moved: moved,
            flags: f,
            imbalance: imb,
            redo,
            curr_allowed: ok,
        } => {
            // env.flags |= LBF_ALL_PINNED (11317): kept when nothing is tried.
            flags = f | LBF_ALL_PINNED;
            ld_moved = if nr_running > 1 { moved } else { 0 };
            curr_allowed = ok;
            if nr_running > 1 {
                flags = f;
                if let Some(p) = sd.parent_imbalance.as_mut() {
                    if flags & LBF_SOME_PINNED != 0 && imb > 0 {
                        *p = 1;
                    }
                }
                if flags & LBF_ALL_PINNED != 0 {
                    // __cpumask_clear_cpu(cpu_of(busiest), cpus)
                    if redo {
                        after.redo = true;
                        return after;
                    }
                    // goto out_all_pinned
                    sd.nr_balance_failed = 0;
                    return out_one_pinned(sd, idle, flags, after);
                }
            }
        }
    }
    if ld_moved == 0 {
        if idle != IdleType::CpuNewlyIdle {
            sd.nr_balance_failed += 1;
        }
        if need_active_balance(sd, migration_type) {
            if !curr_allowed {
                after.one_pinned = true;
                return out_one_pinned(sd, idle, flags, after);
            }
            // env.flags &= ~LBF_ALL_PINNED (11455): not read again.
            if sd.busiest_active_balance == 0 {
                sd.busiest_active_balance = 1;
                active_balance = 1;
            }
            if active_balance != 0 {
                after.stopper = true;
            }
        }
    } else {
        sd.nr_balance_failed = 0;
    }
    if active_balance == 0 || need_active_balance(sd, migration_type) {
        sd.balance_interval = sd.min_interval as u32;
    }
    after.ld_moved = ld_moved;
    after
}

/// need_active_balance(), 11163-11190: asym_active_balance() false (no
/// SD_ASYM_PACKING here), imbalanced_active_balance(), the reduced capacity case
/// false (check_cpu_capacity()), no migrate_misfit.
fn need_active_balance(sd: &Sd, migration_type: u8) -> bool {
    migration_type == MIGRATE_TASK && sd.nr_balance_failed > sd.cache_nice_tries + 2
}

/// out_balanced: 11488-11509, then out_one_pinned.
fn out_balanced(sd: &mut Sd, idle: IdleType, flags: u32, after: After) -> After {
    if let Some(p) = sd.parent_imbalance.as_mut() {
        if flags & LBF_ALL_PINNED == 0 && *p != 0 {
            *p = 0;
        }
    }
    // out_all_pinned:
    sd.nr_balance_failed = 0;
    out_one_pinned(sd, idle, flags, after)
}

/// out_one_pinned: 11511-11529.
fn out_one_pinned(sd: &mut Sd, idle: IdleType, flags: u32, after: After) -> After {
    // ld_moved = 0
    if idle == IdleType::CpuNewlyIdle {
        return after;
    }
    if (flags & LBF_ALL_PINNED != 0 && sd.balance_interval < MAX_PINNED_INTERVAL)
        || u64::from(sd.balance_interval) < sd.max_interval
    {
        sd.balance_interval *= 2;
    }
    After {
        ld_moved: 0,
        ..after
    }
}

/// The model's exits on the same state, as load_balance() calls them.
fn model_exit(sd: &mut Sd, idle: IdleType, migration_type: u8, search: Search) -> After {
    let idle = match idle {
        IdleType::CpuNotIdle => CpuIdle::NotIdle,
        IdleType::CpuIdle => CpuIdle::Idle,
        IdleType::CpuNewlyIdle => CpuIdle::NewlyIdle,
    };
    let mt = match migration_type {
        MIGRATE_LOAD => MigrationType::Load,
        MIGRATE_UTIL => MigrationType::Util,
        _ => MigrationType::Task,
    };
    let mut d = DomainState {
        balance_interval: u64::from(sd.balance_interval),
        nr_balance_failed: sd.nr_balance_failed,
        last_balance: 0,
        max_newidle_lb_cost: 0,
        last_decay_max_lb_cost: 0,
    };
    let xsd = ExitSd {
        cache_nice_tries: sd.cache_nice_tries,
        min_interval: sd.min_interval,
        max_interval: sd.max_interval,
        has_parent: sd.parent_imbalance.is_some(),
    };
    let (found, all_pinned, curr_allowed) = match search {
        Search::Balanced { flags } => (Found::Balanced, flags & LBF_ALL_PINNED != 0, false),
        Search::Busiest {
            nr_running,
            ld_moved,
            flags,
            imbalance,
            redo,
            curr_allowed,
        } => {
            let mut all_pinned = true;
            if nr_running > 1 {
                all_pinned = flags & LBF_ALL_PINNED != 0;
                let some = flags & LBF_SOME_PINNED != 0;
                if let Some(p) = sd.parent_imbalance.as_mut() {
                    if exit::marks_parent_imbalance(some, imbalance) {
                        *p = 1;
                    }
                }
                if all_pinned && redo {
                    return After {
                        redo: true,
                        stopper: false,
                        one_pinned: false,
                        ld_moved: 0,
                    };
                }
            }
            let found = if nr_running > 1 && all_pinned {
                Found::AllPinned
            } else {
                Found::Busiest {
                    moved: nr_running > 1 && ld_moved > 0,
                }
            };
            (found, all_pinned, curr_allowed)
        }
    };
    let mut active = sd.busiest_active_balance != 0;
    let out = exit::lb_exit(&mut d, xsd, found, idle, mt, all_pinned, || {
        (curr_allowed, active)
    });
    if out.clear_parent_imbalance {
        sd.parent_imbalance = Some(0);
    }
    if out.active == Active::Start {
        active = true;
    }
    sd.busiest_active_balance = i32::from(active);
    sd.nr_balance_failed = d.nr_balance_failed;
    sd.balance_interval = d.balance_interval as u32;
    let ld_moved = match (found, search) {
        (Found::Busiest { moved: true }, Search::Busiest { ld_moved, .. }) => ld_moved,
        _ => 0,
    };
    After {
        redo: false,
        stopper: out.active == Active::Start,
        one_pinned: out.active == Active::OnePinned,
        ld_moved,
    }
}

/// The exits agree with the transcription on drawn searches and domain states;
/// every outcome is reached.
#[test]
fn load_balances_exits_agree_with_a_transcription_of_fair_c() {
    let mut bad = Vec::new();
    // redo, stopper, out_one_pinned, interval reset, doubled, unchanged (not
    // newidle), doubled past max while all pinned, parent marked, parent cleared,
    // failure counted.
    let mut reach = [0u64; 10];
    for case in 0..30_000u64 {
        let mut r = Rng::new(0x5eed_e817 ^ (case << 8));
        let mut d = |m: u64| r.below(m);
        let min = [1u64, 2, 4, 8, 64][d(5) as usize];
        let max = min * [2u64, 4, 64][d(3) as usize];
        let sd = Sd {
            nr_balance_failed: [0, 1, 2, 3, 4, 5][d(6) as usize],
            balance_interval: (min << d(8)) as u32,
            cache_nice_tries: [0, 1, 2][d(3) as usize],
            min_interval: min,
            max_interval: max,
            parent_imbalance: [None, Some(0), Some(1)][d(3) as usize],
            busiest_active_balance: i32::from(d(4) == 0),
        };
        let idle = [
            IdleType::CpuNotIdle,
            IdleType::CpuIdle,
            IdleType::CpuNewlyIdle,
        ][d(3) as usize];
        let mt = [MIGRATE_LOAD, MIGRATE_UTIL, MIGRATE_TASK, MIGRATE_TASK][d(4) as usize];
        let search = if d(4) == 0 {
            Search::Balanced {
                flags: if d(4) == 0 { LBF_ALL_PINNED } else { 0 },
            }
        } else {
            let ld_moved = if d(3) == 0 { 1 + d(3) as i32 } else { 0 };
            let all_pinned = ld_moved == 0 && d(3) == 0;
            let some = d(3) == 0;
            Search::Busiest {
                nr_running: [0, 1, 2, 3, 5][d(5) as usize],
                ld_moved,
                flags: (if all_pinned { LBF_ALL_PINNED } else { 0 })
                    | (if some { LBF_SOME_PINNED } else { 0 }),
                imbalance: [-3, 0, 1, 700][d(4) as usize],
                redo: d(2) == 0,
                curr_allowed: d(4) != 0,
            }
        };
        let (mut k, mut m) = (sd.clone(), sd.clone());
        let want = kernel_exit(&mut k, idle, mt, search);
        let got = model_exit(&mut m, idle, mt, search);
        if (&want, &k) != (&got, &m) && bad.len() < 5 {
            bad.push(format!(
                "case {case}: {sd:?} {idle:?} type {mt} {search:?}\n kernel {want:?} {k:?}\n model  {got:?} {m:?}"
            ));
        }
        let flags = match search {
            Search::Balanced { flags } | Search::Busiest { flags, .. } => flags,
        };
        let hit = [
            want.redo,
            want.stopper,
            want.one_pinned,
            k.balance_interval < sd.balance_interval,
            k.balance_interval > sd.balance_interval,
            !want.redo
                && idle != IdleType::CpuNewlyIdle
                && k.balance_interval == sd.balance_interval,
            u64::from(sd.balance_interval) >= sd.max_interval
                && k.balance_interval > sd.balance_interval
                && flags & LBF_ALL_PINNED != 0,
            sd.parent_imbalance == Some(0) && k.parent_imbalance == Some(1),
            sd.parent_imbalance == Some(1) && k.parent_imbalance == Some(0),
            k.nr_balance_failed > sd.nr_balance_failed,
        ];
        for (n, h) in reach.iter_mut().zip(hit) {
            *n += u64::from(h);
        }
    }
    assert!(bad.is_empty(), "disagreements:\n{}", bad.join("\n"));
    assert!(reach.iter().all(|&n| n > 50), "{reach:?}");
    eprintln!("{reach:?}");
}

/// The redo's test, "!cpumask_subset(cpus, env.dst_grpmask)" (11419) with `cpus` the
/// domain's span less the busiest CPUs tried (every CPU active here) and
/// `dst_grpmask` `group_balance_mask(sd->groups)` (11278), on every preset's real
/// domains, against the model's `all_pinned_redo()` on its levels.
#[test]
fn the_all_pinned_redo_agrees_with_fair_c_on_every_preset() {
    let sims = sims();
    let mut bad = Vec::new();
    let (mut redo, mut stop) = (0u64, 0u64);
    for (pi, per_release) in sims.iter().enumerate() {
        let sim = &per_release[1];
        let n = sim.state.rqs.len() as u32;
        let mut r = Rng::new(0x5eed_0e11 ^ pi as u64);
        for _ in 0..400 {
            let dst = r.below(u64::from(n)) as u32;
            let cd = sim.env.domains.cpu(CpuId(dst));
            let li = r.below(cd.domains.len() as u64) as usize;
            let sdk = &cd.domains[li];
            let span: Vec<u32> = sdk.span.iter().map(|c| c.0).collect();
            // Exclude a few CPUs, or every CPU outside the local group but one.
            let local = &sdk.groups[0].balance_mask;
            let mut excluded: Vec<u32> = Vec::new();
            let outside: Vec<u32> = span
                .iter()
                .copied()
                .filter(|&c| !local.test_cpu(CpuId(c)))
                .collect();
            if r.below(2) == 0 && !outside.is_empty() {
                let keep = r.below(outside.len() as u64 + 1) as usize;
                for (i, &c) in outside.iter().enumerate() {
                    if i != keep {
                        excluded.push(c);
                    }
                }
            } else {
                for _ in 0..1 + r.below(4) {
                    excluded.push(span[r.below(span.len() as u64) as usize]);
                }
            }
            let mut cpus = CpuMask::from_cpus(n, span.iter().map(|&c| CpuId(c)));
            for &c in &excluded {
                cpus.clear_cpu(CpuId(c));
            }
            let want = cpus.iter().any(|c| !local.test_cpu(c));
            let mut env = LbEnv::new(dst, dst, li, CpuIdle::Idle);
            env.excluded.clone_from(&excluded);
            let got = sim.all_pinned_redo(&env);
            if want != got && bad.len() < 5 {
                bad.push(format!(
                    "{} dst {dst} level {li} excluded {excluded:?}: kernel {want}, model {got}",
                    PRESETS[pi]
                ));
            }
            redo += u64::from(want);
            stop += u64::from(!want);
        }
    }
    assert!(bad.is_empty(), "disagreements:\n{}", bad.join("\n"));
    assert!(redo > 100 && stop > 100, "redo {redo}, stop {stop}");
}
