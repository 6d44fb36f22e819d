//! The live terminals of the active project's nodes, and what the runtime
//! remembers about nodes whose terminal is not running.

use super::hook::LaunchHook;
use super::snapshots::SessionWorker;
use super::spawner::{PtySpawner, TerminalSpawner};
use super::status::{AgentNodeStatus, NotLaunched, AGENT_IDLE_AFTER};
use crate::model::{AgentKind, NodeId, ProjectId, Workspace};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;
use terminal::agents::{self, AgentStatus};
use terminal::tmux::Tmux;
use terminal::{ExitStatus, RunningTerminal};

/// A live terminal of a node.
pub struct LiveTerminal {
    /// The session (a child on a PTY; a fake in tests).
    pub term: Box<dyn RunningTerminal>,
    /// Exit status once the child ended.
    pub exited: Option<ExitStatus>,
    /// A bell rang since the node was last focused.
    pub bell: bool,
    /// The project the node belongs to (tells a closed node from a closed project).
    pub project: ProjectId,
    /// The session name (tmux session and snapshot file stem).
    pub session: String,
    /// The agent it runs (agent nodes only).
    pub agent: Option<AgentKind>,
    /// Whether it re-attached to a tmux session that was already running.
    pub warm: bool,
    pub(super) saved_generation: Option<u64>,
    pub(super) shown_status: Option<AgentStatus>,
}

impl LiveTerminal {
    /// A terminal just started.
    pub(super) fn started(
        term: Box<dyn RunningTerminal>,
        project: ProjectId,
        session: String,
        agent: Option<AgentKind>,
        warm: bool,
    ) -> Self {
        Self {
            term,
            exited: None,
            bell: false,
            project,
            session,
            agent,
            warm,
            saved_generation: None,
            shown_status: None,
        }
    }
}

/// Live terminals of the active project.
pub struct TerminalNodes {
    pub(super) map: HashMap<NodeId, LiveTerminal>,
    pub(super) not_launched: HashMap<NodeId, NotLaunched>,
    pub(super) deferred: HashSet<NodeId>,
    pub(super) tmux: Option<Option<Tmux>>,
    pub(super) hook: Option<LaunchHook>,
    pub(super) spawner: Arc<dyn PtySpawner>,
    pub(super) ticker: bool,
    pub(super) last_snapshot: Option<Instant>,
    pub(super) sessions: SessionWorker,
}

impl Default for TerminalNodes {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
            not_launched: HashMap::new(),
            deferred: HashSet::new(),
            tmux: None,
            hook: None,
            spawner: Arc::new(TerminalSpawner),
            ticker: false,
            last_snapshot: None,
            sessions: SessionWorker::default(),
        }
    }
}

impl TerminalNodes {
    /// The live terminal of a node.
    pub fn get(&self, id: &NodeId) -> Option<&LiveTerminal> {
        self.map.get(id)
    }

    /// Every live terminal.
    pub fn iter(&self) -> impl Iterator<Item = (&NodeId, &LiveTerminal)> {
        self.map.iter()
    }

    /// Why an agent node did not start, if it did not.
    pub fn not_launched(&self, id: &NodeId) -> Option<&NotLaunched> {
        self.not_launched.get(id)
    }

    pub(super) fn live_mut(&mut self, id: &NodeId) -> Option<&mut LiveTerminal> {
        self.map.get_mut(id)
    }

    /// An agent node's status at `now` (`None` for other nodes).
    pub(super) fn agent_status(&self, id: &NodeId, now: Instant) -> Option<AgentNodeStatus> {
        if let Some(why) = self.not_launched.get(id) {
            return Some(AgentNodeStatus::NotLaunched(why.clone()));
        }
        if self.deferred.contains(id) {
            return Some(AgentNodeStatus::Pending);
        }
        let t = self.map.get(id)?;
        t.agent?;
        if let Some(status) = &t.exited {
            return Some(AgentNodeStatus::Exited(status.clone()));
        }
        Some(match agents::agent_status(now, t.term.last_output_at(), false, AGENT_IDLE_AFTER) {
            AgentStatus::WaitingForInput => AgentNodeStatus::WaitingForInput,
            AgentStatus::Running | AgentStatus::Exited => AgentNodeStatus::Running,
        })
    }
}

/// Whether a live terminal that is no longer wanted was closed for good
/// (its project is still open but the node is gone) rather than just put
/// away (its project was closed or another one became active).
pub fn closed_for_good(workspace: &Workspace, project: &ProjectId, node: &NodeId) -> bool {
    workspace.project(project).is_some_and(|p| p.node(node).is_none())
}
