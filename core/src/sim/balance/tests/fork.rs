//! Fork placement (`fork.rs`): `find_idlest_cpu()` spreading over groups, the NUMA
//! allowance at fork, and the pure slow path on the same state.

use super::*;
use crate::sim::test_support::{slow_path_fork, slow_path_state};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Fork placement spreads over clusters first (find_idlest_group() by idle CPUs),
/// then over the CPUs of each: on Kunpeng's CPUs 0-7 (clusters 0-3 and 4-7).
#[test]
fn forks_spread_per_find_idlest_group() {
    let sim = hogs("kunpeng920-6426", "6.8", 0..8, 8, 1);
    let placed: Vec<u32> = (0..8).map(|t| cpu_of(&sim, t)).collect();
    assert_eq!(placed, vec![0, 4, 1, 5, 2, 6, 3, 7]);
}

/// The NUMA allowance at fork: on two nodes of 32 CPUs (imb_numa_nr 4) the parent's
/// node keeps new tasks while it would run at most 4 with an idle-CPU difference of
/// at most 2; the fourth task (an imbalance of 3) goes to the other node.
#[test]
fn forks_stay_on_the_node_within_imb_numa_nr() {
    let sim = hogs("kunpeng920-6426", "6.8", 0..64, 5, 1);
    let nodes: Vec<u32> = (0..5).map(|t| cpu_of(&sim, t) / 32).collect();
    assert_eq!(nodes, vec![0, 0, 0, 1, 0]);
}

/// Fork placement's `find_idlest_cpu()` tests the task's mask against its level's
/// span as kept here (the domain's run CPUs) where fair.c v6.8 line 7168 tests
/// `sched_domain_span(sd)`; its groups and `find_idlest_group_cpu()` use the whole
/// group span, as lines 10330 and 7121 do. The same answers, because the run's CPUs
/// are all the tasks' masks put together (build.rs): no mask reaches outside them,
/// not even one outside the `numactl` CPUs.
#[test]
fn fork_placement_sees_masks_meet_spans_as_the_kernel_does() {
    let preset = "kunpeng920-6426";
    let n = presets::machine(preset).unwrap().nr_cpus();
    let specs = vec![hog(n, 0..4, 1), hog(n, 66..68, 1)];
    let sim = sim_of(preset, "6.8", 0..4, specs, 1);
    let run = CpuMask::from_cpus(n, sim.active_cpus());
    for v in &sim.views {
        let mask = &v.task.as_ref().unwrap().allowed;
        assert!(mask.is_subset(&run), "{mask} outside the run's {run}");
        for c in sim.active_cpus() {
            let doms = &sim.env.domains.cpu(c).domains;
            for (lv, sd) in sim.balance.levels[c.idx()].iter().zip(doms) {
                assert_eq!(
                    lv.span.iter().any(|&x| mask.test_cpu(CpuId(x))),
                    sd.span.intersects(mask)
                );
            }
        }
    }
}

/// The NUMA allowance at fork clamps `imb_numa_nr` for a task allowed every CPU too:
/// `find_idlest_group()`'s `group_has_spare` case (fair.c v6.8 lines 10427-10454)
/// takes `min(cpumask_weight(local group span & p->cpus_ptr), sd->imb_numa_nr)`
/// under `if (p->nr_cpus_allowed != NR_CPUS)`, and `NR_CPUS` is `CONFIG_NR_CPUS`
/// (include/linux/threads.h line 21), the build's maximum: a task allowed everything
/// has `cpu_possible_mask` (core.c line 9940 moves init there, isolation.c line 61),
/// fewer CPUs. A machine where that minimum bites: 8 nodes of 2 CPUs, each CPU its
/// own LLC, nodes paired at distance 12, 20 between pairs. PKG (a node) holds 2 LLCs,
/// so imb_numa_nr is 2, scaled at the 16-CPU NUMA level by its span over the first
/// NUMA domain's (4) to 8 (topology.c v6.8 lines 2473-2490), while that level's
/// local group (a pair of nodes) has 4 CPUs. With 4 tasks on CPUs 0-3 and 2 in each
/// other pair, a fork on CPU 0 makes 5 running locally: over min(4, 8), so the
/// idle-CPU difference of 2 is not forgiven (`adjust_numa_imbalance()`, lines
/// 1329-1348) and the task goes to another pair. With `sd->imb_numa_nr` unclamped
/// (5 <= 8, a difference of 2 forgiven) it stayed on CPU 0, where the pure slow path
/// (`wakeup::select_task_rq_new()`, which already clamped) chose CPU 6.
#[test]
fn the_numa_allowance_at_fork_is_clamped_for_a_task_allowed_every_cpu() {
    let mut spec = crate::topology::MachineSpec::regular(
        "pairs-8x2",
        "8 nodes of 2 CPUs in pairs, no shared cache",
        crate::topology::Arch::X86,
        8,
        1,
        2,
        1,
        1,
        1,
        crate::topology::Numbering::Linear,
    );
    spec.numa_distance = Some(
        (0..8u8)
            .map(|i| {
                (0..8u8)
                    .map(|j| match (i, j) {
                        _ if i == j => 10,
                        _ if i / 2 == j / 2 => 12,
                        _ => 20,
                    })
                    .collect()
            })
            .collect(),
    );
    let machine = spec.build().unwrap();
    let n = machine.nr_cpus();
    assert_eq!(n, 16);
    let specs = (0..10).map(|_| hog(n, 0..n, 10)).collect();
    let mut sim = sim_on(machine, "6.8", 0..n, specs, 10);
    let top = sim.balance.levels[0].last().unwrap();
    assert!(top.flags.contains(crate::sched_domain::SdFlags::NUMA));
    assert_eq!((top.span_weight, top.imb_numa_nr), (16, 8));
    assert_eq!(*top.groups[0].cpus, [0, 1, 2, 3]);
    let at = [0, 1, 2, 3, 4, 5, 8, 9, 12, 13];
    place(&mut sim, |t| at[t as usize]);
    let all = CpuMask::from_cpus(n, (0..n).map(CpuId));
    let cpu = sim.find_idlest_cpu_fork(0, &all);
    // The first idle CPU of pair 4-7 (CPUs 6 and 7 idle, alike), kept further down.
    assert_eq!(cpu, 6, "the fork stayed on CPU {cpu}");
    // The pure slow path on the same state.
    let s = slow_path_state(&sim);
    let (d, t) = slow_path_fork(&sim, &s, 0, &all);
    assert_eq!(d.cpu.0, cpu, "{}", t.render(&d));
}
