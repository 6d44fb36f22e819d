//! The window and its wgpu surface. The instance is created after the event
//! loop (with its display handle, which GL needs) and the adapter must be
//! able to present to the surface: Vulkan (lavapipe without a GPU) first, GL
//! as the fallback.

use canvas_render::{wgpu, Gpu, RenderError};
use std::sync::Arc;
use thiserror::Error;
use winit::event_loop::ActiveEventLoop;
use winit::window::Window;

/// Why the window could not run.
#[derive(Debug, Error)]
pub enum WindowError {
    /// The event loop could not start (no X server reachable) or failed while running.
    #[error("cannot start the window event loop: {0}")]
    EventLoop(#[from] winit::error::EventLoopError),
    /// The window could not be created.
    #[error("cannot open a window: {0}")]
    Window(#[from] winit::error::OsError),
    /// The GPU surface could not be created.
    #[error("cannot create the window surface: {0}")]
    Surface(#[from] wgpu::CreateSurfaceError),
    /// The surface offers no texture format to draw in.
    #[error("cannot create the window surface: the surface offers no format")]
    NoSurfaceFormat,
    /// No GPU adapter or device for the window.
    #[error("GPU setup for the window failed: {0}")]
    Gpu(#[from] RenderError),
}

/// A window, its surface and the surface's configuration.
pub struct WindowSurface {
    /// The surface (drop it before the window: it holds a clone of the window).
    pub surface: wgpu::Surface<'static>,
    /// The configuration last applied (format, size, present mode).
    pub config: wgpu::SurfaceConfiguration,
    /// The window.
    pub window: Arc<Window>,
}

/// Where distributions put the system Vulkan loader.
const SYSTEM_VULKAN_LOADERS: [&str; 3] =
    ["/usr/lib/x86_64-linux-gnu/libvulkan.so.1", "/usr/lib64/libvulkan.so.1", "/usr/lib/libvulkan.so.1"];

/// Loads the system's Vulkan loader before wgpu looks for `libvulkan.so.1`.
///
/// The binary's runpath points at the CEF runtime folder, which ships its own
/// `libvulkan.so.1` (for Chromium's SwiftShader) built without X11 surface
/// support: wgpu would find it first, see no `VK_KHR_xlib_surface`, and fall
/// back to GL (5–10× slower uploads). A library already loaded under the same
/// soname satisfies later `dlopen("libvulkan.so.1")` calls, so loading the
/// system one by path first makes wgpu use it. libcef does not link Vulkan;
/// Chromium's GPU process is a separate process and keeps its own.
fn prefer_system_vulkan_loader() {
    for path in SYSTEM_VULKAN_LOADERS {
        if !std::path::Path::new(path).exists() {
            continue;
        }
        // SAFETY: the Vulkan loader's initialisers only set up its own state.
        match unsafe {
            libloading::os::unix::Library::open(
                Some(path),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
            )
        } {
            Ok(lib) => {
                tracing::debug!(path, "system Vulkan loader preloaded");
                // Kept for the life of the process: wgpu's handle refers to the same library.
                std::mem::forget(lib);
                return;
            }
            Err(e) => tracing::debug!(path, error = %e, "system Vulkan loader not loadable"),
        }
    }
}

impl WindowSurface {
    /// Opens the window and a GPU context able to present to it.
    pub fn open(event_loop: &ActiveEventLoop, title: &str) -> Result<(WindowSurface, Gpu), WindowError> {
        prefer_system_vulkan_loader();
        let attrs =
            Window::default_attributes().with_title(title).with_inner_size(winit::dpi::LogicalSize::new(1280.0, 800.0));
        let window = Arc::new(event_loop.create_window(attrs)?);
        let desc = Gpu::instance_descriptor().with_display_handle(Box::new(event_loop.owned_display_handle()));
        let instance = wgpu::Instance::new(desc);
        let surface = instance.create_surface(window.clone())?;
        let gpu = Gpu::from_instance(instance, Some(&surface))?;
        let caps = surface.get_capabilities(&gpu.adapter);
        // The renderer handles sRGB and linear targets alike; prefer plain 8-bit BGRA/RGBA.
        let preferred = [
            wgpu::TextureFormat::Bgra8Unorm,
            wgpu::TextureFormat::Rgba8Unorm,
            wgpu::TextureFormat::Bgra8UnormSrgb,
            wgpu::TextureFormat::Rgba8UnormSrgb,
        ];
        let format = preferred
            .iter()
            .copied()
            .find(|f| caps.formats.contains(f))
            .or_else(|| caps.formats.first().copied())
            .ok_or(WindowError::NoSurfaceFormat)?;
        // Mailbox never blocks the main loop (which also pumps CEF); FIFO is always there.
        let present_mode = if caps.present_modes.contains(&wgpu::PresentMode::Mailbox) {
            wgpu::PresentMode::Mailbox
        } else {
            wgpu::PresentMode::Fifo
        };
        let alpha_mode = caps.alpha_modes.first().copied().unwrap_or(wgpu::CompositeAlphaMode::Auto);
        let size = window.inner_size();
        // A copy target too where the surface allows: frames while pages animate are
        // then drawn from the last one (only changed regions) and copied in.
        let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | (caps.usages & wgpu::TextureUsages::COPY_DST);
        let config = wgpu::SurfaceConfiguration {
            usage,
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode,
            desired_maximum_frame_latency: 2,
            alpha_mode,
            view_formats: vec![],
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        surface.configure(&gpu.device, &config);
        tracing::info!(adapter = %gpu.describe(), ?format, ?present_mode, ?usage, "window surface ready");
        Ok((WindowSurface { surface, config, window }, gpu))
    }

    /// Reconfigures for a new window size (ignored while minimised).
    pub fn resize(&mut self, device: &wgpu::Device, width: u32, height: u32) {
        if width == 0 || height == 0 || (width, height) == (self.config.width, self.config.height) {
            return;
        }
        self.config.width = width;
        self.config.height = height;
        self.surface.configure(device, &self.config);
    }

    /// The surface size in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.config.width, self.config.height)
    }
}
