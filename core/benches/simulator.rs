//! `cargo bench --bench simulator`: simulated events per second for the scenarios the
//! performance targets name (netperf TCP_RR, 32 pairs, kunpeng920-6426 node0-1; tbench
//! on node 0). divan reports the time per run; the items counter turns it into events/s.
//! Native only: the wasm32 build compiles this to an empty program.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    divan::main();
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod benches {
    use schedlab_core::experiment::{self, RunSpec};
    use schedlab_core::workload::Workload;

    fn spec(cpus: &str, w: Workload, patches: &str, ms: u64) -> RunSpec {
        RunSpec::on_preset("kunpeng920-6426", cpus, patches.parse().unwrap(), w, ms, 1).unwrap()
    }

    fn bench(bencher: divan::Bencher, s: RunSpec) {
        let events = experiment::run(&s).unwrap().events;
        bencher
            .counter(divan::counter::ItemsCount::new(events))
            .bench_local(|| experiment::run(divan::black_box(&s)).unwrap());
    }

    /// The 10 M events/s target's scenario, 50 simulated ms (plus 10 ms warm-up).
    #[divan::bench(sample_count = 5)]
    fn netperf_tcp_rr_32_pairs_node0_1(bencher: divan::Bencher) {
        bench(
            bencher,
            spec(
                "node0-1",
                Workload::NetperfTcpRr { instances: 32 },
                "6.6",
                50,
            ),
        );
    }

    #[divan::bench(sample_count = 5, args = [1, 16, 128])]
    fn tbench_node0(bencher: divan::Bencher, clients: u32) {
        bench(
            bencher,
            spec("node0", Workload::Tbench { clients }, "6.6+cluster", 50),
        );
    }
}
