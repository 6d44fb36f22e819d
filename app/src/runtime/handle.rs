//! How other threads reach the main thread: jobs with replies, and a waker.
//!
//! Every canvas mutation happens on the main thread, which owns the
//! canvas's state. The tool server, the CDP facade and PTY readers send a
//! closure through a [`MainHandle`] and wait for its result with a deadline;
//! the main loop is woken through its [`Waker`]. The handle is generic over
//! the state the main thread lends its jobs (the app's is `Runtime`), so it
//! knows nothing of it.

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Work for the main thread, on its state `S`.
pub type Job<S> = Box<dyn FnOnce(&mut S) + Send>;

/// Why a cross-thread call did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AppError {
    /// The main thread did not answer in time (stalled or overloaded).
    #[error("the app did not answer within {0:?}")]
    Timeout(Duration),
    /// The app is shutting down.
    #[error("the app is shutting down")]
    Stopped,
}

/// Who got to a [`MainHandle::call`] job first: the main thread (it runs) or
/// the caller's deadline (it never runs).
#[derive(Clone, Default)]
struct Ticket(Arc<AtomicU8>);

impl Ticket {
    const PENDING: u8 = 0;
    const RUNNING: u8 = 1;
    const ABANDONED: u8 = 2;

    /// The main thread takes the job; false when the caller already gave up.
    fn start(&self) -> bool {
        self.0.compare_exchange(Self::PENDING, Self::RUNNING, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// The caller gives up; false when the job already started.
    fn abandon(&self) -> bool {
        self.0.compare_exchange(Self::PENDING, Self::ABANDONED, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
}

type WakeHook = Box<dyn Fn() + Send + Sync>;

/// Wakes the main loop: a condition variable for the headless loop, plus an
/// optional hook (the winit event-loop proxy) for the window loop.
#[derive(Default)]
pub struct Waker {
    woken: Mutex<bool>,
    cv: Condvar,
    hook: Mutex<Option<WakeHook>>,
}

impl Waker {
    /// A waker with no hook.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Also call `hook` on every wake (e.g. `EventLoopProxy::send_event`).
    pub fn set_hook(&self, hook: WakeHook) {
        *self.hook.lock() = Some(hook);
    }

    /// Wakes the loop (any thread).
    pub fn wake(&self) {
        *self.woken.lock() = true;
        self.cv.notify_all();
        if let Some(h) = self.hook.lock().as_ref() {
            h();
        }
    }

    /// Sleeps until woken or `deadline`; clears the wake flag.
    pub fn wait_until(&self, deadline: Instant) {
        let mut g = self.woken.lock();
        while !*g {
            if self.cv.wait_until(&mut g, deadline).timed_out() {
                break;
            }
        }
        *g = false;
    }
}

/// A cloneable, thread-safe handle to the main thread and its state `S`.
pub struct MainHandle<S: 'static> {
    tx: Sender<Job<S>>,
    waker: Arc<Waker>,
}

impl<S: 'static> Clone for MainHandle<S> {
    fn clone(&self) -> Self {
        Self { tx: self.tx.clone(), waker: self.waker.clone() }
    }
}

impl<S: 'static> MainHandle<S> {
    /// A handle and the receiving end the main loop drains.
    pub fn new(waker: Arc<Waker>) -> (Self, Receiver<Job<S>>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (Self { tx, waker }, rx)
    }

    /// Runs `f` on the main thread without waiting for it.
    pub fn post(&self, f: impl FnOnce(&mut S) + Send + 'static) -> Result<(), AppError> {
        self.tx.send(Box::new(f)).map_err(|_| AppError::Stopped)?;
        self.waker.wake();
        Ok(())
    }

    /// Runs `f` on the main thread and waits up to `timeout` for its result.
    /// On [`AppError::Timeout`] `f` has not run and never will: a caller told
    /// "timed out" must not find its change applied later. Never call it from
    /// the main thread itself (it would wait on itself).
    pub fn call<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut S) -> R + Send + 'static,
    ) -> Result<R, AppError> {
        let (tx, rx) = bounded(1);
        let ticket = Ticket::default();
        let job_ticket = ticket.clone();
        self.post(move |rt| {
            if job_ticket.start() {
                let _ = tx.send(f(rt));
            }
        })?;
        match rx.recv_timeout(timeout) {
            Ok(r) => Ok(r),
            Err(RecvTimeoutError::Timeout) => {
                if ticket.abandon() {
                    return Err(AppError::Timeout(timeout));
                }
                // It started at the deadline: its result is a moment away.
                rx.recv_timeout(timeout).map_err(|e| match e {
                    RecvTimeoutError::Timeout => AppError::Timeout(timeout * 2),
                    RecvTimeoutError::Disconnected => AppError::Stopped,
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(AppError::Stopped),
        }
    }

    /// The loop's waker.
    pub fn waker(&self) -> &Arc<Waker> {
        &self.waker
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waker_wakes_a_waiting_thread_and_times_out_otherwise() {
        let w = Waker::new();
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            w2.wait_until(Instant::now() + Duration::from_secs(30));
            start.elapsed()
        });
        std::thread::sleep(Duration::from_millis(50));
        w.wake();
        assert!(t.join().unwrap() < Duration::from_secs(30));
        // No wake pending: returns at the deadline.
        w.wait_until(Instant::now() + Duration::from_millis(10));
    }

    #[test]
    fn a_job_runs_or_is_abandoned_never_both() {
        let t = Ticket::default();
        assert!(t.abandon(), "a queued job can be given up");
        assert!(!t.start(), "a given-up job never runs");
        let t = Ticket::default();
        assert!(t.start());
        assert!(!t.abandon(), "a running job cannot be given up");
    }

    #[test]
    fn a_call_to_a_stalled_loop_times_out_and_leaves_its_job_unrunnable() {
        let (handle, jobs) = MainHandle::<()>::new(Waker::new());
        let got = handle.call(Duration::from_millis(20), |_| ());
        assert_eq!(got, Err(AppError::Timeout(Duration::from_millis(20))));
        assert_eq!(jobs.len(), 1, "the job stays queued until the loop drains it");
    }

    #[test]
    fn hook_runs_on_wake() {
        let w = Waker::new();
        let n = Arc::new(Mutex::new(0));
        let n2 = n.clone();
        w.set_hook(Box::new(move || *n2.lock() += 1));
        w.wake();
        w.wake();
        assert_eq!(*n.lock(), 2);
    }
}
