//! `build_sched_domains()` and the functions it calls, phase by phase.

use std::collections::HashMap;

use crate::cpumask::{CpuId, CpuMask};
use crate::topology::Machine;

use std::sync::Arc;

use super::levels::{node_reclaim_distance, numa_distances, topology_levels, Level, TopoMasks};
use super::{
    BuildConfig, CpuDomains, DomainError, Groups, LevelInfo, SchedDomain, SchedDomains, SchedGroup,
    SdFlags, SharedId,
};

/// No group, ring or span id.
const NONE: u32 = u32::MAX;

/// SCHED_CAPACITY_SCALE.
const SCHED_CAPACITY_SCALE: u64 = 1024;

/// A `struct sched_domain` while building: `sdd->sd[cpu]` of one level.
#[derive(Clone, Debug)]
struct BuildSd {
    span: CpuMask,
    flags: SdFlags,
    level: u32,
    imbalance_pct: u32,
    cache_nice_tries: u32,
    min_interval: u32,
    max_interval: u32,
    busy_factor: u32,
    /// Id of `span` among this level's distinct spans (equal ids, equal spans).
    span_id: u32,
    /// `sd->groups`: a ring of `Builder::rings` and where this domain enters it.
    groups: GroupList,
}

/// `sd->groups` while building: ring `ring` of `Builder::rings`, entered at `first`.
/// Domains whose circular lists are rotations of one another share a ring, as the
/// kernel's CPUs share one `sg->next` ring of `get_group()` objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GroupList {
    ring: u32,
    first: u32,
}

impl GroupList {
    const UNBUILT: GroupList = GroupList {
        ring: NONE,
        first: 0,
    };
}

/// A `struct sched_group`. Non-overlapping groups are per-CPU objects shared by every
/// CPU whose domain includes them; overlapping (NUMA) ones are allocated per domain.
#[derive(Clone, Debug)]
struct Sg {
    span: CpuMask,
    flags: SdFlags,
    /// Key of the `struct sched_group_capacity`.
    sgc: (usize, u32),
    cores: u32,
    asym_prefer_cpu: Option<CpuId>,
}

/// A `struct sched_group_capacity` (`sdd->sgc[cpu]`); holds the balance mask. Its
/// `ref` is not kept: nothing here frees domains.
#[derive(Clone, Debug)]
struct Sgc {
    id: u32,
    capacity: u64,
    balance_mask: CpuMask,
}

struct Builder<'a> {
    m: &'a Machine,
    cfg: &'a BuildConfig,
    cpu_map: CpuMask,
    levels: Vec<Level>,
    numa_distance: Vec<u8>,
    /// `sdd[tl].sd[cpu]`; `None` where the CPU's hierarchy stopped below `tl`.
    sd: Vec<Vec<Option<BuildSd>>>,
    /// Per level, the distinct domain spans (`BuildSd::span_id`).
    span_ids: Vec<HashMap<CpuMask, u32>>,
    groups: Vec<Sg>,
    /// Non-overlapping sched_group per level and anchor CPU (`sdd->sg[cpu]`).
    sg_of: Vec<Vec<u32>>,
    /// Per level, each online CPU's `get_group()` anchor, once the domains are built.
    anchors: Vec<Vec<u32>>,
    /// The circular group lists (indices into `groups`), each stored once.
    rings: Vec<Vec<u32>>,
    /// Non-overlapping rings by content, first group the lowest index.
    ring_of: HashMap<Vec<u32>, u32>,
    /// Per ring: `init_sched_groups_capacity()` has set its groups' cores (bit 0) and
    /// asym_prefer_cpu (bit 1); both depend on the group's span only.
    ring_init: Vec<u8>,
    /// `sg->cores` by group span.
    cores_of: HashMap<CpuMask, u32>,
    sgc: HashMap<(usize, u32), Sgc>,
    /// build_balance_mask() results, keyed by (tl, group span).
    balance_masks: HashMap<(usize, CpuMask), CpuMask>,
    messages: Vec<String>,
    /// The machine's sibling masks; `topo.smt` is `cpu_smt_mask()`.
    topo: TopoMasks,
    /// The distinct `arch_scale_cpu_capacity()` values of `cpu_map`.
    nr_capacities: usize,
}

/// Mirrors `build_sched_domains(cpu_map, attr)` followed by the attach of every CPU.
pub fn build_sched_domains(m: &Machine, cfg: &BuildConfig) -> Result<SchedDomains, DomainError> {
    let n = m.nr_cpus();
    let mut cpu_map = CpuMask::full(n);
    if let Some(off) = &cfg.offline {
        if off.nr_cpu_ids() != n {
            return Err(DomainError::OfflineMaskSize {
                mask: off.nr_cpu_ids(),
                machine: n,
            });
        }
        cpu_map.andnot_assign(off);
    }
    if cpu_map.is_empty() {
        return Err(DomainError::NoOnlineCpus);
    }
    if let Some(r) = cfg.relax_domain_level {
        if !(-1..=5).contains(&r) {
            return Err(DomainError::RelaxOutOfRange(r));
        }
    }
    let topo = TopoMasks::new(m);
    let levels = topology_levels(m, &topo, cfg, &cpu_map);
    let numa_distance = if m.config.numa {
        numa_distances(m, &cpu_map)
    } else {
        Vec::new()
    };
    let n_levels = levels.len();
    let mut capacities: Vec<u32> = cpu_map.iter().map(|c| m.topo(c).capacity).collect();
    capacities.sort();
    capacities.dedup();
    let mut b = Builder {
        m,
        cfg,
        cpu_map,
        levels,
        numa_distance,
        sd: vec![vec![None; n as usize]; n_levels],
        span_ids: vec![HashMap::new(); n_levels],
        groups: Vec::new(),
        sg_of: vec![vec![NONE; n as usize]; n_levels],
        anchors: Vec::new(),
        rings: Vec::new(),
        ring_of: HashMap::new(),
        ring_init: Vec::new(),
        cores_of: HashMap::new(),
        sgc: HashMap::new(),
        balance_masks: HashMap::new(),
        messages: Vec::new(),
        topo,
        nr_capacities: capacities.len(),
    };
    b.build_domains()?;
    b.build_groups();
    b.init_capacity();
    Ok(b.attach_all())
}

impl Builder<'_> {
    fn online(&self) -> Vec<CpuId> {
        self.cpu_map.iter().collect()
    }

    /// Step 2: for each CPU, `build_sched_domain()` per level bottom-up until a span
    /// covers `cpu_map`.
    fn build_domains(&mut self) -> Result<(), DomainError> {
        for tl in 0..self.levels.len() {
            if !self.levels[tl].overlap {
                self.topology_span_sane(tl)?;
            }
        }
        for cpu in self.online() {
            let mut child: Option<usize> = None;
            for tl in 0..self.levels.len() {
                let mut sd = self.build_sched_domain(tl, child, cpu);
                let covers_all = sd.span == self.cpu_map;
                let ids = &mut self.span_ids[tl];
                let next = ids.len() as u32;
                sd.span_id = *ids.entry(sd.span.clone()).or_insert(next);
                self.sd[tl][cpu.idx()] = Some(sd);
                child = Some(tl);
                if covers_all {
                    break;
                }
            }
        }
        Ok(())
    }

    /// `topology_span_sane()`: at a non-overlapping level, two CPUs' masks are either
    /// equal or disjoint.
    fn topology_span_sane(&self, tl: usize) -> Result<(), DomainError> {
        let masks = &self.levels[tl].masks;
        let online = self.online();
        // Each distinct mask needs checking once; compare each CPU's against the first
        // CPU of every other distinct mask. The masks are stored once per value, so a
        // repeat is an index seen before, and a mask that misses the union of those
        // seen so far overlaps none of them.
        let mut seen = vec![false; masks.distinct.len()];
        let mut covered = CpuMask::new(self.m.nr_cpus());
        let mut distinct: Vec<(CpuId, &CpuMask)> = Vec::new();
        for &c in &online {
            let id = masks.of[c.idx()] as usize;
            if seen[id] {
                continue;
            }
            seen[id] = true;
            let mc = &masks.distinct[id];
            if !mc.intersects(&covered) {
                covered.or_assign(mc);
                distinct.push((c, mc));
                continue;
            }
            for &(o, d) in &distinct {
                if mc.intersects(d) {
                    return Err(DomainError::SpanInsane {
                        level: self.levels[tl].name.to_string(),
                        a: o.0,
                        b: c.0,
                        span_a: d.to_list(),
                        span_b: mc.to_list(),
                    });
                }
            }
            distinct.push((c, mc));
        }
        Ok(())
    }

    /// `build_sched_domain(tl, cpu_map, attr, child, cpu)`.
    fn build_sched_domain(&mut self, tl: usize, child: Option<usize>, cpu: CpuId) -> BuildSd {
        let mut sd = self.sd_init(tl, child, cpu);
        if let Some(ctl) = child {
            let child_sd = self.sd[ctl][cpu.idx()]
                .as_ref()
                .expect("child built before parent");
            sd.level = child_sd.level + 1;
            if !child_sd.span.is_subset(&sd.span) {
                self.messages.push("BUG: arch topology borken".to_string());
                self.messages.push(format!(
                    "     the {} domain not a subset of the {} domain",
                    self.levels[ctl].name, self.levels[tl].name
                ));
                let child_span = child_sd.span.clone();
                sd.span.or_assign(&child_span);
            }
        }
        self.set_domain_attribute(&mut sd);
        sd
    }

    /// `set_domain_attribute()`: domains above `relax_domain_level` lose wake and
    /// newidle balancing. v6.9 (Vitalii Bursov) made the test `>=`, so that level 0
    /// can turn newidle balancing off everywhere.
    fn set_domain_attribute(&self, sd: &mut BuildSd) {
        let Some(request) = self.cfg.relax_domain_level else {
            return;
        };
        if request < 0 {
            return;
        }
        let request = request as u32;
        let relax = if self.cfg.release >= crate::release::Release::new(6, 9) {
            sd.level >= request
        } else {
            sd.level > request
        };
        if relax {
            sd.flags
                .remove(SdFlags::BALANCE_WAKE.union(SdFlags::BALANCE_NEWIDLE));
        }
    }

    /// `sd_init(tl, cpu_map, child, cpu)`.
    fn sd_init(&mut self, tl: usize, child: Option<usize>, cpu: CpuId) -> BuildSd {
        let level = &self.levels[tl];
        let mask = level.masks.get(cpu);
        let sd_weight = mask.weight();
        let mut allowed = SdFlags::SHARE_CPUCAPACITY
            .union(SdFlags::SHARE_LLC)
            .union(SdFlags::NUMA)
            .union(SdFlags::ASYM_PACKING);
        if self.cfg.sd_cluster {
            allowed.insert(SdFlags::CLUSTER);
        }
        // "wrong sd_flags in topology description": dropped with a WARN.
        let topo = SdFlags(level.sd_flags.0 & allowed.0);
        let mut flags = SdFlags::BALANCE_NEWIDLE
            .union(SdFlags::BALANCE_EXEC)
            .union(SdFlags::BALANCE_FORK)
            .union(SdFlags::WAKE_AFFINE)
            .union(SdFlags::PREFER_SIBLING)
            .union(topo);
        let span = mask.and(&self.cpu_map);
        flags.insert(self.asym_cpu_capacity_classify(&span));
        let mut imbalance_pct = 117;
        let mut cache_nice_tries = 0;
        // "Don't attempt to spread across CPUs of different capacities."
        if flags.contains(SdFlags::ASYM_CPUCAPACITY) {
            if let Some(ctl) = child {
                if let Some(c) = self.sd[ctl][cpu.idx()].as_mut() {
                    c.flags.remove(SdFlags::PREFER_SIBLING);
                }
            }
        }
        if flags.contains(SdFlags::SHARE_CPUCAPACITY) {
            imbalance_pct = 110;
        } else if flags.contains(SdFlags::SHARE_LLC) {
            imbalance_pct = 117;
            cache_nice_tries = 1;
        } else if flags.contains(SdFlags::NUMA) {
            cache_nice_tries = 2;
            flags.remove(SdFlags::PREFER_SIBLING);
            flags.insert(SdFlags::SERIALIZE);
            let numa_level = level.numa_level.unwrap_or(0);
            if self.numa_distance[numa_level] > node_reclaim_distance(self.m) {
                flags.remove(
                    SdFlags::BALANCE_EXEC
                        .union(SdFlags::BALANCE_FORK)
                        .union(SdFlags::WAKE_AFFINE),
                );
            }
        } else {
            cache_nice_tries = 1;
        }
        if level.overlap {
            // build_sched_domains(): "if (tl->flags & SDTL_OVERLAP) sd->flags |= SD_OVERLAP".
            flags.insert(SdFlags::OVERLAP);
        }
        BuildSd {
            span,
            flags,
            level: 0,
            imbalance_pct,
            cache_nice_tries,
            min_interval: sd_weight,
            max_interval: 2 * sd_weight,
            busy_factor: 16,
            span_id: NONE,
            groups: GroupList::UNBUILT,
        }
    }

    /// `asym_cpu_capacity_classify()`: SD_ASYM_CPUCAPACITY when the span sees more than
    /// one capacity, plus _FULL (v5.16+) when it sees every capacity of the machine.
    fn asym_cpu_capacity_classify(&self, span: &CpuMask) -> SdFlags {
        // The machine's distinct capacities (`asym_cap_list`) are counted once.
        if self.nr_capacities <= 1 {
            return SdFlags::EMPTY;
        }
        let mut seen: Vec<u32> = span.iter().map(|c| self.m.topo(c).capacity).collect();
        seen.sort();
        seen.dedup();
        if seen.len() <= 1 {
            return SdFlags::EMPTY;
        }
        if seen.len() == self.nr_capacities && self.cfg.release.has_asym_cpucapacity_full() {
            return SdFlags::ASYM_CPUCAPACITY.union(SdFlags::ASYM_CPUCAPACITY_FULL);
        }
        SdFlags::ASYM_CPUCAPACITY
    }

    fn sd_ref(&self, tl: usize, cpu: CpuId) -> Option<&BuildSd> {
        self.sd[tl][cpu.idx()].as_ref()
    }

    /// The child of `sdd[tl][cpu]` as built (before any degeneration): the same CPU's
    /// domain one level down.
    fn child_span(&self, tl: usize, cpu: CpuId) -> Option<&CpuMask> {
        if tl == 0 {
            return None;
        }
        self.sd_ref(tl - 1, cpu).map(|c| &c.span)
    }

    /// Step 3: groups for every domain of every CPU, in the kernel's order (CPU by CPU,
    /// each bottom-up), which is the order `get_group()` and `init_overlap_sched_group()`
    /// touch the shared sched_group_capacity objects in. A CPU whose circular list must
    /// equal the one of the previous CPU with the same span (see `same_groups_as`)
    /// shares it instead of walking the span again.
    fn build_groups(&mut self) {
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
        let mut last: Vec<HashMap<u32, CpuId>> = vec![HashMap::new(); n_levels];
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
                        gen += 1;
                        self.build_sched_groups(tl, cpu, &mut stamp, gen)
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

    /// The per-domain part of `init_overlap_sched_group()` for a list shared with an
    /// earlier CPU: each group's sgc gets its capacity set again, as the kernel's own
    /// copy of the group would set it.
    fn init_overlap_sgc_again(&mut self, list: GroupList) {
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

    /// `sd->groups`: the group a domain's list enters its ring at.
    fn first_group(&self, list: GroupList) -> usize {
        self.rings[list.ring as usize][list.first as usize] as usize
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
        let single = |c: CpuId| CpuMask::of(self.m.nr_cpus(), c);
        for &i in &online {
            let a = self.group_anchor(tl, i);
            let span_i = self.child_span(tl, i).cloned().unwrap_or_else(|| single(i));
            let f = first_of_anchor[a.idx()];
            if f != NONE {
                let span_f = self
                    .child_span(tl, CpuId(f))
                    .cloned()
                    .unwrap_or_else(|| single(CpuId(f)));
                if span_f != span_i {
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

    /// A circular list of non-overlapping groups (`sg->next`), stored once: every rotation of it
    /// (another CPU entering the same ring) shares the ring.
    fn intern_ring(&mut self, list: Vec<u32>) -> GroupList {
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
    fn push_ring(&mut self, ring: Vec<u32>) -> u32 {
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

    /// `build_overlap_sched_groups(sd, cpu)`, with the NUMA-diameter > 2 fix
    /// (585b6d2723dc, v5.13) that descends to a sibling whose child fits the span.
    /// The kernel allocates these groups per domain; their ring is this domain's.
    fn build_overlap_sched_groups(&mut self, tl: usize, cpu: CpuId) -> GroupList {
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
            // build_group_from_child_sched_domain()
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
            list.push(self.groups.len() as u32 - 1);
        }
        let ring = self.push_ring(list);
        GroupList { ring, first: 0 }
    }

    /// `build_balance_mask(sd, sg, mask)`: the CPUs of the group whose own sibling at
    /// this level would build the same group (its child spans exactly the group).
    fn build_balance_mask(&mut self, tl: usize, sg_span: &CpuMask) -> CpuMask {
        if let Some(m) = self.balance_masks.get(&(tl, sg_span.clone())) {
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
        self.balance_masks
            .insert((tl, sg_span.clone()), mask.clone());
        mask
    }

    /// Step 5: for CPUs in descending order, `init_sched_groups_capacity()` on each of
    /// their domains.
    fn init_capacity(&mut self) {
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

    /// Step 6: `cpu_attach_domain()` for every CPU in order, then
    /// `update_top_cache_domain()`, then the static keys.
    fn attach_all(mut self) -> SchedDomains {
        let n = self.m.nr_cpus();
        let mut per_cpu: Vec<Option<Vec<AttachedSd>>> = vec![None; n as usize];
        for cpu in self.online() {
            per_cpu[cpu.idx()] = Some(self.cpu_attach_domain(cpu));
        }
        let release = self.cfg.release;
        let mut cpus: Vec<Option<CpuDomains>> = vec![None; n as usize];
        let mut has_cluster = false;
        let mut has_asym = false;
        let mut rings = ResolvedRings::default();
        for cpu in self.online() {
            let chain = per_cpu[cpu.idx()].take().expect("attached");
            let domains: Vec<SchedDomain> = chain
                .iter()
                .map(|a| self.resolve(cpu, a, &mut rings))
                .collect();
            has_asym |= (0..self.levels.len())
                .filter_map(|tl| self.sd_ref(tl, cpu))
                .any(|sd| sd.flags.contains(SdFlags::ASYM_CPUCAPACITY));
            let cd = self.update_top_cache_domain(cpu, domains);
            if self.cfg.sd_cluster && cd.lowest_flag_domain(SdFlags::CLUSTER).is_some() {
                has_cluster = true;
            }
            cpus[cpu.idx()] = Some(cd);
        }
        let sched_smt_present = self.m.config.sched_smt
            && self
                .cpu_map
                .iter()
                .any(|c| self.topo.smt.get(c).and(&self.cpu_map).weight() > 1);
        SchedDomains {
            machine: self.m.name.clone(),
            release,
            cpu_map: self.cpu_map.clone(),
            levels: self
                .levels
                .iter()
                .map(|l| LevelInfo {
                    name: l.name,
                    overlap: l.overlap,
                    numa_level: l.numa_level,
                    numa_distance: l.numa_level.map(|i| self.numa_distance[i]),
                })
                .collect(),
            cpus,
            sched_smt_present,
            sched_cluster_active: has_cluster,
            sched_asym_cpucapacity: has_asym,
            build_messages: std::mem::take(&mut self.messages),
        }
    }

    /// `sd_degenerate(sd)`.
    fn sd_degenerate(&self, a: &AttachedSd) -> bool {
        if a.span.weight() == 1 {
            return true;
        }
        // "Following flags need at least 2 groups"
        if a.flags.intersects(SdFlags::degenerate_groups_mask()) && a.nr_groups > 1 {
            return false;
        }
        // "Following flags don't use groups"
        if a.flags.contains(SdFlags::WAKE_AFFINE) {
            return false;
        }
        true
    }

    /// `sd_parent_degenerate(sd, parent)`.
    fn sd_parent_degenerate(&self, child: &AttachedSd, parent: &AttachedSd) -> bool {
        if self.sd_degenerate(parent) {
            return true;
        }
        if child.span != parent.span {
            return false;
        }
        let mut pflags = parent.flags;
        // "Flags needing groups don't count if only 1 group in parent"
        if parent.nr_groups == 1 {
            pflags.remove(SdFlags::degenerate_groups_mask());
        }
        // "if (~cflags & pflags) return 0;"
        pflags.without(child.flags).is_empty()
    }

    /// `cpu_attach_domain(sd, rd, cpu)`: remove degenerate parents (re-testing the new
    /// parent each time), then a degenerate base. Side effects on shared groups are
    /// applied to the group arena, as the kernel applies them to shared objects; on an
    /// overlapping level's first group, which the kernel allocated for this domain
    /// alone, they stay with the domain (`AttachedSd::first_flags`).
    fn cpu_attach_domain(&mut self, cpu: CpuId) -> Vec<AttachedSd> {
        let mut chain: Vec<AttachedSd> = (0..self.levels.len())
            .map_while(|tl| {
                self.sd_ref(tl, cpu).map(|sd| AttachedSd {
                    tl,
                    span: sd.span.clone(),
                    flags: sd.flags,
                    level: sd.level,
                    groups: sd.groups,
                    nr_groups: self.rings[sd.groups.ring as usize].len(),
                    first_flags: None,
                })
            })
            .collect();
        let release = self.cfg.release;
        let mut i = 0;
        while i + 1 < chain.len() {
            if self.sd_parent_degenerate(&chain[i], &chain[i + 1]) {
                let parent = chain.remove(i + 1);
                if i + 1 < chain.len() {
                    // parent->parent->child = tmp; and the first group's flags follow.
                    let mut flags = self.first_group_flags(&chain[i + 1]);
                    if release.aligns_group_flags() {
                        flags = chain[i].flags;
                    } else if chain[i].flags.contains(SdFlags::SHARE_CPUCAPACITY) {
                        flags.insert(SdFlags::SHARE_CPUCAPACITY);
                    }
                    self.set_first_group_flags(&mut chain[i + 1], flags);
                }
                // "Transfer SD_PREFER_SIBLING down in case of a degenerate parent"
                if parent.flags.contains(SdFlags::PREFER_SIBLING) {
                    chain[i].flags.insert(SdFlags::PREFER_SIBLING);
                }
            } else {
                i += 1;
            }
        }
        if !chain.is_empty() && self.sd_degenerate(&chain[0]) {
            chain.remove(0);
            if let Some(sd) = chain.first_mut() {
                // The do-while in the kernel never advances: only the first group's
                // flags are cleared.
                self.set_first_group_flags(sd, SdFlags::EMPTY);
            }
        }
        chain
    }

    /// `sd->groups->flags` as this domain sees it.
    fn first_group_flags(&self, a: &AttachedSd) -> SdFlags {
        a.first_flags
            .unwrap_or(self.groups[self.first_group(a.groups)].flags)
    }

    /// `sd->groups->flags = flags`: on the shared group, or on this domain's own
    /// overlapping group.
    fn set_first_group_flags(&mut self, a: &mut AttachedSd, flags: SdFlags) {
        if self.levels[a.tl].overlap {
            a.first_flags = Some(flags);
        } else {
            let g = self.first_group(a.groups);
            self.groups[g].flags = flags;
        }
    }

    /// The public `struct sched_group` of group `g`, as the domains see it after every
    /// CPU attached.
    fn public_group(&self, g: usize) -> SchedGroup {
        let sg = &self.groups[g];
        let sgc = &self.sgc[&sg.sgc];
        SchedGroup {
            id: CpuId(sgc.id),
            span: sg.span.clone(),
            balance_mask: sgc.balance_mask.clone(),
            capacity: sgc.capacity,
            flags: sg.flags,
            cores: sg.cores,
            asym_prefer_cpu: sg.asym_prefer_cpu,
        }
    }

    /// The public ring a domain walks: each builder ring becomes one shared
    /// `Arc<[SchedGroup]>`; a domain whose own (overlapping) first group was changed
    /// by `cpu_attach_domain()` gets a copy with that change, shared by the domains
    /// with the same one.
    fn resolve_groups(&self, a: &AttachedSd, rings: &mut ResolvedRings) -> Groups {
        let r = a.groups.ring;
        let first = a.groups.first as usize;
        let shared = rings
            .plain
            .entry(r)
            .or_insert_with(|| {
                self.rings[r as usize]
                    .iter()
                    .map(|&g| self.public_group(g as usize))
                    .collect()
            })
            .clone();
        match a.first_flags {
            Some(f) if f != shared[first].flags => {
                let own = rings
                    .changed
                    .entry((r, first as u32, f))
                    .or_insert_with(|| {
                        let mut ring = shared.to_vec();
                        ring[first].flags = f;
                        ring.into()
                    })
                    .clone();
                Groups::new(own, first)
            }
            _ => Groups::new(shared, first),
        }
    }

    fn resolve(&self, cpu: CpuId, a: &AttachedSd, rings: &mut ResolvedRings) -> SchedDomain {
        let proto = self.sd_ref(a.tl, cpu).expect("attached domains were built");
        SchedDomain {
            name: self.levels[a.tl].name,
            level: a.level,
            span: a.span.clone(),
            span_weight: a.span.weight(),
            flags: a.flags,
            groups: self.resolve_groups(a, rings),
            imbalance_pct: proto.imbalance_pct,
            cache_nice_tries: proto.cache_nice_tries,
            min_interval: proto.min_interval,
            max_interval: proto.max_interval,
            busy_factor: proto.busy_factor,
            imb_numa_nr: self.imb_numa_nr(cpu, a.tl),
            tl: a.tl,
        }
    }

    /// `sd->imb_numa_nr` of `cpu`'s domain at level `tl`, as `build_sched_domains()`
    /// (topology.c v6.8) computes it over the domains as built (before degeneration):
    /// the first non-LLC parent of an LLC domain allows `nr_llcs` tasks (its span
    /// over the LLC's), or an eighth of its span when it holds a single LLC (at least
    /// 1); the levels above scale that by their span over the first NUMA domain's.
    /// v5.18-5.19 (e496132ebedd "sched/fair: Adjust the allowed NUMA imbalance when
    /// SD_NUMA spans multiple LLCs"): a quarter, no minimum; v6.0 (026b98a93bbd
    /// "sched/numa: Adjust imb_numa_nr to a better approximation of memory
    /// channels"): an eighth, at least 1. Before v5.18 there is no such field (0).
    fn imb_numa_nr(&self, cpu: CpuId, tl: usize) -> u32 {
        let release = self.cfg.release;
        if release < crate::release::Release::new(5, 18) {
            return 0;
        }
        let (mut imb, mut imb_span) = (0u32, 1u32);
        let mut child: Option<&BuildSd> = None;
        for l in 0..=tl {
            let Some(sd) = self.sd_ref(l, cpu) else {
                break;
            };
            let w = sd.span.weight();
            let nr = match child {
                Some(c)
                    if !sd.flags.contains(SdFlags::SHARE_LLC)
                        && c.flags.contains(SdFlags::SHARE_LLC) =>
                {
                    let nr_llcs = w / c.span.weight().max(1);
                    imb = match (nr_llcs, release >= crate::release::Release::new(6, 0)) {
                        (1, true) => (w >> 3).max(1),
                        (1, false) => w >> 2,
                        (n, true) => n.max(1),
                        (n, false) => n,
                    };
                    // Set span based on the first NUMA domain.
                    imb_span = (l + 1..self.levels.len())
                        .filter_map(|p| self.sd_ref(p, cpu))
                        .find(|p| p.flags.contains(SdFlags::NUMA))
                        .map_or(w, |p| p.span.weight());
                    imb
                }
                _ => imb * (w / imb_span.max(1)).max(1),
            };
            if l == tl {
                return nr;
            }
            child = Some(sd);
        }
        0
    }

    /// `update_top_cache_domain(cpu)`.
    fn update_top_cache_domain(&self, cpu: CpuId, domains: Vec<SchedDomain>) -> CpuDomains {
        // highest_flag_domain(cpu, SD_SHARE_PKG_RESOURCES): SHARED_CHILD, so stop at
        // the first level without it.
        let mut sd_llc = None;
        for (i, d) in domains.iter().enumerate() {
            if d.flags.contains(SdFlags::SHARE_LLC) {
                sd_llc = Some(i);
            } else {
                break;
            }
        }
        let (mut id, size, shared) = match sd_llc {
            Some(i) => {
                let d = &domains[i];
                let first = d.span.first().expect("span holds cpu");
                (
                    first,
                    d.span_weight,
                    Some(SharedId {
                        tl: d.tl,
                        cpu: first,
                    }),
                )
            }
            None => (cpu, 1, None),
        };
        let sd_llc_id = id;
        if self.cfg.sd_cluster {
            if let Some(i) = domains
                .iter()
                .position(|d| d.flags.contains(SdFlags::CLUSTER))
            {
                id = domains[i].span.first().expect("span holds cpu");
            }
        }
        let sd_share_id = id;
        // Seed 03 (RFC): sd_l2c from topology_cluster_cpumask().
        let l2c = self.topo.cluster.get(cpu).and(&self.cpu_map);
        let highest = |flag: SdFlags| domains.iter().rposition(|d| d.flags.contains(flag));
        CpuDomains {
            cpu,
            sd_llc,
            sd_llc_id,
            sd_llc_size: size,
            sd_llc_shared: shared,
            sd_share_id,
            sd_l2c_id: l2c.first().unwrap_or(cpu),
            sd_l2c_size: l2c.weight(),
            sd_numa: domains.iter().position(|d| d.flags.contains(SdFlags::NUMA)),
            sd_asym_packing: highest(SdFlags::ASYM_PACKING),
            sd_asym_cpucapacity: domains
                .iter()
                .position(|d| d.flags.contains(SdFlags::ASYM_CPUCAPACITY_FULL)),
            domains,
        }
    }
}

/// A domain in a CPU's chain during `cpu_attach_domain()`.
#[derive(Clone, Debug)]
struct AttachedSd {
    tl: usize,
    span: CpuMask,
    flags: SdFlags,
    level: u32,
    groups: GroupList,
    nr_groups: usize,
    /// `sd->groups->flags` when `cpu_attach_domain()` changed it on a group only this
    /// domain has (overlapping levels allocate their groups per domain).
    first_flags: Option<SdFlags>,
}

/// The public rings, built once each (see `Builder::resolve_groups`).
#[derive(Default)]
struct ResolvedRings {
    plain: HashMap<u32, Arc<[SchedGroup]>>,
    changed: HashMap<(u32, u32, SdFlags), Arc<[SchedGroup]>>,
}
