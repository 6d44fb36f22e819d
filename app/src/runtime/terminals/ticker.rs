//! The ticker thread: wakes the main thread at a fixed period for terminal
//! work that no event triggers (an agent turning quiet, periodic snapshots).

use super::super::{AppHandle, Runtime};
use std::time::Duration;

/// How often the main thread re-checks agent statuses (a quiet agent turns
/// "waiting for input" without producing any event of its own).
pub(super) const TICK_EVERY: Duration = Duration::from_secs(1);

/// Starts a thread posting `job` to the main thread every `every`; it ends
/// when the app stops taking jobs.
pub(super) fn spawn(app: AppHandle, every: Duration, job: fn(&mut Runtime)) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("term-ticker".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            if app.post(job).is_err() {
                break;
            }
        })
        .map(|_| ())
}
