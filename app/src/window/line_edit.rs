//! One line of editable text with a caret, for the fields drawn in a browser
//! node's title bar (the address, find in page): typing, Backspace, Delete,
//! the arrows, Home and End, and a whole-text selection that typing replaces
//! (what a click into the address field starts with, as browsers do).

use canvas_render::FieldEdit;

/// The longest text a field takes (an address beyond this is not one a person types).
pub const MAX_CHARS: usize = 8192;

/// A key as a field sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditKey {
    /// Text typed or pasted (one line).
    Text(String),
    /// Deletes before the caret (the selection when all is selected).
    Backspace,
    /// Deletes after the caret (the selection when all is selected).
    Delete,
    /// Caret one character left.
    Left,
    /// Caret one character right.
    Right,
    /// Caret to the start.
    Home,
    /// Caret to the end.
    End,
    /// Selects the whole text.
    SelectAll,
}

/// The text of a field and its caret.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineEdit {
    chars: Vec<char>,
    cursor: usize,
    all_selected: bool,
}

impl LineEdit {
    /// A field holding `text`, all of it selected, the caret at its end.
    pub fn selected(text: &str) -> Self {
        let chars: Vec<char> = text.chars().take(MAX_CHARS).collect();
        Self { cursor: chars.len(), all_selected: !chars.is_empty(), chars }
    }

    /// The text.
    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// What the renderer draws.
    pub fn view(&self) -> FieldEdit {
        FieldEdit { text: self.text(), cursor: self.cursor, all_selected: self.all_selected }
    }

    /// Applies one key; true when the text changed.
    pub fn key(&mut self, key: EditKey) -> bool {
        let selected = std::mem::take(&mut self.all_selected);
        match key {
            EditKey::Text(t) => {
                if selected {
                    self.chars.clear();
                    self.cursor = 0;
                }
                let room = MAX_CHARS.saturating_sub(self.chars.len());
                let typed: Vec<char> = t.chars().filter(|c| !c.is_control()).take(room).collect();
                let n = typed.len();
                self.chars.splice(self.cursor..self.cursor, typed);
                self.cursor += n;
                n > 0 || selected
            }
            EditKey::Backspace | EditKey::Delete if selected => {
                self.chars.clear();
                self.cursor = 0;
                true
            }
            EditKey::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.chars.remove(self.cursor);
                true
            }
            EditKey::Delete if self.cursor < self.chars.len() => {
                self.chars.remove(self.cursor);
                true
            }
            EditKey::Left => {
                // With all selected, Left goes to the start of the selection, as in browsers.
                self.cursor = if selected { 0 } else { self.cursor.saturating_sub(1) };
                false
            }
            EditKey::Right => {
                self.cursor = (self.cursor + 1).min(self.chars.len());
                false
            }
            EditKey::Home => {
                self.cursor = 0;
                false
            }
            EditKey::End => {
                self.cursor = self.chars.len();
                false
            }
            EditKey::SelectAll => {
                self.all_selected = !self.chars.is_empty();
                self.cursor = self.chars.len();
                false
            }
            EditKey::Backspace | EditKey::Delete => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> EditKey {
        EditKey::Text(s.into())
    }

    #[test]
    fn typing_replaces_a_selection_and_edits_at_the_caret() {
        let mut e = LineEdit::selected("https://example.com/");
        assert!(e.view().all_selected);
        assert!(e.key(text("exa")));
        assert_eq!((e.text(), e.view().cursor, e.view().all_selected), ("exa".into(), 3, false));
        e.key(EditKey::Left);
        e.key(EditKey::Left);
        e.key(text("Ü"));
        assert_eq!(e.text(), "eÜxa");
        e.key(EditKey::Home);
        assert!(!e.key(EditKey::Backspace), "nothing before the start");
        assert!(e.key(EditKey::Delete));
        assert_eq!(e.text(), "Üxa");
        e.key(EditKey::End);
        assert!(!e.key(EditKey::Delete), "nothing after the end");
        e.key(EditKey::Backspace);
        assert_eq!((e.text(), e.view().cursor), ("Üx".into(), 2));
        e.key(text("a\u{7}\nb"));
        assert_eq!(e.text(), "Üxab", "control characters are not text");
    }

    #[test]
    fn select_all_then_delete_or_left_and_the_length_is_bounded() {
        let mut e = LineEdit::selected("abc");
        assert!(e.key(EditKey::Backspace));
        assert_eq!(e.text(), "");
        e.key(text("abc"));
        e.key(EditKey::SelectAll);
        e.key(EditKey::Left);
        e.key(text(">"));
        assert_eq!(e.text(), ">abc", "Left ends the selection at its start");
        assert!(!LineEdit::selected("").view().all_selected);
        let mut big = LineEdit::selected(&"x".repeat(MAX_CHARS + 5));
        assert_eq!(big.text().len(), MAX_CHARS);
        big.key(EditKey::End);
        assert!(!big.key(text("y")), "full");
    }
}
