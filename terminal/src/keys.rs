//! Keyboard and paste encoding: the app's key events to the bytes an xterm
//! sends, honouring application cursor/keypad modes and bracketed paste.

use crate::input::InputModes;
pub use crate::input::Modifiers;

/// A key press, independent of any windowing library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Text input; with Shift already applied (e.g. `'A'`, `'!'`).
    Char(char),
    /// Return.
    Enter,
    /// Tab.
    Tab,
    /// Backspace.
    Backspace,
    /// Escape.
    Escape,
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Left arrow.
    Left,
    /// Right arrow.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page Up.
    PageUp,
    /// Page Down.
    PageDown,
    /// Insert.
    Insert,
    /// Delete (forward).
    Delete,
    /// Function key F1..=F24.
    F(u8),
    /// Numeric keypad key: `'0'..='9'`, `'.'`, `'+'`, `'-'`, `'*'`, `'/'`, `'='`.
    Keypad(char),
    /// Keypad Enter.
    KeypadEnter,
}

/// xterm's modifier parameter (`1 + shift + 2·alt + 4·ctrl + 8·super`); 1 means none.
fn xterm_param(mods: Modifiers) -> u8 {
    1 + u8::from(mods.shift) + 2 * u8::from(mods.alt) + 4 * u8::from(mods.ctrl) + 8 * u8::from(mods.logo)
}

/// Bytes to send to the PTY for `key` with `mods`, or empty when the key has no encoding
/// (e.g. F25, or Super+letter which the app should treat as a shortcut).
pub fn encode_key(key: Key, mods: Modifiers, modes: &InputModes) -> Vec<u8> {
    let param = xterm_param(mods);
    match key {
        Key::Char(c) => encode_char(c, mods),
        Key::Enter => alt_prefixed(mods.alt, b"\r"),
        Key::Tab if mods.shift => b"\x1b[Z".to_vec(),
        Key::Tab => alt_prefixed(mods.alt, b"\t"),
        Key::Backspace => alt_prefixed(mods.alt, if mods.ctrl { b"\x08" } else { b"\x7f" }),
        Key::Escape => alt_prefixed(mods.alt, b"\x1b"),
        Key::Up => cursor_key(b'A', param, modes.app_cursor),
        Key::Down => cursor_key(b'B', param, modes.app_cursor),
        Key::Right => cursor_key(b'C', param, modes.app_cursor),
        Key::Left => cursor_key(b'D', param, modes.app_cursor),
        Key::Home => cursor_key(b'H', param, modes.app_cursor),
        Key::End => cursor_key(b'F', param, modes.app_cursor),
        Key::Insert => tilde_key(2, param),
        Key::Delete => tilde_key(3, param),
        Key::PageUp => tilde_key(5, param),
        Key::PageDown => tilde_key(6, param),
        Key::F(n @ 1..=4) => {
            let letter = b"PQRS"[usize::from(n - 1)];
            if param == 1 {
                vec![0x1b, b'O', letter]
            } else {
                format!("\x1b[1;{param}{}", letter as char).into_bytes()
            }
        }
        Key::F(n @ 5..=24) => {
            const CODES: [u8; 20] = [15, 17, 18, 19, 20, 21, 23, 24, 25, 26, 28, 29, 31, 32, 33, 34, 42, 43, 44, 45];
            tilde_key(CODES[usize::from(n - 5)], param)
        }
        Key::F(_) => Vec::new(),
        Key::KeypadEnter if modes.app_keypad => b"\x1bOM".to_vec(),
        Key::KeypadEnter => alt_prefixed(mods.alt, b"\r"),
        Key::Keypad(c) => {
            let app = match c {
                '0'..='9' => Some(b'p' + (c as u8 - b'0')),
                '.' => Some(b'n'),
                '+' => Some(b'k'),
                '-' => Some(b'm'),
                '*' => Some(b'j'),
                '/' => Some(b'o'),
                '=' => Some(b'X'),
                _ => None,
            };
            match app {
                Some(letter) if modes.app_keypad => vec![0x1b, b'O', letter],
                Some(_) => encode_char(c, mods),
                None => Vec::new(),
            }
        }
    }
}

fn alt_prefixed(alt: bool, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 1);
    if alt {
        out.push(0x1b);
    }
    out.extend_from_slice(bytes);
    out
}

/// Arrows, Home and End: `CSI x` / `SS3 x` (DECCKM), `CSI 1;m x` with modifiers.
fn cursor_key(letter: u8, param: u8, app_cursor: bool) -> Vec<u8> {
    if param != 1 {
        format!("\x1b[1;{param}{}", letter as char).into_bytes()
    } else if app_cursor {
        vec![0x1b, b'O', letter]
    } else {
        vec![0x1b, b'[', letter]
    }
}

/// Editing and function keys: `CSI n ~` / `CSI n;m ~`.
fn tilde_key(code: u8, param: u8) -> Vec<u8> {
    if param == 1 {
        format!("\x1b[{code}~").into_bytes()
    } else {
        format!("\x1b[{code};{param}~").into_bytes()
    }
}

/// A character with Ctrl mapped to its C0 control and Alt as an ESC prefix.
fn encode_char(c: char, mods: Modifiers) -> Vec<u8> {
    if mods.logo && !mods.ctrl && !mods.alt {
        // Super+key is an app shortcut, not terminal input.
        return Vec::new();
    }
    let mut out = Vec::with_capacity(5);
    if mods.alt {
        out.push(0x1b);
    }
    match (mods.ctrl, control_code(c)) {
        (true, Some(code)) => out.push(code),
        _ => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// The C0 control xterm sends for Ctrl+`c` (Ctrl+A = 0x01 … Ctrl+[ = ESC, Ctrl+Space = NUL).
fn control_code(c: char) -> Option<u8> {
    match c {
        'a'..='z' => Some(c as u8 - b'a' + 1),
        'A'..='Z' => Some(c as u8 - b'A' + 1),
        ' ' | '@' | '2' => Some(0x00),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '~' | '6' => Some(0x1e),
        '_' | '/' | '-' | '7' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

/// Bytes for pasting `text`. With bracketed paste the text is wrapped in
/// `ESC[200~ … ESC[201~` and any ESC or ^C inside is removed, so pasted text
/// cannot end the bracket early or inject sequences. Without it, newlines
/// become carriage returns, as a typed Enter would.
pub fn encode_paste(text: &str, bracketed: bool) -> Vec<u8> {
    if bracketed {
        let cleaned: String = text.chars().filter(|&c| c != '\x1b' && c != '\x03').collect();
        let mut out = Vec::with_capacity(cleaned.len() + 12);
        out.extend_from_slice(b"\x1b[200~");
        out.extend_from_slice(cleaned.as_bytes());
        out.extend_from_slice(b"\x1b[201~");
        out
    } else {
        text.replace("\r\n", "\r").replace('\n', "\r").into_bytes()
    }
}

/// Focus change report (`CSI I` / `CSI O`) when the program enabled focus reporting.
pub fn encode_focus(focused: bool, modes: &InputModes) -> Option<&'static [u8]> {
    modes.focus_reporting.then_some(if focused { b"\x1b[I" } else { b"\x1b[O" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(key: Key, mods: Modifiers) -> Vec<u8> {
        encode_key(key, mods, &InputModes::default())
    }

    fn app_cursor() -> InputModes {
        InputModes { app_cursor: true, ..InputModes::default() }
    }

    #[test]
    fn plain_keys() {
        let table: &[(Key, &[u8])] = &[
            (Key::Char('a'), b"a"),
            (Key::Char('é'), "é".as_bytes()),
            (Key::Enter, b"\r"),
            (Key::Tab, b"\t"),
            (Key::Backspace, b"\x7f"),
            (Key::Escape, b"\x1b"),
            (Key::Up, b"\x1b[A"),
            (Key::Down, b"\x1b[B"),
            (Key::Right, b"\x1b[C"),
            (Key::Left, b"\x1b[D"),
            (Key::Home, b"\x1b[H"),
            (Key::End, b"\x1b[F"),
            (Key::Insert, b"\x1b[2~"),
            (Key::Delete, b"\x1b[3~"),
            (Key::PageUp, b"\x1b[5~"),
            (Key::PageDown, b"\x1b[6~"),
            (Key::F(1), b"\x1bOP"),
            (Key::F(4), b"\x1bOS"),
            (Key::F(5), b"\x1b[15~"),
            (Key::F(10), b"\x1b[21~"),
            (Key::F(11), b"\x1b[23~"),
            (Key::F(12), b"\x1b[24~"),
            (Key::F(13), b"\x1b[25~"),
            (Key::F(20), b"\x1b[34~"),
            (Key::F(24), b"\x1b[45~"),
            (Key::F(25), b""),
            (Key::Keypad('5'), b"5"),
            (Key::KeypadEnter, b"\r"),
        ];
        for (key, want) in table {
            assert_eq!(enc(*key, Modifiers::NONE), want.to_vec(), "{key:?}");
        }
    }

    #[test]
    fn application_cursor_and_keypad_modes() {
        let m = app_cursor();
        assert_eq!(encode_key(Key::Up, Modifiers::NONE, &m), b"\x1bOA");
        assert_eq!(encode_key(Key::Home, Modifiers::NONE, &m), b"\x1bOH");
        // Modified arrows use CSI even in application mode.
        assert_eq!(encode_key(Key::Up, Modifiers::CTRL, &m), b"\x1b[1;5A");
        let kp = InputModes { app_keypad: true, ..InputModes::default() };
        assert_eq!(encode_key(Key::Keypad('0'), Modifiers::NONE, &kp), b"\x1bOp");
        assert_eq!(encode_key(Key::Keypad('9'), Modifiers::NONE, &kp), b"\x1bOy");
        assert_eq!(encode_key(Key::Keypad('+'), Modifiers::NONE, &kp), b"\x1bOk");
        assert_eq!(encode_key(Key::KeypadEnter, Modifiers::NONE, &kp), b"\x1bOM");
    }

    #[test]
    fn xterm_modifier_parameters() {
        let shift_ctrl = Modifiers { ctrl: true, shift: true, ..Modifiers::NONE };
        let all = Modifiers { ctrl: true, shift: true, alt: true, logo: false };
        assert_eq!(enc(Key::Up, Modifiers::SHIFT), b"\x1b[1;2A");
        assert_eq!(enc(Key::Left, Modifiers::ALT), b"\x1b[1;3D");
        assert_eq!(enc(Key::Right, Modifiers::CTRL), b"\x1b[1;5C");
        assert_eq!(enc(Key::End, shift_ctrl), b"\x1b[1;6F");
        assert_eq!(enc(Key::Delete, Modifiers::CTRL), b"\x1b[3;5~");
        assert_eq!(enc(Key::PageUp, all), b"\x1b[5;8~");
        assert_eq!(enc(Key::F(1), Modifiers::SHIFT), b"\x1b[1;2P");
        assert_eq!(enc(Key::F(5), Modifiers::CTRL), b"\x1b[15;5~");
        assert_eq!(enc(Key::Tab, Modifiers::SHIFT), b"\x1b[Z");
    }

    #[test]
    fn control_and_alt_characters() {
        let table: &[(char, u8)] = &[
            ('a', 0x01),
            ('c', 0x03),
            ('z', 0x1a),
            ('C', 0x03),
            (' ', 0x00),
            ('@', 0x00),
            ('[', 0x1b),
            ('\\', 0x1c),
            (']', 0x1d),
            ('^', 0x1e),
            ('_', 0x1f),
            ('/', 0x1f),
            ('?', 0x7f),
        ];
        for &(c, code) in table {
            assert_eq!(enc(Key::Char(c), Modifiers::CTRL), vec![code], "ctrl+{c}");
        }
        assert_eq!(enc(Key::Char('x'), Modifiers::ALT), b"\x1bx");
        let ctrl_alt = Modifiers { ctrl: true, alt: true, ..Modifiers::NONE };
        assert_eq!(enc(Key::Char('b'), ctrl_alt), b"\x1b\x02");
        assert_eq!(enc(Key::Backspace, Modifiers::ALT), b"\x1b\x7f");
        assert_eq!(enc(Key::Backspace, Modifiers::CTRL), b"\x08");
        assert_eq!(enc(Key::Enter, Modifiers::ALT), b"\x1b\r");
        // Ctrl with a character that has no control code sends the character.
        assert_eq!(enc(Key::Char('1'), Modifiers::CTRL), b"1");
        let logo = Modifiers { logo: true, ..Modifiers::NONE };
        assert!(enc(Key::Char('c'), logo).is_empty());
    }

    #[test]
    fn bracketed_paste_wraps_and_strips_escapes() {
        let evil = "ls\x1b[201~rm -rf ~\x03\n";
        assert_eq!(encode_paste(evil, true), b"\x1b[200~ls[201~rm -rf ~\n\x1b[201~".to_vec());
        assert_eq!(encode_paste("a\r\nb\nc", false), b"a\rb\rc".to_vec());
    }

    #[test]
    fn focus_reports_only_when_enabled() {
        assert_eq!(encode_focus(true, &InputModes::default()), None);
        let m = InputModes { focus_reporting: true, ..InputModes::default() };
        assert_eq!(encode_focus(true, &m), Some(&b"\x1b[I"[..]));
        assert_eq!(encode_focus(false, &m), Some(&b"\x1b[O"[..]));
    }
}
