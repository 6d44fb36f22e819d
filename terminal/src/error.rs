//! Typed errors for spawning and driving a terminal session.

use std::path::PathBuf;

/// An error of a PTY operation (portable-pty's are `anyhow` errors; boxed,
/// they keep their message and their chain).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Errors from creating or driving a [`crate::Terminal`].
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    /// The requested grid size is unusable (zero columns or rows, or too large).
    #[error("invalid terminal size {cols}x{rows}: {reason}")]
    InvalidSize {
        /// Requested columns.
        cols: u16,
        /// Requested rows.
        rows: u16,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The working directory does not exist or is not a directory.
    #[error("working directory {0} is not a directory")]
    BadWorkingDir(PathBuf),
    /// An environment variable name or value cannot be passed to a child.
    #[error("invalid environment variable {name:?}: {reason}")]
    BadEnv {
        /// Offending variable name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The pseudo-terminal is unusable, for a reason with no error value behind it.
    #[error("could not open a pty: {0}")]
    OpenPty(String),
    /// Opening the pseudo-terminal, or taking its reader or writer, failed.
    #[error("could not open a pty: {0}")]
    Pty(#[source] BoxError),
    /// Spawning the child process failed.
    #[error("could not spawn {program}: {source}")]
    Spawn {
        /// Program that was being started.
        program: String,
        /// Underlying failure: the PTY's, the spawn's or tmux's.
        source: BoxError,
    },
    /// Resizing the pty failed.
    #[error("could not resize the pty: {0}")]
    Resize(#[source] BoxError),
    /// Input could not be queued because the session's writer has stopped.
    #[error("the terminal's input writer has stopped")]
    WriterClosed,
    /// Starting a session thread failed.
    #[error("could not start the {0} thread: {1}")]
    Thread(&'static str, std::io::Error),
    /// A tmux-backed session could not be prepared.
    #[error(transparent)]
    Tmux(#[from] crate::tmux::TmuxError),
}
