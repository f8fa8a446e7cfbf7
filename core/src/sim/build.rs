//! The simulator built from a [`SimConfig`]: the machine's domains and wake-up
//! environment, the tasks compiled from the workload's plan, every CPU idle, the
//! balancing state, and the warm-up (a settled one is lengthened here).

use super::*;
use crate::cost::IdleState;

impl Simulator {
    /// The simulator for `cfg`, recording as `rc` says. Errors, in order: the
    /// machine's domains, no allowed CPU online, the plan ([`check_plan`]), the
    /// process tree, then each task's program and CPUs ([`TaskTables::new`]).
    pub(super) fn build(cfg: SimConfig, rc: Option<RecordConfig>) -> Result<Simulator, SimError> {
        let env = WakeEnv::new(&cfg.machine, cfg.patches)?;
        let machine = cfg.machine;
        let n = machine.nr_cpus() as usize;
        let online = env.domains.cpu_map.clone();
        let allowed = cfg.allowed.and(&online);
        if allowed.is_empty() {
            return Err(SimError::EmptyCpus);
        }
        let mut cost = CostModel::new(&machine);
        cost.params.terms = cfg.cost_terms;
        let tick_ns = cost.params.tick_ns;
        let mut state = initial_state(&env, &machine, cfg.patches.release, tick_ns);
        let (llc_of, llc_id_of, n_llcs) = llc_tables(&env, n);
        let siblings = smt_siblings(&env, n);
        let smt = env.sched_smt_active();

        // Tasks.
        let plan = cfg.plan;
        check_plan(&plan, cfg.duration)?;
        let nt = plan.tasks.len();
        let mut active_mask = CpuMask::new(n as u32);
        for spec in &plan.tasks {
            active_mask.or_assign(&task_mask(spec, &online, &allowed));
        }
        // The background tasks live on the CPUs the workload can use.
        let noise_tasks = cfg.noise.tasks(&active_mask, n as u32);
        let specs: Vec<&TaskSpec> = plan.tasks.iter().chain(&noise_tasks).collect();
        let all = specs.len();
        fork::validate_tree(&specs)?;
        let TaskTables {
            tasks,
            code,
            views,
            children,
        } = TaskTables::new(&specs, &plan.latency_tasks, &online, &allowed)?;
        let live = specs.iter().filter(|s| !s.background).count() as u32;
        let core_sched = specs.iter().any(|spec| spec.cookie != 0);
        state.core_sched_enabled = core_sched;
        state.enable_idle_hint();
        let active_cpus: Vec<u32> = active_mask.iter().map(|c| c.0).collect();
        let (menu, cstate0) = menu_at_start(&cost.params.idle_states, tick_ns);
        let cpus = (0..n)
            .map(|c| idle_at_start(c, &menu, cstate0))
            .collect::<Vec<_>>();
        let spare = cpus[0].clone();
        let cpus = crate::cpumask::PerCpu::new(cpus, spare);
        let release = cfg.patches.release;
        let eevdf = release >= Release::new(6, 6);
        // sysctl_sched_base_slice 0.75 ms × (1 + ilog2(min(ncpus, 8))).
        let factor = 1 + online.weight().clamp(1, 8).ilog2() as i64;
        let slice_ns = 750_000 * factor;
        let balance = balance::BalanceInfo::new(&env, &active_cpus, state.hz, &state.rqs);
        let (mut warmup, mut duration) = (cfg.warmup, cfg.duration);
        let settle = balance.settle_time(tick_ns);
        if cfg.settle && !plan.until_exit && settle > warmup {
            duration += settle.ns() - warmup.ns();
            warmup = settle;
        }
        let unsettled = if plan.until_exit {
            SimTime::ZERO
        } else {
            SimTime(
                settle
                    .ns()
                    .saturating_sub(warmup.ns())
                    .min(duration.ns().saturating_sub(warmup.ns())),
            )
        };
        let series_interval = (duration.ns() / MAX_SERIES as u64).max(10_000_000);
        let (softirq_ppm, softirq_ns) = cfg.noise.softirq(tick_ns);
        let start = start::Start::new(&specs, plan.until_exit, duration);
        let start_end = start.first_end();
        let mut sim = Simulator {
            env,
            machine,
            cost,
            state,
            views,
            idle_views: (0..n).map(|c| idle_task_view(c, n, all)).collect(),
            writers: vec![Vec::new(); tasks.len()],
            pipes: specs.iter().map(|s| s.pipe.map(pipe::Pipe::new)).collect(),
            any_pipe: specs.iter().any(|s| s.pipe.is_some()),
            futile_writer_wakeups: 0,
            write_waited: vec![false; tasks.len()],
            pipe_ops: vec![pipe::PipeOp::None; tasks.len()],
            mutexes: vec![pipe_mutex::PipeMutex::new(); tasks.len()],
            mutex_wait: vec![pipe_mutex::MutexWait::default(); tasks.len()],
            mutex_stats: pipe_mutex::PipeMutexStats::default(),
            #[cfg(test)]
            wake_log: None,
            forked: vec![0; tasks.len()],
            start_cpu: vec![u32::MAX; tasks.len()],
            cfs_mru: vec![0; tasks.len()],
            attached: vec![u32::MAX; tasks.len()],
            util_est: vec![(0, 0); tasks.len()],
            children,
            start,
            tick_irq_ns: cfg.noise.tick_irq_ns(),
            softirq_ppm,
            softirq_ns,
            noise_rng: Rng::new(cfg.seed ^ NOISE_SEED),
            tasks,
            code,
            cpus,
            tg: tg_load::TgLoad::new(&llc_of, cfg.patches.release),
            llc_of,
            llc_id_of,
            llc_lines: SharedLines::new(n, n_llcs, LineTerm::LlcLine, ReadCopies::PerCpu),
            cache: CacheShare::new(n, specs.iter().map(|t| t.footprint_bytes).collect()),
            siblings,
            core_occ: if core_sched { vec![0; all] } else { Vec::new() },
            balance,
            lb_clock: Default::default(),
            queue: EventQueue::new(),
            rng: Rng::new(cfg.seed),
            now: SimTime::ZERO,
            metrics: Metrics::new(n, series_interval),
            events: 0,
            mru_seq: 0,
            live,
            end: start_end,
            warmup: if plan.until_exit {
                SimTime::ZERO
            } else {
                warmup
            },
            unsettled,
            until_exit: plan.until_exit,
            measuring: false,
            last_units: 0,
            check: cfg.check_invariants,
            eevdf,
            delay_dequeue: release.has_delay_dequeue(),
            rel_deadline: release.has_rel_deadline(),
            slice_ns,
            smt,
            core_sched,
            active_cpus,
            error: None,
            rec: rc.map(|rc| Box::new(Recorder::new(&rc, nt as u32))),
        };
        sim.start();
        Ok(sim)
    }
}

/// The wake-up path's state at the start: every CPU idle, `hz` from the tick, the
/// SIS_PROP averages as sched_init() sets them, and each CPU's capacity as
/// `release` reads the firmware. Cannot fail.
fn initial_state(env: &WakeEnv, machine: &Machine, release: Release, tick_ns: u64) -> SchedState {
    let n = machine.nr_cpus() as usize;
    let online = &env.domains.cpu_map;
    let mut state = SchedState::all_idle(n as u32, |c| {
        env.domains.try_cpu(c).map_or(1, |d| d.sd_llc_size)
    });
    state.hz = 1_000_000_000 / tick_ns;
    // sched_init(): "rq->avg_idle = 2*sysctl_sched_migration_cost; rq->wake_stamp =
    // jiffies; rq->wake_avg_idle = rq->avg_idle;" (core.c v5.14-v6.6).
    state.sis_prop.avg_idle_ns = vec![2 * MIGRATION_COST_NS; n];
    state.sis_prop.wake_avg_idle_ns = vec![2 * MIGRATION_COST_NS; n];
    // arch_scale_cpu_capacity() as the release read the firmware: a device tree's
    // capacity-dmips-mhz is not reached before v6.0 when its cpu-map has sockets.
    let kernel_view = crate::sched_domain::as_the_kernel_reads_it(machine, release);
    for (c, rq) in state.rqs.iter_mut().enumerate() {
        rq.capacity = kernel_view.cpus[c].capacity as u64;
        rq.active = online.test_cpu(CpuId(c as u32));
    }
    state
}

/// The LLC bookkeeping: each CPU's LLC as a dense index (in order of first CPU),
/// each CPU's `sd_llc_id` (its own number without domains), and the number of LLCs.
fn llc_tables(env: &WakeEnv, n: usize) -> (Vec<u16>, Vec<u32>, usize) {
    let mut llc_ids: Vec<u32> = Vec::new();
    let mut llc_of = vec![0u16; n];
    let mut llc_id_of = vec![0u32; n];
    for c in 0..n {
        let id = env
            .domains
            .try_cpu(CpuId(c as u32))
            .map_or(c as u32, |d| d.sd_llc_id.0);
        llc_id_of[c] = id;
        let idx = match llc_ids.iter().position(|&x| x == id) {
            Some(i) => i,
            None => {
                llc_ids.push(id);
                llc_ids.len() - 1
            }
        };
        llc_of[c] = idx as u16;
    }
    (llc_of, llc_id_of, llc_ids.len())
}

/// Each CPU's SMT siblings, itself left out.
fn smt_siblings(env: &WakeEnv, n: usize) -> Vec<Vec<u32>> {
    (0..n)
        .map(|c| {
            env.smt_mask(CpuId(c as u32))
                .iter()
                .map(|x| x.0)
                .filter(|&x| x != c as u32)
                .collect()
        })
        .collect()
}

/// The plan's limits, in order: at least one task (`SimError::Workload`), at most
/// [`MAX_TASKS`], and a run no longer than the event queue's horizon
/// (`SimError::TooLong`).
fn check_plan(plan: &Plan, duration: SimTime) -> Result<(), SimError> {
    let nt = plan.tasks.len();
    if nt == 0 {
        return Err(SimError::Workload("the workload has no tasks".into()));
    }
    if nt > MAX_TASKS {
        return Err(SimError::Workload(format!(
            "{nt} tasks: the simulator runs at most {MAX_TASKS}"
        )));
    }
    if duration > event::MAX_RUN {
        return Err(SimError::TooLong {
            max_s: event::MAX_RUN.ns() / 1_000_000_000,
        });
    }
    Ok(())
}

/// The CPUs a task may run on: its own mask's online CPUs, else the run's.
fn task_mask(spec: &TaskSpec, online: &CpuMask, allowed: &CpuMask) -> CpuMask {
    match &spec.allowed {
        Some(m) => m.and(online),
        None => allowed.clone(),
    }
}

/// The per-task tables [`Simulator::build`] starts from.
struct TaskTables {
    tasks: Vec<Task>,
    code: Code,
    /// Each task as the waker of a wake-up (`Simulator::views`).
    views: Vec<Waker>,
    /// Each task's children in the process tree.
    children: Vec<Vec<u32>>,
}

impl TaskTables {
    /// Every task of `specs` blocked before its start, its program compiled, on the
    /// first CPU it may use. Errors, task by task: its program
    /// ([`validate_program`]), then no online CPU it may use (`SimError::EmptyCpus`).
    fn new(
        specs: &[&TaskSpec],
        latency_tasks: &[u32],
        online: &CpuMask,
        allowed: &CpuMask,
    ) -> Result<TaskTables, SimError> {
        let all = specs.len();
        let mut tasks = Vec::with_capacity(all);
        let mut code = Code::default();
        let mut views = Vec::with_capacity(all);
        let mut children = vec![Vec::new(); all];
        for (i, spec) in specs.iter().enumerate() {
            validate_program(i as u32, &spec.program, all as u32)?;
            if let Some(p) = spec.parent {
                children[p as usize].push(i as u32);
            }
            let mask = task_mask(spec, online, allowed);
            if mask.is_empty() {
                return Err(SimError::EmptyCpus);
            }
            let first = mask.first().expect("checked non-empty");
            tasks.push(Task {
                pc: code.add(&spec.program),
                iters: 0,
                loc: Loc::Blocked,
                block: if spec.parent.is_some() {
                    Block::Unborn
                } else {
                    Block::None
                },
                tokens: 0,
                cap: spec.mailbox_cap.max(1),
                drop_when_full: spec.drop_when_full,
                remaining_ns: 0,
                debt_ns: 0,
                vruntime: 0,
                deadline: 0,
                vlag: 0,
                load: Pelt::default(),
                util: Pelt::default(),
                wake_at: SimTime::MAX,
                last_cpu: first.0,
                last_ran: SimTime::ZERO,
                exec_start_zero: true,
                timer_gen: 0,
                wakes_in_task: spec.wakes_in_task,
                own_mm: spec.own_mm,
                latency_tracked: !spec.background
                    && (latency_tasks.is_empty() || latency_tasks.contains(&(i as u32))),
                new_task: true,
                background: spec.background,
            });
            let mut ts = TaskState::new(TaskId(i as u32), first, mask);
            ts.load = 0;
            ts.cookie = spec.cookie;
            ts.per_cpu_kthread = crate::workload::is_per_cpu_kthread(spec);
            views.push(Waker {
                cpu: first,
                task: Some(ts),
                in_task: spec.wakes_in_task,
            });
        }
        Ok(TaskTables {
            tasks,
            code,
            views,
            children,
        })
    }
}

/// The menu governor every CPU starts with, and the C-state it picks. Every CPU idle
/// since before the run with its tick stopped and no timer but the watchdog's
/// (menu.rs), which woke it at time 0 (its phase): so its governor's last stays were
/// the watchdog's 4 s each (assumption: the machine has been up, idle), and the
/// state is the one menu_select() picks then.
fn menu_at_start(states: &[IdleState], tick_ns: u64) -> (super::menu::MenuDevice, u8) {
    let wd_us = (super::menu::WATCHDOG_PERIOD_NS / 1_000) as u32;
    let mut menu = super::menu::MenuDevice::new(wd_us);
    let (cstate0, _) = menu.select(states, tick_ns, true, || {
        let wd = super::menu::WATCHDOG_PERIOD_NS;
        (wd, wd)
    });
    (menu, cstate0 as u8)
}

/// CPU `c` at the start: idle in `cstate` since before the run, its tick stopped,
/// its governor `menu`, nothing queued.
fn idle_at_start(c: usize, menu: &super::menu::MenuDevice, cstate: u8) -> Cpu {
    Cpu {
        mode: Mode::Idle,
        curr: u32::MAX,
        queue: Vec::new(),
        burst_gen: 0,
        switch_gen: 0,
        burst_end: SimTime::ZERO,
        last_update: SimTime::ZERO,
        stolen_ns: 0,
        busy_until_ns: 0,
        need_resched: false,
        resched_ipi: false,
        wakelist_ipi_at: SimTime::ZERO,
        wake_list: Vec::new(),
        idle_since: SimTime::ZERO,
        cstate,
        tick_stopped: true,
        nohz_tick_stopped: true,
        cstate_since: SimTime::ZERO,
        cstate_gen: 0,
        idle_entry: SimTime::ZERO,
        got_idle_tick: false,
        menu: menu.clone(),
        timers: std::collections::BinaryHeap::new(),
        avg_idle_ns: 2 * MIGRATION_COST_NS,
        // Idle since before the run, as idle_since says.
        idle_stamp: Some(SimTime::ZERO),
        util: Pelt::default(),
        load: Pelt::default(),
        delayed: Pelt::default(),
        nr_delayed: 0,
        tg: tg_load::TgCpu::NEW,
        removed_load: 0,
        removed_util: 0,
        util_est: 0,
        lock: RqLock::new(CpuId(c as u32)),
        base_v: 0,
        v_sum: 0,
        last_task: u32::MAX,
        last_mm: u32::MAX,
        force_idle_since: SimTime::ZERO,
        slice_start: SimTime::ZERO,
        min_v: i64::MIN,
        fi_base: 0,
        core_forced: false,
        core_pick: u32::MAX,
        idle_occ: 0,
        newidle_cost_ns: 0,
        newidle_start: SimTime::ZERO,
        newidle_ends: Vec::new(),
        newidle_resched_at: SimTime::ZERO,
        newidle_held: Default::default(),
        newidle_newilb: false,
        newidle_curr_stopper: false,
        descheduling: (u32::MAX, SimTime::ZERO),
    }
}

/// CPU `cpu`'s idle task as `current` of a wake-up from interrupt context: a
/// per-CPU kthread (`init_idle()` sets `PF_KTHREAD` and `cpumask_of(cpu)`, core.c
/// v6.8 9323-9345) with its own `record_wakee()` state, no load (not a fair task).
/// Its id follows the `tasks` ids: no task's `last_wakee` can name it.
fn idle_task_view(cpu: usize, nr_cpus: usize, tasks: usize) -> Waker {
    let c = CpuId(cpu as u32);
    let id = TaskId((tasks + cpu) as u32);
    let mut ts = TaskState::new(id, c, CpuMask::of(nr_cpus as u32, c));
    ts.load = 0;
    ts.per_cpu_kthread = true;
    Waker {
        cpu: c,
        task: Some(ts),
        in_task: false,
    }
}
