//! A modal in-canvas question with buttons (e.g. keep or remove a worktree):
//! Left/Right or Tab choose, Enter answers, a button's first letter answers
//! at once, Escape cancels; a click on a button answers, a click elsewhere
//! does nothing. State, layout and hit-testing only: the overlay draws it.

use canvas_render::Rect;

/// Width of the dialog in logical pixels.
pub const WIDTH: f32 = 560.0;
/// Height of a text line.
const LINE: f32 = 21.0;
/// Height of a button.
const BUTTON_H: f32 = 34.0;
/// Gap between buttons and around the panel's insides.
const GAP: f32 = 12.0;
/// Title bar height of the panel.
const TITLE_H: f32 = 30.0;
/// Width of a character of the panel's text, generously (for line wrapping).
const CHAR_W: f32 = 7.6;

/// A key as the dialog sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmKey {
    /// Previous button (Left, Shift+Tab).
    Prev,
    /// Next button (Right, Tab).
    Next,
    /// Enter.
    Enter,
    /// Escape.
    Escape,
    /// A letter typed.
    Char(char),
}

/// What an input did.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfirmOutcome<A> {
    /// Still open.
    Open,
    /// Closed without an answer.
    Cancelled,
    /// Closed with this answer.
    Chose(A),
}

/// One button: its label and what it answers (`None`: cancel).
#[derive(Debug, Clone, PartialEq)]
pub struct Choice<A> {
    /// The label (its first letter is its key).
    pub label: String,
    /// The answer.
    pub answer: Option<A>,
}

/// An open question.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirm<A> {
    /// The title.
    pub title: String,
    /// The question, one entry per line.
    pub lines: Vec<String>,
    /// The buttons, left to right.
    pub choices: Vec<Choice<A>>,
    /// The button Enter presses.
    pub chosen: usize,
    /// Whether the question is about losing work (drawn in the warning colour).
    pub warning: bool,
}

impl<A: Clone> Confirm<A> {
    /// A question; the first button is chosen.
    pub fn new(title: impl Into<String>, lines: Vec<String>, choices: Vec<Choice<A>>) -> Self {
        Self { title: title.into(), lines, choices, chosen: 0, warning: false }
    }

    /// Marks the question as one about losing work.
    pub fn warning(mut self) -> Self {
        self.warning = true;
        self
    }

    fn answer(&self, i: usize) -> ConfirmOutcome<A> {
        match self.choices.get(i) {
            Some(Choice { answer: Some(a), .. }) => ConfirmOutcome::Chose(a.clone()),
            Some(Choice { answer: None, .. }) => ConfirmOutcome::Cancelled,
            None => ConfirmOutcome::Open,
        }
    }

    /// Handles one key.
    pub fn key(&mut self, key: ConfirmKey) -> ConfirmOutcome<A> {
        let n = self.choices.len().max(1);
        match key {
            ConfirmKey::Prev => self.chosen = (self.chosen + n - 1) % n,
            ConfirmKey::Next => self.chosen = (self.chosen + 1) % n,
            ConfirmKey::Enter => return self.answer(self.chosen),
            ConfirmKey::Escape => return ConfirmOutcome::Cancelled,
            ConfirmKey::Char(c) => {
                let c = c.to_ascii_lowercase();
                let hit = self
                    .choices
                    .iter()
                    .position(|ch| ch.label.chars().next().map(|f| f.to_ascii_lowercase()) == Some(c));
                if let Some(i) = hit {
                    return self.answer(i);
                }
            }
        }
        ConfirmOutcome::Open
    }

    /// The panel and each button's rectangle in a `viewport` (logical pixels).
    pub fn layout(&self, viewport: (f32, f32)) -> (Rect, Vec<Rect>) {
        let w = WIDTH.min(viewport.0 - 16.0).max(240.0);
        // Long lines wrap: count the lines they take at this width.
        let per_line = ((w - 2.0 * GAP) / CHAR_W).max(8.0) as usize;
        let rows: usize = self.lines.iter().map(|l| l.chars().count().max(1).div_ceil(per_line)).sum();
        let text_h = LINE * rows.max(1) as f32;
        let h = TITLE_H + GAP + text_h + GAP + BUTTON_H + GAP;
        let x = ((viewport.0 - w) / 2.0).max(8.0);
        let y = ((viewport.1 - h) / 3.0).max(8.0);
        let n = self.choices.len().max(1) as f32;
        let bw = (w - GAP * (n + 1.0)) / n;
        let by = y + h - GAP - BUTTON_H;
        let buttons =
            (0..self.choices.len()).map(|i| Rect::new(x + GAP + i as f32 * (bw + GAP), by, bw, BUTTON_H)).collect();
        (Rect::new(x, y, w, h), buttons)
    }

    /// A click at (x, y): the button under it answers; anywhere else does nothing.
    pub fn click(&self, viewport: (f32, f32), x: f32, y: f32) -> ConfirmOutcome<A> {
        let (_, buttons) = self.layout(viewport);
        match buttons.iter().position(|b| x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h) {
            Some(i) => self.answer(i),
            None => ConfirmOutcome::Open,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dialog() -> Confirm<&'static str> {
        Confirm::new(
            "Close",
            vec!["Keep the worktree?".into()],
            vec![
                Choice { label: "Keep worktree".into(), answer: Some("keep") },
                Choice { label: "Remove worktree".into(), answer: Some("remove") },
                Choice { label: "Cancel".into(), answer: None },
            ],
        )
    }

    #[test]
    fn keys_choose_and_answer() {
        let mut d = dialog();
        assert_eq!(d.key(ConfirmKey::Enter), ConfirmOutcome::Chose("keep"), "the first button is the default");
        assert_eq!(d.key(ConfirmKey::Next), ConfirmOutcome::Open);
        assert_eq!(d.key(ConfirmKey::Enter), ConfirmOutcome::Chose("remove"));
        d.key(ConfirmKey::Next);
        assert_eq!(d.key(ConfirmKey::Enter), ConfirmOutcome::Cancelled);
        d.key(ConfirmKey::Next);
        assert_eq!(d.chosen, 0, "Next wraps");
        d.key(ConfirmKey::Prev);
        assert_eq!(d.chosen, 2, "Prev wraps");
        assert_eq!(d.key(ConfirmKey::Char('R')), ConfirmOutcome::Chose("remove"));
        assert_eq!(d.key(ConfirmKey::Char('k')), ConfirmOutcome::Chose("keep"));
        assert_eq!(d.key(ConfirmKey::Char('z')), ConfirmOutcome::Open);
        assert_eq!(d.key(ConfirmKey::Escape), ConfirmOutcome::Cancelled);
    }

    #[test]
    fn clicks_answer_on_buttons_only_and_the_dialog_fits_the_view() {
        let d = dialog();
        let view = (1000.0, 700.0);
        let (panel, buttons) = d.layout(view);
        assert_eq!(buttons.len(), 3);
        for b in &buttons {
            assert!(b.x >= panel.x && b.x + b.w <= panel.x + panel.w + 0.01 && b.y + b.h <= panel.y + panel.h);
        }
        let centre = |r: &Rect| (r.x + r.w / 2.0, r.y + r.h / 2.0);
        let (x, y) = centre(&buttons[1]);
        assert_eq!(d.click(view, x, y), ConfirmOutcome::Chose("remove"));
        let (x, y) = centre(&buttons[2]);
        assert_eq!(d.click(view, x, y), ConfirmOutcome::Cancelled);
        assert_eq!(d.click(view, panel.x + 2.0, panel.y + 2.0), ConfirmOutcome::Open);
        assert_eq!(d.click(view, 1.0, 1.0), ConfirmOutcome::Open);
        let (small, _) = d.layout((300.0, 200.0));
        assert!(small.x >= 8.0 && small.x + small.w <= 300.0);
        let mut long = dialog();
        long.lines = vec!["x".repeat(200)];
        assert!(long.layout(view).0.h > panel.h + LINE, "a long line wraps and the panel grows");
    }
}
