//! Private state files: directories created 0700, files written atomically
//! with mode 0600 whatever the umask, and planted symlinks refused rather
//! than followed.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;
use thiserror::Error;

/// Mode of private directories.
const DIR_MODE: u32 = 0o700;
/// Mode of private files.
const FILE_MODE: u32 = 0o600;

/// A failure handling a private file or directory.
#[derive(Debug, Error)]
pub enum FileError {
    /// An I/O call failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("create", "rename", …).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The path is a symbolic link; private state never follows one.
    #[error("refusing symbolic link at {0}")]
    Symlink(PathBuf),
    /// The path exists but is not of the expected kind.
    #[error("{path} is not a {expected}")]
    WrongKind {
        /// The path.
        path: PathBuf,
        /// "directory" or "regular file".
        expected: &'static str,
    },
    /// The directory belongs to another user.
    #[error("{0} is owned by another user")]
    NotOwned(PathBuf),
    /// A file is larger than the caller allows.
    #[error("{path} exceeds {limit} bytes")]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// A name that is not a single plain path component.
    #[error("invalid file name {0:?}")]
    BadName(String),
    /// A value could not be encoded as JSON.
    #[error("encode {path}: {source}")]
    Encode {
        /// The file being written.
        path: PathBuf,
        /// The encoder error.
        #[source]
        source: serde_json::Error,
    },
    /// The OS random source failed (temp names use it).
    #[error("OS random source failed: {0}")]
    Random(String),
}

fn io_err<'p>(action: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> FileError + 'p {
    move |source| {
        if source.raw_os_error() == Some(libc::ELOOP) {
            FileError::Symlink(path.to_owned())
        } else {
            FileError::Io { action, path: path.to_owned(), source }
        }
    }
}

/// Creates `path` as a 0700 directory, or tightens an existing one to 0700.
/// Refuses a symlink, a non-directory, or a directory owned by another user.
pub fn ensure_private_dir(path: &Path) -> Result<(), FileError> {
    match DirBuilder::new().mode(DIR_MODE).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_err("create directory", path)(e)),
    }
    // Inspect and chmod through a descriptor opened without following links,
    // so a swap between check and chmod cannot redirect either.
    let dir = open_dir(path)?;
    let meta = dir.metadata().map_err(io_err("stat", path))?;
    if !meta.is_dir() {
        return Err(FileError::WrongKind { path: path.to_owned(), expected: "directory" });
    }
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(FileError::NotOwned(path.to_owned()));
    }
    if meta.mode() & 0o7777 != DIR_MODE {
        dir.set_permissions(fs::Permissions::from_mode(DIR_MODE)).map_err(io_err("chmod", path))?;
    }
    Ok(())
}

fn open_dir(path: &Path) -> Result<File, FileError> {
    OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(path).map_err(|e| {
        match e.raw_os_error() {
            Some(libc::ENOTDIR) => {
                if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                    FileError::Symlink(path.to_owned())
                } else {
                    FileError::WrongKind { path: path.to_owned(), expected: "directory" }
                }
            }
            _ => io_err("open directory", path)(e),
        }
    })
}

fn check_name(name: &str) -> Result<(), FileError> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(FileError::BadName(name.to_owned()));
    }
    Ok(())
}

/// Atomically replaces `dir/name` with `bytes`, mode 0600.
///
/// The data goes to a fresh temp file in the same directory (created with
/// `O_EXCL|O_NOFOLLOW`, then `fchmod` 0600 so the umask cannot widen it),
/// is fsynced, renamed over the target, and the directory is fsynced. An
/// existing symlink at the target is refused.
pub fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), FileError> {
    check_name(name)?;
    let target = dir.join(name);
    match fs::symlink_metadata(&target) {
        Ok(meta) if meta.file_type().is_symlink() => return Err(FileError::Symlink(target)),
        Ok(meta) if !meta.is_file() => return Err(FileError::WrongKind { path: target, expected: "regular file" }),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err("stat", &target)(e)),
    }
    let dir_handle = open_dir(dir)?;

    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(|e| FileError::Random(e.to_string()))?;
    let temp = dir.join(format!(".{name}.{}.tmp", hex(&suffix)));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&temp)
        .map_err(io_err("create", &temp))?;
    let written = (|| {
        file.set_permissions(fs::Permissions::from_mode(FILE_MODE)).map_err(io_err("chmod", &temp))?;
        file.write_all(bytes).map_err(io_err("write", &temp))?;
        file.sync_all().map_err(io_err("fsync", &temp))?;
        fs::rename(&temp, &target).map_err(io_err("rename", &target))
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    dir_handle.sync_all().map_err(io_err("fsync directory", dir))
}

/// [`write_private`] of `value` as pretty JSON.
pub fn write_private_json<T: Serialize + ?Sized>(dir: &Path, name: &str, value: &T) -> Result<(), FileError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|source| FileError::Encode { path: dir.join(name), source })?;
    bytes.push(b'\n');
    write_private(dir, name, &bytes)
}

/// Reads `dir/name` without following a symlink; `None` when it does not exist.
pub fn read_private(dir: &Path, name: &str, limit: u64) -> Result<Option<Vec<u8>>, FileError> {
    check_name(name)?;
    let path = dir.join(name);
    let file = match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("open", &path)(e)),
    };
    let meta = file.metadata().map_err(io_err("stat", &path))?;
    if !meta.is_file() {
        return Err(FileError::WrongKind { path, expected: "regular file" });
    }
    if meta.len() > limit {
        return Err(FileError::TooLarge { path, limit });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io_err("read", &path))?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge { path, limit });
    }
    Ok(Some(bytes))
}

/// Removes `dir/name` (a symlink there is removed, never followed); returns
/// whether something was removed.
pub fn remove_private(dir: &Path, name: &str) -> Result<bool, FileError> {
    check_name(name)?;
    let path = dir.join(name);
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err("remove", &path)(e)),
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn creates_private_dir_and_tightens_existing_one() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a");
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
    }

    #[test]
    fn refuses_symlinked_or_non_directory() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        fs::create_dir(&real).unwrap();
        let link = root.path().join("link");
        symlink(&real, &link).unwrap();
        assert!(matches!(ensure_private_dir(&link), Err(FileError::Symlink(_))));
        let file = root.path().join("file");
        fs::write(&file, b"x").unwrap();
        assert!(matches!(ensure_private_dir(&file), Err(FileError::WrongKind { .. })));
        assert!(matches!(write_private(&link, "x.json", b"{}"), Err(FileError::Symlink(_))));
    }

    #[test]
    fn writes_atomically_with_private_mode_and_no_leftovers() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        write_private(dir, "a.json", b"one").unwrap();
        fs::set_permissions(dir.join("a.json"), fs::Permissions::from_mode(0o644)).unwrap();
        write_private(dir, "a.json", b"two").unwrap();
        assert_eq!(fs::read(dir.join("a.json")).unwrap(), b"two");
        assert_eq!(mode(&dir.join("a.json")), 0o600);
        let names: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
        assert_eq!(read_private(dir, "a.json", 16).unwrap().unwrap(), b"two");
        assert!(matches!(read_private(dir, "a.json", 2), Err(FileError::TooLarge { .. })));
        assert_eq!(read_private(dir, "missing", 16).unwrap(), None);
        assert!(remove_private(dir, "a.json").unwrap());
        assert!(!remove_private(dir, "a.json").unwrap());
    }

    #[test]
    fn refuses_planted_symlink_target_without_touching_its_destination() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("d");
        fs::create_dir(&dir).unwrap();
        let victim = root.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        symlink(&victim, dir.join("s.json")).unwrap();
        assert!(matches!(write_private(&dir, "s.json", b"evil"), Err(FileError::Symlink(_))));
        assert!(matches!(read_private(&dir, "s.json", 100), Err(FileError::Symlink(_))));
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        // Removing unlinks the planted link itself, not what it points at.
        assert!(remove_private(&dir, "s.json").unwrap());
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn refuses_names_that_are_not_one_component() {
        let root = tempfile::tempdir().unwrap();
        for name in ["", ".", "..", "a/b", "../x"] {
            assert!(matches!(write_private(root.path(), name, b""), Err(FileError::BadName(_))), "{name}");
        }
    }

    #[test]
    fn hex_encodes_lowercase() {
        assert_eq!(hex(&[0x00, 0xab, 0xff, 0x10]), "00abff10");
    }
}
