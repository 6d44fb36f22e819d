//! tmux's `capture-pane -p -e -J` output as bytes a fresh screen can be fed:
//! what [`crate::tmux`] reads back from a pane's trace file and
//! [`crate::trace`] replays. Bytes in, bytes out; it imports nothing of the
//! crate.

/// Turns `capture-pane -p -e -J` output into bytes for a fresh screen: lines
/// end in CR LF, trailing spaces and the blank rows below the last output are
/// dropped, and attributes are reset at the end.
pub fn capture_stream(raw: &[u8]) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = raw.split(|&b| b == b'\n').map(trim_spaces).collect();
    while lines.last().is_some_and(|l| is_blank(l)) {
        lines.pop();
    }
    if lines.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(raw.len() + lines.len() + 8);
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(line);
    }
    out.extend_from_slice(b"\x1b[0m");
    out
}

fn trim_spaces(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let end = line.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &line[..end]
}

/// Whether a captured line shows nothing: only spaces and SGR sequences.
fn is_blank(line: &[u8]) -> bool {
    let mut rest = line;
    while let Some((&first, tail)) = rest.split_first() {
        match first {
            b' ' => rest = tail,
            0x1b if tail.first() == Some(&b'[') => match tail.iter().position(|&b| b == b'm') {
                Some(end) if tail[1..end].iter().all(|b| b.is_ascii_digit() || *b == b';' || *b == b':') => {
                    rest = &tail[end + 1..]
                }
                _ => return false,
            },
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_become_crlf_lines_without_the_blank_rows_below() {
        let raw = b"$ echo hi   \n\x1b[31mhi\x1b[39m\n$ exit 3\n\n   \n\x1b[0m\n";
        assert_eq!(capture_stream(raw), b"$ echo hi\r\n\x1b[31mhi\x1b[39m\r\n$ exit 3\x1b[0m".to_vec());
        assert!(capture_stream(b"\n\n  \n").is_empty());
        assert!(capture_stream(b"").is_empty());
    }
}
