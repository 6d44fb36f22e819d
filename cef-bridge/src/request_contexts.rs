//! Isolated request contexts: in-memory profiles of their own (cookies,
//! storage, cache, permissions), for CDP browser contexts
//! (`Target.createBrowserContext`) that keep parallel agents apart.
//!
//! A context is created with an empty cache path, which CEF makes an
//! off-the-record profile held in memory only: nothing of it reaches the
//! disk, and it is gone once the app drops it and its last browser closes.
//! The privacy preferences of the global profile are applied to it as soon
//! as CEF has initialised it (the same [`crate::prefs`] list), so an isolated
//! page talks to no more hosts than any other.

use crate::browser::CefRef;
use crate::cef_object::cef_object;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// One isolated request context of an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestContextId(u64);

impl RequestContextId {
    /// The id numbered `n` (engines number their contexts from 1; a fake engine in tests does the same).
    pub fn from_raw(n: u64) -> Self {
        Self(n)
    }
}

impl fmt::Display for RequestContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "context{}", self.0)
    }
}

/// The live isolated contexts of one engine.
#[derive(Default)]
pub(crate) struct RequestContexts {
    next: AtomicU64,
    live: Mutex<HashMap<RequestContextId, CefRef<cef::RequestContext>>>,
}

impl RequestContexts {
    /// Creates an in-memory context (on CEF's UI thread); `None` when CEF refuses.
    pub(crate) fn create(&self) -> Option<RequestContextId> {
        let settings = cef::RequestContextSettings::default();
        let mut handler = cef::RequestContextHandler::new(IsolatedContextHandler::create());
        let context = cef::request_context_create_context(Some(&settings), Some(&mut handler))?;
        let id = RequestContextId(self.next.fetch_add(1, Ordering::Relaxed) + 1);
        self.live.lock().insert(id, CefRef(context));
        Some(id)
    }

    /// The context behind `id`, for a browser to be created in.
    pub(crate) fn get(&self, id: RequestContextId) -> Option<cef::RequestContext> {
        self.live.lock().get(&id).map(|h| h.0.clone())
    }

    /// Forgets `id` (its browsers keep their reference until they close); false when unknown.
    pub(crate) fn remove(&self, id: RequestContextId) -> bool {
        self.live.lock().remove(&id).is_some()
    }
}

cef_object!(IsolatedContextHandler, _cef_request_context_handler_t, WrapRequestContextHandler {});

impl cef::ImplRequestContextHandler for IsolatedContextHandler {
    fn get_raw(&self) -> *mut cef::sys::_cef_request_context_handler_t {
        self.object.cast()
    }

    fn on_request_context_initialized(&self, request_context: Option<&mut impl cef::ImplRequestContext>) {
        if let Some(context) = request_context {
            crate::prefs::apply_to_profile(context);
        }
    }
}
