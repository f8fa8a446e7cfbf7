//! Step 6 of `build_sched_domains()` (topology.c v6.8): `cpu_attach_domain()` for
//! every CPU, which drops degenerate domains (`sd_degenerate()`,
//! `sd_parent_degenerate()`), then `update_top_cache_domain()` and the static keys
//! (`sched_smt_present`, `sched_cluster_active`, `sched_asym_cpucapacity`). The
//! builder's rings become the public, shared [`Groups`] here.

use std::sync::Arc;

use super::{Builder, GroupList};
use crate::cpumask::{CpuId, CpuMask};
use crate::fxhash::FxHashMap;
use crate::sched_domain::{
    CpuDomains, Groups, LevelInfo, SchedDomain, SchedDomains, SchedGroup, SdFlags, SharedId,
};

impl Builder<'_> {
    /// Step 6: `cpu_attach_domain()` for every CPU in order, then
    /// `update_top_cache_domain()`, then the static keys.
    pub(super) fn attach_all(mut self) -> SchedDomains {
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
            // The attach loop's "if (capacity > READ_ONCE(d.rd->max_cpu_capacity))"
            // (topology.c v6.8:2514-2517; v5.12.9 compares rq->cpu_capacity_orig,
            // which update_cpu_capacity() has just set to the same value).
            max_cpu_capacity: self
                .cpu_map
                .iter()
                .map(|c| self.m.topo(c).capacity)
                .max()
                .unwrap_or(1024),
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
    /// by `cpu_attach_domain()` gets its own copy of that group (shared by the domains
    /// with the same one) and the shared ring for the rest.
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
                        Arc::new(SchedGroup {
                            flags: f,
                            ..shared[first].clone()
                        })
                    })
                    .clone();
                Groups::with_own_first(shared, first, own)
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
            // lowest_flag_domain(cpu, SD_ASYM_CPUCAPACITY_FULL); before that flag
            // existed, lowest_flag_domain(cpu, SD_ASYM_CPUCAPACITY) (topology.c v5.12.9).
            sd_asym_cpucapacity: domains.iter().position(|d| {
                d.flags
                    .contains(if self.cfg.release.has_asym_cpucapacity_full() {
                        SdFlags::ASYM_CPUCAPACITY_FULL
                    } else {
                        SdFlags::ASYM_CPUCAPACITY
                    })
            }),
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
    plain: FxHashMap<u32, Arc<[SchedGroup]>>,
    changed: FxHashMap<(u32, u32, SdFlags), Arc<SchedGroup>>,
}
