//! The runtime's side of the tool runtime: [`ToolLink`] (a field of the
//! runtime), the phase agent PTYs wait on, and the main-thread bookkeeping
//! that republishes the node index and revokes the sessions of agent nodes
//! that left their canvas.

use super::shared::{KindTag, ToolShared};
use crate::model::{NodeId, NodeKind, ProjectId, Workspace};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tool_server::ToolServer;

/// Where agent PTYs stand relative to the tool server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolPhase {
    /// The server has not started: agent PTYs wait so they never start without credentials.
    Pending,
    /// The server runs: agent PTYs get sessions and launch configuration.
    Running,
    /// No server in this mode (or it failed to start): agent PTYs start without tools.
    Off,
}

/// The runtime's side of the tool runtime (a field of the runtime).
pub struct ToolLink {
    /// State shared with the tool server's thread.
    pub shared: Arc<ToolShared>,
    /// The running server (for provisioning and revoking sessions on the main thread).
    pub(crate) server: Option<Arc<ToolServer>>,
    /// Whether agent PTYs may start, and with what.
    pub phase: ToolPhase,
    /// First instructions for agent nodes opened by `agent_launch`, consumed when their PTY starts.
    pub(crate) pending_prompts: HashMap<NodeId, String>,
    /// Agent nodes per project as last published (to revoke the sessions of removed ones).
    known_agents: HashMap<ProjectId, HashSet<NodeId>>,
}

impl ToolLink {
    /// A link with nothing running yet.
    pub fn new(browser_control: bool) -> Self {
        let shared = Arc::new(ToolShared::default());
        shared.set_browser_control(browser_control);
        Self {
            shared,
            server: None,
            phase: ToolPhase::Pending,
            pending_prompts: HashMap::new(),
            known_agents: HashMap::new(),
        }
    }

    /// The running tool server, if any.
    pub fn server(&self) -> Option<&Arc<ToolServer>> {
        self.server.as_ref()
    }
}

impl ToolLink {
    /// Republishes the node index of `workspace` for the tool server's thread
    /// and drops the ownerships of browsers no longer on a canvas; returns the
    /// agent nodes that left their canvas (their sessions are to be revoked).
    pub(crate) fn publish(&mut self, workspace: &Workspace) -> Vec<NodeId> {
        let mut index = HashMap::new();
        let mut folders = HashMap::new();
        let mut agents: HashMap<ProjectId, HashSet<NodeId>> = HashMap::new();
        for p in workspace.projects() {
            folders.insert(p.id().to_string(), p.folder().to_path_buf());
            let mut nodes = HashMap::new();
            let mut ids = HashSet::new();
            for n in p.nodes() {
                nodes.insert(n.id.to_string(), KindTag::from(&n.kind));
                if matches!(n.kind, NodeKind::Agent { .. }) {
                    ids.insert(n.id.clone());
                }
            }
            index.insert(p.id().to_string(), nodes);
            agents.insert(p.id().clone(), ids);
        }
        let mut gone = vec![];
        for (project, before) in &self.known_agents {
            // A closed project keeps its sessions (reopening it restores them); a deleted node does not.
            let Some(now) = agents.get(project) else { continue };
            gone.extend(before.difference(now).cloned());
        }
        *self.shared.index.write() = index;
        *self.shared.folders.write() = folders;
        self.known_agents = agents;
        gone
    }

    /// Drops the ownerships of browsers no longer on any canvas (after the
    /// index was republished).
    pub(crate) fn forget_gone_browsers(&self) {
        let shared = &self.shared;
        let index = shared.index.read();
        let live_browser = |b: &str| index.values().any(|nodes| nodes.get(b) == Some(&KindTag::Browser));
        let changed = shared.owners.lock().retain(|b, _| live_browser(b));
        drop(index);
        if changed {
            let owners = shared.owners();
            shared.persist_owners(&owners);
        }
    }

    /// Revokes an agent node's session and releases the browsers it owned.
    pub(crate) fn revoke(&mut self, node: &NodeId) {
        self.pending_prompts.remove(node);
        if let Some(server) = &self.server {
            match server.revoke(node.as_str()) {
                Ok(existed) => tracing::debug!(%node, existed, "agent session revoked"),
                Err(e) => tracing::warn!(%node, error = %e, "agent session not revoked"),
            }
        }
        self.shared.statuses.lock().remove(node.as_str());
        let _ = self.shared.with_owners(|o| {
            o.retain(|_, agent| agent != node.as_str());
            Ok(())
        });
    }
}
