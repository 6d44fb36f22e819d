//! The seam where the runtime starts a PTY: [`PtySpawner`]. The app uses
//! [`TerminalSpawner`] (the terminal crate); tests record what would start.

use crate::model::NodeId;
use std::sync::Arc;
use terminal::{Terminal, TerminalConfig, TerminalError, TerminalHost};

/// One PTY to start: everything decided (command, environment, size,
/// persistence), nothing started yet.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// The node it is for.
    pub node: NodeId,
    /// The session name (tmux session and snapshot file stem).
    pub session: String,
    /// What the terminal crate starts.
    pub config: TerminalConfig,
}

/// Starts PTYs for terminal and agent nodes.
pub trait PtySpawner {
    /// Starts `spec`, reporting to `host`.
    fn spawn(&self, spec: SpawnSpec, host: Arc<dyn TerminalHost>) -> Result<Terminal, TerminalError>;
}

/// The real spawner: a child on a new PTY through [`Terminal::spawn`].
#[derive(Debug, Default, Clone, Copy)]
pub struct TerminalSpawner;

impl PtySpawner for TerminalSpawner {
    fn spawn(&self, spec: SpawnSpec, host: Arc<dyn TerminalHost>) -> Result<Terminal, TerminalError> {
        Terminal::spawn(spec.config, host)
    }
}

/// Test spawner: records every spec and starts nothing (answers with an
/// error, as a PTY that could not open would).
#[cfg(test)]
#[derive(Default)]
pub(crate) struct RecordingSpawner {
    pub(crate) specs: std::sync::Mutex<Vec<SpawnSpec>>,
}

#[cfg(test)]
impl RecordingSpawner {
    /// Every spec asked for so far.
    pub(crate) fn specs(&self) -> Vec<SpawnSpec> {
        self.specs.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
impl PtySpawner for RecordingSpawner {
    fn spawn(&self, spec: SpawnSpec, _host: Arc<dyn TerminalHost>) -> Result<Terminal, TerminalError> {
        self.specs.lock().unwrap_or_else(|p| p.into_inner()).push(spec);
        Err(TerminalError::OpenPty("recording spawner: no PTY in tests".into()))
    }
}
