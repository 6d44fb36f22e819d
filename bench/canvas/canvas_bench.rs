//! Canvas compositing benchmark (not a test; run through `bench/canvas/run`).
//!
//! `canvas-bench frames BASE_URL [FRAMES]`: a canvas of 30 nodes — 4 live
//! browsers on an animating page, 6 on a static page, 20 sticky notes —
//! fitted into a 1920×1080 off-screen target and composited back to back by
//! the app's renderer (browser frame uploads included), against a minimal
//! wgpu program compositing 30 textured quads of the same on-screen sizes on
//! the same device, uploading 4 textures of the animated views' sizes each
//! frame. Both run in the same process while the browsers keep animating
//! (CEF is pumped during both). Prints median and p99 of each, and the ratio.
//!
//! `canvas-bench fixture DATA_DIR PROJECT_DIR BASE_URL`: writes a static
//! canvas (6 static pages, 20 notes) for the idle-CPU measurement of the
//! windowed app.

#[path = "../bench_main.rs"]
mod bench_main;
use bench_main::stats;

use anyhow::{bail, Context, Result};
use canvas_render::{wgpu, Camera, RenderTarget, Vec2};
use std::path::Path;
use std::time::{Duration, Instant};
use termsprawl::model::{self, Command, Node, NodeId, NodeKind, Project, ProjectId, Rect, Workspace};
use termsprawl::runtime::{headless, scene::Gfx, RuntimeConfig, Waker};

const TARGET: (u32, u32) = (1920, 1080);
const NODE: (f64, f64) = (480.0, 320.0);
const COLS: usize = 6;

fn layout(base: &str) -> Vec<Node> {
    let mut nodes = vec![];
    for i in 0..30 {
        let rect = Rect::new((i % COLS) as f64 * (NODE.0 + 40.0), (i / COLS) as f64 * (NODE.1 + 40.0), NODE.0, NODE.1);
        let (kind, title) = match i {
            0..=3 => (NodeKind::browser(&format!("{base}animated.html")).expect("valid url"), format!("animated {i}")),
            4..=9 => (NodeKind::browser(&format!("{base}static.html")).expect("valid url"), format!("static {i}")),
            _ => (
                NodeKind::Sticky {
                    text: format!(
                        "Note {i}\nA static sticky note with a few lines of text\nso the cached texture has glyphs."
                    ),
                },
                format!("note {i}"),
            ),
        };
        nodes.push(Node {
            id: NodeId::new(format!("n{i}")).expect("valid id"),
            kind,
            title,
            name: None,
            rect,
            z: i as i64,
            colour: None,
            links: Default::default(),
        });
    }
    nodes
}

fn fitted_camera(nodes: &[Node]) -> Camera {
    let rects: Vec<canvas_render::Rect> =
        nodes.iter().map(|n| termsprawl::runtime::scene::render_rect(&n.rect)).collect();
    let mut cam = Camera::default();
    cam.fit_all(&rects, Vec2::new(TARGET.0 as f32, TARGET.1 as f32), 24.0);
    cam
}

fn write_fixture(data: &Path, folder: &Path, base: &str) -> Result<()> {
    std::fs::create_dir_all(data)?;
    std::fs::create_dir_all(folder)?;
    // The idle canvas: the static part only (no animation anywhere).
    let nodes: Vec<Node> = layout(base).into_iter().skip(4).collect();
    let cam = fitted_camera(&nodes);
    let camera = model::Camera { x: f64::from(cam.offset.x), y: f64::from(cam.offset.y), zoom: f64::from(cam.zoom()) };
    // Where the drag phase grabs a sticky: a point on the title bar of the
    // left-most, then top-most sticky (n12: the window, smaller than the
    // fitted target, shows the canvas's top-left part), in window pixels.
    let sticky = nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Sticky { .. }))
        .min_by(|a, b| (a.rect.x, a.rect.y).partial_cmp(&(b.rect.x, b.rect.y)).expect("finite coordinates"))
        .expect("the layout has stickies");
    let grab = cam.world_to_screen(Vec2::new(sticky.rect.x as f32 + 60.0, sticky.rect.y as f32 + 10.0));
    println!("drag-from {} {}", grab.x.round(), grab.y.round());
    let (project, _) = Project::from_nodes(ProjectId::new("bench")?, "bench", folder, camera, nodes, 40)?;
    model::persist::save_layout(&project, None)?;
    let ws = Workspace::from_projects(vec![project], Some(ProjectId::new("bench")?))?;
    model::persist::save_workspace(data, &ws, None)?;
    Ok(())
}

/// The minimal compositor: one textured-quad pipeline, one bind group per texture.
struct Baseline {
    pipeline: wgpu::RenderPipeline,
    vertices: wgpu::Buffer,
    textures: Vec<(wgpu::Texture, wgpu::BindGroup)>,
}

const SHADER: &str = r#"
struct V { @location(0) pos: vec2<f32>, @location(1) uv: vec2<f32> };
struct O { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@vertex fn vs(v: V) -> O { var o: O; o.pos = vec4<f32>(v.pos, 0.0, 1.0); o.uv = v.uv; return o; }
@fragment fn fs(i: O) -> @location(0) vec4<f32> { return textureSample(t, s, i.uv); }
"#;

impl Baseline {
    fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        format: wgpu::TextureFormat,
        quads: &[canvas_render::Rect],
        tex_sizes: &[(u32, u32)],
    ) -> Baseline {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("baseline"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("baseline"),
            layout: Some(&pl),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 16,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x2],
                })],
            },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            multiview_mask: None,
            cache: None,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let mut verts: Vec<f32> = vec![];
        let (tw, th) = (TARGET.0 as f32, TARGET.1 as f32);
        for q in quads {
            let (x0, y0, x1, y1) = (
                q.x / tw * 2.0 - 1.0,
                1.0 - q.y / th * 2.0,
                (q.x + q.w) / tw * 2.0 - 1.0,
                1.0 - (q.y + q.h) / th * 2.0,
            );
            for (x, y, u, v) in [
                (x0, y0, 0.0, 0.0),
                (x1, y0, 1.0, 0.0),
                (x0, y1, 0.0, 1.0),
                (x0, y1, 0.0, 1.0),
                (x1, y0, 1.0, 0.0),
                (x1, y1, 1.0, 1.0),
            ] {
                verts.extend([x, y, u, v]);
            }
        }
        let bytes: Vec<u8> = verts.iter().flat_map(|f| f.to_le_bytes()).collect();
        let vertices = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes.len() as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&vertices, 0, &bytes);
        let textures = tex_sizes
            .iter()
            .map(|&(w, h)| {
                let tex = device.create_texture(&wgpu::TextureDescriptor {
                    label: None,
                    size: wgpu::Extent3d { width: w.max(1), height: h.max(1), depth_or_array_layers: 1 },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format: wgpu::TextureFormat::Bgra8Unorm,
                    usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                    view_formats: &[],
                });
                let view = tex.create_view(&Default::default());
                let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
                        wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&sampler) },
                    ],
                });
                (tex, bg)
            })
            .collect();
        Baseline { pipeline, vertices, textures }
    }

    fn frame(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        target: &wgpu::TextureView,
        uploads: usize,
        pixels: &[u8],
    ) {
        for (tex, _) in self.textures.iter().take(uploads) {
            let (w, h) = (tex.width(), tex.height());
            let n = (w * h * 4) as usize;
            queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: tex,
                    mip_level: 0,
                    origin: wgpu::Origin3d::ZERO,
                    aspect: wgpu::TextureAspect::All,
                },
                &pixels[..n],
                wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(w * 4), rows_per_image: Some(h) },
                wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
            );
        }
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r: 0.08, g: 0.09, b: 0.1, a: 1.0 }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_vertex_buffer(0, self.vertices.slice(..));
            for (i, (_, bg)) in self.textures.iter().enumerate() {
                pass.set_bind_group(0, bg, &[]);
                let first = (i * 6) as u32;
                pass.draw(first..first + 6, 0..1);
            }
        }
        queue.submit([enc.finish()]);
    }
}

fn frames(base: &str, count: usize) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let folder = dir.path().join("project");
    std::fs::create_dir_all(&folder)?;
    let config =
        RuntimeConfig { data_dir: data, project: Some(folder), browser_control: false, views_follow_zoom: true };
    let waker = Waker::new();
    let mut rt = headless::start_runtime(config, cef_bridge::DisplayMode::Headless, waker.clone(), None)?;
    let nodes = layout(base);
    let camera = fitted_camera(&nodes);
    // Fit first, so browsers are created at their displayed size.
    rt.apply(Command::SetCamera {
        camera: model::Camera {
            x: f64::from(camera.offset.x),
            y: f64::from(camera.offset.y),
            zoom: f64::from(camera.zoom()),
        },
    })?;
    for n in &nodes {
        rt.apply(Command::AddNode { node: n.clone() })?;
    }
    rt.set_gfx(Some(Gfx::headless().map_err(|e| anyhow::anyhow!("GPU: {e}"))?));
    // Every page is drawn: none is a background tab.
    rt.keep_pages_live(true);
    if !rt.run_until(&waker, Duration::from_secs(90), |rt| rt.browsers().settled(Duration::from_millis(500))) {
        bail!("the pages did not load within 90 s");
    }
    let gfx = rt.take_gfx().context("GPU gone")?;
    let device = gfx.gpu.device.clone();
    let queue = gfx.gpu.queue.clone();
    rt.set_gfx(Some(gfx));
    let format = bench_main::TARGET_FORMAT;
    let (target, view) = bench_main::render_target(&device, TARGET, "bench target");
    let wait = |device: &wgpu::Device| {
        device
            .poll(wgpu::PollType::Wait { submission_index: None, timeout: None })
            .map(|_| ())
            .map_err(|e| anyhow::anyhow!("poll: {e}"))
    };

    // The app's frames, as the window draws them: a frame is drawn only when a
    // browser painted (an idle canvas draws none), from the last frame where only
    // page content changed (Reuse::CopyInto, as for a window surface). Then the same
    // frames drawn whole every time (Reuse::Nothing), the cost without reuse.
    let mut app_ms = vec![];
    let mut whole_ms = vec![];
    let mut kinds = [0usize; 3];
    let mut pages_per_frame = 0usize;
    // upload, scene, render (CPU: record + submit), GPU wait
    let mut parts: [Vec<f64>; 4] = Default::default();
    for (reuse_frames, samples) in [(true, &mut app_ms), (false, &mut whole_ms)] {
        let mut i = 0;
        let deadline = Instant::now() + Duration::from_secs(120);
        while i < count + 20 {
            if Instant::now() > deadline {
                bail!("the animating pages painted only {i} frames in 120 s");
            }
            rt.tick();
            let t = Instant::now();
            let mut gfx = rt.take_gfx().context("GPU gone")?;
            let uploaded = rt.upload_frames(&mut gfx.renderer, false);
            if uploaded == 0 {
                rt.set_gfx(Some(gfx));
                std::thread::sleep(Duration::from_micros(500));
                continue;
            }
            let t_upload = t.elapsed();
            let scene = rt.scene();
            let t_scene = t.elapsed();
            let reuse =
                if reuse_frames { canvas_render::Reuse::CopyInto(&target) } else { canvas_render::Reuse::Nothing };
            let r = gfx.renderer.render(
                &scene,
                &camera,
                RenderTarget { view: &view, format, width: TARGET.0, height: TARGET.1, reuse },
            );
            let t_record = t.elapsed();
            wait(&device)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            rt.set_gfx(Some(gfx));
            let stats = r.map_err(|e| anyhow::anyhow!("render: {e}"))?;
            if i >= 20 {
                samples.push(ms);
                if reuse_frames {
                    pages_per_frame += uploaded;
                    kinds[match stats.reused {
                        canvas_render::FrameReuse::None => 0,
                        canvas_render::FrameReuse::Regions(_) => 1,
                        canvas_render::FrameReuse::Whole => 2,
                    }] += 1;
                    parts[0].push(t_upload.as_secs_f64() * 1e3);
                    parts[1].push((t_scene - t_upload).as_secs_f64() * 1e3);
                    parts[2].push((t_record - t_scene).as_secs_f64() * 1e3);
                    parts[3].push((t.elapsed() - t_record).as_secs_f64() * 1e3);
                }
            }
            i += 1;
        }
    }

    // Where the app's GPU time goes: the dot-grid background alone (an empty scene).
    let mut bg_ms = vec![];
    for i in 0..count.min(100) + 10 {
        rt.tick();
        let mut gfx = rt.take_gfx().context("GPU gone")?;
        let t = Instant::now();
        let r = gfx.renderer.render(
            &canvas_render::Scene::default(),
            &camera,
            RenderTarget {
                view: &view,
                format,
                width: TARGET.0,
                height: TARGET.1,
                reuse: canvas_render::Reuse::Nothing,
            },
        );
        wait(&device)?;
        if i >= 10 {
            bg_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        rt.set_gfx(Some(gfx));
        r.map_err(|e| anyhow::anyhow!("render: {e}"))?;
    }

    // Same on-screen sizes; the four animated views' texture sizes for the per-frame uploads.
    let quads: Vec<canvas_render::Rect> =
        nodes.iter().map(|n| camera.world_rect_to_screen(termsprawl::runtime::scene::render_rect(&n.rect))).collect();
    let mut sizes: Vec<(u32, u32)> = quads.iter().map(|q| (q.w.round() as u32, q.h.round() as u32)).collect();
    for (i, n) in nodes.iter().enumerate().take(4) {
        if let Some((_, b)) = rt.browsers().for_node(&n.id) {
            // Frames come in device pixels: the CSS view times its scale.
            let ((w, h), scale) = (b.view_size(), b.scale());
            sizes[i] = ((w as f32 * scale).round() as u32, (h as f32 * scale).round() as u32);
        }
    }
    let baseline = Baseline::new(&device, &queue, format, &quads, &sizes);
    let max = sizes.iter().map(|(w, h)| (w * h * 4) as usize).max().unwrap_or(0);
    let mut pixels = vec![0u8; max];
    let mut base_ms = vec![];
    for i in 0..count + 20 {
        rt.tick();
        pixels.iter_mut().step_by(7).for_each(|p| *p = p.wrapping_add(1));
        let t = Instant::now();
        baseline.frame(&device, &queue, &view, 4, &pixels);
        wait(&device)?;
        if i >= 20 {
            base_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let info = rt.gfx().map(|g| g.gpu.describe()).unwrap_or_default();
    let (am, ap) = stats(app_ms);
    let (wm, wp) = stats(whole_ms);
    let (bm, bp) = stats(base_ms);
    println!("adapter: {info}; target {}x{}; zoom {:.3}; {count} frames each", TARGET.0, TARGET.1, camera.zoom());
    println!(
        "app canvas (30 nodes, 4 animating browsers), frames drawn when pages paint: median {am:.2} ms, p99 {ap:.2} ms ({:.1} pages per frame; {} whole, {} regions, {} unchanged)",
        pages_per_frame as f64 / count.max(1) as f64,
        kinds[0],
        kinds[1],
        kinds[2]
    );
    println!("  the same frames drawn whole (no reuse): median {wm:.2} ms, p99 {wp:.2} ms (ratio {:.2}x)", wm / bm);
    println!("minimal wgpu (30 textured quads, 4 uploads/frame): median {bm:.2} ms, p99 {bp:.2} ms");
    let med: Vec<f64> = parts.into_iter().map(|p| stats(p).0).collect();
    println!(
        "  app medians by part: upload {:.2} ms, scene {:.2} ms, render {:.2} ms, GPU wait {:.2} ms",
        med[0], med[1], med[2], med[3]
    );
    println!("  app background alone (dot grid, no nodes): median {:.2} ms", stats(bg_ms).0);
    println!("ratio (median app / median baseline): {:.2}x; p99 ratio {:.2}x", am / bm, ap / bp);
    rt.shutdown();
    Ok(())
}

fn main() -> std::process::ExitCode {
    bench_main::run("canvas-bench", |args| match args.get(1).map(String::as_str) {
        Some("frames") if args.len() >= 3 => frames(&args[2], args.get(3).and_then(|n| n.parse().ok()).unwrap_or(300)),
        Some("fixture") if args.len() == 5 => write_fixture(Path::new(&args[2]), Path::new(&args[3]), &args[4]),
        _ => Err(anyhow::anyhow!(
            "usage: canvas-bench frames BASE_URL [FRAMES] | canvas-bench fixture DATA_DIR PROJECT_DIR BASE_URL"
        )),
    })
}
