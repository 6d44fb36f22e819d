//! Isolated browser contexts through the facade, as Chromium's browser target
//! has them: `Target.createBrowserContext` (an empty in-memory profile the app
//! makes), `Target.getBrowserContexts`, `Target.disposeBrowserContext` (its
//! pages close, then it ends), the `browserContextId` each page reports, and
//! which context a browser-level command naming one addresses (`createTarget`,
//! `Storage.*`, `setDownloadBehavior`). A context made with `disposeOnDetach`
//! ends when its client leaves; others live until disposed or the app exits,
//! as in Chromium.
//!
//! Another `impl Router` block; imports browser, browser_state, guest, protocol and router.

use serde::Deserialize;
use serde_json::json;

use crate::browser::Step;
use crate::browser_state::{Internal, RootCommand, RootWait};
use crate::guest::{ContextId, GuestError, GuestId};
use crate::protocol::SERVER_ERROR;
use crate::router::Router;
use crate::sessions::DropReason;

/// `Target.createBrowserContext`'s parameters (the rest are accepted and have no effect here).
#[derive(Deserialize)]
struct CreateParams {
    #[serde(rename = "disposeOnDetach", default)]
    dispose_on_detach: bool,
    #[serde(rename = "proxyServer")]
    proxy_server: Option<String>,
}

#[derive(Deserialize)]
struct DisposeParams {
    #[serde(rename = "browserContextId")]
    browser_context_id: String,
}

impl Router {
    /// The `browserContextId` a guest's page reports.
    pub(crate) fn browser_context_of(&self, guest: &GuestId) -> String {
        match self.shared.guests.context_of(guest) {
            Some(c) => c.as_str().to_string(),
            None => self.shared.browser_context_id.clone(),
        }
    }

    /// The context a client's `browserContextId` names: `None` for the
    /// default one (or none given); an unknown one is handed back.
    pub(crate) fn resolve_context(&self, asked: Option<&str>) -> Result<Option<ContextId>, String> {
        match asked {
            None => Ok(None),
            Some(id) if id == self.shared.browser_context_id => Ok(None),
            Some(id) => self
                .shared
                .guests
                .contexts()
                .into_iter()
                .find(|c| c.as_str() == id)
                .map(Some)
                .ok_or_else(|| id.to_string()),
        }
    }

    /// `Target.getBrowserContexts`.
    pub(crate) fn get_browser_contexts(&self, rc: &RootCommand) {
        let ids: Vec<String> = self.shared.guests.contexts().iter().map(|c| c.as_str().to_string()).collect();
        let result = json!({"browserContextIds": ids, "defaultBrowserContextId": self.shared.browser_context_id});
        self.reply(rc.cmd.id, rc.session.as_deref(), result);
    }

    /// `Target.createBrowserContext`.
    pub(crate) fn create_browser_context(&mut self, rc: &RootCommand) -> Step {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(params) = self.params_or_fail::<CreateParams>(rc) else { return Step::Done };
        if params.proxy_server.is_some_and(|p| !p.is_empty()) {
            self.fail(
                id,
                session,
                SERVER_ERROR,
                "proxyServer is not supported: pages reach the network as the app does",
            );
            return Step::Done;
        }
        let guests = self.shared.guests.clone();
        let tx = self.internal_tx.clone();
        let session = rc.session.clone();
        let dispose_on_detach = params.dispose_on_detach;
        tokio::spawn(async move {
            let result = tokio::task::spawn_blocking(move || guests.create_context())
                .await
                .unwrap_or_else(|_| Err(GuestError::new("creating the browser context panicked")));
            let _ = tx.send(Internal::ContextCreated { id, session, result, dispose_on_detach });
        });
        Step::Wait(RootWait::Io)
    }

    /// `Target.disposeBrowserContext`: the context's pages close, then it ends.
    pub(crate) fn dispose_browser_context(&mut self, rc: &RootCommand) -> Step {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(params) = self.params_or_fail::<DisposeParams>(rc) else { return Step::Done };
        let asked = params.browser_context_id;
        let Some(context) = self.shared.guests.contexts().into_iter().find(|c| c.as_str() == asked) else {
            // Chromium's words; the default context cannot be disposed either.
            self.fail(id, session, SERVER_ERROR, &format!("Failed to find context with id {asked}"));
            return Step::Done;
        };
        let pages: Vec<GuestId> = self
            .shared
            .guests
            .list()
            .into_iter()
            .filter(|g| self.shared.guests.context_of(g).as_ref() == Some(&context))
            .collect();
        let guests = self.shared.guests.clone();
        let tx = self.internal_tx.clone();
        let session = rc.session.clone();
        tokio::spawn(async move {
            let c = context.clone();
            let result = tokio::task::spawn_blocking(move || guests.dispose_context(&c))
                .await
                .unwrap_or_else(|_| Err(GuestError::new("disposing the browser context panicked")));
            let _ = tx.send(Internal::ContextDisposed { id, session, context, pages, result });
        });
        Step::Wait(RootWait::Io)
    }

    /// A context was made for this client.
    pub(crate) fn context_created(
        &mut self,
        id: i64,
        session: Option<String>,
        result: Result<ContextId, GuestError>,
        dispose_on_detach: bool,
    ) {
        match result {
            Ok(context) => {
                if dispose_on_detach {
                    self.browser.dispose_on_detach.push(context.clone());
                }
                self.reply(id, session.as_deref(), json!({"browserContextId": context.as_str()}));
            }
            Err(e) => {
                let message = format!("Failed to create a browser context: {e}");
                self.fail(id, session.as_deref(), SERVER_ERROR, &message);
            }
        }
        self.finish_wait();
    }

    /// A context's pages closed and it ended: they are gone for the client, then the reply.
    pub(crate) fn context_disposed(
        &mut self,
        id: i64,
        session: Option<String>,
        context: ContextId,
        pages: Vec<GuestId>,
        result: Result<(), GuestError>,
    ) {
        match result {
            Ok(()) => {
                self.browser.dispose_on_detach.retain(|c| *c != context);
                for guest in pages {
                    self.browser.closed.insert(guest.clone());
                    self.drop_guest(&guest, DropReason::Closed);
                }
                self.reply(id, session.as_deref(), json!({}));
            }
            Err(e) => {
                let message = format!("Failed to dispose the browser context: {e}");
                self.fail(id, session.as_deref(), SERVER_ERROR, &message);
            }
        }
        self.finish_wait();
    }

    /// The client is leaving: the contexts it made with `disposeOnDetach` end
    /// with it (in the background: nobody waits for the answer).
    pub(crate) fn release_contexts(&mut self) {
        let owned = std::mem::take(&mut self.browser.dispose_on_detach);
        if owned.is_empty() {
            return;
        }
        let guests = self.shared.guests.clone();
        tokio::task::spawn_blocking(move || {
            for context in owned {
                if let Err(e) = guests.dispose_context(&context) {
                    tracing::debug!(context = %context, error = %e, "browser context not disposed on detach");
                }
            }
        });
    }
}
