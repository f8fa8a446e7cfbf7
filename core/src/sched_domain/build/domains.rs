//! Step 2 of `build_sched_domains()` (topology.c v6.8): for each CPU of `cpu_map`,
//! `build_sched_domain()` per topology level bottom-up (the `for_each_sd_topology()`
//! loop), after `topology_span_sane()` has checked each non-overlapping level; each
//! domain from `sd_init()`, with `asym_cpu_capacity_classify()` (before v5.14,
//! `asym_cpu_capacity_level()` and `dflags`) and `set_domain_attribute()`. Also `sd->imb_numa_nr`, which `build_sched_domains()`
//! computes over the domains as built.

use super::{BuildSd, Builder, GroupList, NONE};
use crate::cpumask::{CpuId, CpuMask};
use crate::sched_domain::levels::node_reclaim_distance;
use crate::sched_domain::{DomainError, SdFlags};

impl Builder<'_> {
    /// Step 2: for each CPU, `build_sched_domain()` per level bottom-up until a span
    /// covers `cpu_map`.
    pub(super) fn build_domains(&mut self) -> Result<(), DomainError> {
        for tl in 0..self.levels.len() {
            if !self.levels[tl].overlap {
                self.topology_span_sane(tl)?;
            }
        }
        let tl_asym = if self.cfg.release.has_asym_cpucapacity_full() {
            None
        } else {
            self.asym_cpu_capacity_level()
        };
        for cpu in self.online() {
            let mut child: Option<usize> = None;
            // Before v5.14, `dflags` (topology.c v5.12.9:2079-2086): SD_ASYM_CPUCAPACITY
            // from `tl_asym` up, kept across the levels of this CPU.
            let mut dflags = SdFlags::EMPTY;
            for tl in 0..self.levels.len() {
                if tl_asym == Some(tl) {
                    dflags.insert(SdFlags::ASYM_CPUCAPACITY);
                }
                let mut sd = self.build_sched_domain(tl, child, dflags, cpu);
                let covers_all = sd.span == self.cpu_map;
                let ids = &mut self.span_ids[tl];
                let next = ids.len() as u32;
                sd.span_id = match ids.get(&sd.span) {
                    Some(&id) => id,
                    None => *ids.entry(sd.span.clone()).or_insert(next),
                };
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

    /// `build_sched_domain(tl, cpu_map, attr, child, cpu)` (before v5.14 also `dflags`).
    fn build_sched_domain(
        &mut self,
        tl: usize,
        child: Option<usize>,
        dflags: SdFlags,
        cpu: CpuId,
    ) -> BuildSd {
        let mut sd = self.sd_init(tl, child, dflags, cpu);
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

    /// `sd_init(tl, cpu_map, child, cpu)`; before v5.14 `sd_init(tl, cpu_map, child,
    /// dflags, cpu)`, whose `dflags` carry SD_ASYM_CPUCAPACITY.
    fn sd_init(&mut self, tl: usize, child: Option<usize>, dflags: SdFlags, cpu: CpuId) -> BuildSd {
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
        if self.cfg.release.has_asym_cpucapacity_full() {
            flags.insert(self.asym_cpu_capacity_classify(&span));
        } else {
            // "Apply detected topology flags" (v5.12.9:1423-1424).
            flags.insert(dflags);
        }
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

    /// `asym_cpu_capacity_level()` (topology.c v5.12.9:1997-2049, until c744dc4ab58d in
    /// v5.14): the lowest topology level at which every CPU of `cpu_map` sees the
    /// highest capacity it sees at any level, or `None` on a symmetric `cpu_map`. Each
    /// CPU's search starts at the level found so far, its running maximum at its own
    /// capacity, and `tl->mask(i) & cpu_map` is every level's mask, including levels
    /// above the one whose span covers `cpu_map`. A NUMA level's mask is
    /// `sd_numa_mask()`, which reads `sched_domains_curr_level`, set by `sd_init()`
    /// only: in the boot-time build, the first, it is still 0, so every NODE and NUMA
    /// level shows the node's own CPUs here (modelled: schedlab builds once, as at
    /// boot; a rebuild would read the level the previous build's last `sd_init()` left).
    fn asym_cpu_capacity_level(&self) -> Option<usize> {
        let cap = |c: CpuId| self.m.topo(c).capacity;
        let first = self.cpu_map.first()?;
        if self.cpu_map.iter().all(|c| cap(c) == cap(first)) {
            return None;
        }
        let node_level = self.levels.iter().position(|l| l.numa_level == Some(0));
        // `asym_level` is `asym_tl`'s index (0 before one is found).
        let mut asym_tl: Option<usize> = None;
        for i in self.cpu_map.iter() {
            let mut max_capacity = cap(i);
            // "if (tl_id < asym_level) goto next_level;"
            let from = asym_tl.unwrap_or(0);
            for tl in from..self.levels.len() {
                let shown = match self.levels[tl].numa_level {
                    Some(_) => node_level.unwrap_or(tl),
                    None => tl,
                };
                for j in self.levels[shown].masks.get(i).and(&self.cpu_map).iter() {
                    if cap(j) > max_capacity {
                        max_capacity = cap(j);
                        asym_tl = Some(tl);
                    }
                }
            }
        }
        asym_tl
    }

    /// `asym_cpu_capacity_classify()` (v5.14+): SD_ASYM_CPUCAPACITY when the span sees
    /// more than one capacity, plus _FULL when it sees every capacity of the machine.
    fn asym_cpu_capacity_classify(&self, span: &CpuMask) -> SdFlags {
        // The machine's distinct capacities (`asym_cap_list`) are counted once.
        if self.nr_capacities <= 1 {
            return SdFlags::EMPTY;
        }
        let mut seen: Vec<u32> = span.iter().map(|c| self.m.topo(c).capacity).collect();
        // Unstable: equal u32s are alike, and the page links one u32 sort, not two.
        seen.sort_unstable();
        seen.dedup();
        if seen.len() <= 1 {
            return SdFlags::EMPTY;
        }
        if seen.len() == self.nr_capacities && self.cfg.release.has_asym_cpucapacity_full() {
            return SdFlags::ASYM_CPUCAPACITY.union(SdFlags::ASYM_CPUCAPACITY_FULL);
        }
        SdFlags::ASYM_CPUCAPACITY
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
    pub(super) fn imb_numa_nr(&self, cpu: CpuId, tl: usize) -> u32 {
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
}
