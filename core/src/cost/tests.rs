//! Unit tests of the cost model: the presets' calibrated, documented parameters and the pair
//! costs each distance class gives.

use super::params::lines_per_wake;
use super::*;
use crate::topology::presets;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn kunpeng_costs_follow_lat_pipe() {
    let m = presets::machine("kunpeng920-6426").unwrap();
    let c = CostModel::new(&m);
    assert_eq!(c.distance(CpuId(0), CpuId(1)), Distance::SameCluster);
    assert_eq!(c.distance(CpuId(0), CpuId(4)), Distance::SameLlc);
    assert_eq!(c.distance(CpuId(0), CpuId(32)), Distance::OtherNode);
    assert_eq!(c.wake_data_ns(CpuId(0), CpuId(1)), 0);
    let xc = c.wake_data_ns(CpuId(0), CpuId(4));
    // (7.54 - 5.74) / 2 us
    assert!((850..950).contains(&xc), "{xc}");
    let die = c.wake_data_ns(CpuId(0), CpuId(32));
    let sock = c.wake_data_ns(CpuId(0), CpuId(64));
    assert!(xc < die && die < sock, "{xc} {die} {sock}");
    // The pipe work left after the modelled wake path is positive and small.
    assert!(
        (200..2000).contains(&c.params.pipe_msg_ns),
        "{}",
        c.params.pipe_msg_ns
    );
}

#[test]
fn calibrated_values_are_documented() {
    // The derived numbers docs/calibration.md lists; update both together.
    let kp = |n: &str| CostParams::for_machine(&presets::machine(n).unwrap());
    let p = kp("kunpeng920-6426");
    assert_eq!((p.ipi_send_ns, p.ipi_recv_ns), (168, 608));
    assert_eq!(p.pipe_msg_ns, 242);
    assert_eq!(p.wake_data_ns[Distance::SameLlc as usize], 899);
    assert_eq!(p.wake_data_ns[Distance::OtherNode as usize], 1385);
    assert_eq!(p.other_node_ns_per_slit, 133);
    assert_eq!(p.c2c_ns_per_slit, 7);
    assert_eq!(lines_per_wake(), 30);
    let p = kp("kunpeng920-4826");
    assert_eq!(p.pipe_msg_ns, 2464);
    assert_eq!(p.wake_data_ns[Distance::SameLlc as usize], 733);
    assert_eq!(p.wake_data_ns[Distance::OtherNode as usize], 2416);
    assert_eq!(p.other_node_ns_per_slit, 140);
    let p = kp("epyc9654-2p");
    assert_eq!(p.wake_data_ns[3..], [390, 2550, 5340]);
    // Per-CPU cache shares (cumulative, KiB): Kunpeng 64 / +512 / +1024; EPYC's
    // per-core 32 / 1024 / 4096 over 2 threads.
    let kib = |v: [u64; 3]| v.map(|b| b / 1024);
    assert_eq!(kib(p.cache_bytes), [16, 528, 2576]);
    assert_eq!((p.refill_ns, p.refill_mlp), ([14, 50, 120], 4));
    let k = kp("kunpeng920-6426");
    assert_eq!(kib(k.cache_bytes), [64, 576, 1600]);
    assert_eq!(k.refill_ns, [14, 35, 120]);
    assert_eq!(k.terms, CostTerms::ALL);
    let p = kp("xeon-smt-8");
    assert_eq!(p.wake_data_ns[Distance::SameLlc as usize], 1110);
    assert_eq!(p.wake_data_ns[Distance::OtherNode as usize], 2910);
}

#[test]
fn pair_costs_match_the_classification_on_every_preset() {
    for p in presets::PRESETS {
        let m = p.machine();
        let c = CostModel::new(&m);
        let n = m.nr_cpus();
        let step = (n / 64).max(1) as usize;
        for a in (0..n).step_by(step).map(CpuId) {
            for b in (0..n).map(CpuId) {
                // The classification spelled out from the topology, independently.
                let (x, y) = (m.topo(a), m.topo(b));
                let d = match () {
                    _ if a == b => Distance::SameCpu,
                    _ if x.core == y.core => Distance::SameCore,
                    _ if x.node != y.node => Distance::OtherNode,
                    _ if x.llc != y.llc => Distance::OtherLlc,
                    _ if x.cluster == y.cluster => Distance::SameCluster,
                    _ => Distance::SameLlc,
                };
                assert_eq!(c.distance(a, b), d, "{}: {a} {b}", p.name);
                assert_eq!(Distance::between(&m, a, b), d, "{}: {a} {b}", p.name);
                let (mut w, mut l) = (
                    c.params.wake_data_ns[d as usize],
                    c.params.c2c_ns[d as usize],
                );
                if d == Distance::OtherNode {
                    let slit = m.node_distance(m.topo(a).node, m.topo(b).node) as i64;
                    let extra = slit - c.params.slit_ref as i64;
                    w = (w as i64 + extra * c.params.other_node_ns_per_slit as i64).max(0) as u64;
                    l = (l as i64 + extra * c.params.c2c_ns_per_slit as i64).max(0) as u64;
                }
                assert_eq!(c.wake_data_ns(a, b), w, "{}: {a} {b}", p.name);
                assert_eq!(c.c2c_ns(a, b), l, "{}: {a} {b}", p.name);
            }
        }
    }
}

#[test]
fn every_preset_has_parameters() {
    for p in presets::PRESETS {
        let m = p.machine();
        let c = CostModel::new(&m);
        assert!(!c.params.idle_states.is_empty());
        assert!(c.params.pipe_msg_ns > 0);
        for d in Distance::ALL {
            let _ = d.name();
        }
    }
}

#[test]
fn epyc_ccx_costs_less_than_cross_ccx() {
    let m = presets::machine("epyc9654-2p").unwrap();
    let c = CostModel::new(&m);
    // 0 and 1 share a CCX; 0 and 8 do not; 0 and 96 are on the other socket.
    let a = c.wake_data_ns(CpuId(0), CpuId(1));
    let b = c.wake_data_ns(CpuId(0), CpuId(8));
    let d = c.wake_data_ns(CpuId(0), CpuId(96));
    assert!(a < b && b < d, "{a} {b} {d}");
    assert_eq!(c.distance(CpuId(0), CpuId(192)), Distance::SameCore);
}
