//! SIGINT, SIGTERM and SIGHUP end the app through its own shutdown path
//! (servers closed, discovery files removed, canvas saved, engine stopped),
//! in the window and headless alike.
//!
//! The signals are blocked in every thread, from the first line of the app
//! on, and one thread takes them with `sigwait`. No handler is involved, so
//! nothing can replace it: Chromium installs its own SIGTERM handler during
//! engine start-up (it begins Chrome's own shutdown, which in an embedder
//! closes nothing and leaves the process running, and it resets SIGTERM to
//! the default so a second one kills the process without cleanup). A signal
//! that arrives while the engine starts stays pending until the watcher
//! takes it. Threads inherit the mask (Chromium's included); child processes
//! unblock: std's `Command` and portable-pty reset the mask, and the CEF
//! helpers reset it at their entry (`cef_bridge::run_subprocess_if_child`).

use super::Waker;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The watcher thread's name.
const WATCHER: &str = "stop-signals";

/// The signals that stop the app.
const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn stop_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in STOP_SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Proof that the stop signals are blocked in the calling thread (and so in
/// every thread it starts afterwards); [`watch`](Self::watch) consumes it.
#[derive(Debug)]
pub struct StopSignals {
    set: libc::sigset_t,
}

impl StopSignals {
    /// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread. Call it on
    /// the main thread before any other thread exists (before the engine):
    /// a thread started earlier would keep them unblocked and could take one.
    pub fn block() -> std::io::Result<StopSignals> {
        let set = stop_set();
        // SAFETY: pthread_sigmask with a valid set; the old mask is not needed.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
        Ok(StopSignals { set })
    }

    /// Starts the thread that waits for a stop signal; on the first it sets
    /// `stop` and wakes the loop. Signals that arrived since [`block`](Self::block)
    /// are taken at once.
    pub fn watch(self, stop: Arc<AtomicBool>, waker: Arc<Waker>) -> std::io::Result<JoinHandle<()>> {
        let set = self.set;
        std::thread::Builder::new().name(WATCHER.into()).spawn(move || loop {
            let mut sig: libc::c_int = 0;
            // SAFETY: sigwait on a valid set of signals blocked in this thread (inherited).
            let rc = unsafe { libc::sigwait(&set, &mut sig) };
            if rc != 0 {
                tracing::warn!(error = %std::io::Error::from_raw_os_error(rc), "sigwait failed; stop signals are not watched");
                return;
            }
            tracing::info!(signal = sig, "stop signal received; shutting down");
            stop.store(true, Ordering::Relaxed);
            waker.wake();
            // Later signals are taken too (and ignored): the shutdown is under way.
        })
    }
}

/// Logs a warning when some thread has the stop signals unblocked (one that
/// unblocked them itself): a signal could then reach it and bypass the
/// shutdown path. Called once the engine's threads exist.
pub fn warn_if_unblocked() {
    if !blocked_in_every_thread() {
        tracing::warn!("a thread has SIGINT/SIGTERM/SIGHUP unblocked: a stop signal may end the app without cleanup");
    }
}

/// Whether every thread of this process has the stop signals blocked.
pub fn blocked_in_every_thread() -> bool {
    let wanted: u64 = STOP_SIGNALS.iter().map(|s| 1u64 << (s - 1)).sum();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return false };
    tasks.flatten().all(|t| {
        // The watcher itself: sigwait unblocks the set it waits for while it waits.
        if std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == WATCHER) {
            return true;
        }
        std::fs::read_to_string(t.path().join("status")).is_ok_and(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigBlk:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
                .is_some_and(|mask| mask & wanted == wanted)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::thread::JoinHandleExt;
    use std::time::{Duration, Instant};

    #[test]
    fn a_sighup_sent_to_the_watcher_sets_the_flag_and_wakes_the_loop() {
        // The test harness's other threads do not block the signal, so it is
        // sent to the watcher thread itself rather than to the process.
        let stop = Arc::new(AtomicBool::new(false));
        let waker = Waker::new();
        let watcher = std::thread::spawn({
            let (stop, waker) = (stop.clone(), waker.clone());
            move || StopSignals::block().unwrap().watch(stop, waker).unwrap()
        })
        .join()
        .unwrap();
        // SAFETY: the watcher thread is alive (it loops on sigwait) and blocks SIGHUP.
        assert_eq!(unsafe { libc::pthread_kill(watcher.as_pthread_t(), libc::SIGHUP) }, 0);
        let end = Instant::now() + Duration::from_secs(10);
        while !stop.load(Ordering::Relaxed) {
            assert!(Instant::now() < end, "the stop flag was never set");
            waker.wait_until(Instant::now() + Duration::from_millis(50));
        }
    }

    #[test]
    fn block_blocks_the_three_signals_in_the_calling_thread() {
        std::thread::spawn(|| {
            StopSignals::block().unwrap();
            // SAFETY: reading this thread's mask into a local set.
            let mut current: libc::sigset_t = unsafe { std::mem::zeroed() };
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut current) };
            for sig in STOP_SIGNALS {
                // SAFETY: sigismember on an initialised set.
                assert_eq!(unsafe { libc::sigismember(&current, sig) }, 1, "signal {sig} not blocked");
            }
        })
        .join()
        .unwrap();
        // The harness's own threads were not touched.
        assert!(!blocked_in_every_thread());
    }
}
