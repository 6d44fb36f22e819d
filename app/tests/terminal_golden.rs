//! A golden image of a terminal node: recorded byte streams (`ls --color`, SGR
//! styles and colours, `git log --graph --color` from terminal/tests/ref)
//! replayed into a real `terminal::Screen`, converted with the app's
//! `grid_view`, with a mouse selection and a focused block cursor, drawn by
//! canvas-render on lavapipe. No PTY, no CEF: the same code path the app uses
//! from grid to pixels.
//!
//! Tolerance: a pixel counts as different when a channel differs by more than
//! 8; at most 0.5 % of pixels may differ. On failure `<name>.actual.png` and
//! `<name>.diff.png` are written under the test target's tmp dir;
//! `UPDATE_GOLDEN=1` regenerates `app/tests/golden/<name>.png`.

use canvas_render::{
    visual_test, Badge, Camera, Color, CursorShape, Gpu, NodeContent, NodeKind, NodeView, Rect, Renderer, RgbaImage,
    Scene, Theme, Vec2,
};
use std::path::{Path, PathBuf};
use terminal::{Screen, ScreenConfig, SelectionKind, Side, TermSize};
use termsprawl::runtime::terminals::grid_view;

fn gpu() -> Gpu {
    visual_test::software_gpu().expect("a Vulkan (lavapipe) or GL adapter is required for GPU tests")
}

fn renderer(gpu: &Gpu) -> Renderer {
    visual_test::fixed_font_renderer(gpu, &[]).expect("renderer")
}

fn recorded(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../terminal/tests/ref").join(name).join("bytes");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compares with `app/tests/golden/<name>.png` (the tolerance is canvas-render's, in its `visual_test`).
fn assert_golden(name: &str, actual: &RgbaImage) {
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    visual_test::assert_matches_golden(
        &golden_dir,
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("golden"),
        name,
        actual,
    );
}

#[test]
fn terminal_node_with_colours_cursor_and_selection() {
    let gpu = gpu();
    let mut r = renderer(&gpu);
    let rect = Rect::new(0.0, 0.0, 660.0, 330.0);
    let (cols, rows) = r.terminal_grid_size(rect);
    let mut screen = Screen::new(TermSize::new(cols, rows), ScreenConfig::default()).expect("screen");
    for name in ["ls", "sgr", "git_log"] {
        screen.feed(&recorded(name));
    }
    screen.feed(b"\x1b[1;32muser@host\x1b[0m:\x1b[1;34m~/proj\x1b[0m$ ");
    // A drag over "total 12" plus the first word of the next line (a two-line selection).
    screen.start_selection(SelectionKind::Simple, 0, 0, Side::Left);
    screen.update_selection(1, 9, Side::Right);
    assert_eq!(screen.selection_text().as_deref(), Some("total 12\nlrwxrwxrwx"));
    let snap = screen.snapshot();
    let grid = grid_view(&snap, true);

    // The grid carries what the picture must show.
    assert_eq!((grid.cols, grid.rows), (cols, rows));
    assert_eq!(grid.selection, vec![(0, 0, cols), (1, 0, 10)]);
    let (crow, ccol, shape) = grid.cursor.expect("cursor");
    assert_eq!(shape, CursorShape::Block);
    assert_eq!(snap.row_text(crow as usize).trim_end(), "user@host:~/proj$");
    assert_eq!(ccol as usize, "user@host:~/proj$ ".len());
    let red_row = (0..rows).find(|&r| snap.row_text(r as usize).starts_with("red bold-red")).expect("sgr colour row");
    let red = grid.cell(red_row, 0).unwrap();
    assert!(red.fg[0] > 150 && red.fg[1] < 120, "SGR 31 is not red: {:?}", red.fg);
    let bold_row = (0..rows).find(|&r| snap.row_text(r as usize).starts_with("bold dim")).expect("sgr style row");
    assert!(grid.cell(bold_row, 0).unwrap().bold);
    assert!(
        !grid_view(&snap, false).cursor.is_some_and(|c| c.2 == CursorShape::Block),
        "an unfocused terminal shows a hollow cursor"
    );

    let node = NodeView {
        id: 1,
        rect,
        z: 0,
        kind: NodeKind::Terminal,
        title: "sh — ~/proj".into(),
        color: Color::hex(0x3ecf6e),
        badge: Some(Badge { text: "bell".into(), color: Color::hex(0xe0af68) }),
        focused: true,
        selected: false,
        content: NodeContent::Terminal(grid),
        bar: None,
    };
    let scene = Scene { background: Theme::default().canvas, nodes: vec![node], links: vec![] };
    let img = r.render_to_rgba(&scene, &Camera::new(Vec2::new(-20.0, -20.0), 1.0), 700, 370).expect("render");
    assert_golden("terminal_node", &img);
}
