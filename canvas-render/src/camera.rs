//! The canvas camera: a pan offset and a zoom factor mapping world units to target pixels.
//!
//! Convention: `screen = (world - offset) * zoom`, so `offset` is the world point shown at
//! the target's top-left corner. "Screen" means pixels of the render target; for HiDPI
//! windows the app folds the window scale factor into its own zoom policy.
//!
//! The zoom range is defined here, once, for the renderer, the window and the
//! saved model: a user zooms between [`MIN_ZOOM`] and [`MAX_ZOOM`] (10 %–400 %,
//! where 100 % is one world unit per logical pixel). A window on a screen of
//! `ui_scale` target pixels per logical pixel (2 on HiDPI) draws that range
//! with camera zooms `ui_scale` times larger ([`zoom_bounds`]); over the ui
//! scales the range is built for (0.5–2) camera zooms therefore span
//! [`MIN_CAMERA_ZOOM`]–[`MAX_CAMERA_ZOOM`] (0.05–8), which is what a camera, and
//! a saved camera, accept.

use crate::geometry::{Rect, Vec2};

/// Smallest zoom a user picks (10 %).
pub const MIN_ZOOM: f64 = 0.1;
/// Largest zoom a user picks (400 %).
pub const MAX_ZOOM: f64 = 4.0;
/// Smallest screen scale (target pixels per logical pixel) the camera range covers.
pub const MIN_UI_SCALE: f64 = 0.5;
/// Largest screen scale the camera range covers (HiDPI).
pub const MAX_UI_SCALE: f64 = 2.0;
/// Smallest zoom a camera accepts: [`MIN_ZOOM`] on the smallest screen scale.
pub const MIN_CAMERA_ZOOM: f64 = MIN_ZOOM * MIN_UI_SCALE;
/// Largest zoom a camera accepts: [`MAX_ZOOM`] on the largest screen scale.
pub const MAX_CAMERA_ZOOM: f64 = MAX_ZOOM * MAX_UI_SCALE;

/// The camera zooms of 10 %–400 % on a screen of `ui_scale` target pixels per logical pixel.
pub fn zoom_bounds(ui_scale: f32) -> (f32, f32) {
    (MIN_ZOOM as f32 * ui_scale, MAX_ZOOM as f32 * ui_scale)
}

/// Pan + zoom state of the canvas view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// World point displayed at the top-left pixel of the target.
    pub offset: Vec2,
    /// Target pixels per world unit, kept within [`MIN_CAMERA_ZOOM`]..=[`MAX_CAMERA_ZOOM`].
    zoom: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self { offset: Vec2::default(), zoom: 1.0 }
    }
}

impl Camera {
    /// A camera at `offset` with `zoom` clamped to the allowed range (non-finite zoom becomes 1).
    pub fn new(offset: Vec2, zoom: f32) -> Self {
        Self { offset, zoom: clamp_zoom(zoom) }
    }

    /// Current zoom factor.
    pub fn zoom(&self) -> f32 {
        self.zoom
    }

    /// Maps a world point to target pixels.
    pub fn world_to_screen(&self, p: Vec2) -> Vec2 {
        Vec2::new((p.x - self.offset.x) * self.zoom, (p.y - self.offset.y) * self.zoom)
    }

    /// Maps a target pixel position to a world point.
    pub fn screen_to_world(&self, p: Vec2) -> Vec2 {
        Vec2::new(p.x / self.zoom + self.offset.x, p.y / self.zoom + self.offset.y)
    }

    /// Maps a world rectangle to target pixels.
    pub fn world_rect_to_screen(&self, r: Rect) -> Rect {
        let tl = self.world_to_screen(Vec2::new(r.x, r.y));
        Rect::new(tl.x, tl.y, r.w * self.zoom, r.h * self.zoom)
    }

    /// The world rectangle visible in a target of `viewport` pixels.
    pub fn visible_world_rect(&self, viewport: Vec2) -> Rect {
        Rect::new(self.offset.x, self.offset.y, viewport.x / self.zoom, viewport.y / self.zoom)
    }

    /// Pans by a delta in target pixels (dragging the canvas right moves the world right).
    pub fn pan_by_screen(&mut self, delta: Vec2) {
        self.offset.x -= delta.x / self.zoom;
        self.offset.y -= delta.y / self.zoom;
    }

    /// Sets the zoom (clamped) keeping the world point under `anchor` (target pixels) fixed.
    pub fn zoom_at(&mut self, anchor: Vec2, new_zoom: f32) {
        let world = self.screen_to_world(anchor);
        self.zoom = clamp_zoom(new_zoom);
        self.offset = Vec2::new(world.x - anchor.x / self.zoom, world.y - anchor.y / self.zoom);
    }

    /// Multiplies the zoom by `factor` around `anchor` (e.g. `1.1` per wheel notch).
    pub fn zoom_by_at(&mut self, anchor: Vec2, factor: f32) {
        self.zoom_at(anchor, self.zoom * factor);
    }

    /// Frames all `rects` in a `viewport`-sized target with `margin_px` pixels around them.
    ///
    /// Never zooms in beyond 1.0 (fitting one small node should not blow it up), never below
    /// [`MIN_ZOOM`] (10 %). Returns `None` (camera unchanged) when there is nothing valid to fit.
    pub fn fit_all(&mut self, rects: &[Rect], viewport: Vec2, margin_px: f32) -> Option<()> {
        let bounds = rects.iter().filter(|r| r.is_valid()).copied().reduce(|a, b| a.union(&b))?;
        if !(viewport.x > 0.0 && viewport.y > 0.0) {
            return None;
        }
        let avail_w = (viewport.x - 2.0 * margin_px).max(1.0);
        let avail_h = (viewport.y - 2.0 * margin_px).max(1.0);
        let fit = (avail_w / bounds.w.max(1e-3)).min(avail_h / bounds.h.max(1e-3));
        self.zoom = clamp_zoom_to(fit.min(1.0), MIN_ZOOM as f32, MAX_ZOOM as f32);
        let c = bounds.center();
        self.offset = Vec2::new(c.x - viewport.x * 0.5 / self.zoom, c.y - viewport.y * 0.5 / self.zoom);
        Some(())
    }
}

fn clamp_zoom(z: f32) -> f32 {
    clamp_zoom_to(z, MIN_CAMERA_ZOOM as f32, MAX_CAMERA_ZOOM as f32)
}

fn clamp_zoom_to(z: f32, min: f32, max: f32) -> f32 {
    if z.is_finite() {
        z.clamp(min, max)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Vec2, b: Vec2) -> bool {
        (a.x - b.x).abs() < 1e-3 && (a.y - b.y).abs() < 1e-3
    }

    #[test]
    fn world_screen_round_trip() {
        let cam = Camera::new(Vec2::new(-100.0, 50.0), 2.0);
        let w = Vec2::new(10.0, 20.0);
        let s = cam.world_to_screen(w);
        assert_eq!(s, Vec2::new(220.0, -60.0));
        assert!(close(cam.screen_to_world(s), w));
        let r = cam.world_rect_to_screen(Rect::new(0.0, 50.0, 10.0, 5.0));
        assert_eq!(r, Rect::new(200.0, 0.0, 20.0, 10.0));
    }

    #[test]
    fn zoom_is_clamped() {
        assert_eq!(Camera::new(Vec2::default(), 100.0).zoom(), MAX_CAMERA_ZOOM as f32);
        assert_eq!(Camera::new(Vec2::default(), 0.0).zoom(), MIN_CAMERA_ZOOM as f32);
        assert_eq!(Camera::new(Vec2::default(), f32::NAN).zoom(), 1.0);
        let mut cam = Camera::default();
        cam.zoom_by_at(Vec2::default(), 0.001);
        assert_eq!(cam.zoom(), MIN_CAMERA_ZOOM as f32);
    }

    #[test]
    fn the_camera_range_is_the_user_range_on_every_covered_screen_scale() {
        assert_eq!((MIN_CAMERA_ZOOM, MAX_CAMERA_ZOOM), (0.05, 8.0));
        assert_eq!(zoom_bounds(1.0), (0.1, 4.0));
        assert_eq!(zoom_bounds(2.0), (0.2, 8.0));
        for scale in [MIN_UI_SCALE as f32, 1.0, 1.5, MAX_UI_SCALE as f32] {
            let (min, max) = zoom_bounds(scale);
            // A window on any covered screen reaches both ends of its range.
            assert_eq!(Camera::new(Vec2::default(), min).zoom(), min, "{scale}");
            assert_eq!(Camera::new(Vec2::default(), max).zoom(), max, "{scale}");
        }
    }

    #[test]
    fn zoom_keeps_anchor_fixed() {
        let mut cam = Camera::new(Vec2::new(30.0, -20.0), 0.7);
        let anchor = Vec2::new(400.0, 300.0);
        let before = cam.screen_to_world(anchor);
        cam.zoom_at(anchor, 2.5);
        assert_eq!(cam.zoom(), 2.5);
        assert!(close(cam.screen_to_world(anchor), before));
        assert!(close(cam.world_to_screen(before), anchor));
    }

    #[test]
    fn pan_moves_world_with_the_pointer() {
        let mut cam = Camera::new(Vec2::default(), 2.0);
        let p = Vec2::new(5.0, 5.0);
        let s0 = cam.world_to_screen(p);
        cam.pan_by_screen(Vec2::new(40.0, -10.0));
        let s1 = cam.world_to_screen(p);
        assert!(close(Vec2::new(s1.x - s0.x, s1.y - s0.y), Vec2::new(40.0, -10.0)));
    }

    #[test]
    fn fit_all_frames_every_rect_with_margin() {
        let rects = [Rect::new(0.0, 0.0, 1000.0, 500.0), Rect::new(1500.0, 800.0, 500.0, 400.0)];
        let viewport = Vec2::new(1000.0, 600.0);
        let mut cam = Camera::default();
        cam.fit_all(&rects, viewport, 20.0).unwrap();
        // Bounds 2000 x 1200 into 960 x 560: limited by width (0.48) vs height (0.4667).
        assert!((cam.zoom() - 560.0 / 1200.0).abs() < 1e-4);
        for r in rects {
            let s = cam.world_rect_to_screen(r);
            assert!(s.x >= 19.9 && s.y >= 19.9, "{s:?}");
            assert!(s.right() <= viewport.x - 19.9 + 1e-3 && s.bottom() <= viewport.y - 19.9 + 1e-3, "{s:?}");
        }
        // The bounds are centred.
        let c = cam.world_to_screen(Vec2::new(1000.0, 600.0));
        assert!(close(c, Vec2::new(500.0, 300.0)));
    }

    #[test]
    fn fit_all_does_not_magnify_and_ignores_empty_input() {
        let mut cam = Camera::new(Vec2::new(1.0, 2.0), 3.0);
        assert!(cam.fit_all(&[], Vec2::new(800.0, 600.0), 10.0).is_none());
        assert_eq!(cam.zoom(), 3.0);
        cam.fit_all(&[Rect::new(10.0, 10.0, 20.0, 20.0)], Vec2::new(800.0, 600.0), 10.0).unwrap();
        assert_eq!(cam.zoom(), 1.0);
        assert!(close(cam.world_to_screen(Vec2::new(20.0, 20.0)), Vec2::new(400.0, 300.0)));
        let mut tiny = Camera::default();
        tiny.fit_all(&[Rect::new(0.0, 0.0, 1e6, 1e6)], Vec2::new(800.0, 600.0), 10.0).unwrap();
        assert_eq!(tiny.zoom(), MIN_ZOOM as f32);
    }
}
