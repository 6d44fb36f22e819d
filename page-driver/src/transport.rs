//! The raw call underneath the typed operations: send a method with its
//! parameters on a session, get its result or the protocol's error. The
//! app implements it over its DevTools channel; tests script it.

use crate::error::{CdpError, DriveError, TransportError};
use crate::ids::{FrameId, SessionId};
use crate::method::Method;
use serde_json::Value;
use std::time::Duration;

/// A command's answer: its `result` object or the protocol's error.
pub type Answer = Result<Value, CdpError>;

/// A page's DevTools connection, usable from any thread.
pub trait Transport: Send + Sync {
    /// Sends `method` with `params` on `session` (`None`: the page's own) without waiting.
    fn send(
        &self,
        session: Option<&SessionId>,
        method: Method,
        params: Value,
    ) -> Result<Box<dyn InFlight>, TransportError>;
    /// Every event of the page from now on, until the stream is dropped.
    fn events(&self) -> Box<dyn EventStream>;
    /// Whether the page's renderer died (nothing will answer until it reloads).
    fn crashed(&self) -> bool;
    /// Attaches a child session to an out-of-process frame that other
    /// clients of the same connection never see.
    fn attach_hidden(&self, frame: &FrameId, timeout: Duration) -> Result<SessionId, DriveError>;
    /// Detaches a session of [`attach_hidden`](Self::attach_hidden).
    fn detach_hidden(&self, session: &SessionId, timeout: Duration);
}

/// A command sent, its answer not necessarily in.
pub trait InFlight: Send {
    /// The answer if it comes within `wait`; `None` while it has not (ask again).
    fn poll(&mut self, wait: Duration) -> Option<Result<Answer, TransportError>>;
    /// Whether the answer is in (never blocks).
    fn is_answered(&self) -> bool;
}

/// An event as the page sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawEvent {
    /// The event's name, e.g. `Page.lifecycleEvent`.
    pub method: String,
    /// Its parameters.
    pub params: Value,
}

/// A page's events, in order.
pub trait EventStream: Send {
    /// The next event if one comes within `wait`; an error once none can come.
    fn next(&mut self, wait: Duration) -> Result<Option<RawEvent>, TransportError>;
}
