//! Session files: each node's ANSI snapshot under `<data>/terminals/`, ending
//! a session for good, and the worker thread that does this off the main
//! thread.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use terminal::persist;
use terminal::tmux::Tmux;
use terminal::RunningTerminal;

/// How often changed terminals are snapshotted to disk (besides at exit), so
/// a crash or SIGKILL loses at most this much.
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(5);

/// The data-dir folder holding terminal snapshots.
pub const SNAPSHOT_DIR: &str = "terminals";

/// Where the snapshot of session `name` lives.
pub fn snapshot_path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(SNAPSHOT_DIR).join(format!("{name}.ansi"))
}

/// Ends a node's session for good: kills its tmux session (when tmux is
/// used) and deletes its snapshot. Returns whether anything existed.
pub fn end_session(data_dir: &Path, tmux: Option<&Tmux>, name: &str) -> Result<bool, String> {
    let mut existed = false;
    if let Some(tmux) = tmux {
        existed |= terminal::tmux::kill_session(tmux, data_dir, name).map_err(|e| e.to_string())?;
    }
    match std::fs::remove_file(snapshot_path(data_dir, name)) {
        Ok(()) => existed = true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot delete terminal snapshot: {e}")),
    }
    Ok(existed)
}

/// Saves the grid of `term` as session `name`'s snapshot.
pub fn save_terminal_snapshot(data_dir: &Path, name: &str, term: &dyn RunningTerminal) -> Result<(), String> {
    write_snapshot(data_dir, name, &screen_snapshot(term))
}

/// The capped ANSI snapshot of what `term` shows.
pub(super) fn screen_snapshot(term: &dyn RunningTerminal) -> Vec<u8> {
    term.with_screen(|s| s.ansi_snapshot(persist::MAX_SNAPSHOT_BYTES))
}

fn write_snapshot(data_dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let dir = data_dir.join(SNAPSHOT_DIR);
    create_private_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    persist::save_snapshot(&snapshot_path(data_dir, name), bytes).map_err(|e| e.to_string())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Work on session files, done off the main thread (fsync, tmux processes)
/// and in order, so a node's late snapshot can never recreate the file its
/// closing just deleted.
pub(super) enum SessionJob {
    /// Write a snapshot.
    Save { data: PathBuf, name: String, bytes: Vec<u8> },
    /// End a session for good.
    End { data: PathBuf, tmux: Option<Tmux>, name: String },
    /// Answer once everything queued before is done.
    Flush(mpsc::Sender<()>),
}

fn run_session_job(job: SessionJob) {
    match job {
        SessionJob::Save { data, name, bytes } => {
            if let Err(e) = write_snapshot(&data, &name, &bytes) {
                tracing::warn!(session = %name, "terminal snapshot not saved: {e}");
            }
        }
        SessionJob::End { data, tmux, name } => match end_session(&data, tmux.as_ref(), &name) {
            Ok(existed) => tracing::debug!(session = %name, existed, "terminal session ended"),
            Err(e) => tracing::warn!(session = %name, "terminal session not ended: {e}"),
        },
        SessionJob::Flush(done) => {
            let _ = done.send(());
        }
    }
}

/// The session worker thread (started on first use) and the sessions it is
/// still ending.
#[derive(Default)]
pub(super) struct SessionWorker {
    worker: Option<mpsc::Sender<SessionJob>>,
    ending: HashSet<String>,
}

impl SessionWorker {
    /// Queues a job (done inline if the thread cannot start); an `End` is
    /// remembered until the next [`SessionWorker::flush`].
    pub(super) fn queue(&mut self, job: SessionJob) {
        if let SessionJob::End { name, .. } = &job {
            self.ending.insert(name.clone());
        }
        if self.worker.is_none() {
            let (tx, rx) = mpsc::channel();
            match std::thread::Builder::new()
                .name("term-sessions".into())
                .spawn(move || rx.into_iter().for_each(run_session_job))
            {
                Ok(_) => self.worker = Some(tx),
                Err(e) => tracing::warn!("terminal session worker not started; working inline: {e}"),
            }
        }
        let job = match &self.worker {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        run_session_job(job);
    }

    /// Whether session `name` is being ended (queued since the last flush).
    pub(super) fn is_ending(&self, name: &str) -> bool {
        self.ending.contains(name)
    }

    /// Waits (bounded) until queued work is done.
    pub(super) fn flush(&mut self, timeout: Duration) {
        self.ending.clear();
        let Some(tx) = &self.worker else { return };
        let (done_tx, done_rx) = mpsc::channel();
        if tx.send(SessionJob::Flush(done_tx)).is_ok() && done_rx.recv_timeout(timeout).is_err() {
            tracing::warn!("terminal snapshots still being written at exit");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_live_under_the_terminals_folder() {
        assert_eq!(snapshot_path(Path::new("/d"), "ts-a-1"), Path::new("/d/terminals/ts-a-1.ansi"));
    }

    #[test]
    fn jobs_run_in_order_and_an_end_deletes_the_snapshot_saved_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_path_buf();
        let mut worker = SessionWorker::default();
        worker.queue(SessionJob::Save { data: data.clone(), name: "ts-a".into(), bytes: b"hello".to_vec() });
        worker.queue(SessionJob::Save { data: data.clone(), name: "ts-b".into(), bytes: b"kept".to_vec() });
        worker.queue(SessionJob::End { data: data.clone(), tmux: None, name: "ts-a".into() });
        assert!(worker.is_ending("ts-a") && !worker.is_ending("ts-b"));
        worker.flush(Duration::from_secs(10));
        assert!(!worker.is_ending("ts-a"), "a flush forgets what it finished ending");
        assert!(!snapshot_path(&data, "ts-a").exists());
        assert_eq!(persist::load_snapshot(&snapshot_path(&data, "ts-b")).unwrap().as_deref(), Some(&b"kept"[..]));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join(SNAPSHOT_DIR)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "the snapshot folder is private");
        assert_eq!(end_session(&data, None, "ts-b"), Ok(true));
        assert_eq!(end_session(&data, None, "ts-b"), Ok(false), "nothing left to end");
    }
}
