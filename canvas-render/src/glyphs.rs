//! Terminal glyphs: monospace face resolution (with the embedded Hack fallback), per-char
//! font fallback through cosmic-text's font database (CJK included when installed), swash
//! rasterization and one shelf-packed RGBA glyph atlas texture.

use std::collections::HashMap;

use cosmic_text::fontdb;
use cosmic_text::FontSystem;
use swash::scale::{image::Content, Render, ScaleContext, Source, StrikeWith};
use swash::zeno::{Angle, Format, Transform};

/// Family name of the embedded fallback monospace font.
pub const EMBEDDED_MONO_FAMILY: &str = "Hack";

/// Side of the square glyph atlas texture in pixels.
const ATLAS_SIZE: u32 = 2048;

/// The terminal font the app asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalFont {
    /// Family name, e.g. "JetBrains Mono"; the embedded Hack is used when it is not installed.
    pub family: String,
    /// Size in world units (pixels at zoom 1).
    pub size: f32,
}

impl Default for TerminalFont {
    fn default() -> Self {
        Self { family: EMBEDDED_MONO_FAMILY.to_string(), size: 13.0 }
    }
}

/// Size of one terminal cell for a font, in world units (pixels at zoom 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellMetrics {
    /// Cell width (the advance of `0`, rounded to whole pixels).
    pub width: f32,
    /// Cell height (ascent + descent + line gap, rounded to whole pixels).
    pub height: f32,
    /// Distance from the cell top to the baseline.
    pub ascent: f32,
    /// Underline offset below the baseline.
    pub underline_offset: f32,
    /// Strikethrough offset above the baseline.
    pub strike_offset: f32,
    /// Stroke thickness for underline and strikethrough.
    pub stroke: f32,
}

/// Bold/italic variant of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Variant {
    pub(crate) bold: bool,
    pub(crate) italic: bool,
}

/// Where a glyph comes from, with the synthesis needed when the face lacks the style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct GlyphSource {
    font: fontdb::ID,
    glyph: u16,
    embolden: bool,
    skew: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Face {
    id: fontdb::ID,
    synth_bold: bool,
    synth_italic: bool,
}

/// A glyph placed in the atlas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AtlasGlyph {
    /// Atlas pixel position and size.
    pub(crate) x: u32,
    pub(crate) y: u32,
    pub(crate) w: u32,
    pub(crate) h: u32,
    /// Offset of the bitmap from the pen position (left) and above the baseline (top).
    pub(crate) left: i32,
    pub(crate) top: i32,
    /// Whether the bitmap carries its own colour (emoji) instead of a coverage mask.
    pub(crate) color: bool,
}

/// Atlas is full: the caller clears it and retries with fewer glyphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AtlasFull;

/// Resolved terminal faces plus the char → glyph fallback cache.
pub(crate) struct TerminalFaces {
    font: TerminalFont,
    faces: [Face; 4],
    resolved_family: String,
    lookup: HashMap<(char, Variant), Option<GlyphSource>>,
    fallback_ids: Option<Vec<fontdb::ID>>,
    metrics: CellMetrics,
}

impl TerminalFaces {
    /// Resolves `font` in `fs`, falling back to the embedded Hack family when absent.
    pub(crate) fn new(fs: &mut FontSystem, font: TerminalFont) -> Self {
        let size = if font.size.is_finite() && font.size > 1.0 { font.size } else { 13.0 };
        let font = TerminalFont { size, ..font };
        let mut family = font.family.clone();
        let regular = match query(fs, &family, false, false) {
            Some(f) => f,
            None => {
                tracing::warn!(requested = %font.family, "terminal font family not found, using embedded {EMBEDDED_MONO_FAMILY}");
                family = EMBEDDED_MONO_FAMILY.to_string();
                query(fs, &family, false, false).unwrap_or_else(|| first_face(fs))
            }
        };
        let pick = |fs: &mut FontSystem, b: bool, i: bool| {
            query(fs, &family, b, i).unwrap_or(Face { synth_bold: b, synth_italic: i, ..regular })
        };
        let faces = [regular, pick(fs, true, false), pick(fs, false, true), pick(fs, true, true)];
        let metrics = measure(fs, regular.id, size);
        Self { font, faces, resolved_family: family, lookup: HashMap::new(), fallback_ids: None, metrics }
    }

    /// The font as requested (size sanitised).
    pub(crate) fn font(&self) -> &TerminalFont {
        &self.font
    }

    /// The family actually used for the primary face.
    pub(crate) fn resolved_family(&self) -> &str {
        &self.resolved_family
    }

    /// Cell metrics at scale 1.
    pub(crate) fn metrics(&self) -> CellMetrics {
        self.metrics
    }

    /// Finds the glyph for `ch` in the styled face, then in any installed face that has it.
    fn glyph_source(&mut self, fs: &mut FontSystem, ch: char, v: Variant) -> Option<GlyphSource> {
        if let Some(found) = self.lookup.get(&(ch, v)) {
            return *found;
        }
        let face = self.faces[(v.bold as usize) | ((v.italic as usize) << 1)];
        let mut found = glyph_in(fs, face.id, ch).map(|glyph| GlyphSource {
            font: face.id,
            glyph,
            embolden: face.synth_bold,
            skew: face.synth_italic,
        });
        if found.is_none() {
            let primary = self.faces[0].id;
            let candidates = self.fallback_ids.get_or_insert_with(|| fallback_order(fs)).clone();
            found = candidates
                .into_iter()
                .filter(|id| *id != face.id && *id != primary)
                .find_map(|id| glyph_in(fs, id, ch).map(|glyph| (id, glyph)))
                .map(|(font, glyph)| GlyphSource { font, glyph, embolden: v.bold, skew: v.italic });
            if found.is_none() && !ch.is_whitespace() && !ch.is_control() {
                tracing::debug!(?ch, "no installed font has this character");
            }
        }
        self.lookup.insert((ch, v), found);
        found
    }
}

fn query(fs: &FontSystem, family: &str, bold: bool, italic: bool) -> Option<Face> {
    let q = fontdb::Query {
        families: &[fontdb::Family::Name(family)],
        weight: if bold { fontdb::Weight::BOLD } else { fontdb::Weight::NORMAL },
        stretch: fontdb::Stretch::Normal,
        style: if italic { fontdb::Style::Italic } else { fontdb::Style::Normal },
    };
    let id = fs.db().query(&q)?;
    let info = fs.db().face(id)?;
    Some(Face {
        id,
        synth_bold: bold && info.weight.0 < 600,
        synth_italic: italic && info.style == fontdb::Style::Normal,
    })
}

fn first_face(fs: &FontSystem) -> Face {
    // The embedded font is always loaded, so the database is never empty.
    let id = fs.db().faces().next().map(|f| f.id).unwrap_or_default();
    Face { id, synth_bold: false, synth_italic: false }
}

/// Monospace faces first (closest to the grid), then everything else, in database order.
fn fallback_order(fs: &FontSystem) -> Vec<fontdb::ID> {
    let mut mono: Vec<_> = fs.db().faces().filter(|f| f.monospaced).map(|f| f.id).collect();
    let rest: Vec<_> = fs.db().faces().filter(|f| !f.monospaced).map(|f| f.id).collect();
    mono.extend(rest);
    mono
}

fn glyph_in(fs: &mut FontSystem, id: fontdb::ID, ch: char) -> Option<u16> {
    let font = fs.get_font(id, fontdb::Weight::NORMAL)?;
    let g = font.as_swash().charmap().map(ch);
    (g != 0).then_some(g)
}

fn measure(fs: &mut FontSystem, id: fontdb::ID, size: f32) -> CellMetrics {
    let Some(font) = fs.get_font(id, fontdb::Weight::NORMAL) else {
        tracing::warn!("terminal font could not be loaded; using nominal metrics");
        return CellMetrics {
            width: (size * 0.6).round(),
            height: (size * 1.2).round(),
            ascent: size,
            underline_offset: 2.0,
            strike_offset: (size * 0.3).round(),
            stroke: 1.0,
        };
    };
    let swash_font = font.as_swash();
    let m = swash_font.metrics(&[]).scale(size);
    let zero = swash_font.charmap().map('0');
    let advance = swash_font.glyph_metrics(&[]).scale(size).advance_width(zero);
    let width = advance.round().max(1.0);
    let natural = m.ascent + m.descent;
    let height = (natural + m.leading).round().max(natural.ceil()).max(1.0);
    let ascent = (m.ascent + (height - natural) * 0.5).round();
    let stroke = (m.stroke_size).max(size / 14.0).round().max(1.0);
    let underline_offset = (-m.underline_offset).max(1.0).round().min(height - ascent - stroke).max(1.0);
    let strike = if m.strikeout_offset > 0.0 { m.strikeout_offset } else { m.x_height * 0.5 };
    let strike_offset = strike.round().max(1.0);
    CellMetrics { width, height, ascent, underline_offset, strike_offset, stroke }
}

/// Key of a rasterized glyph: source glyph at one pixel size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct RasterKey {
    source: GlyphSource,
    size_bits: u32,
}

/// A simple shelf packer: rows of glyphs, each row as tall as its tallest glyph.
#[derive(Debug, Default)]
pub(crate) struct ShelfPacker {
    size: u32,
    shelves: Vec<(u32, u32, u32)>, // (y, height, next x)
    next_y: u32,
}

impl ShelfPacker {
    /// An empty packer for a square of `size` pixels.
    pub(crate) fn new(size: u32) -> Self {
        Self { size, shelves: Vec::new(), next_y: 0 }
    }

    /// Reserves `w`×`h` pixels (plus 1 px padding), or `None` when full.
    pub(crate) fn alloc(&mut self, w: u32, h: u32) -> Option<(u32, u32)> {
        let (pw, ph) = (w + 1, h + 1);
        if pw > self.size || ph > self.size {
            return None;
        }
        for shelf in &mut self.shelves {
            // Reuse a shelf only when it is not much taller than the glyph.
            if ph <= shelf.1 && ph * 4 >= shelf.1 * 3 && shelf.2 + pw <= self.size {
                let at = (shelf.2, shelf.0);
                shelf.2 += pw;
                return Some(at);
            }
        }
        if self.next_y + ph > self.size {
            return None;
        }
        let y = self.next_y;
        self.shelves.push((y, ph, pw));
        self.next_y += ph;
        Some((0, y))
    }

    /// Forgets every allocation.
    pub(crate) fn clear(&mut self) {
        self.shelves.clear();
        self.next_y = 0;
    }
}

/// Rasterized terminal glyphs in one GPU texture.
pub(crate) struct GlyphAtlas {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    packer: ShelfPacker,
    entries: HashMap<RasterKey, Option<AtlasGlyph>>,
    scaler: ScaleContext,
    /// Glyphs rasterized since creation (for stats).
    pub(crate) rasterized: u64,
}

impl GlyphAtlas {
    /// Creates the (empty) atlas texture.
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let size = ATLAS_SIZE.min(device.limits().max_texture_dimension_2d);
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("terminal glyph atlas"),
            size: wgpu::Extent3d { width: size, height: size, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Self {
            texture,
            view,
            packer: ShelfPacker::new(size),
            entries: HashMap::new(),
            scaler: ScaleContext::new(),
            rasterized: 0,
        }
    }

    /// The atlas texture view (bound by the cell pipeline).
    pub(crate) fn view(&self) -> &wgpu::TextureView {
        &self.view
    }

    /// Drops every glyph; previously returned positions become invalid.
    pub(crate) fn clear(&mut self) {
        self.packer.clear();
        self.entries.clear();
    }

    /// Returns the atlas glyph for `ch` at `px` pixels, rasterizing and uploading it on first
    /// use. `Ok(None)` means the char has no visible glyph (space, or no font has it).
    pub(crate) fn glyph(
        &mut self,
        fs: &mut FontSystem,
        faces: &mut TerminalFaces,
        queue: &wgpu::Queue,
        ch: char,
        variant: Variant,
        px: f32,
    ) -> Result<Option<AtlasGlyph>, AtlasFull> {
        let Some(source) = faces.glyph_source(fs, ch, variant) else {
            return Ok(None);
        };
        let key = RasterKey { source, size_bits: px.to_bits() };
        if let Some(entry) = self.entries.get(&key) {
            return Ok(*entry);
        }
        let placed = match rasterize(fs, &mut self.scaler, source, px) {
            None => None,
            Some(image) if image.placement.width == 0 || image.placement.height == 0 => None,
            Some(image) => {
                let (w, h) = (image.placement.width, image.placement.height);
                let (x, y) = self.packer.alloc(w, h).ok_or(AtlasFull)?;
                let color = image.content == Content::Color;
                let rgba: Vec<u8> = match image.content {
                    Content::Mask => image.data.iter().flat_map(|&a| [255, 255, 255, a]).collect(),
                    Content::SubpixelMask => {
                        image.data.chunks_exact(4).flat_map(|p| [255, 255, 255, p[0].max(p[1]).max(p[2])]).collect()
                    }
                    Content::Color => image.data.clone(),
                };
                queue.write_texture(
                    wgpu::TexelCopyTextureInfo {
                        texture: &self.texture,
                        mip_level: 0,
                        origin: wgpu::Origin3d { x, y, z: 0 },
                        aspect: wgpu::TextureAspect::All,
                    },
                    &rgba,
                    wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(w * 4), rows_per_image: None },
                    wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
                );
                self.rasterized += 1;
                Some(AtlasGlyph { x, y, w, h, left: image.placement.left, top: image.placement.top, color })
            }
        };
        self.entries.insert(key, placed);
        Ok(placed)
    }
}

fn rasterize(
    fs: &mut FontSystem,
    scaler: &mut ScaleContext,
    source: GlyphSource,
    px: f32,
) -> Option<swash::scale::image::Image> {
    let font = fs.get_font(source.font, fontdb::Weight::NORMAL)?;
    let mut s = scaler.builder(font.as_swash()).size(px).hint(true).build();
    let mut render = Render::new(&[Source::ColorOutline(0), Source::ColorBitmap(StrikeWith::BestFit), Source::Outline]);
    render.format(Format::Alpha);
    if source.embolden {
        render.embolden((px / 28.0).max(0.5));
    }
    if source.skew {
        render.transform(Some(Transform::skew(Angle::from_degrees(12.0), Angle::from_degrees(0.0))));
    }
    render.render(&mut s, source.glyph)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shelf_packer_packs_rows_and_reports_full() {
        let mut p = ShelfPacker::new(34);
        assert_eq!(p.alloc(10, 10), Some((0, 0)));
        assert_eq!(p.alloc(10, 10), Some((11, 0)));
        assert_eq!(p.alloc(10, 9), Some((22, 0)), "similar height reuses the shelf");
        assert_eq!(p.alloc(10, 10), Some((0, 11)), "row full: new shelf");
        assert_eq!(p.alloc(4, 2), Some((0, 22)), "much smaller glyph gets its own shelf");
        assert_eq!(p.alloc(40, 1), None, "wider than the atlas");
        assert_eq!(p.alloc(20, 20), None, "no vertical space left");
        p.clear();
        assert_eq!(p.alloc(20, 20), Some((0, 0)));
    }

    fn embedded_font_system() -> FontSystem {
        let mut fs = FontSystem::new_with_fonts(std::iter::empty());
        fs.db_mut().load_font_data(epaint_default_fonts::HACK_REGULAR.to_vec());
        fs
    }

    #[test]
    fn unknown_family_falls_back_to_embedded_hack_with_whole_pixel_cells() {
        let mut fs = embedded_font_system();
        let faces = TerminalFaces::new(&mut fs, TerminalFont { family: "No Such Font 123".into(), size: 14.0 });
        assert_eq!(faces.resolved_family(), EMBEDDED_MONO_FAMILY);
        let m = faces.metrics();
        // Hack's advance is 0.602 em: 8.43 px at 14 px, rounded to 8.
        assert_eq!(m.width, 8.0);
        assert!(m.height >= 16.0 && m.height <= 18.0, "{m:?}");
        assert_eq!(m.height.fract(), 0.0);
        assert!(m.ascent > 0.0 && m.ascent < m.height);
    }

    #[test]
    fn bold_is_synthesised_when_the_family_has_no_bold_face() {
        let mut fs = embedded_font_system();
        let mut faces = TerminalFaces::new(&mut fs, TerminalFont::default());
        let bold = faces.glyph_source(&mut fs, 'A', Variant { bold: true, italic: false }).unwrap();
        assert!(bold.embolden);
        let plain = faces.glyph_source(&mut fs, 'A', Variant { bold: false, italic: false }).unwrap();
        assert!(!plain.embolden && !plain.skew);
        assert_eq!(bold.glyph, plain.glyph);
        assert!(faces.glyph_source(&mut fs, '\u{10FFFD}', Variant { bold: false, italic: false }).is_none());
    }
}
