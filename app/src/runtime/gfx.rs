//! The GPU device and renderer the runtime draws with (the window's, or an
//! off-screen one made on demand), and the model's rects as the renderer
//! takes them.

use canvas_render::{Gpu, Renderer, RendererConfig};

/// Converts a model rect to the renderer's.
pub fn render_rect(r: &crate::model::Rect) -> canvas_render::Rect {
    canvas_render::Rect::new(r.x as f32, r.y as f32, r.w as f32, r.h as f32)
}

/// A GPU device and its renderer.
pub struct Gfx {
    /// The device.
    pub gpu: Gpu,
    /// The renderer.
    pub renderer: Renderer,
}

impl Gfx {
    /// Sets up an off-screen GPU (lavapipe without a GPU) and a renderer.
    pub fn headless() -> Result<Gfx, canvas_render::RenderError> {
        let gpu = Gpu::headless()?;
        Gfx::with_gpu(gpu)
    }

    /// A renderer on an existing GPU context (the window's).
    pub fn with_gpu(gpu: Gpu) -> Result<Gfx, canvas_render::RenderError> {
        let renderer = Renderer::new(&gpu, RendererConfig::default())?;
        Ok(Gfx { gpu, renderer })
    }
}
