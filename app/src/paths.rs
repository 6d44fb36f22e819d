//! Where termsprawl keeps its files.
//!
//! One data directory per user (XDG): `--data-dir` wins, then
//! `TERMSPRAWL_DATA_DIR` (set in every agent terminal so `termsprawl-ctl`
//! finds the same instance), then `$XDG_DATA_HOME/termsprawl`, then
//! `~/.local/share/termsprawl`.

use std::path::{Path, PathBuf};

/// Environment variable naming the data directory.
pub const DATA_DIR_ENV: &str = "TERMSPRAWL_DATA_DIR";

/// Resolves the data directory from an explicit override and the environment.
pub fn data_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os(DATA_DIR_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p).join("termsprawl");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
    home.join(".local").join("share").join("termsprawl")
}

/// The persistent Chromium profile inside a data directory.
pub fn browser_profile(data: &Path) -> PathBuf {
    data.join("browser-profile")
}

/// The downloads folder inside a data directory.
pub fn downloads(data: &Path) -> PathBuf {
    data.join("downloads")
}

/// The agent tool server's private directory inside a data directory.
pub fn agent_tools(data: &Path) -> PathBuf {
    data.join("agent-tools")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_override_wins() {
        assert_eq!(data_dir(Some(Path::new("/x/y"))), PathBuf::from("/x/y"));
        let d = Path::new("/d");
        assert_eq!(agent_tools(d), PathBuf::from("/d/agent-tools"));
        assert_eq!(browser_profile(d), PathBuf::from("/d/browser-profile"));
    }
}
