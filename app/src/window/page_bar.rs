//! What a person types into a browser node's title bar: the address field
//! (a click on it or Ctrl+L; Enter navigates through the URL policy, a
//! refusal is shown in the field, Escape puts the page's URL back) and the
//! find-in-page field (Ctrl+F; typing searches, Enter / Shift+Enter step to
//! the next / previous match, Escape closes). State and keys only: the window
//! runs what they ask for and draws them through [`canvas_render::BrowserBar`].

use super::interaction::Mods;
use super::line_edit::{EditKey, LineEdit};
use crate::model::NodeId;
use canvas_render::{BrowserBar, FindField};
use winit::keyboard::{Key, NamedKey};

/// A key for a title-bar field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKey {
    /// An edit.
    Edit(EditKey),
    /// Enter (with Shift: `back`).
    Enter {
        /// Shift was held.
        back: bool,
    },
    /// Escape.
    Escape,
}

/// The field key for a key press (`paste` supplies the clipboard for Ctrl+V);
/// `None` for keys a field ignores.
pub fn field_key(
    key: &Key,
    text: Option<&str>,
    mods: Mods,
    paste: impl FnOnce() -> Option<String>,
) -> Option<FieldKey> {
    let shortcut = |c| super::input::is_shortcut(key, mods, c, false);
    Some(match key {
        Key::Named(NamedKey::Enter) => FieldKey::Enter { back: mods.shift },
        Key::Named(NamedKey::Escape) => FieldKey::Escape,
        Key::Named(NamedKey::Backspace) => FieldKey::Edit(EditKey::Backspace),
        Key::Named(NamedKey::Delete) => FieldKey::Edit(EditKey::Delete),
        Key::Named(NamedKey::ArrowLeft) => FieldKey::Edit(EditKey::Left),
        Key::Named(NamedKey::ArrowRight) => FieldKey::Edit(EditKey::Right),
        Key::Named(NamedKey::Home) => FieldKey::Edit(EditKey::Home),
        Key::Named(NamedKey::End) => FieldKey::Edit(EditKey::End),
        _ if shortcut('a') => FieldKey::Edit(EditKey::SelectAll),
        _ if shortcut('v') => FieldKey::Edit(EditKey::Text(paste()?.lines().next().unwrap_or_default().to_string())),
        _ if mods.ctrl || mods.alt => return None,
        Key::Named(NamedKey::Space) => FieldKey::Edit(EditKey::Text(" ".into())),
        _ => FieldKey::Edit(EditKey::Text(text.filter(|t| !t.chars().any(char::is_control))?.to_string())),
    })
}

/// The address field of one browser node, being edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressField {
    /// The node.
    pub node: NodeId,
    edit: LineEdit,
    /// Why the last address was refused (shown until the next key).
    error: Option<String>,
}

/// What a key asks of the address field's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressOutcome {
    /// Still editing (redraw).
    Editing,
    /// Navigate to this text (the URL policy decides; report a refusal with [`AddressField::refused`]).
    Go(String),
    /// Closed: the page's URL shows again.
    Cancelled,
}

impl AddressField {
    /// Starts editing `node`'s address, which reads `url` now (all of it selected).
    pub fn new(node: NodeId, url: &str) -> Self {
        Self { node, edit: LineEdit::selected(url), error: None }
    }

    /// Handles one key.
    pub fn key(&mut self, key: FieldKey) -> AddressOutcome {
        match key {
            FieldKey::Escape => AddressOutcome::Cancelled,
            FieldKey::Enter { .. } => AddressOutcome::Go(self.edit.text()),
            FieldKey::Edit(k) => {
                // Any key brings the typed text back from under the refusal.
                self.error = None;
                self.edit.key(k);
                AddressOutcome::Editing
            }
        }
    }

    /// The address was refused: say why in the field (the text typed stays to fix).
    pub fn refused(&mut self, why: String) {
        self.error = Some(why);
    }

    /// Why the address was refused, while shown.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Puts the field's state into the node's bar.
    pub fn show(&self, bar: &mut BrowserBar) {
        bar.editing = Some(self.edit.view());
        bar.error = self.error.clone();
    }
}

/// The find-in-page field of one browser node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindBar {
    /// The node.
    pub node: NodeId,
    edit: LineEdit,
}

/// What a key asks of the find field's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindOutcome {
    /// Nothing to do (the caret moved).
    Nothing,
    /// Search for `text` (the same text again steps to the next or previous match).
    Search {
        /// What to find (empty: clear the highlights).
        text: String,
        /// Towards the end of the page.
        forward: bool,
    },
    /// Closed: stop finding.
    Closed,
}

impl FindBar {
    /// Opens find on `node`, with `last` (the previous search) selected.
    pub fn new(node: NodeId, last: &str) -> Self {
        Self { node, edit: LineEdit::selected(last) }
    }

    /// Handles one key.
    pub fn key(&mut self, key: FieldKey) -> FindOutcome {
        match key {
            FieldKey::Escape => FindOutcome::Closed,
            FieldKey::Enter { back } => FindOutcome::Search { text: self.edit.text(), forward: !back },
            FieldKey::Edit(k) => match self.edit.key(k) {
                true => FindOutcome::Search { text: self.edit.text(), forward: true },
                false => FindOutcome::Nothing,
            },
        }
    }

    /// The text searched for.
    pub fn text(&self) -> String {
        self.edit.text()
    }

    /// Puts the field into the node's bar, with what the page found (count, active).
    pub fn show(&self, bar: &mut BrowserBar, matches: Option<(u32, u32)>) {
        bar.find = Some(FindField { edit: self.edit.view(), matches });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> NodeId {
        NodeId::new("n1").expect("id")
    }

    fn typed(s: &str) -> FieldKey {
        FieldKey::Edit(EditKey::Text(s.into()))
    }

    #[test]
    fn the_address_field_navigates_on_enter_shows_a_refusal_and_escape_restores() {
        let mut a = AddressField::new(node(), "https://example.com/");
        assert_eq!(a.key(typed("data:text/html,hi")), AddressOutcome::Editing);
        assert_eq!(a.key(FieldKey::Enter { back: false }), AddressOutcome::Go("data:text/html,hi".into()));
        a.refused("refused scheme 'data'".into());
        let mut bar = BrowserBar::default();
        a.show(&mut bar);
        assert_eq!(bar.error.as_deref(), Some("refused scheme 'data'"));
        assert_eq!(bar.editing.as_ref().map(|e| e.text.as_str()), Some("data:text/html,hi"), "the text stays");
        assert_eq!(a.key(FieldKey::Edit(EditKey::Backspace)), AddressOutcome::Editing);
        assert_eq!(a.error(), None, "a key brings the text back");
        assert_eq!(a.key(FieldKey::Escape), AddressOutcome::Cancelled);
    }

    #[test]
    fn find_searches_as_typed_steps_with_enter_and_shift_enter_and_closes_on_escape() {
        let mut f = FindBar::new(node(), "");
        assert_eq!(f.key(typed("mi")), FindOutcome::Search { text: "mi".into(), forward: true });
        assert_eq!(f.key(FieldKey::Enter { back: false }), FindOutcome::Search { text: "mi".into(), forward: true });
        assert_eq!(f.key(FieldKey::Enter { back: true }), FindOutcome::Search { text: "mi".into(), forward: false });
        assert_eq!(f.key(FieldKey::Edit(EditKey::Left)), FindOutcome::Nothing);
        assert_eq!(f.key(FieldKey::Edit(EditKey::End)), FindOutcome::Nothing);
        assert_eq!(f.key(FieldKey::Edit(EditKey::Backspace)), FindOutcome::Search { text: "m".into(), forward: true });
        let mut bar = BrowserBar::default();
        f.show(&mut bar, Some((4, 1)));
        assert_eq!(bar.find.map(|f| (f.edit.text, f.matches)), Some(("m".into(), Some((4, 1)))));
        assert_eq!(f.key(FieldKey::Escape), FindOutcome::Closed);
    }

    #[test]
    fn keys_map_to_field_keys_and_shortcuts_stay_out_of_the_text() {
        let none = Mods::default();
        let ctrl = Mods { ctrl: true, ..Mods::default() };
        let shift = Mods { shift: true, ..Mods::default() };
        let k = |key: Key, text: Option<&str>, m| field_key(&key, text, m, || Some("pasted\nsecond line".into()));
        assert_eq!(k(Key::Named(NamedKey::Enter), None, shift), Some(FieldKey::Enter { back: true }));
        assert_eq!(k(Key::Character("a".into()), Some("a"), none), Some(typed("a")));
        assert_eq!(k(Key::Character("a".into()), Some("a"), ctrl), Some(FieldKey::Edit(EditKey::SelectAll)));
        assert_eq!(k(Key::Character("v".into()), Some("v"), ctrl), Some(typed("pasted")));
        assert_eq!(k(Key::Character("x".into()), Some("x"), ctrl), None);
        assert_eq!(k(Key::Named(NamedKey::Space), Some(" "), none), Some(typed(" ")));
        assert_eq!(k(Key::Named(NamedKey::Tab), Some("\t"), none), None);
    }
}
