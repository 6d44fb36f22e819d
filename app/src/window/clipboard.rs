//! The system clipboard (X11 CLIPBOARD selection through `arboard`), opened on
//! first use. arboard keeps a thread that serves the selection to other
//! programs while the app owns it.

use thiserror::Error;

/// Why the clipboard could not be read or written.
#[derive(Debug, Error)]
pub enum ClipboardError {
    /// No clipboard (no X server reachable, or the selection owner did not answer).
    #[error("clipboard unavailable: {0}")]
    Unavailable(String),
    /// The clipboard holds no text.
    #[error("the clipboard holds no text")]
    Empty,
}

/// A lazily opened system clipboard.
#[derive(Default)]
pub struct SystemClipboard {
    inner: Option<arboard::Clipboard>,
}

impl SystemClipboard {
    fn open(&mut self) -> Result<&mut arboard::Clipboard, ClipboardError> {
        if self.inner.is_none() {
            self.inner = Some(arboard::Clipboard::new().map_err(|e| ClipboardError::Unavailable(e.to_string()))?);
        }
        self.inner.as_mut().ok_or_else(|| ClipboardError::Unavailable("not opened".into()))
    }

    /// The clipboard's text.
    pub fn text(&mut self) -> Result<String, ClipboardError> {
        match self.open()?.get_text() {
            Ok(t) if !t.is_empty() => Ok(t),
            Ok(_) | Err(arboard::Error::ContentNotAvailable) => Err(ClipboardError::Empty),
            Err(e) => Err(ClipboardError::Unavailable(e.to_string())),
        }
    }

    /// Puts text on the clipboard.
    pub fn set_text(&mut self, text: String) -> Result<(), ClipboardError> {
        self.open()?.set_text(text).map_err(|e| ClipboardError::Unavailable(e.to_string()))
    }
}
