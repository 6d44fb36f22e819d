//! [`Shared`]: the state the facade's HTTP handlers and its one CDP client
//! share (token, guests, ids, the client slot, settings).

use std::sync::Arc;

use crate::client_slot::ClientSlot;
use crate::config::FacadeConfig;
use crate::guest::Guests;
use crate::ids::{MessageIds, SessionIds};
use local_guard::Token;

/// State shared by the facade's HTTP handlers and its single CDP client.
pub(crate) struct Shared {
    /// The per-boot token.
    pub token: Token,
    /// The app's browser nodes.
    pub guests: Arc<dyn Guests>,
    /// Our loopback port (for Host checks and URLs).
    pub port: u16,
    /// Settings.
    pub config: FacadeConfig,
    /// The emulated browser target's id.
    pub browser_target_id: String,
    /// The one browser context every page belongs to.
    pub browser_context_id: String,
    /// Ids for messages sent to guests.
    pub message_ids: MessageIds,
    /// Ids for facade sessions.
    pub session_ids: SessionIds,
    /// The connected CDP client, if any.
    pub clients: ClientSlot,
    /// Rung by the app when its browser nodes change: the client's target
    /// list is refreshed at once instead of at the next 500 ms poll.
    pub guests_changed: Arc<tokio::sync::Notify>,
}

impl Shared {
    /// `ws://127.0.0.1:<port>/devtools/browser/<id>?token=<token>`.
    pub(crate) fn browser_ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}{}?token={}", self.port, self.browser_ws_path(), self.token.expose())
    }

    /// `/devtools/browser/<id>`.
    pub(crate) fn browser_ws_path(&self) -> String {
        format!("/devtools/browser/{}", self.browser_target_id)
    }
}
