//! Session routing for one CDP client: commands on page sessions go to the
//! guest's DevTools channel under facade-allocated ids, replies come back
//! re-addressed to the client's id and session, guest events are fanned out
//! to the guest's sessions, and child sessions (iframes, workers) pass
//! through with their own session ids. Browser-level commands are handed to
//! the emulated browser (`browser.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::browser_methods::BrowserMethod;
use crate::browser_state::{BrowserState, Internal};
use crate::dialogs::{self, AnnouncedDialogs};
use crate::downloads::ClientDownloads;
use crate::guest::{channel_key, GuestChannel, GuestError, GuestId, GuestSink, SinkEvent};
use crate::guest_call::PageInfo;
use crate::protocol::{self, ClientCommand, GuestEnvelope, INVALID_PARAMS, SERVER_ERROR, SESSION_NOT_FOUND};
use crate::sessions::{DropReason, Session, SessionKind, Sessions};
use crate::shared::Shared;

/// What a released guest is told so the next client finds a fresh page.
///
/// A Chromium debugger client that detaches takes its session and all its
/// domain state with it. A guest's DevTools channel is one long-lived session
/// shared by every facade client, so the facade undoes that state itself:
/// otherwise `Runtime.enable` from the next client would be a no-op that
/// reports no execution contexts (Puppeteer's and Playwright's evaluate
/// then hang), and the old client's init scripts, bindings and overrides
/// would stay. `Page.disable` drops init scripts and lifecycle events;
/// `Runtime.disable` drops bindings.
fn reset_on_release() -> Vec<(&'static str, Value)> {
    vec![
        ("Runtime.disable", json!({})),
        ("Page.disable", json!({})),
        ("Network.disable", json!({})),
        ("Fetch.disable", json!({})),
        ("Log.disable", json!({})),
        ("Performance.disable", json!({})),
        ("Audits.disable", json!({})),
        ("Inspector.disable", json!({})),
        ("Debugger.disable", json!({})),
        ("CSS.disable", json!({})),
        ("DOM.disable", json!({})),
        ("Emulation.clearDeviceMetricsOverride", json!({})),
        ("Emulation.setTouchEmulationEnabled", json!({"enabled": false})),
        ("Emulation.setFocusEmulationEnabled", json!({"enabled": false})),
        ("Emulation.setEmulatedMedia", json!({"media": "", "features": []})),
        ("Emulation.setDefaultBackgroundColorOverride", json!({})),
        // The facade's own worker discovery (`workers`), or a page session's.
        ("Target.setDiscoverTargets", json!({"discover": false})),
    ]
}

/// What the router asks the socket writer to do.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// Send one CDP message.
    Text(String),
    /// Send a close frame and stop.
    Close(u16, &'static str),
}

/// The receivers the socket loop polls on behalf of the router.
pub(crate) struct RouterInputs {
    /// Raw guest traffic from every subscribed guest.
    pub guest: UnboundedReceiver<(u64, SinkEvent)>,
    /// Completions of background work (probes, opens, closes, forwarded calls).
    pub internal: UnboundedReceiver<Internal>,
}

/// A subscription to one guest's channel.
struct GuestLink {
    channel: Arc<dyn GuestChannel>,
    tag: u64,
    active: Arc<AtomicBool>,
    /// The client turned on page-level auto-attach in this guest (must be turned off on release).
    page_auto_attach: bool,
    /// The client emulates focus in this guest (the app was told; it is told again on release).
    focus_emulated: bool,
}

/// Who is waiting for a guest's reply to a facade id.
enum Pending {
    /// A client command: reply with its id on its session.
    Client { client_id: i64, session: Option<String>, guest: GuestId },
    /// The facade's own housekeeping; the reply is dropped.
    Internal { guest: GuestId },
}

/// All routing state of one client connection; dropped (after [`Router::shutdown`]) when it ends.
pub(crate) struct Router {
    pub(crate) shared: Arc<Shared>,
    out: UnboundedSender<Outgoing>,
    guest_tx: UnboundedSender<(u64, SinkEvent)>,
    pub(crate) internal_tx: UnboundedSender<Internal>,
    next_tag: u64,
    pub(crate) sessions: Sessions,
    links: HashMap<GuestId, GuestLink>,
    tags: HashMap<u64, GuestId>,
    pending: HashMap<i64, Pending>,
    pub(crate) browser: BrowserState,
    /// Guests whose page announced a JavaScript dialog still open.
    dialogs: AnnouncedDialogs,
    /// Where this client wants downloads and their events.
    pub(crate) downloads: ClientDownloads,
    close: Option<(u16, &'static str)>,
}

impl Router {
    /// A router writing to `out`, and the inputs the socket loop must feed back into it.
    pub(crate) fn new(shared: Arc<Shared>, out: UnboundedSender<Outgoing>) -> (Self, RouterInputs) {
        let (guest_tx, guest_rx) = mpsc::unbounded_channel();
        let (internal_tx, internal_rx) = mpsc::unbounded_channel();
        let router = Self {
            shared,
            out,
            guest_tx,
            internal_tx,
            next_tag: 1,
            sessions: Sessions::default(),
            links: HashMap::new(),
            tags: HashMap::new(),
            pending: HashMap::new(),
            browser: BrowserState::default(),
            dialogs: AnnouncedDialogs::default(),
            downloads: ClientDownloads::default(),
            close: None,
        };
        (router, RouterInputs { guest: guest_rx, internal: internal_rx })
    }

    /// Queues one message for the client.
    pub(crate) fn send(&self, text: String) {
        let _ = self.out.send(Outgoing::Text(text));
    }

    /// Queues an event for the client.
    pub(crate) fn emit(&self, method: &str, params: &Value, session: Option<&str>) {
        self.send(protocol::event(method, params, session));
    }

    /// Asks the socket loop to close the connection after what is queued.
    pub(crate) fn request_close(&mut self, code: u16, reason: &'static str) {
        self.close.get_or_insert((code, reason));
    }

    /// The close the router asked for, if any.
    pub(crate) fn take_close(&mut self) -> Option<(u16, &'static str)> {
        self.close.take()
    }

    fn log_command(&self, cmd: &ClientCommand) {
        if self.shared.config.debug {
            tracing::info!(id = cmd.id, method = %cmd.method, session = cmd.session_id.as_deref().unwrap_or(""), "cdp command");
        }
    }

    /// Handles one text frame from the client.
    pub(crate) fn on_client_text(&mut self, text: &str) {
        let cmd = match ClientCommand::parse(text) {
            Ok(cmd) => cmd,
            Err(bad) => {
                self.send(bad.reply);
                return;
            }
        };
        self.log_command(&cmd);
        let Some(session_id) = cmd.session_id.clone() else {
            self.enqueue_root(cmd, None);
            return;
        };
        match self.sessions.get(&session_id).cloned() {
            Some(Session { kind: SessionKind::Browser, .. }) => self.enqueue_root(cmd, Some(session_id)),
            Some(Session { kind: SessionKind::Page { guest, .. }, .. }) => self.page_command(cmd, session_id, guest),
            None => match self.sessions.child(&session_id).map(|c| c.guest.clone()) {
                Some(guest) => {
                    self.worker_session_used(&session_id);
                    self.forward(safe_for_guest(cmd), &guest, Some(session_id.clone()), Some(session_id))
                }
                None => self.send(protocol::error_reply(
                    Some(cmd.id),
                    Some(&session_id),
                    SESSION_NOT_FOUND,
                    "Session with given id not found.",
                )),
            },
        }
    }

    fn page_command(&mut self, cmd: ClientCommand, session_id: String, guest: GuestId) {
        match cmd.method.as_str() {
            // A guest page is never paused waiting for a debugger; an error here leaves goto() hanging.
            "Runtime.runIfWaitingForDebugger" => {
                self.send(protocol::value_reply(cmd.id, Some(&session_id), &json!({})))
            }
            m if BrowserMethod::parse(m).is_some_and(BrowserMethod::on_page_session) => {
                self.enqueue_root(cmd, Some(session_id))
            }
            "Page.handleJavaScriptDialog" => self.answer_dialog(&cmd, &session_id, &guest),
            "Page.captureScreenshot" => {
                self.shared.guests.paint_for_client(&guest);
                self.forward(safe_for_guest(cmd), &guest, None, Some(session_id))
            }
            "Page.startScreencast" | "Page.screencastFrameAck" => {
                self.shared.guests.paint_for_client(&guest);
                self.forward(cmd, &guest, None, Some(session_id))
            }
            "Emulation.setFocusEmulationEnabled" => {
                #[derive(Deserialize)]
                struct FocusEmulation {
                    enabled: bool,
                }
                if let Ok(p) = cmd.params_as::<FocusEmulation>() {
                    self.focus_emulated(&guest, p.enabled);
                }
                self.forward(cmd, &guest, None, Some(session_id));
            }
            "Target.setAutoAttach" => {
                #[derive(Deserialize)]
                struct AutoAttach {
                    #[serde(rename = "autoAttach", default)]
                    auto_attach: bool,
                }
                let on = cmd.params_as::<AutoAttach>().map(|p| p.auto_attach).unwrap_or(false);
                if let Some(link) = self.links.get_mut(&guest) {
                    link.page_auto_attach |= on;
                }
                self.forward(cmd, &guest, None, Some(session_id));
            }
            _ => self.forward(cmd, &guest, None, Some(session_id)),
        }
    }

    /// `Page.handleJavaScriptDialog`: answered through the app, which holds the
    /// dialog's callback (the page's `Page.javascriptDialogClosed` follows from the guest).
    fn answer_dialog(&mut self, cmd: &ClientCommand, session_id: &str, guest: &GuestId) {
        #[derive(Deserialize)]
        struct Answer {
            accept: bool,
            #[serde(rename = "promptText")]
            prompt_text: Option<String>,
        }
        let answer = match cmd.params_as::<Answer>() {
            Err(e) => {
                return self.send(protocol::error_reply(Some(cmd.id), Some(session_id), INVALID_PARAMS, &e.to_string()))
            }
            Ok(a) => a,
        };
        let reply = |id: i64, session: &str, result: Result<(), GuestError>| match result {
            Ok(()) => protocol::value_reply(id, Some(session), &json!({})),
            Err(e) => protocol::error_reply(Some(id), Some(session), INVALID_PARAMS, &e.to_string()),
        };
        let result = self.shared.guests.answer_dialog(guest, answer.accept, answer.prompt_text.as_deref());
        if result.is_ok() || !self.dialogs.is_open(guest) {
            return self.send(reply(cmd.id, session_id, result));
        }
        // Announced but not yet held by the app: answered as soon as it is (see `dialogs`).
        let (guests, guest, out, id, session) =
            (self.shared.guests.clone(), guest.clone(), self.out.clone(), cmd.id, session_id.to_string());
        tokio::spawn(async move {
            let result = dialogs::answer_when_held(guests, guest, answer.accept, answer.prompt_text).await;
            let _ = out.send(Outgoing::Text(reply(id, &session, result)));
        });
    }

    /// Sends a client command to a guest under a fresh facade id; the reply goes back on `reply_session`.
    pub(crate) fn forward(
        &mut self,
        cmd: ClientCommand,
        guest: &GuestId,
        guest_session: Option<String>,
        reply_session: Option<String>,
    ) {
        let Some(channel) = self.links.get(guest).map(|l| l.channel.clone()) else {
            self.send(protocol::error_reply(
                Some(cmd.id),
                reply_session.as_deref(),
                SESSION_NOT_FOUND,
                "Session with given id not found.",
            ));
            return;
        };
        let id = self.shared.message_ids.next();
        let message = protocol::command(id, &cmd.method, cmd.params.as_deref(), guest_session.as_deref());
        // Recorded before sending: CEF may answer re-entrantly inside send().
        self.pending
            .insert(id, Pending::Client { client_id: cmd.id, session: reply_session.clone(), guest: guest.clone() });
        if let Err(e) = channel.send(&message) {
            self.pending.remove(&id);
            tracing::debug!(guest = %guest, error = %e, "guest refused a message");
            self.send(protocol::error_reply(
                Some(cmd.id),
                reply_session.as_deref(),
                SERVER_ERROR,
                "The browser could not take the message",
            ));
        }
    }

    /// Sends a facade-internal command to a linked guest root; the reply is ignored.
    /// Returns the message's id, or `None` when it could not be sent.
    pub(crate) fn send_internal(&mut self, guest: &GuestId, method: &str, params: &Value) -> Option<i64> {
        let channel = self.links.get(guest).map(|l| l.channel.clone())?;
        let id = self.shared.message_ids.next();
        let params = RawValue::from_string(params.to_string()).ok();
        self.pending.insert(id, Pending::Internal { guest: guest.clone() });
        if channel.send(&protocol::command(id, method, params.as_deref(), None)).is_err() {
            self.pending.remove(&id);
            return None;
        }
        Some(id)
    }

    /// Handles one message (or a crash notice) from a subscribed guest.
    pub(crate) fn on_guest(&mut self, tag: u64, event: SinkEvent) {
        let Some(guest) = self.tags.get(&tag).cloned() else { return };
        match event {
            SinkEvent::Gone => self.guest_crashed(&guest),
            SinkEvent::Message(text) => self.guest_message(&guest, &text),
        }
    }

    fn guest_message(&mut self, guest: &GuestId, text: &str) {
        let Some(env) = GuestEnvelope::parse(text) else {
            tracing::debug!(guest = %guest, "unparsable message from guest dropped");
            return;
        };
        if let Some(id) = env.id {
            // Ids outside our pending map belong to other users of the channel (the app's tool runtime).
            match self.pending.remove(&id) {
                Some(Pending::Client { client_id, session, .. }) => {
                    self.send(protocol::raw_reply(client_id, session.as_deref(), env.result, env.error))
                }
                Some(Pending::Internal { .. }) => {
                    if let Some(error) = env.error {
                        self.worker_attach_failed(id, error.get());
                    }
                }
                None => {}
            }
            return;
        }
        let Some(method) = env.method.as_deref() else { return };
        match env.session_id.as_deref() {
            Some(child) => self.child_event(guest, child, method, env.params, text),
            None => self.page_event(guest, method, env.params, text),
        }
    }

    fn child_event(&mut self, guest: &GuestId, child: &str, method: &str, params: Option<&RawValue>, raw: &str) {
        if self.sessions.child(child).is_none_or(|c| &c.guest != guest) {
            return; // hidden duplicate, or traffic of a session this client never saw
        }
        match method {
            "Target.attachedToTarget" => {
                if let Some(a) = params.and_then(parse_attached) {
                    self.sessions.add_child(a.session_id, guest.clone(), a.target_id, false);
                }
            }
            "Target.detachedFromTarget" => {
                if let Some(sid) = params.and_then(parse_detached) {
                    self.sessions.remove_child(&sid);
                }
            }
            _ => {}
        }
        self.send(raw.to_string());
    }

    fn page_event(&mut self, guest: &GuestId, method: &str, params: Option<&RawValue>, raw: &str) {
        self.dialogs.on_page_event(guest, method);
        match method {
            "Target.targetCreated" | "Target.targetInfoChanged" | "Target.targetDestroyed"
                if self.worker_target_event(guest, method, params) => {}
            "Target.attachedToTarget" => {
                let Some(a) = params.and_then(parse_attached) else { return };
                if self.worker_attached(guest, &a.session_id, &a.target_id, raw) {
                    return;
                }
                let primary = self.sessions.pages_of(guest).first().cloned();
                let visible = self.sessions.add_child(a.session_id.clone(), guest.clone(), a.target_id, true);
                match primary {
                    Some(primary) if visible => self.send(protocol::with_session(raw, &primary)),
                    _ => {
                        // A re-announcement of a child the client already has (or nobody to tell): release it.
                        self.send_internal(guest, "Target.detachFromTarget", &json!({"sessionId": a.session_id}));
                    }
                }
            }
            "Target.detachedFromTarget" => {
                let Some(sid) = params.and_then(parse_detached) else { return };
                if self.worker_detached(&sid, raw) {
                    return;
                }
                if self.sessions.remove_child(&sid) {
                    if let Some(primary) = self.sessions.pages_of(guest).first() {
                        self.send(protocol::with_session(raw, primary));
                    }
                }
            }
            "Inspector.targetCrashed" => self.guest_crashed(guest),
            // Download events belong to the browser session that set the download behaviour.
            m if m.starts_with("Browser.download") => self.send(raw.to_string()),
            _ => {
                for session in self.sessions.pages_of(guest) {
                    self.send(protocol::with_session(raw, session));
                }
            }
        }
    }

    /// Subscribes to a guest's channel if not yet; false if the guest has no channel.
    pub(crate) fn link(&mut self, guest: &GuestId) -> bool {
        if self.links.contains_key(guest) {
            return true;
        }
        let Some(channel) = self.shared.guests.channel(guest) else { return false };
        let tag = self.next_tag;
        self.next_tag += 1;
        let active = Arc::new(AtomicBool::new(true));
        channel.subscribe(GuestSink::new(tag, self.guest_tx.clone(), active.clone()));
        self.links
            .insert(guest.clone(), GuestLink { channel, tag, active, page_auto_attach: false, focus_emulated: false });
        self.tags.insert(tag, guest.clone());
        true
    }

    /// Records whether this client emulates focus in `guest`, telling the app on a change.
    fn focus_emulated(&mut self, guest: &GuestId, on: bool) {
        let Some(link) = self.links.get_mut(guest) else { return };
        if link.focus_emulated != on {
            link.focus_emulated = on;
            self.shared.guests.emulate_focus(guest, on);
        }
    }

    /// Ends the subscription to a guest; with `tidy`, first releases its child sessions and page-level auto-attach.
    fn unlink(&mut self, guest: &GuestId, tidy: bool) {
        if tidy {
            for child in self.sessions.children_of(guest) {
                self.send_internal(guest, "Target.detachFromTarget", &json!({"sessionId": child}));
            }
            if self.links.get(guest).is_some_and(|l| l.page_auto_attach) {
                // Otherwise new iframes would wait forever for a debugger that is gone.
                self.send_internal(
                    guest,
                    "Target.setAutoAttach",
                    &json!({"autoAttach": false, "waitForDebuggerOnStart": false, "flatten": true}),
                );
            }
            for (method, params) in reset_on_release() {
                self.send_internal(guest, method, &params);
            }
        }
        self.sessions.forget_children(guest);
        self.dialogs.forget(guest);
        if let Some(link) = self.links.remove(guest) {
            if link.focus_emulated {
                self.shared.guests.emulate_focus(guest, false);
            }
            link.active.store(false, Ordering::Release);
            self.tags.remove(&link.tag);
        }
        // Nothing answers on a dropped subscription: fail what is still waiting.
        self.fail_pending_for(guest, "Target detached");
    }

    /// Fails every command still waiting on a guest, in the order the client sent them.
    fn fail_pending_for(&mut self, guest: &GuestId, message: &str) {
        let ids: Vec<i64> = self
            .pending
            .iter()
            .filter(|(_, p)| match p {
                Pending::Client { guest: g, .. } | Pending::Internal { guest: g } => g == guest,
            })
            .map(|(id, _)| *id)
            .collect();
        let mut failed: Vec<(i64, Option<String>)> = ids
            .into_iter()
            .filter_map(|id| match self.pending.remove(&id) {
                Some(Pending::Client { client_id, session, .. }) => Some((client_id, session)),
                _ => None,
            })
            .collect();
        failed.sort_by_key(|(client_id, _)| *client_id);
        for (client_id, session) in failed {
            self.send(protocol::error_reply(Some(client_id), session.as_deref(), SERVER_ERROR, message));
        }
    }

    /// Attaches a new facade session to a guest page and announces it on `parent`; `None` if the guest has no channel.
    pub(crate) fn attach(&mut self, guest: &GuestId, info: &PageInfo, parent: Option<String>) -> Option<String> {
        if !self.link(guest) {
            return None;
        }
        let first = self.sessions.pages_of(guest).is_empty();
        let session_id = self.shared.session_ids.next();
        self.sessions.add_page(session_id.clone(), guest.clone(), info.target_id.clone(), parent.clone());
        let target_info = self.page_target_info(guest, info, true);
        self.emit(
            "Target.attachedToTarget",
            &json!({"sessionId": session_id, "targetInfo": target_info, "waitingForDebugger": false}),
            parent.as_deref(),
        );
        if first && self.browser.discovers(guest) {
            self.emit("Target.targetInfoChanged", &json!({"targetInfo": target_info}), None);
        }
        Some(session_id)
    }

    /// Detaches one facade session (announcing it on its parent); releases the guest when it was the last.
    pub(crate) fn detach_session(&mut self, session_id: &str) -> bool {
        let Some(session) = self.sessions.remove(session_id) else { return false };
        match session.kind {
            SessionKind::Page { guest, target_id } => {
                self.fail_pending_on(session_id, "Target detached");
                self.emit(
                    "Target.detachedFromTarget",
                    &json!({"sessionId": session_id, "targetId": target_id}),
                    session.parent.as_deref(),
                );
                if self.sessions.pages_of(&guest).is_empty() {
                    self.unlink(&guest, true);
                    if let Some(info) = self.browser.known_info(&guest) {
                        if self.browser.discovers(&guest) {
                            let target_info = self.page_target_info(&guest, &info, false);
                            self.emit("Target.targetInfoChanged", &json!({"targetInfo": target_info}), None);
                        }
                    }
                }
            }
            SessionKind::Browser => {
                for page in self.sessions.attached_through(session_id) {
                    self.detach_session(&page);
                }
                let target_id = self.shared.browser_target_id.clone();
                self.emit(
                    "Target.detachedFromTarget",
                    &json!({"sessionId": session_id, "targetId": target_id}),
                    session.parent.as_deref(),
                );
            }
        }
        true
    }

    fn fail_pending_on(&mut self, session_id: &str, message: &str) {
        let ids: Vec<i64> = self
            .pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::Client { session: Some(s), .. } if s == session_id))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(Pending::Client { client_id, session, .. }) = self.pending.remove(&id) {
                self.send(protocol::error_reply(Some(client_id), session.as_deref(), SERVER_ERROR, message));
            }
        }
    }

    /// Ends everything the client had on a guest: pending commands fail, sessions detach, the subscription ends.
    pub(crate) fn drop_guest(&mut self, guest: &GuestId, reason: DropReason) {
        self.fail_pending_for(guest, reason.message());
        self.workers_lost(guest);
        for session_id in self.sessions.pages_of(guest).to_vec() {
            if let Some(session) = self.sessions.remove(&session_id) {
                if let SessionKind::Page { target_id, .. } = session.kind {
                    self.emit(
                        "Target.detachedFromTarget",
                        &json!({"sessionId": session_id, "targetId": target_id}),
                        session.parent.as_deref(),
                    );
                }
            }
        }
        // A closed or crashed guest needs no tidying of its DevTools state.
        self.unlink(guest, false);
        self.browser_forget(guest);
    }

    /// The renderer of a linked guest crashed: `Inspector.targetCrashed` on its sessions, then a full drop.
    pub(crate) fn guest_crashed(&mut self, guest: &GuestId) {
        tracing::info!(guest = %guest, "browser node renderer gone; detaching its CDP sessions");
        for session in self.sessions.pages_of(guest).to_vec() {
            self.emit("Inspector.targetCrashed", &json!({}), Some(&session));
        }
        self.drop_guest(guest, DropReason::Crashed);
        self.browser.mark_crashed(guest);
    }

    /// The `targetInfo` of a guest page as the client sees it.
    pub(crate) fn page_target_info(&self, guest: &GuestId, info: &PageInfo, attached: bool) -> Value {
        let opener = self.shared.guests.opener(guest);
        let opener_id = opener.as_ref().and_then(|o| self.browser.known_info(&o.guest)).map(|i| i.target_id);
        let mut target = json!({
            "targetId": info.target_id,
            "type": "page",
            "title": info.title,
            "url": info.url,
            "attached": attached,
            "canAccessOpener": opener_id.is_some() && opener.is_some_and(|o| o.can_access),
            "browserContextId": self.browser_context_of(guest),
        });
        if let Some(id) = opener_id {
            target["openerId"] = json!(id);
        }
        target
    }

    /// Whether the guest's channel is the one we are linked to (false if not linked).
    pub(crate) fn linked_channel_key(&self, guest: &GuestId) -> Option<usize> {
        self.links.get(guest).map(|l| channel_key(&l.channel))
    }

    /// Whether any facade session is attached to the guest.
    pub(crate) fn has_sessions(&self, guest: &GuestId) -> bool {
        !self.sessions.pages_of(guest).is_empty()
    }

    /// Guests the client currently holds sessions or subscriptions on.
    pub(crate) fn linked_guests(&self) -> Vec<GuestId> {
        self.links.keys().cloned().collect()
    }

    /// Fresh-state cleanup when the client goes: child sessions detached, page auto-attach off, subscriptions dropped.
    pub(crate) fn shutdown(&mut self) {
        self.release_download_behavior();
        self.release_permissions();
        self.release_contexts();
        for guest in self.linked_guests() {
            self.unlink(&guest, true);
        }
        self.pending.clear();
        self.sessions = Sessions::default();
        self.browser = BrowserState::default();
    }
}

/// A client command as a guest may take it: a screenshot's params rewritten (see `screenshot`), else unchanged.
fn safe_for_guest(mut cmd: ClientCommand) -> ClientCommand {
    if cmd.method == "Page.captureScreenshot" {
        if let Some(params) = crate::screenshot::guest_params(cmd.params.as_deref()) {
            cmd.params = Some(params);
        }
    }
    cmd
}

struct Attached {
    session_id: String,
    target_id: String,
}

fn parse_attached(params: &RawValue) -> Option<Attached> {
    #[derive(Deserialize)]
    struct TargetInfo {
        #[serde(rename = "targetId")]
        target_id: String,
    }
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "sessionId")]
        session_id: String,
        #[serde(rename = "targetInfo")]
        target_info: TargetInfo,
    }
    let p: Params = serde_json::from_str(params.get()).ok()?;
    Some(Attached { session_id: p.session_id, target_id: p.target_info.target_id })
}

fn parse_detached(params: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "sessionId")]
        session_id: String,
    }
    serde_json::from_str::<Params>(params.get()).ok().map(|p| p.session_id)
}
