//! Unit tests of `CpuMask`: its kernel verbs, the wrapped walk, list parsing and the
//! list / hex formats.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn mask(n: u32, cpus: &[u32]) -> CpuMask {
    CpuMask::from_cpus(n, cpus.iter().map(|&c| CpuId(c)))
}

#[test]
fn wrap_position_counts_what_the_wrapped_walk_visits_first() {
    let r = &mut crate::rng::Rng::new(7);
    for n in [1u32, 5, 63, 64, 65, 100, 128, 130, 600] {
        for _ in 0..50 {
            let cpus: Vec<u32> = (0..n).filter(|_| r.below(3) == 0).collect();
            let m = mask(n, &cpus);
            let start = r.below(n as u64 + 2) as u32;
            let walk: Vec<CpuId> = m.iter_wrap(start).collect();
            for (pos, &c) in walk.iter().enumerate() {
                assert_eq!(m.wrap_position(start, c), pos as u32, "n={n} start={start}");
            }
            let lo = r.below(n as u64 + 1) as u32;
            let hi = r.below(n as u64 + 1) as u32;
            let want = cpus.iter().filter(|&&c| c >= lo && c < hi).count() as u32;
            assert_eq!(m.weight_range(lo, hi), want, "n={n} {lo}..{hi}");
        }
    }
}

#[test]
fn wrap_walk_stops_where_the_cpu_by_cpu_walk_stops() {
    let r = &mut crate::rng::Rng::new(11);
    for n in [1u32, 5, 63, 64, 65, 100, 127, 128, 129, 130, 600] {
        for _ in 0..200 {
            let dens = 1 + r.below(4);
            let m = mask(
                n,
                &(0..n).filter(|_| r.below(dens) == 0).collect::<Vec<_>>(),
            );
            let hdens = 1 + r.below(12);
            let hit = mask(
                n,
                &(0..n).filter(|_| r.below(hdens) == 0).collect::<Vec<_>>(),
            );
            let start = r.below(n as u64 + 2) as u32;
            let limit = r.below(n as u64 + 3);
            // The loop it stands for: position k is visited only while k < limit.
            let mut want = None;
            let mut len = 0;
            for (k, c) in m.iter_wrap(start).enumerate() {
                len = k as u64 + 1;
                if k as u64 >= limit {
                    want = Some(WrapWalk::Limit);
                    break;
                }
                if hit.test_cpu(c) {
                    want = Some(WrapWalk::Hit {
                        pos: k as u64,
                        cpu: c,
                    });
                    break;
                }
            }
            let want = want.unwrap_or(WrapWalk::End { len });
            assert_eq!(
                m.wrap_walk(&hit, start, limit),
                want,
                "n={n} start={start} limit={limit}"
            );
        }
    }
}

#[test]
fn assign_cpu_sets_or_clears_one_bit() {
    let r = &mut crate::rng::Rng::new(3);
    for n in [1u32, 64, 65, 130, 600] {
        let (mut a, mut b) = (CpuMask::new(n), CpuMask::new(n));
        for _ in 0..500 {
            let c = CpuId(r.below(n as u64) as u32);
            let v = r.below(2) == 1;
            a.assign_cpu(c, v);
            if v {
                b.set_cpu(c);
            } else {
                b.clear_cpu(c);
            }
            assert_eq!(a, b, "n={n} cpu={c} value={v}");
        }
    }
}

#[test]
fn list_format_matches_kernel() {
    assert_eq!(mask(96, &[0, 1, 2, 3, 8]).to_list(), "0-3,8");
    assert_eq!(mask(24, &[0, 2, 3, 4, 23]).to_list(), "0,2-4,23");
    assert_eq!(mask(24, &[]).to_list(), "");
}

#[test]
fn hex_format_matches_kernel_schedstat() {
    // From kunpeng920_noNUMA_debugfs_sched_domains_v5.18.txt (96 CPUs).
    assert_eq!(
        mask(96, &[0, 1, 2, 3]).to_hex(),
        "00000000,00000000,0000000f"
    );
    assert_eq!(
        CpuMask::full(96).to_hex(),
        "ffffffff,ffffffff,ffffffff".to_string()
    );
    // The top chunk is as wide as the bits it holds.
    assert_eq!(CpuMask::full(24).to_hex(), "ffffff");
    assert_eq!(mask(40, &[39]).to_hex(), "80,00000000");
    assert_eq!(mask(8, &[0]).to_hex(), "01");
}

#[test]
fn wrap_iteration_visits_start_first_and_wraps() {
    let m = mask(8, &[1, 3, 5, 7]);
    let order: Vec<u32> = m.iter_wrap(4).map(|c| c.0).collect();
    assert_eq!(order, vec![5, 7, 1, 3]);
    let order: Vec<u32> = m.iter_wrap(8).map(|c| c.0).collect();
    assert_eq!(order, vec![1, 3, 5, 7]);
}

#[test]
fn parse_list_round_trips_and_rejects_bad_input() {
    let m = CpuMask::parse_list(128, "0-3,8,64-127:2").unwrap();
    assert_eq!(m.weight(), 4 + 1 + 32);
    assert_eq!(CpuMask::parse_list(128, &m.to_list()).unwrap(), m);
    assert!(matches!(
        CpuMask::parse_list(8, "0-8"),
        Err(CpuMaskError::OutOfRange { cpu: 8, last: 7 })
    ));
    assert!(CpuMask::parse_list(8, "3-1").is_err());
    assert!(CpuMask::parse_list(8, "a").is_err());
    assert!(CpuMask::parse_list(8, "1,,2").is_err());
}

#[test]
fn parse_list_strides_never_wrap() {
    // Issue 16: `c += stride` wrapped past u64::MAX and took CPUs 0-3 too.
    let huge = u64::MAX;
    for (text, want) in [
        (format!("3-3:{huge}"), vec![3]),
        (format!("0-15:{huge}"), vec![0]),
        (format!("14-15:{}", huge - 13), vec![14]),
        ("0-15:15".to_string(), vec![0, 15]),
    ] {
        let m = CpuMask::parse_list(16, &text).unwrap();
        assert_eq!(m, mask(16, &want), "{text}");
    }
    let err = CpuMask::parse_list(16, "3-3:0").unwrap_err().to_string();
    assert!(err.contains("stride"), "{err}");
    let err = CpuMask::parse_list(16, &format!("3-{huge}:2"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("0-15"), "{err}");
}

#[test]
fn set_algebra() {
    let a = mask(70, &[0, 1, 65]);
    let b = mask(70, &[1, 65, 69]);
    assert_eq!(a.and(&b), mask(70, &[1, 65]));
    assert_eq!(a.or(&b), mask(70, &[0, 1, 65, 69]));
    assert_eq!(a.andnot(&b), mask(70, &[0]));
    assert!(mask(70, &[1]).is_subset(&a));
    assert!(!b.is_subset(&a));
    assert_eq!(b.first(), Some(CpuId(1)));
    assert_eq!(b.next_from(66), Some(CpuId(69)));
    assert_eq!(b.weight(), 3);
}

#[test]
fn large_masks_spill_to_the_heap_and_behave_the_same() {
    // 600 CPUs: beyond the inline words.
    let a = mask(600, &[0, 511, 512, 599]);
    let b = mask(600, &[511, 599]);
    assert_eq!(a.and(&b), b);
    assert_eq!(a.andnot(&b), mask(600, &[0, 512]));
    assert_eq!(a.or(&b).weight(), 4);
    assert_eq!(a.next_from(513), Some(CpuId(599)));
    let order: Vec<u32> = a.iter_wrap(512).map(|c| c.0).collect();
    assert_eq!(order, vec![512, 599, 0, 511]);
    assert_eq!(a.to_list(), "0,511-512,599");
    assert!(b.is_subset(&a));
    // Equality looks at the bits and the size, not at where they are stored.
    assert_ne!(mask(64, &[1]), mask(128, &[1]));
    assert_eq!(CpuMask::full(513).weight(), 513);
}

/// `%*pbl` CPU by CPU, as `to_list()` was written before it went run by run.
fn list_cpu_by_cpu(m: &CpuMask) -> String {
    let cpus: Vec<u32> = m.iter().map(|c| c.0).collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match i == j {
            true => cpus[i].to_string(),
            false => format!("{}-{}", cpus[i], cpus[j]),
        });
        i = j + 1;
    }
    parts.join(",")
}

#[test]
fn list_format_run_by_run_matches_cpu_by_cpu() {
    let mut rng = crate::rng::Rng::new(26);
    for n in [1, 2, 24, 63, 64, 65, 127, 128, 129, 200, 4096] {
        for flip in [1, 3, 20, 500] {
            // Runs of random length: flip the bit with probability 1/flip per CPU.
            let mut on = rng.below(2) == 1;
            let mut m = CpuMask::new(n);
            for c in 0..n {
                if rng.below(flip) == 0 {
                    on = !on;
                }
                if on {
                    m.set_cpu(CpuId(c));
                }
            }
            assert_eq!(m.to_list(), list_cpu_by_cpu(&m), "{n} CPUs");
        }
        assert_eq!(
            CpuMask::full(n).to_list(),
            list_cpu_by_cpu(&CpuMask::full(n))
        );
    }
}
