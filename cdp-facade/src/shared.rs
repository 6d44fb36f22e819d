//! [`Shared`]: the state the facade's HTTP handlers and its one CDP client
//! share (token, guests, ids, the client slot, settings).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::client_slot::ClientSlot;
use crate::config::FacadeConfig;
use crate::downloads::DownloadNotifier;
use crate::guest::{GuestId, Guests};
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
    /// Download events from the app, for the client that asked for them.
    pub downloads: DownloadNotifier,
    /// `Browser.WindowID` of each guest asked about, stable for the facade's life.
    pub window_ids: Mutex<HashMap<GuestId, i64>>,
}

impl Shared {
    /// The guest's window id, allocated on first use.
    pub(crate) fn window_id(&self, guest: &GuestId) -> i64 {
        let mut ids = self.window_ids.lock().unwrap_or_else(|p| p.into_inner());
        let next = ids.len() as i64 + 1;
        *ids.entry(guest.clone()).or_insert(next)
    }

    /// The guest behind a window id handed out before.
    pub(crate) fn guest_of_window(&self, window_id: i64) -> Option<GuestId> {
        let ids = self.window_ids.lock().unwrap_or_else(|p| p.into_inner());
        ids.iter().find(|(_, w)| **w == window_id).map(|(g, _)| g.clone())
    }

    /// `ws://127.0.0.1:<port>/devtools/browser/<id>?token=<token>`.
    pub(crate) fn browser_ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}{}?token={}", self.port, self.browser_ws_path(), self.token.expose())
    }

    /// `/devtools/browser/<id>`.
    pub(crate) fn browser_ws_path(&self) -> String {
        format!("/devtools/browser/{}", self.browser_target_id)
    }
}
