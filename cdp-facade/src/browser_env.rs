//! [`BrowserEnv`]: what the emulated browser stands on for the facade's
//! whole life, whichever client is connected: the app's guests, the ids of
//! the browser target and of the default browser context, and the ids it
//! hands out (guest messages, sessions, windows).

use std::sync::Arc;

use local_guard::RandomError;
use serde_json::{json, Value};

use crate::guest::{ContextId, GuestId, Guests};
use crate::ids::{random_hex_id, MessageIds, SessionIds, WindowIds};

/// The emulated browser's guests and ids.
pub(crate) struct BrowserEnv {
    /// The app's browser nodes.
    pub(crate) guests: Arc<dyn Guests>,
    /// The emulated browser target's id.
    pub(crate) target_id: String,
    /// The default browser context every page of the person's profile reports.
    pub(crate) context_id: String,
    /// Ids for messages sent to guests.
    pub(crate) message_ids: MessageIds,
    /// Ids for facade sessions.
    pub(crate) session_ids: SessionIds,
    /// Ids of the guests' windows.
    pub(crate) windows: WindowIds,
}

impl BrowserEnv {
    /// A browser over `guests` with fresh random ids.
    pub(crate) fn new(guests: Arc<dyn Guests>) -> Result<Self, RandomError> {
        Ok(Self {
            guests,
            target_id: local_guard::random_uuid()?,
            context_id: random_hex_id()?,
            message_ids: MessageIds::default(),
            session_ids: SessionIds::new()?,
            windows: WindowIds::default(),
        })
    }

    /// The `browserContextId` a guest's page reports.
    pub(crate) fn browser_context_of(&self, guest: &GuestId) -> String {
        match self.guests.context_of(guest) {
            Some(c) => c.as_str().to_string(),
            None => self.context_id.clone(),
        }
    }

    /// The context a client's `browserContextId` names: `None` for the
    /// default one (or none given); an unknown one is handed back.
    pub(crate) fn resolve_context(&self, asked: Option<&str>) -> Result<Option<ContextId>, String> {
        match asked {
            None => Ok(None),
            Some(id) if id == self.context_id => Ok(None),
            Some(id) => {
                self.guests.contexts().into_iter().find(|c| c.as_str() == id).map(Some).ok_or_else(|| id.to_string())
            }
        }
    }

    /// The browser target's `targetInfo`.
    pub(crate) fn browser_target_info(&self) -> Value {
        json!({"targetId": self.target_id, "type": "browser", "title": "", "url": "",
               "attached": true, "canAccessOpener": false})
    }
}
