//! cef-bridge: real Chromium (CEF 131 through cef-rs 132.3.2) rendering
//! off-screen, driven through CEF's DevTools message API.
//!
//! It owns CEF start-up and shutdown on the main thread (external message pump),
//! the helper-subprocess entry, off-screen browsers (frames as BGRA with dirty
//! rectangles, input forwarding, page events), a DevTools channel per browser
//! (send from any thread, replies and events back), and the navigation, popup,
//! permission and download policy. It must not know about the canvas, nodes,
//! HTTP or CDP clients: the app maps browsers to nodes, and the tool server and
//! CDP facade reach pages only through [`DevToolsChannel`]. CEF callbacks enter
//! through `handlers`; the two cef-rs 132.3.2 defects are worked around in
//! `defects` alone.
//!
//! Modules and what each imports of the crate (no loops; the leaves import
//! nothing of it):
//!
//! ```text
//! engine    → handlers, context, downloads, browser, host, url_policy, stderr, switches
//! handlers  → context, defects, popups, prefs, browser, cef_object, events, url_policy
//! context   → registry, downloads, pump, browser, host, events
//! registry  → browser, events          (the table of live browsers)
//! defects   → browser                  (constants only)
//! browser   → devtools, pump, ui_thread, input, events, url_policy
//! devtools  → pump                     (a channel holds its engine's Arc<Pump>)
//! pump      → host → events            (schedule and DevTools commands in flight)
//! popups    → url_policy               (the pure popup decision)
//! ui_thread → cef_object
//! request_contexts → browser, cef_object, prefs, site_permissions
//! leaves:     events, input, url_policy, downloads, cef_object, prefs, stderr, switches, site_permissions
//! ```
//!
//! Process-wide state: only `engine::STARTED` (CEF initialises once per
//! process). Everything else belongs to one [`Engine`] and reaches CEF's
//! callbacks through the handler objects, raw vtable slots included.

mod browser;
mod cef_object;
mod context;
mod context_menu;
pub mod defects;
pub mod devtools;
mod downloads;
mod engine;
pub mod events;
mod file_chooser;
mod glib_events;
mod handlers;
mod host;
pub mod input;
mod popups;
pub mod prefs;
mod pump;
mod registry;
mod request_contexts;
mod site_permissions;
mod stderr;
pub mod switches;
mod ui_thread;
pub mod url_policy;

pub use browser::{BrowserError, BrowserHandle, BrowserOptions, DEFAULT_FRAME_RATE, MAX_VIEW_EDGE, SCALE_RANGE};
pub use context_menu::{ContextMenu, EditState, MenuCommand, MenuEntry, MenuTarget};
pub use devtools::{
    DevToolsChannel, DevToolsError, DevToolsEvent, PendingReply, ProtocolError, RawReply, RawSender, RawSink, Reply,
    DEFAULT_CALL_TIMEOUT,
};
pub use downloads::{unique_download_path, DownloadBehavior, DownloadPolicy, DownloadState};
pub use engine::{
    helper_children, helper_processes, run_subprocess_if_child, ChromiumLog, Engine, EngineConfig, EngineError, Profile,
};
pub use events::{BrowserEvent, BrowserId, DialogKind, Frame, JsDialog, PixelRect, Termination};
pub use file_chooser::{ChooserMode, FileChooser};
pub use host::EngineHost;
pub use popups::{PopupDecision, PopupDenial};
pub use pump::{EAGER_PUMP_INTERVAL, MAX_PUMP_INTERVAL};
pub use request_contexts::RequestContextId;
pub use site_permissions::{SitePermission, SiteSetting};
pub use stderr::AppStderr;
pub use switches::{switches_for, DisplayMode};
pub use ui_thread::{on_ui_thread, post_to_ui, run_on_ui};
