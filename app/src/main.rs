//! The `termsprawl` command: a small front that links no browser engine.
//!
//! `termsprawl diff` runs here. Everything else (the window, `--headless`,
//! `shot`, `--help`, `--version`) is the engine's: this process execs
//! `termsprawl-engine` from its own folder with the same arguments and
//! environment, so the pid, signals, stdio and exit status stay the ones the
//! caller started. Why two binaries: the dynamic loader maps and relocates
//! libcef.so (about a million relative relocations, ~30 ms of CPU) before
//! `main` runs in any binary that links it, which is most of what a visual
//! diff of two screenshots costs; CI scripts call `diff` once per image.

use clap::Parser;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use termsprawl::visual_diff::{self, DiffArgs};

/// The engine binary the front hands everything but `diff` to.
const ENGINE: &str = "termsprawl-engine";

/// `termsprawl diff …`, parsed here exactly as the engine parses it.
#[derive(Parser, Debug)]
#[command(name = "termsprawl", version)]
struct Front {
    #[command(subcommand)]
    command: FrontCommand,
}

#[derive(clap::Subcommand, Debug)]
enum FrontCommand {
    /// Compare two PNGs: exit 0 when equal within the limits, 1 when different, 2 on error.
    Diff(DiffArgs),
}

fn main() -> ExitCode {
    // Only a leading `diff` is taken here; `termsprawl --data-dir D diff …`
    // and anything else goes to the engine, whose CLI has `diff` too.
    if std::env::args_os().nth(1).is_some_and(|a| a == "diff") {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
        let FrontCommand::Diff(args) = Front::parse().command;
        return visual_diff::main(args);
    }
    let engine = match engine_path() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("termsprawl: cannot find the engine: {e}");
            return ExitCode::FAILURE;
        }
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // exec returns only when it failed.
    let e = Command::new(&engine).args(args).exec();
    eprintln!(
        "termsprawl: cannot start the engine {}: {e} (it is built beside this binary: cargo build -p termsprawl --bins)",
        engine.display()
    );
    ExitCode::FAILURE
}

/// `termsprawl-engine` in the folder of this executable (symlinks resolved,
/// so a link to `termsprawl` on PATH still finds its engine).
fn engine_path() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?.canonicalize()?;
    Ok(exe.with_file_name(ENGINE))
}
