//! UI text (titles, badges, sticky-note bodies) laid out with cosmic-text and drawn with
//! glyphon into node textures at their raster scale, so text stays crisp at every zoom.

use cosmic_text::{
    Attrs, Buffer, Ellipsize, EllipsizeHeightLimit, Family, FontSystem, Hinting, Metrics, Shaping, Weight, Wrap,
};
use glyphon::{Cache, ColorMode, Resolution, SwashCache, TextArea, TextAtlas, TextBounds, TextRenderer, Viewport};

use crate::color::Color;
use crate::error::Result;

/// One block of text to draw, in target pixels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Label {
    /// Text (newlines respected).
    pub(crate) text: String,
    /// Box the text is laid out in and clipped to: x, y, w, h.
    pub(crate) bounds: [f32; 4],
    /// Font size in pixels.
    pub(crate) size: f32,
    /// Line height as a multiple of the size.
    pub(crate) line_height: f32,
    /// Colour.
    pub(crate) color: Color,
    /// Word-wrap inside the box (else one line, ellipsised).
    pub(crate) wrap: bool,
    /// Semi-bold weight.
    pub(crate) bold: bool,
}

/// glyphon state shared by every node texture (one prepare + render per submission).
pub(crate) struct TextSystem {
    swash: SwashCache,
    atlas: TextAtlas,
    renderer: TextRenderer,
    viewport: Viewport,
    family: String,
}

impl TextSystem {
    /// Creates the glyphon atlas and renderer for targets of `format`.
    pub(crate) fn new(device: &wgpu::Device, queue: &wgpu::Queue, format: wgpu::TextureFormat, family: String) -> Self {
        let cache = Cache::new(device);
        let viewport = Viewport::new(device, &cache);
        // Node textures hold sRGB values in a linear format: blend like browsers do.
        let mut atlas = TextAtlas::with_color_mode(device, queue, &cache, format, ColorMode::Web);
        let renderer = TextRenderer::new(&mut atlas, device, wgpu::MultisampleState::default(), None);
        Self { swash: SwashCache::new(), atlas, renderer, viewport, family }
    }

    fn attrs(&self, bold: bool) -> Attrs<'_> {
        Attrs::new().family(Family::Name(&self.family)).weight(if bold { Weight::SEMIBOLD } else { Weight::NORMAL })
    }

    fn buffer(&self, fs: &mut FontSystem, label: &Label) -> Buffer {
        let mut buffer = Buffer::new(fs, Metrics::new(label.size, (label.size * label.line_height).ceil()));
        buffer.set_hinting(Hinting::Enabled);
        buffer.set_size(Some(label.bounds[2].max(1.0)), Some(label.bounds[3].max(1.0)));
        if label.wrap {
            buffer.set_wrap(Wrap::WordOrGlyph);
            buffer.set_ellipsize(Ellipsize::End(EllipsizeHeightLimit::Height(label.bounds[3].max(1.0))));
        } else {
            buffer.set_wrap(Wrap::None);
            buffer.set_ellipsize(Ellipsize::End(EllipsizeHeightLimit::Lines(1)));
        }
        buffer.set_text(&label.text, &self.attrs(label.bold), Shaping::Advanced, None);
        buffer.shape_until_scroll(fs, false);
        buffer
    }

    /// Width in pixels of `text` on one line at `size`.
    pub(crate) fn measure(&self, fs: &mut FontSystem, text: &str, size: f32, bold: bool) -> f32 {
        let mut buffer = Buffer::new(fs, Metrics::new(size, size * 1.2));
        buffer.set_hinting(Hinting::Enabled);
        buffer.set_wrap(Wrap::None);
        buffer.set_text(text, &self.attrs(bold), Shaping::Advanced, None);
        buffer.shape_until_scroll(fs, false);
        buffer.layout_runs().map(|r| r.line_w).fold(0.0, f32::max)
    }

    /// Lays out `labels` for a target of `size` pixels and uploads their glyphs.
    pub(crate) fn prepare(
        &mut self,
        fs: &mut FontSystem,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: (u32, u32),
        labels: &[Label],
    ) -> Result<()> {
        self.viewport.update(queue, Resolution { width: size.0, height: size.1 });
        let buffers: Vec<Buffer> = labels.iter().map(|l| self.buffer(fs, l)).collect();
        let areas = labels.iter().zip(&buffers).map(|(l, b)| {
            let [x, y, w, h] = l.bounds;
            TextArea {
                buffer: b,
                left: x,
                top: y,
                scale: 1.0,
                bounds: TextBounds {
                    left: x.floor() as i32,
                    top: y.floor() as i32,
                    right: (x + w).ceil() as i32,
                    bottom: (y + h).ceil() as i32,
                },
                default_color: glyphon::Color::rgba(l.color.r, l.color.g, l.color.b, l.color.a),
                custom_glyphs: &[],
            }
        });
        Ok(self.renderer.prepare(device, queue, fs, &mut self.atlas, &self.viewport, areas, &mut self.swash)?)
    }

    /// Draws what was last prepared.
    pub(crate) fn render(&self, pass: &mut wgpu::RenderPass<'_>) -> Result<()> {
        Ok(self.renderer.render(&self.atlas, &self.viewport, pass)?)
    }

    /// Frees glyphs not used since the last trim (call once per frame).
    pub(crate) fn trim(&mut self) {
        self.atlas.trim();
    }
}
