//! What the emulated browser hands back to the router: [`Effect`]s, in the
//! order the client must see them. A browser-level handler works in a
//! [`Turn`]: the browser's env, a read-only [`ClientView`] of the client's
//! connection (its sessions and subscriptions, as the effects of this turn
//! will leave them), and the effects so far. Also the command a turn runs
//! ([`RootCommand`]) and how far it got ([`Step`]).

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::browser_env::BrowserEnv;
use crate::guest::{GuestChannel, GuestId};
use crate::jobs::Job;
use crate::links::Links;
use crate::protocol::{self, ClientCommand, INVALID_PARAMS};
use crate::sessions::{Child, Session, SessionKind, Sessions};

/// One thing the router must do for the emulated browser.
pub(crate) enum Effect {
    /// A reply or an event for the client (JSON text).
    Send(String),
    /// Close the client's connection after what is queued (`Browser.close`).
    Close(u16, &'static str),
    /// Subscribe to a guest's channel (the client was not subscribed).
    Link { guest: GuestId, channel: Arc<dyn GuestChannel> },
    /// Register a page session of a subscribed guest.
    AddPage { session_id: String, guest: GuestId, target_id: String, parent: Option<String> },
    /// Register a browser session.
    AddBrowserSession { session_id: String, parent: Option<String> },
    /// Forget a facade session (page or browser).
    RemoveSession(String),
    /// Register a child session a guest attached for the browser (a worker).
    AddChild { session_id: String, guest: GuestId, target_id: String },
    /// Forget a child session.
    RemoveChild(String),
    /// Fail every command still waiting on a guest, in the order the client sent them.
    FailPendingFor { guest: GuestId, message: &'static str },
    /// Fail every command still waiting for a reply on a session.
    FailPendingOn { session_id: String, message: &'static str },
    /// End the subscription to a guest; with `tidy`, first undo what the
    /// client set in it (child sessions, auto-attach, domains).
    Release { guest: GuestId, tidy: bool },
    /// A command of the facade's own to a subscribed guest under message
    /// `id`; an error reply, or a message that cannot be sent, goes back to
    /// the browser (`EmulatedBrowser::internal_failed`).
    ToGuest { guest: GuestId, id: i64, method: &'static str, params: Value },
    /// A client command for a subscribed guest's page; its reply answers the client on `reply_session`.
    Forward { cmd: ClientCommand, guest: GuestId, reply_session: Option<String> },
    /// Background work; its [`crate::jobs::Completion`] comes back to the browser.
    Run(Job),
}

impl fmt::Debug for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::Send(text) => write!(f, "Send({text})"),
            Effect::Close(code, reason) => write!(f, "Close({code}, {reason})"),
            Effect::Link { guest, .. } => write!(f, "Link({guest})"),
            Effect::AddPage { session_id, guest, parent, .. } => {
                write!(f, "AddPage({session_id}, {guest}, {parent:?})")
            }
            Effect::AddBrowserSession { session_id, parent } => {
                write!(f, "AddBrowserSession({session_id}, {parent:?})")
            }
            Effect::RemoveSession(id) => write!(f, "RemoveSession({id})"),
            Effect::AddChild { session_id, guest, target_id } => {
                write!(f, "AddChild({session_id}, {guest}, {target_id})")
            }
            Effect::RemoveChild(id) => write!(f, "RemoveChild({id})"),
            Effect::FailPendingFor { guest, message } => write!(f, "FailPendingFor({guest}, {message})"),
            Effect::FailPendingOn { session_id, message } => write!(f, "FailPendingOn({session_id}, {message})"),
            Effect::Release { guest, tidy } => write!(f, "Release({guest}, tidy: {tidy})"),
            Effect::ToGuest { guest, id, method, params } => write!(f, "ToGuest({guest}, {id}, {method}, {params})"),
            Effect::Forward { cmd, guest, reply_session } => {
                write!(f, "Forward({}, {}, {guest}, {reply_session:?})", cmd.id, cmd.method)
            }
            Effect::Run(job) => write!(f, "Run({job:?})"),
        }
    }
}

/// A browser-level command and where its reply goes (root, or a browser/page session).
#[derive(Debug)]
pub(crate) struct RootCommand {
    /// The command.
    pub(crate) cmd: ClientCommand,
    /// Where its reply goes.
    pub(crate) session: Option<String>,
}

/// What a client's browser-level commands wait for.
#[derive(Debug)]
pub(crate) enum RootWait {
    /// Target infos of live guests (the front command is run again when they are in).
    Targets,
    /// Background work whose completion finishes the command.
    Io,
    /// A created guest's target info, to finish `Target.createTarget`.
    Created { id: i64, session: Option<String>, guest: GuestId },
}

/// What running a browser-level command left to do.
#[derive(Debug)]
pub(crate) enum Step {
    /// Answered.
    Done,
    /// It must run again once every live guest's target info is known.
    NeedTargets,
    /// Its answer waits for this.
    Wait(RootWait),
}

/// What the emulated browser may read of one client's connection.
#[derive(Clone, Copy)]
pub(crate) struct ClientView<'a> {
    /// The client's sessions.
    pub(crate) sessions: &'a Sessions,
    /// The guests the client is subscribed to.
    pub(crate) links: &'a Links,
}

/// One run of the emulated browser for one client: what it reads and the effects it hands back.
pub(crate) struct Turn<'a> {
    /// The browser's guests and ids.
    pub(crate) env: Arc<BrowserEnv>,
    view: ClientView<'a>,
    /// Guests subscribed to in this turn.
    linked: HashSet<GuestId>,
    /// Page sessions added in this turn, by guest.
    added: Vec<(GuestId, String)>,
    /// Facade sessions removed in this turn.
    removed: HashSet<String>,
    out: Vec<Effect>,
}

impl<'a> Turn<'a> {
    /// A turn over the client's connection as it stands.
    pub(crate) fn new(env: Arc<BrowserEnv>, view: ClientView<'a>) -> Self {
        Self { env, view, linked: HashSet::new(), added: Vec::new(), removed: HashSet::new(), out: Vec::new() }
    }

    /// The effects of the turn, in order.
    pub(crate) fn into_effects(self) -> Vec<Effect> {
        self.out
    }

    /// Adds an effect.
    pub(crate) fn push(&mut self, effect: Effect) {
        self.out.push(effect);
    }

    /// Queues one message for the client.
    pub(crate) fn send(&mut self, text: String) {
        self.out.push(Effect::Send(text));
    }

    /// A successful reply.
    pub(crate) fn reply(&mut self, id: i64, session: Option<&str>, result: Value) {
        self.send(protocol::value_reply(id, session, &result));
    }

    /// An error reply.
    pub(crate) fn fail(&mut self, id: i64, session: Option<&str>, code: i64, message: &str) {
        self.send(protocol::error_reply(Some(id), session, code, message));
    }

    /// An event, optionally on a session.
    pub(crate) fn event(&mut self, method: &str, params: &Value, session: Option<&str>) {
        self.send(protocol::event(method, params, session));
    }

    /// Background work.
    pub(crate) fn run(&mut self, job: Job) {
        self.out.push(Effect::Run(job));
    }

    /// The command's params as `P`, or None once the command was answered
    /// with an invalid-params error.
    pub(crate) fn params_or_fail<P: serde::de::DeserializeOwned>(&mut self, rc: &RootCommand) -> Option<P> {
        match rc.cmd.params_as::<P>() {
            Ok(p) => Some(p),
            Err(e) => {
                self.fail(rc.cmd.id, rc.session.as_deref(), INVALID_PARAMS, &e.to_string());
                None
            }
        }
    }

    /// Sends a command of the facade's own to a subscribed guest; its message id.
    pub(crate) fn tell_guest(&mut self, guest: &GuestId, method: &'static str, params: Value) -> i64 {
        let id = self.env.message_ids.next();
        self.out.push(Effect::ToGuest { guest: guest.clone(), id, method, params });
        id
    }

    /// Sends a browser-level command to a page's channel; its reply answers the client's command.
    pub(crate) fn call_through(
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
        self.run(Job::Call { id, session: rc.session.clone(), channel, method, params });
        Step::Wait(RootWait::Io)
    }

    /// Whether the client is (or, by this turn, will be) subscribed to the guest.
    pub(crate) fn is_linked(&self, guest: &GuestId) -> bool {
        self.linked.contains(guest) || self.view.links.is_linked(guest)
    }

    /// Subscribes to the guest's channel unless the client is; false if the guest has no channel.
    pub(crate) fn link(&mut self, guest: &GuestId) -> bool {
        if self.is_linked(guest) {
            return true;
        }
        let Some(channel) = self.env.guests.channel(guest) else { return false };
        self.linked.insert(guest.clone());
        self.out.push(Effect::Link { guest: guest.clone(), channel });
        true
    }

    /// The guests the client is subscribed to, as the turn began.
    pub(crate) fn linked_guests(&self) -> Vec<GuestId> {
        self.view.links.guests()
    }

    /// The identity of the channel the client is subscribed to for the guest.
    pub(crate) fn linked_channel_key(&self, guest: &GuestId) -> Option<usize> {
        self.view.links.channel_key(guest)
    }

    /// A facade session by id.
    pub(crate) fn session(&self, id: &str) -> Option<&'a Session> {
        if self.removed.contains(id) {
            return None;
        }
        self.view.sessions.get(id)
    }

    /// The guest a page session belongs to (`None` for the root or a browser session).
    pub(crate) fn page_guest(&self, session: Option<&str>) -> Option<GuestId> {
        match self.session(session?) {
            Some(Session { kind: SessionKind::Page { guest, .. }, .. }) => Some(guest.clone()),
            _ => None,
        }
    }

    /// The page sessions of a guest, primary first.
    pub(crate) fn pages_of(&self, guest: &GuestId) -> Vec<String> {
        let before = self.view.sessions.pages_of(guest).iter().filter(|s| !self.removed.contains(*s));
        let added = self.added.iter().filter(|(g, s)| g == guest && !self.removed.contains(s)).map(|(_, s)| s);
        before.chain(added).cloned().collect()
    }

    /// Whether any page session is attached to the guest.
    pub(crate) fn has_sessions(&self, guest: &GuestId) -> bool {
        !self.pages_of(guest).is_empty()
    }

    /// The sessions attached through a browser session.
    pub(crate) fn attached_through(&self, parent: &str) -> Vec<String> {
        let mut ids = self.view.sessions.attached_through(parent);
        ids.retain(|s| !self.removed.contains(s));
        ids
    }

    /// A child session by id.
    pub(crate) fn child(&self, id: &str) -> Option<&'a Child> {
        self.view.sessions.child(id)
    }

    /// Registers a page session of a subscribed guest.
    pub(crate) fn add_page(&mut self, session_id: String, guest: GuestId, target_id: String, parent: Option<String>) {
        self.added.push((guest.clone(), session_id.clone()));
        self.out.push(Effect::AddPage { session_id, guest, target_id, parent });
    }

    /// Forgets a facade session.
    pub(crate) fn remove_session(&mut self, id: &str) {
        self.removed.insert(id.to_string());
        self.out.push(Effect::RemoveSession(id.to_string()));
    }
}
