//! Hit testing: which node is under a world point, and which part of it
//! (title bar, body, or a resize edge).

use super::geometry::{Point, ResizeEdge};
use super::ids::NodeId;
use super::node::Node;
use super::project::Project;

/// Which part of a node a point falls on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitRegion {
    /// The title bar (drag to move).
    Title,
    /// The content (forwarded to the terminal, browser, editor...).
    Body,
    /// A resize edge or corner.
    Edge(ResizeEdge),
}

/// A node under a point, and the part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The node.
    pub id: NodeId,
    /// The part.
    pub region: HitRegion,
}

/// The chrome dimensions hit testing needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitOptions {
    /// Height of a node's title bar, in world units (chrome scales with zoom).
    pub title_bar_height: f64,
    /// How far from an edge, inside or outside, a point still grabs it, in
    /// screen pixels: the grab area stays the same size on screen at any zoom.
    pub edge_tolerance_px: f64,
}

impl Default for HitOptions {
    fn default() -> Self {
        Self { title_bar_height: 28.0, edge_tolerance_px: 6.0 }
    }
}

/// The region of `node` under `p`, with `tolerance` in world units.
pub fn hit_node(node: &Node, p: Point, title_bar_height: f64, tolerance: f64) -> Option<HitRegion> {
    let r = node.rect;
    let grab = r.expanded(tolerance, tolerance, tolerance, tolerance);
    if !grab.contains(p) {
        return None;
    }
    let (dl, dr, dt, db) = ((p.x - r.x).abs(), (p.x - r.right()).abs(), (p.y - r.y).abs(), (p.y - r.bottom()).abs());
    // On a node narrower than twice the tolerance both edges are "near";
    // the closer one wins.
    let horizontal = match (dl <= tolerance, dr <= tolerance) {
        (true, true) if dl <= dr => Some(true),
        (true, true) => Some(false),
        (true, false) => Some(true),
        (false, true) => Some(false),
        (false, false) => None,
    };
    let vertical = match (dt <= tolerance, db <= tolerance) {
        (true, true) if dt <= db => Some(true),
        (true, true) => Some(false),
        (true, false) => Some(true),
        (false, true) => Some(false),
        (false, false) => None,
    };
    let edge = match (horizontal, vertical) {
        (Some(true), Some(true)) => Some(ResizeEdge::NW),
        (Some(false), Some(true)) => Some(ResizeEdge::NE),
        (Some(true), Some(false)) => Some(ResizeEdge::SW),
        (Some(false), Some(false)) => Some(ResizeEdge::SE),
        (Some(true), None) => Some(ResizeEdge::W),
        (Some(false), None) => Some(ResizeEdge::E),
        (None, Some(true)) => Some(ResizeEdge::N),
        (None, Some(false)) => Some(ResizeEdge::S),
        (None, None) => None,
    };
    Some(match edge {
        Some(e) => HitRegion::Edge(e),
        None if p.y < r.y + title_bar_height => HitRegion::Title,
        None => HitRegion::Body,
    })
}

impl Project {
    /// The top-most node (by z, then id) under a world point, at the
    /// project camera's zoom.
    pub fn node_at(&self, p: Point, opts: &HitOptions) -> Option<Hit> {
        let zoom = if self.camera.zoom > 0.0 { self.camera.zoom } else { 1.0 };
        let tolerance = opts.edge_tolerance_px / zoom;
        self.nodes_by_z().into_iter().rev().find_map(|n| {
            hit_node(n, p, opts.title_bar_height, tolerance).map(|region| Hit { id: n.id.clone(), region })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Camera, Rect};
    use crate::ids::ProjectId;
    use crate::node::NodeKind;

    fn node(id: &str, rect: Rect, z: i64) -> Node {
        Node {
            id: NodeId::new(id).unwrap(),
            kind: NodeKind::Sticky { text: String::new() },
            title: String::new(),
            rect,
            z,
            colour: None,
            name: None,
            links: Default::default(),
        }
    }

    fn project(nodes: Vec<Node>, zoom: f64) -> Project {
        Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", Camera { x: 0.0, y: 0.0, zoom }, nodes, 0)
            .unwrap()
            .0
    }

    const OPTS: HitOptions = HitOptions { title_bar_height: 20.0, edge_tolerance_px: 4.0 };

    #[test]
    fn regions_of_one_node() {
        let n = node("a", Rect::new(0.0, 0.0, 200.0, 100.0), 0);
        let at = |x, y| hit_node(&n, Point::new(x, y), 20.0, 4.0);
        assert_eq!(at(100.0, 10.0), Some(HitRegion::Title));
        assert_eq!(at(100.0, 50.0), Some(HitRegion::Body));
        assert_eq!(at(100.0, 1.0), Some(HitRegion::Edge(ResizeEdge::N)));
        assert_eq!(at(100.0, 103.0), Some(HitRegion::Edge(ResizeEdge::S)));
        assert_eq!(at(-3.0, 50.0), Some(HitRegion::Edge(ResizeEdge::W)));
        assert_eq!(at(199.0, 50.0), Some(HitRegion::Edge(ResizeEdge::E)));
        assert_eq!(at(-2.0, -2.0), Some(HitRegion::Edge(ResizeEdge::NW)));
        assert_eq!(at(202.0, -1.0), Some(HitRegion::Edge(ResizeEdge::NE)));
        assert_eq!(at(1.0, 99.0), Some(HitRegion::Edge(ResizeEdge::SW)));
        assert_eq!(at(200.0, 100.0), Some(HitRegion::Edge(ResizeEdge::SE)));
        assert_eq!(at(-5.0, 50.0), None);
        assert_eq!(at(100.0, 105.0), None);
    }

    #[test]
    fn tiny_nodes_pick_the_nearer_edge() {
        let n = node("a", Rect::new(0.0, 0.0, 4.0, 100.0), 0);
        assert_eq!(hit_node(&n, Point::new(1.0, 50.0), 20.0, 4.0), Some(HitRegion::Edge(ResizeEdge::W)));
        assert_eq!(hit_node(&n, Point::new(3.0, 50.0), 20.0, 4.0), Some(HitRegion::Edge(ResizeEdge::E)));
    }

    #[test]
    fn top_most_by_z_wins_and_tolerance_scales_with_zoom() {
        let p = project(
            vec![
                node("low", Rect::new(0.0, 0.0, 200.0, 200.0), 5),
                node("high", Rect::new(100.0, 100.0, 200.0, 200.0), 9),
            ],
            1.0,
        );
        assert_eq!(p.node_at(Point::new(150.0, 150.0), &OPTS).unwrap().id.as_str(), "high");
        assert_eq!(
            p.node_at(Point::new(50.0, 150.0), &OPTS),
            Some(Hit { id: NodeId::new("low").unwrap(), region: HitRegion::Body })
        );
        assert_eq!(p.node_at(Point::new(500.0, 500.0), &OPTS), None);
        // 3 world units outside "high"'s right edge: grabbed at zoom 1 (4 px
        // = 4 units), missed at zoom 2 (4 px = 2 units).
        let outside = Point::new(303.0, 200.0);
        assert_eq!(p.node_at(outside, &OPTS).unwrap().region, HitRegion::Edge(ResizeEdge::E));
        let zoomed = project(p.nodes().cloned().collect(), 2.0);
        assert_eq!(zoomed.node_at(outside, &OPTS), None);
    }
}
