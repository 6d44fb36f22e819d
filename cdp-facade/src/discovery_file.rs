//! `browser-agent.json`: written atomically with mode 0600 (it carries the
//! bearer token), never through a symbolic link, removed on close.

use std::fs;
use std::path::Path;

use local_guard::files::{self, FileError};

use crate::error::FacadeError;

/// Writes `contents` to `path` atomically, mode 0600 ([`files::write_private`]).
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> Result<(), FacadeError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    files::write_private(dir, name, contents).map_err(|e| match e {
        FileError::Symlink(link) => FacadeError::SymlinkRefused(link.display().to_string()),
        other => FacadeError::DiscoveryFile { path: path.display().to_string(), source: other.into_io() },
    })
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
    use std::os::unix::fs::PermissionsExt;

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
