//! Where Chromium's output goes: the Chromium log file, never the app's stderr.
//!
//! Chromium's logging can write to a file or to stderr, and with a file it
//! still echoes every error to stderr; its libraries (D-Bus, fontconfig, Mesa)
//! write to fd 2 directly, in the browser process and in every helper. So
//! while the engine runs, fd 2 of the process is the log file (Chromium logs
//! to stderr only, `--enable-logging=stderr`, so each line is written once),
//! helpers inherit it, and the app's own output goes to [`AppStderr`]: the
//! stderr the process started with.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::OnceLock;

/// A copy of the process's original fd 2, taken before the first redirect.
static ORIGINAL: OnceLock<OwnedFd> = OnceLock::new();

fn original_fd() -> RawFd {
    ORIGINAL.get().map_or(libc::STDERR_FILENO, |fd| fd.as_raw_fd())
}

/// The stderr the process started with, even while fd 2 is the Chromium log:
/// the writer for the app's own log lines and messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct AppStderr;

impl AppStderr {
    /// Whether the stderr the process started with is a terminal (fd 2 may be
    /// the Chromium log meanwhile, so `std::io::stderr().is_terminal()` can lie).
    pub fn is_terminal() -> bool {
        // SAFETY: isatty(3) only inspects an fd this process keeps open.
        unsafe { libc::isatty(original_fd()) == 1 }
    }
}

impl Write for AppStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // SAFETY: write(2) from a valid buffer to an fd this process keeps open.
        let n = unsafe { libc::write(original_fd(), buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(n as usize)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// fd 2 pointed at a log file; the original comes back on drop.
#[derive(Debug)]
pub(crate) struct StderrToLog {
    _log: File,
}

impl StderrToLog {
    /// Opens `path` (append, created 0600, emptied when `truncate`) and makes it fd 2.
    pub(crate) fn to(path: &Path, truncate: bool) -> std::io::Result<StderrToLog> {
        use std::os::unix::fs::OpenOptionsExt;
        let log = std::fs::OpenOptions::new().append(true).create(true).mode(0o600).open(path)?;
        // Private even when an older run left it readable (it may hold page URLs).
        log.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        if truncate {
            log.set_len(0)?;
        }
        if ORIGINAL.get().is_none() {
            // SAFETY: F_DUPFD_CLOEXEC on fd 2 gives a new fd that only this OwnedFd owns.
            let copy = unsafe { libc::fcntl(libc::STDERR_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
            if copy < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `copy` is a fresh fd owned by nothing else.
            let _ = ORIGINAL.set(unsafe { OwnedFd::from_raw_fd(copy) });
        }
        // SAFETY: dup2 of an open file onto fd 2.
        if unsafe { libc::dup2(log.as_raw_fd(), libc::STDERR_FILENO) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(StderrToLog { _log: log })
    }
}

impl Drop for StderrToLog {
    fn drop(&mut self) {
        // SAFETY: dup2 of the kept original back onto fd 2.
        unsafe { libc::dup2(original_fd(), libc::STDERR_FILENO) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn fd_2_goes_to_the_log_while_redirected_and_app_stderr_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("chromium.log");
        std::fs::write(&log, "old run\n").unwrap();
        let before = std::fs::metadata("/proc/self/fd/2").map(|m| std::os::unix::fs::MetadataExt::ino(&m)).ok();
        {
            let _redirect = StderrToLog::to(&log, true).unwrap();
            // SAFETY: write(2) of a static buffer to fd 2.
            unsafe { libc::write(libc::STDERR_FILENO, b"chromium line\n".as_ptr().cast(), 14) };
            AppStderr.write_all(b"").unwrap();
        }
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("chromium line\n") && !text.contains("old run"), "{text:?}");
        let after = std::fs::metadata("/proc/self/fd/2").map(|m| std::os::unix::fs::MetadataExt::ino(&m)).ok();
        assert_eq!(before, after, "fd 2 was not restored");
        assert_eq!(std::fs::metadata(&log).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
