//! Instanced SDF shapes (rounded boxes with borders, soft shadows, capsule strokes) drawn
//! in target pixels. Used for node chrome and the vector icons of the title bar.

use crate::color::Color;
use wgpu::util::DeviceExt;

/// One shape instance, laid out for the GPU.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct QuadInstance {
    /// Pixel bounding box covered by the instance (x, y, w, h).
    pub rect: [f32; 4],
    /// Fill colour, straight alpha.
    pub fill: [f32; 4],
    /// Border colour, straight alpha.
    pub border: [f32; 4],
    /// Box shapes: the box (x, y, w, h); segments: the endpoints (x0, y0, x1, y1).
    pub shape: [f32; 4],
    /// (corner radius, border width or stroke width, shadow blur, kind: 0 box / 1 segment).
    pub params: [f32; 4],
}

impl QuadInstance {
    /// A filled rounded box.
    pub fn fill(x: f32, y: f32, w: f32, h: f32, radius: f32, fill: Color) -> Self {
        Self::boxed(x, y, w, h, radius, fill, Color::default(), 0.0)
    }

    /// A rounded box with a border of `width` pixels inside its edge.
    #[allow(clippy::too_many_arguments)]
    pub fn boxed(x: f32, y: f32, w: f32, h: f32, radius: f32, fill: Color, border: Color, width: f32) -> Self {
        Self {
            rect: [x - 1.0, y - 1.0, w + 2.0, h + 2.0],
            fill: fill.to_f32(),
            border: border.to_f32(),
            shape: [x, y, w, h],
            params: [radius, width, 0.0, 0.0],
        }
    }

    /// A soft shadow of the box, blurred over `blur` pixels each side of its edge.
    pub fn shadow(x: f32, y: f32, w: f32, h: f32, radius: f32, blur: f32, color: Color) -> Self {
        let b = blur.max(0.5);
        Self {
            rect: [x - 2.0 * b, y - 2.0 * b, w + 4.0 * b, h + 4.0 * b],
            fill: color.to_f32(),
            border: [0.0; 4],
            shape: [x, y, w, h],
            params: [radius, 0.0, b, 0.0],
        }
    }

    /// A round-capped stroke from `(x0, y0)` to `(x1, y1)`, `width` pixels thick.
    pub fn segment(x0: f32, y0: f32, x1: f32, y1: f32, width: f32, color: Color) -> Self {
        let pad = width * 0.5 + 1.0;
        let (lx, hx) = (x0.min(x1) - pad, x0.max(x1) + pad);
        let (ly, hy) = (y0.min(y1) - pad, y0.max(y1) + pad);
        Self {
            rect: [lx, ly, hx - lx, hy - ly],
            fill: color.to_f32(),
            border: [0.0; 4],
            shape: [x0, y0, x1, y1],
            params: [0.0, width, 0.0, 1.0],
        }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Globals {
    target_size: [f32; 2],
    _pad: [f32; 2],
}

/// The pipeline drawing [`QuadInstance`]s into premultiplied-alpha targets.
pub(crate) struct QuadPipeline {
    pipeline: wgpu::RenderPipeline,
    globals: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    instances: wgpu::Buffer,
    capacity: u64,
}

impl QuadPipeline {
    /// Builds the pipeline for targets of `format`.
    pub(crate) fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("quad shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("shaders/quad.wgsl").into()),
        });
        let globals = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("quad globals"),
            contents: bytemuck::bytes_of(&Globals { target_size: [1.0, 1.0], _pad: [0.0; 2] }),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("quad globals layout"),
            entries: &[uniform_entry(0)],
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("quad globals"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: globals.as_entire_binding() }],
        });
        let attributes =
            wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4, 2 => Float32x4, 3 => Float32x4, 4 => Float32x4];
        let pipeline = instanced_strip_pipeline(
            device,
            "quad",
            &layout,
            &shader,
            wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<QuadInstance>() as u64,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &attributes,
            },
            format,
        );
        let capacity = 256;
        let instances =
            instance_buffer(device, "quad instances", capacity * std::mem::size_of::<QuadInstance>() as u64);
        Self { pipeline, globals, bind_group, instances, capacity }
    }

    /// Uploads `quads` for a target of `size` pixels. Call once per submission: the buffers
    /// are shared, so a second prepare before the first submit would overwrite the first.
    pub(crate) fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: (u32, u32),
        quads: &[QuadInstance],
    ) {
        queue.write_buffer(
            &self.globals,
            0,
            bytemuck::bytes_of(&Globals { target_size: [size.0 as f32, size.1 as f32], _pad: [0.0; 2] }),
        );
        if quads.len() as u64 > self.capacity {
            self.capacity = (quads.len() as u64).next_power_of_two();
            self.instances =
                instance_buffer(device, "quad instances", self.capacity * std::mem::size_of::<QuadInstance>() as u64);
        }
        if !quads.is_empty() {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(quads));
        }
    }

    /// Draws instances `range` of what was last prepared.
    pub(crate) fn draw(&self, pass: &mut wgpu::RenderPass<'_>, range: std::ops::Range<u32>) {
        if range.is_empty() {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_vertex_buffer(0, self.instances.slice(..));
        pass.draw(0..4, range);
    }
}

/// A uniform-buffer binding visible to both shader stages.
pub(crate) fn uniform_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A vertex buffer for instance data that is rewritten with `queue.write_buffer`.
/// A pipeline drawing one premultiplied-alpha triangle strip per instance of
/// `instances`, with `vs_main`/`fs_main` of `shader` and one bind group (`layout`).
pub(crate) fn instanced_strip_pipeline(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    shader: &wgpu::ShaderModule,
    instances: wgpu::VertexBufferLayout<'_>,
    format: wgpu::TextureFormat,
) -> wgpu::RenderPipeline {
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&format!("{label} layout")),
        bind_group_layouts: &[Some(layout)],
        ..Default::default()
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(&format!("{label} pipeline")),
        layout: Some(&pipeline_layout),
        vertex: wgpu::VertexState {
            module: shader,
            entry_point: Some("vs_main"),
            buffers: &[Some(instances)],
            compilation_options: Default::default(),
        },
        fragment: Some(wgpu::FragmentState {
            module: shader,
            entry_point: Some("fs_main"),
            targets: &[Some(wgpu::ColorTargetState {
                format,
                blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                write_mask: wgpu::ColorWrites::ALL,
            })],
            compilation_options: Default::default(),
        }),
        primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::TriangleStrip, ..Default::default() },
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        multiview_mask: None,
        cache: None,
    })
}

pub(crate) fn instance_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(64),
        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_bounds_cover_both_caps() {
        let q = QuadInstance::segment(10.0, 20.0, 4.0, 2.0, 2.0, Color::rgb(1, 2, 3));
        assert_eq!(q.rect, [2.0, 0.0, 10.0, 22.0]);
        assert_eq!(q.params[3], 1.0);
    }

    #[test]
    fn shadow_bounds_cover_the_blur() {
        let q = QuadInstance::shadow(0.0, 0.0, 10.0, 10.0, 2.0, 4.0, Color::rgb(0, 0, 0));
        assert_eq!(q.rect, [-8.0, -8.0, 26.0, 26.0]);
        assert_eq!(q.params[2], 4.0);
    }
}
