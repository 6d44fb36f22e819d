//! One browser's DevTools channel as the CDP facade sees it: cdp-facade's
//! [`GuestChannel`] over cef-bridge's raw pass-through mode.
//!
//! The facade relays a guest's traffic verbatim, so this adapter only moves
//! text: `send` → [`DevToolsChannel::send_text`], each subscribed
//! [`GuestSink`] becomes a [`RawSink`] of the channel.

use cdp_facade::{GuestChannel, GuestError, GuestSink};
use cef_bridge::{DevToolsChannel, RawSink};
use std::sync::Arc;

/// A browser's DevTools channel, as a [`GuestChannel`].
pub struct FacadeChannel {
    devtools: Arc<DevToolsChannel>,
}

impl FacadeChannel {
    /// Wraps a browser's channel.
    pub fn new(devtools: Arc<DevToolsChannel>) -> Self {
        Self { devtools }
    }
}

impl GuestChannel for FacadeChannel {
    fn send(&self, message: &str) -> Result<(), GuestError> {
        self.devtools.send_text(message).map_err(|e| GuestError::new(e.to_string()))
    }

    fn subscribe(&self, sink: GuestSink) {
        self.devtools.subscribe_raw(Arc::new(SinkBridge { sink, devtools: Arc::downgrade(&self.devtools) }));
    }

    fn crashed(&self) -> bool {
        self.devtools.crashed()
    }
}

/// True once the channel's browser closed (rather than its renderer crashing).
fn browser_closed(devtools: &std::sync::Weak<DevToolsChannel>) -> bool {
    devtools.upgrade().is_none_or(|d| !d.is_attached())
}

/// Forwards one channel's raw messages to one facade sink.
struct SinkBridge {
    sink: GuestSink,
    // Weak: the channel owns its sinks, a strong reference would be a cycle.
    devtools: std::sync::Weak<DevToolsChannel>,
}

impl RawSink for SinkBridge {
    fn message(&self, text: &str) -> bool {
        self.sink.deliver(text.to_string())
    }

    fn renderer_gone(&self) -> bool {
        // The channel reports a closed browser the same way as a crashed
        // renderer, but a closed browser is not a crash: the facade notices it
        // leaving `Guests::list` and detaches it as closed (a "Target crashed"
        // there would make Puppeteer's page.close() report a crash).
        if browser_closed(&self.devtools) {
            return false;
        }
        self.sink.renderer_gone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cef_bridge::RawSender;
    use parking_lot::Mutex;

    /// Plays a browser: records what is sent.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);
    impl RawSender for Recorder {
        fn send_raw(&self, message: &[u8]) {
            self.0.lock().push(String::from_utf8_lossy(message).into_owned());
        }
    }

    fn attached() -> (Arc<DevToolsChannel>, Arc<Recorder>, FacadeChannel) {
        let devtools = Arc::new(DevToolsChannel::new());
        let rec = Arc::new(Recorder::default());
        devtools.attach(rec.clone());
        let ch = FacadeChannel::new(devtools.clone());
        (devtools, rec, ch)
    }

    #[test]
    fn sends_verbatim_and_refuses_after_close() {
        let (devtools, rec, ch) = attached();
        let msg = r#"{"id":1073741824,"method":"Runtime.evaluate","params":{"expression":"1+1"},"sessionId":"S"}"#;
        ch.send(msg).unwrap();
        assert_eq!(rec.0.lock().as_slice(), [msg.to_string()]);
        devtools.detach("browser closed");
        assert!(ch.send(msg).is_err());
        assert_eq!(rec.0.lock().len(), 1);
    }

    #[test]
    fn a_crash_is_reported_and_a_close_is_told_apart() {
        let (devtools, _rec, ch) = attached();
        assert!(!ch.crashed());
        devtools.fail_pending("render process terminated");
        assert!(ch.crashed());
        assert!(!browser_closed(&Arc::downgrade(&devtools)));
        devtools.detach("browser closed");
        assert!(browser_closed(&Arc::downgrade(&devtools)));
        let weak = Arc::downgrade(&devtools);
        drop((devtools, ch));
        assert!(browser_closed(&weak));
    }
}
