//! The state of one running engine that CEF's callbacks reach: every handler
//! object holds an `Arc` of it, so none of it lives in process-wide statics.

use crate::browser::BrowserShared;
use crate::context_id::RequestContextId;
use crate::downloads::Downloads;
use crate::events::{BrowserEvent, BrowserId};
use crate::host::EngineHost;
use crate::pump::Pump;
use crate::registry::Registry;
use crate::request_contexts::RequestContexts;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the engine shares with its CEF handlers.
pub(crate) struct EngineContext {
    /// Live browsers.
    pub(crate) registry: Registry,
    /// The pump schedule (also held by every DevTools channel).
    pub(crate) pump: Arc<Pump>,
    /// Downloads folder and ended downloads.
    pub(crate) downloads: Downloads,
    /// Isolated request contexts (CDP browser contexts).
    pub(crate) request_contexts: RequestContexts,
    /// Chromium switches added to the browser process's command line.
    pub(crate) switches: Vec<(String, Option<String>)>,
    host: Arc<dyn EngineHost>,
    /// Set by `on_context_initialized`.
    ready: AtomicBool,
    /// Openers whose allowed popups have not reached `on_after_created` yet (CEF ids).
    pending_popups: Mutex<VecDeque<i32>>,
}

impl EngineContext {
    /// The context of an engine serving `host`.
    pub(crate) fn new(
        host: Arc<dyn EngineHost>,
        switches: Vec<(String, Option<String>)>,
        downloads: Downloads,
    ) -> Self {
        Self {
            registry: Registry::default(),
            pump: Arc::new(Pump::new(Some(host.clone()))),
            downloads,
            request_contexts: RequestContexts::default(),
            switches,
            host,
            ready: AtomicBool::new(false),
            pending_popups: Mutex::new(VecDeque::new()),
        }
    }

    /// Reports an event to the app.
    pub(crate) fn emit(&self, event: BrowserEvent) {
        self.host.browser_event(event);
    }

    /// State for a new browser, its DevTools channel tied to this engine's
    /// pump, registered so CEF's callbacks find it (every browser is created
    /// here, and every one must be registered before CEF reports on it).
    pub(crate) fn new_browser(
        &self,
        size: (i32, i32),
        url: &str,
        opener: Option<BrowserId>,
        context: Option<RequestContextId>,
        frame_rate: u32,
    ) -> Arc<BrowserShared> {
        let id = self.registry.next_id();
        let shared = Arc::new(BrowserShared::new(id, size, url, opener, context, frame_rate, self.pump.clone()));
        self.registry.insert(shared.clone());
        shared
    }

    /// CEF finished initialising.
    pub(crate) fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// True once CEF finished initialising.
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// An allowed popup of the browser with CEF id `opener` is on its way.
    pub(crate) fn popup_allowed(&self, opener: i32) {
        self.pending_popups.lock().push_back(opener);
    }

    /// The opener of the next popup being created (FIFO; popups are created in order).
    pub(crate) fn take_pending_opener(&self) -> Option<i32> {
        self.pending_popups.lock().pop_front()
    }
}
