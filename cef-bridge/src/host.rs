//! What the engine needs from the app: the host callbacks.

use crate::events::BrowserEvent;
use std::time::Duration;

/// What the engine needs from the app.
pub trait EngineHost: Send + Sync + 'static {
    /// CEF wants [`Engine::pump`](crate::Engine::pump) called after `delay` (may be called on any thread).
    fn schedule_pump(&self, delay: Duration);
    /// A browser event (called on the main thread, inside [`Engine::pump`](crate::Engine::pump)).
    fn browser_event(&self, event: BrowserEvent);
}
