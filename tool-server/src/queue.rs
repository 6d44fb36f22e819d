//! Per-project FIFO queues: operations of one project run one at a time in
//! arrival order; different projects run in parallel. Each ticket waits for
//! its predecessor's completion signal (a chain, as of promises each
//! awaiting the one before) and a project's entry disappears when its last
//! ticket ends.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;

/// The queues of every project.
#[derive(Debug, Default)]
pub(crate) struct ProjectQueues {
    tails: Mutex<HashMap<String, Tail>>,
}

#[derive(Debug)]
struct Tail {
    /// Completion of the newest ticket, handed to the next one to arrive.
    last_done: Option<oneshot::Receiver<()>>,
    /// Tickets of this project not yet dropped.
    pending: usize,
}

/// A place in a project's queue. Dropping it (after running, on error, on
/// panic or on cancellation) lets the next ticket run.
#[derive(Debug)]
pub(crate) struct Ticket {
    queues: Arc<ProjectQueues>,
    project: String,
    previous: Option<oneshot::Receiver<()>>,
    done: Option<oneshot::Sender<()>>,
}

impl ProjectQueues {
    /// Joins the end of `project`'s queue. Synchronous, so the queue order is
    /// exactly the order of calls.
    pub(crate) fn enqueue(self: &Arc<Self>, project: &str) -> Ticket {
        let (done, done_rx) = oneshot::channel();
        let mut tails = self.tails.lock();
        let tail = tails.entry(project.to_owned()).or_insert(Tail { last_done: None, pending: 0 });
        let previous = tail.last_done.replace(done_rx);
        tail.pending += 1;
        Ticket { queues: Arc::clone(self), project: project.to_owned(), previous, done: Some(done) }
    }

    /// Tickets of `project` still queued or running.
    pub(crate) fn pending(&self, project: &str) -> usize {
        self.tails.lock().get(project).map_or(0, |t| t.pending)
    }

    /// Number of projects with a live queue.
    #[cfg(test)]
    pub(crate) fn projects(&self) -> usize {
        self.tails.lock().len()
    }
}

impl Ticket {
    /// Waits until every earlier ticket of the project has been dropped.
    pub(crate) async fn wait_turn(&mut self) {
        if let Some(previous) = self.previous.take() {
            // Err means the sender was dropped, which is exactly "done".
            let _ = previous.await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let done = self.done.take();
        if let Some(previous) = self.previous.take() {
            // Dropped before its turn (cancelled): keep the chain intact by
            // signalling only once the predecessor has finished.
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(async move {
                        let _ = previous.await;
                        drop(done);
                    });
                }
                Err(_) => drop(done),
            }
        } else {
            drop(done);
        }
        let mut tails = self.queues.tails.lock();
        if let Some(tail) = tails.get_mut(&self.project) {
            tail.pending = tail.pending.saturating_sub(1);
            if tail.pending == 0 {
                tails.remove(&self.project);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn runs_in_arrival_order_and_cleans_up() {
        runtime().block_on(async {
            let queues = Arc::new(ProjectQueues::default());
            let order = Arc::new(Mutex::new(Vec::new()));
            let mut handles = Vec::new();
            for i in 0..5 {
                let mut ticket = queues.enqueue("p");
                let order = Arc::clone(&order);
                handles.push(tokio::spawn(async move {
                    ticket.wait_turn().await;
                    // Yield while holding the turn; a broken queue would interleave here.
                    for _ in 0..3 {
                        tokio::task::yield_now().await;
                    }
                    order.lock().push(i);
                    drop(ticket);
                }));
            }
            assert_eq!(queues.pending("p"), 5);
            // Spawned in reverse to prove order comes from enqueue, not scheduling.
            for h in handles.into_iter().rev() {
                h.await.unwrap();
            }
            assert_eq!(*order.lock(), vec![0, 1, 2, 3, 4]);
            assert_eq!(queues.pending("p"), 0);
            assert_eq!(queues.projects(), 0);
        });
    }

    #[test]
    fn a_cancelled_waiter_does_not_let_its_successor_jump_the_running_one() {
        runtime().block_on(async {
            let queues = Arc::new(ProjectQueues::default());
            let mut first = queues.enqueue("p");
            first.wait_turn().await;
            let second = queues.enqueue("p");
            let mut third = queues.enqueue("p");
            drop(second); // cancelled while `first` still runs
            let waiting = tokio::spawn(async move {
                third.wait_turn().await;
            });
            // On this single-threaded runtime, yielding lets every ready task
            // run; a broken chain would have released `third` by now.
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            assert!(!waiting.is_finished(), "third ran while first held the turn");
            drop(first);
            waiting.await.unwrap();
        });
    }

    #[test]
    fn projects_do_not_wait_for_each_other() {
        runtime().block_on(async {
            let queues = Arc::new(ProjectQueues::default());
            let mut a = queues.enqueue("a");
            a.wait_turn().await;
            let mut b = queues.enqueue("b");
            // Completes although `a` still holds project a's turn.
            b.wait_turn().await;
            assert_eq!(queues.projects(), 2);
        });
    }
}
