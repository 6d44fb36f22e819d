//! A typed reply still on its way: wait for it, poll it while doing something
//! else, or ask whether it is in.

use crate::error::{DriveError, TransportError};
use crate::method::Method;
use crate::transport::InFlight;
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long a reply is waited for: a timeout per command, cut short by an
/// overall deadline when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limit {
    pub timeout: Duration,
    pub deadline: Option<Instant>,
}

impl Limit {
    /// How long to wait from now.
    pub fn left(&self) -> Duration {
        self.deadline.map_or(self.timeout, |d| self.timeout.min(d.saturating_duration_since(Instant::now())))
    }
}

/// Makes the typed reply from the answer's `result`.
type Decode<T> = Box<dyn FnOnce(Value) -> Result<T, DriveError> + Send>;

/// A reply that has not necessarily arrived yet.
pub struct Pending<T> {
    state: State<T>,
}

enum State<T> {
    Ready(Result<T, DriveError>),
    Flying { method: Method, call: Box<dyn InFlight>, decode: Decode<T>, limit: Limit },
}

impl<T: 'static> Pending<T> {
    /// A reply that is already in (what a fake page answers).
    pub fn ready(result: Result<T, DriveError>) -> Self {
        Pending { state: State::Ready(result) }
    }

    pub(crate) fn flying(method: Method, call: Box<dyn InFlight>, decode: Decode<T>, limit: Limit) -> Self {
        Pending { state: State::Flying { method, call, decode, limit } }
    }

    /// Whether the reply is in (never blocks).
    pub fn is_answered(&self) -> bool {
        match &self.state {
            State::Ready(_) => true,
            State::Flying { call, .. } => call.is_answered(),
        }
    }

    /// The reply if it comes within `wait`, else this pending reply back to poll again.
    pub fn poll(self, wait: Duration) -> Result<Result<T, DriveError>, Self> {
        match self.state {
            State::Ready(r) => Ok(r),
            State::Flying { method, mut call, decode, limit } => match call.poll(wait) {
                Some(answer) => Ok(settle(method, answer, decode)),
                None => Err(Pending { state: State::Flying { method, call, decode, limit } }),
            },
        }
    }

    /// Waits for the reply until the page's timeout (or deadline) passes.
    pub fn wait(self) -> Result<T, DriveError> {
        match self.state {
            State::Ready(r) => r,
            State::Flying { method, mut call, decode, limit } => {
                let timeout = limit.left();
                match call.poll(timeout) {
                    Some(answer) => settle(method, answer, decode),
                    None => Err(DriveError::Timeout { method, timeout }),
                }
            }
        }
    }

    /// The same reply made into something else once it is in.
    pub fn map<U: 'static>(self, f: impl FnOnce(T) -> U + Send + 'static) -> Pending<U> {
        self.and_then(|t| Ok(f(t)))
    }

    /// The same reply made into something else, or an error, once it is in.
    pub fn and_then<U: 'static>(self, f: impl FnOnce(T) -> Result<U, DriveError> + Send + 'static) -> Pending<U> {
        match self.state {
            State::Ready(r) => Pending::ready(r.and_then(f)),
            State::Flying { method, call, decode, limit } => {
                Pending::flying(method, call, Box::new(move |v| decode(v).and_then(f)), limit)
            }
        }
    }
}

fn settle<T>(
    method: Method,
    answer: Result<crate::transport::Answer, TransportError>,
    decode: Decode<T>,
) -> Result<T, DriveError> {
    match answer? {
        Ok(result) => decode(result),
        Err(error) => Err(DriveError::Protocol { method, error }),
    }
}
