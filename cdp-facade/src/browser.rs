//! The emulated browser: browser-level CDP (`Target.*`, `Browser.*`,
//! `Storage.*` without a page session) answered from the app's list of
//! guests. Commands run one at a time, in order; those that need every live
//! page's real target id wait until each guest has been asked
//! (`Target.getTargetInfo` through its channel). Also polls for newcomers,
//! departures and crashes.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::browser_methods::BrowserMethod;
use crate::browser_state::{Internal, Known, RootCommand, RootWait};
use crate::guest::{channel_key, GuestChannel};
use crate::guest::{ContextId, GuestError, GuestId};
use crate::guest_call::{self, CallError, PageInfo};
use crate::protocol::{self, ClientCommand, InvalidParams, INVALID_PARAMS, SERVER_ERROR};
use crate::router::Router;
use crate::sessions::{DropReason, Session, SessionKind};

/// After a guest failed to describe itself, how long before it is asked again.
const PROBE_RETRY: Duration = Duration::from_secs(2);

/// What running a browser-level command left to do.
pub(crate) enum Step {
    Done,
    NeedTargets,
    Wait(RootWait),
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

#[derive(Deserialize)]
struct TargetIdParam {
    #[serde(rename = "targetId")]
    target_id: String,
}

impl Router {
    /// Queues a browser-level command (reply on `session`).
    pub(crate) fn enqueue_root(&mut self, cmd: ClientCommand, session: Option<String>) {
        self.browser.queue.push_back(RootCommand { cmd, session });
        self.pump_root();
    }

    fn pump_root(&mut self) {
        while self.browser.wait.is_none() {
            let Some(rc) = self.browser.queue.pop_front() else { break };
            match self.run_root(&rc) {
                Step::Done => {}
                Step::NeedTargets => {
                    self.browser.queue.push_front(rc);
                    self.browser.wait = Some(RootWait::Targets);
                }
                Step::Wait(wait) => self.browser.wait = Some(wait),
            }
        }
    }

    pub(crate) fn reply(&self, id: i64, session: Option<&str>, result: Value) {
        self.send(protocol::value_reply(id, session, &result));
    }

    pub(crate) fn fail(&self, id: i64, session: Option<&str>, code: i64, message: &str) {
        self.send(protocol::error_reply(Some(id), session, code, message));
    }

    /// The command's params as `P`, or None once the command was answered with
    /// an invalid-params error.
    pub(crate) fn params_or_fail<P: serde::de::DeserializeOwned>(&self, rc: &RootCommand) -> Option<P> {
        match rc.cmd.params_as::<P>() {
            Ok(p) => Some(p),
            Err(e) => {
                self.fail(rc.cmd.id, rc.session.as_deref(), INVALID_PARAMS, &e.to_string());
                None
            }
        }
    }

    fn run_root(&mut self, rc: &RootCommand) -> Step {
        use BrowserMethod::*;
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(method) = BrowserMethod::parse(&rc.cmd.method) else {
            self.send(protocol::not_found_reply(id, session, &rc.cmd.method));
            return Step::Done;
        };
        match method {
            GetVersion => {
                let v = self.shared.guests.version();
                self.reply(
                    id,
                    session,
                    json!({"protocolVersion": "1.3", "product": v.product, "revision": v.revision,
                           "userAgent": v.user_agent, "jsVersion": v.js_version}),
                );
            }
            Close => {
                // Ends this client's connection; the app and its browser nodes stay.
                self.reply(id, session, json!({}));
                self.request_close(1000, "Browser.close");
            }
            Crash | CrashGpuProcess => self.send(protocol::not_found_reply(id, session, method.name())),
            SetDownloadBehavior => self.set_download_behavior(rc),
            GrantPermissions | SetPermission | ResetPermissions => return self.change_permissions(rc),
            GetCookies | SetCookies | ClearCookies => return self.forward_profile_wide(rc),
            RunIfWaitingForDebugger => self.reply(id, session, json!({})),
            GetWindowForTarget => return self.window_for_target(rc),
            GetWindowBounds => self.window_bounds(rc),
            SetWindowBounds | SetContentsSize => return self.set_window_size(rc),
            GetBrowserContexts => self.get_browser_contexts(rc),
            CreateBrowserContext => return self.create_browser_context(rc),
            DisposeBrowserContext => return self.dispose_browser_context(rc),
            GetTargetInfo => return self.get_target_info(rc),
            GetTargets => {
                if !self.targets_ready() {
                    return Step::NeedTargets;
                }
                let mut infos: Vec<Value> = self
                    .live_known()
                    .into_iter()
                    .map(|(g, info)| self.page_target_info(&g, &info, self.has_sessions(&g)))
                    .collect();
                infos.extend(self.worker_target_infos());
                self.reply(id, session, json!({"targetInfos": infos}));
            }
            SetDiscoverTargets => return self.set_discover_targets(rc),
            SetAutoAttach => return self.set_auto_attach(rc),
            AttachToTarget => return self.attach_to_target(rc),
            AttachToBrowserTarget => self.attach_to_browser(rc),
            DetachFromTarget => self.detach_from_target(rc),
            CreateTarget => return self.create_target(rc),
            CloseTarget => return self.close_target(rc),
            ActivateTarget => {
                let Some(guest) = (match self.guest_by_target_param(rc) {
                    Ok(g) => g,
                    Err(step) => return step,
                }) else {
                    return Step::Done;
                };
                return self.activate(rc, guest);
            }
            // Chromium activates the page's tab (and so focuses it); here: its node.
            BringToFront => match self.page_session_guest(session) {
                Some(guest) => return self.activate(rc, guest),
                None => self.send(protocol::not_found_reply(id, session, &rc.cmd.method)),
            },
        }
        Step::Done
    }

    fn browser_target_info(&self) -> Value {
        json!({"targetId": self.shared.browser_target_id, "type": "browser", "title": "", "url": "",
               "attached": true, "canAccessOpener": false})
    }

    /// Resolves `params.targetId` to a live guest. `Ok(None)`: an error was already sent.
    pub(crate) fn guest_by_target_param(&mut self, rc: &RootCommand) -> Result<Option<GuestId>, Step> {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let target_id = match rc.cmd.params_as::<TargetIdParam>() {
            Ok(p) => p.target_id,
            Err(e) => {
                self.fail(id, session, INVALID_PARAMS, &e.to_string());
                return Ok(None);
            }
        };
        if !self.targets_ready() {
            return Err(Step::NeedTargets);
        }
        match self.live_known().into_iter().find(|(_, info)| info.target_id == target_id) {
            Some((guest, _)) => Ok(Some(guest)),
            None => {
                self.fail(id, session, INVALID_PARAMS, "No target with given id found");
                Ok(None)
            }
        }
    }

    fn get_target_info(&mut self, rc: &RootCommand) -> Step {
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "targetId")]
            target_id: Option<String>,
        }
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(target_id) = self.params_or_fail::<Params>(rc).map(|p| p.target_id) else { return Step::Done };
        match target_id {
            Some(t) if t != self.shared.browser_target_id => {
                if !self.targets_ready() {
                    return Step::NeedTargets;
                }
                match self.live_known().into_iter().find(|(_, info)| info.target_id == t) {
                    Some((g, info)) => {
                        let target_info = self.page_target_info(&g, &info, self.has_sessions(&g));
                        self.reply(id, session, json!({"targetInfo": target_info}));
                    }
                    None => match self.worker_target_infos().into_iter().find(|i| i["targetId"] == t.as_str()) {
                        Some(info) => self.reply(id, session, json!({"targetInfo": info})),
                        None => self.fail(id, session, INVALID_PARAMS, "No target with given id found"),
                    },
                }
            }
            _ => {
                let info = self.browser_target_info();
                self.reply(id, session, json!({"targetInfo": info}));
            }
        }
        Step::Done
    }

    fn set_discover_targets(&mut self, rc: &RootCommand) -> Step {
        #[derive(Deserialize)]
        struct Params {
            discover: bool,
        }
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(discover) = self.params_or_fail::<Params>(rc).map(|p| p.discover) else { return Step::Done };
        if !discover {
            self.browser.discover = false;
            self.browser.announced.clear();
            self.browser.workers.forget_announced();
            self.reply(id, session, json!({}));
            return Step::Done;
        }
        if !self.targets_ready() {
            return Step::NeedTargets;
        }
        if !self.browser.discover {
            self.browser.discover = true;
            // Puppeteer takes the attached browser target as browser.target().
            let info = self.browser_target_info();
            self.emit("Target.targetCreated", &json!({"targetInfo": info}), None);
        }
        // targetCreated for existing pages must precede the reply (Puppeteer waits for each to attach).
        self.announce_live();
        self.watch_workers();
        self.announce_workers();
        self.reply(id, session, json!({}));
        Step::Done
    }

    fn set_auto_attach(&mut self, rc: &RootCommand) -> Step {
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "autoAttach")]
            auto_attach: bool,
            flatten: Option<bool>,
        }
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(params) = self.params_or_fail::<Params>(rc) else { return Step::Done };
        if !params.auto_attach {
            self.browser.auto_attach = false;
            self.reply(id, session, json!({}));
            return Step::Done;
        }
        if params.flatten != Some(true) {
            self.fail(id, session, INVALID_PARAMS, "Only flatten mode is supported");
            return Step::Done;
        }
        if !self.targets_ready() {
            return Step::NeedTargets;
        }
        // Flat model: pages attach here whatever filter was sent (Puppeteer's exclude:page included).
        self.browser.auto_attach = true;
        self.browser.auto_attach_owner = rc.session.clone();
        // Existing pages' attachedToTarget must precede the reply.
        self.announce_live();
        self.watch_workers();
        self.announce_workers();
        self.reply(id, session, json!({}));
        Step::Done
    }

    /// A browser session, announced on the caller's session before the reply.
    fn attach_to_browser(&mut self, rc: &RootCommand) {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let sid = self.shared.session_ids.next();
        self.sessions.add_browser(sid.clone(), rc.session.clone());
        let info = self.browser_target_info();
        self.emit(
            "Target.attachedToTarget",
            &json!({"sessionId": sid, "targetInfo": info, "waitingForDebugger": false}),
            session,
        );
        self.reply(id, session, json!({"sessionId": sid}));
    }

    fn attach_to_target(&mut self, rc: &RootCommand) -> Step {
        #[derive(Deserialize)]
        struct Params {
            flatten: Option<bool>,
            #[serde(rename = "targetId")]
            target_id: Option<String>,
        }
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let params = rc.cmd.params_as::<Params>().ok();
        if params.as_ref().and_then(|p| p.flatten) != Some(true) {
            self.fail(id, session, INVALID_PARAMS, "Only flatten mode is supported");
            return Step::Done;
        }
        // Chromium attaches to its own browser target too (Puppeteer's `browser.target().createCDPSession()`).
        let target = params.and_then(|p| p.target_id);
        if target.as_ref().is_some_and(|t| *t == self.shared.browser_target_id) {
            self.attach_to_browser(rc);
            return Step::Done;
        }
        if let Some(t) = target.filter(|t| self.browser.workers.is_worker(t)) {
            return self.attach_to_worker(rc, &t);
        }
        let Some(guest) = (match self.guest_by_target_param(rc) {
            Ok(g) => g,
            Err(step) => return step,
        }) else {
            return Step::Done;
        };
        let Some(info) = self.browser.known_info(&guest) else { return Step::Done };
        // attachedToTarget goes out inside attach(), before the reply (Puppeteer requires it).
        match self.attach(&guest, &info, rc.session.clone()) {
            Some(sid) => self.reply(id, session, json!({"sessionId": sid})),
            None => self.fail(id, session, SERVER_ERROR, "Target is gone"),
        }
        Step::Done
    }

    fn detach_from_target(&mut self, rc: &RootCommand) {
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "sessionId")]
            session_id: Option<String>,
            #[serde(rename = "targetId")]
            target_id: Option<String>,
        }
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(params) = self.params_or_fail::<Params>(rc) else { return };
        let target = params.session_id.or_else(|| {
            let t = params.target_id?;
            self.live_known()
                .into_iter()
                .find(|(_, i)| i.target_id == t)
                .and_then(|(g, _)| self.sessions.pages_of(&g).first().cloned())
        });
        let Some(target) = target else {
            return self.fail(id, session, INVALID_PARAMS, "No session with given id");
        };
        if self.detach_session(&target) {
            self.reply(id, session, json!({}));
            return;
        }
        // A child session (iframe, worker): the guest detaches it and announces that itself.
        if let Some(guest) = self.sessions.child(&target).map(|c| c.guest.clone()) {
            let params = RawValue::from_string(json!({"sessionId": target}).to_string()).ok();
            let cmd = ClientCommand { id, method: "Target.detachFromTarget".into(), params, session_id: None };
            self.forward(cmd, &guest, None, rc.session.clone());
            return;
        }
        self.fail(id, session, INVALID_PARAMS, "No session with given id");
    }

    /// A command's params without their `browserContextId`, and the context it names.
    pub(crate) fn split_context(
        &self,
        cmd: &ClientCommand,
    ) -> Result<(Map<String, Value>, Option<ContextId>), ContextParamError> {
        let Some(raw) = &cmd.params else { return Ok((Map::new(), None)) };
        let mut map: Map<String, Value> = serde_json::from_str(raw.get()).map_err(InvalidParams)?;
        let context = match map.remove("browserContextId") {
            None => None,
            Some(Value::String(asked)) => self.resolve_context(Some(&asked)).map_err(ContextParamError::Unknown)?,
            Some(_) => return Err(ContextParamError::NotAString),
        };
        Ok((map, context))
    }

    /// Forwards a profile-wide command (cookies) to a live page of the context
    /// it names. A page session's `Storage.*` means the default context, so a
    /// page of an isolated context is asked through its own `Network` domain.
    fn forward_profile_wide(&mut self, rc: &RootCommand) -> Step {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let (params, context) = match self.split_context(&rc.cmd) {
            Ok(p) => p,
            Err(e) => {
                self.fail(id, session, INVALID_PARAMS, &e.to_string());
                return Step::Done;
            }
        };
        let Some(channel) = self.page_of_context(context.as_ref()) else {
            self.fail(
                id,
                session,
                SERVER_ERROR,
                if context.is_some() {
                    "No page of this browser context is open: its cookies are reached through one, open a page first"
                } else {
                    "No browser node is open: cookies live in the browser profile, open a page first"
                },
            );
            return Step::Done;
        };
        // CEF finds no context by a page's real id for Storage.*; the page's own
        // Network domain reaches the same cookie store and answers in the same shape.
        let method = match (context.is_some(), rc.cmd.method.as_str()) {
            (true, "Storage.getCookies") => "Network.getAllCookies",
            (true, "Storage.setCookies") => "Network.setCookies",
            (true, "Storage.clearCookies") => "Network.clearBrowserCookies",
            (_, other) => other,
        };
        self.forward_through(rc, channel, method.to_string(), params)
    }

    /// The DevTools channel of a live page of `context` (`None`: the person's profile).
    pub(crate) fn page_of_context(&self, context: Option<&ContextId>) -> Option<Arc<dyn GuestChannel>> {
        let guests = &self.shared.guests;
        guests
            .list()
            .into_iter()
            .filter(|g| !self.browser.excluded(g) && guests.context_of(g).as_ref() == context)
            .find_map(|g| {
                let ch = guests.channel(&g)?;
                (!ch.crashed()).then_some(ch)
            })
    }

    /// Sends a browser-level command to a page's channel; its reply answers the client's command.
    pub(crate) fn forward_through(
        &mut self,
        rc: &RootCommand,
        channel: Arc<dyn GuestChannel>,
        method: String,
        params: Map<String, Value>,
    ) -> Step {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let params = match RawValue::from_string(Value::Object(params).to_string()) {
            Ok(p) => p,
            Err(e) => {
                self.fail(id, session, INVALID_PARAMS, &e.to_string());
                return Step::Done;
            }
        };
        let shared = self.shared.clone();
        let tx = self.internal_tx.clone();
        let session = rc.session.clone();
        tokio::spawn(async move {
            let result = guest_call::call(&channel, &shared.message_ids, &method, Some(&params)).await;
            let _ = tx.send(Internal::Forwarded { id, session, result });
        });
        Step::Wait(RootWait::Io)
    }

    fn create_target(&mut self, rc: &RootCommand) -> Step {
        #[derive(Deserialize)]
        struct Params {
            #[serde(default)]
            url: String,
            #[serde(default)]
            background: bool,
            focus: Option<bool>,
        }
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(params) = self.params_or_fail::<Params>(rc) else { return Step::Done };
        // Chromium: `focus` when given, else a foreground target is focused.
        let focus = params.focus.unwrap_or(!params.background);
        let raw_url = params.url;
        let context = match self.split_context(&rc.cmd) {
            Ok((_, context)) => context,
            // Chromium's target handler words it its own way (chromium-bidi matches these words).
            Err(ContextParamError::Unknown(asked)) => {
                self.fail(id, session, SERVER_ERROR, &format!("Failed to find browser context with id {asked}"));
                return Step::Done;
            }
            Err(e) => {
                self.fail(id, session, INVALID_PARAMS, &e.to_string());
                return Step::Done;
            }
        };
        let raw_url = if raw_url.trim().is_empty() { "about:blank".to_string() } else { raw_url };
        let url = match self.shared.guests.normalize_url(&raw_url) {
            Ok(url) => url,
            Err(e) => {
                self.fail(id, session, SERVER_ERROR, &format!("denied url: {e}"));
                return Step::Done;
            }
        };
        let guests = self.shared.guests.clone();
        let tx = self.internal_tx.clone();
        let session = rc.session.clone();
        tokio::spawn(async move {
            let result = tokio::task::spawn_blocking(move || {
                let guest = guests.open(&url, context.as_ref())?;
                if focus {
                    guests.focus_page(&guest);
                }
                Ok(guest)
            })
            .await
            .unwrap_or_else(|_| Err(GuestError::new("opening the browser node panicked")));
            let _ = tx.send(Internal::Opened { id, session, result });
        });
        Step::Wait(RootWait::Io)
    }

    /// Focuses the guest's node; the reply follows once it is done, so the page has focus by then.
    fn activate(&mut self, rc: &RootCommand, guest: GuestId) -> Step {
        let guests = self.shared.guests.clone();
        let tx = self.internal_tx.clone();
        let (id, session) = (rc.cmd.id, rc.session.clone());
        tokio::spawn(async move {
            // A panic in the app's activate is not the client's business: answer anyway.
            let _ = tokio::task::spawn_blocking(move || guests.activate(&guest)).await;
            let _ = tx.send(Internal::Activated { id, session });
        });
        Step::Wait(RootWait::Io)
    }

    fn close_target(&mut self, rc: &RootCommand) -> Step {
        let Some(guest) = (match self.guest_by_target_param(rc) {
            Ok(g) => g,
            Err(step) => return step,
        }) else {
            return Step::Done;
        };
        let guests = self.shared.guests.clone();
        let tx = self.internal_tx.clone();
        let (id, session) = (rc.cmd.id, rc.session.clone());
        tokio::spawn(async move {
            let g = guest.clone();
            let result = tokio::task::spawn_blocking(move || guests.close(&g))
                .await
                .unwrap_or_else(|_| Err(GuestError::new("closing the browser node panicked")));
            let _ = tx.send(Internal::Closed { id, session, guest, result });
        });
        Step::Wait(RootWait::Io)
    }

    /// Handles a background completion.
    pub(crate) fn on_internal(&mut self, internal: Internal) {
        match internal {
            Internal::Learned { guest, channel_key, result } => self.learned(guest, channel_key, result),
            Internal::Forwarded { id, session, result } => {
                match result {
                    Ok(raw) => self.send(protocol::raw_reply(id, session.as_deref(), Some(&raw), None)),
                    Err(CallError::Remote(error)) => match RawValue::from_string(error) {
                        Ok(raw) => self.send(protocol::raw_reply(id, session.as_deref(), None, Some(&raw))),
                        Err(_) => self.fail(id, session.as_deref(), SERVER_ERROR, "The browser answered with an error"),
                    },
                    Err(e) => self.fail(id, session.as_deref(), SERVER_ERROR, &e.to_string()),
                }
                self.finish_wait();
            }
            Internal::Opened { id, session, result } => match result {
                Ok(guest) => {
                    self.browser.closed.remove(&guest);
                    self.browser.crashed.remove(&guest);
                    if self.browser.known.contains_key(&guest) {
                        self.finish_create(id, session, guest);
                    } else {
                        self.probe(&guest);
                        self.browser.wait = Some(RootWait::Created { id, session, guest });
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Target.createTarget: the app could not open a browser node");
                    self.fail(id, session.as_deref(), SERVER_ERROR, &format!("Failed to open a browser node: {e}"));
                    self.finish_wait();
                }
            },
            Internal::ContextCreated { id, session, result, dispose_on_detach } => {
                self.context_created(id, session, result, dispose_on_detach)
            }
            Internal::PermissionsSet { id, session, result } => self.permissions_set(id, session, result),
            Internal::ContextDisposed { id, session, context, pages, result } => {
                self.context_disposed(id, session, context, pages, result)
            }
            Internal::Activated { id, session } => {
                self.reply(id, session.as_deref(), json!({}));
                self.finish_wait();
            }
            Internal::Resized { id, session, result } => {
                match result {
                    Ok(()) => self.reply(id, session.as_deref(), json!({})),
                    Err(e) => {
                        self.fail(id, session.as_deref(), SERVER_ERROR, &format!("Failed to resize the window: {e}"))
                    }
                }
                self.finish_wait();
            }
            Internal::Closed { id, session, guest, result } => {
                match result {
                    Ok(()) => {
                        self.browser.closed.insert(guest.clone());
                        // A reply on a session of the closing page must precede that session's detach.
                        let on_own_session = session.as_deref().is_some_and(|s| {
                            matches!(self.sessions.get(s), Some(Session { kind: SessionKind::Page { guest: g, .. }, .. }) if *g == guest)
                        });
                        if on_own_session {
                            self.reply(id, session.as_deref(), json!({"success": true}));
                        }
                        self.drop_guest(&guest, DropReason::Closed);
                        if !on_own_session {
                            self.reply(id, session.as_deref(), json!({"success": true}));
                        }
                    }
                    Err(e) => self.fail(id, session.as_deref(), SERVER_ERROR, &format!("Failed to close target: {e}")),
                }
                self.finish_wait();
            }
        }
    }

    pub(crate) fn finish_wait(&mut self) {
        self.browser.wait = None;
        self.pump_root();
    }

    fn finish_create(&mut self, id: i64, session: Option<String>, guest: GuestId) {
        match self.browser.known_info(&guest) {
            Some(info) => {
                // targetCreated, then attachedToTarget, then the reply (Playwright needs the attach first).
                self.announce_one(&guest, &info);
                self.reply(id, session.as_deref(), json!({"targetId": info.target_id}));
            }
            None => self.fail(
                id,
                session.as_deref(),
                SERVER_ERROR,
                "The new browser node did not answer on its DevTools channel",
            ),
        }
        self.finish_wait();
    }

    fn learned(&mut self, guest: GuestId, key: usize, result: Result<PageInfo, CallError>) {
        self.browser.probing.remove(&guest);
        let still_live = self.shared.guests.channel(&guest).is_some_and(|c| channel_key(&c) == key);
        match result {
            Ok(info) if still_live => {
                self.browser.probe_failed.remove(&guest);
                let previous = self.browser.known.insert(guest.clone(), Known { info: info.clone(), channel_key: key });
                let changed = previous.is_some_and(|p| p.info != info);
                if changed && self.browser.discovers(&guest) {
                    let target_info = self.page_target_info(&guest, &info, self.has_sessions(&guest));
                    self.emit("Target.targetInfoChanged", &json!({"targetInfo": target_info}), None);
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(guest = %guest, error = %e, "guest did not describe itself");
                self.browser.probe_failed.insert(guest.clone(), Instant::now());
            }
        }
        match self.browser.wait.take() {
            Some(RootWait::Created { id, session, guest: created }) if created == guest => {
                self.finish_create(id, session, created)
            }
            Some(RootWait::Targets) if self.browser.probing.is_empty() => self.pump_root(),
            other => self.browser.wait = other,
        }
        if self.browser.wait.is_none() {
            self.announce_live();
        }
    }

    /// Asks a guest for its target info in the background.
    fn probe(&mut self, guest: &GuestId) {
        if !self.browser.probing.insert(guest.clone()) {
            return;
        }
        let tx = self.internal_tx.clone();
        let Some(channel) = self.shared.guests.channel(guest) else {
            let _ = tx.send(Internal::Learned { guest: guest.clone(), channel_key: 0, result: Err(CallError::Gone) });
            return;
        };
        let key = channel_key(&channel);
        let shared = self.shared.clone();
        let guest = guest.clone();
        tokio::spawn(async move {
            let result = guest_call::page_info(&channel, &shared.message_ids).await;
            let _ = tx.send(Internal::Learned { guest, channel_key: key, result });
        });
    }

    /// True when every live guest's target info is known (or recently failed); starts probes otherwise.
    fn targets_ready(&mut self) -> bool {
        let now = Instant::now();
        let mut ready = true;
        for guest in self.shared.guests.list() {
            if self.browser.excluded(&guest) || self.browser.known.contains_key(&guest) {
                continue;
            }
            if self.browser.probe_failed.get(&guest).is_some_and(|t| now.duration_since(*t) < PROBE_RETRY) {
                continue;
            }
            ready = false;
            self.probe(&guest);
        }
        ready
    }

    /// Live guests with known target info, in the app's order.
    fn live_known(&self) -> Vec<(GuestId, PageInfo)> {
        self.shared
            .guests
            .list()
            .into_iter()
            .filter(|g| !self.browser.excluded(g))
            .filter_map(|g| self.browser.known_info(&g).map(|info| (g, info)))
            .collect()
    }

    /// Tells the client about live pages it has not heard of (targetCreated / auto-attach).
    fn announce_live(&mut self) {
        if !self.browser.discover && !self.browser.auto_attach {
            return;
        }
        for (guest, info) in self.live_known() {
            self.announce_one(&guest, &info);
        }
    }

    fn announce_one(&mut self, guest: &GuestId, info: &PageInfo) {
        if self.browser.discover && self.browser.announced.insert(guest.clone()) {
            let target_info = self.page_target_info(guest, info, self.has_sessions(guest));
            self.emit("Target.targetCreated", &json!({"targetInfo": target_info}), None);
        }
        if self.browser.auto_attach && self.browser.auto_attached.insert(guest.clone()) {
            let owner = self.browser.auto_attach_owner.clone();
            if self.attach(guest, info, owner).is_none() {
                self.browser.auto_attached.remove(guest);
            }
        }
    }

    /// Forgets a guest at browser level (targetDestroyed if the client discovered it).
    pub(crate) fn browser_forget(&mut self, guest: &GuestId) {
        let known = self.browser.known.remove(guest);
        if self.browser.announced.remove(guest) && self.browser.discover {
            if let Some(k) = known {
                self.emit("Target.targetDestroyed", &json!({"targetId": k.info.target_id}), None);
            }
        }
        self.browser.auto_attached.remove(guest);
        self.browser.probe_failed.remove(guest);
    }

    /// The 500 ms poll: departures, replaced browsers, crashes, recoveries, newcomers, fresh URLs/titles.
    pub(crate) fn on_poll(&mut self) {
        self.watch_workers();
        let live: Vec<GuestId> = self.shared.guests.list();
        let live_set: HashSet<&GuestId> = live.iter().collect();
        let mut tracked: HashSet<GuestId> = self.browser.known.keys().cloned().collect();
        tracked.extend(self.linked_guests());
        tracked.extend(self.browser.announced.iter().cloned());
        for guest in tracked {
            let channel = if live_set.contains(&guest) { self.shared.guests.channel(&guest) } else { None };
            let Some(channel) = channel else {
                self.drop_guest(&guest, DropReason::Gone);
                continue;
            };
            let key = channel_key(&channel);
            let replaced = self.browser.known.get(&guest).is_some_and(|k| k.channel_key != key)
                || self.linked_channel_key(&guest).is_some_and(|k| k != key);
            if replaced {
                self.drop_guest(&guest, DropReason::Gone);
            } else if channel.crashed() && !self.browser.crashed.contains(&guest) {
                self.guest_crashed(&guest);
            }
        }
        let guests = self.shared.guests.clone();
        self.browser.closed.retain(|g| live_set.contains(g));
        self.browser.crashed.retain(|g| live_set.contains(g) && guests.channel(g).is_some_and(|c| c.crashed()));
        self.browser.probe_failed.retain(|g, _| live_set.contains(g));
        if self.browser.discover || self.browser.auto_attach {
            self.targets_ready();
            if self.browser.wait.is_none() {
                self.announce_live();
            }
        }
        if self.browser.discover {
            // Keeps Puppeteer's target.url() fresh.
            let announced: Vec<GuestId> = self.browser.announced.iter().cloned().collect();
            for guest in announced {
                self.probe(&guest);
            }
        }
    }
}
