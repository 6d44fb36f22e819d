//! `browser-agent.json`: written atomically with mode 0600 (it carries the
//! bearer token), never through a symbolic link, removed on close.

use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::FacadeError;

fn io_error(path: &Path, source: io::Error) -> FacadeError {
    FacadeError::DiscoveryFile { path: path.display().to_string(), source }
}

/// Writes `contents` to `path` via a fresh temp file in the same directory: 0600, fsync, rename.
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> Result<(), FacadeError> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(FacadeError::SymlinkRefused(path.display().to_string()));
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("browser-agent.json");
    let temp = temp_path(dir, file_name);
    let result = (|| {
        // create_new (O_EXCL) never follows a planted link; mode 0600 from the start, set again to beat the umask.
        let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
        file.set_permissions(Permissions::from_mode(0o600))?;
        file.write_all(contents)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.map_err(|e| io_error(path, e))
}

fn temp_path(dir: &Path, file_name: &str) -> PathBuf {
    let mut suffix = [0u8; 8];
    let unique = match crate::token::fill_random(&mut suffix) {
        Ok(()) => crate::token::hex(&suffix),
        Err(_) => format!("{}", std::process::id()),
    };
    dir.join(format!(".{file_name}.{unique}.tmp"))
}

/// Removes the file if it is a regular file (a link planted in its place is left alone).
pub(crate) fn remove(path: &Path) {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        if let Err(e) = fs::remove_file(path) {
            tracing::warn!(path = %path.display(), error = %e, "could not remove the discovery file");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_0600_replacing_and_refuses_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("browser-agent.json");
        write_private(&path, b"{\"a\":1}").unwrap();
        write_private(&path, b"{\"a\":2}").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":2}");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left behind");

        let link = dir.path().join("linked.json");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        assert!(matches!(write_private(&link, b"x"), Err(FacadeError::SymlinkRefused(_))));
        assert!(!dir.path().join("elsewhere").exists());
        remove(&link);
        assert!(fs::symlink_metadata(&link).is_ok(), "a symlink is not removed");

        remove(&path);
        assert!(!path.exists());
    }
}
