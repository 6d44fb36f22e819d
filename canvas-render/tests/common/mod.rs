//! Shared set-up for the GPU tests: a headless lavapipe context, a reproducible font set,
//! fixture scenes and the golden-image comparison.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use canvas_render::*;

/// A headless lavapipe context (see `canvas_render::visual_test::software_gpu`).
pub fn gpu() -> Gpu {
    visual_test::software_gpu().expect("a Vulkan (lavapipe) or GL adapter is required for GPU tests")
}

/// A renderer with the goldens' fixed font set (embedded Hack, DejaVu Sans, `extra_fonts`).
pub fn renderer(gpu: &Gpu, extra_fonts: &[&str]) -> Renderer {
    visual_test::fixed_font_renderer(gpu, extra_fonts).expect("renderer")
}

/// A synthetic "web page" in BGRA: header bar, hero gradient, text-like lines, a button.
pub fn synthetic_page(w: u32, h: u32) -> Vec<u8> {
    let mut px = vec![0u8; (w * h * 4) as usize];
    for y in 0..h {
        for x in 0..w {
            let (r, g, b) = if y < 36 && x > 24 && x < 60 && (12..24).contains(&y) {
                (0x2e, 0x7d, 0xf6)
            } else if y < 36 && x > 70 && x < 150 && (16..20).contains(&y) {
                (0x5f, 0x63, 0x68)
            } else if y < 35 {
                (0xff, 0xff, 0xff)
            } else if y < 36 {
                (0xe1, 0xe4, 0xe8)
            } else if y < 150 {
                let t = x as f32 / w as f32;
                ((60.0 + 120.0 * t) as u8, (90.0 + 40.0 * t) as u8, (200.0 - 40.0 * t) as u8)
            } else if (170..178).contains(&y) && x > 24 && x < w * 2 / 3 {
                (0x30, 0x30, 0x30)
            } else if ((190..196).contains(&y) || (206..212).contains(&y) || (222..228).contains(&y))
                && x > 24
                && x < w - 40 - (y % 50)
            {
                (0xa0, 0xa4, 0xaa)
            } else if (246..276).contains(&y) && x > 24 && x < 140 {
                (0x2e, 0x7d, 0xf6)
            } else {
                (0xfb, 0xfb, 0xfc)
            };
            let i = ((y * w + x) * 4) as usize;
            px[i..i + 4].copy_from_slice(&[b, g, r, 255]);
        }
    }
    px
}

fn term_grid(cols: u16, rows: u16, lines: &[(&str, [u8; 3])]) -> TerminalGridView {
    let bg = [0x10, 0x12, 0x16];
    let mut g = TerminalGridView::blank(cols, rows, [0xd0, 0xd4, 0xdc], bg);
    for (row, (text, fg)) in lines.iter().enumerate() {
        g.put_str(row as u16, 0, text, *fg, bg);
    }
    g
}

/// The terminal fixture: colours, bold, underline, strikethrough, dim, `-->`, selection,
/// a coloured background run and a block cursor.
pub fn terminal_fixture(cols: u16, rows: u16) -> TerminalGridView {
    let green = [0x8a, 0xd8, 0x7a];
    let blue = [0x6c, 0xb6, 0xff];
    let fg = [0xd0, 0xd4, 0xdc];
    let mut g = term_grid(
        cols,
        rows,
        &[
            ("~/termsprawl $ cargo test -p canvas-render", fg),
            ("   Compiling canvas-render v0.1.0", green),
            ("    Finished test profile in 3.2s", green),
            ("running 26 tests --> all ok", fg),
            ("error: nothing to see here", [0xff, 0x6b, 0x6b]),
            ("", fg),
            ("~/termsprawl $ ls", fg),
            ("app  canvas-render  terminal  tool-server", blue),
            ("~/termsprawl $ ", fg),
        ],
    );
    for c in 3..12 {
        if let Some(cell) = g.cells.get_mut(cols as usize + c) {
            cell.bold = true;
        }
    }
    for c in 0..5 {
        g.cells[4 * cols as usize + c].bold = true;
        g.cells[4 * cols as usize + c].underline = true;
    }
    for c in 7..14 {
        g.cells[4 * cols as usize + c].strikethrough = true;
        g.cells[4 * cols as usize + c].dim = true;
    }
    // A highlighted status segment (coloured background run).
    for c in 20..27 {
        let cell = &mut g.cells[3 * cols as usize + c];
        cell.bg = [0x2f, 0x6f, 0x3a];
        cell.fg = [0xf0, 0xff, 0xf0];
    }
    g.selection = vec![(7, 5, 18)];
    g.cursor = Some((8, 15, CursorShape::Block));
    g
}

fn node(id: u64, kind: NodeKind, rect: Rect, z: i32, title: &str, color: u32, content: NodeContent) -> NodeView {
    NodeView {
        id,
        rect,
        z,
        kind,
        title: title.into(),
        color: Color::hex(color),
        badge: None,
        focused: false,
        selected: false,
        content,
        bar: None,
    }
}

/// The fixture canvas: one node of each kind, a browser with uploaded pixels (key 1).
pub fn fixture_scene(r: &Renderer) -> Scene {
    let mut nodes = Vec::new();
    let group = Rect::new(780.0, 40.0, 460.0, 330.0);
    nodes.push(node(5, NodeKind::Group, group, 0, "Research notes", 0x8f7cf6, NodeContent::Empty));
    let mut browser = node(
        1,
        NodeKind::Browser,
        Rect::new(40.0, 40.0, 420.0, 330.0),
        1,
        "termsprawl — docs",
        0x5b9cff,
        NodeContent::Texture { key: 1, generation: 1 },
    );
    browser.focused = true;
    browser.badge = Some(Badge { text: "live".into(), color: Color::hex(0x3ecf6e) });
    nodes.push(browser);
    let term_rect = Rect::new(490.0, 400.0, 440.0, 230.0);
    let (cols, rows) = r.terminal_grid_size(term_rect);
    nodes.push(node(
        2,
        NodeKind::Terminal,
        term_rect,
        2,
        "zsh — ~/termsprawl",
        0x3ecf6e,
        NodeContent::Terminal(terminal_fixture(cols, rows)),
    ));
    let agent_rect = Rect::new(40.0, 400.0, 420.0, 230.0);
    let (cols, rows) = r.terminal_grid_size(agent_rect);
    let mut agent_grid = TerminalGridView::blank(cols, rows, [0xd0, 0xd4, 0xdc], [0x10, 0x12, 0x16]);
    agent_grid.put_str(0, 0, "> Refactor the canvas cache", [0xf0, 0xb4, 0x4c], [0x10, 0x12, 0x16]);
    agent_grid.put_str(2, 0, "I'll start by reading renderer.rs,", [0xd0, 0xd4, 0xdc], [0x10, 0x12, 0x16]);
    agent_grid.put_str(3, 0, "then split node caching from compositing.", [0xd0, 0xd4, 0xdc], [0x10, 0x12, 0x16]);
    agent_grid.put_str(5, 0, "  Read src/renderer.rs (412 lines)", [0x8a, 0x93, 0xa3], [0x10, 0x12, 0x16]);
    agent_grid.cursor = Some((7, 0, CursorShape::Beam));
    let mut agent =
        node(3, NodeKind::Agent, agent_rect, 3, "claude — cache refactor", 0xf0b44c, NodeContent::Terminal(agent_grid));
    agent.badge = Some(Badge { text: "thinking".into(), color: Color::hex(0xf0b44c) });
    agent.selected = true;
    nodes.push(agent);
    nodes.push(node(
        4,
        NodeKind::Sticky,
        Rect::new(810.0, 100.0, 200.0, 170.0),
        4,
        "TODO",
        0xf7d774,
        NodeContent::Text("Wire the canvas into the window, then snapshot every node kind in CI.".into()),
    ));
    nodes.push(node(
        6,
        NodeKind::Artifact,
        Rect::new(1030.0, 100.0, 190.0, 250.0),
        5,
        "report.md",
        0x4fc3c7,
        NodeContent::Text("Frame time 12 ms\nCache hits 98 %\nGlyphs 412".into()),
    ));
    nodes.push(node(
        7,
        NodeKind::Sticky,
        Rect::new(960.0, 420.0, 260.0, 120.0),
        6,
        "Ideas",
        0x9be28a,
        NodeContent::Text("Minimap in the corner; zoom to selection with F.".into()),
    ));
    Scene { background: Theme::default().canvas, nodes, links: vec![] }
}

/// Compares `actual` with `tests/golden/<name>.png` (regenerated with `UPDATE_GOLDEN=1`).
/// On mismatch writes `<name>.actual.png` and `<name>.diff.png` into the target tmp dir.
pub fn assert_golden(name: &str, actual: &RgbaImage) {
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    visual_test::assert_matches_golden(
        &golden_dir,
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("golden"),
        name,
        actual,
    );
}
