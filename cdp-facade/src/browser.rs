//! The emulated browser: browser-level CDP (`Target.*`, `Browser.*`,
//! `Storage.*`, and on a page session those [`BrowserMethod`] marks)
//! answered from the app's list of guests, as one unit that owns its state
//! and hands the router [`Effect`]s to apply: messages for the client,
//! sessions to add or end, guests to subscribe to or release, commands for
//! guests, and background [`Job`](crate::jobs::Job)s whose completions come back here.
//!
//! [`EmulatedBrowser`] holds what is the same for every client (the guests'
//! target infos, closed and crashed guests); [`BrowserClient`] what is one
//! client's (its command queue, discovery and auto-attach, workers, and
//! what it set that ends with it). The client's sessions and subscriptions
//! stay the router's; the browser reads them through a [`ClientView`].
//!
//! A client's browser-level commands run one at a time, in order; those
//! that need every live page's real target id wait until each guest has
//! been asked (`Target.getTargetInfo` through its channel). The browser
//! also polls for newcomers, departures and crashes.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use serde_json::json;
use serde_json::value::RawValue;

use crate::browser_env::BrowserEnv;
use crate::browser_methods::BrowserMethod;
use crate::contexts::{self, OwnedContexts};
use crate::downloads::{ClientDownloads, DownloadNotice};
use crate::effect::{ClientView, Effect, RootCommand, RootWait, Step, Turn};
use crate::guest::{channel_key, GuestId};
use crate::guest_call::CallError;
use crate::jobs::Completion;
use crate::permissions::{self, ClientPermissions};
use crate::protocol::{self, ClientCommand, SERVER_ERROR};
use crate::sessions::{DropReason, Session, SessionKind};
use crate::storage;
use crate::target_commands;
use crate::target_watch::TargetWatch;
use crate::targets::Targets;
use crate::window;
use crate::workers::Workers;

/// The emulated browser's state shared by its clients.
pub(crate) struct EmulatedBrowser {
    env: Arc<BrowserEnv>,
    targets: Targets,
}

/// One client's side of the emulated browser.
#[derive(Debug, Default)]
pub(crate) struct BrowserClient {
    /// Browser-level commands, run one at a time in order.
    queue: VecDeque<RootCommand>,
    /// What the front command waits for, if anything.
    wait: Option<RootWait>,
    /// Guests were described: once the queue is idle, the client hears of new ones.
    announce_when_idle: bool,
    /// Discovery and browser-level auto-attach.
    watch: TargetWatch,
    /// The service and shared workers the client sees.
    workers: Workers,
    /// Contexts it made with `disposeOnDetach`.
    contexts: OwnedContexts,
    /// What it set of site permissions.
    permissions: ClientPermissions,
    /// Where it wants downloads and their events.
    downloads: ClientDownloads,
}

impl EmulatedBrowser {
    /// A browser over the guests and ids of `env`, knowing no page yet.
    pub(crate) fn new(env: Arc<BrowserEnv>) -> Self {
        Self { env, targets: Targets::default() }
    }

    /// The guests and ids the browser stands on.
    pub(crate) fn env(&self) -> &Arc<BrowserEnv> {
        &self.env
    }

    fn turn<'a>(&self, view: ClientView<'a>) -> Turn<'a> {
        Turn::new(self.env.clone(), view)
    }

    /// A browser-level command from the client, its reply going to
    /// `session`: run now unless an earlier one is still waiting, then it
    /// is queued (and run by [`Self::resume`]).
    pub(crate) fn handle(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        cmd: ClientCommand,
        session: Option<String>,
    ) -> Vec<Effect> {
        client.queue.push_back(RootCommand { cmd, session });
        self.resume(client, view).unwrap_or_default()
    }

    /// Runs the next queued command once nothing waits (or, after guests
    /// described themselves, tells the client of new ones); `None` when
    /// there is nothing to do. Call again, after applying the effects,
    /// until it returns `None`: each command sees its predecessors' effects.
    pub(crate) fn resume(&mut self, client: &mut BrowserClient, view: ClientView) -> Option<Vec<Effect>> {
        if client.wait.is_none() {
            if let Some(rc) = client.queue.pop_front() {
                let mut turn = self.turn(view);
                match self.run(&mut turn, client, &rc) {
                    Step::Done => {}
                    Step::NeedTargets => {
                        client.queue.push_front(rc);
                        client.wait = Some(RootWait::Targets);
                    }
                    Step::Wait(wait) => client.wait = Some(wait),
                }
                return Some(turn.into_effects());
            }
        }
        if std::mem::take(&mut client.announce_when_idle) && client.wait.is_none() {
            let mut turn = self.turn(view);
            client.watch.announce_live(&mut turn, &self.targets);
            return Some(turn.into_effects());
        }
        None
    }

    fn run(&mut self, turn: &mut Turn, client: &mut BrowserClient, rc: &RootCommand) -> Step {
        use BrowserMethod::*;
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(method) = BrowserMethod::parse(&rc.cmd.method) else {
            turn.send(protocol::not_found_reply(id, session, &rc.cmd.method));
            return Step::Done;
        };
        match method {
            GetVersion => {
                let v = self.env.guests.version();
                turn.reply(
                    id,
                    session,
                    json!({"protocolVersion": "1.3", "product": v.product, "revision": v.revision,
                           "userAgent": v.user_agent, "jsVersion": v.js_version}),
                );
            }
            Close => {
                // Ends this client's connection; the app and its browser nodes stay.
                turn.reply(id, session, json!({}));
                turn.push(Effect::Close(1000, "Browser.close"));
            }
            Crash | CrashGpuProcess => turn.send(protocol::not_found_reply(id, session, method.name())),
            SetDownloadBehavior => client.downloads.set_behavior(turn, rc),
            GrantPermissions | SetPermission | ResetPermissions => {
                return client.permissions.change(turn, &self.targets, rc)
            }
            GetCookies | SetCookies | ClearCookies => return storage::forward_profile_wide(turn, &self.targets, rc),
            RunIfWaitingForDebugger => turn.reply(id, session, json!({})),
            GetWindowForTarget => return window::window_for_target(turn, &mut self.targets, rc),
            GetWindowBounds => window::window_bounds(turn, rc),
            SetWindowBounds | SetContentsSize => return window::set_window_size(turn, rc),
            GetBrowserContexts => contexts::get_browser_contexts(turn, rc),
            CreateBrowserContext => return contexts::create_browser_context(turn, rc),
            DisposeBrowserContext => return contexts::dispose_browser_context(turn, rc),
            GetTargetInfo => return target_commands::get_target_info(turn, &mut self.targets, &client.workers, rc),
            GetTargets => return target_commands::get_targets(turn, &mut self.targets, &client.workers, rc),
            SetDiscoverTargets => {
                return target_commands::set_discover_targets(
                    turn,
                    &mut self.targets,
                    &mut client.watch,
                    &mut client.workers,
                    rc,
                )
            }
            SetAutoAttach => {
                return target_commands::set_auto_attach(
                    turn,
                    &mut self.targets,
                    &mut client.watch,
                    &mut client.workers,
                    rc,
                )
            }
            AttachToTarget => {
                return target_commands::attach_to_target(
                    turn,
                    &mut self.targets,
                    &client.watch,
                    &mut client.workers,
                    rc,
                )
            }
            AttachToBrowserTarget => target_commands::attach_to_browser(turn, rc),
            DetachFromTarget => target_commands::detach_from_target(turn, &self.targets, &client.watch, rc),
            CreateTarget => return target_commands::create_target(turn, rc),
            CloseTarget => return target_commands::close_target(turn, &mut self.targets, rc),
            ActivateTarget => return target_commands::activate_target(turn, &mut self.targets, rc),
            BringToFront => return target_commands::bring_to_front(turn, rc),
        }
        Step::Done
    }

    /// Background work finished: the reply of the command that waited for
    /// it. Then [`Self::resume`] runs what queued meanwhile.
    pub(crate) fn on_completion(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        completion: Completion,
    ) -> Vec<Effect> {
        let mut turn = self.turn(view);
        let t = &mut turn;
        match completion {
            Completion::Learned { guest, channel_key, result } => self.learned(t, client, guest, channel_key, result),
            Completion::Forwarded { id, session, result } => {
                match result {
                    Ok(raw) => t.send(protocol::raw_reply(id, session.as_deref(), Some(&raw), None)),
                    Err(CallError::Remote(error)) => match RawValue::from_string(error) {
                        Ok(raw) => t.send(protocol::raw_reply(id, session.as_deref(), None, Some(&raw))),
                        Err(_) => t.fail(id, session.as_deref(), SERVER_ERROR, "The browser answered with an error"),
                    },
                    Err(e) => t.fail(id, session.as_deref(), SERVER_ERROR, &e.to_string()),
                }
                client.wait = None;
            }
            Completion::Opened { id, session, result } => match result {
                Ok(guest) => {
                    self.targets.opened(&guest);
                    if self.targets.is_known(&guest) {
                        self.finish_create(t, client, id, session, guest);
                    } else {
                        self.targets.probe(t, &guest);
                        client.wait = Some(RootWait::Created { id, session, guest });
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Target.createTarget: the app could not open a browser node");
                    t.fail(id, session.as_deref(), SERVER_ERROR, &format!("Failed to open a browser node: {e}"));
                    client.wait = None;
                }
            },
            Completion::ContextCreated { id, session, result, dispose_on_detach } => {
                client.contexts.created(t, id, session.as_deref(), result, dispose_on_detach);
                client.wait = None;
            }
            Completion::PermissionsSet { id, session, result } => {
                permissions::permissions_set(t, id, session.as_deref(), result);
                client.wait = None;
            }
            Completion::ContextDisposed { id, session, context, pages, result } => {
                match result {
                    Ok(()) => {
                        client.contexts.disposed(&context);
                        for guest in pages {
                            self.targets.mark_closed(&guest);
                            self.drop_guest(t, client, &guest, DropReason::Closed);
                        }
                        t.reply(id, session.as_deref(), json!({}));
                    }
                    Err(e) => {
                        let message = format!("Failed to dispose the browser context: {e}");
                        t.fail(id, session.as_deref(), SERVER_ERROR, &message);
                    }
                }
                client.wait = None;
            }
            Completion::Activated { id, session } => {
                t.reply(id, session.as_deref(), json!({}));
                client.wait = None;
            }
            Completion::Resized { id, session, result } => {
                match result {
                    Ok(()) => t.reply(id, session.as_deref(), json!({})),
                    Err(e) => {
                        t.fail(id, session.as_deref(), SERVER_ERROR, &format!("Failed to resize the window: {e}"))
                    }
                }
                client.wait = None;
            }
            Completion::Closed { id, session, guest, result } => {
                match result {
                    Ok(()) => {
                        self.targets.mark_closed(&guest);
                        // A reply on a session of the closing page must precede that session's detach.
                        let on_own_session = session.as_deref().is_some_and(|s| {
                            matches!(t.session(s), Some(Session { kind: SessionKind::Page { guest: g, .. }, .. }) if *g == guest)
                        });
                        if on_own_session {
                            t.reply(id, session.as_deref(), json!({"success": true}));
                        }
                        self.drop_guest(t, client, &guest, DropReason::Closed);
                        if !on_own_session {
                            t.reply(id, session.as_deref(), json!({"success": true}));
                        }
                    }
                    Err(e) => t.fail(id, session.as_deref(), SERVER_ERROR, &format!("Failed to close target: {e}")),
                }
                client.wait = None;
            }
        }
        turn.into_effects()
    }

    fn finish_create(
        &mut self,
        turn: &mut Turn,
        client: &mut BrowserClient,
        id: i64,
        session: Option<String>,
        guest: GuestId,
    ) {
        match self.targets.known_info(&guest) {
            Some(info) => {
                // targetCreated, then attachedToTarget, then the reply (Playwright needs the attach first).
                client.watch.announce_one(turn, &self.targets, &guest, &info);
                turn.reply(id, session.as_deref(), json!({"targetId": info.target_id}));
            }
            None => turn.fail(
                id,
                session.as_deref(),
                SERVER_ERROR,
                "The new browser node did not answer on its DevTools channel",
            ),
        }
        client.wait = None;
    }

    fn learned(
        &mut self,
        turn: &mut Turn,
        client: &mut BrowserClient,
        guest: GuestId,
        key: usize,
        result: Result<crate::guest_call::PageInfo, CallError>,
    ) {
        let changed = self.targets.learned(&self.env, &guest, key, result);
        if let Some(info) = changed.filter(|_| client.watch.discovers(&guest)) {
            let target_info = self.targets.page_target_info(&self.env, &guest, &info, turn.has_sessions(&guest));
            turn.event("Target.targetInfoChanged", &json!({"targetInfo": target_info}), None);
        }
        match client.wait.take() {
            Some(RootWait::Created { id, session, guest: created }) if created == guest => {
                self.finish_create(turn, client, id, session, created)
            }
            // The front command runs again.
            Some(RootWait::Targets) if self.targets.probing_done() => {}
            other => client.wait = other,
        }
        // Once what queued has run, new pages are announced (see `resume`).
        client.announce_when_idle = true;
    }

    /// Ends everything the client had on a guest: pending commands fail,
    /// workers it watched go, sessions detach, the subscription ends, the
    /// browser forgets it.
    fn drop_guest(&mut self, turn: &mut Turn, client: &mut BrowserClient, guest: &GuestId, reason: DropReason) {
        turn.push(Effect::FailPendingFor { guest: guest.clone(), message: reason.message() });
        client.workers.lost(turn, &client.watch, guest);
        for session_id in turn.pages_of(guest) {
            let Some(session) = turn.session(&session_id) else { continue };
            turn.remove_session(&session_id);
            if let SessionKind::Page { target_id, .. } = &session.kind {
                turn.event(
                    "Target.detachedFromTarget",
                    &json!({"sessionId": session_id, "targetId": target_id}),
                    session.parent.as_deref(),
                );
            }
        }
        // A closed or crashed guest needs no tidying of its DevTools state.
        turn.push(Effect::Release { guest: guest.clone(), tidy: false });
        let known = self.targets.forget(guest);
        client.watch.forget(turn, guest, known);
    }

    fn crashed(&mut self, turn: &mut Turn, client: &mut BrowserClient, guest: &GuestId) {
        tracing::info!(guest = %guest, "browser node renderer gone; detaching its CDP sessions");
        for session in turn.pages_of(guest) {
            turn.event("Inspector.targetCrashed", &json!({}), Some(&session));
        }
        self.drop_guest(turn, client, guest, DropReason::Crashed);
        self.targets.mark_crashed(guest);
    }

    /// The renderer of a subscribed guest crashed: `Inspector.targetCrashed`
    /// on its sessions, then everything on it ends.
    pub(crate) fn guest_crashed(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        guest: &GuestId,
    ) -> Vec<Effect> {
        let mut turn = self.turn(view);
        self.crashed(&mut turn, client, guest);
        turn.into_effects()
    }

    /// The 500 ms poll: departures, replaced browsers, crashes, recoveries, newcomers, fresh URLs/titles.
    pub(crate) fn on_poll(&mut self, client: &mut BrowserClient, view: ClientView) -> Vec<Effect> {
        let mut turn = self.turn(view);
        let t = &mut turn;
        client.workers.watch(t, &client.watch, &self.targets);
        let live: Vec<GuestId> = self.env.guests.list();
        let live_set: HashSet<&GuestId> = live.iter().collect();
        let mut tracked: HashSet<GuestId> = self.targets.known_guests().cloned().collect();
        tracked.extend(t.linked_guests());
        tracked.extend(client.watch.announced().cloned());
        for guest in tracked {
            let channel = if live_set.contains(&guest) { self.env.guests.channel(&guest) } else { None };
            let Some(channel) = channel else {
                self.drop_guest(t, client, &guest, DropReason::Gone);
                continue;
            };
            let key = channel_key(&channel);
            let replaced = self.targets.known_channel_key(&guest).is_some_and(|k| k != key)
                || t.linked_channel_key(&guest).is_some_and(|k| k != key);
            if replaced {
                self.drop_guest(t, client, &guest, DropReason::Gone);
            } else if channel.crashed() && !self.targets.is_crashed(&guest) {
                self.crashed(t, client, &guest);
            }
        }
        self.targets.keep_live(&self.env, &live_set);
        if client.watch.watching() {
            self.targets.ready(t);
            if client.wait.is_none() {
                client.watch.announce_live(t, &self.targets);
            }
        }
        if client.watch.discover {
            // Keeps Puppeteer's target.url() fresh.
            let announced: Vec<GuestId> = client.watch.announced().cloned().collect();
            for guest in announced {
                self.targets.probe(t, &guest);
            }
        }
        turn.into_effects()
    }

    /// A download notice from the app: events for the session that asked for them.
    pub(crate) fn on_download(
        &mut self,
        client: &BrowserClient,
        view: ClientView,
        notice: DownloadNotice,
    ) -> Vec<Effect> {
        let mut turn = self.turn(view);
        client.downloads.on_notice(&mut turn, &self.targets, notice);
        turn.into_effects()
    }

    /// A guest's page-level discovery event; `None` unless it is about a
    /// worker the client sees through that guest (then it is consumed).
    pub(crate) fn on_watcher_event(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        guest: &GuestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Vec<Effect>> {
        let mut turn = self.turn(view);
        let BrowserClient { workers, watch, .. } = client;
        workers.target_event(&mut turn, watch, &self.targets, guest, method, params).then(|| turn.into_effects())
    }

    /// A guest attached a child session; `None` unless it is a worker the
    /// browser asked for (then it is the client's, announced where asked).
    pub(crate) fn worker_attached(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        guest: &GuestId,
        session_id: &str,
        target: &str,
        raw: &str,
    ) -> Option<Vec<Effect>> {
        let mut turn = self.turn(view);
        client.workers.attached(&mut turn, &self.targets, guest, session_id, target, raw).then(|| turn.into_effects())
    }

    /// A guest detached a child session; `None` unless it was a worker session.
    pub(crate) fn worker_detached(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        session_id: &str,
        raw: &str,
    ) -> Option<Vec<Effect>> {
        let mut turn = self.turn(view);
        client.workers.detached(&mut turn, session_id, raw).then(|| turn.into_effects())
    }

    /// The client's first command on a worker session is about to go to the guest.
    pub(crate) fn session_used(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        session_id: &str,
    ) -> Vec<Effect> {
        let mut turn = self.turn(view);
        client.workers.session_used(&mut turn, session_id);
        turn.into_effects()
    }

    /// An [`Effect::ToGuest`] failed: the guest answered message `id` with
    /// `error` (raw JSON), or it could not be sent (`None`).
    pub(crate) fn internal_failed(
        &mut self,
        client: &mut BrowserClient,
        view: ClientView,
        id: i64,
        error: Option<&str>,
    ) -> Vec<Effect> {
        let mut turn = self.turn(view);
        client.workers.attach_failed(&mut turn, id, error);
        turn.into_effects()
    }

    /// The client is leaving: what it set that ends with it is undone (the
    /// download behaviour at once, the rest in the background). Its
    /// subscriptions are the router's to release.
    pub(crate) fn release(&mut self, client: &mut BrowserClient, view: ClientView) -> Vec<Effect> {
        let mut turn = self.turn(view);
        client.downloads.release(&self.env);
        client.permissions.release(&mut turn, &self.targets);
        client.contexts.release(&mut turn);
        *client = BrowserClient::default();
        turn.into_effects()
    }
}

#[cfg(test)]
#[path = "browser_tests.rs"]
mod tests;
