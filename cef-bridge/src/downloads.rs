//! Where downloads are saved, under which name, and what each has done so
//! far: the person's default is the app's downloads folder; a CDP client may
//! choose another folder, name files by their guid (Playwright reads them
//! there) or refuse downloads ([`DownloadBehavior`], set from any thread
//! through a [`DownloadPolicy`]).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::context_id::RequestContextId;

/// Where downloads go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DownloadBehavior {
    /// Into the app's downloads folder under the suggested name (the person's default).
    #[default]
    Default,
    /// Into this folder under the suggested name (made unique).
    Allow(PathBuf),
    /// Into this folder, named by the download's guid.
    AllowAndName(PathBuf),
    /// Refused: the download is cancelled before it starts.
    Deny,
}

/// A handle to an engine's download behaviours, cloneable and usable from
/// any thread: one for the person's profile, one per isolated context (each
/// starts at the default, as a new Chromium browser context does).
#[derive(Debug, Clone, Default)]
pub struct DownloadPolicy(Arc<Mutex<Behaviors>>);

#[derive(Debug, Default)]
struct Behaviors {
    profile: DownloadBehavior,
    contexts: HashMap<RequestContextId, DownloadBehavior>,
}

impl DownloadPolicy {
    /// Sets where the next downloads of the person's profile go (one already started keeps its place).
    pub fn set(&self, behavior: DownloadBehavior) {
        self.0.lock().profile = behavior;
    }

    /// Sets where the next downloads of pages in `context` go (`None`: the person's profile).
    pub fn set_for(&self, context: Option<RequestContextId>, behavior: DownloadBehavior) {
        let mut all = self.0.lock();
        match context {
            None => all.profile = behavior,
            Some(c) if behavior == DownloadBehavior::Default => {
                all.contexts.remove(&c);
            }
            Some(c) => {
                all.contexts.insert(c, behavior);
            }
        }
    }

    /// Where the next download of the person's profile goes.
    pub fn get(&self) -> DownloadBehavior {
        self.0.lock().profile.clone()
    }

    /// Where the next download of a page in `context` goes (`None`: the person's profile).
    pub fn get_for(&self, context: Option<RequestContextId>) -> DownloadBehavior {
        let all = self.0.lock();
        match context {
            None => all.profile.clone(),
            Some(c) => all.contexts.get(&c).cloned().unwrap_or_default(),
        }
    }
}

/// How far a download has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DownloadState {
    /// Bytes are still arriving.
    InProgress,
    /// Saved whole.
    Completed,
    /// Cancelled, interrupted or refused.
    Canceled,
}

/// Where one download was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Its guid (CDP's name for it).
    pub(crate) guid: String,
    /// Where it is written; `None` when refused.
    pub(crate) path: Option<PathBuf>,
}

/// What the engine tracks of one download.
struct Tracked {
    guid: String,
    /// The last progress reported (CEF repeats itself).
    last: Option<(u64, u64, DownloadState)>,
}

/// The downloads folder of one engine, its policy and its downloads.
pub(crate) struct Downloads {
    dir: PathBuf,
    policy: DownloadPolicy,
    /// By CEF's download id.
    tracked: Mutex<HashMap<u32, Tracked>>,
}

impl Downloads {
    /// Downloads saved into `dir` (created when the first one starts) unless the policy says otherwise.
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir, policy: DownloadPolicy::default(), tracked: Mutex::new(HashMap::new()) }
    }

    /// The policy handle.
    pub(crate) fn policy(&self) -> DownloadPolicy {
        self.policy.clone()
    }

    /// Places download `id` by the policy; `None` when it cannot be saved at
    /// all (no randomness for its guid, or its folder cannot be made).
    pub(crate) fn place(&self, id: u32, suggested: &str, context: Option<RequestContextId>) -> Option<Placement> {
        let guid = match local_guard::random_uuid() {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!(error = %e, "no guid for a download");
                return None;
            }
        };
        let path = match self.policy.get_for(context) {
            DownloadBehavior::Deny => None,
            DownloadBehavior::Default => Some(free_path_in(&self.dir, suggested)?),
            DownloadBehavior::Allow(dir) => Some(free_path_in(&dir, suggested)?),
            DownloadBehavior::AllowAndName(dir) => {
                make_dir(&dir)?;
                Some(dir.join(&guid))
            }
        };
        self.tracked.lock().insert(id, Tracked { guid: guid.clone(), last: None });
        Some(Placement { guid, path })
    }

    /// The guid of download `id` and whether this progress is news (CEF
    /// reports the same state more than once; each is announced once).
    pub(crate) fn progress(&self, id: u32, received: u64, total: u64, state: DownloadState) -> Option<String> {
        let mut tracked = self.tracked.lock();
        let t = tracked.get_mut(&id)?;
        let now = Some((received, total, state));
        if t.last == now || t.last.is_some_and(|(.., s)| s != DownloadState::InProgress) {
            return None;
        }
        t.last = now;
        Some(t.guid.clone())
    }
}

fn make_dir(dir: &Path) -> Option<()> {
    match std::fs::create_dir_all(dir) {
        Ok(()) => Some(()),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot create the downloads folder");
            None
        }
    }
}

fn free_path_in(dir: &Path, suggested: &str) -> Option<PathBuf> {
    make_dir(dir)?;
    Some(unique_download_path(dir, suggested))
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
    fn the_policy_places_each_download_and_progress_is_told_once() {
        let root = tempfile::tempdir().unwrap();
        let d = Downloads::new(root.path().join("sub"));
        let a = d.place(1, "a.txt", None).unwrap();
        assert_eq!(a.path.as_deref(), Some(root.path().join("sub").join("a.txt").as_path()));
        assert!(root.path().join("sub").is_dir(), "the folder is made on demand");

        let other = root.path().join("client");
        d.policy().set(DownloadBehavior::Allow(other.clone()));
        assert_eq!(d.place(2, "a.txt", None).unwrap().path, Some(other.join("a.txt")));
        d.policy().set(DownloadBehavior::AllowAndName(other.clone()));
        let named = d.place(3, "a.txt", None).unwrap();
        assert_eq!(named.path, Some(other.join(&named.guid)));
        d.policy().set(DownloadBehavior::Deny);
        assert_eq!(d.place(4, "a.txt", None).unwrap().path, None);
        assert_ne!(a.guid, named.guid);

        assert_eq!(d.progress(1, 0, 10, DownloadState::InProgress), Some(a.guid.clone()));
        assert_eq!(d.progress(1, 0, 10, DownloadState::InProgress), None, "a repeat is not news");
        assert_eq!(d.progress(1, 10, 10, DownloadState::Completed), Some(a.guid.clone()));
        assert_eq!(d.progress(1, 10, 10, DownloadState::Canceled), None, "nothing after the end");
        assert_eq!(d.progress(9, 1, 1, DownloadState::InProgress), None, "unknown downloads are not told");
    }

    #[test]
    fn each_isolated_context_has_its_own_behaviour_starting_at_the_default() {
        let root = tempfile::tempdir().unwrap();
        let d = Downloads::new(root.path().join("mine"));
        let (one, two) = (RequestContextId::from_raw(1), RequestContextId::from_raw(2));
        let agent = root.path().join("agent");
        d.policy().set(DownloadBehavior::Deny);
        assert_eq!(
            d.place(1, "a.txt", Some(one)).unwrap().path,
            Some(root.path().join("mine").join("a.txt")),
            "a new context starts at the default, not at the profile's CDP behaviour"
        );
        d.policy().set_for(Some(two), DownloadBehavior::Allow(agent.clone()));
        assert_eq!(d.place(2, "b.txt", Some(two)).unwrap().path, Some(agent.join("b.txt")));
        assert_eq!(d.place(3, "b.txt", None).unwrap().path, None, "the profile keeps its own");
        assert_eq!(d.policy().get_for(Some(one)), DownloadBehavior::Default);
        d.policy().set_for(Some(two), DownloadBehavior::Default);
        assert_eq!(d.policy().get_for(Some(two)), DownloadBehavior::Default);
    }
}
