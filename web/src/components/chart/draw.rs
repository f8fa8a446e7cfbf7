//! The chart drawn: the y axis's top, then plotters' mesh, bands, lines and legend
//! into an SVG string, and a hover target on every point drawn without a dot.

use plotters::prelude::*;

use super::backend::AxesAsLines;
use super::tag::{escape, svg_colour, tag_svg};
use super::{point_text, ChartProps, XAxis, AXIS, BAND_COLOUR, BAND_OPACITY, GRID, MARK, TICK};
use crate::format::fmt_tick;

/// A y-axis top: 1, 2 or 5 times a power of ten, at least `v`.
pub(super) fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|k| k * p)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * p)
}

/// The chart as SVG text, its series polylines tagged.
pub(super) fn svg(props: &ChartProps, size: (u32, u32)) -> Result<String, String> {
    let line_top = props
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    // The bands count up to a quarter above the lines' top; past it they are cut.
    let band_top = props
        .series
        .iter()
        .flat_map(|s| s.band.iter().map(|b| b.2))
        .fold(0.0, f64::max)
        .min(line_top * 1.25);
    let top = nice_ceiling(line_top.max(band_top) * 1.05);
    let (x_range, n_x_labels) = match &props.x {
        XAxis::Ms(window) => (0.0..window.max(1e-9), 5),
        XAxis::Scales(s) => (-0.5..s.len().max(1) as f64 - 0.5, s.len().max(1)),
    };
    let x_label = |x: &f64| match &props.x {
        XAxis::Ms(_) => format!("{x:.0}"),
        // Only whole indexes are scales.
        XAxis::Scales(s) => s
            .get(x.round() as usize)
            .filter(|_| (x - x.round()).abs() < 1e-6 && *x >= -1e-6)
            .map_or_else(String::new, ToString::to_string),
    };
    let y_label = |y: &f64| fmt_tick(*y);

    let mut out = String::new();
    let mut hits = String::new();
    {
        let root = AxesAsLines(SVGBackend::with_string(&mut out, size)).into_drawing_area();
        // plotters draws text at about 0.8 of the size asked for: 11 and 12 px. The
        // family by value, not by name, which plotters would look up lower-cased
        // (225 bytes brotli of the page; its legend's default font still does).
        let font = |px: f64| (FontFamily::SansSerif, px / 0.8).into_font().color(&TICK);
        // 4 units on the left: plotters sets the y axis' title, turned, at x = 0, where
        // the first 1-2 px of its letters were cut by the SVG's edge.
        let mut chart = ChartBuilder::on(&root)
            .margin_left(4)
            .margin_top(10)
            .margin_right(16)
            .x_label_area_size(36)
            .y_label_area_size(72)
            .build_cartesian_2d(x_range, 0.0..top)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .max_light_lines(0)
            .bold_line_style(GRID)
            .axis_style(AXIS)
            .x_labels(n_x_labels)
            .y_labels(5)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style(font(11.0))
            .axis_desc_style(font(12.0))
            .x_desc(props.x_desc.as_str())
            .y_desc(props.y_desc.as_str())
            .draw()
            .map_err(|e| e.to_string())?;
        // The bands first, under every line.
        for s in props.series.iter().filter(|s| !s.band.is_empty()) {
            let fill = BAND_COLOUR[s.side.min(1)];
            let clamp = |v: f64| v.clamp(0.0, top);
            let outline: Vec<(f64, f64)> = s
                .band
                .iter()
                .map(|&(x, _, hi)| (x, clamp(hi)))
                .chain(s.band.iter().rev().map(|&(x, lo, _)| (x, clamp(lo))))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(
                    outline,
                    fill.mix(BAND_OPACITY).filled(),
                )))
                .map_err(|e| e.to_string())?;
        }
        for s in &props.series {
            let colour = s.colour();
            let style = ShapeStyle::from(colour).stroke_width(2);
            let dots = if props.dots && !s.published { 3 } else { 0 };
            let [p0, p1, p2] = s.key_pieces();
            let mark = s.published;
            // A band shares its line's legend entry: the key is the line over a
            // swatch of the band (a transparent swatch is not drawn at all).
            let (swatch, label) = if s.band.is_empty() {
                (TRANSPARENT, s.label.clone())
            } else {
                (
                    BAND_COLOUR[s.side.min(1)].mix(BAND_OPACITY),
                    format!("{}; shaded: 95% interval", s.label),
                )
            };
            chart
                .draw_series(
                    LineSeries::new(s.points.iter().copied(), style.filled()).point_size(dots),
                )
                .map_err(|e| e.to_string())?
                .label(label)
                .legend(move |(x, y)| {
                    // The line as drawn: solid, or its dashes and gaps.
                    let piece = |(from, to): (i32, i32)| {
                        Rectangle::new([(from, -1), (to, 2)], colour.filled())
                    };
                    // A published line's third piece is its square mark.
                    let (top, bottom) = if mark { (-3, 4) } else { (-1, 2) };
                    EmptyElement::at((x, y))
                        + Rectangle::new([(0, -6), (16, 6)], swatch.filled())
                        + piece(p0)
                        + piece(p1)
                        + Rectangle::new([(p2.0, top), (p2.1, bottom)], colour.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(match props.x {
                XAxis::Ms(_) => SeriesLabelPosition::LowerRight,
                XAxis::Scales(_) => SeriesLabelPosition::UpperLeft,
            })
            .margin(8)
            .label_font(font(11.0))
            .background_style(WHITE.mix(0.85))
            .border_style(GRID)
            .draw()
            .map_err(|e| e.to_string())?;
        // A hover target on every point drawn without a dot; a published point's is
        // its square mark.
        for s in &props.series {
            if props.dots && !s.published {
                continue;
            }
            for &p in &s.points {
                let (cx, cy) = chart.backend_coord(&p);
                if s.published {
                    let (x, y) = (f64::from(cx) - MARK / 2.0, f64::from(cy) - MARK / 2.0);
                    // A's filled, B's hollow (as A's dots and B's rings).
                    let fill = if s.side == 0 { s.colour() } else { WHITE };
                    hits.push_str(&format!(
                        r#"<rect class="mark mark-{side}" data-side="{side}" x="{x}" y="{y}" width="{MARK}" height="{MARK}" {} {} stroke-width="1.5" pointer-events="all"><title>{}</title></rect>"#,
                        svg_colour("fill", fill),
                        svg_colour("stroke", s.colour()),
                        escape(&point_text(props, s, p)),
                        side = s.side_tag(),
                    ));
                    continue;
                }
                hits.push_str(&format!(
                    r#"<circle class="hit hit-{}" cx="{cx}" cy="{cy}" r="5" fill="transparent" pointer-events="all"><title>{}</title></circle>"#,
                    s.side_tag(),
                    escape(&point_text(props, s, p))
                ));
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    let out = tag_svg(&out, props);
    Ok(match out.rfind("</svg>") {
        Some(end) => format!("{}{hits}{}", &out[..end], &out[end..]),
        None => out,
    })
}
