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
//! A CDP client's connection is a `router`: it parses each message and
//! routes it. Browser-level methods go to the emulated browser
//! (`browser`: targets, windows, contexts, permissions, workers,
//! downloads), one unit that owns its state and hands back effects (messages
//! for the client, sessions to add or end, guests to subscribe to or
//! release, background jobs) which the router applies; page-session methods
//! go to the guest. Which methods are browser-level is one table
//! (`browser_methods`) both use.
//!
//! Modules and what each imports of the crate (no loops; the leaves import
//! nothing of it):
//!
//! ```text
//! agent_server    → discovery_file, error, guest, http_access, server_thread  (GET /info, POST /open)
//! facade          → browser_env, client_slot, config, discovery, downloads, error, guest, http_access,
//!                   server_thread, shared, ws
//! ws              → client_slot, http_access, router, shared  (upgrade, token check, socket loops)
//! discovery       → guest_call, http_access, shared  (/json/*)
//! router          → browser, browser_methods, dialogs, downloads, effect, guest, jobs, links, protocol,
//!                   screenshot, sessions, shared  (routes; applies the browser's effects)
//! browser         → browser_env, browser_methods, contexts, downloads, effect, guest, guest_call, jobs,
//!                   permissions, protocol, sessions, storage, target_commands, target_watch, targets,
//!                   window, workers  (EmulatedBrowser, BrowserClient: dispatch, completions, the poll)
//! target_commands → contexts, effect, guest, jobs, protocol, target_watch, targets, workers  (`Target.*`)
//! target_watch    → effect, guest, guest_call, sessions, targets  (discovery, auto-attach, page sessions)
//! workers         → effect, guest, protocol, target_watch, targets  (service and shared workers)
//! permissions     → contexts, effect, guest, jobs, protocol, targets  (grant/set/resetPermissions)
//! downloads       → browser_env, effect, guest, protocol, targets  (setDownloadBehavior, download events)
//! window          → effect, guest, jobs, protocol, targets  (`Browser.*Window*`, setContentsSize)
//! storage         → contexts, effect, protocol, targets  (`Storage.*` cookies, through a page)
//! contexts        → browser_env, effect, guest, jobs, protocol  (create/dispose/getBrowserContexts)
//! targets         → browser_env, effect, guest, guest_call, jobs, protocol  (what is known of the pages)
//! effect          → browser_env, guest, jobs, links, protocol, sessions  (Effect, Turn, ClientView)
//! jobs            → browser_env, guest, guest_call  (background work, its completions)
//! shared          → browser_env, client_slot, config, downloads  (what HTTP handlers and clients share)
//! browser_env     → guest, ids  (the guests and the ids the browser hands out)
//! guest_call      → guest, ids, protocol  (one call on a guest channel)
//! links           → guest  (a client's subscriptions to guest channels)
//! sessions        → guest  (the session table, DropReason)
//! dialogs         → guest  (announced dialogs, late answers)
//! ids             → guest
//! server_thread   → error, http_access
//! discovery_file  → error
//! leaves:           browser_methods, client_slot, config, error, guest, http_access, protocol, screenshot
//! ```

mod agent_server;
mod browser;
mod browser_env;
mod browser_methods;
mod client_slot;
mod config;
mod contexts;
mod dialogs;
mod discovery;
mod discovery_file;
mod downloads;
mod effect;
mod error;
mod facade;
#[cfg(test)]
mod fake_guests;
mod guest;
mod guest_call;
mod http_access;
mod ids;
mod jobs;
mod links;
mod permissions;
mod protocol;
mod router;
mod screenshot;
mod server_thread;
mod sessions;
mod shared;
mod storage;
mod target_commands;
mod target_watch;
mod targets;
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
