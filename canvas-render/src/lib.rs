//! canvas-render draws the termsprawl canvas with wgpu: the pan/zoom [`Camera`], node chrome
//! (title bars with vector icons, badges, focus and selection), uploaded content textures
//! (browser frames), terminal cell grids from one glyph atlas, and sticky/group text. Each
//! node is cached as its own texture and re-rendered only when its inputs change; frames
//! composite those textures into a window surface or an offscreen texture (RGBA / PNG).
//! The app describes each frame with a renderer-neutral [`Scene`]. This crate must NOT know
//! about CEF, PTYs, terminal emulation state or winit event types: it takes pixels, grids
//! of cells and a `wgpu::Surface`/texture view, nothing else.
//!
//! Modules and what each imports of the crate (checked by module-graph's workspace test,
//! like every crate's table). The scene the app fills stands on the views it names (the
//! browser bar, the cell grid, the theme); every pass shares the leaf [`Color`]; the
//! renderer stands on everything but the test helpers.
//!
//! ```text
//! browser_bar → color, geometry, quad, text, theme
//! camera      → geometry
//! cells       → color, glyphs, quad
//! chrome      → browser_bar, color, geometry, quad, scene, text, theme
//! composite   → color, geometry, quad
//! content     → error, scene  (ContentKey)
//! gpu         → error
//! image       → error
//! quad        → color
//! renderer    → camera, cells, chrome, color, composite, content, error, geometry,
//!               glyphs, gpu, image, quad, scene, text, theme
//! scene       → browser_bar, cells, color, geometry, theme
//! text        → color, error
//! theme       → color
//! visual_test → error, glyphs, gpu, image, renderer  (feature `visual-test` only)
//! leaves: color, error, geometry, glyphs
//! ```

#![warn(missing_docs)]

mod browser_bar;
mod camera;
mod cells;
mod chrome;
mod color;
mod composite;
mod content;
mod error;
mod geometry;
mod glyphs;
mod gpu;
mod image;
mod quad;
mod renderer;
mod scene;
mod text;
mod theme;
#[cfg(feature = "visual-test")]
pub mod visual_test;

pub use browser_bar::{
    bar_layout, bar_part_at, BarLayout, BarPart, BrowserBar, FieldEdit, FindField, TabChip, TabCount, TabStrip,
};
pub use camera::{
    zoom_bounds, Camera, MAX_CAMERA_ZOOM, MAX_UI_SCALE, MAX_ZOOM, MIN_CAMERA_ZOOM, MIN_UI_SCALE, MIN_ZOOM,
};
pub use cells::{CellView, CursorShape, TerminalGridView};
pub use chrome::{body_rect, content_rect};
pub use color::Color;
pub use content::DirtyRect;
pub use error::{RenderError, Result};
pub use geometry::{Rect, Vec2};
pub use glyphs::{CellMetrics, TerminalFont, EMBEDDED_MONO_FAMILY};
pub use gpu::Gpu;
pub use image::RgbaImage;
pub use renderer::{raster_scale, FrameReuse, FrameStats, RenderTarget, Renderer, RendererConfig, Reuse};
pub use scene::{Badge, ContentKey, NodeContent, NodeId, NodeKind, NodeView, Scene};
pub use theme::Theme;
pub use wgpu;
