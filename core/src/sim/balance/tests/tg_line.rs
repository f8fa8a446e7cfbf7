//! The task group's `tg->load_avg` line (`tg_load.rs`) under the balancer's rq locks
//! (`locks.rs`): the detach's accesses lengthen `src`'s hold, the attach's the next
//! take of `dst`'s, `__update_blocked_fair()`'s the hold it runs under.

use super::*;
use crate::cost::CostTerms;
use crate::sim::record::MigrateReason;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// flat-16 (6.8) at 5 ms: tasks 0 and 1 queued on CPU 1, task 2 on CPU 2 (as
/// `locks.rs`'s), the tracking of the line on with `terms`.
fn two_on_cpu1(terms: CostTerms) -> Simulator {
    let mut sim = hogs("flat-16", "6.8", 0..16, 3, 100);
    place(&mut sim, |t| if t < 2 { 1 } else { 2 });
    sim.now = SimTime::from_ms(5);
    sim.cost.params.terms = terms;
    sim.measuring = true;
    sim
}

/// `detach_tasks()` runs under busiest's lock (`rq_lock_irqsave(busiest)`, fair.c
/// v6.8 11328), `attach_tasks()` under dst's (`rq_lock(env->dst_rq)`, 9207-9224):
/// the detach's read of the line (`dequeue_entity()` → `update_cfs_group()`, 3929)
/// lengthens src's hold, so a second taker of src's lock waits for it; the attach's
/// write (`enqueue_entity()` → `update_load_avg(DO_ATTACH)` → `update_tg_load_avg()`,
/// 4745-4755) is added to the next `lb_rq_lock(dst)` hold, so a taker of dst's lock
/// behind it waits for it. The pass's lock time has both. Off (`--cost-off
/// tg-line`), neither.
#[test]
fn the_balancers_move_lengthens_src_and_dst_holds_by_the_line() {
    let run = |terms: CostTerms| {
        let mut sim = two_on_cpu1(terms);
        let (now, work) = (sim.now.ns(), sim.cost.params.rq_lock_hold_ns);
        // CPU 1 wrote the line just now: its detach's update_tg_load_avg() is rate
        // limited (fair.c v6.8 4108-4113), CPU 0's read and write move the line. CPU
        // 0's group contributes nothing yet: the attach writes.
        sim.cpus[1].tg.contrib = 0;
        sim.update_tg_load_avg(1);
        sim.cpus[0].tg.contrib = 0;
        let line = sim.metrics.tg_line_ns;
        let outer = sim.lb_pass_begin();
        sim.lb_rq_lock(0, 1, sim.lb_hold_ns(1));
        let at_src = sim.lb_clock.at_ns;
        sim.tg_migrate_queued(0, 1, 0, 0, MigrateReason::Idle);
        let on_src = sim.lb_clock.at_ns - at_src;
        let line = sim.metrics.tg_line_ns - line;
        let src_wait = sim.cpus[1].lock.acquire(&sim.cost, CpuId(5), now, work).0;
        let at_dst = sim.lb_clock.at_ns;
        sim.lb_rq_lock(0, 0, sim.lb_hold_ns(1));
        let dst_wait = sim.cpus[0]
            .lock
            .acquire(&sim.cost, CpuId(6), at_dst, work)
            .0;
        let pass = sim.lb_pass_end(outer);
        (line, on_src, src_wait, dst_wait, pass)
    };
    let (line_on, on_src, src_on, dst_on, pass_on) = run(CostTerms::ALL);
    let (line_off, off_src, src_off, dst_off, pass_off) =
        run(CostTerms::all_but("tg-line").unwrap());
    assert_eq!((line_off, off_src), (0, 0));
    let on_dst = line_on - on_src;
    assert!(on_src > 0 && on_dst > 0, "{on_src} {on_dst}");
    assert_eq!(
        src_on,
        src_off + on_src,
        "src's next taker waits for the detach"
    );
    assert_eq!(
        dst_on,
        dst_off + on_dst,
        "dst's next taker waits for the attach"
    );
    assert_eq!(pass_on, pass_off + line_on, "the pass's time has both");
}

/// `update_blocked_averages()` (fair.c v6.8 9410-9427) runs `__update_blocked_fair()`
/// under `rq_lock_irqsave(cpu)`: the group cfs_rq, on the leaf list where a group task
/// ran, is updated and, if it decayed (a PELT period crossed, 9315-9316), its
/// `update_tg_load_avg()` writes the line, lengthening the hold: a remote waker
/// behind it waits for the write. Not decayed, no write. On a CPU no group task ever
/// ran on the group's cfs_rq is not on the list: nothing, whatever its load.
#[test]
fn update_blocked_averages_writes_on_decay_under_the_lock_and_skips_a_cpu_never_used() {
    let run = |terms: CostTerms, decayed: bool, cpu: u32| {
        let mut sim = two_on_cpu1(terms);
        let now = sim.now.ns();
        if !decayed {
            sim.cpus[cpu as usize].tg.last_update_ns = now;
        }
        let c = &mut sim.cpus[cpu as usize];
        c.load.set(now, c.load.avg() + 500);
        // Another CPU wrote the line last: the write moves it.
        sim.tg.line.write(&sim.cost, CpuId(9), 0, now);
        let (w0, line) = (sim.metrics.tg_line_writes, sim.metrics.tg_line_ns);
        let outer = sim.lb_pass_begin();
        sim.update_blocked_averages(0, cpu);
        sim.lb_pass_end(outer);
        let (wait, _) = sim.take_remote_lock(5, cpu);
        (
            sim.metrics.tg_line_writes - w0,
            sim.metrics.tg_line_ns - line,
            wait,
        )
    };
    let off = CostTerms::all_but("tg-line").unwrap();
    // CPU 1: the group's tasks are queued there.
    let (writes, line_on, wait_on) = run(CostTerms::ALL, true, 1);
    let (_, line_off, wait_off) = run(off, true, 1);
    assert_eq!(writes, 1, "decayed: one write");
    assert!(line_on > 0);
    assert_eq!(line_off, 0);
    assert_eq!(wait_on, wait_off + line_on, "the waker waits for the write");
    assert_eq!(
        run(CostTerms::ALL, false, 1),
        (0, 0, wait_off),
        "not decayed"
    );
    // A CPU no group task ever ran on.
    let sim = two_on_cpu1(CostTerms::ALL);
    let never = (3..16u32)
        .find(|&c| {
            sim.cpus[c as usize].tg.last_update_ns == 0 && sim.cpus[c as usize].tg.contrib == 0
        })
        .expect("a CPU the group never used");
    let (w, ns, _) = run(CostTerms::ALL, true, never);
    assert_eq!((w, ns), (0, 0), "CPU {never}: not on the leaf list");
}
