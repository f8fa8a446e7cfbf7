//! Downloads made in the page, with no server round trip: text (CSV, JSON, the
//! kernel's text) and figures (SVG, PNG) become a `Blob`, an object URL and a click
//! on a temporary `<a download>`.
//!
//! ```text
//!  CSV / JSON / .txt ─────────────────────────▶ Blob ─▶ URL.createObjectURL ─▶ <a download>
//!  <svg> on screen ─ clone, computed styles inlined ─▶ standalone SVG text ─┬─▶ the same (.svg)
//!                     data: URL ─▶ <img> ─▶ <canvas> (2×) ─▶ toBlob(png) ───┘─▶ the same (.png)
//! ```
//!
//! The Content-Security-Policy needs no change: `<a download>` of a `blob:` URL is a
//! download, which no CSP directive governs, and the PNG's `<img>` loads its SVG from a
//! `data:` URL, which `img-src 'self' data:` already allows (a `blob:` URL would have
//! needed `img-src blob:`). The SVG is drawn from a data URL without foreign content,
//! so the canvas is not tainted and `toBlob` works.
//!
//! The CSV and JSON bytes are core's (`experiment::export`), the CLI's own functions.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, Element, HtmlAnchorElement, HtmlCanvasElement, Url};

/// `schedlab-MACHINE-KERNEL[-seedN][-WHAT].EXT`, each part reduced to characters safe
/// in a file name (letters, digits, `.`, `+`, `_`, `-`; anything else becomes `-`).
pub fn file_name(machine: &str, kernel: &str, seed: Option<u64>, what: &str, ext: &str) -> String {
    format!("{}.{ext}", file_stem(machine, kernel, seed, what))
}

/// [`file_name`] without its extension.
pub fn file_stem(machine: &str, kernel: &str, seed: Option<u64>, what: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '_' | '-') {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    let mut name = format!("schedlab-{}-{}", clean(machine), clean(kernel));
    if let Some(s) = seed {
        name += &format!("-seed{s}");
    }
    if !what.is_empty() {
        name += "-";
        name += &clean(what);
    }
    name
}

/// Saves `blob` as `name`: an object URL clicked through a temporary `<a download>`,
/// revoked after the click.
fn save_blob(blob: &Blob, name: &str) -> Result<(), JsValue> {
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let url = Url::create_object_url_with_blob(blob)?;
    let a: HtmlAnchorElement = doc.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.set_attribute("class", "visually-hidden")?;
    let body = doc.body().ok_or("no body")?;
    body.append_child(&a)?;
    a.click();
    a.remove();
    // The click has started the download; the URL may go (after this task, so a
    // browser that reads it asynchronously still finds it).
    let revoke = Closure::once_into_js(move || {
        let _ = Url::revoke_object_url(&url);
    });
    web_sys::window()
        .ok_or("no window")?
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 1000)?;
    Ok(())
}

/// Downloads `text` as `name` with the MIME type `mime`.
pub fn download_text(name: &str, mime: &str, text: &str) -> Result<(), String> {
    let opts = BlobPropertyBag::new();
    opts.set_type(mime);
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let blob = Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(js_err)?;
    save_blob(&blob, name).map_err(js_err)
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| "the browser refused".to_string())
}

/// The style properties an SVG figure needs to look the same outside the page.
const STYLE_PROPS: [&str; 12] = [
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "stroke-opacity",
    "opacity",
    "font-family",
    "font-size",
    "font-weight",
    "text-anchor",
    "dominant-baseline",
];

/// The first element matching `selector`.
pub fn find(selector: &str) -> Option<Element> {
    web_sys::window()?
        .document()?
        .query_selector(selector)
        .ok()
        .flatten()
}

/// `svg` (an element on screen) as a standalone SVG file: a deep clone whose every
/// element carries its computed style (the page's style sheet and theme do not travel
/// with a file), an `xmlns`, its on-screen size, and a background of the page's
/// panel colour so text is readable on any viewer.
pub fn standalone_svg(svg: &Element) -> Option<String> {
    let w = web_sys::window()?;
    let copy: Element = svg.clone_node_with_deep(true).ok()?.dyn_into().ok()?;
    let originals = svg.query_selector_all("*").ok()?;
    let copies = copy.query_selector_all("*").ok()?;
    let inline = |from: &Element, to: &Element| {
        if let Ok(Some(cs)) = w.get_computed_style(from) {
            let style: String = STYLE_PROPS
                .iter()
                .filter_map(|p| {
                    let v = cs.get_property_value(p).ok()?;
                    (!v.is_empty()).then(|| format!("{p}:{v};"))
                })
                .collect();
            let _ = to.set_attribute("style", &style);
        }
    };
    inline(svg, &copy);
    for i in 0..originals.length().min(copies.length()) {
        if let (Some(a), Some(b)) = (originals.item(i), copies.item(i)) {
            if let (Ok(a), Ok(b)) = (a.dyn_into::<Element>(), b.dyn_into::<Element>()) {
                inline(&a, &b);
            }
        }
    }
    let rect = svg.get_bounding_client_rect();
    let (width, height) = (
        rect.width().round().max(1.0),
        rect.height().round().max(1.0),
    );
    let _ = copy.set_attribute("xmlns", "http://www.w3.org/2000/svg");
    if copy.get_attribute("viewBox").is_none() {
        let _ = copy.set_attribute("viewBox", &format!("0 0 {width} {height}"));
    }
    let _ = copy.set_attribute("width", &width.to_string());
    let _ = copy.set_attribute("height", &height.to_string());
    let background = w
        .get_computed_style(&svg.closest("section, .domains, body").ok()??)
        .ok()
        .flatten()
        .and_then(|cs| cs.get_property_value("background-color").ok())
        .filter(|c| !c.is_empty() && c != "rgba(0, 0, 0, 0)")
        .unwrap_or_else(|| "#ffffff".to_string());
    let doc = w.document()?;
    let bg = doc
        .create_element_ns(Some("http://www.w3.org/2000/svg"), "rect")
        .ok()?;
    for (k, v) in [
        ("x", "0"),
        ("y", "0"),
        ("width", "100%"),
        ("height", "100%"),
        ("fill", background.as_str()),
    ] {
        let _ = bg.set_attribute(k, v);
    }
    let _ = copy.insert_before(&bg, copy.first_child().as_ref());
    let xml = web_sys::XmlSerializer::new()
        .ok()?
        .serialize_to_string(&copy)
        .ok()?;
    Some(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{xml}\n"
    ))
}

/// The width and height an SVG file's text declares (`width="…" height="…"` on its
/// root), for the PNG's canvas. The page's own figures write plain decimals, read here
/// by serde_json's number parser, which the page holds anyway (`str::parse::<f64>`
/// would link core's second one).
pub fn svg_size(svg: &str) -> Option<(f64, f64)> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let attr = |name: &str| -> Option<f64> {
        let at = root.find(&format!(" {name}=\""))? + name.len() + 3;
        let rest = &root[at..];
        serde_json::from_str(&rest[..rest.find('"')?]).ok()
    };
    Some((attr("width")?, attr("height")?))
}

/// How an asynchronous download went, heard once.
type Finish = std::rc::Rc<dyn Fn(Result<(), String>)>;

/// Downloads the SVG text `svg` as a PNG at twice its size (sharp on slides): drawn
/// into a canvas from a `data:` URL, then `canvas.toBlob()`. Asynchronous: `done`
/// hears how it went, once.
pub fn download_png(svg: &str, name: String, done: impl FnOnce(Result<(), String>) + 'static) {
    let slot = std::cell::RefCell::new(Some(done));
    let finish: Finish = std::rc::Rc::new(move |r| {
        if let Some(f) = slot.borrow_mut().take() {
            f(r);
        }
    });
    if let Err(e) = start_png(svg, name, finish.clone()) {
        finish(Err(e));
    }
}

fn start_png(svg: &str, name: String, finish: Finish) -> Result<(), String> {
    const SCALE: f64 = 2.0;
    let (w, h) = svg_size(svg).ok_or("the figure has no size")?;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let img = web_sys::HtmlImageElement::new().map_err(js_err)?;
    let url = format!(
        "data:image/svg+xml;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(svg))
    );
    let canvas: HtmlCanvasElement = doc
        .create_element("canvas")
        .map_err(js_err)?
        .dyn_into()
        .map_err(|_| "no canvas")?;
    canvas.set_width((w * SCALE) as u32);
    canvas.set_height((h * SCALE) as u32);
    let on_error = {
        let finish = finish.clone();
        Closure::once_into_js(move || finish(Err("the browser could not draw the SVG".into())))
    };
    let drawn = img.clone();
    let onload = Closure::once_into_js(move || {
        let draw = || -> Result<(), String> {
            let ctx: web_sys::CanvasRenderingContext2d = canvas
                .get_context("2d")
                .map_err(js_err)?
                .ok_or("no 2d context")?
                .dyn_into()
                .map_err(|_| "no 2d context")?;
            ctx.scale(SCALE, SCALE).map_err(js_err)?;
            ctx.draw_image_with_html_image_element_and_dw_and_dh(&drawn, 0.0, 0.0, w, h)
                .map_err(js_err)?;
            let saved = finish.clone();
            let on_blob = Closure::once_into_js(move |blob: JsValue| {
                saved(
                    blob.dyn_into::<Blob>()
                        .map_err(|_| "the canvas gave no PNG".to_string())
                        .and_then(|b| save_blob(&b, &name).map_err(js_err)),
                );
            });
            canvas
                .to_blob_with_type(on_blob.unchecked_ref(), "image/png")
                .map_err(js_err)
        };
        if let Err(e) = draw() {
            finish(Err(e));
        }
    });
    img.set_onload(Some(onload.unchecked_ref()));
    img.set_onerror(Some(on_error.unchecked_ref()));
    img.set_src(&url);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_say_machine_kernel_and_seed() {
        assert_eq!(
            file_name("kunpeng920-6426", "6.8", Some(1), "", "csv"),
            "schedlab-kunpeng920-6426-6.8-seed1.csv"
        );
        assert_eq!(
            file_name("my box/2", "6.6+cluster vs 6.6", None, "dmesg cpu 3", "txt"),
            "schedlab-my-box-2-6.6+cluster-vs-6.6-dmesg-cpu-3.txt"
        );
    }

    #[test]
    fn an_svg_files_size_is_read_from_its_root() {
        let svg = "<?xml version=\"1.0\"?>\n<svg xmlns=\"x\" viewBox=\"0 0 640 360\" width=\"640\" height=\"360\"><rect width=\"5\" height=\"7\"/></svg>";
        assert_eq!(svg_size(svg), Some((640.0, 360.0)));
        let odd = "<svg width=\"812.5\" height=\"1e2\">";
        assert_eq!(svg_size(odd), Some((812.5, 100.0)));
        assert_eq!(svg_size("<svg width=\"wide\" height=\"3\">"), None);
        assert_eq!(svg_size("<svg>"), None);
        assert_eq!(svg_size("no svg"), None);
    }
}
