//! The page settings' reducer step on [`AppState`] and their getters: the click mode,
//! the focused side, the shaded domain level (and presentation mode's steps through
//! it), the Randomise inputs and the Domains tab's diff, all in the scenario's `page`
//! (core's `scenario::PageSettings`, which the link carries).

use schedlab_core::scenario::{self, View};

use super::{Action, AppState, ClickMode, Side};

impl AppState {
    /// What a click in the drawing does in the wake-up tab.
    pub fn click(&self) -> ClickMode {
        self.scenario.page.click
    }

    /// Whose decision the drawing numbers and whose run it shades.
    pub fn focus(&self) -> Side {
        self.scenario.page.focus
    }

    /// The index into the chosen CPU's domains whose span the drawing shades.
    pub fn highlight(&self) -> Option<usize> {
        self.scenario.page.highlight.map(usize::from)
    }

    /// Presentation mode's steps, as a speaker walks through a machine: the domain
    /// cards with each level of the chosen CPU shaded in turn (innermost first), then
    /// the wake-up decision, then the simulation. `dir` > 0 is the next step, < 0 the
    /// previous; the ends stay put. The dmesg and debugfs tabs step on as the cards do.
    /// Returns the view and the shaded level.
    pub fn present_step(&self, dir: i32) -> (View, Option<usize>) {
        let levels = self
            .domains()
            .ok()
            .and_then(|d| d.try_cpu(self.cpu()))
            .map_or(0, |c| c.domains.len());
        let last = levels.checked_sub(1);
        let here = (self.tab(), self.highlight());
        match (here.0, dir.signum()) {
            (View::Domains | View::Dmesg | View::Debugfs, 1) => match here.1 {
                None if levels > 0 => (View::Domains, Some(0)),
                Some(i) if i + 1 < levels => (View::Domains, Some(i + 1)),
                _ => (View::Wakeup, None),
            },
            (View::Domains | View::Dmesg | View::Debugfs, -1) => match here.1 {
                Some(0) | None => (View::Domains, None),
                Some(i) => (View::Domains, Some(i.min(levels) - 1)),
            },
            (View::Wakeup, 1) => (View::Simulate, None),
            (View::Wakeup, -1) => (View::Domains, last),
            (View::Simulate, -1) => (View::Wakeup, None),
            (view, _) => (view, here.1),
        }
    }

    /// The Randomise inputs: busy share per mille and seed.
    pub fn random_inputs(&self) -> (u32, u64) {
        (
            self.scenario.page.busy_permille,
            self.scenario.page.random_seed,
        )
    }

    /// The page settings' actions ([`Action::SetClickMode`], [`Action::SetDiff`],
    /// [`Action::Focus`], [`Action::RandomBusy`], [`Action::SetRandomInputs`],
    /// [`Action::PresentStep`], [`Action::Highlight`]) on `self`, the next state, from
    /// `was`; any other action is not one of them and changes nothing.
    pub(super) fn reduce_page(&mut self, was: &AppState, action: Action) {
        let nr = was.nr_cpus();
        let wake = &mut self.scenario.wake;
        match action {
            Action::SetClickMode(m) => self.scenario.page.click = m,
            Action::SetDiff(with, text) => {
                self.scenario.page.diff_with = with;
                self.scenario.page.diff_text = text;
            }
            Action::Focus(side) => self.scenario.page.focus = side,
            Action::RandomBusy { permille, seed } => {
                self.ui.input_error = None;
                let permille = permille.min(1000);
                self.scenario.page.busy_permille = permille;
                self.scenario.page.random_seed = seed;
                wake.busy = scenario::random_busy(nr, permille, seed)
            }
            Action::SetRandomInputs { permille, seed } => {
                self.ui.input_error = None;
                self.scenario.page.busy_permille = permille.min(1000);
                self.scenario.page.random_seed = seed;
            }
            Action::PresentStep(dir) => {
                let (view, level) = was.present_step(dir);
                self.scenario.view = view;
                self.scenario.page.highlight = level.and_then(|l| u8::try_from(l).ok());
            }
            // A level past what a u8 holds cannot exist (domains nest at most a
            // few dozen deep): shade nothing rather than a wrong level.
            Action::Highlight(level) => {
                self.scenario.page.highlight = level.and_then(|l| u8::try_from(l).ok())
            }
            _ => {}
        }
    }
}
