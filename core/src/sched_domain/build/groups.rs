//! Step 3 of `build_sched_domains()` (topology.c v6.8): the groups of every domain, in
//! the kernel's order, and for non-overlapping levels `build_sched_groups()` with
//! `get_group()`, whose groups (`sdd->sg[cpu]`) are shared by every CPU that reaches
//! them. Overlapping (NUMA) levels go to `overlap.rs`.
//!
//! Simplified in representation only: a circular `sg->next` list is a ring stored
//! once (`intern_ring()`), and a CPU whose walk must give the list an earlier CPU got
//! (`same_groups_as()`) shares it instead of walking its span again.

use std::borrow::Cow;

use super::{Builder, GroupList, Sg, Sgc, NONE, SCHED_CAPACITY_SCALE};
use crate::cpumask::{CpuId, CpuMask};
use crate::fxhash::FxHashMap;
use crate::sched_domain::SdFlags;

impl Builder<'_> {
    /// Step 3: groups for every domain of every CPU, in the kernel's order (CPU by CPU,
    /// each bottom-up), which is the order `get_group()` and `init_overlap_sched_group()`
    /// touch the shared sched_group_capacity objects in. A CPU whose circular list must
    /// equal the one of the previous CPU with the same span (see `same_groups_as`)
    /// shares it instead of walking the span again.
    pub(super) fn build_groups(&mut self) {
        let n_levels = self.levels.len();
        let n = self.m.nr_cpus() as usize;
        let anchors: Vec<Vec<u32>> = (0..n_levels)
            .map(|tl| {
                let mut a = vec![NONE; n];
                for cpu in self.online() {
                    a[cpu.idx()] = self.group_anchor(tl, cpu).0;
                }
                a
            })
            .collect();
        self.anchors = anchors;
        let partition: Vec<bool> = (0..n_levels)
            .map(|tl| !self.levels[tl].overlap && self.groups_partition(tl))
            .collect();
        let mut last: Vec<FxHashMap<u32, CpuId>> = vec![FxHashMap::default(); n_levels];
        let mut stamp = vec![0u32; self.m.nr_cpus() as usize];
        let mut gen = 0u32;
        for cpu in self.online() {
            for tl in 0..n_levels {
                let Some(sd) = self.sd_ref(tl, cpu) else {
                    break;
                };
                let prev = last[tl].insert(sd.span_id, cpu);
                let overlap = self.levels[tl].overlap;
                let list = match prev.and_then(|p| self.same_groups_as(tl, p, cpu)) {
                    Some(list) => {
                        if overlap {
                            self.init_overlap_sgc_again(list);
                        }
                        list
                    }
                    None if overlap => self.build_overlap_sched_groups(tl, cpu),
                    None if partition[tl] => {
                        match prev.and_then(|p| self.rotated_singletons(tl, p, cpu)) {
                            Some(list) => list,
                            None => {
                                gen += 1;
                                self.build_sched_groups(tl, cpu, &mut stamp, gen)
                            }
                        }
                    }
                    None => self.build_sched_groups_masked(tl, cpu),
                };
                self.sd[tl][cpu.idx()].as_mut().expect("built").groups = list;
            }
        }
    }

    /// Whether CPU `c`'s `build_sched_groups()` / `build_overlap_sched_groups()` at
    /// `tl` must give the list CPU `p` (built before it, same span) got; then that list.
    ///
    /// Both walk the span with wrap-around from the CPU, adding a group per CPU not yet
    /// covered. If `c` builds the same first group G0 as `p`, both hold `p` and `c`, and
    /// every CPU of the span between them lies in G0, then after G0 the two walks visit
    /// the same uncovered CPUs in the same order and build the same groups.
    fn same_groups_as(&self, tl: usize, p: CpuId, c: CpuId) -> Option<GroupList> {
        let list = self.sd_ref(tl, p)?.groups;
        if list.ring == NONE {
            return None;
        }
        let g0 = self.first_group(list);
        let g0_span = &self.groups[g0].span;
        let span = &self.sd_ref(tl, c)?.span;
        if !g0_span.test_cpu(p) || !g0_span.test_cpu(c) || p.0 >= c.0 {
            return None;
        }
        let mut i = p.0 + 1;
        while let Some(x) = span.next_from(i).filter(|x| x.0 < c.0) {
            if !g0_span.test_cpu(x) {
                return None;
            }
            i = x.0 + 1;
        }
        if self.levels[tl].overlap {
            // c's first group is built from its own child, as p's was from p's, when
            // that child fits the span (no descent) and matches p's in span and flags.
            if tl == 0 || !span.test_cpu(c) || !g0_span.is_subset(span) {
                return None;
            }
            let (pc, cc) = (self.sd_ref(tl - 1, p)?, self.sd_ref(tl - 1, c)?);
            let same = pc.span_id == cc.span_id
                && cc.span == *g0_span
                && cc.flags == self.groups[g0].flags;
            same.then_some(list)
        } else {
            (self.get_group_of(tl, c) == Some(g0)).then_some(list)
        }
    }

    /// `build_sched_groups()`'s list for CPU `c` at a partitioning level whose groups
    /// are single CPUs, from the list of CPU `p` (built before it, same span): the walk
    /// adds one group per CPU of the span in wrap-around order, so `c`'s list is `p`'s
    /// rotated to `c`'s group, which lies as many places after `p`'s as the span has
    /// CPUs in `p..c`. Same ring, so `intern_ring()` would return it.
    fn rotated_singletons(&self, tl: usize, p: CpuId, c: CpuId) -> Option<GroupList> {
        let list = self.sd_ref(tl, p)?.groups;
        if list.ring == NONE || p.0 >= c.0 {
            return None;
        }
        let span = &self.sd_ref(tl, c)?.span;
        let k = self.rings[list.ring as usize].len() as u32;
        if k != span.weight() || !span.test_cpu(p) || !span.test_cpu(c) {
            return None;
        }
        let offset = span.weight_range(p.0, c.0);
        Some(GroupList {
            ring: list.ring,
            first: (list.first + offset) % k,
        })
    }

    /// The `get_group()` key: the first CPU of the child's span, or the CPU itself at
    /// the lowest level, and the group's span.
    fn group_anchor(&self, tl: usize, cpu: CpuId) -> CpuId {
        if let Some(&a) = self.anchors.get(tl).and_then(|a| a.get(cpu.idx())) {
            if a != NONE {
                return CpuId(a);
            }
        }
        match self.child_span(tl, cpu) {
            Some(cs) => cs.first().expect("child span holds its CPU"),
            None => cpu,
        }
    }

    /// The group `get_group(cpu)` would return at `tl`, if it exists yet.
    fn get_group_of(&self, tl: usize, cpu: CpuId) -> Option<usize> {
        let g = self.sg_of[tl][self.group_anchor(tl, cpu).idx()];
        (g != NONE).then_some(g as usize)
    }

    /// Whether the groups `get_group()` makes at `tl` partition the online CPUs, each
    /// CPU in the group of its own anchor: then "covered by an earlier group" in
    /// `build_sched_groups()` is "its group was already added", which a stamp per group
    /// answers without the covered mask. A non-overlapping level over a sane child
    /// always passes; anything else takes the mask walk.
    fn groups_partition(&self, tl: usize) -> bool {
        let n = self.m.nr_cpus() as usize;
        let mut owner = vec![NONE; n];
        let mut first_of_anchor = vec![NONE; n];
        let online = self.online();
        // The group get_group() makes for `c`: its child's span, or `c` alone at the
        // lowest level (borrowed where it exists: a clone per CPU is 512 bytes on a
        // 4096-CPU machine).
        let span_of = |c: CpuId| match self.child_span(tl, c) {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(CpuMask::of(self.m.nr_cpus(), c)),
        };
        for &i in &online {
            let a = self.group_anchor(tl, i);
            let span_i = span_of(i);
            let f = first_of_anchor[a.idx()];
            if f != NONE {
                if span_of(CpuId(f)) != span_i {
                    return false;
                }
                continue;
            }
            first_of_anchor[a.idx()] = i.0;
            for j in span_i.iter() {
                if owner[j.idx()] != NONE {
                    return false;
                }
                owner[j.idx()] = a.0;
            }
        }
        online
            .iter()
            .all(|&i| owner[i.idx()] == self.group_anchor(tl, i).0)
    }

    /// A circular list of groups (`sg->next`), stored once: every rotation of it
    /// (another CPU entering the same ring) shares the ring.
    pub(super) fn intern_ring(&mut self, list: Vec<u32>) -> GroupList {
        let k = list.len();
        let pos = (0..k).min_by_key(|&j| list[j]).unwrap_or(0);
        let mut ring = list;
        ring.rotate_left(pos);
        let first = ((k - pos) % k.max(1)) as u32;
        if let Some(&r) = self.ring_of.get(&ring) {
            return GroupList { ring: r, first };
        }
        let r = self.push_ring(ring.clone());
        self.ring_of.insert(ring, r);
        GroupList { ring: r, first }
    }

    /// A new ring of groups linked by `sg->next` (`last->next = first`).
    pub(super) fn push_ring(&mut self, ring: Vec<u32>) -> u32 {
        self.rings.push(ring);
        self.ring_init.push(0);
        self.rings.len() as u32 - 1
    }

    /// `get_group(cpu, sdd)`: the group anchored at the first CPU of the child's span,
    /// shared by all CPUs that reach it.
    fn get_group(&mut self, tl: usize, cpu: CpuId) -> usize {
        let anchor = self.group_anchor(tl, cpu);
        if let Some(g) = self.get_group_of(tl, cpu) {
            return g;
        }
        let (span, flags) = match self.child_span(tl, cpu) {
            Some(cs) => (cs.clone(), self.sd_ref(tl - 1, cpu).expect("child").flags),
            None => (CpuMask::of(self.m.nr_cpus(), cpu), SdFlags::EMPTY),
        };
        let capacity = SCHED_CAPACITY_SCALE * span.weight() as u64;
        self.sgc.insert(
            (tl, anchor.0),
            Sgc {
                id: anchor.0,
                capacity,
                balance_mask: span.clone(),
            },
        );
        self.groups.push(Sg {
            span,
            flags,
            sgc: (tl, anchor.0),
            cores: 0,
            asym_prefer_cpu: None,
        });
        let g = self.groups.len() - 1;
        self.sg_of[tl][anchor.idx()] = g as u32;
        g
    }

    /// `build_sched_groups(sd, cpu)`: walk the span from `cpu` with wrap-around, one
    /// group per uncovered child span; the first group holds `cpu`. The groups
    /// partition the CPUs (`groups_partition`), so a CPU is covered when its group's
    /// stamp is this walk's.
    fn build_sched_groups(
        &mut self,
        tl: usize,
        cpu: CpuId,
        stamp: &mut [u32],
        gen: u32,
    ) -> GroupList {
        let span = self.sd_ref(tl, cpu).expect("built").span.clone();
        let mut list = Vec::new();
        for i in span.iter_wrap(cpu.0) {
            let a = self.group_anchor(tl, i).idx();
            if stamp[a] == gen {
                continue;
            }
            stamp[a] = gen;
            list.push(self.get_group(tl, i) as u32);
        }
        self.intern_ring(list)
    }

    /// `build_sched_groups(sd, cpu)` with the kernel's covered mask, for levels whose
    /// groups do not partition the CPUs (a broken topology).
    fn build_sched_groups_masked(&mut self, tl: usize, cpu: CpuId) -> GroupList {
        let span = self.sd_ref(tl, cpu).expect("built").span.clone();
        let mut covered = CpuMask::new(self.m.nr_cpus());
        let mut list = Vec::new();
        for i in span.iter_wrap(cpu.0) {
            if covered.test_cpu(i) {
                continue;
            }
            let g = self.get_group(tl, i);
            covered.or_assign(&self.groups[g].span);
            list.push(g as u32);
        }
        self.intern_ring(list)
    }
}
