//! Download buttons: a finished simulation's tables as CSV and JSON (core's
//! `experiment::export`, the bytes `schedlab run|sweep --format csv|json` writes for
//! the same runs), and a figure (a chart, the machine drawing) as SVG and PNG.
//!
//! ```text
//!  RunView ─sweep_order()─▶ [RunReport] ─export::sweep_rows()─▶ sweep_csv / sweep_json  (= schedlab sweep)
//!          ─side_reports()─▶ [RunReport] per side ─▶ run_csv (A's rows, B's) / run_json  (= schedlab run)
//!  + a seed's example ─▶ sweep_csv_published / sweep_json_published  (= schedlab reproduce NAME --scale page)
//!  <svg> ─export::standalone_svg()─▶ .svg, and via a canvas ─▶ .png
//! ```

use std::rc::Rc;

use schedlab_core::experiment::export;
use schedlab_core::patch::PatchSet;
use schedlab_core::reproduce::Example;
use yew::prelude::*;

use crate::export::{download_png, download_text, file_name, find, standalone_svg};
use crate::hooks::use_run::RunView;

/// One file a button downloads.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    /// The button's text, and its `data-export` hook for the browser test.
    pub label: &'static str,
    pub hook: &'static str,
    pub name: String,
    pub mime: &'static str,
    pub text: String,
}

/// A finished run's downloads, or why there are none yet. `machine` names the file.
///
/// - the A/B change by scale, as `schedlab sweep --format csv|json` (one scale for a
///   single run, every scale for a sweep);
/// - for a single run, every metric of every seed, A's rows then B's, as `schedlab
///   run --format csv` prints each side, and each side's `schedlab run --format json`;
/// - for a seed's example with published rows, the change beside the published one,
///   as CSV and JSON (`schedlab reproduce NAME --scale page --format csv|json`).
pub fn sim_files(
    v: &RunView,
    machine: &str,
    published: Option<&Example>,
) -> Result<Vec<File>, String> {
    let all = v.sweep_order().ok_or("the run is not finished")?;
    let scales = v.scales();
    let rows = export::sweep_rows(&scales, v.n_seeds(), &all).map_err(|e| e.to_string())?;
    let parse = |s: &str| s.parse::<PatchSet>().map_err(|e| e.to_string());
    let a = parse(&v.labels[0])?;
    let b = parse(v.labels.last().unwrap_or(&v.labels[0]))?;
    let kernel = if a == b {
        a.to_string()
    } else {
        format!("{a}-vs-{b}")
    };
    let seed = Some(v.base_seed());
    let name = |what: &str, ext: &str| file_name(machine, &kernel, seed, what, ext);
    let what = if v.sweep() { "sweep" } else { "ab" };
    let wall = v.busy_s();
    let mut files = vec![
        File {
            label: "Change CSV",
            hook: "ab-csv",
            name: name(what, "csv"),
            mime: "text/csv",
            text: export::sweep_csv(&rows),
        },
        File {
            label: "Change JSON",
            hook: "ab-json",
            name: name(what, "json"),
            mime: "application/json",
            text: export::sweep_json(&all, &rows, a, b, v.n_seeds(), wall)
                .map_err(|e| e.to_string())?,
        },
    ];
    if !v.sweep() {
        let t = scales.first().copied().unwrap_or(1);
        let sides: Vec<Vec<_>> = (0..v.labels.len())
            .map(|s| v.side_reports(t, s).ok_or("the run is not finished"))
            .collect::<Result<_, _>>()?;
        let flat: Vec<_> = sides.iter().flatten().map(|r| (*r).clone()).collect();
        files.push(File {
            label: "Metrics CSV",
            hook: "metrics-csv",
            name: name("metrics", "csv"),
            mime: "text/csv",
            text: export::run_csv(&flat),
        });
        for (i, side) in sides.iter().enumerate() {
            let reports: Vec<_> = side.iter().map(|r| (*r).clone()).collect();
            let n = side.len().max(1) as f64;
            files.push(File {
                label: if i == 0 { "A JSON" } else { "B JSON" },
                hook: if i == 0 { "a-json" } else { "b-json" },
                name: file_name(machine, &v.labels[i], seed, "run", "json"),
                mime: "application/json",
                // The side's share of the workers' time.
                text: export::run_json(&reports, wall * n / all.len().max(1) as f64)
                    .map_err(|e| e.to_string())?,
            });
        }
    }
    if let Some(e) = published.filter(|e| !e.published.is_empty()) {
        files.push(File {
            label: "With published CSV",
            hook: "published-csv",
            name: name("published", "csv"),
            mime: "text/csv",
            text: export::sweep_csv_published(&rows, &e.published, &e.published_values),
        });
        files.push(File {
            label: "With published JSON",
            hook: "published-json",
            name: name("published", "json"),
            mime: "application/json",
            text: export::sweep_json_published(
                &all,
                &rows,
                (a, b),
                v.n_seeds(),
                wall,
                &e.published(),
            )
            .map_err(|e| e.to_string())?,
        });
    }
    Ok(files)
}

#[derive(Properties, PartialEq)]
pub struct ExportBarProps {
    pub files: Rc<Vec<File>>,
    /// What the group is called (its `aria-label`).
    pub label: AttrValue,
}

/// A row of download buttons with a status line.
#[function_component(ExportBar)]
pub fn export_bar(props: &ExportBarProps) -> Html {
    let said = use_state(String::new);
    html! {
        <div class="export-bar" role="group" aria-label={props.label.clone()}>
            <span class="export-title">{ "Download:" }</span>
            { for props.files.iter().map(|f| {
                let (said, f2) = (said.clone(), f.clone());
                let onclick = Callback::from(move |_: MouseEvent| {
                    said.set(match download_text(&f2.name, f2.mime, &f2.text) {
                        Ok(()) => format!("Saved {}.", f2.name),
                        Err(e) => format!("Could not save {}: {e}", f2.name),
                    });
                });
                html! {
                    <button class="export" data-export={f.hook} data-file={f.name.clone()}
                        title={format!("Download {}", f.name)} {onclick}>{ f.label }</button>
                }
            }) }
            <span class="share-feedback" role="status" aria-live="polite">{ (*said).clone() }</span>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct FigureExportProps {
    /// The `<svg>` to save, found when a button is pressed.
    pub selector: AttrValue,
    /// The file name without its extension.
    pub stem: AttrValue,
    /// What the figure is (the buttons' labels: "Save the chart as SVG").
    pub what: AttrValue,
    /// The `data-figure` hook of the buttons (the browser test's).
    pub hook: AttrValue,
    /// Makes the SVG when the figure is not on screen as SVG (the machine drawing);
    /// without it, the element at `selector` is serialised with its styles.
    #[prop_or_default]
    pub render: Option<Callback<(), Option<String>>>,
}

/// SVG and PNG buttons for one figure.
#[function_component(FigureExport)]
pub fn figure_export(props: &FigureExportProps) -> Html {
    let said = use_state(String::new);
    let svg_text = {
        let (selector, render) = (props.selector.clone(), props.render.clone());
        move || -> Option<String> {
            match &render {
                Some(r) => r.emit(()),
                None => find(&selector).and_then(|el| standalone_svg(&el)),
            }
        }
    };
    let on_svg = {
        let (said, stem, get) = (said.clone(), props.stem.clone(), svg_text.clone());
        Callback::from(move |_: MouseEvent| {
            let name = format!("{stem}.svg");
            said.set(match get() {
                None => "The figure is not on screen.".to_string(),
                Some(svg) => match download_text(&name, "image/svg+xml", &svg) {
                    Ok(()) => format!("Saved {name}."),
                    Err(e) => format!("Could not save {name}: {e}"),
                },
            });
        })
    };
    let on_png = {
        let (said, stem, get) = (said.clone(), props.stem.clone(), svg_text);
        Callback::from(move |_: MouseEvent| {
            let name = format!("{stem}.png");
            let Some(svg) = get() else {
                said.set("The figure is not on screen.".to_string());
                return;
            };
            let said = said.clone();
            let shown = name.clone();
            download_png(&svg, name, move |r| {
                said.set(match r {
                    Ok(()) => format!("Saved {shown}."),
                    Err(e) => format!("Could not save {shown}: {e}"),
                })
            });
        })
    };
    html! {
        <div class="export-bar figure-export" role="group" aria-label={format!("Save {}", props.what)}>
            <button class="export" data-figure={props.hook.clone()} data-format="svg"
                aria-label={format!("Save {} as SVG", props.what)} onclick={on_svg}>{ "SVG" }</button>
            <button class="export" data-figure={props.hook.clone()} data-format="png"
                aria-label={format!("Save {} as PNG", props.what)} onclick={on_png}>{ "PNG" }</button>
            <span class="share-feedback" role="status" aria-live="polite">{ (*said).clone() }</span>
        </div>
    }
}
