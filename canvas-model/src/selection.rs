//! The selection: which nodes are selected. It lives outside the undo
//! history (selecting is not an edit) and outside the saved layout.

use std::collections::BTreeSet;

use super::geometry::Rect;
use super::ids::NodeId;
use super::project::Project;

/// A set of selected node ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    ids: BTreeSet<NodeId>,
}

impl Selection {
    /// Nothing selected.
    pub fn new() -> Self {
        Self::default()
    }

    /// The selected ids, ordered by id.
    pub fn ids(&self) -> impl Iterator<Item = &NodeId> {
        self.ids.iter()
    }

    /// The selected ids as a vector (for commands).
    pub fn to_vec(&self) -> Vec<NodeId> {
        self.ids.iter().cloned().collect()
    }

    /// Whether a node is selected.
    pub fn contains(&self, id: &NodeId) -> bool {
        self.ids.contains(id)
    }

    /// Number of selected nodes.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Deselects everything.
    pub fn clear(&mut self) {
        self.ids.clear();
    }

    /// A plain click: exactly this node is selected.
    pub fn click(&mut self, id: NodeId) {
        self.ids.clear();
        self.ids.insert(id);
    }

    /// A shift-click: toggles this node, keeping the rest.
    pub fn shift_click(&mut self, id: NodeId) {
        if !self.ids.remove(&id) {
            self.ids.insert(id);
        }
    }

    /// Selects every node of the project.
    pub fn select_all(&mut self, project: &Project) {
        self.ids = project.nodes().map(|n| n.id.clone()).collect();
    }

    /// Box select: nodes touching `world_rect` are selected, except group
    /// frames, which must lie entirely inside it (a box drawn within a
    /// group's frame selects the nodes in it, not the whole group).
    /// `additive` (shift held) keeps the current selection.
    pub fn select_in_rect(&mut self, project: &Project, world_rect: Rect, additive: bool) {
        if !additive {
            self.ids.clear();
        }
        for n in project.nodes() {
            let hit = if n.is_group() { world_rect.contains_rect(&n.rect) } else { world_rect.intersects(&n.rect) };
            if hit {
                self.ids.insert(n.id.clone());
            }
        }
    }

    /// Drops ids of nodes that no longer exist (after a removal or an undo).
    pub fn retain_existing(&mut self, project: &Project) {
        self.ids.retain(|id| project.contains(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Camera;
    use crate::ids::ProjectId;
    use crate::node::{Node, NodeKind};

    fn id(s: &str) -> NodeId {
        NodeId::new(s).unwrap()
    }

    fn project() -> Project {
        let n = |name: &str, kind: NodeKind, rect: Rect| Node {
            id: id(name),
            kind,
            title: String::new(),
            rect,
            z: 0,
            colour: None,
            name: None,
            links: Default::default(),
        };
        let sticky = || NodeKind::Sticky { text: String::new() };
        let nodes = vec![
            n("a", sticky(), Rect::new(0.0, 0.0, 100.0, 100.0)),
            n("b", sticky(), Rect::new(200.0, 0.0, 100.0, 100.0)),
            n("g", NodeKind::Group { members: vec![id("a"), id("b")] }, Rect::new(-24.0, -56.0, 348.0, 180.0)),
            n("far", sticky(), Rect::new(1000.0, 1000.0, 100.0, 100.0)),
        ];
        Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", Camera::default(), nodes, 0).unwrap().0
    }

    #[test]
    fn click_and_shift_click() {
        let mut s = Selection::new();
        s.click(id("a"));
        s.shift_click(id("b"));
        assert_eq!(s.to_vec(), vec![id("a"), id("b")]);
        s.shift_click(id("a"));
        assert_eq!(s.to_vec(), vec![id("b")]);
        s.click(id("far"));
        assert_eq!(s.to_vec(), vec![id("far")]);
        s.clear();
        assert!(s.is_empty());
    }

    #[test]
    fn box_select_touches_nodes_but_needs_whole_groups() {
        let p = project();
        let mut s = Selection::new();
        s.select_in_rect(&p, Rect::new(50.0, 50.0, 200.0, 10.0), false);
        assert_eq!(s.to_vec(), vec![id("a"), id("b")]);
        s.select_in_rect(&p, Rect::new(-100.0, -100.0, 500.0, 500.0), false);
        assert_eq!(s.to_vec(), vec![id("a"), id("b"), id("g")]);
        s.select_in_rect(&p, Rect::new(990.0, 990.0, 20.0, 20.0), true);
        assert_eq!(s.len(), 4);
        s.select_in_rect(&p, Rect::new(5000.0, 0.0, 1.0, 1.0), false);
        assert!(s.is_empty());
        s.select_all(&p);
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn retain_existing_drops_removed_nodes() {
        let p = project();
        let mut s = Selection::new();
        s.click(id("a"));
        s.shift_click(id("gone"));
        s.retain_existing(&p);
        assert_eq!(s.to_vec(), vec![id("a")]);
    }
}
