//! A second, independent reading of v6.8's placement: select_task_rq_fair(),
//! wake_affine(), select_idle_sibling(), select_idle_cpu(), select_idle_core() and
//! select_idle_smt() transcribed statement by statement from kernel/sched/fair.c v6.8
//! (lines 6951-7090, 7216-7420, 7491-7600, 8139-8210), on the public topology only,
//! and compared with `wake_up()` on random states, on v6.8, on v6.6 (no cluster scan;
//! the budget test "if (!--nr) return -1;") and on v5.15 (fair.c v5.15's SIS_PROP
//! budget, select_idle_smt() and recent_used_cpu test, kthread test without in_task()).
//! No asymmetric capacity (the presets have none) and no EAS, as in the model.

use proptest::prelude::*;
use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::sched_domain::SdFlags;
use schedlab_core::wakeup::{
    wake_up, NoTrace, PathOnly, SchedState, TaskState, WakeEnv, WakeFlags, WakePath, Waker,
};

use super::{build_envs, cases_or, random_state, PRESETS};

/// v6.8, v6.6 (the same code without seed 01: no cluster scan, "if (!--nr)"), and
/// v5.15 (fair.c v5.15: SIS_PROP, select_idle_smt(p, sd, prev) over the whole SMT
/// mask, recent_used_cpu's affinity read after "p->recent_used_cpu = prev", no
/// in_task() in the kthread test).
const SETS: [&str; 3] = ["6.8", "6.6", "5.15"];

fn env_of(preset: usize, set: usize) -> &'static WakeEnv {
    use std::sync::OnceLock;
    static ENVS: OnceLock<Vec<Vec<WakeEnv>>> = OnceLock::new();
    &ENVS.get_or_init(|| build_envs(&SETS))[preset][set]
}

/// One wake-up as the transcriptions read it (shared with `transcript_612.rs` and
/// `transcript_512.rs`, which add their releases' functions in `impl K` blocks of
/// their own).
pub(super) struct K<'a> {
    pub(super) env: &'a WakeEnv,
    pub(super) s: &'a SchedState,
    pub(super) p: &'a TaskState,
    pub(super) cur: &'a TaskState,
    pub(super) this: u32,
    /// v6.6's "if (!--nr) return -1;" instead of "if (--nr <= 0)".
    pub(super) bang_nr: bool,
    /// fair.c v5.15 instead of v6.x.
    pub(super) v5_15: bool,
    /// v6.9 and later (read in v6.12.19): select_idle_core() tests `cpus`, not
    /// `p->cpus_ptr` (fair.c v6.12.19 7710, 7718), and select_idle_smt() skips a
    /// sibling outside the LLC domain (7742-7743).
    pub(super) v6_9: bool,
    /// in_task() of the wake-up.
    pub(super) in_task: bool,
}

impl<'a> K<'a> {
    /// v6.8's reading (every switch off).
    pub(super) fn new(
        env: &'a WakeEnv,
        s: &'a SchedState,
        p: &'a TaskState,
        cur: &'a TaskState,
        this: u32,
        in_task: bool,
    ) -> Self {
        K {
            env,
            s,
            p,
            cur,
            this,
            bang_nr: false,
            v5_15: false,
            v6_9: false,
            in_task,
        }
    }

    pub(super) fn rq(&self, c: u32) -> &schedlab_core::wakeup::RqState {
        &self.s.rqs[c as usize]
    }
    pub(super) fn available_idle_cpu(&self, c: u32) -> bool {
        let rq = self.rq(c);
        rq.curr_is_idle && rq.nr_running == 0 && !rq.ttwu_pending && !rq.vcpu_preempted
    }
    pub(super) fn sched_idle_cpu(&self, c: u32) -> bool {
        let rq = self.rq(c);
        rq.nr_running == rq.idle_h_nr_running && rq.nr_running != 0
    }
    pub(super) fn cookie_match(&self, c: u32) -> bool {
        !self.s.core_sched_enabled || self.rq(c).core_cookie == self.p.cookie
    }
    fn select_idle_cpu_one(&self, c: u32) -> i64 {
        if (self.available_idle_cpu(c) || self.sched_idle_cpu(c)) && self.cookie_match(c) {
            c as i64
        } else {
            -1
        }
    }
    pub(super) fn share_cache(&self, a: u32, b: u32) -> bool {
        self.env.cpus_share_cache(CpuId(a), CpuId(b))
    }
    pub(super) fn smt(&self, c: u32) -> Vec<u32> {
        self.env.smt_mask(CpuId(c)).iter().map(|x| x.0).collect()
    }
    pub(super) fn allowed(&self, c: u32) -> bool {
        self.p.allowed.test_cpu(CpuId(c))
    }

    pub(super) fn wake_wide(&self, master_flips: u32) -> bool {
        let factor = self.env.domains.cpu(CpuId(self.this)).sd_llc_size;
        let (mut master, mut slave) = (master_flips, self.p.wakee_flips);
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave.wrapping_mul(factor))
    }

    pub(super) fn wake_affine(&self, imbalance_pct: u32, this: u32, prev: u32, sync: bool) -> u32 {
        // wake_affine_idle()
        let mut target: Option<u32> = None;
        if self.available_idle_cpu(this) && self.share_cache(this, prev) {
            target = Some(if self.available_idle_cpu(prev) {
                prev
            } else {
                this
            });
        } else if sync && self.rq(this).nr_running == 1 {
            target = Some(this);
        } else if self.available_idle_cpu(prev) {
            target = Some(prev);
        }
        if target.is_none() {
            // wake_affine_weight()
            let mut this_eff = self.rq(this).load_avg as i64;
            let mut early = false;
            if sync {
                let cur = self.cur.load;
                if cur > this_eff as u64 {
                    early = true;
                } else {
                    this_eff = this_eff.wrapping_sub(cur as i64);
                }
            }
            if early {
                target = Some(this);
            } else {
                let tl = self.p.load as i64;
                this_eff = this_eff.wrapping_add(tl).wrapping_mul(100);
                this_eff = this_eff.wrapping_mul(self.rq(prev).capacity as i64);
                let mut prev_eff = (self.rq(prev).load_avg as i64).wrapping_sub(tl);
                prev_eff = prev_eff.wrapping_mul((100 + (imbalance_pct - 100) / 2) as i64);
                prev_eff = prev_eff.wrapping_mul(self.rq(this).capacity as i64);
                if sync {
                    prev_eff = prev_eff.wrapping_add(1);
                }
                if this_eff < prev_eff {
                    target = Some(this);
                }
            }
        }
        if target != Some(this) {
            prev
        } else {
            this
        }
    }

    /// select_idle_core() (SMT build).
    fn select_idle_core(&self, core: u32, cpus: &mut CpuMask, idle_cpu: &mut i64) -> i64 {
        let allowed_here = |c: u32, cpus: &CpuMask| {
            if self.v6_9 {
                cpus.test_cpu(CpuId(c))
            } else {
                self.allowed(c)
            }
        };
        let mut idle = true;
        for c in self.smt(core) {
            if !self.available_idle_cpu(c) {
                idle = false;
                if *idle_cpu == -1 {
                    if self.sched_idle_cpu(c) && allowed_here(c, cpus) {
                        *idle_cpu = c as i64;
                        break;
                    }
                    continue;
                }
                break;
            }
            if *idle_cpu == -1 && allowed_here(c, cpus) {
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

    /// for_each_cpu_wrap() over a mask that may shrink (reads the live mask).
    pub(super) fn next_wrap(mask: &CpuMask, start: u32, prev: Option<u32>) -> Option<u32> {
        let n = mask.nr_cpu_ids();
        let start = if start >= n { 0 } else { start };
        let from = match prev {
            None => start,
            Some(p) => p + 1,
        };
        let wrapped = matches!(prev, Some(p) if p < start);
        if !wrapped {
            if let Some(c) = (from..n).find(|&c| mask.test_cpu(CpuId(c))) {
                return Some(c);
            }
            return (0..start).find(|&c| mask.test_cpu(CpuId(c)));
        }
        (from..start).find(|&c| mask.test_cpu(CpuId(c)))
    }

    fn select_idle_cpu(&self, target: u32, has_idle_core: bool) -> i64 {
        let cd = self.env.domains.cpu(CpuId(target));
        let sd = cd.llc().unwrap();
        let mut cpus = sd.span.and(&self.p.allowed);
        let mut idle_cpu: i64 = -1;
        let mut nr: i32 = i32::MAX;
        if self.v5_15 {
            // this_sd = sd_llc of this CPU (every preset CPU has one).
            if !has_idle_core {
                let sp = &self.s.sis_prop;
                let this = self.this as usize;
                let (mut avg, mut stamp) = (sp.wake_avg_idle_ns[this], sp.wake_stamp[this]);
                while stamp < self.s.jiffies && avg != 0 {
                    stamp += 1;
                    avg >>= 1;
                }
                // this_sd->avg_scan_cost: this CPU's own sched_domain.
                let avg_cost = sp.avg_scan_cost_ns[this].wrapping_add(1);
                let span_avg = (sd.span_weight as u64).wrapping_mul(avg);
                nr = if span_avg > avg_cost.wrapping_mul(4) {
                    (span_avg / avg_cost) as i32
                } else {
                    4
                };
            }
        } else {
            if let Some(id) = self.env.llc_shared_of(CpuId(target)) {
                nr = (self.s.llc_shared[id.idx()].nr_idle_scan as i32).wrapping_add(1);
                if nr == 1 {
                    return -1;
                }
            }
            if let Some(i) =
                self.cluster_first(target, has_idle_core, &mut cpus, &mut idle_cpu, &mut nr)
            {
                return i;
            }
        }
        let core = |c, m: &mut CpuMask, i: &mut i64| self.select_idle_core(c, m, i);
        let one = |c| self.select_idle_cpu_one(c);
        // "if (!--nr) return -1;" in v5.15 and v6.6, "if (--nr <= 0)" from v6.7.
        let spent = |nr| nr == 0 || (nr < 0 && !self.bang_nr && !self.v5_15);
        let scan = self.wrap_scan(
            cpus,
            target + 1,
            has_idle_core,
            idle_cpu,
            nr,
            spent,
            core,
            one,
        );
        scan.unwrap_or_else(|i| i)
    }

    /// v6.7+ (seed 01 2/3): the target's cluster first, when the LLC's first group is
    /// one. `Some(i)`: select_idle_cpu() returns `i`.
    fn cluster_first(
        &self,
        target: u32,
        has_idle_core: bool,
        cpus: &mut CpuMask,
        idle_cpu: &mut i64,
        nr: &mut i32,
    ) -> Option<i64> {
        let sd = self.env.domains.cpu(CpuId(target)).llc().unwrap();
        if self.env.sched_cluster_active() {
            let sg = sd.groups.first().unwrap();
            if sg.flags.contains(SdFlags::CLUSTER) {
                for c in sg.span.iter_wrap(target + 1).map(|c| c.0) {
                    if !cpus.test_cpu(CpuId(c)) {
                        continue;
                    }
                    if has_idle_core {
                        let i = self.select_idle_core(c, cpus, idle_cpu);
                        if i >= 0 {
                            return Some(i);
                        }
                    } else {
                        *nr -= 1;
                        if *nr <= 0 {
                            return Some(-1);
                        }
                        *idle_cpu = self.select_idle_cpu_one(c);
                        if *idle_cpu >= 0 {
                            return Some(*idle_cpu);
                        }
                    }
                }
                *cpus = cpus.andnot(&sg.span);
            }
        }
        None
    }

    /// select_idle_cpu()'s `for_each_cpu_wrap(cpu, cpus, start)` loop, as every release
    /// read has it: `core` is the release's select_idle_core() (which shrinks `cpus`),
    /// `one` its __select_idle_cpu(), `spent(nr)` its budget test after `--nr`.
    /// `Err(i)`: the loop returned `i`; `Ok(idle_cpu)`: it ended by `break` or
    /// exhaustion.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn wrap_scan(
        &self,
        mut cpus: CpuMask,
        start: u32,
        has_idle_core: bool,
        mut idle_cpu: i64,
        mut nr: i32,
        spent: impl Fn(i32) -> bool,
        core: impl Fn(u32, &mut CpuMask, &mut i64) -> i64,
        one: impl Fn(u32) -> i64,
    ) -> Result<i64, i64> {
        let mut cur = None;
        while let Some(c) = Self::next_wrap(&cpus, start, cur) {
            cur = Some(c);
            if has_idle_core {
                let i = core(c, &mut cpus, &mut idle_cpu);
                if i >= 0 {
                    return Err(i);
                }
            } else {
                nr = nr.wrapping_sub(1);
                if spent(nr) {
                    return Err(-1);
                }
                idle_cpu = one(c);
                if idle_cpu >= 0 {
                    break;
                }
            }
        }
        Ok(idle_cpu)
    }

    pub(super) fn select_idle_sibling(&self, prev: u32, target: u32) -> u32 {
        let idle_ish = |c: u32| self.available_idle_cpu(c) || self.sched_idle_cpu(c);
        if idle_ish(target) {
            return target;
        }
        let cluster = self.env.sched_cluster_active();
        let share_res = |a: u32, b: u32| self.env.cpus_share_resources(CpuId(a), CpuId(b));
        let mut prev_aff: i64 = -1;
        if prev != target && self.share_cache(prev, target) && idle_ish(prev) {
            if !cluster || share_res(prev, target) {
                return prev;
            }
            prev_aff = prev as i64;
        }
        if self.cur.per_cpu_kthread
            && (self.in_task || self.v5_15)
            && prev == self.this
            && self.rq(self.this).nr_running <= 1
        {
            return prev;
        }
        let mut recent = self.p.recent_used_cpu.0 as i64;
        let r = recent as u32;
        // v5.15: "cpumask_test_cpu(p->recent_used_cpu, p->cpus_ptr)" after
        // "p->recent_used_cpu = prev;".
        let affinity = if self.v5_15 { prev } else { r };
        if r != prev
            && r != target
            && self.share_cache(r, target)
            && idle_ish(r)
            && self.allowed(affinity)
        {
            if !cluster || share_res(r, target) {
                return r;
            }
        } else {
            recent = -1;
        }
        if self.env.domains.cpu(CpuId(target)).llc().is_none() {
            return target;
        }
        let mut has_idle_core = false;
        if self.env.sched_smt_active() {
            has_idle_core = self
                .env
                .llc_shared_of(CpuId(target))
                .is_some_and(|id| self.s.llc_shared[id.idx()].has_idle_cores);
            if !has_idle_core && self.share_cache(prev, target) {
                let llc = &self.env.domains.cpu(CpuId(target)).llc().unwrap().span;
                for c in self.smt(prev) {
                    if self.v5_15 {
                        // for_each_cpu(cpu, cpu_smt_mask(target)): prev included.
                        if !self.allowed(c) || !llc.test_cpu(CpuId(c)) {
                            continue;
                        }
                    } else if c == prev
                        || !self.allowed(c)
                        || (self.v6_9 && !llc.test_cpu(CpuId(c)))
                    {
                        continue;
                    }
                    if idle_ish(c) {
                        return c;
                    }
                }
            }
        }
        let i = self.select_idle_cpu(target, has_idle_core);
        if i >= 0 {
            return i as u32;
        }
        if prev_aff >= 0 {
            return prev_aff as u32;
        }
        if recent >= 0 {
            return recent as u32;
        }
        target
    }

    /// select_task_rq_fair(p, prev_cpu, WF_TTWU [| WF_SYNC]).
    fn select_task_rq_fair(&self, sync: bool) -> u32 {
        let cpu = self.this;
        let prev = self.p.prev_cpu.0;
        // record_wakee(p): jiffies 0, decay_ts 0: no decay.
        let mut flips = self.cur.wakee_flips;
        if self.cur.last_wakee != Some(self.p.id) {
            flips = flips.wrapping_add(1);
        }
        let want_affine = !self.wake_wide(flips) && self.allowed(cpu);
        let new_cpu = self.domain_walk(want_affine, sync);
        self.select_idle_sibling(prev, new_cpu)
    }

    /// select_task_rq_fair()'s `for_each_domain(cpu, tmp)` walk on a wake-up (every
    /// release read): the new_cpu select_idle_sibling() gets. No preset domain has
    /// SD_BALANCE_WAKE (WF_TTWU's bit in `sd_flag`), so the slow path is not taken.
    pub(super) fn domain_walk(&self, want_affine: bool, sync: bool) -> u32 {
        let (cpu, prev) = (self.this, self.p.prev_cpu.0);
        let mut new_cpu = prev;
        for tmp in &self.env.domains.cpu(CpuId(cpu)).domains {
            if want_affine
                && tmp.flags.contains(SdFlags::WAKE_AFFINE)
                && tmp.span.test_cpu(CpuId(prev))
            {
                if cpu != prev {
                    new_cpu = self.wake_affine(tmp.imbalance_pct, cpu, prev, sync);
                }
                break;
            }
            assert!(!tmp.flags.contains(SdFlags::BALANCE_WAKE));
            if !want_affine {
                break;
            }
        }
        new_cpu
    }
}

/// The random state's corners every transcription wants (drawn from `extra`): some
/// SCHED_IDLE-only CPUs, preempted vCPUs, small and `-1` nr_idle_scan values, with
/// `sis_prop` random SIS_PROP inputs, an interrupt-context wake-up (returns
/// `in_task()`) and a per-CPU kthread waker on prev.
pub(super) fn perturb(
    env: &WakeEnv,
    s: &mut SchedState,
    p: &mut TaskState,
    waker: &mut Waker,
    extra: u64,
    sis_prop: bool,
) -> bool {
    let n = env.nr_cpus();
    // Some SCHED_IDLE-only CPUs, preempted vCPUs, and small nr_idle_scan values.
    let mut x = extra;
    for c in 0..n as usize {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if s.rqs[c].nr_running > 0 && (x >> 60) == 0 {
            s.rqs[c].idle_h_nr_running = s.rqs[c].nr_running;
        }
        if (x >> 58) & 7 == 1 {
            s.rqs[c].vcpu_preempted = true;
        }
    }
    if extra.is_multiple_of(3) {
        for l in s.llc_shared.iter_mut() {
            l.nr_idle_scan %= 4;
        }
    }
    if extra.is_multiple_of(7) {
        // An int nr_idle_scan of -1: nr starts at 0.
        for l in s.llc_shared.iter_mut() {
            l.nr_idle_scan = u32::MAX;
        }
    }
    if sis_prop {
        let sp = &mut s.sis_prop;
        for c in 0..n as usize {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            sp.wake_avg_idle_ns[c] = (x >> 40) % (1 << 20);
            sp.wake_stamp[c] = (x >> 20) % 8;
            sp.avg_scan_cost_ns[c] = (x >> 8) % 5000;
        }
        s.jiffies = extra % 8;
    }
    let in_task = !extra.is_multiple_of(11);
    waker.in_task = in_task;
    if extra.is_multiple_of(5) {
        let mut k = waker.task.take().unwrap();
        k.per_cpu_kthread = true;
        waker.task = Some(k);
        p.prev_cpu = waker.cpu;
    }
    in_task
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(2048), ..ProptestConfig::default() })]

    #[test]
    fn the_model_agrees_with_a_transcription_of_v6_8_v6_6_and_v5_15(
        preset in 0usize..PRESETS.len(),
        set in 0usize..SETS.len(),
        seed in any::<u64>(),
        busy_pct in 0u64..=100,
        sync in any::<bool>(),
        restrict in any::<bool>(),
        extra in any::<u64>(),
    ) {
        let env = env_of(preset, set);
        let (mut s, mut p, mut waker) = random_state(env, seed, busy_pct, restrict);
        let in_task = perturb(env, &mut s, &mut p, &mut waker, extra, set == 2);
        let cur = waker.task.clone().unwrap();
        let base = K::new(env, &s, &p, &cur, waker.cpu.0, in_task);
        let k = K { bang_nr: set == 1, v5_15: set == 2, ..base };
        let flags = if sync { WakeFlags::TTWU.union(WakeFlags::SYNC) } else { WakeFlags::TTWU };
        let d = wake_up(env, &s, &p, &waker, flags, &mut PathOnly);
        let want = if p.allowed.weight() > 1 {
            k.select_task_rq_fair(sync)
        } else {
            p.allowed.first().unwrap().0
        };
        if p.allowed.test_cpu(CpuId(want)) {
            let (set, preset) = (SETS[set], PRESETS[preset]);
            prop_assert_eq!(d.cpu.0, want, "{} on {} seed {} extra {}", set, preset, seed, extra);
        } else {
            prop_assert_eq!(d.path, Some(WakePath::Fallback));
        }
        let d2 = wake_up(env, &s, &p, &waker, flags, &mut NoTrace);
        prop_assert_eq!(d.cpu, d2.cpu);
    }
}
