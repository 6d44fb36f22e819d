//! Terminal screen → the renderer's cell grid.

use canvas_render::{CellView, CursorShape as RCursor, TerminalGridView};
use terminal::{CellFlags, CursorShape, GridSnapshot};

fn clamp16(v: usize) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

fn rgb(c: terminal::Rgb) -> [u8; 3] {
    [c.r, c.g, c.b]
}

/// Converts a terminal snapshot into the renderer's cell grid.
pub fn grid_view(s: &GridSnapshot, focused: bool) -> TerminalGridView {
    let cells = s
        .cells
        .iter()
        .map(|c| CellView {
            ch: c.ch,
            fg: rgb(c.fg),
            bg: rgb(c.bg),
            bold: c.flags.contains(CellFlags::BOLD),
            italic: c.flags.contains(CellFlags::ITALIC),
            underline: c.flags.intersects(
                CellFlags::UNDERLINE
                    | CellFlags::DOUBLE_UNDERLINE
                    | CellFlags::UNDERCURL
                    | CellFlags::DOTTED_UNDERLINE
                    | CellFlags::DASHED_UNDERLINE,
            ),
            strikethrough: c.flags.contains(CellFlags::STRIKETHROUGH),
            dim: c.flags.contains(CellFlags::DIM),
            wide: c.flags.contains(CellFlags::WIDE),
            wide_spacer: c.flags.contains(CellFlags::WIDE_SPACER),
        })
        .collect();
    let shape = match s.cursor.shape {
        CursorShape::Hidden => None,
        _ if !focused => Some(RCursor::HollowBlock),
        CursorShape::Block => Some(RCursor::Block),
        CursorShape::HollowBlock => Some(RCursor::HollowBlock),
        CursorShape::Underline => Some(RCursor::Underline),
        CursorShape::Beam => Some(RCursor::Beam),
    };
    let mut selection = vec![];
    if let Some(sel) = &s.selection {
        let (start, end) = (sel.start, sel.end);
        for row in start.0..=end.0.min(s.rows.saturating_sub(1)) {
            let c0 = if row == start.0 || sel.block { start.1 } else { 0 };
            let c1 = if row == end.0 || sel.block { end.1 + 1 } else { s.cols };
            selection.push((clamp16(row), clamp16(c0), clamp16(c1.min(s.cols))));
        }
    }
    TerminalGridView {
        cols: clamp16(s.cols),
        rows: clamp16(s.rows),
        cells,
        cursor: shape.map(|sh| (clamp16(s.cursor.row), clamp16(s.cursor.col), sh)),
        selection,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use terminal::{Cell, CursorSnapshot, Rgb, SelectionSpan};

    fn snapshot(cols: usize, rows: usize, shape: CursorShape) -> GridSnapshot {
        let cell = Cell {
            ch: ' ',
            zerowidth: vec![],
            fg: Rgb { r: 1, g: 2, b: 3 },
            bg: Rgb { r: 4, g: 5, b: 6 },
            underline_color: None,
            flags: CellFlags::empty(),
            hyperlink: None,
        };
        GridSnapshot {
            cols,
            rows,
            cells: vec![cell; cols * rows],
            cursor: CursorSnapshot { row: 1, col: 2, shape, blinking: false, color: Rgb::default() },
            selection: None,
            display_offset: 0,
            history_size: 0,
            background: Rgb::default(),
            foreground: Rgb::default(),
            hyperlinks: vec![],
            generation: 0,
        }
    }

    #[test]
    fn cells_keep_colours_and_map_flags() {
        let mut s = snapshot(3, 1, CursorShape::Block);
        s.cells[0].ch = 'a';
        s.cells[0].flags = CellFlags::BOLD | CellFlags::UNDERCURL | CellFlags::WIDE;
        s.cells[1].flags = CellFlags::WIDE_SPACER | CellFlags::DIM | CellFlags::STRIKETHROUGH;
        s.cells[2].flags = CellFlags::ITALIC | CellFlags::DASHED_UNDERLINE;
        let v = grid_view(&s, true);
        assert_eq!((v.cols, v.rows, v.cells.len()), (3, 1, 3));
        let [a, b, c] = [v.cells[0], v.cells[1], v.cells[2]];
        assert_eq!((a.ch, a.fg, a.bg), ('a', [1, 2, 3], [4, 5, 6]));
        assert!(a.bold && a.underline && a.wide && !a.italic && !a.dim);
        assert!(b.wide_spacer && b.dim && b.strikethrough && !b.underline);
        assert!(c.italic && c.underline && !c.bold);
    }

    #[test]
    fn the_cursor_is_hollow_when_unfocused_and_absent_when_hidden() {
        let beam = snapshot(4, 2, CursorShape::Beam);
        assert_eq!(grid_view(&beam, true).cursor, Some((1, 2, RCursor::Beam)));
        assert_eq!(grid_view(&beam, false).cursor, Some((1, 2, RCursor::HollowBlock)));
        let hidden = snapshot(4, 2, CursorShape::Hidden);
        assert_eq!(grid_view(&hidden, true).cursor, None);
        assert_eq!(grid_view(&hidden, false).cursor, None);
    }

    #[test]
    fn selections_become_row_spans_clipped_to_the_grid() {
        let mut s = snapshot(5, 3, CursorShape::Block);
        // A line selection from (0,3) to (2,1): the first row from col 3, the middle whole, the last to col 1.
        s.selection = Some(SelectionSpan { start: (0, 3), end: (2, 1), block: false });
        assert_eq!(grid_view(&s, true).selection, vec![(0, 3, 5), (1, 0, 5), (2, 0, 2)]);
        // A block selection bounds every row's columns.
        s.selection = Some(SelectionSpan { start: (0, 1), end: (1, 2), block: true });
        assert_eq!(grid_view(&s, true).selection, vec![(0, 1, 3), (1, 1, 3)]);
        // Rows past the grid and columns past its width are cut off.
        s.selection = Some(SelectionSpan { start: (1, 2), end: (9, 9), block: false });
        assert_eq!(grid_view(&s, true).selection, vec![(1, 2, 5), (2, 0, 5)]);
    }
}
