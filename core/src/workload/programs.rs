//! The programs of each workload, and how each maps onto the real benchmark.

use super::tree::{
    accept_daemon, child_of, dbench_parent, hackbench_main, hackbench_ready, launcher, prefixed,
    spawner, CLONE_THREAD_NS, EXEC_NS, FORK_NS,
};
use super::{
    tcp_split, Dist, MetricKind, Op, PipeRing, Plan, TaskSpec, Workload, MAX_REPEAT, MAX_TASKS,
};
use crate::cost::CostParams;
use crate::cpumask::{CpuId, CpuMask};

/// Mean tbench payload per operation, bytes (assumption: dbench's client.txt mixes
/// small SMB requests with ReadX/WriteX of up to 64 KiB; no measurement in
/// reference/). Throughput is reported as these bytes per second, as tbench does.
pub(crate) const TBENCH_BYTES_PER_OP: u64 = 4096;
/// tbench client bookkeeping per operation (parsing the load file line), assumption.
pub(crate) const TBENCH_CLIENT_THINK_NS: u64 = 1_000;
/// tbench_srv work per request besides the socket calls, assumption.
pub(crate) const TBENCH_SERVER_WORK_NS: u64 = 1_000;
/// UDP one-way processing relative to TCP, percent (assumption: no ACKs, no
/// congestion control state).
pub(crate) const UDP_PCT: u64 = 70;
/// Unix-socket message cost relative to a pipe message, percent (assumption: skb
/// allocation and socket locking on top of the copy).
pub(crate) const UNIX_SOCKET_PCT: u64 = 200;
/// `truesize` overhead of one small unix-socket skb, bytes (assumption).
pub(crate) const SKB_OVERHEAD_BYTES: u64 = 576;
/// Default `SO_SNDBUF` (net.core.wmem_default), bytes.
pub(crate) const WMEM_DEFAULT: u64 = 212_992;

/// The data a task touches each time it runs, bytes (assumption): its kernel stack
/// (THREAD_SIZE, 16 KiB on x86-64 and arm64), its task_struct and thread state
/// (~10 KiB in 6.x configurations), and the lines of its own stack, heap and the
/// pipe or socket it uses, rounded to 32 KiB. A per-workload measurement (perf's
/// L1d/L2 refills per context switch) would settle it.
pub const TASK_FOOTPRINT_BYTES: u64 = 32 * 1024;

fn pin(n: u32, cpu: u32) -> Option<CpuMask> {
    Some(CpuMask::of(n, CpuId(cpu)))
}

fn task(role: &'static str, program: Vec<Op>) -> TaskSpec {
    TaskSpec {
        role,
        program,
        cookie: 0,
        mailbox_cap: u32::MAX,
        wakes_in_task: true,
        own_mm: false,
        allowed: None,
        drop_when_full: false,
        pipe: None,
        footprint_bytes: TASK_FOOTPRINT_BYTES,
        parent: None,
        background: false,
    }
}

/// One end of a loopback-TCP pair (tbench, netperf): its wake-ups come from the
/// receive softirq rather than from task context, and each end is its own process.
fn loopback_task(role: &'static str, program: Vec<Op>) -> TaskSpec {
    TaskSpec {
        wakes_in_task: false,
        own_mm: true,
        ..task(role, program)
    }
}

/// Per-message CPU work varies by ±10 % around its mean (assumption: real system calls
/// vary with cache and branch state; with exactly fixed times, identical pairs started
/// together stay in lock-step forever, an artefact no machine shows).
pub(crate) const WORK_JITTER_PCT: u64 = 10;

fn fixed(ns: u64) -> Dist {
    let d = ns * WORK_JITTER_PCT / 100;
    Dist::Uniform {
        lo: ns - d,
        hi: ns + d,
    }
}

/// How many tasks `w` makes, counted before any is built (in u64: no overflow):
/// the benchmark's own and its launchers and daemons (`tree.rs`).
pub fn task_count(w: &Workload) -> u64 {
    let n = |x: u32| u64::from(x);
    match *w {
        // The pairs, the forking server and the client launcher.
        Workload::Tbench { clients: k }
        | Workload::NetperfTcpRr { instances: k }
        | Workload::NetperfUdpRr { instances: k } => 2 * n(k) + 2,
        // The pairs and their parent.
        Workload::Custom { pairs: k, .. } => 2 * n(k) + 1,
        Workload::Hackbench { groups, fds, .. } => 2 * n(groups) * n(fds) + 1,
        Workload::CookiePairs { threads, .. } => n(threads) + 1,
        Workload::Schbench {
            message_threads,
            workers,
            ..
        } => n(message_threads) * (1 + n(workers)) + 1,
        // lat_pipe forks the other end itself.
        Workload::LatPipe { .. } => 2,
    }
}

/// Expands a workload for a machine with `nr_cpu_ids` CPUs and cost parameters `p`.
/// A workload of more tasks than the simulator runs is refused before anything is
/// allocated (a mistyped scale must not exhaust memory).
pub fn build(w: &Workload, p: &CostParams, nr_cpu_ids: u32) -> Result<Plan, String> {
    let tasks = task_count(w);
    if tasks > MAX_TASKS as u64 {
        return Err(format!(
            "{}: {tasks} tasks; the simulator runs at most {}",
            w.name(),
            MAX_TASKS
        ));
    }
    match *w {
        Workload::Tbench { clients } => tbench(clients, p),
        Workload::NetperfTcpRr { instances } => netperf_rr(instances, false, p),
        Workload::NetperfUdpRr { instances } => netperf_rr(instances, true, p),
        Workload::Hackbench {
            groups,
            fds,
            loops,
            pipe,
            threads,
            msg_bytes,
        } => hackbench(groups, fds, loops, pipe, threads, msg_bytes, p),
        Workload::CookiePairs {
            threads,
            iterations,
            work,
            sleep,
            cookies,
        } => cookie_pairs(threads, iterations, work, sleep, cookies),
        Workload::Schbench {
            message_threads,
            workers,
            cputime,
            sleep,
        } => schbench(message_threads, workers, cputime, sleep),
        Workload::Custom {
            pairs,
            client_work,
            server_work,
            sleep,
        } => custom(pairs, client_work, server_work, sleep),
        Workload::LatPipe { cpu_a, cpu_b } => lat_pipe(cpu_a, cpu_b, p, nr_cpu_ids),
    }
}

/// tbench (dbench 4.0's tbench and tbench_srv): `clients` client/server pairs
/// over TCP loopback, to completion of the run's duration.
fn tbench(clients: u32, p: &CostParams) -> Result<Plan, String> {
    nonzero(clients, "tbench needs at least one client")?;
    // Client: think, send the request (small), wait for the reply, receive it
    // (copying the payload), count the bytes. Server: receive, work, send the
    // reply (copying the payload in).
    let (send, recv) = tcp_split(p, 100);
    // After the send wakes the server (sock_def_readable() in the receive
    // softirq, inside the client's send()), the client finishes the send and
    // enters the next recv() before it sleeps (cost::CostParams::tcp_tail_ns):
    // for that long both ends of the pair run. The server's reply is the same.
    let tail = p.tcp_tail_ns;
    let copy = p.copy_ns_per_kib * TBENCH_BYTES_PER_OP / 1024;
    // The process tree (dbench 4.0: dbench.c create_procs(), sockio.c,
    // tbench_srv.c): tbench_srv runs first and forks a child per accepted
    // connection; the tbench parent forks the clients; each client's setup
    // (sio_setup()) connects (one message to tbench_srv) and makes one 8-byte
    // exchange (do_packets(child, 8, 8)) with the server child that connection
    // gets, then waits at the parent's start barrier; the parent releases every
    // client at once (tree::dbench_parent), and the requests begin.
    let (srv, parent) = (2 * clients, 2 * clients + 1);
    let mut tasks = Vec::new();
    for i in 0..clients {
        let (c, s) = (2 * i, 2 * i + 1);
        let client = loopback_task(
            "tbench",
            prefixed(
                &[
                    Op::Send { to: srv },
                    Op::Run(fixed(send)),
                    Op::Send { to: s },
                    Op::Wait,
                    Op::Run(fixed(recv)),
                    Op::WaitBarrier,
                ],
                vec![
                    Op::Run(fixed(TBENCH_CLIENT_THINK_NS + send)),
                    Op::Send { to: s },
                    Op::Run(fixed(tail)),
                    Op::Wait,
                    Op::Run(fixed(recv + copy)),
                    Op::Count(1),
                    Op::Jump { to: 0 },
                ],
            ),
        );
        let server = loopback_task(
            "tbench_srv",
            vec![
                Op::Wait,
                Op::Run(fixed(recv + TBENCH_SERVER_WORK_NS + send + copy)),
                Op::Send { to: c },
                Op::Run(fixed(tail)),
                Op::Jump { to: 0 },
            ],
        );
        // Each end also touches the payload twice per operation: its user
        // buffer and the socket's skb data.
        let fp = TASK_FOOTPRINT_BYTES + 2 * TBENCH_BYTES_PER_OP;
        tasks.push(child_of(
            parent,
            TaskSpec {
                footprint_bytes: fp,
                ..client
            },
        ));
        tasks.push(child_of(
            srv,
            TaskSpec {
                footprint_bytes: fp,
                ..server
            },
        ));
    }
    tasks.push(loopback_task("tbench_srv", accept_daemon(clients)));
    // Its only wake-ups are the barrier's release, a syscall in task context.
    tasks.push(TaskSpec {
        wakes_in_task: true,
        ..loopback_task("tbench", dbench_parent(FORK_NS, clients))
    });
    Ok(Plan::for_duration(
        tasks,
        MetricKind::Throughput {
            unit: "MB/s",
            scale: TBENCH_BYTES_PER_OP,
            divisor: 1_000_000,
        },
    ))
}

/// netperf TCP_RR or UDP_RR (`udp`): `instances` request/response pairs.
fn netperf_rr(instances: u32, udp: bool, p: &CostParams) -> Result<Plan, String> {
    nonzero(instances, "netperf needs at least one instance")?;
    let pct = if udp { UDP_PCT } else { 100 };
    // One-byte request and response (netperf's default -r 1,1).
    let (send, recv) = tcp_split(p, pct);
    // Each end keeps running after its send wakes the other, until its own
    // recv() sleeps (as tbench's, above).
    let tail = p.tcp_tail_ns;
    // The process tree: the netserver daemon forks a child per control
    // connection (netserver.c, without -f); the clients are started by a shell
    // loop (`for i in $(seq N); do netperf … & done`): each is forked by the
    // shell, execs netperf and connects to netserver.
    let (srv, shell) = (2 * instances, 2 * instances + 1);
    let mut tasks = Vec::new();
    for i in 0..instances {
        let (c, s) = (2 * i, 2 * i + 1);
        let client = loopback_task(
            "netperf",
            prefixed(
                &[Op::Run(fixed(EXEC_NS)), Op::Send { to: srv }],
                vec![
                    Op::Run(fixed(send)),
                    Op::Send { to: s },
                    Op::Run(fixed(tail)),
                    Op::Wait,
                    Op::Run(fixed(recv)),
                    Op::Count(1),
                    Op::Jump { to: 0 },
                ],
            ),
        );
        let server = loopback_task(
            "netserver",
            vec![
                Op::Wait,
                Op::Run(fixed(recv + send)),
                Op::Send { to: c },
                Op::Run(fixed(tail)),
                Op::Jump { to: 0 },
            ],
        );
        tasks.push(child_of(shell, client));
        tasks.push(child_of(srv, server));
    }
    tasks.push(loopback_task("netserver", accept_daemon(instances)));
    let mut sh = task("sh", launcher(FORK_NS, instances));
    sh.own_mm = true;
    tasks.push(sh);
    Ok(Plan::for_duration(
        tasks,
        MetricKind::Throughput {
            unit: "trans/s per instance",
            scale: 1,
            divisor: instances as u64,
        },
    ))
}

/// hackbench: `groups` of `fds` senders and receivers over pipes or unix sockets,
/// processes or threads, each sender sending `loops` messages to each receiver.
fn hackbench(
    groups: u32,
    fds: u32,
    loops: u64,
    pipe: bool,
    threads: bool,
    msg_bytes: u32,
    p: &CostParams,
) -> Result<Plan, String> {
    nonzero(groups, "hackbench needs at least one group")?;
    nonzero(fds, "hackbench needs at least one fd per group")?;
    if loops == 0 {
        return Err("hackbench needs at least one loop".into());
    }
    if fds > 500 {
        return Err("hackbench: at most 500 fds per group".into());
    }
    // Each receiver reads loops × fds messages, counted in one 32-bit loop.
    let max_loops = MAX_REPEAT as u64 / fds as u64;
    if loops > max_loops {
        return Err(format!(
            "hackbench: at most {max_loops} loops with {fds} fds per group"
        ));
    }
    // Each side of a message: half the calibrated pipe write+read, plus the copy.
    let pct = if pipe { 100 } else { UNIX_SOCKET_PCT };
    let side = p.pipe_msg_ns * pct / 100 / 2 + p.copy_ns_per_kib * msg_bytes as u64 / 1024;
    // 16 pipe buffers of a 4 KiB page (PIPE_DEF_BUFFERS); small writes merge
    // into the head page (`sim::pipe`).
    let ring = PipeRing {
        slots: 16,
        msgs_per_page: 4096 / msg_bytes.clamp(1, 4096),
    };
    let cap = if pipe {
        ring.slots as u64 * ring.msgs_per_page as u64
    } else {
        WMEM_DEFAULT / (msg_bytes as u64 + SKB_OVERHEAD_BYTES)
    };
    // The main task, after the workers: it forks (-T: pthread_create()s) every
    // worker and releases them together (`tree::hackbench_main`).
    let workers = 2 * groups * fds;
    let main = workers;
    let mut tasks = Vec::new();
    for g in 0..groups {
        let base = g * 2 * fds;
        // hackbench.c group(): the receivers of a group first, then the senders.
        for _ in 0..fds {
            let mut r = task(
                "receiver",
                prefixed(
                    &hackbench_ready(main),
                    vec![
                        Op::Wait,
                        Op::Run(fixed(side)),
                        Op::Repeat {
                            to: 0,
                            times: loops * fds as u64,
                        },
                        Op::Exit,
                    ],
                ),
            );
            r.mailbox_cap = cap.max(1) as u32;
            r.pipe = pipe.then_some(ring);
            r.own_mm = !threads;
            tasks.push(child_of(main, r));
        }
        for _ in 0..fds {
            let mut prog = Vec::with_capacity(2 * fds as usize + 2);
            for r in 0..fds {
                if pipe {
                    // pipe_write() checks for room, then copies, then wakes
                    // the reader: the `Run` after a pipe's `Send` is its work
                    // (`sim::pipe`), paid after a wait for room, not before.
                    prog.push(Op::Send { to: base + r });
                    prog.push(Op::Run(fixed(side)));
                } else {
                    prog.push(Op::Run(fixed(side)));
                    prog.push(Op::Send { to: base + r });
                }
            }
            prog.push(Op::Repeat {
                to: 0,
                times: loops,
            });
            prog.push(Op::Exit);
            let mut s = task("sender", prefixed(&hackbench_ready(main), prog));
            s.own_mm = !threads;
            tasks.push(child_of(main, s));
        }
    }
    let fork_ns = if threads { CLONE_THREAD_NS } else { FORK_NS };
    let mut m = task("hackbench", hackbench_main(fork_ns, workers));
    m.own_mm = true;
    tasks.push(m);
    Ok(Plan::to_completion(tasks))
}

/// Seed 04's cookie pairs: `threads` threads working and sleeping `iterations`
/// times, pairs sharing a core-scheduling cookie unless `!cookies`.
fn cookie_pairs(
    threads: u32,
    iterations: u64,
    work: Dist,
    sleep: Dist,
    cookies: bool,
) -> Result<Plan, String> {
    nonzero(threads, "cookie-pairs needs at least one thread")?;
    if iterations == 0 {
        return Err("cookie-pairs needs at least one iteration".into());
    }
    if iterations > MAX_REPEAT as u64 {
        return Err(format!("cookie-pairs: at most {} iterations", MAX_REPEAT));
    }
    // Seed 04's test: one process whose main thread creates the threads in order
    // (pthread_create()) and then joins them.
    let mut tasks: Vec<TaskSpec> = (0..threads)
        .map(|i| {
            let mut t = task(
                "worker",
                vec![
                    Op::Run(work),
                    Op::Sleep(sleep),
                    Op::Repeat {
                        to: 0,
                        times: iterations,
                    },
                    Op::Exit,
                ],
            );
            // "groups the 10 threads in 5 pairs of cookies"
            t.cookie = if cookies { 1 + (i / 2) as u64 } else { 0 };
            child_of(threads, t)
        })
        .collect();
    tasks.push(task("main", spawner(CLONE_THREAD_NS, threads)));
    Ok(Plan::to_completion(tasks))
}

/// schbench: `message_threads` each waking `workers` workers, their wake-up
/// latency measured.
fn schbench(
    message_threads: u32,
    workers: u32,
    cputime: Dist,
    sleep: Dist,
) -> Result<Plan, String> {
    nonzero(
        message_threads,
        "schbench needs at least one message thread",
    )?;
    nonzero(workers, "schbench needs at least one worker")?;
    let mut tasks = Vec::new();
    let mut latency_tasks = Vec::new();
    for m in 0..message_threads {
        let base = m * (workers + 1);
        let mut prog = vec![Op::Sleep(sleep)];
        for k in 0..workers {
            prog.push(Op::Send { to: base + 1 + k });
        }
        prog.push(Op::Jump { to: 0 });
        tasks.push(task("message", prog));
        for _ in 0..workers {
            latency_tasks.push(tasks.len() as u32);
            let mut w = task(
                "worker",
                vec![Op::Wait, Op::Run(cputime), Op::Count(1), Op::Jump { to: 0 }],
            );
            // schbench wakes workers with a futex: a worker still busy with
            // the previous message misses the wake-up instead of queueing it.
            w.mailbox_cap = 1;
            w.drop_when_full = true;
            tasks.push(w);
        }
    }
    // A plain parent thread creates the threads in task order (simplified:
    // schbench's main thread starts the message threads, each of which starts
    // its own workers).
    let n = tasks.len() as u32;
    let mut tasks: Vec<TaskSpec> = tasks.into_iter().map(|t| child_of(n, t)).collect();
    tasks.push(task("schbench", launcher(CLONE_THREAD_NS, n)));
    Ok(Plan {
        tasks,
        metric: MetricKind::WakeLatencyP99,
        until_exit: false,
        latency_tasks,
    })
}

/// A custom client/server workload: `pairs` pairs with the given work and sleep.
fn custom(pairs: u32, client_work: Dist, server_work: Dist, sleep: Dist) -> Result<Plan, String> {
    nonzero(pairs, "custom needs at least one pair")?;
    let mut tasks = Vec::new();
    for i in 0..pairs {
        let (c, s) = (2 * i, 2 * i + 1);
        let mut prog = vec![
            Op::Run(client_work),
            Op::Send { to: s },
            Op::Wait,
            Op::Count(1),
        ];
        if sleep != Dist::fixed(0) {
            prog.push(Op::Sleep(sleep));
        }
        prog.push(Op::Jump { to: 0 });
        let parent = 2 * pairs;
        tasks.push(child_of(parent, task("client", prog)));
        tasks.push(child_of(
            parent,
            task(
                "server",
                vec![
                    Op::Wait,
                    Op::Run(server_work),
                    Op::Send { to: c },
                    Op::Jump { to: 0 },
                ],
            ),
        ));
    }
    // A plain parent process forks the tasks in task order (a synthetic
    // workload: no real launcher to follow).
    let mut parent = task("custom", launcher(FORK_NS, 2 * pairs));
    parent.own_mm = true;
    tasks.push(parent);
    Ok(Plan::for_duration(
        tasks,
        MetricKind::Throughput {
            unit: "trans/s",
            scale: 1,
            divisor: 1,
        },
    ))
}

/// lmbench's lat_pipe: one pipe round trip between CPUs `cpu_a` and `cpu_b`, which
/// must exist.
fn lat_pipe(cpu_a: u32, cpu_b: u32, p: &CostParams, nr_cpu_ids: u32) -> Result<Plan, String> {
    if cpu_a >= nr_cpu_ids || cpu_b >= nr_cpu_ids {
        return Err(format!(
            "lat-pipe CPUs {cpu_a},{cpu_b}: the machine has CPUs 0-{}",
            nr_cpu_ids - 1
        ));
    }
    // lat_pipe: each side writes one word and reads the reply; half the
    // calibrated pipe work per side.
    let side = p.pipe_msg_ns / 2;
    // lat_pipe (lmbench lat_pipe.c) makes its pipes, forks the child that
    // answers, then times the round trips.
    let mut a = task(
        "lat_pipe",
        prefixed(
            &[Op::Run(Dist::fixed(FORK_NS)), Op::Fork],
            vec![
                Op::Run(fixed(side)),
                Op::Send { to: 1 },
                Op::Wait,
                Op::Run(fixed(side)),
                Op::Count(1),
                Op::Jump { to: 0 },
            ],
        ),
    );
    a.allowed = pin(nr_cpu_ids, cpu_a);
    let mut b = task(
        "lat_pipe",
        vec![
            Op::Wait,
            Op::Run(fixed(2 * side)),
            Op::Send { to: 0 },
            Op::Jump { to: 0 },
        ],
    );
    b.allowed = pin(nr_cpu_ids, cpu_b);
    Ok(Plan::for_duration(
        vec![a, child_of(0, b)],
        MetricKind::RoundTripUs { pairs: 1 },
    ))
}

fn nonzero(n: u32, msg: &str) -> Result<(), String> {
    if n == 0 {
        Err(msg.to_string())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The first op of hackbench's first sender after its start (`hackbench_ready`).
    fn first_send_op(pipe: bool) -> Op {
        let machine = presets::machine("kunpeng920-4826").unwrap();
        let w = Workload::Hackbench {
            groups: 1,
            fds: 2,
            loops: 10,
            pipe,
            threads: true,
            msg_bytes: 100,
        };
        let plan = build(&w, &CostParams::for_machine(&machine), machine.nr_cpus()).unwrap();
        let sender = plan.tasks.iter().find(|t| t.role == "sender").unwrap();
        sender.program[hackbench_ready(0).len()]
    }

    /// pipe_write() checks for room before it copies (fs/pipe.c v6.5 lines 490,
    /// 518-541): a pipe's send comes before its work, so a sender that waits for
    /// room copies after it wakes. Before session 32 the work came first. A unix
    /// socket's send keeps the work first.
    #[test]
    fn a_pipe_sender_sends_then_copies() {
        assert!(matches!(first_send_op(true), Op::Send { .. }));
        assert!(matches!(first_send_op(false), Op::Run(_)));
    }
}
