//! Input a page is sent as a person's would be (`Input.*` parameters).

use serde::Serialize;

/// One input command.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A mouse move, press or release.
    Mouse(MouseEvent),
    /// A key going down or up.
    Key(KeyEvent),
    /// Text committed as an input method would (no key events).
    InsertText(String),
}

/// What a mouse event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MouseEventType {
    /// The pointer moved.
    MouseMoved,
    /// A button went down.
    MousePressed,
    /// A button went up.
    MouseReleased,
}

/// The button of a mouse event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    /// No button (a move).
    None,
    /// The left button.
    Left,
    /// The middle button.
    Middle,
    /// The right button.
    Right,
}

/// A mouse event at a point of the viewport (`Input.dispatchMouseEvent`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MouseEvent {
    /// Move, press or release.
    #[serde(rename = "type")]
    pub kind: MouseEventType,
    /// X in CSS pixels of the viewport.
    pub x: f64,
    /// Y in CSS pixels of the viewport.
    pub y: f64,
    /// The button pressed or released.
    pub button: MouseButton,
    /// The buttons held, as a bit mask (1 left, 2 right, 4 middle).
    pub buttons: u32,
    /// Clicks in a row.
    pub click_count: u32,
}

/// What a key event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum KeyEventType {
    /// The key went down (carrying its text, if any).
    KeyDown,
    /// The key went up.
    KeyUp,
}

/// A key event (`Input.dispatchKeyEvent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyEvent {
    /// Down or up.
    #[serde(rename = "type")]
    pub kind: KeyEventType,
    /// The DOM `key` (`a`, `Enter`).
    pub key: String,
    /// The DOM `code` (`KeyA`, `Enter`).
    pub code: String,
    /// Windows virtual key code.
    pub windows_virtual_key_code: i32,
    /// Native virtual key code.
    pub native_virtual_key_code: i32,
    /// The text the key types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The text without modifiers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmodified_text: Option<String>,
}
