//! The tests of `machine_svg.rs` (moved out whole in session 39, to keep that file
//! small).

use super::*;
use schedlab_core::topology::presets;

#[test]
fn every_cpu_is_drawn_once_and_kunpeng_has_its_clusters() {
    for p in presets::PRESETS {
        let m = presets::machine(p.name).expect("preset builds");
        let svg = machine_svg(&m, "6.8", None, CpuId(0));
        assert_eq!(
            svg.matches("<g class=\"cpu\"").count(),
            m.nr_cpus() as usize,
            "{}",
            p.name
        );
        for c in [0, m.nr_cpus() - 1] {
            assert!(svg.contains(&format!("data-cpu=\"{c}\"")), "{}", p.name);
        }
    }
    let m = presets::machine("kunpeng920-6426").unwrap();
    let span = CpuMask::from_cpus(m.nr_cpus(), (0..4).map(CpuId));
    let svg = machine_svg(&m, "6.6+cluster", Some(&span), CpuId(2));
    assert_eq!(
        svg.matches("<g class=\"cluster\"").count(),
        32,
        "32 clusters of 4"
    );
    assert_eq!(
        svg.matches("fill=\"#cfe0fa\"").count(),
        3,
        "3 shaded + the selected"
    );
    assert!(svg.contains("kunpeng920-6426 · Linux 6.6+cluster · 128 CPUs"));
    assert!(svg.starts_with("<?xml") && svg.ends_with("</svg>\n"));
}

/// The layout puts every CPU inside the machine, no two overlapping, and the
/// groups are the SVG's.
#[test]
fn the_layout_places_each_cpu_once_inside_its_groups() {
    for (name, fit) in [
        ("flat-16", None),
        ("kunpeng920-6426", None),
        ("epyc9654-2p", None),
        ("epyc9654-2p", Some(1.3)),
        ("kunpeng920-6426", Some(1.3)),
    ] {
        let m = presets::machine(name).unwrap();
        let l = fit.map_or_else(|| layout(&m), |a| layout_fit(&m, a));
        let svg = machine_svg(&m, "6.8", None, CpuId(0));
        assert_eq!(l.cpus.len(), m.nr_cpus() as usize);
        for class in ["cluster", "llc", "node", "package"] {
            assert_eq!(
                l.groups.iter().filter(|g| g.class == class).count(),
                svg.matches(&format!("<g class=\"{class}\"")).count(),
                "{name} {class}"
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        for [x, y, w, h] in &l.cpus {
            assert!(*w > 0.0 && x + w <= l.w && y + h <= l.h, "{name}");
            assert!(
                seen.insert(((*x * 8.0) as i64, (*y * 8.0) as i64)),
                "{name}"
            );
        }
    }
    // Two sockets side by side are 5 to 1; fitted, the packages stack.
    let m = presets::machine("epyc9654-2p").unwrap();
    let (wide, fit) = (layout(&m), layout_fit(&m, 1.3));
    assert!(wide.w / wide.h > 3.0, "{} x {}", wide.w, wide.h);
    let r = fit.w / fit.h;
    assert!((0.8..2.0).contains(&r), "{} x {}", fit.w, fit.h);
    assert_eq!(layout_fit(&m, 100.0), wide);
}

/// The flowed layout places each CPU once, inside the drawing and its groups' boxes,
/// no two overlapping, with the SVG's groups; in a phone's tall canvas Kunpeng
/// 920's CPUs come out bigger than in the square layout (24 px wide against 20,
/// enough for an 11 px number).
#[test]
fn the_flowed_layout_fits_a_tall_canvas_with_bigger_cpus() {
    for name in ["flat-16", "kunpeng920-6426", "epyc9654-2p"] {
        let m = presets::machine(name).unwrap();
        let (l, s) = layout_flow_fit(&m, 331.0, 590.0, true);
        assert!(l.w * s <= 331.0 + 1e-9 && l.h * s <= 590.0 + 1e-9, "{name}");
        assert_eq!(l.cpus.len(), m.nr_cpus() as usize);
        let svg = machine_svg(&m, "6.8", None, CpuId(0));
        for class in ["cluster", "llc", "node", "package"] {
            assert_eq!(
                l.groups.iter().filter(|g| g.class == class).count(),
                svg.matches(&format!("<g class=\"{class}\"")).count(),
                "{name} {class}"
            );
        }
        assert_placed(name, &l);
    }
    let m = presets::machine("kunpeng920-6426").unwrap();
    let square = layout_fit(&m, 1.3);
    let s0 = (331.0 / square.w).min(590.0 / square.h);
    let (_, s1) = layout_flow_fit(&m, 331.0, 590.0, true);
    assert!(
        CPU_W * s0 < 21.0 && CPU_W * s1 > 23.0,
        "{} -> {}",
        CPU_W * s0,
        CPU_W * s1
    );
}

/// Without the clusters' names their boxes stay, and the CPUs come out bigger:
/// Kunpeng 920 in a phone's 331 × 552 px and in 1280 × 720's 300 × 509 (the live
/// canvas' boxes since session 38) has CPUs under 22.8 px wide named, too narrow
/// for "127" at 11 px, and over 24 unnamed.
#[test]
fn unnamed_clusters_give_their_line_to_the_cpus() {
    let m = presets::machine("kunpeng920-6426").unwrap();
    for (w, h) in [(331.0, 552.0), (300.0, 509.0)] {
        let (named, s0) = layout_flow_fit(&m, w, h, true);
        let (bare, s1) = layout_flow_fit(&m, w, h, false);
        assert!(CPU_W * s0 < 22.8 && CPU_W * s1 > 24.0, "{w}: {s0} -> {s1}");
        assert!(CPU_H * s1 >= 14.0, "{w}: {s1}");
        let clusters = |l: &Layout| {
            let c: Vec<&LaidBox> = l.groups.iter().filter(|g| g.class == "cluster").collect();
            (c.len(), c.iter().filter(|g| !g.label.is_empty()).count())
        };
        assert_eq!(clusters(&named), (32, 32));
        assert_eq!(clusters(&bare), (32, 0));
        assert!(bare.groups.iter().any(|g| g.label == "node 0 · LLC 0"));
    }
}

/// Every CPU of `l` inside it and inside a group, no two overlapping.
fn assert_placed(name: &str, l: &Layout) {
    for (i, a) in l.cpus.iter().enumerate() {
        assert!(
            a[2] > 0.0 && a[0] + a[2] <= l.w && a[1] + a[3] <= l.h,
            "{name}"
        );
        for b in &l.cpus[i + 1..] {
            let apart = a[0] + a[2] <= b[0]
                || b[0] + b[2] <= a[0]
                || a[1] + a[3] <= b[1]
                || b[1] + b[3] <= a[1];
            assert!(apart, "{name}: {a:?} overlaps {b:?}");
        }
        let inside = l.groups.iter().filter(|g| {
            g.x <= a[0] && a[0] + a[2] <= g.x + g.w && g.y <= a[1] && a[1] + a[3] <= g.y + g.h
        });
        assert!(inside.count() >= 1, "{name}: CPU {i} in no box");
    }
}

/// EPYC 9654's 192 CPUs, too small for "191" at 11 px (22.8 px wide: 0.76 px a unit)
/// in every layout that fits a phone's 331 × 552 px or 1280 × 720's 287 × 509 (its
/// box less the scroll bar), hold it in one as wide as the box and under 2.5 times as
/// tall: one box per L2 (a cluster of one core), unnamed, 96 of them. The 2-socket
/// one would be over 2.5 times; 4096 CPUs are turned down before any is laid out.
#[test]
fn a_canvas_that_scrolls_numbers_epyc() {
    let m = presets::machine("epyc9654-1p").unwrap();
    for (w, h) in [(331.0, 552.0), (287.0, 509.0)] {
        let (named, s0) = layout_flow_fit(&m, w, h, true);
        let (bare, s1) = layout_flow_fit(&m, w, h, false);
        assert!(CPU_W * s0.max(s1) < 15.0, "{w}: {s0} {s1}");
        assert!(named.h * s0 <= h + 1e-9 && bare.h * s1 <= h + 1e-9);
        let (l, s) = layout_scroll_fit(&m, w, 0.76, 2.5 * h).expect("a layout");
        assert!(s >= 0.76 && (l.w * s - w).abs() < 1e-9, "{w}: {s}");
        assert!(l.h * s > h && l.h * s <= 2.0 * h, "{w}: {}", l.h * s);
        assert_placed("epyc9654-1p", &l);
        let clusters: Vec<&LaidBox> = l.groups.iter().filter(|g| g.class == "cluster").collect();
        assert_eq!(clusters.len(), 96);
        assert!(clusters.iter().all(|g| g.label.is_empty()));
        assert!(!l.groups.iter().any(|g| g.class == "core"));
        assert_eq!(
            l.groups
                .iter()
                .filter(|g| g.label.starts_with("LLC"))
                .count(),
            12
        );
    }
    // Kunpeng 920's clusters of four cores keep their boxes.
    let k = presets::machine("kunpeng920-6426").unwrap();
    let (l, _) = layout_scroll_fit(&k, 331.0, 0.76, 1380.0).unwrap();
    assert_eq!(l.groups.iter().filter(|g| g.class == "cluster").count(), 32);
    let m2 = presets::machine("epyc9654-2p").unwrap();
    assert!(layout_scroll_fit(&m2, 331.0, 0.76, 2.5 * 552.0).is_none());
    let big: schedlab_core::topology::MachineSpec = serde_json::from_str(
        r#"{"name": "m", "arch": "x86", "packages": 1, "cores_per_llc": 4096}"#,
    )
    .unwrap();
    let big = big.build().unwrap();
    assert!(layout_scroll_fit(&big, 331.0, 0.98, 1600.0).is_none());
}
