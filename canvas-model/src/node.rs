//! Nodes: what sits on a canvas (browsers, terminals, agents, stickies,
//! groups, artifacts), with their frame, stacking order and colour.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::error::ModelError;
use super::geometry::Rect;
use super::ids::{BrowserContextId, NodeId, TabAddress, TabId};
pub use agent_vocab::AgentKind;

/// `ids` plus, for each group among them, its members (recursively), each
/// once, in first-seen order; ids not in `nodes` are kept so callers can
/// report them.
pub(crate) fn group_closure(nodes: &BTreeMap<NodeId, Node>, ids: &[NodeId]) -> Vec<NodeId> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut stack: Vec<NodeId> = ids.iter().rev().cloned().collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(n) = nodes.get(&id) {
            stack.extend(n.members().iter().rev().cloned());
        }
        out.push(id);
    }
    out
}

/// Named colours of the node palette (the renderer maps them to theme colours).
pub const PALETTE: &[&str] = &["red", "orange", "yellow", "green", "teal", "blue", "purple", "pink", "gray"];

/// A node colour: `#rgb`, `#rrggbb`, `#rrggbbaa` (stored lowercase) or a [`PALETTE`] name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Colour(String);

impl Colour {
    /// Validates a colour.
    pub fn new(s: impl Into<String>) -> Result<Self, ModelError> {
        let s = s.into();
        if let Some(hex) = s.strip_prefix('#') {
            if matches!(hex.len(), 3 | 6 | 8) && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(Self(s.to_ascii_lowercase()));
            }
        } else if PALETTE.contains(&s.as_str()) {
            return Ok(Self(s));
        }
        Err(ModelError::InvalidColour(s))
    }

    /// The colour as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is a palette name rather than a hex colour.
    pub fn is_palette(&self) -> bool {
        !self.0.starts_with('#')
    }
}

impl TryFrom<String> for Colour {
    type Error = ModelError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl From<Colour> for String {
    fn from(c: Colour) -> String {
        c.0
    }
}

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How an artifact node shows its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactView {
    /// The file's contents in an editor.
    Editor,
    /// The file's uncommitted changes.
    Diff,
}

/// The git worktree an agent node works in (made for it from the window).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWorktree {
    /// The main checkout of the repository the worktree belongs to.
    pub repo: PathBuf,
    /// The agent's branch (`agent/<name>`).
    pub branch: String,
    /// The branch it was made from, which its diff compares with.
    pub base: String,
}

/// One tab of a browser node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrowserTab {
    /// The tab's id within its node.
    pub id: TabId,
    /// The page's current URL (absolute).
    pub url: String,
    /// The page's title as last reported.
    pub title: String,
}

impl BrowserTab {
    /// A tab with a fresh id showing `url` (validated).
    pub fn new(url: &str) -> Result<Self, ModelError> {
        Ok(Self { id: TabId::generate(), url: check_url(url)?, title: String::new() })
    }
}

/// Checks that `url` is an absolute URL and returns it unchanged. Which
/// URLs a browser may open is browser policy's business, not the model's.
pub fn check_url(url: &str) -> Result<String, ModelError> {
    url::Url::parse(url)
        .map(|_| url.to_owned())
        .map_err(|e| ModelError::InvalidUrl { url: url.to_owned(), reason: e.to_string() })
}

/// What a node is, with the state that kind needs to be recreated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NodeKind {
    /// A Chromium view with one or more tabs.
    Browser {
        /// The tabs, in tab-strip order.
        tabs: Vec<BrowserTab>,
        /// The tab on show (one of `tabs`).
        active_tab: TabId,
        /// The isolated browser context its pages live in; `None`: the
        /// person's profile. Such a node ends with its context: it is never
        /// written to disk, so it is not there after a restart.
        #[serde(skip)]
        context: Option<BrowserContextId>,
    },
    /// A shell or command in a PTY.
    Terminal {
        /// Working directory.
        cwd: PathBuf,
        /// The command and its arguments; `None` runs the login shell.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<Vec<String>>,
        /// The tmux session the terminal attaches to, when it survives restarts that way.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tmux_session: Option<String>,
    },
    /// An AI agent CLI in a terminal.
    Agent {
        /// Which agent.
        agent: AgentKind,
        /// Working directory (the worktree's folder for an agent in a worktree).
        cwd: PathBuf,
        /// The git worktree made for this agent, when it runs in one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worktree: Option<AgentWorktree>,
    },
    /// A sticky note.
    Sticky {
        /// The note's text.
        text: String,
    },
    /// A frame that moves its members with it.
    Group {
        /// The grouped nodes (a node belongs to at most one group).
        members: Vec<NodeId>,
    },
    /// A file of the project, shown as an editor or a diff.
    Artifact {
        /// The file (for a worktree's diff: the worktree's folder).
        path: PathBuf,
        /// How it is shown.
        view: ArtifactView,
        /// A worktree's diff: the branch it is compared with (from where the
        /// two branches meet to the working tree, uncommitted work included).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<String>,
    },
}

impl NodeKind {
    /// The kind's name as used in errors and on disk.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Browser { .. } => "browser",
            Self::Terminal { .. } => "terminal",
            Self::Agent { .. } => "agent",
            Self::Sticky { .. } => "sticky",
            Self::Group { .. } => "group",
            Self::Artifact { .. } => "artifact",
        }
    }

    /// A browser node showing one tab at `url` (validated).
    pub fn browser(url: &str) -> Result<Self, ModelError> {
        let tab = BrowserTab::new(url)?;
        Ok(Self::Browser { active_tab: tab.id.clone(), tabs: vec![tab], context: None })
    }
}

/// One node on a canvas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Its id, unique on the canvas.
    pub id: NodeId,
    /// What it is.
    pub kind: NodeKind,
    /// Its title as its creator gave it (see [`super::title::shown_title`] for what the title bar reads).
    pub title: String,
    /// The name the person gave it (a rename); shown instead of any title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Frame in world coordinates.
    pub rect: Rect,
    /// Stacking order: higher is drawn above and hit first.
    pub z: i64,
    /// Accent colour; `None` uses the theme's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colour: Option<Colour>,
    /// Nodes linked to this one for context (always both ways): a linked
    /// agent's work is what `context_read` may read. Only the user makes links.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub links: BTreeSet<NodeId>,
}

impl Node {
    /// A node with a fresh id, no colour, and z 0 (adding it to a canvas puts it on top).
    pub fn new(kind: NodeKind, title: impl Into<String>, rect: Rect) -> Self {
        Self {
            id: NodeId::generate(),
            kind,
            title: title.into(),
            name: None,
            rect,
            z: 0,
            colour: None,
            links: BTreeSet::new(),
        }
    }

    /// The group's members, or an empty slice for other kinds.
    pub fn members(&self) -> &[NodeId] {
        match &self.kind {
            NodeKind::Group { members } => members,
            _ => &[],
        }
    }

    /// Whether this node is a group frame.
    pub fn is_group(&self) -> bool {
        matches!(self.kind, NodeKind::Group { .. })
    }

    /// The tab with this id, for browser nodes.
    pub fn tab(&self, tab: &TabId) -> Option<&BrowserTab> {
        match &self.kind {
            NodeKind::Browser { tabs, .. } => tabs.iter().find(|t| &t.id == tab),
            _ => None,
        }
    }

    /// The address of every tab of a browser node, in tab-strip order.
    pub fn tab_addresses(&self) -> Vec<TabAddress> {
        match &self.kind {
            NodeKind::Browser { tabs, .. } => {
                tabs.iter().map(|t| TabAddress::new(self.id.clone(), t.id.clone())).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Checks what a node must satisfy on its own (group membership is
    /// checked against the canvas elsewhere): a finite frame, and for
    /// browsers at least one tab, unique tab ids, valid URLs and an active
    /// tab among them.
    pub fn validate(&self) -> Result<(), ModelError> {
        self.rect.check_finite("node rect")?;
        if let NodeKind::Browser { tabs, active_tab, .. } = &self.kind {
            if tabs.is_empty() || !tabs.iter().any(|t| &t.id == active_tab) {
                return Err(ModelError::BadTabs(self.id.clone()));
            }
            for (i, t) in tabs.iter().enumerate() {
                if tabs[..i].iter().any(|o| o.id == t.id) {
                    return Err(ModelError::DuplicateTab(TabAddress::new(self.id.clone(), t.id.clone())));
                }
                check_url(&t.url)?;
            }
        }
        if let NodeKind::Group { members } = &self.kind {
            if members.contains(&self.id) {
                return Err(ModelError::SelfMember(self.id.clone()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_validate_and_normalise() {
        assert_eq!(Colour::new("#ABC").unwrap().as_str(), "#abc");
        assert!(Colour::new("#a1b2c3").is_ok());
        assert!(Colour::new("#a1b2c3d4").is_ok());
        assert!(Colour::new("blue").unwrap().is_palette());
        for bad in ["#ab", "#abcd", "#ggg", "", "Blue", "navy", "a1b2c3"] {
            assert!(matches!(Colour::new(bad), Err(ModelError::InvalidColour(_))), "{bad}");
        }
        assert!(serde_json::from_str::<Colour>("\"#12\"").is_err());
    }

    #[test]
    fn agent_kinds_parse_by_name() {
        for k in AgentKind::ALL {
            assert_eq!(k.as_str().parse::<AgentKind>().unwrap(), k);
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{}\"", k.as_str()));
        }
        assert!(matches!("vim".parse::<AgentKind>(), Err(agent_vocab::UnknownAgentKind(_))));
    }

    #[test]
    fn browser_nodes_need_valid_tabs() {
        let mut n =
            Node::new(NodeKind::browser("https://example.com/").unwrap(), "b", Rect::new(0.0, 0.0, 100.0, 100.0));
        assert!(n.validate().is_ok());
        assert_eq!(n.tab_addresses().len(), 1);
        if let NodeKind::Browser { tabs, active_tab, .. } = &mut n.kind {
            *active_tab = TabId::new("missing").unwrap();
            assert!(!tabs.is_empty());
        }
        assert!(matches!(n.validate(), Err(ModelError::BadTabs(_))));
        assert!(matches!(NodeKind::browser("not a url"), Err(ModelError::InvalidUrl { .. })));
        let dup = TabId::new("t").unwrap();
        let tab = BrowserTab { id: dup.clone(), url: "about:blank".into(), title: String::new() };
        n.kind = NodeKind::Browser { tabs: vec![tab.clone(), tab], active_tab: dup, context: None };
        assert!(matches!(n.validate(), Err(ModelError::DuplicateTab(_))));
    }

    #[test]
    fn node_kind_serialises_tagged() {
        let k = NodeKind::Sticky { text: "hi".into() };
        assert_eq!(serde_json::to_string(&k).unwrap(), r#"{"type":"sticky","text":"hi"}"#);
        let t: NodeKind = serde_json::from_str(r#"{"type":"terminal","cwd":"."}"#).unwrap();
        assert_eq!(t, NodeKind::Terminal { cwd: ".".into(), command: None, tmux_session: None });
    }
}
