//! Golden-image tests: fixture canvases rendered offscreen on lavapipe and compared with
//! the PNGs in tests/golden/ (max channel difference 8, at most 0.5 % of pixels differing).
//! Regenerate with `UPDATE_GOLDEN=1 cargo test -p canvas-render --test golden`.

mod common;

use canvas_render::*;
use common::*;

#[test]
fn canvas_with_every_node_kind() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let scene = fixture_scene(&r);
    let browser = scene.nodes.iter().find(|n| n.id == 1).unwrap();
    let body = r.body_rect(browser.rect);
    let (w, h) = (body.w.round() as u32, body.h.round() as u32);
    r.upload_bgra(1, w, h, &synthetic_page(w, h), &[]).unwrap();
    let camera = Camera::new(Vec2::new(0.0, 0.0), 1.0);
    let img = r.render_to_rgba(&scene, &camera, 1260, 680).unwrap();
    assert_golden("canvas_zoom_1", &img);
}

#[test]
fn canvas_zoomed_out_and_in() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let scene = fixture_scene(&r);
    r.upload_bgra(1, 418, 299, &synthetic_page(418, 299), &[]).unwrap();
    let mut camera = Camera::default();
    let rects: Vec<Rect> = scene.nodes.iter().map(|n| n.rect).collect();
    camera.fit_all(&rects, Vec2::new(640.0, 400.0), 24.0).unwrap();
    let img = r.render_to_rgba(&scene, &camera, 640, 400).unwrap();
    assert_golden("canvas_fit_640", &img);

    // Zoomed in on the terminal: text re-rasterized at the larger scale, not magnified.
    let camera = Camera::new(Vec2::new(490.0, 380.0), 2.0);
    let img = r.render_to_rgba(&scene, &camera, 640, 400).unwrap();
    assert_golden("terminal_zoom_2", &img);
}

#[test]
fn wide_cjk_cells() {
    let cjk = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc";
    if !std::path::Path::new(cjk).exists() {
        // ./dev test installs it: there a missing one fails instead of skipping.
        assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "not installed, and ./dev test needs it");
        println!("note: {cjk} not installed (apt-get install fonts-noto-cjk); skipping the CJK golden");
        return;
    }
    let gpu = gpu();
    let mut r = renderer(&gpu, &[cjk]);
    let rect = Rect::new(0.0, 0.0, 380.0, 130.0);
    let (cols, rows) = r.terminal_grid_size(rect);
    let bg = [0x10, 0x12, 0x16];
    let mut grid = TerminalGridView::blank(cols, rows, [0xd0, 0xd4, 0xdc], bg);
    grid.put_str(0, 0, "漢字 wide: 日本語テキスト|", [0xd0, 0xd4, 0xdc], bg);
    grid.put_str(1, 0, "ascii ruler: 0123456789012345|", [0x8a, 0xd8, 0x7a], bg);
    grid.put_str(2, 0, "한국어 -> 中文 <- ok", [0x6c, 0xb6, 0xff], bg);
    grid.cursor = Some((3, 2, CursorShape::Underline));
    let node = NodeView {
        id: 1,
        rect,
        z: 0,
        kind: NodeKind::Terminal,
        title: "wide chars — 漢字".into(),
        color: Color::hex(0x3ecf6e),
        badge: None,
        focused: false,
        selected: false,
        content: NodeContent::Terminal(grid.clone()),
        bar: None,
    };
    // Two wide chars take exactly the space of four narrow ones.
    assert!(grid.cell(0, 0).unwrap().wide && grid.cell(0, 1).unwrap().wide_spacer);
    let scene = Scene { background: Theme::default().canvas, nodes: vec![node], links: vec![] };
    let img = r.render_to_rgba(&scene, &Camera::new(Vec2::new(-20.0, -20.0), 1.0), 420, 170).unwrap();
    assert_golden("terminal_cjk", &img);
}
