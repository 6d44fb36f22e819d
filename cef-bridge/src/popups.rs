//! Popup policy: which `window.open`/`target=_blank` requests become browsers.
//!
//! Web sign-in flows open a popup that talks back to its opener
//! (`window.opener.postMessage`) when the person clicks "Sign in with…", so an
//! http(s) `window.open` popup from a top-level page, opened on a user gesture,
//! is allowed as an off-screen browser sharing the session; the app turns it
//! into a new browser node. A popup a script opens on its own is denied. A popup opened *by a popup* is denied
//! (no popup chains). Links asking for a new tab or window don't need an
//! opener: they are denied here and reported as `NewTabRequested`, so the app
//! can open an ordinary browser node. Non-web URLs are always denied.

use crate::events::BrowserEvent;
use crate::registry;
use crate::url_policy::is_allowed_nav_url;
use parking_lot::Mutex;
use std::collections::VecDeque;

/// What CEF is told to do with a popup request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupDecision {
    /// Create the popup as an off-screen browser.
    AllowOffscreen,
    /// Cancel it.
    Deny,
}

/// Openers whose allowed popups have not reached `on_after_created` yet (CEF ids).
static PENDING: Mutex<VecDeque<i32>> = Mutex::new(VecDeque::new());

/// Decides a popup request from the browser with CEF id `opener`.
pub(crate) fn decide(opener: Option<i32>, url: &str, as_popup: bool, user_gesture: bool) -> PopupDecision {
    let Some(opener_state) = opener.and_then(registry::by_cef) else {
        return PopupDecision::Deny;
    };
    if !is_allowed_nav_url(url) || url == crate::url_policy::ABOUT_BLANK && !as_popup {
        tracing::info!(opener = %opener_state.id, "popup to a refused URL denied");
        return PopupDecision::Deny;
    }
    if opener_state.opener.is_some() {
        tracing::info!(opener = %opener_state.id, "nested popup denied");
        return PopupDecision::Deny;
    }
    if !as_popup {
        registry::emit(BrowserEvent::NewTabRequested { opener: opener_state.id, url: url.to_string() });
        return PopupDecision::Deny;
    }
    if !user_gesture {
        tracing::info!(opener = %opener_state.id, "popup without a user gesture denied");
        return PopupDecision::Deny;
    }
    if let Some(c) = opener {
        PENDING.lock().push_back(c);
    }
    PopupDecision::AllowOffscreen
}

/// The opener of the next popup being created (FIFO; popups are created in order).
pub(crate) fn take_pending_opener() -> Option<i32> {
    PENDING.lock().pop_front()
}
