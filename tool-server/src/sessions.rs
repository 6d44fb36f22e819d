//! Agent sessions: identities, integration status, bearer tokens, and their
//! persistence as `agent-tools/sessions/<nodeId>.json`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use local_guard::files::{self, FileError};
use local_guard::{RandomError, Token};
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use subtle::ConditionallySelectable;
use thiserror::Error;

/// Largest session file read back when reusing a token.
const SESSION_FILE_LIMIT: u64 = 64 * 1024;
/// The folder of session files inside `agent-tools/`.
pub(crate) const SESSIONS_DIR: &str = "sessions";

/// A node's session file name inside [`SESSIONS_DIR`].
pub(crate) fn session_file_name(node_id: &str) -> String {
    format!("{node_id}.json")
}
/// Longest accepted project id, in bytes.
const MAX_PROJECT_ID: usize = 256;

/// Which agent node, in which project, a session speaks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolIdentity {
    /// The agent node's id.
    pub node_id: String,
    /// The project the node belongs to.
    pub project_id: String,
}

impl ToolIdentity {
    /// Builds an identity.
    pub fn new(node_id: impl Into<String>, project_id: impl Into<String>) -> Self {
        ToolIdentity { node_id: node_id.into(), project_id: project_id.into() }
    }
}

/// Where an agent's tool integration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntegrationState {
    /// The agent CLI is missing or was started before tools were provisioned.
    NeedsSetup,
    /// Credentials are provisioned; no adapter has announced itself yet.
    Ready,
    /// An adapter (MCP or CLI) has called `session_info`.
    Connected,
    /// Tools cannot be offered for this node (see `detail`).
    Unavailable,
}

/// An agent's integration status, shown on its node and reported by `agent_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrationStatus {
    /// The state.
    pub state: IntegrationState,
    /// The adapter that connected (`claude-mcp`, `codex-mcp`), when connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// A human-readable explanation, e.g. what setup is needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl IntegrationStatus {
    /// A status with no adapter or detail.
    pub fn new(state: IntegrationState) -> Self {
        IntegrationStatus { state, adapter: None, detail: None }
    }

    /// A status with a detail line.
    pub fn with_detail(state: IntegrationState, detail: impl Into<String>) -> Self {
        IntegrationStatus { state, adapter: None, detail: Some(detail.into()) }
    }
}

/// A live session: identity, token and status. Persisted as
/// `{nodeId, projectId, token, status}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSession {
    /// Who the session speaks for.
    #[serde(flatten)]
    pub identity: ToolIdentity,
    /// The bearer token.
    pub token: Token,
    /// The integration status.
    pub status: IntegrationStatus,
}

/// A session file as read back: the token is checked only where it is
/// reused, so a malformed one still leaves the status readable.
#[derive(Deserialize)]
pub(crate) struct StoredSession {
    #[serde(flatten)]
    pub(crate) identity: ToolIdentity,
    pub(crate) token: String,
    pub(crate) status: IntegrationStatus,
}

/// A failure provisioning, updating or revoking a session.
#[derive(Debug, Error)]
pub enum SessionError {
    /// The node id does not match `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`.
    #[error("invalid node id {0:?}")]
    InvalidNodeId(String),
    /// The project id is empty, too long, or contains control characters.
    #[error("invalid project id")]
    InvalidProjectId,
    /// No session exists for the node.
    #[error("no session for node {0}")]
    UnknownNode(String),
    /// The session file could not be written or removed.
    #[error(transparent)]
    File(#[from] FileError),
    /// The OS random source failed.
    #[error(transparent)]
    Random(#[from] RandomError),
}

/// True when `id` matches `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$` (also what
/// makes it safe as a file name).
pub fn valid_node_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

fn check_identity(identity: &ToolIdentity) -> Result<(), SessionError> {
    if !valid_node_id(&identity.node_id) {
        return Err(SessionError::InvalidNodeId(identity.node_id.chars().take(140).collect()));
    }
    let project = &identity.project_id;
    if project.is_empty() || project.len() > MAX_PROJECT_ID || project.chars().any(char::is_control) {
        return Err(SessionError::InvalidProjectId);
    }
    Ok(())
}

/// The live sessions of one data directory, mirrored to `sessions/*.json`.
#[derive(Debug)]
pub struct SessionStore {
    dir: PathBuf,
    /// Shared so a request's snapshot costs a reference count, not four strings.
    sessions: RwLock<HashMap<String, Arc<ToolSession>>>,
    /// Serializes writers so the map and the files change in the same order.
    writes: Mutex<()>,
}

impl SessionStore {
    /// Opens (creating, 0700) the `sessions` directory inside `agent_tools_dir`.
    /// Sessions on disk stay dormant until provisioned again with `reuse`.
    pub fn open(agent_tools_dir: &Path) -> Result<Self, SessionError> {
        let dir = agent_tools_dir.join(SESSIONS_DIR);
        files::ensure_private_dir(&dir)?;
        Ok(SessionStore { dir, sessions: RwLock::new(HashMap::new()), writes: Mutex::new(()) })
    }

    /// The `sessions` directory.
    pub fn directory(&self) -> &Path {
        &self.dir
    }

    /// Creates or refreshes the session for `identity` and persists it.
    ///
    /// With `reuse`, the token of a persisted session for the same node and
    /// project is kept (so an agent started earlier keeps working); otherwise,
    /// or when the file is missing, unreadable or mismatched, a new token is
    /// drawn. Any previous token for the node stops working immediately.
    pub fn provision(
        &self,
        identity: ToolIdentity,
        status: IntegrationStatus,
        reuse: bool,
    ) -> Result<ToolSession, SessionError> {
        check_identity(&identity)?;
        let _writing = self.writes.lock();
        let file = session_file_name(&identity.node_id);
        let reused = if reuse { self.persisted_token(&file, &identity) } else { None };
        let token = match reused {
            Some(token) => token,
            None => Token::generate()?,
        };
        let session = ToolSession { identity, token, status };
        files::write_private_json(&self.dir, &file, &session)?;
        self.sessions.write().insert(session.identity.node_id.clone(), Arc::new(session.clone()));
        tracing::debug!(node = %session.identity.node_id, reused = reuse, "tool session provisioned");
        Ok(session)
    }

    /// The status saved in a node's session file (live or from an earlier run),
    /// if there is a readable one.
    pub fn persisted_status(&self, node_id: &str) -> Option<IntegrationStatus> {
        if !valid_node_id(node_id) {
            return None;
        }
        self.stored(&session_file_name(node_id)).map(|s| s.status)
    }

    fn persisted_token(&self, file: &str, identity: &ToolIdentity) -> Option<Token> {
        let stored = self.stored(file)?;
        if stored.identity != *identity {
            return None;
        }
        Token::parse(&stored.token).ok()
    }

    /// The session saved in `file`, if it is there and readable.
    fn stored(&self, file: &str) -> Option<StoredSession> {
        let bytes = match files::read_private(&self.dir, file, SESSION_FILE_LIMIT) {
            Ok(bytes) => bytes?,
            Err(e) => {
                tracing::warn!(file, error = %e, "ignoring unreadable session file");
                return None;
            }
        };
        serde_json::from_slice(&bytes).ok()
    }

    /// Deletes the node's session file and forgets the session; queued work
    /// for its token fails when dequeued. Returns whether a live session existed.
    pub fn revoke(&self, node_id: &str) -> Result<bool, SessionError> {
        if !valid_node_id(node_id) {
            return Err(SessionError::InvalidNodeId(node_id.chars().take(140).collect()));
        }
        let _writing = self.writes.lock();
        // Forget first: even if the unlink fails the token must stop working.
        let existed = self.sessions.write().remove(node_id).is_some();
        files::remove_private(&self.dir, &session_file_name(node_id))?;
        tracing::debug!(node = %node_id, existed, "tool session revoked");
        Ok(existed)
    }

    /// Replaces a live session's status and persists it.
    pub fn set_status(&self, node_id: &str, status: IntegrationStatus) -> Result<ToolSession, SessionError> {
        let _writing = self.writes.lock();
        let mut session = self.get(node_id).ok_or_else(|| SessionError::UnknownNode(node_id.to_owned()))?;
        session.status = status;
        files::write_private_json(&self.dir, &session_file_name(node_id), &session)?;
        self.sessions.write().insert(node_id.to_owned(), Arc::new(session.clone()));
        Ok(session)
    }

    /// The live session of a node.
    pub fn get(&self, node_id: &str) -> Option<ToolSession> {
        self.sessions.read().get(node_id).map(|s| ToolSession::clone(s))
    }

    /// The live session of a node if `token` is still its token, shared.
    pub fn current(&self, node_id: &str, token: &Token) -> Option<Arc<ToolSession>> {
        self.sessions.read().get(node_id).filter(|s| s.token == *token).cloned()
    }

    /// Every live session of a project.
    pub fn in_project(&self, project_id: &str) -> Vec<ToolSession> {
        let mut found: Vec<ToolSession> = self
            .sessions
            .read()
            .values()
            .filter(|s| s.identity.project_id == project_id)
            .map(|s| (**s).clone())
            .collect();
        found.sort_by(|a, b| a.identity.node_id.cmp(&b.identity.node_id));
        found
    }

    /// True when `token` is still the live token of the node.
    pub fn is_current(&self, node_id: &str, token: &Token) -> bool {
        self.sessions.read().get(node_id).is_some_and(|s| s.token == *token)
    }

    /// Finds the session whose token equals `presented`. Every live token is
    /// compared in constant time, so timing reveals neither which one matched
    /// nor how much of a guess was right. The session is shared: a snapshot
    /// taken at authentication, not a live view.
    pub fn authenticate(&self, presented: &[u8]) -> Option<Arc<ToolSession>> {
        if !Token::is_well_formed(presented) {
            return None;
        }
        let sessions = self.sessions.read();
        let mut found = subtle::Choice::from(0);
        let mut index = 0u64;
        for (i, session) in sessions.values().enumerate() {
            let equal = session.token.ct_eq(presented);
            index.conditional_assign(&(i as u64), equal);
            found |= equal;
        }
        // The map cannot change under the read lock, so the index still names the match.
        if bool::from(found) {
            sessions.values().nth(index as usize).cloned()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn identity(node: &str) -> ToolIdentity {
        ToolIdentity::new(node, "project-1")
    }

    fn ready() -> IntegrationStatus {
        IntegrationStatus::new(IntegrationState::Ready)
    }

    #[test]
    fn node_id_pattern() {
        for ok in ["a", "A9", "n_1-x", &"a".repeat(128)] {
            assert!(valid_node_id(ok), "{ok}");
        }
        for bad in ["", "_a", "-a", "a.b", "a/b", "..", "é", &"a".repeat(129), "a b"] {
            assert!(!valid_node_id(bad), "{bad}");
        }
    }

    #[test]
    fn persisted_status_reads_the_session_file() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path()).unwrap();
        assert_eq!(store.persisted_status("a"), None);
        let status = IntegrationStatus::with_detail(IntegrationState::NeedsSetup, "why");
        store.provision(identity("a"), status.clone(), false).unwrap();
        // A store opened later (the next run) reads it from the file.
        let later = SessionStore::open(root.path()).unwrap();
        assert_eq!(later.persisted_status("a"), Some(status));
        assert_eq!(later.persisted_status("../a"), None, "only valid node ids name files");
        fs::write(later.directory().join("b.json"), b"{not json").unwrap();
        assert_eq!(later.persisted_status("b"), None);
    }

    #[test]
    fn provisions_fresh_tokens_and_persists_them() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path()).unwrap();
        let a = store.provision(identity("a"), ready(), false).unwrap();
        assert!(Token::is_well_formed(a.token.expose().as_bytes()));
        let b = store.provision(identity("a"), ready(), false).unwrap();
        assert_ne!(a.token, b.token, "reuse=false must draw a new token");
        assert!(!store.is_current("a", &a.token));
        assert!(store.is_current("a", &b.token));
        assert!(store.current("a", &a.token).is_none(), "a replaced token no longer finds the session");
        assert_eq!(store.current("a", &b.token).map(|s| s.token.clone()), Some(b.token.clone()));
        assert!(store.current("zz", &b.token).is_none());
        let on_disk: serde_json::Value =
            serde_json::from_slice(&fs::read(store.directory().join("a.json")).unwrap()).unwrap();
        assert_eq!(on_disk["nodeId"], "a");
        assert_eq!(on_disk["projectId"], "project-1");
        assert_eq!(on_disk["token"], b.token.expose());
        assert_eq!(on_disk["status"]["state"], "ready");
    }

    #[test]
    fn reuses_only_a_matching_well_formed_persisted_token() {
        let root = tempfile::tempdir().unwrap();
        let first = SessionStore::open(root.path()).unwrap().provision(identity("a"), ready(), false).unwrap();

        // A restart: a new store reads the persisted token back.
        let store = SessionStore::open(root.path()).unwrap();
        assert!(store.get("a").is_none(), "persisted sessions stay dormant until provisioned");
        let again = store.provision(identity("a"), ready(), true).unwrap();
        assert_eq!(again.token, first.token);

        // Different project: not reused.
        let other = store.provision(ToolIdentity::new("a", "project-2"), ready(), true).unwrap();
        assert_ne!(other.token, first.token);

        // Malformed token on disk: not reused.
        let path = store.directory().join("a.json");
        let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        doc["token"] = serde_json::json!("A".repeat(64));
        fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        let fresh = store.provision(ToolIdentity::new("a", "project-2"), ready(), true).unwrap();
        assert_ne!(fresh.token.expose(), "A".repeat(64));
        assert!(Token::is_well_formed(fresh.token.expose().as_bytes()));

        // Garbage file: not reused, replaced.
        fs::write(&path, b"not json").unwrap();
        let replaced = store.provision(ToolIdentity::new("a", "project-2"), ready(), true).unwrap();
        assert_ne!(replaced.token, fresh.token);
    }

    #[test]
    fn rejects_bad_identities() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path()).unwrap();
        assert!(matches!(store.provision(identity("../x"), ready(), false), Err(SessionError::InvalidNodeId(_))));
        assert!(matches!(
            store.provision(ToolIdentity::new("a", ""), ready(), false),
            Err(SessionError::InvalidProjectId)
        ));
        assert!(matches!(store.revoke("../../etc"), Err(SessionError::InvalidNodeId(_))));
    }

    #[test]
    fn authenticates_in_constant_time_and_revokes() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path()).unwrap();
        let a = store.provision(identity("a"), ready(), false).unwrap();
        let b = store.provision(identity("b"), ready(), false).unwrap();
        assert_eq!(store.authenticate(a.token.expose().as_bytes()).unwrap().identity.node_id, "a");
        assert_eq!(store.authenticate(b.token.expose().as_bytes()).unwrap().identity.node_id, "b");
        assert!(store.authenticate(&[b'0'; 64]).is_none());
        assert!(store.authenticate(b"short").is_none());
        assert!(store.authenticate(a.token.expose().to_uppercase().as_bytes()).is_none());

        assert!(store.revoke("a").unwrap());
        assert!(store.authenticate(a.token.expose().as_bytes()).is_none());
        assert!(!store.directory().join("a.json").exists());
        assert!(!store.revoke("a").unwrap());
        assert_eq!(store.in_project("project-1").len(), 1);
    }

    #[test]
    fn token_debug_is_redacted() {
        let token = Token::generate().unwrap();
        let shown =
            format!("{token:?} {:?}", ToolSession { identity: identity("a"), token: token.clone(), status: ready() });
        assert!(!shown.contains(token.expose()));
        assert!(Token::parse(token.expose()).is_ok());
        assert!(Token::parse("abc").is_err());
    }

    #[test]
    fn set_status_persists() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path()).unwrap();
        store.provision(identity("a"), ready(), false).unwrap();
        let mut status = IntegrationStatus::new(IntegrationState::Connected);
        status.adapter = Some("claude-mcp".into());
        store.set_status("a", status.clone()).unwrap();
        assert_eq!(store.get("a").unwrap().status, status);
        let text = fs::read_to_string(store.directory().join("a.json")).unwrap();
        assert!(text.contains("\"connected\"") && text.contains("claude-mcp"));
        assert!(matches!(store.set_status("zz", status), Err(SessionError::UnknownNode(_))));
    }
}
