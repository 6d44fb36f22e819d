//! What encoding input needs to know, shared by [`crate::keys`],
//! [`crate::mouse`] and the [`crate::Screen`] that reports the modes: the
//! modes the program set ([`InputModes`], with its [`MouseMode`] and
//! [`MouseEncoding`]) and the modifier keys held ([`Modifiers`]). Plain data,
//! importing nothing of the crate, so the encoders and the VT state both
//! build on it.

/// Terminal modes the input side needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputModes {
    /// DECCKM: cursor keys send `ESC O x`.
    pub app_cursor: bool,
    /// DECKPAM: keypad sends application sequences.
    pub app_keypad: bool,
    /// Bracketed paste (2004).
    pub bracketed_paste: bool,
    /// Mouse tracking mode.
    pub mouse: MouseMode,
    /// Mouse coordinate encoding.
    pub mouse_encoding: MouseEncoding,
    /// The alternate screen is active (full-screen apps like vim, htop).
    pub alt_screen: bool,
    /// Alternate scroll (1007): on the alternate screen without mouse mode, the wheel sends arrows.
    pub alternate_scroll: bool,
    /// Focus in/out reporting (1004).
    pub focus_reporting: bool,
}

/// Which mouse events the program asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MouseMode {
    /// No reporting; the app handles the mouse (selection, scrollback).
    #[default]
    Off,
    /// 1000: presses and releases.
    Normal,
    /// 1002: presses, releases and motion while a button is held.
    ButtonEvent,
    /// 1003: all motion.
    AnyEvent,
}

/// How reported coordinates are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MouseEncoding {
    /// `CSI M b x y` with bytes offset by 32 (coordinates up to 223).
    #[default]
    Legacy,
    /// 1005: like legacy, but coordinates as UTF-8 (up to 2015).
    Utf8,
    /// 1006: `CSI < b ; x ; y M/m`.
    Sgr,
}

/// Modifier keys held with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modifiers {
    /// Control.
    pub ctrl: bool,
    /// Alt / Option (sent as an ESC prefix, or in the xterm modifier parameter).
    pub alt: bool,
    /// Shift.
    pub shift: bool,
    /// Super / Windows / Command.
    pub logo: bool,
}

impl Modifiers {
    /// No modifiers.
    pub const NONE: Self = Self { ctrl: false, alt: false, shift: false, logo: false };
    /// Control only.
    pub const CTRL: Self = Self { ctrl: true, alt: false, shift: false, logo: false };
    /// Alt only.
    pub const ALT: Self = Self { ctrl: false, alt: true, shift: false, logo: false };
    /// Shift only.
    pub const SHIFT: Self = Self { ctrl: false, alt: false, shift: true, logo: false };
}
