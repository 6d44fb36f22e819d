//! JavaScript dialogs a guest announced, and answers that reach the facade
//! before the app holds the dialog. A leaf but for `guest`.
//!
//! Chromium's DevTools announces a dialog (`Page.javascriptDialogOpening`)
//! before it asks the embedder's dialog handler, and the facade answers
//! through the app, which holds a dialog only once CEF's handler has run. A
//! client that answers at once (Puppeteer's `page.on('dialog')`) can beat
//! the handler on a busy machine; Chromium accepts that answer, so the
//! facade retries it for a moment instead of replying "No dialog is showing".

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::guest::{GuestError, GuestId, Guests};

/// How long an answer to an announced dialog waits for the app to hold it.
pub(crate) const ARRIVAL_WAIT: Duration = Duration::from_secs(3);
/// Pause between tries while waiting.
const RETRY_EVERY: Duration = Duration::from_millis(5);

/// Guests whose DevTools said a dialog opened and not yet that it closed.
#[derive(Default)]
pub(crate) struct AnnouncedDialogs(HashSet<GuestId>);

impl AnnouncedDialogs {
    /// Follows a page event of `guest`.
    pub(crate) fn on_page_event(&mut self, guest: &GuestId, method: &str) {
        match method {
            "Page.javascriptDialogOpening" => {
                self.0.insert(guest.clone());
            }
            "Page.javascriptDialogClosed" => {
                self.0.remove(guest);
            }
            _ => {}
        }
    }

    /// Whether `guest` announced a dialog that has not closed.
    pub(crate) fn is_open(&self, guest: &GuestId) -> bool {
        self.0.contains(guest)
    }

    /// Forgets a guest no longer followed.
    pub(crate) fn forget(&mut self, guest: &GuestId) {
        self.0.remove(guest);
    }
}

/// Answers `guest`'s dialog, trying again until the app holds it or
/// [`ARRIVAL_WAIT`] has passed; the last try's result.
pub(crate) async fn answer_when_held(
    guests: Arc<dyn Guests>,
    guest: GuestId,
    accept: bool,
    prompt_text: Option<String>,
) -> Result<(), GuestError> {
    let deadline = Instant::now() + ARRIVAL_WAIT;
    loop {
        let result = guests.answer_dialog(&guest, accept, prompt_text.as_deref());
        if result.is_ok() || Instant::now() >= deadline {
            return result;
        }
        tokio::time::sleep(RETRY_EVERY).await;
    }
}
