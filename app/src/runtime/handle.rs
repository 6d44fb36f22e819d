//! How other threads reach the main thread: jobs with replies, and a waker.
//!
//! Every canvas mutation happens on the main thread (the analogue of "the
//! renderer owns canvas state" in the seeds). The tool server, the CDP facade
//! and PTY readers send a closure through an [`AppHandle`] and wait for its
//! result with a deadline; the main loop is woken through its [`Waker`].

use super::Runtime;
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Work for the main thread.
pub type Job = Box<dyn FnOnce(&mut Runtime) + Send>;

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

/// A cloneable, thread-safe handle to the main thread.
#[derive(Clone)]
pub struct AppHandle {
    tx: Sender<Job>,
    waker: Arc<Waker>,
}

impl AppHandle {
    /// A handle and the receiving end the main loop drains.
    pub fn new(waker: Arc<Waker>) -> (AppHandle, Receiver<Job>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (AppHandle { tx, waker }, rx)
    }

    /// Runs `f` on the main thread without waiting for it.
    pub fn post(&self, f: impl FnOnce(&mut Runtime) + Send + 'static) -> Result<(), AppError> {
        self.tx.send(Box::new(f)).map_err(|_| AppError::Stopped)?;
        self.waker.wake();
        Ok(())
    }

    /// Runs `f` on the main thread and waits up to `timeout` for its result.
    /// Never call it from the main thread itself (it would wait on itself).
    pub fn call<R: Send + 'static>(&self, timeout: Duration, f: impl FnOnce(&mut Runtime) -> R + Send + 'static) -> Result<R, AppError> {
        let (tx, rx) = bounded(1);
        self.post(move |rt| {
            let _ = tx.send(f(rt));
        })?;
        match rx.recv_timeout(timeout) {
            Ok(r) => Ok(r),
            Err(RecvTimeoutError::Timeout) => Err(AppError::Timeout(timeout)),
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
