//! A second, independent reading of v5.12.0's placement and queueing, compared with
//! `wake_up()` (decision, queue and writes) on random states.
//!
//! The source read is fair.c and core.c of the 5.12.9 stable tree (the
//! zhangyinjun/linux-5.12.9 mirror), less what 5.12.y took from 5.13 in these
//! functions. That v5.12.0 lacks it was established from the commits' own diffs, whose
//! context is the 5.12 code: c722f35b513f "sched/fair: Bring back select_idle_smt(), but
//! differently" (tip sched/core 6bcd3e21ba27, April 2021, for 5.13) adds
//! select_idle_smt() and the `sched_smt_present` block of select_idle_sibling(), and
//! moves `bool smt = test_idle_cores(target, false);` out of select_idle_cpu();
//! c8987ae5af79 "sched/fair: Optimize test_idle_cores() for !SMT" (tip sched/core,
//! March 2021, for 5.13) is the `static_branch_likely(&sched_smt_present)` test that
//! c722f35b513f's context shows inside test_idle_cores(); 02dbb7246c5b (5.13-rc2) made
//! `set_idle_cores(this, false)` `set_idle_cores(target, false)`. v5.12.0 therefore
//! reads, in fair.c (5.12.9 line numbers of the code that is unchanged):
//! - select_task_rq_fair() 6773-6830, with "if (want_affine) current->recent_used_cpu
//!   = cpu;" after select_idle_sibling(); record_wakee() 5762-5777, wake_wide()
//!   5796-5807; wake_affine() 5891-5908 ("if (target == nr_cpumask_bits) return
//!   prev_cpu; return target;", the same decision as v6.8's, so `K::wake_affine`).
//! - select_idle_sibling() 6270-6366 without 6352-6360: no select_idle_smt(), and
//!   has_idle_core read in select_idle_cpu(); p->recent_used_cpu is written only when
//!   it is returned, and the affinity test reads it unchanged.
//! - select_idle_cpu(p, sd, target) 6166-6222 with `smt = test_idle_cores(target,
//!   false)` (no SMT test), SIS_PROP from `this_rq()->avg_idle / 512` and the waker
//!   CPU's own `this_sd->avg_scan_cost` (struct sched_domain, one per CPU:
//!   include/linux/sched/topology.h 103, topology.c 1857), the walk from `target`,
//!   "if (!--nr) return -1;", and `set_idle_cores(this, false)`.
//! - select_idle_core() 6089-6121 with its `!sched_smt_present` shortcut to
//!   __select_idle_cpu(core) (6023-6029: no cookie, core scheduling came in 5.14).
//! - core.c: try_to_wake_up() 3434-3464 (WF_ON_CPU on the on_cpu call only),
//!   select_task_rq() 2806-2827, ttwu_queue_cond(cpu, wake_flags) 3125-3151,
//!   ttwu_queue_wakelist() 3153-3167, select_fallback_rq() 2727-2800 (in
//!   `transcript_612.rs`, with `Core`'s 5.12 switches).

use proptest::prelude::*;
use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::wakeup::{wake_up, PathOnly, WakeEnv, WakeFlags};

use super::transcript_612::{draw, Core};
use super::transcript_68::K;
use super::{build_envs, cases_or, PRESETS};

fn env_of(preset: usize) -> &'static WakeEnv {
    use std::sync::OnceLock;
    static ENVS: OnceLock<Vec<Vec<WakeEnv>>> = OnceLock::new();
    &ENVS.get_or_init(|| build_envs(&["5.12"]))[preset][0]
}

/// What v5.12.0's selection writes besides its answer.
#[derive(Default)]
struct Writes {
    /// p->recent_used_cpu = prev (only with the recent_used_cpu return).
    recent_used_cpu: Option<u32>,
    /// current->recent_used_cpu = cpu (want_affine).
    waker_recent_used_cpu: Option<u32>,
    /// set_idle_cores(this, false): the shared line of this CPU's LLC.
    clear_idle_cores: Option<CpuId>,
}

impl K<'_> {
    /// cpus_share_cache(): v5.12 compares sd_llc_id alone.
    fn share_cache_512(&self, a: u32, b: u32) -> bool {
        let d = &self.env.domains;
        d.cpu(CpuId(a)).sd_llc_id == d.cpu(CpuId(b)).sd_llc_id
    }

    fn idle_ish_512(&self, c: u32) -> bool {
        self.available_idle_cpu(c) || self.sched_idle_cpu(c)
    }

    /// select_task_rq_fair(p, prev_cpu, WF_TTWU [| WF_SYNC]).
    fn select_task_rq_fair_512(&self, sync: bool, w: &mut Writes) -> u32 {
        let sync = sync && !self.cur.exiting;
        let cpu = self.this;
        let prev = self.p.prev_cpu.0;
        let flips = self.record_wakee();
        let want_affine = !self.wake_wide(flips) && self.allowed(cpu);
        let new_cpu = self.domain_walk(want_affine, sync);
        let new_cpu = self.select_idle_sibling_512(prev, new_cpu, w);
        if want_affine {
            w.waker_recent_used_cpu = Some(cpu);
        }
        new_cpu
    }

    fn select_idle_sibling_512(&self, prev: u32, target: u32, w: &mut Writes) -> u32 {
        if self.idle_ish_512(target) {
            return target;
        }
        if prev != target && self.share_cache_512(prev, target) && self.idle_ish_512(prev) {
            return prev;
        }
        if self.cur.per_cpu_kthread && prev == self.this && self.rq(self.this).nr_running <= 1 {
            return prev;
        }
        let recent = self.p.recent_used_cpu.0;
        if recent != prev
            && recent != target
            && self.share_cache_512(recent, target)
            && self.idle_ish_512(recent)
            && self.allowed(recent)
        {
            w.recent_used_cpu = Some(prev);
            return recent;
        }
        if self.env.domains.cpu(CpuId(target)).llc().is_none() {
            return target;
        }
        let i = self.select_idle_cpu_512(target, w);
        if i >= 0 {
            return i as u32;
        }
        target
    }

    /// __select_idle_cpu(cpu), v5.12: no cookie.
    fn select_idle_cpu_one_512(&self, c: u32) -> i64 {
        if self.idle_ish_512(c) {
            c as i64
        } else {
            -1
        }
    }

    fn select_idle_core_512(&self, core: u32, cpus: &mut CpuMask, idle_cpu: &mut i64) -> i64 {
        if !self.env.domains.sched_smt_present {
            return self.select_idle_cpu_one_512(core);
        }
        let mut idle = true;
        for c in self.smt(core) {
            if !self.available_idle_cpu(c) {
                idle = false;
                if *idle_cpu == -1 {
                    if self.sched_idle_cpu(c) && self.allowed(c) {
                        *idle_cpu = c as i64;
                        break;
                    }
                    continue;
                }
                break;
            }
            if *idle_cpu == -1 && self.allowed(c) {
                *idle_cpu = c as i64;
            }
        }
        if idle {
            return core as i64;
        }
        for c in self.smt(core) {
            cpus.clear_cpu(CpuId(c));
        }
        -1
    }

    fn select_idle_cpu_512(&self, target: u32, w: &mut Writes) -> i64 {
        let sd = self.env.domains.cpu(CpuId(target)).llc().unwrap();
        let mut nr: i32 = i32::MAX;
        // test_idle_cores(target, false): the LLC's shared line, SMT or not.
        let smt = self
            .env
            .llc_shared_of(CpuId(target))
            .is_some_and(|id| self.s.llc_shared[id.idx()].has_idle_cores);
        let this = self.this as usize;
        if self.env.domains.cpu(CpuId(self.this)).llc().is_none() {
            return -1;
        }
        let cpus = sd.span.and(&self.p.allowed);
        if self.env.patches.features.sis_prop && !smt {
            let sp = &self.s.sis_prop;
            let avg_idle = sp.avg_idle_ns[this] / 512;
            let avg_cost = sp.avg_scan_cost_ns[this].wrapping_add(1);
            let span_avg = (sd.span_weight as u64).wrapping_mul(avg_idle);
            nr = if span_avg > avg_cost.wrapping_mul(4) {
                // div_u64(u64, u32).
                (span_avg / (avg_cost as u32) as u64) as i32
            } else {
                4
            };
        }
        let core = |c, m: &mut CpuMask, i: &mut i64| self.select_idle_core_512(c, m, i);
        let one = |c| self.select_idle_cpu_one_512(c);
        // "if (!--nr) return -1;", and the walk starts at target.
        let idle_cpu = match self.wrap_scan(cpus, target, smt, -1, nr, |nr| nr == 0, core, one) {
            Err(i) => return i,
            Ok(idle_cpu) => idle_cpu,
        };
        if smt {
            w.clear_idle_cores = self.env.llc_shared_of(CpuId(self.this));
        }
        idle_cpu
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(1024), ..ProptestConfig::default() })]

    #[test]
    fn the_model_agrees_with_a_transcription_of_v5_12(
        preset in 0usize..PRESETS.len(),
        seed in any::<u64>(),
        busy_pct in 0u64..=100,
        sync in any::<bool>(),
        restrict in any::<bool>(),
        extra in any::<u64>(),
        more in any::<u64>(),
    ) {
        let env = env_of(preset);
        prop_assert!(!env.domains.sched_asym_cpucapacity, "asym_fits_capacity() not transcribed");
        let (s, p, waker, cur, in_task) = draw(env, (seed, busy_pct, restrict), extra, more, true);
        // "if (!--nr) return -1;" throughout; the per-CPU kthread test has no in_task().
        let k = K { bang_nr: true, ..K::new(env, &s, &p, &cur, waker.cpu.0, in_task) };
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let mut w = Writes::default();
        let core = Core { v6_0: false, v5_15: false };
        let want = k.try_to_wake_up(|| k.select_task_rq_fair_512(sync, &mut w), core);
        let d = wake_up(env, &s, &p, &waker, flags, &mut PathOnly);
        let at = format!("{} seed {} extra {} more {}", PRESETS[preset], seed, extra, more);
        prop_assert_eq!((d.cpu.0, d.queue), want, "{}", at);
        let e = &d.effects;
        prop_assert_eq!(e.recent_used_cpu.map(|c| c.0), w.recent_used_cpu, "{}", at);
        prop_assert_eq!(e.waker_recent_used_cpu.map(|c| c.0), w.waker_recent_used_cpu, "{}", at);
        prop_assert_eq!(e.clear_idle_cores, w.clear_idle_cores, "{}", at);
    }
}
