//! The raw output of a tmux pane, for the signal pass only.
//!
//! tmux swallows what a program says beyond the grid (OSC 9/777/99, 9;4, 133,
//! 7501): its client never draws them, so the outer screen never sees them.
//! `tmux pipe-pane -O` copies everything the program writes to a command; here
//! that command is `cat` into a FIFO that this module creates (mode 0600, in
//! the socket's 0700 directory) and reads on its own thread, feeding a
//! [`SignalScanner`]. The grid keeps coming from the tmux client.
//!
//! pipe-pane was chosen over a tmux control-mode client (`-C`, whose `%output`
//! lines carry the same bytes) because it needs no second client per node,
//! no octal-escape decoding and no session-size interplay; its weak points are
//! handled here: a pipe left over from an earlier attach is replaced (pipe-pane
//! without `-o` closes the old one, whose `cat` then ends), each attach has its
//! own FIFO so an old reader never takes a new attach's bytes, and the FIFO is
//! opened read-write by the reader so neither side ever blocks in `open`.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::shell::shell_quote;
use crate::signals::{SignalScanner, TerminalSignal, PROGRAM_STATUS_REPLY};
use crate::tmux::TmuxSession;

/// Pane output read at once; signals are bounded by the scanner's own caps.
const READ_CHUNK: usize = 64 * 1024;

/// Distinguishes the FIFOs of attaches made by one process.
static NEXT_PIPE: AtomicU64 = AtomicU64::new(0);

/// One attach's FIFO. Dropping it removes the FIFO and stops the reader thread.
pub(crate) struct PanePipe {
    fifo: PathBuf,
    stop: Arc<AtomicBool>,
    /// A write end used only to wake the reader from its blocking read.
    waker: File,
}

impl PanePipe {
    /// Creates a fresh FIFO beside the session's socket and opens it for reading
    /// (read-write, so the reader never sees end of file between writers).
    pub(crate) fn create(session: &TmuxSession) -> std::io::Result<(Self, File)> {
        remove_orphans(session);
        let n = NEXT_PIPE.fetch_add(1, Ordering::Relaxed);
        let fifo = session.socket().with_file_name(format!("{}.{}-{n}.signals", session.name(), std::process::id()));
        make_fifo(&fifo)?;
        let opened = (|| {
            let reader = std::fs::OpenOptions::new().read(true).write(true).open(&fifo)?;
            let waker = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&fifo)?;
            Ok((reader, waker))
        })();
        match opened {
            Ok((reader, waker)) => Ok((Self { fifo, stop: Arc::new(AtomicBool::new(false)), waker }, reader)),
            Err(e) => {
                let _ = std::fs::remove_file(&fifo);
                Err(e)
            }
        }
    }

    /// The `pipe-pane` shell command that copies the pane's output into this FIFO.
    /// It refuses to write anything but a FIFO, so a removed one never becomes a file.
    pub(crate) fn pipe_command(&self) -> String {
        let path = shell_quote(&self.fifo.to_string_lossy());
        format!("test -p {path} && exec cat >{path}")
    }

    /// The flag the reader checks after each read.
    pub(crate) fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// The FIFO's path.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.fifo
    }
}

impl Drop for PanePipe {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.fifo) {
            if e.kind() != ErrorKind::NotFound {
                tracing::warn!(path = %self.fifo.display(), error = %e, "could not remove a pane signal FIFO");
            }
        }
        self.stop.store(true, Ordering::Release);
        // A full FIFO (EAGAIN) means the reader is awake and sees the flag anyway.
        let _ = self.waker.write(&[0]);
    }
}

/// Reads pane output until `stop` is set or `deliver` refuses (the session's
/// parser is gone), handing each chunk's signals to `deliver` and answering
/// Program Status queries through `session`.
pub(crate) fn read_signals(
    mut fifo: File,
    stop: Arc<AtomicBool>,
    session: TmuxSession,
    mut deliver: impl FnMut(Vec<TerminalSignal>) -> bool,
) {
    let mut scanner = SignalScanner::new();
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let n = match fifo.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!(error = %e, "reading a pane signal FIFO failed");
                break;
            }
        };
        if stop.load(Ordering::Acquire) {
            break;
        }
        let mut data = &buf[..n];
        while !data.is_empty() {
            let (read, reply_due) = scanner.advance(data);
            if reply_due {
                // tmux never passed the query on, so the reply goes to the pane as if typed.
                if let Err(e) = session.send_bytes(PROGRAM_STATUS_REPLY) {
                    tracing::debug!(error = %e, "could not answer a program status query inside tmux");
                }
            }
            data = &data[read..];
        }
        let signals = scanner.take_signals();
        if !signals.is_empty() && !deliver(signals) {
            break;
        }
    }
}

/// Removes this session's FIFOs left by app processes that are gone (killed
/// before they could remove their own); their `cat`s end once the pane writes
/// or the new attach replaces the pipe.
fn remove_orphans(session: &TmuxSession) {
    let Some(dir) = session.socket().parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!("{}.", session.name());
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)).and_then(|r| r.strip_suffix(".signals"))
        else {
            continue;
        };
        let Some(pid) = rest.split_once('-').and_then(|(pid, _)| pid.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => tracing::debug!(path = %entry.path().display(), "removed an orphaned pane signal FIFO"),
                Err(e) => {
                    tracing::debug!(path = %entry.path().display(), error = %e, "could not remove an orphaned FIFO")
                }
            }
        }
    }
}

fn make_fifo(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(ErrorKind::InvalidInput, "FIFO path holds a NUL"))?;
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::{Tmux, TmuxSession};

    #[test]
    fn fifos_of_gone_processes_are_removed_and_live_ones_kept() {
        let Ok(tmux) = Tmux::detect() else { return };
        let dir = tempfile::tempdir().unwrap();
        let session = TmuxSession::new(tmux, dir.path(), "pipe-orphans").unwrap();
        let socket_dir = session.socket().parent().unwrap().to_owned();
        // Pid 0 never names a user process; the parent of this test is alive.
        let gone = socket_dir.join("pipe-orphans.0-3.signals");
        let live = socket_dir.join(format!("pipe-orphans.{}-0.signals", std::os::unix::process::parent_id()));
        let other = socket_dir.join("pipe-other.0-1.signals");
        for path in [&gone, &live, &other] {
            make_fifo(path).unwrap();
        }
        let (pipe, _reader) = PanePipe::create(&session).unwrap();
        assert!(!gone.exists(), "an orphan of this session is removed");
        assert!(live.exists() && other.exists(), "a live app's FIFO and other sessions' stay");
        drop(pipe);
    }

    #[test]
    fn quotes_paths_for_sh() {
        assert_eq!(shell_quote(&Path::new("/a b/c").to_string_lossy()), "'/a b/c'");
        assert_eq!(shell_quote(&Path::new("/it's").to_string_lossy()), r"'/it'\''s'");
    }

    #[test]
    fn signals_written_to_the_fifo_are_delivered_and_dropping_stops_the_reader() {
        let Ok(tmux) = Tmux::detect() else { return };
        let dir = tempfile::tempdir().unwrap();
        let session = TmuxSession::new(tmux, dir.path(), "pipe-unit").unwrap();
        let (pipe, reader) = PanePipe::create(&session).unwrap();
        assert!(pipe.pipe_command().starts_with("test -p '"));
        let path = pipe.path().to_owned();
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let meta = std::fs::metadata(&path).unwrap();
        assert!(meta.file_type().is_fifo());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);

        let (tx, rx) = std::sync::mpsc::channel();
        let stop = pipe.stop_flag();
        let thread = std::thread::spawn(move || read_signals(reader, stop, session, |s| tx.send(s).is_ok()));
        let mut writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        // Split mid-sequence, an oversized OSC in between: only the good ones arrive.
        writer.write_all(b"text \x1b]9;hel").unwrap();
        writer.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let huge = format!("\x1b]9;{}\x07", "x".repeat(10_000));
        writer.write_all(format!("lo\x07{huge}\x1b]133;D;4\x07").as_bytes()).unwrap();
        let mut got = Vec::new();
        while got.len() < 2 {
            got.extend(rx.recv_timeout(std::time::Duration::from_secs(10)).expect("signals"));
        }
        assert_eq!(
            got,
            vec![
                TerminalSignal::Notification { title: None, body: "hello".into() },
                TerminalSignal::CommandFinished { exit: Some(4) },
            ]
        );
        drop(pipe);
        thread.join().unwrap();
        assert!(!path.exists(), "the FIFO is removed");
    }
}
