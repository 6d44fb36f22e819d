//! Plain 2-D value types shared by the camera, the scene and the renderer.

/// A 2-D vector or point, in whatever space the caller says (world units or pixels).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vec2 {
    /// Horizontal component.
    pub x: f32,
    /// Vertical component (grows downwards, like screen coordinates).
    pub y: f32,
}

impl Vec2 {
    /// Builds a vector from its two components.
    pub const fn new(x: f32, y: f32) -> Self {
        Self { x, y }
    }
}

/// An axis-aligned rectangle given by its top-left corner and its size.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width (never negative for well-formed rectangles).
    pub w: f32,
    /// Height (never negative for well-formed rectangles).
    pub h: f32,
}

impl Rect {
    /// Builds a rectangle from its top-left corner and size.
    pub const fn new(x: f32, y: f32, w: f32, h: f32) -> Self {
        Self { x, y, w, h }
    }

    /// Right edge (`x + w`).
    pub fn right(&self) -> f32 {
        self.x + self.w
    }

    /// Bottom edge (`y + h`).
    pub fn bottom(&self) -> f32 {
        self.y + self.h
    }

    /// Centre point.
    pub fn center(&self) -> Vec2 {
        Vec2::new(self.x + self.w * 0.5, self.y + self.h * 0.5)
    }

    /// Whether the point lies inside (left/top edges inclusive, right/bottom exclusive).
    pub fn contains(&self, p: Vec2) -> bool {
        p.x >= self.x && p.y >= self.y && p.x < self.right() && p.y < self.bottom()
    }

    /// Whether the two rectangles overlap with a non-empty area.
    pub fn intersects(&self, other: &Rect) -> bool {
        self.x < other.right() && other.x < self.right() && self.y < other.bottom() && other.y < self.bottom()
    }

    /// The smallest rectangle containing both.
    pub fn union(&self, other: &Rect) -> Rect {
        let x = self.x.min(other.x);
        let y = self.y.min(other.y);
        let r = self.right().max(other.right());
        let b = self.bottom().max(other.bottom());
        Rect::new(x, y, r - x, b - y)
    }

    /// The rectangle grown by `d` on every side (shrunk when `d` is negative).
    pub fn inflate(&self, d: f32) -> Rect {
        Rect::new(self.x - d, self.y - d, self.w + 2.0 * d, self.h + 2.0 * d)
    }

    /// Whether every coordinate is finite and the size is not negative.
    pub fn is_valid(&self) -> bool {
        [self.x, self.y, self.w, self.h].iter().all(|v| v.is_finite()) && self.w >= 0.0 && self.h >= 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_intersection() {
        let a = Rect::new(0.0, 0.0, 10.0, 10.0);
        let b = Rect::new(5.0, -5.0, 10.0, 10.0);
        assert_eq!(a.union(&b), Rect::new(0.0, -5.0, 15.0, 15.0));
        assert!(a.intersects(&b));
        assert!(!a.intersects(&Rect::new(10.0, 0.0, 5.0, 5.0)), "touching edges do not overlap");
        assert!(a.contains(Vec2::new(0.0, 9.9)));
        assert!(!a.contains(Vec2::new(10.0, 5.0)));
        assert_eq!(a.inflate(2.0), Rect::new(-2.0, -2.0, 14.0, 14.0));
        assert!(!Rect::new(0.0, 0.0, -1.0, 1.0).is_valid());
        assert!(!Rect::new(f32::NAN, 0.0, 1.0, 1.0).is_valid());
    }
}
