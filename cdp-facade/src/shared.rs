//! [`Shared`]: the state the facade's HTTP handlers and its CDP client
//! share (token, the emulated browser's guests and ids, the client slot,
//! settings).

use std::sync::Arc;

use crate::browser_env::BrowserEnv;
use crate::client_slot::ClientSlot;
use crate::config::FacadeConfig;
use crate::downloads::DownloadNotifier;
use local_guard::Token;

/// State shared by the facade's HTTP handlers and its CDP client.
pub(crate) struct Shared {
    /// The per-boot token.
    pub token: Token,
    /// Our loopback port (for Host checks and URLs).
    pub port: u16,
    /// Settings.
    pub config: FacadeConfig,
    /// The app's browser nodes and the ids the emulated browser hands out.
    pub env: Arc<BrowserEnv>,
    /// The connected CDP client, if any.
    pub clients: ClientSlot,
    /// Rung by the app when its browser nodes change: the client's target
    /// list is refreshed at once instead of at the next 500 ms poll.
    pub guests_changed: Arc<tokio::sync::Notify>,
    /// Download events from the app, for the client that asked for them.
    pub downloads: DownloadNotifier,
}

impl Shared {
    /// `ws://127.0.0.1:<port>/devtools/browser/<id>?token=<token>`.
    pub(crate) fn browser_ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}{}?token={}", self.port, self.browser_ws_path(), self.token.expose())
    }

    /// `/devtools/browser/<id>`.
    pub(crate) fn browser_ws_path(&self) -> String {
        format!("/devtools/browser/{}", self.env.target_id)
    }
}
