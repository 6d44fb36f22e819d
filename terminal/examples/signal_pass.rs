//! Benchmark (not a test): what the signal pass (a second `vte` parser over
//! every byte, [`terminal::signals`]) costs. The same mixed output —
//! coloured text, wrapped lines, cursor moves, titles, OSC 133 marks and
//! notifications — is fed in 64 KiB chunks to `Screen::feed` (alacritty plus
//! the signal pass, what a terminal node runs) and to alacritty_terminal
//! alone, in the same run, best of five each; prints MB/s and the ratio.
//!
//! Usage: `cargo run -p terminal --release --example signal_pass [MB]` (default 20).

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;
use std::time::{Duration, Instant};
use terminal::{Screen, ScreenConfig, TermSize};

const CHUNK: usize = 64 * 1024;
const COLS: u16 = 120;
const ROWS: u16 = 40;

struct Dims;

impl Dimensions for Dims {
    fn total_lines(&self) -> usize {
        ROWS.into()
    }
    fn screen_lines(&self) -> usize {
        ROWS.into()
    }
    fn columns(&self) -> usize {
        COLS.into()
    }
}

/// About `mb` MiB of terminal output in the mix a build or an agent prints.
fn output(mb: usize) -> Vec<u8> {
    let words = ["cargo", "build", "naïve", "日本語", "🙂", "render", "grid", "λ→μ", "alpha", "warning:"];
    let mut out = Vec::with_capacity(mb << 20);
    let mut n: usize = 0;
    while out.len() < mb << 20 {
        n += 1;
        let w = words[n % words.len()];
        match n % 10 {
            0 => out.extend_from_slice(format!("\x1b]133;A\x07$ \x1b]133;B\x07make {n}\r\n\x1b]133;C\x07").as_bytes()),
            1 => out.extend_from_slice(format!("\x1b]133;D;0\x07\x1b]0;job {n}\x07").as_bytes()),
            2 => out.extend_from_slice(format!("\x1b]9;4;1;{}\x07", n % 100).as_bytes()),
            3 => out.extend_from_slice(format!("\x1b[{};{}H\x1b[K{w}\r\n", n % 40 + 1, n % 80 + 1).as_bytes()),
            4 if n % 1000 == 4 => out.extend_from_slice(b"\x1b]777;notify;build;done\x07"),
            _ => {
                for i in 0..12 {
                    out.extend_from_slice(format!("\x1b[38;5;{}m{w} \x1b[0m", (n + i) % 256).as_bytes());
                }
                out.extend_from_slice(b"\r\n");
            }
        }
    }
    out
}

fn best_of<F: FnMut() -> Duration>(mut run: F) -> Duration {
    (0..5).map(|_| run()).min().unwrap_or_default()
}

fn main() {
    let mb: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let bytes = output(mb);
    let alone = best_of(|| {
        let mut term = Term::new(Config::default(), &Dims, VoidListener);
        let mut parser: Processor = Processor::new();
        let start = Instant::now();
        for chunk in bytes.chunks(CHUNK) {
            parser.advance(&mut term, chunk);
        }
        start.elapsed()
    });
    let ours = best_of(|| {
        let Ok(mut screen) = Screen::new(TermSize::new(COLS, ROWS), ScreenConfig::default()) else {
            return Duration::MAX;
        };
        let start = Instant::now();
        for chunk in bytes.chunks(CHUNK) {
            screen.feed(chunk);
            // What the parser thread does after each chunk: drain events (replies, signals).
            let _ = screen.take_events();
        }
        start.elapsed()
    });
    let scan_only = best_of(|| {
        let mut scanner = terminal::signals::SignalScanner::new();
        let start = Instant::now();
        for chunk in bytes.chunks(CHUNK) {
            let mut rest = chunk;
            while !rest.is_empty() {
                rest = &rest[scanner.advance(rest).0..];
            }
            let _ = scanner.take_signals();
        }
        start.elapsed()
    });
    let rate = |d: Duration| bytes.len() as f64 / (1 << 20) as f64 / d.as_secs_f64();
    println!("output: {:.1} MiB in {CHUNK}-byte chunks, best of 5", bytes.len() as f64 / (1 << 20) as f64);
    println!("alacritty_terminal alone: {:.1} MiB/s", rate(alone));
    println!("Screen::feed (alacritty + signal pass + events): {:.1} MiB/s", rate(ours));
    println!("signal pass alone: {:.1} MiB/s", rate(scan_only));
    println!("ratio ours / alone: {:.2}x", alone.as_secs_f64() / ours.as_secs_f64());
    println!("ratio alone / (alone + signal pass): {:.2}x", alone.as_secs_f64() / (alone + scan_only).as_secs_f64());
}
