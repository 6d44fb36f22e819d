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

use crate::cef_object::cef_object;
use crate::context_id::RequestContextId;
use crate::cross_thread::CefRef;
use crate::site_permissions::{ContextGrants, SitePermission, SiteSetting, Write};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The live isolated contexts of one engine.
#[derive(Default)]
pub(crate) struct RequestContexts {
    next: AtomicU64,
    live: Mutex<HashMap<RequestContextId, Live>>,
}

/// One live context and the site permissions granted in it.
struct Live {
    context: CefRef<cef::RequestContext>,
    grants: ContextGrants,
}

impl RequestContexts {
    /// Creates an in-memory context (on CEF's UI thread); `None` when CEF refuses.
    pub(crate) fn create(&self) -> Option<RequestContextId> {
        let settings = cef::RequestContextSettings::default();
        let mut handler = cef::RequestContextHandler::new(IsolatedContextHandler::create());
        let context = cef::request_context_create_context(Some(&settings), Some(&mut handler))?;
        let id = RequestContextId::from_raw(self.next.fetch_add(1, Ordering::Relaxed) + 1);
        self.live.lock().insert(id, Live { context: CefRef(context), grants: ContextGrants::default() });
        Some(id)
    }

    /// The context behind `id`, for a browser to be created in.
    pub(crate) fn get(&self, id: RequestContextId) -> Option<cef::RequestContext> {
        self.live.lock().get(&id).map(|l| l.context.0.clone())
    }

    /// Sets `permissions` of `site` (`None`: every site) in context `id`;
    /// `loaded` are the (frame, top) sites its pages show now. False when
    /// `id` is not live. On CEF's UI thread.
    pub(crate) fn set_permissions(
        &self,
        id: RequestContextId,
        site: Option<&str>,
        permissions: &[SitePermission],
        setting: SiteSetting,
        loaded: &[(String, String)],
    ) -> bool {
        self.write_with(id, |g| g.set(site, permissions, setting, loaded))
    }

    /// Puts every permission set in context `id` back to Chromium's default. False when `id` is not live.
    pub(crate) fn reset_permissions(&self, id: RequestContextId) -> bool {
        self.write_with(id, ContextGrants::reset)
    }

    /// A frame of `site` loads in a page of `top` in context `id`: the grants
    /// for every site reach it before its scripts ask. On CEF's UI thread.
    pub(crate) fn frame_loading(&self, id: RequestContextId, site: &str, top: &str) {
        self.write_with(id, |g| if g.covers_every_site() { g.on_load(site, top) } else { Vec::new() });
    }

    fn write_with(&self, id: RequestContextId, f: impl FnOnce(&mut ContextGrants) -> Vec<Write>) -> bool {
        let (context, writes) = {
            let mut live = self.live.lock();
            let Some(l) = live.get_mut(&id) else { return false };
            (l.context.0.clone(), f(&mut l.grants))
        };
        // Written outside the lock: CEF may call back into the app while it writes.
        for w in writes {
            use cef::ImplRequestContext;
            context.set_content_setting(
                Some(&cef::CefStringUtf16::from(w.site.as_str())),
                Some(&cef::CefStringUtf16::from(w.top.as_str())),
                w.permission.content_type().into(),
                w.value.into(),
            );
        }
        true
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
