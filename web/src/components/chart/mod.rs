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
//!
//! The files: this one holds the series, the props and the component; `draw` the
//! axes' scales and the plotters drawing; `tag` the classes and titles given to what
//! plotters wrote; `backend` the SVG backend that draws the axes as `<line>`s;
//! `table` the numbers under the chart.

use plotters::style::RGBColor;
use yew::prelude::*;

use crate::components::export_bar::FigureExport;
use crate::format::fmt_tick;

mod backend;
mod draw;
mod table;
mod tag;

use draw::svg;
use table::data_table;

/// The SVG's size in user units; the style sheet scales it to the panel's width.
const SIZE: (u32, u32) = (640, 250);
/// On a phone (a window under 640 px) the SVG is drawn about as wide as its panel,
/// so that a unit is a pixel and the labels are their own size (11 px and up): at 640
/// units in a 330 px panel they shrank to 5-6 px, at 440 (sessions 30-36) to 8.
/// The panel is the window less `NARROW_MARGIN` px (08-phone.css's paddings of the
/// page and the panel, and the borders: 61 px); the width is held within
/// `NARROW_WIDTH`, and the height stays the wide chart's.
const NARROW_MARGIN: f64 = 64.0;
const NARROW_WIDTH: (f64, f64) = (280.0, 440.0);
const NARROW_HEIGHT: u32 = 250;
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
    let window = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64());
    let body = match svg(props, size_for(window)) {
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

/// The SVG's size in a window `window` px wide (unknown: the wide chart's).
fn size_for(window: Option<f64>) -> (u32, u32) {
    match window {
        Some(w) if w < 640.0 => {
            let (lo, hi) = NARROW_WIDTH;
            ((w - NARROW_MARGIN).clamp(lo, hi) as u32, NARROW_HEIGHT)
        }
        _ => SIZE,
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

#[cfg(test)]
mod tests;
