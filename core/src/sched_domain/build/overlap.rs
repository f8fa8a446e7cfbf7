//! Step 3 of `build_sched_domains()` at overlapping (NUMA) levels (topology.c v6.8):
//! `build_overlap_sched_groups()`, with `find_descended_sibling()` (585b6d2723dc,
//! v5.13) written inline as the descent loop, `build_group_from_child_sched_domain()`
//! and `init_overlap_sched_group()` inline too, and `build_balance_mask()`.
//!
//! Simplified in representation only: the kernel allocates these groups per domain,
//! and on a machine of many nodes at one distance every CPU's NUMA domain holds a
//! copy of every node's group (1024 nodes: a million groups). A group is a function of
//! the sibling domain it is built from (its child's span and flags, or its own span)
//! and of `build_balance_mask()`, which depends on the span alone, so equal groups are
//! stored once (`Builder::overlap_sg`) and rings that are rotations of one another
//! share one (`intern_ring()`). Nothing mutates an overlapping group after this step
//! but `cpu_attach_domain()`'s first-group flags, which stay with the domain
//! (`attach.rs`), and the sgc, which is shared in the kernel too and is still written
//! once per group per domain, in the kernel's order.

use super::{Builder, GroupList, Sg, Sgc, SCHED_CAPACITY_SCALE};
use crate::cpumask::{CpuId, CpuMask};
use crate::sched_domain::SdFlags;

impl Builder<'_> {
    /// `build_overlap_sched_groups(sd, cpu)`, with the NUMA-diameter > 2 fix
    /// (585b6d2723dc, v5.13) that descends to a sibling whose child fits the span.
    /// The kernel allocates these groups per domain; equal ones are stored once here.
    pub(super) fn build_overlap_sched_groups(&mut self, tl: usize, cpu: CpuId) -> GroupList {
        let span = self.sd_ref(tl, cpu).expect("built").span.clone();
        let mut covered = CpuMask::new(self.m.nr_cpus());
        let mut list = Vec::new();
        for i in span.iter_wrap(cpu.0) {
            if covered.test_cpu(i) {
                continue;
            }
            // "make sure to skip domains that already cover the entire range": a CPU
            // whose hierarchy ended lower has an empty sibling here.
            let Some(sibling) = self.sd_ref(tl, i) else {
                continue;
            };
            if !sibling.span.test_cpu(i) {
                continue;
            }
            let mut stl = tl;
            if self.cfg.release.has_numa_diameter_fix() {
                while let Some(cs) = self.child_span(stl, i) {
                    if cs.is_subset(&span) {
                        break;
                    }
                    stl -= 1;
                }
            }
            // build_group_from_child_sched_domain(): the group is its sibling's child
            // (or the sibling itself at the lowest level), so it is keyed by that
            // domain's span id and flags. Met before: the same group, whose sgc
            // init_overlap_sched_group() writes again.
            let key = match self.sd_ref(stl.wrapping_sub(1), i).filter(|_| stl > 0) {
                Some(child) => (stl as u32, true, child.span_id, child.flags),
                None => {
                    let sib = self.sd_ref(stl, i).expect("sibling");
                    (stl as u32, false, sib.span_id, SdFlags::EMPTY)
                }
            };
            if let Some(&g) = self.overlap_sg.get(&key) {
                let sg = &self.groups[g as usize];
                let capacity = SCHED_CAPACITY_SCALE * sg.span.weight() as u64;
                if let Some(sgc) = self.sgc.get_mut(&sg.sgc) {
                    sgc.capacity = capacity;
                }
                covered.or_assign(&self.groups[g as usize].span);
                list.push(g);
                continue;
            }
            let (sg_span, sg_flags) = match self.child_span(stl, i) {
                Some(cs) => (
                    cs.clone(),
                    self.sd_ref(stl - 1, i).expect("child exists").flags,
                ),
                None => (
                    self.sd_ref(stl, i).expect("sibling").span.clone(),
                    SdFlags::EMPTY,
                ),
            };
            // init_overlap_sched_group()
            let mask = self.build_balance_mask(stl, &sg_span);
            let bcpu = mask.first().expect("balance mask never empty");
            let capacity = SCHED_CAPACITY_SCALE * sg_span.weight() as u64;
            let sgc = self.sgc.entry((stl, bcpu.0)).or_insert_with(|| Sgc {
                id: bcpu.0,
                capacity,
                balance_mask: mask.clone(),
            });
            // "Initialize sgc->capacity such that even if we mess up the domains ..."
            sgc.capacity = capacity;
            covered.or_assign(&sg_span);
            self.groups.push(Sg {
                span: sg_span,
                flags: sg_flags,
                sgc: (stl, bcpu.0),
                cores: 0,
                asym_prefer_cpu: None,
            });
            let g = self.groups.len() as u32 - 1;
            self.overlap_sg.insert(key, g);
            list.push(g);
        }
        self.intern_ring(list)
    }

    /// `build_balance_mask(sd, sg, mask)`: the CPUs of the group whose own sibling at
    /// this level would build the same group (its child spans exactly the group).
    fn build_balance_mask(&mut self, tl: usize, sg_span: &CpuMask) -> CpuMask {
        if let Some(m) = self.balance_masks[tl].get(sg_span) {
            return m.clone();
        }
        let mut mask = CpuMask::new(self.m.nr_cpus());
        for i in sg_span.iter() {
            if self.sd_ref(tl, i).is_none() {
                continue;
            }
            // "Can happen in the asymmetric case, where these siblings are unused."
            let Some(cs) = self.child_span(tl, i) else {
                continue;
            };
            // "If we would not end up here, we can't continue from here"
            if cs != sg_span {
                continue;
            }
            mask.set_cpu(i);
        }
        if mask.is_empty() {
            // WARN_ON_ONCE(cpumask_empty(mask)) in the kernel; keep going with the span
            // so that a sgc exists, as the kernel would crash-proof itself.
            self.messages
                .push("WARNING: empty sched_group balance mask".to_string());
            mask = sg_span.clone();
        }
        self.balance_masks[tl].insert(sg_span.clone(), mask.clone());
        mask
    }

    /// The per-domain part of `init_overlap_sched_group()` for a list shared with an
    /// earlier CPU: each group's sgc gets its capacity set again, as the kernel's own
    /// copy of the group would set it.
    pub(super) fn init_overlap_sgc_again(&mut self, list: GroupList) {
        let ring = &self.rings[list.ring as usize];
        let k = ring.len();
        for j in 0..k {
            let sg = &self.groups[ring[(list.first as usize + j) % k] as usize];
            let capacity = SCHED_CAPACITY_SCALE * sg.span.weight() as u64;
            if let Some(sgc) = self.sgc.get_mut(&sg.sgc) {
                sgc.capacity = capacity;
            }
        }
    }
}
