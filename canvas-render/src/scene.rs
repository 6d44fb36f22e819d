//! The renderer-neutral scene the app fills every frame: nodes in world coordinates, their
//! chrome state and their content. Nothing here knows about CEF, PTYs or the app's model.

use crate::browser_bar::BrowserBar;
use crate::cells::TerminalGridView;
use crate::color::Color;
use crate::geometry::Rect;
use crate::theme::Theme;

/// Which kind of node this is; selects the title-bar icon and the body style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A Chromium browser view.
    Browser,
    /// A shell terminal.
    Terminal,
    /// An AI-agent terminal.
    Agent,
    /// A sticky note (body tinted with the node colour).
    Sticky,
    /// A group frame around other nodes (translucent body).
    Group,
    /// A produced artifact (document, image, file).
    Artifact,
}

/// Stable identity of a node across frames; keys the per-node texture cache.
pub type NodeId = u64;

/// Identity of an uploaded content texture (see `Renderer::upload_bgra`).
pub type ContentKey = u64;

/// A short status label drawn as a pill at the right of the title bar.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Badge {
    /// Label text (kept short: it is not wrapped).
    pub text: String,
    /// Pill colour; the label is drawn in a readable colour on top.
    pub color: Color,
}

/// What fills a node's body below its title bar.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeContent {
    /// Pixels uploaded with `Renderer::upload_bgra(key, ..)`; `generation` is informative
    /// (the upload itself marks the content changed) and lets the app see what is shown.
    Texture {
        /// The uploaded texture to show.
        key: ContentKey,
        /// The app's frame counter for that texture.
        generation: u64,
    },
    /// Wrapped plain text (sticky notes, artifacts).
    Text(String),
    /// A terminal cell grid.
    Terminal(TerminalGridView),
    /// Nothing: frame and title only (groups).
    Empty,
}

/// One node as the app wants it drawn this frame.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeView {
    /// Stable id (cache key).
    pub id: NodeId,
    /// Outer rectangle in world units, title bar included.
    pub rect: Rect,
    /// Stacking order: higher draws on top; ties keep scene order.
    pub z: i32,
    /// Kind (icon and body style).
    pub kind: NodeKind,
    /// Title shown in the title bar (ellipsised when too long).
    pub title: String,
    /// Accent colour of the node (icon tint; the whole body for stickies and groups).
    pub color: Color,
    /// Optional status pill.
    pub badge: Option<Badge>,
    /// Whether the node has keyboard focus (accent border and glow).
    pub focused: bool,
    /// Whether the node is part of the selection (outer ring).
    pub selected: bool,
    /// Body content.
    pub content: NodeContent,
    /// A browser's title bar controls (back, forward, reload, address, find), if any.
    pub bar: Option<BrowserBar>,
}

/// Everything drawn in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Canvas background colour (the dot grid is derived from it).
    pub background: Color,
    /// Nodes in any order; drawn by ascending `z`.
    pub nodes: Vec<NodeView>,
    /// Context links between nodes (by id), drawn under every node as a
    /// right-angled line from the first node's centre to the second's.
    pub links: Vec<(NodeId, NodeId)>,
}

impl Default for Scene {
    fn default() -> Self {
        Self { background: Theme::default().canvas, nodes: Vec::new(), links: Vec::new() }
    }
}
