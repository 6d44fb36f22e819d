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

use crossbeam_channel::{bounded, unbounded, Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
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
    Malformed(String),
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
    rx: Receiver<Result<Reply, DevToolsError>>,
}

impl PendingReply {
    /// Blocks until the reply arrives or `timeout` passes.
    pub fn wait(self, timeout: Duration) -> Result<Reply, DevToolsError> {
        match self.rx.recv_timeout(timeout) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => Err(DevToolsError::Timeout { method: self.method, timeout }),
            Err(RecvTimeoutError::Disconnected) => Err(DevToolsError::Closed("channel dropped".into())),
        }
    }

    /// The underlying receiver, for `select!` over several replies.
    pub fn receiver(&self) -> &Receiver<Result<Reply, DevToolsError>> {
        &self.rx
    }
}

struct Pending {
    method: String,
    tx: Sender<Result<Reply, DevToolsError>>,
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
}

impl Default for DevToolsChannel {
    fn default() -> Self {
        Self::new()
    }
}

impl DevToolsChannel {
    /// A channel with no browser attached yet; sends are queued until [`attach`](Self::attach).
    pub fn new() -> Self {
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
        crate::engine::devtools_settled(self.outstanding.swap(0, Ordering::AcqRel));
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
        let bytes = serde_json::to_vec(&Value::Object(msg)).map_err(|e| DevToolsError::Malformed(e.to_string()))?;
        let (tx, rx) = bounded(1);
        // Record before sending: the reply may arrive inside send_raw.
        self.pending.lock().insert(id, Pending { method: method.to_string(), tx });
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

    /// Number of commands still waiting for a reply.
    pub fn pending_count(&self) -> usize {
        self.pending.lock().len()
    }

    /// Feeds one raw message from the browser into the channel.
    pub fn deliver(&self, raw: &[u8]) {
        self.deliver_raw(raw);
        let msg: Value = match serde_json::from_slice(raw) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, len = raw.len(), "unparseable DevTools message dropped");
                return;
            }
        };
        if let Some(id) = msg.get("id").and_then(Value::as_i64) {
            self.answered();
            let Some(p) = self.pending.lock().remove(&id) else {
                tracing::debug!(id, "DevTools reply for an unknown id");
                return;
            };
            let reply = match msg.get("error") {
                Some(e) => Err(ProtocolError {
                    code: e.get("code").and_then(Value::as_i64).unwrap_or(-32000),
                    message: e.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_string(),
                    data: e.get("data").map(|d| d.as_str().map(str::to_string).unwrap_or_else(|| d.to_string())),
                }),
                None => Ok(msg.get("result").cloned().unwrap_or_else(|| json!({}))),
            };
            let _ = p.tx.send(Ok(reply));
            return;
        }
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            tracing::debug!("DevTools message with neither id nor method dropped");
            return;
        };
        let event = DevToolsEvent {
            method: method.to_string(),
            params: msg.get("params").cloned().unwrap_or_else(|| json!({})),
            session_id: msg.get("sessionId").and_then(Value::as_str).map(str::to_string),
        };
        let mut subs = self.subscribers.lock();
        subs.retain(|s| s.send(event.clone()).is_ok());
    }
}

impl DevToolsChannel {
    /// Counted before sending: the reply may arrive inside the send.
    fn sent(&self) {
        self.outstanding.fetch_add(1, Ordering::AcqRel);
        crate::engine::devtools_sent();
    }

    fn answered(&self) {
        if self.outstanding.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| v.checked_sub(1)).is_ok() {
            crate::engine::devtools_settled(1);
        }
    }

    fn deliver_raw(&self, raw: &[u8]) {
        let sinks: Vec<Arc<dyn RawSink>> = self.raw_sinks.lock().clone();
        if sinks.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(raw);
        let dead: Vec<Arc<dyn RawSink>> = sinks.into_iter().filter(|s| !s.message(&text)).collect();
        if !dead.is_empty() {
            self.raw_sinks.lock().retain(|s| !dead.iter().any(|d| Arc::ptr_eq(s, d)));
        }
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

    #[test]
    fn timeout_names_the_method() {
        let (ch, _fake) = setup();
        let err = ch.call("Never.answered", json!({}), Duration::from_millis(10)).unwrap_err();
        assert!(err.to_string().contains("Never.answered"));
    }
}
