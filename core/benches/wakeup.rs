//! `cargo bench --bench wakeup`: one wake-up decision (`wakeup::wake_up`) on a
//! Kunpeng 920 LLC that is half busy, with and without the cluster patch.
//! Native only: the wasm32 build compiles this to an empty program.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    divan::main();
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod benches {
    use schedlab_core::cpumask::{CpuId, CpuMask};
    use schedlab_core::topology::presets;
    use schedlab_core::wakeup::{
        wake_up, NoTrace, RqState, SchedState, TaskId, TaskState, WakeEnv, WakeFlags, Waker,
    };

    fn setup(patches: &str) -> (WakeEnv, SchedState, TaskState, Waker) {
        let m = presets::machine("kunpeng920-6426").unwrap();
        let env = WakeEnv::new(&m, patches.parse().unwrap()).unwrap();
        let mut s = SchedState::all_idle(m.nr_cpus(), |c| env.domains.cpu(c).sd_llc_size);
        // Every other CPU of node 0 busy, so scans have work to do.
        for c in (0..32).step_by(2) {
            s.rqs[c] = RqState::busy(1);
        }
        s.llc_shared[0].nr_idle_scan = 16;
        let node0 = CpuMask::parse_list(128, "0-31").unwrap();
        let p = TaskState::new(TaskId(1), CpuId(6), node0.clone());
        let w = Waker {
            cpu: CpuId(2),
            task: Some(TaskState::new(TaskId(0), CpuId(2), node0)),
            in_task: true,
        };
        (env, s, p, w)
    }

    #[divan::bench(args = ["6.6", "6.6+cluster", "6.8+ttwu-l2c"])]
    fn wake_up_decision(bencher: divan::Bencher, patches: &str) {
        let (env, s, p, w) = setup(patches);
        let flags = WakeFlags::TTWU.union(WakeFlags::SYNC);
        bencher.bench_local(|| {
            wake_up(
                divan::black_box(&env),
                divan::black_box(&s),
                divan::black_box(&p),
                divan::black_box(&w),
                flags,
                &mut NoTrace,
            )
        });
    }
}
