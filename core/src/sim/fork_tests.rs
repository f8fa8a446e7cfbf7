//! Tests of the process tree: forks in order, placed where fork balancing says at the
//! moment of the fork, and malformed trees refused.

use super::program::Ins;
use super::test_support::{slow_path_fork, slow_path_state, test_config, tiny};
use super::*;
use crate::cost::CostParams;
use crate::topology::presets;
use crate::workload::{self, Dist, Noise, Op, TaskSpec, Workload};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn config(preset: &str, cpus: &str, patches: &str, plan: Plan, noise: Noise) -> SimConfig {
    let machine = presets::machine(preset).unwrap();
    let allowed = CpuMask::parse_list(machine.nr_cpus(), cpus).unwrap();
    SimConfig {
        seed: 3,
        warmup: SimTime::from_ms(1),
        noise,
        ..test_config(machine, allowed, patches, plan, SimTime::from_ms(20))
    }
}

fn plan_of(w: &Workload, preset: &str) -> Plan {
    let machine = presets::machine(preset).unwrap();
    workload::build(w, &CostParams::for_machine(&machine), machine.nr_cpus()).unwrap()
}

/// Steps `sim` until every task exists; before each step, works out where each
/// parent about to fork (running, its next op a fork) would place its next child
/// with `find_idlest_cpu_fork()` then, and checks each child created in the step
/// went there. Returns the tasks in the order they were created, with the time.
fn follow_forks(sim: &mut Simulator) -> Vec<(u32, SimTime)> {
    let n = sim.tasks.len();
    let mut order: Vec<(u32, SimTime)> = (0..n as u32)
        .filter(|&t| sim.start_cpu[t as usize] != u32::MAX)
        .map(|t| (t, SimTime::ZERO))
        .collect();
    while order.len() < n {
        let mut expect = Vec::new();
        for c in 0..sim.cpus.len() as u32 {
            let cpu = &sim.cpus[c as usize];
            if cpu.mode != Mode::Running {
                continue;
            }
            let p = cpu.curr;
            if !matches!(sim.code.ins[sim.tasks[p as usize].pc as usize], Ins::Fork) {
                continue;
            }
            if let Some(&child) = sim.children[p as usize].get(sim.forked[p as usize] as usize) {
                let mask = sim.views[child as usize]
                    .task
                    .as_ref()
                    .unwrap()
                    .allowed
                    .clone();
                expect.push((child, sim.find_idlest_cpu_fork(c, &mask)));
            }
        }
        assert!(
            sim.step(),
            "the run ended with {} of {n} tasks created",
            order.len()
        );
        for t in 0..n as u32 {
            if sim.start_cpu[t as usize] == u32::MAX || order.iter().any(|&(x, _)| x == t) {
                continue;
            }
            let want = expect.iter().find(|&&(c, _)| c == t).map(|&(_, cpu)| cpu);
            assert_eq!(
                Some(sim.start_cpu[t as usize]),
                want,
                "task {t} forked at {}",
                sim.now
            );
            order.push((t, sim.now));
        }
    }
    order
}

/// tbench: tbench_srv and the tbench parent run first; the parent forks the clients
/// in order; each client's connect makes tbench_srv fork that client's server, in
/// order; every child lands where `find_idlest_cpu_fork()` said at its fork.
#[test]
fn tbench_forks_in_its_order_where_fork_balancing_says() {
    let plan = plan_of(&Workload::Tbench { clients: 4 }, "kunpeng920-6426");
    let (srv, parent) = (8, 9);
    assert_eq!(plan.tasks[1].parent, Some(srv));
    assert_eq!(plan.tasks[0].parent, Some(parent));
    let mut sim =
        Simulator::new(config("kunpeng920-6426", "0-31", "6.6", plan, Noise::Quiet)).unwrap();
    let order = follow_forks(&mut sim);
    let pos = |t: u32| order.iter().position(|&(x, _)| x == t).unwrap();
    assert_eq!((order[0].0, order[1].0), (srv, parent));
    for i in 0..3 {
        assert!(pos(2 * i) < pos(2 * i + 2), "clients in order");
        assert!(pos(2 * i + 1) < pos(2 * i + 3), "servers in order");
    }
    for i in 0..4 {
        assert!(
            pos(2 * i) < pos(2 * i + 1),
            "client {i} connects before its server exists"
        );
    }
    // The parent pays a fork's time before each child.
    let (_, t0) = order[pos(0)];
    let (_, t2) = order[pos(2)];
    assert!(t2.since(t0) >= 50_000, "{t0} {t2}");
    let layout: Vec<(u32, u32)> = (0..10)
        .map(|t| (t, sim.start_cpu(TaskId(t)).unwrap().0))
        .collect();
    eprintln!("tbench 4 on kunpeng920-6426 node0, 6.6: (task, start CPU) {layout:?}");
    sim.run().unwrap();
}

/// hackbench: main forks each group's receivers, then its senders, and every worker
/// waits at the start barrier until main has them all.
#[test]
fn hackbench_forks_receivers_first_and_starts_them_together() {
    let w = Workload::Hackbench {
        groups: 2,
        fds: 3,
        loops: 2,
        pipe: true,
        threads: false,
        msg_bytes: 100,
    };
    let plan = plan_of(&w, "flat-16");
    assert_eq!(plan.tasks[3].role, "sender");
    assert_eq!(plan.tasks[0].role, "receiver");
    let mut sim = Simulator::new(config("flat-16", "0-15", "6.8", plan, Noise::Quiet)).unwrap();
    let order = follow_forks(&mut sim);
    let created: Vec<u32> = order.iter().map(|&(t, _)| t).collect();
    assert_eq!(created, vec![12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    // No worker has done any work before the last is created: all wait for main.
    for t in 0..12 {
        assert!(
            sim.tasks[t].iters == 0 && sim.tasks[t].tokens <= 1,
            "task {t}"
        );
    }
    let last_fork = order.last().unwrap().1;
    sim.run().unwrap();
    assert_eq!(sim.live_tasks(), 0);
    // The completion time counts from main's start time, after the last fork.
    assert!(sim.metrics.window_start_ns >= last_fork.ns());
    assert!(sim.metrics.window_start_ns < sim.now.ns());
}

fn refused(tasks: Vec<TaskSpec>) -> String {
    let cfg = config(
        "flat-16",
        "0-15",
        "6.8",
        Plan::to_completion(tasks),
        Noise::Quiet,
    );
    match Simulator::new(cfg) {
        Err(SimError::Workload(m)) => m,
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn a_malformed_process_tree_is_refused() {
    let run = || Op::Run(Dist::fixed(1_000));
    let forker = || vec![run(), Op::Fork, Op::Exit];
    let plain = || vec![run(), Op::Exit];
    // A cycle: 0 forks 1, 1 forks 0 (and a root beside them).
    let m = refused(vec![
        tiny(Some(1), forker()),
        tiny(Some(0), forker()),
        tiny(None, plain()),
    ]);
    assert!(m.contains("cycle"), "{m}");
    // Its own parent.
    let m = refused(vec![tiny(Some(0), forker())]);
    assert!(m.contains("cycle"), "{m}");
    // A fork of an unknown task.
    let m = refused(vec![tiny(Some(7), plain())]);
    assert!(m.contains("does not exist"), "{m}");
    // Children but no fork, a fork but no children.
    let m = refused(vec![tiny(None, plain()), tiny(Some(0), plain())]);
    assert!(m.contains("never forks"), "{m}");
    let m = refused(vec![tiny(None, forker())]);
    assert!(m.contains("has none"), "{m}");
    // A fork more than there are children ends the run with an error.
    let cfg = config(
        "flat-16",
        "0-15",
        "6.8",
        Plan::to_completion(vec![
            tiny(
                None,
                vec![run(), Op::Fork, Op::Repeat { to: 0, times: 2 }, Op::Exit],
            ),
            tiny(Some(0), plain()),
        ]),
        Noise::Quiet,
    );
    let e = Simulator::new(cfg).unwrap().run().unwrap_err();
    assert!(e.to_string().contains("forks more often"), "{e}");
}

/// A fork onto the parent's own CPU (one CPU allowed) queues the child behind the
/// parent, which runs on (`sysctl_sched_child_runs_first` = 0, EEVDF's
/// `PLACE_DEADLINE_INITIAL`: the child waits for the parent's slice).
#[test]
fn the_child_does_not_run_first() {
    let tasks = vec![
        tiny(
            None,
            vec![
                Op::Run(Dist::fixed(1_000)),
                Op::Fork,
                Op::Run(Dist::fixed(100_000)),
                Op::Exit,
            ],
        ),
        tiny(Some(0), vec![Op::Run(Dist::fixed(1_000)), Op::Exit]),
    ];
    let mut sim = Simulator::new(config(
        "flat-16",
        "0",
        "6.8",
        Plan::to_completion(tasks),
        Noise::Quiet,
    ))
    .unwrap();
    while sim.start_cpu[1] == u32::MAX {
        assert!(sim.step());
    }
    assert_eq!(sim.tasks[1].loc, Loc::Queued(0));
    assert!(sim.run_until(SimTime::from_us(50)));
    assert_eq!((sim.cpus[0].mode, sim.cpus[0].curr), (Mode::Running, 0));
    sim.run().unwrap();
}

/// Default noise: a kthread bound to each CPU and an unbound task per 8 CPUs, which
/// wake at osnoise's rates (2.5/s per CPU; 64/s per unbound task) within 10 % over
/// 40 simulated seconds, stay out of the live count, and give the same run twice.
#[test]
fn default_noise_wakes_kthreads_at_the_cited_rate() {
    let quiet_task = || {
        tiny(
            None,
            vec![
                Op::Sleep(Dist::fixed(100_000_000)),
                Op::Run(Dist::fixed(10_000)),
                Op::Jump { to: 0 },
            ],
        )
    };
    let cfg = || {
        let mut c = config(
            "flat-16",
            "0-7",
            "6.8",
            Plan::for_duration(
                vec![quiet_task()],
                crate::workload::MetricKind::CompletionTime,
            ),
            Noise::Default,
        );
        c.duration = SimTime::from_ms(40_000);
        c.check_invariants = false;
        c
    };
    let mut sim = Simulator::new(cfg()).unwrap();
    assert_eq!(sim.task_count(), 1 + 8 + 1);
    assert_eq!(sim.live_tasks(), 1);
    sim.run().unwrap();
    // Each sleep bumps the task's timer generation: its wake-ups, plus the first sleep.
    let sleeps =
        |r: std::ops::Range<usize>| -> u64 { r.map(|t| sim.tasks[t].timer_gen as u64 - 1).sum() };
    let (k, u) = (sleeps(1..9), sleeps(9..10));
    let (want_k, want_u) = (8 * 40 * 5 / 2, 40 * 64);
    assert!(
        k.abs_diff(want_k) * 10 < want_k,
        "kthread wake-ups {k}, want {want_k}"
    );
    assert!(
        u.abs_diff(want_u) * 10 < want_u,
        "unbound wake-ups {u}, want {want_u}"
    );
    // Each bound kthread only ever ran on its CPU.
    for (i, t) in (1..9).enumerate() {
        assert_eq!(sim.tasks[t].last_cpu, i as u32);
    }
    let again = {
        let mut s = Simulator::new(cfg()).unwrap();
        s.run().unwrap();
        s.digest()
    };
    assert_eq!(sim.digest(), again);
}

/// The wake-up module's slow path (`wakeup::select_task_rq_new()` with `WF_FORK`,
/// pure) and the simulator's fork placement (`find_idlest_cpu_fork()`) mirror the
/// same kernel functions: at many moments of a run, for a fork on every CPU and a
/// few task masks, they pick the same CPU (the parent on a CPU the run uses). The pure version reads the simulator's
/// runqueue state with each idle CPU's C-state exit latency (ns to the kernel's µs)
/// and `idle_since` as `rq->idle_stamp`, at the moments when no group's
/// `sgc->imbalance` is set (the pure version has none).
#[test]
fn the_pure_slow_path_places_forks_where_the_simulator_does() {
    let hackbench = |groups| Workload::Hackbench {
        groups,
        fds: 10,
        loops: 200,
        pipe: true,
        threads: false,
        msg_bytes: 100,
    };
    let cases: [(&str, &str, Workload, Noise); 6] = [
        (
            "kunpeng920-6426",
            "0-127",
            Workload::Hackbench {
                groups: 4,
                fds: 10,
                loops: 50,
                pipe: true,
                threads: false,
                msg_bytes: 100,
            },
            Noise::Quiet,
        ),
        (
            "kunpeng920-6426",
            "0-63",
            Workload::Tbench { clients: 24 },
            Noise::Default,
        ),
        (
            "spr-2s-snc2",
            "0-223",
            Workload::Tbench { clients: 40 },
            Noise::Default,
        ),
        (
            "xeon-smt-8",
            "0-7",
            Workload::Tbench { clients: 6 },
            Noise::Default,
        ),
        (
            "kunpeng920-6426",
            "0-31,64-95",
            hackbench(6),
            Noise::Default,
        ),
        ("flat-16", "0-15", hackbench(3), Noise::Quiet),
    ];
    let (mut compared, mut moved, mut busy) = (0u32, 0u32, 0u32);
    for (preset, cpus, w, noise) in cases {
        let plan = plan_of(&w, preset);
        let mut sim = Simulator::new(config(preset, cpus, "6.8", plan, noise)).unwrap();
        let n = sim.cpus.len() as u32;
        let run = CpuMask::parse_list(n, cpus).unwrap();
        let masks: Vec<CpuMask> = [
            format!("0-{}", n - 1),
            format!("0-{}", n / 2 - 1),
            format!("1,3,{}-{}", n / 4, n / 2),
        ]
        .iter()
        // Within the run's CPUs, as every task's mask is: the simulator's
        // find_idlest_cpu() tests its domain's run CPUs against the mask where the
        // kernel tests sched_domain_span(sd), which only differs for a mask reaching
        // outside them.
        .map(|m| CpuMask::parse_list(n, m).unwrap().and(&run))
        .filter(|m| !m.is_empty())
        .collect();
        for step in 0..40_000u32 {
            if !sim.step() {
                break;
            }
            // The pure version has no `sgc->imbalance` (`wakeup/select/idlest.rs`:
            // every group's is false); a moment when a load balance that met pinned
            // tasks has set one is no comparison.
            if step % 401 != 0 || sim.balance.sgc_imbalance.iter().any(|&b| b) {
                continue;
            }
            let s = slow_path_state(&sim);
            // A parent runs on a run CPU (the others have no balancing levels).
            for c in run.iter().map(|c| c.0) {
                for mask in &masks {
                    let want = sim.find_idlest_cpu_fork(c, mask);
                    let (d, t) = slow_path_fork(&sim, &s, c, mask);
                    assert_eq!(
                        d.cpu.0,
                        want,
                        "{preset} at {} (step {step}), fork on CPU{c}, mask {mask}:\n{}",
                        sim.now,
                        t.render(&d)
                    );
                    compared += 1;
                    moved += u32::from(want != c);
                    busy += u32::from(
                        s.rqs.iter().filter(|r| r.nr_running > 0).count() > n as usize / 4,
                    );
                }
            }
        }
    }
    eprintln!("compared {compared}, moved {moved}, busy {busy}");
    assert!(compared > 1000, "{compared}");
}

/// `wake_up_new_task()` activates a new task with `ENQUEUE_INITIAL` only from 6.12
/// (core.c v6.12 4832), whose `place_entity()` gives it half a slice to its deadline
/// (PLACE_DEADLINE_INITIAL, fair.c v6.8 5249-5250). On 6.6-6.11 `task_fork_fair()`
/// places it with the flag (fair.c v6.8 12654) but `activate_task(rq, p,
/// ENQUEUE_NOCLOCK)` (core.c v6.8 4923) places it again without: a whole slice. Until
/// session 29 the simulator gave half a slice on every EEVDF release.
#[test]
fn a_new_tasks_deadline_is_half_a_slice_only_from_6_12() {
    let hog = || tiny(None, vec![Op::Run(Dist::Fixed { ns: 1_000_000 }), Op::Exit]);
    for (patches, half) in [("6.8", false), ("6.6", false), ("6.12", true)] {
        let machine = presets::machine("kunpeng920-4826").unwrap();
        let one = CpuMask::from_cpus(machine.nr_cpus(), [CpuId(0)]);
        let plan = Plan::to_completion(vec![hog(), hog()]);
        let sim = Simulator::new(test_config(
            machine,
            one,
            patches,
            plan,
            SimTime::from_ms(5),
        ))
        .unwrap();
        let slice = sim.slice_ns;
        let want = if half { slice / 2 } else { slice };
        for (i, t) in sim.tasks.iter().enumerate() {
            assert_eq!(t.deadline - t.vruntime, want, "{patches}: task {i}");
        }
    }
}
