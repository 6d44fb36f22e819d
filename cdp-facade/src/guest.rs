//! The boundary with the app: how the facade sees browser nodes ("guests").
//!
//! The app implements [`Guests`] and [`GuestChannel`] with cef-bridge's
//! DevTools channels; tests implement them with a fake. Nothing here knows
//! about CEF or the canvas.

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::Deserialize;
use tokio::sync::mpsc::UnboundedSender;

/// Stable id of one live browser node tab, e.g. `"node1::tab1"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GuestId(String);

impl GuestId {
    /// Wraps the app's id string.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as the app spelled it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GuestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for GuestId {
    fn from(id: &str) -> Self {
        Self::new(id)
    }
}

/// Id of an isolated browser context the app made for a client
/// (`Target.createBrowserContext`): the `browserContextId` clients see.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextId(String);

impl ContextId {
    /// Wraps the app's id string.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as the app spelled it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A failure reported by the app across the boundary (its text is shown to clients, so it must carry no secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GuestError(String);

impl GuestError {
    /// Wraps a human-readable reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self(reason.into())
    }
}

/// What `Browser.getVersion` and `/json/version` report; the app fills it from CEF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrowserVersion {
    /// Product string, e.g. `Chrome/131.0.6778.205` (Playwright reads the version after `/`).
    pub product: String,
    /// Chromium/CEF revision, e.g. `@<commit>`; empty when unknown.
    pub revision: String,
    /// The user agent the guests send.
    pub user_agent: String,
    /// V8 version, e.g. `13.1.201.22`; empty when unknown (then omitted from `/json/version`).
    pub js_version: String,
}

/// The page that opened a guest's page: its target info's `openerId` and `canAccessOpener`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestOpener {
    /// The opener.
    pub guest: GuestId,
    /// Whether the page holds `window.opener` (a popup; a link opened as a tab does not).
    pub can_access: bool,
}

/// Where a guest's node is and how large its page is, in CSS pixels (`Browser.Bounds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowBounds {
    /// The node's left edge on the canvas.
    pub left: i32,
    /// The node's top edge on the canvas.
    pub top: i32,
    /// The page's width.
    pub width: u32,
    /// The page's height.
    pub height: u32,
}

/// A permission as CDP's `Browser.PermissionType` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // each is the CDP name of a Permissions API permission
pub enum PermissionType {
    Ar,
    AudioCapture,
    AutomaticFullscreen,
    BackgroundFetch,
    BackgroundSync,
    CameraPanTiltZoom,
    CapturedSurfaceControl,
    ClipboardReadWrite,
    ClipboardSanitizedWrite,
    DisplayCapture,
    DurableStorage,
    Geolocation,
    HandTracking,
    IdleDetection,
    KeyboardLock,
    LocalFonts,
    Midi,
    MidiSysex,
    Nfc,
    Notifications,
    PaymentHandler,
    PeriodicBackgroundSync,
    PointerLock,
    ProtectedMediaIdentifier,
    Sensors,
    SpeakerSelection,
    StorageAccess,
    TopLevelStorageAccess,
    VideoCapture,
    Vr,
    WakeLockScreen,
    WakeLockSystem,
    WebAppInstallation,
    WebPrinting,
    WindowManagement,
}

/// What a site is told when it asks (`Browser.PermissionSetting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionSetting {
    /// Granted without asking.
    Granted,
    /// Refused without asking.
    Denied,
    /// Asked for.
    Prompt,
}

/// Where the app saves downloads, as a CDP client asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadBehavior {
    /// The app's own default: its downloads folder, the suggested name.
    Default,
    /// Into this absolute folder under the suggested name.
    Allow(PathBuf),
    /// Into this absolute folder, each file named by its download's guid.
    AllowAndName(PathBuf),
    /// Every download refused.
    Deny,
}

/// The app's registry of browser nodes, as the facade and the agent server need it.
///
/// `list`, `channel`, `normalize_url`, `version`, `contexts` and
/// `context_of` are called from the facade's async thread and must return
/// quickly (no waiting on the main thread). `open`, `close`, `activate`,
/// `create_context` and `dispose_context` may block; they run on a blocking
/// worker.
pub trait Guests: Send + Sync + 'static {
    /// Live browser nodes, in a stable order (the first is used for profile-wide commands such as cookies).
    fn list(&self) -> Vec<GuestId>;
    /// The DevTools channel of a live guest; `None` once it is gone. Must return the same `Arc` for the same browser.
    fn channel(&self, id: &GuestId) -> Option<Arc<dyn GuestChannel>>;
    /// Opens a visible browser node at an already-normalized URL, in the
    /// isolated `context` when given (else the person's profile); returns once
    /// the browser exists and `list`/`channel` know it.
    fn open(&self, url: &str, context: Option<&ContextId>) -> Result<GuestId, GuestError>;
    /// Creates an isolated browser context: an in-memory profile of its own
    /// (cookies, storage, cache), empty; may block.
    fn create_context(&self) -> Result<ContextId, GuestError>;
    /// Closes every page of an isolated context and ends it; returns once
    /// they are gone from `list`; may block. An error for an unknown context.
    fn dispose_context(&self, id: &ContextId) -> Result<(), GuestError>;
    /// The live isolated contexts, in a stable order.
    fn contexts(&self) -> Vec<ContextId>;
    /// The isolated context a guest's page lives in; `None`: the person's profile.
    fn context_of(&self, id: &GuestId) -> Option<ContextId>;
    /// The live page that opened this guest's page (`window.open`, a
    /// `target=_blank` link), if any; must return quickly.
    fn opener(&self, id: &GuestId) -> Option<GuestOpener>;
    /// Closes the browser node behind `id` (the node goes away from the canvas).
    fn close(&self, id: &GuestId) -> Result<(), GuestError>;
    /// Focuses the node and pans the canvas to it; may block.
    fn activate(&self, id: &GuestId);
    /// Gives the guest's page keyboard focus (`document.hasFocus()`), as
    /// Chromium gives a new foreground tab, without moving the app's own focus
    /// (where the person's keys go); may block.
    fn focus_page(&self, id: &GuestId);
    /// The client needs the guest's page painted now (`Page.captureScreenshot`,
    /// a screencast and its frame acks): a page hidden as a background tab is
    /// shown for a while, since a hidden page paints no frame. Must return quickly.
    fn paint_for_client(&self, id: &GuestId);
    /// A client turned focus emulation on or off in the guest
    /// (`Emulation.setFocusEmulationEnabled`): while it is on, the page stays
    /// visible as Chromium keeps it (Playwright turns it on for every page).
    /// Called once per client and guest for each change, and with `false` when
    /// the client leaves with it on. Must return quickly.
    fn emulate_focus(&self, id: &GuestId, on: bool);
    /// The app's URL policy: the URL to open, or why it is refused.
    fn normalize_url(&self, raw: &str) -> Result<String, GuestError>;
    /// Product, revision, user agent and V8 version of the embedded Chromium.
    fn version(&self) -> BrowserVersion;
    /// Answers the JavaScript dialog the guest's page is blocked on
    /// (`Page.handleJavaScriptDialog`): OK or Cancel, and a prompt's text
    /// (its default when `None`). Must return quickly; an error when no dialog
    /// is showing ("No dialog is showing", as Chromium says).
    fn answer_dialog(&self, id: &GuestId, accept: bool, prompt_text: Option<&str>) -> Result<(), GuestError>;
    /// The guest's node as a window; `None` once it is gone. Must return quickly.
    fn window_bounds(&self, id: &GuestId) -> Option<WindowBounds>;
    /// Resizes the guest's node (through the app's model, like any resize) so
    /// its page is `width` x `height` CSS pixels; may block.
    fn resize_window(&self, id: &GuestId, width: u32, height: u32) -> Result<(), GuestError>;
    /// Sets `permissions` of `origin` (`None`: every origin) to `setting` for
    /// the pages of isolated `context` (`Browser.grantPermissions`,
    /// `Browser.setPermission`); may block. An error for an unknown context.
    fn set_permissions(
        &self,
        context: &ContextId,
        origin: Option<&str>,
        permissions: &[PermissionType],
        setting: PermissionSetting,
    ) -> Result<(), GuestError>;
    /// Puts every permission set in isolated `context` back to the default
    /// (`Browser.resetPermissions`); may block.
    fn reset_permissions(&self, context: &ContextId) -> Result<(), GuestError>;
    /// Sets where the next downloads of the pages of `context` (`None`: the
    /// person's profile) are saved (`Browser.setDownloadBehavior`); must
    /// return quickly. The app reports downloads back through a [`crate::DownloadNotifier`].
    fn set_download_behavior(&self, context: Option<&ContextId>, behavior: DownloadBehavior) -> Result<(), GuestError>;
}

/// One guest's DevTools channel (a CEF browser host's DevTools message API).
///
/// Contract:
/// - `send` takes one complete CDP message as JSON text: `{"id", "method",
///   "params"?, "sessionId"?}`. The facade only uses ids in
///   [`crate::FACADE_ID_RANGE`]; other users of the same channel (the app's
///   tool runtime) must use ids below it. `sessionId` addresses a child
///   session (iframe, worker) the guest announced; without it the message
///   goes to the page itself.
/// - Every raw message the guest emits (replies `{id, result|error,
///   sessionId?}` and events `{method, params, sessionId?}`, whoever caused
///   them) is handed to every subscribed [`GuestSink`], in order. Delivery
///   may happen re-entrantly inside `send`.
/// - `crashed` is true while the guest's renderer is dead.
pub trait GuestChannel: Send + Sync {
    /// Sends one CDP message (JSON text) to the guest.
    fn send(&self, message: &str) -> Result<(), GuestError>;
    /// Adds a sink that receives every message from this guest until [`GuestSink::deliver`] returns false.
    fn subscribe(&self, sink: GuestSink);
    /// Whether the guest's renderer has crashed (polled every 500 ms by the facade).
    fn crashed(&self) -> bool;
}

/// What a sink carries from the app to the facade.
#[derive(Debug)]
pub(crate) enum SinkEvent {
    /// One raw CDP message (JSON text) from the guest.
    Message(String),
    /// The renderer crashed or the browser went away.
    Gone,
}

/// The receiving end the facade hands to [`GuestChannel::subscribe`].
///
/// Cheap and non-blocking to call from any thread (CEF's UI thread included).
/// Once the facade is no longer interested, every call returns false and the
/// app should drop the sink.
#[derive(Debug)]
pub struct GuestSink {
    tag: u64,
    tx: UnboundedSender<(u64, SinkEvent)>,
    active: Arc<AtomicBool>,
}

impl GuestSink {
    pub(crate) fn new(tag: u64, tx: UnboundedSender<(u64, SinkEvent)>, active: Arc<AtomicBool>) -> Self {
        Self { tag, tx, active }
    }

    /// Hands one raw message from the guest to the facade; false means "drop this sink".
    pub fn deliver(&self, message: String) -> bool {
        self.push(SinkEvent::Message(message))
    }

    /// Tells the facade the renderer crashed or the browser is gone (make `crashed()` true first); false means "drop this sink".
    pub fn renderer_gone(&self) -> bool {
        self.push(SinkEvent::Gone)
    }

    /// Whether the facade has dropped this subscription (the app may prune it).
    pub fn is_closed(&self) -> bool {
        !self.active.load(Ordering::Acquire) || self.tx.is_closed()
    }

    fn push(&self, event: SinkEvent) -> bool {
        if !self.active.load(Ordering::Acquire) {
            return false;
        }
        self.tx.send((self.tag, event)).is_ok()
    }
}

/// Identity of a channel object, to notice a guest id reused for a new browser.
pub(crate) fn channel_key(channel: &Arc<dyn GuestChannel>) -> usize {
    Arc::as_ptr(channel) as *const () as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_reports_closed_after_deactivation_or_receiver_drop() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let active = Arc::new(AtomicBool::new(true));
        let sink = GuestSink::new(7, tx, active.clone());
        assert!(sink.deliver("{}".into()));
        assert!(matches!(rx.try_recv(), Ok((7, SinkEvent::Message(m))) if m == "{}"));
        active.store(false, Ordering::Release);
        assert!(!sink.deliver("{}".into()));
        assert!(sink.is_closed());

        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let sink = GuestSink::new(1, tx, Arc::new(AtomicBool::new(true)));
        drop(rx);
        assert!(!sink.renderer_gone());
        assert!(sink.is_closed());
    }
}
