//! Step 5 of `build_sched_domains()` (topology.c v6.8): for CPUs in descending order,
//! `init_sched_groups_capacity()` on each of their domains (`sg->cores`,
//! `sg->asym_prefer_cpu`), and, on the group's balance CPU, `update_group_capacity()`
//! (fair.c v6.8) with `update_cpu_capacity()` at the lowest level.

use super::{Builder, SCHED_CAPACITY_SCALE};
use crate::cpumask::CpuId;
use crate::sched_domain::SdFlags;

impl Builder<'_> {
    /// Step 5: for CPUs in descending order, `init_sched_groups_capacity()` on each of
    /// their domains.
    pub(super) fn init_capacity(&mut self) {
        let mut cpus = self.online();
        cpus.reverse();
        let mut cpu_capacity: Vec<u64> = (0..self.m.nr_cpus())
            .map(|_| SCHED_CAPACITY_SCALE)
            .collect();
        for cpu in cpus {
            for tl in 0..self.levels.len() {
                if self.sd_ref(tl, cpu).is_none() {
                    break;
                }
                self.init_sched_groups_capacity(cpu, tl, &mut cpu_capacity);
            }
        }
    }

    /// `init_sched_groups_capacity(cpu, sd)`.
    fn init_sched_groups_capacity(&mut self, cpu: CpuId, tl: usize, cpu_capacity: &mut [u64]) {
        let sd = self.sd_ref(tl, cpu).expect("built");
        let list = sd.groups;
        let asym_packing = sd.flags.contains(SdFlags::ASYM_PACKING);
        // Both results depend on the group's span only: a ring another domain has
        // already initialised (with asym packing, if this one has it) is done.
        let need = if asym_packing { 3 } else { 1 };
        let r = list.ring as usize;
        if self.ring_init[r] & need != need {
            for j in 0..self.rings[r].len() {
                let g = self.rings[r][j] as usize;
                self.groups[g].cores = self.group_cores(g);
                if asym_packing {
                    // sched_asym_prefer(): higher priority wins; ties keep the lower CPU.
                    let mut best: Option<CpuId> = None;
                    for c in self.groups[g].span.iter() {
                        best = match best {
                            None => Some(c),
                            Some(b) if self.m.topo(c).asym_prio > self.m.topo(b).asym_prio => {
                                Some(c)
                            }
                            keep => keep,
                        };
                    }
                    self.groups[g].asym_prefer_cpu = best;
                }
            }
            self.ring_init[r] |= need;
        }
        // group_balance_cpu(sd->groups): first CPU of the first group's balance mask.
        let first = self.first_group(list);
        let balance_cpu = self.sgc[&self.groups[first].sgc]
            .balance_mask
            .first()
            .expect("non-empty");
        if cpu != balance_cpu {
            return;
        }
        self.update_group_capacity(tl, cpu, cpu_capacity);
    }

    /// `sg->cores` as `init_sched_groups_capacity()` counts it: the span's distinct SMT
    /// cores (`cpumask_andnot(mask, mask, cpu_smt_mask(cpu))`), once per span.
    fn group_cores(&mut self, g: usize) -> u32 {
        let span = &self.groups[g].span;
        if let Some(&cores) = self.cores_of.get(span) {
            return cores;
        }
        let mut mask = span.clone();
        let mut cores = 0;
        while let Some(c) = mask.first() {
            cores += 1;
            mask.andnot_assign(self.topo.smt.get(c));
            mask.clear_cpu(c);
        }
        self.cores_of.insert(span.clone(), cores);
        cores
    }

    /// `update_group_capacity(sd, cpu)`; without a child, `update_cpu_capacity()`.
    /// `capacity_of()` is the arch capacity (no RT/IRQ pressure at build time).
    fn update_group_capacity(&mut self, tl: usize, cpu: CpuId, cpu_capacity: &mut [u64]) {
        let sd = self.sd_ref(tl, cpu).expect("built");
        let sdg = self.first_group(sd.groups);
        let key = self.groups[sdg].sgc;
        let capacity = if tl == 0 {
            let cap = self.m.topo(cpu).capacity as u64;
            cpu_capacity[cpu.idx()] = cap;
            cap
        } else {
            let child = self.sd_ref(tl - 1, cpu).expect("child");
            if child.flags.contains(SdFlags::OVERLAP) {
                // "SD_OVERLAP domains cannot assume that child groups span the
                // current group."
                self.groups[sdg]
                    .span
                    .iter()
                    .map(|c| cpu_capacity[c.idx()])
                    .sum()
            } else {
                self.rings[child.groups.ring as usize]
                    .iter()
                    .map(|&g| self.sgc[&self.groups[g as usize].sgc].capacity)
                    .sum()
            }
        };
        if let Some(s) = self.sgc.get_mut(&key) {
            s.capacity = capacity;
        }
    }
}
