//! The workload's task group's `tg->load_avg` line (`tg_load.rs`): who reads and
//! writes it when, its v6.7+ rate limit, its price and the rq-lock hold it lengthens.

use super::test_support::test_config;
use super::ttwu::Queued;
use super::ttwu_queue_tests::remote_running_target;
use super::*;
use crate::cost::CostTerms;
use crate::workload::{Dist, Op};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// The wakee of [`remote_running_target`] (attached to `target`, blocked) and its waker.
const WAKEE: u32 = 2;
const WAKER: u32 = 1;
const CURR: u32 = 0;

/// `(reads, writes)` of the line so far.
fn accesses(sim: &Simulator) -> (u64, u64) {
    (sim.metrics.tg_line_reads, sim.metrics.tg_line_writes)
}

/// The group cfs_rq on `cpu` was updated just now: no PELT period boundary since, and
/// nothing in its `removed`; `decayed` is false at an update this instant.
fn fresh(sim: &mut Simulator, cpu: u32) {
    sim.cpus[cpu as usize].tg.last_update_ns = sim.now.ns();
    sim.cpus[cpu as usize].tg.removed = false;
}

/// A wake-up onto the wakee's own CPU (no migration): `enqueue_entity()` →
/// `update_load_avg(UPDATE_TG | DO_ATTACH)` attaches nothing (`se->avg.last_update_time`
/// is set, fair.c v6.8 4745) and, not decayed, calls no `update_tg_load_avg()`
/// (4766-4768); the group entity's `update_cfs_group()` reads the line once
/// (`calc_group_shares()`, 3929). One read, no write.
#[test]
fn a_wake_up_on_its_own_cpu_only_reads_the_line() {
    let (cpu, target) = (2, 3);
    let mut sim = remote_running_target(cpu, target);
    assert_eq!(sim.attached[WAKEE as usize], target);
    fresh(&mut sim, target);
    let before = accesses(&sim);
    sim.tasks[WAKEE as usize].tokens += 1;
    sim.wake(WAKEE, Some(WAKER), cpu, crate::wakeup::WakeFlags::SYNC);
    assert_eq!(sim.tasks[WAKEE as usize].loc, Loc::Queued(target));
    assert_eq!(accesses(&sim), (before.0 + 1, before.1));
}

/// A migrated wake-up: `migrate_task_rq_fair()` → `remove_entity_load_avg()` leaves
/// the wakee's load in the old cfs_rq's `removed`; the enqueue on the new CPU attaches
/// it (DO_ATTACH, fair.c v6.8 4745-4755) and `update_tg_load_avg()` writes (the new
/// CPU's group contributed nothing); the old CPU's next `update_cfs_rq_load_avg()`
/// applies `removed` (4586-4610: decayed) and, with UPDATE_TG (the tick's
/// `entity_tick()`, 5501), writes too. Without the removal it would not have.
#[test]
fn a_migrated_wake_up_writes_on_the_new_cpu_and_the_old_one_at_its_next_update() {
    let (cpu, old, new) = (2, 3, 5);
    let mut sim = remote_running_target(cpu, old);
    fresh(&mut sim, old);
    fresh(&mut sim, new);
    sim.now += 2_000_000; // past any rate limit of earlier writes
    fresh(&mut sim, old);
    fresh(&mut sim, new);
    // Not decayed and nothing removed: the tick of the old CPU's task writes nothing.
    let (r0, w0) = accesses(&sim);
    sim.tg_update_load_avg(CURR, old);
    assert_eq!(accesses(&sim).1, w0);
    // try_to_wake_up()'s steps for a wakee placed on `new` by the remote rq lock.
    sim.remove_entity_load_avg(WAKEE);
    let mut q = Queued::default();
    let dist = sim.cost.distance(CpuId(cpu), CpuId(new));
    sim.ttwu_do_activate_tg(WAKEE, Some(WAKER), cpu, cpu, new, dist, &mut q);
    assert_eq!(sim.tasks[WAKEE as usize].loc, Loc::Queued(new));
    assert_eq!(
        accesses(&sim),
        (r0 + 1, w0 + 1),
        "the attach writes, the enqueue reads"
    );
    assert_eq!(
        sim.cpus[new as usize].tg.contrib,
        sim.cpus[new as usize].load.avg()
    );
    // The old CPU's next update (its tick) applies `removed` and writes.
    sim.update_cpu_pelt(old);
    sim.tg_update_load_avg(CURR, old);
    assert_eq!(accesses(&sim).1, w0 + 2);
    assert_eq!(
        sim.cpus[old as usize].tg.contrib,
        sim.cpus[old as usize].load.avg()
    );
}

/// A simulator of `n` quiet tasks on `preset` under `patches`, for the line's unit
/// tests: CPUs' load set by hand, `update_tg_load_avg()` called directly.
fn bare(preset: &str, patches: &str) -> Simulator {
    bare_n(preset, patches, 1)
}

/// [`bare`] with `n_tasks` quiet tasks.
fn bare_n(preset: &str, patches: &str, n_tasks: usize) -> Simulator {
    let machine = crate::topology::presets::machine(preset).unwrap();
    let n = machine.nr_cpus();
    let task = super::test_support::tiny(None, vec![Op::Run(Dist::Fixed { ns: 1_000 }), Op::Exit]);
    let mut sim = Simulator::new(test_config(
        machine,
        crate::cpumask::CpuMask::from_cpus(n, [CpuId(0)]),
        patches,
        crate::workload::Plan::to_completion(vec![task; n_tasks]),
        SimTime::from_ms(10),
    ))
    .unwrap();
    sim.now = SimTime::from_ms(5);
    sim
}

/// `cpu`'s group load is `load`, to be written (its contrib differs by more than 1/64).
fn set_load(sim: &mut Simulator, cpu: u32, load: u64) {
    let now = sim.now.ns();
    sim.cpus[cpu as usize].load.set(now, load);
}

/// Two writers in different sockets of a Kunpeng 920-4826 (CPUs 0 and 48), at the
/// same instant: the line (`atomic_long_add()`, fair.c v6.5 3677) moves across the
/// sockets, one RFO at a time: the first non-owner pays one cross-socket transfer,
/// the owner taking it back behind it pays two. Off (`--cost-off tg-line`): the same
/// writes, free.
#[test]
fn writers_in_two_sockets_pay_the_cross_socket_transfer_and_queue() {
    for terms in [CostTerms::ALL, CostTerms::all_but("tg-line").unwrap()] {
        let mut sim = bare("kunpeng920-4826", "6.5");
        sim.cost.params.terms = terms;
        let (a, b) = (0, 48);
        let x = sim.cost.c2c_ns(CpuId(a), CpuId(b));
        assert!(
            x > sim.cost.c2c_ns(CpuId(a), CpuId(4)),
            "cross-socket is dearer"
        );
        for (cpu, load) in [(a, 400), (b, 300)] {
            set_load(&mut sim, cpu, load);
            sim.update_tg_load_avg(cpu);
        }
        set_load(&mut sim, a, 800);
        sim.update_tg_load_avg(a);
        assert_eq!(sim.metrics.tg_line_writes, 3);
        let want = if terms.tg_line { x + 2 * x } else { 0 };
        assert_eq!(sim.metrics.tg_line_ns, want, "CPU 0 owns it first: free");
        // CPU 0 is on its way to run its task (Mode::Waking): its writes are its
        // time; CPU 48, idle, is not charged (as an idle CPU's balancing is not).
        let (on_a, on_b) = if terms.tg_line { (2 * x, 0) } else { (0, 0) };
        assert_eq!(sim.cpus[a as usize].stolen_ns, on_a);
        assert_eq!(sim.cpus[b as usize].stolen_ns, on_b);
    }
}

/// v6.7+ `update_tg_load_avg()` returns within 1 ms of its last write (fair.c v6.8
/// 4108-4113); v6.5 has no such test (3665-3679) and writes again.
#[test]
fn the_rate_limit_of_6_7_suppresses_a_second_write_within_a_millisecond() {
    for (rel, second) in [("6.8", 0), ("6.5", 1)] {
        let mut sim = bare("flat-16", rel);
        set_load(&mut sim, 1, 500);
        sim.update_tg_load_avg(1);
        assert_eq!(sim.metrics.tg_line_writes, 1, "{rel}");
        sim.now += 500_000;
        set_load(&mut sim, 1, 900);
        sim.update_tg_load_avg(1);
        assert_eq!(
            sim.metrics.tg_line_writes,
            1 + second,
            "{rel}: 0.5 ms later"
        );
        sim.now += 500_000;
        set_load(&mut sim, 1, 100);
        sim.update_tg_load_avg(1);
        assert_eq!(sim.metrics.tg_line_writes, 2 + second, "{rel}: 1 ms later");
        // Within 1/64 of the contribution: no write, whatever the release.
        sim.now += 2_000_000;
        set_load(&mut sim, 1, 101);
        sim.update_tg_load_avg(1);
        assert_eq!(sim.metrics.tg_line_writes, 2 + second, "{rel}: 1/64");
    }
}

/// A remote direct wake-up (`ttwu_queue()` → `rq_lock()` → `ttwu_do_activate()`, core.c
/// v6.8 4054-4057) reads the line while it holds the target's lock: the hold, and the
/// wait of the next waker queued behind it, grow by the read's transfer; the waker
/// pays it. Off, neither.
#[test]
fn a_remote_wake_ups_lock_hold_includes_the_line() {
    let (cpu, target, second) = (2, 3, 4);
    let run = |terms: CostTerms| {
        let mut sim = remote_running_target(cpu, target);
        sim.cost.params.terms = terms;
        fresh(&mut sim, target);
        // Another CPU (another cluster) wrote the line last: the waker's read moves it.
        let now = sim.now.ns();
        sim.tg.line.write(&sim.cost, CpuId(40), 0, now);
        let debt = sim.tasks[WAKER as usize].debt_ns;
        let ns = sim.metrics.tg_line_ns;
        sim.tasks[WAKEE as usize].tokens += 1;
        sim.wake(WAKEE, Some(WAKER), cpu, crate::wakeup::WakeFlags::SYNC);
        assert_eq!(sim.metrics.wake_remote_lock, 1);
        let line_ns = sim.metrics.tg_line_ns - ns;
        let paid = sim.tasks[WAKER as usize].debt_ns - debt;
        let (wait, _) = sim.take_remote_lock(second, target);
        (line_ns, paid, wait)
    };
    let (line_on, paid_on, wait_on) = run(CostTerms::ALL);
    let (line_off, paid_off, wait_off) = run(CostTerms::all_but("tg-line").unwrap());
    assert!(line_on > 0);
    assert_eq!(line_off, 0);
    assert_eq!(paid_on, paid_off + line_on, "the waker pays it");
    assert_eq!(wait_on, wait_off + line_on, "the next waker waits for it");
}

/// `try_steal_cookie()` runs on the forced-idle CPU, under `double_rq_lock()` (core.c
/// v6.8 6356-6409): that CPU detaches the task from `src` and attaches it to itself,
/// so it does the line's accesses of both and the stolen task pays them, with the
/// rq lines; `src`'s running task pays nothing for them. Off, the same steal, no
/// line time.
#[test]
fn a_core_steals_line_accesses_are_the_stealing_cpus() {
    let e = 4;
    let run = |terms: CostTerms| {
        let (mut sim, _, x) = super::tests::core_steal_run();
        // Up to the steal, the same run whatever the term: it is off.
        sim.cost.params.terms = CostTerms::all_but("tg-line").unwrap();
        sim.core_occ[e] = 2; // E is not stolen when CPU 0 is first forced idle
        while sim.cpus[0].mode != Mode::ForceIdle {
            assert!(sim.step());
        }
        assert_eq!(sim.tasks[e].loc, Loc::Queued(x));
        assert_eq!(sim.cpus[x as usize].mode, Mode::Running);
        sim.cost.params.terms = terms;
        sim.core_occ[e] = 0;
        // `x` wrote the line last: CPU 0's accesses move it.
        let now = sim.now.ns();
        sim.tg.line.write(&sim.cost, CpuId(x), 0, now);
        let (debt, stolen, line) = (
            sim.tasks[e].debt_ns,
            sim.cpus[x as usize].stolen_ns,
            sim.metrics.tg_line_ns,
        );
        sim.core_balance(0);
        assert_eq!(sim.tasks[e].loc, Loc::Queued(0));
        (
            sim.tasks[e].debt_ns - debt,
            sim.cpus[x as usize].stolen_ns - stolen,
            sim.metrics.tg_line_ns - line,
        )
    };
    let (debt_on, stolen_on, line_on) = run(CostTerms::ALL);
    let (debt_off, stolen_off, line_off) = run(CostTerms::all_but("tg-line").unwrap());
    assert!(line_on > 0);
    assert_eq!(line_off, 0);
    assert_eq!(debt_on, debt_off + line_on, "the stolen task pays it all");
    assert_eq!(stolen_on, stolen_off, "src's task pays none of it");
}

/// The balancer's detach of a queued group task whose group cfs_rq decayed. v6.1+:
/// `dequeue_entity()`'s `update_load_avg(DO_DETACH)` detaches and calls
/// `update_tg_load_avg()` once (fair.c v6.1.0 4200-4206). v5.12 to v6.0: the
/// dequeue's `update_load_avg(UPDATE_TG)` writes (decayed, the task's load still
/// in), then `set_task_cpu()` → `migrate_task_rq_fair()` → `detach_entity_cfs_rq()`
/// detaches and writes again (v5.12.9 4338, 6867-6873, 10940-10949; v6.0.1 4527,
/// 7102-7108, 11551-11560). One read either way.
#[test]
fn before_6_1_the_balancers_detach_writes_twice_when_decayed() {
    for (rel, writes) in [("5.12", 2), ("6.0", 2), ("6.1", 1), ("6.8", 1)] {
        let mut sim = bare("flat-16", rel);
        let (t, cpu) = (0, 1);
        let now = sim.now.ns();
        sim.attached[t as usize] = cpu;
        sim.tasks[t as usize].loc = Loc::Queued(cpu);
        sim.tasks[t as usize].load.set(now, 300);
        set_load(&mut sim, cpu, 500);
        // The group cfs_rq was last updated a PELT period ago: decayed.
        sim.cpus[cpu as usize].tg.last_update_ns = now - 2 * super::pelt::PERIOD_NS;
        sim.detach_entity_load_avg(t, cpu);
        assert_eq!(accesses(&sim), (1, writes), "{rel}");
        assert_eq!(
            sim.cpus[cpu as usize].tg.contrib,
            sim.cpus[cpu as usize].load.avg(),
            "{rel}: the last write is without the task"
        );
    }
}

/// v6.12's `update_cfs_group()` returns before `calc_group_shares()` when the group's
/// cfs_rq on that CPU is empty (fair.c v6.12.19 4068-4073): the dequeue of the last
/// group task there (it blocks, or the balancer moves it) reads nothing; with another
/// group task still queued there, it reads. v6.8 reads either way (3959-3976).
#[test]
fn from_6_12_a_dequeue_that_empties_the_group_reads_nothing() {
    for (rel, other_queued, reads) in [
        ("6.12", false, 0),
        ("6.12", true, 1),
        ("6.8", false, 1),
        ("6.8", true, 1),
    ] {
        let (t, other, cpu) = (0, 1, 1);
        // The balancer's detach of queued task t.
        let mut sim = bare_n("flat-16", rel, 2);
        sim.attached[t as usize] = cpu;
        sim.tasks[t as usize].loc = Loc::Queued(cpu);
        if other_queued {
            sim.cpus[cpu as usize].queue.push(other);
        }
        sim.detach_entity_load_avg(t, cpu);
        let what = format!("{rel}, another group task queued: {other_queued}");
        assert_eq!(sim.metrics.tg_line_reads, reads, "detach, {what}");
        // Task t, running, blocks.
        let mut sim = bare_n("flat-16", rel, 2);
        sim.attached[t as usize] = cpu;
        sim.tasks[t as usize].loc = Loc::Running(cpu);
        sim.cpus[cpu as usize].curr = t;
        sim.update_rq(cpu, |rq| rq.nr_running += 1);
        if other_queued {
            sim.cpus[cpu as usize].queue.push(other);
        }
        sim.dequeue_curr(cpu, Loc::Blocked);
        assert_eq!(sim.metrics.tg_line_reads, reads, "block, {what}");
    }
}

/// A forking parent (`wake_up_new_task()`, core.c v6.8 4899-4938) takes the target's
/// rq lock (`__task_rq_lock()`, 4919) and, under it, `activate_task()` (4923) →
/// `enqueue_task_fair()` attaches the new task (`update_load_avg(DO_ATTACH)` →
/// `update_tg_load_avg()`, fair.c v6.8 4745-4755) and reads the line
/// (`calc_group_shares()`, 3929): the hold, and the wait of the next taker of that
/// lock, grow by the line's time (fork.rs: `lock.extend_last`); the parent pays it.
/// Off, neither.
#[test]
fn a_forks_lock_hold_on_a_remote_target_includes_the_line() {
    let run = |terms: CostTerms| {
        let machine = crate::topology::presets::machine("kunpeng920-4826").unwrap();
        let allowed = crate::cpumask::CpuMask::from_cpus(machine.nr_cpus(), (0..8).map(CpuId));
        let parent = super::test_support::tiny(
            None,
            vec![
                Op::Run(Dist::Fixed { ns: 1_000_000 }),
                Op::Fork,
                Op::Run(Dist::Fixed { ns: 1_000_000 }),
                Op::Exit,
            ],
        );
        let child = super::test_support::tiny(
            Some(0),
            vec![Op::Run(Dist::Fixed { ns: 1_000_000 }), Op::Exit],
        );
        let plan = crate::workload::Plan::to_completion(vec![parent, child]);
        let mut sim = Simulator::new(test_config(
            machine,
            allowed,
            "6.8",
            plan,
            SimTime::from_ms(20),
        ))
        .unwrap();
        let cpu = loop {
            if let Loc::Running(c) = sim.tasks[0].loc {
                break c;
            }
            assert!(sim.step(), "the parent never ran");
        };
        // Up to the fork, the same run whatever the term.
        sim.cost.params.terms = terms;
        sim.measuring = true;
        // A CPU of the other socket wrote the line last: the parent's accesses move it.
        let now = sim.now.ns();
        sim.tg.line.write(&sim.cost, CpuId(60), 0, now);
        let (debt, line) = (sim.tasks[0].debt_ns, sim.metrics.tg_line_ns);
        assert!(sim.fork_next(0, cpu));
        let Loc::Queued(target) = sim.tasks[1].loc else {
            panic!("the child is queued: {:?}", sim.tasks[1].loc);
        };
        assert_ne!(target, cpu, "the child goes to a remote CPU");
        let second = (0..8).find(|&c| c != cpu && c != target).unwrap();
        let (wait, _) = sim.take_remote_lock(second, target);
        (
            sim.metrics.tg_line_ns - line,
            sim.tasks[0].debt_ns - debt,
            wait,
        )
    };
    let (line_on, paid_on, wait_on) = run(CostTerms::ALL);
    let (line_off, paid_off, wait_off) = run(CostTerms::all_but("tg-line").unwrap());
    assert!(line_on > 0);
    assert_eq!(line_off, 0);
    assert_eq!(paid_on, paid_off + line_on, "the parent pays it");
    assert_eq!(wait_on, wait_off + line_on, "the next taker waits for it");
}

/// The group cfs_rq on CPU `t` last updated two PELT periods ago, its load far from
/// its contribution: an UPDATE_TG update there writes.
fn decayed(sim: &mut Simulator, t: usize) {
    sim.cpus[t].tg.last_update_ns = sim.now.ns() - 2 * super::pelt::PERIOD_NS;
    sim.cpus[t].tg.contrib = 0;
}

/// The pick's `set_next_entity()` → `update_load_avg(cfs_rq, se, UPDATE_TG)` (fair.c
/// v6.8 5417) writes the line when the group cfs_rq decayed; `put_prev_entity()` →
/// `update_load_avg(cfs_rq, prev, 0)` (5485) updates it without `UPDATE_TG`: no
/// write, and the decay it consumed is not there for the pick that follows at the
/// same instant (4766-4768: `decayed && (flags & UPDATE_TG)`). This is the eager put
/// of `put_prev_task_balance()` (the stopper, core scheduling's pick).
#[test]
fn the_pick_writes_on_decay_and_put_prev_only_consumes_it() {
    let (cpu, target) = (2, 3);
    let mut sim = remote_running_target(cpu, target);
    let t = target as usize;
    let decay = |sim: &mut Simulator| decayed(sim, t);
    sim.now += 2_000_000; // past any rate limit of earlier writes
    decay(&mut sim);
    let w0 = accesses(&sim).1;
    sim.put_prev(target);
    assert_eq!(sim.tasks[CURR as usize].loc, Loc::Queued(target));
    assert_eq!(accesses(&sim).1, w0, "put_prev_entity() does not write");
    assert_eq!(
        sim.cpus[t].tg.last_update_ns,
        sim.now.ns(),
        "it updated the cfs_rq"
    );
    sim.schedule(target);
    assert_eq!(sim.tasks[CURR as usize].loc, Loc::Running(target));
    assert_eq!(accesses(&sim).1, w0, "the pick finds no decay left");
    // Decayed again at the pick: set_next_entity() writes.
    sim.now += 2_000_000;
    sim.put_prev(target);
    decay(&mut sim);
    sim.schedule(target);
    assert_eq!(sim.tasks[CURR as usize].loc, Loc::Running(target));
    assert_eq!(accesses(&sim).1, w0 + 1, "set_next_entity() writes");
    assert_eq!(sim.cpus[t].tg.contrib, sim.cpus[t].load.avg());
}

/// A preemption's pick (`pick_next_task_fair(rq, prev)`, fair.c v6.5 8126-8145): when
/// it picks `prev` again neither `put_prev_entity()` nor `set_next_entity()` runs, so
/// the group cfs_rq keeps its decay and the next UPDATE_TG update (the tick's
/// `entity_tick()`) writes; when it picks another task, `put_prev_entity()` consumes
/// the decay and that task's `set_next_entity()` finds none. Fails if the put-back
/// task's update is made at the put (session 36's model).
#[test]
fn a_preemption_that_picks_prev_again_keeps_the_decay() {
    let (cpu, target) = (2, 3);
    let mut sim = remote_running_target(cpu, target);
    let t = target as usize;
    let decay = |sim: &mut Simulator| decayed(sim, t);
    sim.now += 2_000_000; // past any rate limit of earlier writes
    decay(&mut sim);
    let stamp = sim.cpus[t].tg.last_update_ns;
    let w0 = accesses(&sim).1;
    sim.put_prev_for_pick(target);
    assert_eq!(sim.cpus[t].tg.put_back, CURR);
    sim.schedule(target);
    assert_eq!(sim.tasks[CURR as usize].loc, Loc::Running(target));
    assert_eq!(sim.cpus[t].tg.put_back, u32::MAX);
    assert_eq!(accesses(&sim).1, w0, "no set_next_entity(): no write");
    assert_eq!(
        sim.cpus[t].tg.last_update_ns, stamp,
        "no update: the decay is kept"
    );
    sim.tg_update_load_avg(CURR, target);
    assert_eq!(accesses(&sim).1, w0 + 1, "the tick's update writes");

    // Another task picked: the put-back task's put_prev_entity() consumes the decay.
    sim.now += 2_000_000;
    sim.tasks[WAKEE as usize].tokens += 1;
    sim.wake(WAKEE, Some(WAKER), cpu, crate::wakeup::WakeFlags::SYNC);
    assert_eq!(sim.tasks[WAKEE as usize].loc, Loc::Queued(target));
    decay(&mut sim);
    let w1 = accesses(&sim).1;
    sim.put_prev_for_pick(target);
    let i = sim.cpus[t].queue.iter().position(|&x| x == WAKEE).unwrap();
    assert!(sim.run_task(target, i));
    assert_eq!(sim.tasks[WAKEE as usize].loc, Loc::Running(target));
    assert_eq!(
        sim.cpus[t].tg.last_update_ns,
        sim.now.ns(),
        "put_prev_entity() updated"
    );
    assert_eq!(accesses(&sim).1, w1, "and set_next_entity() found no decay");
}
