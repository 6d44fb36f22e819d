//! The name of one isolated request context, apart from the contexts
//! themselves (`request_contexts`) so browsers, downloads and the app can
//! name one without reaching CEF.

use std::fmt;

/// One isolated request context of an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestContextId(u64);

impl RequestContextId {
    /// The id numbered `n` (engines number their contexts from 1; a fake engine in tests does the same).
    pub fn from_raw(n: u64) -> Self {
        Self(n)
    }
}

impl fmt::Display for RequestContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "context{}", self.0)
    }
}
