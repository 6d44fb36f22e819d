//! Typed errors for spawning and driving a terminal session.

use std::path::PathBuf;

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
    /// Opening the pseudo-terminal failed.
    #[error("could not open a pty: {0}")]
    OpenPty(String),
    /// Spawning the child process failed.
    #[error("could not spawn {program}: {reason}")]
    Spawn {
        /// Program that was being started.
        program: String,
        /// Underlying failure.
        reason: String,
    },
    /// Resizing the pty failed.
    #[error("could not resize the pty: {0}")]
    Resize(String),
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
