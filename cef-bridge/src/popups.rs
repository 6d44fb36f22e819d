//! Popup policy: which `window.open`/`target=_blank` requests become browsers.
//!
//! Web sign-in flows open a popup that talks back to its opener
//! (`window.opener.postMessage`) when the person clicks "Sign in with…", so an
//! http(s) `window.open` popup from a top-level page, opened on a user gesture,
//! is allowed as an off-screen browser sharing the session; the app shows it
//! as a tab of its opener's node. A popup a script opens on its own is denied. A popup opened *by a popup* is denied
//! (no popup chains). Links asking for a new tab or window don't need an
//! opener: they are denied here and reported as `NewTabRequested`, so the app
//! can open the URL in a new tab of the opener's node. Non-web URLs are always denied.
//!
//! [`decide`] is the policy alone, a pure function; the CEF callback
//! (`handlers`) acts on its answer.

use crate::url_policy::{is_allowed_nav_url, ABOUT_BLANK};

/// What CEF is told to do with a popup request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupDecision {
    /// Create the popup as an off-screen browser.
    AllowOffscreen,
    /// Cancel it, and ask the app to open the URL as an ordinary browser (a
    /// link asking for a new tab or window).
    OpenAsTab,
    /// Cancel it.
    Deny(PopupDenial),
}

/// Why a popup was denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupDenial {
    /// The opener is not a browser of ours.
    UnknownOpener,
    /// The URL is refused by the URL policy (or is `about:blank` outside a `window.open`).
    RefusedUrl,
    /// The opener is itself a popup.
    Nested,
    /// A script opened it without a user gesture.
    NoGesture,
}

/// The browser a popup request comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opener {
    /// Not one of ours (or already gone).
    Unknown,
    /// A top-level browser.
    Page,
    /// A browser that is itself a popup.
    Popup,
}

/// A popup request as CEF's `on_before_popup` reports it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PopupRequest<'a> {
    /// Who asks.
    pub(crate) opener: Opener,
    /// The target URL.
    pub(crate) url: &'a str,
    /// True for a `window.open` popup (`CEF_WOD_NEW_POPUP`), false for a new tab or window.
    pub(crate) as_popup: bool,
    /// True when opened on a user gesture (a click, a key press).
    pub(crate) user_gesture: bool,
}

/// Decides a popup request.
pub(crate) fn decide(request: &PopupRequest<'_>) -> PopupDecision {
    let PopupRequest { opener, url, as_popup, user_gesture } = *request;
    if opener == Opener::Unknown {
        return PopupDecision::Deny(PopupDenial::UnknownOpener);
    }
    if !is_allowed_nav_url(url) || url == ABOUT_BLANK && !as_popup {
        return PopupDecision::Deny(PopupDenial::RefusedUrl);
    }
    if opener == Opener::Popup {
        return PopupDecision::Deny(PopupDenial::Nested);
    }
    if !as_popup {
        return PopupDecision::OpenAsTab;
    }
    if !user_gesture {
        return PopupDecision::Deny(PopupDenial::NoGesture);
    }
    PopupDecision::AllowOffscreen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide_for(opener: Opener, url: &str, as_popup: bool, user_gesture: bool) -> PopupDecision {
        decide(&PopupRequest { opener, url, as_popup, user_gesture })
    }

    const SIGN_IN: &str = "https://accounts.example.com/signin";

    #[test]
    fn a_window_open_on_a_gesture_from_a_page_is_allowed() {
        assert_eq!(decide_for(Opener::Page, SIGN_IN, true, true), PopupDecision::AllowOffscreen);
        assert_eq!(decide_for(Opener::Page, "http://127.0.0.1:8080/", true, true), PopupDecision::AllowOffscreen);
        // An opener may fill an about:blank popup itself.
        assert_eq!(decide_for(Opener::Page, ABOUT_BLANK, true, true), PopupDecision::AllowOffscreen);
    }

    #[test]
    fn a_window_open_without_a_gesture_is_denied() {
        assert_eq!(decide_for(Opener::Page, SIGN_IN, true, false), PopupDecision::Deny(PopupDenial::NoGesture));
    }

    #[test]
    fn new_tab_links_open_as_tabs_gesture_or_not() {
        for gesture in [true, false] {
            assert_eq!(decide_for(Opener::Page, SIGN_IN, false, gesture), PopupDecision::OpenAsTab);
        }
    }

    #[test]
    fn refused_urls_are_denied_whatever_else() {
        for url in ["file:///etc/passwd", "javascript:alert(1)", "chrome://settings", "data:text/html,x", ""] {
            for (as_popup, gesture) in [(true, true), (false, true), (true, false)] {
                assert_eq!(
                    decide_for(Opener::Page, url, as_popup, gesture),
                    PopupDecision::Deny(PopupDenial::RefusedUrl),
                    "{url}"
                );
            }
        }
        // about:blank is for window.open only: as a new tab there is nothing to show.
        assert_eq!(decide_for(Opener::Page, ABOUT_BLANK, false, true), PopupDecision::Deny(PopupDenial::RefusedUrl));
    }

    #[test]
    fn popups_of_popups_are_denied() {
        assert_eq!(decide_for(Opener::Popup, SIGN_IN, true, true), PopupDecision::Deny(PopupDenial::Nested));
        assert_eq!(decide_for(Opener::Popup, SIGN_IN, false, true), PopupDecision::Deny(PopupDenial::Nested));
        // The URL is judged first.
        assert_eq!(decide_for(Opener::Popup, "file:///x", true, true), PopupDecision::Deny(PopupDenial::RefusedUrl));
    }

    #[test]
    fn an_unknown_opener_is_denied_before_anything_else() {
        assert_eq!(decide_for(Opener::Unknown, SIGN_IN, true, true), PopupDecision::Deny(PopupDenial::UnknownOpener));
        assert_eq!(
            decide_for(Opener::Unknown, "file:///x", false, false),
            PopupDecision::Deny(PopupDenial::UnknownOpener)
        );
    }
}
