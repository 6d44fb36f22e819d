//! The boundary between a terminal session and the application hosting it.

use crate::signals::TerminalSignal;

/// How a terminal's child process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitStatus {
    /// Exit code (1 when the process was killed by a signal).
    pub code: u32,
    /// Name of the terminating signal, when it was killed by one.
    pub signal: Option<String>,
}

impl ExitStatus {
    /// Whether the child exited normally with code 0.
    pub fn success(&self) -> bool {
        self.code == 0 && self.signal.is_none()
    }
}

impl From<portable_pty::ExitStatus> for ExitStatus {
    fn from(status: portable_pty::ExitStatus) -> Self {
        Self { code: status.exit_code(), signal: status.signal().map(str::to_owned) }
    }
}

/// Callbacks from a running terminal to the app (one implementation per node).
///
/// Called from the session's parser thread, never while the screen lock is held,
/// so an implementation may call back into the [`crate::Terminal`] (for example
/// to take a snapshot). Implementations should be quick: post to the main loop.
pub trait TerminalHost: Send + Sync {
    /// The grid changed; request a redraw.
    fn wakeup(&self);
    /// The title was set by OSC 0/2 (`Some`) or reset to the default (`None`).
    fn title_changed(&self, title: Option<String>);
    /// The bell rang (BEL).
    fn bell(&self);
    /// A program asked to put `text` on the clipboard (OSC 52).
    fn clipboard_store(&self, text: String);
    /// The child process exited and was reaped; called once, after its output is parsed.
    fn exited(&self, status: ExitStatus);
    /// The program signalled something beyond the grid (a notification, progress,
    /// a prompt mark, a status report). Hosts that do not care ignore it.
    fn signal(&self, signal: TerminalSignal) {
        let _ = signal;
    }
}
