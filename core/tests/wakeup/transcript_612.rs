//! A second, independent reading of v6.12's placement, and of try_to_wake_up()'s
//! queueing decision, compared with `wake_up()` on random states.
//!
//! fair.c v6.12.19 (the wishday/linux-6.12.y mirror) was read against v6.8's text:
//! `diff` of v6.8 lines 6951-7090, 7216-7610, 8139-8210 with v6.12.19 lines 7369-7512,
//! 7634-8030, 8661-8723 leaves, on the paths a preset reaches:
//! - select_task_rq_fair() (8661-8723): `if (!is_rd_overutilized(this_rq()->rd))` in
//!   place of `if (sched_energy_enabled())` before find_energy_efficient_cpu(); without
//!   an energy model `is_rd_overutilized()` is "!sched_energy_enabled() ||
//!   READ_ONCE(rd->overutilized)", true, so EAS is skipped as before.
//!   `find_idlest_cpu()` is `sched_balance_find_dst_cpu()` (renamed; the slow path,
//!   which no wake-up here takes: no domain has SD_BALANCE_WAKE).
//! - select_idle_core() (7701-7730): `cpumask_test_cpu(cpu, cpus)`, not `p->cpus_ptr`.
//! - select_idle_smt(p, sd, target) (7732-7751): skips a sibling outside `sd`, the LLC.
//! - wake_affine() (7498-7512): the same decision (schedstats moved).
//! - select_idle_sibling() (7915-8030), select_idle_cpu() (7780-7836, SIS_UTIL,
//!   the cluster first, "--nr <= 0"), __select_idle_cpu() (7634-7641): as v6.8.
//!
//! So v6.12 reuses `transcript_68.rs`'s functions with `v6_9` set for the two changed
//! tests; this file transcribes what v6.8's transcription did not: record_wakee()'s
//! decay (7369-7384), `sync` with an exiting waker (8663), WF_CURRENT_CPU (8678-8680),
//! and kernel/sched/core.c v6.12.19's side, which `transcript_512.rs` shares:
//! try_to_wake_up()'s placement (4253-4283), select_task_rq() (3528-3553),
//! is_cpu_allowed() (2385-2409), select_fallback_rq() (3453-3522), ttwu_queue_cond()
//! (3876-3923), ttwu_queue_wakelist() (3925-3934), ttwu_queue() (3945-3957), and the IPI
//! of __smp_call_single_queue() (kernel/smp.c: only for the first entry of an empty
//! list) and send_call_function_single_ipi() (none when `set_nr_if_polling(rq->idle)`).

use proptest::prelude::*;
use schedlab_core::cpumask::CpuId;
use schedlab_core::wakeup::{
    wake_up, NoTrace, PathOnly, QueuePath, SchedState, TaskState, WakeEnv, WakeFlags, Waker,
};

use super::transcript_68::{perturb, K};
use super::{build_envs, cases_or, random_state, PRESETS};

fn env_of(preset: usize) -> &'static WakeEnv {
    use std::sync::OnceLock;
    static ENVS: OnceLock<Vec<Vec<WakeEnv>>> = OnceLock::new();
    &ENVS.get_or_init(|| build_envs(&["6.12"]))[preset][0]
}

/// The release differences of core.c's side that the model covers (5.12 to 6.12).
#[derive(Clone, Copy)]
pub(super) struct Core {
    /// v6.0+: `ttwu_queue_cond(p, cpu)` tests `p->cpus_ptr` and sends an idle target
    /// its wakee; no WF_ON_CPU (v5.12.9 3125-3151 has `ttwu_queue_cond(cpu,
    /// wake_flags)` with "(wake_flags & WF_ON_CPU) && nr_running <= 1").
    pub(super) v6_0: bool,
    /// v5.15+: select_fallback_rq()'s node loop asks is_cpu_allowed() (v5.12.9
    /// 2742-2748: "if (!cpu_active(dest_cpu)) continue; if (cpumask_test_cpu(dest_cpu,
    /// p->cpus_ptr)) return dest_cpu;").
    pub(super) v5_15: bool,
}

impl K<'_> {
    /// record_wakee(p): the waker's flips after it. `time_after(jiffies,
    /// wakee_flip_decay_ts + HZ)` is `(long)((decay_ts + HZ) - jiffies) < 0`.
    pub(super) fn record_wakee(&self) -> u32 {
        let mut flips = self.cur.wakee_flips;
        let diff = self
            .cur
            .wakee_flip_decay_ts
            .wrapping_add(self.s.hz)
            .wrapping_sub(self.s.jiffies);
        if (diff as i64) < 0 {
            flips >>= 1;
        }
        if self.cur.last_wakee != Some(self.p.id) {
            flips = flips.wrapping_add(1);
        }
        flips
    }

    /// select_task_rq_fair(p, prev_cpu, wake_flags), v6.12.19 8661-8723, WF_TTWU set.
    pub(super) fn select_task_rq_fair_612(&self, flags: WakeFlags) -> u32 {
        let sync = flags.contains(WakeFlags::SYNC) && !self.cur.exiting;
        let cpu = self.this;
        let prev = self.p.prev_cpu.0;
        let flips = self.record_wakee();
        if flags.contains(WakeFlags::CURRENT_CPU) && self.allowed(cpu) {
            return cpu;
        }
        // is_rd_overutilized() is true without an energy model: no EAS.
        let want_affine = !self.wake_wide(flips) && self.allowed(cpu);
        let new_cpu = self.domain_walk(want_affine, sync);
        self.select_idle_sibling(prev, new_cpu)
    }

    fn cpu_active(&self, c: u32) -> bool {
        self.env.cpu_online(CpuId(c)) && self.rq(c).active
    }

    /// is_cpu_allowed(p, cpu): no migrate_disable(); `per_cpu_kthread` stands for
    /// both PF_KTHREAD and kthread_is_per_cpu().
    fn is_cpu_allowed(&self, c: u32, widened: bool) -> bool {
        if !widened && !self.allowed(c) {
            return false;
        }
        if !self.p.per_cpu_kthread {
            return self.cpu_active(c);
        }
        self.env.cpu_online(CpuId(c))
    }

    /// select_fallback_rq(cpu, p): (CPU, whether p->cpus_ptr was widened).
    fn select_fallback_rq(&self, cpu: u32, core: Core) -> (u32, bool) {
        for d in self.env.node_mask(CpuId(cpu)).iter().map(|c| c.0) {
            let ok = if core.v5_15 {
                self.is_cpu_allowed(d, false)
            } else {
                self.cpu_active(d) && self.allowed(d)
            };
            if ok {
                return (d, false);
            }
        }
        if let Some(d) = self
            .p
            .allowed
            .iter()
            .map(|c| c.0)
            .find(|&d| self.is_cpu_allowed(d, false))
        {
            return (d, false);
        }
        // cpuset_cpus_allowed_fallback(): the root cpuset, every CPU.
        let n = self.env.nr_cpus();
        let d = (0..n)
            .find(|&d| self.is_cpu_allowed(d, true))
            .expect("an active CPU");
        (d, true)
    }

    /// ttwu_queue_cond() (v6.0+: `(p, cpu)`; before: `(cpu, wake_flags)`).
    fn ttwu_queue_cond(&self, cpu: u32, widened: bool, wf_on_cpu: bool, core: Core) -> bool {
        if !self.cpu_active(cpu) {
            return false;
        }
        if core.v6_0 && !widened && !self.allowed(cpu) {
            return false;
        }
        if !self.share_cache(self.this, cpu) {
            return true;
        }
        if core.v6_0 {
            if cpu == self.this {
                return false;
            }
            return self.rq(cpu).nr_running == 0;
        }
        wf_on_cpu && self.rq(cpu).nr_running <= 1
    }

    /// ttwu_queue_wakelist(): Some(path) when queued on `cpu`'s wake list.
    fn ttwu_queue_wakelist(
        &self,
        cpu: u32,
        widened: bool,
        wf_on_cpu: bool,
        core: Core,
    ) -> Option<QueuePath> {
        if !(self.env.patches.features.ttwu_queue
            && self.ttwu_queue_cond(cpu, widened, wf_on_cpu, core))
        {
            return None;
        }
        // v5.12.9 3156: "if (WARN_ON_ONCE(cpu == smp_processor_id())) return false;".
        if !core.v6_0 && cpu == self.this {
            return None;
        }
        let rq = self.rq(cpu);
        let first = !rq.ttwu_pending;
        let polling = rq.curr_is_idle && rq.polling;
        Some(QueuePath::Wakelist {
            ipi: first && !polling,
        })
    }

    /// try_to_wake_up()'s placement: the on_cpu shortcut, select_task_rq() (with the
    /// release's select_task_rq_fair() as `fair`), ttwu_queue().
    pub(super) fn try_to_wake_up(
        &self,
        fair: impl FnOnce() -> u32,
        core: Core,
    ) -> (u32, QueuePath) {
        let prev = self.p.prev_cpu.0;
        if self.p.on_cpu {
            if let Some(q) = self.ttwu_queue_wakelist(prev, false, !core.v6_0, core) {
                return (prev, q);
            }
        }
        let mut cpu = if self.p.allowed.weight() > 1 {
            fair()
        } else {
            self.p.allowed.first().unwrap().0
        };
        let mut widened = false;
        if !self.is_cpu_allowed(cpu, false) {
            (cpu, widened) = self.select_fallback_rq(prev, core);
        }
        if let Some(q) = self.ttwu_queue_wakelist(cpu, widened, false, core) {
            return (cpu, q);
        }
        (
            cpu,
            if cpu == self.this {
                QueuePath::Local
            } else {
                QueuePath::RemoteLock
            },
        )
    }
}

/// A random wake-up for the transcriptions of this file and `transcript_512.rs`:
/// `random_state()`, `perturb()`'s corners (with SIS_PROP inputs when `sis_prop`), and
/// what the v6.8 transcription leaves fixed: inactive CPUs, polling idle CPUs, p still
/// on_cpu, an exiting waker, the flips and their decay clock. Returns the state, p,
/// the waker, `current` and in_task().
pub(super) fn draw(
    env: &WakeEnv,
    (seed, busy_pct, restrict): (u64, u64, bool),
    extra: u64,
    more: u64,
    sis_prop: bool,
) -> (SchedState, TaskState, Waker, TaskState, bool) {
    let (mut s, mut p, mut waker) = random_state(env, seed, busy_pct, restrict);
    let in_task = perturb(env, &mut s, &mut p, &mut waker, extra, sis_prop);
    let mut cur = waker.task.take().unwrap();
    let mut x = more;
    for c in 0..s.rqs.len() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if (x >> 59) == 0 {
            s.rqs[c].active = false;
        }
        if (x >> 52) & 31 == 3 && s.rqs[c].curr_is_idle {
            s.rqs[c].polling = true;
        }
        if sis_prop {
            s.sis_prop.avg_idle_ns[c] = (x >> 30) % (1 << 22);
        }
    }
    p.on_cpu = more % 7 == 1;
    cur.exiting = more % 13 == 2;
    if more.is_multiple_of(3) {
        s.jiffies = (more >> 8) % 4096;
        cur.wakee_flip_decay_ts = (more >> 20) % 4096;
    }
    if more % 17 == 5 {
        cur.last_wakee = Some(p.id);
    }
    if more % 4 == 1 {
        // Flips near wake_wide()'s thresholds, where the decay decides.
        cur.wakee_flips = ((more >> 32) % 8192) as u32;
        p.wakee_flips = ((more >> 45) % 128) as u32;
    }
    waker.task = Some(cur.clone());
    (s, p, waker, cur, in_task)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(1024), ..ProptestConfig::default() })]

    #[test]
    fn the_model_agrees_with_a_transcription_of_v6_12(
        preset in 0usize..PRESETS.len(),
        seed in any::<u64>(),
        busy_pct in 0u64..=100,
        sync in any::<bool>(),
        current_cpu in any::<bool>(),
        restrict in any::<bool>(),
        extra in any::<u64>(),
        more in any::<u64>(),
    ) {
        let env = env_of(preset);
        prop_assert!(!env.domains.sched_asym_cpucapacity, "uclamp/task_util not transcribed");
        let (s, p, waker, cur, in_task) = draw(env, (seed, busy_pct, restrict), extra, more, false);
        let k = K { v6_9: true, ..K::new(env, &s, &p, &cur, waker.cpu.0, in_task) };
        let mut flags = WakeFlags::TTWU;
        if sync {
            flags = flags.union(WakeFlags::SYNC);
        }
        if current_cpu && more % 5 == 0 {
            flags = flags.union(WakeFlags::CURRENT_CPU);
        }
        let core = Core { v6_0: true, v5_15: true };
        let want = k.try_to_wake_up(|| k.select_task_rq_fair_612(flags), core);
        let d = wake_up(env, &s, &p, &waker, flags, &mut PathOnly);
        let at = format!("{} seed {} extra {} more {}", PRESETS[preset], seed, extra, more);
        prop_assert_eq!((d.cpu.0, d.queue), want, "{}", at);
        let d2 = wake_up(env, &s, &p, &waker, flags, &mut NoTrace);
        prop_assert_eq!((d.cpu, d.queue), (d2.cpu, d2.queue));
    }
}
