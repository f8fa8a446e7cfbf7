//! What plotters wrote, tagged: its elements found by the literal colours it gives
//! them and given classes and `data-side` (so the style sheet colours the chart in
//! both themes and the end-to-end tests find each series), and each dot a `<title>`.

use plotters::prelude::*;

use super::{
    point_text, ChartProps, Series, AXIS, BAND_COLOUR, GRID, PUBLISHED_COLOUR, SIDE_COLOUR,
};

/// The SVG text with its series, axes, grid, bands and legend tagged, and its dots
/// titled.
pub(super) fn tag_svg(out: &str, props: &ChartProps) -> String {
    let lines: Vec<(String, String)> = props
        .series
        .iter()
        .map(|s| (svg_colour("stroke", s.colour()), s.tag()))
        .collect();
    // A sweep's dots are filled with their series' colour (published series have none).
    let dots: Vec<(String, String)> = props
        .series
        .iter()
        .filter(|s| !s.published)
        .map(|s| (svg_colour("fill", s.colour()), s.side_attr()))
        .collect();
    let grid = [
        (svg_colour("stroke", AXIS), r#"class="axis""#.to_string()),
        (svg_colour("stroke", GRID), r#"class="grid""#.to_string()),
    ];
    let bands: Vec<(String, String)> = props
        .series
        .iter()
        .filter(|s| !s.band.is_empty())
        .map(|s| {
            (
                svg_colour("fill", BAND_COLOUR[s.side.min(1)]),
                format!(r#"class="band band-{}" {}"#, s.side_tag(), s.side_attr()),
            )
        })
        .collect();
    let legend = [
        (
            svg_colour("fill", BAND_COLOUR[0]),
            r#"class="key-band-a""#.to_string(),
        ),
        (
            svg_colour("fill", BAND_COLOUR[1]),
            r#"class="key-band-b""#.to_string(),
        ),
        (
            svg_colour("fill", WHITE),
            r#"class="legend-bg""#.to_string(),
        ),
        (
            svg_colour("stroke", GRID),
            r#"class="legend-border""#.to_string(),
        ),
        (
            svg_colour("fill", SIDE_COLOUR[0]),
            r#"class="key-a""#.to_string(),
        ),
        (
            svg_colour("fill", SIDE_COLOUR[1]),
            r#"class="key-b""#.to_string(),
        ),
        (
            svg_colour("fill", PUBLISHED_COLOUR[0]),
            r#"class="key-a""#.to_string(),
        ),
        (
            svg_colour("fill", PUBLISHED_COLOUR[1]),
            r#"class="key-b""#.to_string(),
        ),
    ];
    let out = tag_elements(out, "<polyline", &lines);
    let out = tag_elements(&out, "<line", &grid);
    let out = tag_elements(&out, "<rect", &legend);
    let out = tag_elements(&out, "<circle", &dots);
    let out = tag_elements(&out, "<polygon", &bands);
    file_legend(&title_dots(&out, props))
}

/// plotters' legend, the last thing it draws (from its background box to the SVG's
/// end), grouped as `<g class="file-legend">`. On the page the style sheet hides it:
/// the legend above the chart (`sim_view.rs`) names the lines in the page's larger
/// text, off the data. A saved SVG or PNG has no page around it and no style sheet, so
/// there the group shows: the file names its own lines.
fn file_legend(svg: &str) -> String {
    match (svg.find(r#"<rect class="legend-bg""#), svg.rfind("</svg>")) {
        (Some(start), Some(end)) if start < end => format!(
            r#"{}<g class="file-legend">{}</g>{}"#,
            &svg[..start],
            &svg[start..end],
            &svg[end..]
        ),
        _ => svg.to_string(),
    }
}

/// Text as SVG character data.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Gives each dot a `<title>` (the browser shows it on hover): its series, x and y.
/// A side's dots come in its points' order; the published series have none.
fn title_dots(svg: &str, props: &ChartProps) -> String {
    let model: Vec<&Series> = props.series.iter().filter(|s| !s.published).collect();
    let mut seen = [0usize; 2];
    let mut out = String::with_capacity(svg.len() + 64 * 16);
    let mut rest = svg;
    while let Some(i) = rest.find("<circle data-side=\"") {
        let (before, from) = rest.split_at(i);
        out.push_str(before);
        let Some(end) = from.find("/>") else {
            rest = from;
            break;
        };
        let side = usize::from(from["<circle data-side=\"".len()..].starts_with('b'));
        let k = seen[side];
        seen[side] += 1;
        let point = model
            .iter()
            .find(|s| s.side.min(1) == side)
            .and_then(|s| s.points.get(k).map(|p| (s, *p)));
        out.push_str(&from[..end]);
        match point {
            Some((s, p)) => {
                let text = escape(&point_text(props, s, p));
                out.push_str(&format!("><title>{text}</title></circle>"));
            }
            None => out.push_str("/>"),
        }
        rest = &from[end + 2..];
    }
    out.push_str(rest);
    out
}

/// A colour attribute as plotters' SVG backend writes it.
pub(super) fn svg_colour(attr: &str, c: RGBColor) -> String {
    format!(r##"{attr}="#{:02X}{:02X}{:02X}""##, c.0, c.1, c.2)
}

/// Gives each element opened by `open` (`<polyline`, `<circle`, `<line` …; the name
/// must end there, so `<line` does not take `<linearGradient`) whose opening tag holds
/// one of `tags`' colour attributes that entry's attributes.
fn tag_elements(svg: &str, open: &str, tags: &[(String, String)]) -> String {
    let mut out = String::with_capacity(svg.len() + 64 * tags.len());
    let mut rest = svg;
    while let Some(i) = rest.find(open) {
        let (before, from) = rest.split_at(i);
        // The opening tag: plotters writes no `>` inside attribute values.
        let end = from.find('>').map_or(from.len(), |e| e + 1);
        let named = from[open.len()..].starts_with([' ', '/', '>']);
        let (element, after) = from.split_at(end);
        out.push_str(before);
        out.push_str(open);
        if let Some((_, attrs)) = tags
            .iter()
            .find(|(colour, _)| named && element.contains(colour.as_str()))
        {
            out.push(' ');
            out.push_str(attrs);
        }
        out.push_str(&element[open.len()..]);
        rest = after;
    }
    out.push_str(rest);
    out
}
