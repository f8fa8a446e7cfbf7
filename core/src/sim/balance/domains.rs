//! The balancer's view of the domains, built once per run: each run CPU's
//! `struct sched_domain`s bottom-up with their groups restricted to the run's CPUs,
//! the groups' CPU lists shared as the kernel's CPUs share one `struct sched_group`
//! (`get_group()`, `build_overlap_sched_groups()`, topology.c v6.8), and each
//! domain's balance state as `sd_init()` and `sched_init()` left it at boot.

use std::sync::Arc;

use crate::cpumask::{CpuId, CpuMask, PerCpu};
use crate::fxhash::FxHashMap;
use crate::sched_domain::{SchedGroup, SdFlags};
use crate::wakeup::{RqState, WakeEnv};

use super::{ring, sums, BalanceInfo, DomainState, Group, Level, NohzFlags, UPTIME_S};

/// One shared CPU list.
type CpuList = Arc<[u32]>;
/// Each distinct (span, balance mask) of a group id, with its online CPUs, run CPUs
/// that balance, and sum cells.
type GroupLists = Vec<(CpuMask, CpuMask, [CpuList; 3])>;
/// Each distinct span of a level and first CPU, with its run CPUs.
type SpanLists = Vec<(CpuMask, CpuList)>;

/// The CPU lists [`BalanceInfo::new`] has made, by domain level and group (or
/// span), so that the CPUs of one group or span share them.
#[derive(Default)]
struct Shared {
    /// By (level, `sgc` id): each distinct (span, balance mask) seen, with its
    /// online CPUs, run CPUs that balance, and sum cells. Overlapping NUMA groups of
    /// one id may differ by CPU, so the masks are compared.
    groups: FxHashMap<(usize, CpuId), GroupLists>,
    /// By (level, first CPU of the span): each distinct span, with its run CPUs.
    spans: FxHashMap<(usize, Option<CpuId>), SpanLists>,
    /// The lists of each `SchedGroup` of the domains' shared rings, by its address:
    /// every CPU whose domain walks the same ring finds them here without comparing
    /// masks. Looked up only (the addresses' order decides nothing).
    by_group: FxHashMap<usize, [CpuList; 3]>,
}

impl Shared {
    /// The lists of group `g` of a level-`tl` domain, made by `make` the first time a
    /// group of its `sgc` id and masks is met (the first time `g` itself is met,
    /// compared by id and masks with the groups seen before).
    fn group(
        &mut self,
        tl: usize,
        g: &SchedGroup,
        make: impl FnOnce() -> [CpuList; 3],
    ) -> (CpuList, CpuList, CpuList) {
        let addr = std::ptr::from_ref(g) as usize;
        let lists = match self.by_group.get(&addr) {
            Some(l) => l.clone(),
            None => {
                let (span, balance) = (&g.span, &g.balance_mask);
                let seen = self.groups.entry((tl, g.id)).or_default();
                let l = match seen.iter().find(|(s, b, _)| s == span && b == balance) {
                    Some((_, _, l)) => l.clone(),
                    None => {
                        let l = make();
                        seen.push((span.clone(), balance.clone(), l.clone()));
                        l
                    }
                };
                self.by_group.insert(addr, l.clone());
                l
            }
        };
        let [cpus, balance, pieces] = lists;
        (cpus, balance, pieces)
    }

    /// The run CPUs of a level-`tl` domain spanning `span`, made by `make` the first
    /// time.
    fn span(&mut self, tl: usize, span: &CpuMask, make: impl FnOnce() -> Vec<u32>) -> Arc<[u32]> {
        let seen = self.spans.entry((tl, span.first())).or_default();
        match seen.iter().find(|(s, _)| s == span) {
            Some((_, l)) => l.clone(),
            None => {
                let l: Arc<[u32]> = make().into();
                seen.push((span.clone(), l.clone()));
                l
            }
        }
    }
}

impl BalanceInfo {
    /// The domains of every run CPU, restricted to the run's CPUs; `rqs` are the
    /// runqueues as the run starts.
    pub(in crate::sim) fn new(
        env: &WakeEnv,
        active: &[u32],
        hz: u64,
        rqs: &[RqState],
    ) -> BalanceInfo {
        let n = env.nr_cpus() as usize;
        let mut act = CpuMask::new(n as u32);
        for &c in active {
            act.set_cpu(CpuId(c));
        }
        let online = &env.domains.cpu_map;
        let n_tl = env.domains.levels.len().max(1);
        let sgc_of = |tl: usize, id: CpuId| tl * n + id.idx();
        let mut levels = vec![Vec::new(); n];
        let mut dom = vec![Vec::new(); n];
        let sums = sums::RqSums::new(rqs);
        let mut shared = Shared::default();
        // By (level, the ring's address): the ring's groups (each made once, in the
        // ring's stored order, shared by every domain walking it), how many of them
        // come before each ring position, and their online CPUs in all. Looked up only.
        // A domain's own first group (`Groups::own_first`) makes its ring a ring of its
        // own here, keyed by where it enters and the flags it has.
        type Made = (Arc<[Group]>, Vec<usize>, usize);
        type RingKey = (usize, usize, Option<(usize, SdFlags)>);
        let mut by_ring: FxHashMap<RingKey, Made> = FxHashMap::default();
        for &c in active {
            let Some(cd) = env.domains.try_cpu(CpuId(c)) else {
                continue;
            };
            for (i, sd) in cd.domains.iter().enumerate() {
                let (ring, first) = sd.groups.ring();
                let own = sd.groups.own_first().map(|g| (first, g.flags));
                let (made, before, weight) = by_ring
                    .entry((sd.tl, ring.as_ptr() as usize, own))
                    .or_insert_with(|| {
                        let mut before = Vec::with_capacity(ring.len());
                        let mut made = Vec::with_capacity(ring.len());
                        for (j, g) in ring.iter().enumerate() {
                            let flags = match own {
                                Some((f, flags)) if f == j => flags,
                                _ => g.flags,
                            };
                            before.push(made.len());
                            let (cpus, balance, pieces) = shared.group(sd.tl, g, || {
                                let cpus: Vec<u32> =
                                    g.span.and(online).iter().map(|x| x.0).collect();
                                let balance: Vec<u32> =
                                    g.balance_mask.and(&act).iter().map(|x| x.0).collect();
                                let pieces = sums.pieces(&cpus);
                                [cpus, balance, pieces].map(Arc::from)
                            });
                            // Groups without a run CPU are kept: their idle CPUs count.
                            if !cpus.is_empty() {
                                made.push(Group {
                                    balance,
                                    pieces,
                                    cpus,
                                    capacity: g.capacity,
                                    flags,
                                    cores: g.cores,
                                    sgc: sgc_of(sd.tl, g.id),
                                });
                            }
                        }
                        let weight = made.iter().map(|g: &Group| g.cpus.len()).sum();
                        (made.into(), before, weight)
                    });
                let groups = ring::GroupRing::new(made.clone(), before[first]);
                let weight = *weight;
                let parent_sgc = cd
                    .domains
                    .get(i + 1)
                    .and_then(|p| p.groups.iter().next().map(|g| sgc_of(p.tl, g.id)));
                levels[c as usize].push(Level {
                    groups,
                    flags: sd.flags,
                    imbalance_pct: sd.imbalance_pct as u64,
                    cache_nice_tries: sd.cache_nice_tries,
                    min_interval: sd.min_interval.max(1) as u64,
                    max_interval: sd.max_interval.max(1) as u64,
                    busy_factor: sd.busy_factor.max(1) as u64,
                    imb_numa_nr: sd.imb_numa_nr,
                    child_flags: i.checked_sub(1).map(|j| cd.domains[j].flags),
                    parent_sgc,
                    is_llc: cd.sd_llc == Some(i),
                    span_weight: sd.span_weight,
                    span: shared.span(sd.tl, &sd.span, || {
                        sd.span.and(&act).iter().map(|x| x.0).collect()
                    }),
                    weight: weight as u32,
                });
                dom[c as usize].push(DomainState {
                    balance_interval: sd.min_interval.max(1) as u64,
                    nr_balance_failed: 0,
                    last_balance: 0,
                    // sd_init(): max_newidle_lb_cost = 0, last_decay = jiffies.
                    max_newidle_lb_cost: 0,
                    last_decay_max_lb_cost: 0,
                });
            }
        }
        let online = env.domains.cpu_map.weight() as u64;
        BalanceInfo {
            levels: PerCpu::new(levels, Vec::new()),
            dom: PerCpu::new(dom, Vec::new()),
            next_balance: PerCpu::filled(n, 0),
            max_idle_balance_cost: PerCpu::filled(n, super::super::MIGRATION_COST_NS),
            sgc_imbalance: vec![false; n_tl * n],
            overload: false,
            nohz_next_balance: 0,
            max_lb_interval: (hz * online / 10).max(1),
            uptime: (UPTIME_S * hz).max(hz * online / 10),
            release: env.patches.release,
            sums,
            push_cpu: PerCpu::filled(n, None),
            stopper_wakelist: PerCpu::filled(n, false),
            nohz_flags: PerCpu::filled(n, NohzFlags::EMPTY),
            nohz_kick_polled: PerCpu::filled(n, false),
            // init_sched_fair_class(): nohz.next_blocked = jiffies, at boot; the CPUs
            // idle since have decayed to nothing.
            nohz_has_blocked: false,
            nohz_next_blocked: 0,
            nohz_needs_update: false,
            has_blocked_load: PerCpu::filled(n, false),
            last_blocked_load_update_tick: PerCpu::filled(n, 0),
        }
    }
}
