//! Reference tests in the alacritty style: byte streams recorded from real
//! programs (tests/ref/<name>/bytes, see tests/ref/README.md) are replayed into
//! a `Screen` and the grid and attributes compared with the checked-in ones.

#[path = "support/refdump.rs"]
mod refdump;

use std::path::{Path, PathBuf};

use terminal::{Screen, ScreenConfig, TermSize};

fn ref_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("ref")
}

fn parse_size(text: &str) -> TermSize {
    let (cols, rows) = text.trim().split_once('x').expect("size is COLSxROWS");
    TermSize::new(cols.parse().unwrap(), rows.parse().unwrap())
}

/// Replays `bytes` fed in chunks of `chunk` bytes (0 = all at once).
fn replay(size: TermSize, bytes: &[u8], chunk: usize) -> (String, String) {
    let mut screen = Screen::new(size, ScreenConfig::default()).unwrap();
    if chunk == 0 {
        screen.feed(bytes);
    } else {
        for piece in bytes.chunks(chunk) {
            screen.feed(piece);
        }
    }
    let snap = screen.snapshot();
    (refdump::grid_text(&snap), refdump::attrs_text(&snap))
}

fn check(name: &str) {
    let dir = ref_dir().join(name);
    let bytes = std::fs::read(dir.join("bytes")).unwrap();
    assert!(bytes.len() < 64 * 1024, "{name}: recordings must stay small");
    let size = parse_size(&std::fs::read_to_string(dir.join("size")).unwrap());
    let want_grid = std::fs::read_to_string(dir.join("grid.txt")).unwrap();
    let want_attrs = std::fs::read_to_string(dir.join("attrs.txt")).unwrap();
    // Odd chunk sizes split escape sequences and UTF-8 across reads, as a PTY does.
    for chunk in [0, 1, 7, 4096] {
        let (grid, attrs) = replay(size, &bytes, chunk);
        assert_eq!(grid, want_grid, "{name}: grid differs (chunk {chunk})");
        assert_eq!(attrs, want_attrs, "{name}: attributes differ (chunk {chunk})");
    }
}

#[test]
fn every_recording_has_a_test() {
    let mut names: Vec<String> = std::fs::read_dir(ref_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["cjk", "git_log", "htop", "ls", "osc8", "sgr", "vim"]);
}

#[test]
fn ls() {
    check("ls");
}

#[test]
fn git_log() {
    check("git_log");
}

#[test]
fn vim() {
    check("vim");
}

#[test]
fn htop() {
    check("htop");
}

#[test]
fn cjk() {
    check("cjk");
}

#[test]
fn osc8() {
    check("osc8");
}

#[test]
fn sgr() {
    check("sgr");
}

#[test]
fn vim_draws_on_the_alternate_screen() {
    let dir = ref_dir().join("vim");
    let bytes = std::fs::read(dir.join("bytes")).unwrap();
    let mut screen = Screen::new(TermSize::new(80, 24), ScreenConfig::default()).unwrap();
    screen.feed(&bytes);
    let modes = screen.input_modes();
    assert!(modes.alt_screen, "vim uses the alternate screen");
    // The cursor sits on "line" after `jw`, past the gutter and the two wide characters.
    let snap = screen.snapshot();
    assert_eq!((snap.cursor.row, snap.cursor.col), (1, 9));
    assert_eq!(snap.cell(1, 9).unwrap().ch, 'l');
}

#[test]
fn osc8_links_are_exposed_for_ctrl_click() {
    let dir = ref_dir().join("osc8");
    let bytes = std::fs::read(dir.join("bytes")).unwrap();
    let mut screen = Screen::new(TermSize::new(80, 24), ScreenConfig::default()).unwrap();
    screen.feed(&bytes);
    let snap = screen.snapshot();
    assert_eq!(snap.hyperlink_at(0, 4), Some("https://example.com/docs"));
    assert_eq!(snap.hyperlink_at(0, 11), Some("https://example.com/docs"));
    assert_eq!(snap.hyperlink_at(0, 12), None);
    assert_eq!(snap.hyperlink_at(0, 17), Some("file:///tmp/a.txt"));
}
