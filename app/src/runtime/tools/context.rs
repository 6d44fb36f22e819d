//! What every operation runs with: [`OpContext`] (the caller's identity, the
//! main-thread executor with its 10 s deadline, the shared state), the state
//! the tool server's thread reads without the main thread ([`ToolShared`]),
//! browser ownership ([`Owners`]), and the lookups every surface shares
//! (the caller's project, a target node, a free spot beside the caller).

use super::desktop::DesktopSource;
use crate::model::placement::{free_spot, PLACEMENT_GAP};
use crate::model::{Node, NodeId, NodeKind, Point, Project, Rect};
use crate::runtime::terminals::ActivityBoard;
use crate::runtime::{AppError, AppHandle, Runtime};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tool_server::{IntegrationStatus, ToolError, ToolIdentity};

/// File (in `agent-tools/`) holding the browser ownership map.
pub const OWNERS_FILE: &str = "browser-owners.json";
/// The message an agent gets when the main thread does not acknowledge in time.
pub const TIMEOUT_MESSAGE: &str =
    "the app did not answer within 10 s (its main thread is busy); nothing was changed, try again";

/// A node's kind without its state: what the tool server's thread compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KindTag {
    /// [`NodeKind::Browser`].
    Browser,
    /// [`NodeKind::Terminal`].
    Terminal,
    /// [`NodeKind::Agent`].
    Agent,
    /// [`NodeKind::Sticky`].
    Sticky,
    /// [`NodeKind::Group`].
    Group,
    /// [`NodeKind::Artifact`].
    Artifact,
}

impl From<&NodeKind> for KindTag {
    fn from(kind: &NodeKind) -> Self {
        match kind {
            NodeKind::Browser { .. } => KindTag::Browser,
            NodeKind::Terminal { .. } => KindTag::Terminal,
            NodeKind::Agent { .. } => KindTag::Agent,
            NodeKind::Sticky { .. } => KindTag::Sticky,
            NodeKind::Group { .. } => KindTag::Group,
            NodeKind::Artifact { .. } => KindTag::Artifact,
        }
    }
}

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
    pub fn claim(&mut self, browser: &str, agent: &str) -> Result<(), ToolError> {
        match self.owner(browser) {
            Some(o) if o != agent => Err(ToolError::refused(format!(
                "browser {browser} is owned by agent {o}; ask it to transfer it with browser_transfer"
            ))),
            _ => {
                self.0.insert(browser.to_owned(), agent.to_owned());
                Ok(())
            }
        }
    }

    /// Hands a browser `from` its owner `to` another agent.
    pub fn transfer(&mut self, browser: &str, from: &str, to: &str) -> Result<(), ToolError> {
        match self.owner(browser) {
            Some(o) if o == from => {
                self.0.insert(browser.to_owned(), to.to_owned());
                Ok(())
            }
            Some(o) => Err(ToolError::refused(format!("browser {browser} is owned by agent {o}, not by you"))),
            None => Err(unowned(browser)),
        }
    }

    /// Whether `agent` may drive (navigate, click, type) the browser: it must own it.
    pub fn check_drive(&self, browser: &str, agent: &str) -> Result<(), ToolError> {
        match self.owner(browser) {
            Some(o) if o == agent => Ok(()),
            Some(o) => Err(owned_by(browser, o)),
            None => Err(unowned(browser)),
        }
    }

    /// Whether `agent` may read (inspect, screenshot) the browser: not owned by someone else.
    pub fn check_read(&self, browser: &str, agent: &str) -> Result<(), ToolError> {
        match self.owner(browser) {
            Some(o) if o != agent => Err(owned_by(browser, o)),
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

fn owned_by(browser: &str, owner: &str) -> ToolError {
    ToolError::refused(format!("browser {browser} is owned by agent {owner}; operations on it are refused"))
}

fn unowned(browser: &str) -> ToolError {
    ToolError::refused(format!("browser {browser} has no owner; claim it with browser_claim first"))
}

/// What the tool server's thread may read without asking the main thread.
#[derive(Default)]
pub struct ToolShared {
    /// Project id → (node id → kind), republished after every model change.
    pub(super) index: RwLock<HashMap<String, HashMap<String, KindTag>>>,
    browser_control: AtomicBool,
    pub(super) owners: Mutex<Owners>,
    /// The `agent-tools/` directory, once the server runs (for `browser-owners.json`).
    state_dir: RwLock<Option<PathBuf>>,
    pub(super) statuses: Mutex<HashMap<String, IntegrationStatus>>,
    /// Project id → folder, republished with `index`.
    pub(super) folders: RwLock<HashMap<String, PathBuf>>,
    /// The agents' activity for `agent_status`, published by the terminals (the same board they write).
    pub activity: ActivityBoard,
    /// Out-of-process frames inspect has listed elements of: a ref `f<slot>e<node>`
    /// names its frame by slot here (frame ids are long, refs should be short).
    frames: Mutex<Vec<String>>,
}

impl ToolShared {
    /// The slot of an out-of-process frame in the ref table, added when new.
    pub fn frame_slot(&self, frame_id: &str) -> usize {
        let mut frames = self.frames.lock();
        match frames.iter().position(|f| f == frame_id) {
            Some(slot) => slot,
            None => {
                frames.push(frame_id.to_owned());
                frames.len() - 1
            }
        }
    }

    /// The frame id in a slot of the ref table.
    pub fn frame_id(&self, slot: usize) -> Option<String> {
        self.frames.lock().get(slot).cloned()
    }

    /// Whether the node is on the project's canvas.
    pub fn on_canvas(&self, project: &str, node: &str) -> bool {
        self.index.read().get(project).is_some_and(|nodes| nodes.contains_key(node))
    }

    /// The folder of an open project.
    pub fn folder_of(&self, project: &str) -> Option<PathBuf> {
        self.folders.read().get(project).cloned()
    }

    /// The kind of a node of a project.
    pub fn kind_of(&self, project: &str, node: &str) -> Option<KindTag> {
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
    pub fn with_owners<R>(&self, f: impl FnOnce(&mut Owners) -> Result<R, ToolError>) -> Result<R, ToolError> {
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

    pub(super) fn persist_owners(&self, owners: &Owners) {
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

/// What a worker needs to run one operation.
#[derive(Clone)]
pub(crate) struct OpContext {
    pub(crate) app: AppHandle,
    pub(crate) shared: Arc<ToolShared>,
    pub(crate) data_dir: PathBuf,
    pub(crate) identity: ToolIdentity,
    /// The main thread's acknowledgement deadline ([`CALL_TIMEOUT`](crate::runtime::CALL_TIMEOUT); shorter only in tests).
    pub(crate) call_timeout: Duration,
    /// Where `terminal_external` reads the desktop's environment from.
    pub(crate) desktop: DesktopSource,
}

impl OpContext {
    /// Runs `f` on the main thread with the 10 s acknowledgement deadline.
    pub(crate) fn on_main<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Runtime) -> Result<R, ToolError> + Send + 'static,
    ) -> Result<R, ToolError> {
        match self.app.call(self.call_timeout, f) {
            Ok(r) => r,
            Err(AppError::Timeout(_)) => Err(ToolError::timeout(TIMEOUT_MESSAGE)),
            Err(AppError::Stopped) => Err(ToolError::interrupted("the app is shutting down")),
        }
    }

    /// The calling agent's node id.
    pub(crate) fn caller(&self) -> &str {
        &self.identity.node_id
    }
}

/// A model error (a refused command, an invalid URL…) as the agent sees it.
pub(crate) fn model_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::failed(e.to_string())
}

/// The caller's project, which must be the visible one, and its agent node on it.
pub(crate) fn caller_project<'a>(rt: &'a Runtime, identity: &ToolIdentity) -> Result<&'a Project, ToolError> {
    let p = rt.project().ok_or_else(|| ToolError::refused("no project is open"))?;
    if p.id().as_str() != identity.project_id {
        return Err(ToolError::refused(format!(
            "this operation requires your project tab to be visible; the visible project is {}",
            p.name()
        )));
    }
    if !p.nodes().any(|n| n.id.as_str() == identity.node_id) {
        return Err(ToolError::refused("your agent node is no longer on the canvas"));
    }
    Ok(p)
}

/// Parses a node id argument and checks the node is on the caller's canvas.
pub(crate) fn target_node<'a>(p: &'a Project, id: &str) -> Result<&'a Node, ToolError> {
    let nid = NodeId::new(id).map_err(|_| ToolError::not_found(format!("no node {id:?} on this canvas")))?;
    p.node(&nid).ok_or_else(|| ToolError::not_found(format!("no node {id} on this canvas")))
}

/// A free spot for a new node of `size`: the one nearest the slot right of the
/// caller's node (explicit positions never come through here).
pub(crate) fn beside(p: &Project, caller: &str, size: (f64, f64)) -> (f64, f64) {
    let anchor = p
        .nodes()
        .find(|n| n.id.as_str() == caller)
        .map(|n| n.rect)
        .or_else(|| p.bounds())
        .unwrap_or(Rect::new(0.0, 0.0, 0.0, 0.0));
    // The canvas's one placement rule: the free spot nearest the slot right of the anchor.
    let wanted = Point::new(anchor.x + anchor.w + PLACEMENT_GAP, anchor.y);
    let taken: Vec<Rect> = p.nodes().map(|n| n.rect).collect();
    let spot = free_spot(&taken, size, wanted);
    (spot.x, spot.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ProjectId;

    #[test]
    fn ownership_rules() {
        let mut o = Owners::default();
        assert!(o.check_drive("b1", "a1").is_err(), "unowned browsers must be claimed first");
        assert!(o.check_read("b1", "a1").is_ok());
        o.claim("b1", "a1").unwrap();
        o.claim("b1", "a1").unwrap();
        assert!(o.check_drive("b1", "a1").is_ok());
        let e = o.claim("b1", "a2").unwrap_err();
        assert!(e.message().contains("owned by agent a1"), "{e}");
        assert!(o.check_drive("b1", "a2").is_err());
        assert!(o.check_read("b1", "a2").is_err());
        assert!(o.transfer("b1", "a2", "a2").is_err());
        o.transfer("b1", "a1", "a2").unwrap();
        assert_eq!(o.owner("b1"), Some("a2"));
        assert!(o.check_drive("b1", "a1").is_err());
        assert!(o.retain(|_, a| a != "a2"));
        assert_eq!(o.owner("b1"), None);
        assert!(!o.retain(|_, _| true));
        assert_eq!(e.code, tool_server::ErrorCode::Refused);
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
        let a = Node::new(NodeKind::Sticky { text: "a".into() }, "a", Rect::new(0.0, 0.0, 100.0, 100.0));
        let b = Node::new(NodeKind::Sticky { text: "b".into() }, "b", Rect::new(140.0, 0.0, 100.0, 100.0));
        let caller = a.id.to_string();
        let (p, _) =
            Project::from_nodes(ProjectId::generate(), "p", "/tmp/p", crate::model::Camera::default(), vec![a, b], 0)
                .unwrap();
        let (x, y) = beside(&p, &caller, (100.0, 50.0));
        let r = Rect::new(x, y, 100.0, 50.0);
        for n in p.nodes() {
            let q = n.rect.expanded(39.0, 39.0, 39.0, 39.0);
            assert!(!r.intersects(&q), "{r:?} within the gap of {}", n.title);
        }
        assert_eq!(x, 140.0, "the free slot nearest the one right of the caller: in b's column");
        assert!(y.abs() <= 100.0, "{y}: next to b, not far away");
        let lone = beside(&p, "nobody", (100.0, 50.0));
        assert_eq!(lone, (280.0, 0.0), "no caller: right of everything");
    }

    #[test]
    fn a_stalled_main_thread_times_the_call_out_and_never_applies_it_later() {
        use crate::runtime::test_context::{tool, TestContext};
        let deadline = std::time::Duration::from_millis(40);
        let mut ctx = TestContext::with_call_timeout(deadline);
        let kind = NodeKind::Sticky { text: "s".into() };
        let s = ctx.add(kind, "s", (700.0, 0.0, 100.0, 80.0));
        let agent = ctx.agent.clone();
        let reply = ctx.submit(&agent, tool("canvas_move", serde_json::json!({"nodeId": s, "x": 1, "y": 2})));
        // The loop does not turn: the operation's job waits past its deadline.
        std::thread::sleep(deadline * 5);
        let e = ctx.finish(reply).unwrap_err();
        assert_eq!(e.code, tool_server::ErrorCode::Timeout);
        assert_eq!(e.message(), TIMEOUT_MESSAGE);
        for _ in 0..5 {
            ctx.rt.tick();
        }
        assert_eq!(ctx.node(s.as_str()).unwrap().rect, Rect::new(700.0, 0.0, 100.0, 80.0), "nothing was applied");
        // The loop turning again, the same call goes through.
        let v = ctx.call(&agent, tool("canvas_move", serde_json::json!({"nodeId": s, "x": 1, "y": 2}))).unwrap();
        assert_eq!(v["bounds"]["x"], 1.0);
    }
}
