//! The agent tool runtime: [`RuntimeToolHost`], the `tool_server::ToolHost`
//! that fulfils every accepted operation against the live app, and the
//! main-thread bookkeeping it needs ([`ToolLink`], a field of the runtime).
//!
//! Threads: the tool server calls `valid`/`browser_enabled` on its own thread,
//! so they read a snapshot ([`ToolShared`]) the main thread republishes after
//! every model change and never wait on the main thread. `execute` runs each
//! operation on a short-lived worker thread: model work is sent to the main
//! thread with `AppHandle::call` (10 s deadline), while slow waits (DevTools
//! replies, page loads) happen on the worker — waiting on a DevTools reply on
//! the main thread would deadlock, since the main thread pumps CEF.
//!
//! The surfaces live in siblings: `tools_canvas` (canvas, stickies,
//! artifacts), `tools_browser`, `tools_terminal`, `tools_agents` (agent
//! launch, PTY preparation, context).

use super::{AppError, AppHandle, Runtime, CALL_TIMEOUT};
use crate::model::{NodeId, NodeKind, Project, ProjectId, Rect};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tool_server::{ExecuteFuture, IntegrationStatus, Operation, ToolHost, ToolIdentity, ToolRequest, ToolServer};

pub use super::tools_agents::pty_launch_hook;

/// The PTY launch hook of the tool runtime, for `Runtime::set_pty_launch_hook`.
pub fn launch_hook() -> super::terminals::LaunchHook {
    Arc::new(pty_launch_hook)
}

/// File (in `agent-tools/`) holding the browser ownership map.
pub const OWNERS_FILE: &str = "browser-owners.json";
/// The message an agent gets when the main thread does not acknowledge in time.
pub const TIMEOUT_MESSAGE: &str =
    "the app did not answer within 10 s (its main thread is busy); nothing was changed, try again";

/// Which browser node each agent node owns (browser node id → agent node id).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Owners(pub BTreeMap<String, String>);

impl Owners {
    /// The owner of a browser node.
    pub fn owner(&self, browser: &str) -> Option<&str> {
        self.0.get(browser).map(String::as_str)
    }

    /// Makes `agent` the owner unless another agent owns it.
    pub fn claim(&mut self, browser: &str, agent: &str) -> Result<(), String> {
        match self.owner(browser) {
            Some(o) if o != agent => {
                Err(format!("browser {browser} is owned by agent {o}; ask it to transfer it with browser_transfer"))
            }
            _ => {
                self.0.insert(browser.to_owned(), agent.to_owned());
                Ok(())
            }
        }
    }

    /// Hands a browser `from` its owner `to` another agent.
    pub fn transfer(&mut self, browser: &str, from: &str, to: &str) -> Result<(), String> {
        match self.owner(browser) {
            Some(o) if o == from => {
                self.0.insert(browser.to_owned(), to.to_owned());
                Ok(())
            }
            Some(o) => Err(format!("browser {browser} is owned by agent {o}, not by you")),
            None => Err(format!("browser {browser} has no owner; claim it with browser_claim first")),
        }
    }

    /// Whether `agent` may drive (navigate, click, type) the browser: it must own it.
    pub fn check_drive(&self, browser: &str, agent: &str) -> Result<(), String> {
        match self.owner(browser) {
            Some(o) if o == agent => Ok(()),
            Some(o) => Err(format!("browser {browser} is owned by agent {o}; operations on it are refused")),
            None => Err(format!("browser {browser} has no owner; claim it with browser_claim first")),
        }
    }

    /// Whether `agent` may read (inspect, screenshot) the browser: not owned by someone else.
    pub fn check_read(&self, browser: &str, agent: &str) -> Result<(), String> {
        match self.owner(browser) {
            Some(o) if o != agent => {
                Err(format!("browser {browser} is owned by agent {o}; operations on it are refused"))
            }
            _ => Ok(()),
        }
    }

    /// Forgets browsers that no longer exist and owners that were revoked; true if anything changed.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &str) -> bool) -> bool {
        let before = self.0.len();
        self.0.retain(|b, a| keep(b, a));
        before != self.0.len()
    }
}

/// What the tool server's thread may read without asking the main thread.
#[derive(Default)]
pub struct ToolShared {
    /// Project id → (node id → kind name), republished after every model change.
    index: RwLock<HashMap<String, HashMap<String, &'static str>>>,
    browser_control: AtomicBool,
    owners: Mutex<Owners>,
    /// The `agent-tools/` directory, once the server runs (for `browser-owners.json`).
    state_dir: RwLock<Option<PathBuf>>,
    statuses: Mutex<HashMap<String, IntegrationStatus>>,
}

impl ToolShared {
    /// Whether the node is on the project's canvas.
    pub fn on_canvas(&self, project: &str, node: &str) -> bool {
        self.index.read().get(project).is_some_and(|nodes| nodes.contains_key(node))
    }

    /// The kind of a node of a project.
    pub fn kind_of(&self, project: &str, node: &str) -> Option<&'static str> {
        self.index.read().get(project).and_then(|nodes| nodes.get(node).copied())
    }

    /// Whether agents may drive browsers.
    pub fn browser_control(&self) -> bool {
        self.browser_control.load(Ordering::Relaxed)
    }

    /// Sets whether agents may drive browsers.
    pub fn set_browser_control(&self, on: bool) {
        self.browser_control.store(on, Ordering::Relaxed);
    }

    /// Runs `f` on the ownership map and persists it when `f` succeeds and changed it.
    pub fn with_owners<R>(&self, f: impl FnOnce(&mut Owners) -> Result<R, String>) -> Result<R, String> {
        let mut owners = self.owners.lock();
        let before = owners.clone();
        let r = f(&mut owners)?;
        if *owners != before {
            self.persist_owners(&owners);
        }
        Ok(r)
    }

    /// A copy of the ownership map.
    pub fn owners(&self) -> Owners {
        self.owners.lock().clone()
    }

    fn persist_owners(&self, owners: &Owners) {
        if let Some(dir) = self.state_dir.read().as_deref() {
            if let Err(e) = local_guard::files::write_private_json(dir, OWNERS_FILE, owners) {
                tracing::warn!(error = %e, "browser ownership not saved");
            }
        }
    }

    /// Where the server keeps its state, and the ownership map found there.
    pub(crate) fn attach_state_dir(&self, dir: &Path) {
        let loaded = match local_guard::files::read_private(dir, OWNERS_FILE, 1024 * 1024) {
            Ok(Some(bytes)) => serde_json::from_slice::<Owners>(&bytes).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "ignoring malformed {OWNERS_FILE}");
                Owners::default()
            }),
            Ok(None) => Owners::default(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read {OWNERS_FILE}");
                Owners::default()
            }
        };
        *self.owners.lock() = loaded;
        *self.state_dir.write() = Some(dir.to_path_buf());
    }

    /// The last integration status reported for an agent node.
    pub fn status_of(&self, node: &str) -> Option<IntegrationStatus> {
        self.statuses.lock().get(node).cloned()
    }
}

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

/// The runtime's side of the tool runtime (a field of [`Runtime`]).
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

impl Runtime {
    /// Republishes the node index for the tool server's thread and revokes the
    /// sessions (and browser ownerships) of agent nodes that left their canvas.
    pub(crate) fn publish_tool_state(&mut self) {
        let mut index = HashMap::new();
        let mut agents: HashMap<ProjectId, HashSet<NodeId>> = HashMap::new();
        for p in self.workspace.projects() {
            let mut nodes = HashMap::new();
            let mut ids = HashSet::new();
            for n in p.nodes() {
                nodes.insert(n.id.to_string(), n.kind.name());
                if matches!(n.kind, NodeKind::Agent { .. }) {
                    ids.insert(n.id.clone());
                }
            }
            index.insert(p.id().to_string(), nodes);
            agents.insert(p.id().clone(), ids);
        }
        let mut gone = vec![];
        for (project, before) in &self.tools.known_agents {
            // A closed project keeps its sessions (reopening it restores them); a deleted node does not.
            let Some(now) = agents.get(project) else { continue };
            gone.extend(before.difference(now).cloned());
        }
        *self.tools.shared.index.write() = index;
        self.tools.known_agents = agents;
        for node in gone {
            self.revoke_agent(&node);
        }
        let shared = self.tools.shared.clone();
        let index = shared.index.read();
        let live_browser = |b: &str| index.values().any(|nodes| nodes.get(b) == Some(&"browser"));
        let changed = shared.owners.lock().retain(|b, _| live_browser(b));
        drop(index);
        if changed {
            let owners = shared.owners();
            shared.persist_owners(&owners);
        }
    }

    /// Turns "Enable agent browser control" on or off, persists it, and says so.
    /// Off refuses browser operations from the next call on.
    pub fn set_agent_browser_control(&mut self, on: bool) {
        let dir = crate::paths::agent_tools(self.data_dir());
        self.tools.shared.set_browser_control(on);
        match super::services::save_browser_control(&dir, on) {
            Ok(()) => self.notify(format!("agent browser control {}", if on { "enabled" } else { "disabled" }), false),
            Err(e) => self.notify(
                format!(
                    "agent browser control {} for now, but not saved: {e}",
                    if on { "enabled" } else { "disabled" }
                ),
                true,
            ),
        }
    }

    /// Revokes an agent node's session and releases the browsers it owned.
    pub fn revoke_agent(&mut self, node: &NodeId) {
        self.tools.pending_prompts.remove(node);
        if let Some(server) = &self.tools.server {
            match server.revoke(node.as_str()) {
                Ok(existed) => tracing::debug!(%node, existed, "agent session revoked"),
                Err(e) => tracing::warn!(%node, error = %e, "agent session not revoked"),
            }
        }
        self.tools.shared.statuses.lock().remove(node.as_str());
        let _ = self.tools.shared.with_owners(|o| {
            o.retain(|_, agent| agent != node.as_str());
            Ok(())
        });
    }
}

/// The `ToolHost` the tool server calls: every operation against the live app.
pub struct RuntimeToolHost {
    app: AppHandle,
    shared: Arc<ToolShared>,
    data_dir: PathBuf,
}

impl RuntimeToolHost {
    /// A host for the runtime behind `app`.
    pub fn new(app: AppHandle, shared: Arc<ToolShared>, data_dir: PathBuf) -> Self {
        Self { app, shared, data_dir }
    }
}

/// What a worker needs to run one operation.
#[derive(Clone)]
pub(crate) struct OpContext {
    pub(crate) app: AppHandle,
    pub(crate) shared: Arc<ToolShared>,
    pub(crate) data_dir: PathBuf,
    pub(crate) identity: ToolIdentity,
}

impl OpContext {
    /// Runs `f` on the main thread with the 10 s acknowledgement deadline.
    pub(crate) fn on_main<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Runtime) -> Result<R, String> + Send + 'static,
    ) -> Result<R, String> {
        match self.app.call(CALL_TIMEOUT, f) {
            Ok(r) => r,
            Err(AppError::Timeout(_)) => Err(TIMEOUT_MESSAGE.into()),
            Err(AppError::Stopped) => Err("the app is shutting down".into()),
        }
    }

    /// The calling agent's node id.
    pub(crate) fn caller(&self) -> &str {
        &self.identity.node_id
    }
}

impl ToolHost for RuntimeToolHost {
    fn execute(&self, identity: &ToolIdentity, request: ToolRequest) -> ExecuteFuture {
        let ctx = OpContext {
            app: self.app.clone(),
            shared: self.shared.clone(),
            data_dir: self.data_dir.clone(),
            identity: identity.clone(),
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let operation = request.operation;
        let spawned = std::thread::Builder::new().name(format!("tool-{}", operation.name())).spawn(move || {
            let _ = tx.send(dispatch(&ctx, &request));
        });
        if let Err(e) = spawned {
            return Box::pin(std::future::ready(Err(format!("cannot start {operation}: {e}"))));
        }
        Box::pin(async move { rx.await.unwrap_or_else(|_| Err(format!("{operation} ended without a result"))) })
    }

    fn valid(&self, identity: &ToolIdentity) -> bool {
        // Projects here are always local folders; a project that is not open, or
        // an agent node no longer on its canvas, can no longer act.
        self.shared.kind_of(&identity.project_id, &identity.node_id) == Some("agent")
    }

    fn browser_enabled(&self) -> bool {
        self.shared.browser_control()
    }

    fn on_status(&self, node_id: &str, status: &IntegrationStatus) {
        tracing::info!(node = %node_id, state = ?status.state, "agent tool status");
        self.shared.statuses.lock().insert(node_id.to_owned(), status.clone());
        let _ = self.app.post(|rt| rt.request_redraw());
    }
}

/// Runs one accepted operation (on a worker thread).
fn dispatch(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    use super::{tools_agents as agents, tools_browser as browser, tools_canvas as canvas, tools_terminal as terminal};
    use Operation::*;
    match req.operation {
        CanvasList => canvas::list(ctx),
        CanvasSelect => canvas::select(ctx, req),
        CanvasMove => canvas::move_node(ctx, req),
        CanvasResize => canvas::resize(ctx, req),
        CanvasGroup => canvas::group(ctx, req),
        StickyOpen => canvas::sticky_open(ctx, req),
        ArtifactOpen => canvas::artifact_open(ctx, req),
        BrowserOpen => browser::open(ctx, req),
        BrowserList => browser::list(ctx),
        BrowserClaim => browser::claim(ctx, req),
        BrowserTransfer => browser::transfer(ctx, req),
        BrowserNavigate => browser::navigate(ctx, req),
        BrowserInspect => browser::inspect(ctx, req),
        BrowserClick => browser::click(ctx, req),
        BrowserType => browser::type_text(ctx, req),
        BrowserScreenshot => browser::screenshot(ctx, req),
        TerminalOpen => terminal::open(ctx, req),
        TerminalRead => terminal::read(ctx, req),
        TerminalSubmit => terminal::submit(ctx, req),
        TerminalInput => terminal::input(ctx, req),
        TerminalInterrupt => terminal::interrupt(ctx, req),
        TerminalExternal => terminal::external(ctx, req),
        TerminalClose => terminal::close(ctx, req),
        AgentLaunch => agents::launch(ctx, req),
        ContextRead => agents::context_read(ctx),
        // The server answers these itself and never queues them.
        SessionInfo | GuideRead | AgentStatus => Err(format!("{} is answered by the tool server", req.operation)),
    }
}

/// A required string argument (the validator guarantees presence and type).
pub(crate) fn arg<'a>(req: &'a ToolRequest, name: &str) -> Result<&'a str, String> {
    req.str_arg(name).ok_or_else(|| format!("missing argument {name}"))
}

/// The caller's project, which must be the visible one, and its agent node on it.
pub(crate) fn caller_project<'a>(rt: &'a Runtime, identity: &ToolIdentity) -> Result<&'a Project, String> {
    let p = rt.project().ok_or("no project is open")?;
    if p.id().as_str() != identity.project_id {
        return Err(format!(
            "this operation requires your project tab to be visible; the visible project is {}",
            p.name()
        ));
    }
    if !p.nodes().any(|n| n.id.as_str() == identity.node_id) {
        return Err("your agent node is no longer on the canvas".into());
    }
    Ok(p)
}

/// Parses a node id argument and checks the node is on the caller's canvas.
pub(crate) fn target_node<'a>(p: &'a Project, id: &str) -> Result<&'a crate::model::Node, String> {
    let nid = NodeId::new(id).map_err(|_| format!("no node {id:?} on this canvas"))?;
    p.node(&nid).ok_or_else(|| format!("no node {id} on this canvas"))
}

/// A free spot for a new node of `size` to the right of the caller's node.
pub(crate) fn beside(p: &Project, caller: &str, size: (f64, f64)) -> (f64, f64) {
    let anchor = p
        .nodes()
        .find(|n| n.id.as_str() == caller)
        .map(|n| n.rect)
        .or_else(|| p.bounds())
        .unwrap_or(Rect::new(0.0, 0.0, 0.0, 0.0));
    let x = anchor.x + anchor.w + 40.0;
    let mut y = anchor.y;
    // Step down past whatever already sits there so new nodes do not pile up.
    for _ in 0..200 {
        let r = Rect::new(x, y, size.0, size.1);
        match p
            .nodes()
            .filter(|n| n.rect.intersects(&r))
            .map(|n| n.rect.bottom())
            .fold(None, |m: Option<f64>, b| Some(m.map_or(b, |m| m.max(b))))
        {
            Some(bottom) => y = bottom + 24.0,
            None => break,
        }
    }
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ownership_rules() {
        let mut o = Owners::default();
        assert!(o.check_drive("b1", "a1").is_err(), "unowned browsers must be claimed first");
        assert!(o.check_read("b1", "a1").is_ok());
        o.claim("b1", "a1").unwrap();
        o.claim("b1", "a1").unwrap();
        assert!(o.check_drive("b1", "a1").is_ok());
        let e = o.claim("b1", "a2").unwrap_err();
        assert!(e.contains("owned by agent a1"), "{e}");
        assert!(o.check_drive("b1", "a2").is_err());
        assert!(o.check_read("b1", "a2").is_err());
        assert!(o.transfer("b1", "a2", "a2").is_err());
        o.transfer("b1", "a1", "a2").unwrap();
        assert_eq!(o.owner("b1"), Some("a2"));
        assert!(o.check_drive("b1", "a1").is_err());
        assert!(o.retain(|_, a| a != "a2"));
        assert_eq!(o.owner("b1"), None);
        assert!(!o.retain(|_, _| true));
    }

    #[test]
    fn shared_state_persists_owners_privately() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&state).unwrap();
        let shared = ToolShared::default();
        shared.attach_state_dir(&state);
        shared.with_owners(|o| o.claim("b1", "a1")).unwrap();
        let other = ToolShared::default();
        other.attach_state_dir(&state);
        assert_eq!(other.owners().owner("b1"), Some("a1"));
        // A refused change writes nothing.
        assert!(shared.with_owners(|o| o.claim("b1", "a2")).is_err());
        std::fs::write(state.join(OWNERS_FILE), b"{not json").unwrap();
        let third = ToolShared::default();
        third.attach_state_dir(&state);
        assert_eq!(third.owners(), Owners::default());
    }

    #[test]
    fn new_nodes_go_beside_the_caller_without_overlap() {
        use crate::model::{Node, Project};
        let a = Node::new(NodeKind::Sticky { text: "a".into() }, "a", Rect::new(0.0, 0.0, 100.0, 100.0));
        let b = Node::new(NodeKind::Sticky { text: "b".into() }, "b", Rect::new(140.0, 0.0, 100.0, 100.0));
        let caller = a.id.to_string();
        let (p, _) =
            Project::from_nodes(ProjectId::generate(), "p", "/tmp/p", crate::model::Camera::default(), vec![a, b], 0)
                .unwrap();
        let (x, y) = beside(&p, &caller, (100.0, 50.0));
        assert_eq!(x, 140.0);
        assert_eq!(y, 124.0);
    }
}
