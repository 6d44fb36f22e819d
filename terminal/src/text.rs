//! Plain-text extraction of scrollback + screen for agents (`read_text`),
//! and [`bounds_text`], the one way this crate turns a range of cells into text.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line, Point};
use alacritty_terminal::term::cell::{Flags, LineLength};
use alacritty_terminal::term::Term;

use crate::screen::Screen;

impl Screen {
    /// The last `max_chars` characters of scrollback plus visible text, as
    /// logical lines (soft wraps joined), trailing spaces trimmed per line and
    /// trailing blank lines dropped. Independent of the current scroll position.
    /// An exit line (see [`Screen::write_exit_line`]) is not part of it.
    pub fn read_text(&self, max_chars: usize) -> String {
        let Some(line) = &self.exit_line else { return self.grid_text(max_chars) };
        // Nothing is written after the exit line: it is the text's end.
        let raw = self.grid_text(max_chars.saturating_add(line.chars().count() + 2));
        let body = raw.strip_suffix(line.as_str()).map_or(raw.as_str(), |b| b.trim_end_matches('\n'));
        let count = body.chars().count();
        body.chars().skip(count.saturating_sub(max_chars)).collect()
    }

    fn grid_text(&self, max_chars: usize) -> String {
        if max_chars == 0 {
            return String::new();
        }
        let term = self.term();
        let grid = term.grid();
        let bottom = last_non_blank_line(self);
        let top = term.topmost_line();
        // Walk up until the rows certainly hold enough characters (each row adds its
        // length plus a possible newline), so a long history is not stringified.
        let mut start = bottom;
        let mut budget = 0usize;
        while start > top && budget <= max_chars {
            budget += grid[start].line_length().0 + 1;
            start -= 1;
        }
        if budget > max_chars && start < bottom {
            start += 1;
        }
        let raw = bounds_text(term, Point::new(start, Column(0)), Point::new(bottom, term.last_column()));
        let mut text = String::with_capacity(raw.len());
        for (i, line) in raw.split('\n').enumerate() {
            if i > 0 {
                text.push('\n');
            }
            text.push_str(line.trim_end_matches(' '));
        }
        let trimmed_len = text.trim_end_matches('\n').len();
        text.truncate(trimmed_len);
        let count = text.chars().count();
        if count > max_chars {
            text.chars().skip(count - max_chars).collect()
        } else {
            text
        }
    }
}

/// The text of the cells from `start` to `end` (reading order), as
/// alacritty's `Term::bounds_to_string`, without its wrapped-wide defect.
///
/// When the range ends on the last column of a row whose last cell is a
/// leading wide-char spacer (a wide character that did not fit and went on
/// to the next row), alacritty_terminal 0.26 appends the first character of
/// the row *above* the end: a wrong character, and an index outside the grid
/// when the end row is the oldest line (a panic found by tests/fuzz_vt.rs).
/// Here the range stops before the spacer (which prints nothing) and the
/// wide character it stands for, the first cell of the next row, is appended.
pub(crate) fn bounds_text<T>(term: &Term<T>, start: Point, mut end: Point) -> String {
    let last = term.last_column();
    let grid = term.grid();
    let ends_on_spacer =
        end.column == last && last.0 >= 1 && grid[end.line][last].flags.contains(Flags::LEADING_WIDE_CHAR_SPACER);
    if !ends_on_spacer {
        return term.bounds_to_string(start, end);
    }
    end.column = last - 1;
    let mut text = term.bounds_to_string(start, end);
    if end.line < term.bottommost_line() {
        text.push(grid[end.line + 1i32][Column(0)].c);
    }
    text
}

/// The lowest line with any content (or the top screen line when all is blank).
fn last_non_blank_line(screen: &Screen) -> Line {
    let term = screen.term();
    let grid = term.grid();
    let mut line = term.bottommost_line();
    while line > term.topmost_line() && grid[line].line_length().0 == 0 {
        line -= 1;
    }
    line
}

#[cfg(test)]
mod tests {

    use crate::screen::fed_screen as screen;

    #[test]
    fn includes_scrollback_joins_wraps_and_trims() {
        let s = screen(10, 3, b"first   \r\nabcdefghijklmno\r\nlast  \r\n");
        assert_eq!(s.read_text(1000), "first\nabcdefghijklmno\nlast");
    }

    #[test]
    fn keeps_only_the_last_max_chars() {
        let mut bytes = Vec::new();
        for i in 0..200 {
            bytes.extend_from_slice(format!("line {i}\r\n").as_bytes());
        }
        let s = screen(20, 5, &bytes);
        assert_eq!(s.read_text(17), "line 198\nline 199");
        assert_eq!(s.read_text(0), "");
        assert!(s.read_text(100_000).starts_with("line 0\nline 1\n"));
    }

    #[test]
    fn a_wide_character_wrapped_off_a_one_line_history_reads_without_panic() {
        // A 15-column row: 14 narrow characters, then a wide one that wraps and
        // leaves a leading spacer in the last column; the wrapped row is then
        // pushed off the 1-row screen by an insert-line.
        let s = screen(15, 1, "abcdefghijklmn界\x1b[L".as_bytes());
        assert_eq!(s.read_text(100), "abcdefghijklmn");
    }

    #[test]
    fn a_wide_character_wrapped_to_the_next_row_is_read_once() {
        let s = screen(15, 3, "abcdefghijklmn界x".as_bytes());
        assert_eq!(s.read_text(100), "abcdefghijklmn界x");
    }

    #[test]
    fn wide_characters_appear_once() {
        let s = screen(10, 3, "中文字符测试\r\n".as_bytes());
        assert_eq!(s.read_text(100), "中文字符测试");
    }

    #[test]
    fn does_not_depend_on_scroll_position() {
        let mut s = screen(10, 2, b"a\r\nb\r\nc\r\nd");
        let before = s.read_text(100);
        s.scroll_lines(2);
        assert_eq!(s.read_text(100), before);
        assert_eq!(before, "a\nb\nc\nd");
    }
}
