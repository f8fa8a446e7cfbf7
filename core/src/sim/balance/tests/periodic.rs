//! Periodic balancing from the tick (`rebalance.rs`, `lb/`) in small runs: what
//! moves, what stays, and when each domain is due.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// An overloaded cluster sheds tasks to an idle one: eight hogs on cluster 0 of
/// Kunpeng (CPUs 0-3), cluster 1 (4-7) idle with its tick stopped; the busy CPUs'
/// ticks kick the idle load balancer, which balances the MC level (groups are
/// clusters) on behalf of CPUs 4-7 until each runs one task. One task moves per MC
/// balance (newly idle or idle, `detach_tasks()` stops when the source has one task
/// left), and after each move the next idle CPU of cluster 1 becomes the MC level's
/// balancing CPU (`should_we_balance()`), whose `balance_interval` was doubled to
/// `max_interval` (64 ms) by the balanced exit while it was not: the four moves come
/// at ~40, 100, 160 and 230 ms.
#[test]
fn an_overloaded_cluster_sheds_tasks_to_an_idle_cluster() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..8, 8, 400);
    place(&mut sim, |t| t % 4);
    run_to(&mut sim, 260);
    let per_cpu: Vec<usize> = (0..8)
        .map(|c| (0..8).filter(|&t| cpu_of(&sim, t) == c).count())
        .collect();
    assert_eq!(per_cpu, vec![1; 8], "{per_cpu:?}");
    assert!(sim.metrics.migrations_balance >= 4);
}

/// NUMA allowance in periodic balancing (6.8, two nodes, imb_numa_nr 4): two hogs
/// on node 0 stay there (an imbalance of 2 is allowed); six move partly to node 1
/// (the running tasks cannot be pulled: active balancing pushes them once the
/// balance has failed more than cache_nice_tries + 2 times).
#[test]
fn numa_allows_a_small_imbalance_only() {
    for (tasks, moved) in [(2, false), (6, true)] {
        let mut sim = hogs("kunpeng920-6426", "6.8", 0..64, tasks, 1500);
        place(&mut sim, |t| 4 * t);
        run_to(&mut sim, 1000);
        let on_node1 = (0..tasks).filter(|&t| cpu_of(&sim, t) >= 32).count();
        assert_eq!(on_node1 > 0, moved, "{tasks} tasks: {on_node1} on node 1");
        assert_eq!(sim.metrics.active_balances > 0, moved);
    }
}

/// The domains were built at boot, long before the run (`sd_init()`: `last_balance =
/// jiffies`; the machine idle since, its ticks stopped): a CPU busy from the start
/// balances every level at its first tick, not a busy interval after the run starts
/// (the LLC's 32 ms × busy_factor 16 = 508 ms on Kunpeng's 32-CPU node, where every
/// CPU's first busy balance of the LLC used to fall on the same jiffy).
#[test]
fn every_domain_is_due_at_the_first_tick() {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..32, 32, 500);
    let up = sim.balance.uptime;
    assert!(up >= sim.balance.max_lb_interval, "{up}");
    run_to(&mut sim, 9);
    let n = sim.balance.n_levels(0);
    assert!(n >= 2, "CLS and MC at least");
    for li in 0..n {
        let last = sim.balance.dom[0][li].last_balance;
        assert!(
            (up..=up + 2).contains(&last),
            "CPU 0 level {li}: last balance at jiffy {last}, the run starts at {up}"
        );
    }
    // The LLC's next busy balance is a busy interval later, not before.
    let li = (0..n).find(|&li| sim.balance.levels[0][li].is_llc).unwrap();
    let last = sim.balance.dom[0][li].last_balance;
    run_to(&mut sim, 100);
    assert_eq!(sim.balance.dom[0][li].last_balance, last);
}

/// Every CPU's tick falls on the jiffy grid at the same instant
/// (`tick_setup_sched_timer()`, kernel/time/tick-sched.c v6.8 lines 1558-1567:
/// `hrtimer_set_expires(&ts->sched_timer, tick_init_jiffy_update())`, offset only
/// `if (sched_skew_tick)`, a boot option that is off by default). This decides
/// `nohz_balancer_kick()`'s `nr_busy_cpus > 1`: with short bursts, two CPUs are busy at
/// the same tick far more often than one is still busy at another's staggered tick.
#[test]
fn every_cpu_ticks_on_the_jiffy_grid() {
    let sim = hogs("kunpeng920-6426", "6.6", 0..32, 1, 1);
    let offs = sim.queue.tick_offsets();
    assert_eq!(offs.len(), 32);
    assert!(offs.iter().all(|&(o, _)| o == 0), "{offs:?}");
}

/// SIS_UTIL's hint is written to the LLC's shared line only when it changes
/// (`update_idle_cpu_scan()`, fair.c v6.8 10547-10548), and the write takes the line
/// from every CPU that had read it: the next `select_idle_cpu()` read of the hint
/// (7368) on another CPU misses and pays a transfer from the balancing CPU.
#[test]
fn a_changed_nr_idle_scan_is_a_write_of_the_llc_line() {
    let (mut sim, env) = hogs_and_llc_balance();
    let (reader, llc) = (20, sim.llc_id_of[0] as usize);
    sim.update_sd_lb_stats(&env);
    sim.llc_line_read(reader, 0);
    assert_eq!(sim.llc_line_read(reader, 0), 0, "a current copy reads free");
    // The same state again: the same hint, no write, the reader's copy stays current.
    sim.update_sd_lb_stats(&env);
    assert_eq!(
        sim.llc_line_read(reader, 0),
        0,
        "an unchanged hint is not written"
    );
    // A hint that changes is written by the balancing CPU (0).
    let nr = sim.state.llc_shared[llc].nr_idle_scan;
    sim.state.llc_shared[llc].nr_idle_scan = nr + 1;
    sim.update_sd_lb_stats(&env);
    assert_eq!(sim.state.llc_shared[llc].nr_idle_scan, nr);
    let miss = sim.llc_line_read(reader, 0);
    let c2c = sim.cost.c2c_ns(CpuId(0), CpuId(reader));
    assert!(
        miss >= c2c && c2c > 0,
        "read after the write: {miss} ns, c2c {c2c}"
    );
    assert_eq!(
        sim.llc_line_read(0, 0),
        0,
        "the writer's own copy is current"
    );
}

/// `update_idle_cpu_scan()` compares before it writes ("if ((int)y !=
/// sd_share->nr_idle_scan)", fair.c v6.8 10547): the comparison is a read of the
/// LLC's shared line, which costs the balancing CPU a transfer when another CPU has
/// written the line since it last held it, even when the hint does not change.
#[test]
fn an_unchanged_nr_idle_scan_is_still_a_read_of_the_llc_line() {
    let (mut sim, env) = hogs_and_llc_balance();
    let llc = sim.llc_id_of[0] as usize;
    sim.update_sd_lb_stats(&env);
    let nr = sim.state.llc_shared[llc].nr_idle_scan;
    // Another CPU of the LLC writes the line (a nohz transition's nr_busy_cpus).
    let other = 20;
    sim.llc_line_write_of(other, 0);
    assert_eq!(sim.cpus[0].mode, Mode::Running, "CPU 0 runs a hog");
    let before = sim.cpus[0].stolen_ns;
    sim.update_sd_lb_stats(&env);
    assert_eq!(
        sim.state.llc_shared[llc].nr_idle_scan, nr,
        "the hint is unchanged"
    );
    let paid = sim.cpus[0].stolen_ns - before;
    let c2c = sim.cost.c2c_ns(CpuId(other), CpuId(0));
    assert!(
        paid >= c2c && c2c > 0,
        "the comparison's read costs the balancing CPU's task {paid} ns, c2c {c2c}"
    );
    // Now CPU 0's copy is current: the next unchanged balance reads it free.
    let before = sim.cpus[0].stolen_ns;
    sim.update_sd_lb_stats(&env);
    assert_eq!(sim.cpus[0].stolen_ns, before, "a current copy reads free");
}

/// Eight hogs on Kunpeng's node 0 after 10 ms, and CPU 0's idle balance of its LLC
/// level (where `update_idle_cpu_scan()` runs).
fn hogs_and_llc_balance() -> (Simulator, lb::LbEnv) {
    let mut sim = hogs("kunpeng920-6426", "6.8", 0..32, 8, 100);
    run_to(&mut sim, 10);
    let li = (0..sim.balance.n_levels(0))
        .find(|&li| sim.balance.levels[0][li].is_llc)
        .unwrap();
    (sim, lb::LbEnv::new(0, 0, li, CpuIdle::Idle))
}
