//! `load_balance()`'s exits, fair.c v6.8 11380-11529, as pure functions of what they
//! read: the redo after `LBF_ALL_PINNED` (11409-11425), the parent's
//! `sgc->imbalance` (11401-11406, 11494-11499), and the failure path, active balance
//! and interval tuning (11428-11529) on the domain's [`DomainState`]. lb/mod.rs
//! calls them; tests/transcript/exit.rs holds them against a transcription.

use super::super::DomainState;
use super::{CpuIdle, MigrationType};

/// `MAX_PINNED_INTERVAL` (ms), fair.c v6.8 11261.
const MAX_PINNED_INTERVAL: u64 = 512;

/// How `load_balance()` left its search for a busiest runqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum Found {
    /// `goto out_balanced`: `should_we_balance()` said no, or no busiest group or
    /// queue was found.
    Balanced,
    /// `goto out_all_pinned`: every task of the busiest runqueues was pinned away
    /// and no other runqueue is left to try.
    AllPinned,
    /// A busiest runqueue, and whether tasks moved from it (`ld_moved`).
    Busiest { moved: bool },
}

/// The domain's constants the exits read.
#[derive(Clone, Copy, Debug)]
pub(in crate::sim) struct ExitSd {
    pub cache_nice_tries: u32,
    pub min_interval: u64,
    pub max_interval: u64,
    /// `sd->parent` exists.
    pub has_parent: bool,
}

/// What the exits did besides the domain's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) struct Exit {
    /// The active balance's part: none, `out_one_pinned` (busiest's current task
    /// may not run on this CPU), already queued (`busiest->active_balance`), or
    /// started (`busiest->active_balance = 1`, `push_cpu = this_cpu`, its stopper
    /// woken).
    pub active: Active,
    /// `out_balanced` cleared the parent's `sgc->imbalance`.
    pub clear_parent_imbalance: bool,
}

/// See [`Exit::active`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum Active {
    None,
    OnePinned,
    Queued,
    Start,
}

/// `imbalanced_active_balance()` as `need_active_balance()` (11146-11190): the only
/// reason the modelled machines can have (no asym packing, no misfit, capacity
/// never reduced).
pub(in crate::sim) fn need_active_balance(
    failed: u32,
    cache_nice_tries: u32,
    migration_type: MigrationType,
) -> bool {
    migration_type == MigrationType::Task && failed > cache_nice_tries + 2
}

/// "(env.flags & LBF_SOME_PINNED) && env.imbalance > 0" (11404): the parent's
/// `sgc->imbalance` is set, "We failed to reach balance because of affinity".
pub(in crate::sim) fn marks_parent_imbalance(some_pinned: bool, imbalance: i64) -> bool {
    some_pinned && imbalance > 0
}

/// "!cpumask_subset(cpus, env.dst_grpmask)" (11419), after the busiest CPU left
/// `cpus`: another runqueue outside the destination group may still be busiest, so
/// `goto redo`. `span` is the domain's CPUs (`cpus` before any left it), `local`
/// the local group's balance mask (`group_balance_mask(sd->groups)`).
pub(in crate::sim) fn all_pinned_redo(span: &[u32], excluded: &[u32], local: &[u32]) -> bool {
    span.iter()
        .any(|c| !excluded.contains(c) && !local.contains(c))
}

/// `load_balance()`'s exits from 11428 (or `out_balanced` / `out_all_pinned`) on
/// the domain `d`: the failure count, `need_active_balance()`, the interval.
/// `busiest()` reads the busiest runqueue under its lock, only when an active
/// balance is wanted: whether its current task may run on this CPU, and
/// `busiest->active_balance`.
pub(in crate::sim) fn lb_exit(
    d: &mut DomainState,
    sd: ExitSd,
    found: Found,
    idle: CpuIdle,
    migration_type: MigrationType,
    all_pinned: bool,
    busiest: impl FnOnce() -> (bool, bool),
) -> Exit {
    let mut exit = Exit {
        active: Active::None,
        clear_parent_imbalance: false,
    };
    match found {
        Found::Busiest { moved: false } => {
            // "Increment the failure counter only on periodic balance."
            if idle != CpuIdle::NewlyIdle {
                d.nr_balance_failed += 1;
            }
            if need_active_balance(d.nr_balance_failed, sd.cache_nice_tries, migration_type) {
                let (curr_movable, active_balance) = busiest();
                if !curr_movable {
                    exit.active = Active::OnePinned;
                    tune_up_balance_interval(d, sd, idle, all_pinned);
                    return exit;
                }
                exit.active = if active_balance {
                    Active::Queued
                } else {
                    Active::Start
                };
            }
            // "if (likely(!active_balance) || need_active_balance(&env))": true
            // either way, nr_balance_failed is still above the mark.
            d.balance_interval = sd.min_interval;
        }
        Found::Busiest { moved: true } => {
            d.nr_balance_failed = 0;
            d.balance_interval = sd.min_interval;
        }
        Found::Balanced | Found::AllPinned => {
            // out_balanced: clear the parent's imbalance flag unless LBF_ALL_PINNED
            // (set on the first busiest queue found, kept across a redo).
            exit.clear_parent_imbalance = found == Found::Balanced && sd.has_parent && !all_pinned;
            // out_all_pinned:
            d.nr_balance_failed = 0;
            // out_one_pinned:
            tune_up_balance_interval(d, sd, idle, all_pinned);
        }
    }
    exit
}

/// `load_balance()`'s `out_one_pinned` tail, fair.c v6.8 11511-11527: except for
/// newidle balancing, double `sd->balance_interval` while it is below `max_interval`
/// (or, with `LBF_ALL_PINNED`, below `MAX_PINNED_INTERVAL`, 512 ms).
fn tune_up_balance_interval(d: &mut DomainState, sd: ExitSd, idle: CpuIdle, all_pinned: bool) {
    if idle == CpuIdle::NewlyIdle {
        return;
    }
    if (all_pinned && d.balance_interval < MAX_PINNED_INTERVAL)
        || d.balance_interval < sd.max_interval
    {
        d.balance_interval *= 2;
    }
}
