//! The `termsprawl` binary: CLI entry point.
//!
//! The same executable is Chromium's helper subprocess, so the very first
//! thing `main` does is hand control to CEF when it was started as one.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use termsprawl::shot;

/// An infinite canvas of terminals, browsers and AI agents.
#[derive(Parser, Debug)]
#[command(name = "termsprawl", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Render a page off-screen to a PNG (no X server needed) and exit.
    Shot(ShotArgs),
}

#[derive(clap::Args, Debug)]
struct ShotArgs {
    /// Page to capture (bare hosts become https://; only http, https, about:blank).
    url: String,
    /// Output PNG file.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Viewport size in CSS pixels.
    #[arg(long, default_value = "1280x800")]
    size: shot::Size,
    /// When to capture: load, networkidle, or milliseconds after load.
    #[arg(long, default_value = "load")]
    wait: shot::WaitFor,
    /// Capture the whole scrollable page.
    #[arg(long, conflicts_with = "selector")]
    full_page: bool,
    /// Capture only the first element matching this CSS selector.
    #[arg(long)]
    selector: Option<String>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

fn main() -> ExitCode {
    if let Some(code) = cef_bridge::run_subprocess_if_child() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    init_logging();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("termsprawl: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Command::Shot(a)) => {
            let req = shot::ShotRequest {
                url: a.url,
                output: a.output,
                size: a.size,
                wait: a.wait,
                full_page: a.full_page,
                selector: a.selector,
                timeout: Duration::from_secs(a.timeout.max(1)),
            };
            let (w, h) = shot::run(&req)?;
            eprintln!("termsprawl: wrote {} ({w}x{h})", req.output.display());
            Ok(())
        }
        None => anyhow::bail!("the canvas app is not built yet; use `termsprawl shot`"),
    }
}
