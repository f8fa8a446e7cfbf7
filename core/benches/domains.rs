//! `cargo bench --bench domains`: `build_sched_domains()` for every CPU of machines of
//! 128, 1024 and 4096 CPUs (docs: issue 16, "Domains at scale"). The 4096-CPU shapes
//! are examples/machines/numa-4096.json and smt-cls-4096.json.
//! Native only: the wasm32 build compiles this to an empty program.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    divan::main();
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod benches {
    use schedlab_core::sched_domain::{build_sched_domains, BuildConfig};
    use schedlab_core::topology::{presets, MachineSpec};
    use schedlab_core::{Machine, Release};

    const NUMA_4096: &str = include_str!("../../examples/machines/numa-4096.json");
    const SMT_CLS_4096: &str = include_str!("../../examples/machines/smt-cls-4096.json");

    fn spec(json: &str) -> Machine {
        let spec: MachineSpec = serde_json::from_str(json).expect("machine spec parses");
        spec.build().expect("machine spec builds")
    }

    fn machine(name: &str) -> Machine {
        match name {
            // 128 CPUs: 2 sockets x 2 nodes x 32 cores in clusters of 4 (arm64).
            "kunpeng920-6426" => presets::machine(name).expect("preset"),
            "numa-1024" => spec(
                r#"{"name":"numa-1024","arch":"x86","packages":4,"nodes_per_package":4,"cores_per_llc":64}"#,
            ),
            "flat-1024" => {
                spec(r#"{"name":"flat-1024","arch":"x86","packages":1,"cores_per_llc":1024}"#)
            }
            "numa-4096" => spec(NUMA_4096),
            "smt-cls-4096" => spec(SMT_CLS_4096),
            _ => unreachable!("unknown bench machine {name}"),
        }
    }

    #[divan::bench(
        args = ["kunpeng920-6426", "numa-1024", "flat-1024", "numa-4096", "smt-cls-4096"],
        sample_count = 10
    )]
    fn build(bencher: divan::Bencher, name: &str) {
        let m = machine(name);
        let cfg = BuildConfig::new(Release::new(6, 8));
        bencher.bench_local(|| build_sched_domains(divan::black_box(&m), &cfg).expect("builds"));
    }
}
