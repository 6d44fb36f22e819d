//! `server.lock`: one tool server per data directory. The guarantee is an
//! advisory `flock` held for the server's lifetime; the pid and instance id
//! written inside are for humans and error messages. A file nobody holds a
//! lock on is stale and is simply taken over.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The lock file's name inside `agent-tools/`.
pub(crate) const LOCK_FILE: &str = "server.lock";

/// A failure taking or releasing the server lock.
#[derive(Debug, Error)]
pub enum LockError {
    /// Another live process holds the lock.
    #[error("another termsprawl instance (pid {}) is already serving {}", pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string()), .path.display())]
    AlreadyRunning {
        /// The holder's pid, if its lock file was readable.
        pid: Option<u32>,
        /// The lock file.
        path: PathBuf,
    },
    /// The lock path is a symbolic link.
    #[error("refusing symbolic link at {0}")]
    Symlink(PathBuf),
    /// An I/O call failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The lock file kept being replaced underneath us.
    #[error("lock file {0} keeps changing; giving up")]
    Contended(PathBuf),
}

/// What the lock file records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LockRecord {
    pub pid: u32,
    pub instance_id: String,
}

/// The held server lock; released (and the file removed) on [`ServerLock::release`] or drop.
#[derive(Debug)]
pub struct ServerLock {
    file: Option<File>,
    path: PathBuf,
    instance_id: String,
}

impl ServerLock {
    /// Takes `dir/server.lock` for `instance_id`, or fails with
    /// [`LockError::AlreadyRunning`] when a live process holds it.
    pub fn acquire(dir: &Path, instance_id: &str) -> Result<ServerLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |action| {
            let path = path.clone();
            move |source: io::Error| {
                if source.raw_os_error() == Some(libc::ELOOP) {
                    LockError::Symlink(path)
                } else {
                    LockError::Io { action, path, source }
                }
            }
        };
        // A holder that is releasing unlinks the file while still locked; if
        // we locked that unlinked inode, retry on the new path.
        for _ in 0..16 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(&path)
                .map_err(io("open"))?;
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                    let pid = read_record(&mut file).map(|r| r.pid);
                    return Err(LockError::AlreadyRunning { pid, path });
                }
                Err(e) => return Err(io("lock")(e.into())),
            }
            let held = file.metadata().map_err(io("stat"))?;
            match fs::symlink_metadata(&path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io("stat")(e)),
            }
            if !held.is_file() {
                return Err(LockError::Io {
                    action: "open",
                    path,
                    source: io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"),
                });
            }
            // Whatever a stale owner left is overwritten: we hold the lock now.
            let record = LockRecord { pid: std::process::id(), instance_id: instance_id.to_owned() };
            let body = serde_json::to_vec(&record).unwrap_or_default();
            file.set_permissions(fs::Permissions::from_mode(0o600)).map_err(io("chmod"))?;
            file.set_len(0).map_err(io("truncate"))?;
            file.seek(SeekFrom::Start(0)).map_err(io("seek"))?;
            file.write_all(&body).map_err(io("write"))?;
            file.sync_all().map_err(io("fsync"))?;
            tracing::debug!(path = %path.display(), "server lock taken");
            return Ok(ServerLock { file: Some(file), path, instance_id: instance_id.to_owned() });
        }
        Err(LockError::Contended(path))
    }

    /// The instance id written in the lock.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the lock file (it is ours: we hold the lock) and releases the lock.
    pub fn release(mut self) -> Result<(), LockError> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<(), LockError> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        // Unlink before unlocking so a waiter never locks a file we then delete;
        // waiters that opened the old inode notice the swap and retry.
        let removed = match fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(LockError::Io { action: "remove", path: self.path.clone(), source }),
        };
        drop(file);
        removed
    }
}

impl Drop for ServerLock {
    fn drop(&mut self) {
        if let Err(e) = self.release_inner() {
            tracing::warn!(error = %e, "releasing server lock");
        }
    }
}

fn read_record(file: &mut File) -> Option<LockRecord> {
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_with_the_pid_and_can_take_over_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let first = ServerLock::acquire(dir.path(), "one").unwrap();
        let record: LockRecord = serde_json::from_slice(&fs::read(first.path()).unwrap()).unwrap();
        assert_eq!(record, LockRecord { pid: std::process::id(), instance_id: "one".into() });
        assert_eq!(fs::metadata(first.path()).unwrap().mode() & 0o777, 0o600);

        match ServerLock::acquire(dir.path(), "two") {
            Err(LockError::AlreadyRunning { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected AlreadyRunning, got {other:?}"),
        }
        let path = first.path().to_owned();
        first.release().unwrap();
        assert!(!path.exists());
        let second = ServerLock::acquire(dir.path(), "two").unwrap();
        assert_eq!(second.instance_id(), "two");
    }

    #[test]
    fn stale_file_without_a_lock_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        fs::write(&path, br#"{"pid":1,"instanceId":"ghost"}"#).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let lock = ServerLock::acquire(dir.path(), "fresh").unwrap();
        let record: LockRecord = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(record.instance_id, "fresh");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        drop(lock);
        assert!(!path.exists());
    }

    #[test]
    fn refuses_a_symlinked_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(LOCK_FILE)).unwrap();
        assert!(matches!(ServerLock::acquire(dir.path(), "x"), Err(LockError::Symlink(_))));
        assert_eq!(fs::read(&target).unwrap(), b"keep");
    }
}
