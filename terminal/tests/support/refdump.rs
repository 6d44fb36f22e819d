//! Text form of a grid for reference tests: the rows, the cursor, and
//! attribute runs. Shared by `tests/reference.rs` and `examples/record_ref.rs`.

use terminal::{GridSnapshot, Rgb};

/// One line per row (trailing spaces trimmed, wide spacers skipped).
pub fn grid_text(snap: &GridSnapshot) -> String {
    let mut out = String::new();
    for row in 0..snap.rows {
        out.push_str(&snap.row_text(row));
        out.push('\n');
    }
    out
}

fn hex(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c.r, c.g, c.b)
}

/// Cursor line plus one line per run of cells with identical non-default
/// attributes: `row:start-end fg=… bg=… flags=… link=…`.
pub fn attrs_text(snap: &GridSnapshot) -> String {
    let mut out = format!("cursor {}:{} {:?}\n", snap.cursor.row, snap.cursor.col, snap.cursor.shape);
    for row in 0..snap.rows {
        let mut col = 0;
        while col < snap.cols {
            let Some(cell) = snap.cell(row, col) else { break };
            let key = style_key(snap, cell);
            let mut end = col;
            while end + 1 < snap.cols && snap.cell(row, end + 1).map(|c| style_key(snap, c)) == Some(key.clone()) {
                end += 1;
            }
            if let Some(key) = key {
                out.push_str(&format!("{row}:{col}-{end} {key}\n"));
            }
            col = end + 1;
        }
    }
    out
}

/// A description of a cell's style, or None when it is entirely default.
fn style_key(snap: &GridSnapshot, cell: &terminal::Cell) -> Option<String> {
    let flags = cell.flags;
    let link = cell.hyperlink.and_then(|i| snap.hyperlinks.get(i as usize)).map(|h| h.uri.clone());
    if cell.fg == snap.foreground && cell.bg == snap.background && flags.is_empty() && link.is_none() {
        return None;
    }
    let mut key = format!("fg={} bg={}", hex(cell.fg), hex(cell.bg));
    if !flags.is_empty() {
        key.push_str(&format!(" flags={flags:?}").replace("CellFlags(", "").replace(')', ""));
    }
    if let Some(uri) = link {
        key.push_str(&format!(" link={uri}"));
    }
    Some(key)
}
