//! A renderer-neutral copy of what a terminal shows, with every colour resolved.
//!
//! The canvas renderer draws a [`GridSnapshot`] cell by cell: paint `bg`, then
//! the glyph `ch` (+ `zerowidth` combining marks) in `fg` unless `HIDDEN`, then
//! decorations from `flags`. Inverse video is already applied to `fg`/`bg`.
//! A `WIDE` cell covers two columns; the following `WIDE_SPACER` cell draws
//! nothing but its background. Selection is reported both as `SELECTED` on
//! cells and as viewport spans.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line, Point};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::CursorShape as VtCursorShape;

use crate::colors::{Palette, Rgb, Theme};
use crate::screen::Screen;
use crate::selection::selection_range;

bitflags::bitflags! {
    /// Per-cell drawing attributes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct CellFlags: u16 {
        /// Bold weight.
        const BOLD = 1 << 0;
        /// Italic style.
        const ITALIC = 1 << 1;
        /// Single underline.
        const UNDERLINE = 1 << 2;
        /// Double underline.
        const DOUBLE_UNDERLINE = 1 << 3;
        /// Curly underline.
        const UNDERCURL = 1 << 4;
        /// Dotted underline.
        const DOTTED_UNDERLINE = 1 << 5;
        /// Dashed underline.
        const DASHED_UNDERLINE = 1 << 6;
        /// Inverse video was requested; fg/bg are already swapped.
        const INVERSE = 1 << 7;
        /// Dim (faint); fg is already darkened.
        const DIM = 1 << 8;
        /// Strikethrough.
        const STRIKETHROUGH = 1 << 9;
        /// First half of a double-width character; the glyph spans two cells.
        const WIDE = 1 << 10;
        /// Second half of a wide character (or the padding before one that
        /// wrapped); draw background only.
        const WIDE_SPACER = 1 << 11;
        /// Concealed text: draw background only.
        const HIDDEN = 1 << 12;
        /// The cell is inside the current selection.
        const SELECTED = 1 << 13;
        /// The line continues on the next row (soft wrap); set on the last cell.
        const WRAPPED = 1 << 14;
    }
}

/// One resolved grid cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The character (a space for empty cells).
    pub ch: char,
    /// Combining characters drawn over `ch`.
    pub zerowidth: Vec<char>,
    /// Glyph colour (after inverse, dim and bold-bright rules).
    pub fg: Rgb,
    /// Background colour (after inverse).
    pub bg: Rgb,
    /// Underline colour when set explicitly (SGR 58), else draw in `fg`.
    pub underline_color: Option<Rgb>,
    /// Attributes.
    pub flags: CellFlags,
    /// Index into [`GridSnapshot::hyperlinks`] for OSC 8 links.
    pub hyperlink: Option<u32>,
}

/// Cursor shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorShape {
    /// Filled block.
    Block,
    /// Hollow block (used when the node is unfocused).
    HollowBlock,
    /// Underline.
    Underline,
    /// Vertical bar.
    Beam,
    /// Not drawn (DECTCEM off, or scrolled out of view).
    Hidden,
}

/// Cursor position and style, in viewport coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorSnapshot {
    /// Viewport row (0 = top of what is shown).
    pub row: usize,
    /// Column.
    pub col: usize,
    /// Shape to draw.
    pub shape: CursorShape,
    /// Whether the program asked for a blinking cursor.
    pub blinking: bool,
    /// Cursor colour.
    pub color: Rgb,
}

/// A selected span in viewport coordinates, inclusive on both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectionSpan {
    /// First selected (row, col).
    pub start: (usize, usize),
    /// Last selected (row, col).
    pub end: (usize, usize),
    /// Rectangular selection: columns are bounded on every row.
    pub block: bool,
}

/// An OSC 8 hyperlink referenced by cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hyperlink {
    /// The link id (explicit `id=` or generated).
    pub id: String,
    /// Target URI.
    pub uri: String,
}

/// Everything needed to draw one frame of a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridSnapshot {
    /// Columns.
    pub cols: usize,
    /// Rows.
    pub rows: usize,
    /// `rows * cols` cells, row-major, top row first.
    pub cells: Vec<Cell>,
    /// Cursor.
    pub cursor: CursorSnapshot,
    /// Selected region, clipped to the viewport.
    pub selection: Option<SelectionSpan>,
    /// Lines scrolled back from the bottom (0 = following output).
    pub display_offset: usize,
    /// Lines of scrollback history available.
    pub history_size: usize,
    /// Default background (fill the node with this).
    pub background: Rgb,
    /// Default foreground.
    pub foreground: Rgb,
    /// Hyperlinks referenced by [`Cell::hyperlink`].
    pub hyperlinks: Vec<Hyperlink>,
    /// The screen generation this was taken at (see [`crate::Screen::generation`]).
    pub generation: u64,
}

impl GridSnapshot {
    /// The cell at (row, col), if inside the grid.
    pub fn cell(&self, row: usize, col: usize) -> Option<&Cell> {
        if row >= self.rows || col >= self.cols {
            return None;
        }
        self.cells.get(row * self.cols + col)
    }

    /// The URI of the hyperlink under (row, col), for Ctrl+click.
    pub fn hyperlink_at(&self, row: usize, col: usize) -> Option<&str> {
        let index = self.cell(row, col)?.hyperlink?;
        self.hyperlinks.get(index as usize).map(|link| link.uri.as_str())
    }

    /// Row text (wide spacers skipped, trailing spaces trimmed); for tests and debugging.
    pub fn row_text(&self, row: usize) -> String {
        let mut text = String::new();
        for col in 0..self.cols {
            let Some(cell) = self.cell(row, col) else { break };
            if cell.flags.contains(CellFlags::WIDE_SPACER) {
                continue;
            }
            text.push(cell.ch);
            text.extend(cell.zerowidth.iter());
        }
        text.trim_end_matches(' ').to_owned()
    }
}

impl Screen {
    /// A drawable copy of the visible grid.
    pub fn snapshot(&self) -> GridSnapshot {
        take(self.term(), self.theme(), self.generation())
    }
}

/// Copies the visible part of `term` into a snapshot.
fn take<T>(term: &Term<T>, theme: &Theme, generation: u64) -> GridSnapshot {
    let palette = Palette::new(theme, term.colors());
    let grid = term.grid();
    let cols = grid.columns();
    let rows = grid.screen_lines();
    let display_offset = grid.display_offset();
    let selection = selection_range(term);

    let mut hyperlinks: Vec<Hyperlink> = Vec::new();
    let mut cells = Vec::with_capacity(rows * cols);
    for row in 0..rows {
        let line = Line(row as i32 - display_offset as i32);
        let grid_row = &grid[line];
        for col in 0..cols {
            let cell = &grid_row[Column(col)];
            let point = Point::new(line, Column(col));
            let selected = selection.is_some_and(|range| range.contains(point));
            cells.push(convert_cell(cell, &palette, selected, &mut hyperlinks));
        }
    }

    let cursor_point = term.grid().cursor.point;
    let style = term.cursor_style();
    let visible_row = cursor_point.line.0 + display_offset as i32;
    let mut shape = match style.shape {
        VtCursorShape::Block => CursorShape::Block,
        VtCursorShape::HollowBlock => CursorShape::HollowBlock,
        VtCursorShape::Underline => CursorShape::Underline,
        VtCursorShape::Beam => CursorShape::Beam,
        VtCursorShape::Hidden => CursorShape::Hidden,
    };
    if !term.mode().contains(TermMode::SHOW_CURSOR) || visible_row >= rows as i32 {
        shape = CursorShape::Hidden;
    }
    let mut cursor_col = cursor_point.column.0.min(cols.saturating_sub(1));
    if cursor_col > 0 && grid[cursor_point].flags.contains(Flags::WIDE_CHAR_SPACER) {
        cursor_col -= 1;
    }
    let cursor = CursorSnapshot {
        row: visible_row.clamp(0, rows.saturating_sub(1) as i32) as usize,
        col: cursor_col,
        shape,
        blinking: style.blinking,
        color: palette.cursor(),
    };

    let selection = selection.and_then(|range| {
        let top = -(display_offset as i32);
        let bottom = top + rows as i32 - 1;
        if range.end.line.0 < top || range.start.line.0 > bottom {
            return None;
        }
        let (start_row, start_col) = if range.start.line.0 < top {
            (0, if range.is_block { range.start.column.0 } else { 0 })
        } else {
            ((range.start.line.0 - top) as usize, range.start.column.0)
        };
        let (end_row, end_col) = if range.end.line.0 > bottom {
            (rows - 1, if range.is_block { range.end.column.0 } else { cols - 1 })
        } else {
            ((range.end.line.0 - top) as usize, range.end.column.0)
        };
        Some(SelectionSpan { start: (start_row, start_col), end: (end_row, end_col), block: range.is_block })
    });

    GridSnapshot {
        cols,
        rows,
        cells,
        cursor,
        selection,
        display_offset,
        history_size: grid.history_size(),
        background: palette.background(),
        foreground: palette.foreground(),
        hyperlinks,
        generation,
    }
}

fn convert_cell(
    cell: &alacritty_terminal::term::cell::Cell,
    palette: &Palette,
    selected: bool,
    hyperlinks: &mut Vec<Hyperlink>,
) -> Cell {
    let f = cell.flags;
    let mut fg = palette.fg(cell.fg, f);
    let mut bg = palette.bg(cell.bg);
    if f.contains(Flags::INVERSE) {
        std::mem::swap(&mut fg, &mut bg);
    }
    if f.contains(Flags::HIDDEN) {
        fg = bg;
    }
    let mapping = [
        (Flags::BOLD, CellFlags::BOLD),
        (Flags::ITALIC, CellFlags::ITALIC),
        (Flags::UNDERLINE, CellFlags::UNDERLINE),
        (Flags::DOUBLE_UNDERLINE, CellFlags::DOUBLE_UNDERLINE),
        (Flags::UNDERCURL, CellFlags::UNDERCURL),
        (Flags::DOTTED_UNDERLINE, CellFlags::DOTTED_UNDERLINE),
        (Flags::DASHED_UNDERLINE, CellFlags::DASHED_UNDERLINE),
        (Flags::INVERSE, CellFlags::INVERSE),
        (Flags::DIM, CellFlags::DIM),
        (Flags::STRIKEOUT, CellFlags::STRIKETHROUGH),
        (Flags::WIDE_CHAR, CellFlags::WIDE),
        (Flags::WIDE_CHAR_SPACER, CellFlags::WIDE_SPACER),
        (Flags::LEADING_WIDE_CHAR_SPACER, CellFlags::WIDE_SPACER),
        (Flags::HIDDEN, CellFlags::HIDDEN),
        (Flags::WRAPLINE, CellFlags::WRAPPED),
    ];
    let mut flags = CellFlags::empty();
    for (from, to) in mapping {
        if f.contains(from) {
            flags |= to;
        }
    }
    if selected {
        flags |= CellFlags::SELECTED;
    }
    let hyperlink = cell.hyperlink().map(|link| {
        let position = hyperlinks.iter().position(|h| h.id == link.id() && h.uri == link.uri());
        let index = position.unwrap_or_else(|| {
            hyperlinks.push(Hyperlink { id: link.id().to_owned(), uri: link.uri().to_owned() });
            hyperlinks.len() - 1
        });
        index as u32
    });
    Cell {
        ch: cell.c,
        zerowidth: cell.zerowidth().map(<[char]>::to_vec).unwrap_or_default(),
        fg,
        bg,
        underline_color: cell.underline_color().map(|c| palette.fg(c, Flags::empty())),
        flags,
        hyperlink,
    }
}
