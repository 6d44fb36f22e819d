//! A project: one folder, one canvas of nodes, one camera.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::error::ModelError;
use super::geometry::{Camera, Rect};
use super::ids::{NodeId, ProjectId};
use super::node::{group_closure, Node};

/// One open project: its folder and its canvas.
///
/// Nodes change only through [`super::Command`]s applied by the
/// [`super::Workspace`], so every change is validated and undoable.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub(super) id: ProjectId,
    pub(super) name: String,
    pub(super) folder: PathBuf,
    pub(super) nodes: BTreeMap<NodeId, Node>,
    pub(super) camera: Camera,
    pub(super) next_z: i64,
}

impl Project {
    /// An empty project for `folder` (an absolute path).
    pub fn new(id: ProjectId, name: impl Into<String>, folder: impl Into<PathBuf>) -> Self {
        Self {
            id,
            name: name.into(),
            folder: folder.into(),
            nodes: BTreeMap::new(),
            camera: Camera::default(),
            next_z: 0,
        }
    }

    /// A project holding `nodes` (as loaded from disk). Fails on duplicate
    /// ids or an invalid node. Group members that are missing, the group
    /// itself, or already claimed by an earlier group are dropped from the
    /// member list, with the reasons returned, because a hand-merged layout
    /// file should still open.
    pub fn from_nodes(
        id: ProjectId,
        name: impl Into<String>,
        folder: impl Into<PathBuf>,
        camera: Camera,
        nodes: Vec<Node>,
        next_z: i64,
    ) -> Result<(Self, Vec<String>), ModelError> {
        let mut project = Self::new(id, name, folder);
        project.camera = camera.checked()?;
        for node in nodes {
            node.validate()?;
            if project.nodes.contains_key(&node.id) {
                return Err(ModelError::DuplicateNode(node.id));
            }
            project.nodes.insert(node.id.clone(), node);
        }
        let mut repairs = Vec::new();
        let mut claimed = BTreeSet::new();
        let known: BTreeSet<NodeId> = project.nodes.keys().cloned().collect();
        for node in project.nodes.values_mut() {
            let own = node.id.clone();
            if let super::node::NodeKind::Group { members } = &mut node.kind {
                members.retain(|m| {
                    let keep = m != &own && known.contains(m) && !claimed.contains(m);
                    if keep {
                        claimed.insert(m.clone());
                    } else {
                        repairs.push(format!("group {own}: dropped member {m} (missing, itself, or in another group)"));
                    }
                    keep
                });
            }
        }
        // Groups containing each other in a cycle would make moving one loop
        // forever; break any cycle by emptying the group found on it.
        for gid in project.group_ids() {
            if project.reaches_itself(&gid) {
                if let Some(super::node::NodeKind::Group { members }) = project.nodes.get_mut(&gid).map(|n| &mut n.kind)
                {
                    members.clear();
                }
                repairs.push(format!("group {gid}: emptied (it contained itself through other groups)"));
            }
        }
        // Links must name other nodes of this canvas and go both ways.
        let mut wanted: BTreeSet<(NodeId, NodeId)> = BTreeSet::new();
        for node in project.nodes.values_mut() {
            let own = node.id.clone();
            node.links.retain(|peer| {
                let keep = peer != &own && known.contains(peer);
                if !keep {
                    repairs.push(format!("node {own}: dropped link to {peer} (missing or itself)"));
                }
                keep
            });
            wanted.extend(node.links.iter().map(|peer| (peer.clone(), own.clone())));
        }
        for (node, peer) in wanted {
            if let Some(n) = project.nodes.get_mut(&node) {
                if n.links.insert(peer.clone()) {
                    repairs.push(format!("node {node}: added the missing other half of its link with {peer}"));
                }
            }
        }
        let top = project.nodes.values().map(|n| n.z).max().map_or(0, |z| z + 1);
        project.next_z = next_z.max(top);
        Ok((project, repairs))
    }

    /// Its id.
    pub fn id(&self) -> &ProjectId {
        &self.id
    }

    /// Its display name (the tab label).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its folder (absolute).
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The current view onto its canvas.
    pub fn camera(&self) -> Camera {
        self.camera
    }

    /// The z the next node brought to the front gets.
    pub fn next_z(&self) -> i64 {
        self.next_z
    }

    /// The node with this id.
    pub fn node(&self, id: &NodeId) -> Option<&Node> {
        self.nodes.get(id)
    }

    /// Whether a node with this id exists.
    pub fn contains(&self, id: &NodeId) -> bool {
        self.nodes.contains_key(id)
    }

    /// All nodes, ordered by id.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the canvas is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// All nodes in drawing order: ascending z, ties by id.
    pub fn nodes_by_z(&self) -> Vec<&Node> {
        let mut v: Vec<&Node> = self.nodes.values().collect();
        v.sort_by(|a, b| a.z.cmp(&b.z).then_with(|| a.id.cmp(&b.id)));
        v
    }

    /// The group this node belongs to, if any.
    pub fn group_of(&self, id: &NodeId) -> Option<&NodeId> {
        self.nodes.values().find(|n| n.members().contains(id)).map(|n| &n.id)
    }

    /// Ids of all group nodes, by id.
    pub fn group_ids(&self) -> Vec<NodeId> {
        self.nodes.values().filter(|n| n.is_group()).map(|n| n.id.clone()).collect()
    }

    /// `ids` plus, for each group among them, its members (recursively),
    /// each once, in first-seen order; ids not on the canvas are kept so
    /// callers can report them.
    pub fn closure(&self, ids: &[NodeId]) -> Vec<NodeId> {
        group_closure(&self.nodes, ids)
    }

    /// Whether group `id` contains itself through nested groups.
    fn reaches_itself(&self, id: &NodeId) -> bool {
        let Some(start) = self.nodes.get(id) else { return false };
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&NodeId> = start.members().iter().collect();
        while let Some(m) = stack.pop() {
            if m == id {
                return true;
            }
            if seen.insert(m) {
                if let Some(n) = self.nodes.get(m) {
                    stack.extend(n.members().iter());
                }
            }
        }
        false
    }

    /// The bounding box of all nodes (for "zoom to fit").
    pub fn bounds(&self) -> Option<Rect> {
        self.nodes.values().map(|n| n.rect).reduce(|a, b| a.union(&b))
    }

    /// A generated node id that no node on this canvas has.
    pub fn fresh_node_id(&self) -> NodeId {
        loop {
            let id = NodeId::generate();
            if !self.nodes.contains_key(&id) {
                return id;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NodeKind;

    fn node(id: &str, kind: NodeKind, z: i64) -> Node {
        Node {
            id: NodeId::new(id).unwrap(),
            kind,
            title: id.into(),
            rect: Rect::new(0.0, 0.0, 100.0, 80.0),
            z,
            colour: None,
            name: None,
            links: Default::default(),
        }
    }

    fn ids(v: &[&str]) -> Vec<NodeId> {
        v.iter().map(|s| NodeId::new(*s).unwrap()).collect()
    }

    #[test]
    fn from_nodes_repairs_group_membership_and_rejects_duplicates() {
        let nodes = vec![
            node("a", NodeKind::Sticky { text: String::new() }, 3),
            node("g1", NodeKind::Group { members: ids(&["a", "ghost"]) }, 1),
            node("g2", NodeKind::Group { members: ids(&["a"]) }, 2),
        ];
        let (p, repairs) =
            Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", Camera::default(), nodes, 0).unwrap();
        assert_eq!(repairs.len(), 2, "{repairs:?}");
        assert_eq!(p.node(&ids(&["g1"])[0]).unwrap().members(), ids(&["a"]).as_slice());
        assert!(p.node(&ids(&["g2"])[0]).unwrap().members().is_empty());
        assert_eq!(p.next_z(), 4);
        assert_eq!(p.group_of(&ids(&["a"])[0]), Some(&ids(&["g1"])[0]));

        let dup = vec![
            node("a", NodeKind::Sticky { text: String::new() }, 0),
            node("a", NodeKind::Sticky { text: String::new() }, 1),
        ];
        assert!(matches!(
            Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", Camera::default(), dup, 0),
            Err(ModelError::DuplicateNode(_))
        ));
    }

    #[test]
    fn from_nodes_repairs_links_to_missing_nodes_and_one_way_links() {
        let mut a = node("a", NodeKind::Sticky { text: String::new() }, 0);
        a.links = ids(&["b", "ghost", "a"]).into_iter().collect();
        let b = node("b", NodeKind::Sticky { text: String::new() }, 1);
        let (p, repairs) =
            Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", Camera::default(), vec![a, b], 0).unwrap();
        assert_eq!(repairs.len(), 3, "{repairs:?}");
        let links = |id: &str| p.node(&ids(&[id])[0]).unwrap().links.iter().cloned().collect::<Vec<_>>();
        assert_eq!((links("a"), links("b")), (ids(&["b"]), ids(&["a"])));
    }

    #[test]
    fn from_nodes_breaks_group_cycles() {
        let nodes = vec![
            node("g1", NodeKind::Group { members: ids(&["g2"]) }, 0),
            node("g2", NodeKind::Group { members: ids(&["g1"]) }, 1),
        ];
        let (p, repairs) =
            Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", Camera::default(), nodes, 0).unwrap();
        assert!(!repairs.is_empty());
        let total: usize = p.nodes().map(|n| n.members().len()).sum();
        assert!(total < 2, "cycle must be broken");
        assert!(p.group_ids().iter().all(|g| !p.reaches_itself(g)));
    }

    #[test]
    fn closure_expands_nested_groups_once_in_order() {
        let nodes = vec![
            node("a", NodeKind::Sticky { text: String::new() }, 0),
            node("b", NodeKind::Sticky { text: String::new() }, 1),
            node("inner", NodeKind::Group { members: ids(&["b"]) }, 2),
            node("outer", NodeKind::Group { members: ids(&["a", "inner"]) }, 3),
        ];
        let (p, _) = Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", Camera::default(), nodes, 0).unwrap();
        assert_eq!(p.closure(&ids(&["outer", "b"])), ids(&["outer", "a", "inner", "b"]));
        assert_eq!(p.nodes_by_z().iter().map(|n| n.id.as_str()).collect::<Vec<_>>(), ["a", "b", "inner", "outer"]);
        assert_eq!(p.bounds(), Some(Rect::new(0.0, 0.0, 100.0, 80.0)));
    }
}
