//! Files written atomically, and private state: directories created 0700,
//! files written with mode 0600 whatever the umask, planted symlinks refused
//! rather than followed, reads capped in size.
//!
//! Every write goes to a fresh temp file in the target's directory named
//! `.NAME.tmpXXXXXXXXXXXXXXXX` (created `O_EXCL|O_NOFOLLOW`, `fchmod`ed to
//! its mode so the umask cannot widen or narrow it), is fsynced, renamed
//! over the target, and the directory is fsynced so the rename survives a
//! power cut. [`is_temp_of`] recognises a temp file a killed writer left.

use std::ffi::{OsStr, OsString};
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;
use thiserror::Error;

use crate::hex;
use crate::random::{fill_random, RandomError};

/// Mode of private directories.
pub const DIR_MODE: u32 = 0o700;
/// Mode of private files.
pub const FILE_MODE: u32 = 0o600;

/// A failure handling a file or directory.
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
    #[error(transparent)]
    Random(#[from] RandomError),
}

impl FileError {
    /// The error as an [`io::Error`], for callers whose errors carry one: the
    /// OS error itself for [`FileError::Io`], otherwise this error wrapped
    /// with the closest kind.
    pub fn into_io(self) -> io::Error {
        let kind = match &self {
            FileError::Io { .. } => {
                let FileError::Io { source, .. } = self else { unreachable!("matched above") };
                return source;
            }
            FileError::Symlink(_) | FileError::NotOwned(_) => io::ErrorKind::PermissionDenied,
            FileError::WrongKind { .. } | FileError::BadName(_) | FileError::Encode { .. } => {
                io::ErrorKind::InvalidInput
            }
            FileError::TooLarge { .. } => io::ErrorKind::FileTooLarge,
            FileError::Random(_) => io::ErrorKind::Other,
        };
        io::Error::new(kind, self)
    }
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
/// `dir` must not be a symlink, and an existing symlink or non-file at the
/// target is refused (never followed, never replaced).
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
    replace(&dir_handle, dir, OsStr::new(name), &target, bytes, FILE_MODE)
}

/// [`write_private`] of `value` as pretty JSON.
pub fn write_private_json<T: Serialize + ?Sized>(dir: &Path, name: &str, value: &T) -> Result<(), FileError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|source| FileError::Encode { path: dir.join(name), source })?;
    bytes.push(b'\n');
    write_private(dir, name, &bytes)
}

/// Atomically replaces the file at `path` with `bytes`, mode `mode`, for
/// files a user may keep anywhere: unlike [`write_private`], the directory
/// may be reached through a symlink, and a symlink at `path` is replaced by
/// the file (a rename never writes through it).
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), FileError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| FileError::BadName(path.display().to_string()))?;
    let dir_handle = File::open(dir).map_err(io_err("open directory", dir))?;
    replace(&dir_handle, dir, name, path, bytes, mode)
}

/// Writes a temp file next to `target` and renames it over `target`.
fn replace(
    dir_handle: &File,
    dir: &Path,
    name: &OsStr,
    target: &Path,
    bytes: &[u8],
    mode: u32,
) -> Result<(), FileError> {
    let temp = dir.join(temp_name(name)?);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&temp)
        .map_err(io_err("create", &temp))?;
    let written = (|| {
        file.set_permissions(fs::Permissions::from_mode(mode)).map_err(io_err("chmod", &temp))?;
        file.write_all(bytes).map_err(io_err("write", &temp))?;
        file.sync_all().map_err(io_err("fsync", &temp))?;
        fs::rename(&temp, target).map_err(io_err("rename", target))
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    dir_handle.sync_all().map_err(io_err("fsync directory", dir))
}

/// The prefix of every temp file written for `name`.
fn temp_prefix(name: &OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".tmp");
    prefix
}

fn temp_name(name: &OsStr) -> Result<OsString, FileError> {
    let mut suffix = [0u8; 8];
    fill_random(&mut suffix)?;
    let mut temp = temp_prefix(name);
    temp.push(hex::encode(&suffix));
    Ok(temp)
}

/// Whether `candidate` is a temp file a writer of `name` creates (and, if
/// it is still there when nothing is writing, left behind when killed).
pub fn is_temp_of(name: &OsStr, candidate: &OsStr) -> bool {
    candidate.as_bytes().starts_with(temp_prefix(name).as_bytes())
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
    fn write_atomic_sets_the_mode_and_replaces_a_symlink_without_following_it() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("layout.json");
        write_atomic(&path, b"one", 0o644).unwrap();
        assert_eq!(mode(&path), 0o644);
        write_atomic(&path, b"two", 0o600).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(mode(&path), 0o600);
        let victim = root.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        let link = root.path().join("link.json");
        symlink(&victim, &link).unwrap();
        write_atomic(&link, b"new", 0o600).unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert!(fs::symlink_metadata(&link).unwrap().is_file());
        let mut names: Vec<_> = fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["layout.json", "link.json", "victim"].map(std::ffi::OsString::from));
    }

    #[test]
    fn write_atomic_reaches_a_directory_through_a_symlink() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir(root.path().join("real")).unwrap();
        symlink(root.path().join("real"), root.path().join("via")).unwrap();
        write_atomic(&root.path().join("via/a.json"), b"x", 0o600).unwrap();
        assert_eq!(fs::read(root.path().join("real/a.json")).unwrap(), b"x");
        assert!(matches!(write_atomic(Path::new("/"), b"x", 0o600), Err(FileError::BadName(_))));
    }

    #[test]
    fn a_failed_write_leaves_no_temp_file() {
        let root = tempfile::tempdir().unwrap();
        // Renaming a file over a non-empty directory fails after the temp file was written.
        fs::create_dir(root.path().join("busy")).unwrap();
        fs::write(root.path().join("busy/inside"), b"").unwrap();
        let err = write_atomic(&root.path().join("busy"), b"x", 0o600).unwrap_err();
        assert!(matches!(err, FileError::Io { action: "rename", .. }), "{err}");
        let names: Vec<_> = fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("busy")]);
    }

    #[test]
    fn temp_files_are_recognised_by_their_target() {
        let name = OsStr::new("canvas.json");
        let temp = temp_name(name).unwrap();
        assert!(is_temp_of(name, &temp));
        assert!(is_temp_of(name, OsStr::new(".canvas.json.tmpAbC123")));
        assert!(!is_temp_of(name, OsStr::new("canvas.json")));
        assert!(!is_temp_of(name, OsStr::new(".other.json.tmp1")));
        assert_ne!(temp, temp_name(name).unwrap());
    }

    #[test]
    fn into_io_keeps_the_os_error_and_the_message() {
        let root = tempfile::tempdir().unwrap();
        let err = write_private(&root.path().join("missing"), "a", b"").unwrap_err();
        assert_eq!(err.into_io().kind(), io::ErrorKind::NotFound);
        let err = FileError::Symlink(PathBuf::from("/x")).into_io();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(err.to_string(), "refusing symbolic link at /x");
    }
}
