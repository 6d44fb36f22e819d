//! What the engine-driving benchmark binaries share (`canvas-bench`,
//! `scale-bench`): the entry point that serves Chromium's helper processes and
//! sets up logging, the exit with the error printed, median/p99, and the
//! off-screen target frames are drawn into.

use canvas_render::wgpu;
use std::process::ExitCode;

/// Runs `bench` as the binary's main, unless this process is one of Chromium's
/// helpers (then it runs that and exits with its code); an error is printed
/// after the binary's `name` and fails the run.
pub fn run(name: &str, bench: impl FnOnce(&[String]) -> anyhow::Result<()>) -> ExitCode {
    if let Some(code) = cef_bridge::run_subprocess_if_child() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .try_init();
    let args: Vec<String> = std::env::args().collect();
    match bench(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Median and 99th percentile of `v` (not empty).
pub fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99))
}

/// The pixel format of [`render_target`].
pub const TARGET_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// An RGBA texture of `size` pixels to render into, read back from or copy
/// into (a window surface's stand-in), and its view.
pub fn render_target(device: &wgpu::Device, size: (u32, u32), label: &str) -> (wgpu::Texture, wgpu::TextureView) {
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d { width: size.0, height: size.1, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: TARGET_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let view = texture.create_view(&Default::default());
    (texture, view)
}
