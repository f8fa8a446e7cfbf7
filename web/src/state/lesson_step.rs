//! The lesson reducer step on [`AppState`]: opening a lesson step loads its own scene
//! unless the page shows it already; a step without one keeps the page.

use schedlab_core::lesson;
use schedlab_core::scenario::LessonStep;

use super::AppState;

/// What opening a lesson step did.
pub(super) enum Opened {
    /// No such lesson or step: nothing changes.
    Unknown,
    /// A step without a scene of its own: the page stays as the student left it.
    Kept,
    /// The step's scene is on the page (loaded, or already there), or the banner says
    /// why it cannot load.
    Loaded,
}

impl AppState {
    /// [`Action::Lesson`](super::Action::Lesson) with a step: `next` (the state after
    /// `self`) opens it.
    pub(super) fn open_lesson(&self, next: &mut AppState, at: LessonStep) -> Opened {
        let Some(step) =
            lesson::lesson(at.lesson).and_then(|l| l.steps.get((at.step as usize).checked_sub(1)?))
        else {
            return Opened::Unknown;
        };
        let Some(scene) = step.scene else {
            next.scenario.lesson = Some(at);
            return Opened::Kept;
        };
        match scene.scenario() {
            Ok(mut s) => {
                s.lesson = Some(at);
                let mut here = self.scenario.clone();
                here.lesson = Some(at);
                here.sim = None;
                // The page's own settings are the student's, not the lesson's.
                here.page = s.page;
                if here == s {
                    next.scenario.lesson = Some(at);
                } else {
                    s.page.click = self.click();
                    *next = AppState::from_scenario(s);
                }
            }
            Err(e) => next.banner = Some(format!("This lesson step cannot load: {e}")),
        }
        Opened::Loaded
    }
}
