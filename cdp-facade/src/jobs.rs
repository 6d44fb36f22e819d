//! Background work of the emulated browser: the [`Job`]s it asks for (the
//! app's calls that may block, guest calls over a temporary subscription)
//! and the [`Completion`] each sends back to the client's router, which
//! hands it to the browser. [`start`] runs one on the facade's runtime; the
//! browser itself never touches tokio.

use std::fmt;
use std::sync::Arc;

use serde_json::value::RawValue;
use tokio::sync::mpsc::UnboundedSender;

use crate::browser_env::BrowserEnv;
use crate::guest::{channel_key, ContextId, GuestChannel, GuestError, GuestId, PermissionSetting, PermissionType};
use crate::guest_call::{self, CallError, PageInfo};

/// One permission change, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PermissionChange {
    /// `permissions` of `origin` (`None`: every origin) set to `setting`.
    Set { origin: Option<String>, permissions: Vec<PermissionType>, setting: PermissionSetting },
    /// Everything set goes back to the default.
    Reset,
}

/// Work the emulated browser hands to the runtime.
pub(crate) enum Job {
    /// Learn a guest's target info through its channel (`None`: it has none, so it is gone).
    Probe { guest: GuestId, channel: Option<Arc<dyn GuestChannel>> },
    /// A browser-level command sent to a page's channel; its reply answers the client's `id`.
    Call { id: i64, session: Option<String>, channel: Arc<dyn GuestChannel>, method: String, params: Box<RawValue> },
    /// `Guests::open`, then `focus_page` when `focus` (`Target.createTarget`).
    Open { id: i64, session: Option<String>, url: String, context: Option<ContextId>, focus: bool },
    /// `Guests::activate` (`Target.activateTarget`, `Page.bringToFront`).
    Activate { id: i64, session: Option<String>, guest: GuestId },
    /// `Guests::close` (`Target.closeTarget`).
    Close { id: i64, session: Option<String>, guest: GuestId },
    /// `Guests::resize_window` (`Browser.setWindowBounds`, `setContentsSize`).
    Resize { id: i64, session: Option<String>, guest: GuestId, width: u32, height: u32 },
    /// `Guests::create_context` (`Target.createBrowserContext`).
    CreateContext { id: i64, session: Option<String>, dispose_on_detach: bool },
    /// `Guests::dispose_context`; `pages` are its pages now (`Target.disposeBrowserContext`).
    DisposeContext { id: i64, session: Option<String>, context: ContextId, pages: Vec<GuestId> },
    /// `Guests::set_permissions` or `reset_permissions` (`Browser.*Permission*` for an isolated context).
    SetPermissions { id: i64, session: Option<String>, context: ContextId, change: PermissionChange },
    /// A leaving client's profile permissions reset through a page of the profile (nobody waits).
    ResetProfilePermissions(Arc<dyn GuestChannel>),
    /// A leaving client's isolated contexts' permissions reset (nobody waits).
    ResetContextPermissions(Vec<ContextId>),
    /// A leaving client's `disposeOnDetach` contexts end (nobody waits).
    DisposeContexts(Vec<ContextId>),
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Job::Probe { guest, channel } => write!(f, "Probe({guest}, channel: {})", channel.is_some()),
            Job::Call { id, method, .. } => write!(f, "Call({id}, {method})"),
            Job::Open { id, url, context, focus, .. } => write!(f, "Open({id}, {url}, {context:?}, focus: {focus})"),
            Job::Activate { id, guest, .. } => write!(f, "Activate({id}, {guest})"),
            Job::Close { id, guest, .. } => write!(f, "Close({id}, {guest})"),
            Job::Resize { id, guest, width, height, .. } => write!(f, "Resize({id}, {guest}, {width}x{height})"),
            Job::CreateContext { id, dispose_on_detach, .. } => write!(f, "CreateContext({id}, {dispose_on_detach})"),
            Job::DisposeContext { id, context, pages, .. } => write!(f, "DisposeContext({id}, {context}, {pages:?})"),
            Job::SetPermissions { id, context, change, .. } => write!(f, "SetPermissions({id}, {context}, {change:?})"),
            Job::ResetProfilePermissions(_) => write!(f, "ResetProfilePermissions"),
            Job::ResetContextPermissions(contexts) => write!(f, "ResetContextPermissions({contexts:?})"),
            Job::DisposeContexts(contexts) => write!(f, "DisposeContexts({contexts:?})"),
        }
    }
}

/// A finished [`Job`], fed back to the emulated browser by the client's socket loop.
#[derive(Debug)]
pub(crate) enum Completion {
    /// A guest described itself (or failed to).
    Learned { guest: GuestId, channel_key: usize, result: Result<PageInfo, CallError> },
    /// A browser-level command forwarded to a guest finished.
    Forwarded { id: i64, session: Option<String>, result: Result<Box<RawValue>, CallError> },
    /// `Guests::open` finished (for `Target.createTarget`).
    Opened { id: i64, session: Option<String>, result: Result<GuestId, GuestError> },
    /// `Guests::close` finished (for `Target.closeTarget`).
    Closed { id: i64, session: Option<String>, guest: GuestId, result: Result<(), GuestError> },
    /// `Guests::resize_window` finished (for `Browser.setWindowBounds` / `setContentsSize`).
    Resized { id: i64, session: Option<String>, result: Result<(), GuestError> },
    /// `Guests::activate` finished (for `Target.activateTarget` / `Page.bringToFront`).
    Activated { id: i64, session: Option<String> },
    /// `Guests::create_context` finished (for `Target.createBrowserContext`).
    ContextCreated { id: i64, session: Option<String>, result: Result<ContextId, GuestError>, dispose_on_detach: bool },
    /// `Guests::set_permissions` or `reset_permissions` finished (for `Browser.*Permission*`).
    PermissionsSet { id: i64, session: Option<String>, result: Result<(), GuestError> },
    /// `Guests::dispose_context` finished; `pages` were its pages before.
    ContextDisposed {
        id: i64,
        session: Option<String>,
        context: ContextId,
        pages: Vec<GuestId>,
        result: Result<(), GuestError>,
    },
}

/// Runs `job` in the background; its [`Completion`], if it has one, goes to `done`.
pub(crate) fn start(job: Job, env: &Arc<BrowserEnv>, done: &UnboundedSender<Completion>) {
    let guests = env.guests.clone();
    let tx = done.clone();
    match job {
        Job::Probe { guest, channel: None } => {
            let _ = tx.send(Completion::Learned { guest, channel_key: 0, result: Err(CallError::Gone) });
        }
        Job::Probe { guest, channel: Some(channel) } => {
            let key = channel_key(&channel);
            let env = env.clone();
            tokio::spawn(async move {
                let result = guest_call::page_info(&channel, &env.message_ids).await;
                let _ = tx.send(Completion::Learned { guest, channel_key: key, result });
            });
        }
        Job::Call { id, session, channel, method, params } => {
            let env = env.clone();
            tokio::spawn(async move {
                let result = guest_call::call(&channel, &env.message_ids, &method, Some(&params)).await;
                let _ = tx.send(Completion::Forwarded { id, session, result });
            });
        }
        Job::Open { id, session, url, context, focus } => blocking(
            tx,
            move || {
                let guest = guests.open(&url, context.as_ref())?;
                if focus {
                    guests.focus_page(&guest);
                }
                Ok(guest)
            },
            || Err(GuestError::new("opening the browser node panicked")),
            move |result| Completion::Opened { id, session, result },
        ),
        // A panic in the app's activate is not the client's business: answer anyway.
        Job::Activate { id, session, guest } => {
            blocking(tx, move || guests.activate(&guest), || (), move |()| Completion::Activated { id, session })
        }
        Job::Close { id, session, guest } => {
            let g = guest.clone();
            blocking(
                tx,
                move || guests.close(&g),
                || Err(GuestError::new("closing the browser node panicked")),
                move |result| Completion::Closed { id, session, guest, result },
            )
        }
        Job::Resize { id, session, guest, width, height } => blocking(
            tx,
            move || guests.resize_window(&guest, width, height),
            || Err(GuestError::new("resizing the browser node panicked")),
            move |result| Completion::Resized { id, session, result },
        ),
        Job::CreateContext { id, session, dispose_on_detach } => blocking(
            tx,
            move || guests.create_context(),
            || Err(GuestError::new("creating the browser context panicked")),
            move |result| Completion::ContextCreated { id, session, result, dispose_on_detach },
        ),
        Job::DisposeContext { id, session, context, pages } => {
            let c = context.clone();
            blocking(
                tx,
                move || guests.dispose_context(&c),
                || Err(GuestError::new("disposing the browser context panicked")),
                move |result| Completion::ContextDisposed { id, session, context, pages, result },
            )
        }
        Job::SetPermissions { id, session, context, change } => blocking(
            tx,
            move || match change {
                PermissionChange::Set { origin, permissions, setting } => {
                    guests.set_permissions(&context, origin.as_deref(), &permissions, setting)
                }
                PermissionChange::Reset => guests.reset_permissions(&context),
            },
            || Err(GuestError::new("setting the permissions panicked")),
            move |result| Completion::PermissionsSet { id, session, result },
        ),
        Job::ResetProfilePermissions(channel) => {
            let env = env.clone();
            tokio::spawn(async move {
                let reset = guest_call::call(&channel, &env.message_ids, "Browser.resetPermissions", None);
                if let Err(e) = reset.await {
                    tracing::debug!(error = ?e, "profile permissions not reset on detach");
                }
            });
        }
        Job::ResetContextPermissions(contexts) => {
            tokio::task::spawn_blocking(move || {
                for context in contexts {
                    if let Err(e) = guests.reset_permissions(&context) {
                        tracing::debug!(context = %context, error = %e, "permissions not reset on detach");
                    }
                }
            });
        }
        Job::DisposeContexts(contexts) => {
            tokio::task::spawn_blocking(move || {
                for context in contexts {
                    if let Err(e) = guests.dispose_context(&context) {
                        tracing::debug!(context = %context, error = %e, "browser context not disposed on detach");
                    }
                }
            });
        }
    }
}

/// Runs `work` on a blocking worker, then sends `done` of its value (or of
/// `if_panicked`'s, should the app's call panic).
fn blocking<T: Send + 'static>(
    tx: UnboundedSender<Completion>,
    work: impl FnOnce() -> T + Send + 'static,
    if_panicked: impl FnOnce() -> T + Send + 'static,
    done: impl FnOnce(T) -> Completion + Send + 'static,
) {
    tokio::spawn(async move {
        let value = tokio::task::spawn_blocking(work).await.unwrap_or_else(|_| if_panicked());
        let _ = tx.send(done(value));
    });
}
