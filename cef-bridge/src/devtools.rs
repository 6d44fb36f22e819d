//! The DevTools channel of one browser: send CDP messages from any thread, get
//! their replies and subscribe to their events.
//!
//! CEF hands the app raw protocol messages through a DevTools message observer.
//! This module owns everything above that: id allocation (one counter per
//! channel, so several users of one browser never collide), the pending-reply
//! table, event fan-out, and failing every pending command at once when the
//! renderer dies or the browser closes.
//!
//! Re-entrancy matters: CEF delivers `Target.*` and `Browser.*` replies *inside*
//! the send call. So a pending entry is recorded before sending and no lock is
//! held across [`RawSender::send_raw`].
//!
//! Messages arrive on CEF's UI thread, screenshots among them (several MB). A
//! message is routed by reading only its `id` or `method` from a borrowed parse
//! ([`Envelope`]); the rest stays text. Raw sinks get the text as it came, a
//! caller's reply travels as the text of its `result` or `error` and is parsed
//! into a `Value` by [`PendingReply::wait`] on the caller's thread.

use crate::pump::Pump;
use crossbeam_channel::{bounded, unbounded, Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Default deadline of [`DevToolsChannel::call`].
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a DevTools command did not produce a result.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DevToolsError {
    /// The protocol answered with an error object.
    #[error("{method}: {message} (code {code})")]
    Protocol {
        /// Method that failed.
        method: String,
        /// CDP error code (e.g. -32601 method not found, -32001 session not found).
        code: i64,
        /// CDP error message.
        message: String,
        /// Optional extra detail from the protocol.
        data: Option<String>,
    },
    /// No reply arrived within the deadline.
    #[error("{method}: no DevTools reply within {timeout:?}")]
    Timeout {
        /// Method that timed out.
        method: String,
        /// The deadline that passed.
        timeout: Duration,
    },
    /// The browser's renderer process died or the browser closed.
    #[error("DevTools channel closed: {0}")]
    Closed(String),
    /// The message could not be serialised or the reply could not be parsed.
    #[error("malformed DevTools message: {0}")]
    Malformed(#[from] MalformedMessage),
}

/// What was wrong with a DevTools message.
#[derive(Debug, Clone, Error)]
pub enum MalformedMessage {
    /// serde_json could not write it, or read the reply (one nested past its depth limit, say).
    #[error(transparent)]
    Json(Arc<serde_json::Error>),
    /// A reply without what its command answers with.
    #[error("{0}")]
    Incomplete(&'static str),
}

/// serde_json's errors cannot be compared: two that say the same are equal.
impl PartialEq for MalformedMessage {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl From<serde_json::Error> for DevToolsError {
    fn from(e: serde_json::Error) -> Self {
        Self::Malformed(MalformedMessage::Json(Arc::new(e)))
    }
}

/// A protocol error as it travels on the wire (`{"code", "message", "data"?}`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError {
    /// CDP error code.
    pub code: i64,
    /// CDP error message.
    pub message: String,
    /// Optional data string.
    pub data: Option<String>,
}

impl ProtocolError {
    /// The wire form of this error.
    pub fn to_json(&self) -> Value {
        let mut v = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            v["data"] = Value::String(d.clone());
        }
        v
    }
}

/// What a command's reply carried: its `result` object or its `error` object.
pub type Reply = Result<Value, ProtocolError>;

/// A command's reply as it arrived: the JSON text of its `result` or `error`,
/// made into a [`Reply`] by [`parse`](Self::parse) on the reader's thread.
#[derive(Debug)]
pub struct RawReply(ReplyBody);

#[derive(Debug)]
enum ReplyBody {
    /// `result` (None when the reply had neither `result` nor `error`).
    Result(Option<Box<RawValue>>),
    /// `error`, whatever its shape.
    Error(Box<RawValue>),
}

impl RawReply {
    /// The reply's `result` (an empty object when absent) or its `error`.
    pub fn parse(&self) -> Result<Reply, DevToolsError> {
        let value = |raw: &RawValue| -> Result<Value, DevToolsError> { Ok(serde_json::from_str(raw.get())?) };
        Ok(match &self.0 {
            ReplyBody::Result(None) => Ok(json!({})),
            ReplyBody::Result(Some(raw)) => Ok(value(raw)?),
            ReplyBody::Error(raw) => {
                let e = value(raw)?;
                Err(ProtocolError {
                    code: e.get("code").and_then(Value::as_i64).unwrap_or(-32000),
                    message: e.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_string(),
                    data: e.get("data").map(|d| d.as_str().map(str::to_string).unwrap_or_else(|| d.to_string())),
                })
            }
        })
    }
}

/// An event sent by the guest (`{"method", "params", "sessionId"?}`).
#[derive(Debug, Clone, PartialEq)]
pub struct DevToolsEvent {
    /// Event name, e.g. `Page.loadEventFired`.
    pub method: String,
    /// Event parameters (an empty object when absent).
    pub params: Value,
    /// Child session the event belongs to (flatten mode), `None` for the page itself.
    pub session_id: Option<String>,
}

/// The lower edge of a channel: hands serialised messages to the browser.
///
/// cef-bridge implements it with `send_dev_tools_message`; tests use a fake.
pub trait RawSender: Send + Sync {
    /// Sends one serialised CDP message. May deliver replies re-entrantly.
    fn send_raw(&self, message: &[u8]);
}

/// A consumer of every raw message of a channel (the CDP facade uses this to
/// relay a guest's traffic verbatim, replies to its own ids included).
pub trait RawSink: Send + Sync {
    /// One raw message (JSON text). Return false to unsubscribe.
    fn message(&self, text: &str) -> bool;
    /// The renderer died: the channel failed its pending commands. Return false to unsubscribe.
    fn renderer_gone(&self) -> bool;
}

/// A reply that has not necessarily arrived yet.
#[derive(Debug)]
pub struct PendingReply {
    method: String,
    rx: Receiver<Result<RawReply, DevToolsError>>,
}

impl PendingReply {
    /// Blocks until the reply arrives or `timeout` passes, and parses it.
    pub fn wait(self, timeout: Duration) -> Result<Reply, DevToolsError> {
        match self.rx.recv_timeout(timeout) {
            Ok(r) => r?.parse(),
            Err(RecvTimeoutError::Timeout) => Err(DevToolsError::Timeout { method: self.method, timeout }),
            Err(RecvTimeoutError::Disconnected) => Err(DevToolsError::Closed("channel dropped".into())),
        }
    }

    /// The underlying receiver, for `select!` over several replies.
    pub fn receiver(&self) -> &Receiver<Result<RawReply, DevToolsError>> {
        &self.rx
    }
}

struct Pending {
    method: String,
    tx: Sender<Result<RawReply, DevToolsError>>,
}

/// A browser's DevTools channel; cheap to clone through `Arc`, usable from any thread.
pub struct DevToolsChannel {
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, Pending>>,
    subscribers: Mutex<Vec<Sender<DevToolsEvent>>>,
    raw_sinks: Mutex<Vec<Arc<dyn RawSink>>>,
    crashed: AtomicBool,
    sender: Mutex<Option<Arc<dyn RawSender>>>,
    /// Messages sent before the browser existed; flushed on attach.
    queued: Mutex<Vec<Vec<u8>>>,
    closed: Mutex<Option<String>>,
    attached: AtomicBool,
    /// Commands (own and raw) sent and not yet answered; keeps the pump eager.
    outstanding: AtomicUsize,
    /// The engine's pump, told of every command sent and settled.
    pump: Arc<Pump>,
    /// Child sessions the channel's own callers keep from raw subscribers.
    private: Mutex<PrivateSessions>,
    /// When the last command (own or raw) was sent: a page someone drives.
    last_sent: Mutex<Option<Instant>>,
    /// When the app itself (not a raw sender such as the CDP facade) last sent a command.
    last_own: Mutex<Option<Instant>>,
}

/// Child sessions opened with [`DevToolsChannel::attach_private`] (the tool
/// runtime reading an out-of-process frame): raw subscribers (the CDP
/// facade's clients) never see them attach, talk or detach.
#[derive(Default)]
struct PrivateSessions {
    /// Targets a private attach is under way to: their `attachedToTarget` is private.
    attaching: Vec<String>,
    sessions: HashSet<String>,
}

impl Default for DevToolsChannel {
    fn default() -> Self {
        Self::new()
    }
}

impl DevToolsChannel {
    /// A channel with no browser attached yet; sends are queued until [`attach`](Self::attach).
    /// Without an engine: its commands in flight keep no pump eager.
    pub fn new() -> Self {
        Self::with_pump(Arc::new(Pump::new(None)))
    }

    /// A channel whose commands in flight keep `pump` eager.
    pub(crate) fn with_pump(pump: Arc<Pump>) -> Self {
        Self {
            next_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::new()),
            subscribers: Mutex::new(Vec::new()),
            raw_sinks: Mutex::new(Vec::new()),
            crashed: AtomicBool::new(false),
            sender: Mutex::new(None),
            queued: Mutex::new(Vec::new()),
            closed: Mutex::new(None),
            attached: AtomicBool::new(false),
            outstanding: AtomicUsize::new(0),
            pump,
            private: Mutex::new(PrivateSessions::default()),
            last_sent: Mutex::new(None),
            last_own: Mutex::new(None),
        }
    }

    /// Connects the channel to its browser and flushes queued messages.
    ///
    /// The sender becomes visible only once the queue is empty under its lock, so
    /// a message sent meanwhile is either queued (and flushed here, in order) or
    /// sent after everything queued before it; no lock is held while sending.
    pub fn attach(&self, sender: Arc<dyn RawSender>) {
        loop {
            let batch = {
                let mut queued = self.queued.lock();
                if queued.is_empty() {
                    *self.sender.lock() = Some(sender.clone());
                    self.attached.store(true, Ordering::SeqCst);
                    return;
                }
                std::mem::take(&mut *queued)
            };
            for m in batch {
                sender.send_raw(&m);
            }
        }
    }

    /// Sends `bytes` now, or queues them while no browser is attached. The
    /// choice is made under the queue's lock (see [`attach`](Self::attach)).
    fn dispatch(&self, bytes: Vec<u8>) {
        let sender = {
            let mut queued = self.queued.lock();
            match self.sender.lock().clone() {
                Some(sender) => sender,
                None => {
                    queued.push(bytes);
                    return;
                }
            }
        };
        sender.send_raw(&bytes);
    }

    /// Disconnects the channel (browser closed) and fails every pending command.
    pub fn detach(&self, reason: &str) {
        *self.sender.lock() = None;
        self.attached.store(false, Ordering::SeqCst);
        *self.closed.lock() = Some(reason.to_string());
        self.fail_pending(reason);
    }

    /// Fails every pending command with `reason` (renderer crash) but keeps the
    /// channel usable: a reload brings a new renderer behind the same browser.
    pub fn fail_pending(&self, reason: &str) {
        self.notify_gone();
        self.pump.devtools_settled(self.outstanding.swap(0, Ordering::AcqRel));
        let drained: Vec<Pending> = self.pending.lock().drain().map(|(_, p)| p).collect();
        for p in drained {
            let _ = p.tx.send(Err(DevToolsError::Closed(format!("{reason} (while waiting for {})", p.method))));
        }
    }

    fn notify_gone(&self) {
        self.crashed.store(true, Ordering::SeqCst);
        let sinks: Vec<Arc<dyn RawSink>> = self.raw_sinks.lock().clone();
        let dead: Vec<usize> = sinks.iter().enumerate().filter(|(_, s)| !s.renderer_gone()).map(|(i, _)| i).collect();
        if !dead.is_empty() {
            let mut g = self.raw_sinks.lock();
            g.retain(|s| !dead.iter().any(|&i| Arc::ptr_eq(s, &sinks[i])));
        }
    }

    /// True after the renderer died (or the browser closed) and until a new
    /// document loads through a reload.
    pub fn crashed(&self) -> bool {
        self.crashed.load(Ordering::SeqCst)
    }

    /// Marks the renderer as alive again (after a reload brought a new one).
    pub fn renderer_restored(&self) {
        self.crashed.store(false, Ordering::SeqCst);
    }

    /// Sends a complete CDP message verbatim. The caller owns its id, which must
    /// stay out of this channel's own range (ids from 1 upward, far below 2^30);
    /// its reply reaches raw sinks only.
    pub fn send_text(&self, message: &str) -> Result<(), DevToolsError> {
        if let Some(reason) = self.closed.lock().clone() {
            return Err(DevToolsError::Closed(reason));
        }
        self.sent();
        self.dispatch(message.as_bytes().to_vec());
        Ok(())
    }

    /// Adds a sink that sees every raw message from now on.
    pub fn subscribe_raw(&self, sink: Arc<dyn RawSink>) {
        self.raw_sinks.lock().push(sink);
    }

    /// True once a browser is attached and not closed.
    pub fn is_attached(&self) -> bool {
        self.attached.load(Ordering::SeqCst)
    }

    /// Sends `method` (optionally on a child session) and returns its pending reply.
    pub fn request(
        &self,
        method: &str,
        params: Value,
        session_id: Option<&str>,
    ) -> Result<PendingReply, DevToolsError> {
        if let Some(reason) = self.closed.lock().clone() {
            return Err(DevToolsError::Closed(reason));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut msg = Map::new();
        msg.insert("id".into(), Value::from(id));
        msg.insert("method".into(), Value::String(method.to_string()));
        if !params.is_null() {
            msg.insert("params".into(), params);
        }
        if let Some(s) = session_id {
            msg.insert("sessionId".into(), Value::String(s.to_string()));
        }
        let bytes = serde_json::to_vec(&Value::Object(msg))?;
        let (tx, rx) = bounded(1);
        // Record before sending: the reply may arrive inside send_raw.
        self.pending.lock().insert(id, Pending { method: method.to_string(), tx });
        *self.last_own.lock() = Some(Instant::now());
        self.sent();
        self.dispatch(bytes);
        Ok(PendingReply { method: method.to_string(), rx })
    }

    /// Sends `method` and waits for its result; protocol errors become [`DevToolsError::Protocol`].
    pub fn call(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, DevToolsError> {
        match self.request(method, params, None)?.wait(timeout)? {
            Ok(v) => Ok(v),
            Err(e) => Err(DevToolsError::Protocol {
                method: method.to_string(),
                code: e.code,
                message: e.message,
                data: e.data,
            }),
        }
    }

    /// Subscribes to every event of this browser (page and child sessions).
    /// Dropping the receiver unsubscribes.
    pub fn subscribe(&self) -> Receiver<DevToolsEvent> {
        let (tx, rx) = unbounded();
        self.subscribers.lock().push(tx);
        rx
    }

    /// True while a command waits for its reply or one was sent within
    /// `recent`: a page a client or an agent is driving (kept painting at its
    /// full rate wherever its node is).
    pub fn driven_within(&self, recent: Duration) -> bool {
        self.outstanding.load(Ordering::Acquire) > 0 || self.last_sent.lock().is_some_and(|t| t.elapsed() < recent)
    }

    /// Like [`driven_within`](Self::driven_within), for the app's own commands
    /// only ([`request`](Self::request), [`call`](Self::call): an agent's tool
    /// operation), not raw messages ([`send_text`](Self::send_text): a CDP client's).
    pub fn own_driven_within(&self, recent: Duration) -> bool {
        !self.pending.lock().is_empty() || self.last_own.lock().is_some_and(|t| t.elapsed() < recent)
    }

    /// Number of commands still waiting for a reply.
    pub fn pending_count(&self) -> usize {
        self.pending.lock().len()
    }

    /// Attaches a child session (flatten mode) to `target_id` that raw
    /// subscribers never see; its id, for [`request`](Self::request).
    pub fn attach_private(&self, target_id: &str, timeout: Duration) -> Result<String, DevToolsError> {
        self.private.lock().attaching.push(target_id.to_owned());
        let r = self.call("Target.attachToTarget", json!({"targetId": target_id, "flatten": true}), timeout);
        let mut private = self.private.lock();
        if let Some(at) = private.attaching.iter().position(|t| t == target_id) {
            private.attaching.remove(at);
        }
        let id = r?
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(DevToolsError::Malformed(MalformedMessage::Incomplete("Target.attachToTarget: no sessionId")))?;
        private.sessions.insert(id.clone());
        Ok(id)
    }

    /// Detaches a session of [`attach_private`](Self::attach_private) (only
    /// forgets it once the renderer died: nothing would answer).
    pub fn detach_private(&self, session_id: &str, timeout: Duration) {
        if !self.crashed() {
            let _ = self.call("Target.detachFromTarget", json!({"sessionId": session_id}), timeout);
        }
        self.private.lock().sessions.remove(session_id);
    }

    /// Whether a message belongs to a private session (its traffic, its attach or detach event).
    fn is_private(&self, text: &str) -> bool {
        let mut private = self.private.lock();
        if private.attaching.is_empty() && private.sessions.is_empty() {
            return false;
        }
        let Ok(msg) = Envelope::parse(text) else { return false };
        if let Some(session) = msg.session_id() {
            return private.sessions.contains(&session);
        }
        let method = msg.method();
        if !matches!(method.as_deref(), Some("Target.attachedToTarget" | "Target.detachedFromTarget")) {
            return false;
        }
        let Ok(params) = msg.params() else { return false };
        let Some(session) = params.get("sessionId").and_then(Value::as_str) else { return false };
        let target = params.pointer("/targetInfo/targetId").and_then(Value::as_str).unwrap_or("");
        if method.as_deref() == Some("Target.attachedToTarget") && private.attaching.iter().any(|t| t == target) {
            private.sessions.insert(session.to_owned());
            return true;
        }
        private.sessions.contains(session)
    }

    /// Feeds one raw message from the browser into the channel.
    pub fn deliver(&self, raw: &[u8]) {
        let text = std::str::from_utf8(raw);
        if !text.is_ok_and(|t| self.is_private(t)) {
            self.deliver_raw(raw, text.ok());
        }
        let msg = match text.map_err(|e| e.to_string()).and_then(|t| Envelope::parse(t).map_err(|e| e.to_string())) {
            Ok(m) => m,
            Err(error) => {
                tracing::warn!(%error, len = raw.len(), "unparseable DevTools message dropped");
                return;
            }
        };
        if let Some(id) = msg.reply_id() {
            self.answered();
            let Some(p) = self.pending.lock().remove(&id) else {
                tracing::debug!(id, "DevTools reply for an unknown id");
                return;
            };
            let _ = p.tx.send(Ok(msg.reply()));
            return;
        }
        let Some(method) = msg.method() else {
            tracing::debug!("DevTools message with neither id nor method dropped");
            return;
        };
        // Nobody listens: the params need not be built (checked without
        // holding the lock while they are).
        if self.subscribers.lock().is_empty() {
            return;
        }
        let params = match msg.params() {
            Ok(p) => p,
            // Only nesting beyond serde_json's depth limit gets here (the text is valid JSON).
            Err(error) => {
                tracing::warn!(%error, len = raw.len(), "unparseable DevTools message dropped");
                return;
            }
        };
        let event = DevToolsEvent { method, params, session_id: msg.session_id() };
        self.subscribers.lock().retain(|s| s.send(event.clone()).is_ok());
    }
}

impl DevToolsChannel {
    /// Counted before sending: the reply may arrive inside the send.
    fn sent(&self) {
        *self.last_sent.lock() = Some(Instant::now());
        self.outstanding.fetch_add(1, Ordering::AcqRel);
        self.pump.devtools_sent();
    }

    fn answered(&self) {
        if self.outstanding.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| v.checked_sub(1)).is_ok() {
            self.pump.devtools_settled(1);
        }
    }

    /// Hands the message to every raw sink (`text`: `raw` when it is valid UTF-8).
    fn deliver_raw(&self, raw: &[u8], text: Option<&str>) {
        let sinks: Vec<Arc<dyn RawSink>> = self.raw_sinks.lock().clone();
        if sinks.is_empty() {
            return;
        }
        let text = text.map_or_else(|| String::from_utf8_lossy(raw), std::borrow::Cow::Borrowed);
        let dead: Vec<Arc<dyn RawSink>> = sinks.into_iter().filter(|s| !s.message(&text)).collect();
        if !dead.is_empty() {
            self.raw_sinks.lock().retain(|s| !dead.iter().any(|d| Arc::ptr_eq(s, d)));
        }
    }
}

/// The members of a DevTools message that routing reads, borrowed from its
/// text: nothing is copied or built into a `Value` until a consumer asks.
///
/// It reads like `serde_json::Value` would (a later duplicate key wins, a
/// message that is JSON but no object has no members), so routing is the same
/// as parsing the whole message and looking at its `id` and `method`.
#[derive(Debug, Default)]
pub(crate) struct Envelope<'a> {
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    session_id: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    /// Reads a message's members (the text is scanned once, values are not built).
    pub(crate) fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The id of a reply: an integer `id` that fits an `i64` (else it is no reply).
    pub(crate) fn reply_id(&self) -> Option<i64> {
        self.id.and_then(|raw| serde_json::from_str::<i64>(raw.get()).ok())
    }

    /// The `method` of an event, when it is a string.
    pub(crate) fn method(&self) -> Option<String> {
        self.method.and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// The `sessionId`, when it is a string.
    pub(crate) fn session_id(&self) -> Option<String> {
        self.session_id.and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// The event's `params` as a `Value` (an empty object when absent).
    pub(crate) fn params(&self) -> Result<Value, serde_json::Error> {
        self.params.map_or_else(|| Ok(json!({})), |raw| serde_json::from_str(raw.get()))
    }

    /// The reply's `error`, else its `result`, as owned text.
    pub(crate) fn reply(&self) -> RawReply {
        RawReply(match self.error {
            Some(e) => ReplyBody::Error(e.to_owned()),
            None => ReplyBody::Result(self.result.map(RawValue::to_owned)),
        })
    }
}

/// The member names routing cares about.
enum Member {
    Id,
    Method,
    SessionId,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Names;
        impl Visitor<'_> for Names {
            type Value = Member;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "sessionId" => Member::SessionId,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        d.deserialize_str(Names)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = Envelope<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a DevTools message")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'a>, A::Error> {
                let mut m = Envelope::default();
                while let Some(name) = map.next_key::<Member>()? {
                    let slot = match name {
                        Member::Id => &mut m.id,
                        Member::Method => &mut m.method,
                        Member::SessionId => &mut m.session_id,
                        Member::Params => &mut m.params,
                        Member::Result => &mut m.result,
                        Member::Error => &mut m.error,
                        Member::Other => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    // `null` included: a present member, as in a `Value`.
                    *slot = Some(map.next_value::<&'de RawValue>()?);
                }
                Ok(m)
            }
            // JSON that is not an object: a message without members.
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Envelope<'a>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Envelope::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Envelope<'a>, E> {
                Ok(Envelope::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Envelope<'a>, E> {
                Ok(Envelope::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Envelope<'a>, E> {
                Ok(Envelope::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Envelope<'a>, E> {
                Ok(Envelope::default())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Envelope<'a>, E> {
                Ok(Envelope::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Envelope<'a>, E> {
                Ok(Envelope::default())
            }
        }
        d.deserialize_any(Members(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Weak;

    struct Collect(Mutex<Vec<String>>, AtomicBool);
    impl RawSink for Collect {
        fn message(&self, text: &str) -> bool {
            self.0.lock().push(text.to_string());
            true
        }
        fn renderer_gone(&self) -> bool {
            self.1.store(true, Ordering::SeqCst);
            true
        }
    }

    #[test]
    fn raw_sinks_see_everything_and_learn_of_crashes() {
        let (ch, fake) = setup();
        let sink = Arc::new(Collect(Mutex::new(vec![]), AtomicBool::new(false)));
        ch.subscribe_raw(sink.clone());
        ch.send_text(r#"{"id":1073741824,"method":"Runtime.evaluate","params":{"expression":"1"}}"#).unwrap();
        assert_eq!(fake.sent.lock().last().unwrap()["id"], 1073741824);
        ch.deliver(br#"{"id":1073741824,"result":{"result":{"type":"number","value":1}}}"#);
        ch.deliver(br#"{"method":"Page.frameNavigated","params":{}}"#);
        assert_eq!(sink.0.lock().len(), 2);
        // The channel's own reply still reaches its caller, and the sink sees it too.
        ch.call("Echo", json!({}), Duration::from_secs(1)).unwrap();
        assert_eq!(sink.0.lock().len(), 3);
        ch.fail_pending("render process terminated");
        assert!(sink.1.load(Ordering::SeqCst));
        assert!(ch.crashed());
        ch.renderer_restored();
        assert!(!ch.crashed());
    }

    /// A fake browser: answers `Echo` synchronously (like CEF's Target.* replies),
    /// records everything else for the test to answer later.
    struct FakeBrowser {
        channel: Mutex<Weak<DevToolsChannel>>,
        sent: Mutex<Vec<Value>>,
    }

    impl RawSender for FakeBrowser {
        fn send_raw(&self, message: &[u8]) {
            let v: Value = serde_json::from_slice(message).unwrap();
            if v["method"] == "Echo" {
                let reply = json!({"id": v["id"], "result": {"echo": v["params"]}});
                if let Some(c) = self.channel.lock().upgrade() {
                    c.deliver(reply.to_string().as_bytes());
                }
            }
            self.sent.lock().push(v);
        }
    }

    fn setup() -> (Arc<DevToolsChannel>, Arc<FakeBrowser>) {
        let ch = Arc::new(DevToolsChannel::new());
        let fake = Arc::new(FakeBrowser { channel: Mutex::new(Arc::downgrade(&ch)), sent: Mutex::new(vec![]) });
        ch.attach(fake.clone());
        (ch, fake)
    }

    #[test]
    fn a_page_is_driven_while_a_command_waits_and_shortly_after() {
        let (ch, _fake) = setup();
        assert!(!ch.driven_within(Duration::from_secs(10)), "nothing sent yet");
        // Left unanswered: driven whatever the window.
        let pending = ch.request("Runtime.evaluate", json!({"expression": "1"}), None).unwrap();
        assert!(ch.driven_within(Duration::ZERO));
        ch.deliver(br#"{"id":1,"result":{}}"#);
        pending.wait(Duration::from_secs(1)).unwrap().unwrap();
        assert!(ch.driven_within(Duration::from_secs(10)), "answered just now");
        assert!(!ch.driven_within(Duration::ZERO), "nothing waits and the window is over");
    }

    #[test]
    fn a_raw_sender_drives_the_page_but_not_as_the_app() {
        let (ch, _fake) = setup();
        ch.send_text(r#"{"id":1073741824,"method":"Runtime.evaluate"}"#).unwrap();
        assert!(ch.driven_within(Duration::from_secs(10)));
        assert!(!ch.own_driven_within(Duration::from_secs(10)), "a CDP client's message is not the app's");
        let pending = ch.request("Runtime.evaluate", json!({"expression": "1"}), None).unwrap();
        assert!(ch.own_driven_within(Duration::ZERO), "the app's command waits");
        ch.deliver(br#"{"id":1,"result":{}}"#);
        pending.wait(Duration::from_secs(1)).unwrap().unwrap();
        assert!(ch.own_driven_within(Duration::from_secs(10)), "answered just now");
        assert!(!ch.own_driven_within(Duration::ZERO), "nothing waits and the window is over");
    }

    #[test]
    fn reentrant_reply_inside_send_is_not_lost() {
        let (ch, _fake) = setup();
        let v = ch.call("Echo", json!({"x": 1}), Duration::from_secs(1)).unwrap();
        assert_eq!(v, json!({"echo": {"x": 1}}));
        assert_eq!(ch.pending_count(), 0);
    }

    #[test]
    fn ids_never_collide_between_threads() {
        let (ch, fake) = setup();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let ch = ch.clone();
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        ch.call("Echo", json!({}), Duration::from_secs(5)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut ids: Vec<i64> = fake.sent.lock().iter().map(|v| v["id"].as_i64().unwrap()).collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert_eq!(n, 1600);
    }

    #[test]
    fn private_sessions_are_hidden_from_raw_sinks() {
        let ch = Arc::new(DevToolsChannel::new());
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        struct Keep(Arc<Mutex<Vec<String>>>);
        impl RawSink for Keep {
            fn message(&self, text: &str) -> bool {
                self.0.lock().push(text.to_owned());
                true
            }
            fn renderer_gone(&self) -> bool {
                true
            }
        }
        ch.subscribe_raw(Arc::new(Keep(seen.clone())));
        // A browser that announces the attach before replying, as Chromium does.
        struct Browser(std::sync::Weak<DevToolsChannel>);
        impl RawSender for Browser {
            fn send_raw(&self, message: &[u8]) {
                let v: Value = serde_json::from_slice(message).unwrap();
                let Some(ch) = self.0.upgrade() else { return };
                if v["method"] == "Target.attachToTarget" {
                    let target = v["params"]["targetId"].as_str().unwrap();
                    ch.deliver(json!({"method": "Target.attachedToTarget", "params": {"sessionId": format!("S-{target}"), "targetInfo": {"targetId": target}}}).to_string().as_bytes());
                    ch.deliver(
                        json!({"id": v["id"], "result": {"sessionId": format!("S-{target}")}}).to_string().as_bytes(),
                    );
                } else {
                    ch.deliver(json!({"id": v["id"], "result": {}}).to_string().as_bytes());
                }
            }
        }
        ch.attach(Arc::new(Browser(Arc::downgrade(&ch))));
        let id = ch.attach_private("F1", Duration::from_secs(1)).unwrap();
        assert_eq!(id, "S-F1");
        ch.deliver(br#"{"method":"Runtime.consoleAPICalled","params":{},"sessionId":"S-F1"}"#);
        ch.deliver(
            br#"{"method":"Target.attachedToTarget","params":{"sessionId":"S-F2","targetInfo":{"targetId":"F2"}}}"#,
        );
        ch.deliver(br#"{"method":"Target.detachedFromTarget","params":{"sessionId":"S-F1"}}"#);
        ch.detach_private(&id, Duration::from_secs(1));
        let methods: Vec<String> = seen
            .lock()
            .iter()
            .filter_map(|t| serde_json::from_str::<Value>(t).ok()?["method"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(methods, ["Target.attachedToTarget"], "only the other client's attach is seen");
        assert!(seen.lock().iter().any(|t| t.contains("S-F2")));
    }

    #[test]
    fn protocol_errors_and_session_ids() {
        let (ch, fake) = setup();
        let pending = ch.request("Runtime.evaluate", json!({"expression": "1"}), Some("S1")).unwrap();
        let sent = fake.sent.lock().last().cloned().unwrap();
        assert_eq!(sent["sessionId"], "S1");
        // Chromium puts sessionId after the error: order must not matter.
        let raw = format!(
            r#"{{"id":{},"error":{{"code":-32001,"message":"Session with given id not found."}},"sessionId":"S1"}}"#,
            sent["id"]
        );
        ch.deliver(raw.as_bytes());
        let reply = pending.wait(Duration::from_secs(1)).unwrap();
        assert_eq!(reply.unwrap_err().code, -32001);
    }

    #[test]
    fn events_fan_out_and_dropped_subscribers_are_pruned() {
        let (ch, _fake) = setup();
        let a = ch.subscribe();
        let b = ch.subscribe();
        ch.deliver(br#"{"method":"Page.loadEventFired","params":{"timestamp":1}}"#);
        assert_eq!(a.recv().unwrap().method, "Page.loadEventFired");
        assert_eq!(b.recv().unwrap().method, "Page.loadEventFired");
        drop(b);
        ch.deliver(br#"{"method":"Target.attachedToTarget","params":{},"sessionId":"C1"}"#);
        let e = a.recv().unwrap();
        assert_eq!(e.session_id.as_deref(), Some("C1"));
        assert_eq!(ch.subscribers.lock().len(), 1);
    }

    #[test]
    fn commands_in_flight_are_counted_until_answered_or_failed() {
        let (ch, fake) = setup();
        // The fake echoes "Echo" at once (inside the send); other methods wait.
        ch.call("Echo", json!({}), Duration::from_secs(1)).unwrap();
        assert_eq!(ch.outstanding.load(Ordering::SeqCst), 0, "a re-entrant reply settles its command");
        let _slow = ch.request("Page.captureScreenshot", json!({}), None).unwrap();
        ch.send_text(r#"{"id":1073741900,"method":"Runtime.evaluate","params":{"expression":"1"}}"#).unwrap();
        assert_eq!(ch.outstanding.load(Ordering::SeqCst), 2);
        ch.deliver(br#"{"id":1073741900,"result":{}}"#);
        ch.deliver(br#"{"method":"Page.loadEventFired","params":{}}"#);
        assert_eq!(ch.outstanding.load(Ordering::SeqCst), 1, "raw replies count, events do not");
        ch.fail_pending("render process terminated");
        assert_eq!(ch.outstanding.load(Ordering::SeqCst), 0);
        ch.deliver(br#"{"id":99999,"result":{}}"#);
        assert_eq!(ch.outstanding.load(Ordering::SeqCst), 0, "a stray reply never goes below zero");
        assert!(!fake.sent.lock().is_empty());
    }

    #[test]
    fn crash_fails_pending_at_once_and_close_refuses_new_work() {
        let (ch, _fake) = setup();
        let p = ch.request("Page.navigate", json!({"url": "about:blank"}), None).unwrap();
        ch.fail_pending("render process terminated");
        assert!(matches!(p.wait(Duration::from_secs(5)), Err(DevToolsError::Closed(_))));
        // Still usable after a crash (reload brings a new renderer).
        assert!(ch.request("Page.reload", Value::Null, None).is_ok());
        ch.detach("browser closed");
        assert!(matches!(ch.request("Page.reload", Value::Null, None), Err(DevToolsError::Closed(_))));
    }

    #[test]
    fn sends_before_attach_are_queued_then_flushed() {
        let ch = Arc::new(DevToolsChannel::new());
        let p = ch.request("Echo", json!({"q": true}), None).unwrap();
        let fake = Arc::new(FakeBrowser { channel: Mutex::new(Arc::downgrade(&ch)), sent: Mutex::new(vec![]) });
        ch.attach(fake.clone());
        assert_eq!(p.wait(Duration::from_secs(1)).unwrap().unwrap(), json!({"echo": {"q": true}}));
    }

    #[test]
    fn sends_racing_attach_are_each_delivered_once_and_in_order() {
        for round in 0..200 {
            let ch = Arc::new(DevToolsChannel::new());
            let fake = Arc::new(FakeBrowser { channel: Mutex::new(Arc::downgrade(&ch)), sent: Mutex::new(vec![]) });
            let senders: Vec<_> = (0..3)
                .map(|t| {
                    let ch = ch.clone();
                    std::thread::spawn(move || {
                        for i in 0..50 {
                            ch.request("Seq", json!({"t": t, "i": i}), None).unwrap();
                        }
                    })
                })
                .collect();
            ch.attach(fake.clone());
            for s in senders {
                s.join().unwrap();
            }
            let sent = fake.sent.lock();
            assert_eq!(sent.len(), 150, "round {round}: a message sent while attaching was lost or doubled");
            for t in 0..3 {
                let order: Vec<i64> =
                    sent.iter().filter(|v| v["params"]["t"] == t).map(|v| v["params"]["i"].as_i64().unwrap()).collect();
                assert_eq!(order, (0..50).collect::<Vec<_>>(), "round {round}: thread {t}'s messages out of order");
            }
        }
    }

    /// A 5 MB screenshot-sized body.
    fn big_result(id: i64) -> String {
        let data = "iVBORw0KGgo".repeat((5 << 20) / 11);
        format!(r#"{{"id":{id},"result":{{"data":"{data}"}},"sessionId":"S1"}}"#)
    }

    #[test]
    fn a_multi_megabyte_reply_is_routed_by_id_from_borrowed_text() {
        let text = big_result(1073741824);
        assert!(text.len() > 5_000_000);
        // Routing reads the id from a borrowed parse: the result is a slice of
        // the message itself, no Value and no copy.
        let envelope = Envelope::parse(&text).unwrap();
        assert_eq!(envelope.reply_id(), Some(1073741824));
        let result = envelope.result.expect("a result");
        assert!(text.as_bytes().as_ptr_range().contains(&result.get().as_ptr()), "borrowed from the message");
        assert_eq!(result.get().len(), text.len() - r#"{"id":1073741824,"result":,"sessionId":"S1"}"#.len());

        // Relayed: the sink gets the message as it came, nothing is pending.
        let (ch, _fake) = setup();
        let sink = Arc::new(Collect(Mutex::new(vec![]), AtomicBool::new(false)));
        ch.subscribe_raw(sink.clone());
        ch.deliver(text.as_bytes());
        assert_eq!(sink.0.lock().as_slice(), std::slice::from_ref(&text));

        // The channel's own command: its caller gets the parsed result.
        let pending = ch.request("Page.captureScreenshot", json!({}), None).unwrap();
        let id = ch.next_id.load(Ordering::SeqCst) - 1;
        ch.deliver(big_result(id).as_bytes());
        let v = pending.wait(Duration::from_secs(1)).unwrap().unwrap();
        assert_eq!(v["data"].as_str().map(str::len), Some(result.get().len() - r#"{"data":""}"#.len()));
    }

    #[test]
    fn routing_reads_members_as_a_value_would() {
        let e = Envelope::parse(r#"{"id":1,"x":{"id":9},"id":2,"error":null,"method":7}"#).unwrap();
        assert_eq!(e.reply_id(), Some(2), "a later duplicate wins, nested ids are not members");
        assert!(e.error.is_some_and(|raw| raw.get() == "null"), "null is present");
        assert_eq!(e.method(), None, "a method that is no string");
        for not_an_id in ["1.0", "-0", "1e2", r#""1""#, "null", "18446744073709551615"] {
            let text = format!(r#"{{"id":{not_an_id},"result":{{}}}}"#);
            assert_eq!(Envelope::parse(&text).unwrap().reply_id(), None, "{not_an_id}");
        }
        let e = Envelope::parse(r#"{"m\u0065thod":"Page.loadEventFired","sessionId":"S","params":[1]}"#).unwrap();
        assert_eq!(e.method().as_deref(), Some("Page.loadEventFired"), "escaped member names");
        assert_eq!((e.session_id().as_deref(), e.params().unwrap()), (Some("S"), json!([1])));
        assert_eq!(Envelope::parse(r#"{"method":"M"}"#).unwrap().params().unwrap(), json!({}));
        for not_an_object in ["[1,2]", "5", r#""id""#, "null", "true"] {
            let e = Envelope::parse(not_an_object).unwrap();
            assert!(e.reply_id().is_none() && e.method().is_none(), "{not_an_object}");
        }
        for junk in ["", "{", r#"{"id":1,}"#, "{} x"] {
            assert!(Envelope::parse(junk).is_err(), "{junk}");
        }
    }

    #[test]
    fn messages_nested_past_the_depth_limit() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let (ch, fake) = setup();
        let events = ch.subscribe();
        ch.deliver(format!(r#"{{"method":"M","params":{deep}}}"#).as_bytes());
        assert!(events.try_recv().is_err(), "an event is dropped, as when the whole message was parsed");
        // A reply is routed by its id; its caller learns the result is unreadable.
        let p = ch.request("X", json!({}), None).unwrap();
        let id = fake.sent.lock().last().unwrap()["id"].clone();
        ch.deliver(format!(r#"{{"id":{id},"result":{deep}}}"#).as_bytes());
        assert_eq!(ch.pending_count(), 0);
        assert!(matches!(p.wait(Duration::from_secs(1)), Err(DevToolsError::Malformed(_))));
    }

    #[test]
    fn an_unreadable_reply_keeps_serde_json_s_error_as_its_source() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let (ch, fake) = setup();
        let p = ch.request("X", json!({}), None).unwrap();
        let id = fake.sent.lock().last().unwrap()["id"].clone();
        ch.deliver(format!(r#"{{"id":{id},"result":{deep}}}"#).as_bytes());
        let err = p.wait(Duration::from_secs(1)).unwrap_err();
        let json = serde_json::from_str::<Value>(&deep).unwrap_err();
        assert_eq!(err.to_string(), format!("malformed DevTools message: {json}"), "the message is as before");
        let DevToolsError::Malformed(MalformedMessage::Json(source)) = &err else { panic!("{err:?}") };
        assert_eq!(source.to_string(), json.to_string());
        let chained = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(chained, Some(json.to_string()), "its source says what serde_json said");
        assert_eq!(err.clone(), err);
    }

    #[test]
    fn error_replies_keep_their_shape() {
        let (ch, fake) = setup();
        let reply = |raw: &str| {
            let p = ch.request("X", json!({}), None).unwrap();
            let id = fake.sent.lock().last().unwrap()["id"].clone();
            ch.deliver(raw.replace("ID", &id.to_string()).as_bytes());
            p.wait(Duration::from_secs(1)).unwrap()
        };
        let e = reply(r#"{"id":ID,"error":{"code":-32000,"message":"m","data":{"k":1}}}"#).unwrap_err();
        assert_eq!((e.code, e.message.as_str(), e.data.as_deref()), (-32000, "m", Some(r#"{"k":1}"#)));
        let e = reply(r#"{"id":ID,"result":{"a":1},"error":null}"#).unwrap_err();
        assert_eq!((e.code, e.message.as_str(), e.data), (-32000, "unknown error", None), "an error wins, even null");
        assert_eq!(reply(r#"{"id":ID,"result":null}"#).unwrap(), Value::Null);
        assert_eq!(reply(r#"{"id":ID}"#).unwrap(), json!({}));
    }

    #[test]
    fn timeout_names_the_method() {
        let (ch, _fake) = setup();
        let err = ch.call("Never.answered", json!({}), Duration::from_millis(10)).unwrap_err();
        assert!(err.to_string().contains("Never.answered"));
    }
}
