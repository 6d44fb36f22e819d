//! Keyboard translation: winit's logical keys to the canvas's shortcut keys,
//! to cef-bridge's [`KeyInput`] (which becomes Windows VK codes plus a char
//! event) and to the terminal's [`terminal::keys::Key`] (xterm encoding).
//! Pure functions over plain values so every mapping is unit-tested.

use super::interaction::{CanvasKey, Mods};
use cef_bridge::input::{Key as CefKey, KeyInput, Modifiers as CefMods, NamedKey as CefNamed};
use terminal::keys::{Key as TermKey, Modifiers as TermMods};
use winit::keyboard::{Key, KeyLocation, ModifiersState, NamedKey};

/// Canvas modifier state from winit's.
pub fn mods(m: ModifiersState) -> Mods {
    Mods { shift: m.shift_key(), ctrl: m.control_key(), alt: m.alt_key(), logo: m.super_key() }
}

/// cef-bridge modifiers.
pub fn cef_mods(m: Mods) -> CefMods {
    CefMods { shift: m.shift, ctrl: m.ctrl, alt: m.alt, meta: m.logo }
}

/// Terminal modifiers.
pub fn term_mods(m: Mods) -> TermMods {
    TermMods { ctrl: m.ctrl, alt: m.alt, shift: m.shift, logo: m.logo }
}

/// The first character of a key's text, lower-cased (shortcuts ignore Shift and Caps Lock).
fn shortcut_char(key: &Key) -> Option<char> {
    match key {
        Key::Character(s) => s.chars().next().map(|c| c.to_ascii_lowercase()),
        _ => None,
    }
}

/// The canvas key for a logical key, if the canvas has a use for it.
pub fn canvas_key(key: &Key) -> Option<CanvasKey> {
    Some(match key {
        Key::Named(NamedKey::ArrowUp) => CanvasKey::Up,
        Key::Named(NamedKey::ArrowDown) => CanvasKey::Down,
        Key::Named(NamedKey::ArrowLeft) => CanvasKey::Left,
        Key::Named(NamedKey::ArrowRight) => CanvasKey::Right,
        Key::Named(NamedKey::Delete | NamedKey::Backspace) => CanvasKey::Delete,
        Key::Named(NamedKey::Escape) => CanvasKey::Escape,
        Key::Named(NamedKey::Enter) => CanvasKey::Enter,
        // Ctrl+Shift+Z arrives as "Z"; Ctrl+= may arrive as "+".
        k => CanvasKey::Char(shortcut_char(k)?),
    })
}

/// Whether `key` with `m` is the given Ctrl(+Shift) letter shortcut.
pub fn is_shortcut(key: &Key, m: Mods, letter: char, shift: bool) -> bool {
    m.ctrl && !m.alt && m.shift == shift && shortcut_char(key) == Some(letter)
}

fn cef_named(n: NamedKey) -> Option<CefNamed> {
    Some(match n {
        NamedKey::Enter => CefNamed::Enter,
        NamedKey::Tab => CefNamed::Tab,
        NamedKey::Backspace => CefNamed::Backspace,
        NamedKey::Escape => CefNamed::Escape,
        NamedKey::Space => CefNamed::Space,
        NamedKey::Delete => CefNamed::Delete,
        NamedKey::Insert => CefNamed::Insert,
        NamedKey::Home => CefNamed::Home,
        NamedKey::End => CefNamed::End,
        NamedKey::PageUp => CefNamed::PageUp,
        NamedKey::PageDown => CefNamed::PageDown,
        NamedKey::ArrowUp => CefNamed::ArrowUp,
        NamedKey::ArrowDown => CefNamed::ArrowDown,
        NamedKey::ArrowLeft => CefNamed::ArrowLeft,
        NamedKey::ArrowRight => CefNamed::ArrowRight,
        NamedKey::Shift => CefNamed::Shift,
        NamedKey::Control => CefNamed::Control,
        NamedKey::Alt | NamedKey::AltGraph => CefNamed::Alt,
        NamedKey::Super | NamedKey::Meta | NamedKey::Hyper => CefNamed::Meta,
        NamedKey::CapsLock => CefNamed::CapsLock,
        NamedKey::ContextMenu => CefNamed::ContextMenu,
        other => CefNamed::F(function_number(other)?),
    })
}

fn function_number(n: NamedKey) -> Option<u8> {
    use NamedKey::*;
    let all =
        [F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14, F15, F16, F17, F18, F19, F20, F21, F22, F23, F24];
    all.iter().position(|k| *k == n).and_then(|i| u8::try_from(i + 1).ok())
}

/// A key event for a browser page. `text` is what the key types (winit's
/// `KeyEvent::text`); with Ctrl or Alt held it is dropped so shortcuts reach
/// the page as shortcuts, not as control characters.
pub fn cef_key(
    key: &Key,
    location: KeyLocation,
    text: Option<&str>,
    pressed: bool,
    m: Mods,
    native_code: i32,
) -> Option<KeyInput> {
    let cef = match key {
        Key::Named(n) => CefKey::Named(cef_named(*n)?),
        Key::Character(s) => CefKey::Character(s.to_string()),
        _ => return None,
    };
    let text =
        text.filter(|t| !(t.is_empty() || t.chars().any(char::is_control) || m.ctrl || m.alt)).map(str::to_string);
    // Space is named in winit but types a character.
    let text = text.or_else(|| {
        (matches!(key, Key::Named(NamedKey::Space)) && pressed && !(m.ctrl || m.alt)).then(|| " ".to_string())
    });
    Some(KeyInput {
        key: cef,
        text: if pressed { text } else { None },
        pressed,
        modifiers: cef_mods(m),
        keypad: location == KeyLocation::Numpad,
        native_code,
    })
}

/// The terminal key for a key press, or None for keys a terminal does not
/// encode (lone modifiers, media keys).
pub fn terminal_key(key: &Key, location: KeyLocation) -> Option<TermKey> {
    let numpad = location == KeyLocation::Numpad;
    Some(match key {
        Key::Named(n) => match n {
            NamedKey::Enter if numpad => TermKey::KeypadEnter,
            NamedKey::Enter => TermKey::Enter,
            NamedKey::Tab => TermKey::Tab,
            NamedKey::Backspace => TermKey::Backspace,
            NamedKey::Escape => TermKey::Escape,
            NamedKey::Space => TermKey::Char(' '),
            NamedKey::ArrowUp => TermKey::Up,
            NamedKey::ArrowDown => TermKey::Down,
            NamedKey::ArrowLeft => TermKey::Left,
            NamedKey::ArrowRight => TermKey::Right,
            NamedKey::Home => TermKey::Home,
            NamedKey::End => TermKey::End,
            NamedKey::PageUp => TermKey::PageUp,
            NamedKey::PageDown => TermKey::PageDown,
            NamedKey::Insert => TermKey::Insert,
            NamedKey::Delete => TermKey::Delete,
            other => TermKey::F(function_number(*other)?),
        },
        Key::Character(s) => {
            let mut chars = s.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                // Composed text (several characters) is typed as text, not as one key.
                return None;
            }
            if numpad && matches!(c, '0'..='9' | '.' | '+' | '-' | '*' | '/' | '=') {
                TermKey::Keypad(c)
            } else {
                TermKey::Char(c)
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(s: &str) -> Key {
        Key::Character(s.into())
    }

    #[test]
    fn canvas_keys_and_shortcuts_ignore_shift_case() {
        assert_eq!(canvas_key(&Key::Named(NamedKey::ArrowLeft)), Some(CanvasKey::Left));
        assert_eq!(canvas_key(&Key::Named(NamedKey::Backspace)), Some(CanvasKey::Delete));
        assert_eq!(canvas_key(&ch("Z")), Some(CanvasKey::Char('z')));
        assert_eq!(canvas_key(&Key::Named(NamedKey::F5)), None);
        let ctrl_shift = Mods { ctrl: true, shift: true, ..Mods::default() };
        assert!(is_shortcut(&ch("C"), ctrl_shift, 'c', true));
        assert!(!is_shortcut(&ch("c"), Mods { ctrl: true, ..Mods::default() }, 'c', true));
        assert!(!is_shortcut(&ch("k"), Mods::default(), 'k', false));
    }

    #[test]
    fn browser_keys_carry_text_only_when_typing() {
        let k = cef_key(&ch("A"), KeyLocation::Standard, Some("A"), true, Mods { shift: true, ..Mods::default() }, 38)
            .unwrap();
        assert_eq!(k.key, CefKey::Character("A".into()));
        assert_eq!(k.text.as_deref(), Some("A"));
        assert!(k.modifiers.shift);
        assert_eq!(k.native_code, 38);
        let ctrl_a =
            cef_key(&ch("a"), KeyLocation::Standard, Some("\u{1}"), true, Mods { ctrl: true, ..Mods::default() }, 0)
                .unwrap();
        assert_eq!(ctrl_a.text, None, "Ctrl+A selects all, it does not type");
        let release = cef_key(&ch("a"), KeyLocation::Standard, Some("a"), false, Mods::default(), 0).unwrap();
        assert_eq!(release.text, None);
        let space =
            cef_key(&Key::Named(NamedKey::Space), KeyLocation::Standard, None, true, Mods::default(), 0).unwrap();
        assert_eq!(space.text.as_deref(), Some(" "));
        let f5 = cef_key(&Key::Named(NamedKey::F5), KeyLocation::Standard, None, true, Mods::default(), 0).unwrap();
        assert_eq!(f5.key, CefKey::Named(CefNamed::F(5)));
        let enter =
            cef_key(&Key::Named(NamedKey::Enter), KeyLocation::Numpad, Some("\r"), true, Mods::default(), 0).unwrap();
        assert!(enter.keypad);
        assert_eq!(enter.text, None, "control characters are never sent as text");
        assert_eq!(
            cef_key(&Key::Named(NamedKey::MediaPlay), KeyLocation::Standard, None, true, Mods::default(), 0),
            None
        );
    }

    #[test]
    fn terminal_keys() {
        assert_eq!(terminal_key(&ch("x"), KeyLocation::Standard), Some(TermKey::Char('x')));
        assert_eq!(terminal_key(&ch("5"), KeyLocation::Numpad), Some(TermKey::Keypad('5')));
        assert_eq!(terminal_key(&Key::Named(NamedKey::Enter), KeyLocation::Numpad), Some(TermKey::KeypadEnter));
        assert_eq!(terminal_key(&Key::Named(NamedKey::Space), KeyLocation::Standard), Some(TermKey::Char(' ')));
        assert_eq!(terminal_key(&Key::Named(NamedKey::F12), KeyLocation::Standard), Some(TermKey::F(12)));
        assert_eq!(terminal_key(&Key::Named(NamedKey::Shift), KeyLocation::Left), None);
        assert_eq!(terminal_key(&ch("ab"), KeyLocation::Standard), None);
        assert_eq!(term_mods(Mods { ctrl: true, ..Mods::default() }), TermMods::CTRL);
    }
}
