//! Bounded connection slots for termsprawl's loopback HTTP servers (the agent
//! tool server, the CDP facade and the browser agent server): it owns the
//! decision of which connection may live. Each connection holds a [`Slot`],
//! busy while a request is served and idle otherwise; when every slot is
//! taken, [`Slots::admit`] evicts the connection idle the longest, so a
//! slowloris client can neither lock real clients out (as a refusing cap
//! would) nor grow memory without bound (as no cap would), and busy
//! connections are never evicted. It must not know HTTP or sockets: a server
//! admits on accept, marks [`Slot::busy`]/[`Slot::idle`] around each request
//! and drops the connection when [`Slot::evicted`] resolves.

#![warn(missing_docs)]

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// A bounded set of connection slots shared by one server's accept loop.
#[derive(Clone)]
pub struct Slots {
    shared: Arc<Shared>,
}

struct Shared {
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Connections holding a slot (busy or idle), evicted ones excluded.
    live: usize,
    /// Idle connections by (when they became idle, admission order).
    idle: BTreeMap<(u64, u64), Arc<Eviction>>,
    /// Admission counter: orders slots and stamps idleness without a clock.
    tick: u64,
}

#[derive(Default)]
struct Eviction {
    done: AtomicBool,
    notify: Notify,
}

/// Why [`Slots::admit`] turned a connection away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllBusy;

impl std::fmt::Display for AllBusy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("every connection slot is serving a request")
    }
}

impl std::error::Error for AllBusy {}

impl Slots {
    /// Up to `capacity` live connections (at least one).
    pub fn new(capacity: usize) -> Self {
        Slots { shared: Arc::new(Shared { capacity: capacity.max(1), state: Mutex::new(State::default()) }) }
    }

    /// A slot for a new connection (idle until its first request), evicting
    /// the longest-idle connection when all are taken; [`AllBusy`] when every
    /// live connection is in the middle of a request.
    pub fn admit(&self) -> Result<Slot, AllBusy> {
        let mut state = self.shared.state.lock();
        if state.live >= self.shared.capacity {
            let Some((_, victim)) = state.idle.pop_first() else { return Err(AllBusy) };
            victim.done.store(true, Ordering::Release);
            // notify_one keeps a permit, so an eviction is not lost if the
            // connection is not awaiting `evicted` at this instant.
            victim.notify.notify_one();
            state.live -= 1;
        }
        state.live += 1;
        state.tick += 1;
        let id = state.tick;
        let eviction = Arc::new(Eviction::default());
        let key = (id, id);
        state.idle.insert(key, eviction.clone());
        Ok(Slot { shared: self.shared.clone(), id, idle_key: Mutex::new(Some(key)), eviction })
    }

    /// Connections holding a slot now.
    pub fn live(&self) -> usize {
        self.shared.state.lock().live
    }

    /// The most connections held at once.
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }
}

/// One connection's slot; dropping it frees the slot.
pub struct Slot {
    shared: Arc<Shared>,
    id: u64,
    /// The key under which this slot sits in the idle map, when idle.
    idle_key: Mutex<Option<(u64, u64)>>,
    eviction: Arc<Eviction>,
}

impl Slot {
    /// A request is being served: this connection cannot be evicted.
    pub fn busy(&self) {
        let mut key = self.idle_key.lock();
        if let Some(k) = key.take() {
            self.shared.state.lock().idle.remove(&k);
        }
    }

    /// The connection waits for its next request: it may be evicted.
    pub fn idle(&self) {
        let mut key = self.idle_key.lock();
        let mut state = self.shared.state.lock();
        // Checked under the state lock: eviction happens under it, and an
        // evicted slot must never rejoin the idle set (its place is given back).
        if self.is_evicted() {
            return;
        }
        if let Some(k) = key.take() {
            state.idle.remove(&k);
        }
        state.tick += 1;
        let k = (state.tick, self.id);
        state.idle.insert(k, self.eviction.clone());
        *key = Some(k);
    }

    /// Whether a newer connection took this one's place.
    pub fn is_evicted(&self) -> bool {
        self.eviction.done.load(Ordering::Acquire)
    }

    /// Resolves once this connection has been evicted (never, while it stays).
    pub async fn evicted(&self) {
        while !self.is_evicted() {
            self.eviction.notify.notified().await;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let key = self.idle_key.get_mut().take();
        let mut state = self.shared.state.lock();
        if let Some(k) = key {
            state.idle.remove(&k);
        }
        // An evicted slot was already given back when it was evicted.
        if !self.eviction.done.load(Ordering::Acquire) {
            state.live -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_full_set_evicts_the_connection_idle_the_longest() {
        let slots = Slots::new(3);
        let a = slots.admit().unwrap();
        let b = slots.admit().unwrap();
        let c = slots.admit().unwrap();
        // a served a request and went idle again: now b is the oldest idle.
        a.busy();
        a.idle();
        let d = slots.admit().unwrap();
        assert!(b.is_evicted());
        assert!(!a.is_evicted() && !c.is_evicted() && !d.is_evicted());
        assert_eq!(slots.live(), 3);
        drop(b);
        assert_eq!(slots.live(), 3, "an evicted slot is not given back twice");
        let _e = slots.admit().unwrap();
        assert!(c.is_evicted(), "c was the oldest idle next");
    }

    #[test]
    fn busy_connections_are_never_evicted() {
        let slots = Slots::new(2);
        let a = slots.admit().unwrap();
        let b = slots.admit().unwrap();
        a.busy();
        b.busy();
        assert_eq!(slots.admit().err(), Some(AllBusy));
        b.idle();
        let _c = slots.admit().unwrap();
        assert!(b.is_evicted() && !a.is_evicted());
        assert_eq!(slots.live(), 2);
    }

    #[test]
    fn dropping_slots_frees_them() {
        let slots = Slots::new(2);
        let a = slots.admit().unwrap();
        let b = slots.admit().unwrap();
        drop(a);
        assert_eq!(slots.live(), 1);
        let _c = slots.admit().unwrap();
        assert!(!b.is_evicted());
        assert_eq!(slots.live(), 2);
    }

    #[test]
    fn an_evicted_idle_slot_does_not_rejoin_the_idle_set() {
        let slots = Slots::new(1);
        let a = slots.admit().unwrap();
        let _b = slots.admit().unwrap();
        assert!(a.is_evicted());
        a.idle();
        let _c = slots.admit().unwrap();
        assert_eq!(slots.live(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn evicted_wakes_the_waiting_connection() {
        let slots = Slots::new(1);
        let a = slots.admit().unwrap();
        let waiter = async { a.evicted().await };
        let evict = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            slots.admit().unwrap()
        };
        let ((), _b) =
            tokio::time::timeout(Duration::from_secs(5), async { tokio::join!(waiter, evict) }).await.unwrap();
    }
}
