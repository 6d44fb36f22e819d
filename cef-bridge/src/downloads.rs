//! Where downloads are saved, and which have ended.

use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The downloads folder of one engine and the downloads it saw end.
pub(crate) struct Downloads {
    dir: PathBuf,
    /// CEF reports an ended download more than once; each is announced once.
    finished: Mutex<HashSet<u32>>,
}

impl Downloads {
    /// Downloads saved into `dir` (created when the first one starts).
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir, finished: Mutex::new(HashSet::new()) }
    }

    /// A free path for a suggested file name, or None when the folder cannot be made.
    pub(crate) fn path_for(&self, suggested: &str) -> Option<PathBuf> {
        if let Err(e) = std::fs::create_dir_all(&self.dir) {
            tracing::warn!(error = %e, "cannot create the downloads folder");
            return None;
        }
        Some(unique_download_path(&self.dir, suggested))
    }

    /// True the first time download `id` is reported as ended.
    pub(crate) fn first_end(&self, id: u32) -> bool {
        self.finished.lock().insert(id)
    }
}

/// A free path in `dir` for a suggested file name (sanitised; "name (2).ext" on clashes).
pub fn unique_download_path(dir: &Path, suggested: &str) -> PathBuf {
    let clean: String = suggested
        .chars()
        .map(|c| if c == '/' || c == '\\' || c.is_control() { '_' } else { c })
        .collect::<String>()
        .trim_start_matches('.')
        .trim()
        .to_string();
    let clean = if clean.is_empty() { "download".to_string() } else { clean };
    let (stem, ext) = match clean.rfind('.') {
        Some(i) if i > 0 => (clean[..i].to_string(), clean[i..].to_string()),
        _ => (clean.clone(), String::new()),
    };
    let mut candidate = dir.join(&clean);
    let mut n = 2;
    while candidate.exists() {
        candidate = dir.join(format!("{stem} ({n}){ext}"));
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_are_sanitised_and_unique() {
        let dir = tempfile::tempdir().unwrap();
        let p = unique_download_path(dir.path(), "../../etc/passwd");
        assert_eq!(p.parent().unwrap(), dir.path());
        assert_eq!(p.file_name().unwrap(), "_.._etc_passwd");
        std::fs::write(dir.path().join("report.pdf"), b"x").unwrap();
        assert_eq!(unique_download_path(dir.path(), "report.pdf").file_name().unwrap(), "report (2).pdf");
        assert_eq!(unique_download_path(dir.path(), "").file_name().unwrap(), "download");
    }

    #[test]
    fn each_download_ends_once_and_the_folder_is_made_on_demand() {
        let root = tempfile::tempdir().unwrap();
        let d = Downloads::new(root.path().join("sub"));
        assert_eq!(d.path_for("a.txt").unwrap(), root.path().join("sub").join("a.txt"));
        assert!(root.path().join("sub").is_dir());
        assert!(d.first_end(3));
        assert!(!d.first_end(3));
        assert!(d.first_end(4));
    }
}
