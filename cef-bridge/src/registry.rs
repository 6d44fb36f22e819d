//! The process-wide table of live browsers.
//!
//! CEF calls back with its own integer browser ids (and, for raw vtable
//! callbacks, nothing else), so callbacks find our state through this table.
//! CEF runs once per process, hence a global.

use crate::browser::BrowserShared;
use crate::events::{BrowserEvent, BrowserId};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

#[derive(Default)]
struct Table {
    by_id: HashMap<BrowserId, Arc<BrowserShared>>,
    by_cef: HashMap<i32, BrowserId>,
}

static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
type EventFn = Box<dyn Fn(BrowserEvent) + Send + Sync>;
static EVENTS: OnceLock<EventFn> = OnceLock::new();

fn table() -> &'static Mutex<Table> {
    TABLE.get_or_init(Default::default)
}

/// Where browser events go (set once by the engine).
pub(crate) fn set_event_sink(f: EventFn) {
    let _ = EVENTS.set(f);
}

/// Reports an event to the app.
pub(crate) fn emit(event: BrowserEvent) {
    if let Some(f) = EVENTS.get() {
        f(event);
    }
}

/// A fresh browser id.
pub(crate) fn next_id() -> BrowserId {
    BrowserId(NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// Adds a browser that CEF has not created yet.
pub(crate) fn insert(shared: Arc<BrowserShared>) {
    table().lock().by_id.insert(shared.id, shared);
}

/// Binds CEF's integer id to ours once `on_after_created` reports it.
pub(crate) fn bind_cef_id(id: BrowserId, cef_id: i32) {
    let mut t = table().lock();
    t.by_cef.insert(cef_id, id);
    if let Some(s) = t.by_id.get(&id) {
        *s.cef_id.lock() = Some(cef_id);
    }
}

/// Our state for a browser id.
pub(crate) fn get(id: BrowserId) -> Option<Arc<BrowserShared>> {
    table().lock().by_id.get(&id).cloned()
}

/// Our state for CEF's integer id.
pub(crate) fn by_cef(cef_id: i32) -> Option<Arc<BrowserShared>> {
    let t = table().lock();
    t.by_cef.get(&cef_id).and_then(|id| t.by_id.get(id)).cloned()
}

/// Forgets a closed browser.
pub(crate) fn remove(id: BrowserId) -> Option<Arc<BrowserShared>> {
    let mut t = table().lock();
    let s = t.by_id.remove(&id)?;
    if let Some(c) = *s.cef_id.lock() {
        t.by_cef.remove(&c);
    }
    Some(s)
}

/// Every live browser.
pub(crate) fn all() -> Vec<Arc<BrowserShared>> {
    table().lock().by_id.values().cloned().collect()
}

/// The view size of a CEF browser (for the raw `get_view_rect`).
pub(crate) fn view_size(cef_id: i32) -> Option<(i32, i32)> {
    by_cef(cef_id).map(|s| *s.size.lock())
}
