//! A [`Transport`] that answers with replies recorded from Chromium, in
//! order, and keeps what it was sent (tests only).

use crate::error::{CdpError, DriveError, TransportError};
use crate::ids::{FrameId, SessionId};
use crate::method::Method;
use crate::transport::{Answer, EventStream, InFlight, RawEvent, Transport};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

/// How the scripted page answers the next command.
pub(crate) enum Script {
    /// The reply message as Chromium sent it, `{"result": …}` or `{"error": …}` (without its id).
    Reply(&'static str),
    /// The same, but only at the `n`th poll.
    After(usize, &'static str),
    /// Never.
    Silent,
    /// The page went away before answering.
    Gone,
}

/// One command as sent: its session, method and parameters.
pub(crate) type Sent = (Option<String>, &'static str, Value);

#[derive(Default)]
pub(crate) struct Scripted {
    script: Mutex<VecDeque<Script>>,
    sent: Mutex<Vec<Sent>>,
    events: Mutex<Vec<RawEvent>>,
}

impl Scripted {
    /// A transport that answers the commands in turn.
    pub fn new(script: impl IntoIterator<Item = Script>) -> Self {
        Scripted { script: Mutex::new(script.into_iter().collect()), ..Default::default() }
    }

    /// The same, whose event stream yields `events` (as `(method, params)` JSON) and then ends.
    pub fn with_events(self, events: &[(&str, &str)]) -> Self {
        *self.events.lock().unwrap() = events
            .iter()
            .map(|(m, p)| RawEvent { method: (*m).to_owned(), params: serde_json::from_str(p).unwrap() })
            .collect();
        self
    }

    /// What was sent, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }
}

/// A recorded reply message as the answer it carries.
fn answer(reply: &str) -> Answer {
    let v: Value = serde_json::from_str(reply).expect("a recorded reply is JSON");
    match v.get("error") {
        Some(e) => Err(CdpError {
            code: e["code"].as_i64().unwrap_or(0),
            message: e["message"].as_str().unwrap_or_default().to_owned(),
            data: e.get("data").and_then(Value::as_str).map(str::to_owned),
        }),
        None => Ok(v.get("result").cloned().unwrap_or_else(|| Value::Object(Default::default()))),
    }
}

struct Flight(Script, usize);

impl InFlight for Flight {
    fn poll(&mut self, _wait: Duration) -> Option<Result<Answer, TransportError>> {
        self.1 += 1;
        match self.0 {
            Script::Reply(r) => Some(Ok(answer(r))),
            Script::After(n, r) if self.1 >= n => Some(Ok(answer(r))),
            Script::After(..) | Script::Silent => None,
            Script::Gone => Some(Err(TransportError::Gone)),
        }
    }

    fn is_answered(&self) -> bool {
        matches!(self.0, Script::Reply(_) | Script::Gone) || matches!(self.0, Script::After(n, _) if self.1 >= n)
    }
}

struct Events(VecDeque<RawEvent>);

impl EventStream for Events {
    fn next(&mut self, _wait: Duration) -> Result<Option<RawEvent>, TransportError> {
        self.0.pop_front().map(Some).ok_or(TransportError::Gone)
    }
}

impl Transport for Scripted {
    fn send(
        &self,
        session: Option<&SessionId>,
        method: Method,
        params: Value,
    ) -> Result<Box<dyn InFlight>, TransportError> {
        self.sent.lock().unwrap().push((session.map(|s| s.as_str().to_owned()), method.name(), params));
        let script = self.script.lock().unwrap().pop_front().expect("a scripted reply for every command");
        Ok(Box::new(Flight(script, 0)))
    }

    fn events(&self) -> Box<dyn EventStream> {
        Box::new(Events(self.events.lock().unwrap().drain(..).collect()))
    }

    fn crashed(&self) -> bool {
        false
    }

    fn attach_hidden(&self, frame: &FrameId, _timeout: Duration) -> Result<SessionId, DriveError> {
        Ok(SessionId::new(format!("session-of-{frame}")))
    }

    fn detach_hidden(&self, session: &SessionId, _timeout: Duration) {
        self.sent.lock().unwrap().push((Some(session.as_str().to_owned()), "detach", Value::Null));
    }
}
