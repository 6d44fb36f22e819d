//! A page's lifecycle events (`load`, `networkIdle`…), read from its event stream.

use crate::error::TransportError;
use crate::transport::EventStream;
use crate::values::LifecycleEvent;
use std::time::Duration;

/// The event's name on the wire.
const LIFECYCLE_EVENT: &str = "Page.lifecycleEvent";

/// A page's lifecycle events from the moment it was made (they flow once
/// lifecycle events are enabled); dropping it stops them.
pub struct Lifecycle {
    events: Box<dyn EventStream>,
}

impl Lifecycle {
    /// Lifecycle events read from `events`.
    pub fn new(events: Box<dyn EventStream>) -> Self {
        Lifecycle { events }
    }

    /// The next event if it comes within `wait` and is a lifecycle event
    /// (`Ok(None)` otherwise: ask again); an error once none can come.
    pub fn next(&mut self, wait: Duration) -> Result<Option<LifecycleEvent>, TransportError> {
        Ok(self
            .events
            .next(wait)?
            .filter(|e| e.method == LIFECYCLE_EVENT)
            .and_then(|e| serde_json::from_value(e.params).ok()))
    }
}
