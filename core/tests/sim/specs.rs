//! What a run refuses before it starts (durations, loop counts, task counts) and how
//! specs, sweeps and CPU lists read back.

use schedlab_core::cost::Distance;
use schedlab_core::cpumask::CpuMask;
use schedlab_core::experiment::{self, change_pct, RunSpec, SweepSpec};
use schedlab_core::workload::{self, Dist, Workload};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use super::{machine, spec};

/// One netperf pair on Kunpeng node 0 for `ms` simulated milliseconds, as the CLI
/// would build it (so a bad duration is the CLI's error).
fn one_pair_for(ms: u64) -> Result<RunSpec, experiment::RunSpecError> {
    RunSpec::on_preset(
        "kunpeng920-6426",
        "node0",
        "6.6".parse().unwrap(),
        Workload::NetperfTcpRr { instances: 1 },
        ms,
        1,
    )
}

#[test]
fn runs_longer_than_the_event_keys_hold_are_refused() {
    for ms in [4 * 3600 * 1000 + 1, u64::MAX] {
        let s = one_pair_for(ms).unwrap();
        let e = experiment::run(&s).unwrap_err().to_string();
        assert_eq!(e, "a run may last at most 14400 s of simulated time");
    }
}

#[test]
fn empty_runs_and_uncountable_loops_are_refused() {
    let e = one_pair_for(0).unwrap_err();
    assert_eq!(e.to_string(), "a run lasts at least 1 ms of simulated time");
    assert_eq!(e.flag(), "--duration-ms", "the CLI names the flag");

    let m = machine("kunpeng920-6426");
    let cost = schedlab_core::cost::CostParams::for_machine(&m);
    let hackbench = |loops| Workload::Hackbench {
        groups: 1,
        fds: 20,
        loops,
        pipe: true,
        threads: false,
        msg_bytes: 100,
    };
    // 20 fds: each receiver reads 20 × loops messages in one 32-bit count.
    let max = u32::MAX as u64 / 20;
    assert!(workload::build(&hackbench(max), &cost, 128).is_ok());
    for loops in [max + 1, u64::MAX] {
        let e = workload::build(&hackbench(loops), &cost, 128).unwrap_err();
        assert_eq!(
            e,
            format!("hackbench: at most {max} loops with 20 fds per group")
        );
    }
    let cookies = Workload::CookiePairs {
        threads: 2,
        iterations: u32::MAX as u64 + 1,
        work: Dist::fixed(1000),
        sleep: Dist::fixed(1000),
        cookies: false,
    };
    let e = workload::build(&cookies, &cost, 128).unwrap_err();
    assert_eq!(e, "cookie-pairs: at most 4294967295 iterations");

    // A mistyped scale is refused before a task is built (building 8 billion would
    // exhaust memory first), for every workload, including counts whose task numbers
    // overflow 32 bits.
    let huge = [
        Workload::Tbench { clients: u32::MAX },
        Workload::NetperfUdpRr { instances: 50_001 },
        hackbench(1).with_threads(u32::MAX),
        Workload::Schbench {
            message_threads: u32::MAX,
            workers: u32::MAX,
            cputime: Dist::fixed(1),
            sleep: Dist::fixed(1),
        },
    ];
    for w in huge {
        let e = workload::build(&w, &cost, 128).unwrap_err();
        assert!(e.contains("the simulator runs at most 100000"), "{e}");
        assert!(e.starts_with(w.name()), "{e}");
    }
    // The pairs, tbench_srv and the tbench parent.
    assert_eq!(
        workload::task_count(&Workload::Tbench { clients: 49_999 }),
        100_000
    );
    assert!(workload::build(&Workload::Tbench { clients: 49_999 }, &cost, 128).is_ok());
    assert!(workload::build(&Workload::Tbench { clients: 50_000 }, &cost, 128).is_err());
}

#[test]
fn threads_reads_back_what_with_threads_set() {
    let d = Dist::fixed(1000);
    let all = [
        Workload::Tbench { clients: 1 },
        Workload::NetperfTcpRr { instances: 1 },
        Workload::NetperfUdpRr { instances: 1 },
        Workload::Hackbench {
            groups: 1,
            fds: 20,
            loops: 10,
            pipe: true,
            threads: false,
            msg_bytes: 100,
        },
        Workload::CookiePairs {
            threads: 1,
            iterations: 10,
            work: d,
            sleep: d,
            cookies: true,
        },
        Workload::Schbench {
            message_threads: 2,
            workers: 1,
            cputime: d,
            sleep: d,
        },
        Workload::Custom {
            pairs: 1,
            client_work: d,
            server_work: d,
            sleep: d,
        },
    ];
    for w in all {
        assert_eq!(w.threads(), 1, "{}", w.name());
        assert_eq!(w.with_threads(37).threads(), 37, "{}", w.name());
    }
    let lat = Workload::LatPipe { cpu_a: 0, cpu_b: 1 };
    assert_eq!(lat.with_threads(37).threads(), 1);
}

#[test]
fn sweep_rows_pair_baseline_and_patched() {
    let base = spec(
        "kunpeng920-6426",
        "node0",
        Workload::NetperfTcpRr { instances: 1 },
        "6.6",
        3,
    );
    let sw = SweepSpec {
        base,
        threads: vec![1, 2],
        baseline: "6.6".parse().unwrap(),
        patched: "6.6+cluster".parse().unwrap(),
        seeds: 1,
    };
    let rows = sw.run_serial().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].threads, 2);
    assert!(rows.iter().all(|r| r.baseline > 0.0 && r.patched > 0.0));
    assert!((change_pct(100.0, 110.0, true) - 10.0).abs() < 1e-9);
    assert!((change_pct(10.0, 9.0, false) - 10.0).abs() < 1e-9);
}

#[test]
fn cpus_parse_nodes_and_lists() {
    let m = machine("kunpeng920-6426");
    assert_eq!(experiment::parse_cpus(&m, "node0").unwrap().weight(), 32);
    assert_eq!(
        experiment::parse_cpus(&m, "node0-1").unwrap().to_list(),
        "0-63"
    );
    assert_eq!(
        experiment::parse_cpus(&m, "0-3,64").unwrap(),
        CpuMask::parse_list(128, "0-3,64").unwrap()
    );
    assert!(experiment::parse_cpus(&m, "node4").is_err());
    assert!(experiment::parse_cpus(&m, "nodex").is_err());
    let _ = Distance::ALL;
}
