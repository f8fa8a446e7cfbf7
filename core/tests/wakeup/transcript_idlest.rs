//! A second, independent reading of the slow path of `select_task_rq_fair()` for a
//! fork (`WF_FORK`) and an exec (`WF_EXEC`), transcribed statement by statement from
//! kernel/sched/fair.c v6.8 and compared with the model on random states:
//! - select_task_rq_fair() (8139-8204): `sd_flag = wake_flags & 0xF` (8147); without
//!   WF_TTWU no want_affine, so the `for_each_domain()` walk keeps the highest domain of
//!   the unbroken `sd_flag` chain and calls find_idlest_cpu() (8198), else returns
//!   prev_cpu;
//! - find_idlest_cpu() (7163-7211), find_idlest_group_cpu() (7107-7161);
//! - cpu_load_without() (6905-6921), cpu_runnable_without() (6928-6943),
//!   cpu_util_without() (7747-7754) with cpu_util() (7660-7717);
//! - task_running_on_cpu() (10153-10163), idle_cpu_without() (10172-10191),
//!   update_sg_wakeup_stats() (10200-10254), group_classify() (9705-9727) with
//!   group_has_capacity() / group_is_overloaded(), update_pick_idlest() (10256-10306),
//!   find_idlest_group() (10315-10475), adjust_numa_imbalance() (1329-1345);
//! - sched.h's sched_core_cookie_match() (1299-1320) and sched_group_cookie_match()
//!   (1322-1337); core.c's select_task_rq() wrapper on fork (4917), the class hook
//!   alone on exec (sched_exec(), 5546-5560).
//!
//! Releases, by `diff` of the same functions:
//! - v6.12.19 (8661-8723, 7525-7630, 10659-10979): only the names change
//!   (`sched_balance_find_dst_cpu()`, `_group()`, `_group_cpu()`); no switch.
//! - v5.12.9 (6773-6823, 5918-6010, 8690-8990): no core scheduling (no cookie test in
//!   find_idlest_group() nor find_idlest_group_cpu()); no group_smt_balance;
//!   group_misfit_task is `!task_fits_capacity(p, group->sgc->max_capacity)` after the
//!   loop (the same answer: the max capacity fits iff some CPU's does); and the NUMA
//!   group_has_spare rule is `if (allow_numa_imbalance(local_sgs.sum_nr_running,
//!   sd->span_weight)) return NULL;` with `dst_running < (dst_weight >> 2)` (8845-8848,
//!   8982) instead of imb_numa_nr and adjust_numa_imbalance(). Switch `v5_12`.
//!
//! What the wake-up state does not split, read the way the model reads it (so both
//! sides take the same inputs): `runnable_avg` is the load (`RqState` has none, and
//! p's runnable is its load); `util_avg` is already cpu_util()'s max with util_est,
//! clamped, so cpu_util_without() takes `task_util_est(p)` off it with lsub_positive().
//! `sg_imbalanced()` is false (no `sgc->imbalance` in the state). No preset has
//! SD_ASYM_CPUCAPACITY or SD_BALANCE_WAKE: the misfit and wake-up slow-path cases are
//! the hand-built ones of `idlest.rs`.

use proptest::prelude::*;
use schedlab_core::cpumask::CpuId;
use schedlab_core::sched_domain::{SchedDomain, SchedGroup, SdFlags};
use schedlab_core::wakeup::{
    select_task_rq_new, PathOnly, SchedState, TaskState, WakeEnv, WakeFlags, WakePath, Waker,
};

use super::transcript_68::K;
use super::{build_envs, cases_or, common, random_state, PRESETS};

const SETS: [&str; 3] = ["6.8", "6.12", "5.12"];

fn env_of(preset: usize, set: usize) -> &'static WakeEnv {
    use std::sync::OnceLock;
    static ENVS: OnceLock<Vec<Vec<WakeEnv>>> = OnceLock::new();
    &ENVS.get_or_init(|| build_envs(&SETS))[preset][set]
}

/// `enum group_type` (v6.8 order; v5.12 has no group_smt_balance, same order).
const HAS_SPARE: u8 = 0;
const FULLY_BUSY: u8 = 1;
const MISFIT_TASK: u8 = 2;
const SMT_BALANCE: u8 = 3;
const ASYM_PACKING: u8 = 4;
const IMBALANCED: u8 = 5;
const OVERLOADED: u8 = 6;

/// `struct sg_lb_stats`, the fields the slow path reads, in C's types.
#[derive(Clone, Copy, Default)]
struct Sgs {
    avg_load: u64,
    group_load: u64,
    group_util: u64,
    group_runnable: u64,
    group_capacity: u64,
    sum_nr_running: u32,
    idle_cpus: u32,
    group_weight: u32,
    group_type: u8,
    group_misfit_task_load: u64,
}

/// One fork or exec as the slow path reads it.
struct Slow<'a> {
    k: K<'a>,
    /// `p->se.avg.last_update_time != 0`: not a new task (exec).
    last_update_time: bool,
    /// `task_on_rq_queued(p)`: on exec p is current, so queued on task_cpu(p).
    queued: bool,
    v5_12: bool,
}

/// `lsub_positive(&x, y)` on an `unsigned int` x: y converted to x's type.
fn lsub_u32(x: u32, y: u64) -> u32 {
    x.saturating_sub(y as u32)
}

impl Slow<'_> {
    fn task_cpu(&self) -> u32 {
        self.k.p.prev_cpu.0
    }
    fn sched_core_enabled(&self) -> bool {
        !self.v5_12 && self.k.s.core_sched_enabled
    }
    /// sched_core_cookie_match(rq, p): an idle core, or the core's cookie is p's.
    fn sched_core_cookie_match(&self, c: u32) -> bool {
        if !self.sched_core_enabled() {
            return true;
        }
        let idle_core = self.k.smt(c).iter().all(|&s| self.k.available_idle_cpu(s));
        idle_core || self.k.rq(c).core_cookie == self.k.p.cookie
    }
    fn sched_group_cookie_match(&self, g: &SchedGroup) -> bool {
        if !self.sched_core_enabled() {
            return true;
        }
        g.span
            .and(&self.k.p.allowed)
            .iter()
            .any(|c| self.sched_core_cookie_match(c.0))
    }
    fn contributes(&self, c: u32) -> bool {
        c == self.task_cpu() && self.last_update_time
    }
    fn cpu_load_without(&self, c: u32) -> u64 {
        let rq = self.k.rq(c);
        if !self.contributes(c) {
            return rq.load_avg;
        }
        let load = rq.load_avg as u32; // unsigned int load = cfs_rq->avg.load_avg
        u64::from(lsub_u32(load, self.k.p.load))
    }
    fn cpu_runnable_without(&self, c: u32) -> u64 {
        // The state's runnable_avg is its load_avg, p's its load.
        self.cpu_load_without(c)
    }
    fn cpu_util_without(&self, c: u32) -> u64 {
        let util = self.k.rq(c).util_avg;
        if !self.contributes(c) {
            return util;
        }
        util.saturating_sub(self.k.p.util)
    }
    fn task_running_on_cpu(&self, c: u32) -> u32 {
        if !self.contributes(c) {
            return 0;
        }
        u32::from(self.queued)
    }
    fn idle_cpu_without(&self, c: u32) -> bool {
        let rq = self.k.rq(c);
        // rq->curr != rq->idle && rq->curr != p: p is curr on task_cpu(p) on exec.
        let curr_is_p = self.queued && c == self.task_cpu();
        if !rq.curr_is_idle && !curr_is_p {
            return false;
        }
        !rq.ttwu_pending
    }

    fn update_sg_wakeup_stats(&self, sd: &SchedDomain, g: &SchedGroup) -> Sgs {
        let mut sgs = Sgs::default();
        let asym = sd.flags.contains(SdFlags::ASYM_CPUCAPACITY);
        if asym && !self.v5_12 {
            sgs.group_misfit_task_load = 1;
        }
        let mut max_capacity = 0;
        for i in g.span.iter().map(|c| c.0) {
            let rq = self.k.rq(i);
            sgs.group_load += self.cpu_load_without(i);
            sgs.group_util += self.cpu_util_without(i);
            sgs.group_runnable += self.cpu_runnable_without(i);
            let local = self.task_running_on_cpu(i);
            // int nr_running = rq->nr_running - local;
            let nr_running = rq.nr_running.wrapping_sub(local) as i32;
            sgs.sum_nr_running = sgs.sum_nr_running.wrapping_add(nr_running as u32);
            if nr_running == 0 && self.idle_cpu_without(i) {
                sgs.idle_cpus += 1;
            }
            // task_fits_cpu(p, i) without uclamp; a new task's util is 0.
            let util = if self.last_update_time {
                self.k.p.util
            } else {
                0
            };
            let fits = util.wrapping_mul(1280) < rq.capacity.wrapping_mul(1024);
            if asym && sgs.group_misfit_task_load != 0 && fits {
                sgs.group_misfit_task_load = 0;
            }
            max_capacity = max_capacity.max(rq.capacity);
        }
        if asym && self.v5_12 {
            let util = if self.last_update_time {
                self.k.p.util
            } else {
                0
            };
            if util.wrapping_mul(1280) >= max_capacity.wrapping_mul(1024) {
                sgs.group_misfit_task_load = 1;
            }
        }
        sgs.group_capacity = g.capacity;
        sgs.group_weight = g.span.weight();
        sgs.group_type = group_classify(u64::from(sd.imbalance_pct), &sgs);
        if sgs.group_type == FULLY_BUSY || sgs.group_type == OVERLOADED {
            sgs.avg_load = sgs.group_load * 1024 / sgs.group_capacity;
        }
        sgs
    }

    /// find_idlest_group(sd, p, this_cpu). `max_cap` is `sgc->max_capacity`.
    fn find_idlest_group<'g>(&self, sd: &'g SchedDomain, this: u32) -> Option<&'g SchedGroup> {
        let max_cap = |g: &SchedGroup| g.span.iter().map(|c| self.k.rq(c.0).capacity).max();
        let mut idlest: Option<&SchedGroup> = None;
        let mut local: Option<&SchedGroup> = None;
        let mut local_sgs = Sgs::default();
        let mut idlest_sgs = Sgs {
            avg_load: u64::from(u32::MAX),
            group_type: OVERLOADED,
            ..Sgs::default()
        };
        for group in &sd.groups {
            if !group.span.intersects(&self.k.p.allowed) {
                continue;
            }
            if !self.sched_group_cookie_match(group) {
                continue;
            }
            let local_group = group.span.test_cpu(CpuId(this));
            let sgs = self.update_sg_wakeup_stats(sd, group);
            if local_group {
                local_sgs = sgs;
                local = Some(group);
            }
            // update_pick_idlest(idlest, &idlest_sgs, group, sgs)
            let pick = || {
                if sgs.group_type < idlest_sgs.group_type {
                    return true;
                }
                if sgs.group_type > idlest_sgs.group_type {
                    return false;
                }
                match sgs.group_type {
                    OVERLOADED | FULLY_BUSY => idlest_sgs.avg_load > sgs.avg_load,
                    IMBALANCED | ASYM_PACKING | SMT_BALANCE => false,
                    MISFIT_TASK => max_cap(idlest.unwrap()) < max_cap(group),
                    _ => {
                        if idlest_sgs.idle_cpus > sgs.idle_cpus {
                            return false;
                        }
                        !(idlest_sgs.idle_cpus == sgs.idle_cpus
                            && idlest_sgs.group_util <= sgs.group_util)
                    }
                }
            };
            if !local_group && pick() {
                idlest = Some(group);
                idlest_sgs = sgs;
            }
        }
        let idlest = idlest?;
        let Some(local) = local else {
            return Some(idlest);
        };
        if local_sgs.group_type < idlest_sgs.group_type {
            return None;
        }
        if local_sgs.group_type > idlest_sgs.group_type {
            return Some(idlest);
        }
        let pct = u64::from(sd.imbalance_pct);
        match local_sgs.group_type {
            OVERLOADED | FULLY_BUSY => {
                let imbalance = 1024 * (u64::from(sd.imbalance_pct) - 100) / 100;
                if sd.flags.contains(SdFlags::NUMA)
                    && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load
                {
                    return None;
                }
                if idlest_sgs.avg_load >= local_sgs.avg_load + imbalance {
                    return None;
                }
                if 100 * local_sgs.avg_load <= pct * idlest_sgs.avg_load {
                    return None;
                }
            }
            IMBALANCED | ASYM_PACKING | SMT_BALANCE => return None,
            MISFIT_TASK => {
                if max_cap(local) >= max_cap(idlest) {
                    return None;
                }
            }
            _ => {
                if sd.flags.contains(SdFlags::NUMA) {
                    if self.v5_12 {
                        // allow_numa_imbalance(dst_running, dst_weight)
                        if (local_sgs.sum_nr_running as i32) < (sd.span_weight as i32 >> 2) {
                            return None;
                        }
                    } else {
                        // p->nr_cpus_allowed != NR_CPUS (8192): always.
                        let cpus = local.span.and(&self.k.p.allowed);
                        let imb_numa_nr = cpus.weight().min(sd.imb_numa_nr) as i32;
                        let imbalance =
                            (local_sgs.idle_cpus.wrapping_sub(idlest_sgs.idle_cpus) as i32).abs();
                        if adjust_numa_imbalance(
                            imbalance,
                            local_sgs.sum_nr_running.wrapping_add(1) as i32,
                            imb_numa_nr,
                        ) == 0
                        {
                            return None;
                        }
                    }
                }
                if local_sgs.idle_cpus >= idlest_sgs.idle_cpus {
                    return None;
                }
            }
        }
        Some(idlest)
    }

    fn find_idlest_group_cpu(&self, group: &SchedGroup, this: u32) -> u32 {
        let mut min_load = u64::MAX;
        let mut min_exit_latency = u32::MAX;
        let mut latest_idle_timestamp = 0u64;
        let mut least_loaded_cpu = this;
        let mut shallowest_idle_cpu: i64 = -1;
        if group.span.weight() == 1 {
            return group.span.first().unwrap().0;
        }
        for i in group.span.and(&self.k.p.allowed).iter().map(|c| c.0) {
            let rq = self.k.rq(i);
            if !self.sched_core_cookie_match(i) {
                continue;
            }
            if self.k.sched_idle_cpu(i) {
                return i;
            }
            if self.k.available_idle_cpu(i) {
                let idle = rq.exit_latency_us;
                if idle.is_some_and(|e| e < min_exit_latency) {
                    min_exit_latency = idle.unwrap();
                    latest_idle_timestamp = rq.idle_stamp;
                    shallowest_idle_cpu = i64::from(i);
                } else if (idle.is_none() || idle == Some(min_exit_latency))
                    && rq.idle_stamp > latest_idle_timestamp
                {
                    latest_idle_timestamp = rq.idle_stamp;
                    shallowest_idle_cpu = i64::from(i);
                }
            } else if shallowest_idle_cpu == -1 {
                let load = rq.load_avg;
                if load < min_load {
                    min_load = load;
                    least_loaded_cpu = i;
                }
            }
        }
        if shallowest_idle_cpu != -1 {
            shallowest_idle_cpu as u32
        } else {
            least_loaded_cpu
        }
    }

    /// `cpu`'s domains, lowest first (`for_each_domain()`).
    fn domains(&self, cpu: u32) -> &[SchedDomain] {
        &self.k.env.domains.cpu(CpuId(cpu)).domains
    }

    /// find_idlest_cpu(sd, p, cpu, prev_cpu, sd_flag), `sd` as `cpu`'s level.
    fn find_idlest_cpu(&self, level: usize, cpu: u32, prev_cpu: u32, sd_flag: u32) -> u32 {
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        if !self.domains(cpu)[level].span.intersects(&self.k.p.allowed) {
            return prev_cpu;
        }
        let mut sd: Option<usize> = Some(level);
        while let Some(l) = sd {
            let d = &self.domains(cpu)[l];
            let child = l.checked_sub(1);
            if d.flags.0 & sd_flag == 0 {
                sd = child;
                continue;
            }
            let Some(group) = self.find_idlest_group(d, cpu) else {
                sd = child;
                continue;
            };
            new_cpu = self.find_idlest_group_cpu(group, cpu);
            if new_cpu == cpu {
                sd = child;
                continue;
            }
            cpu = new_cpu;
            let weight = d.span_weight;
            sd = None;
            for (j, tmp) in self.domains(cpu).iter().enumerate() {
                if weight <= tmp.span_weight {
                    break;
                }
                if tmp.flags.0 & sd_flag != 0 {
                    sd = Some(j);
                }
            }
        }
        new_cpu
    }

    /// select_task_rq_fair(p, prev_cpu, WF_FORK or WF_EXEC) on `this` CPU.
    fn select_task_rq_fair(&self, wake_flags: u32) -> u32 {
        let cpu = self.k.this;
        let prev_cpu = self.task_cpu();
        let sd_flag = wake_flags & 0xF;
        let mut sd = None;
        for (i, tmp) in self.domains(cpu).iter().enumerate() {
            if tmp.flags.0 & sd_flag != 0 {
                sd = Some(i);
            } else {
                break; // !want_affine
            }
        }
        match sd {
            Some(l) => self.find_idlest_cpu(l, cpu, prev_cpu, sd_flag),
            None => prev_cpu,
        }
    }
}

/// adjust_numa_imbalance(imbalance, dst_running, imb_numa_nr), v6.x.
fn adjust_numa_imbalance(imbalance: i32, dst_running: i32, imb_numa_nr: i32) -> i32 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= 2 {
        return 0;
    }
    imbalance
}

fn group_classify(pct: u64, s: &Sgs) -> u8 {
    let overloaded = s.sum_nr_running > s.group_weight
        && (s.group_capacity * 100 < s.group_util * pct
            || s.group_capacity * pct < s.group_runnable * 100);
    let has_capacity = s.sum_nr_running < s.group_weight
        || (s.group_capacity * pct >= s.group_runnable * 100
            && s.group_capacity * 100 > s.group_util * pct);
    if overloaded {
        OVERLOADED
    } else if s.group_misfit_task_load != 0 {
        MISFIT_TASK
    } else if !has_capacity {
        FULLY_BUSY
    } else {
        HAS_SPARE
    }
}

/// The fields the slow path reads and `random_state()` leaves at their defaults
/// (drawn from `extra`, so the other tests' draws do not move): loads, utils, idle
/// states' exit latencies (none, or few values, for ties), idle stamps, p's load and
/// util, SCHED_IDLE-only and preempted CPUs, more tasks per CPU. On exec p runs on
/// `task_cpu(p)` = the CPU it execs on; on a fork `task_cpu(p)` is the parent's CPU
/// half the time (and any CPU otherwise: a new task adds to no statistic).
fn perturb_slow(s: &mut SchedState, p: &mut TaskState, waker: &Waker, extra: u64, exec: bool) {
    let mut r = common::rng(extra);
    let mut d = |m: u64| r.next_u64() % m;
    // A third of the states run hot: every CPU near full util (an idle one's
    // recently blocked) whatever its load, and the loads' scale varies by state, so
    // that groups are fully busy at low avg_load (where find_idlest_group()'s NUMA
    // rule "idlest + imbalance >= local" is not implied by the two after it).
    let hot = d(3) == 0;
    let scale = 1 + d(1400);
    for rq in s.rqs.iter_mut() {
        if rq.nr_running > 0 && d(4) == 0 {
            rq.nr_running += d(6) as u32;
        }
        rq.load_avg = if rq.nr_running > 0 {
            d(scale) * u64::from(rq.nr_running)
        } else {
            d(3) * d(200)
        };
        rq.util_avg = match (rq.nr_running > 0, hot) {
            (true, true) => 900 + d(125),
            (true, false) => d(1025),
            (false, true) => 900 + d(125),
            (false, false) => d(2) * d(300),
        };
        rq.exit_latency_us = match d(8) {
            0 => None,
            1..=3 => Some(d(3) as u32),
            _ => Some([0, 1, 10, 133][d(4) as usize]),
        };
        rq.idle_stamp = if d(2) == 0 { d(4) } else { d(1 << 40) };
        if rq.nr_running > 0 && d(16) == 0 {
            rq.idle_h_nr_running = rq.nr_running;
        }
        rq.vcpu_preempted = d(16) == 0;
    }
    p.load = d(2048);
    p.util = d(1025);
    if exec {
        p.prev_cpu = waker.cpu;
        let rq = &mut s.rqs[waker.cpu.idx()];
        rq.curr_is_idle = false;
        rq.nr_running = rq.nr_running.max(1);
        rq.load_avg = rq.load_avg.max(p.load * d(2));
    } else if d(2) == 0 {
        p.prev_cpu = waker.cpu;
    }
}

proptest! {
    // About 0.3 s for 4096 cases; 400 000 ran clean (PROPTEST_CASES=400000).
    #![proptest_config(ProptestConfig { cases: cases_or(4096), ..ProptestConfig::default() })]

    #[test]
    fn the_model_agrees_with_a_transcription_of_the_slow_path(
        preset in 0usize..PRESETS.len(),
        set in 0usize..SETS.len(),
        seed in any::<u64>(),
        busy_pct in 0u64..=100,
        restrict in any::<bool>(),
        exec in any::<bool>(),
        extra in any::<u64>(),
    ) {
        let env = env_of(preset, set);
        prop_assert!(!env.domains.sched_asym_cpucapacity, "misfit: idlest.rs's cases");
        let (mut s, mut p, waker) = random_state(env, seed, busy_pct, restrict);
        perturb_slow(&mut s, &mut p, &waker, extra, exec);
        let cur = waker.task.clone().unwrap();
        let k = K::new(env, &s, &p, &cur, waker.cpu.0, true);
        let slow = Slow { k, last_update_time: exec, queued: exec, v5_12: set == 2 };
        let flags = if exec { WakeFlags::EXEC } else { WakeFlags::FORK };
        let d = select_task_rq_new(env, &s, &p, &waker, flags, &mut PathOnly);
        let at = format!("{} on {} seed {} extra {} exec {}", SETS[set], PRESETS[preset], seed, extra, exec);
        // Fork: core.c's select_task_rq(); exec: sched_exec() calls the class hook.
        let want = if exec || p.allowed.weight() > 1 {
            slow.select_task_rq_fair(flags.0)
        } else {
            p.allowed.first().unwrap().0
        };
        if exec || p.allowed.test_cpu(CpuId(want)) {
            prop_assert_eq!(d.cpu.0, want, "{}", at);
        } else {
            // is_cpu_allowed() fails: select_fallback_rq(), transcript_612.rs's.
            prop_assert_eq!(d.path, Some(WakePath::Fallback), "{}", at);
        }
    }
}

/// The transcription tells the slow path's outcomes apart: on the random states,
/// both a push to another group and a stay in the local one happen, and a fork and an
/// exec of the same state sometimes land apart (p's own load counts on exec only).
#[test]
fn the_random_states_reach_both_sides_of_find_idlest_group() {
    let env = env_of(0, 0);
    let (mut moved, mut stayed, mut differ) = (0, 0, 0);
    for seed in 0..200u64 {
        let (mut s, mut p, waker) = random_state(env, seed, seed % 101, seed % 3 == 0);
        perturb_slow(&mut s, &mut p, &waker, seed * 7 + 1, true);
        let cur = waker.task.clone().unwrap();
        let k = |exec| Slow {
            k: K::new(env, &s, &p, &cur, waker.cpu.0, true),
            last_update_time: exec,
            queued: exec,
            v5_12: false,
        };
        let e = k(true).select_task_rq_fair(WakeFlags::EXEC.0);
        let f = k(false).select_task_rq_fair(WakeFlags::FORK.0);
        if e == waker.cpu.0 {
            stayed += 1;
        } else {
            moved += 1;
        }
        differ += usize::from(e != f);
    }
    assert!(
        moved > 20 && stayed > 20 && differ > 10,
        "{moved} {stayed} {differ}"
    );
}
