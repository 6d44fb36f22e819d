//! Terminal cell grids: the renderer-neutral grid type the app fills from its terminal
//! state, the exact-grid layout (one glyph per cell, wide chars over two cells, no shaping,
//! so `-->` stays three cells) and the instanced pipeline drawing one grid per draw call.

use crate::color::Color;
use crate::glyphs::{AtlasFull, AtlasGlyph, CellMetrics, Variant};
use crate::quad::{instance_buffer, instanced_strip_pipeline, uniform_entry};

/// Shape of the terminal cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CursorShape {
    /// Filled cell; the glyph under it is drawn in the cell background colour.
    Block,
    /// Thin vertical bar at the left of the cell.
    Beam,
    /// Bar along the bottom of the cell.
    Underline,
    /// Outlined cell (unfocused terminals).
    HollowBlock,
}

/// One terminal cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CellView {
    /// The character (space for blank cells).
    pub ch: char,
    /// Foreground sRGB colour.
    pub fg: [u8; 3],
    /// Background sRGB colour.
    pub bg: [u8; 3],
    /// Bold (bold face, or synthesised).
    pub bold: bool,
    /// Italic (italic face, or synthesised slant).
    pub italic: bool,
    /// Underlined.
    pub underline: bool,
    /// Struck through.
    pub strikethrough: bool,
    /// Faint: foreground blended towards the background.
    pub dim: bool,
    /// First half of a double-width character (drawn over this cell and the next).
    pub wide: bool,
    /// Second half of a double-width character (no glyph of its own).
    pub wide_spacer: bool,
}

impl CellView {
    /// A blank cell with the given colours.
    pub fn blank(fg: [u8; 3], bg: [u8; 3]) -> Self {
        Self {
            ch: ' ',
            fg,
            bg,
            bold: false,
            italic: false,
            underline: false,
            strikethrough: false,
            dim: false,
            wide: false,
            wide_spacer: false,
        }
    }
}

/// A terminal screen to draw: `rows × cols` cells in row-major order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TerminalGridView {
    /// Number of columns.
    pub cols: u16,
    /// Number of rows.
    pub rows: u16,
    /// Cells, row-major; missing cells draw as blank, extra cells are ignored.
    pub cells: Vec<CellView>,
    /// Cursor position `(row, col, shape)`, if visible.
    pub cursor: Option<(u16, u16, CursorShape)>,
    /// Selected spans `(row, col_start, col_end)`, `col_end` exclusive.
    pub selection: Vec<(u16, u16, u16)>,
}

impl TerminalGridView {
    /// A grid of blank cells.
    pub fn blank(cols: u16, rows: u16, fg: [u8; 3], bg: [u8; 3]) -> Self {
        Self {
            cols,
            rows,
            cells: vec![CellView::blank(fg, bg); cols as usize * rows as usize],
            cursor: None,
            selection: Vec::new(),
        }
    }

    /// The cell at `(row, col)`, if present.
    pub fn cell(&self, row: u16, col: u16) -> Option<&CellView> {
        if row >= self.rows || col >= self.cols {
            return None;
        }
        self.cells.get(row as usize * self.cols as usize + col as usize)
    }

    /// Writes `text` from `(row, col)` on one row with the given colours (one char per cell,
    /// double-width chars take two). Handy for fixtures and simple status screens.
    pub fn put_str(&mut self, row: u16, col: u16, text: &str, fg: [u8; 3], bg: [u8; 3]) {
        let mut c = col;
        for ch in text.chars() {
            let wide = is_wide(ch);
            let need = if wide { 2 } else { 1 };
            if c + need > self.cols || row >= self.rows {
                break;
            }
            let i = row as usize * self.cols as usize + c as usize;
            if let Some(cell) = self.cells.get_mut(i) {
                *cell = CellView { ch, fg, bg, wide, ..CellView::blank(fg, bg) };
            }
            if wide {
                if let Some(cell) = self.cells.get_mut(i + 1) {
                    *cell = CellView { wide_spacer: true, ..CellView::blank(fg, bg) };
                }
            }
            c += need;
        }
    }
}

/// East-Asian wide / fullwidth ranges (enough for fixtures; the terminal crate decides
/// widths for real output and sets `wide` itself).
fn is_wide(ch: char) -> bool {
    matches!(ch as u32,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF |
        0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 |
        0xFFE0..=0xFFE6 | 0x1F300..=0x1F64F | 0x1F900..=0x1F9FF | 0x20000..=0x3FFFD)
}

/// One cell-pipeline instance.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct CellInstance {
    /// Pixel rectangle (x, y, w, h).
    pub(crate) rect: [f32; 4],
    /// (atlas x, atlas y, kind: 0 solid / 1 mask glyph / 2 colour glyph, unused).
    pub(crate) uv_kind: [f32; 4],
    /// Colour, straight alpha.
    pub(crate) color: [f32; 4],
}

impl CellInstance {
    fn solid(x: f32, y: f32, w: f32, h: f32, color: [f32; 4]) -> Self {
        Self { rect: [x, y, w, h], uv_kind: [0.0; 4], color }
    }
}

/// Pixel placement of a grid inside a target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct GridLayout {
    /// Top-left of cell (0, 0) in target pixels.
    pub(crate) origin: (f32, f32),
    /// Cell metrics at scale 1.
    pub(crate) metrics: CellMetrics,
    /// Raster scale (target pixels per world unit).
    pub(crate) scale: f32,
}

impl GridLayout {
    fn col_x(&self, col: u32) -> f32 {
        (self.origin.0 + col as f32 * self.metrics.width * self.scale).round()
    }

    fn row_y(&self, row: u32) -> f32 {
        (self.origin.1 + row as f32 * self.metrics.height * self.scale).round()
    }
}

/// Colours that do not come from the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct GridColors {
    pub(crate) cursor: Color,
    pub(crate) selection: Color,
}

fn rgb(c: [u8; 3]) -> [f32; 4] {
    [c[0] as f32 / 255.0, c[1] as f32 / 255.0, c[2] as f32 / 255.0, 1.0]
}

fn dimmed(fg: [u8; 3], bg: [u8; 3]) -> [u8; 3] {
    let m = |f: u8, b: u8| (f as f32 * 0.6 + b as f32 * 0.4).round() as u8;
    [m(fg[0], bg[0]), m(fg[1], bg[1]), m(fg[2], bg[2])]
}

/// Builds the instances of one grid: background runs, selection, block cursor, glyphs,
/// underline/strikethrough lines, then the other cursor shapes. `glyph` resolves a char to
/// its atlas entry (it may fail with [`AtlasFull`], which the caller handles by clearing).
pub(crate) fn build_grid_instances(
    grid: &TerminalGridView,
    layout: &GridLayout,
    colors: GridColors,
    mut glyph: impl FnMut(char, Variant) -> Result<Option<AtlasGlyph>, AtlasFull>,
) -> Result<Vec<CellInstance>, AtlasFull> {
    let (cols, rows) = (grid.cols as u32, grid.rows as u32);
    let mut out = Vec::with_capacity((cols * rows) as usize / 2 + rows as usize);
    let blank = CellView::blank([255; 3], [0; 3]);
    let cell = |r: u32, c: u32| grid.cells.get((r * cols + c) as usize).copied().unwrap_or(blank);
    let m = layout.metrics;
    let s = layout.scale;
    let cursor = grid.cursor.filter(|(r, c, _)| *r < grid.rows && *c < grid.cols);

    // Backgrounds, merged into runs of equal colour per row.
    for r in 0..rows {
        let (y0, y1) = (layout.row_y(r), layout.row_y(r + 1));
        let mut start = 0;
        while start < cols {
            let bg = cell(r, start).bg;
            let mut end = start + 1;
            while end < cols && cell(r, end).bg == bg {
                end += 1;
            }
            let (x0, x1) = (layout.col_x(start), layout.col_x(end));
            out.push(CellInstance::solid(x0, y0, x1 - x0, y1 - y0, rgb(bg)));
            start = end;
        }
    }
    // Selection, under the glyphs so the text stays readable.
    for &(r, c0, c1) in &grid.selection {
        let (r, c0, c1) = (r as u32, c0 as u32, (c1 as u32).min(cols));
        if r >= rows || c0 >= c1 {
            continue;
        }
        let (x0, x1, y0, y1) = (layout.col_x(c0), layout.col_x(c1), layout.row_y(r), layout.row_y(r + 1));
        out.push(CellInstance::solid(x0, y0, x1 - x0, y1 - y0, colors.selection.to_f32()));
    }
    let cursor_span = |r: u32, c: u32| if cell(r, c).wide && c + 1 < cols { 2 } else { 1 };
    if let Some((r, c, CursorShape::Block)) = cursor {
        let (r, c) = (r as u32, c as u32);
        let (x0, x1, y0, y1) =
            (layout.col_x(c), layout.col_x(c + cursor_span(r, c)), layout.row_y(r), layout.row_y(r + 1));
        out.push(CellInstance::solid(x0, y0, x1 - x0, y1 - y0, colors.cursor.to_f32()));
    }
    // Glyphs and text decorations.
    let stroke = (m.stroke * s).round().max(1.0);
    for r in 0..rows {
        let y0 = layout.row_y(r);
        let baseline = y0 + (m.ascent * s).round();
        for c in 0..cols {
            let cl = cell(r, c);
            if cl.wide_spacer {
                continue;
            }
            let span = if cl.wide && c + 1 < cols { 2 } else { 1 };
            let (x0, x1) = (layout.col_x(c), layout.col_x(c + span));
            let under_block = matches!(cursor, Some((cr, cc, CursorShape::Block)) if cr as u32 == r && cc as u32 == c);
            let fg = if under_block {
                cl.bg
            } else if cl.dim {
                dimmed(cl.fg, cl.bg)
            } else {
                cl.fg
            };
            if cl.ch != ' ' && !cl.ch.is_control() {
                if let Some(g) = glyph(cl.ch, Variant { bold: cl.bold, italic: cl.italic })? {
                    let gx = if span == 2 { (x0 + ((x1 - x0) - g.w as f32) * 0.5).round() } else { x0 + g.left as f32 };
                    let kind = if g.color { 2.0 } else { 1.0 };
                    out.push(CellInstance {
                        rect: [gx, baseline - g.top as f32, g.w as f32, g.h as f32],
                        uv_kind: [g.x as f32, g.y as f32, kind, 0.0],
                        color: rgb(fg),
                    });
                }
            }
            if cl.underline {
                let y = (baseline + m.underline_offset * s).round();
                out.push(CellInstance::solid(x0, y, x1 - x0, stroke, rgb(fg)));
            }
            if cl.strikethrough {
                let y = (baseline - m.strike_offset * s).round();
                out.push(CellInstance::solid(x0, y, x1 - x0, stroke, rgb(fg)));
            }
        }
    }
    if let Some((r, c, shape)) = cursor {
        let (r, c) = (r as u32, c as u32);
        let (x0, x1, y0, y1) =
            (layout.col_x(c), layout.col_x(c + cursor_span(r, c)), layout.row_y(r), layout.row_y(r + 1));
        let col = colors.cursor.to_f32();
        let t = (2.0 * s).round().max(1.0);
        match shape {
            CursorShape::Block => {}
            CursorShape::Beam => out.push(CellInstance::solid(x0, y0, t, y1 - y0, col)),
            CursorShape::Underline => out.push(CellInstance::solid(x0, y1 - t, x1 - x0, t, col)),
            CursorShape::HollowBlock => {
                let t = s.round().max(1.0);
                out.push(CellInstance::solid(x0, y0, x1 - x0, t, col));
                out.push(CellInstance::solid(x0, y1 - t, x1 - x0, t, col));
                out.push(CellInstance::solid(x0, y0, t, y1 - y0, col));
                out.push(CellInstance::solid(x1 - t, y0, t, y1 - y0, col));
            }
        }
    }
    Ok(out)
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Globals {
    target_size: [f32; 2],
    _pad: [f32; 2],
}

/// The pipeline drawing [`CellInstance`]s with the glyph atlas bound.
pub(crate) struct CellPipeline {
    pipeline: wgpu::RenderPipeline,
    globals: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    instances: wgpu::Buffer,
    capacity: u64,
}

impl CellPipeline {
    /// Builds the pipeline for targets of `format`, sampling `atlas`.
    pub(crate) fn new(device: &wgpu::Device, format: wgpu::TextureFormat, atlas: &wgpu::TextureView) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("cells shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("shaders/cells.wgsl").into()),
        });
        let globals = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cells globals"),
            size: std::mem::size_of::<Globals>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("cells layout"),
            entries: &[
                uniform_entry(0),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
            ],
        });
        let bind_group = Self::bind(device, &layout, &globals, atlas);
        let attributes = wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4, 2 => Float32x4];
        let pipeline = instanced_strip_pipeline(
            device,
            "cells",
            &layout,
            &shader,
            wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<CellInstance>() as u64,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &attributes,
            },
            format,
        );
        let capacity = 4096;
        let instances =
            instance_buffer(device, "cell instances", capacity * std::mem::size_of::<CellInstance>() as u64);
        Self { pipeline, globals, bind_group, instances, capacity }
    }

    fn bind(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        globals: &wgpu::Buffer,
        atlas: &wgpu::TextureView,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("cells bind group"),
            layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: globals.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(atlas) },
            ],
        })
    }

    /// Uploads one grid's instances for a target of `size` pixels (one grid per submission).
    pub(crate) fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: (u32, u32),
        cells: &[CellInstance],
    ) {
        queue.write_buffer(
            &self.globals,
            0,
            bytemuck::bytes_of(&Globals { target_size: [size.0 as f32, size.1 as f32], _pad: [0.0; 2] }),
        );
        if cells.len() as u64 > self.capacity {
            self.capacity = (cells.len() as u64).next_power_of_two();
            self.instances =
                instance_buffer(device, "cell instances", self.capacity * std::mem::size_of::<CellInstance>() as u64);
        }
        if !cells.is_empty() {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(cells));
        }
    }

    /// Draws the first `count` prepared instances.
    pub(crate) fn draw(&self, pass: &mut wgpu::RenderPass<'_>, count: u32) {
        if count == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_vertex_buffer(0, self.instances.slice(..));
        pass.draw(0..4, 0..count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: CellMetrics =
        CellMetrics { width: 8.0, height: 16.0, ascent: 12.0, underline_offset: 2.0, strike_offset: 4.0, stroke: 1.0 };
    const COLORS: GridColors = GridColors { cursor: Color::rgb(255, 255, 255), selection: Color::rgba(0, 0, 255, 128) };

    fn layout(scale: f32) -> GridLayout {
        GridLayout { origin: (10.0, 20.0), metrics: METRICS, scale }
    }

    fn fake_glyph(ch: char, _: Variant) -> Result<Option<AtlasGlyph>, AtlasFull> {
        Ok(Some(AtlasGlyph { x: ch as u32, y: 0, w: 6, h: 10, left: 1, top: 10, color: false }))
    }

    fn glyphs(v: &[CellInstance]) -> Vec<&CellInstance> {
        v.iter().filter(|i| i.uv_kind[2] > 0.5).collect()
    }

    #[test]
    fn ligature_sequence_stays_three_cells() {
        let mut g = TerminalGridView::blank(5, 1, [200; 3], [0; 3]);
        g.put_str(0, 0, "-->", [200; 3], [0; 3]);
        let inst = build_grid_instances(&g, &layout(1.0), COLORS, fake_glyph).unwrap();
        let xs: Vec<f32> = glyphs(&inst).iter().map(|i| i.rect[0]).collect();
        assert_eq!(xs, vec![11.0, 19.0, 27.0], "one glyph per cell at pen + left bearing");
        assert_eq!(glyphs(&inst)[2].uv_kind[0], '>' as u32 as f32);
        // One merged background run for the single-colour row.
        let solids: Vec<_> = inst.iter().filter(|i| i.uv_kind[2] == 0.0).collect();
        assert_eq!(solids.len(), 1);
        assert_eq!(solids[0].rect, [10.0, 20.0, 40.0, 16.0]);
    }

    #[test]
    fn wide_char_spans_two_cells_and_is_centred() {
        let mut g = TerminalGridView::blank(4, 1, [200; 3], [0; 3]);
        g.put_str(0, 0, "漢a", [200; 3], [0; 3]);
        assert!(g.cell(0, 0).unwrap().wide && g.cell(0, 1).unwrap().wide_spacer);
        assert_eq!(g.cell(0, 2).unwrap().ch, 'a');
        let inst = build_grid_instances(&g, &layout(1.0), COLORS, fake_glyph).unwrap();
        let gl = glyphs(&inst);
        assert_eq!(gl.len(), 2);
        assert_eq!(gl[0].rect[0], 10.0 + (16.0 - 6.0) / 2.0);
        assert_eq!(gl[1].rect[0], 27.0);
    }

    #[test]
    fn block_cursor_inverts_glyph_and_selection_sits_under_glyphs() {
        let mut g = TerminalGridView::blank(4, 2, [200, 200, 200], [1, 2, 3]);
        g.put_str(1, 0, "ab", [200, 200, 200], [1, 2, 3]);
        g.cursor = Some((1, 1, CursorShape::Block));
        g.selection = vec![(0, 1, 9), (5, 0, 1), (1, 3, 2)];
        let inst = build_grid_instances(&g, &layout(2.0), COLORS, fake_glyph).unwrap();
        let sel: Vec<_> = inst.iter().filter(|i| i.color == COLORS.selection.to_f32()).collect();
        assert_eq!(sel.len(), 1, "out-of-range and empty spans are dropped");
        assert_eq!(sel[0].rect, [26.0, 20.0, 48.0, 32.0], "clamped to the grid at scale 2");
        let first_glyph = inst.iter().position(|i| i.uv_kind[2] > 0.5).unwrap();
        let sel_pos = inst.iter().position(|i| i.color == COLORS.selection.to_f32()).unwrap();
        let cursor_pos = inst.iter().position(|i| i.color == COLORS.cursor.to_f32()).unwrap();
        assert!(sel_pos < first_glyph && cursor_pos < first_glyph);
        let gl = glyphs(&inst);
        assert_eq!(gl[0].color, rgb([200, 200, 200]));
        assert_eq!(gl[1].color, rgb([1, 2, 3]), "glyph under the block cursor uses the cell background");
    }

    #[test]
    fn decorations_and_other_cursor_shapes() {
        let mut g = TerminalGridView::blank(3, 1, [100; 3], [0; 3]);
        g.cells[0] =
            CellView { ch: 'x', underline: true, strikethrough: true, dim: true, ..CellView::blank([100; 3], [0; 3]) };
        g.cursor = Some((0, 2, CursorShape::HollowBlock));
        let inst = build_grid_instances(&g, &layout(1.0), COLORS, fake_glyph).unwrap();
        let dim = rgb(dimmed([100; 3], [0; 3]));
        assert_eq!(glyphs(&inst)[0].color, dim);
        let lines: Vec<_> = inst.iter().filter(|i| i.uv_kind[2] == 0.0 && i.color == dim).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].rect[1], 20.0 + 12.0 + 2.0, "underline below the baseline");
        assert_eq!(lines[1].rect[1], 20.0 + 12.0 - 4.0, "strikethrough above it");
        assert_eq!(inst.iter().filter(|i| i.color == COLORS.cursor.to_f32()).count(), 4);
        g.cursor = Some((9, 9, CursorShape::Beam));
        let inst = build_grid_instances(&g, &layout(1.0), COLORS, fake_glyph).unwrap();
        assert_eq!(inst.iter().filter(|i| i.color == COLORS.cursor.to_f32()).count(), 0, "off-grid cursor is ignored");
    }

    #[test]
    fn short_cell_vectors_draw_blank_and_atlas_full_propagates() {
        let g = TerminalGridView { cols: 3, rows: 2, cells: vec![], cursor: None, selection: vec![] };
        let inst = build_grid_instances(&g, &layout(1.0), COLORS, fake_glyph).unwrap();
        assert!(glyphs(&inst).is_empty());
        let mut g = TerminalGridView::blank(3, 1, [1; 3], [0; 3]);
        g.put_str(0, 0, "x", [1; 3], [0; 3]);
        assert_eq!(build_grid_instances(&g, &layout(1.0), COLORS, |_, _| Err(AtlasFull)), Err(AtlasFull));
    }
}
