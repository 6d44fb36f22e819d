//! The canvas renderer: per-node cached textures re-rendered only when their inputs change,
//! composited with the camera into a window surface or an offscreen texture.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use cosmic_text::FontSystem;

use crate::camera::Camera;
use crate::cells::{build_grid_instances, CellPipeline, GridColors, GridLayout};
use crate::chrome::{body_color, body_rect, build_chrome, content_rect, opaque_rects, texture_size};
use crate::composite::{BackgroundParams, Compositor, LayerInstance};
use crate::content::{ContentStore, DirtyRect};
use crate::error::{RenderError, Result};
use crate::geometry::{Rect, Vec2};
use crate::glyphs::{AtlasFull, CellMetrics, GlyphAtlas, TerminalFaces, TerminalFont};
use crate::gpu::Gpu;
use crate::image::{read_texture, RgbaImage};
use crate::quad::QuadPipeline;
use crate::scene::{ContentKey, NodeContent, NodeId, NodeView, Scene};
use crate::text::TextSystem;
use crate::theme::Theme;

/// Format of the cached node textures (premultiplied alpha holding sRGB values).
const NODE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// Raster scales are powers of this step, so zooming re-rasterizes only at each step.
const SCALE_STEPS_PER_OCTAVE: f32 = 4.0;

/// Renderer settings fixed at creation (fonts can be changed later).
#[derive(Debug, Clone, PartialEq)]
pub struct RendererConfig {
    /// Terminal font (family + size); the embedded Hack is used when the family is missing.
    pub terminal_font: TerminalFont,
    /// Family for titles, badges and notes ("DejaVu Sans" ships in fonts-dejavu-core).
    pub ui_font_family: String,
    /// Load the system's fonts (CJK and other fallbacks). Off gives a reproducible font set:
    /// only the embedded Hack and Ubuntu Light, plus `extra_font_files`.
    pub load_system_fonts: bool,
    /// Additional font files to load (e.g. a bundled UI font).
    pub extra_font_files: Vec<std::path::PathBuf>,
    /// Largest side of a cached node texture; larger nodes are rasterized at a lower scale.
    pub max_node_texture_px: u32,
    /// When cached node textures exceed this many bytes, those of off-screen nodes are dropped.
    pub cache_budget_bytes: u64,
    /// Colours and dimensions.
    pub theme: Theme,
}

impl Default for RendererConfig {
    fn default() -> Self {
        Self {
            terminal_font: TerminalFont::default(),
            ui_font_family: "DejaVu Sans".into(),
            load_system_fonts: true,
            extra_font_files: Vec::new(),
            max_node_texture_px: 4096,
            cache_budget_bytes: 768 << 20,
            theme: Theme::default(),
        }
    }
}

/// Where a frame goes: a view of the surface texture (or any render-attachment texture).
#[derive(Debug, Clone, Copy)]
pub struct RenderTarget<'a> {
    /// The view to draw into.
    pub view: &'a wgpu::TextureView,
    /// Its format (sRGB and linear formats both give the same visible colours).
    pub format: wgpu::TextureFormat,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Whether the frame may be drawn from the previous one.
    pub reuse: Reuse<'a>,
}

/// How much of the previous frame a render may keep.
#[derive(Debug, Clone, Copy)]
pub enum Reuse<'a> {
    /// Nothing: the whole frame is drawn (one-off pictures).
    Nothing,
    /// The renderer keeps the frame in a texture of its own, redraws there only the
    /// regions whose content changed since (when nothing else did), and copies it
    /// into this texture, which must be the target's and have `COPY_DST` usage: a
    /// window's frames while pages animate.
    CopyInto(&'a wgpu::Texture),
}

/// The frame the renderer keeps for [`Reuse::CopyInto`].
struct KeptFrame {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    /// [`frame_signature`] of what it shows (everything but content pixels); `None`
    /// until drawn.
    layout: Option<u64>,
}

/// How one frame is drawn.
#[derive(Debug, Clone, PartialEq)]
enum Draw {
    /// Everything, from a clear.
    Full,
    /// Only these target regions (whole pixels) over the kept frame.
    Regions(Vec<Rect>),
    /// Nothing changed: the kept frame is the frame.
    Nothing,
}

/// Above this share of the target, redrawing regions is no cheaper than a full frame.
const MAX_PARTIAL_SHARE: f32 = 0.6;

/// What one `render` call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// Nodes in the scene.
    pub nodes_total: usize,
    /// Nodes intersecting the viewport (composited this frame).
    pub nodes_visible: usize,
    /// Node textures rendered again because their inputs changed (or first seen, or rescaled).
    pub nodes_rerendered: usize,
    /// Cached node textures dropped (node left the scene, or off-screen over the budget).
    pub nodes_evicted: usize,
    /// Terminal glyphs rasterized into the atlas this frame.
    pub glyphs_rasterized: u64,
    /// Bytes held by cached node textures after the frame.
    pub cache_bytes: u64,
    /// How much of the previous frame was kept.
    pub reused: FrameReuse,
}

/// How much of the previous frame one render kept ([`Reuse::CopyInto`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FrameReuse {
    /// None: the whole frame was drawn.
    #[default]
    None,
    /// All but this many regions, where content changed, were kept.
    Regions(usize),
    /// All of it: nothing changed since.
    Whole,
}

struct NodeCache {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    bind_group: wgpu::BindGroup,
    scale: f32,
    signature: u64,
}

/// Draws scenes. Owns the GPU pipelines, fonts, glyph atlases and every per-node cache.
pub struct Renderer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    config: RendererConfig,
    font_system: FontSystem,
    text: TextSystem,
    quads: QuadPipeline,
    cells: CellPipeline,
    atlas: GlyphAtlas,
    faces: TerminalFaces,
    compositor: Compositor,
    content: ContentStore,
    nodes: HashMap<NodeId, NodeCache>,
    last_frame: Option<u64>,
    content_changed: bool,
    overlay: Vec<NodeView>,
    overlay_changed: bool,
    /// Target pixels per overlay unit (the window's HiDPI scale).
    overlay_scale: f32,
    /// 1×1 textures of flat colours (links, the background under redrawn regions).
    solids: HashMap<crate::color::Color, (wgpu::Texture, wgpu::BindGroup)>,
    /// The last frame drawn for [`Reuse::CopyInto`].
    kept: Option<KeptFrame>,
}

impl Renderer {
    /// Creates a renderer drawing with `gpu`'s device.
    pub fn new(gpu: &Gpu, config: RendererConfig) -> Result<Renderer> {
        let (device, queue) = (gpu.device.clone(), gpu.queue.clone());
        let mut font_system =
            if config.load_system_fonts { FontSystem::new() } else { FontSystem::new_with_fonts(std::iter::empty()) };
        {
            let db = font_system.db_mut();
            db.load_font_data(epaint_default_fonts::HACK_REGULAR.to_vec());
            db.load_font_data(epaint_default_fonts::UBUNTU_LIGHT.to_vec());
            for path in &config.extra_font_files {
                if let Err(e) = db.load_font_file(path) {
                    tracing::warn!(path = %path.display(), "could not load font file: {e}");
                }
            }
        }
        let faces = TerminalFaces::new(&mut font_system, config.terminal_font.clone());
        tracing::debug!(family = faces.resolved_family(), "terminal font resolved");
        let text = TextSystem::new(&device, &queue, NODE_FORMAT, config.ui_font_family.clone());
        let quads = QuadPipeline::new(&device, NODE_FORMAT);
        let atlas = GlyphAtlas::new(&device);
        let cells = CellPipeline::new(&device, NODE_FORMAT, atlas.view());
        let compositor = Compositor::new(&device);
        Ok(Renderer {
            device,
            queue,
            config,
            font_system,
            text,
            quads,
            cells,
            atlas,
            faces,
            compositor,
            content: ContentStore::default(),
            nodes: HashMap::new(),
            last_frame: None,
            content_changed: false,
            overlay: Vec::new(),
            overlay_changed: false,
            overlay_scale: 1.0,
            solids: HashMap::new(),
            kept: None,
        })
    }

    /// The kept frame for `target`, made for its size and format if there is none.
    fn kept_or_new(&mut self, target: &RenderTarget<'_>) -> &KeptFrame {
        let device = &self.device;
        self.kept.get_or_insert_with(|| {
            let texture = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("kept frame"),
                size: wgpu::Extent3d { width: target.width, height: target.height, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: target.format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            });
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            KeptFrame { texture, view, layout: None }
        })
    }

    /// Makes a 1×1 texture of `colour` (premultiplied, as node textures are) unless one exists.
    fn ensure_solid(&mut self, colour: crate::color::Color) {
        let (device, queue, compositor) = (&self.device, &self.queue, &self.compositor);
        self.solids.entry(colour).or_insert_with(|| {
            let texture = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("flat colour"),
                size: wgpu::Extent3d { width: 1, height: 1, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: NODE_FORMAT,
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            });
            let a = u16::from(colour.a);
            let premultiplied = [colour.r, colour.g, colour.b].map(|c| (u16::from(c) * a / 255) as u8);
            queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: &texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d::ZERO,
                    aspect: wgpu::TextureAspect::All,
                },
                &[premultiplied[0], premultiplied[1], premultiplied[2], colour.a],
                wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(4), rows_per_image: Some(1) },
                wgpu::Extent3d { width: 1, height: 1, depth_or_array_layers: 1 },
            );
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            let bind = compositor.bind_texture(device, &view, "flat colour");
            (texture, bind)
        });
    }

    /// The active theme.
    pub fn theme(&self) -> &Theme {
        &self.config.theme
    }

    /// Replaces the theme (every node is re-rendered on the next frame).
    pub fn set_theme(&mut self, theme: Theme) {
        self.config.theme = theme;
        self.invalidate();
    }

    /// Sets the byte budget above which off-screen node textures are dropped.
    pub fn set_cache_budget_bytes(&mut self, bytes: u64) {
        self.config.cache_budget_bytes = bytes;
    }

    /// Changes the terminal font (every node is re-rendered on the next frame).
    pub fn set_terminal_font(&mut self, font: TerminalFont) {
        self.faces = TerminalFaces::new(&mut self.font_system, font);
        self.atlas.clear();
        self.invalidate();
    }

    /// The terminal font family actually in use (the embedded Hack when the requested one
    /// is not installed).
    pub fn terminal_font_family(&self) -> &str {
        self.faces.resolved_family()
    }

    /// Terminal cell size in world units for the configured font.
    pub fn cell_metrics(&self) -> CellMetrics {
        self.faces.metrics()
    }

    /// Columns and rows of a terminal that fill a node of `node_rect` (world units).
    pub fn terminal_grid_size(&self, node_rect: Rect) -> (u16, u16) {
        let c = content_rect(node_rect, &self.config.theme);
        let m = self.faces.metrics();
        let cols = (c.w / m.width).floor().clamp(1.0, u16::MAX as f32) as u16;
        let rows = (c.h / m.height).floor().clamp(1.0, u16::MAX as f32) as u16;
        (cols, rows)
    }

    /// The body of a node in world units (where browser pixels go): request CEF frames of
    /// `body.w * zoom` × `body.h * zoom` pixels.
    pub fn body_rect(&self, node_rect: Rect) -> Rect {
        body_rect(node_rect, &self.config.theme)
    }

    /// Uploads BGRA pixels (`width * height * 4` bytes, tightly packed rows) for `key`.
    /// With an unchanged size and non-empty `dirty`, only those regions are copied.
    pub fn upload_bgra(
        &mut self,
        key: ContentKey,
        width: u32,
        height: u32,
        bgra: &[u8],
        dirty: &[DirtyRect],
    ) -> Result<()> {
        let Self { device, queue, compositor, content, .. } = self;
        content.upload(
            device,
            queue,
            |view| compositor.bind_texture(device, view, "content texture"),
            key,
            width,
            height,
            bgra,
            dirty,
        )?;
        self.content_changed = true;
        Ok(())
    }

    /// Drops an uploaded content texture (e.g. when its browser closes).
    pub fn remove_content(&mut self, key: ContentKey) {
        if self.content.remove(key) {
            self.content_changed = true;
        }
    }

    /// Forgets every cached node texture.
    pub fn invalidate(&mut self) {
        self.nodes.clear();
        self.last_frame = None;
    }

    /// Whether rendering `scene` with `camera` into a `size` target would change anything
    /// since the last `render`. An idle canvas returns `false`: skip the frame entirely.
    pub fn needs_redraw(&self, scene: &Scene, camera: &Camera, size: (u32, u32)) -> bool {
        self.content_changed || self.overlay_changed || self.last_frame != Some(frame_signature(scene, camera, size))
    }

    /// Sets the screen-space overlay (command palette, menus, selection marquee, toasts):
    /// nodes whose rects are in target pixels, drawn above the canvas at zoom 1 on every
    /// following frame, so their text stays readable at any canvas zoom. Their ids must not
    /// collide with scene node ids (they share the texture cache).
    pub fn set_overlay(&mut self, nodes: Vec<NodeView>) {
        self.set_overlay_scaled(nodes, 1.0);
    }

    /// [`set_overlay`](Self::set_overlay) with rects in logical pixels, drawn at `scale`
    /// target pixels each (a HiDPI window's scale factor).
    pub fn set_overlay_scaled(&mut self, nodes: Vec<NodeView>, scale: f32) {
        let scale = if scale.is_finite() && scale > 0.0 { scale } else { 1.0 };
        if self.overlay_scale != scale {
            self.overlay_scale = scale;
            self.overlay_changed = true;
        }
        if self.overlay != nodes {
            self.overlay = nodes;
            self.overlay_changed = true;
        }
    }

    /// Renders `scene` into `target`, re-rendering only node textures whose inputs changed.
    pub fn render(&mut self, scene: &Scene, camera: &Camera, target: RenderTarget<'_>) -> Result<FrameStats> {
        if target.width == 0 || target.height == 0 {
            return Err(RenderError::InvalidArgument("render target has zero size".into()));
        }
        self.text.trim();
        if !scene.links.is_empty() {
            self.ensure_solid(self.config.theme.link);
        }
        let damage = self.content.take_damage();
        // Everything but content pixels; the kept frame is keyed by the target's size
        // and format besides.
        let signature = frame_signature(scene, camera, (target.width, target.height));
        // Reusing frames: draw into the kept texture (made anew for this size and
        // format), then copy it into the target.
        match target.reuse {
            Reuse::CopyInto(_) => {
                let fits = |k: &KeptFrame| {
                    (k.texture.width(), k.texture.height()) == (target.width, target.height)
                        && k.texture.format() == target.format
                };
                if !self.kept.as_ref().is_some_and(fits) {
                    self.kept = None;
                }
                self.kept_or_new(&target);
                self.ensure_solid(scene.background.with_alpha(255));
            }
            // A frame drawn elsewhere takes the content damage the kept frame would need.
            Reuse::Nothing => self.kept = None,
        }
        // The kept frame can be drawn from when it shows this very layout and overlay.
        let kept_valid = !self.overlay_changed && self.kept.as_ref().is_some_and(|k| k.layout == Some(signature));
        let glyphs_before = self.atlas.rasterized;
        let theme = self.config.theme.clone();
        let margin = theme.node_margin;
        let view_world = camera.visible_world_rect(Vec2::new(target.width as f32, target.height as f32));
        let mut order: Vec<&NodeView> = scene.nodes.iter().filter(|n| n.rect.is_valid()).collect();
        order.sort_by_key(|n| n.z);
        let mut stats = FrameStats { nodes_total: scene.nodes.len(), ..FrameStats::default() };

        let mut visible = Vec::new();
        for node in order {
            if !node.rect.inflate(margin).intersects(&view_world) {
                continue;
            }
            let scale = raster_scale(camera.zoom(), node.rect, margin, self.max_texture_px());
            let signature = node_signature(node, scale);
            let fresh = self.nodes.get(&node.id).is_some_and(|c| c.signature == signature);
            if !fresh {
                self.render_node(node, scale, signature)?;
                stats.nodes_rerendered += 1;
            }
            visible.push(node);
        }
        stats.nodes_visible = visible.len();
        // The overlay is laid out in logical pixels: a camera at the origin zoomed to the window's scale.
        let screen = Camera::new(Vec2::new(0.0, 0.0), self.overlay_scale);
        let overlay = std::mem::take(&mut self.overlay);
        let mut overlay_order: Vec<&NodeView> = overlay.iter().filter(|n| n.rect.is_valid()).collect();
        overlay_order.sort_by_key(|n| n.z);
        for node in &overlay_order {
            let scale = raster_scale(self.overlay_scale, node.rect, margin, self.max_texture_px());
            let signature = node_signature(node, scale);
            if self.nodes.get(&node.id).is_none_or(|c| c.signature != signature) {
                if let Err(e) = self.render_node(node, scale, signature) {
                    self.overlay = overlay;
                    return Err(e);
                }
                stats.nodes_rerendered += 1;
            }
        }

        // Where each visible content texture lands on screen (for its damage).
        let mut places: Vec<(crate::scene::ContentKey, Rect)> = Vec::new();
        let mut layers: Vec<(LayerInstance, &wgpu::BindGroup)> = Vec::with_capacity(visible.len() * 2);
        // Screen areas node layers paint opaque: the background skips its dots there.
        let mut occluders: Vec<Rect> = Vec::with_capacity(visible.len() * 2);
        let passes = visible.iter().map(|n| (*n, camera)).chain(overlay_order.iter().map(|n| (*n, &screen)));
        for (node, camera) in passes {
            let Some(cache) = self.nodes.get(&node.id) else { continue };
            let world = Rect::new(
                node.rect.x - margin,
                node.rect.y - margin,
                cache.texture.width() as f32 / cache.scale,
                cache.texture.height() as f32 / cache.scale,
            );
            let mut dst = camera.world_rect_to_screen(world);
            if (camera.zoom() - cache.scale).abs() < 1e-4 {
                // 1:1 texels: snap to whole pixels so text stays sharp.
                dst.x = dst.x.round();
                dst.y = dst.y.round();
            }
            // Stay clear of antialiased edges, texel rounding and bilinear filtering: a few
            // texels, in screen pixels.
            let texel_px = (camera.zoom() / cache.scale).max(1.0);
            if let Some(rects) = opaque_rects(node, &theme) {
                let inset = 2.5 * texel_px;
                occluders.extend(
                    rects
                        .iter()
                        .map(|r| camera.world_rect_to_screen(*r).inflate(-inset))
                        .filter(|r| r.w > 0.0 && r.h > 0.0),
                );
            }
            let node_layer = LayerInstance::plain(dst);
            let content = match &node.content {
                NodeContent::Texture { key, .. } => {
                    self.content.get(*key).map(|tex| (tex, camera.world_rect_to_screen(body_rect(node.rect, &theme))))
                }
                _ => None,
            };
            if let (NodeContent::Texture { key, .. }, Some((_, body))) = (&node.content, &content) {
                places.push((*key, *body));
            }
            let Some((tex, body)) = content.filter(|(_, body)| body.w >= 1.0 && body.h >= 1.0) else {
                // An opaque node's interior (clear of the rounded corners and filtered edges)
                // is drawn without blending.
                let node_px = camera.world_rect_to_screen(node.rect);
                let inset = theme.corner_radius.max(0.0) * camera.zoom() + 3.0 * texel_px;
                let x0 = (node_px.x + inset).max(dst.x).ceil();
                let y0 = (node_px.y + inset).max(dst.y).ceil();
                let x1 = (node_px.right() - inset).min(dst.right()).floor();
                let y1 = (node_px.bottom() - inset).min(dst.bottom()).floor();
                if opaque_rects(node, &theme).is_some() && x1 > x0 && y1 > y0 {
                    let hole = Rect::new(x0, y0, x1 - x0, y1 - y0);
                    layers.extend(
                        node_layer
                            .around(hole)
                            .chain([node_layer.opaque_within(hole)])
                            .map(|piece| (piece, &cache.bind_group)),
                    );
                } else {
                    layers.push((node_layer, &cache.bind_group));
                }
                continue;
            };
            let radius = ((theme.corner_radius - 1.0) * camera.zoom()).max(0.0);
            let content_layer = LayerInstance { params: [radius, 0.0, 1.0, 0.0], ..LayerInstance::plain(body) };
            // The content covers the body, where the node texture holds only its flat body
            // colour: leave the node texture out of the body's interior and let the content
            // composite over that colour itself there, unblended, so those pixels are shaded
            // once, not twice. The interior keeps clear of the body's top hairline, its
            // rounded bottom corners and filtered edges, in whole pixels; around it both
            // layers are drawn as before, in pieces.
            let fill = body_color(node, &theme);
            let inset = 3.0 * texel_px;
            let hole_x0 = (body.x + inset).max(dst.x).ceil();
            let hole_y0 = (body.y + inset).max(dst.y).ceil();
            let hole_x1 = (body.right() - inset).min(dst.right()).floor();
            let hole_y1 = (body.bottom() - theme.corner_radius * camera.zoom() - inset).min(dst.bottom()).floor();
            if radius > 0.0 && fill.a == 255 && hole_x1 > hole_x0 && hole_y1 > hole_y0 {
                let hole = Rect::new(hole_x0, hole_y0, hole_x1 - hole_x0, hole_y1 - hole_y0);
                layers.extend(node_layer.around(hole).map(|piece| (piece, &cache.bind_group)));
                layers.extend(content_layer.around(hole).map(|piece| (piece, &tex.bind_group)));
                layers.push((content_layer.over_backdrop_within(hole, fill.to_f32()), &tex.bind_group));
            } else {
                layers.push((node_layer, &cache.bind_group));
                layers.push((content_layer, &tex.bind_group));
            }
        }
        let link_pieces = link_segments(scene, camera, &theme, (target.width, target.height));
        if let Some((_, bind)) = self.solids.get(&theme.link).filter(|_| !link_pieces.is_empty()) {
            // Under every node: links come out from behind the nodes they join.
            layers.splice(0..0, link_pieces.into_iter().map(|r| (LayerInstance::plain(r), bind)));
        }
        let full_target = Rect::new(0.0, 0.0, target.width as f32, target.height as f32);
        let draw = if !kept_valid {
            Draw::Full
        } else {
            let regions = content_damage(&damage, &places, |key| self.content.size(key), full_target);
            let area: f32 = regions.iter().map(|r| r.w * r.h).sum();
            if regions.is_empty() {
                Draw::Nothing
            } else if area > MAX_PARTIAL_SHARE * full_target.w * full_target.h {
                Draw::Full
            } else {
                Draw::Regions(regions)
            }
        };
        if let (Draw::Regions(_), Some((_, bind))) = (&draw, self.solids.get(&scene.background.with_alpha(255))) {
            // Redrawn regions start from the background colour, as a clear would.
            layers.insert(0, (LayerInstance::plain(full_target).opaque_within(full_target), bind));
        }
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
        let background = BackgroundParams {
            offset: [camera.offset.x, camera.offset.y],
            zoom: camera.zoom(),
            spacing: theme.grid_spacing,
            background: scene.background,
            dot: if scene.background == theme.canvas {
                theme.grid_dot
            } else {
                scene.background.mix(crate::color::Color::rgb(255, 255, 255), 0.12)
            },
        };
        let kept_view = self.kept.as_ref().map(|k| &k.view);
        let regions: &[Rect] = match &draw {
            Draw::Regions(r) => r,
            _ => &[],
        };
        if draw != Draw::Nothing {
            let view = kept_view.unwrap_or(target.view);
            self.compositor.compose(
                &self.device,
                &self.queue,
                &mut encoder,
                view,
                target.format,
                (target.width, target.height),
                background,
                &occluders,
                &layers,
                regions,
            );
        }
        drop(layers);
        if let (Reuse::CopyInto(dst), Some(kept)) = (target.reuse, &mut self.kept) {
            kept.layout = Some(signature);
            encoder.copy_texture_to_texture(kept.texture.as_image_copy(), dst.as_image_copy(), kept.texture.size());
        }
        stats.reused = match &draw {
            Draw::Full => FrameReuse::None,
            Draw::Regions(r) => FrameReuse::Regions(r.len()),
            Draw::Nothing => FrameReuse::Whole,
        };
        self.queue.submit([encoder.finish()]);

        drop(overlay_order);
        let live: std::collections::HashSet<NodeId> = scene.nodes.iter().chain(overlay.iter()).map(|n| n.id).collect();
        let before = self.nodes.len();
        self.nodes.retain(|id, _| live.contains(id));
        if self.node_cache_bytes() > self.config.cache_budget_bytes {
            let shown: std::collections::HashSet<NodeId> =
                visible.iter().map(|n| n.id).chain(overlay.iter().map(|n| n.id)).collect();
            self.nodes.retain(|id, _| shown.contains(id));
        }
        stats.nodes_evicted = before - self.nodes.len();
        stats.glyphs_rasterized = self.atlas.rasterized - glyphs_before;
        stats.cache_bytes = self.node_cache_bytes() + self.content.bytes();
        self.last_frame = Some(signature);
        self.content_changed = false;
        self.overlay = overlay;
        self.overlay_changed = false;
        tracing::trace!(?stats, "frame rendered");
        Ok(stats)
    }

    /// Acquires the next surface texture, renders into it and presents it. Returns `None`
    /// when the surface has no frame to give right now (timeout, occluded); reconfigures it
    /// with `config` when outdated. `config.format` must be the surface's configured format.
    pub fn render_to_surface(
        &mut self,
        scene: &Scene,
        camera: &Camera,
        surface: &wgpu::Surface<'_>,
        config: &wgpu::SurfaceConfiguration,
    ) -> Result<Option<FrameStats>> {
        let frame = match surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return Ok(None),
            wgpu::CurrentSurfaceTexture::Outdated => {
                surface.configure(&self.device, config);
                return Ok(None);
            }
            wgpu::CurrentSurfaceTexture::Lost => return Err(RenderError::SurfaceLost),
            other => return Err(RenderError::Surface(format!("{other:?}"))),
        };
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let stats = self.render(
            scene,
            camera,
            RenderTarget {
                view: &view,
                format: frame.texture.format(),
                width: frame.texture.width(),
                height: frame.texture.height(),
                // Surfaces configured with COPY_DST get frames drawn from the last one.
                reuse: if frame.texture.usage().contains(wgpu::TextureUsages::COPY_DST) {
                    Reuse::CopyInto(&frame.texture)
                } else {
                    Reuse::Nothing
                },
            },
        )?;
        self.queue.present(frame);
        Ok(Some(stats))
    }

    /// Renders offscreen at `width`×`height` and reads the pixels back (blocking).
    pub fn render_to_rgba(&mut self, scene: &Scene, camera: &Camera, width: u32, height: u32) -> Result<RgbaImage> {
        let max = self.device.limits().max_texture_dimension_2d;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(RenderError::InvalidArgument(format!("offscreen size {width}x{height} outside 1..={max}")));
        }
        let format = wgpu::TextureFormat::Rgba8Unorm;
        let texture = self.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("offscreen frame"),
            size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        self.render(scene, camera, RenderTarget { view: &view, format, width, height, reuse: Reuse::Nothing })?;
        read_texture(&self.device, &self.queue, &texture)
    }

    /// Copies a `Rgba8Unorm[Srgb]`/`Bgra8Unorm[Srgb]` texture with `COPY_SRC` usage back to
    /// the CPU as RGBA (blocking); e.g. a screenshot of a frame rendered with [`Self::render`].
    pub fn read_back(&self, texture: &wgpu::Texture) -> Result<RgbaImage> {
        read_texture(&self.device, &self.queue, texture)
    }

    fn node_cache_bytes(&self) -> u64 {
        self.nodes.values().map(|c| c.texture.width() as u64 * c.texture.height() as u64 * 4).sum()
    }

    fn max_texture_px(&self) -> u32 {
        self.config.max_node_texture_px.clamp(256, self.device.limits().max_texture_dimension_2d)
    }

    /// Renders one node's chrome and content into its cached texture (own submission, so
    /// the shared instance buffers and atlases are safe to reuse for the next node).
    fn render_node(&mut self, node: &NodeView, scale: f32, signature: u64) -> Result<()> {
        let theme = &self.config.theme;
        let size = texture_size(node.rect, theme, scale);
        let Self { font_system, text, faces, atlas, queue, .. } = self;
        let chrome = build_chrome(node, theme, scale, |t, px, bold| text.measure(font_system, t, px, bold));
        let cells = match &node.content {
            NodeContent::Terminal(grid) => {
                let layout = GridLayout {
                    origin: (chrome.content_px[0].round(), chrome.content_px[1].round()),
                    metrics: faces.metrics(),
                    scale,
                };
                let colors = GridColors { cursor: theme.cursor, selection: theme.terminal_selection };
                let px = (faces.font().size * scale * 4.0).round() / 4.0;
                let mut build = |atlas: &mut GlyphAtlas| {
                    build_grid_instances(grid, &layout, colors, |ch, v| {
                        atlas.glyph(font_system, faces, queue, ch, v, px)
                    })
                };
                match build(atlas) {
                    Ok(c) => c,
                    Err(AtlasFull) => {
                        tracing::debug!("terminal glyph atlas full; clearing it");
                        atlas.clear();
                        match build(atlas) {
                            Ok(c) => c,
                            Err(AtlasFull) => {
                                tracing::warn!(
                                    node = node.id,
                                    "terminal needs more glyphs than the atlas holds; some are not drawn"
                                );
                                build_grid_instances(grid, &layout, colors, |ch, v| {
                                    Ok(atlas.glyph(font_system, faces, queue, ch, v, px).unwrap_or(None))
                                })
                                .unwrap_or_default()
                            }
                        }
                    }
                }
            }
            _ => Vec::new(),
        };

        let reuse = self.nodes.get(&node.id).is_some_and(|c| (c.texture.width(), c.texture.height()) == size);
        if !reuse {
            let texture = self.device.create_texture(&wgpu::TextureDescriptor {
                label: Some("node cache"),
                size: wgpu::Extent3d { width: size.0, height: size.1, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: NODE_FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            });
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            let bind_group = self.compositor.bind_texture(&self.device, &view, "node cache");
            self.nodes.insert(node.id, NodeCache { texture, view, bind_group, scale, signature });
        }
        let Some(cache) = self.nodes.get_mut(&node.id) else {
            return Err(RenderError::Gpu("node cache vanished".into()));
        };
        cache.scale = scale;
        cache.signature = signature;

        self.quads.prepare(&self.device, &self.queue, size, &chrome.quads);
        self.cells.prepare(&self.device, &self.queue, size, &cells);
        self.text.prepare(&mut self.font_system, &self.device, &self.queue, size, &chrome.labels)?;
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("node") });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("node texture"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &cache.view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            self.quads.draw(&mut pass, 0..chrome.quads.len() as u32);
            if !cells.is_empty() {
                if let Some((x, y, w, h)) = clip_to_target(chrome.body_px, size) {
                    pass.set_scissor_rect(x, y, w, h);
                    self.cells.draw(&mut pass, cells.len() as u32);
                    pass.set_scissor_rect(0, 0, size.0, size.1);
                }
            }
            self.text.render(&mut pass)?;
        }
        self.queue.submit([encoder.finish()]);
        Ok(())
    }
}

/// Whole-pixel scissor rectangle of `r` inside a `size` target, if not empty.
fn clip_to_target(r: [f32; 4], size: (u32, u32)) -> Option<(u32, u32, u32, u32)> {
    let x0 = r[0].max(0.0).floor() as u32;
    let y0 = r[1].max(0.0).floor() as u32;
    let x1 = ((r[0] + r[2]).ceil().max(0.0) as u32).min(size.0);
    let y1 = ((r[1] + r[3]).ceil().max(0.0) as u32).min(size.1);
    (x1 > x0 && y1 > y0).then(|| (x0, y0, x1 - x0, y1 - y0))
}

/// The raster scale for a node at `zoom`: the smallest step `2^(k/4)` not below the zoom
/// (so textures are only ever slightly minified), reduced when the texture would exceed
/// `max_px` on a side.
pub fn raster_scale(zoom: f32, node_rect: Rect, margin: f32, max_px: u32) -> f32 {
    let k = (zoom.max(1e-3).log2() * SCALE_STEPS_PER_OCTAVE - 1e-3).ceil();
    let snapped = (k / SCALE_STEPS_PER_OCTAVE).exp2();
    let side = (node_rect.w.max(node_rect.h) + 2.0 * margin).max(1.0);
    snapped.min(max_px as f32 / side).max(1e-3)
}

/// Hash of everything that changes a node's cached texture (not its position or z).
fn node_signature(node: &NodeView, scale: f32) -> u64 {
    let mut h = DefaultHasher::new();
    scale.to_bits().hash(&mut h);
    node.rect.w.to_bits().hash(&mut h);
    node.rect.h.to_bits().hash(&mut h);
    node.kind.hash(&mut h);
    node.title.hash(&mut h);
    node.color.hash(&mut h);
    node.badge.hash(&mut h);
    node.bar.hash(&mut h);
    node.focused.hash(&mut h);
    node.selected.hash(&mut h);
    match &node.content {
        // Uploaded pixels are composited directly; the node texture does not contain them.
        NodeContent::Texture { .. } => 0u8.hash(&mut h),
        NodeContent::Text(t) => (1u8, t).hash(&mut h),
        NodeContent::Terminal(g) => (2u8, g).hash(&mut h),
        NodeContent::Empty => 3u8.hash(&mut h),
    }
    h.finish()
}

/// The target regions to redraw for content uploaded since the last frame: each
/// uploaded region of a visible content texture, mapped onto where the texture is
/// drawn (`places`: key and screen rectangle), grown by two pixels for filtering,
/// kept inside that rectangle and `target`, in whole pixels.
fn content_damage(
    damage: &HashMap<crate::scene::ContentKey, Vec<DirtyRect>>,
    places: &[(crate::scene::ContentKey, Rect)],
    size_of: impl Fn(crate::scene::ContentKey) -> Option<(u32, u32)>,
    target: Rect,
) -> Vec<Rect> {
    let mut out = Vec::new();
    for (key, place) in places {
        let (Some(regions), Some((w, h))) = (damage.get(key), size_of(*key)) else { continue };
        let (sx, sy) = (place.w / w as f32, place.h / h as f32);
        for d in regions {
            let x0 = (place.x + d.x as f32 * sx - 2.0).max(place.x - 2.0).max(target.x).floor();
            let y0 = (place.y + d.y as f32 * sy - 2.0).max(place.y - 2.0).max(target.y).floor();
            let x1 = (place.x + (d.x + d.w) as f32 * sx + 2.0).min(place.right() + 2.0).min(target.right()).ceil();
            let y1 = (place.y + (d.y + d.h) as f32 * sy + 2.0).min(place.bottom() + 2.0).min(target.bottom()).ceil();
            if x1 > x0 && y1 > y0 {
                out.push(Rect::new(x0, y0, x1 - x0, y1 - y0));
            }
        }
    }
    out
}

/// The screen rectangles of the context links: for each link, a horizontal run at
/// the first node's centre height to the second node's centre, then a vertical run
/// to that centre, `theme.link_width` pixels wide, snapped to whole pixels and
/// limited to the target.
fn link_segments(scene: &Scene, camera: &Camera, theme: &Theme, (width, height): (u32, u32)) -> Vec<Rect> {
    let centre = |id: NodeId| {
        scene.nodes.iter().find(|n| n.id == id && n.rect.is_valid()).map(|n| {
            let r = camera.world_rect_to_screen(n.rect);
            (r.x + r.w / 2.0, r.y + r.h / 2.0)
        })
    };
    let w = theme.link_width.max(1.0);
    let target = Rect::new(0.0, 0.0, width as f32, height as f32);
    let mut out = Vec::new();
    for &(a, b) in &scene.links {
        let (Some((ax, ay)), Some((bx, by))) = (centre(a), centre(b)) else { continue };
        let horizontal = Rect::new(ax.min(bx) - w / 2.0, ay - w / 2.0, (ax - bx).abs() + w, w);
        let vertical = Rect::new(bx - w / 2.0, ay.min(by) - w / 2.0, w, (ay - by).abs() + w);
        for r in [horizontal, vertical] {
            // Clip first: far-off nodes give coordinates no texture mapping needs.
            let x0 = r.x.max(target.x).round();
            let y0 = r.y.max(target.y).round();
            let x1 = r.right().min(target.right()).round();
            let y1 = r.bottom().min(target.bottom()).round();
            if x1 > x0 && y1 > y0 {
                out.push(Rect::new(x0, y0, x1 - x0, y1 - y0));
            }
        }
    }
    out
}

/// Hash of everything visible in a frame, for [`Renderer::needs_redraw`].
fn frame_signature(scene: &Scene, camera: &Camera, size: (u32, u32)) -> u64 {
    let mut h = DefaultHasher::new();
    size.hash(&mut h);
    camera.offset.x.to_bits().hash(&mut h);
    camera.offset.y.to_bits().hash(&mut h);
    camera.zoom().to_bits().hash(&mut h);
    scene.background.hash(&mut h);
    scene.links.hash(&mut h);
    for n in &scene.nodes {
        n.id.hash(&mut h);
        n.z.hash(&mut h);
        n.rect.x.to_bits().hash(&mut h);
        n.rect.y.to_bits().hash(&mut h);
        node_signature(n, 1.0).hash(&mut h);
        if let NodeContent::Texture { key, generation } = &n.content {
            (key, generation).hash(&mut h);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::color::Color;
    use crate::scene::NodeKind;

    fn node() -> NodeView {
        NodeView {
            id: 7,
            rect: Rect::new(0.0, 0.0, 300.0, 200.0),
            z: 0,
            kind: NodeKind::Sticky,
            title: "t".into(),
            color: Color::hex(0xffd866),
            badge: None,
            focused: false,
            selected: false,
            content: NodeContent::Text("a".into()),
            bar: None,
        }
    }

    #[test]
    fn raster_scale_snaps_up_to_quarter_octaves() {
        let r = Rect::new(0.0, 0.0, 100.0, 100.0);
        assert_eq!(raster_scale(1.0, r, 0.0, 4096), 1.0);
        assert_eq!(raster_scale(0.5, r, 0.0, 4096), 0.5);
        let s = raster_scale(0.9, r, 0.0, 4096);
        assert!((s - 2f32.powf(0.0)).abs() < 1e-6, "0.9 rounds up to 1.0, got {s}");
        let s = raster_scale(1.1, r, 0.0, 4096);
        assert!((s - 2f32.powf(0.25)).abs() < 1e-6, "{s}");
        assert_eq!(raster_scale(1.05, r, 0.0, 4096), raster_scale(1.15, r, 0.0, 4096), "same step, no re-raster");
        assert_eq!(
            raster_scale(4.0, Rect::new(0.0, 0.0, 2000.0, 100.0), 24.0, 4096),
            4096.0 / 2048.0,
            "capped by texture size"
        );
    }

    #[test]
    fn signature_ignores_position_but_not_content() {
        let a = node();
        let mut moved = node();
        moved.rect.x += 50.0;
        moved.z = 9;
        assert_eq!(node_signature(&a, 1.0), node_signature(&moved, 1.0));
        let mut edited = node();
        edited.content = NodeContent::Text("b".into());
        assert_ne!(node_signature(&a, 1.0), node_signature(&edited, 1.0));
        let mut focused = node();
        focused.focused = true;
        assert_ne!(node_signature(&a, 1.0), node_signature(&focused, 1.0));
        assert_ne!(node_signature(&a, 1.0), node_signature(&a, 2.0));
        let scene = Scene { background: Color::hex(0), nodes: vec![a], links: vec![] };
        let moved_scene = Scene { background: Color::hex(0), nodes: vec![moved], links: vec![] };
        let cam = Camera::default();
        assert_ne!(frame_signature(&scene, &cam, (10, 10)), frame_signature(&moved_scene, &cam, (10, 10)));
        assert_ne!(frame_signature(&scene, &cam, (10, 10)), frame_signature(&scene, &cam, (10, 11)));
    }

    #[test]
    fn scissor_is_clamped_to_the_target() {
        assert_eq!(clip_to_target([-5.0, 2.5, 20.0, 100.0], (10, 50)), Some((0, 2, 10, 48)));
        assert_eq!(clip_to_target([20.0, 0.0, 5.0, 5.0], (10, 10)), None);
    }
}
