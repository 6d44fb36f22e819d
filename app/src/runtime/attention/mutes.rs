//! Projects whose desktop notifications are muted, saved per user as
//! `<data>/notifications.json` (`{"muted": [folder, …]}`), keyed by the
//! project's folder so a mute outlives closing and reopening the project.

use local_guard::files::{self, FileError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The file's name in the data directory.
pub const MUTES_FILE: &str = "notifications.json";
/// A larger file is not read (it is a short list of folders).
const MAX_BYTES: u64 = 256 * 1024;

/// Why the mutes could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum MutesError {
    /// Reading or writing the file failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// The file is not the expected JSON.
    #[error("{path} is not a list of muted project folders: {source}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OnDisk {
    muted: BTreeSet<PathBuf>,
}

/// The muted project folders.
#[derive(Debug, Default)]
pub struct Mutes {
    muted: BTreeSet<PathBuf>,
}

impl Mutes {
    /// Reads the mutes saved in `data`; none when there is no file.
    pub fn load(data: &Path) -> Result<Mutes, MutesError> {
        let Some(bytes) = files::read_private(data, MUTES_FILE, MAX_BYTES)? else { return Ok(Mutes::default()) };
        let disk: OnDisk = serde_json::from_slice(&bytes)
            .map_err(|source| MutesError::Malformed { path: data.join(MUTES_FILE), source })?;
        Ok(Mutes { muted: disk.muted })
    }

    /// Whether the project in `folder` is muted.
    pub fn is_muted(&self, folder: &Path) -> bool {
        self.muted.contains(folder)
    }

    /// Mutes or unmutes the project in `folder` and saves the list in `data`.
    /// The change holds for this run even when saving fails.
    pub fn set(&mut self, data: &Path, folder: &Path, muted: bool) -> Result<(), MutesError> {
        if muted {
            self.muted.insert(folder.to_path_buf());
        } else {
            self.muted.remove(folder);
        }
        files::write_private_json(data, MUTES_FILE, &OnDisk { muted: self.muted.clone() })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutes_are_saved_and_read_back_and_bad_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (Path::new("/work/a"), Path::new("/work/b"));
        let mut m = Mutes::load(dir.path()).unwrap();
        assert!(!m.is_muted(a), "no file: nothing muted");
        m.set(dir.path(), a, true).unwrap();
        m.set(dir.path(), b, true).unwrap();
        m.set(dir.path(), b, false).unwrap();
        let back = Mutes::load(dir.path()).unwrap();
        assert!(back.is_muted(a) && !back.is_muted(b));
        let text = std::fs::read_to_string(dir.path().join(MUTES_FILE)).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::json!({"muted": ["/work/a"]})
        );
        std::fs::write(dir.path().join(MUTES_FILE), "{\"muted\": 3}").unwrap();
        let e = Mutes::load(dir.path()).unwrap_err();
        assert!(e.to_string().contains("is not a list of muted project folders"), "{e}");
    }
}
