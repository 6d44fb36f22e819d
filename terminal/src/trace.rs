//! What a terminal leaves when its program ends: the pane history tmux
//! captured (replayed into the grid in place of the client's last frame, which
//! tmux clears as it leaves) and a styled exit line under the output. The
//! capture's bytes come from [`capture_stream`] (kept in `capture.rs`, which
//! [`crate::tmux`] uses too).

pub use crate::capture::capture_stream;
use crate::screen::Screen;

/// Feed for an exit line: dim italic, between blank-line padding.
const EXIT_LINE_STYLE: &str = "\x1b[0;2;3m";

impl Screen {
    /// Replaces everything shown and scrolled back with what `stream` draws on
    /// a blank screen of the same size (a program's captured output). Replies
    /// and titles the stream would cause are dropped: no program reads them.
    pub fn replace_with(&mut self, stream: &[u8]) {
        self.reset_term();
        self.feed(stream);
        self.take_events();
    }

    /// Writes `text` on its own dim line under the output, after a blank line,
    /// and hides the cursor: the mark a program leaves when it ends. The line is
    /// for the person: [`Screen::read_text`] leaves it out.
    pub fn write_exit_line(&mut self, text: &str) {
        let at_line_start = self.term().grid().cursor.point.column.0 == 0;
        let mut feed = String::from("\x1b[0m");
        if !at_line_start {
            feed.push_str("\r\n");
        }
        // Nothing printed yet: the line goes at the top, not under a blank one.
        let empty = self.read_text(1).is_empty();
        if !empty {
            feed.push_str("\r\n");
        }
        feed.push_str(EXIT_LINE_STYLE);
        // Control characters in `text` must not act on the grid.
        let line: String = text.chars().filter(|c| !c.is_control()).collect();
        feed.push_str(&line);
        feed.push_str("\x1b[0m\x1b[?25l");
        self.feed(feed.as_bytes());
        self.take_events();
        self.scroll_to_bottom();
        self.exit_line = Some(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::fed_screen;

    #[test]
    fn a_replayed_capture_replaces_screen_and_history() {
        let mut s = fed_screen(20, 3, b"old 1\r\nold 2\r\nold 3\r\nold 4\r\n\x1b[?1049h\x1b[2J");
        let mut capture = Vec::new();
        for i in 0..30 {
            capture.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        s.replace_with(&capture_stream(&capture));
        let text = s.read_text(10_000);
        assert!(text.starts_with("line 0\nline 1\n"), "history kept: {text}");
        assert!(text.ends_with("line 29"), "{text}");
        assert!(!text.contains("old"), "{text}");
        assert!(!s.input_modes().alt_screen);
        assert!(s.snapshot().history_size >= 27);
    }

    #[test]
    fn the_exit_line_sits_under_the_output_dim_and_cursorless() {
        let mut s = fed_screen(40, 6, b"about to fail\r\n");
        s.write_exit_line("exited 3 \x1b[31m· Enter to restart");
        let snap = s.snapshot();
        assert_eq!(snap.row_text(0), "about to fail");
        assert_eq!(snap.row_text(1), "");
        assert_eq!(snap.row_text(2), "exited 3 [31m· Enter to restart");
        assert!(snap.cell(2, 0).is_some_and(|c| c.flags.contains(crate::snapshot::CellFlags::DIM)));
        assert_eq!(snap.cursor.shape, crate::snapshot::CursorShape::Hidden);
        assert_eq!(s.read_text(1000), "about to fail", "the output, without the exit line");
        assert_eq!(s.read_text(4), "fail");

        let mut blank = fed_screen(40, 3, b"");
        blank.write_exit_line("exited 0");
        assert_eq!(blank.snapshot().row_text(0), "exited 0", "no blank line above on an empty screen");

        let mut mid = fed_screen(40, 4, b"no newline");
        mid.write_exit_line("exited 1");
        assert_eq!(mid.snapshot().row_text(2), "exited 1");
    }
}
