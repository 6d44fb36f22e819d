//! Mouse selection (drag, double-click word, triple-click line, block) and
//! its text, built on alacritty's `Selection` so wrapped lines join without a
//! newline and wide characters are not doubled.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line, Point, Side as VtSide};
use alacritty_terminal::selection::{Selection, SelectionRange, SelectionType};
use alacritty_terminal::term::Term;

use crate::screen::Screen;
use crate::text::bounds_text;

/// What a selection gesture selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectionKind {
    /// Drag: exactly the cells between the two points.
    Simple,
    /// Double-click: expands to whole words.
    Semantic,
    /// Triple-click: expands to whole lines.
    Lines,
    /// Alt+drag: a rectangle.
    Block,
}

/// Which half of a cell the pointer is over; decides whether that cell is included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Left half.
    Left,
    /// Right half.
    Right,
}

impl Screen {
    /// Starts a selection at viewport (row, col), replacing any previous one.
    pub fn start_selection(&mut self, kind: SelectionKind, row: usize, col: usize, side: Side) {
        let point = self.viewport_point(row, col);
        let ty = match kind {
            SelectionKind::Simple => SelectionType::Simple,
            SelectionKind::Semantic => SelectionType::Semantic,
            SelectionKind::Lines => SelectionType::Lines,
            SelectionKind::Block => SelectionType::Block,
        };
        self.term_mut().selection = Some(Selection::new(ty, point, vt_side(side)));
        self.bump();
    }

    /// Moves the end of the current selection to viewport (row, col).
    pub fn update_selection(&mut self, row: usize, col: usize, side: Side) {
        let point = self.viewport_point(row, col);
        if let Some(selection) = self.term_mut().selection.as_mut() {
            selection.update(point, vt_side(side));
            self.bump();
        }
    }

    /// Removes the selection.
    pub fn clear_selection(&mut self) {
        if self.term_mut().selection.take().is_some() {
            self.bump();
        }
    }

    /// Whether a non-empty selection exists.
    pub fn has_selection(&self) -> bool {
        self.term().selection.as_ref().is_some_and(|s| !s.is_empty())
    }

    /// The selected text (None when nothing is selected): what alacritty's
    /// `selection_to_string` gives, read through [`bounds_text`] so a row
    /// ending in a wrapped wide character neither panics nor reads the row above.
    pub fn selection_text(&self) -> Option<String> {
        let term = self.term();
        let range = selection_range(term)?;
        let (start, end) = (range.start, range.end);
        let text = if range.is_block {
            // Each row of the rectangle on a line of its own, trailing spaces trimmed.
            let rows: Vec<String> = (start.line.0..=end.line.0)
                .map(|line| {
                    let line = Line(line);
                    bounds_text(term, Point::new(line, start.column), Point::new(line, end.column))
                        .trim_end()
                        .to_owned()
                })
                .collect();
            rows.join("\n")
        } else if term.selection.as_ref().is_some_and(|s| s.ty == SelectionType::Lines) {
            bounds_text(term, start, end) + "\n"
        } else {
            bounds_text(term, start, end)
        };
        (!text.is_empty()).then_some(text)
    }

    /// Converts a viewport cell to a grid point, clamped to the grid.
    fn viewport_point(&self, row: usize, col: usize) -> Point {
        let term = self.term();
        let rows = term.screen_lines();
        let cols = term.columns();
        let row = row.min(rows.saturating_sub(1));
        let col = col.min(cols.saturating_sub(1));
        let offset = term.grid().display_offset();
        Point::new(Line(row as i32 - offset as i32), Column(col))
    }
}

/// The current selection's range, or None when it covers no cell.
///
/// alacritty 0.26 turns a block selection whose left edge is the right half of
/// the last column into a range starting one column past the grid (its
/// `range_block` moves the start right without a bound); reading that range
/// indexes out of bounds. Such a block selects nothing, so it is dropped here.
pub(crate) fn selection_range<T>(term: &Term<T>) -> Option<SelectionRange> {
    let range = term.selection.as_ref()?.to_range(term)?;
    (range.start.column.0 < term.columns() && range.end.column.0 < term.columns()).then_some(range)
}

fn vt_side(side: Side) -> VtSide {
    match side {
        Side::Left => VtSide::Left,
        Side::Right => VtSide::Right,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::CellFlags;

    use crate::screen::fed_screen as screen;

    #[test]
    fn drag_selection_over_a_soft_wrap_has_no_newline() {
        // 25 chars in a 10-column terminal wrap twice; then a hard newline.
        let mut s = screen(10, 5, b"abcdefghijklmnopqrstuvwxy\r\nnext");
        s.start_selection(SelectionKind::Simple, 0, 0, Side::Left);
        s.update_selection(3, 3, Side::Right);
        assert_eq!(s.selection_text().unwrap(), "abcdefghijklmnopqrstuvwxy\nnext");
    }

    #[test]
    fn wide_characters_are_not_doubled() {
        let mut s = screen(20, 3, "a中文b".as_bytes());
        let snap = s.snapshot();
        assert!(snap.cell(0, 1).unwrap().flags.contains(CellFlags::WIDE));
        assert!(snap.cell(0, 2).unwrap().flags.contains(CellFlags::WIDE_SPACER));
        s.start_selection(SelectionKind::Simple, 0, 0, Side::Left);
        s.update_selection(0, 5, Side::Right);
        assert_eq!(s.selection_text().unwrap(), "a中文b");
        // Starting on the spacer half still selects the whole character.
        s.start_selection(SelectionKind::Simple, 0, 2, Side::Left);
        s.update_selection(0, 3, Side::Right);
        assert_eq!(s.selection_text().unwrap(), "中文");
    }

    #[test]
    fn double_click_selects_a_word_and_triple_click_a_line() {
        let mut s = screen(40, 3, b"git log --oneline here");
        s.start_selection(SelectionKind::Semantic, 0, 9, Side::Left);
        assert_eq!(s.selection_text().unwrap(), "--oneline");
        s.start_selection(SelectionKind::Lines, 0, 2, Side::Left);
        assert_eq!(s.selection_text().unwrap(), "git log --oneline here\n");
    }

    #[test]
    fn a_row_ending_in_a_wrapped_wide_character_selects_that_character_once() {
        // 14 narrow characters and a wide one that wraps, leaving a spacer in column 14.
        let mut s = screen(15, 3, "abcdefghijklmn界x".as_bytes());
        s.start_selection(SelectionKind::Simple, 0, 10, Side::Left);
        s.update_selection(0, 14, Side::Right);
        assert_eq!(s.selection_text().unwrap(), "klmn界");
        s.start_selection(SelectionKind::Block, 0, 13, Side::Left);
        s.update_selection(0, 14, Side::Right);
        assert_eq!(s.selection_text().unwrap(), "n界");
        // The same row as the oldest line, its wrapped half pushed off the screen.
        let mut s = screen(15, 1, "abcdefghijklmn界\x1b[L".as_bytes());
        s.start_selection(SelectionKind::Lines, 0, 0, Side::Left);
        assert_eq!(s.selection_text().unwrap(), "abcdefghijklmn\n");
        s.start_selection(SelectionKind::Block, 0, 14, Side::Left);
        s.update_selection(0, 14, Side::Right);
        assert_eq!(s.selection_text(), None);
    }

    #[test]
    fn block_selection_is_rectangular() {
        let mut s = screen(10, 3, b"abcdef\r\nghijkl\r\nmnopqr");
        s.start_selection(SelectionKind::Block, 0, 1, Side::Left);
        s.update_selection(2, 2, Side::Right);
        assert_eq!(s.selection_text().unwrap(), "bc\nhi\nno");
    }

    #[test]
    fn selection_is_reported_in_the_snapshot_and_can_be_cleared() {
        let mut s = screen(10, 3, b"hello");
        s.start_selection(SelectionKind::Simple, 0, 1, Side::Left);
        s.update_selection(0, 3, Side::Right);
        let snap = s.snapshot();
        let span = snap.selection.unwrap();
        assert_eq!((span.start, span.end), ((0, 1), (0, 3)));
        assert!(snap.cell(0, 2).unwrap().flags.contains(CellFlags::SELECTED));
        assert!(!snap.cell(0, 4).unwrap().flags.contains(CellFlags::SELECTED));
        s.clear_selection();
        assert!(s.selection_text().is_none());
        assert!(s.snapshot().selection.is_none());
    }

    #[test]
    fn selection_in_scrollback_uses_viewport_rows() {
        let mut s = screen(10, 2, b"one\r\ntwo\r\nthree\r\nfour");
        s.scroll_lines(2);
        s.start_selection(SelectionKind::Lines, 0, 0, Side::Left);
        assert_eq!(s.selection_text().unwrap(), "one\n");
    }
}
