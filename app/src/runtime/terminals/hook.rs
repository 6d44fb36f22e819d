//! The launch hook: how the tool runtime sees, changes, postpones or refuses
//! every terminal/agent PTY before it starts.

use crate::model::{AgentKind, NodeId, ProjectId};
use std::path::PathBuf;
use terminal::CommandSpec;

/// One PTY about to start; the launch hook may change it.
#[derive(Debug, Clone)]
pub struct PtyLaunch {
    /// The node.
    pub node: NodeId,
    /// Its project.
    pub project: ProjectId,
    /// The project folder.
    pub project_folder: PathBuf,
    /// The agent (agent nodes only).
    pub agent: Option<AgentKind>,
    /// The resolved agent executable (agent nodes only; probed on PATH).
    pub agent_executable: Option<PathBuf>,
    /// What runs (`None`: the user's shell).
    pub command: Option<CommandSpec>,
    /// Environment added for the child (identity and data dir already in).
    pub env: Vec<(String, String)>,
    /// True when a tmux session of this node is already running: the program
    /// in it started earlier, so command and environment changes do not reach it.
    pub warm: bool,
}

/// What the launch hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchDecision {
    /// Start the PTY as (possibly) modified.
    Launch,
    /// Not now; the next sync asks again.
    Defer,
    /// Do not start; the node shows this reason.
    Refuse(String),
}
