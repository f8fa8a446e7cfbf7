use super::draw::nice_ceiling;
use super::*;

/// A live run's chart: throughput against 30 ms of simulated time, no dots.
fn throughput_over_time(series: Vec<Series>) -> ChartProps {
    ChartProps {
        label: "test".into(),
        x: XAxis::Ms(30.0),
        x_desc: "simulated time (ms)".into(),
        y_desc: "throughput (MB/s)".into(),
        x_name: "ms".into(),
        y_unit: "MB/s".into(),
        series,
        dots: false,
        stem: "schedlab-chart".into(),
    }
}

#[test]
fn axes_end_on_round_numbers() {
    let tops = [0.0, 0.7, 1.0, 1.01, 2332.0, 4999.0].map(nice_ceiling);
    assert_eq!(tops, [1.0, 1.0, 1.0, 2.0, 5000.0, 5000.0]);
}

/// The end-to-end test's hooks: a tagged polyline per series, a circle per dot,
/// and no other polyline.
#[test]
fn every_polyline_is_a_tagged_series() {
    let series = |side, published| Series {
        side,
        label: format!("side {side}"),
        points: vec![(0.0, 10.0), (1.0, 30.0), (2.0, 20.0)],
        published,
        band: Vec::new(),
    };
    let props = ChartProps {
        label: "test".into(),
        x: XAxis::Scales(vec![1, 4, 8]),
        x_desc: "number of clients".into(),
        y_desc: "throughput (MB/s)".into(),
        x_name: "clients".into(),
        y_unit: "MB/s".into(),
        series: vec![
            series(0, false),
            series(1, false),
            series(0, true),
            series(1, true),
        ],
        dots: true,
        stem: "schedlab-chart".into(),
    };
    let svg = svg(&props, SIZE).expect("draws");
    assert_eq!(svg.matches("<polyline").count(), 4, "{svg}");
    // The axes' text is in sans-serif at about 11 and 12 px, the family named by
    // value (draw.rs says why).
    assert!(
        svg.contains(r#"font-family="sans-serif" font-size="11."#)
            && svg.contains(r#"font-family="sans-serif" font-size="12."#),
        "{svg}"
    );
    assert_eq!(
        svg.matches(r#"<polyline class="line line-a" data-side="a""#)
            .count(),
        1
    );
    assert_eq!(
        svg.matches(r#"<polyline class="line line-b" data-side="b""#)
            .count(),
        1
    );
    assert_eq!(
        svg.matches(r#"class="line published-line line-"#).count(),
        2
    );
    // The dots; each published point a square mark (its hover target), the published
    // lines dotted, not dashed as B's model line (they were `5 4` beside B's `4 2`).
    assert_eq!(svg.matches("<circle data-side").count(), 6, "{svg}");
    assert_eq!(svg.matches(r#"<circle class="hit"#).count(), 0, "{svg}");
    assert_eq!(
        svg.matches(r#"<rect class="mark mark-a" data-side="a""#)
            .count(),
        3,
        "{svg}"
    );
    assert_eq!(
        svg.matches(r#"<rect class="mark mark-b" data-side="b""#)
            .count(),
        3,
        "{svg}"
    );
    assert_eq!(
        svg.matches(r#"stroke-dasharray="0 5" stroke-linecap="round""#)
            .count(),
        2,
        "{svg}"
    );
    assert_eq!(svg.matches(r#"<circle data-side="a""#).count(), 3, "{svg}");
    assert_eq!(svg.matches(r#"<circle data-side="b""#).count(), 3, "{svg}");
    // Each dot says its values on hover, in its series' point order.
    assert_eq!(svg.matches("<title>").count(), 12, "{svg}");
    assert!(
        svg.contains("<title>side 0: 4 clients: 30 MB/s</title></circle>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>side 1: 8 clients: 20 MB/s</title></circle>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>side 1: 8 clients: 20 MB/s</title></rect>"),
        "a published point says its values: {svg}"
    );
    assert!(
        svg.contains(">number of clients</text>") || svg.contains("number of clients"),
        "{svg}"
    );
    assert!(
        svg.contains("throughput (MB/s)"),
        "the y axis has its title: {svg}"
    );
    assert!(
        !svg.contains("<polygon"),
        "no band without intervals: {svg}"
    );
    assert!(
        svg.contains(">\n8\n</text>"),
        "the scales label the x axis: {svg}"
    );
}

/// The style sheet colours the chart by class (light and dark themes): every grid
/// line, axis and legend rectangle is tagged.
#[test]
fn the_style_sheet_can_colour_every_line_and_box() {
    let mut props = throughput_over_time(vec![Series {
        side: 1,
        label: "B".into(),
        points: vec![(0.0, 1.0), (60.0, 2.0)],
        published: false,
        band: Vec::new(),
    }]);
    props.x = XAxis::Ms(60.0);
    let svg = svg(&props, SIZE).expect("draws");
    let lines = svg.matches("<line").count();
    let tagged =
        svg.matches(r#"<line class="axis""#).count() + svg.matches(r#"<line class="grid""#).count();
    assert!(lines > 0 && tagged == lines, "{tagged} of {lines}: {svg}");
    for class in ["legend-bg", "legend-border", "key-b"] {
        assert!(
            svg.contains(&format!(r#"<rect class="{class}""#)),
            "{class}: {svg}"
        );
    }
    assert_eq!(svg.matches("<rect").count(), 5, "{svg}");
}

/// The page shows the legend once, above the chart (`sim_view.rs`): plotters' legend
/// inside the SVG is one group the style sheet hides, from its box to its last entry,
/// and no line, band, axis or hover target is in it (a saved file shows it).
#[test]
fn the_drawn_legend_is_one_group_for_the_saved_file() {
    let side = |side: usize, label: &str| Series {
        side,
        label: label.into(),
        points: vec![(0.0, 1.0), (30.0, 2.0)],
        published: false,
        band: vec![(0.0, 0.5, 1.5), (30.0, 1.5, 2.5)],
    };
    let svg = svg(
        &throughput_over_time(vec![side(0, "A 6.6"), side(1, "B 6.6+cluster")]),
        SIZE,
    )
    .expect("draws");
    assert_eq!(
        svg.matches(r#"<g class="file-legend">"#).count(),
        1,
        "{svg}"
    );
    let start = svg.find(r#"<g class="file-legend">"#).unwrap_or(0);
    let group = &svg[start..start + svg[start..].find("</g>").expect("closed")];
    for inside in [
        "legend-bg",
        "legend-border",
        "key-a",
        "key-b",
        "key-band-a",
        "A 6.6; shaded: 95% interval",
        "B 6.6+cluster; shaded: 95% interval",
    ] {
        assert!(group.contains(inside), "{inside} is in the group: {group}");
    }
    for outside in [
        "<polyline",
        "<polygon",
        "<line",
        "<circle",
        "throughput (MB/s)",
    ] {
        assert!(!group.contains(outside), "{outside} is not: {group}");
    }
    assert!(
        !svg[..start].contains("6.6"),
        "no legend text before the group: {svg}"
    );
    let css = include_str!("../../../../static/css/07-simulate.css");
    assert!(
        css.contains(".sim-chart .file-legend { display: none; }"),
        "the page hides it"
    );
}

/// An attribute's number in an element's opening tag.
fn attr(tag: &str, name: &str) -> f64 {
    let at = tag.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
    tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
}

/// A against itself: the lines coincide, so B's is dashed (drawn after A's, on top)
/// and its legend key has the same dash and gap, A's line and key solid; the chart
/// says the two are identical, and only then.
#[test]
fn b_is_dashed_over_a_and_its_key_has_the_same_dash() {
    let series = |side: usize, ys: [f64; 3]| Series {
        side,
        label: ["A 6.6", "B 6.6"][side].into(),
        points: (0..3).map(|k| (10.0 * k as f64 + 5.0, ys[k])).collect(),
        published: false,
        band: Vec::new(),
    };
    let mut props =
        throughput_over_time(vec![series(0, [1.0, 3.0, 2.0]), series(1, [1.0, 3.0, 2.0])]);
    assert!(identical(&props.series));
    let svg = svg(&props, SIZE).expect("draws");
    let (a, b) = (
        svg.find(r#"<polyline class="line line-a""#).expect("A"),
        svg.find(r#"<polyline class="line line-b""#).expect("B"),
    );
    assert!(a < b, "B is drawn over A");
    let dash = format!(r#"stroke-dasharray="{} {}""#, B_DASH.0, B_DASH.1);
    assert!(
        svg[b..b + svg[b..].find('>').unwrap()].contains(&dash),
        "{svg}"
    );
    assert!(
        !svg[a..a + svg[a..].find('>').unwrap()].contains("dasharray"),
        "{svg}"
    );
    let key = |side: &str| -> Vec<(f64, f64)> {
        let open = format!(r#"<rect class="key-{side}""#);
        let mut pieces: Vec<(f64, f64)> = svg
            .match_indices(&open)
            .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()])
            .map(|t| (attr(t, "x"), attr(t, "x") + attr(t, "width")))
            .collect();
        pieces.sort_by(|p, q| p.0.total_cmp(&q.0));
        pieces
    };
    let (ka, kb) = (key("a"), key("b"));
    let (on, off) = (f64::from(B_DASH.0), f64::from(B_DASH.1));
    assert!(
        kb.len() == 3 && kb.iter().all(|p| p.1 - p.0 == on),
        "{kb:?}"
    );
    assert!(kb.windows(2).all(|w| w[1].0 - w[0].1 == off), "{kb:?}");
    assert!(
        ka.windows(2).all(|w| w[1].0 == w[0].1),
        "A's key is solid: {ka:?}"
    );
    props.series[1].points[2].1 = 2.5;
    assert!(!identical(&props.series));
    props.series.truncate(1);
    assert!(
        !identical(&props.series),
        "one side alone is not 'identical'"
    );
}

/// The y pixel of `y` on a band chart's axis, read from where the polyline of a
/// series through (x, y) is drawn: the SVG's own coordinates.
fn polyline_ys(svg: &str, side: &str) -> Vec<i32> {
    let tag = format!(r#"<polyline class="line line-{side}" data-side="{side}""#);
    let at = svg.find(&tag).expect("the series' polyline");
    let points = &svg[at..];
    let points = &points[points.find("points=\"").unwrap() + 8..];
    let points = &points[..points.find('"').unwrap()];
    points
        .split_whitespace()
        .map(|xy| xy.split(',').nth(1).unwrap().parse().unwrap())
        .collect()
}

/// Over several seeds each series has its band: a tagged polygon under the line
/// (above it on screen at hi, below at lo), with a legend entry; a band past the
/// axis's top is cut there; every point of a line without dots has a hover target
/// with its interval; the table lists every point.
#[test]
fn bands_lie_around_their_lines_and_every_point_says_its_values() {
    let series = |side: usize, ys: [f64; 3], half: f64| Series {
        side,
        label: format!("{} mean", ["A", "B"][side]),
        points: (0..3).map(|k| (10.0 * k as f64 + 5.0, ys[k])).collect(),
        published: false,
        band: (0..3)
            .map(|k| (10.0 * k as f64 + 5.0, ys[k] - half, ys[k] + half))
            .collect(),
    };
    // B's band is far wider than the lines: cut at the top.
    let props = throughput_over_time(vec![
        series(0, [100.0, 120.0, 110.0], 10.0),
        series(1, [130.0, 140.0, 135.0], 500.0),
    ]);
    let svg = svg(&props, SIZE).expect("draws");
    for side in ["a", "b"] {
        let tag = format!(r#"<polygon class="band band-{side}" data-side="{side}""#);
        assert_eq!(svg.matches(&tag).count(), 1, "{svg}");
        assert!(
            svg.contains(&format!(r#"<rect class="key-band-{side}""#)),
            "the band has a legend key: {svg}"
        );
        // The outline: hi left to right, then lo right to left, around the line.
        let at = svg.find(&tag).unwrap();
        let poly = &svg[at..];
        let poly = &poly[poly.find("points=\"").unwrap() + 8..];
        let poly = &poly[..poly.find('"').unwrap()];
        let ys: Vec<i32> = poly
            .split_whitespace()
            .map(|xy| xy.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        let line = polyline_ys(&svg, side);
        assert_eq!(ys.len(), 2 * line.len(), "{poly}");
        for (k, y) in line.iter().enumerate() {
            let (hi, lo) = (ys[k], ys[ys.len() - 1 - k]);
            // SVG y grows downwards: hi is above the line, lo below.
            assert!(
                hi < *y && *y < lo,
                "side {side} point {k}: {hi} < {y} < {lo}"
            );
        }
    }
    assert!(
        svg.contains("A mean; shaded: 95% interval"),
        "one legend entry per side names its band: {svg}"
    );
    assert_eq!(svg.matches("95% interval\n</text>").count(), 2, "{svg}");
    // The top is from the lines (at most half again), not from B's 640.
    assert!(
        svg.contains(">\n200\n</text>") || svg.contains(">200<"),
        "{svg}"
    );
    assert!(!svg.contains(">\n500\n</text>"), "{svg}");
    assert_eq!(
        svg.matches(r#"<circle class="hit hit-a""#).count(),
        3,
        "{svg}"
    );
    assert_eq!(
        svg.matches(r#"<circle class="hit hit-b""#).count(),
        3,
        "{svg}"
    );
    assert!(
        svg.contains("<title>A mean: 15 ms: 120 MB/s (95% interval 110 to 130)</title>"),
        "{svg}"
    );
    assert!(
        svg.trim_end().ends_with("</svg>"),
        "the targets are inside the SVG"
    );
}

#[test]
fn y_axis_titles_carry_units() {
    use crate::components::sim_view::y_title;
    assert_eq!(y_title("MB/s", true), "throughput (MB/s)");
    assert_eq!(y_title("s", false), "time to finish (s)");
    assert_eq!(y_title("us (round trip)", false), "round trip (us)");
    assert_eq!(
        y_title("us (p99 wake-up latency)", false),
        "p99 wake-up latency (us)"
    );
}

/// vendor/plotters-backend matches font names in ASCII case (to keep the Unicode
/// lower-case table out of the page): any ASCII case still names the generic families
/// and styles, and other names stay names.
#[test]
fn font_names_match_in_any_ascii_case() {
    use plotters_backend::{FontFamily, FontStyle};
    assert_eq!(FontFamily::from("Sans-SERIF").as_str(), "sans-serif");
    assert_eq!(FontFamily::from("MonoSpace").as_str(), "monospace");
    assert_eq!(FontFamily::from("Serif").as_str(), "serif");
    assert_eq!(FontFamily::from("Ｓerif").as_str(), "Ｓerif");
    assert_eq!(FontFamily::from("DejaVu Sans").as_str(), "DejaVu Sans");
    assert_eq!(FontStyle::from("ITALIC").as_str(), "italic");
    assert_eq!(FontStyle::from("Bold").as_str(), "bold");
    assert_eq!(FontStyle::from("İtalic").as_str(), "normal");
}

/// On a phone the SVG is about as wide as its panel (a unit a pixel, so its 11 px
/// labels stay 11 px), within bounds; on a wide window and an unknown one, the wide
/// chart; and a chart drawn that narrow still draws every series and its labels.
#[test]
fn a_phone_gets_a_chart_as_wide_as_its_panel() {
    assert_eq!(size_for(Some(390.0)), (326, 250));
    assert_eq!(size_for(Some(360.0)), (296, 250));
    assert_eq!(size_for(Some(200.0)), (280, 250));
    assert_eq!(size_for(Some(639.0)), (440, 250));
    assert_eq!(size_for(Some(640.0)), SIZE);
    assert_eq!(size_for(None), SIZE);
    let series = |side| Series {
        side,
        label: format!("side {side}"),
        points: vec![(0.0, 1100.0), (15.0, 1200.0), (30.0, 1150.0)],
        published: false,
        band: Vec::new(),
    };
    let svg = svg(
        &throughput_over_time(vec![series(0), series(1)]),
        (326, 250),
    )
    .expect("draws");
    assert!(svg.contains(r#"viewBox="0 0 326 250""#), "{svg}");
    assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    assert!(
        svg.contains(">\n1000\n<") || svg.contains(">1000<"),
        "{svg}"
    );
}
