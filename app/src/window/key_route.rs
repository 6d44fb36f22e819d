//! Where a key goes. The window's pop-ups are asked first (the overlay
//! stack: the first that takes a key gets it); a key none of them takes goes,
//! in this order, to
//!
//! 1. the window's shortcuts: Ctrl+K (palette), Ctrl+J (the node that waited
//!    longest, while someone waits), Ctrl+Tab / Ctrl+Shift+Tab (next /
//!    previous project);
//! 2. with Ctrl+J and nobody waiting: a note saying so when no node has the
//!    keyboard, else on to the node (a newline in a terminal);
//! 3. a focused browser node's shortcuts: Ctrl+L (address), Ctrl+F (find),
//!    Ctrl+T, Ctrl+W, Ctrl+PageDown / Ctrl+PageUp (tabs);
//! 4. a focused node: plain Escape gives the keyboard back to the canvas,
//!    Ctrl+Shift+C / Ctrl+Shift+V copy and paste in a terminal, the rest
//!    reaches the node (Shift+Escape as Escape);
//! 5. the canvas, for a press the node did not take (or with no node focused).
//!
//! Shortcuts act on presses (and repeats) only. Pure: the window says what
//! has the keyboard and carries out the [`KeyRoute`].

use super::input;
use super::interaction::{CanvasKey, Mods};
use winit::keyboard::{Key, NamedKey};

/// One key event, as the pop-ups and the routing see it.
#[derive(Debug, Clone, Copy)]
pub struct Keystroke<'a> {
    /// The logical key.
    pub key: &'a Key,
    /// The text it types, if any.
    pub text: Option<&'a str>,
    /// Press (or repeat) rather than release.
    pub pressed: bool,
    /// Modifiers held.
    pub mods: Mods,
}

/// What has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focused {
    /// No node: the canvas.
    Canvas,
    /// A browser node showing a page.
    Browser,
    /// A node with a live or ended terminal (terminals, agents, artifacts).
    Terminal,
    /// Another node (a sticky note, a group).
    Other,
}

/// A shortcut of the window's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// Ctrl+K: the command palette.
    Palette,
    /// Ctrl+J: the node that has waited longest for the person.
    NextNeedingYou,
    /// Ctrl+Tab: the next project (Shift: the previous one).
    StepProject {
        /// Shift was held.
        back: bool,
    },
    /// Ctrl+L on a browser node: its address field.
    Address,
    /// Ctrl+F on a browser node: its find field.
    Find,
    /// Ctrl+T on a browser node: a new tab, its address field open.
    NewTab,
    /// Ctrl+W on a browser node: close the shown tab (never the last).
    CloseTab,
    /// Ctrl+PageDown / Ctrl+PageUp on a browser node: the next / previous tab.
    StepTab {
        /// PageUp.
        back: bool,
    },
}

/// Where a key no pop-up took goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRoute {
    /// A shortcut of the window's.
    Shortcut(Shortcut),
    /// Ctrl+J with nobody waiting and no node focused: say so.
    NobodyWaits,
    /// Plain Escape pressed on a focused node: the canvas gets the keyboard.
    Unfocus,
    /// Ctrl+Shift+C in a terminal: copy its selection.
    Copy,
    /// Ctrl+Shift+V in a terminal: paste the clipboard.
    Paste,
    /// To the focused node, with these modifiers; if it does not take the key, `canvas` gets it.
    Node {
        /// The modifiers the node sees (Shift+Escape arrives as Escape).
        mods: Mods,
        /// The canvas key for a press, if any.
        canvas: Option<CanvasKey>,
    },
    /// To the canvas.
    Canvas(CanvasKey),
    /// Nowhere.
    Nothing,
}

impl KeyRoute {
    /// Whether this is a shortcut of the window's: a browser node's find
    /// field, which takes every other key, leaves these to the window.
    pub fn is_shortcut(&self) -> bool {
        matches!(self, KeyRoute::Shortcut(_))
    }
}

/// Where `k` goes when no pop-up takes it, with `focused` having the keyboard;
/// `waits` says whether a node waits for the person (asked only for Ctrl+J).
pub fn route(k: &Keystroke<'_>, focused: Focused, waits: impl FnOnce() -> bool) -> KeyRoute {
    let Keystroke { key, pressed, mods, .. } = *k;
    let shortcut = |letter, shift| pressed && input::is_shortcut(key, mods, letter, shift);
    if shortcut('k', false) {
        return KeyRoute::Shortcut(Shortcut::Palette);
    }
    // Ctrl+J is the app's while someone waits; else it reaches the node (a newline in a terminal).
    if shortcut('j', false) {
        if waits() {
            return KeyRoute::Shortcut(Shortcut::NextNeedingYou);
        }
        if focused == Focused::Canvas {
            return KeyRoute::NobodyWaits;
        }
    }
    if pressed && mods.ctrl && matches!(key, Key::Named(NamedKey::Tab)) {
        return KeyRoute::Shortcut(Shortcut::StepProject { back: mods.shift });
    }
    if focused == Focused::Browser {
        let tab = |back| Shortcut::StepTab { back };
        let browser = if shortcut('l', false) {
            Some(Shortcut::Address)
        } else if shortcut('f', false) {
            Some(Shortcut::Find)
        } else if shortcut('t', false) {
            Some(Shortcut::NewTab)
        } else if shortcut('w', false) {
            Some(Shortcut::CloseTab)
        } else if pressed && mods.ctrl && matches!(key, Key::Named(NamedKey::PageDown)) {
            Some(tab(false))
        } else if pressed && mods.ctrl && matches!(key, Key::Named(NamedKey::PageUp)) {
            Some(tab(true))
        } else {
            None
        };
        if let Some(s) = browser {
            return KeyRoute::Shortcut(s);
        }
    }
    let canvas = if pressed { input::canvas_key(key) } else { None };
    if focused == Focused::Canvas {
        return canvas.map_or(KeyRoute::Nothing, KeyRoute::Canvas);
    }
    let escape = matches!(key, Key::Named(NamedKey::Escape));
    if escape && !mods.shift {
        return if pressed { KeyRoute::Unfocus } else { KeyRoute::Nothing };
    }
    if focused == Focused::Terminal {
        if shortcut('c', true) {
            return KeyRoute::Copy;
        }
        if shortcut('v', true) {
            return KeyRoute::Paste;
        }
    }
    // Shift+Escape is how an Escape reaches the node (plain Escape leaves it).
    let mods = if escape { Mods { shift: false, ..mods } } else { mods };
    KeyRoute::Node { mods, canvas }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTRL: Mods = Mods { ctrl: true, shift: false, alt: false, logo: false };
    const CTRL_SHIFT: Mods = Mods { ctrl: true, shift: true, alt: false, logo: false };
    const SHIFT: Mods = Mods { ctrl: false, shift: true, alt: false, logo: false };

    fn letter(c: &str) -> Key {
        Key::Character(c.into())
    }

    fn press(key: &Key, mods: Mods) -> Keystroke<'_> {
        Keystroke { key, text: None, pressed: true, mods }
    }

    fn release(key: &Key, mods: Mods) -> Keystroke<'_> {
        Keystroke { key, text: None, pressed: false, mods }
    }

    fn nobody_waits() -> bool {
        false
    }

    #[test]
    fn the_window_shortcuts_come_before_any_node() {
        let k = letter("k");
        for f in [Focused::Canvas, Focused::Browser, Focused::Terminal, Focused::Other] {
            assert_eq!(route(&press(&k, CTRL), f, nobody_waits), KeyRoute::Shortcut(Shortcut::Palette), "{f:?}");
        }
        let tab = Key::Named(NamedKey::Tab);
        assert_eq!(
            route(&press(&tab, CTRL_SHIFT), Focused::Terminal, nobody_waits),
            KeyRoute::Shortcut(Shortcut::StepProject { back: true })
        );
        assert_eq!(
            route(&press(&tab, Mods::default()), Focused::Terminal, nobody_waits),
            KeyRoute::Node { mods: Mods::default(), canvas: None },
            "a plain Tab reaches the node"
        );
    }

    #[test]
    fn ctrl_j_jumps_while_someone_waits_else_reaches_the_node_or_says_nobody_waits() {
        let j = letter("j");
        let asked = std::cell::Cell::new(false);
        let waits = || {
            asked.set(true);
            true
        };
        assert_eq!(route(&press(&j, CTRL), Focused::Terminal, waits), KeyRoute::Shortcut(Shortcut::NextNeedingYou));
        assert!(asked.get());
        assert_eq!(route(&press(&j, CTRL), Focused::Canvas, nobody_waits), KeyRoute::NobodyWaits);
        assert_eq!(
            route(&press(&j, CTRL), Focused::Terminal, nobody_waits),
            KeyRoute::Node { mods: CTRL, canvas: Some(CanvasKey::Char('j')) }
        );
        let plain = std::cell::Cell::new(false);
        let _ = route(&press(&letter("a"), CTRL), Focused::Terminal, || {
            plain.set(true);
            true
        });
        assert!(!plain.get(), "who waits is asked only for Ctrl+J");
    }

    #[test]
    fn browser_shortcuts_apply_only_to_a_focused_browser() {
        let cases = [
            (letter("l"), Shortcut::Address),
            (letter("f"), Shortcut::Find),
            (letter("t"), Shortcut::NewTab),
            (letter("w"), Shortcut::CloseTab),
            (Key::Named(NamedKey::PageDown), Shortcut::StepTab { back: false }),
            (Key::Named(NamedKey::PageUp), Shortcut::StepTab { back: true }),
        ];
        for (key, want) in &cases {
            assert_eq!(route(&press(key, CTRL), Focused::Browser, nobody_waits), KeyRoute::Shortcut(*want));
            assert!(
                matches!(route(&press(key, CTRL), Focused::Terminal, nobody_waits), KeyRoute::Node { .. }),
                "{key:?} reaches a terminal"
            );
        }
        assert!(matches!(route(&release(&letter("l"), CTRL), Focused::Browser, nobody_waits), KeyRoute::Node { .. }));
    }

    #[test]
    fn escape_leaves_a_node_and_shift_escape_reaches_it_as_escape() {
        let esc = Key::Named(NamedKey::Escape);
        assert_eq!(route(&press(&esc, Mods::default()), Focused::Browser, nobody_waits), KeyRoute::Unfocus);
        assert_eq!(route(&release(&esc, Mods::default()), Focused::Browser, nobody_waits), KeyRoute::Nothing);
        assert_eq!(
            route(&press(&esc, SHIFT), Focused::Terminal, nobody_waits),
            KeyRoute::Node { mods: Mods::default(), canvas: Some(CanvasKey::Escape) }
        );
        assert_eq!(
            route(&press(&esc, Mods::default()), Focused::Canvas, nobody_waits),
            KeyRoute::Canvas(CanvasKey::Escape)
        );
    }

    #[test]
    fn copy_and_paste_shortcuts_belong_to_terminals() {
        let c = letter("C");
        let v = letter("V");
        assert_eq!(route(&press(&c, CTRL_SHIFT), Focused::Terminal, nobody_waits), KeyRoute::Copy);
        assert_eq!(route(&press(&v, CTRL_SHIFT), Focused::Terminal, nobody_waits), KeyRoute::Paste);
        assert!(matches!(route(&press(&v, CTRL_SHIFT), Focused::Browser, nobody_waits), KeyRoute::Node { .. }));
        assert!(matches!(route(&release(&c, CTRL_SHIFT), Focused::Terminal, nobody_waits), KeyRoute::Node { .. }));
    }

    #[test]
    fn the_canvas_gets_presses_only() {
        let up = Key::Named(NamedKey::ArrowUp);
        assert_eq!(route(&press(&up, Mods::default()), Focused::Canvas, nobody_waits), KeyRoute::Canvas(CanvasKey::Up));
        assert_eq!(route(&release(&up, Mods::default()), Focused::Canvas, nobody_waits), KeyRoute::Nothing);
        assert_eq!(
            route(&release(&up, Mods::default()), Focused::Other, nobody_waits),
            KeyRoute::Node { mods: Mods::default(), canvas: None }
        );
        assert!(KeyRoute::Shortcut(Shortcut::Find).is_shortcut());
        assert!(!KeyRoute::Unfocus.is_shortcut());
    }
}
