//! Typed errors of the workspace model and its persistence. Imports the id
//! types (a refusal names the node, tab or project) and takes in their
//! [`IdError`]; `ids` imports nothing of this file.

use std::path::PathBuf;

use super::ids::{IdError, NodeId, ProjectId, TabAddress};

/// Why a command (or an id, colour or URL given to one) was refused.
///
/// A refused command changes nothing: the workspace is exactly as before.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// An id or a tab address is malformed (its message is [`IdError`]'s).
    #[error(transparent)]
    Id(#[from] IdError),
    /// A colour is neither `#rgb`/`#rrggbb`/`#rrggbbaa` nor a palette name.
    #[error("invalid colour {0:?}: expected #rgb, #rrggbb, #rrggbbaa or one of the palette names")]
    InvalidColour(String),
    /// A URL that does not parse as an absolute URL.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The offending text.
        url: String,
        /// What the URL parser objected to.
        reason: String,
    },
    /// A coordinate, size, offset or zoom that is NaN or infinite.
    #[error("{0} must be a finite number")]
    NotFinite(&'static str),
    /// No project is open, so there is nothing to apply a canvas command to.
    #[error("no project is open")]
    NoActiveProject,
    /// The project id is not open in the workspace.
    #[error("unknown project {0}")]
    UnknownProject(ProjectId),
    /// A project with this id is already open.
    #[error("project {0} is already open")]
    DuplicateProject(ProjectId),
    /// The node id is not on this canvas.
    #[error("unknown node {0}")]
    UnknownNode(NodeId),
    /// A node with this id already exists on this canvas.
    #[error("node {0} already exists")]
    DuplicateNode(NodeId),
    /// A node cannot be linked to itself.
    #[error("node {0} cannot be linked to itself")]
    SelfLink(NodeId),
    /// The node exists but is of the wrong kind for this command.
    #[error("node {id} is not a {expected} node")]
    WrongKind {
        /// The node.
        id: NodeId,
        /// The kind the command needs.
        expected: &'static str,
    },
    /// The browser node has no tab with this id.
    #[error("unknown tab {0}")]
    UnknownTab(TabAddress),
    /// The browser node already has a tab with this id.
    #[error("tab {0} already exists")]
    DuplicateTab(TabAddress),
    /// Closing the last tab would leave a browser node with nothing to show;
    /// remove the node instead.
    #[error("cannot close the last tab of browser node {0}; remove the node instead")]
    LastTab(NodeId),
    /// A browser node must have at least one tab, and its active tab must be one of them.
    #[error("browser node {0} must have at least one tab and an active tab among them")]
    BadTabs(NodeId),
    /// A command that needs node ids was given none.
    #[error("{0} needs at least one node id")]
    NoNodes(&'static str),
    /// A project for this folder is already open (two tabs would overwrite
    /// each other's layout file).
    #[error("a project for folder {0} is already open")]
    DuplicateFolder(PathBuf),
    /// A command reached the wrong handler (a routing bug in the model).
    #[error("internal error: a {0} command was routed to the wrong handler")]
    Misrouted(&'static str),
    /// A group cannot contain itself.
    #[error("group {0} cannot contain itself")]
    SelfMember(NodeId),
}

/// Why reading or writing a layout or workspace file failed.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// The file was written by a newer termsprawl; it is left untouched.
    #[error("{path} has format version {found}, newer than the supported {supported}; upgrade termsprawl (the file was left untouched)")]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u64,
        /// The newest version this build reads.
        supported: u64,
    },
    /// An I/O operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("write", "rename", ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A corrupt file could not be moved aside, so it was neither loaded nor
    /// replaced (replacing it would lose it).
    #[error("{path} is unreadable ({reason}) and could not be moved aside: {source}")]
    Quarantine {
        /// The bad file.
        path: PathBuf,
        /// Why it could not be loaded.
        reason: String,
        /// Why the rename failed.
        #[source]
        source: std::io::Error,
    },
    /// A path cannot be stored because it is not valid UTF-8.
    #[error("path {0:?} is not valid UTF-8 and cannot be stored")]
    NonUtf8Path(PathBuf),
    /// The project folder does not exist (it is never created implicitly).
    #[error("project folder {0} does not exist")]
    MissingFolder(PathBuf),
    /// Serialising the model failed.
    #[error("encoding {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// The file parsed but does not describe a valid layout or workspace.
    #[error("{0}")]
    Invalid(String),
}

impl PersistError {
    /// Wraps an I/O error with what was being done and to which path.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { action, path: path.into(), source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_errors_become_the_same_model_errors() {
        let e = ModelError::from(NodeId::new("x/y").unwrap_err());
        assert!(matches!(&e, ModelError::Id(IdError::InvalidId { kind: "node", value }) if value == "x/y"));
        assert_eq!(e.to_string(), NodeId::new("x/y").unwrap_err().to_string());
        let e = ModelError::from(TabAddress::parse("n-1").unwrap_err());
        assert_eq!(e, ModelError::Id(IdError::InvalidTabAddress("n-1".into())));
        assert_eq!(e.to_string(), "invalid tab address \"n-1\": expected nodeId::tabId");
    }
}
