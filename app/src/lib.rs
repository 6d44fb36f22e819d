//! termsprawl (the app): the CLI, the main loop, input routing and the tool
//! runtime over the workspace model (`canvas-model`, re-exported as `model`). It wires the library crates
//! together — cef-bridge (browsers), canvas-render (wgpu), terminal (PTYs),
//! tool-server and cdp-facade (the agent control planes) — and is the only
//! crate that knows all of them. It must not know the wire formats of HTTP or
//! CDP: those belong to tool-server, cdp-facade and page-driver (which every
//! part of the app drives a page through, over `page_transport`).

/// The workspace model, a crate of its own (`canvas-model`) so it cannot
/// reach the runtime, a window, a browser or a PTY.
pub use canvas_model as model;

pub mod allocator;
pub mod canvas_shot;
pub mod junit;
pub mod page_transport;
pub mod paths;
pub mod runtime;
pub mod shot;
pub mod visual_diff;
pub mod window;
pub mod worktree;

#[cfg(test)]
mod tests {
    #[test]
    fn model_zoom_range_is_the_renderers() {
        assert_eq!(crate::model::geometry::MIN_ZOOM, canvas_render::MIN_CAMERA_ZOOM);
        assert_eq!(crate::model::geometry::MAX_ZOOM, canvas_render::MAX_CAMERA_ZOOM);
    }
}
