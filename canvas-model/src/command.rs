//! Every mutation of the workspace, as one enum. The UI and the agent tool
//! runtime build [`Command`]s; [`super::Workspace::apply`] runs them on the
//! main thread. This file holds what each canvas command does to a project.

use std::collections::BTreeSet;
use std::path::Path;

use super::error::ModelError;
use super::geometry::{Camera, Point, Rect};
use super::history::{CoalesceKey, Txn};
use super::ids::{NodeId, ProjectId, TabAddress};
use super::node::{check_url, group_closure, ArtifactView, BrowserTab, Colour, Node, NodeKind};
use super::placement::free_spot;
use super::project::Project;
use super::title::clean_name;

/// Space between a new group's frame and its members' bounding box.
pub const GROUP_PADDING: f64 = 24.0;
/// Extra space above a new group's members for the group's title bar.
pub const GROUP_HEADER: f64 = 32.0;
/// Where a duplicate would go (offset from its original in both axes) if
/// that spot is free; else it goes to the nearest free one.
pub const DUPLICATE_OFFSET: f64 = 24.0;
/// Title of a group created without one.
pub const DEFAULT_GROUP_TITLE: &str = "Group";

/// One mutation of the workspace.
///
/// Canvas commands act on one project's nodes and are undoable (see
/// [`Command::scope`]); live commands record what a browser page did by
/// itself; the camera and the project list are view state, not undoable.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Adds a node on top of the others. Relative paths are taken relative to
    /// the project folder; the size is raised to the minimum; a group's
    /// members leave any group they were in.
    AddNode {
        /// The node (its `z` is ignored).
        node: Node,
    },
    /// Removes nodes. Removing a group frame releases its members (into the
    /// group's own parent group, if any); removing a member drops it from its group.
    RemoveNodes {
        /// The nodes.
        ids: Vec<NodeId>,
    },
    /// Moves nodes by an offset; a group moves with all its members (nested too).
    MoveNodes {
        /// The nodes.
        ids: Vec<NodeId>,
        /// Horizontal offset in world units.
        dx: f64,
        /// Vertical offset in world units.
        dy: f64,
    },
    /// Sets a node's frame (resize); the size is raised to 80×60 at least.
    /// A group's members stay where they are.
    SetRect {
        /// The node.
        id: NodeId,
        /// The new frame.
        rect: Rect,
    },
    /// Sets a node's title.
    SetTitle {
        /// The node.
        id: NodeId,
        /// The new title.
        title: String,
    },
    /// Names a node the way the person wants it read (shown instead of any
    /// title, its program's included); `None` or a blank name goes back to the
    /// program's title. The name is cleaned (see [`clean_name`]).
    RenameNode {
        /// The node.
        id: NodeId,
        /// The name.
        name: Option<String>,
    },
    /// Sets or clears a node's accent colour.
    SetColour {
        /// The node.
        id: NodeId,
        /// The colour; `None` for the theme default.
        colour: Option<Colour>,
    },
    /// Raises nodes above all others, keeping their relative order; a group
    /// brings its members along, above its frame.
    BringToFront {
        /// The nodes.
        ids: Vec<NodeId>,
    },
    /// Links two nodes for context, both ways (linking linked nodes changes nothing).
    LinkNodes {
        /// One node.
        a: NodeId,
        /// The other.
        b: NodeId,
    },
    /// Removes the link between two nodes (if any).
    UnlinkNodes {
        /// One node.
        a: NodeId,
        /// The other.
        b: NodeId,
    },
    /// Copies nodes (a group with its members) with fresh ids, offset by
    /// +24,+24, on top. A terminal copy does not share its original's tmux
    /// session: it is a new shell in the same place. Copies have no links.
    Duplicate {
        /// The nodes.
        ids: Vec<NodeId>,
    },
    /// Creates a group frame around the nodes' bounding box plus padding and
    /// a title-bar band; the nodes leave any group they were in (if they all
    /// shared one, the new group takes their place in it).
    GroupNodes {
        /// The nodes.
        ids: Vec<NodeId>,
        /// The group's title (default "Group").
        title: Option<String>,
    },
    /// Removes a group frame, leaving its members where they are (they join
    /// the group's parent group, if any).
    Ungroup {
        /// The group.
        id: NodeId,
    },
    /// Sets a sticky note's text.
    SetStickyText {
        /// The sticky node.
        id: NodeId,
        /// The new text.
        text: String,
    },
    /// Switches an artifact between editor and diff.
    SetArtifactView {
        /// The artifact node.
        id: NodeId,
        /// The view.
        view: ArtifactView,
    },
    /// Opens a tab in a browser node.
    AddTab {
        /// The browser node.
        node: NodeId,
        /// The tab (its id must be new in that node).
        tab: BrowserTab,
        /// Whether the tab becomes the one on show.
        activate: bool,
    },
    /// Closes a tab (never the last one); if it was on show, its neighbour is shown.
    CloseTab {
        /// The tab.
        tab: TabAddress,
    },
    /// Live: records that a tab navigated.
    SetBrowserUrl {
        /// The tab.
        tab: TabAddress,
        /// The page's URL (absolute).
        url: String,
    },
    /// Live: records a tab's page title.
    SetBrowserTitle {
        /// The tab.
        tab: TabAddress,
        /// The page's title.
        title: String,
    },
    /// Live: shows another tab of a browser node.
    ActivateTab {
        /// The tab.
        tab: TabAddress,
    },
    /// Sets the project's camera (zoom clamped to the allowed range).
    SetCamera {
        /// The camera.
        camera: Camera,
    },
    /// Opens a project as a new tab (at the end).
    AddProject {
        /// The project (as loaded, or new and empty).
        project: Box<Project>,
        /// Whether it becomes the active tab.
        activate: bool,
    },
    /// Closes a project's tab; its undo history goes with it (its layout
    /// stays in its folder). The neighbour becomes active if it was active.
    CloseProject {
        /// The project.
        id: ProjectId,
    },
    /// Makes a project the active tab.
    ActivateProject {
        /// The project.
        id: ProjectId,
    },
    /// Renames a project's tab.
    RenameProject {
        /// The project.
        id: ProjectId,
        /// The new name.
        name: String,
    },
}

/// How a command relates to undo and to the files it dirties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandScope {
    /// Edits a canvas; undoable; dirties the project's layout file.
    Canvas,
    /// Records browser state the page changed by itself; not undoable;
    /// dirties the layout file.
    Live,
    /// Changes the view (camera); not undoable; dirties workspace.json.
    View,
    /// Changes the open projects; not undoable; dirties workspace.json.
    Workspace,
}

impl Command {
    /// How this command relates to undo and to files.
    pub fn scope(&self) -> CommandScope {
        match self {
            Self::SetBrowserUrl { .. } | Self::SetBrowserTitle { .. } | Self::ActivateTab { .. } => CommandScope::Live,
            Self::SetCamera { .. } => CommandScope::View,
            Self::AddProject { .. }
            | Self::CloseProject { .. }
            | Self::ActivateProject { .. }
            | Self::RenameProject { .. } => CommandScope::Workspace,
            _ => CommandScope::Canvas,
        }
    }

    /// Whether this command becomes an undo step.
    pub fn is_undoable(&self) -> bool {
        self.scope() == CommandScope::Canvas
    }

    /// The key under which consecutive commands merge into one undo step.
    pub fn coalesce_key(&self) -> Option<CoalesceKey> {
        match self {
            Self::MoveNodes { ids, .. } => {
                let set: BTreeSet<NodeId> = ids.iter().cloned().collect();
                Some(CoalesceKey::Move(set.into_iter().collect()))
            }
            Self::SetRect { id, .. } => Some(CoalesceKey::Resize(id.clone())),
            Self::SetStickyText { id, .. } => Some(CoalesceKey::StickyText(id.clone())),
            Self::SetTitle { id, .. } => Some(CoalesceKey::Title(id.clone())),
            _ => None,
        }
    }

    /// A move of one node (and, for a group, its members) to an absolute
    /// top-left position — the agent tool's `canvas_move`.
    pub fn move_to(project: &Project, id: &NodeId, x: f64, y: f64) -> Result<Command, ModelError> {
        if !(x.is_finite() && y.is_finite()) {
            return Err(ModelError::NotFinite("position"));
        }
        let node = project.node(id).ok_or_else(|| ModelError::UnknownNode(id.clone()))?;
        Ok(Command::MoveNodes { ids: vec![id.clone()], dx: x - node.rect.x, dy: y - node.rect.y })
    }
}

/// What a canvas command produced beyond the node changes themselves.
#[derive(Debug, Default)]
pub(super) struct Produced {
    /// Nodes the command created, in creation order.
    pub created: Vec<NodeId>,
    /// For `Duplicate`: (original, copy) pairs.
    pub copies: Vec<(NodeId, NodeId)>,
}

/// Runs a canvas or live command against a project's nodes. On error the
/// `Txn` rolls the nodes back and the caller restores `next_z`.
pub(super) fn execute(
    cmd: Command,
    folder: &Path,
    next_z: &mut i64,
    txn: &mut Txn<'_>,
) -> Result<Produced, ModelError> {
    let mut out = Produced::default();
    match cmd {
        Command::AddNode { mut node } => {
            node.validate()?;
            // Links are made by LinkNodes only, between nodes that exist.
            node.links.clear();
            node.rect = node.rect.clamped_to_min_size();
            absolutise_paths(&mut node.kind, folder);
            let id = node.id.clone();
            if let NodeKind::Group { members } = &mut node.kind {
                let mut seen = BTreeSet::new();
                members.retain(|m| seen.insert(m.clone()));
            }
            let members = node.members().to_vec();
            for m in &members {
                txn.get(m)?;
            }
            node.z = bump(next_z);
            txn.insert_new(node)?;
            for m in &members {
                leave_group(txn, m, Some(&id))?;
            }
            let order = front_order(txn, &members);
            for m in order {
                txn.get_mut(&m)?.z = bump(next_z);
            }
            out.created.push(id);
        }
        Command::RemoveNodes { ids } => {
            let ids = existing_unique(txn, ids, "RemoveNodes")?;
            for id in &ids {
                if !txn.nodes().contains_key(id) {
                    // Already removed as part of this command? Ids are unique,
                    // and removing a group never removes its members, so no.
                    continue;
                }
                if txn.get(id)?.is_group() {
                    dissolve_group(txn, id)?;
                }
                leave_group(txn, id, None)?;
                let peers = txn.get(id)?.links.clone();
                for peer in peers {
                    if let Ok(p) = txn.get_mut(&peer) {
                        p.links.remove(id);
                    }
                }
                txn.remove(id)?;
            }
        }
        Command::LinkNodes { a, b } => {
            if a == b {
                return Err(ModelError::SelfLink(a));
            }
            txn.get(&a)?;
            txn.get(&b)?;
            txn.get_mut(&a)?.links.insert(b.clone());
            txn.get_mut(&b)?.links.insert(a);
        }
        Command::UnlinkNodes { a, b } => {
            txn.get(&a)?;
            txn.get(&b)?;
            txn.get_mut(&a)?.links.remove(&b);
            txn.get_mut(&b)?.links.remove(&a);
        }
        Command::MoveNodes { ids, dx, dy } => {
            if !(dx.is_finite() && dy.is_finite()) {
                return Err(ModelError::NotFinite("move offset"));
            }
            let ids = existing_unique(txn, ids, "MoveNodes")?;
            if dx != 0.0 || dy != 0.0 {
                let all = closure(txn, &ids);
                for id in all {
                    let n = txn.get_mut(&id)?;
                    n.rect = n.rect.translated(dx, dy);
                }
            }
        }
        Command::SetRect { id, rect } => {
            rect.check_finite("rect")?;
            txn.get_mut(&id)?.rect = rect.clamped_to_min_size();
        }
        Command::SetTitle { id, title } => {
            txn.get_mut(&id)?.title = title;
        }
        Command::RenameNode { id, name } => {
            txn.get_mut(&id)?.name = name.as_deref().and_then(clean_name);
        }
        Command::SetColour { id, colour } => {
            txn.get_mut(&id)?.colour = colour;
        }
        Command::BringToFront { ids } => {
            let ids = existing_unique(txn, ids, "BringToFront")?;
            for id in front_order(txn, &ids) {
                txn.get_mut(&id)?.z = bump(next_z);
            }
        }
        Command::Duplicate { ids } => {
            let ids = existing_unique(txn, ids, "Duplicate")?;
            let originals = front_order(txn, &ids);
            let mut taken: BTreeSet<NodeId> = txn.nodes().keys().cloned().collect();
            let mut mapping = Vec::with_capacity(originals.len());
            for id in &originals {
                let copy = loop {
                    let c = NodeId::generate();
                    if taken.insert(c.clone()) {
                        break c;
                    }
                };
                mapping.push((id.clone(), copy));
            }
            // The copies move as one block, to the free spot nearest the offset one.
            let mut block: Option<Rect> = None;
            for id in &originals {
                let r = txn.get(id)?.rect;
                block = Some(block.map_or(r, |b| b.union(&r)));
            }
            let (dx, dy) = match block {
                Some(b) => {
                    let taken: Vec<Rect> = txn.nodes().values().map(|n| n.rect).collect();
                    let wanted = Point::new(b.x + DUPLICATE_OFFSET, b.y + DUPLICATE_OFFSET);
                    let spot = free_spot(&taken, (b.w, b.h), wanted);
                    (spot.x - b.x, spot.y - b.y)
                }
                None => (DUPLICATE_OFFSET, DUPLICATE_OFFSET),
            };
            for (orig, copy_id) in &mapping {
                let mut copy = txn.get(orig)?.clone();
                copy.id = copy_id.clone();
                copy.links.clear();
                copy.rect = copy.rect.translated(dx, dy);
                copy.z = bump(next_z);
                match &mut copy.kind {
                    NodeKind::Group { members } => {
                        for m in members.iter_mut() {
                            if let Some((_, c)) = mapping.iter().find(|(o, _)| o == m) {
                                *m = c.clone();
                            }
                        }
                    }
                    NodeKind::Terminal { tmux_session, .. } => *tmux_session = None,
                    _ => {}
                }
                txn.insert_new(copy)?;
                out.created.push(copy_id.clone());
            }
            out.copies = mapping;
        }
        Command::GroupNodes { ids, title } => {
            let ids = existing_unique(txn, ids, "GroupNodes")?;
            let parents: BTreeSet<Option<NodeId>> = ids.iter().map(|id| parent_of(txn, id)).collect();
            let shared_parent = match parents.into_iter().collect::<Vec<_>>().as_slice() {
                [Some(p)] => Some(p.clone()),
                _ => None,
            };
            let bounds = closure(txn, &ids)
                .iter()
                .map(|id| txn.get(id).map(|n| n.rect))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .reduce(|a, b| a.union(&b))
                .ok_or(ModelError::NoNodes("GroupNodes"))?;
            let gid = loop {
                let c = NodeId::generate();
                if !txn.nodes().contains_key(&c) {
                    break c;
                }
            };
            for id in &ids {
                leave_group(txn, id, None)?;
            }
            let group = Node {
                id: gid.clone(),
                kind: NodeKind::Group { members: ids.clone() },
                title: title.unwrap_or_else(|| DEFAULT_GROUP_TITLE.to_owned()),
                rect: bounds
                    .expanded(GROUP_PADDING, GROUP_PADDING + GROUP_HEADER, GROUP_PADDING, GROUP_PADDING)
                    .clamped_to_min_size(),
                z: bump(next_z),
                colour: None,
                name: None,
                links: BTreeSet::new(),
            };
            txn.insert_new(group)?;
            if let Some(p) = shared_parent {
                if let NodeKind::Group { members } = &mut txn.get_mut(&p)?.kind {
                    members.push(gid.clone());
                }
            }
            for id in front_order(txn, &ids) {
                txn.get_mut(&id)?.z = bump(next_z);
            }
            out.created.push(gid);
        }
        Command::Ungroup { id } => {
            if !txn.get(&id)?.is_group() {
                return Err(ModelError::WrongKind { id, expected: "group" });
            }
            dissolve_group(txn, &id)?;
            leave_group(txn, &id, None)?;
            txn.remove(&id)?;
        }
        Command::SetStickyText { id, text: new } => match &mut txn.get_mut(&id)?.kind {
            NodeKind::Sticky { text } => *text = new,
            _ => return Err(ModelError::WrongKind { id, expected: "sticky" }),
        },
        Command::SetArtifactView { id, view: new } => match &mut txn.get_mut(&id)?.kind {
            NodeKind::Artifact { view, .. } => *view = new,
            _ => return Err(ModelError::WrongKind { id, expected: "artifact" }),
        },
        Command::AddTab { node, tab, activate } => {
            check_url(&tab.url)?;
            let (tabs, active_tab) = browser_mut(txn, &node)?;
            if tabs.iter().any(|t| t.id == tab.id) {
                return Err(ModelError::DuplicateTab(TabAddress::new(node, tab.id)));
            }
            if activate {
                active_tab.clone_from(&tab.id);
            }
            tabs.push(tab);
        }
        Command::CloseTab { tab: addr } => {
            let (tabs, active_tab) = browser_mut(txn, &addr.node)?;
            let idx = tabs.iter().position(|t| t.id == addr.tab).ok_or_else(|| ModelError::UnknownTab(addr.clone()))?;
            if tabs.len() == 1 {
                return Err(ModelError::LastTab(addr.node));
            }
            tabs.remove(idx);
            if *active_tab == addr.tab {
                let next = &tabs[idx.min(tabs.len() - 1)];
                active_tab.clone_from(&next.id);
            }
        }
        Command::SetBrowserUrl { tab: addr, url } => {
            check_url(&url)?;
            tab_mut(txn, &addr)?.url = url;
        }
        Command::SetBrowserTitle { tab: addr, title } => {
            tab_mut(txn, &addr)?.title = title;
        }
        Command::ActivateTab { tab: addr } => {
            let (tabs, active_tab) = browser_mut(txn, &addr.node)?;
            if !tabs.iter().any(|t| t.id == addr.tab) {
                return Err(ModelError::UnknownTab(addr));
            }
            *active_tab = addr.tab;
        }
        Command::SetCamera { .. }
        | Command::AddProject { .. }
        | Command::CloseProject { .. }
        | Command::ActivateProject { .. }
        | Command::RenameProject { .. } => {
            // The workspace handles these itself; reaching here is a routing
            // bug, reported rather than silently ignored.
            return Err(ModelError::Misrouted("workspace"));
        }
    }
    Ok(out)
}

/// Returns the current z counter and advances it.
fn bump(next_z: &mut i64) -> i64 {
    let z = *next_z;
    *next_z += 1;
    z
}

/// Checks that `ids` is non-empty and every id exists; drops repeats.
fn existing_unique(txn: &Txn<'_>, ids: Vec<NodeId>, what: &'static str) -> Result<Vec<NodeId>, ModelError> {
    if ids.is_empty() {
        return Err(ModelError::NoNodes(what));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        txn.get(&id)?;
        if seen.insert(id.clone()) {
            out.push(id);
        }
    }
    Ok(out)
}

/// `ids` plus every member of groups among them, recursively, each once.
fn closure(txn: &Txn<'_>, ids: &[NodeId]) -> Vec<NodeId> {
    group_closure(txn.nodes(), ids)
}

/// The closure of `ids` in the order to stack them: roots by current z,
/// each group immediately followed by its members (by z), so frames stay
/// beneath their members.
fn front_order(txn: &Txn<'_>, ids: &[NodeId]) -> Vec<NodeId> {
    let nodes = txn.nodes();
    let by_z = |v: &mut Vec<NodeId>| {
        v.sort_by(|a, b| {
            let za = nodes.get(a).map_or(0, |n| n.z);
            let zb = nodes.get(b).map_or(0, |n| n.z);
            za.cmp(&zb).then_with(|| a.cmp(b))
        })
    };
    let mut roots = ids.to_vec();
    by_z(&mut roots);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut stack: Vec<NodeId> = roots.into_iter().rev().collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(n) = nodes.get(&id) {
            let mut members = n.members().to_vec();
            by_z(&mut members);
            stack.extend(members.into_iter().rev());
        }
        out.push(id);
    }
    out
}

/// The group containing `id`, if any.
fn parent_of(txn: &Txn<'_>, id: &NodeId) -> Option<NodeId> {
    txn.nodes().values().find(|n| n.members().contains(id)).map(|n| n.id.clone())
}

/// Takes `id` out of whatever group holds it (other than `except`).
fn leave_group(txn: &mut Txn<'_>, id: &NodeId, except: Option<&NodeId>) -> Result<(), ModelError> {
    let holders: Vec<NodeId> = txn
        .nodes()
        .values()
        .filter(|n| n.members().contains(id) && Some(&n.id) != except)
        .map(|n| n.id.clone())
        .collect();
    for h in holders {
        if let NodeKind::Group { members } = &mut txn.get_mut(&h)?.kind {
            members.retain(|m| m != id);
        }
    }
    Ok(())
}

/// Hands a group's members to the group's parent (in the group's place)
/// and empties the group, ready for removal.
fn dissolve_group(txn: &mut Txn<'_>, gid: &NodeId) -> Result<(), ModelError> {
    let members = match &mut txn.get_mut(gid)?.kind {
        NodeKind::Group { members } => std::mem::take(members),
        _ => return Ok(()),
    };
    if let Some(parent) = parent_of(txn, gid) {
        if let NodeKind::Group { members: pm } = &mut txn.get_mut(&parent)?.kind {
            let at = pm.iter().position(|m| m == gid).unwrap_or(pm.len());
            pm.splice(at..at, members);
        }
    }
    Ok(())
}

fn browser_mut<'t>(
    txn: &'t mut Txn<'_>,
    id: &NodeId,
) -> Result<(&'t mut Vec<BrowserTab>, &'t mut super::ids::TabId), ModelError> {
    match &mut txn.get_mut(id)?.kind {
        NodeKind::Browser { tabs, active_tab, .. } => Ok((tabs, active_tab)),
        _ => Err(ModelError::WrongKind { id: id.clone(), expected: "browser" }),
    }
}

fn tab_mut<'t>(txn: &'t mut Txn<'_>, addr: &TabAddress) -> Result<&'t mut BrowserTab, ModelError> {
    let (tabs, _) = browser_mut(txn, &addr.node)?;
    tabs.iter_mut().find(|t| t.id == addr.tab).ok_or_else(|| ModelError::UnknownTab(addr.clone()))
}

/// Makes relative paths of a node relative to the project folder.
fn absolutise_paths(kind: &mut NodeKind, folder: &Path) {
    let fix = |p: &mut std::path::PathBuf| {
        if p.is_relative() {
            *p = folder.join(&*p);
        }
    };
    match kind {
        NodeKind::Terminal { cwd, .. } | NodeKind::Agent { cwd, .. } => fix(cwd),
        NodeKind::Artifact { path, .. } => fix(path),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::HistoryEffect;
    use crate::ids::TabId;
    use crate::workspace::{Applied, Workspace};
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn id(s: &str) -> NodeId {
        NodeId::new(s).unwrap()
    }

    fn node(name: &str, kind: NodeKind, rect: Rect) -> Node {
        Node {
            id: id(name),
            kind,
            title: name.to_owned(),
            rect,
            z: 0,
            colour: None,
            links: Default::default(),
            name: None,
        }
    }

    fn sticky(name: &str, x: f64, y: f64) -> Node {
        node(name, NodeKind::Sticky { text: format!("{name} text") }, Rect::new(x, y, 100.0, 80.0))
    }

    fn browser(name: &str) -> Node {
        let tab =
            |t: &str| BrowserTab { id: TabId::new(t).unwrap(), url: format!("https://{t}.test/"), title: t.to_owned() };
        node(
            name,
            NodeKind::Browser {
                tabs: vec![tab("t1"), tab("t2")],
                active_tab: TabId::new("t1").unwrap(),
                context: None,
            },
            Rect::new(500.0, 0.0, 400.0, 300.0),
        )
    }

    fn addr(node: &str, tab: &str) -> TabAddress {
        TabAddress::new(id(node), TabId::new(tab).unwrap())
    }

    /// A workspace with one project at /w holding stickies a, b, c, a
    /// browser, a terminal and an artifact.
    fn workspace() -> Workspace {
        let mut ws = Workspace::new();
        ws.apply(Command::AddProject {
            project: Box::new(Project::new(ProjectId::new("p1").unwrap(), "one", "/w")),
            activate: true,
        })
        .unwrap();
        for n in [
            sticky("a", 0.0, 0.0),
            sticky("b", 200.0, 0.0),
            sticky("c", 0.0, 200.0),
            browser("web"),
            node(
                "term",
                NodeKind::Terminal {
                    cwd: "sub".into(),
                    command: Some(vec!["vim".into()]),
                    tmux_session: Some("s1".into()),
                },
                Rect::new(0.0, 400.0, 300.0, 200.0),
            ),
            node(
                "art",
                NodeKind::Artifact { path: "/w/README.md".into(), view: ArtifactView::Editor, base: None },
                Rect::new(0.0, 700.0, 300.0, 200.0),
            ),
        ] {
            ws.apply(Command::AddNode { node: n }).unwrap();
        }
        ws.end_coalescing();
        ws
    }

    fn nodes(ws: &Workspace) -> BTreeMap<NodeId, Node> {
        ws.active().unwrap().nodes().map(|n| (n.id.clone(), n.clone())).collect()
    }

    fn get(ws: &Workspace, name: &str) -> Node {
        ws.active().unwrap().node(&id(name)).unwrap().clone()
    }

    /// Applies `cmd`, then checks undo restores the nodes exactly and redo
    /// restores the result exactly.
    fn undo_redo(ws: &mut Workspace, cmd: Command) -> Applied {
        let before = nodes(ws);
        let applied = ws.apply(cmd.clone()).unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        assert_eq!(applied.history, HistoryEffect::Recorded, "{cmd:?}");
        assert!(applied.layout_dirty);
        let after = nodes(ws);
        assert_ne!(before, after, "{cmd:?} changed nothing");
        let undone = ws.undo().unwrap().expect("an undo step");
        assert_eq!(nodes(ws), before, "undo of {cmd:?}");
        assert_eq!(undone.created, applied.removed, "undo re-creates what was removed");
        assert_eq!(undone.removed.len(), applied.created.len());
        ws.redo().unwrap().expect("a redo step");
        assert_eq!(nodes(ws), after, "redo of {cmd:?}");
        ws.end_coalescing();
        applied
    }

    #[test]
    fn every_canvas_command_undoes_and_redoes_exactly() {
        let mut ws = workspace();
        let applied = undo_redo(&mut ws, Command::AddNode { node: sticky("new", 9.0, 9.0) });
        assert_eq!(applied.created, vec![id("new")]);
        undo_redo(&mut ws, Command::RemoveNodes { ids: vec![id("new"), id("web")] });
        ws.undo().unwrap(); // the rest of the test needs "web"
        undo_redo(&mut ws, Command::MoveNodes { ids: vec![id("a"), id("b")], dx: 5.0, dy: -7.0 });
        undo_redo(&mut ws, Command::SetRect { id: id("a"), rect: Rect::new(1.0, 2.0, 300.0, 400.0) });
        undo_redo(&mut ws, Command::SetTitle { id: id("a"), title: "renamed".into() });
        undo_redo(&mut ws, Command::SetColour { id: id("a"), colour: Some(Colour::new("teal").unwrap()) });
        undo_redo(&mut ws, Command::RenameNode { id: id("term"), name: Some("  build logs ".into()) });
        undo_redo(&mut ws, Command::BringToFront { ids: vec![id("a")] });
        undo_redo(&mut ws, Command::Duplicate { ids: vec![id("a"), id("term")] });
        let grouped = undo_redo(&mut ws, Command::GroupNodes { ids: vec![id("a"), id("b")], title: None });
        undo_redo(&mut ws, Command::Ungroup { id: grouped.created[0].clone() });
        undo_redo(&mut ws, Command::SetStickyText { id: id("c"), text: "new text".into() });
        undo_redo(&mut ws, Command::SetArtifactView { id: id("art"), view: ArtifactView::Diff });
        let t3 = BrowserTab { id: TabId::new("t3").unwrap(), url: "about:blank".into(), title: String::new() };
        undo_redo(&mut ws, Command::AddTab { node: id("web"), tab: t3, activate: true });
        undo_redo(&mut ws, Command::CloseTab { tab: addr("web", "t1") });
    }

    #[test]
    fn a_new_command_clears_redo_and_undo_walks_back_to_the_start() {
        let mut ws = workspace();
        let start = nodes(&ws);
        ws.apply(Command::SetTitle { id: id("a"), title: "x".into() }).unwrap();
        ws.apply(Command::MoveNodes { ids: vec![id("b")], dx: 1.0, dy: 1.0 }).unwrap();
        ws.undo().unwrap();
        let pid = ws.active_id().unwrap().clone();
        assert!(ws.history(&pid).unwrap().can_redo());
        ws.apply(Command::SetColour { id: id("c"), colour: Some(Colour::new("#fff").unwrap()) }).unwrap();
        assert!(!ws.history(&pid).unwrap().can_redo());
        while ws.undo().unwrap().is_some() {}
        // The six AddNode steps of the fixture are undone too.
        assert!(nodes(&ws).is_empty());
        while ws.redo().unwrap().is_some() {}
        assert_ne!(nodes(&ws), start);
        assert_eq!(get(&ws, "c").colour.unwrap().as_str(), "#fff");
        assert_eq!(get(&ws, "a").title, "x");
    }

    #[test]
    fn no_op_commands_leave_no_undo_step() {
        let mut ws = workspace();
        let pid = ws.active_id().unwrap().clone();
        let steps = ws.history(&pid).unwrap().undo_len();
        let a = ws.apply(Command::MoveNodes { ids: vec![id("a")], dx: 0.0, dy: 0.0 }).unwrap();
        assert_eq!(a.history, HistoryEffect::None);
        assert!(!a.layout_dirty);
        ws.apply(Command::SetTitle { id: id("a"), title: "a".into() }).unwrap();
        assert_eq!(ws.history(&pid).unwrap().undo_len(), steps);
    }

    #[test]
    fn drag_moves_coalesce_into_one_step_per_gesture() {
        let mut ws = workspace();
        let start = get(&ws, "a").rect;
        let drag = |ws: &mut Workspace| {
            for _ in 0..10 {
                ws.apply(Command::MoveNodes { ids: vec![id("a")], dx: 1.0, dy: 2.0 }).unwrap();
            }
            ws.end_coalescing();
        };
        drag(&mut ws);
        drag(&mut ws);
        assert_eq!(get(&ws, "a").rect, start.translated(20.0, 40.0));
        ws.undo().unwrap();
        assert_eq!(get(&ws, "a").rect, start.translated(10.0, 20.0));
        ws.undo().unwrap();
        assert_eq!(get(&ws, "a").rect, start);
        // Moving a different set of nodes starts a new step even mid-gesture.
        ws.apply(Command::MoveNodes { ids: vec![id("a")], dx: 1.0, dy: 0.0 }).unwrap();
        let b = ws.apply(Command::MoveNodes { ids: vec![id("a"), id("b")], dx: 1.0, dy: 0.0 }).unwrap();
        assert_eq!(b.history, HistoryEffect::Recorded);
        let c = ws.apply(Command::MoveNodes { ids: vec![id("b"), id("a")], dx: 1.0, dy: 0.0 }).unwrap();
        assert_eq!(c.history, HistoryEffect::Coalesced, "same set in another order");
    }

    #[test]
    fn refused_commands_change_nothing() {
        let mut ws = workspace();
        let start = nodes(&ws);
        let pid = ws.active_id().unwrap().clone();
        let steps = ws.history(&pid).unwrap().undo_len();
        let z = ws.active().unwrap().next_z();
        type Expect = fn(&ModelError) -> bool;
        let cases: Vec<(Command, Expect)> = vec![
            (Command::MoveNodes { ids: vec![id("a"), id("ghost")], dx: 1.0, dy: 1.0 }, |e| {
                matches!(e, ModelError::UnknownNode(_))
            }),
            (Command::MoveNodes { ids: vec![id("a")], dx: f64::NAN, dy: 1.0 }, |e| {
                matches!(e, ModelError::NotFinite(_))
            }),
            (Command::MoveNodes { ids: vec![], dx: 1.0, dy: 1.0 }, |e| matches!(e, ModelError::NoNodes(_))),
            (Command::SetRect { id: id("a"), rect: Rect::new(0.0, f64::INFINITY, 1.0, 1.0) }, |e| {
                matches!(e, ModelError::NotFinite(_))
            }),
            (Command::SetStickyText { id: id("term"), text: "x".into() }, |e| {
                matches!(e, ModelError::WrongKind { .. })
            }),
            (Command::SetArtifactView { id: id("a"), view: ArtifactView::Diff }, |e| {
                matches!(e, ModelError::WrongKind { .. })
            }),
            (Command::Ungroup { id: id("a") }, |e| matches!(e, ModelError::WrongKind { .. })),
            (Command::AddNode { node: sticky("a", 0.0, 0.0) }, |e| matches!(e, ModelError::DuplicateNode(_))),
            (
                Command::AddNode {
                    node: node(
                        "g",
                        NodeKind::Group { members: vec![id("a"), id("ghost")] },
                        Rect::new(0.0, 0.0, 1.0, 1.0),
                    ),
                },
                |e| matches!(e, ModelError::UnknownNode(_)),
            ),
            (Command::BringToFront { ids: vec![id("ghost")] }, |e| matches!(e, ModelError::UnknownNode(_))),
            (Command::Duplicate { ids: vec![id("a"), id("ghost")] }, |e| matches!(e, ModelError::UnknownNode(_))),
            (Command::GroupNodes { ids: vec![id("a"), id("ghost")], title: None }, |e| {
                matches!(e, ModelError::UnknownNode(_))
            }),
            (Command::CloseTab { tab: addr("web", "nope") }, |e| matches!(e, ModelError::UnknownTab(_))),
            (Command::CloseTab { tab: addr("a", "t1") }, |e| matches!(e, ModelError::WrongKind { .. })),
            (Command::SetBrowserUrl { tab: addr("web", "t1"), url: "no scheme".into() }, |e| {
                matches!(e, ModelError::InvalidUrl { .. })
            }),
            (
                Command::AddTab {
                    node: id("web"),
                    tab: BrowserTab { id: TabId::new("t1").unwrap(), url: "about:blank".into(), title: String::new() },
                    activate: false,
                },
                |e| matches!(e, ModelError::DuplicateTab(_)),
            ),
            (Command::ActivateTab { tab: addr("web", "t9") }, |e| matches!(e, ModelError::UnknownTab(_))),
            (Command::SetCamera { camera: Camera { x: 0.0, y: 0.0, zoom: -1.0 } }, |e| {
                matches!(e, ModelError::NotFinite(_))
            }),
        ];
        for (cmd, expected) in cases {
            let err = ws.apply(cmd.clone()).expect_err(&format!("{cmd:?} should be refused"));
            assert!(expected(&err), "{cmd:?} gave {err:?}");
            assert!(!err.to_string().is_empty());
            assert_eq!(nodes(&ws), start, "{cmd:?} changed nodes");
            assert_eq!(ws.active().unwrap().next_z(), z, "{cmd:?} changed next_z");
            assert_eq!(ws.history(&pid).unwrap().undo_len(), steps, "{cmd:?} touched history");
        }
        // The last tab cannot be closed.
        ws.apply(Command::CloseTab { tab: addr("web", "t1") }).unwrap();
        assert!(matches!(ws.apply(Command::CloseTab { tab: addr("web", "t2") }), Err(ModelError::LastTab(_))));
    }

    #[test]
    fn add_node_clamps_size_absolutises_paths_and_stacks_on_top() {
        let ws = workspace();
        let term = get(&ws, "term");
        assert!(matches!(&term.kind, NodeKind::Terminal { cwd, .. } if cwd == &PathBuf::from("/w/sub")));
        let mut ws = ws;
        ws.apply(Command::AddNode {
            node: node("tiny", NodeKind::Sticky { text: String::new() }, Rect::new(3.0, 4.0, 1.0, 1.0)),
        })
        .unwrap();
        let tiny = get(&ws, "tiny");
        assert_eq!(tiny.rect, Rect::new(3.0, 4.0, 80.0, 60.0));
        assert!(ws.active().unwrap().nodes().all(|n| n.id == tiny.id || n.z < tiny.z));
        ws.apply(Command::SetRect { id: id("tiny"), rect: Rect::new(0.0, 0.0, 10.0, 500.0) }).unwrap();
        assert_eq!(get(&ws, "tiny").rect, Rect::new(0.0, 0.0, 80.0, 500.0));
    }

    #[test]
    fn grouping_frames_members_and_moving_the_group_moves_them() {
        let mut ws = workspace();
        let g =
            ws.apply(Command::GroupNodes { ids: vec![id("a"), id("b")], title: Some("pair".into()) }).unwrap().created
                [0]
            .clone();
        let group = ws.active().unwrap().node(&g).unwrap().clone();
        assert_eq!(group.title, "pair");
        assert_eq!(group.members(), &[id("a"), id("b")]);
        // a: (0,0,100,80), b: (200,0,100,80) → bbox (0,0,300,80), plus padding and header.
        assert_eq!(
            group.rect,
            Rect::new(
                -GROUP_PADDING,
                -GROUP_PADDING - GROUP_HEADER,
                300.0 + 2.0 * GROUP_PADDING,
                80.0 + 2.0 * GROUP_PADDING + GROUP_HEADER
            )
        );
        assert!(get(&ws, "a").z > group.z && get(&ws, "b").z > group.z, "frame beneath its members");

        // Nest: group the group with c; moving the outer group moves everything.
        let outer =
            ws.apply(Command::GroupNodes { ids: vec![g.clone(), id("c")], title: None }).unwrap().created[0].clone();
        assert_eq!(ws.active().unwrap().node(&outer).unwrap().title, DEFAULT_GROUP_TITLE);
        let before = nodes(&ws);
        let moved = ws.apply(Command::MoveNodes { ids: vec![outer.clone()], dx: 10.0, dy: 20.0 }).unwrap();
        assert_eq!(moved.changed.len(), 5);
        for n in [outer.clone(), g.clone(), id("a"), id("b"), id("c")] {
            assert_eq!(ws.active().unwrap().node(&n).unwrap().rect, before[&n].rect.translated(10.0, 20.0), "{n}");
        }
        assert_eq!(get(&ws, "term").rect, before[&id("term")].rect);
        // Moving a member alone leaves the group where it is.
        ws.apply(Command::MoveNodes { ids: vec![id("a")], dx: 1.0, dy: 0.0 }).unwrap();
        assert_eq!(ws.active().unwrap().node(&g).unwrap().rect, before[&g].rect.translated(10.0, 20.0));

        // Ungrouping the inner group hands a and b to the outer group.
        ws.apply(Command::Ungroup { id: g.clone() }).unwrap();
        assert!(!ws.active().unwrap().contains(&g));
        assert_eq!(ws.active().unwrap().node(&outer).unwrap().members(), &[id("a"), id("b"), id("c")]);
        // Removing the outer frame releases its members, which stay put.
        let rects: Vec<Rect> = ["a", "b", "c"].iter().map(|n| get(&ws, n).rect).collect();
        ws.apply(Command::RemoveNodes { ids: vec![outer.clone()] }).unwrap();
        assert_eq!(["a", "b", "c"].iter().map(|n| get(&ws, n).rect).collect::<Vec<_>>(), rects);
        assert!(ws.active().unwrap().group_ids().is_empty());
    }

    #[test]
    fn grouping_members_of_one_group_nests_inside_it_and_removal_updates_membership() {
        let mut ws = workspace();
        let g = ws.apply(Command::GroupNodes { ids: vec![id("a"), id("b"), id("c")], title: None }).unwrap().created[0]
            .clone();
        let inner =
            ws.apply(Command::GroupNodes { ids: vec![id("a"), id("b")], title: None }).unwrap().created[0].clone();
        assert_eq!(ws.active().unwrap().node(&g).unwrap().members(), &[id("c"), inner.clone()]);
        assert_eq!(ws.active().unwrap().group_of(&id("a")), Some(&inner));
        ws.apply(Command::RemoveNodes { ids: vec![id("a")] }).unwrap();
        assert_eq!(ws.active().unwrap().node(&inner).unwrap().members(), &[id("b")]);
        // Adding a group node takes its members out of their old group.
        ws.apply(Command::AddNode {
            node: node("g2", NodeKind::Group { members: vec![id("b"), id("b")] }, Rect::new(0.0, 0.0, 500.0, 500.0)),
        })
        .unwrap();
        assert_eq!(get(&ws, "g2").members(), &[id("b")]);
        assert!(ws.active().unwrap().node(&inner).unwrap().members().is_empty());
        assert!(get(&ws, "b").z > get(&ws, "g2").z);
    }

    #[test]
    fn links_go_both_ways_undo_and_follow_removal() {
        let mut ws = workspace();
        let linked = |ws: &Workspace, a: &str, b: &str| {
            let p = ws.active().unwrap();
            let ab = p.node(&id(a)).unwrap().links.contains(&id(b));
            assert_eq!(ab, p.node(&id(b)).unwrap().links.contains(&id(a)), "links are symmetric");
            ab
        };
        undo_redo(&mut ws, Command::LinkNodes { a: id("a"), b: id("b") });
        assert!(linked(&ws, "a", "b"));
        // Linking again changes nothing; the reverse direction is the same link.
        ws.apply(Command::LinkNodes { a: id("b"), b: id("a") }).unwrap();
        assert_eq!(ws.active().unwrap().node(&id("a")).unwrap().links.len(), 1);
        assert!(matches!(ws.apply(Command::LinkNodes { a: id("a"), b: id("a") }), Err(ModelError::SelfLink(_))));
        assert!(matches!(ws.apply(Command::LinkNodes { a: id("a"), b: id("ghost") }), Err(ModelError::UnknownNode(_))));
        undo_redo(&mut ws, Command::UnlinkNodes { a: id("b"), b: id("a") });
        ws.undo().unwrap();
        assert!(linked(&ws, "a", "b"));
        // Removing a node removes its links; undoing the removal brings them back.
        ws.apply(Command::RemoveNodes { ids: vec![id("b")] }).unwrap();
        assert!(ws.active().unwrap().node(&id("a")).unwrap().links.is_empty());
        ws.undo().unwrap();
        assert!(linked(&ws, "a", "b"));
        // A copy starts unlinked; an added node cannot bring links of its own.
        let applied = ws.apply(Command::Duplicate { ids: vec![id("a")] }).unwrap();
        let copy = applied.created[0].clone();
        assert!(ws.active().unwrap().node(&copy).unwrap().links.is_empty());
        let mut n = sticky("fresh", 0.0, 0.0);
        n.links.insert(id("a"));
        ws.apply(Command::AddNode { node: n }).unwrap();
        assert!(ws.active().unwrap().node(&id("fresh")).unwrap().links.is_empty());
        assert!(!linked(&ws, "a", "fresh"));
    }

    #[test]
    fn a_rename_is_cleaned_undoable_and_a_blank_one_clears_it() {
        let mut ws = workspace();
        ws.apply(Command::RenameNode { id: id("term"), name: Some(" logs\n".into()) }).unwrap();
        assert_eq!(get(&ws, "term").name.as_deref(), Some("logs"));
        assert_eq!(get(&ws, "term").title, "term", "the creator's title stays underneath");
        ws.apply(Command::RenameNode { id: id("term"), name: Some("   ".into()) }).unwrap();
        assert_eq!(get(&ws, "term").name, None);
        ws.undo().unwrap();
        assert_eq!(get(&ws, "term").name.as_deref(), Some("logs"));
        ws.undo().unwrap();
        assert_eq!(get(&ws, "term").name, None);
        assert!(ws.apply(Command::RenameNode { id: id("ghost"), name: None }).is_err());
        let json = serde_json::to_string(&get(&ws, "a")).unwrap();
        assert!(!json.contains("\"name\""), "no name, no key: {json}");
    }

    #[test]
    fn a_duplicate_goes_beside_its_original_not_on_it() {
        let mut ws = workspace();
        let applied = ws.apply(Command::Duplicate { ids: vec![id("c")] }).unwrap();
        let p = ws.active().unwrap();
        let copy = p.node(&applied.created[0]).unwrap();
        for n in p.nodes().filter(|n| n.id != copy.id) {
            let (r, q) = (copy.rect, n.rect);
            assert!(
                !(r.x < q.right() && q.x < r.right() && r.y < q.bottom() && q.y < r.bottom()),
                "the copy {r:?} covers {} {q:?}",
                n.id
            );
        }
    }

    #[test]
    fn duplicate_copies_with_new_ids_offset_and_remapped_groups() {
        let mut ws = workspace();
        let g =
            ws.apply(Command::GroupNodes { ids: vec![id("a"), id("term")], title: None }).unwrap().created[0].clone();
        let top_before = ws.active().unwrap().next_z();
        let applied = ws.apply(Command::Duplicate { ids: vec![g.clone()] }).unwrap();
        assert_eq!(applied.created.len(), 3);
        assert_eq!(applied.copies.len(), 3);
        let p = ws.active().unwrap();
        let (first_o, first_c) = (p.node(&applied.copies[0].0).unwrap(), p.node(&applied.copies[0].1).unwrap());
        let (dx, dy) = (first_c.rect.x - first_o.rect.x, first_c.rect.y - first_o.rect.y);
        for (orig, copy) in &applied.copies {
            assert_ne!(orig, copy);
            let (o, c) = (p.node(orig).unwrap(), p.node(copy).unwrap());
            assert_eq!(c.rect, o.rect.translated(dx, dy), "the copies keep their layout");
            let overlaps =
                |r: &Rect, q: &Rect| r.x < q.right() && q.x < r.right() && r.y < q.bottom() && q.y < r.bottom();
            assert!(
                !applied.copies.iter().any(|(o2, _)| overlaps(&c.rect, &p.node(o2).unwrap().rect)),
                "a copy lands on the originals"
            );
            assert_eq!(c.title, o.title);
            assert!(c.z >= top_before);
        }
        let copy_of = |n: &NodeId| applied.copies.iter().find(|(o, _)| o == n).unwrap().1.clone();
        let gc = p.node(&copy_of(&g)).unwrap();
        assert_eq!(gc.members(), &[copy_of(&id("a")), copy_of(&id("term"))]);
        assert!(matches!(
            &p.node(&copy_of(&id("term"))).unwrap().kind,
            NodeKind::Terminal { tmux_session: None, command: Some(_), .. }
        ));
        assert!(gc.z < p.node(&copy_of(&id("a"))).unwrap().z);
        // The originals are untouched and still grouped.
        assert_eq!(p.node(&g).unwrap().members(), &[id("a"), id("term")]);
        // Duplicating a member alone gives a free-standing copy.
        let lone = ws.apply(Command::Duplicate { ids: vec![id("a")] }).unwrap();
        assert_eq!(ws.active().unwrap().group_of(&lone.created[0]), None);
    }

    #[test]
    fn bring_to_front_keeps_relative_order_and_frames_below_members() {
        let mut ws = workspace();
        let g = ws.apply(Command::GroupNodes { ids: vec![id("a"), id("b")], title: None }).unwrap().created[0].clone();
        ws.apply(Command::BringToFront { ids: vec![id("c")] }).unwrap();
        ws.apply(Command::BringToFront { ids: vec![id("b"), g.clone()] }).unwrap();
        let order: Vec<String> = ws.active().unwrap().nodes_by_z().iter().map(|n| n.id.to_string()).collect();
        let pos = |s: &str| order.iter().position(|o| o == s).unwrap();
        assert!(pos("c") < pos(g.as_str()));
        assert!(pos(g.as_str()) < pos("a") && pos(g.as_str()) < pos("b"));
        assert_eq!(order.last().map(String::as_str), Some("b"), "b was above a before");
    }

    #[test]
    fn live_browser_commands_are_not_undo_steps_and_survive_undo() {
        let mut ws = workspace();
        let pid = ws.active_id().unwrap().clone();
        ws.apply(Command::SetTitle { id: id("web"), title: "docs".into() }).unwrap();
        let steps = ws.history(&pid).unwrap().undo_len();
        let a =
            ws.apply(Command::SetBrowserUrl { tab: addr("web", "t1"), url: "https://moved.test/x".into() }).unwrap();
        assert_eq!(a.history, HistoryEffect::None);
        assert!(a.layout_dirty);
        ws.apply(Command::SetBrowserTitle { tab: addr("web", "t1"), title: "Moved".into() }).unwrap();
        ws.apply(Command::ActivateTab { tab: addr("web", "t2") }).unwrap();
        assert_eq!(ws.history(&pid).unwrap().undo_len(), steps);
        ws.undo().unwrap();
        let web = get(&ws, "web");
        assert_eq!(web.title, "web");
        let t1 = web.tab(&TabId::new("t1").unwrap()).unwrap();
        assert_eq!((t1.url.as_str(), t1.title.as_str()), ("https://moved.test/x", "Moved"));
        assert!(matches!(&web.kind, NodeKind::Browser { active_tab, .. } if active_tab.as_str() == "t2"));
        // Closing the tab on show shows its neighbour.
        ws.apply(Command::CloseTab { tab: addr("web", "t2") }).unwrap();
        assert!(matches!(&get(&ws, "web").kind, NodeKind::Browser { active_tab, .. } if active_tab.as_str() == "t1"));
    }

    #[test]
    fn camera_is_view_state() {
        let mut ws = workspace();
        let a = ws.apply(Command::SetCamera { camera: Camera { x: 5.0, y: 6.0, zoom: 100.0 } }).unwrap();
        assert!(a.workspace_dirty && !a.layout_dirty);
        assert_eq!(a.history, HistoryEffect::None);
        assert_eq!(ws.active().unwrap().camera(), Camera { x: 5.0, y: 6.0, zoom: crate::geometry::MAX_ZOOM });
        let b = ws.apply(Command::SetCamera { camera: ws.active().unwrap().camera() }).unwrap();
        assert!(!b.workspace_dirty);
    }

    #[test]
    fn move_to_computes_the_offset() {
        let mut ws = workspace();
        let cmd = Command::move_to(ws.active().unwrap(), &id("b"), 1000.0, -5.0).unwrap();
        ws.apply(cmd).unwrap();
        assert_eq!(get(&ws, "b").rect, Rect::new(1000.0, -5.0, 100.0, 80.0));
        assert!(Command::move_to(ws.active().unwrap(), &id("ghost"), 0.0, 0.0).is_err());
        assert!(Command::move_to(ws.active().unwrap(), &id("b"), f64::NAN, 0.0).is_err());
    }

    #[test]
    fn projects_open_close_activate_and_keep_separate_histories() {
        let mut ws = workspace();
        assert!(matches!(
            Workspace::new().apply(Command::SetTitle { id: id("a"), title: String::new() }),
            Err(ModelError::NoActiveProject)
        ));
        let p1 = ProjectId::new("p1").unwrap();
        let p2 = ProjectId::new("p2").unwrap();
        let p3 = ProjectId::new("p3").unwrap();
        assert!(matches!(
            ws.apply(Command::AddProject {
                project: Box::new(Project::new(p1.clone(), "dup", "/elsewhere")),
                activate: false
            }),
            Err(ModelError::DuplicateProject(_))
        ));
        assert!(matches!(
            ws.apply(Command::AddProject {
                project: Box::new(Project::new(p2.clone(), "same folder", "/w")),
                activate: false
            }),
            Err(ModelError::DuplicateFolder(_))
        ));
        let a = ws
            .apply(Command::AddProject { project: Box::new(Project::new(p2.clone(), "two", "/two")), activate: false })
            .unwrap();
        assert!(a.workspace_dirty);
        assert_eq!(ws.active_id(), Some(&p1));
        ws.apply(Command::AddProject {
            project: Box::new(Project::new(p3.clone(), "three", "/three")),
            activate: true,
        })
        .unwrap();
        assert_eq!(ws.active_id(), Some(&p3));
        ws.apply_in(&p2, Command::AddNode { node: sticky("x", 0.0, 0.0) }).unwrap();
        assert!(ws.project(&p2).unwrap().contains(&id("x")));
        assert!(ws.undo().unwrap().is_none(), "p3 has nothing to undo");
        assert!(ws.undo_in(&p2).unwrap().is_some());
        assert!(ws.project(&p2).unwrap().is_empty());
        ws.apply(Command::RenameProject { id: p2.clone(), name: "deux".into() }).unwrap();
        assert_eq!(ws.project(&p2).unwrap().name(), "deux");
        ws.apply(Command::ActivateProject { id: p2.clone() }).unwrap();
        ws.apply(Command::CloseProject { id: p2.clone() }).unwrap();
        assert_eq!(ws.active_id(), Some(&p3), "the neighbour takes over");
        assert!(ws.history(&p2).is_none());
        assert!(matches!(ws.apply(Command::ActivateProject { id: p2.clone() }), Err(ModelError::UnknownProject(_))));
        ws.apply(Command::CloseProject { id: p3 }).unwrap();
        ws.apply(Command::CloseProject { id: p1 }).unwrap();
        assert!(ws.active_id().is_none());
        assert!(ws.projects().is_empty());
    }
}
