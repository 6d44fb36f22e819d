//! What the tool server's thread may read without asking the main thread
//! ([`ToolShared`]: the node index, project folders, browser ownership,
//! integration statuses, agents' activity), the node kinds it compares
//! ([`KindTag`]) and browser ownership ([`Owners`], saved as [`OWNERS_FILE`]).

use crate::model::NodeKind;
use crate::runtime::terminals::ActivityBoard;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use tool_server::{IntegrationStatus, ToolError};

/// File (in `agent-tools/`) holding the browser ownership map.
pub const OWNERS_FILE: &str = "browser-owners.json";

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
}
