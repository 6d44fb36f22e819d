//! Scrollback snapshots for sessions without tmux: the grid is serialised as
//! text with SGR attributes (not the raw stream, which cannot be replayed from
//! the middle), capped at [`MAX_SNAPSHOT_BYTES`], and replayed on restore
//! under a visible "session restored" marker line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags, LineLength};
use alacritty_terminal::vte::ansi::{Color, NamedColor};

use crate::screen::Screen;

/// Largest snapshot written or replayed.
pub const MAX_SNAPSHOT_BYTES: usize = 256 * 1024;

/// The marker line written between restored history and the new session.
pub const RESTORED_MARKER: &str = "── session restored ──";

/// Errors saving or loading a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// Reading or writing the snapshot file failed.
    #[error("scrollback snapshot {path}: {source}")]
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
}

impl Screen {
    /// Serialises history and screen (up to the last non-blank line) as text
    /// with SGR attributes, keeping whole lines from the end within `max_bytes`
    /// (capped at [`MAX_SNAPSHOT_BYTES`]). When the alternate screen is active
    /// this captures what is shown.
    pub fn ansi_snapshot(&self, max_bytes: usize) -> Vec<u8> {
        let max_bytes = max_bytes.min(MAX_SNAPSHOT_BYTES);
        let term = self.term();
        let grid = term.grid();
        let mut bottom = term.bottommost_line();
        while bottom > term.topmost_line() && grid[bottom].line_length().0 == 0 {
            bottom -= 1;
        }
        // Build logical lines from the bottom up until the budget is spent.
        let mut pieces: Vec<String> = Vec::new();
        let mut used = 0usize;
        let mut line = bottom;
        loop {
            // A logical line starts after a row that does not wrap.
            let mut start = line;
            while start > term.topmost_line() && wraps(grid, start - 1) {
                start -= 1;
            }
            let mut text = String::new();
            let mut pen = Pen::default();
            let mut row = start;
            while row <= line {
                let cols = if wraps(grid, row) { term.columns() } else { grid[row].line_length().0 };
                for col in 0..cols {
                    let cell = &grid[row][Column(col)];
                    if cell.flags.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER) {
                        continue;
                    }
                    pen.transition(cell, &mut text);
                    text.push(cell.c);
                    text.extend(cell.zerowidth().into_iter().flatten());
                }
                row += 1;
            }
            if pen != Pen::default() {
                text.push_str("\x1b[0m");
            }
            text.push_str("\r\n");
            if used + text.len() > max_bytes {
                break;
            }
            used += text.len();
            pieces.push(text);
            if start <= term.topmost_line() {
                break;
            }
            line = start - 1;
        }
        pieces.reverse();
        pieces.concat().into_bytes()
    }
}

fn wraps(grid: &alacritty_terminal::Grid<Cell>, line: Line) -> bool {
    let last = Column(grid.columns() - 1);
    grid[line][last].flags.contains(Flags::WRAPLINE)
}

/// The SGR state last written, so attributes are only re-sent on change.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pen {
    fg: Color,
    bg: Color,
    flags: Flags,
}

impl Default for Pen {
    fn default() -> Self {
        Self {
            fg: Color::Named(NamedColor::Foreground),
            bg: Color::Named(NamedColor::Background),
            flags: Flags::empty(),
        }
    }
}

const STYLE_FLAGS: Flags = Flags::BOLD
    .union(Flags::DIM)
    .union(Flags::ITALIC)
    .union(Flags::ALL_UNDERLINES)
    .union(Flags::INVERSE)
    .union(Flags::HIDDEN)
    .union(Flags::STRIKEOUT);

impl Pen {
    fn transition(&mut self, cell: &Cell, out: &mut String) {
        let next = Pen { fg: cell.fg, bg: cell.bg, flags: cell.flags & STYLE_FLAGS };
        if next == *self {
            return;
        }
        out.push_str("\x1b[0");
        let codes = [
            (Flags::BOLD, "1"),
            (Flags::DIM, "2"),
            (Flags::ITALIC, "3"),
            (Flags::UNDERLINE, "4"),
            (Flags::DOUBLE_UNDERLINE, "4:2"),
            (Flags::UNDERCURL, "4:3"),
            (Flags::DOTTED_UNDERLINE, "4:4"),
            (Flags::DASHED_UNDERLINE, "4:5"),
            (Flags::INVERSE, "7"),
            (Flags::HIDDEN, "8"),
            (Flags::STRIKEOUT, "9"),
        ];
        for (flag, code) in codes {
            if next.flags.contains(flag) {
                out.push(';');
                out.push_str(code);
            }
        }
        push_color(out, next.fg, false);
        push_color(out, next.bg, true);
        out.push('m');
        *self = next;
    }
}

fn push_color(out: &mut String, color: Color, background: bool) {
    let base = if background { 40 } else { 30 };
    // Writing to a String cannot fail.
    let _ = match color {
        Color::Named(NamedColor::Foreground) | Color::Named(NamedColor::Background) => Ok(()),
        Color::Named(n) if (n as usize) < 8 => write!(out, ";{}", base + n as usize),
        Color::Named(n) if (n as usize) < 16 => write!(out, ";{}", base + 60 + n as usize - 8),
        Color::Named(_) => Ok(()),
        Color::Indexed(i) => write!(out, ";{};5;{i}", base + 8),
        Color::Spec(c) => write!(out, ";{};2;{};{};{}", base + 8, c.r, c.g, c.b),
    };
}

/// Bytes to feed a fresh screen on restore: the snapshot (its last
/// [`MAX_SNAPSHOT_BYTES`]) followed by the dim marker line.
pub fn restore_stream(snapshot: &[u8]) -> Vec<u8> {
    let snapshot = tail_at_line_start(snapshot, MAX_SNAPSHOT_BYTES);
    let mut out = Vec::with_capacity(snapshot.len() + 64);
    out.extend_from_slice(snapshot);
    out.extend_from_slice(b"\x1b[0m\x1b[2m");
    out.extend_from_slice(RESTORED_MARKER.as_bytes());
    out.extend_from_slice(b"\x1b[0m\r\n");
    out
}

/// Writes a snapshot atomically (temp file + rename), mode 0600.
pub fn save_snapshot(path: &Path, snapshot: &[u8]) -> Result<(), PersistError> {
    let data = tail_at_line_start(snapshot, MAX_SNAPSHOT_BYTES);
    local_guard::files::write_atomic(path, data, local_guard::files::FILE_MODE)
        .map_err(|e| PersistError::Io { path: path.to_owned(), source: e.into_io() })
}

/// Reads a snapshot; `Ok(None)` when there is none. Oversized files are cut to their tail.
pub fn load_snapshot(path: &Path) -> Result<Option<Vec<u8>>, PersistError> {
    match std::fs::read(path) {
        Ok(data) => Ok(Some(tail_at_line_start(&data, MAX_SNAPSHOT_BYTES).to_vec())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PersistError::Io { path: path.to_owned(), source }),
    }
}

/// The last `max` bytes of `data`, starting just after a newline so no line
/// (or escape sequence) is cut in half.
fn tail_at_line_start(data: &[u8], max: usize) -> &[u8] {
    if data.len() <= max {
        return data;
    }
    let tail = &data[data.len() - max..];
    match tail.iter().position(|&b| b == b'\n') {
        Some(nl) => &tail[nl + 1..],
        None => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::CellFlags;

    use crate::screen::fed_screen as screen;

    #[test]
    fn snapshot_round_trips_text_and_attributes() {
        let original =
            screen(10, 4, "plain\r\n\x1b[1;31mred\x1b[0m x\r\nabcdefghijklm\r\n中文\x1b[38;2;1;2;3mrgb".as_bytes());
        let snap = original.ansi_snapshot(MAX_SNAPSHOT_BYTES);
        let mut restored = screen(30, 8, &restore_stream(&snap));
        let text = restored.read_text(1000);
        assert_eq!(text, format!("plain\nred x\nabcdefghijklm\n中文rgb\n{RESTORED_MARKER}"));
        restored.scroll_to_bottom();
        let grid = restored.snapshot();
        let red = grid.cell(1, 0).unwrap();
        assert_eq!(red.ch, 'r');
        assert!(red.flags.contains(CellFlags::BOLD));
        assert_eq!(red.fg, crate::colors::Rgb::from_hex(0xff0000));
        assert_eq!(grid.cell(1, 4).unwrap().fg, grid.foreground);
        assert_eq!(grid.cell(3, 4).unwrap().fg, crate::colors::Rgb::new(1, 2, 3));
        assert!(grid.cell(4, 0).unwrap().flags.contains(CellFlags::DIM), "marker is dim");
    }

    #[test]
    fn snapshot_keeps_the_newest_whole_lines_within_the_cap() {
        let mut bytes = Vec::new();
        for i in 0..100 {
            bytes.extend_from_slice(format!("line {i:03}\r\n").as_bytes());
        }
        let s = screen(20, 5, &bytes);
        let snap = s.ansi_snapshot(29);
        assert_eq!(String::from_utf8(snap).unwrap(), "line 098\r\nline 099\r\n");
    }

    #[test]
    fn files_are_capped_and_missing_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.ansi");
        assert!(load_snapshot(&path).unwrap().is_none());
        let mut big = Vec::new();
        while big.len() <= MAX_SNAPSHOT_BYTES + 100 {
            big.extend_from_slice(b"0123456789abcdef\r\n");
        }
        save_snapshot(&path, &big).unwrap();
        let loaded = load_snapshot(&path).unwrap().unwrap();
        assert!(loaded.len() <= MAX_SNAPSHOT_BYTES);
        assert!(loaded.starts_with(b"0123456789abcdef\r\n"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
