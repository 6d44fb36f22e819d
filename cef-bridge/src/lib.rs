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

mod browser;
mod cef_object;
pub mod defects;
pub mod devtools;
mod engine;
pub mod events;
mod handlers;
pub mod input;
mod popups;
mod registry;
mod ui_thread;
pub mod url_policy;

pub use browser::{BrowserError, BrowserHandle, BrowserOptions, DEFAULT_FRAME_RATE, MAX_VIEW_EDGE, SCALE_RANGE};
pub use devtools::{
    DevToolsChannel, DevToolsError, DevToolsEvent, PendingReply, ProtocolError, RawSender, RawSink, Reply,
    DEFAULT_CALL_TIMEOUT,
};
pub use engine::{
    helper_children, helper_processes, pump_interval, run_subprocess_if_child, switches_for, unique_download_path,
    ChromiumLog, DisplayMode, Engine, EngineConfig, EngineError, EngineHost, Profile, EAGER_PUMP_INTERVAL,
    MAX_PUMP_INTERVAL,
};
pub use events::{BrowserEvent, BrowserId, Frame, PixelRect, Termination};
pub use popups::PopupDecision;
pub use ui_thread::{on_ui_thread, post_to_ui, run_on_ui};
