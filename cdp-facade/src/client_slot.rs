//! [`ClientSlot`]: the one-client-at-a-time slot of the CDP WebSocket; a
//! newer client evicts the connected one and waits for its cleanup. A leaf.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::oneshot;

/// How long a new client waits for the evicted one to clean up.
const EVICT_WAIT: Duration = Duration::from_secs(10);

/// The connected client, as its successor sees it.
pub(crate) struct Active {
    id: u64,
    evict: oneshot::Sender<()>,
    done: oneshot::Receiver<()>,
}

/// The single connected client; a newer one evicts it.
#[derive(Default)]
pub(crate) struct ClientSlot {
    current: Mutex<Option<Active>>,
    next_id: AtomicU64,
}

/// Held by the running client; dropping it tells a waiting successor that cleanup is finished.
pub(crate) struct Claim {
    pub(crate) id: u64,
    pub(crate) evicted: oneshot::Receiver<()>,
    _done: oneshot::Sender<()>,
}

impl ClientSlot {
    /// Takes the slot for a new client; returns its claim and the previous client to evict.
    pub(crate) fn claim(&self) -> (Claim, Option<Active>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (evict_tx, evict_rx) = oneshot::channel();
        let (done_tx, done_rx) = oneshot::channel();
        let previous = self.current.lock().replace(Active { id, evict: evict_tx, done: done_rx });
        (Claim { id, evicted: evict_rx, _done: done_tx }, previous)
    }

    /// Frees the slot if `id` still holds it.
    pub(crate) fn release(&self, id: u64) {
        let mut current = self.current.lock();
        if current.as_ref().is_some_and(|a| a.id == id) {
            *current = None;
        }
    }

    /// Evicts the connected client, if any, and waits until it has cleaned up.
    pub(crate) async fn evict_current(&self) {
        let previous = self.current.lock().take();
        if let Some(previous) = previous {
            evict(previous).await;
        }
    }
}

/// Tells a client it is replaced and waits (bounded) until it has cleaned up.
pub(crate) async fn evict(previous: Active) {
    let _ = previous.evict.send(());
    if tokio::time::timeout(EVICT_WAIT, previous.done).await.is_err() {
        tracing::warn!("previous CDP client did not finish cleaning up in time");
    }
}
