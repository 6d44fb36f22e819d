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
//! through `handlers`; the cef-rs 132.3.2 defects are worked around in
//! `defects` and, for reading CEF strings, in the leaf `cef_string` (which
//! `defects` re-exports).
//!
//! Modules and what each imports of the crate (no circles: module-graph's
//! workspace test holds this table to the code; the leaves import nothing of
//! it):
//!
//! ```text
//! engine    → browser, context, context_id, downloads, events, glib_events, handlers, host,
//!             site_permissions, stderr, switches, url_policy
//! handlers  → browser, cef_object, cef_string, context, context_menu, cross_thread, defects,
//!             downloads, events, file_chooser, popups, prefs, site_permissions, url_policy
//! context   → browser, context_id, downloads, events, host, pump, registry, request_contexts
//! registry  → browser, events          (the table of live browsers)
//! defects   → browser, cef_string, context_menu, file_chooser  (browser's constants only)
//! request_contexts → cef_object, context_id, cross_thread, prefs, site_permissions
//! browser   → context_id, context_menu, cross_thread, devtools, events, file_chooser, input,
//!             pump, ui_thread, url_policy
//! devtools  → pump                     (a channel holds its engine's Arc<Pump>)
//! pump      → host                     (schedule and DevTools commands in flight)
//! host      → events                   (what the app is told)
//! events    → context_menu, downloads, file_chooser  (the data events carry)
//! downloads → context_id
//! prefs     → cef_string
//! popups    → url_policy               (the pure popup decision)
//! ui_thread → cef_object
//! leaves:     cef_object, cef_string, context_id, context_menu, cross_thread, file_chooser,
//!             glib_events, input, site_permissions, stderr, switches, url_policy
//! ```
//!
//! Process-wide state: three statics, each standing for something there is
//! one of per process. `engine::STARTED`: CEF initialises once per process and
//! cannot start again, so it must outlive every [`Engine`]. `stderr::ORIGINAL`:
//! the fd 2 the process started with, copied at the first redirect of fd 2
//! (itself per process) to the Chromium log, so [`AppStderr`] reaches it from
//! anywhere. `GLIB` in `glib_events`: GLib's two main-context functions,
//! looked up in the process once (`dlsym`) or found missing. Everything else
//! belongs to one [`Engine`] and reaches CEF's callbacks through the handler
//! objects, raw vtable slots included.

mod browser;
mod cef_object;
mod cef_string;
mod context;
mod context_id;
mod context_menu;
mod cross_thread;
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
pub use context_id::RequestContextId;
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
pub use site_permissions::{SitePermission, SiteSetting};
pub use stderr::AppStderr;
pub use switches::{switches_for, DisplayMode};
pub use ui_thread::{on_ui_thread, post_to_ui, run_on_ui};
