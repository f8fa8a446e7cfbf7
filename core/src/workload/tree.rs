//! How each benchmark's processes come to exist: the launchers, daemons and start
//! barriers of the real programs, as [`Op::Fork`] in their parents' programs.
//!
//! ```text
//!  tbench       tbench_srv (daemon, started first) ── accept ─▶ fork server child i
//!               tbench ── fork client i ── … ── poll the barrier every 100 ms ── release
//!               client i: connect(tbench_srv), one exchange, wait at the barrier, requests
//!  netperf      netserver (daemon) ── accept ─▶ fork child i
//!               shell: for i in $(seq N); do netperf … & done ── fork+exec client i
//!  hackbench    main: per group fork receivers, then senders; each child writes "ready"
//!               and polls wakefd; main reads N readies, writes wakefd once (all wake)
//!  cookie-pairs the test's main thread creates its 10 threads in order
//!  schbench, custom   a plain parent forks the tasks in task order
//!  lat-pipe     lat_pipe forks its child (the other end of the pipes)
//! ```
//!
//! The parent pays for each fork as CPU time ([`FORK_NS`], [`CLONE_THREAD_NS`]) before
//! the child exists; a child started by `exec` pays [`EXEC_NS`] before its own code.
//! Simplified: a parent that only waits for its children (`waitpid()`, `wait`,
//! `pthread_join()`) blocks forever or exits, which takes no CPU either way; dbench's
//! once-a-second progress report in the tbench parent is left out, and so is the CPU
//! time of its barrier's syscalls (`semop()`, `semctl()`, a `printf()` per poll).
//!
//! dbench's start barrier is dbench 4.0's (the release tarball, 2008, which the
//! distributions package): a SysV semaphore (`create_procs()`, dbench.c, from git
//! commit 2355572 of 2006 until 4f789f9 of 2013, first released in dbench 5.00 in
//! 2024, replaced it with `raise(SIGSTOP)` in each client and `waitpid(WUNTRACED)` +
//! `kill(SIGCONT)` in the parent: no poll, and each client woken by its own signal).

use super::{Dist, Op, TaskSpec};

/// The parent's side of `fork()` of a small process (`copy_process()`, `dup_mm()` of a
/// few MB, the page-table copy), ns. **Assumption**: the lmbench `lat_proc fork`
/// figure (fork + exit + wait, both sides) of a current server is on the order of
/// 100 µs; half of it is taken as the parent's. `lat_proc fork` (or `perf trace -s`
/// of the benchmark's launcher) on the machine would settle it.
pub(crate) const FORK_NS: u64 = 50_000;
/// `pthread_create()`: `clone(CLONE_VM | CLONE_THREAD …)` plus the stack's `mmap()`,
/// ns. **Assumption** (no `mm` to copy: a fraction of [`FORK_NS`]); a
/// `pthread_create()` loop timed on the machine would settle it.
pub(crate) const CLONE_THREAD_NS: u64 = 15_000;
/// `execve()` of a small dynamically linked program (netperf) in the child, through
/// the dynamic loader to `main()`, ns. **Assumption**: lmbench's `lat_proc exec` minus
/// `lat_proc fork`; measuring both on the machine would settle it.
pub(crate) const EXEC_NS: u64 = 300_000;

/// `prog` with `prefix` run first: its jump targets moved past the prefix.
pub(crate) fn prefixed(prefix: &[Op], prog: Vec<Op>) -> Vec<Op> {
    let k = prefix.len() as u16;
    prefix
        .iter()
        .copied()
        .chain(prog.into_iter().map(|op| match op {
            Op::Repeat { to, times } => Op::Repeat { to: to + k, times },
            Op::Jump { to } => Op::Jump { to: to + k },
            op => op,
        }))
        .collect()
}

/// dbench 4.0's poll of its start barrier, ns: `usleep(100*1000)` between two
/// `semctl(barrier, 0, GETZCNT)` reads (`create_procs()`, dbench.c). dbench's own
/// number, not a parameter of the machine.
pub(crate) const DBENCH_BARRIER_POLL_NS: u64 = 100_000_000;

/// dbench's (tbench's) parent, `create_procs()` of dbench 4.0: it forks the `n`
/// clients (each costing `fork_ns`), reads `GETZCNT` until all `n` wait at the
/// barrier, sleeping [`DBENCH_BARRIER_POLL_NS`] between reads, then reads its start
/// time (`tv_start`) and releases them (`semop()` of −1, sim/start.rs); then
/// `waitpid()` for the rest of the run.
pub(crate) fn dbench_parent(fork_ns: u64, n: u32) -> Vec<Op> {
    let mut p = fork_children(0, fork_ns, n);
    p.extend([
        Op::PollBarrier(Dist::fixed(DBENCH_BARRIER_POLL_NS)),
        Op::StartClock,
        Op::ReleaseBarrier,
        // waitpid(): no child exits in a throughput run.
        Op::Wait,
        Op::Jump { to: 6 },
    ]);
    p
}

/// A parent that creates its `n` children one after the other, each costing it
/// `fork_ns`, then waits for them (`waitpid()` or the shell's `wait`: blocked for the
/// rest of the run).
pub(crate) fn launcher(fork_ns: u64, n: u32) -> Vec<Op> {
    let mut p = fork_children(0, fork_ns, n);
    // waitpid(): no child exits in a throughput run.
    p.extend([Op::Wait, Op::Jump { to: 3 }]);
    p
}

/// A parent that creates its `n` children and exits (a main thread that goes on to
/// `pthread_join()`, which takes no CPU: for a completion workload the run ends when
/// its children do).
pub(crate) fn spawner(fork_ns: u64, n: u32) -> Vec<Op> {
    let mut p = fork_children(0, fork_ns, n);
    p.push(Op::Exit);
    p
}

/// A forking server (`tbench_srv`, `netserver`): `accept()` a connection (its
/// mailbox: each client's connect is one message), fork a child to serve it, `n`
/// times; then it waits in `accept()` for the rest of the run.
pub(crate) fn accept_daemon(n: u32) -> Vec<Op> {
    let mut p = vec![Op::Wait];
    // Each round starts at the accept() (op 0), then forks.
    p.extend(fork_children(0, FORK_NS, n));
    p.extend([Op::Wait, Op::Jump { to: 4 }]);
    p
}

/// hackbench's main task (`hackbench.c` / `perf bench sched messaging`): create the
/// `n` workers (each costing `fork_ns`), read their `n` "ready" bytes
/// (`wait_for_ready()`), take the start time (the completion time counts from there)
/// and write the one byte to `wakefd` that every worker polls; then it reaps them
/// (`wait()`, no CPU: it exits here).
pub(crate) fn hackbench_main(fork_ns: u64, n: u32) -> Vec<Op> {
    let mut p = fork_children(0, fork_ns, n);
    p.extend([
        Op::Wait,
        Op::Repeat {
            to: 3,
            times: n as u64,
        },
        Op::StartClock,
        Op::SendChildren,
        Op::Exit,
    ]);
    p
}

/// The `fork()` loop every parent here runs: the fork's cost, `Op::Fork`, and back to
/// op `round` (the loop's first op) until `n` children exist.
fn fork_children(round: u16, fork_ns: u64, n: u32) -> Vec<Op> {
    vec![
        Op::Run(Dist::fixed(fork_ns)),
        Op::Fork,
        Op::Repeat {
            to: round,
            times: n as u64,
        },
    ]
}

/// A hackbench worker's start (`ready()`): write one byte to the main task's ready
/// pipe, then poll `wakefd` until main writes it.
pub(crate) fn hackbench_ready(main: u32) -> [Op; 2] {
    [Op::Send { to: main }, Op::Wait]
}

/// `t` created by `parent`.
pub(crate) fn child_of(parent: u32, t: TaskSpec) -> TaskSpec {
    TaskSpec {
        parent: Some(parent),
        ..t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_prefix_moves_the_jump_targets() {
        let prog = vec![Op::Wait, Op::Jump { to: 0 }];
        let p = prefixed(&[Op::Send { to: 3 }], prog);
        assert_eq!(p, vec![Op::Send { to: 3 }, Op::Wait, Op::Jump { to: 1 }]);
        let r = prefixed(
            &[Op::Wait, Op::Wait],
            vec![Op::Wait, Op::Repeat { to: 0, times: 4 }, Op::Exit],
        );
        assert_eq!(r[3], Op::Repeat { to: 2, times: 4 });
    }
}
