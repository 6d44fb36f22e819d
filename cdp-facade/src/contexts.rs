//! Isolated browser contexts through the facade, as Chromium's browser target
//! has them: `Target.createBrowserContext` (an empty in-memory profile the app
//! makes), `Target.getBrowserContexts`, `Target.disposeBrowserContext` (its
//! pages close, then it ends), and which context a browser-level command
//! naming one addresses (`createTarget`, `Storage.*`, the permissions). A
//! context made with `disposeOnDetach` ends when its client leaves
//! ([`OwnedContexts`]); others live until disposed or the app exits, as in
//! Chromium. The `browserContextId` each page reports is
//! [`BrowserEnv::browser_context_of`](crate::browser_env::BrowserEnv::browser_context_of).

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::browser_env::BrowserEnv;
use crate::effect::{RootCommand, RootWait, Step, Turn};
use crate::guest::{ContextId, GuestError, GuestId};
use crate::jobs::Job;
use crate::protocol::{ClientCommand, InvalidParams, SERVER_ERROR};

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

/// Why a command's `browserContextId` was not taken.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContextParamError {
    /// The params are not an object.
    #[error(transparent)]
    Invalid(#[from] InvalidParams),
    /// The id is not a string.
    #[error("Invalid parameters: browserContextId: string value expected")]
    NotAString,
    /// No live context has this id (Chromium's browser handler's words).
    #[error("Failed to find browser context for id {0}")]
    Unknown(String),
}

/// A command's params without their `browserContextId`, and the context it names.
pub(crate) fn split_context(
    env: &BrowserEnv,
    cmd: &ClientCommand,
) -> Result<(Map<String, Value>, Option<ContextId>), ContextParamError> {
    let Some(raw) = &cmd.params else { return Ok((Map::new(), None)) };
    let mut map: Map<String, Value> = serde_json::from_str(raw.get()).map_err(InvalidParams)?;
    let context = match map.remove("browserContextId") {
        None => None,
        Some(Value::String(asked)) => env.resolve_context(Some(&asked)).map_err(ContextParamError::Unknown)?,
        Some(_) => return Err(ContextParamError::NotAString),
    };
    Ok((map, context))
}

/// `Target.getBrowserContexts`.
pub(crate) fn get_browser_contexts(turn: &mut Turn, rc: &RootCommand) {
    let ids: Vec<String> = turn.env.guests.contexts().iter().map(|c| c.as_str().to_string()).collect();
    let result = json!({"browserContextIds": ids, "defaultBrowserContextId": turn.env.context_id});
    turn.reply(rc.cmd.id, rc.session.as_deref(), result);
}

/// `Target.createBrowserContext`.
pub(crate) fn create_browser_context(turn: &mut Turn, rc: &RootCommand) -> Step {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(params) = turn.params_or_fail::<CreateParams>(rc) else { return Step::Done };
    if params.proxy_server.is_some_and(|p| !p.is_empty()) {
        turn.fail(id, session, SERVER_ERROR, "proxyServer is not supported: pages reach the network as the app does");
        return Step::Done;
    }
    let dispose_on_detach = params.dispose_on_detach;
    turn.run(Job::CreateContext { id, session: rc.session.clone(), dispose_on_detach });
    Step::Wait(RootWait::Io)
}

/// `Target.disposeBrowserContext`: the context's pages close, then it ends.
pub(crate) fn dispose_browser_context(turn: &mut Turn, rc: &RootCommand) -> Step {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(params) = turn.params_or_fail::<DisposeParams>(rc) else { return Step::Done };
    let asked = params.browser_context_id;
    let guests = turn.env.guests.clone();
    let Some(context) = guests.contexts().into_iter().find(|c| c.as_str() == asked) else {
        // Chromium's words; the default context cannot be disposed either.
        turn.fail(id, session, SERVER_ERROR, &format!("Failed to find context with id {asked}"));
        return Step::Done;
    };
    let pages: Vec<GuestId> =
        guests.list().into_iter().filter(|g| guests.context_of(g).as_ref() == Some(&context)).collect();
    turn.run(Job::DisposeContext { id, session: rc.session.clone(), context, pages });
    Step::Wait(RootWait::Io)
}

/// The contexts one client made with `disposeOnDetach`: they end when it leaves.
#[derive(Debug, Default)]
pub(crate) struct OwnedContexts(Vec<ContextId>);

impl OwnedContexts {
    /// A context was made for this client: the reply, and the context kept if it ends with the client.
    pub(crate) fn created(
        &mut self,
        turn: &mut Turn,
        id: i64,
        session: Option<&str>,
        result: Result<ContextId, GuestError>,
        dispose_on_detach: bool,
    ) {
        match result {
            Ok(context) => {
                if dispose_on_detach {
                    self.0.push(context.clone());
                }
                turn.reply(id, session, json!({"browserContextId": context.as_str()}));
            }
            Err(e) => {
                let message = format!("Failed to create a browser context: {e}");
                turn.fail(id, session, SERVER_ERROR, &message);
            }
        }
    }

    /// A context was disposed: it no longer ends with the client.
    pub(crate) fn disposed(&mut self, context: &ContextId) {
        self.0.retain(|c| c != context);
    }

    /// The client is leaving: the contexts it made with `disposeOnDetach`
    /// end with it (in the background: nobody waits for the answer).
    pub(crate) fn release(&mut self, turn: &mut Turn) {
        let owned = std::mem::take(&mut self.0);
        if !owned.is_empty() {
            turn.run(Job::DisposeContexts(owned));
        }
    }
}
