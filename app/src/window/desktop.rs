//! Hands things to the desktop: a folder to the person's file manager
//! through `xdg-open` (freedesktop's one way to open a path with the
//! person's own choice of program).

use std::io;
use std::path::Path;
use std::process::{Command, Stdio};

/// Opens `path` with the desktop's default program; returns once it is
/// started (the program is reaped on a thread of its own when it exits).
pub fn open(path: &Path) -> io::Result<()> {
    let mut child = Command::new("xdg-open")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => io::Error::new(e.kind(), "xdg-open is not installed"),
            _ => e,
        })?;
    std::thread::Builder::new().name("xdg-open".into()).spawn(move || {
        if let Err(e) = child.wait() {
            tracing::debug!(error = %e, "xdg-open not reaped");
        }
    })?;
    Ok(())
}
