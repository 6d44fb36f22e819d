//! GPU context creation: instance (Vulkan preferred, GL fallback, `WGPU_BACKEND` honoured),
//! adapter selection (optionally compatible with a window surface) and the device.

use crate::error::{RenderError, Result};

/// The instance, adapter, device and queue the renderer draws with.
#[derive(Debug, Clone)]
pub struct Gpu {
    /// The wgpu instance (the app creates window surfaces from it).
    pub instance: wgpu::Instance,
    /// The chosen adapter.
    pub adapter: wgpu::Adapter,
    /// The logical device, created with the adapter's own limits.
    pub device: wgpu::Device,
    /// The device's queue.
    pub queue: wgpu::Queue,
}

impl Gpu {
    /// The instance descriptor this crate recommends: Vulkan + GL, overridable by
    /// `WGPU_BACKEND`. Windowed apps add `.with_display_handle(..)` (required for GL).
    pub fn instance_descriptor() -> wgpu::InstanceDescriptor {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::VULKAN | wgpu::Backends::GL;
        desc.with_env()
    }

    /// A context for offscreen rendering only (no window, no display connection).
    pub fn headless() -> Result<Gpu> {
        let instance = wgpu::Instance::new(Self::instance_descriptor());
        Self::from_instance(instance, None)
    }

    /// Picks an adapter on `instance` (one able to present to `surface` when given) and
    /// creates the device. Prefers Vulkan over GL, then real GPUs over software ones.
    pub fn from_instance(instance: wgpu::Instance, surface: Option<&wgpu::Surface<'_>>) -> Result<Gpu> {
        let mut adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        if let Some(surface) = surface {
            adapters.retain(|a| a.is_surface_supported(surface));
        }
        adapters.sort_by_key(|a| adapter_rank(&a.get_info()));
        let Some(adapter) = adapters.into_iter().next() else {
            return Err(RenderError::NoAdapter { backends: format!("{:?}", Self::instance_descriptor().backends) });
        };
        let info = adapter.get_info();
        tracing::info!(name = %info.name, backend = ?info.backend, device_type = ?info.device_type, "GPU adapter selected");
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("canvas-render device"),
            required_features: wgpu::Features::empty(),
            required_limits: adapter.limits(),
            ..Default::default()
        }))?;
        device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| {
            tracing::error!("uncaptured wgpu error: {e}");
        }));
        Ok(Gpu { instance, adapter, device, queue })
    }

    /// One line describing the adapter, for logs and `--version` style output.
    pub fn describe(&self) -> String {
        let i = self.adapter.get_info();
        format!("{} ({:?}, {:?})", i.name, i.backend, i.device_type)
    }
}

/// Lower is better: Vulkan before GL, then discrete > integrated > virtual > CPU.
fn adapter_rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let backend = match info.backend {
        wgpu::Backend::Vulkan => 0,
        wgpu::Backend::Gl => 1,
        _ => 2,
    };
    let kind = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    };
    (backend, kind)
}
