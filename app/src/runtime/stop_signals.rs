//! SIGINT, SIGTERM and SIGHUP end the app through its own shutdown path
//! (servers closed, discovery files removed, canvas saved, engine stopped),
//! in the window and headless alike.

use super::Waker;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Sets `stop` and wakes the loop when a stop signal arrives.
///
/// Call after the browser engine started: it gives these signals back to the
/// default action, and handlers registered earlier would be lost.
pub fn install(stop: Arc<AtomicBool>, waker: Arc<Waker>) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new().name("stop-signals".into()).spawn(move || {
        if let Some(sig) = signals.forever().next() {
            tracing::info!(signal = sig, "stop signal received; shutting down");
            stop.store(true, Ordering::Relaxed);
            waker.wake();
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_sighup_sets_the_flag_and_wakes_the_loop() {
        let stop = Arc::new(AtomicBool::new(false));
        let waker = Waker::new();
        install(stop.clone(), waker.clone()).unwrap();
        signal_hook::low_level::raise(SIGHUP).unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        while !stop.load(Ordering::Relaxed) {
            assert!(Instant::now() < end, "the stop flag was never set");
            waker.wait_until(Instant::now() + Duration::from_millis(50));
        }
    }
}
