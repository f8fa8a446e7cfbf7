//! `build_sched_domains()` and the functions it calls, phase by phase.

use std::collections::HashMap;

use crate::cpumask::{CpuId, CpuMask};
use crate::topology::Machine;

use super::levels::{node_reclaim_distance, numa_distances, topology_levels, Level};
use super::{
    BuildConfig, CpuDomains, DomainError, LevelInfo, SchedDomain, SchedDomains, SchedGroup,
    SdFlags, SharedId,
};

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
    /// Indices into `Builder::groups`, circular-list order.
    groups: Vec<usize>,
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

/// A `struct sched_group_capacity` (`sdd->sgc[cpu]`); holds the balance mask.
#[derive(Clone, Debug)]
struct Sgc {
    id: u32,
    capacity: u64,
    balance_mask: CpuMask,
    refs: u32,
}

struct Builder<'a> {
    m: &'a Machine,
    cfg: &'a BuildConfig,
    cpu_map: CpuMask,
    levels: Vec<Level>,
    numa_distance: Vec<u8>,
    /// `sdd[tl].sd[cpu]`; `None` where the CPU's hierarchy stopped below `tl`.
    sd: Vec<Vec<Option<BuildSd>>>,
    groups: Vec<Sg>,
    /// Non-overlapping sched_group per (tl, anchor CPU).
    sg_of: HashMap<(usize, u32), usize>,
    sgc: HashMap<(usize, u32), Sgc>,
    /// build_balance_mask() results, keyed by (tl, group span).
    balance_masks: HashMap<(usize, CpuMask), CpuMask>,
    messages: Vec<String>,
    /// `cpu_smt_mask()` of every CPU.
    smt: Vec<CpuMask>,
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
    let levels = topology_levels(m, cfg, &cpu_map);
    let numa_distance = if m.config.numa {
        numa_distances(m, &cpu_map)
    } else {
        Vec::new()
    };
    let n_levels = levels.len();
    let mut b = Builder {
        m,
        cfg,
        cpu_map,
        levels,
        numa_distance,
        sd: vec![vec![None; n as usize]; n_levels],
        groups: Vec::new(),
        sg_of: HashMap::new(),
        sgc: HashMap::new(),
        balance_masks: HashMap::new(),
        messages: Vec::new(),
        smt: m.smt_masks(),
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
                let sd = self.build_sched_domain(tl, child, cpu);
                let covers_all = sd.span == self.cpu_map;
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
        // CPU of every other distinct mask.
        let mut distinct: Vec<(CpuId, &CpuMask)> = Vec::new();
        for &c in &online {
            let mc = &masks[c.idx()];
            if distinct.iter().any(|(_, d)| *d == mc) {
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
        let mask = &level.masks[cpu.idx()];
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
            groups: Vec::new(),
        }
    }

    /// `asym_cpu_capacity_classify()`: SD_ASYM_CPUCAPACITY when the span sees more than
    /// one capacity, plus _FULL (v5.16+) when it sees every capacity of the machine.
    fn asym_cpu_capacity_classify(&self, span: &CpuMask) -> SdFlags {
        let mut all: Vec<u32> = self
            .cpu_map
            .iter()
            .map(|c| self.m.topo(c).capacity)
            .collect();
        all.sort();
        all.dedup();
        if all.len() <= 1 {
            return SdFlags::EMPTY;
        }
        let mut seen: Vec<u32> = span.iter().map(|c| self.m.topo(c).capacity).collect();
        seen.sort();
        seen.dedup();
        if seen.len() <= 1 {
            return SdFlags::EMPTY;
        }
        if seen.len() == all.len() && self.cfg.release.has_asym_cpucapacity_full() {
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

    /// Step 3: groups for every domain of every CPU.
    fn build_groups(&mut self) {
        for cpu in self.online() {
            for tl in 0..self.levels.len() {
                if self.sd_ref(tl, cpu).is_none() {
                    break;
                }
                let groups = if self.levels[tl].overlap {
                    self.build_overlap_sched_groups(tl, cpu)
                } else {
                    self.build_sched_groups(tl, cpu)
                };
                self.sd[tl][cpu.idx()].as_mut().expect("built").groups = groups;
            }
        }
    }

    /// `get_group(cpu, sdd)`: the group anchored at the first CPU of the child's span,
    /// shared by all CPUs that reach it.
    fn get_group(&mut self, tl: usize, cpu: CpuId) -> usize {
        let (anchor, child) = match self.child_span(tl, cpu) {
            Some(cs) => (cs.first().expect("child span holds its CPU"), true),
            None => (cpu, false),
        };
        if let Some(&g) = self.sg_of.get(&(tl, anchor.0)) {
            if let Some(sgc) = self.sgc.get_mut(&(tl, anchor.0)) {
                sgc.refs += 1;
            }
            return g;
        }
        let (span, flags) = if child {
            let c = self.sd_ref(tl - 1, cpu).expect("child exists");
            (c.span.clone(), c.flags)
        } else {
            (CpuMask::of(self.m.nr_cpus(), cpu), SdFlags::EMPTY)
        };
        let capacity = SCHED_CAPACITY_SCALE * span.weight() as u64;
        self.sgc.insert(
            (tl, anchor.0),
            Sgc {
                id: anchor.0,
                capacity,
                balance_mask: span.clone(),
                refs: 1,
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
        self.sg_of.insert((tl, anchor.0), g);
        g
    }

    /// `build_sched_groups(sd, cpu)`: walk the span from `cpu` with wrap-around, one
    /// group per uncovered child span; the first group holds `cpu`.
    fn build_sched_groups(&mut self, tl: usize, cpu: CpuId) -> Vec<usize> {
        let span = self.sd_ref(tl, cpu).expect("built").span.clone();
        let mut covered = CpuMask::new(self.m.nr_cpus());
        let mut list = Vec::new();
        for i in span.iter_wrap(cpu.0) {
            if covered.test_cpu(i) {
                continue;
            }
            let g = self.get_group(tl, i);
            covered.or_assign(&self.groups[g].span);
            list.push(g);
        }
        list
    }

    /// `build_overlap_sched_groups(sd, cpu)`, with the NUMA-diameter > 2 fix
    /// (585b6d2723dc, v5.13) that descends to a sibling whose child fits the span.
    fn build_overlap_sched_groups(&mut self, tl: usize, cpu: CpuId) -> Vec<usize> {
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
                refs: 0,
            });
            sgc.refs += 1;
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
            list.push(self.groups.len() - 1);
        }
        list
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
        let groups = sd.groups.clone();
        let asym_packing = sd.flags.contains(SdFlags::ASYM_PACKING);
        for &g in &groups {
            let span = self.groups[g].span.clone();
            let mut mask = span.clone();
            let mut cores = 0;
            while let Some(c) = mask.first() {
                cores += 1;
                mask.andnot_assign(&self.smt[c.idx()]);
                mask.clear_cpu(c);
            }
            self.groups[g].cores = cores;
            if asym_packing {
                // sched_asym_prefer(): higher priority wins; ties keep the lower CPU.
                let mut best: Option<CpuId> = None;
                for c in span.iter() {
                    best = match best {
                        None => Some(c),
                        Some(b) if self.m.topo(c).asym_prio > self.m.topo(b).asym_prio => Some(c),
                        keep => keep,
                    };
                }
                self.groups[g].asym_prefer_cpu = best;
            }
        }
        // group_balance_cpu(sd->groups): first CPU of the first group's balance mask.
        let first = groups[0];
        let balance_cpu = self.sgc[&self.groups[first].sgc]
            .balance_mask
            .first()
            .expect("non-empty");
        if cpu != balance_cpu {
            return;
        }
        self.update_group_capacity(tl, cpu, cpu_capacity);
    }

    /// `update_group_capacity(sd, cpu)`; without a child, `update_cpu_capacity()`.
    /// `capacity_of()` is the arch capacity (no RT/IRQ pressure at build time).
    fn update_group_capacity(&mut self, tl: usize, cpu: CpuId, cpu_capacity: &mut [u64]) {
        let sd = self.sd_ref(tl, cpu).expect("built");
        let sdg = sd.groups[0];
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
                child
                    .groups
                    .iter()
                    .map(|&g| self.sgc[&self.groups[g].sgc].capacity)
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
        for cpu in self.online() {
            let chain = per_cpu[cpu.idx()].take().expect("attached");
            let domains: Vec<SchedDomain> = chain.iter().map(|a| self.resolve(cpu, a)).collect();
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
                .any(|c| self.smt[c.idx()].and(&self.cpu_map).weight() > 1);
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
        if a.flags.intersects(SdFlags::degenerate_groups_mask()) && a.groups.len() > 1 {
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
        if parent.groups.len() == 1 {
            pflags.remove(SdFlags::degenerate_groups_mask());
        }
        // "if (~cflags & pflags) return 0;"
        pflags.without(child.flags).is_empty()
    }

    /// `cpu_attach_domain(sd, rd, cpu)`: remove degenerate parents (re-testing the new
    /// parent each time), then a degenerate base. Side effects on shared groups are
    /// applied to the group arena, as the kernel applies them to shared objects.
    fn cpu_attach_domain(&mut self, cpu: CpuId) -> Vec<AttachedSd> {
        let mut chain: Vec<AttachedSd> = (0..self.levels.len())
            .map_while(|tl| {
                self.sd_ref(tl, cpu).map(|sd| AttachedSd {
                    tl,
                    span: sd.span.clone(),
                    flags: sd.flags,
                    level: sd.level,
                    groups: sd.groups.clone(),
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
                    let g = chain[i + 1].groups[0];
                    if release.aligns_group_flags() {
                        self.groups[g].flags = chain[i].flags;
                    } else if chain[i].flags.contains(SdFlags::SHARE_CPUCAPACITY) {
                        self.groups[g].flags.insert(SdFlags::SHARE_CPUCAPACITY);
                    }
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
            if let Some(sd) = chain.first() {
                // The do-while in the kernel never advances: only the first group's
                // flags are cleared.
                let g = sd.groups[0];
                self.groups[g].flags = SdFlags::EMPTY;
            }
        }
        chain
    }

    fn resolve(&self, cpu: CpuId, a: &AttachedSd) -> SchedDomain {
        let proto = self.sd_ref(a.tl, cpu).expect("attached domains were built");
        SchedDomain {
            name: self.levels[a.tl].name,
            level: a.level,
            span: a.span.clone(),
            span_weight: a.span.weight(),
            flags: a.flags,
            groups: a
                .groups
                .iter()
                .map(|&g| {
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
                })
                .collect(),
            imbalance_pct: proto.imbalance_pct,
            cache_nice_tries: proto.cache_nice_tries,
            min_interval: proto.min_interval,
            max_interval: proto.max_interval,
            busy_factor: proto.busy_factor,
            tl: a.tl,
        }
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
        let l2c = self.m.cluster_mask(cpu).and(&self.cpu_map);
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
    groups: Vec<usize>,
}
