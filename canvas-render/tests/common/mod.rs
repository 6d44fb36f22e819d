//! Shared set-up for the GPU tests: a headless lavapipe context, a reproducible font set,
//! fixture scenes and the golden-image comparison.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use canvas_render::*;

/// DejaVu Sans from fonts-dejavu-core: the only system fonts the goldens may use.
pub const DEJAVU: [&str; 2] = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"];

/// Points Vulkan at lavapipe (when present and not overridden) and silences the runtime-dir
/// warning, then creates a headless GPU context.
pub fn gpu() -> Gpu {
    let icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
    if std::env::var_os("VK_ICD_FILENAMES").is_none() && Path::new(icd).exists() {
        std::env::set_var("VK_ICD_FILENAMES", icd);
    }
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join(format!("canvas-render-xdg-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
    }
    Gpu::headless().expect("a Vulkan (lavapipe) or GL adapter is required for GPU tests")
}

/// A renderer with a fixed font set: embedded Hack for terminals, DejaVu Sans for the UI.
pub fn renderer(gpu: &Gpu, extra_fonts: &[&str]) -> Renderer {
    for f in DEJAVU {
        assert!(Path::new(f).exists(), "{f} missing: install fonts-dejavu-core");
    }
    let config = RendererConfig {
        terminal_font: TerminalFont { family: EMBEDDED_MONO_FAMILY.into(), size: 13.0 },
        ui_font_family: "DejaVu Sans".into(),
        load_system_fonts: false,
        extra_font_files: DEJAVU.iter().chain(extra_fonts).map(PathBuf::from).collect(),
        ..RendererConfig::default()
    };
    Renderer::new(gpu, config).expect("renderer")
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
            } else if ((190..196).contains(&y) || (206..212).contains(&y) || (222..228).contains(&y)) && x > 24 && x < w - 40 - (y % 50) {
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
    let mut g = term_grid(cols, rows, &[
        ("~/termsprawl $ cargo test -p canvas-render", fg),
        ("   Compiling canvas-render v0.1.0", green),
        ("    Finished test profile in 3.2s", green),
        ("running 26 tests --> all ok", fg),
        ("error: nothing to see here", [0xff, 0x6b, 0x6b]),
        ("", fg),
        ("~/termsprawl $ ls", fg),
        ("app  canvas-render  terminal  tool-server", blue),
        ("~/termsprawl $ ", fg),
    ]);
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
    NodeView { id, rect, z, kind, title: title.into(), color: Color::hex(color), badge: None, focused: false, selected: false, content }
}

/// The fixture canvas: one node of each kind, a browser with uploaded pixels (key 1).
pub fn fixture_scene(r: &Renderer) -> Scene {
    let mut nodes = Vec::new();
    let group = Rect::new(780.0, 40.0, 460.0, 330.0);
    nodes.push(node(5, NodeKind::Group, group, 0, "Research notes", 0x8f7cf6, NodeContent::Empty));
    let mut browser = node(1, NodeKind::Browser, Rect::new(40.0, 40.0, 420.0, 330.0), 1, "termsprawl — docs", 0x5b9cff, NodeContent::Texture { key: 1, generation: 1 });
    browser.focused = true;
    browser.badge = Some(Badge { text: "live".into(), color: Color::hex(0x3ecf6e) });
    nodes.push(browser);
    let term_rect = Rect::new(490.0, 400.0, 440.0, 230.0);
    let (cols, rows) = r.terminal_grid_size(term_rect);
    nodes.push(node(2, NodeKind::Terminal, term_rect, 2, "zsh — ~/termsprawl", 0x3ecf6e, NodeContent::Terminal(terminal_fixture(cols, rows))));
    let agent_rect = Rect::new(40.0, 400.0, 420.0, 230.0);
    let (cols, rows) = r.terminal_grid_size(agent_rect);
    let mut agent_grid = TerminalGridView::blank(cols, rows, [0xd0, 0xd4, 0xdc], [0x10, 0x12, 0x16]);
    agent_grid.put_str(0, 0, "> Refactor the canvas cache", [0xf0, 0xb4, 0x4c], [0x10, 0x12, 0x16]);
    agent_grid.put_str(2, 0, "I'll start by reading renderer.rs,", [0xd0, 0xd4, 0xdc], [0x10, 0x12, 0x16]);
    agent_grid.put_str(3, 0, "then split node caching from compositing.", [0xd0, 0xd4, 0xdc], [0x10, 0x12, 0x16]);
    agent_grid.put_str(5, 0, "  Read src/renderer.rs (412 lines)", [0x8a, 0x93, 0xa3], [0x10, 0x12, 0x16]);
    agent_grid.cursor = Some((7, 0, CursorShape::Beam));
    let mut agent = node(3, NodeKind::Agent, agent_rect, 3, "claude — cache refactor", 0xf0b44c, NodeContent::Terminal(agent_grid));
    agent.badge = Some(Badge { text: "thinking".into(), color: Color::hex(0xf0b44c) });
    agent.selected = true;
    nodes.push(agent);
    nodes.push(node(4, NodeKind::Sticky, Rect::new(810.0, 100.0, 200.0, 170.0), 4, "TODO", 0xf7d774,
        NodeContent::Text("Wire the canvas into the window, then snapshot every node kind in CI.".into())));
    nodes.push(node(6, NodeKind::Artifact, Rect::new(1030.0, 100.0, 190.0, 250.0), 5, "report.md", 0x4fc3c7,
        NodeContent::Text("Frame time 12 ms\nCache hits 98 %\nGlyphs 412".into())));
    nodes.push(node(7, NodeKind::Sticky, Rect::new(960.0, 420.0, 260.0, 120.0), 6, "Ideas", 0x9be28a,
        NodeContent::Text("Minimap in the corner; zoom to selection with F.".into())));
    Scene { background: Theme::default().canvas, nodes }
}

/// Per-pixel tolerance: a channel may differ by this much before the pixel counts as changed.
pub const MAX_CHANNEL_DIFF: u8 = 8;
/// At most this fraction of pixels may differ.
pub const MAX_DIFF_FRACTION: f64 = 0.005;

/// Compares `actual` with `tests/golden/<name>.png` (regenerated with `UPDATE_GOLDEN=1`).
/// On mismatch writes `<name>.actual.png` and `<name>.diff.png` into the target tmp dir.
pub fn assert_golden(name: &str, actual: &RgbaImage) {
    let golden_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.png"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        actual.save_png(&golden_path).expect("write golden");
        println!("updated golden {}", golden_path.display());
        return;
    }
    let golden = RgbaImage::load_png(&golden_path)
        .unwrap_or_else(|e| panic!("missing golden {} ({e}); run with UPDATE_GOLDEN=1", golden_path.display()));
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("golden");
    let _ = std::fs::create_dir_all(&out_dir);
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
            let l = (g[0] as u16 + g[1] as u16 + g[2] as u16) / 12;
            o.copy_from_slice(&[l as u8, l as u8, l as u8, 255]);
        }
    }
    let fraction = differing as f64 / (actual.width as f64 * actual.height as f64);
    let changed = actual.pixels.chunks_exact(4).zip(golden.pixels.chunks_exact(4)).filter(|(a, g)| a != g).count();
    println!("golden {name}: {changed} pixels differ at all, worst channel difference {worst}");
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
