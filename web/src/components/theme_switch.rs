//! The header's colour-theme switch: auto (the system's `prefers-color-scheme`), light
//! or dark.
//!
//! ```text
//!  ( Auto | Light | Dark )  ─▶ localStorage["schedlab-theme"]
//!                           ─▶ <html data-theme="auto|light|dark">  ─▶ static/css/00-colours.css
//! ```
//!
//! The choice is kept in `localStorage`, not in the link: it is the reader's, not the
//! scenario's. static/theme.js applies the saved choice before the first paint (a
//! classic script in `<head>`, allowed by the page's `script-src 'self'`); this
//! component reads it back from the attribute and writes both on a click.

use yew::prelude::*;

/// The `localStorage` key static/theme.js reads too.
pub const STORAGE_KEY: &str = "schedlab-theme";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Theme {
    /// Follow the system's `prefers-color-scheme`.
    Auto,
    Light,
    Dark,
}

impl Theme {
    /// In the switch's order.
    pub const ALL: [Theme; 3] = [Theme::Auto, Theme::Light, Theme::Dark];

    /// The `data-theme` value and the stored one.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// A stored value; anything else (nothing stored, an old or edited value) is auto.
    pub fn parse(s: Option<&str>) -> Theme {
        match s {
            Some("light") => Theme::Light,
            Some("dark") => Theme::Dark,
            _ => Theme::Auto,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Theme::Auto => "Auto",
            Theme::Light => "Light",
            Theme::Dark => "Dark",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Theme::Auto => "Follow the system's light or dark setting",
            Theme::Light => "Always light",
            Theme::Dark => "Always dark",
        }
    }
}

/// The `<html>` element, if there is a document.
fn root() -> Option<web_sys::Element> {
    web_sys::window()?.document()?.document_element()
}

/// The theme static/theme.js applied (or the stored one, if it has not run).
fn current() -> Theme {
    let applied = root().and_then(|r| r.get_attribute("data-theme"));
    let stored = || {
        web_sys::window()?
            .local_storage()
            .ok()??
            .get_item(STORAGE_KEY)
            .ok()?
    };
    Theme::parse(applied.or_else(stored).as_deref())
}

/// Shows `theme` and keeps it for the next visit. Storage may be refused (private
/// modes, a full quota): the page still switches, it just forgets.
fn apply(theme: Theme) {
    if let Some(r) = root() {
        let _ = r.set_attribute("data-theme", theme.as_str());
    }
    if let Some(Ok(Some(storage))) = web_sys::window().map(|w| w.local_storage()) {
        let _ = storage.set_item(STORAGE_KEY, theme.as_str());
    }
}

/// The ARIA radio group pattern: one tab stop (the chosen theme), arrow keys move the
/// choice, so the switch costs the keyboard one Tab press on the way to the tabs.
#[function_component(ThemeSwitch)]
pub fn theme_switch() -> Html {
    let theme = use_state(current);
    let choose = {
        let theme = theme.clone();
        move |t: Theme| {
            apply(t);
            theme.set(t);
        }
    };
    let button = |t: Theme| {
        let onclick = {
            let choose = choose.clone();
            Callback::from(move |_: MouseEvent| choose(t))
        };
        let checked = *theme == t;
        html! {
            <button class={classes!("seg", checked.then_some("active"))} {onclick}
                role="radio" aria-checked={checked.to_string()} tabindex={if checked { "0" } else { "-1" }}
                title={t.title()} data-theme-choice={t.as_str()}>
                { t.label() }
            </button>
        }
    };
    let onkeydown = {
        let choose = choose.clone();
        Callback::from(move |e: KeyboardEvent| {
            if let Some(i) = crate::dom::rove(&e, "[role=radiogroup]", "[role=radio]") {
                choose(Theme::ALL[i]);
            }
        })
    };
    html! {
        <div class="theme-switch segmented" role="radiogroup" aria-label="Colour theme" {onkeydown}>
            { for Theme::ALL.into_iter().map(button) }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_round_trip_and_others_mean_auto() {
        for t in Theme::ALL {
            assert_eq!(Theme::parse(Some(t.as_str())), t);
        }
        for other in [None, Some(""), Some("Dark"), Some("sepia")] {
            assert_eq!(Theme::parse(other), Theme::Auto, "{other:?}");
        }
    }
}
