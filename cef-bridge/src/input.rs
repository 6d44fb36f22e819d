//! Input events for a browser, independent of any windowing library.
//!
//! The app translates its window system's events (winit) into these types;
//! this module turns them into what CEF's off-screen input API expects:
//! Windows virtual-key codes plus separate character events for text (CEF
//! interprets `windows_key_code` as a VK code, so sending '!' as 0x21 would be
//! PageUp), and `EVENTFLAG_*` modifier bits.

/// Keyboard modifiers held during an event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Shift held.
    pub shift: bool,
    /// Control held.
    pub ctrl: bool,
    /// Alt held.
    pub alt: bool,
    /// Super/Meta held.
    pub meta: bool,
}

/// Mouse buttons held during a mouse event (for drag tracking).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ButtonsHeld {
    /// Left button down.
    pub left: bool,
    /// Middle button down.
    pub middle: bool,
    /// Right button down.
    pub right: bool,
}

// cef_event_flags_t values (stable across CEF versions).
const EVENTFLAG_SHIFT_DOWN: u32 = 1 << 1;
const EVENTFLAG_CONTROL_DOWN: u32 = 1 << 2;
const EVENTFLAG_ALT_DOWN: u32 = 1 << 3;
const EVENTFLAG_LEFT_MOUSE_BUTTON: u32 = 1 << 4;
const EVENTFLAG_MIDDLE_MOUSE_BUTTON: u32 = 1 << 5;
const EVENTFLAG_RIGHT_MOUSE_BUTTON: u32 = 1 << 6;
const EVENTFLAG_COMMAND_DOWN: u32 = 1 << 7;
const EVENTFLAG_IS_KEY_PAD: u32 = 1 << 9;

/// CEF modifier bit set for keyboard modifiers and held mouse buttons.
pub fn event_flags(m: Modifiers, buttons: ButtonsHeld) -> u32 {
    let mut f = 0;
    if m.shift {
        f |= EVENTFLAG_SHIFT_DOWN;
    }
    if m.ctrl {
        f |= EVENTFLAG_CONTROL_DOWN;
    }
    if m.alt {
        f |= EVENTFLAG_ALT_DOWN;
    }
    if m.meta {
        f |= EVENTFLAG_COMMAND_DOWN;
    }
    if buttons.left {
        f |= EVENTFLAG_LEFT_MOUSE_BUTTON;
    }
    if buttons.middle {
        f |= EVENTFLAG_MIDDLE_MOUSE_BUTTON;
    }
    if buttons.right {
        f |= EVENTFLAG_RIGHT_MOUSE_BUTTON;
    }
    f
}

/// Mouse button of a click event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseButton {
    /// Primary button.
    Left,
    /// Wheel button.
    Middle,
    /// Secondary button.
    Right,
}

/// Keys without a text of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum NamedKey {
    Enter,
    Tab,
    Backspace,
    Escape,
    Space,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    ArrowUp,
    ArrowDown,
    ArrowLeft,
    ArrowRight,
    Shift,
    Control,
    Alt,
    Meta,
    CapsLock,
    ContextMenu,
    /// F1..=F24.
    F(u8),
}

/// A key as the window system reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// A named (non-text) key.
    Named(NamedKey),
    /// A key that produces text; the string is the key's character(s) with
    /// modifiers applied (e.g. "A" with shift, "!" for shift+1 on US layouts).
    Character(String),
}

/// One key press or release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInput {
    /// Logical key.
    pub key: Key,
    /// Text this press inserts, if any (may differ from the key with dead keys/IME).
    pub text: Option<String>,
    /// True for press/repeat, false for release.
    pub pressed: bool,
    /// Modifiers held.
    pub modifiers: Modifiers,
    /// True when the key is on the numeric keypad.
    pub keypad: bool,
    /// The platform scan code, passed through as `native_key_code` (0 if unknown).
    pub native_code: i32,
}

/// The kind of a low-level CEF key event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEventKind {
    /// Key down without text (CEF's RAWKEYDOWN).
    RawKeyDown,
    /// Key released.
    KeyUp,
    /// A character produced by the key.
    Char,
}

/// One CEF key event, in CEF's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CefKey {
    /// Kind of event.
    pub kind: KeyEventKind,
    /// Windows virtual-key code for RawKeyDown/KeyUp, the UTF-16 unit for Char.
    pub windows_key_code: i32,
    /// Platform scan code.
    pub native_key_code: i32,
    /// UTF-16 code unit of the character (0 when none).
    pub character: u16,
    /// The character without modifiers.
    pub unmodified_character: u16,
    /// EVENTFLAG_* bits.
    pub modifiers: u32,
}

/// Translates one key press/release into the CEF events that carry it:
/// a RawKeyDown (+ one Char per UTF-16 unit of its text) or a KeyUp.
pub fn key_events(input: &KeyInput) -> Vec<CefKey> {
    let mut modifiers = event_flags(input.modifiers, ButtonsHeld::default());
    if input.keypad {
        modifiers |= EVENTFLAG_IS_KEY_PAD;
    }
    let vk = windows_key_code(&input.key);
    let control_char = control_character(&input.key);
    let first_unit = |s: &str| s.encode_utf16().next().unwrap_or(0);
    let unmodified = match &input.key {
        Key::Character(s) => first_unit(&s.to_lowercase()),
        Key::Named(_) => control_char.unwrap_or(0),
    };
    let base = CefKey {
        kind: KeyEventKind::RawKeyDown,
        windows_key_code: vk,
        native_key_code: input.native_code,
        character: 0,
        unmodified_character: unmodified,
        modifiers,
    };
    if !input.pressed {
        return vec![CefKey { kind: KeyEventKind::KeyUp, ..base }];
    }
    let mut out = vec![base];
    // Ctrl/Alt chords are shortcuts, not text (Ctrl+A selects all; it types nothing).
    let chord = input.modifiers.ctrl || input.modifiers.alt || input.modifiers.meta;
    let text: Option<String> = match (&input.text, &input.key) {
        _ if chord => None,
        (Some(t), _) if !t.is_empty() => Some(t.clone()),
        (_, Key::Character(s)) => Some(s.clone()),
        _ => None,
    };
    if let Some(text) = text {
        for unit in text.encode_utf16() {
            out.push(CefKey {
                kind: KeyEventKind::Char,
                windows_key_code: unit as i32,
                character: unit,
                unmodified_character: unit,
                ..base
            });
        }
    } else if let Some(c) = control_char.filter(|_| !chord) {
        // Enter, Tab and Backspace also produce a char event in Chromium (keypress).
        out.push(CefKey {
            kind: KeyEventKind::Char,
            windows_key_code: c as i32,
            character: c,
            unmodified_character: c,
            ..base
        });
    }
    out
}

fn control_character(key: &Key) -> Option<u16> {
    match key {
        Key::Named(NamedKey::Enter) => Some(13),
        Key::Named(NamedKey::Tab) => Some(9),
        Key::Named(NamedKey::Backspace) => Some(8),
        Key::Named(NamedKey::Escape) => Some(27),
        Key::Named(NamedKey::Space) => Some(32),
        _ => None,
    }
}

/// The Windows virtual-key code of a key (US layout for characters).
pub fn windows_key_code(key: &Key) -> i32 {
    match key {
        Key::Named(n) => named_vk(*n),
        Key::Character(s) => s.chars().next().map_or(0, char_key_code),
    }
}

fn named_vk(n: NamedKey) -> i32 {
    match n {
        NamedKey::Backspace => 0x08,
        NamedKey::Tab => 0x09,
        NamedKey::Enter => 0x0D,
        NamedKey::Shift => 0x10,
        NamedKey::Control => 0x11,
        NamedKey::Alt => 0x12,
        NamedKey::CapsLock => 0x14,
        NamedKey::Escape => 0x1B,
        NamedKey::Space => 0x20,
        NamedKey::PageUp => 0x21,
        NamedKey::PageDown => 0x22,
        NamedKey::End => 0x23,
        NamedKey::Home => 0x24,
        NamedKey::ArrowLeft => 0x25,
        NamedKey::ArrowUp => 0x26,
        NamedKey::ArrowRight => 0x27,
        NamedKey::ArrowDown => 0x28,
        NamedKey::Insert => 0x2D,
        NamedKey::Delete => 0x2E,
        NamedKey::Meta => 0x5B,
        NamedKey::ContextMenu => 0x5D,
        NamedKey::F(k) if (1..=24).contains(&k) => 0x70 + i32::from(k) - 1,
        NamedKey::F(_) => 0,
    }
}

/// The DOM `code` (physical key) that types `c` on a US keyboard, shifted or
/// not; `None` for characters that layout has no key for.
pub fn us_dom_code(c: char) -> Option<&'static str> {
    const LETTERS: [&str; 26] = [
        "KeyA", "KeyB", "KeyC", "KeyD", "KeyE", "KeyF", "KeyG", "KeyH", "KeyI", "KeyJ", "KeyK", "KeyL", "KeyM", "KeyN",
        "KeyO", "KeyP", "KeyQ", "KeyR", "KeyS", "KeyT", "KeyU", "KeyV", "KeyW", "KeyX", "KeyY", "KeyZ",
    ];
    const DIGITS: [&str; 10] =
        ["Digit0", "Digit1", "Digit2", "Digit3", "Digit4", "Digit5", "Digit6", "Digit7", "Digit8", "Digit9"];
    Some(match c {
        'a'..='z' => LETTERS[(c as u8 - b'a') as usize],
        'A'..='Z' => LETTERS[(c as u8 - b'A') as usize],
        '0'..='9' => DIGITS[(c as u8 - b'0') as usize],
        ')' => "Digit0",
        '!' => "Digit1",
        '@' => "Digit2",
        '#' => "Digit3",
        '$' => "Digit4",
        '%' => "Digit5",
        '^' => "Digit6",
        '&' => "Digit7",
        '*' => "Digit8",
        '(' => "Digit9",
        ' ' => "Space",
        ';' | ':' => "Semicolon",
        '=' | '+' => "Equal",
        ',' | '<' => "Comma",
        '-' | '_' => "Minus",
        '.' | '>' => "Period",
        '/' | '?' => "Slash",
        '`' | '~' => "Backquote",
        '[' | '{' => "BracketLeft",
        '\\' | '|' => "Backslash",
        ']' | '}' => "BracketRight",
        '\'' | '"' => "Quote",
        _ => return None,
    })
}

/// The Windows virtual-key code of character `c` on a US keyboard.
pub fn char_key_code(c: char) -> i32 {
    match c {
        'a'..='z' => c.to_ascii_uppercase() as i32,
        'A'..='Z' | '0'..='9' => c as i32,
        ' ' => 0x20,
        ')' => 0x30,
        '!' => 0x31,
        '@' => 0x32,
        '#' => 0x33,
        '$' => 0x34,
        '%' => 0x35,
        '^' => 0x36,
        '&' => 0x37,
        '*' => 0x38,
        '(' => 0x39,
        ';' | ':' => 0xBA,
        '=' | '+' => 0xBB,
        ',' | '<' => 0xBC,
        '-' | '_' => 0xBD,
        '.' | '>' => 0xBE,
        '/' | '?' => 0xBF,
        '`' | '~' => 0xC0,
        '[' | '{' => 0xDB,
        '\\' | '|' => 0xDC,
        ']' | '}' => 0xDD,
        '\'' | '"' => 0xDE,
        // Non-US characters: VK_PACKET-like "unknown"; the Char event carries the text.
        _ => 0xE5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(key: Key, mods: Modifiers) -> KeyInput {
        KeyInput { key, text: None, pressed: true, modifiers: mods, keypad: false, native_code: 0 }
    }

    #[test]
    fn punctuation_is_not_sent_as_navigation_keys() {
        // '!' is 0x21 in ASCII, which is VK_PRIOR (PageUp): must map to the '1' key.
        let ev = key_events(&press(Key::Character("!".into()), Modifiers { shift: true, ..Default::default() }));
        assert_eq!(ev[0].kind, KeyEventKind::RawKeyDown);
        assert_eq!(ev[0].windows_key_code, 0x31);
        assert_eq!(ev[1].kind, KeyEventKind::Char);
        assert_eq!(ev[1].character, '!' as u16);
        assert_eq!(ev[1].modifiers & EVENTFLAG_SHIFT_DOWN, EVENTFLAG_SHIFT_DOWN);
    }

    #[test]
    fn every_us_key_character_has_a_code_and_its_own_vk() {
        for c in (' '..='~').filter(|c| !c.is_ascii_control()) {
            let code = us_dom_code(c).unwrap_or_else(|| panic!("{c:?} has no DOM code"));
            assert_ne!(char_key_code(c), 0xE5, "{c:?} ({code}) has no VK");
        }
        assert_eq!(
            (us_dom_code('q'), us_dom_code('Q'), us_dom_code('{')),
            (Some("KeyQ"), Some("KeyQ"), Some("BracketLeft"))
        );
        assert_eq!((us_dom_code('é'), us_dom_code('日'), us_dom_code('\n')), (None, None, None));
    }

    #[test]
    fn vk_table() {
        let table: &[(Key, i32)] = &[
            (Key::Character("a".into()), 0x41),
            (Key::Character("Z".into()), 0x5A),
            (Key::Character("7".into()), 0x37),
            (Key::Character("/".into()), 0xBF),
            (Key::Named(NamedKey::Enter), 0x0D),
            (Key::Named(NamedKey::PageUp), 0x21),
            (Key::Named(NamedKey::ArrowLeft), 0x25),
            (Key::Named(NamedKey::Delete), 0x2E),
            (Key::Named(NamedKey::F(1)), 0x70),
            (Key::Named(NamedKey::F(12)), 0x7B),
            (Key::Named(NamedKey::F(24)), 0x87),
        ];
        for (k, vk) in table {
            assert_eq!(windows_key_code(k), *vk, "{k:?}");
        }
    }

    #[test]
    fn chords_send_no_text_and_release_sends_keyup() {
        let ctrl = Modifiers { ctrl: true, ..Default::default() };
        let ev = key_events(&press(Key::Character("a".into()), ctrl));
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].modifiers & EVENTFLAG_CONTROL_DOWN, EVENTFLAG_CONTROL_DOWN);
        let mut up = press(Key::Character("a".into()), Modifiers::default());
        up.pressed = false;
        let ev = key_events(&up);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].kind, KeyEventKind::KeyUp);
    }

    #[test]
    fn enter_produces_keypress_char_and_text_uses_utf16() {
        let ev = key_events(&press(Key::Named(NamedKey::Enter), Modifiers::default()));
        assert_eq!(ev.iter().map(|e| e.kind).collect::<Vec<_>>(), vec![KeyEventKind::RawKeyDown, KeyEventKind::Char]);
        assert_eq!(ev[1].character, 13);
        let mut emoji = press(Key::Character("😀".into()), Modifiers::default());
        emoji.text = Some("😀".into());
        let ev = key_events(&emoji);
        assert_eq!(ev.len(), 3, "surrogate pair = two char events");
        let arrows = key_events(&press(Key::Named(NamedKey::ArrowUp), Modifiers::default()));
        assert_eq!(arrows.len(), 1);
    }
}
