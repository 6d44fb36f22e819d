//! Benchmark (run by `bench/terminal-flood`, not a test): a terminal node
//! `cat`s a large mixed file, compared with alacritty_terminal alone parsing
//! the same bytes in-process, in the same run.
//!
//! The node side is the app's own path in one process: `terminal::Terminal`
//! (real PTY, `cat` child, reader/parser/waiter threads) drawn through the
//! app's `grid_view` and canvas-render on lavapipe, one full frame after
//! another while the flood runs. (The headless app binary renders only on
//! request and exposes no "last byte parsed" signal, so driving it from
//! outside would time the harness, not the terminal.) "Last byte in the grid"
//! is the terminal's exit report, which the terminal crate sends only after
//! the PTY's end of file has been parsed; the final grid is checked for the
//! file's closing sentinel line.
//!
//! Usage: terminal_flood FILE SENTINEL

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;
use canvas_render::{
    Camera, Color, NodeContent, NodeKind, NodeView, Rect, Renderer, RendererConfig, Scene, Theme, Vec2,
};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use terminal::{CommandSpec, ExitStatus, TermSize, Terminal, TerminalConfig, TerminalHost, DEFAULT_SCROLLBACK};
use termsprawl::runtime::terminals::grid_view;

/// Canvas size of the frames rendered during the flood.
const FRAME: (u32, u32) = (1280, 800);
/// Read size of the baseline feed (the terminal crate's PTY read size).
const CHUNK: usize = 64 * 1024;

struct Dims {
    cols: usize,
    rows: usize,
}

impl Dimensions for Dims {
    fn total_lines(&self) -> usize {
        self.rows
    }
    fn screen_lines(&self) -> usize {
        self.rows
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

/// Reports the exit (sent after the last byte was parsed).
struct FloodHost {
    done: parking_lot::Mutex<Option<mpsc::Sender<(Instant, ExitStatus)>>>,
}

impl TerminalHost for FloodHost {
    fn wakeup(&self) {}
    fn title_changed(&self, _: Option<String>) {}
    fn bell(&self) {}
    fn clipboard_store(&self, _: String) {}
    fn exited(&self, status: ExitStatus) {
        if let Some(tx) = self.done.lock().take() {
            let _ = tx.send((Instant::now(), status));
        }
    }
}

fn baseline(bytes: &[u8], cols: usize, rows: usize) -> Duration {
    let config = Config { scrolling_history: DEFAULT_SCROLLBACK, ..Config::default() };
    let mut term = Term::new(config, &Dims { cols, rows }, VoidListener);
    let mut parser: Processor = Processor::new();
    let start = Instant::now();
    for chunk in bytes.chunks(CHUNK) {
        parser.advance(&mut term, chunk);
    }
    let elapsed = start.elapsed();
    std::hint::black_box(&term);
    elapsed
}

/// Floods a terminal node; with `render` draws full frames meanwhile. Returns
/// (time to last byte in grid, frames rendered).
fn node_flood(
    file: &Path,
    sentinel: &str,
    size: TermSize,
    mut render: Option<&mut Renderer>,
    rect: Rect,
) -> Result<(Duration, u64), String> {
    let (tx, rx) = mpsc::channel();
    let host = Arc::new(FloodHost { done: parking_lot::Mutex::new(Some(tx)) });
    let cwd = std::env::temp_dir();
    let mut config = TerminalConfig::new(cwd, size);
    config.command = Some(CommandSpec { program: "/bin/cat".into(), args: vec![file.display().to_string()] });
    let start = Instant::now();
    let term = Terminal::spawn(config, host).map_err(|e| e.to_string())?;
    let mut frames = 0u64;
    let (end, status) = loop {
        if let Some(r) = render.as_deref_mut() {
            let grid = grid_view(&term.snapshot(), true);
            let node = NodeView {
                id: 1,
                rect,
                z: 0,
                kind: NodeKind::Terminal,
                title: "cat".into(),
                color: Color::hex(0x3ecf6e),
                badge: None,
                focused: true,
                selected: false,
                content: NodeContent::Terminal(grid),
                bar: None,
            };
            let scene = Scene { background: Theme::default().canvas, nodes: vec![node], links: vec![] };
            r.render_to_rgba(&scene, &Camera::new(Vec2::new(-20.0, -20.0), 1.0), FRAME.0, FRAME.1)
                .map_err(|e| e.to_string())?;
            frames += 1;
            if let Ok(done) = rx.try_recv() {
                break done;
            }
        } else {
            break rx.recv_timeout(Duration::from_secs(600)).map_err(|e| format!("no exit report: {e}"))?;
        }
    };
    let snap = term.snapshot();
    if !status.success() {
        let text: Vec<String> = (0..snap.rows).map(|r| snap.row_text(r)).filter(|t| !t.trim().is_empty()).collect();
        return Err(format!("cat exited with {status:?}; the grid shows {text:?}"));
    }
    if !(0..snap.rows).any(|r| snap.row_text(r).contains(sentinel)) {
        return Err("the sentinel line is not in the final grid".into());
    }
    Ok((end - start, frames))
}

fn mb_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(sentinel)) = (args.next().map(PathBuf::from), args.next()) else {
        return Err("usage: terminal_flood FILE SENTINEL".into());
    };
    let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    // `cat` runs in the temp dir: give it a path that does not depend on ours.
    let file = std::fs::canonicalize(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let gpu = canvas_render::visual_test::software_gpu().map_err(|e| format!("no GPU adapter: {e}"))?;
    println!("adapter: {}", gpu.describe());
    let mut renderer = Renderer::new(&gpu, RendererConfig::default()).map_err(|e| e.to_string())?;
    let rect = Rect::new(0.0, 0.0, FRAME.0 as f32 - 40.0, FRAME.1 as f32 - 40.0);
    let (cols, rows) = renderer.terminal_grid_size(rect);
    let m = renderer.cell_metrics();
    let size = TermSize { cols, rows, cell_width: m.width as u16, cell_height: m.height as u16 };
    println!("file: {} ({:.1} MB), grid {cols}x{rows}", file.display(), bytes.len() as f64 / 1e6);

    // Warm the page cache and the parser's code paths once.
    baseline(&bytes[..bytes.len().min(8 << 20)], cols.into(), rows.into());
    let base = baseline(&bytes, cols.into(), rows.into());
    println!("alacritty_terminal alone:       {:>7.2} s  {:>7.1} MB/s", base.as_secs_f64(), mb_s(bytes.len(), base));
    let (pty, _) = node_flood(&file, &sentinel, size, None, rect)?;
    println!(
        "terminal node, no frames:       {:>7.2} s  {:>7.1} MB/s  ratio {:.2}x",
        pty.as_secs_f64(),
        mb_s(bytes.len(), pty),
        base.as_secs_f64() / pty.as_secs_f64()
    );
    let (drawn, frames) = node_flood(&file, &sentinel, size, Some(&mut renderer), rect)?;
    println!(
        "terminal node, frames drawn:    {:>7.2} s  {:>7.1} MB/s  ratio {:.2}x",
        drawn.as_secs_f64(),
        mb_s(bytes.len(), drawn),
        base.as_secs_f64() / drawn.as_secs_f64()
    );
    println!(
        "canvas frames during the flood: {frames} in {:.2} s = {:.1} frames/s ({FRAME:?}, read back each frame)",
        drawn.as_secs_f64(),
        frames as f64 / drawn.as_secs_f64()
    );
    let base2 = baseline(&bytes, cols.into(), rows.into());
    println!(
        "alacritty_terminal alone again: {:>7.2} s  {:>7.1} MB/s (drift check)",
        base2.as_secs_f64(),
        mb_s(bytes.len(), base2)
    );
    Ok(())
}
