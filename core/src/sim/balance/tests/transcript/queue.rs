//! The transcription, continued: `should_we_balance()` with `is_core_idle()`, and
//! `find_busiest_queue()` with `fbq_classify_rq()`, from fair.c v6.8 in C's types
//! (kernel.rs's header).

use super::kernel::{Env, IdleType, Rq, ALL, MIGRATE_LOAD, MIGRATE_TASK, MIGRATE_UTIL, REGULAR};
use crate::cpumask::CpuId;
use crate::sched_domain::SdFlags;

impl Env<'_> {
    /// is_core_idle(), 1308-1323 (CONFIG_SCHED_SMT).
    fn is_core_idle(&self, cpu: u32) -> bool {
        for sibling in (self.smt_mask)(cpu).iter().map(|c| c.0) {
            if cpu == sibling {
                continue;
            }
            if !self.idle_cpu(sibling) {
                return false;
            }
        }
        true
    }

    /// should_we_balance(), 11194-11258 (v6.5 10764-10800: no idle_smt, the first
    /// idle CPU of the balance mask; v6.12 11680-11744, the same as v6.8).
    pub(super) fn should_we_balance(&self) -> bool {
        let sg = self.group(0);
        if !self.cpus.test_cpu(CpuId(self.dst_cpu)) {
            return false;
        }
        if self.idle == IdleType::CpuNewlyIdle {
            let rq = self.rq(self.dst_cpu);
            if rq.nr_running > 0 || rq.ttwu_pending {
                return false;
            }
            return true;
        }
        // for_each_cpu_and(cpu, swb_cpus, env->cpus) over a mask the loop changes.
        let mut swb_cpus = sg.balance_mask.clone();
        let mut idle_smt: Option<u32> = None;
        let mut next = 0;
        while let Some(cpu) = swb_cpus.and(&self.cpus).next_from(next).map(|c| c.0) {
            next = cpu + 1;
            if !self.idle_cpu(cpu) {
                continue;
            }
            if self.smt_aware() && !self.has(SdFlags::SHARE_CPUCAPACITY) && !self.is_core_idle(cpu)
            {
                if idle_smt.is_none() {
                    idle_smt = Some(cpu);
                }
                swb_cpus.andnot_assign(&(self.smt_mask)(cpu));
                continue;
            }
            return cpu == self.dst_cpu;
        }
        if let Some(c) = idle_smt {
            return c == self.dst_cpu;
        }
        // group_balance_cpu(sg): the first CPU of its balance mask.
        sg.balance_mask.first() == Some(CpuId(self.dst_cpu))
    }

    /// find_busiest_queue(), 10979-11119 (v6.5 10549-10689; v6.12
    /// sched_balance_find_src_rq(), 11469-11606).
    pub(super) fn find_busiest_queue(&self, gi: usize) -> Option<u32> {
        let mut busiest = None;
        let (mut busiest_util, mut busiest_load, mut busiest_capacity) = (0u64, 0u64, 1u64);
        let mut busiest_nr = 0u32;
        for i in self.group(gi).span.and(&self.cpus).iter().map(|c| c.0) {
            let rq = self.rq(i);
            let rt = fbq_classify_rq(rq);
            if rt > self.fbq_type {
                continue;
            }
            let nr_running = rq.h_nr_running;
            if nr_running == 0 {
                continue;
            }
            let capacity = rq.cpu_capacity;
            // The SD_ASYM_CPUCAPACITY skip: no such domain; the SD_ASYM_PACKING one:
            // left out (mod.rs).
            match self.migration_type {
                MIGRATE_LOAD => {
                    let load = self.cpu_load(i);
                    // load > env->imbalance: long converted to unsigned long.
                    if nr_running == 1
                        && load > self.imbalance as u64
                        && !self.check_cpu_capacity(i)
                    {
                        continue;
                    }
                    if load * busiest_capacity > busiest_load * capacity {
                        busiest_load = load;
                        busiest_capacity = capacity;
                        busiest = Some(i);
                    }
                }
                MIGRATE_UTIL => {
                    let util = self.cpu_util(i, true);
                    if nr_running <= 1 {
                        continue;
                    }
                    if busiest_util < util {
                        busiest_util = util;
                        busiest = Some(i);
                    }
                }
                MIGRATE_TASK => {
                    if busiest_nr < nr_running {
                        busiest_nr = nr_running;
                        busiest = Some(i);
                    }
                }
                _ => {
                    if rq.misfit_task_load > busiest_load {
                        busiest_load = rq.misfit_task_load;
                        busiest = Some(i);
                    }
                }
            }
        }
        busiest
    }
}

/// fbq_classify_rq(), 10126-10133 (CONFIG_NUMA_BALANCING), with no task placed by NUMA
/// balancing (`nr_numa_running` = `nr_preferred_running` = 0).
fn fbq_classify_rq(rq: &Rq) -> u8 {
    if rq.nr_running > 0 {
        return REGULAR;
    }
    ALL
}
