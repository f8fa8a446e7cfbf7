//! The live canvas's drawing helpers, tested on the host (`draw.rs`).

use super::*;

#[test]
fn distances_to_a_segment_and_colours() {
    assert_eq!(seg_dist((0.0, 0.0), (10.0, 0.0), (5.0, 3.0)), 3.0);
    assert_eq!(seg_dist((0.0, 0.0), (10.0, 0.0), (13.0, 4.0)), 5.0);
    assert_eq!(seg_dist((2.0, 2.0), (2.0, 2.0), (5.0, 6.0)), 5.0);
    assert!(luminance("#ffffff") > 0.9 && luminance("#161b22") < 0.2);
    assert_eq!(luminance("white"), 0.5);
    assert_ne!(task_colour(0, 42), task_colour(1, 42));
    assert_eq!(DIST_COLOURS.len(), Distance::ALL.len());
}

/// A marker whose place changes glides there over the palette's frames, eased,
/// from wherever it was drawn; with 0 frames (reduced motion) it jumps.
#[test]
fn a_moved_marker_glides_there_or_jumps_under_reduced_motion() {
    let layout = Layout {
        w: 100.0,
        h: 100.0,
        groups: Vec::new(),
        cpus: vec![[0.0, 0.0, 10.0, 10.0]; 2],
    };
    let mut p = Painter::new(layout);
    assert_eq!(
        p.marker_at(3, (0.0, 0.0), 0, 10, 4),
        (0.0, 0.0),
        "first seen: placed"
    );
    assert_eq!((p.glides_begun, p.gliding), (0, 0));
    // Moved at tick 10: on its way for 4 ticks, never past the target.
    let mut xs = Vec::new();
    for tick in 10..=15 {
        xs.push(p.marker_at(3, (40.0, 20.0), 1, tick, 4));
    }
    assert_eq!(p.glides_begun, 1);
    assert_eq!(xs[0], (0.0, 0.0), "a glide starts where the marker was");
    assert!(xs[1].0 > 0.0 && xs[1].0 < 40.0 && xs[1].1 > 0.0 && xs[1].1 < 20.0);
    assert!(xs.windows(2).all(|w| w[1].0 >= w[0].0), "it moves one way");
    assert_eq!(xs[4], (40.0, 20.0), "it arrives after 4 ticks");
    assert_eq!(p.glide_draws, 4, "drawn on its way at ticks 10-13");
    // Moved again half-way: the new glide starts from where it is drawn.
    p.marker_at(3, (0.0, 20.0), 1, 20, 4);
    let mid = p.marker_at(3, (0.0, 20.0), 1, 22, 4);
    let turned = p.marker_at(3, (40.0, 0.0), 0, 22, 4);
    assert_eq!(turned, mid);
    assert_eq!(p.glides_begun, 3);
    assert_eq!(
        p.cpu_glides, 2,
        "CPU 0 → 1 and 1 → 0; queued → running on 1 is not"
    );
    // Reduced motion: a jump, no glide.
    let jumped = p.marker_at(3, (5.0, 5.0), 1, 30, 0);
    assert_eq!(jumped, (5.0, 5.0));
    assert_eq!(p.glides_begun, 3);
    assert_eq!(p.cpu_glides, 2);
    p.forget();
    assert_eq!((p.glides_begun, p.cpu_glides, p.glide_draws), (0, 0, 0));
    assert_eq!(
        p.marker_at(3, (9.0, 9.0), 0, 31, 4),
        (9.0, 9.0),
        "forgotten: placed"
    );
}

#[test]
fn a_label_is_drawn_only_where_its_box_holds_it_whole_at_11_px() {
    // "cluster 0" at 11 px is about 50 px: a cluster box of 74 units holds it at
    // 0.9 px a unit, not at 0.6 (1280 px's square layout, where it was squeezed).
    assert!(label_fits(50.0, 74.0, 0.9));
    assert!(!label_fits(50.0, 74.0, 0.6));
    // A wide box, but the room over its children (20 units) under 12 px.
    assert!(!label_fits(50.0, 400.0, 0.55));
    assert!(label_fits(50.0, 400.0, 0.6));
}
