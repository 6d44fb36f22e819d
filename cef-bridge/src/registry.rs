//! The table of live browsers of one engine.
//!
//! CEF calls back with its own integer browser ids (and, for raw vtable
//! callbacks, nothing else), so callbacks find our state through this table.
//! The engine owns it (inside its context); nothing here knows of CEF.

use crate::browser::BrowserShared;
use crate::events::BrowserId;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Default)]
struct Table {
    by_id: HashMap<BrowserId, Arc<BrowserShared>>,
    by_cef: HashMap<i32, BrowserId>,
}

/// Live browsers by our id and by CEF's, and the id counter.
pub(crate) struct Registry {
    table: Mutex<Table>,
    next_id: AtomicU64,
}

impl Default for Registry {
    fn default() -> Self {
        Self { table: Mutex::default(), next_id: AtomicU64::new(1) }
    }
}

impl Registry {
    /// A fresh browser id.
    pub(crate) fn next_id(&self) -> BrowserId {
        BrowserId(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Adds a browser that CEF has not created yet.
    pub(crate) fn insert(&self, shared: Arc<BrowserShared>) {
        self.table.lock().by_id.insert(shared.id, shared);
    }

    /// Binds CEF's integer id to ours once `on_after_created` reports it.
    pub(crate) fn bind_cef_id(&self, id: BrowserId, cef_id: i32) {
        let mut t = self.table.lock();
        t.by_cef.insert(cef_id, id);
        if let Some(s) = t.by_id.get(&id) {
            *s.cef_id.lock() = Some(cef_id);
        }
    }

    /// Our state for a browser id.
    pub(crate) fn get(&self, id: BrowserId) -> Option<Arc<BrowserShared>> {
        self.table.lock().by_id.get(&id).cloned()
    }

    /// Our state for CEF's integer id.
    pub(crate) fn by_cef(&self, cef_id: i32) -> Option<Arc<BrowserShared>> {
        let t = self.table.lock();
        t.by_cef.get(&cef_id).and_then(|id| t.by_id.get(id)).cloned()
    }

    /// Forgets a closed browser.
    pub(crate) fn remove(&self, id: BrowserId) -> Option<Arc<BrowserShared>> {
        let mut t = self.table.lock();
        let s = t.by_id.remove(&id)?;
        if let Some(c) = *s.cef_id.lock() {
            t.by_cef.remove(&c);
        }
        Some(s)
    }

    /// Every live browser.
    pub(crate) fn all(&self) -> Vec<Arc<BrowserShared>> {
        self.table.lock().by_id.values().cloned().collect()
    }

    /// True when no browser is live.
    pub(crate) fn is_empty(&self) -> bool {
        self.table.lock().by_id.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pump::Pump;

    fn browser(r: &Registry) -> Arc<BrowserShared> {
        Arc::new(BrowserShared::new(r.next_id(), (10, 10), "about:blank", None, None, 60, Arc::new(Pump::new(None))))
    }

    #[test]
    fn browsers_are_found_by_either_id_until_removed() {
        let r = Registry::default();
        let a = browser(&r);
        let b = browser(&r);
        assert_ne!(a.id, b.id);
        r.insert(a.clone());
        r.insert(b.clone());
        assert!(r.by_cef(7).is_none(), "not created by CEF yet");
        r.bind_cef_id(a.id, 7);
        assert_eq!(*a.cef_id.lock(), Some(7));
        assert!(r.by_cef(7).is_some_and(|s| s.id == a.id));
        assert_eq!(r.all().len(), 2);
        assert!(r.remove(a.id).is_some());
        assert!(r.by_cef(7).is_none() && r.get(a.id).is_none(), "both ids forgotten");
        assert!(r.remove(a.id).is_none());
        assert!(r.get(b.id).is_some() && !r.is_empty());
    }
}
