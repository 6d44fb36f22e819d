//! Frame composition into the final target (window surface or offscreen texture): the
//! dot-grid background, then one textured layer per cached node texture or content texture.

use std::collections::HashMap;

use crate::color::Color;
use crate::geometry::Rect;
use crate::quad::{instance_buffer, uniform_entry};

/// One textured layer placed in target pixels.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct LayerInstance {
    /// Destination rectangle (x, y, w, h) in target pixels.
    pub(crate) dst: [f32; 4],
    /// Source texture coordinates (u0, v0, u1, v1).
    pub(crate) uv: [f32; 4],
    /// (bottom-corner radius in pixels, mode, opacity, unused). Modes: 0 blended; 1 opaque
    /// texels, drawn without blending; 2 composited over `backdrop` (opaque) in the shader,
    /// drawn without blending.
    pub(crate) params: [f32; 4],
    /// Rounded layers: the rectangle (x, y, w, h) whose bottom corners are rounded, the
    /// whole layer's even when it is drawn in pieces.
    pub(crate) shape: [f32; 4],
    /// Mode 2: the premultiplied opaque colour under the layer.
    pub(crate) backdrop: [f32; 4],
}

/// `LayerInstance::params[1]`: texels blended over what lies beneath.
const MODE_BLENDED: f32 = 0.0;
/// `LayerInstance::params[1]`: every texel opaque, drawn without blending.
const MODE_OPAQUE: f32 = 1.0;
/// `LayerInstance::params[1]`: composited over its own opaque backdrop colour.
const MODE_BACKDROP: f32 = 2.0;

impl LayerInstance {
    /// The whole texture in `dst`, nothing else.
    pub(crate) fn plain(dst: Rect) -> Self {
        let dst = [dst.x, dst.y, dst.w, dst.h];
        Self { dst, uv: [0.0, 0.0, 1.0, 1.0], params: [0.0, MODE_BLENDED, 1.0, 0.0], shape: dst, backdrop: [0.0; 4] }
    }

    /// The same texture mapping cut to the part of `dst` outside `hole` (whole pixels, inside
    /// `dst`): up to four pieces whose edges meet exactly, so every pixel outside the hole is
    /// drawn once, with the texels it had in the whole quad, and none inside it.
    pub(crate) fn around(self, hole: Rect) -> impl Iterator<Item = LayerInstance> {
        let [x, y, w, h] = self.dst;
        let (r, b) = (x + w, y + h);
        let pieces = [
            [x, y, r, hole.y],
            [x, hole.bottom(), r, b],
            [x, hole.y, hole.x, hole.bottom()],
            [hole.right(), hole.y, r, hole.bottom()],
        ];
        pieces.into_iter().filter(|p| p[2] > p[0] && p[3] > p[1]).map(move |p| self.cut(p))
    }

    /// The part of this layer inside `hole` (whole pixels, inside `dst`), marked opaque: the
    /// caller knows every texel there has full alpha, so it is drawn without blending (the
    /// same pixels, with no read of what lies beneath).
    pub(crate) fn opaque_within(self, hole: Rect) -> LayerInstance {
        let mut piece = self.cut([hole.x, hole.y, hole.right(), hole.bottom()]);
        piece.params[1] = MODE_OPAQUE;
        piece
    }

    /// The part of this layer inside `hole` (whole pixels, clear of its rounded corners and
    /// antialiased edges), composited over the opaque premultiplied `backdrop` in the shader
    /// and drawn without blending: the pixels it would give blended over that colour.
    pub(crate) fn over_backdrop_within(self, hole: Rect, backdrop: [f32; 4]) -> LayerInstance {
        let mut piece = self.cut([hole.x, hole.y, hole.right(), hole.bottom()]);
        piece.params[0] = 0.0;
        piece.params[1] = MODE_BACKDROP;
        piece.backdrop = backdrop;
        piece
    }

    /// The same texture mapping restricted to target pixels (x0, y0, x1, y1).
    fn cut(self, [x0, y0, x1, y1]: [f32; 4]) -> LayerInstance {
        let [x, y, w, h] = self.dst;
        let [u0, v0, u1, v1] = self.uv;
        let u = |px: f32| u0 + (px - x) / w * (u1 - u0);
        let v = |py: f32| v0 + (py - y) / h * (v1 - v0);
        LayerInstance { dst: [x0, y0, x1 - x0, y1 - y0], uv: [u(x0), v(y0), u(x1), v(y1)], ..self }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Globals {
    target_size: [f32; 2],
    _pad: [f32; 2],
}

/// Uniform of the dot-grid shader (layout mirrors `Grid` in shaders/background.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GridUniform {
    target_size: [f32; 2],
    offset: [f32; 2],
    zoom: f32,
    step: f32,
    radius: f32,
    fine_alpha: f32,
    coarse_mask: i32,
    _pad: [f32; 3],
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

/// On-screen dot spacing (pixels) below which the grid coarsens by a power of two, so dots
/// stay 14–28 px apart; the finer level in between fades out as it gets dense.
const MIN_DOT_GAP_PX: f32 = 14.0;

/// The dot lattice one frame draws: which rows of grid points can touch the target and how
/// strong their dots are. Planned on the CPU so the GPU shades only thin strips around the
/// visible rows of dots instead of evaluating the grid at every pixel of the screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DotGrid {
    /// Lattice index of the first row (a grid point is `index * step`).
    pub(crate) first_row: i32,
    /// Rows of lattice points drawn (one strip each).
    pub(crate) rows: u32,
    /// World distance between drawn points.
    pub(crate) step: f32,
    /// Dot radius in pixels (coverage fades over the half pixel beyond it).
    pub(crate) radius: f32,
    /// Strength of the finer level's own points (those with an odd index).
    pub(crate) fine_alpha: f32,
    /// Whether the lattice is the finer level (half the coarse spacing) or the coarse one.
    pub(crate) fine_level: bool,
}

impl DotGrid {
    /// Plans the lattice for `bg` on a `size` target; `None` when no dot would be visible
    /// (dots the colour of the background, degenerate camera, or coordinates too large to
    /// index). The level choice, radius and fade match the grid's look at every zoom.
    pub(crate) fn plan(bg: &BackgroundParams, size: (u32, u32)) -> Option<DotGrid> {
        let (zoom, spacing) = (bg.zoom, bg.spacing);
        if !(zoom.is_finite() && zoom > 0.0 && spacing.is_finite() && spacing > 0.0) || size.0 == 0 || size.1 == 0 {
            return None;
        }
        let (b, d) = (bg.background.to_f32(), bg.dot.to_f32());
        // Largest change a full-strength dot makes to a channel, in 8-bit steps.
        let contrast = (0..3).map(|i| (d[i] - b[i]).abs()).fold(0.0f32, f32::max) * 255.0 * d[3];
        if contrast < 0.5 {
            return None;
        }
        let k = (MIN_DOT_GAP_PX / (spacing * zoom)).log2().ceil().max(0.0);
        let coarse = spacing * k.exp2();
        let coarse_px = coarse * zoom;
        let radius = (1.1 * zoom).clamp(0.9, 1.8);
        let fine_alpha = ((coarse_px * 0.5 - MIN_DOT_GAP_PX * 0.5) / (MIN_DOT_GAP_PX * 0.5)).clamp(0.0, 1.0);
        // The finer level's own dots are drawn only when they would change a pixel's 8-bit
        // value; otherwise the coarse lattice alone gives the same image with 4× fewer dots.
        let fine_level = contrast * fine_alpha >= 0.5;
        let step = if fine_level { coarse * 0.5 } else { coarse };
        let reach = (radius + 0.5) / zoom;
        let span = |offset: f32, px: u32| -> Option<(i32, u32)> {
            let lo = ((offset - reach) / step).floor();
            let hi = ((offset + px as f32 / zoom + reach) / step).ceil();
            if !(lo.is_finite() && hi.is_finite()) || lo < i32::MIN as f32 || hi > i32::MAX as f32 || hi < lo {
                return None;
            }
            Some((lo as i32, (hi - lo) as u32 + 1))
        };
        // Columns are found per pixel by the shader, but must index within i32 there too.
        span(bg.offset[0], size.0)?;
        let (first_row, rows) = span(bg.offset[1], size.1)?;
        Some(DotGrid { first_row, rows, step, radius, fine_alpha, fine_level })
    }
}

/// One run of a dot row drawn as a strip: screen x from `x[0]` to `x[1]` on lattice row `row`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct DotSpan {
    pub(crate) x: [f32; 2],
    pub(crate) row: i32,
    _pad: i32,
}

impl DotGrid {
    /// The strips to draw: each visible row of dots across the target, minus the parts
    /// hidden under `occluders` (screen rectangles known to be painted opaque on top, e.g.
    /// node bodies), where shading dots would be wasted work.
    pub(crate) fn spans(&self, bg: &BackgroundParams, width: u32, occluders: &[Rect]) -> Vec<DotSpan> {
        let half = self.radius + 0.5;
        let mut spans = Vec::with_capacity(self.rows as usize * 2);
        let mut hidden: Vec<(f32, f32)> = Vec::new();
        for i in 0..self.rows {
            let Some(row) = self.first_row.checked_add(i as i32) else { break };
            let cy = (row as f32 * self.step - bg.offset[1]) * bg.zoom;
            let (top, bottom) = (cy - half, cy + half);
            hidden.clear();
            hidden.extend(
                occluders.iter().filter(|o| o.y <= top && o.bottom() >= bottom && o.w > 0.0).map(|o| (o.x, o.right())),
            );
            hidden.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut x = 0.0f32;
            for &(x0, x1) in &hidden {
                if x0 > x {
                    spans.push(DotSpan { x: [x, x0.min(width as f32)], row, _pad: 0 });
                }
                x = x.max(x1);
                if x >= width as f32 {
                    break;
                }
            }
            if x < width as f32 {
                spans.push(DotSpan { x: [x, width as f32], row, _pad: 0 });
            }
        }
        spans
    }
}

/// The pass's clear colour: the background, opaque, in the target's encoding (sRGB targets
/// take linear clear values and encode them on store).
fn clear_color(bg: Color, srgb: bool) -> wgpu::Color {
    let [r, g, b, _] = bg.to_f32().map(f64::from);
    let lin = |c: f64| if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) };
    if srgb {
        wgpu::Color { r: lin(r), g: lin(g), b: lin(b), a: 1.0 }
    } else {
        wgpu::Color { r, g, b, a: 1.0 }
    }
}

/// The pipelines for one target format. sRGB encoding and corner rounding are pipeline
/// constants so no pixel pays for a branch it does not take.
struct Pipelines {
    background: wgpu::RenderPipeline,
    /// Layers drawn as sampled (node textures).
    layer: wgpu::RenderPipeline,
    /// Layers with rounded bottom corners (content bodies).
    rounded: wgpu::RenderPipeline,
    /// Opaque layer pieces: drawn without blending.
    opaque: wgpu::RenderPipeline,
    /// Pieces composited over their own opaque backdrop colour, drawn without blending.
    backdrop: wgpu::RenderPipeline,
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
    spans: wgpu::Buffer,
    span_capacity: u64,
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
        let background_uniform =
            uniform_buffer(device, "background uniform", std::mem::size_of::<GridUniform>() as u64);
        let background_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("background"),
            layout: &background_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: background_uniform.as_entire_binding() }],
        });
        let capacity = 128;
        let instances =
            instance_buffer(device, "layer instances", capacity * std::mem::size_of::<LayerInstance>() as u64);
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
            spans: instance_buffer(device, "dot spans", 256 * std::mem::size_of::<DotSpan>() as u64),
            span_capacity: 256,
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
            let srgb = if format.is_srgb() { 1.0 } else { 0.0 };
            let attributes = wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4, 2 => Float32x4, 3 => Float32x4, 4 => Float32x4];
            let layer_pipeline = |label: &str, rounded: bool, backdrop: bool, blend: Option<wgpu::BlendState>| {
                let flag = |b: bool| if b { 1.0 } else { 0.0 };
                let constants = [("SRGB_OUT", srgb), ("ROUNDED", flag(rounded)), ("BACKDROP", flag(backdrop))];
                device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                    label: Some(label),
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
                            blend,
                            write_mask: wgpu::ColorWrites::ALL,
                        })],
                        compilation_options: wgpu::PipelineCompilationOptions { constants: &constants, ..Default::default() },
                    }),
                    primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::TriangleStrip, ..Default::default() },
                    depth_stencil: None,
                    multisample: wgpu::MultisampleState::default(),
                    multiview_mask: None,
                    cache: None,
                })
            };
            let premul = Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING);
            let layer = layer_pipeline("layer pipeline", false, false, premul);
            let rounded = layer_pipeline("rounded layer pipeline", true, false, premul);
            let opaque = layer_pipeline("opaque layer pipeline", false, false, None);
            let backdrop = layer_pipeline("backdrop layer pipeline", false, true, None);
            let background = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("background pipeline"),
                layout: Some(&bg_layout),
                vertex: wgpu::VertexState {
                    module: background_shader,
                    entry_point: Some("vs_dots"),
                    buffers: &[Some(wgpu::VertexBufferLayout {
                        array_stride: std::mem::size_of::<DotSpan>() as u64,
                        step_mode: wgpu::VertexStepMode::Instance,
                        attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Sint32],
                    })],
                    compilation_options: Default::default(),
                },
                fragment: Some(wgpu::FragmentState {
                    module: background_shader,
                    entry_point: Some("fs_dots"),
                    targets: &[Some(wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })],
                    compilation_options: wgpu::PipelineCompilationOptions { constants: &[("SRGB_OUT", srgb)], ..Default::default() },
                }),
                primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::TriangleStrip, ..Default::default() },
                depth_stencil: None,
                multisample: wgpu::MultisampleState::default(),
                multiview_mask: None,
                cache: None,
            });
            Pipelines { background, layer, rounded, opaque, backdrop }
        })
    }

    /// Records one render pass into `target`: the background (a clear plus the visible grid
    /// dots, skipping those under `occluders`, screen rectangles that `layers` paint
    /// opaque), then `layers` in order. With `regions`, only those target rectangles
    /// (whole pixels) are drawn, over what `target` holds, and nothing is cleared: the
    /// caller's first layer paints the background there.
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
        occluders: &[Rect],
        layers: &[(LayerInstance, &wgpu::BindGroup)],
        regions: &[Rect],
    ) {
        queue.write_buffer(
            &self.globals,
            0,
            bytemuck::bytes_of(&Globals { target_size: [size.0 as f32, size.1 as f32], _pad: [0.0; 2] }),
        );
        let grid = DotGrid::plan(&background, size);
        let spans = grid.map(|g| g.spans(&background, size.0, occluders)).unwrap_or_default();
        if let Some(g) = grid.filter(|_| !spans.is_empty()) {
            queue.write_buffer(
                &self.background_uniform,
                0,
                bytemuck::bytes_of(&GridUniform {
                    target_size: [size.0 as f32, size.1 as f32],
                    offset: background.offset,
                    zoom: background.zoom,
                    step: g.step,
                    radius: g.radius,
                    fine_alpha: g.fine_alpha,
                    coarse_mask: i32::from(g.fine_level),
                    _pad: [0.0; 3],
                    bg: background.background.to_f32(),
                    dot: background.dot.to_f32(),
                }),
            );
            if spans.len() as u64 > self.span_capacity {
                self.span_capacity = (spans.len() as u64).next_power_of_two();
                self.spans =
                    instance_buffer(device, "dot spans", self.span_capacity * std::mem::size_of::<DotSpan>() as u64);
            }
            queue.write_buffer(&self.spans, 0, bytemuck::cast_slice(&spans));
        }
        if layers.len() as u64 > self.capacity {
            self.capacity = (layers.len() as u64).next_power_of_two();
            self.instances =
                instance_buffer(device, "layer instances", self.capacity * std::mem::size_of::<LayerInstance>() as u64);
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
                ops: wgpu::Operations {
                    load: if regions.is_empty() {
                        wgpu::LoadOp::Clear(clear_color(background.background, format.is_srgb()))
                    } else {
                        wgpu::LoadOp::Load
                    },
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        let partial = !regions.is_empty();
        let whole = [Rect::new(0.0, 0.0, size.0 as f32, size.1 as f32)];
        for region in if partial { regions } else { &whole[..] } {
            if partial {
                let x = (region.x.max(0.0) as u32).min(size.0);
                let y = (region.y.max(0.0) as u32).min(size.1);
                let w = (region.right().max(0.0) as u32).min(size.0).saturating_sub(x);
                let h = (region.bottom().max(0.0) as u32).min(size.1).saturating_sub(y);
                if w == 0 || h == 0 {
                    continue;
                }
                pass.set_scissor_rect(x, y, w, h);
                // The first layer paints the background there, as the clear does for a whole frame.
                self.draw_layers(&mut pass, pipelines, layers, ..1);
            }
            // Over the background, only the dots are drawn.
            if !spans.is_empty() {
                pass.set_pipeline(&pipelines.background);
                pass.set_bind_group(0, &self.background_bind, &[]);
                pass.set_vertex_buffer(0, self.spans.slice(..));
                pass.draw(0..4, 0..spans.len() as u32);
            }
            self.draw_layers(&mut pass, pipelines, layers, if partial { 1.. } else { 0.. });
        }
    }

    /// Draws `layers[range]` (instances already uploaded at their indices).
    fn draw_layers(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        pipelines: &Pipelines,
        layers: &[(LayerInstance, &wgpu::BindGroup)],
        range: impl std::ops::RangeBounds<usize>,
    ) {
        if layers.is_empty() {
            return;
        }
        pass.set_bind_group(0, &self.globals_bind, &[]);
        pass.set_vertex_buffer(0, self.instances.slice(..));
        let mut current = None;
        for (i, (instance, bind)) in layers.iter().enumerate().filter(|(i, _)| range.contains(i)) {
            let kind = if instance.params[1] == MODE_BACKDROP {
                0
            } else if instance.params[0] > 0.0 {
                1
            } else if instance.params[1] == MODE_OPAQUE {
                2
            } else {
                3
            };
            if current != Some(kind) {
                pass.set_pipeline([&pipelines.backdrop, &pipelines.rounded, &pipelines.opaque, &pipelines.layer][kind]);
                current = Some(kind);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::Theme;

    fn params(zoom: f32, offset: [f32; 2]) -> BackgroundParams {
        let t = Theme::default();
        BackgroundParams { offset, zoom, spacing: t.grid_spacing, background: t.canvas, dot: t.grid_dot }
    }

    #[test]
    fn rows_cover_every_dot_that_touches_the_target() {
        for (zoom, offset) in
            [(1.0, [0.0, 0.0]), (0.586, [-37.5, 812.25]), (0.1, [-5000.0, -4000.0]), (4.0, [123.4, -56.7])]
        {
            let p = params(zoom, offset);
            let g = DotGrid::plan(&p, (1920, 1080)).expect("visible grid");
            let reach = (g.radius + 0.5) / zoom;
            let y0 = g.first_row as f32 * g.step;
            let y1 = y0 + (g.rows - 1) as f32 * g.step;
            assert!(y0 <= offset[1] - reach, "zoom {zoom}: first row inside the view");
            assert!(y1 >= offset[1] + 1080.0 / zoom + reach, "zoom {zoom}: last row inside the view");
            // Drawn rows never get denser than 7 px on screen, so the strips cover a small
            // part of the target.
            assert!(g.step * zoom >= 7.0 - 1e-3, "zoom {zoom}: {} px apart", g.step * zoom);
            assert!(g.rows <= 1080 / 7 + 3, "zoom {zoom}: {} rows", g.rows);
        }
    }

    #[test]
    fn levels_and_fade_follow_the_zoom() {
        // 24 px apart at zoom 1: the half-spacing level is drawn, partly faded.
        let g = DotGrid::plan(&params(1.0, [0.0, 0.0]), (100, 100)).expect("grid");
        assert!(g.fine_level);
        assert_eq!(g.step, 12.0);
        assert!((g.fine_alpha - 5.0 / 7.0).abs() < 1e-6);
        // At 0.586 the finer level is too faint to change an 8-bit pixel: coarse dots only.
        let g = DotGrid::plan(&params(0.586, [0.0, 0.0]), (100, 100)).expect("grid");
        assert!(!g.fine_level);
        assert_eq!(g.step, 24.0);
        // Zoomed far out the grid coarsens by powers of two.
        let g = DotGrid::plan(&params(0.1, [0.0, 0.0]), (100, 100)).expect("grid");
        assert_eq!(g.step, 24.0 * 8.0 / 2.0);
        assert!((g.radius - 0.9).abs() < 1e-6);
    }

    #[test]
    fn spans_skip_rows_under_opaque_occluders() {
        let p = params(1.0, [0.0, 0.0]);
        let g = DotGrid::plan(&p, (200, 100)).expect("grid");
        let all = g.spans(&p, 200, &[]);
        assert_eq!(all.len(), g.rows as usize, "one full-width strip per row without occluders");
        assert!(all.iter().all(|s| s.x == [0.0, 200.0]));
        // Rows 2..=4 (y 24, 36, 48) lie fully inside the occluder; rows touching its edge do not.
        let occluder = Rect::new(50.0, 20.0, 60.0, 31.0);
        let cut = g.spans(&p, 200, &[occluder, Rect::new(90.0, -20.0, 150.0, 150.0)]);
        for s in &cut {
            assert!(s.x[0] < s.x[1] && s.x[1] <= 200.0, "{s:?}");
            let y = s.row as f32 * g.step;
            if (24.0..=48.0).contains(&y) {
                assert!(s.x == [0.0, 50.0], "row at y {y} is cut by both occluders: {s:?}");
            } else {
                assert!(s.x == [0.0, 90.0], "row at y {y} is cut only by the tall occluder: {s:?}");
            }
        }
        assert_eq!(cut.len(), g.rows as usize);
    }

    #[test]
    fn pieces_around_a_hole_tile_the_rest_of_the_quad_with_the_same_texels() {
        let layer =
            LayerInstance { uv: [0.1, 0.2, 0.9, 0.8], ..LayerInstance::plain(Rect::new(10.5, 20.25, 100.0, 60.0)) };
        let hole = Rect::new(30.0, 40.0, 50.0, 20.0);
        let pieces: Vec<LayerInstance> = layer.around(hole).collect();
        assert_eq!(pieces.len(), 4);
        let area: f32 = pieces.iter().map(|p| p.dst[2] * p.dst[3]).sum();
        assert!((area - (100.0 * 60.0 - 50.0 * 20.0)).abs() < 1e-2, "area {area}");
        // Each piece maps its corners to the texels the whole quad had there.
        let u = |x: f32| 0.1 + (x - 10.5) / 100.0 * 0.8;
        let v = |y: f32| 0.2 + (y - 20.25) / 60.0 * 0.6;
        for p in &pieces {
            let [x, y, w, h] = p.dst;
            assert!((p.uv[0] - u(x)).abs() < 1e-6 && (p.uv[2] - u(x + w)).abs() < 1e-6, "{p:?}");
            assert!((p.uv[1] - v(y)).abs() < 1e-6 && (p.uv[3] - v(y + h)).abs() < 1e-6, "{p:?}");
            // No piece overlaps the hole.
            assert!(x + w <= hole.x || x >= hole.right() || y + h <= hole.y || y >= hole.bottom(), "{p:?}");
        }
    }

    #[test]
    fn invisible_or_degenerate_grids_draw_nothing() {
        let mut p = params(1.0, [0.0, 0.0]);
        p.dot = p.background;
        assert_eq!(DotGrid::plan(&p, (100, 100)), None, "dots the colour of the background");
        assert_eq!(DotGrid::plan(&params(f32::NAN, [0.0, 0.0]), (100, 100)), None);
        assert_eq!(DotGrid::plan(&params(1.0, [0.0, 0.0]), (0, 100)), None);
        assert_eq!(DotGrid::plan(&params(1.0, [1e12, 0.0]), (100, 100)), None, "indices past i32");
    }

    #[test]
    fn clear_colour_is_encoded_for_srgb_targets() {
        let c = clear_color(Color::rgb(255, 0, 188), false);
        assert_eq!((c.r, c.g, c.a), (1.0, 0.0, 1.0));
        assert!((c.b - 188.0 / 255.0).abs() < 1e-6);
        let s = clear_color(Color::rgb(188, 0, 255), true);
        assert!((s.r - 0.5029).abs() < 1e-3 && s.g == 0.0 && s.b == 1.0);
    }
}
