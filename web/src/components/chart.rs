//! The Simulate tab's chart: lines of values drawn by plotters' SVG backend into a
//! string, which the page inserts as the chart's SVG.
//!
//! ```text
//!  value ▲ 5000 ┤          ╭───── A 6.6          <div class="sim-chart"
//!        │ 2500 ┤  ╭──────╯ ───── B 6.6+cluster       data-series-count="2"
//!        │    0 ┼──┴────┴────┴────▶                  data-published-count="0">
//!                  0   30   60 ms                      <svg> … <polyline class="line line-a" data-side="a"> …
//! ```
//!
//! The DOM is part of the contract with the end-to-end test: each series is one
//! `<polyline>` with classes `line line-a|line-b` (and `published-line` for published
//! numbers, dotted: `PUBLISHED_DASH`, each point a square `<rect class="mark">`, A's
//! filled and B's hollow) and `data-side="a|b"`; B's model line is dashed
//! (`B_DASH`, its legend key drawn with the same dash) and drawn after A's, so when
//! the sides give the same numbers B's dashes lie on A's solid line and both show, and
//! the chart says so (`data-identical`, its label and a note); a series drawn with
//! dots has one `<circle>` per point; the axes and tick marks are `<line>`s, so every
//! polyline is a series. `.sim-chart` carries the counts as data attributes.
//!
//! Over several seeds a series carries a band, each point's 95% interval over the
//! seeds (`stats::Estimate`): one `<polygon class="band band-a|band-b">` under its
//! line, which shares the line's legend entry (the key: the line over a swatch of the
//! band; "…; shaded: 95% interval"). A band reaching past the y axis's top (two
//! seeds give a wide Student-t interval) is cut there, so that one wide band does not
//! flatten the lines; its numbers are whole in the hover text and the table.
//!
//! Every point says its values: a dot's `<title>`, or, on a line drawn without dots,
//! an invisible `<circle class="hit">` with a `<title>` (the browser shows it on
//! hover). For the keyboard and screen readers the same numbers are a table under
//! the chart (`<details class="chart-data">`).
//!
//! Colours: plotters writes literal colours into presentation attributes, which any
//! CSS rule overrides. So that the style sheet's light and dark themes colour the whole
//! chart, the grid lines get `class="grid"`, the axes `class="axis"`, the legend's box
//! `legend-bg` and `legend-border` and its keys `key-a|key-b`; the text is styled as
//! `.sim-chart text`. The colours below are the light theme's, for a chart without
//! the style sheet.

use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use yew::prelude::*;

use crate::components::export_bar::FigureExport;

use crate::format::fmt_tick;

/// The SVG's size in user units; the style sheet scales it to the panel's width.
const SIZE: (u32, u32) = (640, 250);
/// On a phone (a window under 640 px): at 640 units in a 330 px panel the labels
/// shrank to 5-6 px; at 440 they are 8-9.
const NARROW_SIZE: (u32, u32) = (440, 250);
/// Stroke colours, one per series kind and side; the style sheet has the final say
/// (by class), these keep the legend's swatches and the tagging apart.
const SIDE_COLOUR: [RGBColor; 2] = [RGBColor(0x1f, 0x5f, 0xbf), RGBColor(0x8a, 0x3f, 0xfc)];
const PUBLISHED_COLOUR: [RGBColor; 2] = [RGBColor(0x1f, 0x5f, 0xc0), RGBColor(0x8a, 0x3f, 0xfd)];
/// The bands' fills (drawn translucent; the style sheet's classes colour them).
const BAND_COLOUR: [RGBColor; 2] = [RGBColor(0x1f, 0x5f, 0xbe), RGBColor(0x8a, 0x3f, 0xfb)];
/// How opaque a band is.
const BAND_OPACITY: f64 = 0.18;
const AXIS: RGBColor = RGBColor(0x88, 0x88, 0x88);
const GRID: RGBColor = RGBColor(0xe6, 0xe6, 0xe6);
const TICK: RGBColor = RGBColor(0x55, 0x55, 0x55);
/// B's model line: dash and gap, in the SVG's units; three dashes fill its 16-unit
/// legend key. A pattern, not only a colour, tells B from A (and from the published
/// lines' dots), also where the two coincide.
const B_DASH: (i32, i32) = (4, 2);
/// The published lines: dots (zero-length dashes with round caps) and a square mark
/// on each point. With B's model line dashed `4 2` in the same violet, a longer dash
/// (`5 4`, until session 31) was hard to tell from it; dots and squares are not.
const PUBLISHED_DASH: (i32, i32) = (0, 5);
/// A published point's square mark: its side, in the SVG's units.
const MARK: f64 = 7.0;

/// One line: side A (0) or B (1), measured by the model or published.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub side: usize,
    pub label: String,
    /// (x, y) in the chart's units; x as [`XAxis`] says.
    pub points: Vec<(f64, f64)>,
    pub published: bool,
    /// (x, lo, hi): the 95% interval around the points, where there is one (empty:
    /// no band; one seed has no interval).
    pub band: Vec<(f64, f64, f64)>,
}

impl Series {
    fn colour(&self) -> RGBColor {
        let side = self.side.min(1);
        if self.published {
            PUBLISHED_COLOUR[side]
        } else {
            SIDE_COLOUR[side]
        }
    }

    /// The attributes its polyline gets.
    fn tag(&self) -> String {
        let side = if self.side == 0 { "a" } else { "b" };
        let published = if self.published {
            " published-line"
        } else {
            ""
        };
        let dash = if self.published {
            format!(
                r#" stroke-dasharray="{} {}" stroke-linecap="round""#,
                PUBLISHED_DASH.0, PUBLISHED_DASH.1
            )
        } else if self.side > 0 {
            format!(r#" stroke-dasharray="{} {}""#, B_DASH.0, B_DASH.1)
        } else {
            String::new()
        };
        format!(
            r#"class="line{published} line-{side}" {}{dash}"#,
            self.side_attr()
        )
    }

    /// Its legend key's three pieces, (from, to) along 16 units: solid, `B_DASH`'s
    /// three dashes, or for a published line two dots and its square mark between
    /// them (the legend's closure draws the third piece as the square).
    fn key_pieces(&self) -> [(i32, i32); 3] {
        let (on, off) = B_DASH;
        match (self.published, self.side > 0) {
            (true, _) => [(0, 2), (14, 16), (5, 11)],
            (false, true) => [(0, on), (on + off, 2 * on + off), (2 * (on + off), 16)],
            (false, false) => [(0, 6), (6, 11), (11, 16)],
        }
    }

    /// `data-side="a"` or `"b"`: which patch set the element draws.
    fn side_attr(&self) -> String {
        format!(r#"data-side="{}""#, self.side_tag())
    }

    fn side_tag(&self) -> &'static str {
        if self.side == 0 {
            "a"
        } else {
            "b"
        }
    }

    /// The band's legend entry.
    fn band_label(&self) -> String {
        format!("{}: 95% interval", self.label)
    }

    /// The interval at `x`, if the band has one there.
    fn band_at(&self, x: f64) -> Option<(f64, f64)> {
        self.band
            .iter()
            .find(|b| b.0 == x)
            .map(|&(_, lo, hi)| (lo, hi))
    }
}

/// What x is.
#[derive(Clone, Debug, PartialEq)]
pub enum XAxis {
    /// Simulated time over a window of this many ms.
    Ms(f64),
    /// Evenly spaced scales (threads, clients …): x is the index into these.
    Scales(Vec<u32>),
}

#[derive(Properties, Clone, Debug, PartialEq)]
pub struct ChartProps {
    /// What the chart shows, for screen readers.
    pub label: AttrValue,
    pub x: XAxis,
    /// The axes' titles, with their units: "simulated time (ms)", "throughput (MB/s)".
    pub x_desc: AttrValue,
    pub y_desc: AttrValue,
    /// A point's x and y as a hover text says them: x's word after a scale ("4
    /// clients"; unused for time, which is "30 ms"), y's unit after the value.
    pub x_name: AttrValue,
    pub y_unit: AttrValue,
    pub series: Vec<Series>,
    /// A dot on every point of the model's series (a sweep's points are few).
    #[prop_or_default]
    pub dots: bool,
    /// The downloads' file name without extension (machine, kernel, seed).
    #[prop_or(AttrValue::Static("schedlab-chart"))]
    pub stem: AttrValue,
}

/// Whether A's and B's model lines are the same points (the kernels gave the same
/// numbers): then only B's dashes over A's line show there are two.
pub fn identical(series: &[Series]) -> bool {
    let model = |side| series.iter().find(|s| s.side == side && !s.published);
    matches!((model(0), model(1)), (Some(a), Some(b)) if !a.points.is_empty() && a.points == b.points)
}

/// The chart. A function component, so it redraws only when its props change.
#[function_component(Chart)]
pub fn chart(props: &ChartProps) -> Html {
    let same = identical(&props.series);
    let label = if same {
        format!(
            "{}; A and B identical: B's dashed line lies on A's",
            props.label
        )
    } else {
        props.label.to_string()
    };
    let published = props.series.iter().filter(|s| s.published).count();
    let bands = props.series.iter().filter(|s| !s.band.is_empty()).count();
    let narrow = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64())
        .is_some_and(|w| w < 640.0);
    let body = match svg(props, if narrow { NARROW_SIZE } else { SIZE }) {
        Ok(svg) => Html::from_html_unchecked(svg.into()),
        Err(e) => html! { <p class="error">{ format!("The chart could not be drawn: {e}") }</p> },
    };
    html! {
        <>
            <div class="sim-chart" role="img" aria-label={label}
                data-identical={same.to_string()}
                data-series-count={props.series.len().to_string()}
                data-published-count={published.to_string()}
                data-band-count={bands.to_string()}>
                { body }
            </div>
            if same {
                <p class="sim-note chart-same">
                    { "A and B identical: B's dashed line lies on A's solid line." }
                </p>
            }
            { data_table(props) }
            <FigureExport selector=".sim-chart svg" stem={props.stem.clone()}
                what="the chart" hook="chart" />
        </>
    }
}

/// A point's x as a reader says it: "30 ms", "4 clients".
fn x_text(props: &ChartProps, x: f64) -> String {
    match &props.x {
        XAxis::Ms(_) => format!("{x:.0} ms"),
        XAxis::Scales(sc) => sc
            .get(x.round().max(0.0) as usize)
            .map_or_else(String::new, |v| format!("{v} {}", props.x_name)),
    }
}

/// What a point's hover text says: "A 6.6: 30 ms: 2,310 MB/s", and its interval
/// where it has one (with no further ": ", which separates the three parts).
fn point_text(props: &ChartProps, s: &Series, (x, y): (f64, f64)) -> String {
    let band = s.band_at(x).map_or_else(String::new, |(lo, hi)| {
        format!(" (95% interval {} to {})", fmt_tick(lo), fmt_tick(hi))
    });
    format!(
        "{}: {}: {} {}{band}",
        s.label,
        x_text(props, x),
        fmt_tick(y),
        props.y_unit
    )
}

/// A y-axis top: 1, 2 or 5 times a power of ten, at least `v`.
fn nice_ceiling(v: f64) -> f64 {
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
fn svg(props: &ChartProps, size: (u32, u32)) -> Result<String, String> {
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
        let mut chart = ChartBuilder::on(&root)
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
    let out = tag_elements(&out, "<polyline", &lines);
    let out = tag_elements(&out, "<line", &grid);
    let out = tag_elements(&out, "<rect", &legend);
    let out = tag_elements(&out, "<circle", &dots);
    let out = tag_elements(&out, "<polygon", &bands);
    let out = title_dots(&out, props);
    Ok(match out.rfind("</svg>") {
        Some(end) => format!("{}{hits}{}", &out[..end], &out[end..]),
        None => out,
    })
}

/// Text as SVG character data.
fn escape(text: &str) -> String {
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
fn svg_colour(attr: &str, c: RGBColor) -> String {
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

/// plotters' SVG backend with one change: a path in the axis colour (the axes and
/// their tick marks) is drawn as `<line>`s, so that every `<polyline>` is a series.
struct AxesAsLines<'a>(SVGBackend<'a>);

type Drawn = Result<(), DrawingErrorKind<<SVGBackend<'static> as DrawingBackend>::ErrorType>>;

impl DrawingBackend for AxesAsLines<'_> {
    type ErrorType = <SVGBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Drawn {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Drawn {
        self.0.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        if style.color().rgb != (AXIS.0, AXIS.1, AXIS.2) {
            return self.0.draw_path(path, style);
        }
        let points: Vec<BackendCoord> = path.into_iter().collect();
        for pair in points.windows(2) {
            self.0.draw_line(pair[0], pair[1], style)?;
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn {
        self.0.fill_polygon(vert, style)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Drawn {
        self.0.draw_text(text, style, pos)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.0.estimate_text_size(text, style)
    }

    fn blit_bitmap(&mut self, pos: BackendCoord, (iw, ih): (u32, u32), src: &[u8]) -> Drawn {
        self.0.blit_bitmap(pos, (iw, ih), src)
    }
}

mod table;
use table::data_table;

#[cfg(test)]
mod tests;
