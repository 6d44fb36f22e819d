//! The live terminals of the active project's nodes, and what the runtime
//! remembers about nodes whose terminal is not running.

use super::activity::{ActivityBoard, ActivityTracker, NodeNotification};
use super::snapshots::SessionWorker;
use super::spawner::{PtySpawner, TerminalSpawner};
use super::status::{AgentNodeActivity, AgentNodeStatus, NotLaunched};
use crate::model::{AgentKind, NodeId, ProjectId, Workspace};
use agent_vocab::StateSource;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use terminal::signals::Progress;
use terminal::tmux::Tmux;
use terminal::{ExitStatus, RunningTerminal};

/// Notifications waiting to be raised, across nodes (the oldest go first).
pub const NEW_NOTIFICATIONS_KEPT: usize = 100;

/// A live terminal of a node.
pub struct LiveTerminal {
    /// The session (a child on a PTY; a fake in tests).
    pub term: Box<dyn RunningTerminal>,
    /// Exit status once the child ended.
    pub exited: Option<ExitStatus>,
    /// A bell rang since the node was last focused.
    pub bell: bool,
    /// The latest notification its program raised (OSC 9 / 777 / 99) since
    /// the node was last focused.
    pub notice: Option<NodeNotification>,
    /// The project the node belongs to (tells a closed node from a closed project).
    pub project: ProjectId,
    /// The session name (tmux session and snapshot file stem).
    pub session: String,
    /// The agent it runs (agent nodes only).
    pub agent: Option<AgentKind>,
    /// Whether it re-attached to a tmux session that was already running.
    pub warm: bool,
    /// The title its program last set (OSC 0/2; `None` before any or after a reset).
    pub program_title: Option<String>,
    /// The agent CLI's executable as the launch probe found it (agent nodes only).
    pub agent_executable: Option<PathBuf>,
    /// What it is doing (reports, guesses) and the notifications it raised.
    pub activity: ActivityTracker,
    /// The last OSC 9;4 progress, until cleared.
    pub progress: Option<Progress>,
    pub(super) saved_generation: Option<u64>,
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
            notice: None,
            project,
            session,
            agent,
            warm,
            program_title: None,
            agent_executable: None,
            activity: ActivityTracker::launched(SystemTime::now()),
            progress: None,
            saved_generation: None,
        }
    }
}

/// Live terminals of the active project.
pub struct TerminalNodes {
    pub(super) map: HashMap<NodeId, LiveTerminal>,
    pub(super) not_launched: HashMap<NodeId, NotLaunched>,
    pub(super) deferred: HashSet<NodeId>,
    /// Nodes whose PTYs a worker thread is starting (a restore: see `sync_terminals`).
    pub(super) starting: HashSet<NodeId>,
    pub(super) tmux: Option<Option<Tmux>>,
    pub(super) spawner: Arc<dyn PtySpawner>,
    /// The wall clock of the last tick (a badge's time in state is redrawn when it moved on).
    pub(super) last_tick_wall: Option<SystemTime>,
    /// The tmux sessions running, asked once per sync pass (`None` outside one).
    pub(super) running_sessions: Option<HashSet<String>>,
    pub(super) ticker: bool,
    pub(super) last_snapshot: Option<Instant>,
    pub(super) sessions: SessionWorker,
    /// The agents' activity, as published for the tool server's thread.
    pub(super) board: ActivityBoard,
    /// Notifications not yet taken by whoever raises them.
    pub(super) new_notifications: std::collections::VecDeque<(NodeId, NodeNotification)>,
    /// Terminal nodes the window does not show, read by their output threads:
    /// output there wakes nobody (the frame that shows the node reads its grid).
    pub(super) out_of_view: OutOfView,
}

/// The terminal nodes out of view, shared with their output threads.
#[derive(Clone, Default)]
pub(crate) struct OutOfView(Arc<parking_lot::Mutex<HashSet<NodeId>>>);

impl OutOfView {
    /// Whether `node` is out of view.
    pub(crate) fn contains(&self, node: &NodeId) -> bool {
        self.0.lock().contains(node)
    }

    /// Replaces the set (cheap when it did not change).
    pub(crate) fn set(&self, nodes: HashSet<NodeId>) {
        let mut now = self.0.lock();
        if *now != nodes {
            *now = nodes;
        }
    }
}

impl Default for TerminalNodes {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
            not_launched: HashMap::new(),
            deferred: HashSet::new(),
            starting: HashSet::new(),
            tmux: None,
            spawner: Arc::new(TerminalSpawner),
            running_sessions: None,
            last_tick_wall: None,
            ticker: false,
            last_snapshot: None,
            sessions: SessionWorker::default(),
            board: ActivityBoard::default(),
            new_notifications: Default::default(),
            out_of_view: OutOfView::default(),
        }
    }
}

impl TerminalNodes {
    /// Marks which terminal nodes are out of view (their output then wakes nobody).
    pub(crate) fn set_out_of_view(&self, nodes: HashSet<NodeId>) {
        self.out_of_view.set(nodes);
    }

    /// Whether a terminal node is marked out of view.
    #[cfg(test)]
    pub(crate) fn is_out_of_view(&self, node: &NodeId) -> bool {
        self.out_of_view.contains(node)
    }

    /// The nodes that have a live terminal.
    pub(crate) fn live_nodes(&self) -> impl Iterator<Item = &NodeId> {
        self.map.keys()
    }

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

    /// Answers a node's bell and notification (the person looked at it);
    /// true when either was waiting.
    pub fn clear_calls(&mut self, id: &NodeId) -> bool {
        self.map.get_mut(id).is_some_and(|t| std::mem::take(&mut t.bell) | t.notice.take().is_some())
    }

    /// An agent node's activity (`None` for other nodes), or a terminal
    /// node's when its program reported one (OSC 133, OSC 7501).
    pub(super) fn agent_activity(&self, id: &NodeId) -> Option<AgentNodeActivity> {
        let unstarted =
            |status| AgentNodeActivity { status, since: SystemTime::now(), source: StateSource::Process, detail: None };
        if let Some(why) = self.not_launched.get(id) {
            return Some(unstarted(AgentNodeStatus::NotLaunched(why.clone())));
        }
        if self.deferred.contains(id) || self.starting.contains(id) {
            return Some(unstarted(AgentNodeStatus::Pending));
        }
        let t = self.map.get(id)?;
        if let Some(status) = &t.exited {
            return Some(AgentNodeActivity {
                status: AgentNodeStatus::Exited(status.clone()),
                since: t.activity.exited_at(),
                source: StateSource::Process,
                detail: None,
            });
        }
        let now = t.activity.current();
        if t.agent.is_none() && !matches!(now.source, StateSource::Terminal | StateSource::Hooks) {
            return None;
        }
        Some(AgentNodeActivity {
            status: AgentNodeStatus::Live(now.state),
            since: now.since,
            source: now.source,
            detail: now.detail,
        })
    }

    /// Keeps a notification for whoever raises them (the oldest go when too many wait).
    pub(super) fn queue_notification(&mut self, id: &NodeId, n: NodeNotification) {
        if self.new_notifications.len() == NEW_NOTIFICATIONS_KEPT {
            self.new_notifications.pop_front();
        }
        self.new_notifications.push_back((id.clone(), n));
    }

    /// Republishes every agent's activity for the tool server's thread.
    pub(super) fn publish_activity(&self) {
        let ids = self.map.keys().chain(self.deferred.iter()).chain(self.starting.iter());
        let all = ids.filter_map(|id| Some((id.to_string(), self.agent_activity(id)?.wire()?))).collect();
        self.board.replace(all);
    }

    /// Publishes activity on `board` from now on (the one the tool server reads).
    pub fn use_activity_board(&mut self, board: ActivityBoard) {
        self.board = board;
        self.publish_activity();
    }
}

/// Whether a live terminal that is no longer wanted was closed for good
/// (its project is still open but the node is gone) rather than just put
/// away (its project was closed or another one became active).
pub fn closed_for_good(workspace: &Workspace, project: &ProjectId, node: &NodeId) -> bool {
    workspace.project(project).is_some_and(|p| p.node(node).is_none())
}
