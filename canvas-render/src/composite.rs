//! Frame composition into the final target (window surface or offscreen texture): the
//! dot-grid background, then one textured layer per cached node texture or content texture.

use std::collections::HashMap;

use crate::quad::{instance_buffer, uniform_entry};
use crate::scene::Color;

/// One textured layer placed in target pixels.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct LayerInstance {
    /// Destination rectangle (x, y, w, h) in target pixels.
    pub(crate) dst: [f32; 4],
    /// Source texture coordinates (u0, v0, u1, v1).
    pub(crate) uv: [f32; 4],
    /// (bottom-corner radius in pixels, unused, opacity, unused).
    pub(crate) params: [f32; 4],
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Globals {
    target_size: [f32; 2],
    srgb_out: f32,
    _pad: f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct BackgroundUniform {
    target_size: [f32; 2],
    offset: [f32; 2],
    zoom: f32,
    spacing: f32,
    srgb_out: f32,
    _pad: f32,
    bg: [f32; 4],
    dot: [f32; 4],
}

/// Camera and colours of the background grid for one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BackgroundParams {
    pub(crate) offset: [f32; 2],
    pub(crate) zoom: f32,
    pub(crate) spacing: f32,
    pub(crate) background: Color,
    pub(crate) dot: Color,
}

struct Pipelines {
    background: wgpu::RenderPipeline,
    layer: wgpu::RenderPipeline,
}

/// Pipelines (per target format), the shared sampler and the layer instance buffer.
pub(crate) struct Compositor {
    layer_shader: wgpu::ShaderModule,
    background_shader: wgpu::ShaderModule,
    globals_layout: wgpu::BindGroupLayout,
    texture_layout: wgpu::BindGroupLayout,
    background_layout: wgpu::BindGroupLayout,
    globals: wgpu::Buffer,
    globals_bind: wgpu::BindGroup,
    background_uniform: wgpu::Buffer,
    background_bind: wgpu::BindGroup,
    pipelines: HashMap<wgpu::TextureFormat, Pipelines>,
    instances: wgpu::Buffer,
    capacity: u64,
}

impl Compositor {
    /// Creates the format-independent state; pipelines are built on first use per format.
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let prelude = include_str!("shaders/srgb.wgsl");
        let layer_shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("composite shader"),
            source: wgpu::ShaderSource::Wgsl(format!("{prelude}\n{}", include_str!("shaders/composite.wgsl")).into()),
        });
        let background_shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("background shader"),
            source: wgpu::ShaderSource::Wgsl(format!("{prelude}\n{}", include_str!("shaders/background.wgsl")).into()),
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("layer sampler"),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let globals_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("composite globals layout"),
            entries: &[
                uniform_entry(0),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let texture_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("layer texture layout"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            }],
        });
        let background_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("background layout"),
            entries: &[uniform_entry(0)],
        });
        let globals = uniform_buffer(device, "composite globals", std::mem::size_of::<Globals>() as u64);
        let globals_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("composite globals"),
            layout: &globals_layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: globals.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&sampler) },
            ],
        });
        let background_uniform = uniform_buffer(device, "background uniform", std::mem::size_of::<BackgroundUniform>() as u64);
        let background_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("background"),
            layout: &background_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: background_uniform.as_entire_binding() }],
        });
        let capacity = 128;
        let instances = instance_buffer(device, "layer instances", capacity * std::mem::size_of::<LayerInstance>() as u64);
        Self {
            layer_shader,
            background_shader,
            globals_layout,
            texture_layout,
            background_layout,
            globals,
            globals_bind,
            background_uniform,
            background_bind,
            pipelines: HashMap::new(),
            instances,
            capacity,
        }
    }

    /// A bind group exposing `view` as a layer texture.
    pub(crate) fn bind_texture(&self, device: &wgpu::Device, view: &wgpu::TextureView, label: &str) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &self.texture_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(view) }],
        })
    }

    fn pipelines(&mut self, device: &wgpu::Device, format: wgpu::TextureFormat) -> &Pipelines {
        let Self { layer_shader, background_shader, globals_layout, texture_layout, background_layout, .. } = self;
        self.pipelines.entry(format).or_insert_with(|| {
            let layer_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("layer pipeline layout"),
                bind_group_layouts: &[Some(globals_layout), Some(texture_layout)],
                ..Default::default()
            });
            let bg_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("background pipeline layout"),
                bind_group_layouts: &[Some(background_layout)],
                ..Default::default()
            });
            let attributes = wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4, 2 => Float32x4];
            let layer = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("layer pipeline"),
                layout: Some(&layer_layout),
                vertex: wgpu::VertexState {
                    module: layer_shader,
                    entry_point: Some("vs_layer"),
                    buffers: &[Some(wgpu::VertexBufferLayout {
                        array_stride: std::mem::size_of::<LayerInstance>() as u64,
                        step_mode: wgpu::VertexStepMode::Instance,
                        attributes: &attributes,
                    })],
                    compilation_options: Default::default(),
                },
                fragment: Some(wgpu::FragmentState {
                    module: layer_shader,
                    entry_point: Some("fs_layer"),
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
            });
            let background = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("background pipeline"),
                layout: Some(&bg_layout),
                vertex: wgpu::VertexState {
                    module: background_shader,
                    entry_point: Some("vs_background"),
                    buffers: &[],
                    compilation_options: Default::default(),
                },
                fragment: Some(wgpu::FragmentState {
                    module: background_shader,
                    entry_point: Some("fs_background"),
                    targets: &[Some(wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })],
                    compilation_options: Default::default(),
                }),
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: None,
                multisample: wgpu::MultisampleState::default(),
                multiview_mask: None,
                cache: None,
            });
            Pipelines { background, layer }
        })
    }

    /// Records one render pass into `target`: background, then `layers` in order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn compose(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        format: wgpu::TextureFormat,
        size: (u32, u32),
        background: BackgroundParams,
        layers: &[(LayerInstance, &wgpu::BindGroup)],
    ) {
        let srgb_out = if format.is_srgb() { 1.0 } else { 0.0 };
        queue.write_buffer(
            &self.globals,
            0,
            bytemuck::bytes_of(&Globals { target_size: [size.0 as f32, size.1 as f32], srgb_out, _pad: 0.0 }),
        );
        queue.write_buffer(
            &self.background_uniform,
            0,
            bytemuck::bytes_of(&BackgroundUniform {
                target_size: [size.0 as f32, size.1 as f32],
                offset: background.offset,
                zoom: background.zoom,
                spacing: background.spacing,
                srgb_out,
                _pad: 0.0,
                bg: background.background.to_f32(),
                dot: background.dot.to_f32(),
            }),
        );
        if layers.len() as u64 > self.capacity {
            self.capacity = (layers.len() as u64).next_power_of_two();
            self.instances = instance_buffer(device, "layer instances", self.capacity * std::mem::size_of::<LayerInstance>() as u64);
        }
        let data: Vec<LayerInstance> = layers.iter().map(|(i, _)| *i).collect();
        if !data.is_empty() {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(&data));
        }
        self.pipelines(device, format);
        let Some(pipelines) = self.pipelines.get(&format) else { return };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("compose frame"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipelines.background);
        pass.set_bind_group(0, &self.background_bind, &[]);
        pass.draw(0..3, 0..1);
        if layers.is_empty() {
            return;
        }
        pass.set_pipeline(&pipelines.layer);
        pass.set_bind_group(0, &self.globals_bind, &[]);
        pass.set_vertex_buffer(0, self.instances.slice(..));
        for (i, (_, bind)) in layers.iter().enumerate() {
            pass.set_bind_group(1, *bind, &[]);
            pass.draw(0..4, i as u32..i as u32 + 1);
        }
    }
}

fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}
