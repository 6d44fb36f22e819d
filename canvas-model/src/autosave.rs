//! Autosave: the main thread hands encoded files to a writer thread, which
//! writes each one atomically once edits pause (500 ms after the last
//! change) or have gone on too long (2 s after the first unsaved one).
//! Encoding happens on the main thread (it needs the model); disk I/O never
//! does.
//!
//! The runtime does not encode on every change (a drag changes the layout on
//! every mouse move): it records what changed in [`Unsaved`] and encodes once
//! that is due by the same rule, handing the bytes over with
//! [`Autosaver::submit_now`] so the writer does not wait a second time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::error::PersistError;
use super::ids::ProjectId;
use super::persist::{self, atomic_write, LAYOUT_MODE, WORKSPACE_MODE};
use super::project::Project;
use super::workspace::Workspace;

/// Attempts at writing one version of a file before giving up on it.
pub const MAX_ATTEMPTS: u32 = 3;

/// When a changed file gets written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DebouncePolicy {
    /// Write once no change has come for this long.
    pub quiet: Duration,
    /// Write at the latest this long after the first unsaved change, even
    /// while changes keep coming (a long drag still gets saved).
    pub max_delay: Duration,
}

impl Default for DebouncePolicy {
    fn default() -> Self {
        Self { quiet: Duration::from_millis(500), max_delay: Duration::from_secs(2) }
    }
}

/// The debounce state of one file: when its unsaved changes began and when
/// the last one came. Pure, so the timing rule is testable without clocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Debounce {
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Debounce {
    /// Records a change at `now`.
    pub fn touch(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// When the file should be written; `None` when nothing is unsaved.
    pub fn due_at(&self, policy: &DebouncePolicy) -> Option<Instant> {
        let (first, last) = (self.first?, self.last?);
        Some((last + policy.quiet).min(first + policy.max_delay))
    }

    /// Whether the file should be written at `now`.
    pub fn is_due(&self, now: Instant, policy: &DebouncePolicy) -> bool {
        self.due_at(policy).is_some_and(|t| now >= t)
    }

    /// Forgets the unsaved changes (they were written).
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

/// What the model changed since it was last encoded for saving, and when:
/// the main thread's half of the debounce.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unsaved {
    layouts: BTreeSet<ProjectId>,
    workspace: bool,
    debounce: Debounce,
}

/// What is to be encoded now (taken from [`Unsaved`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToEncode {
    /// Projects whose layout changed.
    pub layouts: BTreeSet<ProjectId>,
    /// Whether the workspace file is to be written.
    pub workspace: bool,
}

impl Unsaved {
    /// Records a change at `now`: the workspace file and the layout of
    /// `active` (the project the change was made in) need writing.
    pub fn mark(&mut self, active: Option<&ProjectId>, now: Instant) {
        if let Some(id) = active {
            self.layouts.insert(id.clone());
        }
        self.workspace = true;
        self.debounce.touch(now);
    }

    /// Whether nothing is waiting to be encoded.
    pub fn is_empty(&self) -> bool {
        self.layouts.is_empty() && !self.workspace
    }

    /// When the changes should be encoded; `None` when there are none.
    pub fn due_at(&self, policy: &DebouncePolicy) -> Option<Instant> {
        self.debounce.due_at(policy)
    }

    /// Takes what is due at `now` (all of it), leaving nothing unsaved.
    pub fn take_due(&mut self, now: Instant, policy: &DebouncePolicy) -> Option<ToEncode> {
        self.debounce.is_due(now, policy).then(|| self.take())
    }

    /// Takes everything, due or not (for a flush).
    pub fn take(&mut self) -> ToEncode {
        let taken = ToEncode { layouts: std::mem::take(&mut self.layouts), workspace: self.workspace };
        *self = Self::default();
        taken
    }
}

/// A write that failed.
#[derive(Debug)]
pub struct SaveFailure {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub error: PersistError,
    /// Whether the writer gave up on this version (after [`MAX_ATTEMPTS`]);
    /// otherwise it retries after the next debounce period.
    pub gave_up: bool,
}

/// Why the autosaver could not take a file.
#[derive(Debug, thiserror::Error)]
pub enum AutosaveError {
    /// The writer thread could not be started.
    #[error("starting the autosave thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The writer thread is gone (it panicked); nothing more will be saved.
    #[error("the autosave thread has stopped")]
    Stopped,
    /// The model could not be encoded.
    #[error(transparent)]
    Encode(#[from] PersistError),
}

enum Msg {
    /// `now`: write at once (the caller already debounced).
    Write {
        path: PathBuf,
        bytes: Vec<u8>,
        mode: u32,
        now: bool,
    },
    Flush(mpsc::Sender<()>),
}

struct Pending {
    bytes: Vec<u8>,
    mode: u32,
    debounce: Debounce,
    attempts: u32,
    /// Written at the next chance instead of after the debounce.
    now: bool,
}

impl Pending {
    fn due_at(&self, policy: &DebouncePolicy) -> Option<Instant> {
        if self.now {
            return Some(Instant::now());
        }
        self.debounce.due_at(policy)
    }
}

/// The autosave writer. Dropping it writes everything pending and joins
/// the thread.
pub struct Autosaver {
    tx: Option<mpsc::Sender<Msg>>,
    thread: Option<JoinHandle<()>>,
    failures: Arc<Mutex<Vec<SaveFailure>>>,
    policy: DebouncePolicy,
}

impl Autosaver {
    /// Starts the writer thread.
    pub fn spawn(policy: DebouncePolicy) -> Result<Self, AutosaveError> {
        let (tx, rx) = mpsc::channel();
        let failures = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&failures);
        let thread = std::thread::Builder::new()
            .name("termsprawl-autosave".into())
            .spawn(move || writer(rx, policy, sink))
            .map_err(AutosaveError::Spawn)?;
        Ok(Self { tx: Some(tx), thread: Some(thread), failures, policy })
    }

    /// The debounce rule the writer follows (and [`Unsaved`] should).
    pub fn policy(&self) -> DebouncePolicy {
        self.policy
    }

    /// Queues `bytes` for `path` (replacing any unsaved version of it).
    pub fn submit(&self, path: PathBuf, bytes: Vec<u8>, mode: u32) -> Result<(), AutosaveError> {
        self.send_write(path, bytes, mode, false)
    }

    /// Queues `bytes` for `path` to be written at once: the caller already
    /// waited for the debounce. A failed write is retried as usual.
    pub fn submit_now(&self, path: PathBuf, bytes: Vec<u8>, mode: u32) -> Result<(), AutosaveError> {
        self.send_write(path, bytes, mode, true)
    }

    fn send_write(&self, path: PathBuf, bytes: Vec<u8>, mode: u32, now: bool) -> Result<(), AutosaveError> {
        let tx = self.tx.as_ref().ok_or(AutosaveError::Stopped)?;
        tx.send(Msg::Write { path, bytes, mode, now }).map_err(|_| AutosaveError::Stopped)
    }

    /// Encodes what `what` names (layouts of projects still open, the
    /// workspace) and queues it to be written at once. Returns what could
    /// not be encoded or queued.
    pub fn submit_encoded(
        &self,
        what: &ToEncode,
        data_dir: &Path,
        workspace: &Workspace,
        home: Option<&Path>,
    ) -> Vec<AutosaveError> {
        let mut errors = vec![];
        for project in what.layouts.iter().filter_map(|id| workspace.project(id)) {
            let sent = persist::encode_layout(project, home)
                .map_err(AutosaveError::from)
                .and_then(|bytes| self.submit_now(persist::layout_path(project.folder()), bytes, LAYOUT_MODE));
            errors.extend(sent.err());
        }
        if what.workspace {
            let sent = persist::encode_workspace(workspace, home)
                .map_err(AutosaveError::from)
                .and_then(|bytes| self.submit_now(persist::workspace_path(data_dir), bytes, WORKSPACE_MODE));
            errors.extend(sent.err());
        }
        errors
    }

    /// Encodes a project's layout and queues it for its canvas.json.
    pub fn submit_layout(&self, project: &Project, home: Option<&Path>) -> Result<(), AutosaveError> {
        let bytes = persist::encode_layout(project, home)?;
        self.submit(persist::layout_path(project.folder()), bytes, LAYOUT_MODE)
    }

    /// Encodes the workspace and queues it for `<data>/workspace.json`.
    pub fn submit_workspace(
        &self,
        data_dir: &Path,
        workspace: &Workspace,
        home: Option<&Path>,
    ) -> Result<(), AutosaveError> {
        let bytes = persist::encode_workspace(workspace, home)?;
        self.submit(persist::workspace_path(data_dir), bytes, WORKSPACE_MODE)
    }

    /// Writes everything pending now and waits until it is on disk (or
    /// failed); returns the failures collected so far. For quitting, and
    /// for tests.
    pub fn flush(&self) -> Result<Vec<SaveFailure>, AutosaveError> {
        let tx = self.tx.as_ref().ok_or(AutosaveError::Stopped)?;
        let (done_tx, done_rx) = mpsc::channel();
        tx.send(Msg::Flush(done_tx)).map_err(|_| AutosaveError::Stopped)?;
        done_rx.recv().map_err(|_| AutosaveError::Stopped)?;
        Ok(self.take_failures())
    }

    /// The write failures since the last call (for showing to the user).
    pub fn take_failures(&self) -> Vec<SaveFailure> {
        let mut guard = self.failures.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        std::mem::take(&mut *guard)
    }
}

impl Drop for Autosaver {
    fn drop(&mut self) {
        // Closing the channel tells the writer to write what is pending and stop.
        self.tx = None;
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                tracing::error!("autosave thread panicked; unsaved changes may be lost");
            }
        }
    }
}

fn writer(rx: mpsc::Receiver<Msg>, policy: DebouncePolicy, failures: Arc<Mutex<Vec<SaveFailure>>>) {
    let mut pending: BTreeMap<PathBuf, Pending> = BTreeMap::new();
    loop {
        let next_due = pending.values().filter_map(|p| p.due_at(&policy)).min();
        let msg = match next_due {
            Some(due) => rx.recv_timeout(due.saturating_duration_since(Instant::now())),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match msg {
            Ok(Msg::Write { path, bytes, mode, now }) => {
                let entry = pending.entry(path).or_insert_with(|| Pending {
                    bytes: Vec::new(),
                    mode,
                    debounce: Debounce::default(),
                    attempts: 0,
                    now,
                });
                entry.bytes = bytes;
                entry.mode = mode;
                entry.attempts = 0;
                entry.now = now;
                entry.debounce.touch(Instant::now());
            }
            Ok(Msg::Flush(done)) => {
                write_due(&mut pending, &policy, &failures, true);
                // The caller may have stopped waiting; nothing to do then.
                let _ = done.send(());
                continue;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                write_due(&mut pending, &policy, &failures, true);
                return;
            }
        }
        write_due(&mut pending, &policy, &failures, false);
    }
}

/// Writes the files that are due (all of them when `all`), keeping failed
/// ones for a retry until [`MAX_ATTEMPTS`].
fn write_due(
    pending: &mut BTreeMap<PathBuf, Pending>,
    policy: &DebouncePolicy,
    failures: &Mutex<Vec<SaveFailure>>,
    all: bool,
) {
    let now = Instant::now();
    let due: Vec<PathBuf> = pending
        .iter()
        .filter(|(_, p)| all || p.now || p.debounce.is_due(now, policy))
        .map(|(k, _)| k.clone())
        .collect();
    for path in due {
        let Some(entry) = pending.get_mut(&path) else { continue };
        let result = ensure_parent(&path).and_then(|()| atomic_write(&path, &entry.bytes, entry.mode));
        match result {
            Ok(()) => {
                tracing::trace!(path = %path.display(), bytes = entry.bytes.len(), "autosaved");
                pending.remove(&path);
            }
            Err(error) => {
                entry.attempts += 1;
                let gave_up = entry.attempts >= MAX_ATTEMPTS;
                tracing::warn!(path = %path.display(), %error, attempt = entry.attempts, gave_up, "autosave failed");
                if gave_up {
                    pending.remove(&path);
                } else {
                    entry.now = false;
                    entry.debounce.clear();
                    entry.debounce.touch(now);
                }
                let mut guard = failures.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                guard.push(SaveFailure { path, error, gave_up });
            }
        }
    }
}

/// Creates the file's directory (one level only: `.termsprawl` inside an
/// existing project folder, never a vanished project folder itself).
fn ensure_parent(path: &Path) -> Result<(), PersistError> {
    let Some(dir) = path.parent() else { return Ok(()) };
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir(dir)
        .or_else(|e| if e.kind() == std::io::ErrorKind::AlreadyExists { Ok(()) } else { Err(e) })
        .map_err(|e| PersistError::io("create", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debounce_waits_for_quiet_but_not_forever() {
        let policy = DebouncePolicy::default();
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut d = Debounce::default();
        assert_eq!(d.due_at(&policy), None);
        d.touch(t0);
        assert_eq!(d.due_at(&policy), Some(ms(500)));
        assert!(!d.is_due(ms(499), &policy));
        assert!(d.is_due(ms(500), &policy));
        d.touch(ms(400));
        assert_eq!(d.due_at(&policy), Some(ms(900)));
        for step in [800, 1200, 1600, 1900] {
            d.touch(ms(step));
        }
        assert_eq!(d.due_at(&policy), Some(ms(2000)), "capped at first change + max delay");
        d.clear();
        assert_eq!(d.due_at(&policy), None);
    }

    #[test]
    fn flush_writes_the_latest_version_and_drop_writes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("sub").join("b.json");
        let saver =
            Autosaver::spawn(DebouncePolicy { quiet: Duration::from_secs(3600), max_delay: Duration::from_secs(3600) })
                .unwrap();
        saver.submit(a.clone(), b"one".to_vec(), 0o600).unwrap();
        saver.submit(a.clone(), b"two".to_vec(), 0o600).unwrap();
        assert!(saver.flush().unwrap().is_empty());
        assert_eq!(std::fs::read(&a).unwrap(), b"two");
        saver.submit(b.clone(), b"three".to_vec(), 0o644).unwrap();
        drop(saver);
        assert_eq!(std::fs::read(&b).unwrap(), b"three");
    }

    #[test]
    fn failures_are_reported_and_retried_then_dropped() {
        let dir = tempfile::tempdir().unwrap();
        // The parent of the parent does not exist: ensure_parent creates one level only.
        let bad = dir.path().join("gone").join("deeper").join("x.json");
        let saver =
            Autosaver::spawn(DebouncePolicy { quiet: Duration::from_secs(3600), max_delay: Duration::from_secs(3600) })
                .unwrap();
        saver.submit(bad.clone(), b"x".to_vec(), 0o600).unwrap();
        let mut all = Vec::new();
        for _ in 0..MAX_ATTEMPTS {
            all.extend(saver.flush().unwrap());
        }
        assert_eq!(all.len(), MAX_ATTEMPTS as usize);
        assert!(all.iter().all(|f| f.path == bad));
        assert!(all.last().unwrap().gave_up);
        assert!(saver.flush().unwrap().is_empty(), "given up: no more attempts");
        assert!(!bad.exists());
    }

    #[test]
    fn rapid_changes_are_encoded_once_when_the_debounce_fires() {
        let policy = DebouncePolicy::default();
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let a = ProjectId::new("a").unwrap();
        let mut unsaved = Unsaved::default();
        assert!(unsaved.is_empty());
        // A drag: 30 moves 10 ms apart, a loop turn every 5 ms until well after.
        let mut encodes = vec![];
        for turn in 0..200u64 {
            let now = ms(turn * 5);
            if turn % 2 == 0 && turn < 60 {
                unsaved.mark(Some(&a), now);
            }
            if let Some(what) = unsaved.take_due(now, &policy) {
                encodes.push((turn * 5, what));
            }
        }
        let want = ToEncode { layouts: [a.clone()].into(), workspace: true };
        assert_eq!(encodes, vec![(290 + 500, want)], "one encode, 500 ms after the last move");
        assert!(unsaved.is_empty());

        // Changes that never pause are still encoded every max_delay.
        let mut at = vec![];
        for turn in 0..700u64 {
            let now = ms(turn * 5);
            unsaved.mark(Some(&a), now);
            if unsaved.take_due(now, &policy).is_some() {
                at.push(turn * 5);
            }
        }
        assert_eq!(at, vec![2000]);
    }

    #[test]
    fn unsaved_collects_every_changed_project_and_take_empties_it() {
        let policy = DebouncePolicy::default();
        let t0 = Instant::now();
        let (a, b) = (ProjectId::new("a").unwrap(), ProjectId::new("b").unwrap());
        let mut unsaved = Unsaved::default();
        unsaved.mark(Some(&a), t0);
        unsaved.mark(Some(&b), t0);
        unsaved.mark(None, t0);
        assert_eq!(unsaved.due_at(&policy), Some(t0 + policy.quiet));
        assert_eq!(unsaved.take_due(t0, &policy), None, "not due yet");
        assert_eq!(unsaved.take(), ToEncode { layouts: [a, b].into(), workspace: true });
        assert!(unsaved.is_empty());
        assert_eq!(unsaved.due_at(&policy), None);
    }

    #[test]
    fn submit_now_writes_without_waiting_for_the_writers_debounce() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let saver =
            Autosaver::spawn(DebouncePolicy { quiet: Duration::from_secs(3600), max_delay: Duration::from_secs(3600) })
                .unwrap();
        saver.submit_now(a.clone(), b"now".to_vec(), 0o600).unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        while !a.exists() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(std::fs::read(&a).unwrap(), b"now");
    }

    #[test]
    fn submit_encoded_writes_the_layouts_of_open_projects_and_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let folder = dir.path().join("proj");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&folder).unwrap();
        let mut ws = Workspace::new();
        let project = Project::new(ProjectId::new("p1").unwrap(), "proj", &folder);
        ws.apply(super::super::Command::AddProject { project: Box::new(project), activate: true }).unwrap();
        let saver = Autosaver::spawn(DebouncePolicy::default()).unwrap();
        let what = ToEncode {
            layouts: [ProjectId::new("p1").unwrap(), ProjectId::new("gone").unwrap()].into(),
            workspace: true,
        };
        assert!(saver.submit_encoded(&what, &data, &ws, None).is_empty(), "a closed project is skipped");
        assert!(saver.flush().unwrap().is_empty());
        assert!(persist::layout_path(&folder).exists());
        assert!(persist::workspace_path(&data).exists());
    }
}
