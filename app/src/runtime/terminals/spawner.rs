//! The seam where the runtime starts a PTY: [`PtySpawner`]. The app uses
//! [`TerminalSpawner`] (the terminal crate); tests record what would start
//! and, when asked, start fake terminals.

use crate::model::NodeId;
use std::sync::Arc;
use terminal::{RunningTerminal, Terminal, TerminalConfig, TerminalError, TerminalHost};

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
pub trait PtySpawner: Send + Sync {
    /// Starts `spec`, reporting to `host`.
    fn spawn(&self, spec: SpawnSpec, host: Arc<dyn TerminalHost>) -> Result<Box<dyn RunningTerminal>, TerminalError>;

    /// Starts every spec of `batch`, answering each one's outcome in order;
    /// by default one after another through [`Self::spawn`].
    fn spawn_many(&self, batch: Vec<(SpawnSpec, Arc<dyn TerminalHost>)>) -> Vec<Spawned> {
        batch.into_iter().map(|(spec, host)| self.spawn(spec, host)).collect()
    }
}

/// One start's outcome.
pub type Spawned = Result<Box<dyn RunningTerminal>, TerminalError>;

/// The real spawner: a child on a new PTY through [`Terminal::spawn`].
#[derive(Debug, Default, Clone, Copy)]
pub struct TerminalSpawner;

impl PtySpawner for TerminalSpawner {
    fn spawn(&self, spec: SpawnSpec, host: Arc<dyn TerminalHost>) -> Result<Box<dyn RunningTerminal>, TerminalError> {
        Ok(Box::new(Terminal::spawn(spec.config, host)?))
    }

    /// The new tmux sessions of a batch (a restore) are made together, then
    /// the PTYs start side by side (see [`Terminal::spawn_many`]).
    fn spawn_many(&self, batch: Vec<(SpawnSpec, Arc<dyn TerminalHost>)>) -> Vec<Spawned> {
        let configs = batch.into_iter().map(|(spec, host)| (spec.config, host)).collect();
        Terminal::spawn_many(configs)
            .into_iter()
            .map(|started| started.map(|t| Box::new(t) as Box<dyn RunningTerminal>))
            .collect()
    }
}

/// Test spawner: records every spec; by default starts nothing (answers
/// with an error, as a PTY that could not open would), or, made with
/// [`RecordingSpawner::starting`], starts a [`FakeTerminal`](super::fake::FakeTerminal) per spec.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct RecordingSpawner {
    pub(crate) specs: std::sync::Mutex<Vec<SpawnSpec>>,
    /// The fakes started, newest last (`None`: this spawner starts nothing).
    started: Option<std::sync::Mutex<Vec<Started>>>,
}

/// A fake a [`RecordingSpawner`] started, and the node it is for.
#[cfg(test)]
type Started = (NodeId, Arc<super::fake::FakeSession>);

#[cfg(test)]
impl RecordingSpawner {
    /// A spawner whose terminals start, as fakes.
    pub(crate) fn starting() -> Self {
        Self { specs: Default::default(), started: Some(Default::default()) }
    }

    /// Every spec asked for so far.
    pub(crate) fn specs(&self) -> Vec<SpawnSpec> {
        self.specs.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The fake last started for node `id`.
    pub(crate) fn terminal(&self, id: &str) -> Option<Arc<super::fake::FakeSession>> {
        let started = self.started.as_ref()?.lock().unwrap_or_else(|p| p.into_inner());
        started.iter().rev().find(|(node, _)| node.as_str() == id).map(|(_, s)| s.clone())
    }
}

#[cfg(test)]
impl PtySpawner for RecordingSpawner {
    fn spawn(&self, spec: SpawnSpec, host: Arc<dyn TerminalHost>) -> Result<Box<dyn RunningTerminal>, TerminalError> {
        self.specs.lock().unwrap_or_else(|p| p.into_inner()).push(spec.clone());
        let Some(started) = &self.started else {
            return Err(TerminalError::OpenPty("recording spawner: no PTY in tests".into()));
        };
        let (term, session) = super::fake::FakeTerminal::start(spec.config.size, host)?;
        started.lock().unwrap_or_else(|p| p.into_inner()).push((spec.node, session));
        Ok(Box::new(term))
    }
}
