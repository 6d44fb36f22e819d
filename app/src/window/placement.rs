//! Where the window puts a new node: the free spot nearest a context menu's
//! point, else nearest the centre of what the window shows.

use crate::model::Point;
use crate::runtime::Runtime;
use canvas_render::{Camera, Vec2};

/// What the window shows, as far as placing a new node goes.
#[derive(Debug, Clone, Copy)]
pub struct Placement {
    /// The window's camera.
    pub camera: Camera,
    /// The window's size in window pixels.
    pub viewport: Vec2,
}

impl Placement {
    /// Where a new `size` node goes: the free spot nearest `at` (a context
    /// menu's point, the node's top-left), else nearest the centre of the view.
    pub fn spot(&self, rt: Option<&Runtime>, at: Option<Point>, size: (f64, f64)) -> (f64, f64) {
        let wanted = at.unwrap_or_else(|| {
            let v = self.viewport;
            let c = self.camera.screen_to_world(Vec2::new(v.x / 2.0, v.y / 2.0));
            Point::new(f64::from(c.x) - size.0 / 2.0, f64::from(c.y) - size.1 / 2.0)
        });
        match rt {
            Some(rt) => rt.free_spot(size, Some(wanted)),
            None => (wanted.x, wanted.y),
        }
    }
}
