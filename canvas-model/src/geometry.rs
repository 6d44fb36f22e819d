//! World-space geometry: points, rectangles, the camera, and resizing by an
//! edge with the minimum node size.

use serde::{Deserialize, Serialize};

use super::error::ModelError;

/// Smallest node width in world units.
pub const MIN_NODE_WIDTH: f64 = 80.0;
/// Smallest node height in world units.
pub const MIN_NODE_HEIGHT: f64 = 60.0;
/// Smallest camera zoom: a saved camera accepts every zoom a drawing camera
/// does, so this is the renderer's `canvas_render::MIN_CAMERA_ZOOM` (the
/// model knows no renderer: the app's test `model_zoom_range_is_the_renderers`
/// holds the two equal).
pub const MIN_ZOOM: f64 = 0.05;
/// Largest camera zoom (the renderer's `canvas_render::MAX_CAMERA_ZOOM`).
pub const MAX_ZOOM: f64 = 8.0;

/// A point in world coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Point {
    /// Horizontal position.
    pub x: f64,
    /// Vertical position (grows downwards).
    pub y: f64,
}

impl Point {
    /// Builds a point.
    pub const fn new(x: f64, y: f64) -> Self {
        Self { x, y }
    }
}

/// An axis-aligned rectangle in world coordinates; `(x, y)` is the top-left.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// Builds a rectangle.
    pub const fn new(x: f64, y: f64, w: f64, h: f64) -> Self {
        Self { x, y, w, h }
    }

    /// The rectangle spanned by two corners, in either order.
    pub fn from_corners(a: Point, b: Point) -> Self {
        let (x0, x1) = if a.x <= b.x { (a.x, b.x) } else { (b.x, a.x) };
        let (y0, y1) = if a.y <= b.y { (a.y, b.y) } else { (b.y, a.y) };
        Self::new(x0, y0, x1 - x0, y1 - y0)
    }

    /// Right edge.
    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    /// Bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// Whether the point lies inside (edges included).
    pub fn contains(&self, p: Point) -> bool {
        p.x >= self.x && p.x <= self.right() && p.y >= self.y && p.y <= self.bottom()
    }

    /// Whether `other` lies entirely inside this rectangle.
    pub fn contains_rect(&self, other: &Rect) -> bool {
        other.x >= self.x && other.y >= self.y && other.right() <= self.right() && other.bottom() <= self.bottom()
    }

    /// Whether the two rectangles overlap (touching edges count).
    pub fn intersects(&self, other: &Rect) -> bool {
        self.x <= other.right() && other.x <= self.right() && self.y <= other.bottom() && other.y <= self.bottom()
    }

    /// The smallest rectangle containing both.
    pub fn union(&self, other: &Rect) -> Rect {
        let x = self.x.min(other.x);
        let y = self.y.min(other.y);
        Rect::new(x, y, self.right().max(other.right()) - x, self.bottom().max(other.bottom()) - y)
    }

    /// The rectangle moved by `(dx, dy)`.
    pub fn translated(&self, dx: f64, dy: f64) -> Rect {
        Rect::new(self.x + dx, self.y + dy, self.w, self.h)
    }

    /// The rectangle grown by `left/top/right/bottom` on each side.
    pub fn expanded(&self, left: f64, top: f64, right: f64, bottom: f64) -> Rect {
        Rect::new(self.x - left, self.y - top, self.w + left + right, self.h + top + bottom)
    }

    /// Refuses NaN and infinities, naming the rectangle's role in the error.
    pub fn check_finite(&self, what: &'static str) -> Result<(), ModelError> {
        if [self.x, self.y, self.w, self.h].iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(ModelError::NotFinite(what))
        }
    }

    /// The same top-left corner with the size raised to the node minimum.
    pub fn clamped_to_min_size(&self) -> Rect {
        Rect::new(self.x, self.y, self.w.max(MIN_NODE_WIDTH), self.h.max(MIN_NODE_HEIGHT))
    }
}

/// The view onto a canvas: `(x, y)` is the world point at the top-left of
/// the viewport and `zoom` is screen pixels per world unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    /// World x at the viewport's left edge.
    pub x: f64,
    /// World y at the viewport's top edge.
    pub y: f64,
    /// Screen pixels per world unit.
    pub zoom: f64,
}

impl Default for Camera {
    fn default() -> Self {
        Self { x: 0.0, y: 0.0, zoom: 1.0 }
    }
}

impl Camera {
    /// Validates and normalises a camera: finite values, zoom clamped to
    /// `[MIN_ZOOM, MAX_ZOOM]` (a zoom of 0 or below is refused).
    pub fn checked(self) -> Result<Camera, ModelError> {
        if !(self.x.is_finite() && self.y.is_finite()) {
            return Err(ModelError::NotFinite("camera position"));
        }
        if !self.zoom.is_finite() || self.zoom <= 0.0 {
            return Err(ModelError::NotFinite("camera zoom (positive)"));
        }
        Ok(Camera { zoom: self.zoom.clamp(MIN_ZOOM, MAX_ZOOM), ..self })
    }

    /// Converts a viewport pixel position to a world point.
    pub fn screen_to_world(&self, sx: f64, sy: f64) -> Point {
        Point::new(self.x + sx / self.zoom, self.y + sy / self.zoom)
    }

    /// Converts a world point to a viewport pixel position.
    pub fn world_to_screen(&self, p: Point) -> (f64, f64) {
        ((p.x - self.x) * self.zoom, (p.y - self.y) * self.zoom)
    }

    /// The camera at this zoom that shows `rect` in the middle of a `viewport`-sized view.
    pub fn centred_on(&self, rect: &Rect, viewport: (f64, f64)) -> Camera {
        let (vw, vh) = viewport;
        let zoom = self.zoom;
        Camera { x: rect.x + rect.w / 2.0 - vw / (2.0 * zoom), y: rect.y + rect.h / 2.0 - vh / (2.0 * zoom), zoom }
    }
}

/// Which edge or corner of a node a resize drag holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResizeEdge {
    /// Top edge.
    N,
    /// Bottom edge.
    S,
    /// Right edge.
    E,
    /// Left edge.
    W,
    /// Top-right corner.
    NE,
    /// Top-left corner.
    NW,
    /// Bottom-right corner.
    SE,
    /// Bottom-left corner.
    SW,
}

impl ResizeEdge {
    /// Whether this edge moves the left side.
    pub fn moves_left(self) -> bool {
        matches!(self, Self::W | Self::NW | Self::SW)
    }

    /// Whether this edge moves the right side.
    pub fn moves_right(self) -> bool {
        matches!(self, Self::E | Self::NE | Self::SE)
    }

    /// Whether this edge moves the top side.
    pub fn moves_top(self) -> bool {
        matches!(self, Self::N | Self::NE | Self::NW)
    }

    /// Whether this edge moves the bottom side.
    pub fn moves_bottom(self) -> bool {
        matches!(self, Self::S | Self::SE | Self::SW)
    }

    /// `rect` after dragging this edge by `(dx, dy)` world units. The
    /// opposite side stays put and the size never drops below the node
    /// minimum, so a drag past the minimum stops instead of flipping or
    /// pushing the node away.
    pub fn resize(self, rect: Rect, dx: f64, dy: f64) -> Rect {
        let (mut left, mut top, mut right, mut bottom) = (rect.x, rect.y, rect.right(), rect.bottom());
        if self.moves_left() {
            left = (left + dx).min(right - MIN_NODE_WIDTH);
        }
        if self.moves_right() {
            right = (right + dx).max(left + MIN_NODE_WIDTH);
        }
        if self.moves_top() {
            top = (top + dy).min(bottom - MIN_NODE_HEIGHT);
        }
        if self.moves_bottom() {
            bottom = (bottom + dy).max(top + MIN_NODE_HEIGHT);
        }
        Rect::new(left, top, right - left, bottom - top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centring_puts_the_node_in_the_middle_of_the_viewport() {
        let r = Rect { x: 1000.0, y: 500.0, w: 400.0, h: 200.0 };
        for (zoom, view) in [(0.5, (1280.0, 800.0)), (1.0, (1920.0, 1080.0)), (2.0, (640.0, 480.0))] {
            let c = Camera { x: -7.0, y: 3.0, zoom }.centred_on(&r, view);
            let mid = c.screen_to_world(view.0 / 2.0, view.1 / 2.0);
            assert!((mid.x - 1200.0).abs() < 1e-9 && (mid.y - 600.0).abs() < 1e-9, "zoom {zoom}: {mid:?}");
            assert_eq!(c.zoom, zoom);
        }
    }

    #[test]
    fn rect_relations() {
        let a = Rect::new(0.0, 0.0, 100.0, 100.0);
        assert!(a.contains(Point::new(100.0, 0.0)));
        assert!(!a.contains(Point::new(100.1, 0.0)));
        assert!(a.contains_rect(&Rect::new(10.0, 10.0, 90.0, 90.0)));
        assert!(!a.contains_rect(&Rect::new(10.0, 10.0, 91.0, 90.0)));
        assert!(a.intersects(&Rect::new(100.0, 100.0, 5.0, 5.0)));
        assert!(!a.intersects(&Rect::new(101.0, 0.0, 5.0, 5.0)));
        assert_eq!(a.union(&Rect::new(-10.0, 50.0, 20.0, 100.0)), Rect::new(-10.0, 0.0, 110.0, 150.0));
        assert_eq!(Rect::from_corners(Point::new(5.0, 9.0), Point::new(1.0, 2.0)), Rect::new(1.0, 2.0, 4.0, 7.0));
        assert!(Rect::new(f64::NAN, 0.0, 1.0, 1.0).check_finite("rect").is_err());
    }

    #[test]
    fn resize_keeps_the_opposite_side_and_the_minimum() {
        let r = Rect::new(0.0, 0.0, 200.0, 100.0);
        assert_eq!(ResizeEdge::SE.resize(r, 10.0, 20.0), Rect::new(0.0, 0.0, 210.0, 120.0));
        assert_eq!(ResizeEdge::W.resize(r, 50.0, 99.0), Rect::new(50.0, 0.0, 150.0, 100.0));
        // Dragging the left edge past the minimum stops with the right edge fixed.
        assert_eq!(ResizeEdge::W.resize(r, 500.0, 0.0), Rect::new(120.0, 0.0, 80.0, 100.0));
        assert_eq!(ResizeEdge::N.resize(r, 0.0, 90.0), Rect::new(0.0, 40.0, 200.0, 60.0));
        assert_eq!(ResizeEdge::SE.resize(r, -500.0, -500.0), Rect::new(0.0, 0.0, 80.0, 60.0));
        assert_eq!(ResizeEdge::NW.resize(r, -5.0, -5.0), Rect::new(-5.0, -5.0, 205.0, 105.0));
    }

    #[test]
    fn camera_maps_screen_and_world_and_validates() {
        let c = Camera { x: 100.0, y: 50.0, zoom: 2.0 };
        let p = c.screen_to_world(20.0, 40.0);
        assert_eq!(p, Point::new(110.0, 70.0));
        assert_eq!(c.world_to_screen(p), (20.0, 40.0));
        assert_eq!(Camera { zoom: 100.0, ..c }.checked().unwrap().zoom, MAX_ZOOM);
        assert!(Camera { zoom: 0.0, ..c }.checked().is_err());
        assert!(Camera { x: f64::INFINITY, ..c }.checked().is_err());
    }
}
