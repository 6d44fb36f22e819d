//! When the external message pump must run next: CEF's own schedule, and the
//! DevTools commands in flight that keep it eager.
//!
//! One [`Pump`] belongs to a running engine; every browser's
//! [`DevToolsChannel`](crate::DevToolsChannel) holds an `Arc` of it and reports
//! what it sends and what gets answered. A channel made without an engine
//! (tests, fakes) gets a pump of its own that nobody waits on.

use crate::host::EngineHost;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// CEF must be pumped at least this often.
pub const MAX_PUMP_INTERVAL: Duration = Duration::from_millis(33);

/// How often to pump while a DevTools command awaits its reply. Chromium
/// hands some replies (screenshots, encoded on its thread pool) back through
/// UI-thread work the external pump is not always told about; without this
/// they waited for the [`MAX_PUMP_INTERVAL`] fallback (a screenshot took
/// ~20 ms longer). Idle, nothing is in flight and the pump stays lazy.
pub const EAGER_PUMP_INTERVAL: Duration = Duration::from_millis(2);

/// A command unanswered this long no longer keeps the pump eager (a reply
/// that never comes must not cost CPU for ever).
const EAGER_LIMIT: Duration = Duration::from_secs(15);

/// The pump schedule of one engine.
pub(crate) struct Pump {
    /// Told when a pump is wanted (the app wakes its event loop); None without an engine.
    host: Option<Arc<dyn EngineHost>>,
    /// The earliest pump CEF asked for and has not had yet.
    at: Mutex<Option<Instant>>,
    /// Signalled when `at` moves earlier (wakes [`Pump::wait_until_due`]).
    cv: Condvar,
    /// DevTools commands sent and not yet answered, over every channel.
    in_flight: AtomicUsize,
    /// When the last DevTools command went out.
    last_send: Mutex<Option<Instant>>,
}

impl Pump {
    /// A pump that tells `host` when it is wanted.
    pub(crate) fn new(host: Option<Arc<dyn EngineHost>>) -> Self {
        Self {
            host,
            at: Mutex::new(None),
            cv: Condvar::new(),
            in_flight: AtomicUsize::new(0),
            last_send: Mutex::new(None),
        }
    }

    /// CEF asked to be pumped after `delay_ms` (any thread).
    pub(crate) fn schedule(&self, delay_ms: i64) {
        let delay = Duration::from_millis(delay_ms.max(0) as u64);
        let at = Instant::now() + delay;
        {
            let mut g = self.at.lock();
            if g.is_none_or(|cur| at < cur) {
                *g = Some(at);
            }
        }
        self.cv.notify_all();
        if let Some(h) = &self.host {
            h.schedule_pump(delay);
        }
    }

    /// A pump is starting: what CEF asked for is being done.
    pub(crate) fn pumping(&self) {
        *self.at.lock() = None;
    }

    /// A DevTools command went out.
    pub(crate) fn devtools_sent(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        *self.last_send.lock() = Some(Instant::now());
        // The reply may come through work CEF does not announce: pump soon.
        if let Some(h) = &self.host {
            h.schedule_pump(EAGER_PUMP_INTERVAL);
        }
    }

    /// `n` DevTools commands were answered (or failed).
    pub(crate) fn devtools_settled(&self, n: usize) {
        let _ = self.in_flight.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v.saturating_sub(n)));
    }

    /// The longest the loop may go without pumping now: [`EAGER_PUMP_INTERVAL`]
    /// while a DevTools command is in flight, else [`MAX_PUMP_INTERVAL`].
    pub(crate) fn interval(&self) -> Duration {
        let recent = self.last_send.lock().is_some_and(|t| t.elapsed() < EAGER_LIMIT);
        if self.in_flight.load(Ordering::Acquire) > 0 && recent {
            EAGER_PUMP_INTERVAL
        } else {
            MAX_PUMP_INTERVAL
        }
    }

    /// When the next pump is due (at the latest [`interval`](Self::interval) from now).
    pub(crate) fn next_deadline(&self) -> Instant {
        let cap = Instant::now() + self.interval();
        self.at.lock().map_or(cap, |at| at.min(cap))
    }

    /// Blocks until a pump is due: CEF's schedule, the interval fallback, or `limit`.
    pub(crate) fn wait_until_due(&self, limit: Instant) {
        // The fallback deadline is fixed on entry: CEF stalls if it is not
        // pumped at least every MAX_PUMP_INTERVAL, scheduled or not.
        let fallback = (Instant::now() + self.interval()).min(limit);
        let mut g = self.at.lock();
        loop {
            let due = g.map_or(fallback, |at| at.min(fallback));
            if Instant::now() >= due {
                break;
            }
            let _ = self.cv.wait_until(&mut g, due);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::BrowserEvent;

    #[derive(Default)]
    struct Wakes(Mutex<Vec<Duration>>);
    impl EngineHost for Wakes {
        fn schedule_pump(&self, delay: Duration) {
            self.0.lock().push(delay);
        }
        fn browser_event(&self, _event: BrowserEvent) {}
    }

    #[test]
    fn commands_in_flight_make_the_pump_eager_until_settled() {
        let host = Arc::new(Wakes::default());
        let pump = Pump::new(Some(host.clone()));
        assert_eq!(pump.interval(), MAX_PUMP_INTERVAL);
        pump.devtools_sent();
        pump.devtools_sent();
        assert_eq!(pump.interval(), EAGER_PUMP_INTERVAL);
        assert_eq!(host.0.lock().as_slice(), [EAGER_PUMP_INTERVAL, EAGER_PUMP_INTERVAL], "each send wakes the loop");
        pump.devtools_settled(1);
        assert_eq!(pump.interval(), EAGER_PUMP_INTERVAL);
        pump.devtools_settled(5);
        assert_eq!(pump.interval(), MAX_PUMP_INTERVAL, "settling more than in flight stops at zero");
    }

    #[test]
    fn cef_schedule_sets_the_deadline_until_pumped() {
        let host = Arc::new(Wakes::default());
        let pump = Pump::new(Some(host.clone()));
        let before = Instant::now();
        pump.schedule(5_000);
        pump.schedule(-3);
        assert!(pump.next_deadline() <= Instant::now(), "the earlier request wins; negative delays mean now");
        assert_eq!(host.0.lock().as_slice(), [Duration::from_secs(5), Duration::ZERO]);
        pump.wait_until_due(before + Duration::from_secs(5));
        pump.pumping();
        assert!(pump.next_deadline() > Instant::now(), "after a pump only the interval fallback is left");
    }
}
