//! Plain-text extraction of scrollback + screen for agents (`read_text`).

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line, Point};
use alacritty_terminal::term::cell::LineLength;

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
        let raw = term.bounds_to_string(Point::new(start, Column(0)), Point::new(bottom, term.last_column()));
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
