//! The lessons: the header's Lessons menu and the lesson panel above the results.
//!
//! ```text
//!  Lessons ▾  1 What a sched domain is … 6 Core-scheduling cookies and seed 04
//!  ┌ Lesson 4 of 6 · step 2 of 3 ───────────────────────────── [Close] ┐
//!  │ narration with [glossary] terms and `code`                        │
//!  │ Now try: …                                    ✓ Done: …           │
//!  │ [← Back]  [Next →]            (← → keys while the panel has focus) │
//!  └───────────────────────────────────────────────────────────────────┘
//! ```
//!
//! The lessons, their scenes and tasks are core's (`schedlab_core::lesson`); the step
//! is in the scenario (`lesson`), so the link opens it, in the embed view too. A step
//! loads its scene through `Action::Lesson`; the task's goal is read from the page's
//! scenario and decisions on every render, so "done" appears as soon as it is met.

use schedlab_core::lesson::{self, Lesson, LESSONS};
use schedlab_core::scenario::LessonStep;
use yew::prelude::*;

use crate::components::glossary::rich;
use crate::state::{Action, AppContext};

/// The id of the lesson panel (focused when a lesson opens).
pub const LESSON_ID: &str = "lesson";

/// The header's entry: a disclosure listing the lessons.
#[function_component(LessonsMenu)]
pub fn lessons_menu() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! {};
    };
    let open = use_state(|| false);
    let toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    let onkeydown = {
        let open = open.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Escape" {
                open.set(false);
            }
        })
    };
    // Opened, the list hangs from the button's left edge, or from its right where the
    // left would take it past the screen's edge (the button sits at the header's
    // right on a wide screen: at 1280 px the list reached 21 px past it).
    use_effect_with(*open, |open| {
        let list = open
            .then(|| {
                web_sys::window()?
                    .document()?
                    .get_element_by_id("lessons-list")
            })
            .flatten();
        let width = web_sys::window()
            .and_then(|w| w.inner_width().ok())
            .and_then(|w| w.as_f64());
        if let (Some(list), Some(width)) = (list, width) {
            if list.get_bounding_client_rect().right() > width {
                let _ = list.class_list().add_1("from-right");
            }
        }
    });
    let items = LESSONS.iter().map(|l| {
        let (d, open) = (state.dispatcher(), open.clone());
        let n = l.number;
        let onclick = Callback::from(move |_: MouseEvent| {
            open.set(false);
            d.dispatch(Action::Lesson(Some(LessonStep { lesson: n, step: 1 })));
        });
        html! {
            <li><button type="button" class="lesson-pick" data-lesson={n.to_string()} {onclick}>
                { format!("{}. {}", l.number, l.title) }
            </button></li>
        }
    });
    html! {
        <div class="lessons-menu" {onkeydown}>
            <button type="button" id="lessons-button" aria-expanded={open.to_string()}
                aria-controls="lessons-list" onclick={toggle}>{ "Lessons" }</button>
            if *open {
                <ol id="lessons-list" class="lessons-list">{ for items }</ol>
            }
        </div>
    }
}

/// The open lesson's step, or nothing.
#[function_component(LessonPanel)]
pub fn lesson_panel() -> Html {
    let Some(state) = use_context::<AppContext>() else {
        return html! {};
    };
    // A lesson that opens (from the menu or a link) takes the focus, so its keys work
    // at once; stepping within it leaves the focus where it is.
    use_effect_with(state.scenario.lesson.map(|l| l.lesson), |open| {
        if open.is_some() {
            crate::dom::focus_id(LESSON_ID);
        }
    });
    let Some(at) = state.scenario.lesson else {
        return html! {};
    };
    let d = state.dispatcher();
    let close = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::Lesson(None)))
    };
    let Some(l) = lesson::lesson(at.lesson).filter(|l| at.step as usize <= l.steps.len()) else {
        return html! {
            <section class="lesson-panel" id={LESSON_ID} tabindex="-1" aria-label="lesson">
                <p class="error">{ format!("This link names lesson {}.{}, which this page does not have.", at.lesson, at.step) }</p>
                <button type="button" onclick={close}>{ "Close" }</button>
            </section>
        };
    };
    let go = |step: u32| {
        let d = d.clone();
        let lesson = l.number;
        move || d.dispatch(Action::Lesson(Some(LessonStep { lesson, step })))
    };
    let n = l.steps.len() as u32;
    let back = (at.step > 1).then(|| go(at.step - 1));
    let next = (at.step < n).then(|| go(at.step + 1));
    let onkeydown = {
        let (back, next, d) = (back.clone(), next.clone(), d.clone());
        Callback::from(move |e: KeyboardEvent| {
            // Keys typed into a field or a picker are the field's.
            let in_field = e
                .target_dyn_into::<web_sys::Element>()
                .is_some_and(|t| matches!(t.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"));
            if in_field {
                return;
            }
            match e.key().as_str() {
                "ArrowRight" | "PageDown" => {
                    if let Some(f) = &next {
                        e.prevent_default();
                        f();
                    }
                }
                "ArrowLeft" | "PageUp" => {
                    if let Some(f) = &back {
                        e.prevent_default();
                        f();
                    }
                }
                "Escape" if !e.default_prevented() => d.dispatch(Action::Lesson(None)),
                _ => {}
            }
        })
    };
    let on_back = back.map(|f| Callback::from(move |_: MouseEvent| f()));
    let on_next = next.map(|f| Callback::from(move |_: MouseEvent| f()));
    let step = &l.steps[at.step as usize - 1];
    let last = at.step == n;
    html! {
        <section class="lesson-panel" id={LESSON_ID} tabindex="-1" {onkeydown}
            aria-labelledby="lesson-title" data-lesson={l.number.to_string()} data-step={at.step.to_string()}>
            <div class="lesson-head">
                <h2 id="lesson-title">
                    <span class="lesson-count">{ format!("Lesson {} of {} · step {} of {n}", l.number, LESSONS.len(), at.step) }</span>
                    { l.title }
                </h2>
                <button type="button" class="lesson-close" onclick={close} aria-label="close the lesson">{ "×" }</button>
            </div>
            <p class="lesson-text">{ rich(step.text) }</p>
            if last {
                { task(l, &state) }
            }
            <div class="lesson-nav">
                <button type="button" id="lesson-back" disabled={on_back.is_none()} onclick={on_back}>{ "← Back" }</button>
                <button type="button" id="lesson-next" disabled={on_next.is_none()} onclick={on_next}>{ "Next →" }</button>
                <span class="hint">{ "← and → step while the lesson has focus" }</span>
            </div>
        </section>
    }
}

/// The "now try" task and whether the page meets its goal.
fn task(l: &Lesson, state: &AppContext) -> Html {
    let ok = |o: &Option<Result<std::rc::Rc<crate::state::WakeOutcome>, String>>| {
        o.as_ref()
            .and_then(|r| r.as_ref().ok())
            .map(|o| o.decision.clone())
    };
    let (a, b) = (ok(&state.wake_a), ok(&state.wake_b));
    let done = l.task.done(&state.scenario, a.as_ref(), b.as_ref());
    html! {
        <div class={classes!("lesson-task", done.then_some("done"))}>
            <p><strong>{ "Now try: " }</strong>{ rich(l.task.text) }</p>
            <p class="task-status" role="status" aria-live="polite">
                { if done { l.task.done } else { "" } }
            </p>
        </div>
    }
}
