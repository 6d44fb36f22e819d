//! Mouse reporting (xterm normal/button/any-event tracking, SGR 1006, UTF-8
//! 1005 and legacy X10-style coordinates) and the wheel policy: report to the
//! program, turn into arrow keys (alternate scroll), or scroll scrollback.
//!
//! DECSET 9 (X10 press-only mode) is not tracked: alacritty's parser ignores it;
//! programs that ask for it get normal (1000) reporting only if they also set 1000.

use crate::input::{InputModes, Modifiers};
pub use crate::input::{MouseEncoding, MouseMode};

/// A mouse button (wheel directions count as buttons in the protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseButton {
    /// Left button.
    Left,
    /// Middle button.
    Middle,
    /// Right button.
    Right,
    /// Wheel up one notch.
    WheelUp,
    /// Wheel down one notch.
    WheelDown,
    /// Wheel left.
    WheelLeft,
    /// Wheel right.
    WheelRight,
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseAction {
    /// Button pressed (or wheel notch).
    Press(MouseButton),
    /// Button released.
    Release(MouseButton),
    /// Pointer moved, with the button held (if any).
    Motion(Option<MouseButton>),
}

/// A mouse event at a viewport cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseEvent {
    /// What happened.
    pub action: MouseAction,
    /// Viewport row (0-based).
    pub row: usize,
    /// Column (0-based).
    pub col: usize,
    /// Modifiers held.
    pub mods: Modifiers,
}

/// Bytes reporting `event` to the program, or `None` when its mode does not ask
/// for this event (or legacy coordinates cannot express the position).
pub fn encode_mouse(event: &MouseEvent, modes: &InputModes) -> Option<Vec<u8>> {
    let (button, released, motion) = match event.action {
        MouseAction::Press(b) => (Some(b), false, false),
        MouseAction::Release(b) => {
            if is_wheel(b) {
                return None;
            }
            (Some(b), true, false)
        }
        MouseAction::Motion(b) => (b, false, true),
    };
    match modes.mouse {
        MouseMode::Off => return None,
        MouseMode::Normal if motion => return None,
        MouseMode::ButtonEvent if motion && button.is_none() => return None,
        _ => {}
    }
    let mut code: u32 = match button {
        None => 3,
        Some(MouseButton::Left) => 0,
        Some(MouseButton::Middle) => 1,
        Some(MouseButton::Right) => 2,
        Some(MouseButton::WheelUp) => 64,
        Some(MouseButton::WheelDown) => 65,
        Some(MouseButton::WheelLeft) => 66,
        Some(MouseButton::WheelRight) => 67,
    };
    if motion {
        code += 32;
    }
    if event.mods.shift {
        code += 4;
    }
    if event.mods.alt {
        code += 8;
    }
    if event.mods.ctrl {
        code += 16;
    }
    // 1-based; a position too far out for the encoding is not reported (never wrapped or overflowed).
    let x = event.col.checked_add(1)?;
    let y = event.row.checked_add(1)?;
    match modes.mouse_encoding {
        MouseEncoding::Sgr => {
            let end = if released { 'm' } else { 'M' };
            Some(format!("\x1b[<{code};{x};{y}{end}").into_bytes())
        }
        MouseEncoding::Legacy | MouseEncoding::Utf8 => {
            if released {
                // Legacy releases do not say which button.
                code = (code & !0b11) | 3;
            }
            let mut out = b"\x1b[M".to_vec();
            out.push(u8::try_from(32 + code).ok()?);
            for v in [x, y] {
                if modes.mouse_encoding == MouseEncoding::Utf8 {
                    let v = u32::try_from(v).ok().filter(|&v| v <= 2015)?;
                    let c = char::from_u32(32 + v)?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                } else {
                    out.push(u8::try_from(v).ok().filter(|&v| v <= 223)? + 32);
                }
            }
            Some(out)
        }
    }
}

fn is_wheel(button: MouseButton) -> bool {
    matches!(button, MouseButton::WheelUp | MouseButton::WheelDown | MouseButton::WheelLeft | MouseButton::WheelRight)
}

/// What the app should do with a wheel movement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WheelAction {
    /// Report as mouse events: call [`encode_mouse`] with a wheel press per notch.
    ReportMouse,
    /// Send these bytes (arrow keys) to the PTY: alternate screen without mouse mode.
    SendKeys(Vec<u8>),
    /// Scroll the scrollback view by this many lines (positive = into history).
    ScrollScrollback(i32),
}

/// Decides how `lines` of wheel movement (positive = up) are handled, like
/// alacritty: mouse mode wins unless Shift is held; the alternate screen with
/// alternate scroll (1007, on by default) gets arrow keys; otherwise scrollback.
pub fn wheel_action(lines: i32, mods: Modifiers, modes: &InputModes) -> WheelAction {
    if modes.mouse != MouseMode::Off && !mods.shift {
        return WheelAction::ReportMouse;
    }
    if modes.alt_screen && modes.alternate_scroll && !mods.shift {
        let arrow: &[u8] = match (lines > 0, modes.app_cursor) {
            (true, true) => b"\x1bOA",
            (true, false) => b"\x1b[A",
            (false, true) => b"\x1bOB",
            (false, false) => b"\x1b[B",
        };
        return WheelAction::SendKeys(arrow.repeat(lines.unsigned_abs() as usize));
    }
    WheelAction::ScrollScrollback(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modes(mouse: MouseMode, encoding: MouseEncoding) -> InputModes {
        InputModes { mouse, mouse_encoding: encoding, ..InputModes::default() }
    }

    fn ev(action: MouseAction, row: usize, col: usize) -> MouseEvent {
        MouseEvent { action, row, col, mods: Modifiers::NONE }
    }

    #[test]
    fn sgr_press_release_and_wheel() {
        let m = modes(MouseMode::Normal, MouseEncoding::Sgr);
        let press = ev(MouseAction::Press(MouseButton::Left), 4, 9);
        assert_eq!(encode_mouse(&press, &m).unwrap(), b"\x1b[<0;10;5M");
        let release = ev(MouseAction::Release(MouseButton::Left), 4, 9);
        assert_eq!(encode_mouse(&release, &m).unwrap(), b"\x1b[<0;10;5m");
        let wheel = ev(MouseAction::Press(MouseButton::WheelDown), 0, 0);
        assert_eq!(encode_mouse(&wheel, &m).unwrap(), b"\x1b[<65;1;1M");
        let mut right = ev(MouseAction::Press(MouseButton::Right), 0, 300);
        right.mods = Modifiers { ctrl: true, shift: true, ..Modifiers::NONE };
        assert_eq!(encode_mouse(&right, &m).unwrap(), b"\x1b[<22;301;1M");
    }

    #[test]
    fn legacy_encoding_and_its_limits() {
        let m = modes(MouseMode::Normal, MouseEncoding::Legacy);
        let press = ev(MouseAction::Press(MouseButton::Middle), 1, 2);
        assert_eq!(encode_mouse(&press, &m).unwrap(), vec![0x1b, b'[', b'M', 33, 35, 34]);
        let release = ev(MouseAction::Release(MouseButton::Middle), 1, 2);
        assert_eq!(encode_mouse(&release, &m).unwrap(), vec![0x1b, b'[', b'M', 35, 35, 34]);
        let far = ev(MouseAction::Press(MouseButton::Left), 0, 250);
        assert_eq!(encode_mouse(&far, &m), None);
        let utf8 = modes(MouseMode::Normal, MouseEncoding::Utf8);
        let bytes = encode_mouse(&far, &utf8).unwrap();
        assert_eq!(&bytes[..4], &[0x1b, b'[', b'M', 32]);
        assert_eq!(std::str::from_utf8(&bytes[4..]).unwrap(), "\u{11b}!");
    }

    #[test]
    fn motion_depends_on_tracking_mode() {
        let drag = ev(MouseAction::Motion(Some(MouseButton::Left)), 0, 0);
        let hover = ev(MouseAction::Motion(None), 0, 0);
        let normal = modes(MouseMode::Normal, MouseEncoding::Sgr);
        assert_eq!(encode_mouse(&drag, &normal), None);
        let button = modes(MouseMode::ButtonEvent, MouseEncoding::Sgr);
        assert_eq!(encode_mouse(&drag, &button).unwrap(), b"\x1b[<32;1;1M");
        assert_eq!(encode_mouse(&hover, &button), None);
        let any = modes(MouseMode::AnyEvent, MouseEncoding::Sgr);
        assert_eq!(encode_mouse(&hover, &any).unwrap(), b"\x1b[<35;1;1M");
        let off = InputModes::default();
        assert_eq!(encode_mouse(&ev(MouseAction::Press(MouseButton::Left), 0, 0), &off), None);
        let wheel_release = ev(MouseAction::Release(MouseButton::WheelUp), 0, 0);
        assert_eq!(encode_mouse(&wheel_release, &normal), None);
    }

    #[test]
    fn wheel_policy() {
        let none = Modifiers::NONE;
        assert_eq!(wheel_action(3, none, &InputModes::default()), WheelAction::ScrollScrollback(3));
        let tracking = modes(MouseMode::Normal, MouseEncoding::Sgr);
        assert_eq!(wheel_action(1, none, &tracking), WheelAction::ReportMouse);
        assert_eq!(wheel_action(1, Modifiers::SHIFT, &tracking), WheelAction::ScrollScrollback(1));
        let alt = InputModes { alt_screen: true, alternate_scroll: true, ..InputModes::default() };
        assert_eq!(wheel_action(2, none, &alt), WheelAction::SendKeys(b"\x1b[A\x1b[A".to_vec()));
        let alt_app = InputModes { app_cursor: true, ..alt };
        assert_eq!(wheel_action(-1, none, &alt_app), WheelAction::SendKeys(b"\x1bOB".to_vec()));
        let no_alt_scroll = InputModes { alternate_scroll: false, ..alt };
        assert_eq!(wheel_action(-1, none, &no_alt_scroll), WheelAction::ScrollScrollback(-1));
    }
}
