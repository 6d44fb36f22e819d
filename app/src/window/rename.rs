//! Renaming a node in place: a double-click on its title bar (or the
//! palette's "Rename") turns the title into a one-line editor. Typing and
//! Backspace edit, Enter saves (a model command, so it is undoable and saved
//! with the layout), Escape cancels. State and text only: the window draws
//! the text with a caret in the node's title bar, and the keys in its badge.

use super::palette::PaletteKey;
use crate::model::title::MAX_NAME_CHARS;
use crate::model::{Command, NodeId};

/// The caret drawn after the text being typed.
pub const CARET: char = '▏';

/// What the title bar's badge says while its title is edited.
pub const HINT: &str = "Enter saves · Esc cancels";

/// The narrowest node (world units) whose title bar shows [`HINT`] while editing.
pub const HINT_MIN_WIDTH: f32 = 400.0;

/// The badge shown in place of the node's own while editing (the keys that end the edit).
pub fn hint_badge() -> canvas_render::Badge {
    canvas_render::Badge { text: HINT.into(), color: canvas_render::Color::hex(0x5b9cff) }
}

/// A title being edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameEditor {
    /// The node being renamed.
    pub id: NodeId,
    text: String,
}

/// What a key did to the editor.
#[derive(Debug, Clone, PartialEq)]
pub enum RenameOutcome {
    /// Still editing (redraw).
    Editing,
    /// Closed without a change.
    Cancelled,
    /// Done: apply [`RenameEditor::save`].
    Save,
}

impl RenameEditor {
    /// Starts editing `id`'s title, which reads `current` now.
    pub fn new(id: NodeId, current: &str) -> Self {
        Self { id, text: current.chars().take(MAX_NAME_CHARS).collect() }
    }

    /// The title bar's text while editing.
    pub fn shown(&self) -> String {
        format!("{}{CARET}", self.text)
    }

    /// The command that saves what was typed (a blank name goes back to the program's title).
    pub fn save(&self) -> Command {
        Command::RenameNode { id: self.id.clone(), name: Some(self.text.clone()) }
    }

    /// Handles one key.
    pub fn key(&mut self, key: PaletteKey) -> RenameOutcome {
        match key {
            PaletteKey::Text(t) => {
                let room = MAX_NAME_CHARS.saturating_sub(self.text.chars().count());
                self.text.extend(t.chars().filter(|c| !c.is_control()).take(room));
            }
            PaletteKey::Backspace => {
                self.text.pop();
            }
            PaletteKey::Enter => return RenameOutcome::Save,
            PaletteKey::Escape => return RenameOutcome::Cancelled,
            PaletteKey::Up | PaletteKey::Down => {}
        }
        RenameOutcome::Editing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn editor() -> RenameEditor {
        RenameEditor::new(NodeId::new("n1").unwrap(), "bash — ~/proj")
    }

    #[test]
    fn typing_edits_and_enter_saves_a_rename() {
        let mut e = editor();
        for _ in 0.."bash — ~/proj".chars().count() {
            assert_eq!(e.key(PaletteKey::Backspace), RenameOutcome::Editing);
        }
        assert_eq!(e.key(PaletteKey::Backspace), RenameOutcome::Editing, "backspace on nothing");
        e.key(PaletteKey::Text("logs".into()));
        e.key(PaletteKey::Text("\x1b!".into()));
        assert_eq!(e.shown(), "logs!▏");
        assert_eq!(e.key(PaletteKey::Enter), RenameOutcome::Save);
        let want = Command::RenameNode { id: NodeId::new("n1").unwrap(), name: Some("logs!".into()) };
        assert_eq!(e.save(), want);
    }

    #[test]
    fn escape_cancels_and_names_are_capped() {
        let mut e = editor();
        assert_eq!(e.key(PaletteKey::Escape), RenameOutcome::Cancelled);
        let mut long = editor();
        long.key(PaletteKey::Text("x".repeat(MAX_NAME_CHARS * 2)));
        assert_eq!(long.shown().chars().count(), MAX_NAME_CHARS + 1);
    }
}
