//! Records a reference test: runs a command on an 80x24 PTY, saves the raw
//! output bytes, and the grid our `Screen` builds from them (review it by eye
//! before committing!). See tests/ref/README.md.
//!
//! usage: record_ref <out_dir> [--step <delay_ms>:<keys>]... [--stop-ms N] -- <cmd> [args...]
//! `<keys>` understands \r \n \e \t and \\.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use terminal::{Screen, ScreenConfig, TermSize};

#[path = "../tests/support/refdump.rs"]
mod refdump;

const COLS: u16 = 80;
const ROWS: u16 = 24;

fn unescape(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some('r') => out.push(b'\r'),
            Some('n') => out.push(b'\n'),
            Some('e') => out.push(0x1b),
            Some('t') => out.push(b'\t'),
            Some(other) => {
                let mut buf = [0; 4];
                out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
            None => out.push(b'\\'),
        }
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out_dir = PathBuf::from(args.next().ok_or("missing out_dir")?);
    let mut steps: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut stop_ms = 1000u64;
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--step" => {
                let step = args.next().ok_or("--step needs a value")?;
                let (delay, keys) = step.split_once(':').ok_or("--step is <delay_ms>:<keys>")?;
                steps.push((delay.parse()?, unescape(keys)));
            }
            "--stop-ms" => stop_ms = args.next().ok_or("--stop-ms needs a value")?.parse()?,
            "--" => {
                command = args.by_ref().collect();
                break;
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let (program, rest) = command.split_first().ok_or("missing command")?;

    let pty = native_pty_system().openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })?;
    let mut cmd = CommandBuilder::new(program);
    cmd.args(rest);
    cmd.cwd(std::env::current_dir()?);
    cmd.env("TERM", "xterm-256color");
    cmd.env("COLORTERM", "truecolor");
    cmd.env("LANG", "C.UTF-8");
    let mut child = pty.slave.spawn_command(cmd)?;
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader()?;
    let mut writer = pty.master.take_writer()?;
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });

    let mut bytes = Vec::new();
    let collect_for = |ms: u64, bytes: &mut Vec<u8>| {
        let until = Instant::now() + Duration::from_millis(ms);
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(chunk) => bytes.extend_from_slice(&chunk),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
        true
    };
    for (delay, keys) in &steps {
        collect_for(*delay, &mut bytes);
        writer.write_all(keys)?;
        writer.flush()?;
    }
    collect_for(stop_ms, &mut bytes);
    let _ = child.kill();
    let _ = child.wait();

    let mut screen = Screen::new(TermSize::new(COLS, ROWS), ScreenConfig::default())?;
    screen.feed(&bytes);
    let snap = screen.snapshot();
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("bytes"), &bytes)?;
    std::fs::write(out_dir.join("size"), format!("{COLS}x{ROWS}\n"))?;
    std::fs::write(out_dir.join("grid.txt"), refdump::grid_text(&snap))?;
    std::fs::write(out_dir.join("attrs.txt"), refdump::attrs_text(&snap))?;
    println!("{}: {} bytes\n{}", out_dir.display(), bytes.len(), refdump::grid_text(&snap));
    Ok(())
}
