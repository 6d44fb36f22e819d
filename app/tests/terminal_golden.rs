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

use canvas_render::{Badge, Camera, Color, CursorShape, Gpu, NodeContent, NodeKind, NodeView, Rect, Renderer, RendererConfig, RgbaImage, Scene, TerminalFont, Theme, Vec2, EMBEDDED_MONO_FAMILY};
use std::path::{Path, PathBuf};
use terminal::{Screen, ScreenConfig, SelectionKind, Side, TermSize};
use termsprawl::runtime::terminals::grid_view;

/// A channel may differ by this much before the pixel counts as changed.
const MAX_CHANNEL_DIFF: u8 = 8;
/// At most this fraction of pixels may differ.
const MAX_DIFF_FRACTION: f64 = 0.005;
/// The only system fonts the golden may use (fonts-dejavu-core), for the title bar.
const DEJAVU: [&str; 2] = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"];

fn gpu() -> Gpu {
    let icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
    if std::env::var_os("VK_ICD_FILENAMES").is_none() && Path::new(icd).exists() {
        std::env::set_var("VK_ICD_FILENAMES", icd);
    }
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join(format!("terminal-golden-xdg-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
    }
    Gpu::headless().expect("a Vulkan (lavapipe) or GL adapter is required for GPU tests")
}

fn renderer(gpu: &Gpu) -> Renderer {
    for f in DEJAVU {
        assert!(Path::new(f).exists(), "{f} missing: install fonts-dejavu-core");
    }
    let config = RendererConfig {
        terminal_font: TerminalFont { family: EMBEDDED_MONO_FAMILY.into(), size: 13.0 },
        ui_font_family: "DejaVu Sans".into(),
        load_system_fonts: false,
        extra_font_files: DEJAVU.iter().map(PathBuf::from).collect(),
        ..RendererConfig::default()
    };
    Renderer::new(gpu, config).expect("renderer")
}

fn recorded(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../terminal/tests/ref").join(name).join("bytes");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn assert_golden(name: &str, actual: &RgbaImage) {
    let golden_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.png"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_path.parent().unwrap()).expect("golden dir");
        actual.save_png(&golden_path).expect("write golden");
        println!("updated golden {}", golden_path.display());
        return;
    }
    let golden = RgbaImage::load_png(&golden_path).unwrap_or_else(|e| panic!("missing golden {} ({e}); run with UPDATE_GOLDEN=1", golden_path.display()));
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("golden");
    std::fs::create_dir_all(&out_dir).expect("output dir");
    let actual_path = out_dir.join(format!("{name}.actual.png"));
    if (golden.width, golden.height) != (actual.width, actual.height) {
        actual.save_png(&actual_path).expect("write actual");
        panic!("{name}: size {}x{} != golden {}x{}; actual at {}", actual.width, actual.height, golden.width, golden.height, actual_path.display());
    }
    let mut diff = vec![0u8; actual.pixels.len()];
    let mut differing = 0usize;
    let mut worst = 0u8;
    for (i, (a, g)) in actual.pixels.chunks_exact(4).zip(golden.pixels.chunks_exact(4)).enumerate() {
        let d = a.iter().zip(g).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
        worst = worst.max(d);
        let o = &mut diff[i * 4..i * 4 + 4];
        if d > MAX_CHANNEL_DIFF {
            differing += 1;
            o.copy_from_slice(&[255, 0, 255, 255]);
        } else {
            let l = ((g[0] as u16 + g[1] as u16 + g[2] as u16) / 12) as u8;
            o.copy_from_slice(&[l, l, l, 255]);
        }
    }
    let fraction = differing as f64 / (actual.width as f64 * actual.height as f64);
    if fraction > MAX_DIFF_FRACTION {
        let diff_path = out_dir.join(format!("{name}.diff.png"));
        actual.save_png(&actual_path).expect("write actual");
        RgbaImage::new(actual.width, actual.height, diff).expect("diff image").save_png(&diff_path).expect("write diff");
        panic!(
            "{name}: {differing} pixels ({:.3} %) differ by more than {MAX_CHANNEL_DIFF} (worst {worst}); allowed {:.1} %\n  actual: {}\n  diff:   {}",
            fraction * 100.0,
            MAX_DIFF_FRACTION * 100.0,
            actual_path.display(),
            diff_path.display()
        );
    }
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
    assert!(!grid_view(&snap, false).cursor.is_some_and(|c| c.2 == CursorShape::Block), "an unfocused terminal shows a hollow cursor");

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
    };
    let scene = Scene { background: Theme::default().canvas, nodes: vec![node] };
    let img = r.render_to_rgba(&scene, &Camera::new(Vec2::new(-20.0, -20.0), 1.0), 700, 370).expect("render");
    assert_golden("terminal_node", &img);
}
