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

mod agent_server;
mod browser;
mod discovery;
mod discovery_file;
mod error;
mod facade;
mod guest;
mod guest_call;
mod http_access;
mod ids;
mod protocol;
mod router;
mod screenshot;
mod server_thread;
mod sessions;
mod ws;

pub use agent_server::{AgentServer, AgentServerConfig, DISCOVERY_FILE_NAME, MAX_OPEN_BODY_BYTES};
pub use error::FacadeError;
pub use facade::{Facade, FacadeConfig, GuestsChanged, DEFAULT_MAX_MESSAGE_BYTES};
pub use guest::{BrowserVersion, GuestChannel, GuestError, GuestId, GuestSink, Guests};
pub use ids::FACADE_ID_RANGE;
pub use ws::CLOSE_UNAUTHORIZED;
