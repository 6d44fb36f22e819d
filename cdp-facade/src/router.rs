//! Message routing for one CDP client. A client command is parsed and
//! routed: browser-level methods (on the root, a browser session, or a page
//! session where [`BrowserMethod`] allows) to the emulated browser, whose
//! [`Effect`]s the router applies in order; page-session commands to the
//! guest's DevTools channel under facade-allocated ids; child-session
//! commands (iframes, workers) through with their own session ids. Replies
//! come back re-addressed to the client's id and session, guest events are
//! fanned out to the guest's sessions, and what concerns the browser
//! (crashes, workers) is handed to it.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::browser::{BrowserClient, EmulatedBrowser};
use crate::browser_methods::BrowserMethod;
use crate::dialogs::{self, AnnouncedDialogs};
use crate::downloads::DownloadNotice;
use crate::effect::{ClientView, Effect};
use crate::guest::{GuestError, GuestId, SinkEvent};
use crate::jobs::{self, Completion};
use crate::links::Links;
use crate::protocol::{self, ClientCommand, GuestEnvelope, INVALID_PARAMS, SERVER_ERROR, SESSION_NOT_FOUND};
use crate::sessions::{Session, SessionKind, Sessions};
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
    /// Completions of the emulated browser's background work.
    pub completions: UnboundedReceiver<Completion>,
}

/// Who is waiting for a guest's reply to a facade id.
enum Pending {
    /// A client command: reply with its id on its session.
    Client { client_id: i64, session: Option<String>, guest: GuestId },
    /// The facade's own message; an error reply goes to the emulated browser.
    Internal { guest: GuestId },
}

/// All routing state of one client connection; dropped (after [`Router::shutdown`]) when it ends.
pub(crate) struct Router {
    shared: Arc<Shared>,
    out: UnboundedSender<Outgoing>,
    completions: UnboundedSender<Completion>,
    sessions: Sessions,
    links: Links,
    pending: HashMap<i64, Pending>,
    /// The emulated browser (one per client for now) and this client's side of it.
    browser: EmulatedBrowser,
    client: BrowserClient,
    /// Guests whose page announced a JavaScript dialog still open.
    dialogs: AnnouncedDialogs,
    close: Option<(u16, &'static str)>,
}

impl Router {
    /// A router writing to `out`, and the inputs the socket loop must feed back into it.
    pub(crate) fn new(shared: Arc<Shared>, out: UnboundedSender<Outgoing>) -> (Self, RouterInputs) {
        let (guest_tx, guest_rx) = mpsc::unbounded_channel();
        let (completions_tx, completions_rx) = mpsc::unbounded_channel();
        let browser = EmulatedBrowser::new(shared.env.clone());
        let router = Self {
            shared,
            out,
            completions: completions_tx,
            sessions: Sessions::default(),
            links: Links::new(guest_tx),
            pending: HashMap::new(),
            browser,
            client: BrowserClient::default(),
            dialogs: AnnouncedDialogs::default(),
            close: None,
        };
        (router, RouterInputs { guest: guest_rx, completions: completions_rx })
    }

    /// Queues one message for the client.
    fn send(&self, text: String) {
        let _ = self.out.send(Outgoing::Text(text));
    }

    /// The close the router was asked for, if any.
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
            self.browser_command(cmd, None);
            return;
        };
        match self.sessions.get(&session_id).cloned() {
            Some(Session { kind: SessionKind::Browser, .. }) => self.browser_command(cmd, Some(session_id)),
            Some(Session { kind: SessionKind::Page { guest, .. }, .. }) => self.page_command(cmd, session_id, guest),
            None => match self.sessions.child(&session_id).map(|c| c.guest.clone()) {
                Some(guest) => {
                    let effects = self.browser.session_used(
                        &mut self.client,
                        ClientView { sessions: &self.sessions, links: &self.links },
                        &session_id,
                    );
                    self.apply(effects);
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
                self.browser_command(cmd, Some(session_id))
            }
            "Page.handleJavaScriptDialog" => self.answer_dialog(&cmd, &session_id, &guest),
            "Page.captureScreenshot" => {
                self.shared.env.guests.paint_for_client(&guest);
                self.forward(safe_for_guest(cmd), &guest, None, Some(session_id))
            }
            "Page.startScreencast" | "Page.screencastFrameAck" => {
                self.shared.env.guests.paint_for_client(&guest);
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
                self.links.note_page_auto_attach(&guest, on);
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
        let guests = self.shared.env.guests.clone();
        let result = guests.answer_dialog(guest, answer.accept, answer.prompt_text.as_deref());
        if result.is_ok() || !self.dialogs.is_open(guest) {
            return self.send(reply(cmd.id, session_id, result));
        }
        // Announced but not yet held by the app: answered as soon as it is (see `dialogs`).
        let (guest, out, id, session) = (guest.clone(), self.out.clone(), cmd.id, session_id.to_string());
        tokio::spawn(async move {
            let result = dialogs::answer_when_held(guests, guest, answer.accept, answer.prompt_text).await;
            let _ = out.send(Outgoing::Text(reply(id, &session, result)));
        });
    }

    /// Sends a client command to a guest under a fresh facade id; the reply goes back on `reply_session`.
    fn forward(
        &mut self,
        cmd: ClientCommand,
        guest: &GuestId,
        guest_session: Option<String>,
        reply_session: Option<String>,
    ) {
        let Some(channel) = self.links.channel(guest) else {
            self.send(protocol::error_reply(
                Some(cmd.id),
                reply_session.as_deref(),
                SESSION_NOT_FOUND,
                "Session with given id not found.",
            ));
            return;
        };
        let id = self.shared.env.message_ids.next();
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

    /// Sends a command of the router's own to a subscribed guest root; its reply is dropped.
    fn send_own(&mut self, guest: &GuestId, method: &str, params: &Value) {
        if self.links.is_linked(guest) {
            let id = self.shared.env.message_ids.next();
            self.send_internal(id, guest, method, params);
        }
    }

    /// Sends a facade-internal command under message `id` to a subscribed
    /// guest root; false when it could not be sent.
    fn send_internal(&mut self, id: i64, guest: &GuestId, method: &str, params: &Value) -> bool {
        let Some(channel) = self.links.channel(guest) else { return false };
        let params = RawValue::from_string(params.to_string()).ok();
        self.pending.insert(id, Pending::Internal { guest: guest.clone() });
        if channel.send(&protocol::command(id, method, params.as_deref(), None)).is_err() {
            self.pending.remove(&id);
            return false;
        }
        true
    }

    /// Handles one message (or a crash notice) from a subscribed guest.
    pub(crate) fn on_guest(&mut self, tag: u64, event: SinkEvent) {
        let Some(guest) = self.links.guest_of(tag).cloned() else { return };
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
                        let effects = self.browser.internal_failed(
                            &mut self.client,
                            ClientView { sessions: &self.sessions, links: &self.links },
                            id,
                            Some(error.get()),
                        );
                        self.apply(effects);
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
            "Target.targetCreated" | "Target.targetInfoChanged" | "Target.targetDestroyed" => {
                match self.browser.on_watcher_event(
                    &mut self.client,
                    ClientView { sessions: &self.sessions, links: &self.links },
                    guest,
                    method,
                    params,
                ) {
                    Some(effects) => self.apply(effects),
                    None => self.fan_out(guest, raw),
                }
            }
            "Target.attachedToTarget" => {
                let Some(a) = params.and_then(parse_attached) else { return };
                let view = ClientView { sessions: &self.sessions, links: &self.links };
                if let Some(effects) =
                    self.browser.worker_attached(&mut self.client, view, guest, &a.session_id, &a.target_id, raw)
                {
                    return self.apply(effects);
                }
                let primary = self.sessions.pages_of(guest).first().cloned();
                let visible = self.sessions.add_child(a.session_id.clone(), guest.clone(), a.target_id, true);
                match primary {
                    Some(primary) if visible => self.send(protocol::with_session(raw, &primary)),
                    _ => {
                        // A re-announcement of a child the client already has (or nobody to tell): release it.
                        self.send_own(guest, "Target.detachFromTarget", &json!({"sessionId": a.session_id}));
                    }
                }
            }
            "Target.detachedFromTarget" => {
                let Some(sid) = params.and_then(parse_detached) else { return };
                if let Some(effects) = self.browser.worker_detached(
                    &mut self.client,
                    ClientView { sessions: &self.sessions, links: &self.links },
                    &sid,
                    raw,
                ) {
                    return self.apply(effects);
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
            _ => self.fan_out(guest, raw),
        }
    }

    /// A guest's own event, to each of its page sessions.
    fn fan_out(&self, guest: &GuestId, raw: &str) {
        for session in self.sessions.pages_of(guest) {
            self.send(protocol::with_session(raw, session));
        }
    }

    fn guest_crashed(&mut self, guest: &GuestId) {
        let effects = self.browser.guest_crashed(
            &mut self.client,
            ClientView { sessions: &self.sessions, links: &self.links },
            guest,
        );
        self.apply(effects);
    }

    /// Records whether this client emulates focus in `guest`, telling the app on a change.
    fn focus_emulated(&mut self, guest: &GuestId, on: bool) {
        if self.links.set_focus_emulated(guest, on) {
            self.shared.env.guests.emulate_focus(guest, on);
        }
    }

    /// Ends the subscription to a guest; with `tidy`, first releases its child sessions and page-level auto-attach.
    fn unlink(&mut self, guest: &GuestId, tidy: bool) {
        if tidy {
            for child in self.sessions.children_of(guest) {
                self.send_own(guest, "Target.detachFromTarget", &json!({"sessionId": child}));
            }
            if self.links.page_auto_attach(guest) {
                // Otherwise new iframes would wait forever for a debugger that is gone.
                self.send_own(
                    guest,
                    "Target.setAutoAttach",
                    &json!({"autoAttach": false, "waitForDebuggerOnStart": false, "flatten": true}),
                );
            }
            for (method, params) in reset_on_release() {
                self.send_own(guest, method, &params);
            }
        }
        self.sessions.forget_children(guest);
        self.dialogs.forget(guest);
        if self.links.is_linked(guest) {
            if self.links.focus_emulated(guest) {
                self.shared.env.guests.emulate_focus(guest, false);
            }
            self.links.unlink(guest);
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

    /// Fails every command still waiting for a reply on a session.
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

    /// A browser-level command: to the emulated browser, its effects applied.
    fn browser_command(&mut self, cmd: ClientCommand, session: Option<String>) {
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.handle(&mut self.client, view, cmd, session);
        self.apply(effects);
        self.resume_browser();
    }

    /// Runs the browser-level commands that queued while one waited, each after its predecessor's effects.
    fn resume_browser(&mut self) {
        loop {
            let view = ClientView { sessions: &self.sessions, links: &self.links };
            let Some(effects) = self.browser.resume(&mut self.client, view) else { break };
            self.apply(effects);
        }
    }

    /// Does what the emulated browser asked, in order.
    fn apply(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Send(text) => self.send(text),
                Effect::Close(code, reason) => {
                    self.close.get_or_insert((code, reason));
                }
                Effect::Link { guest, channel } => self.links.link(guest, channel),
                Effect::AddPage { session_id, guest, target_id, parent } => {
                    self.sessions.add_page(session_id, guest, target_id, parent)
                }
                Effect::AddBrowserSession { session_id, parent } => self.sessions.add_browser(session_id, parent),
                Effect::RemoveSession(id) => {
                    self.sessions.remove(&id);
                }
                Effect::AddChild { session_id, guest, target_id } => {
                    self.sessions.add_child(session_id, guest, target_id, false);
                }
                Effect::RemoveChild(id) => {
                    self.sessions.remove_child(&id);
                }
                Effect::FailPendingFor { guest, message } => self.fail_pending_for(&guest, message),
                Effect::FailPendingOn { session_id, message } => self.fail_pending_on(&session_id, message),
                Effect::Release { guest, tidy } => self.unlink(&guest, tidy),
                Effect::ToGuest { guest, id, method, params } => {
                    if !self.send_internal(id, &guest, method, &params) {
                        let effects = self.browser.internal_failed(
                            &mut self.client,
                            ClientView { sessions: &self.sessions, links: &self.links },
                            id,
                            None,
                        );
                        self.apply(effects);
                    }
                }
                Effect::Forward { cmd, guest, reply_session } => self.forward(cmd, &guest, None, reply_session),
                Effect::Run(job) => jobs::start(job, self.browser.env(), &self.completions),
            }
        }
    }

    /// Background work of the emulated browser finished.
    pub(crate) fn on_completion(&mut self, completion: Completion) {
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.on_completion(&mut self.client, view, completion);
        self.apply(effects);
        self.resume_browser();
    }

    /// The 500 ms poll (or the app rang: its guests changed).
    pub(crate) fn on_poll(&mut self) {
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.on_poll(&mut self.client, view);
        self.apply(effects);
    }

    /// A download notice from the app.
    pub(crate) fn on_download(&mut self, notice: DownloadNotice) {
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.on_download(&self.client, view, notice);
        self.apply(effects);
    }

    /// Fresh-state cleanup when the client goes: what it set is undone,
    /// child sessions detached, page auto-attach off, subscriptions dropped.
    pub(crate) fn shutdown(&mut self) {
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.release(&mut self.client, view);
        self.apply(effects);
        for guest in self.links.guests() {
            self.unlink(&guest, true);
        }
        self.pending.clear();
        self.sessions = Sessions::default();
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

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
