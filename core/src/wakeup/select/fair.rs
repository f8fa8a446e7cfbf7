//! kernel/sched/fair.c's entry to the wake-up: `select_task_rq_fair()`, with
//! `record_wakee()` and `wake_wide()` (spread or pull), the `wake_affine()` family
//! (`wake_affine_idle()`, `wake_affine_weight()`). The slow path continues in
//! `find_idlest_cpu()` (`idlest.rs`), the fast path in `select_idle_sibling()`
//! (`idle_sibling.rs`).

use crate::cpumask::CpuId;
use crate::release::Release;
use crate::sched_domain::SdFlags;
use crate::wakeup::code::Site;
use crate::wakeup::trace::{Step, Tracer};
use crate::wakeup::{WakeFlags, WakePath, Waker};

use super::Ctx;

impl<'a, T: Tracer> Ctx<'a, T> {
    /// `record_wakee(p)` (kernel/sched/fair.c v6.8, lines 6951-6966), run in the
    /// waker; returns the waker's updated flips. C types: `jiffies` and
    /// `wakee_flip_decay_ts` are `unsigned long`, compared with `time_after()` (a
    /// signed difference, so it survives jiffies wrapping); `wakee_flips` is
    /// `unsigned int` and `wakee_flips++` wraps.
    fn record_wakee(&mut self, waker: &Waker) -> u32 {
        let Some(cur) = &waker.task else {
            return 0;
        };
        let mut flips = cur.wakee_flips;
        let mut decay_ts = cur.wakee_flip_decay_ts;
        // "Only decay a single time": time_after(jiffies, decay_ts + HZ), i.e.
        // (long)((decay_ts + HZ) - jiffies) < 0.
        let until_decay = decay_ts
            .wrapping_add(self.s.hz)
            .wrapping_sub(self.s.jiffies);
        if (until_decay as i64) < 0 {
            flips >>= 1;
            decay_ts = self.s.jiffies;
        }
        if cur.last_wakee != Some(self.p.id) {
            flips = flips.wrapping_add(1);
        }
        self.effects.waker_wakee = Some((flips, decay_ts, self.p.id));
        flips
    }

    /// `wake_wide(p)` (kernel/sched/fair.c v6.8, lines 6985-6996): many-to-one wakers
    /// spread instead of pulling.
    ///
    /// ```c
    /// unsigned int master = current->wakee_flips;
    /// unsigned int slave = p->wakee_flips;
    /// int factor = __this_cpu_read(sd_llc_size);
    /// if (master < slave) swap(master, slave);
    /// if (slave < factor || master < slave * factor) return 0;
    /// return 1;
    /// ```
    ///
    /// `factor` is converted to `unsigned int` in both comparisons, and
    /// `slave * factor` is an `unsigned int` product that wraps modulo 2^32: with
    /// both flips at 2^28 and an LLC of 16 it is 0, and the wake-up goes wide.
    fn wake_wide(&mut self, waker_flips: u32) -> bool {
        let factor = self.env.top(self.this).sd_llc_size;
        let (mut master, mut slave) = (waker_flips, self.p.wakee_flips);
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        let wide = !(slave < factor || master < slave.wrapping_mul(factor));
        self.t.step(Site::WakeWide, || Step::Check {
            func: "wake_wide",
            condition: format!(
                "wakee_flips {waker_flips} (waker) / {} (wakee) against sd_llc_size {factor}: wake wide",
                self.p.wakee_flips
            ),
            outcome: wide,
            cpu: None,
        });
        wide
    }

    /// `select_task_rq_fair(p, prev_cpu, wake_flags)`.
    pub(super) fn select_task_rq_fair(
        &mut self,
        waker: &Waker,
        prev: CpuId,
        wake_flags: WakeFlags,
    ) -> CpuId {
        let sync =
            wake_flags.contains(WakeFlags::SYNC) && !waker.task.as_ref().is_some_and(|t| t.exiting);
        let cpu = self.this;
        let mut new_cpu = prev;
        let mut want_affine = false;
        let sd_flag = SdFlags(wake_flags.0 & 0xF);
        self.t.step(Site::FairEnter, || Step::Enter {
            func: "select_task_rq_fair",
            detail: format!(
                "p={}, prev_cpu={}, this_cpu={}, sync={}",
                self.p.id.0, prev.0, cpu.0, sync
            ),
        });
        if wake_flags.contains(WakeFlags::TTWU) {
            let flips = self.record_wakee(waker);
            // WF_CURRENT_CPU exists from 6.6 (ab83f455f04d); before, bit 0x40 is
            // WF_ON_CPU (until 5.19) or unused, and select_task_rq_fair() ignores it.
            if self.release.has_wf_current_cpu()
                && wake_flags.contains(WakeFlags::CURRENT_CPU)
                && self.p.allowed.test_cpu(cpu)
            {
                self.set_path(WakePath::CurrentCpu);
                self.t.step(Site::CurrentCpu, || Step::Return {
                    func: "select_task_rq_fair",
                    cpu: Some(cpu),
                    why: "WF_CURRENT_CPU".into(),
                });
                return cpu;
            }
            // EAS (find_energy_efficient_cpu) needs an energy model: not modelled.
            want_affine = !self.wake_wide(flips) && self.p.allowed.test_cpu(cpu);
        }
        let mut slow_sd: Option<usize> = None;
        for (i, tmp) in self.env.sd_walk(cpu).iter().enumerate() {
            if want_affine && tmp.flags.contains(SdFlags::WAKE_AFFINE) && tmp.span.test_cpu(prev) {
                self.t.step(Site::AffineDomain, || Step::Check {
                    func: "select_task_rq_fair",
                    condition: format!(
                        "domain {} ({}) has SD_WAKE_AFFINE and spans prev_cpu {}",
                        self.env.domains.cpu(cpu).domains[i].name,
                        tmp.span,
                        prev.0
                    ),
                    outcome: true,
                    cpu: Some(prev),
                });
                if cpu != prev {
                    new_cpu = self.wake_affine(i, cpu, prev, sync);
                }
                slow_sd = None;
                break;
            }
            if tmp.flags.intersects(sd_flag) {
                slow_sd = Some(i);
            } else if !want_affine {
                break;
            }
        }
        let target = if let Some(i) = slow_sd {
            self.set_path(WakePath::SlowPath);
            self.find_idlest_cpu(i, cpu, prev, sd_flag)
        } else if wake_flags.contains(WakeFlags::TTWU) {
            let t = self.select_idle_sibling(prev, new_cpu);
            // Before 5.15: "if (want_affine) current->recent_used_cpu = cpu;".
            if want_affine && self.release < Release::new(5, 15) && waker.task.is_some() {
                self.effects.waker_recent_used_cpu = Some(cpu);
            }
            t
        } else {
            self.set_path(WakePath::Affine);
            new_cpu
        };
        let site = if slow_sd.is_some() {
            Site::FairReturnSlow
        } else {
            Site::FairReturnFast
        };
        self.t.step(site, || Step::Return {
            func: "select_task_rq_fair",
            cpu: Some(target),
            why: if slow_sd.is_some() {
                "slow path".into()
            } else {
                "fast path".into()
            },
        });
        target
    }

    /// `wake_affine(sd, p, this_cpu, prev_cpu, sync)`.
    fn wake_affine(&mut self, sd_idx: usize, this: CpuId, prev: CpuId, sync: bool) -> CpuId {
        let f = self.env.patches.features;
        let mut target = None;
        if f.wa_idle {
            target = self.wake_affine_idle(this, prev, sync);
        }
        if f.wa_weight && target.is_none() {
            target = self.wake_affine_weight(sd_idx, this, prev, sync);
        }
        let res = if target == Some(this) { this } else { prev };
        let site = if res == this {
            Site::WakeAffineThis
        } else {
            Site::WakeAffinePrev
        };
        self.t.step(site, || Step::Return {
            func: "wake_affine",
            cpu: Some(res),
            why: if res == this {
                "pull towards the waker".into()
            } else {
                "stay near prev".into()
            },
        });
        res
    }

    /// `wake_affine_idle(this_cpu, prev_cpu, sync)`.
    fn wake_affine_idle(&mut self, this: CpuId, prev: CpuId, sync: bool) -> Option<CpuId> {
        self.touch(prev);
        // "If this_cpu is idle, it implies the wakeup is from interrupt context. Only
        // allow the move if cache is shared."
        if self.available_idle_cpu(this) && self.share_cache(this, prev) {
            let r = if self.available_idle_cpu(prev) {
                prev
            } else {
                this
            };
            self.t.step(Site::AffineIdleThis, || Step::Check {
                func: "wake_affine_idle",
                condition: format!("this CPU{} idle and shares cache with prev", this.0),
                outcome: true,
                cpu: Some(this),
            });
            return Some(r);
        }
        // cpu_rq(this_cpu)->nr_running: without wakees still on this CPU's wake list
        // (not on the rq until sched_ttwu_pending(), core.c v6.8 3885-3918).
        if sync && self.s.rq(this).nr_running == 1 {
            self.t.step(Site::AffineIdleSync, || Step::Check {
                func: "wake_affine_idle",
                condition: "sync wake-up and the waker is alone on this CPU".into(),
                outcome: true,
                cpu: Some(this),
            });
            return Some(this);
        }
        if self.available_idle_cpu(prev) {
            self.t.step(Site::AffineIdlePrev, || Step::Check {
                func: "wake_affine_idle",
                condition: format!("prev CPU{} idle", prev.0),
                outcome: true,
                cpu: Some(prev),
            });
            return Some(prev);
        }
        None
    }

    /// `wake_affine_weight(sd, p, this_cpu, prev_cpu, sync)` (kernel/sched/fair.c
    /// v6.8, lines 7037-7078), with C's integer types: the effective loads are `s64`,
    /// `cpu_load()`, `task_h_load()` and `capacity_of()` are `unsigned long` (so
    /// `current_load > this_eff_load` compares unsigned, and the mixed `+=`, `-=`,
    /// `*=` are done in `u64` and converted back), `sd->imbalance_pct` is
    /// `unsigned int` (so `(imbalance_pct - 100) / 2` is unsigned). The kernel builds
    /// with -fno-strict-overflow, so every step wraps in two's complement; the
    /// comparison at the end is signed.
    fn wake_affine_weight(
        &mut self,
        sd_idx: usize,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> Option<CpuId> {
        let f = self.env.patches.features;
        let sd = &self.env.sd_walk(this)[sd_idx];
        // this_eff_load = cpu_load(cpu_rq(this_cpu));
        let mut this_eff = self.s.rq(this).load_avg as i64;
        if sync {
            // unsigned long current_load = task_h_load(current);
            let cur = self.waker_load;
            // if (current_load > this_eff_load): this_eff_load converted to unsigned long.
            if cur > this_eff as u64 {
                return Some(this);
            }
            this_eff = this_eff.wrapping_sub(cur as i64);
        }
        // unsigned long task_load = task_h_load(p);
        let task_load = self.p.load as i64;
        this_eff = this_eff.wrapping_add(task_load);
        if f.wa_bias {
            this_eff = this_eff.wrapping_mul(100);
        }
        this_eff = this_eff.wrapping_mul(self.s.rq(prev).capacity as i64);
        let mut prev_eff = (self.s.rq(prev).load_avg as i64).wrapping_sub(task_load);
        if f.wa_bias {
            // 100 + (sd->imbalance_pct - 100) / 2, all unsigned int.
            let bias = 100u32.wrapping_add(sd.imbalance_pct.wrapping_sub(100) / 2);
            prev_eff = prev_eff.wrapping_mul(bias as i64);
        }
        prev_eff = prev_eff.wrapping_mul(self.s.rq(this).capacity as i64);
        if sync {
            prev_eff = prev_eff.wrapping_add(1);
        }
        let pull = this_eff < prev_eff;
        self.t.step(Site::AffineWeight, || Step::Check {
            func: "wake_affine_weight",
            condition: format!("this_eff_load {this_eff} < prev_eff_load {prev_eff}"),
            outcome: pull,
            cpu: None,
        });
        pull.then_some(this)
    }
}
