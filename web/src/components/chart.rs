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
//! numbers, dashed by the style sheet) and `data-side="a|b"`; a series drawn with
//! dots has one `<circle>` per point; the axes and tick marks are `<line>`s, so every
//! polyline is a series. `.sim-chart` carries the counts as data attributes.
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
/// Stroke colours, one per series kind and side; the style sheet has the final say
/// (by class), these keep the legend's swatches and the tagging apart.
const SIDE_COLOUR: [RGBColor; 2] = [RGBColor(0x1f, 0x5f, 0xbf), RGBColor(0x8a, 0x3f, 0xfc)];
const PUBLISHED_COLOUR: [RGBColor; 2] = [RGBColor(0x1f, 0x5f, 0xc0), RGBColor(0x8a, 0x3f, 0xfd)];
const AXIS: RGBColor = RGBColor(0x88, 0x88, 0x88);
const GRID: RGBColor = RGBColor(0xe6, 0xe6, 0xe6);
const TICK: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// One line: side A (0) or B (1), measured by the model or published.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub side: usize,
    pub label: String,
    /// (x, y) in the chart's units; x as [`XAxis`] says.
    pub points: Vec<(f64, f64)>,
    pub published: bool,
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
        format!(
            r#"class="line{published} line-{side}" {}"#,
            self.side_attr()
        )
    }

    /// `data-side="a"` or `"b"`: which patch set the element draws.
    fn side_attr(&self) -> String {
        let side = if self.side == 0 { "a" } else { "b" };
        format!(r#"data-side="{side}""#)
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
    pub x_desc: AttrValue,
    pub y_desc: AttrValue,
    pub series: Vec<Series>,
    /// A dot on every point of the model's series (a sweep's points are few).
    #[prop_or_default]
    pub dots: bool,
    /// The downloads' file name without extension (machine, kernel, seed).
    #[prop_or(AttrValue::Static("schedlab-chart"))]
    pub stem: AttrValue,
}

/// The chart. A function component, so it redraws only when its props change.
#[function_component(Chart)]
pub fn chart(props: &ChartProps) -> Html {
    let published = props.series.iter().filter(|s| s.published).count();
    let body = match svg(props) {
        Ok(svg) => Html::from_html_unchecked(svg.into()),
        Err(e) => html! { <p class="error">{ format!("The chart could not be drawn: {e}") }</p> },
    };
    html! {
        <>
            <div class="sim-chart" role="img" aria-label={props.label.clone()}
                data-series-count={props.series.len().to_string()}
                data-published-count={published.to_string()}>
                { body }
            </div>
            <FigureExport selector=".sim-chart svg" stem={props.stem.clone()}
                what="the chart" hook="chart" />
        </>
    }
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
fn svg(props: &ChartProps) -> Result<String, String> {
    let top = nice_ceiling(
        props
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0, f64::max)
            * 1.05,
    );
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
    {
        let root = AxesAsLines(SVGBackend::with_string(&mut out, SIZE)).into_drawing_area();
        // plotters draws text at about 0.8 of the size asked for: 11 and 12 px.
        let font = |px: f64| ("sans-serif", px / 0.8).into_font().color(&TICK);
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
        for s in &props.series {
            let colour = s.colour();
            let style = ShapeStyle::from(colour).stroke_width(2);
            let dots = if props.dots && !s.published { 3 } else { 0 };
            let published = s.published;
            chart
                .draw_series(
                    LineSeries::new(s.points.iter().copied(), style.filled()).point_size(dots),
                )
                .map_err(|e| e.to_string())?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    // Two pieces: one line, or a dash and a gap for published numbers.
                    let gap = if published { 4 } else { 0 };
                    EmptyElement::at((x, y))
                        + Rectangle::new([(0, -1), (6, 2)], colour.filled())
                        + Rectangle::new([(6 + gap, -1), (16, 2)], colour.filled())
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
    let legend = [
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
    Ok(title_dots(&out, props))
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
            Some((s, (x, y))) => {
                let x = match &props.x {
                    XAxis::Ms(_) => format!("{x:.0} ms"),
                    XAxis::Scales(sc) => sc
                        .get(x.round().max(0.0) as usize)
                        .map_or_else(String::new, |v| format!("{} {v}", props.x_desc)),
                };
                let text = format!("{}: {x}: {} {}", s.label, fmt_tick(y), props.y_desc);
                let text = text
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;");
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

#[cfg(test)]
mod tests {
    use super::*;

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
        };
        let props = ChartProps {
            label: "test".into(),
            x: XAxis::Scales(vec![1, 4, 8]),
            x_desc: "clients".into(),
            y_desc: "MB/s".into(),
            series: vec![
                series(0, false),
                series(1, false),
                series(0, true),
                series(1, true),
            ],
            dots: true,
            stem: "schedlab-chart".into(),
        };
        let svg = svg(&props).expect("draws");
        assert_eq!(svg.matches("<polyline").count(), 4, "{svg}");
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
        assert_eq!(svg.matches("<circle").count(), 6, "{svg}");
        assert_eq!(svg.matches(r#"<circle data-side="a""#).count(), 3, "{svg}");
        assert_eq!(svg.matches(r#"<circle data-side="b""#).count(), 3, "{svg}");
        // Each dot says its values on hover, in its series' point order.
        assert_eq!(svg.matches("<title>").count(), 6, "{svg}");
        assert!(
            svg.contains("<title>side 0: clients 4: 30 MB/s</title></circle>"),
            "{svg}"
        );
        assert!(
            svg.contains("<title>side 1: clients 8: 20 MB/s</title></circle>"),
            "{svg}"
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
        let props = ChartProps {
            label: "test".into(),
            x: XAxis::Ms(60.0),
            x_desc: "ms".into(),
            y_desc: "MB/s".into(),
            series: vec![Series {
                side: 1,
                label: "B".into(),
                points: vec![(0.0, 1.0), (60.0, 2.0)],
                published: false,
            }],
            dots: false,
            stem: "schedlab-chart".into(),
        };
        let svg = svg(&props).expect("draws");
        let lines = svg.matches("<line").count();
        let tagged = svg.matches(r#"<line class="axis""#).count()
            + svg.matches(r#"<line class="grid""#).count();
        assert!(lines > 0 && tagged == lines, "{tagged} of {lines}: {svg}");
        for class in ["legend-bg", "legend-border", "key-b"] {
            assert!(
                svg.contains(&format!(r#"<rect class="{class}""#)),
                "{class}: {svg}"
            );
        }
        assert_eq!(svg.matches("<rect").count(), 4, "{svg}");
    }
}
