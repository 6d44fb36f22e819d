//! The bounded pool tool operations run on: a fixed set of worker threads fed
//! by a bounded queue. A full queue refuses the job at once, so a flood of
//! calls across many projects cannot grow threads or memory without bound.
//! (The tool server still runs one operation per project at a time.)

use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Worker threads: enough for several projects' slow browser waits at once.
pub const WORKERS: usize = 8;
/// Jobs that may wait for a worker before new ones are refused.
pub const QUEUE: usize = 32;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Why a job was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// Every worker is busy and the queue is full.
    #[error("the app is running too many agent operations at once; try again shortly")]
    Busy,
    /// The pool has no workers (they could not start, or the app is stopping).
    #[error("the app cannot run agent operations (no worker threads)")]
    Stopped,
}

/// A fixed set of workers; dropping the pool lets them finish their jobs and exit.
pub struct Pool {
    jobs: Sender<Job>,
}

impl Pool {
    /// Starts `workers` threads named `<name>-<n>` behind a queue of `queue` jobs.
    pub fn new(name: &str, workers: usize, queue: usize) -> Pool {
        let (jobs, rx) = crossbeam_channel::bounded::<Job>(queue);
        for n in 0..workers {
            let rx: Receiver<Job> = rx.clone();
            let spawned = std::thread::Builder::new().name(format!("{name}-{n}")).spawn(move || {
                for job in rx {
                    // A panicking operation must not take its worker with it; its
                    // caller sees the dropped reply as an interrupted operation.
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        tracing::error!("a tool operation panicked");
                    }
                }
            });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a tool worker thread");
            }
        }
        Pool { jobs }
    }

    /// Queues `job`, or refuses it at once when the queue is full.
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) -> Result<(), PoolError> {
        match self.jobs.try_send(Box::new(job)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(PoolError::Busy),
            Err(TrySendError::Disconnected(_)) => Err(PoolError::Stopped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn runs_jobs_and_refuses_when_full() {
        let pool = Pool::new("test-pool", 1, 1);
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        pool.submit(move || {
            let _ = started_tx.send(());
            let _ = release_rx.recv();
        })
        .unwrap();
        started_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        // The one worker is busy; one job fits the queue, the next is refused.
        let (done_tx, done_rx) = mpsc::channel();
        pool.submit(move || done_tx.send(7).unwrap()).unwrap();
        assert_eq!(pool.submit(|| {}), Err(PoolError::Busy));
        release_tx.send(()).unwrap();
        assert_eq!(done_rx.recv_timeout(Duration::from_secs(30)).unwrap(), 7);
    }

    #[test]
    fn a_panicking_job_keeps_its_worker() {
        let pool = Pool::new("test-pool", 1, 4);
        pool.submit(|| panic!("boom")).unwrap();
        let (tx, rx) = mpsc::channel();
        pool.submit(move || tx.send(()).unwrap()).unwrap();
        rx.recv_timeout(Duration::from_secs(30)).unwrap();
    }
}
