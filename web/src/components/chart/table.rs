//! The chart's numbers as a table under it (`<details class="chart-data">`), for the
//! keyboard and screen readers: the same values the hover texts say.

use yew::prelude::*;

use super::{x_text, ChartProps, Series, XAxis};
use crate::format::fmt_tick;

/// The chart's numbers as a table, for the keyboard and screen readers: a row per x,
/// a column per series (and per band).
pub(super) fn data_table(props: &ChartProps) -> Html {
    let mut xs: Vec<f64> = props
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.is_empty() {
        return html! {};
    }
    let value = |s: &Series, x: f64| {
        s.points
            .iter()
            .find(|p| p.0 == x)
            .map_or_else(|| "–".to_string(), |p| fmt_tick(p.1))
    };
    let x_head = match &props.x {
        XAxis::Ms(_) => props.x_desc.to_string(),
        XAxis::Scales(_) => props.x_name.to_string(),
    };
    html! {
        <details class="chart-data">
            <summary>{ "The chart's numbers as a table" }</summary>
            <div class="table-scroll" tabindex="0" role="region"
                aria-label={format!("{}: the numbers", props.label)}>
                <table class="sim-results chart-table">
                    <thead><tr>
                        <th scope="col">{ x_head }</th>
                        { for props.series.iter().map(|s| html! {
                            <>
                                <th scope="col">{ format!("{} ({})", s.label, props.y_unit) }</th>
                                if !s.band.is_empty() {
                                    <th scope="col">{ s.band_label() }</th>
                                }
                            </>
                        }) }
                    </tr></thead>
                    <tbody>
                        { for xs.iter().map(|&x| html! {
                            <tr>
                                <th scope="row">{ match &props.x {
                                    XAxis::Ms(_) => format!("{x:.0}"),
                                    XAxis::Scales(_) => x_text(props, x),
                                } }</th>
                                { for props.series.iter().map(|s| html! {
                                    <>
                                        <td>{ value(s, x) }</td>
                                        if !s.band.is_empty() {
                                            <td>{ s.band_at(x).map_or_else(|| "–".to_string(),
                                                |(lo, hi)| format!("{} to {}", fmt_tick(lo), fmt_tick(hi))) }</td>
                                        }
                                    </>
                                }) }
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
        </details>
    }
}
