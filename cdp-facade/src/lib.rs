//! cdp-facade: the opt-in localhost control plane for browser nodes, guarded
//! by one per-boot [`local_guard::Token`]. It owns the browser agent control
//! server ([`AgentServer`]: `GET /info`, `POST /open`, `browser-agent.json`) and the virtual CDP
//! browser ([`Facade`]: `/json/*` discovery plus one WebSocket client at a
//! time) that exposes every browser node as a standard `page` target so
//! unmodified Puppeteer and Playwright can drive it. It reaches browser
//! nodes only through the [`Guests`] and [`GuestChannel`] traits, which the
//! app implements with cef-bridge's DevTools channels; it must NOT know
//! about CEF, the canvas, the workspace model or a Chromium
//! remote-debugging port (none is ever opened).
//!
//! Modules and what each imports of the crate (no loops; the leaves import
//! nothing of it):
//!
//! ```text
//! agent_server  → discovery_file, error, guest, http_access, server_thread  (GET /info, POST /open)
//! facade        → client_slot, config, discovery, downloads, error, guest, http_access, ids, server_thread, shared, ws
//! ws            → client_slot, http_access, router, shared  (upgrade, token check, socket loops)
//! discovery     → guest_call, http_access, shared          (/json/*)
//! browser       → browser_methods, browser_state, guest, guest_call, protocol, router, sessions
//!                 (browser-level CDP: a second `impl Router` block)
//! window        → browser, browser_state, guest, protocol, router, sessions
//!                 (`Browser.*Window*`, `setContentsSize`: a third `impl Router` block)
//! router        → browser_methods, browser_state, dialogs, downloads, guest, guest_call, protocol, screenshot, sessions, shared
//! shared        → client_slot, config, downloads, guest, ids (state of the handlers and the client)
//! browser_state → guest, guest_call, permissions, protocol, workers  (BrowserState, Internal)
//! guest_call    → guest, ids, protocol                     (one call on a guest channel)
//! sessions      → guest                                    (the session table, DropReason)
//! dialogs       → guest                                    (announced dialogs, late answers)
//! downloads     → browser_state, guest, protocol, router  (setDownloadBehavior, download events: an `impl Router` block)
//! contexts      → browser, browser_state, guest, protocol, router, sessions
//!                 (create/dispose/getBrowserContexts, each page's context: an `impl Router` block)
//! permissions   → browser, browser_state, guest, protocol, router, guest_call
//!                 (grant/set/resetPermissions per context: an `impl Router` block)
//! workers       → browser, browser_state, guest, protocol, router
//!                 (service and shared workers as browser-level targets: an `impl Router` block)
//! server_thread → error, http_access
//! discovery_file → error
//! leaves:         browser_methods, client_slot, config, error, guest, http_access, ids, protocol, screenshot
//! ```
//!
//! `browser.rs` adds methods to `router::Router`; `router.rs` calls two of
//! them (`enqueue_root`, `browser_forget`) without importing the module, a
//! method-level tie no `use` shows; `browser.rs` likewise calls `window.rs`'s.

mod agent_server;
mod browser;
mod browser_methods;
mod browser_state;
mod client_slot;
mod config;
mod contexts;
mod dialogs;
mod discovery;
mod discovery_file;
mod downloads;
mod error;
mod facade;
mod guest;
mod guest_call;
mod http_access;
mod ids;
mod permissions;
mod protocol;
mod router;
mod screenshot;
mod server_thread;
mod sessions;
mod shared;
mod window;
mod workers;
mod ws;

pub use agent_server::{AgentServer, AgentServerConfig, DISCOVERY_FILE_NAME, MAX_OPEN_BODY_BYTES};
pub use config::{FacadeConfig, DEFAULT_MAX_MESSAGE_BYTES};
pub use downloads::{DownloadEvent, DownloadNotice, DownloadNotifier, DownloadState};
pub use error::FacadeError;
pub use facade::{Facade, GuestsChanged};
pub use guest::{
    BrowserVersion, ContextId, DownloadBehavior, GuestChannel, GuestError, GuestId, GuestOpener, GuestSink, Guests,
    PermissionSetting, PermissionType, WindowBounds,
};
pub use ids::FACADE_ID_RANGE;
pub use ws::CLOSE_UNAUTHORIZED;
